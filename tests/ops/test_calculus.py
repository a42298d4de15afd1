"""Differences, integrals, running totals and interp against numpy and PyTorch."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad.autograd import gradcheck


def assert_like(got, want, rtol=1e-10):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    n=st.integers(0, 3),
    data=st.data(),
    dtype=st.sampled_from([np.float64, np.int32, np.bool_]),
)
def test_diff_matches_numpy(shape, n, data, dtype):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = (np.random.default_rng(0).normal(size=shape) * 5).astype(dtype)
    extra = data.draw(st.sampled_from([{}, {"prepend": 0}, {"append": 2, "prepend": 1}]))
    assert_like(jg.diff(jg.from_numpy(a), n, axis, **extra), np.diff(a, n, axis, **extra))


def test_diff_errors_and_gradient():
    with pytest.raises(ValueError, match="non-negative"):
        jg.diff(jg.arange(3), n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        jg.diff(jg.tensor(1.0))
    a = np.random.default_rng(1).normal(size=(3, 5))
    x, t = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (jg.diff(x, n=2, axis=1, prepend=1.0) ** 2).sum().backward()
    (torch.diff(t, n=2, dim=1, prepend=torch.ones(3, 1, dtype=torch.float64)) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


def test_ediff1d():
    a = np.array([[1, 4], [9, 16]])
    assert_like(jg.ediff1d(jg.from_numpy(a)), np.ediff1d(a))
    assert_like(jg.ediff1d(jg.from_numpy(a), to_end=[7, 8], to_begin=-1), np.ediff1d(a, [7, 8], -1))
    with pytest.raises(TypeError, match="same_kind"):
        jg.ediff1d(jg.from_numpy(a), to_begin=0.5)


GRADIENT_CASES = [
    ((), {}),
    ((2.0,), {}),
    ((0.5,), {"edge_order": 2}),
    ((), {"axis": 1}),
    (([0.0, 1.0, 3.0, 3.5], [0.0, 1.0, 2.0, 4.0, 7.0]), {}),
    (([0.0, 1.0, 3.0, 3.5], [0.0, 1.0, 2.0, 4.0, 7.0]), {"edge_order": 2}),
    (([0, 2, 4, 6, 8],), {"axis": -1}),
]


@pytest.mark.parametrize(("spacing", "kwargs"), GRADIENT_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_gradient_matches_numpy(spacing, kwargs, dtype):
    a = (np.random.default_rng(2).normal(size=(4, 5)) * 10).astype(dtype)
    got, want = (
        jg.gradient(jg.from_numpy(a), *spacing, **kwargs),
        np.gradient(a, *spacing, **kwargs),
    )
    for g, w in zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]:
        assert_like(g, w, rtol=1e-5 if dtype == np.float32 else 1e-10)


def test_gradient_errors_and_gradcheck():
    with pytest.raises(ValueError, match="too small"):
        jg.gradient(jg.arange(2.0), edge_order=2)
    with pytest.raises(ValueError, match="greater than 2"):
        jg.gradient(jg.arange(5.0), edge_order=3)
    with pytest.raises(TypeError, match="invalid number"):
        jg.gradient(jg.ones((3, 3)), 1.0, 2.0, 3.0)
    x = jg.tensor(np.random.default_rng(3).normal(size=(4, 5)), requires_grad=True)
    assert gradcheck(lambda t: jg.gradient(t, [0.0, 1.0, 3.0, 3.5], 2.0, edge_order=2), x)


@pytest.mark.parametrize("axis", [0, -1])
def test_trapezoid_matches_numpy_and_torch(axis):
    rng = np.random.default_rng(4)
    y, x = rng.normal(size=(4, 5)), np.cumsum(rng.uniform(size=(4, 5)), axis=axis)
    assert_like(jg.trapezoid(jg.from_numpy(y), axis=axis), np.trapezoid(y, axis=axis))
    assert_like(
        jg.trapezoid(jg.from_numpy(y), dx=0.5, axis=axis), np.trapezoid(y, dx=0.5, axis=axis)
    )
    assert_like(
        jg.trapezoid(jg.from_numpy(y), jg.from_numpy(x), axis=axis), np.trapezoid(y, x, axis=axis)
    )
    x1 = x[:, 0] if axis == 0 else x[0]
    assert_like(jg.trapezoid(jg.from_numpy(y), x1, axis=axis), np.trapezoid(y, x1, axis=axis))
    assert_like(jg.trapezoid(jg.arange(5)), np.trapezoid(np.arange(5)))
    gy, gx = jg.tensor(y, requires_grad=True), jg.tensor(x, requires_grad=True)
    ty, tx = torch.tensor(y, requires_grad=True), torch.tensor(x, requires_grad=True)
    jg.trapezoid(gy, gx, axis=axis).sum().backward()
    torch.trapezoid(ty, tx, dim=axis).sum().backward()
    np.testing.assert_allclose(gy.grad.numpy(), ty.grad.numpy())
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_cumulative_matches_numpy(name, include_initial, dtype):
    a = np.arange(1, 13).reshape(3, 4).astype(dtype)
    for axis in (0, 1, -1):
        got = getattr(jg, name)(jg.from_numpy(a), axis=axis, include_initial=include_initial)
        assert_like(got, getattr(np, name)(a, axis=axis, include_initial=include_initial))
    got = getattr(jg, name)(jg.from_numpy(a[0]), include_initial=include_initial)
    assert_like(got, getattr(np, name)(a[0], include_initial=include_initial))
    with pytest.raises(ValueError, match="axis"):
        getattr(jg, name)(jg.from_numpy(a))
    x = jg.tensor(a.astype(np.float64), requires_grad=True)
    assert gradcheck(lambda t: getattr(jg, name)(t, axis=1, include_initial=include_initial), x)


INTERP_CASES = [{}, {"left": -7.0, "right": 9.0}, {"period": 3.0}]


@pytest.mark.parametrize("kwargs", INTERP_CASES)
def test_interp_matches_numpy_and_differentiates(kwargs):
    rng = np.random.default_rng(5)
    xp, fp = np.array([0.0, 1.0, 2.5, 4.0]), rng.normal(size=4)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.6, 4.0, 5.0, 3.3])
    assert_like(
        jg.interp(jg.from_numpy(x), xp, jg.from_numpy(fp), **kwargs), np.interp(x, xp, fp, **kwargs)
    )
    zp = fp + 1j * rng.normal(size=4)
    assert_like(jg.interp(x, xp, jg.from_numpy(zp), **kwargs), np.interp(x, xp, zp, **kwargs))
    assert_like(
        jg.interp(x.astype(np.float32), xp, fp.astype(np.float32)),
        np.interp(x.astype(np.float32), xp, fp.astype(np.float32)),
    )
    gx, gfp = jg.tensor(x + 0.01, requires_grad=True), jg.tensor(fp, requires_grad=True)
    assert gradcheck(lambda a, b: jg.interp(a, xp, b, **kwargs), gx, gfp)


def test_interp_errors():
    with pytest.raises(ValueError, match="same length"):
        jg.interp(jg.arange(3.0), [0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="period"):
        jg.interp(jg.arange(3.0), [0.0, 1.0], [1.0, 2.0], period=0)
