"""Least-squares polynomial fits with polyfit and polyval."""


def run(np):
    rng = np.random.default_rng(4)
    x = np.linspace(-2, 2, 41)
    y = 0.5 * x**3 - x**2 + 2.0 * x - 1.0 + 0.05 * rng.standard_normal(x.size)
    fits = {}
    residuals = []
    for degree in (1, 2, 3, 5):
        coeffs = np.polyfit(x, y, degree)
        fitted = np.polyval(coeffs, x)
        residuals.append(np.sum((y - fitted) ** 2))
        fits[degree] = coeffs
    cubic = fits[3]
    derivative = np.polyder(cubic)
    grid = np.linspace(-3, 3, 7)
    return {
        "cubic": cubic,
        "quintic": fits[5],
        "residuals": np.array(residuals),
        "best_degree": [1, 2, 3, 5][int(np.argmin(residuals))],
        "derivative_on_grid": np.polyval(derivative, grid),
        "roots_real": np.sort(np.roots(cubic).real),
        "at_half": float(np.polyval(cubic, 0.5)),
    }
