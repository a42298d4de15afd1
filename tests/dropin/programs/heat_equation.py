"""Explicit finite-difference solution of the 2-D heat equation on a square plate."""


def run(np):
    n = 32
    alpha, dx = 1.0, 1.0 / (n - 1)
    dt = 0.2 * dx**2 / alpha  # well inside the stability limit of 0.25
    u = np.zeros((n, n))
    u[n // 4 : 3 * n // 4, n // 4 : 3 * n // 4] = 100.0  # a hot square in the middle
    u[:, 0] = 50.0  # the left edge is held warm
    total_start = u.sum()
    snapshots = []
    for step in range(200):
        lap = (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]) / dx**2
        lap *= alpha * dt
        np.add(u[1:-1, 1:-1], lap, out=u[1:-1, 1:-1])
        if step % 50 == 49:
            snapshots.append(u[n // 2].copy())
    profile = np.stack(snapshots)
    return {
        "final": u,
        "profiles": profile,
        "centre": u[n // 2, n // 2],
        "max": u.max(),
        "heat_change": u.sum() - total_start,
        "hot_cells": (u > 25.0).sum(),
    }
