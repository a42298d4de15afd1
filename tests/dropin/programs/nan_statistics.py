"""Summary statistics of sensor readings with gaps: nan-functions and percentiles."""


def run(np):
    rng = np.random.default_rng(9)
    readings = rng.normal(20.0, 3.0, size=(6, 24))
    gaps = rng.random(readings.shape) < 0.15
    readings[gaps] = np.nan
    readings[2, :] = np.nan  # a sensor that was down all day
    down = np.isnan(readings).all(axis=1)
    daily = np.nanmean(readings[~down], axis=1)
    valid = ~np.isnan(readings)
    flat = readings[valid]
    return {
        "missing": np.isnan(readings).sum(axis=1),
        "down": np.flatnonzero(down),
        "daily_mean": daily,
        "overall_mean": np.nanmean(readings),
        "nanstd": np.nanstd(readings),
        "nanmax_hour": np.nanmax(readings[[0, 1, 3, 4, 5]], axis=0),
        "nanmin": np.nanmin(readings),
        "nanmedian": np.nanmedian(readings[[0, 1, 3, 4, 5]], axis=1),
        "nansum": np.nansum(readings, axis=0),
        "argmax_hot": np.nanargmax(readings[0]),
        "percentiles": np.percentile(flat, [5, 25, 50, 75, 95]),
        "quantile_nearest": np.quantile(flat, 0.9, method="nearest"),
        "nanpercentile": np.nanpercentile(readings[[0, 1]], 50, axis=1),
        "median": np.median(flat),
        "filled": np.nan_to_num(readings[2:4, :4], nan=-1.0),
        "valid_fraction": valid.mean(),
    }
