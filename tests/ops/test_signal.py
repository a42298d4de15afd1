"""i0, unwrap and the window functions against numpy; gradients of i0 and unwrap."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_i0_matches_numpy(dtype):
    a = np.array([0.0, -1.0, 2.5, 7.9, 8.0, 8.1, -20.0, 100.0]).astype(dtype)
    got, want = jg.i0(jg.tensor(a)), np.i0(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if dtype == "float32" else 1e-13)
    np.testing.assert_allclose(jg.i0(jg.tensor(2.0)).item(), np.i0(2.0))
    with pytest.raises(TypeError):
        jg.i0(jg.tensor([1j]))


def test_i0_gradient_is_i1():
    x = jg.tensor([0.0, 0.5, -3.0, 8.0, 9.5, 12.0], requires_grad=True)
    assert gradcheck(jg.i0, x)
    jg.i0(x).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.numpy()[0] == 0.0


@pytest.mark.parametrize(
    ("p", "kwargs"),
    [
        (np.array([0.0, 0.78, 5.49, 6.28]), {}),
        (np.array([0.0, 0.78, 5.49, 6.28]), {"discont": 4.0}),
        (np.array([0, 1, 2, -1, 0]), {"period": 4}),
        (np.array([2, 3, 4, 5, 2, 3, 4, 5]), {"period": 4}),
        (np.array([1, 2, 3, 4, 5, 6, 1, 2, 3]), {"period": 6}),
        (np.array([0, 1, 2, -1, 0]), {"period": 4.5}),
        (np.array([0.0, np.pi, 0.0, -np.pi]), {}),
        (np.linspace(0, 20, 12).reshape(3, 4) % (2 * np.pi), {"axis": 0}),
        (np.linspace(0, 20, 12).reshape(3, 4) % (2 * np.pi), {"axis": 1}),
        (np.array([0.5], np.float32), {}),
    ],
)
def test_unwrap_matches_numpy(p, kwargs):
    got, want = jg.unwrap(jg.tensor(p), **kwargs), np.unwrap(p, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_unwrap_gradient():
    x = jg.tensor([0.0, 3.0, 6.5, 0.2, 4.0], requires_grad=True)
    assert gradcheck(jg.unwrap, x)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [-1, 0, 1, 2, 7])
def test_windows_match_numpy(name, M):
    got, want = getattr(jg, name)(M), getattr(np, name)(M)
    assert isinstance(got, jg.Tensor) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize(("M", "beta"), [(0, 1.0), (1, 5.0), (8, 14.0), (5, 0)])
def test_kaiser_matches_numpy(M, beta):
    got, want = jg.kaiser(M, beta), np.kaiser(M, beta)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(jg.kaiser(jg.tensor(M), jg.tensor(beta)).numpy(), want)
