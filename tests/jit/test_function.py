"""@jg.function: a user's elementwise function as one fused forward and backward kernel."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config


@jg.function
def chain(x, a, b):
    return jg.tanh(x * a + b) * jg.sigmoid(x) + 0.5 * x * x


def reference_chain(x, a, b):
    return jg.tanh(x * a + b) * jg.sigmoid(x) + 0.5 * x * x


def test_forward_and_gradients_match_the_unfused_ops():
    rng = np.random.default_rng(0)
    xs = [jg.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), (4,), (3, 1))]
    ys = [jg.tensor(x.numpy().copy(), requires_grad=True) for x in xs]
    fused = chain(*xs)
    plain = reference_chain(*ys)
    np.testing.assert_allclose(fused.numpy(), plain.numpy(), rtol=1e-13)
    (fused * fused).sum().backward()
    (plain * plain).sum().backward()
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12)


def test_gradcheck_and_second_order():
    x = jg.tensor(np.linspace(-2, 2, 7), requires_grad=True)
    a = jg.tensor(np.linspace(0.5, 1.0, 7), requires_grad=True)
    assert jg.autograd.gradcheck(lambda x, a: chain(x, a, 0.1), x, a)

    def first(t):
        (g,) = jg.autograd.grad(chain(t, 0.7, 0.1).sum(), [t], create_graph=True)
        return g

    # Under create_graph the derivative DAG runs on recorded ops: higher orders work.
    assert jg.autograd.gradcheck(first, x)


def test_one_kernel_each_way_and_cheap_intermediates_recomputed():
    x = jg.tensor(np.linspace(-1, 1, 11), requires_grad=True)
    before = jg.jit.stats()["generated"]
    chain(x, 0.7, 0.1).sum().backward()
    generated = jg.jit.stats()["generated"] - before
    assert generated <= 2 + 1  # forward, backward (and the sum's helpers, once)
    backward = jg.jit.kernels()[-1] if generated else None
    if backward is not None:
        assert "tanh" in backward.source  # the forward's tanh is recomputed, not loaded


def test_float32_and_scalars_stay_weak():
    x = jg.ones(4, dtype=jg.float32, requires_grad=True)
    y = chain(x, 0.7, 0.1)
    assert y.dtype is jg.float32
    y.sum().backward()
    assert x.grad.dtype is jg.float32


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_non_finite_and_numpy_constants_in_kernels(dtype):
    values = np.array([1, 5, -3], dtype=dtype)
    x = jg.tensor(values)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(jg.clip(x, -np.inf, 4).numpy(), np.clip(values, -np.inf, 4))
        if dtype != "int64":
            body = jg.function(lambda v: v * np.inf + np.float64(0.5) + v * np.float32(np.nan))
            want = values * np.inf + np.float64(0.5) + values * np.float32(np.nan)
            np.testing.assert_array_equal(body(x).numpy(), want.astype(dtype))
            steep = np.where(values > 0, values, values * np.inf)
            np.testing.assert_array_equal(jg.leaky_relu(x, np.inf).numpy(), steep)


def test_integer_inputs_compute_in_the_default_float_dtype_as_documented():
    quotient = jg.function(lambda x, y: x // y)
    out = quotient(jg.tensor([7, -7, 5]), jg.tensor([2, 2, 0]))
    assert out.dtype is jg.get_default_dtype()
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(out.numpy(), np.array([7.0, -7.0, 5.0]) // [2, 2, 0])


def test_arguments_broadcast_together_like_a_ufuncs_as_documented():
    first = jg.function(lambda x, y: x)  # y only takes part in the broadcast
    x = jg.tensor(np.arange(4.0).reshape(4, 1), requires_grad=True)
    out = first(x, jg.ones((1, 3), dtype=jg.float32))
    want = np.vectorize(lambda a, b: a)(np.arange(4.0).reshape(4, 1), np.ones((1, 3)))
    assert out.shape == want.shape == (4, 3) and out.dtype is jg.float64
    np.testing.assert_array_equal(out.numpy(), want)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 1), 3.0))


def test_lists_are_arrays_and_complex_arguments_are_refused_by_name():
    scaled = jg.function(lambda x, a: x * a)
    assert scaled([1.0, 2.0], 3.0).tolist() == [3.0, 6.0]
    for args in ((jg.ones(2), 1 + 2j), (jg.ones(2, dtype=jg.complex64), 1)):
        with pytest.raises(TypeError, match="real floating dtypes.*got complex"):
            scaled(*args)


def test_non_elementwise_bodies_are_refused_with_a_clear_error():
    inner = jg.function(lambda x: x * 2)
    for body in (jg.sum, lambda x: inner(x) + 1, lambda x: x.astype(jg.float32)):
        with pytest.raises(TypeError, match="cannot be fused: its body must use only elementwise"):
            jg.function(body)(jg.ones(3))


def test_python_operators_in_a_body_match_eager():
    def body(x):
        return abs(x) * 2 + x // 2 + x % 2 + 7 % (abs(x) + 1) + 9 // (abs(x) + 1)

    start = np.array([-3.5, -1.0, 0.5, 2.0, 7.25])
    results = []
    for f in (body, jg.function(body)):
        x = jg.tensor(start, requires_grad=True)
        y = f(x)
        y.sum().backward()
        results.append((y.numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)


def test_reference_backend_still_works():
    previous = config.backend
    config.backend = "reference"
    try:
        x = jg.tensor([0.5, -1.0], requires_grad=True)
        reference_chain(x, 0.7, 0.1).sum().backward()
        assert x.grad is not None
    finally:
        config.backend = previous


def test_clip_inside_a_function_has_eager_clips_gradient_at_the_bounds():
    start = np.array([0.0, 0.5, 1.0, -2.0, 3.0])
    grads = []
    for clip in (lambda x: jg.clip(x, 0.0, 1.0), jg.function(lambda x: jg.clip(x, 0.0, 1.0))):
        x = jg.tensor(start, requires_grad=True)
        clip(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], [1.0, 1.0, 1.0, 0.0, 0.0])  # torch.clamp's
    np.testing.assert_array_equal(grads[1], grads[0])
    with np.errstate(invalid="ignore"):
        for low, high in ((0.0, 1.0), (2.0, 1.0), (-1.0, None)):
            values = np.array([np.nan, -0.0, 0.0, -5.0, 5.0, 0.5])
            np.testing.assert_array_equal(
                jg.clip(jg.tensor(values), low, high).numpy(), np.clip(values, low, high)
            )
