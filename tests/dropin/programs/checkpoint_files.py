"""Saving and loading arrays in numpy's own files: .npy, .npz (plain and compressed) and
text, as a script keeps its checkpoints and results."""

import os
import tempfile


def run(np):
    rng = np.random.RandomState(7)
    weights = rng.randn(4, 3)
    bias = np.arange(3, dtype=np.float32)
    counts = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int16)
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "weights.npy"), weights)
        np.savez(os.path.join(folder, "model"), weights=weights, bias=bias)
        np.savez_compressed(os.path.join(folder, "counts.npz"), counts, bias)
        np.savetxt(os.path.join(folder, "bias.txt"), bias, fmt="%.3f")
        loaded = np.load(os.path.join(folder, "weights.npy"))
        with np.load(os.path.join(folder, "model.npz")) as archive:
            names = sorted(archive.files)
            model_weights, model_bias = archive["weights"], archive["bias"]
        with np.load(os.path.join(folder, "counts.npz")) as archive:
            packed = archive["arr_0"], archive["arr_1"]
        text = np.loadtxt(os.path.join(folder, "bias.txt"))
    return {
        "loaded": loaded,
        "same": bool(np.array_equal(loaded, weights)),
        "names": names,
        "model_weights": model_weights,
        "model_bias": model_bias,
        "bias_dtype": str(model_bias.dtype),
        "counts": packed[0],
        "counts_dtype": str(packed[0].dtype),
        "second": packed[1],
        "text": text,
        "score": float(np.sum(model_weights @ np.ones(3)) + model_bias.sum()),
    }
