"""Rows for fusion across reductions: the code a user writes, whole under ``jg.jit``, whose
speed depends on elementwise work fused into reductions, on row-wise reduce-then-map
kernels and on the forward recomputed inside the backward. jitgrad beside numpy written by
hand (gradients derived by hand), PyTorch eager and ``jax.jit``, all float32."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

from . import Case, comparators, section
from .chain import A, B, chain_numpy_grad, chain_plain
from .rows_compute import digits_case
from .runner import copy_bandwidth

fusion_row = section(
    "Fusion across reductions",
    "The code a user writes, whole under `jg.jit`: the elementwise chain's gradient; "
    "softmax, log_softmax, LayerNorm (affine) and cross-entropy (integer labels) forward, "
    "and forward + backward, the gradient of `(f(x) * w).sum()` (of the loss for "
    "cross-entropy) written as `loss.backward()` returning `x.grad`; the digits training "
    "step. numpy is written by hand with its gradients derived by hand, PyTorch runs "
    "eagerly, JAX under `jax.jit` (`jax.jit(jax.grad(...))` for gradients); all float32. "
    "The targets against jax.jit and the memory floor are in the targets table.",
)

# -- the chain's gradient, in the plain-Python formulation ---------------------------------


def _chain_gradient_case(ctx, gradient) -> Case:
    """d/dx sum(chain(x)) by ``jg.jit(gradient)`` on a leaf that requires grad. Its floor
    is one read of x and one write of the gradient at the copy bandwidth."""
    n = ctx.pick(1 << 24, 1 << 18)
    x = ctx.rng.standard_normal(n).astype(np.float32)
    leaf = jg.from_numpy(x.copy()).requires_grad_()
    step = jg.jit(gradient)
    return Case(
        f"2^{n.bit_length() - 1} float32",
        jitgrad=lambda: step(leaf),
        numpy=lambda: chain_numpy_grad(x, np.float32(A), np.float32(B)),
        torch=comparators.torch_chain(ctx.torch, x, backward=True),
        jax=comparators.jax_chain(ctx.jax, x, backward=True),
        alloc_bytes=x.nbytes,
        rtol=1e-4,
        bytes_moved=2 * x.nbytes,
        bandwidth=copy_bandwidth(),
    )


def _backward_of_sum(x):
    x.grad = None
    chain_plain(x).sum().backward()
    return x.grad


@fusion_row(
    "chain-grad-2^24",
    target=10.0,
    floor=1.3,
    note="jg.jit(lambda x: jg.autograd.grad(chain(x).sum(), [x])[0]), chain(x) = "
    "jg.tanh(0.7*x + 0.1) * jg.sigmoid(x) + 0.5*x*x a plain Python function; numpy "
    "derived by hand, torch eager backward(), jax.jit(jax.grad)",
)
def _(ctx):
    return _chain_gradient_case(ctx, lambda x: jg.autograd.grad(chain_plain(x).sum(), [x])[0])


@fusion_row(
    "chain-sum-backward-2^24",
    target=10.0,
    floor=1.3,
    note="the same gradient as x.grad = None; chain(x).sum().backward(); return x.grad, "
    "under jg.jit",
)
def _(ctx):
    return _chain_gradient_case(ctx, _backward_of_sum)


# -- row-wise reduce-then-map ops: softmax, log_softmax, LayerNorm, cross-entropy -------------

LAYER_NORM_EPS = 1e-5
SHAPES = ((4096, 1024), (64, 50257))  # a batch of activations; a wide vocabulary's logits
QUICK_SHAPES = {(4096, 1024): (256, 1024), (64, 50257): (8, 50257)}


def _softmax_numpy(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _log_softmax_numpy(x):
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _layer_norm_numpy(x, gamma, beta):
    """The normalised rows scaled and shifted, the normalised rows, and 1/std per row."""
    centred = x - x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + LAYER_NORM_EPS)
    normed = centred * rstd
    return normed * gamma + beta, normed, rstd


def _layer_norm_grads_numpy(x, w, gamma, beta):
    """d/dx, d/dgamma and d/dbeta of (layer_norm(x) * w).sum(), derived by hand."""
    _, normed, rstd = _layer_norm_numpy(x, gamma, beta)
    g = w * gamma
    dx = rstd * (
        g - g.mean(axis=1, keepdims=True) - normed * (g * normed).mean(axis=1, keepdims=True)
    )
    return dx, (w * normed).sum(axis=0), w.sum(axis=0)


def _cross_entropy_numpy(x, labels):
    z = x - x.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(z).sum(axis=1))
    return (log_sum - z[np.arange(len(x)), labels]).mean()


def _cross_entropy_grad_numpy(x, labels):
    p = _softmax_numpy(x)
    p[np.arange(len(x)), labels] -= 1
    return p / np.float32(len(x))


class _Data:
    """One row's seeded operands: logits x, the loss's weights w, labels, and LayerNorm's
    scale and shift (not the identity, so that their gradients are checked)."""

    def __init__(self, ctx, rows: int, cols: int):
        self.x = ctx.rng.standard_normal((rows, cols), dtype=np.float32)
        self.w = ctx.rng.standard_normal((rows, cols), dtype=np.float32)
        self.labels = ctx.rng.integers(0, cols, rows)
        self.gamma = 1 + np.float32(0.1) * ctx.rng.standard_normal(cols, dtype=np.float32)
        self.beta = np.float32(0.1) * ctx.rng.standard_normal(cols, dtype=np.float32)


@dataclass(frozen=True)
class _Weighted:
    """A row-wise op y = f(x) as each side writes it: the rows time y, and the gradient
    of (y * w).sum() with respect to x and the op's parameters."""

    jitgrad: Callable  # x -> y, under jg.jit
    numpy: Callable  # x -> y, by hand
    numpy_grads: Callable  # (x, w) -> (d/dx, *d/dparameters), derived by hand
    torch: Callable | None  # tensor -> y, PyTorch eager
    jax: Callable | None  # (v, *jax_parameters) -> y, under jax.jit
    parameters: tuple = ()  # jitgrad's
    torch_parameters: tuple = ()
    jax_parameters: tuple = ()  # numpy arrays, passed to the jax function


