"""Softmax cross-entropy over the rows of (N, C) logits with integer labels, as row
kernels shared out among threads.

The composite form (log_softmax, a one-hot target, a product and two sums) costs a
dozen launches and a label-dependent numpy step per training step; PyTorch and every
other framework fuse it. The forward kernel computes each row's log-sum-exp and loss in
one pass, then the reduced loss; the backward kernel recomputes the row's softmax (cheaper
than storing it) and writes ``scale · (softmax − onehot)``. Labels are checked inside
the kernel as well, since a replayed plan never runs the Python checks again.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, threads
from .._config import config
from ..autograd.tensor import Tensor, uninitialised
from ..recording import run
from . import cache
from .row_fusion import ROW_HELPERS

_TEMPLATE = '''\
import numpy as np
from numba import njit
from jitgrad.jit import vmath as vm

DT = np.{dtype}


# The helpers are inlined into forward and backward at numba's IR level: as functions of
# their own each is compiled separately and its code optimised again inside both callers
# (the cold compile of the pair took 1.31 s instead of 1.14).
@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def exp_shifted(z, out):
    """out = exp(z - max of its row); returns each row's max and sum of out. The
    exponentials run as one flat loop over all rows: rows are often shorter than a
    vector (10 classes), and a loop per row would never leave its scalar remainder."""
    n, c = z.shape
    tops = np.empty(n, DT)
    for i in range(n):
        row = z[i]
        # A NaN in the row makes its max, and so its loss and gradient, NaN.
        top = DT(row_max(row, c))
        tops[i] = top
        shifted = out[i]
        for j in range(c):
            shifted[j] = row[j] - top
    flat = out.reshape(n * c)
    for k in range(n * c):
        flat[k] = vm.exp_{suffix}(flat[k])
    sums = np.empty(n, DT)
    for i in range(n):
        sums[i] = DT(row_sum(out[i], c))
    return tops, sums


@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def label_of(labels, i, n_classes, ignore_index):
    label = labels[i]
    if label != ignore_index and (label < 0 or label >= n_classes):
        raise IndexError("cross_entropy: a target label is out of range for the classes")
    return label


# Rows go through the kernels in blocks of about this many elements, whose
# exponentials stay in the core's cache between the passes over them.
BLOCK = 16384


@njit(cache=True, error_model="numpy", nogil=True)
def forward(z, labels, ignore_index, losses, counted):
    """Each row's loss (0 for an ignored label); counted[0]: the rows counted."""
    n, c = z.shape
    block = max(1, BLOCK // max(c, 1))
    scratch = np.empty((min(block, n), c), DT)
    valid = 0
    for first in range(0, n, block):
        stop = min(first + block, n)
        tops, sums = exp_shifted(z[first:stop], scratch[: stop - first])
        # The logarithms first, in a loop of their own that vectorises (in the loop
        # below, with its label lookups, each was a scalar call: 7x slower)
        for i in range(stop - first):
            losses[first + i] = vm.log_{suffix}(sums[i])
        for i in range(first, stop):
            label = label_of(labels, i, c, ignore_index)
            if label == ignore_index:
                losses[i] = DT(0)
                continue
            # (z - top) first, as log_softmax does: top + log(s) would round away log(s).
            losses[i] -= z[i, label] - tops[i - first]
            valid += 1
    counted[0] = valid


@njit(cache=True, error_model="numpy", nogil=True)
def reduced(losses, counted, mean, total, count):
    """The pieces' row losses and counts, reduced: their sum, or mean over the counted."""
    acc = 0.0
    for i in range(losses.shape[0]):
        acc += losses[i]
    valid = 0
    for k in range(counted.shape[0]):
        valid += counted[k]
    count[0] = valid
    total[0] = DT(acc / valid) if mean else DT(acc)


@njit(cache=True, error_model="numpy", nogil=True)
def backward(z, labels, ignore_index, mean, g, per_row, count, dz):
    n, c = z.shape
    shared = g[0] / DT(count[0]) if mean else g[0]
    block = max(1, BLOCK // max(c, 1))
    for first in range(0, n, block):
        stop = min(first + block, n)
        _, sums = exp_shifted(z[first:stop], dz[first:stop])
        for i in range(first, stop):
            out = dz[i]
            label = label_of(labels, i, c, ignore_index)
            if label == ignore_index:
                out[:] = DT(0)
                continue
            scale = g[i] if per_row else shared
            factor = scale / sums[i - first]
            for j in range(c):
                out[j] *= factor
            out[label] -= scale
'''


# How ``_Pieces`` passes each argument to a piece.
_WHOLE, _ROWS, _ONE_EACH = "whole", "its rows", "its own element"


class _Pieces:
    """A row kernel run over pieces of its rows on several threads (``threads``): each
    argument passes ``split`` as ``_WHOLE``, cut to the piece's ``_ROWS``, or as the
    piece's ``_ONE_EACH`` element (an array with one per piece)."""

    def __init__(self, call, rows: int, columns: int, split: tuple[str, ...]):
        threshold = config.parallel_from(True)
        parts = threads.pieces(rows * columns, threshold) if rows * columns >= threshold else 1
        self.call, self.split = call, split
        self.bounds = threads.bounds(rows, 1, parts)

    def __call__(self, *args) -> None:
        if len(self.bounds) == 1:  # one piece: every argument whole
            self.call(*args)
            return

        def piece(k):
            lo, hi = self.bounds[k]
            parts = {_WHOLE: slice(None), _ROWS: slice(lo, hi), _ONE_EACH: slice(k, k + 1)}
            self.call(*[a[parts[how]] if how != _WHOLE else a for a, how in zip(args, self.split)])

        threads.run(piece, len(self.bounds), serial=self.call.compiled is None)


def applies(logits, target) -> bool:
    """Whether the kernels cover these operands: (N, C) float32/64 logits, 1-d labels."""
    return (
        logits.ndim == 2
        and target.ndim == 1
        and (logits.dtype is dtypes.float32 or logits.dtype is dtypes.float64)
    )


def _kernel(d):
    suffix = {"float32": "f32", "float64": "f64"}[d.name]
    return cache.get(
        ("cross_entropy", d.name),
        lambda: _TEMPLATE.format(dtype=d.name, suffix=suffix) + ROW_HELPERS,
    )


def cross_entropy_forward(z: Tensor, labels: Tensor, ignore_index: int, reduction: str):
    """(loss, count): the reduced loss (0-d) or per-row losses for ``reduction="none"``,
    and the number of counted labels (a 1-element int64 tensor the backward reads)."""
    kernel = _kernel(z.dtype)
    n = z.shape[0]
    losses = uninitialised((n,), z.dtype)
    total = uninitialised((), z.dtype)
    count = uninitialised((1,), dtypes.int64)
    rows = _Pieces(kernel.call("forward"), n, z.shape[1], (_ROWS, _ROWS, _WHOLE, _ROWS, _ONE_EACH))
    counted = np.zeros(len(rows.bounds), np.int64)
    run(rows, z.numpy(), labels.numpy(), ignore_index, losses.numpy(), counted)
    run(
        kernel.call("reduced"),
        losses.numpy(),
        counted,
        reduction == "mean",
        total.numpy().reshape(1),
        count.numpy(),
    )
    return (losses if reduction == "none" else total), count


def cross_entropy_backward(
    z: Tensor, labels: Tensor, ignore_index: int, reduction: str, g: Tensor, count: Tensor
) -> Tensor:
    kernel = _kernel(z.dtype)
    dz = uninitialised(z.shape, z.dtype)
    # Cast and copy as recorded ops: a replay must refill this exact array.
    g = (g if g.dtype is z.dtype else g.astype(z.dtype)).contiguous()
    g_rows = g.numpy().reshape(-1)
    per_row = reduction == "none"
    rows = _Pieces(
        kernel.call("backward"),
        z.shape[0],
        z.shape[1],
        (_ROWS, _ROWS, _WHOLE, _WHOLE, _ROWS if per_row else _WHOLE, _WHOLE, _WHOLE, _ROWS),
    )
    run(
        rows,
        z.numpy(),
        labels.numpy(),
        ignore_index,
        reduction == "mean",
        g_rows,
        per_row,
        count.numpy(),
        dz.numpy(),
    )
    return dz
