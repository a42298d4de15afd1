"""The backward engine: DeZero's steps, PyTorch's semantics, memory, errors."""

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function

# -- DeZero's steps ------------------------------------------------------------------------


def test_sum_of_squares_gradient():
    x = jg.tensor(2.0, requires_grad=True)
    y = jg.tensor(3.0, requires_grad=True)
    z = jg.square(x) + jg.square(y)
    z.backward()
    assert (z.item(), x.grad.item(), y.grad.item()) == (13.0, 4.0, 6.0)


def test_same_input_twice_accumulates():
    x = jg.tensor(3.0, requires_grad=True)
    jg.add(x, x).backward()
    assert x.grad.item() == 2.0
    x.cleargrad()
    jg.add(jg.add(x, x), x).backward()
    assert x.grad.item() == 3.0


def test_cleargrad_between_computations():
    x = jg.tensor(3.0, requires_grad=True)
    jg.add(x, x).backward()
    x.cleargrad()
    assert x.grad is None
    (x * x).backward()
    assert x.grad.item() == 6.0
    x.grad = None
    (x * 2).backward()
    assert x.grad.item() == 2.0


def test_generation_order_sums_every_branch_first():
    x = jg.tensor(2.0, requires_grad=True)
    a = jg.square(x)
    y = jg.add(jg.square(a), jg.square(a))
    y.backward()
    assert (y.item(), x.grad.item()) == (32.0, 64.0)


def test_generations_are_recorded():
    x = jg.tensor(1.0, requires_grad=True)
    a = jg.exp(x)
    b = jg.square(a)
    assert a.grad_fn.generation == 1 and b.grad_fn.generation == 2
    assert x.is_leaf and not a.is_leaf


def test_graph_is_freed_by_reference_counting_and_memory_stays_flat():
    x = jg.random.default_rng(0).standard_normal(10_000)
    x.requires_grad_()
    gc.collect()
    gc.disable()
    try:
        tracemalloc.start()
        peaks = []
        for _ in range(10):
            y = jg.square(jg.square(jg.square(x)))
            y.sum().backward()
            x.cleargrad()
            del y
            peaks.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
    finally:
        gc.enable()
    # After warm-up every iteration returns to the same footprint (within 64 KiB of noise).
    assert max(peaks[3:]) - min(peaks[3:]) < 64 * 1024, peaks


def test_functions_hold_outputs_weakly():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = jg.exp(x)
    fn = y.grad_fn
    assert fn.outputs[0]() is y
    del y
    assert fn.outputs[0]() is None


def test_deep_chain_has_no_recursion_limit():
    x = jg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001**10_000, rel=1e-9)


# -- gradients out of place ----------------------------------------------------------------


def test_gradients_accumulate_out_of_place():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    first = x.grad
    snapshot = first.tolist()
    (x * 3).sum().backward()
    assert first.tolist() == snapshot  # the earlier gradient was not written into
    assert x.grad.tolist() == [5.0, 5.0] and x.grad is not first


