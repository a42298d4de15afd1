"""Principal component analysis of correlated data through the SVD."""


def run(np):
    rng = np.random.default_rng(3)
    n = 100
    latent = rng.standard_normal((n, 2))
    mixing = np.array([[3.0, 1.0, 0.5, 0.0], [0.0, 1.0, -1.0, 2.0]])
    data = latent @ mixing + 0.1 * rng.standard_normal((n, 4))
    mean = data.mean(axis=0)
    centred = data - mean
    U, S, Vt = np.linalg.svd(centred, full_matrices=False)
    explained = S**2 / (n - 1)
    ratio = explained / explained.sum()
    # Fix the sign of each component so that its largest loading is positive.
    signs = np.sign(Vt[np.arange(len(Vt)), np.abs(Vt).argmax(axis=1)])
    components = Vt * signs[:, np.newaxis]
    scores = centred @ components[:2].T
    reconstructed = scores @ components[:2] + mean
    error = np.sqrt(np.mean((data - reconstructed) ** 2))
    cov = np.cov(centred, rowvar=False)
    return {
        "singular_values": S,
        "explained_ratio": ratio,
        "components": components,
        "scores_std": scores.std(axis=0, ddof=1),
        "reconstruction_rmse": error,
        "cov_trace_matches": np.isclose(np.trace(cov), explained.sum()),
        "k_for_99": int(np.searchsorted(np.cumsum(ratio), 0.99) + 1),
    }
