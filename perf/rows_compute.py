"""Rows for the layers above the storage: autograd overhead, fused elementwise chains
forward and backward, and the digits training step. Their compile and warm-start times,
which need fresh processes, are in ``startup``."""

from __future__ import annotations

import sys

import numpy as np

import jitgrad as jg

from . import Case, comparators, row
from .chain import A, B, chain, chain_numpy, chain_numpy_grad
from .runner import copy_bandwidth


def _chain_case(ctx, n, backward: bool, jitted: bool = False):
    """The chain as one ``jg.function``: one fused kernel forward, one backward. With
    ``jitted``, the gradient step runs under ``jg.jit``, whose fusion merges the forward
    kernel into the backward one (the forward's output is never stored)."""
    x = ctx.rng.standard_normal(n).astype(np.float32)
    if not backward:
        t = jg.from_numpy(x)
        run_jitgrad = lambda: chain(t, A, B)  # noqa: E731
        numpy = lambda: chain_numpy(x, np.float32(A), np.float32(B))  # noqa: E731
    else:
        leaf = jg.from_numpy(x.copy()).requires_grad_()
        # d sum(y)/dy as sum's backward hands it on: one 1 broadcast over n elements.
        seed = jg.ones((), dtype=jg.float32).expand(n)

        def gradient(t):
            chain(t, A, B).backward(seed)  # the gradient of the sum
            return t.grad

        step = jg.jit(gradient) if jitted else gradient

        def run_jitgrad():
            leaf.grad = None
            return step(leaf)

        numpy = lambda: chain_numpy_grad(x, np.float32(A), np.float32(B))  # noqa: E731
    torch = comparators.torch_chain(ctx.torch, x, backward)
    jax = comparators.jax_chain(ctx.jax, x, backward)
    return Case(
        f"2^{n.bit_length() - 1} float32",
        jitgrad=run_jitgrad,
        numpy=numpy,
        torch=torch,
        jax=jax,
        alloc_bytes=x.nbytes,
        rtol=1e-4,
        bytes_moved=(3 if backward else 2) * x.nbytes,
        bandwidth=copy_bandwidth(),
    )


@row(
    "chain-forward-2^22",
    note="tanh(0.7x+0.1)·sigmoid(x)+0.5x², one fused kernel; torch eager, jax.jit",
)
def _(ctx):
    return _chain_case(ctx, ctx.pick(1 << 22, 1 << 18), backward=False)


@row("chain-forward-2^24", target=10.0, note="the same chain at 2^24")
def _(ctx):
    return _chain_case(ctx, ctx.pick(1 << 24, 1 << 18), backward=False)


@row(
    "chain-backward-2^24",
    note="d/dx sum(chain) as the jg.function's backward(seed) under jg.jit (forward fused "
    "into the backward kernel) vs numpy hand-derived; torch eager backward(), "
    "jax.jit(jax.grad); the chain's target is on the plain-Python formulation "
    "(chain-grad-2^24)",
)
def _(ctx):
    return _chain_case(ctx, ctx.pick(1 << 24, 1 << 18), backward=True, jitted=True)


@row(
    "chain-backward-2^24-eager",
    note="the same gradient eagerly: the forward kernel, then the backward kernel",
)
def _(ctx):
    return _chain_case(ctx, ctx.pick(1 << 24, 1 << 18), backward=True)