def _softmax(ctx, d: _Data) -> _Weighted:
    torch, jax = ctx.torch, ctx.jax

    def numpy_grads(x, w):
        p = _softmax_numpy(x)
        return (p * (w - (p * w).sum(axis=1, keepdims=True)),)

    return _Weighted(
        jitgrad=lambda x: F.softmax(x, dim=1),
        numpy=_softmax_numpy,
        numpy_grads=numpy_grads,
        torch=lambda t: torch.softmax(t, dim=1),
        jax=lambda v: jax.nn.softmax(v, axis=1),
    )


def _log_softmax(ctx, d: _Data) -> _Weighted:
    torch, jax = ctx.torch, ctx.jax

    def numpy_grads(x, w):
        return (w - np.exp(_log_softmax_numpy(x)) * w.sum(axis=1, keepdims=True),)

    return _Weighted(
        jitgrad=lambda x: F.log_softmax(x, dim=1),
        numpy=_log_softmax_numpy,
        numpy_grads=numpy_grads,
        torch=lambda t: torch.log_softmax(t, dim=1),
        jax=lambda v: jax.nn.log_softmax(v, axis=1),
    )


def _layer_norm(ctx, d: _Data) -> _Weighted:
    torch, jax = ctx.torch, ctx.jax
    cols = d.x.shape[1]
    layer = nn.LayerNorm(cols, eps=LAYER_NORM_EPS, dtype=jg.float32)
    with jg.no_grad():
        layer.weight.copy_(jg.from_numpy(d.gamma))
        layer.bias.copy_(jg.from_numpy(d.beta))
    torch_layer = None
    if torch is not None:
        torch_layer = torch.nn.LayerNorm(cols, eps=LAYER_NORM_EPS)
        with torch.no_grad():
            torch_layer.weight.copy_(torch.from_numpy(d.gamma))
            torch_layer.bias.copy_(torch.from_numpy(d.beta))

    def jax_layer_norm(v, gamma, beta):
        centred = v - v.mean(axis=1, keepdims=True)
        var = (centred * centred).mean(axis=1, keepdims=True)
        return centred * jax.lax.rsqrt(var + LAYER_NORM_EPS) * gamma + beta

    return _Weighted(
        jitgrad=layer,
        numpy=lambda x: _layer_norm_numpy(x, d.gamma, d.beta)[0],
        numpy_grads=lambda x, w: _layer_norm_grads_numpy(x, w, d.gamma, d.beta),
        torch=torch_layer,
        jax=jax_layer_norm,
        parameters=(layer.weight, layer.bias),
        torch_parameters=() if torch_layer is None else (torch_layer.weight, torch_layer.bias),
        jax_parameters=(d.gamma, d.beta),
    )


