"""Power-series polynomials against numpy, gradients by finite differences."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck

RNG = np.random.default_rng(0)
X, Y, Y2, W = np.linspace(0, 1, 8), RNG.normal(size=8), RNG.normal(size=(8, 2)), RNG.uniform(size=8)


def assert_like(got, want, rtol=1e-10):
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype.numpy == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("x", [np.linspace(-2, 2, 5), np.arange(4), 3, np.float32([1.5, 2.0])])
def test_polyval_matches_numpy(x):
    for p in (RNG.normal(size=4), [1, 2, 3], np.float32([1.0, -2.0])):
        assert_like(jg.polyval(jg.tensor(p), jg.tensor(x)), np.polyval(p, x), rtol=1e-6)


def test_polyval_gradcheck():
    p, x = jg.tensor(RNG.normal(size=4), requires_grad=True), jg.tensor(X, requires_grad=True)
    assert gradcheck(jg.polyval, p, x)


@pytest.mark.parametrize("m", [0, 1, 2, 5])
def test_polyder_and_polyint_match_numpy(m):
    p = RNG.normal(size=4)
    assert_like(jg.polyder(jg.from_numpy(p), m), np.polyder(p, m))
    assert_like(jg.polyder(jg.tensor([1, 2, 3, 4]), m), np.polyder([1, 2, 3, 4], m))
    assert_like(jg.polyint(jg.from_numpy(p), m), np.polyint(p, m))
    assert_like(jg.polyint(jg.from_numpy(p), m, k=2.0), np.polyint(p, m, k=2.0))
    if m:
        k = list(range(1, m + 1))
        assert_like(jg.polyint(jg.from_numpy(p), m, k=k), np.polyint(p, m, k=k))
    x = jg.tensor(p, requires_grad=True)
    assert gradcheck(lambda t: jg.polyint(jg.polyder(t, m), m), x)
    with pytest.raises(ValueError, match="positive"):
        jg.polyder(x, -1)
    with pytest.raises(ValueError, match="positive"):
        jg.polyint(x, -1)


@pytest.mark.parametrize("kwargs", [{}, {"w": W}, {"rcond": 1e-3}])
@pytest.mark.parametrize("y", [Y, Y2])
def test_polyfit_matches_numpy_and_differentiates_in_y(kwargs, y):
    assert_like(
        jg.polyfit(jg.from_numpy(X), jg.from_numpy(y), 2, **kwargs), np.polyfit(X, y, 2, **kwargs)
    )
    assert gradcheck(lambda t: jg.polyfit(X, t, 3, **kwargs), jg.tensor(y, requires_grad=True))


def test_polyfit_full_and_cov():
    got, want = jg.polyfit(X, jg.from_numpy(Y), 2, full=True), np.polyfit(X, Y, 2, full=True)
    assert len(got) == 5
    for g, w in zip(got, want, strict=True):
        if isinstance(w, np.ndarray):
            assert_like(g, w)
        else:
            assert g == w
    coefficients, cov = jg.polyfit(X, jg.from_numpy(Y), 2, cov=True)
    assert_like(cov, np.polyfit(X, Y, 2, cov=True)[1])
    assert_like(
        jg.polyfit(jg.arange(5), jg.arange(5) ** 2, 2),
        np.polyfit(np.arange(5), np.arange(5) ** 2, 2),
    )


def test_roots_and_poly_match_numpy():
    p = RNG.normal(size=5)
    np.testing.assert_allclose(
        np.sort_complex(jg.roots(jg.from_numpy(p)).numpy()), np.sort_complex(np.roots(p))
    )
    assert_like(jg.roots(jg.tensor([1.0, -3.0, 2.0])), np.roots([1.0, -3.0, 2.0]))
    assert_like(jg.poly(jg.tensor([1.0, 2.0, 3.0])), np.poly([1.0, 2.0, 3.0]))
    m = RNG.normal(size=(3, 3))
    assert_like(jg.poly(jg.from_numpy(m)), np.poly(m))
