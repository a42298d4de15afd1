"""Cumulative sums and products, differences, gradients and trapezoid integration."""


def run(np):
    t = np.linspace(0.0, 2.0 * np.pi, 101)
    signal = np.sin(t)
    dt = t[1] - t[0]
    integral = np.cumsum(signal) * dt
    trapezoid = np.trapezoid(signal, t)
    derivative = np.gradient(signal, dt)
    second = np.gradient(np.gradient(signal, t), t)
    returns = np.array([0.01, -0.02, 0.015, 0.03, -0.01])
    growth = np.cumprod(1 + returns)
    prices = np.array([10, 12, 11, 15, 14, 18])
    grid = np.arange(12).reshape(3, 4)
    return {
        "integral_end": integral[-1],
        "trapezoid": trapezoid,
        "derivative_error": np.max(np.abs(derivative[1:-1] - np.cos(t[1:-1]))),
        "second_mid": second[45:55],
        "growth": growth,
        "diff": np.diff(prices),
        "diff2": np.diff(prices, n=2),
        "prepend": np.diff(prices, prepend=prices[0]),
        "running_max": np.maximum.accumulate(prices),
        "cumsum_axis0": np.cumsum(grid, axis=0),
        "cumsum_axis1": np.cumsum(grid, axis=1),
        "cumsum_dtype": np.cumsum(np.ones(4, dtype=np.int8), dtype=np.int32),
        "grad_2d": np.gradient(grid.astype(float)),
        "ediff1d": np.ediff1d(prices),
    }