def test_non_scalar_backward_needs_a_gradient():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    with pytest.raises(RuntimeError, match="needs a gradient argument"):
        y.backward()
    y.backward(jg.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [3.0, 30.0]
    with pytest.raises(ValueError, match="does not match"):
        (x * 3).backward(jg.ones(3))


def test_backward_twice_needs_retain_graph():
    x = jg.tensor(2.0, requires_grad=True)
    y = jg.exp(x) * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(2 * 3 * np.exp(2.0))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_intermediate_gradients_only_with_retain_grad():
    x = jg.tensor(2.0, requires_grad=True)
    a = x * 3
    b = x * 4
    b.retain_grad()
    (a * b).backward()
    assert a.grad is None and b.grad.item() == 6.0
    assert x.grad.item() == 3 * 8 + 4 * 6


def test_retain_grad_twice_keeps_the_gradient_once_as_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for leaf in (
        jg.tensor([1.0, 2.0], requires_grad=True),
        torch.tensor([1.0, 2.0], requires_grad=True),
    ):
        b = leaf * 2
        b.retain_grad()
        b.retain_grad()
        c = b.reshape(b.shape)  # jitgrad returns b itself, PyTorch a view: both keep b's
        c.retain_grad()
        (c * c).sum().backward()
        results.append((b.grad.tolist(), c.grad.tolist()))
    assert results[0] == results[1] == ([4.0, 8.0], [4.0, 8.0])


# -- requires_grad, detach, no_grad ----------------------------------------------------------


def test_requires_grad_keyword_and_method():
    assert jg.zeros(3, requires_grad=True).requires_grad
    assert jg.ones((2, 2), requires_grad=True).is_leaf
    assert jg.arange(3.0, requires_grad=True).requires_grad
    x = jg.tensor([1.0]).requires_grad_()
    assert x.requires_grad and not (x * 2).detach().requires_grad
    assert not (jg.tensor([1.0]) * 2).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        jg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        jg.zeros(2, dtype=jg.bool).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad = False


def test_detach_shares_storage():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert d.storage() is x.storage() and d.is_leaf and not d.requires_grad


def test_no_grad_and_enable_grad_are_context_managers_and_decorators():
    x = jg.tensor(1.0, requires_grad=True)
    with jg.no_grad():
        assert not (x * 2).requires_grad
        with jg.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @jg.no_grad()
    def evaluate(t):
        return t * 2

    assert not evaluate(x).requires_grad


def test_set_grad_enabled_as_a_call_a_block_and_a_decorator_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (jg, torch):
        x = lib.ones(1, requires_grad=True)
        try:
            lib.set_grad_enabled(False)  # a plain call switches until switched back
            assert not (x * 2).requires_grad
            with lib.set_grad_enabled(True):
                assert (x * 2).requires_grad
            assert not (x * 2).requires_grad  # the block restored the mode before it
            lib.set_grad_enabled(True)
            assert (x * 2).requires_grad

            @lib.set_grad_enabled(False)  # decorating switches nothing outside the calls
            def double(t):
                return t * 2

            assert (x * 2).requires_grad and not double(x).requires_grad
            assert (x * 2).requires_grad
        finally:
            lib.set_grad_enabled(True)


@pytest.mark.parametrize("bare", [False, True], ids=["called", "bare"])
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad"])
def test_grad_mode_decorators_cover_generators_and_the_bare_form_as_pytorch(mode, bare):
    torch = pytest.importorskip("torch")
    for lib in (jg, torch):
        decorator = getattr(lib, mode) if bare else getattr(lib, mode)()
        x = lib.ones(1, requires_grad=True)
        outside = mode == "no_grad"  # the caller's mode: the opposite of the decorator's

        @decorator
        def doubled(t):
            return t * 2

        @decorator
        def doubles(t):
            sent = yield t * 2
            yield (t * sent).requires_grad

        with lib.set_grad_enabled(outside):
            assert doubled(x).requires_grad is not outside
            gen = doubles(x)
            assert next(gen).requires_grad is not outside
            assert (x * 2).requires_grad is outside  # between yields: the caller's mode
            assert gen.send(3) is not outside
    with pytest.raises(TypeError, match=r"no_grad\(\) takes no arguments"):
        jg.no_grad(True)


def test_grad_mode_is_thread_local():
    seen = []
    x = jg.tensor(1.0, requires_grad=True)

    def worker():
        seen.append((x * 2).requires_grad)

    with jg.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == [True]


@pytest.mark.parametrize("generator", [False, True])
def test_a_grad_mode_decorated_function_called_from_two_threads_at_once(generator):
    # Thread a calls it with grad on; thread b, inside no_grad, enters before a leaves and
    # leaves after: each must come back to its own mode.
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()

    def body(first):
        if first:
            a_inside.set()
            b_inside.wait(5)
        else:
            b_inside.set()
            a_left.wait(5)

    if generator:

        @jg.no_grad()
        def step(first):
            body(first)
            yield

        def call(first):
            list(step(first))
    else:
        call = jg.no_grad()(body)
    after = {}

    def a():
        call(True)
        after["a"] = jg.autograd.grad_mode.is_grad_enabled()
        a_left.set()

    def b():
        a_inside.wait(5)
        with jg.no_grad():
            call(False)
            after["b"] = jg.autograd.grad_mode.is_grad_enabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert after == {"a": True, "b": False}


# -- autograd.grad and higher order ----------------------------------------------------------


def test_autograd_grad_does_not_touch_dot_grad():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    (g,) = jg.autograd.grad(y, [x])
    assert g.tolist() == [2.0, 4.0] and x.grad is None


def test_tanh_higher_derivatives():
    x = jg.tensor(0.5, requires_grad=True)
    t = np.tanh(0.5)
    (d1,) = jg.autograd.grad(jg.tanh(x), [x], create_graph=True)
    (d2,) = jg.autograd.grad(d1, [x], create_graph=True)
    (d3,) = jg.autograd.grad(d2, [x])
    assert d1.item() == pytest.approx(1 - t**2)
    assert d2.item() == pytest.approx(-2 * t * (1 - t**2))
    assert d3.item() == pytest.approx(-2 * (1 - t**2) ** 2 + 4 * t**2 * (1 - t**2))


def test_newton_method_on_a_quartic():
    def f(x):
        return x**4 - 2 * x**2

    x = jg.tensor(2.0, requires_grad=True)
    for _ in range(10):
        y = f(x)
        x.cleargrad()
        y.backward(create_graph=True)
        gx = x.grad
        x.cleargrad()
        gx.backward()
        step = gx.item() / x.grad.item()
        x = jg.tensor(x.item() - step, requires_grad=True)
    assert x.item() == pytest.approx(1.0, abs=1e-9)


def test_hessian_vector_product():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3))
    a = a + a.T
    x = jg.tensor(rng.standard_normal(3), requires_grad=True)
    v = jg.tensor(rng.standard_normal(3))
    A = jg.tensor(a)
    y = 0.5 * (x @ (A @ x)) + jg.sum(jg.sin(x))
    (g,) = jg.autograd.grad(y, [x], create_graph=True)
    (hv,) = jg.autograd.grad((g * v).sum(), [x])
    expected = a @ v.numpy() - np.sin(x.numpy()) * v.numpy()
    np.testing.assert_allclose(hv.numpy(), expected, rtol=1e-10)


