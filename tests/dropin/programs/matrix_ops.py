"""Matrix utilities: triangles, diagonals, traces, Kronecker products, inverses, norms."""


def run(np):
    A = np.arange(1.0, 17.0).reshape(4, 4)
    M = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 5.0]])
    L = np.linalg.cholesky(M)
    w, V = np.linalg.eigh(M)
    I2 = np.eye(2, dtype=int)
    return {
        "tril": np.tril(A),
        "triu_k1": np.triu(A, k=1),
        "tril_neg": np.tril(A, -1),
        "diag_of_matrix": np.diag(A),
        "diag_offset": np.diag(A, k=-1),
        "diag_matrix": np.diag(np.array([1, 2, 3])),
        "trace": np.trace(A),
        "kron": np.kron(I2, np.array([[1, 2], [3, 4]])),
        "identity": np.identity(3),
        "inv": np.linalg.inv(M),
        "det": np.linalg.det(M),
        "slogdet": np.linalg.slogdet(M)[1],
        "cholesky": L,
        "cholesky_ok": np.allclose(L @ L.T, M),
        "eigh_values": w,
        "eigh_reconstruct": np.allclose(V @ np.diag(w) @ V.T, M),
        "norm_fro": np.linalg.norm(A),
        "norm_2": np.linalg.norm(M, 2),
        "norm_rows": np.linalg.norm(A, axis=1),
        "rank": np.linalg.matrix_rank(A),
        "tri": np.tri(3, 4, dtype=int),
        "fill_diagonal": fill_diagonal_copy(np, A),
        "dot_vdot": np.vdot(A[0], A[1]),
        "inner": np.inner(A[0], A[1]),
        "matrix_power": np.linalg.matrix_power(M, 3),
    }


def fill_diagonal_copy(np, A):
    B = A.copy()
    np.fill_diagonal(B, 0)
    return B
