"""jg.fft against np.fft: values, dtypes and shapes; gradients against torch.fft and finite
differences."""

import numpy as np
import pytest
import torch

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


# (function, keyword arguments, input kind): every transform, with n/s padding and
# truncation and other axes, over a (4, 6) input.
GRAD_CASES = [
    ("fft", {}, "real"),
    ("fft", {"n": 9, "axis": 0}, "complex"),
    ("fft", {"n": 4}, "complex"),
    ("ifft", {"n": 8}, "real"),
    ("ifft", {"n": 3, "axis": 0}, "complex"),
    ("fft2", {}, "complex"),
    ("fft2", {"s": (3, 8)}, "real"),
    ("ifft2", {"s": (5, 4), "axes": (1, 0)}, "complex"),
    ("fftn", {"s": (3, 8), "axes": (1, 0)}, "real"),
    ("fftn", {}, "complex"),
    ("ifftn", {"axes": (0,)}, "complex"),
    ("rfft", {}, "real"),
    ("rfft", {"n": 9, "axis": 0}, "real"),
    ("rfft", {"n": 4}, "real"),
    ("irfft", {}, "complex"),
    ("irfft", {"n": 9}, "complex"),
    ("irfft", {"n": 4, "axis": 0}, "complex"),
    ("irfft", {"n": 8}, "real"),
    ("rfft2", {"s": (3, 7)}, "real"),
    ("rfftn", {"s": (5, 4), "axes": (1, 0)}, "real"),
    ("irfft2", {}, "complex"),
    ("irfft2", {"s": (3, 7)}, "complex"),
    ("irfftn", {"s": (5, 4), "axes": (1, 0)}, "complex"),
    ("hfft", {}, "complex"),
    ("hfft", {"n": 9, "axis": 0}, "complex"),
    ("hfft", {"n": 5}, "real"),
    ("ihfft", {}, "real"),
    ("ihfft", {"n": 9, "axis": 0}, "real"),
]
NORMS = ["backward", "ortho", "forward"]


def grad_input(kind, seed=0):
    return data((4, 6), seed) if kind == "real" else complex_data((4, 6), seed)


def real_loss(m, y, w):
    """A real loss of a transform's output ``y`` (``m``: jitgrad or torch)."""
    if y.dtype.is_complex:
        return (y * w).real.sum() + m.abs(y).sum()
    return (y * w).sum() + (y * y).sum()


def torch_keywords(options):
    return {("dim" if k in ("axis", "axes") else k): v for k, v in options.items()}


def transform_and_gradient(m, name, options, x0, w):
    x = m.tensor(x0, requires_grad=True)
    fn = getattr(m.fft, name)
    y = fn(x, **options) if m is jg else fn(x, **torch_keywords(options))
    real_loss(m, y, m.tensor(w)).backward()
    if m is torch:
        return y.detach().resolve_conj().numpy(), x.grad.resolve_conj().numpy()
    return y.numpy(), x.grad.numpy()


def weights_for(name, options, x0):
    y = getattr(np.fft, name)(x0, **options)
    w = data(y.shape, 7)
    return w + 1j * data(y.shape, 8) if np.iscomplexobj(y) else w


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "name, options, kind", GRAD_CASES, ids=[f"{c[0]}-{c[2]}-{c[1]}" for c in GRAD_CASES]
)
def test_gradients_match_torch(name, options, kind, norm):
    options = {**options, "norm": norm}
    x0 = grad_input(kind)
    w = weights_for(name, options, x0)
    y, g = transform_and_gradient(jg, name, options, x0, w)
    expected_y, expected_g = transform_and_gradient(torch, name, options, x0, w)
    np.testing.assert_allclose(y, expected_y, rtol=1e-10, atol=1e-10)
    assert g.dtype == x0.dtype
    np.testing.assert_allclose(g, expected_g, rtol=1e-9, atol=1e-9)


def finite_difference_gradient(loss, x0, eps=1e-6):
    """dL/d(re x) + i dL/d(im x) by central differences (PyTorch's complex convention)."""
    grad = np.zeros_like(x0)
    steps = (1, 1j) if np.iscomplexobj(x0) else (1,)
    for index in np.ndindex(x0.shape):
        for step in steps:
            shifted = [x0.copy(), x0.copy()]
            shifted[0][index] += eps * step
            shifted[1][index] -= eps * step
            grad[index] += step * (loss(shifted[0]) - loss(shifted[1])) / (2 * eps)
    return grad


