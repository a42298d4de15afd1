"""nan-ignoring reductions against numpy: values, dtypes, warnings and gradients."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.autograd import gradcheck

REDUCTIONS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanmedian"]
SCANS = ["nancumsum", "nancumprod"]


def with_nans(dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(4, 5)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.uniform(size=a.shape) < 0.3] = np.nan
        a[3] = np.nan  # a slice of nans only
        a[0, :4] = np.nan  # and one with a single value
    return a


def both(fn, *args, **kwargs):
    """numpy's and jitgrad's results, and the warnings each raised."""
    with warnings.catch_warnings(record=True) as np_warned:
        warnings.simplefilter("always")
        want = getattr(np, fn)(*args, **kwargs)
    jargs = [jg.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as jg_warned:
        warnings.simplefilter("always")
        got = getattr(jg, fn)(*jargs, **kwargs)
    return got, want, {str(w.message) for w in jg_warned}, {str(w.message) for w in np_warned}


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(REDUCTIONS + SCANS),
    dtype=st.sampled_from([np.float64, np.float32, np.int32]),
    axis=st.sampled_from([None, 0, 1, -1]),
    keepdims=st.booleans(),
)
def test_nan_reductions_match_numpy(name, dtype, axis, keepdims):
    a = with_nans(dtype) if dtype != np.int32 else np.arange(20, dtype=dtype).reshape(4, 5) % 7
    kwargs = {} if name in SCANS else {"keepdims": keepdims}
    got, want, got_warnings, want_warnings = both(name, a, axis=axis, **kwargs)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, equal_nan=True)
    assert got_warnings == want_warnings


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_nanvar_and_nanstd_with_ddof(ddof):
    a = with_nans(np.float64, 1)
    for name in ("nanvar", "nanstd"):
        got, want, got_warnings, want_warnings = both(name, a, axis=1, ddof=ddof)
        np.testing.assert_allclose(got.numpy(), want, equal_nan=True)
        assert got_warnings == want_warnings
    z = a + 1j * np.random.default_rng(2).normal(size=a.shape)
    got, want, _, _ = both("nanvar", z, axis=0, ddof=ddof)
    assert got.dtype.numpy == want.dtype
    np.testing.assert_allclose(got.numpy(), want, equal_nan=True)


@pytest.mark.parametrize("method", ["linear", "lower", "nearest", "weibull"])
def test_nanquantile_and_nanpercentile(method):
    a = with_nans(np.float64, 3)
    for name, q in (("nanquantile", [0.1, 0.5, 1.0]), ("nanpercentile", 40)):
        got, want, got_warnings, want_warnings = both(name, a, q, axis=1, method=method)
        assert got.shape == want.shape and got.dtype.numpy == want.dtype
        np.testing.assert_allclose(got.numpy(), want, equal_nan=True)
        assert got_warnings == want_warnings


def test_nanargmax_and_nanargmin():
    a = with_nans(np.float64, 4)[:3]
    for name in ("nanargmax", "nanargmin"):
        got, want, _, _ = both(name, a, axis=1)
        assert got.dtype is jg.int64
        np.testing.assert_array_equal(got.numpy(), want)
        with pytest.raises(ValueError, match="All-NaN slice"):
            getattr(jg, name)(jg.from_numpy(with_nans(np.float64)), axis=1)


@pytest.mark.parametrize(
    "name",
    [
        "nansum",
        "nanprod",
        "nanmean",
        "nanvar",
        "nanstd",
        "nanmax",
        "nanmedian",
        "nancumsum",
        "nancumprod",
    ],
)  # noqa: E501
def test_nan_gradients(name):
    # the gradient of a finite value by finite differences; nans get none
    a = np.random.default_rng(5).permutation(15).reshape(3, 5) / 4.0 + 0.5
    mask = np.zeros(a.shape, bool)
    mask[0, 1] = mask[2, 4] = True
    fn = getattr(jg, name)
    x = jg.tensor(a, requires_grad=True)
    assert gradcheck(lambda t: fn(jg.where(jg.from_numpy(mask), np.nan, t), axis=1), x)
    fn(jg.where(jg.from_numpy(mask), np.nan, x), axis=1).sum().backward()
    assert (x.grad.numpy()[mask] == 0).all()
