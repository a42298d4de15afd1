"""Histograms, binning and frequency counts."""


def run(np):
    rng = np.random.default_rng(14)
    heights = rng.normal(170.0, 10.0, size=500)
    counts, edges = np.histogram(heights, bins=10)
    density, _ = np.histogram(heights, bins=edges, density=True)
    fixed, fixed_edges = np.histogram(heights, bins=[140, 160, 170, 180, 200])
    ranged, _ = np.histogram(heights, bins=5, range=(150, 190))
    which = np.digitize(heights[:20], [160, 170, 180])
    centres = (edges[:-1] + edges[1:]) / 2
    mode_bin = centres[np.argmax(counts)]
    xs = rng.uniform(0, 1, 200)
    ys = rng.uniform(0, 1, 200)
    h2, xe, ye = np.histogram2d(xs, ys, bins=4)
    rolls = rng.integers(1, 7, size=300)
    return {
        "counts": counts,
        "edges": edges,
        "density_integral": np.sum(density * np.diff(edges)),
        "fixed": fixed,
        "fixed_edges": fixed_edges,
        "ranged": ranged,
        "digitize": which,
        "mode_bin": mode_bin,
        "hist2d": h2,
        "face_counts": np.bincount(rolls)[1:],
        "bin_edges_auto": np.histogram_bin_edges(heights[:50], bins="auto").size,
        "cumulative": np.cumsum(counts) / counts.sum(),
    }
