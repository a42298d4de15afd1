"""jg.jit's scheduler: fusion across reductions and broadcasts, recomputation in the
backward and dead-store elimination give the eager results, and store what they should."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad.jit.lowering import Launch
from jitgrad.jit.reduction import Reduce
from jitgrad.jit.row_fusion import RowLaunch
from jitgrad.jit.rows import _RowsStep

UNARY = [jg.exp, jg.tanh, jg.sin, lambda v: v * v, lambda v: 0.5 * v + 1.0]
REDUCTIONS = ["sum", "mean", "max", "min"]


@st.composite
def programs(draw):
    """A random function of x (and a weight w broadcast against it): elementwise ops,
    reductions over random axes with or without keepdims, and their broadcasts back."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    ops = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["unary", "weight", "reduce"]))
        if kind == "unary":
            ops.append(("unary", draw(st.integers(0, len(UNARY) - 1))))
        elif kind == "weight":
            ops.append(("weight", draw(st.sampled_from(["add", "mul"]))))
        else:
            axes = tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1))))
            ops.append(("reduce", draw(st.sampled_from(REDUCTIONS)), axes, draw(st.booleans())))
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    return shape, ops, layout


def _run(ops, x, w):
    value = x
    for op in ops:
        if op[0] == "unary":
            value = UNARY[op[1]](value)
        elif op[0] == "weight":
            weight = w if value.ndim and value.shape[-1] == w.shape[0] else w[0]
            value = value + weight if op[1] == "add" else value * weight
        else:
            _, how, axes, keepdims = op
            axes = tuple(a for a in axes if a < value.ndim)
            if not axes:
                continue
            reduced = getattr(jg, how)(value, axis=axes, keepdims=keepdims)
            # The reduction's result broadcast back into the value it came from.
            value = value - reduced if keepdims else reduced
    return value


def _input(shape, layout, rng):
    data = rng.standard_normal(shape).astype(np.float32)
    if layout == "transposed" and len(shape) >= 2:
        return jg.asarray(np.ascontiguousarray(data.swapaxes(-1, -2))).swapaxes(-1, -2)
    if layout == "strided":
        wide = np.zeros(shape[:-1] + (2 * shape[-1],), np.float32)
        wide[..., ::2] = data
        return jg.asarray(wide)[..., ::2]
    return jg.asarray(data)


@settings(max_examples=15, deadline=None)
@given(programs(), st.integers(0, 2**16))
def test_fused_graphs_and_their_gradients_equal_eager(program, seed):
    shape, ops, layout = program
    rng = np.random.default_rng(seed)
    x = _input(shape, layout, rng)
    w = jg.asarray(rng.standard_normal(shape[-1]).astype(np.float32))

    def step(x):
        x = x.detach().requires_grad_()
        y = _run(ops, x, w)
        (y * y).sum().backward()
        return y, x.grad

    jitted = jg.jit(step)
    jitted(x)  # the trace
    y, grad = jitted(x)  # a replay of the scheduled plan
    y_eager, grad_eager = step(x)
    np.testing.assert_allclose(y.numpy(), y_eager.numpy(), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(grad.numpy(), grad_eager.numpy(), rtol=2e-4, atol=2e-4)


def _plan(jitted):
    (plan,) = jitted.plans.values()
    return plan.steps


def chain(x):
    return jg.tanh(0.7 * x + 0.1) * jg.sigmoid(x) + 0.5 * x * x


def test_the_gradient_of_a_chains_sum_is_one_kernel_reading_x():
    x = jg.asarray(np.linspace(-2, 2, 1000, dtype=np.float32))
    jitted = jg.jit(lambda x: jg.autograd.grad(chain(x.requires_grad_()).sum(), [x])[0])
    jitted(x)
    got = jitted(x).numpy()
    launches = [fn for fn, _ in _plan(jitted) if isinstance(fn, (Launch, Reduce, RowLaunch))]
    # The forward's eight intermediates are recomputed, the unused loss never computed.
    assert len(launches) == 1 and len(launches[0].outs) == 1
    assert [a.size for a in launches[0].arrays if a.size > 1] == [1000]
    t = np.tanh(0.7 * x.numpy() + 0.1)
    s = 1 / (1 + np.exp(-x.numpy()))
    expected = (1 - t * t) * 0.7 * s + t * s * (1 - s) + x.numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "loss",
    [
        lambda x, w: (F.softmax(x, dim=1) * w).sum(),
        lambda x, w: (F.log_softmax(x, dim=-1) * w).sum(),
        lambda x, w: (F.layer_norm(x, (x.shape[-1],), w[0], w[1]) * w).sum(),
    ],
    ids=["softmax", "log_softmax", "layer_norm"],
)
def test_row_wise_forward_and_backward_are_one_row_kernel(loss):
    rng = np.random.default_rng(0)
    x = jg.asarray(rng.standard_normal((6, 33)).astype(np.float32))
    w = jg.asarray(rng.standard_normal((6, 33)).astype(np.float32))

    def step(x):
        x.grad = None
        loss(x, w).backward()
        return x.grad

    x.requires_grad_()
    jitted = jg.jit(step)
    jitted(x)
    got = jitted(x).numpy()
    kernels = [fn for fn, _ in _plan(jitted) if isinstance(fn, (Launch, Reduce, RowLaunch))]
    assert len(kernels) == 1 and isinstance(kernels[0], RowLaunch)
    assert len(kernels[0].outs) == 1  # only the gradient is stored
    x.grad = None
    np.testing.assert_allclose(got, step(x).numpy(), rtol=1e-6, atol=1e-7)


