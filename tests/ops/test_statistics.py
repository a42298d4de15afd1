"""Order statistics and moments against numpy (values, dtype, shape) and PyTorch (gradients)."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_oracle import shapes_and_axes

import jitgrad as jg
from jitgrad.autograd import gradcheck

METHODS = [
    "linear",
    "lower",
    "higher",
    "nearest",
    "midpoint",
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "median_unbiased",
    "normal_unbiased",
]


def shape_and_axis():
    return shapes_and_axes(max_dims=3, max_side=5)


def assert_like(got, want, rtol=1e-7):
    want = np.asarray(want)
    assert isinstance(got, jg.Tensor)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-12, equal_nan=True)


@settings(max_examples=20, deadline=None)
@given(
    case=shape_and_axis(),
    method=st.sampled_from(METHODS),
    q=st.sampled_from([0.3, 1, [0.0, 0.5, 0.9], [[0.25], [1.0]]]),
    dtype=st.sampled_from([np.float64, np.float32, np.int32]),
    keepdims=st.booleans(),
)
def test_quantile_matches_numpy(case, method, q, dtype, keepdims):
    shape, axis = case
    a = (np.random.default_rng(0).normal(size=shape) * 10).astype(dtype)
    got = jg.quantile(jg.from_numpy(a), q, axis=axis, method=method, keepdims=keepdims)
    want = np.quantile(a, q, axis=axis, method=method, keepdims=keepdims)
    assert_like(got, want, rtol=1e-5 if dtype == np.float32 else 1e-7)


@settings(max_examples=15, deadline=None)
@given(
    case=shape_and_axis(),
    keepdims=st.booleans(),
    dtype=st.sampled_from([np.float64, np.float32, np.int64]),
)
def test_median_and_percentile_match_numpy(case, keepdims, dtype):
    shape, axis = case
    a = (np.random.default_rng(1).normal(size=shape) * 10).astype(dtype)
    x = jg.from_numpy(a)
    rtol = 1e-5 if dtype == np.float32 else 1e-7
    assert_like(
        jg.median(x, axis=axis, keepdims=keepdims), np.median(a, axis=axis, keepdims=keepdims), rtol
    )  # noqa: E501
    assert_like(
        jg.percentile(x, [10, 50], axis=axis, keepdims=keepdims),
        np.percentile(a, [10, 50], axis=axis, keepdims=keepdims),
        rtol,
    )


def test_quantile_of_a_slice_with_nan_is_nan():
    a = np.arange(12.0).reshape(3, 4)
    a[1, 2] = np.nan
    assert_like(jg.quantile(jg.from_numpy(a), 0.4, axis=1), np.quantile(a, 0.4, axis=1))
    assert_like(jg.median(jg.from_numpy(a)), np.median(a))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_quantile_gradient_matches_torch(axis):
    a = np.random.default_rng(2).normal(size=(4, 5))
    x, t = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    q = [0.1, 0.5, 0.75]
    (jg.quantile(x, q, axis=axis) ** 2).sum().backward()
    (torch.quantile(t, torch.tensor(q, dtype=torch.float64), dim=axis) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("method", ["lower", "nearest", "midpoint", "hazen"])
def test_quantile_gradcheck(method):
    x = jg.tensor(np.random.default_rng(3).permutation(12).reshape(3, 4) / 3.0, requires_grad=True)
    assert gradcheck(lambda t: jg.quantile(t, [0.2, 0.6], axis=1, method=method), x)
    assert gradcheck(lambda t: jg.median(t.T, axis=0, keepdims=True), x)


def test_quantile_refuses_bad_input():
    x = jg.arange(5.0)
    with pytest.raises(ValueError, match="range"):
        jg.quantile(x, 1.5)
    with pytest.raises(ValueError, match="range"):
        jg.percentile(x, -1)
    with pytest.raises(ValueError, match="method"):
        jg.quantile(x, 0.5, method="middle")
    with pytest.raises(TypeError):
        jg.quantile(jg.tensor([1j, 2j]), 0.5)


@settings(max_examples=15, deadline=None)
@given(case=shape_and_axis(), returned=st.booleans(), keepdims=st.booleans(), ints=st.booleans())
def test_average_matches_numpy(case, returned, keepdims, ints):
    shape, axis = case
    rng = np.random.default_rng(4)
    a = rng.integers(-9, 9, shape) if ints else rng.normal(size=shape)
    w = rng.uniform(0.5, 2.0, shape)
    for weights in (None, w):
        got = jg.average(jg.from_numpy(a), axis, weights, returned, keepdims=keepdims)
        want = np.average(a, axis, weights, returned, keepdims=keepdims)
        for g, e in zip(got, want, strict=True) if returned else [(got, want)]:
            assert_like(g, e)


def test_average_with_1d_weights_along_an_axis():
    a = np.random.default_rng(5).normal(size=(3, 4))
    got = jg.average(jg.from_numpy(a), axis=1, weights=[1, 2, 3, 4], returned=True)
    want = np.average(a, axis=1, weights=[1, 2, 3, 4], returned=True)
    assert_like(got[0], want[0])
    assert_like(got[1], want[1])
    with pytest.raises(ZeroDivisionError):
        jg.average(jg.from_numpy(a), axis=1, weights=[1, -1, 0, 0])
    with pytest.raises(TypeError):
        jg.average(jg.from_numpy(a), weights=[1, 2, 3, 4])


COV_CASES = [
    {},
    {"rowvar": False},
    {"bias": True},
    {"ddof": 2},
    {"fweights": [1, 2, 1, 1, 3, 1]},
    {"aweights": [0.5, 1.0, 2.0, 1.5, 1.0, 0.25]},
    {"fweights": [1, 2, 1, 1, 3, 1], "aweights": [0.5, 1.0, 2.0, 1.5, 1.0, 0.25], "ddof": 1},
]


@pytest.mark.parametrize("kwargs", COV_CASES)
def test_cov_and_corrcoef_match_numpy(kwargs):
    rng = np.random.default_rng(6)
    m = rng.normal(size=(3, 6) if kwargs.get("rowvar", True) else (6, 3))
    assert_like(jg.cov(jg.from_numpy(m), **kwargs), np.cov(m, **kwargs))
    y = rng.normal(size=m.shape)
    assert_like(jg.cov(jg.from_numpy(m), jg.from_numpy(y), **kwargs), np.cov(m, y, **kwargs))
    assert_like(jg.corrcoef(jg.from_numpy(m)), np.corrcoef(m))


def test_cov_dtypes_and_shapes():
    assert_like(jg.cov(jg.arange(5)), np.cov(np.arange(5)))
    assert_like(jg.cov(jg.arange(5, dtype=jg.float32)), np.cov(np.arange(5, dtype=np.float32)))
    z = np.random.default_rng(7).normal(size=(2, 5)) * (1 + 1j)
    assert_like(jg.cov(jg.from_numpy(z)), np.cov(z))
    assert_like(jg.corrcoef(jg.from_numpy(z)), np.corrcoef(z))
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        jg.cov(jg.arange(3.0), fweights=[1, -1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="Degrees of freedom"):
            jg.cov(jg.tensor([1.0]))


def test_cov_gradient_matches_torch():
    a = np.random.default_rng(8).normal(size=(3, 7))
    x, t = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    fw, aw = [1, 2, 1, 3, 1, 1, 2], np.linspace(0.5, 2, 7)
    (jg.cov(x, fweights=fw, aweights=aw) ** 2).sum().backward()
    c = torch.cov(t, fweights=torch.tensor(fw), aweights=torch.tensor(aw))
    (c**2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
    x.grad, t.grad = None, None
    (jg.corrcoef(x) ** 3).sum().backward()
    (torch.corrcoef(t) ** 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-8, atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(case=shape_and_axis(), keepdims=st.booleans(), dtype=st.sampled_from([np.int16, np.float32]))
def test_ptp_matches_numpy(case, keepdims, dtype):
    shape, axis = case
    a = np.random.default_rng(9).integers(-50, 50, shape).astype(dtype)
    assert_like(
        jg.ptp(jg.from_numpy(a), axis, keepdims=keepdims), np.ptp(a, axis, keepdims=keepdims)
    )


@pytest.mark.parametrize("shape, dim", [((3, 4), 1), ((3, 4), 0), ((5,), 0), ((2, 3, 3), -1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_median_with_dim_is_pytorchs_lower_median(shape, dim, keepdim):
    values = np.random.default_rng(3).standard_normal(shape)
    x, tx = jg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    got, expected = jg.median(x, dim=dim, keepdim=keepdim), tx.median(dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(got.values.numpy(), expected.values.detach().numpy())
    np.testing.assert_array_equal(got.indices.numpy(), expected.indices.numpy())
    got.values.sum().backward()
    expected.values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert x.median(dim=dim, keepdim=keepdim).values.tolist() == got.values.tolist()


def test_median_method_is_pytorchs_and_the_function_numpys():
    x = jg.tensor([3.0, 1.0, 4.0, 2.0])
    assert x.median().item() == torch.tensor([3.0, 1.0, 4.0, 2.0]).median().item() == 2.0
    assert jg.median(x).item() == np.median([3.0, 1.0, 4.0, 2.0]) == 2.5
    with pytest.raises(TypeError, match="both axis= and dim="):
        jg.median(x, 0, dim=0)
