"""Reductions (sum, max, min over axes) as kernels: one per kind and dtype, any layout.

numpy spends 2–5 µs dispatching a reduction over a small array, more than the work in a
training step's bias gradients and softmax rows; a kernel call costs a fraction of that.
The operand is described to the kernel as at most two kept and two reduced dimensions
(after merging what its strides allow), so one compiled kernel serves every shape:

- when the kept dimension is the one with unit stride (column sums of a row-major
  matrix), whole rows are combined into the output, a loop LLVM vectorises and whose
  order of additions is numpy's;
- otherwise each output element reduces its own run; sums, whatever their step, use
  eight accumulators per block (see ``blocked_sum``) and round once at the end.

Sums accumulate in float64 for floats, and in the result's dtype for integers and bools,
each element widened as it is read (numpy's sum of int8 in int64 copies nothing either).
Layouts beyond two kept or two reduced merged dimensions, float16, integer max and min
and empty operands stay with numpy (``reduce`` returns None).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._config import config
from ..autograd.tensor import uninitialised
from ..strided import layout
from . import cache, numpy_launch

_COMBINE = {
    "sum": "a + b",
    # NaN wins, as in numpy's max/min.
    "max": "a if (a >= b or a != a) else b",
    "min": "a if (a <= b or a != a) else b",
}

# The body of ``row(x, start, n, step)``, which reduces one run. Sums are in ACC here;
# the caller rounds once.
_ROW = {
    "sum": """
    if step < 0:
        start -= n - 1
    return blocked_sum(x[start:start + n])""",
    "extreme": """
    acc = x[start]
    for i in range(1, n):
        acc = combine(acc, x[start + i * step])
    return acc""",
}

# The body of ``blocked_sum(v)``, by the operand's and the accumulator's kinds.
_SUM_BODY = {
    # Floats: eight float64 accumulators per block of 4096, blocks added up in float64: no
    # recursion (numba compiles recursive functions slowly) and an error far below
    # float32's, and below n/8 ulps for float64.
    "floats": """
    total = ACC(0)
    n = v.shape[0]
    for b in range(0, n, 4096):
        end = min(b + 4096, n)
        whole = end - (end - b) % 8
        r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = ACC(0)
        for i in range(b, whole, 8):
            r0 += ACC(v[i])
            r1 += ACC(v[i + 1])
            r2 += ACC(v[i + 2])
            r3 += ACC(v[i + 3])
            r4 += ACC(v[i + 4])
            r5 += ACC(v[i + 5])
            r6 += ACC(v[i + 6])
            r7 += ACC(v[i + 7])
        part = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for i in range(whole, end):
            part += ACC(v[i])
        total += part
    return total""",
    # Integers into an integer: exact in any order, so one running total, which LLVM
    # splits into vector lanes (int8 into int64: 10x the eight-accumulator loop's speed).
    "integers": """
    total = ACC(0)
    for i in range(v.shape[0]):
        total += ACC(v[i])
    return total""",
    # Integers of up to 32 bits into a float: each block of 4096 exactly in int64
    # (``exact_sum``, vectorised; no block can overflow), blocks added up in float64.
    "narrow integers into a float": """
    total = ACC(0)
    for b in range(0, v.shape[0], 4096):
        total += ACC(exact_sum(v[b:b + 4096]))
    return total""",
}

# (A block's loop of its own: LLVM vectorises it, not the same loop nested in another.)
_EXACT_SUM = """\
@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def exact_sum(w):
    total = np.int64(0)
    for i in range(w.shape[0]):
        total += np.int64(w[i])
    return total


