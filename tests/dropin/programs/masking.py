"""Boolean masks, where, nonzero and masked assignment."""


def run(np):
    rng = np.random.default_rng(12)
    data = rng.normal(0.0, 1.0, size=(6, 8))
    outliers = np.abs(data) > 1.5
    cleaned = np.where(outliers, 0.0, data)
    clipped = data.copy()
    clipped[clipped > 1.0] = 1.0
    clipped[clipped < -1.0] = -1.0
    rows, cols = np.nonzero(outliers)
    positive = data[data > 0]
    evens = np.arange(20)[np.arange(20) % 2 == 0]
    first_big = np.argmax(np.abs(data.ravel()) > 2.0)
    signs = np.select([data < -0.5, data > 0.5], [-1, 1], default=0)
    return {
        "outlier_count": np.count_nonzero(outliers),
        "cleaned": cleaned,
        "clipped": clipped,
        "rows": rows,
        "cols": cols,
        "positive_sum": positive.sum(),
        "positive_count": positive.size,
        "evens": evens,
        "first_big": first_big,
        "flatnonzero": np.flatnonzero(outliers[0]),
        "argwhere": np.argwhere(outliers[:2]),
        "any_rows": outliers.any(axis=1),
        "all_cols": (data > -3).all(axis=0),
        "logical": np.logical_and(data > 0, data < 1).sum(),
        "signs": signs,
        "where_scalar": np.where(data[0] > 0, 1, -1),
        "isin": np.isin(np.arange(6), [1, 3, 5]),
        "masked_mean": data[~outliers].mean(),
    }
