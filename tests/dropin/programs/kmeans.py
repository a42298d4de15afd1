"""k-means clustering of three Gaussian blobs (Lloyd's algorithm)."""


def run(np):
    rng = np.random.default_rng(0)
    centers_true = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    points = np.concatenate([c + rng.standard_normal((40, 2)) * 0.8 for c in centers_true], axis=0)
    k = 3
    # Forgy initialisation: k distinct points chosen at random.
    start = rng.choice(points.shape[0], size=k, replace=False)
    centroids = points[start].copy()
    for iteration in range(20):
        # Squared distances (n, k) by broadcasting.
        d2 = ((points[:, np.newaxis, :] - centroids[np.newaxis, :, :]) ** 2).sum(axis=-1)
        labels = np.argmin(d2, axis=1)
        new = np.array([points[labels == j].mean(axis=0) for j in range(k)])
        shift = np.abs(new - centroids).max()
        centroids = new
        iterations = iteration + 1
        if shift < 1e-10:
            break
    inertia = d2[np.arange(len(points)), labels].sum()
    order = np.argsort(centroids[:, 0] * 10 + centroids[:, 1])
    sizes = np.bincount(labels, minlength=k)
    return {
        "centroids": centroids[order],
        "sizes": sizes[order],
        "inertia": inertia,
        "iterations": iterations,
    }