def test_outputs_the_caller_can_reach_are_kept():
    """A tensor created in the traced function and kept on an object outside it is
    recomputed by every replay, though nothing in the plan reads it."""
    held = {}

    def step(x):
        held["exp"] = jg.exp(x)
        return x.sum()

    jitted = jg.jit(step)
    for value in (1.0, 2.0):
        x = jg.full((4,), value)
        jitted(x)
        np.testing.assert_allclose(held["exp"].numpy(), np.exp(np.full(4, value)), rtol=1e-6)


def test_a_long_vectors_loss_and_gradient_are_one_pass():
    """sum(chain(x)) and its gradient over a vector long enough to share out: one kernel
    reads x, writes the gradient and sums the loss."""
    x = jg.asarray(np.linspace(-3, 3, 1 << 17, dtype=np.float32))

    def step(x):
        x.grad = None
        loss = chain(x).sum()
        loss.backward()
        return loss, x.grad

    x.requires_grad_()
    jitted = jg.jit(step)
    jitted(x)
    loss, grad = jitted(x)
    kernels = [fn for fn, _ in _plan(jitted) if isinstance(fn, (Launch, Reduce, RowLaunch))]
    assert len(kernels) == 1 and len(kernels[0].outs) == 2  # the gradient and the loss
    x.grad = None
    want_loss, want_grad = step(x)
    np.testing.assert_allclose(loss.item(), want_loss.item(), rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-6, atol=1e-6)


def test_layer_norm_with_parameters_is_one_row_kernel_forward_and_backward():
    """The loss, the input's gradient and the parameters' (sums over the rows) of
    ``(LayerNorm(x) * w).sum()`` come from one kernel."""
    rng = np.random.default_rng(1)
    norm = jg.nn.LayerNorm(24, dtype=jg.float32)
    with jg.no_grad():
        norm.weight.copy_(jg.asarray(rng.standard_normal(24).astype(np.float32)))
    x = jg.asarray(rng.standard_normal((40, 24)).astype(np.float32)).requires_grad_()
    w = jg.asarray(rng.standard_normal((40, 24)).astype(np.float32))

    def step(x):
        for t in (x, norm.weight, norm.bias):
            t.grad = None
        loss = (norm(x) * w).sum()
        loss.backward()
        return loss, x.grad, norm.weight.grad, norm.bias.grad

    jitted = jg.jit(step)
    jitted(x)
    got = [t.numpy().copy() for t in jitted(x)]
    kernels = [fn for fn, _ in _plan(jitted) if isinstance(fn, (Launch, Reduce, RowLaunch))]
    assert len(kernels) == 1 and isinstance(kernels[0], RowLaunch)
    for g, want in zip(got, step(x)):
        np.testing.assert_allclose(g, want.numpy(), rtol=2e-5, atol=2e-5)