def _weighted_sides(ctx, d: _Data, backward: bool, op: _Weighted):
    """(jitgrad, numpy, torch, jax) callables of the op's forward or of its gradient."""
    if not backward:
        return _forward_sides(ctx, d, op)

    def step(x, w):  # the user's step: the gradient of (f(x) * w).sum() by backward()
        x.grad = None
        for p in op.parameters:
            p.grad = None
        loss = (op.jitgrad(x) * w).sum()
        loss.backward()
        return x.grad

    jitted = jg.jit(step)
    leaf, w = jg.from_numpy(d.x.copy()).requires_grad_(), jg.from_numpy(d.w)
    if op.parameters and ctx.torch is None and ctx.jax is None:  # jitgrad's process
        _check_parameter_grads(jitted, leaf, w, op, d)
    return (
        lambda: jitted(leaf, w),
        lambda: op.numpy_grads(d.x, d.w)[0],
        _torch_weighted_grad(ctx.torch, op, d),
        _jax_weighted_grad(ctx.jax, op, d),
    )


def _forward_sides(ctx, d: _Data, op: _Weighted):
    torch, jax = ctx.torch, ctx.jax

    def infer(x):  # the parameters require grad: inference runs without recording
        with jg.no_grad():
            return op.jitgrad(x)

    jitted, x = jg.jit(infer if op.parameters else op.jitgrad), jg.from_numpy(d.x)
    torch_side = None
    if torch is not None:
        tx = torch.from_numpy(d.x)

        def torch_side():
            with torch.no_grad():
                return op.torch(tx)

    return (
        lambda: jitted(x),
        lambda: op.numpy(d.x),
        torch_side,
        comparators.jax_jit(jax, op.jax, d.x, *op.jax_parameters),
    )


def _check_parameter_grads(step, x, w, op: _Weighted, d: _Data) -> None:
    """The runner compares d/dx; this compares the parameters' gradients with numpy's
    after a replayed call (the second: the first traces)."""
    step(x, w)
    step(x, w)
    scale = math.sqrt(len(d.x))  # a column sum of len(x) terms of size ~1
    for k, (p, want) in enumerate(zip(op.parameters, op.numpy_grads(d.x, d.w)[1:])):
        if p.grad is None or not np.allclose(p.grad.numpy(), want, rtol=1e-4, atol=1e-4 * scale):
            raise ValueError(f"jitgrad's gradient of parameter {k} differs from numpy's")


def _torch_weighted_grad(torch, op: _Weighted, d: _Data):
    if torch is None:
        return None
    leaf, w = torch.from_numpy(d.x.copy()).requires_grad_(), torch.from_numpy(d.w)

    def step():
        leaf.grad = None
        for p in op.torch_parameters:
            p.grad = None
        (op.torch(leaf) * w).sum().backward()
        return leaf.grad

    return step


def _jax_weighted_grad(jax, op: _Weighted, d: _Data):
    """jax.jit(jax.grad) of (f(x, *parameters) * w).sum() with respect to x and the
    parameters; waits for them all and returns d/dx."""
    if jax is None:
        return None
    wrt = (0, *range(2, 2 + len(op.jax_parameters)))
    grad = jax.jit(jax.grad(lambda v, w, *p: (op.jax(v, *p) * w).sum(), argnums=wrt))
    placed = [jax.device_put(a) for a in (d.x, d.w, *op.jax_parameters)]
    return lambda: jax.block_until_ready(grad(*placed))[0]


def _cross_entropy_sides(ctx, d: _Data, backward: bool):
    """(jitgrad, numpy, torch, jax) callables of the mean cross-entropy or its gradient."""
    torch, jax = ctx.torch, ctx.jax

    def jax_cross_entropy(v, labels):
        log_p = jax.nn.log_softmax(v, axis=1)
        return -jax.numpy.take_along_axis(log_p, labels[:, None], axis=1).mean()

    labels = jg.asarray(d.labels)
    torch_side = jax_side = None
    if not backward:
        jitted, x = jg.jit(lambda x, y: F.cross_entropy(x, y)), jg.from_numpy(d.x)
        if torch is not None:
            tx, ty = torch.from_numpy(d.x), torch.from_numpy(d.labels)
            torch_side = lambda: torch.nn.functional.cross_entropy(tx, ty)  # noqa: E731
        return (
            lambda: jitted(x, labels),
            lambda: _cross_entropy_numpy(d.x, d.labels),
            torch_side,
            comparators.jax_jit(jax, jax_cross_entropy, d.x, d.labels),
        )

    def step(x, y):
        x.grad = None
        F.cross_entropy(x, y).backward()
        return x.grad

    jitted, leaf = jg.jit(step), jg.from_numpy(d.x.copy()).requires_grad_()
    if torch is not None:
        torch_leaf, ty = torch.from_numpy(d.x.copy()).requires_grad_(), torch.from_numpy(d.labels)

        def torch_side():
            torch_leaf.grad = None
            torch.nn.functional.cross_entropy(torch_leaf, ty).backward()
            return torch_leaf.grad

    if jax is not None:
        grad = jax.jit(jax.grad(jax_cross_entropy))
        jx, jy = jax.device_put(d.x), jax.device_put(d.labels)
        jax_side = lambda: grad(jx, jy).block_until_ready()  # noqa: E731
    return (
        lambda: jitted(leaf, labels),
        lambda: _cross_entropy_grad_numpy(d.x, d.labels),
        torch_side,
        jax_side,
    )


