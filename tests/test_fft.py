"""jg.fft against np.fft: values, dtypes and shapes; the shifts' gradients."""

import numpy as np
import pytest

import jitgrad as jg


def data(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def complex_data(shape, seed=0):
    return data(shape, seed) + 1j * data(shape, seed + 1)


CASES = [
    ("fft", lambda f: f.fft(complex_data(8))),
    ("fft-n-norm", lambda f: f.fft(data(6), n=8, norm="ortho")),
    ("fft-axis", lambda f: f.fft(data((3, 4)), axis=0, norm="forward")),
    ("ifft", lambda f: f.ifft(complex_data((2, 5)))),
    ("fft2", lambda f: f.fft2(data((4, 6)))),
    ("ifft2", lambda f: f.ifft2(complex_data((4, 6)), s=(3, 3))),
    ("fftn", lambda f: f.fftn(data((2, 3, 4)), axes=(0, 2))),
    ("ifftn", lambda f: f.ifftn(complex_data((2, 3, 4)))),
    ("rfft", lambda f: f.rfft(data(9))),
    ("rfft-float32", lambda f: f.rfft(data(8, dtype=np.float32))),
    ("irfft", lambda f: f.irfft(complex_data(5))),
    ("irfft-n", lambda f: f.irfft(complex_data(5), n=9)),
    ("rfft2", lambda f: f.rfft2(data((4, 6)))),
    ("irfft2", lambda f: f.irfft2(complex_data((4, 4)))),
    ("rfftn", lambda f: f.rfftn(data((2, 4, 6)))),
    ("irfftn", lambda f: f.irfftn(complex_data((2, 4, 4)))),
    ("hfft", lambda f: f.hfft(complex_data(5))),
    ("ihfft", lambda f: f.ihfft(data(8))),
    ("fftfreq", lambda f: f.fftfreq(7, d=0.5)),
    ("rfftfreq", lambda f: f.rfftfreq(8, 0.1)),
    ("fftshift", lambda f: f.fftshift(data((4, 5)))),
    ("fftshift-axis", lambda f: f.fftshift(data((4, 5)), axes=1)),
    ("ifftshift", lambda f: f.ifftshift(data((5, 3)), axes=(0,))),
    ("int-input", lambda f: f.fft(np.arange(4))),
]


@pytest.mark.parametrize("name, call", CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy(name, call):
    expected = call(np.fft)
    got = np.asarray(call(jg.fft))
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def test_out_writes_into_the_given_tensor():
    out = jg.zeros(4, dtype=jg.complex128)
    result = jg.fft.fft(jg.tensor([1.0, 2.0, 3.0, 4.0]), out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), np.fft.fft([1.0, 2.0, 3.0, 4.0]))


def test_shift_gradients_route_back():
    x = jg.tensor(data((3, 4)), requires_grad=True)
    w = data((3, 4), 5)
    (jg.fft.fftshift(x) * jg.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.fft.ifftshift(w))


def test_transform_of_a_tensor_requiring_grad_refuses():
    with pytest.raises(RuntimeError, match="does not differentiate it for complex"):
        jg.fft.rfft(jg.tensor(data(4), requires_grad=True))


def test_bad_norm_is_numpy_error():
    with pytest.raises(ValueError, match="norm"):
        jg.fft.fft(jg.ones(4), norm="sideways")
