"""jg.linalg against np.linalg (values, dtypes, shapes) and against torch.linalg (gradients)."""

import numpy as np
import pytest
import torch

import jitgrad as jg
from jitgrad.autograd import gradcheck


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def spd(n, batch=(), seed=0):
    a = data(batch + (n, n), seed)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def both(array):
    """The same leaf as a jitgrad tensor and a torch tensor."""
    return jg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def check_grad(jg_fn, torch_fn, *arrays, rtol=1e-7, atol=1e-9):
    pairs = [both(a) for a in arrays]
    jg_fn(*(p[0] for p in pairs)).backward()
    torch_fn(*(p[1] for p in pairs)).backward()
    for mine, theirs in pairs:
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=rtol, atol=atol)


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix():
    """Where LU finds a zero pivot, the gradient is still the cofactor matrix (PyTorch's
    depends on whether its LU rounds the determinant to exactly 0). det is affine in each
    entry, so a difference quotient along one entry is exact."""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])  # rank 2
    leaf = jg.tensor(a, requires_grad=True)
    jg.linalg.det(leaf).backward()
    expected = np.empty_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = 1.0
        expected[index] = (np.linalg.det(a + step) - np.linalg.det(a - step)) / 2
    np.testing.assert_allclose(leaf.grad.numpy(), expected, atol=1e-12)
    assert np.abs(expected).max() == pytest.approx(14.0)  # (not the zero gradient)


def weights(shape, seed=9):
    return data(shape, seed)


def weighted(w):
    """A scalar loss of a tensor: its weighted sum, in either library."""
    return lambda x: (x * (jg.tensor(w) if isinstance(x, jg.Tensor) else torch.tensor(w))).sum()


# -- values against numpy ------------------------------------------------------------------