"""

# ``strided_row``: a sum's run of a step other than 1 or -1, in a kernel variant of its
# own so that contiguous sums never compile the strided copy of ``blocked_sum``.
_STRIDED_SUM_ROW = """
    if step == 0:  # a broadcast run
        return ACC(n) * ACC(x[start])
    if step < 0:
        start, step = start + (n - 1) * step, -step
    return blocked_sum(x[start:start + (n - 1) * step + 1:step])"""

_TEMPLATE = '''\
import numpy as np
from numba import njit

# One module per pair of dtypes: each has its own compiled code and statistics.
DT = np.{dtype}  # the result's (the operand's is {operand})
ACC = np.{accumulator}  # a sum's, float64 for floats


@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def combine(a, b):
    return {combine}


{exact_sum}@njit(cache=True, error_model="numpy", nogil=True)
def blocked_sum(v):
    """v's sum in ACC (numba compiles one copy per layout of v: a contiguous v keeps its
    vectorised loop)."""
{sum_body}


@njit(cache=True, error_model="numpy", nogil=True)
def row(x, start, n, step):
{row}


@njit(cache=True, error_model="numpy", nogil=True)
def strided_row(x, start, n, step):
{strided_row}


@njit(cache=True, error_model="numpy", nogil=True)
def whole(x, offset, sizes, strides, out):
    out[0] = DT(blocked_sum(x[offset:offset + sizes[3]]))


@njit(cache=True, error_model="numpy", nogil=True)
def outer(x, offset, sizes, strides, out):
    nk0, nk1, nr0, nr1 = sizes[0], sizes[1], sizes[2], sizes[3]
    sk0, sr0, sr1 = strides[0], strides[2], strides[3]
    for k0 in range(nk0):
        o = out[k0 * nk1:(k0 + 1) * nk1]
        base = offset + k0 * sk0
        v = x[base:base + nk1]
        for k1 in range(nk1):
            o[k1] = v[k1]
        for r in range(1, nr0 * nr1):
            r0 = r // nr1
            start = base + r0 * sr0 + (r - r0 * nr1) * sr1
            v = x[start:start + nk1]
            for k1 in range(nk1):
                o[k1] = combine(o[k1], DT(v[k1]))
{inner}{strided}'''

# One output element per run: "inner" over runs of step 1 or -1, "strided" over others.
_INNER = """

@njit(cache=True, error_model="numpy", nogil=True)
def {name}(x, offset, sizes, strides, out):
    nk0, nk1, nr0, nr1 = sizes[0], sizes[1], sizes[2], sizes[3]
    sk0, sk1, sr0, sr1 = strides[0], strides[1], strides[2], strides[3]
    for k0 in range(nk0):
        for k1 in range(nk1):
            base = offset + k0 * sk0 + k1 * sk1
            acc = {row}(x, base, nr1, sr1)
            for r0 in range(1, nr0):
                acc = combine(acc, {row}(x, base + r0 * sr0, nr1, sr1))
            out[k0 * nk1 + k1] = acc
"""


def reduce(kind: str, x, axes: tuple[int, ...], keepdims: bool, dtype=None):
    """``kind`` ("sum", "max", "min") of tensor ``x`` over sorted ``axes``, as a new
    tensor of ``dtype`` (None: x's; another only for a sum of integers or bools, which
    accumulates in it); None when the kernel does not apply."""
    d, out_dtype = x.dtype, dtype or x.dtype
    if not _applies(kind, d, out_dtype) or x.numel() == 0:
        return None
    described = _describe(x.shape, x.stride(), axes)
    if described is None:
        return None
    sizes, strides = described
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    shape = kept if keepdims else tuple(n for i, n in enumerate(x.shape) if i not in axes)
    out = uninitialised(shape, out_dtype)
    key = ("reduce", kind, d.name, out_dtype.name)
    kernel = cache.get(key, lambda: _source(kind, d, out_dtype))
    # Loop orders, each compiled on first use: whole rows combined into the output when
    # the kept dimension has the smaller stride (as numpy's iterator orders them, so a
    # broadcast run, of stride 0, is summed as one run), else one run per output element.
    if kind == "sum" and sizes[:3] == (1, 1, 1) and strides[3] == 1:
        variant = "whole"  # the sum of a contiguous run: the smallest kernel to compile
    elif strides[1] == 1 and sizes[1] > 1 and abs(strides[3]) > 1:
        variant = "outer"
    elif kind == "sum" and sizes[3] > 1 and abs(strides[3]) != 1:
        variant = "strided"
    else:
        variant = "inner"
    args = [
        x._storage.kernel_array,
        x._offset,
        np.array(sizes, dtype=np.int64),
        np.array(strides, dtype=np.int64),
        out._storage.kernel_array,
    ]
    if config.thread.tape is None:
        kernel.call(variant)(*args)
        return out
    # A traced plan's scheduler reads what the reduction reads, over which axes; a row
    # kernel may absorb it.
    step = Reduce(kernel.call(variant), args, kind, x, axes, out)
    numpy_launch.run_or_defer(step, step.call, lambda: _on_numpy(kind, x, axes, out))
    return out


def _on_numpy(kind: str, x, axes: tuple, out) -> None:
    """``out`` = the reduction by numpy: sums of floats in float64, as the kernel's."""
    values = x.numpy()
    if kind == "sum":
        accumulator = np.float64 if out.dtype in _FLOATS else out.dtype.numpy
        result = np.sum(values, axis=axes, dtype=accumulator)
    else:  # (max and min propagate NaN, as the kernel's)
        result = getattr(np, kind)(values, axis=axes)
    np.copyto(out.numpy(), np.reshape(result, out.shape), casting="unsafe")