# -- in-place ops and the version counter --------------------------------------------------


def test_in_place_change_of_a_saved_tensor_is_detected():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    w = jg.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


@pytest.mark.parametrize(
    "modify",
    [
        lambda t: t.add_(1),
        lambda t: t.mul_(2),
        lambda t: t.zero_(),
        lambda t: t.fill_(3),
        lambda t: t.__iadd__(1),
        lambda t: t.__setitem__(0, 5.0),
        lambda t: t.copy_(jg.ones(2)),
    ],
    ids=["add_", "mul_", "zero_", "fill_", "+=", "setitem", "copy_"],
)
def test_every_in_place_op_bumps_the_version(modify):
    w = jg.tensor([3.0, 4.0])
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = (jg.exp(x) * w).sum()
    modify(w)
    with pytest.raises(RuntimeError, match="in-place"):
        y.backward()


def test_saved_output_modified_in_place_is_detected():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = jg.exp(x)
    z = (y * y).sum()
    with jg.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="in-place"):
        z.backward()


# Ops whose gradient rule reads their output y: PyTorch saves y, so an in-place change of
# their input after the forward leaves the gradient right (the kernels recompute y).
_OUTPUT_RULES = ["exp", "expm1", "sqrt", "tanh", "sigmoid", "reciprocal", "tan"]
_WRITES = {
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2),
    "setitem": lambda t: t.__setitem__(0, 4.0),
    "fill_": lambda t: t.fill_(2.0),
    "copy_": lambda t: t.copy_(t * 3),
    "detach_add_": lambda t: t.detach().add_(1),
}


@pytest.mark.parametrize("backend", ["jit", "reference"])
@pytest.mark.parametrize("write", sorted(_WRITES))
@pytest.mark.parametrize("name", _OUTPUT_RULES)
def test_input_changed_in_place_after_an_output_based_op_as_pytorch(
    monkeypatch, backend, write, name
):
    torch = pytest.importorskip("torch")
    from jitgrad._config import config

    monkeypatch.setattr(config, "backend", backend)
    values = [0.5, 0.25, 0.75]
    a = jg.tensor(values, requires_grad=True)
    b = a * 1
    c = getattr(jg, name)(b)
    _WRITES[write](b)
    c.sum().backward()
    ta = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    tb = ta * 1
    tc = getattr(torch, name)(tb)
    _WRITES[write](tb)
    tc.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)


