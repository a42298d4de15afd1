"""Ordinary least squares with lstsq, the normal equations and a polynomial design matrix."""


def run(np):
    rng = np.random.default_rng(13)
    n = 50
    x1 = rng.uniform(0, 10, n)
    x2 = rng.uniform(-5, 5, n)
    y = 3.0 + 2.0 * x1 - 0.5 * x2 + rng.normal(0, 0.5, n)
    A = np.column_stack([np.ones(n), x1, x2])
    coef, residuals, rank, singular = np.linalg.lstsq(A, y, rcond=None)
    normal_eq = np.linalg.solve(A.T @ A, A.T @ y)
    via_pinv = np.linalg.pinv(A) @ y
    fitted = A @ coef
    ss_res = np.sum((y - fitted) ** 2)
    ss_tot = np.sum((y - y.mean()) ** 2)
    V = np.vander(x1[:10], 3)
    Q, R = np.linalg.qr(A)
    return {
        "coef": coef,
        "residuals": residuals,
        "rank": rank,
        "singular": singular,
        "normal_eq": normal_eq,
        "pinv": via_pinv,
        "r2": 1 - ss_res / ss_tot,
        "vander": V,
        "R_diag_abs": np.abs(np.diag(R)),
        "Q_orthonormal": np.allclose(Q.T @ Q, np.eye(3)),
        "corrcoef": np.corrcoef(x1, y)[0, 1],
    }