VALUE_CASES = [
    ("inv", lambda m: m.inv(spd(3, (2,))), {}),
    ("det", lambda m: m.det(data((2, 3, 3))), {}),
    ("slogdet", lambda m: m.slogdet(data((3, 3))), {}),
    ("solve", lambda m: m.solve(spd(3), data(3)), {}),
    ("solve-matrix", lambda m: m.solve(spd(3, (2,)), data((2, 3, 2))), {}),
    ("eigh", lambda m: m.eigh(spd(4)).eigenvalues, {}),
    ("eigh-upper", lambda m: m.eigh(data((3, 3)), UPLO="U").eigenvalues, {}),
    ("eigvalsh", lambda m: m.eigvalsh(spd(3, (2,))), {}),
    ("eig", lambda m: m.eig(np.array([[0.0, -1.0], [1.0, 0.0]])).eigenvalues, {}),
    ("eigvals", lambda m: m.eigvals(data((3, 3))), {}),
    ("svd-S", lambda m: m.svd(data((4, 3))).S, {}),
    ("svd-shape", lambda m: m.svd(data((2, 4, 3))).U.shape, {}),
    ("svd-reduced", lambda m: m.svd(data((4, 3)), full_matrices=False).U.shape, {}),
    ("svd-nouv", lambda m: m.svd(data((4, 3)), compute_uv=False), {}),
    ("svdvals", lambda m: m.svdvals(data((3, 5))), {}),
    ("qr-R", lambda m: m.qr(data((4, 3))).R, {}),
    ("qr-complete", lambda m: m.qr(data((4, 3)), mode="complete").Q.shape, {}),
    ("qr-r", lambda m: m.qr(data((4, 3)), mode="r"), {}),
    ("cholesky", lambda m: m.cholesky(spd(3)), {}),
    ("cholesky-upper", lambda m: m.cholesky(spd(3), upper=True), {}),
    ("pinv", lambda m: m.pinv(data((4, 3))), {}),
    ("lstsq", lambda m: m.lstsq(data((5, 2)), data(5))[0], {}),
    ("lstsq-parts", lambda m: m.lstsq(data((5, 2)), data((5, 3)))[1], {}),
    ("matrix_rank", lambda m: m.matrix_rank(np.ones((3, 4))), {}),
    ("matrix_power", lambda m: m.matrix_power(np.array([[1, 2], [3, 4]]), 5), {}),
    ("matrix_power-0", lambda m: m.matrix_power(data((2, 3, 3)), 0), {}),
    ("matrix_power-neg", lambda m: m.matrix_power(spd(3), -2), {}),
    ("multi_dot", lambda m: m.multi_dot([data(3), data((3, 4)), data((4, 2)), data(2)]), {}),
    ("multi_dot-mat", lambda m: m.multi_dot([data((2, 3)), data((3, 4)), data((4, 5))]), {}),
    ("norm", lambda m: m.norm(data((3, 4))), {}),
    ("norm-1d-ord", lambda m: m.norm(data(5), ord=3), {}),
    ("norm-axis", lambda m: m.norm(data((3, 4)), axis=1, ord=1), {}),
    ("norm-inf", lambda m: m.norm(data((3, 4)), ord=np.inf), {}),
    ("norm-nuc", lambda m: m.norm(data((3, 4)), ord="nuc"), {}),
    ("norm-2", lambda m: m.norm(data((3, 4)), ord=2), {}),
    ("norm-fro-axes", lambda m: m.norm(data((2, 3, 4)), axis=(0, 2), keepdims=True), {}),
    ("norm-keepdims", lambda m: m.norm(data((3, 4)), keepdims=True), {}),
    ("vector_norm", lambda m: m.vector_norm(data((3, 4)), axis=0, ord=-np.inf), {}),
    ("vector_norm-0", lambda m: m.vector_norm(np.array([0.0, 2.0, 0.0, -1.0]), ord=0), {}),
    ("matrix_norm", lambda m: m.matrix_norm(data((2, 3, 4)), ord=-1), {}),
    ("matrix_norm-2", lambda m: m.matrix_norm(data((2, 3, 4)), ord=-2, keepdims=True), {}),
    ("cond", lambda m: m.cond(spd(3)), {}),
    ("cond-1", lambda m: m.cond(spd(3), p=1), {}),
    ("tensorinv", lambda m: m.tensorinv(spd(4).reshape(4, 2, 2), ind=1), {}),
    ("tensorsolve", lambda m: m.tensorsolve(spd(6).reshape(6, 2, 3), data(6)), {}),
    ("outer", lambda m: m.outer(np.arange(3), np.arange(2.0)), {}),
    ("diagonal", lambda m: m.diagonal(data((2, 3, 3)), offset=1), {}),
    ("trace", lambda m: m.trace(data((2, 3, 3)), offset=-1), {}),
    ("matrix_transpose", lambda m: m.matrix_transpose(data((2, 3, 4))), {}),
    ("tensordot", lambda m: m.tensordot(data((2, 3)), data((3, 4)), axes=1), {}),
    ("matmul", lambda m: m.matmul(data((2, 3)), data(3)), {}),
    ("cross", lambda m: m.cross(data((2, 3)), data(3), axis=-1), {}),
    ("vecdot", lambda m: m.vecdot(data((2, 3)), data(3)), {}),
    ("det-int", lambda m: m.det(np.array([[2, 1], [1, 3]])), {}),
    ("inv-float32", lambda m: m.inv(spd(3).astype(np.float32)), {}),
    ("svd-float32", lambda m: m.svd(data((3, 2)).astype(np.float32)).S, {}),
]


@pytest.mark.parametrize("name, call, _", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy(name, call, _):
    expected = call(np.linalg)
    got = call(jg.linalg)
    if isinstance(expected, tuple):  # shapes
        assert got == expected
        return
    got_array = np.asarray(got)
    expected = np.asarray(expected)
    assert got_array.dtype == expected.dtype, name
    assert got_array.shape == expected.shape, name
    rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(got_array, expected, rtol=rtol, atol=rtol)


def test_factorizations_reconstruct():
    a = data((2, 4, 3))
    u, s, vh = jg.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a, atol=1e-12)
    q, r = jg.linalg.qr(a)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    w, v = jg.linalg.eigh(spd(3))
    np.testing.assert_allclose(((v * w.unsqueeze(-2)) @ v.mT).numpy(), spd(3), atol=1e-10)


def test_named_results():
    result = jg.linalg.slogdet(np.eye(2))
    assert result.sign.item() == 1.0 and result.logabsdet.item() == 0.0
    assert set(jg.linalg.svd(np.eye(2))._fields) == {"U", "S", "Vh"}
    assert jg.linalg.eigh(np.eye(2))._fields == ("eigenvalues", "eigenvectors")
    assert jg.linalg.qr(np.eye(2))._fields == ("Q", "R")