def test_in_place_changes_are_seen_after_the_same_call_ran_backward_before():
    # A repeated call's backward runs from the memo of its first (the eager hot path):
    # the version checks must hold there too, raising or reading the saved output.
    def graph(write=None):
        a = jg.tensor([0.5, 0.25, 0.75], requires_grad=True)
        w = jg.tensor([3.0, 4.0, 5.0])
        b = a * 1
        c = jg.tanh(b) * w
        if write == "w":
            w.mul_(2)
        elif write == "b":
            b.add_(1)  # tanh's input: its gradient comes from the saved output
        c.sum().backward()
        return a.grad.numpy()

    clean = graph()
    np.testing.assert_array_equal(graph(), clean)
    with pytest.raises(RuntimeError, match="input 1 of Multiply .* modified by an in-place"):
        graph("w")
    np.testing.assert_allclose(graph("b"), clean, rtol=1e-15)


def test_input_and_output_of_an_output_based_op_both_changed_in_place_raise():
    a = jg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = jg.tanh(b)
    d = c * 1
    b.add_(1)
    c.add_(1)
    with pytest.raises(RuntimeError, match="input 0 of Tanh .* modified by an in-place"):
        d.sum().backward()


def test_input_of_an_output_based_op_changed_in_place_raises_under_create_graph():
    # The recorded gradient would need y's history, which only the changed input holds.
    a = jg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = jg.exp(b)
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an in-place"):
        jg.autograd.grad(c.sum(), [a], create_graph=True)


def test_input_of_a_fused_function_changed_in_place_raises():
    # Its backward kernel recomputes the whole forward from the inputs.
    fused = jg.function(lambda x: jg.exp(x) * 2)
    a = jg.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = fused(b)
    b.add_(1)
    with pytest.raises(RuntimeError, match="input 0 of _Fused .* modified by an in-place"):
        c.sum().backward()


def test_input_changed_in_place_after_exp_in_a_jitted_step():
    w = jg.tensor([0.5, 1.0, 1.5], requires_grad=True)

    @jg.jit
    def step(x):
        w.grad = None
        b = w * x
        c = jg.exp(b)
        b.add_(1)
        c.sum().backward()
        return w.grad

    for x in ([1.0, 1.0, 1.0], [2.0, -1.0, 0.5], [1.0, 1.0, 1.0]):
        x = np.array(x)
        np.testing.assert_allclose(step(jg.tensor(x)).numpy(), np.exp(w.numpy() * x) * x)


def test_in_place_on_a_leaf_that_requires_grad_raises():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    for modify in (lambda: x.add_(1), lambda: x.fill_(0), lambda: x.__setitem__(0, 1.0)):
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            modify()
    with jg.no_grad():
        x.add_(1)  # an optimizer step
    assert x.tolist() == [2.0, 3.0]


def test_in_place_on_a_non_leaf_is_recorded():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y + 0  # uses y before the in-place change: its gradient must not pass through it
    y.mul_(3)
    y[0] = y[0] * 10
    (y.sum() + z.sum()).backward()
    assert x.grad.tolist() == [2 * 3 * 10 + 2, 2 * 3 + 2]


def test_in_place_from_a_tensor_that_requires_grad():
    w = jg.tensor([1.0, 2.0], requires_grad=True)
    buf = jg.zeros(2)
    buf += w * w
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert w.grad.tolist() == [2.0, 4.0]


