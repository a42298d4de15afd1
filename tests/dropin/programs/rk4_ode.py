"""Classical Runge-Kutta (RK4) integration of a damped pendulum and the Lorenz system."""


def rk4(np, f, y0, t0, t1, steps):
    h = (t1 - t0) / steps
    ys = np.empty((steps + 1, len(y0)))
    ys[0] = y0
    y, t = np.asarray(y0, dtype=float), t0
    for i in range(steps):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
        ys[i + 1] = y
    return ys


def run(np):
    def pendulum(t, y):
        return np.array([y[1], -0.2 * y[1] - 9.81 * np.sin(y[0])])

    def lorenz(t, s, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
        x, y, z = s
        return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])

    swing = rk4(np, pendulum, [1.0, 0.0], 0.0, 5.0, 200)
    chaos = rk4(np, lorenz, [1.0, 1.0, 1.0], 0.0, 1.0, 200)
    energy = 0.5 * swing[:, 1] ** 2 + 9.81 * (1 - np.cos(swing[:, 0]))
    crossings = np.count_nonzero(np.diff(np.sign(swing[:, 0])))
    return {
        "pendulum": swing,
        "lorenz_end": chaos[-1],
        "lorenz_max": chaos.max(axis=0),
        "energy_decreasing": bool(np.all(np.diff(energy) <= 1e-9)),
        "crossings": crossings,
    }