def _op_chain_case(ctx, length: int, n: int):
    """Forward + backward of ``length`` elementwise ops, eager: dispatch overhead."""
    x = ctx.rng.standard_normal(n).astype(np.float32)
    leaf = jg.from_numpy(x.copy()).requires_grad_()

    def run_jitgrad():
        leaf.grad = None
        y = leaf
        for _ in range(length // 2):
            y = jg.tanh(y) * 0.9
        y.sum().backward()
        return leaf.grad

    def run_numpy():  # the same chain with its gradient by hand, as numpy code would
        ys, y = [], x
        for _ in range(length // 2):
            ys.append(np.tanh(y))
            y = ys[-1] * np.float32(0.9)
        g = np.ones_like(x)
        for t in reversed(ys):
            g = g * np.float32(0.9) * (1 - t * t)
        return g

    torch = comparators.torch_op_chain(ctx.torch, x, length)
    jax = comparators.jax_op_chain(ctx.jax, x, length)
    calls = 0.0
    if ctx.torch is None and ctx.jax is None:  # the process that times jitgrad
        run_jitgrad()  # compiles the kernels
        calls = _python_calls(run_jitgrad) / length
    return Case(
        f"{length} ops on {n} float32",
        jitgrad=run_jitgrad,
        numpy=run_numpy,
        torch=torch,
        jax=jax,
        rtol=1e-4,
        calls_per_op=calls,
    )


def _python_calls(fn) -> int:
    """How many Python functions one call of ``fn`` enters (a profile hook counts them)."""
    count = 0

    def hook(frame, event, arg):
        nonlocal count
        count += event == "call"

    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


@row(
    "autograd-1000-ops-scalar",
    note="per-op overhead: forward + backward of a 1000-op "
    "chain on a 1-element tensor (time / 1000 = cost per op); torch eager, jax: jax.grad "
    "without jit (eager dispatch)",
)
def _(ctx):
    return _op_chain_case(ctx, 1000, 1)


@row(
    "autograd-10-ops-2^20",
    note="10-op chain, eager per-op kernels vs numpy hand-derived; "
    "torch eager, jax: jax.grad without jit",
)
def _(ctx):
    return _op_chain_case(ctx, 10, ctx.pick(1 << 20, 1 << 16))


DIGITS_LR = 0.02


def digits_case(ctx, batch: int, momentum: float = 0.9, jitgrad_step=None) -> Case:
    """One SGD step (with ``momentum``, none at 0) of the digits MLP on its first ``batch``
    samples: jitgrad's ``jg.jit`` of ``jitgrad_step(model, optimizer)``'s step of (x, y)
    (default: the example's ``train_step``), numpy's written by hand, PyTorch eager and
    ``jax.jit``. Every side returns the first layer's weight after its step."""
    from jitgrad.examples import digits

    x_train, y_train, x_test, y_test = digits.load_data(0)
    x = np.concatenate([x_train, x_test])[:batch]
    y = np.concatenate([y_train, y_test])[:batch]
    model = digits.build_model(0)
    params = [p.numpy().copy() for p in model.parameters()]  # (out, in), before any step
    opt = jg.optim.SGD(model.parameters(), lr=DIGITS_LR, momentum=momentum)
    if jitgrad_step is None:
        train_step = jg.jit(digits.train_step)
        step = lambda x, y: train_step(model, opt, x, y)  # noqa: E731
    else:
        step = jg.jit(jitgrad_step(model, opt))
    tx, ty = jg.asarray(x), jg.asarray(y)
    first_weight = model[0].weight

    def jitgrad_side():
        step(tx, ty)
        return first_weight

    w1, b1, w2, b2 = (p.numpy().copy() for p in model.parameters())
    w1, w2 = w1.T.copy(), w2.T.copy()  # (in, out) for x @ w
    velocity = [np.zeros_like(a) for a in (w1, b1, w2, b2)]
    onehot = np.eye(10, dtype=np.float32)[y]

    def numpy_step():  # the same SGD step written by hand in numpy
        h = x @ w1 + b1
        r = np.maximum(h, 0)
        z = r @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        dz = (p - onehot) / len(x)
        grads = [None, None, r.T @ dz, dz.sum(0)]
        dr = (dz @ w2.T) * (h > 0)
        grads[0], grads[1] = x.T @ dr, dr.sum(0)
        for param, g, v in zip((w1, b1, w2, b2), grads, velocity):
            if momentum:
                v *= momentum
                v += g
                param -= DIGITS_LR * v
            else:
                param -= DIGITS_LR * g
        return w1.T

    torch = comparators.torch_digits_step(ctx.torch, params, x, y, DIGITS_LR, momentum)
    jax = comparators.jax_digits_step(ctx.jax, params, x, y, "sgd", DIGITS_LR, momentum)
    return Case(
        f"batch {batch}, 64→128→10 float32, SGD" + f" momentum {momentum:g}" * bool(momentum),
        jitgrad=jitgrad_side,
        numpy=numpy_step,
        torch=torch,
        jax=jax,
        rtol=1e-5,
        atol=1e-6,
    )


@row(
    "digits-step-batch-64",
    target=1.0,
    vs_torch=4.0,
    note="jitted training step vs numpy hand-written; torch eager (nn.Linear, "
    "F.cross_entropy, optim.SGD), jax.jit of the same step written by hand",
)
def _(ctx):
    return digits_case(ctx, 64)


@row("digits-step-full-batch", target=2.3, note="all 1797 samples of the digits in one step")
def _(ctx):
    return digits_case(ctx, 1797)