def _weighted(build):
    """The sides of the _Weighted op ``build(ctx, data)`` makes."""
    return lambda ctx, d, backward: _weighted_sides(ctx, d, backward, build(ctx, d))


@dataclass(frozen=True)
class _RowwiseOp:
    sides: Callable  # (ctx, data, backward) -> (jitgrad, numpy, torch, jax) callables
    spelling: str  # the op as a jitgrad user writes it, for the note
    about: str = ""  # what the spelling leaves out, for the note
    # the size of its results' elements at (rows, cols), forward and backward: the
    # absolute tolerance of the check is 1e-4 of it
    sizes: Callable = lambda rows, cols: (1.0, 1.0)


_OPS = {
    "softmax": _RowwiseOp(
        _weighted(_softmax),
        "F.softmax(x, dim=1)",
        sizes=lambda rows, cols: (1 / cols, 1 / cols),
    ),
    "log-softmax": _RowwiseOp(_weighted(_log_softmax), "F.log_softmax(x, dim=1)"),
    "layer-norm": _RowwiseOp(
        _weighted(_layer_norm),
        "layer(x)",
        "layer = nn.LayerNorm(cols), its scale and shift random",
    ),
    "cross-entropy": _RowwiseOp(
        _cross_entropy_sides,
        "F.cross_entropy(x, labels)",
        "integer labels",
        sizes=lambda rows, cols: (1.0, 1 / (rows * cols)),
    ),
}


def _rowwise_case(ctx, op: str, shape: tuple[int, int], backward: bool) -> Case:
    rows, cols = ctx.pick(shape, QUICK_SHAPES[shape])
    d = _Data(ctx, rows, cols)
    jitgrad, numpy, torch, jax = _OPS[op].sides(ctx, d, backward)
    scalar = op == "cross-entropy" and not backward
    # x read once, plus w for the weighted sums' gradients; the result written once
    reads = 1 + (backward and op != "cross-entropy")
    return Case(
        f"{rows}×{cols} float32",
        jitgrad=jitgrad,
        numpy=numpy,
        torch=torch,
        jax=jax,
        alloc_bytes=0 if scalar else d.x.nbytes,
        rtol=1e-4,
        atol=1e-4 * _OPS[op].sizes(rows, cols)[backward],
        bytes_moved=(reads + (not scalar)) * d.x.nbytes,
        bandwidth=copy_bandwidth(),
    )


def _register(op: str, shape: tuple[int, int], backward: bool) -> None:
    spelling, about = _OPS[op].spelling, _OPS[op].about
    if backward and op == "cross-entropy":
        what = f"forward + backward: x.grad after {spelling}.backward()"
    elif backward:
        what = f"forward + backward: x.grad after ({spelling} * w).sum().backward()"
    else:
        what = f"forward: {spelling}"
    note = f"{what} under jg.jit" + f"; {about}" * bool(about)
    name = f"{op}-{'backward' if backward else 'forward'}-{shape[0]}x{shape[1]}"

    @fusion_row(name, target=3.0, vs_jax=1.0, note=note)
    def _(ctx):
        return _rowwise_case(ctx, op, shape, backward)


for _shape in SHAPES:
    for _op in _OPS:
        for _backward in (False, True):
            _register(_op, _shape, _backward)


# -- the digits training step as a digits user writes it ------------------------------------


def _user_step(model, optimizer):
    loss_fn = nn.CrossEntropyLoss()

    def train_step(x, y):
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return train_step


@fusion_row(
    "digits-user-step-batch-64",
    target=1.5,
    vs_jax=2.0,
    note="model(x) → nn.CrossEntropyLoss → zero_grad → backward → SGD step (no momentum), "
    "whole under jg.jit, vs numpy hand-written; torch eager, jax.jit of the same step "
    "written by hand",
)
def _(ctx):
    return digits_case(ctx, 64, momentum=0.0, jitgrad_step=_user_step)
