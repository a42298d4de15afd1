"""Broadcasting: outer products, grids, pairwise operations and normalisation."""


def run(np):
    x = np.linspace(-1.0, 1.0, 5)
    y = np.linspace(0.0, 2.0, 4)
    X, Y = np.meshgrid(x, y)
    Xi, Yi = np.meshgrid(x, y, indexing="ij")
    gaussian = np.exp(-(X**2 + (Y - 1.0) ** 2))
    table = np.arange(1, 10)[:, np.newaxis] * np.arange(1, 10)[np.newaxis, :]
    data = np.arange(12, dtype=float).reshape(4, 3)
    zscores = (data - data.mean(axis=0)) / data.std(axis=0)
    points = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    pairwise = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    ogrid_sum = sum(np.ogrid[0:3, 0:4])
    return {
        "X": X,
        "Y": Y,
        "Xi_shape": Xi.shape,
        "gaussian": gaussian,
        "table": table,
        "outer": np.outer(x, y),
        "add_outer": np.add.outer(np.arange(3), np.arange(4)),
        "zscores": zscores,
        "pairwise": pairwise,
        "broadcast_shape": np.broadcast_shapes((4, 1, 3), (5, 1)),
        "ogrid_sum": ogrid_sum,
        "scaled_rows": data * np.array([1.0, 10.0, 100.0]),
        "centered_cols": data - data.mean(axis=1, keepdims=True),
        "outer_via_einsum": np.einsum("i,j->ij", x, y),
    }