def _writes_through_views(x):
    """Functions of x that write in place through views of an intermediate y."""
    weights = jg.arange(4.0) + 1

    def through_slice(x):
        y = x * x
        v = y[::2]
        v *= 3
        return (y * weights).sum()

    def item_of_a_slice(x):
        y = x * 1
        v = y[1:3]
        v[0] = x[3] * 10
        return (y * weights).sum()

    def through_reshape_and_again(x):
        y = jg.tanh(x)
        v = y.reshape(2, 2)
        v += x.reshape(2, 2)
        w = v.T[1]  # a view of a view
        w.mul_(2)
        return (y * weights).sum() + (v * v).sum()

    def base_written_after_the_view(x):
        y = x * x
        v = y[::2]
        y.mul_(2)  # v's values change with y's
        return (v * weights[:2]).sum() + y.sum()

    def reading_the_overwritten_values(x):
        y = x * 1
        w = jg.flip(x, 0) * 1
        y *= w  # the product's backward reads y's values from before this line
        y /= w * w + 1
        y **= 2
        return (y * weights).sum()

    def through_a_view_by_a_tensor(x):
        y = x * 1
        v = y.reshape(2, 2)[1]
        v *= x[:2]
        return (y * weights).sum()

    def copied_from_its_own_view(x):
        y = x * x
        y.copy_(y.flip(0))
        y.reshape(2, 2)[0].copy_(y[2:] + y[:2])
        return (y * weights).sum()

    def base_written_after_an_expand(x):
        y = x * 1
        rows = y[:2].expand(3, 2)
        column = y.reshape(4, 1).expand(4, 1)
        y.mul_(x)
        column *= 2
        return (rows * rows).sum() + (y * weights).sum()

    return [
        through_slice,
        item_of_a_slice,
        through_reshape_and_again,
        base_written_after_the_view,
        reading_the_overwritten_values,
        through_a_view_by_a_tensor,
        copied_from_its_own_view,
        base_written_after_an_expand,
    ]


@pytest.mark.parametrize("f", _writes_through_views(None), ids=lambda f: f.__name__)
def test_in_place_through_a_view_reaches_the_base_history(f):
    start = np.array([0.5, -1.0, 2.0, 1.5])
    x = jg.tensor(start, requires_grad=True)
    f(x).backward()
    numeric = np.zeros(4)
    for i in range(4):
        step = np.eye(4)[i] * 1e-6
        numeric[i] = (f(jg.tensor(start + step)).item() - f(jg.tensor(start - step)).item()) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-6)


def test_in_place_on_a_view_of_a_leaf_that_requires_grad_raises():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for modify in (lambda v: v.add_(1), lambda v: v.__setitem__(0, 5.0), lambda v: v.fill_(0)):
        with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
            modify(x[:2])
        with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
            modify(x.reshape(3, 1)[1:])
    assert x.tolist() == [1.0, 2.0, 3.0]
    with jg.no_grad():
        x[:2] += 1  # an optimizer's kind of update
    assert x.tolist() == [2.0, 3.0, 3.0]


def test_in_place_casting_follows_numpy():
    t = jg.zeros(2, dtype=jg.int32)
    t += 3
    assert t.tolist() == [3, 3]
    with pytest.raises(TypeError, match="same_kind"):
        t += 1.5


# -- hooks and custom Functions ------------------------------------------------------------


def test_hooks_see_and_replace_gradients():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[30.0, 30.0]] and x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    x.cleargrad()
    (x * 1).sum().backward()
    assert seen == [[30.0, 30.0]]


@pytest.mark.parametrize(
    "replacement", [lambda g: jg.ones(5), lambda g: g.astype(jg.float64)], ids=["size", "dtype"]
)
def test_a_hook_must_keep_the_gradient_shape_and_dtype_as_pytorch(replacement):
    a = jg.ones(3, dtype=jg.float32, requires_grad=True)
    a.register_hook(replacement)
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the (size|type) of value"):
        (a * a).sum().backward()
    b = jg.ones(3, dtype=jg.float32, requires_grad=True) * 2  # a non-leaf's hook too
    b.register_hook(replacement)
    with pytest.raises(RuntimeError, match="has changed the (size|type) of value"):
        (b * b).sum().backward()


def _returning(make):
    class Returning(Function):
        def forward(self, x):
            return x * 1

        def backward(self, gy):
            return make()

    return Returning()


@pytest.mark.parametrize("shape", [(5,), (1,), (3, 1)])
def test_a_backward_returning_a_gradient_of_another_shape_raises_as_pytorch(shape):
    a = jg.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Returning.backward returned an invalid gradient "
        rf"at index 0: shape \({shape[0]},",
    ):
        _returning(lambda: jg.ones(shape))(a).sum().backward()


def test_a_backward_gradient_is_fitted_to_its_input_as_pytorch():
    torch = pytest.importorskip("torch")
    for grad, expected in [
        (lambda: jg.ones(3, dtype=jg.int64), [1.0] * 3),  # cast to the input's dtype
        (lambda: jg.ones(3, dtype=jg.float64), [1.0] * 3),
        (lambda: jg.ones((2, 3)), [2.0] * 3),  # summed over the broadcast dimension
    ]:
        a = jg.ones(3, dtype=jg.float32, requires_grad=True)
        _returning(grad)(a).sum().backward()
        assert a.grad.dtype is jg.float32 and a.grad.tolist() == expected

    class Returning(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, gy):
            return torch.ones(2, 3, dtype=torch.int64)

    t = torch.ones(3, requires_grad=True)
    Returning.apply(t).sum().backward()
    assert t.grad.dtype is torch.float32 and t.grad.tolist() == [2.0] * 3


