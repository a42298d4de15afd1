"""The 1-D Poisson problem -u'' = f on (0, 1), u(0) = u(1) = 0, by finite differences."""


def run(np):
    errors = []
    for n in (8, 16, 32, 64):
        h = 1.0 / (n + 1)
        x = np.linspace(h, 1 - h, n)
        main = 2.0 * np.ones(n)
        off = -1.0 * np.ones(n - 1)
        A = (np.diag(main) + np.diag(off, k=1) + np.diag(off, k=-1)) / h**2
        f = np.pi**2 * np.sin(np.pi * x)
        u = np.linalg.solve(A, f)
        exact = np.sin(np.pi * x)
        errors.append(np.max(np.abs(u - exact)))
    errors = np.array(errors)
    order = np.log2(errors[:-1] / errors[1:])
    # A second right-hand side, solved together with the first.
    F = np.column_stack([f, np.ones(n)])
    U = np.linalg.solve(A, F)
    residual = np.linalg.norm(A @ U - F) / np.linalg.norm(F)
    return {
        "errors": errors,
        "order": order,
        "u": u,
        "constant_load": U[:, 1],
        "residual_small": residual < 1e-10,
        "condition": np.linalg.cond(A),
    }