def _cross_entropy_case(reduction, form="plain"):
    """A jitted cross-entropy step's (loss, gradient) after its replay, PyTorch's, and the
    replayed plan's cross-entropy kernels. ``form``: the loss alone, squared (its gradient
    needs the loss) or plus half of a second loss over the same logits and labels."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    logits = (rng.standard_normal((40, 9)) * 3).astype(np.float32)
    labels = rng.integers(0, 9, 40)
    labels[[2, 31]] = -100  # ignored rows

    def one_loss(f, x, y):
        loss = f.cross_entropy(x, y, reduction=reduction)
        return loss.sum() if reduction == "none" else loss

    def loss_of(f, x, y):
        loss = one_loss(f, x, y)
        if form == "square":
            return loss * loss
        return loss + 0.5 * one_loss(f, x, y) if form == "two" else loss

    t = torch.tensor(logits, requires_grad=True)
    loss_of(torch.nn.functional, t, torch.tensor(labels)).backward()

    def step(x, y):
        x.grad = None
        loss = loss_of(F, x, y)
        loss.backward()
        return loss, x.grad

    jitted = jg.jit(step)
    x, y = jg.tensor(logits, requires_grad=True), jg.asarray(labels)
    jitted(x, y)
    loss, grad = jitted(x, y)
    kernels = [fn for fn, _ in _plan(jitted) if isinstance(fn, _RowsStep)]
    return (loss, grad), (loss_of(torch.nn.functional, t, torch.tensor(labels)), t.grad), kernels


@pytest.mark.parametrize("pieces", [False, True], ids=["one piece", "rows in pieces"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_forward_and_backward_are_one_kernel(reduction, pieces, monkeypatch):
    if pieces:  # (40 rows of 9: several pieces from 64 elements)
        monkeypatch.setattr(jg.config, "parallel_threshold", 64)
    (loss, grad), (want, want_grad), kernels = _cross_entropy_case(reduction)
    assert len(kernels) == 1
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("form", ["square", "two"])
def test_a_loss_whose_gradient_needs_it_stays_apart_and_two_losses_merge_each(form):
    """Squared, the loss's gradient needs the loss: forward and backward stay apart. Two
    losses over the same rows are two pairs, each backward fused with its own forward."""
    (loss, grad), (want, want_grad), kernels = _cross_entropy_case("mean", form)
    # (a merged kernel writes the loss's four outputs and the gradient)
    assert sorted(len(k.outs) for k in kernels) == ([5, 5] if form == "two" else [1, 4])
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), rtol=4e-6, atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=4e-5, atol=1e-7)


def test_kernels_read_only_what_their_expressions_use():
    """An add's gradient needs neither operand's value: its kernel reads the incoming
    gradient alone, and the forward does not store an operand for it (LayerNorm's scaled
    value, here, which the shift is added to)."""
    rng = np.random.default_rng(3)
    norm = jg.nn.LayerNorm(24, dtype=jg.float32)
    x = jg.asarray(rng.standard_normal((40, 24)).astype(np.float32)).requires_grad_()
    proj = jg.asarray(rng.standard_normal((24, 24)).astype(np.float32))

    def step(x):
        for t in (x, norm.weight, norm.bias):
            t.grad = None
        loss = ((norm(x) @ proj).tanh() + x).sum()
        loss.backward()
        return loss, x.grad

    jitted = jg.jit(step)
    jitted(x)
    got = [t.numpy().copy() for t in jitted(x)]
    for fn, _ in _plan(jitted):
        if isinstance(fn, Launch):
            loads = {e.value for e in jg.jit.ir.topological(list(fn.exprs)) if e.op == "load"}
            assert len(loads) == len(fn.arrays)
    forward = next(fn for fn, _ in _plan(jitted) if isinstance(fn, RowLaunch))
    # x - mean, (x - mean) / std and the output: not the scaled value the shift is added to
    assert len([o for o in forward.outs if o.size == x.numel()]) == 3
    for g, want in zip(got, step(x)):
        np.testing.assert_allclose(g, want.numpy(), rtol=2e-5, atol=2e-5)
