"""Reshaping, transposing, stacking and splitting arrays."""


def run(np):
    a = np.arange(24).reshape(2, 3, 4)
    images = np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3)  # NHWC
    chw = np.moveaxis(images, -1, 1)  # NCHW
    left, right = np.split(a, 2, axis=2)
    parts = np.array_split(np.arange(10), 3)
    stacked = np.stack([a[0], a[1]], axis=-1)
    return {
        "reshaped": a.reshape(4, -1),
        "transposed": a.transpose(2, 0, 1),
        "T_shape": a.T.shape,
        "swapped": np.swapaxes(a, 0, 2),
        "chw": chw,
        "chw_contiguous": np.ascontiguousarray(chw).flags["C_CONTIGUOUS"],
        "left": left,
        "right": right,
        "part_sizes": [len(p) for p in parts],
        "stacked": stacked,
        "hstack": np.hstack([a[0], a[1]]),
        "vstack": np.vstack([a[0], a[1]]),
        "dstack": np.dstack([a[0], a[1]]).shape,
        "column_stack": np.column_stack([np.arange(3), np.arange(3) * 2]),
        "expanded": np.expand_dims(a[0, 0], axis=0),
        "squeezed": np.squeeze(a[:1, :, :1]),
        "ravel": a[:, 1].ravel(),
        "flatten_F": a[0].flatten(order="F"),
        "atleast_2d": np.atleast_2d(np.arange(3)),
        "tiled": np.tile(np.array([1, 2]), (2, 3)),
        "repeated": np.repeat(np.array([1, 2, 3]), 2),
        "broadcast": np.broadcast_to(np.arange(3), (2, 3)),
        "flipped": np.flip(a[0], axis=1),
        "rot90": np.rot90(a[0]),
    }