class Reduce:
    """One recorded reduction: its kernel call over fixed arrays, and what a plan's
    scheduler needs to fuse it (the kind, the operand's layout, the reduced axes)."""

    def __init__(self, call, args, kind: str, x, axes: tuple, out):
        self.call, self.args, self.kind, self.axes = call, args, kind, axes
        self.array, self.offset = args[0], args[1]
        self.shape, self.strides, self.load = x.shape, x.stride(), x.dtype.name
        self.out, self.out_dtype = args[4], out.dtype.name
        self.arrays, self.outs = [self.array], [self.out]

    def array_positions(self) -> list[tuple[int, int | None]]:
        """(position of an array in ``args``, of its offset or None), as ``Launch``'s."""
        return [(0, 1), (4, None)]

    def read_bytes(self) -> int:
        return layout.numel(self.shape) * self.array.itemsize

    def __call__(self) -> None:
        self.call(*self.args)

    def direct(self) -> tuple:
        return self.call.direct(self.args), self.args


_FLOATS = (dtypes.float32, dtypes.float64)


def _applies(kind: str, dtype, out_dtype) -> bool:
    """Whether a kernel reduces ``dtype`` into ``out_dtype``: floats into their own dtype;
    for sums, integers and bools into a wider dtype (``reduce.sum``'s, ``mean``'s)."""
    if dtype in _FLOATS:
        return out_dtype is dtype
    return (
        kind == "sum"
        and dtype.kind in "biu"
        and (out_dtype in _FLOATS or out_dtype in (dtypes.int64, dtypes.uint64))
    )


def _describe(shape, strides, axes):
    """(sizes, strides) of (kept0, kept1, reduced0, reduced1) after merging, or None."""
    kept = [(n, s) for i, (n, s) in enumerate(zip(shape, strides)) if i not in axes]
    # Reduced dimensions may be visited in any order: outermost-in-memory first lets a
    # transposed operand merge like a contiguous one.
    reduced = sorted(
        ((n, s) for i, (n, s) in enumerate(zip(shape, strides)) if i in axes),
        key=lambda ns: -abs(ns[1]),
    )
    dims = []
    for group in (kept, reduced):
        merged, merged_strides = layout.coalesce([n for n, _ in group], [s for _, s in group])
        if len(merged) > 2:
            return None
        pad = 2 - len(merged)
        dims.append(((1,) * pad + merged, (0,) * pad + merged_strides))
    (nk, sk), (nr, sr) = dims
    return nk + nr, sk + sr


def _source(kind: str, dtype, out_dtype) -> str:
    """The kernel module reducing ``dtype`` into ``out_dtype``."""
    row = _ROW["sum" if kind == "sum" else "extreme"]
    exact_sum = ""
    if out_dtype in _FLOATS:
        accumulator = "float64"
        if dtype in _FLOATS or dtype.itemsize > 4:
            body = _SUM_BODY["floats"]
        else:
            body, exact_sum = _SUM_BODY["narrow integers into a float"], _EXACT_SUM
    else:
        accumulator, body = out_dtype.name, _SUM_BODY["integers"]
    return _TEMPLATE.format(
        dtype=out_dtype.name,
        operand=dtype.name,
        accumulator=accumulator,
        exact_sum=exact_sum,
        sum_body=body,
        combine=_COMBINE[kind],
        row=row,
        strided_row=_STRIDED_SUM_ROW if kind == "sum" else row,
        inner=_INNER.format(name="inner", row="row"),
        strided=_INNER.format(name="strided", row="strided_row"),
    )
