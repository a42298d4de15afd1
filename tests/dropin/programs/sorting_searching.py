"""Sorting, argsort, searchsorted and ranking."""


def run(np):
    rng = np.random.default_rng(11)
    scores = rng.integers(0, 100, size=20)
    ids = np.arange(100, 120)
    order = np.argsort(scores, kind="stable")[::-1]
    matrix = rng.random((4, 5))
    bins = np.array([0, 50, 70, 90, 100])
    grades = np.searchsorted(bins, scores, side="right")
    ages = np.array([30, 25, 30, 22, 25])
    heights = np.array([1.8, 1.7, 1.6, 1.9, 1.75])
    ranks = np.empty_like(scores)
    ranks[np.argsort(scores, kind="stable")] = np.arange(len(scores))
    return {
        "sorted": np.sort(scores),
        "top3_ids": ids[order[:3]],
        "sorted_rows": np.sort(matrix, axis=1),
        "sorted_cols": np.sort(matrix, axis=0),
        "argsort_desc": np.argsort(-matrix[0]),
        "grades": grades,
        "left": np.searchsorted([1, 2, 2, 3], [2, 2.5, 0, 4]),
        "right": np.searchsorted([1, 2, 2, 3], 2, side="right"),
        "lexsort": np.lexsort((heights, ages)),
        "ranks": ranks,
        "partitioned_kth": np.partition(scores, 5)[5],
        "median_by_sort": np.sort(scores)[len(scores) // 2],
        "is_sorted": bool(np.all(np.diff(np.sort(scores)) >= 0)),
        "unique_sorted": np.unique(scores),
        "max_row": matrix.max(axis=1),
        "argmax_flat": np.argmax(matrix),
    }