@pytest.mark.parametrize(
    "name, options, kind",
    [
        ("fft", {"n": 4, "norm": "ortho"}, "complex"),
        ("rfft2", {"s": (3, 7)}, "real"),
        ("irfft", {"n": 9, "axis": 0, "norm": "forward"}, "complex"),
        ("hfft", {"n": 5}, "complex"),
        ("ihfft", {"axis": 0}, "real"),
    ],
)
def test_gradients_match_finite_differences(name, options, kind):
    x0 = grad_input(kind, seed=3)
    w = weights_for(name, options, x0)

    def loss(values):
        with jg.no_grad():
            return real_loss(jg, getattr(jg.fft, name)(jg.tensor(values), **options), w).item()

    _, g = transform_and_gradient(jg, name, options, x0, w)
    np.testing.assert_allclose(g, finite_difference_gradient(loss, x0), rtol=1e-6, atol=1e-6)


def test_float32_input_gets_a_float32_gradient():
    x0 = data((4, 6), dtype=np.float32)
    w = weights_for("rfft2", {}, x0).astype(np.complex64)
    y, g = transform_and_gradient(jg, "rfft2", {"norm": "ortho"}, x0, w)
    expected_y, expected_g = transform_and_gradient(torch, "rfft2", {"norm": "ortho"}, x0, w)
    assert (y.dtype, g.dtype) == (np.complex64, np.float32)
    np.testing.assert_allclose(g, expected_g, rtol=1e-4, atol=1e-4)


def test_second_derivatives_match_torch():
    z0 = grad_input("complex")
    results = []
    for m in (jg, torch):
        z = m.tensor(z0, requires_grad=True)
        y = m.fft.irfft(z, n=10, norm="forward")
        loss = (y * y).sum() + m.abs(m.fft.fft2(z) * (1 + 2j)).sum()
        (g,) = m.autograd.grad(loss, [z], create_graph=True)
        (gg,) = m.autograd.grad((g.real * g.imag).sum() + m.abs(g).sum(), [z])
        results.append([(t.detach().resolve_conj() if m is torch else t).numpy() for t in (g, gg)])
    for got, expected in zip(*results):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_a_jitted_step_replays_the_transform_and_its_gradient():
    x0, w = data((3, 8)), complex_data((3, 5), 4)
    x = jg.tensor(x0, requires_grad=True)

    def step(scale):
        y = jg.fft.rfft(scale * x, norm="ortho")
        loss = (y * jg.tensor(w)).real.sum() + jg.abs(jg.fft.fftshift(y, axes=-1)).sum()
        loss.backward()
        return loss

    jitted = jg.jit(step)
    for seed in range(3):  # the trace, then replays
        scale = data((3, 8), 10 + seed)
        x.grad = None
        loss = jitted(jg.tensor(scale))
        xt = torch.tensor(x0, requires_grad=True)
        yt = torch.fft.rfft(torch.tensor(scale) * xt, norm="ortho")
        expected = (yt * torch.tensor(w)).real.sum() + torch.fft.fftshift(yt, dim=-1).abs().sum()
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_shift_gradients_of_complex_tensors_are_the_inverse_shift():
    z = jg.tensor(complex_data((3, 4)), requires_grad=True)
    w = complex_data((3, 4), 5)
    (jg.fft.fftshift(z, axes=0) * jg.tensor(w)).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.conj(np.fft.ifftshift(w, axes=0)))


def test_what_cannot_be_differentiated_is_refused_by_name():
    x = jg.tensor(data(4), requires_grad=True)
    with pytest.raises(RuntimeError, match="needs a gradient argument"):
        jg.fft.fft(x)[0].backward()  # complex: the implicit gradient is for real outputs
    y = jg.fft.fft(x)
    with pytest.raises(RuntimeError, match="MatMul of a complex128 .* does not differentiate"):
        y @ y  # no complex gradient defined


def test_bad_norm_is_numpy_error():
    with pytest.raises(ValueError, match="norm"):
        jg.fft.fft(jg.ones(4), norm="sideways")
