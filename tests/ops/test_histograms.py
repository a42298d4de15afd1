"""Histograms, bincount and digitize against numpy; weighted counts by finite differences."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck

RNG = np.random.default_rng(0)
A, W = RNG.normal(size=60), RNG.uniform(size=60)
HISTOGRAM_CASES = [
    {},
    {"bins": 5},
    {"bins": "auto"},
    {"bins": "fd"},
    {"bins": "sturges"},
    {"bins": [-1.0, 0.0, 0.5, 3.0]},
    {"range": (-1, 1)},
    {"density": True},
    {"weights": W},
    {"weights": W, "density": True, "bins": 4},
]


def assert_like(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("kwargs", HISTOGRAM_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_histogram_matches_numpy(kwargs, dtype):
    a = (A * 10).astype(dtype)
    converted = {k: jg.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    hist, edges = jg.histogram(jg.from_numpy(a), **converted)
    want_hist, want_edges = np.histogram(a, **kwargs)
    assert_like(hist, want_hist)
    assert_like(edges, want_edges)
    assert_like(
        jg.histogram_bin_edges(jg.from_numpy(a), kwargs.get("bins", 10)),
        np.histogram_bin_edges(a, kwargs.get("bins", 10)),
    )


@pytest.mark.parametrize(
    "kwargs", [{"bins": 5}, {"bins": [-1.0, 0.0, 0.5, 1.0]}, {"bins": 4, "density": True}]
)
def test_histogram_is_differentiable_in_weights(kwargs):
    w = jg.tensor(W, requires_grad=True)
    hist, edges = jg.histogram(jg.from_numpy(A), weights=w, **kwargs)
    want_hist, want_edges = np.histogram(A, weights=W, **kwargs)
    assert_like(hist, want_hist)
    assert_like(edges, want_edges)
    assert gradcheck(lambda t: jg.histogram(jg.from_numpy(A), weights=t, **kwargs)[0], w)


def test_histogram2d_and_histogramdd_match_numpy():
    x, y = A[:30], A[30:]
    for bins in (3, (2, 4), [np.array([-2.0, 0.0, 2.0]), 3]):
        got, want = (
            jg.histogram2d(jg.from_numpy(x), jg.from_numpy(y), bins),
            np.histogram2d(x, y, bins),
        )
        for g, w in zip(got, want, strict=True):
            assert_like(g, w)
    sample = A.reshape(20, 3)
    hist, edges = jg.histogramdd(jg.from_numpy(sample), bins=(2, 3, 4), density=True)
    want_hist, want_edges = np.histogramdd(sample, bins=(2, 3, 4), density=True)
    assert_like(hist, want_hist)
    for g, w in zip(edges, want_edges, strict=True):
        assert_like(g, w)


def test_bincount_matches_numpy():
    x = np.array([0, 3, 1, 1, 5])
    assert_like(jg.bincount(jg.from_numpy(x)), np.bincount(x))
    assert_like(jg.bincount(jg.from_numpy(x), minlength=8), np.bincount(x, minlength=8))
    weights = np.array([0.5, 2.0, 3.0, 4.0, 5.0], np.float32)
    assert_like(jg.bincount(jg.from_numpy(x), jg.from_numpy(weights)), np.bincount(x, weights))
    w = jg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    assert gradcheck(lambda t: jg.bincount(x, weights=t, minlength=7), w)


def test_bincount_refuses_bad_input():
    with pytest.raises(ValueError, match="negative"):
        jg.bincount(jg.tensor([1, -1]))
    with pytest.raises(TypeError):
        jg.bincount(jg.tensor([1.5, 2.0]))
    with pytest.raises(ValueError, match="same length"):
        jg.bincount(jg.tensor([1, 2]), weights=jg.tensor([1.0]))


@pytest.mark.parametrize("right", [False, True])
def test_digitize_matches_numpy(right):
    x = np.array([-3.0, -1.0, 0.0, 0.2, 1.0, 4.0])
    for bins in ([-1.0, 0.0, 1.0], [1.0, 0.0, -1.0]):
        assert_like(
            jg.digitize(jg.from_numpy(x), bins, right=right), np.digitize(x, bins, right=right)
        )
    with pytest.raises(ValueError, match="monotonic"):
        jg.digitize(jg.from_numpy(x), [0.0, 1.0, 0.5])