def test_an_assigned_grad_must_match_the_tensor_as_pytorch():
    a = jg.ones(2, dtype=jg.float32, requires_grad=True)
    for wrong in (
        jg.ones(3, dtype=jg.float32),
        jg.ones(2, dtype=jg.float64),
        jg.ones(2, dtype=jg.int64),
    ):
        with pytest.raises(RuntimeError, match=r"assigned grad has shape .* must match"):
            a.grad = wrong
    with pytest.raises(TypeError, match="assigned grad must be a tensor or None, not list"):
        a.grad = [1.0, 1.0]
    a.grad = jg.full(2, 3.0, dtype=jg.float32)
    assert a.grad.tolist() == [3.0, 3.0]
    a.grad = None
    assert a.grad is None


def test_custom_function_with_two_outputs():
    class SplitScale(Function):
        def forward(self, x):
            return x * 2, x * 3

        def backward(self, g2, g3):
            return g2 * 2 + g3 * 3

    x = jg.tensor([1.0, 2.0], requires_grad=True)
    a, b = SplitScale()(x)
    a.sum().backward()  # b's gradient is missing: it counts as zero
    assert x.grad.tolist() == [2.0, 2.0]


def test_function_converts_scalars_and_arrays():
    class Affine(Function):
        def forward(self, x, w, b):
            return x * w + b

        def backward(self, gy):
            x, w, b = self.inputs
            return gy * w, gy * x, gy

    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = Affine()(x, np.array([3.0, 4.0]), 1.0)
    y.sum().backward()
    assert y.tolist() == [4.0, 9.0] and x.grad.tolist() == [3.0, 4.0]


def test_grad_of_integer_output_is_an_error():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        jg.argmax(x).backward()


def test_gradcheck_catches_a_wrong_backward():
    class BadSquare(Function):
        def forward(self, x):
            return x * x

        def backward(self, gy):
            return gy * self.inputs[0]  # missing the factor 2

    x = jg.tensor([0.3, -1.2], requires_grad=True)
    with pytest.raises(jg.autograd.GradcheckError, match="finite differences"):
        jg.autograd.gradcheck(lambda t: BadSquare()(t), x)


@pytest.mark.parametrize("loss", [lambda w: (w.T * 2).sum(), lambda w: w.sum() * 2])
def test_stored_gradients_are_contiguous_never_aliasing_views(loss):
    # A transposed gradient, or sum()'s broadcast one, would make in-place updates of .grad
    # write through aliases (PyTorch's gradient layout contract clones such gradients).
    w = jg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    loss(w).backward()
    assert w.grad.is_contiguous()
    w.grad.add_(1)
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3), 3.0))


@pytest.mark.parametrize(
    "overwrite",
    [
        lambda t: t.copy_(jg.zeros(3)),
        lambda t: t.copy_(np.arange(3.0)),
        lambda t: t.normal_(),
        lambda t: t.fill_(2.0),
        lambda t: t.__setitem__(slice(None), 5.0),
    ],
    ids=["copy_ of a tensor", "copy_ of an array", "normal_", "fill_", "setitem"],
)
def test_values_without_history_written_over_values_with_it_get_no_gradient(overwrite):
    """As in PyTorch: what the overwritten values depended on gets a zero gradient from
    the uses after the write, and the uses before keep theirs."""
    torch = pytest.importorskip("torch")
    w = jg.ones(3, requires_grad=True)
    y = w * 2
    before = y * 3
    overwrite(y)
    assert y.requires_grad
    (before.sum() + (y * w).sum()).backward()
    after = y.detach().numpy()
    tw = torch.ones(3, dtype=torch.float64, requires_grad=True)
    ty = tw * 2
    tbefore = ty * 3
    with torch.no_grad():
        values = torch.tensor(after)
    ty.copy_(values)
    (tbefore.sum() + (ty * tw).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
