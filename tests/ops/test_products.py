"""convolve, correlate, cross, kron and vecdot against numpy and PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import jitgrad as jg
from jitgrad.autograd import gradcheck


def assert_like(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_match_numpy(name, mode):
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 6):
        for m in (1, 3, 4, 7):
            a, v = rng.normal(size=n), rng.normal(size=m)
            assert_like(
                getattr(jg, name)(jg.from_numpy(a), jg.from_numpy(v), mode),
                getattr(np, name)(a, v, mode),
            )
            za, zv = a + 1j * rng.normal(size=n), v - 1j * rng.normal(size=m)
            assert_like(getattr(jg, name)(za, zv, mode), getattr(np, name)(za, zv, mode))
    ints = np.array([1, 2, 3], np.int32), np.array([1, -1], np.int32)
    assert_like(getattr(jg, name)(*map(jg.from_numpy, ints), mode), getattr(np, name)(*ints, mode))
    x, y = (jg.tensor(rng.normal(size=k), requires_grad=True) for k in (5, 3))
    assert gradcheck(lambda s, t: getattr(jg, name)(s, t, mode), x, y)
    assert gradcheck(lambda s, t: getattr(jg, name)(t, s, mode), x, y)


def test_convolve_errors():
    with pytest.raises(ValueError, match="empty"):
        jg.convolve(jg.zeros(0), jg.ones(2))
    with pytest.raises(ValueError, match="mode"):
        jg.correlate(jg.ones(3), jg.ones(2), mode="middle")


CROSS_CASES = [
    ((4, 3), (4, 3), {}),
    ((4, 3), (3,), {}),
    ((3, 4), (4, 3), {"axisa": 0}),
    ((2, 3, 4), (2, 3, 4), {"axis": 1}),
    ((3, 4), (3, 4), {"axisa": 0, "axisb": 0, "axisc": 0}),
    ((4, 2), (4, 3), {}),
    ((4, 3), (4, 2), {}),
    ((4, 2), (2,), {}),
]


@pytest.mark.parametrize(("sa", "sb", "kwargs"), CROSS_CASES)
def test_cross_matches_numpy(sa, sb, kwargs):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.cross(a, b, **kwargs)
    if 2 in (sa[-1], sb[-1]):
        with pytest.warns(DeprecationWarning):
            got = jg.cross(jg.from_numpy(a), jg.from_numpy(b), **kwargs)
    else:
        got = jg.cross(jg.from_numpy(a), jg.from_numpy(b), **kwargs)
    assert_like(got, want)


def test_cross_gradient_and_errors():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    x, y = jg.tensor(a, requires_grad=True), jg.tensor(b, requires_grad=True)
    s, t = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (jg.cross(x, y) ** 2).sum().backward()
    (torch.linalg.cross(s, t) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), s.grad.numpy())
    np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy())
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        jg.cross(jg.ones(4), jg.ones(4))


@pytest.mark.parametrize(
    ("sa", "sb"), [((2,), (3,)), ((2, 3), (3, 2)), ((2,), (2, 3)), ((2, 2, 1), (3,)), ((), (2,))]
)
def test_kron_matches_numpy_and_torch(sa, sb):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    assert_like(jg.kron(jg.from_numpy(a), jg.from_numpy(b)), np.kron(a, b))
    ints = np.arange(4).reshape(2, 2).astype(np.int32)
    assert_like(jg.kron(jg.from_numpy(ints), jg.from_numpy(ints)), np.kron(ints, ints))
    if sa:
        x, y = jg.tensor(a, requires_grad=True), jg.tensor(b, requires_grad=True)
        s, t = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        (jg.kron(x, y) ** 2).sum().backward()
        (torch.kron(s, t) ** 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), s.grad.numpy())
        np.testing.assert_allclose(y.grad.numpy(), t.grad.numpy())


def test_vecdot_matches_numpy():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4)), rng.normal(size=4)
    assert_like(jg.vecdot(jg.from_numpy(a), jg.from_numpy(b)), np.vecdot(a, b))
    assert_like(jg.vecdot(jg.from_numpy(a), jg.from_numpy(a), axis=0), np.vecdot(a, a, axis=0))
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_like(jg.vecdot(jg.from_numpy(ints), jg.from_numpy(ints)), np.vecdot(ints, ints))
    with pytest.raises(ValueError, match="lengths"):
        jg.vecdot(jg.ones(3), jg.ones(4))
    x = jg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    assert gradcheck(lambda t: jg.vecdot(t, t.flip(0)), x)


def test_matrix_transpose_is_exported():
    x = jg.arange(6).reshape(1, 2, 3)
    assert jg.matrix_transpose(x).shape == (1, 3, 2)
    np.testing.assert_array_equal(jg.matrix_transpose(x).numpy(), np.matrix_transpose(x.numpy()))


@pytest.mark.parametrize(
    "a, b",
    [
        (np.arange(6.0).reshape(2, 3), np.ones((3, 2))),
        (np.array([1 + 2j, 3j]), np.array([2, 1 - 1j])),
        (np.array([1, 2]), np.array([3, 4])),
    ],
)
def test_vdot_matches_numpy(a, b):
    got, expected = jg.vdot(jg.tensor(a), jg.tensor(b)), np.vdot(a, b)
    assert got.dtype.numpy == np.asarray(expected).dtype
    np.testing.assert_allclose(got.numpy(), expected)
    with pytest.raises(ValueError, match="different sizes"):
        jg.vdot(jg.ones(2), jg.ones(3))


@pytest.mark.parametrize(
    "a, b",
    [
        (np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(2, 2, 3)),
        (np.arange(3), np.arange(3)),
        (np.float64(2.0), np.arange(3.0)),
    ],
)
def test_inner_matches_numpy_with_gradients(a, b):
    got, expected = jg.inner(jg.asarray(a), jg.asarray(b)), np.inner(a, b)
    assert got.shape == np.shape(expected) and got.dtype.numpy == np.asarray(expected).dtype
    np.testing.assert_allclose(got.numpy(), expected)
    if np.asarray(a).dtype.kind == "f" and np.ndim(a):
        assert gradcheck(lambda x: jg.inner(x, jg.asarray(b)), jg.tensor(a, requires_grad=True))
    with pytest.raises(ValueError, match="not aligned"):
        jg.inner(jg.ones(2), jg.ones(3))
