"""The benchmark rows. Each returns a Case; see ``perf/__init__.py`` for adding one."""

from __future__ import annotations

import numpy as np

import jitgrad as jg

from . import Case, row
from .comparators import jax_jit


def _random(ctx, shape, dtype):
    return ctx.rng.random(shape).astype(dtype)


def _transpose(ctx, dtype):
    n = ctx.pick(4096, 1024)
    a = _random(ctx, (n, n), dtype)
    t = jg.from_numpy(a)
    torch_fn = None
    if ctx.torch is not None:
        ta = ctx.torch.from_numpy(a)
        torch_fn = lambda: ta.T.contiguous()  # noqa: E731
    return Case(
        f"{n}×{n} {np.dtype(dtype).name}",
        jitgrad=lambda: t.T.contiguous(),
        numpy=lambda: np.ascontiguousarray(a.T),
        torch=torch_fn,
        jax=jax_jit(ctx.jax, lambda v: v.T, a),
        alloc_bytes=a.nbytes,
    )


@row("transpose-f32", target=4.0)
def _(ctx):
    """``contiguous()`` of a transposed square matrix."""
    return _transpose(ctx, np.float32)


@row("transpose-f64", target=3.5)
def _(ctx):
    return _transpose(ctx, np.float64)


def _to_channels_last(ctx, a, label: str) -> Case:
    """``a`` permuted (0, 2, 3, 1) into contiguous memory, on every side."""
    t = jg.from_numpy(a)
    torch_fn = None
    if ctx.torch is not None:
        ta = ctx.torch.from_numpy(a)
        torch_fn = lambda: ta.permute(0, 2, 3, 1).contiguous()  # noqa: E731
    return Case(
        f"{label}, axes (0,2,3,1)",
        jitgrad=lambda: t.permute(0, 2, 3, 1).contiguous(),
        numpy=lambda: np.ascontiguousarray(a.transpose(0, 2, 3, 1)),
        torch=torch_fn,
        jax=jax_jit(ctx.jax, lambda v: v.transpose(0, 2, 3, 1), a),
        alloc_bytes=a.nbytes,
    )


@row("permute4d-f32", target=2.5)
def _(ctx):
    """A 4-d gather: NCHW-like (0, 2, 3, 1) permutation made contiguous."""
    n = ctx.pick(64, 32)
    return _to_channels_last(ctx, _random(ctx, (n, n, n, n), np.float32), f"{n}⁴ float32")


@row("permute-nhwc-f32", note="3 channels: short destination runs")
def _(ctx):
    """NCHW -> NHWC with C=3, the image-batch layout change."""
    n, hw = ctx.pick(16, 4), ctx.pick(512, 256)
    a = _random(ctx, (n, 3, hw, hw), np.float32)
    return _to_channels_last(ctx, a, f"{n}×3×{hw}×{hw} float32")


@row("fill-f32", target=1.0, note="no jax side: JAX arrays are immutable (no in-place fill)")
def _(ctx):
    """``fill_`` of a preallocated contiguous tensor."""
    # Both sides write the same memory: two arrays of one size can differ by 30% in write
    # speed (how their pages happen to be backed), which would decide the row.
    n = ctx.pick(1 << 24, 1 << 20)
    a = np.zeros(n, np.float32)
    t = jg.from_numpy(a)
    torch_fn = None
    if ctx.torch is not None:
        tc = ctx.torch.from_numpy(a)
        torch_fn = lambda: tc.fill_(0.5)  # noqa: E731

    def numpy_fill():
        a.fill(0.5)
        return a

    return Case(
        f"2^{n.bit_length() - 1} float32",
        jitgrad=lambda: t.fill_(0.5),
        numpy=numpy_fill,
        torch=torch_fn,
        reset=lambda: a.fill(0),
    )


@row("cast-copy-f64-f32", target=1.0, note="no jax side: JAX cannot write into a given array")
def _(ctx):
    """float64 -> float32 into a preallocated tensor: ``dst.copy_(src)``."""
    n = ctx.pick(1 << 24, 1 << 20)
    src = ctx.rng.random(n)
    out = np.empty(n, np.float32)  # shared by all sides, as in fill-f32
    t_src, t_dst = jg.from_numpy(src), jg.from_numpy(out)
    torch_fn = None
    if ctx.torch is not None:
        s, d = ctx.torch.from_numpy(src), ctx.torch.from_numpy(out)
        torch_fn = lambda: d.copy_(s)  # noqa: E731

    def numpy_copy():
        np.copyto(out, src, casting="unsafe")
        return out

    return Case(
        f"2^{n.bit_length() - 1} elements",
        jitgrad=lambda: t_dst.copy_(t_src),
        numpy=numpy_copy,
        torch=torch_fn,
        reset=lambda: out.fill(0),
    )


@row("astype-f64-f32", note="allocation included")
def _(ctx):
    n = ctx.pick(1 << 24, 1 << 20)
    src = ctx.rng.random(n)
    t = jg.from_numpy(src)
    torch_fn = None
    if ctx.torch is not None:
        s = ctx.torch.from_numpy(src)
        torch_fn = lambda: s.to(ctx.torch.float32)  # noqa: E731
    return Case(
        f"2^{n.bit_length() - 1} elements",
        jitgrad=lambda: t.astype("float32"),
        numpy=lambda: src.astype(np.float32),
        torch=torch_fn,
        jax=jax_jit(ctx.jax, lambda v: v.astype("float32"), src),
        alloc_bytes=4 * n,
    )


@row("clone-f32", note="contiguous copy, allocation included")
def _(ctx):
    n = ctx.pick(1 << 24, 1 << 20)
    a = _random(ctx, n, np.float32)
    t = jg.from_numpy(a)
    torch_fn = None
    if ctx.torch is not None:
        ta = ctx.torch.from_numpy(a)
        torch_fn = ta.clone
    return Case(
        f"2^{n.bit_length() - 1} float32",
        jitgrad=t.clone,
        numpy=a.copy,
        torch=torch_fn,
        jax=jax_jit(ctx.jax, lambda v: v.copy(), a),
        alloc_bytes=a.nbytes,
    )


@row("transpose-small-f32", note="per-call overhead: Python dispatch dominates")
def _(ctx):
    a = _random(ctx, (16, 16), np.float32)
    t = jg.from_numpy(a)
    torch_fn = None
    if ctx.torch is not None:
        ta = ctx.torch.from_numpy(a)
        torch_fn = lambda: ta.T.contiguous()  # noqa: E731
    return Case(
        "16×16 float32",
        jitgrad=lambda: t.T.contiguous(),
        numpy=lambda: np.ascontiguousarray(a.T),
        torch=torch_fn,
        jax=jax_jit(ctx.jax, lambda v: v.T, a),
    )