def test_errors_name_the_problem():
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jg.linalg.inv(jg.ones((2, 3)))
    with pytest.raises(jg.linalg.LinAlgError, match="Singular"):
        jg.linalg.inv(jg.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="eigh"):
        jg.linalg.eig(jg.tensor(data((2, 2)), requires_grad=True))
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        jg.linalg.norm(jg.ones((2, 2, 2)), ord=1)
    with pytest.raises(ValueError, match="3-dimensional"):
        jg.linalg.cross(jg.ones(2), jg.ones(2))
    with pytest.raises(TypeError, match="integer"):
        jg.linalg.matrix_power(jg.eye(2), 1.5)
    with pytest.raises(RuntimeError, match="reduced"):
        jg.linalg.qr(jg.tensor(data((2, 3)), requires_grad=True))


# -- gradients against torch ---------------------------------------------------------------

W = weights((2, 3, 3))


@pytest.mark.parametrize(
    "name, mine, theirs, arrays",
    [
        (
            "inv",
            lambda a: weighted(W)(jg.linalg.inv(a)),
            lambda a: weighted(W)(torch.linalg.inv(a)),
            [spd(3, (2,))],
        ),
        (
            "det",
            lambda a: jg.linalg.det(a).sum(),
            lambda a: torch.linalg.det(a).sum(),
            [data((2, 3, 3))],
        ),
        (
            "slogdet",
            lambda a: jg.linalg.slogdet(a).logabsdet.sum(),
            lambda a: torch.linalg.slogdet(a).logabsdet.sum(),
            [data((2, 3, 3))],
        ),
        (
            "solve",
            lambda a, b: weighted(W[0])(jg.linalg.solve(a, b)),
            lambda a, b: weighted(W[0])(torch.linalg.solve(a, b)),
            [spd(3), data((3, 3), 1)],
        ),
        (
            "solve-vector",
            lambda a, b: weighted(W[0, 0])(jg.linalg.solve(a, b)),
            lambda a, b: weighted(W[0, 0])(torch.linalg.solve(a, b)),
            [spd(3), data(3, 1)],
        ),
        (
            "solve-broadcast",
            lambda a, b: weighted(W)(jg.linalg.solve(a, b)),
            lambda a, b: weighted(W)(torch.linalg.solve(a, b)),
            [spd(3), data((2, 3, 3), 1)],
        ),
        (
            "eigh",
            lambda a: (
                weighted(W[0, 0])(jg.linalg.eigh(a)[0]) + weighted(W[0])(jg.linalg.eigh(a)[1] ** 2)
            ),
            lambda a: (
                weighted(W[0, 0])(torch.linalg.eigh(a)[0])
                + weighted(W[0])(torch.linalg.eigh(a)[1] ** 2)
            ),
            [spd(3)],
        ),
        (
            "cholesky",
            lambda a: weighted(W)(jg.linalg.cholesky(a)),
            lambda a: weighted(W)(torch.linalg.cholesky(a)),
            [spd(3, (2,))],
        ),
        (
            "qr",
            lambda a: (
                weighted(W[0, :, :2])(jg.linalg.qr(a).Q) + weighted(W[1, :2, :2])(jg.linalg.qr(a).R)
            ),
            lambda a: (
                weighted(W[0, :, :2])(torch.linalg.qr(a).Q)
                + weighted(W[1, :2, :2])(torch.linalg.qr(a).R)
            ),
            [data((3, 2))],
        ),
        (
            "svd-tall",
            lambda a: _svd_loss(jg.linalg.svd(a, full_matrices=False), jg),
            lambda a: _svd_loss(torch.linalg.svd(a, full_matrices=False), torch),
            [data((4, 3))],
        ),
        (
            "svd-wide",
            lambda a: _svd_loss(jg.linalg.svd(a, full_matrices=False), jg),
            lambda a: _svd_loss(torch.linalg.svd(a, full_matrices=False), torch),
            [data((3, 4))],
        ),
        (
            "svdvals",
            lambda a: jg.linalg.svdvals(a).sum(),
            lambda a: torch.linalg.svdvals(a).sum(),
            [data((2, 3, 4))],
        ),
        (
            "pinv-tall",
            lambda a: weighted(W[0, :2])(jg.linalg.pinv(a)),
            lambda a: weighted(W[0, :2])(torch.linalg.pinv(a)),
            [data((3, 2))],
        ),
        (
            "pinv-wide",
            lambda a: weighted(W[0, :, :2])(jg.linalg.pinv(a)),
            lambda a: weighted(W[0, :, :2])(torch.linalg.pinv(a)),
            [data((2, 3))],
        ),
        (
            "lstsq",
            lambda a, b: weighted(W[0, :2, 0])(jg.linalg.lstsq(a, b)[0]),
            lambda a, b: weighted(W[0, :2, 0])(torch.linalg.pinv(a) @ b),
            [data((4, 2)), data(4)],
        ),
        ("norm", lambda a: jg.linalg.norm(a), lambda a: torch.linalg.norm(a), [data((3, 4))]),
        (
            "norm-inf",
            lambda a: jg.linalg.vector_norm(a, ord=np.inf, axis=1).sum(),
            lambda a: torch.linalg.vector_norm(a, ord=np.inf, dim=1).sum(),
            [data((3, 4))],
        ),
        (
            "norm-3",
            lambda a: jg.linalg.vector_norm(a, ord=3, axis=0).sum(),
            lambda a: torch.linalg.vector_norm(a, ord=3, dim=0).sum(),
            [data((3, 4))],
        ),
        (
            "norm-nuc",
            lambda a: jg.linalg.matrix_norm(a, ord="nuc").sum(),
            lambda a: torch.linalg.matrix_norm(a, ord="nuc").sum(),
            [data((2, 3, 4))],
        ),
        (
            "norm-1",
            lambda a: jg.linalg.matrix_norm(a, ord=1).sum(),
            lambda a: torch.linalg.matrix_norm(a, ord=1).sum(),
            [data((2, 3, 4))],
        ),
        (
            "matrix_power",
            lambda a: weighted(W[0])(jg.linalg.matrix_power(a, -3)),
            lambda a: weighted(W[0])(torch.linalg.matrix_power(a, -3)),
            [spd(3)],
        ),
        (
            "multi_dot",
            lambda a, b, c: jg.linalg.multi_dot([a, b, c]).sum(),
            lambda a, b, c: torch.linalg.multi_dot([a, b, c]).sum(),
            [data((2, 3)), data((3, 4), 1), data((4, 2), 2)],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_gradients_match_torch(name, mine, theirs, arrays):
    check_grad(mine, theirs, *arrays, rtol=1e-6, atol=1e-8)


def _svd_loss(parts, lib):
    """A loss of U, S and Vh that no choice of singular vectors' signs changes."""
    u, s, vh = parts
    t = jg.tensor if lib is jg else torch.tensor
    wu, ws, wv = weights(u.shape, 1), weights(s.shape, 2), weights(vh.shape, 3)
    return (u**2 * t(wu)).sum() + (s * t(ws)).sum() + (vh**2 * t(wv)).sum()


def test_norm_gradient_at_zero_is_zero():
    x = jg.zeros(3, requires_grad=True)
    jg.linalg.norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_second_order_gradients_by_finite_differences():
    a = jg.tensor(spd(3), requires_grad=True)
    assert gradcheck(lambda m: jg.linalg.inv(m).sum() ** 2, a)
    (g,) = jg.autograd.grad(jg.linalg.det(a), [a], create_graph=True)
    assert gradcheck(lambda m: jg.linalg.det(m), a)
    g.sum().backward()
    expected = torch.tensor(spd(3), requires_grad=True)
    (tg,) = torch.autograd.grad(torch.linalg.det(expected), [expected], create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), expected.grad.numpy(), rtol=1e-8)


def test_saved_result_written_in_place_is_refused():
    a = jg.tensor(spd(3), requires_grad=True)
    y = jg.linalg.inv(a)
    y[0, 0] = 1.0
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()


def test_under_jit_replays_recompute():
    step = jg.jit(lambda m: jg.linalg.svd(m, full_matrices=False).S * 1.0)
    for seed in range(3):
        m = data((3, 3), seed)
        np.testing.assert_allclose(step(jg.tensor(m)).numpy(), np.linalg.svd(m)[1])
