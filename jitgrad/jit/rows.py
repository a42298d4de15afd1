"""Softmax cross-entropy over the rows of (N, C) logits with integer labels, as row
kernels shared out among threads.

The composite form (log_softmax, a one-hot target, a product and two sums) costs a
dozen launches and a label-dependent numpy step per training step; PyTorch and every
other framework fuse it. The forward kernel computes each row's log-sum-exp and loss in
one pass, then the reduced loss, and keeps each row's maximum and sum of exponentials; the
backward kernel writes ``scale · (softmax − onehot)`` in one pass over the logits from
those (recomputing the softmax costs less than storing it; recomputing the maximum and the
sum as well took 5.8 ms against 3.2 at 4096×1024 on one thread). In a plan where the
loss's gradient is made without the loss, one kernel does both in a single pass
(``fuse_forward_backward``). Labels are checked inside the kernel as well, since a
replayed plan never runs the Python checks again.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, threads
from .._config import config
from ..autograd.tensor import Tensor, uninitialised
from . import cache, numpy_launch
from .binding import accesses, owner

_TEMPLATE = '''\
import numpy as np
from numba import njit
from jitgrad.jit import vmath as vm
from jitgrad.jit.row_reductions import row_max, row_sum

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


@njit(cache=True, error_model="numpy", nogil=True, inline="always")
def block_losses(z, labels, first, stop, c, ignore_index, scratch, losses, stats):
    """Rows [first, stop) of ``z``: each one's loss (0 for an ignored label) and (maximum,
    sum of exp(z - maximum)) in ``stats``, its exponentials in ``scratch``. Returns how
    many rows counted, and their sums."""
    tops, sums = exp_shifted(z[first:stop], scratch[: stop - first])
    # The logarithms first, in a loop of their own that vectorises (in the loop below,
    # with its label lookups, each was a scalar call: 7x slower)
    for i in range(stop - first):
        losses[first + i] = vm.log_{suffix}(sums[i])
        stats[first + i, 0] = tops[i]
        stats[first + i, 1] = sums[i]
    valid = 0
    for i in range(first, stop):
        label = label_of(labels, i, c, ignore_index)
        if label == ignore_index:
            losses[i] = DT(0)
            continue
        # (z - top) first, as log_softmax does: top + log(s) would round away log(s).
        losses[i] -= z[i, label] - tops[i - first]
        valid += 1
    return valid, sums


@njit(cache=True, error_model="numpy", nogil=True)
def forward(n, c, z, zo, labels, lo, ignore_index, losses, stats, counted):
    """Each row's loss (0 for an ignored label) and its (maximum, sum of exp(z - maximum))
    in ``stats``; counted[0]: the rows counted. The rows are the n x c logits at ``zo`` of
    ``z``, their labels at ``lo`` of ``labels``."""
    z = z[zo : zo + n * c].reshape((n, c))
    labels = labels[lo : lo + n]
    stats = stats.reshape((n, 2))
    block = max(1, BLOCK // max(c, 1))
    scratch = np.empty((min(block, n), c), DT)
    valid = 0
    for first in range(0, n, block):
        stop = min(first + block, n)
        valid += block_losses(z, labels, first, stop, c, ignore_index, scratch, losses, stats)[0]
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
def forward_backward(
    n, c, z, zo, labels, lo, every_label, el, g, go, rows, ignore_index, mean, per_row,
    losses, stats, dz, counted,
):
    """``forward`` and ``backward`` in one pass over the logits, when the loss's gradient
    ``g`` is known before the loss: the exponentials of a block of rows are still in cache
    for the gradient. A mean's count is of all ``rows`` labels (``every_label`` at ``el``)."""
    z = z[zo : zo + n * c].reshape((n, c))
    labels = labels[lo : lo + n]
    stats = stats.reshape((n, 2))
    dz = dz.reshape((n, c))
    shared = g[go]
    if mean:
        labelled = 0
        for i in range(rows):
            if every_label[el + i] != ignore_index:
                labelled += 1
        shared /= DT(labelled)
    block = max(1, BLOCK // max(c, 1))
    scratch = np.empty((min(block, n), c), DT)
    valid = 0
    for first in range(0, n, block):
        stop = min(first + block, n)
        here, sums = block_losses(
            z, labels, first, stop, c, ignore_index, scratch, losses, stats
        )
        valid += here
        for i in range(first, stop):
            out, label = dz[i], labels[i]
            if label == ignore_index:
                out[:] = DT(0)
                continue
            scale = g[go + i] if per_row else shared
            exps, factor = scratch[i - first], scale / sums[i - first]
            for j in range(c):
                out[j] = exps[j] * factor
            out[label] -= scale
    counted[0] = valid


@njit(cache=True, error_model="numpy", nogil=True)
def backward(n, c, z, zo, labels, lo, g, go, count, co, stats, so, ignore_index, mean, per_row, dz):
    """dz (n x c) = the rows' gradient, ``g`` their loss's (one a row at ``go``, or one),
    from the forward's ``stats`` of the rows (at ``so``)."""
    z = z[zo : zo + n * c].reshape((n, c))
    labels = labels[lo : lo + n]
    stats = stats[so : so + 2 * n].reshape((n, 2))
    dz = dz.reshape((n, c))
    shared = g[go] / DT(count[co]) if mean else g[go]
    for i in range(n):
        out = dz[i]
        label = label_of(labels, i, c, ignore_index)
        if label == ignore_index:
            out[:] = DT(0)
            continue
        scale = g[go + i] if per_row else shared
        row, top, factor = z[i], stats[i, 0], scale / stats[i, 1]
        for j in range(c):
            out[j] = vm.exp_{suffix}(row[j] - top) * factor
        out[label] -= scale
'''


class _RowsStep:
    """A cross-entropy kernel over fixed arrays, its rows shared out among threads in
    pieces: a step of a plan that binding and scheduling see like a ``Launch`` (input
    ``arrays`` with their offsets in ``args``, ``outs``), so that a plan reads the logits
    and hands their gradient over by reference.

    ``inputs`` are (array, offset, elements a row: the row's own, or 0 for one element
    every piece reads); ``outs`` (array, elements a row, 0 for the whole array, or None
    for one only ``finish`` writes). The kernel takes the piece's row count, the columns,
    each input and its offset, the ``numbers``, each output's piece, and its element of
    an array of ``extra`` dtype (one a piece), which ``finish(args, that array)`` reads
    once every piece is done."""

    def __init__(self, call, rows, cols, inputs, numbers, outs, extra=None, finish=None):
        self.arrays = [a for a, _, _ in inputs]
        self.outs = [a for a, _ in outs]
        self.args = [rows, cols]
        for a, o, _ in inputs:
            self.args += [a, o]
        self.args += list(numbers) + self.outs
        self._per_input = [per for _, _, per in inputs]
        self._per_output = [per for _, per in outs]
        self._call, self._finish = call, finish
        threshold = config.parallel_from(True)
        parts = threads.pieces(rows * cols, threshold) if rows * cols >= threshold else 1
        self._bounds = threads.bounds(rows, 1, parts)
        self._extra = None if extra is None else np.zeros(len(self._bounds), extra)

    def input(self, k: int) -> tuple:
        """Input ``k`` as given: (array, offset, elements a row)."""
        return self.args[2 + 2 * k], self.args[3 + 2 * k], self._per_input[k]

    def array_positions(self) -> list[tuple[int, int | None]]:
        inputs = [(2 + 2 * k, 3 + 2 * k) for k in range(len(self.arrays))]
        first_out = len(self.args) - len(self.outs)
        return inputs + [(first_out + k, None) for k in range(len(self.outs))]

    def read_bytes(self) -> int:
        rows = self.args[0]
        return sum(a.itemsize * (rows * per or 1) for a, per in zip(self.arrays, self._per_input))

    def __call__(self) -> None:
        self._run(self._call, self._finish, self.args)

    def direct(self) -> tuple:
        if self._call.compiled is None:
            return self, []
        return _DirectRows(self), self.args

    def expanded(self, args) -> list | None:
        """This step's kernel calls over ``args`` as they stand, (function, arguments)
        pairs for ``compiled_plan``; None for a step cut into several pieces."""
        finish = self._finish
        if len(self._bounds) != 1 or (finish is not None and finish.reduced.compiled is None):
            return None
        calls = [(self._call.compiled, self._piece(args, 0))]
        if finish is not None:
            calls.append((finish.reduced.compiled, finish.arguments(args, self._extra)))
        return calls

    def _run(self, fn, finish, args) -> None:
        if len(self._bounds) == 1:  # (a small step: no closure, no pool)
            fn(*self._piece(args, 0))
        else:
            serial = self._call.compiled is None
            threads.run(lambda k: fn(*self._piece(args, k)), len(self._bounds), serial=serial)
        if finish is not None:
            finish(args, self._extra)

    def _piece(self, args, k) -> list:
        """The kernel's arguments for piece ``k`` of the rows: its row count, its inputs'
        offsets, its outputs' views, its element of ``extra``."""
        lo, hi = self._bounds[k]
        first_out = len(args) - len(self.outs)
        share = list(args[:first_out])
        share[0] = hi - lo
        if lo:
            for i, per in enumerate(self._per_input):
                share[3 + 2 * i] += lo * per
        for out, per in zip(args[first_out:], self._per_output):
            if per is not None:
                if per and (lo or out.size != hi * per):  # (a piece of it: its view)
                    out = out[lo * per : hi * per]
                share.append(out)
        extra = self._extra
        if extra is not None:
            share.append(extra if extra.size == 1 else extra[k : k + 1])
        return share


class _DirectRows:
    """A compiled rows step as a replayed plan calls it (``_RowsStep.direct``)."""

    __slots__ = ("step", "expanded")

    def __init__(self, step: _RowsStep):
        self.step, self.expanded = step, step.expanded

    def __call__(self, *args) -> None:
        step = self.step
        step._run(step._call.compiled, step._finish, args)


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
        lambda: _TEMPLATE.format(dtype=d.name, suffix=suffix),
    )


def cross_entropy_forward(z: Tensor, labels: Tensor, ignore_index: int, reduction: str):
    """(loss, count, stats): the reduced loss (0-d) or per-row losses for
    ``reduction="none"``, the number of counted labels (a 1-element int64 tensor) and each
    row's maximum and sum of exponentials ((n, 2)), which the backward reads."""
    kernel = _kernel(z.dtype)
    n, c = z.shape
    labels = labels.contiguous()
    losses = uninitialised((n,), z.dtype)
    stats = uninitialised((n, 2), z.dtype)
    total = uninitialised((), z.dtype)
    count = uninitialised((1,), dtypes.int64)
    mean = reduction == "mean"
    step = _RowsStep(
        kernel.call("forward"),
        n,
        c,
        [_flat(z, c), _flat(labels, 1)],
        [ignore_index],
        [(_array(losses), 1), (_array(stats), 2), (_array(total), None), (_array(count), None)],
        extra=np.int64,
        finish=_Reducing(kernel, n, mean, outs=4),
    )
    step.loss_of = ignore_index, reduction  # (what ``fuse_forward_backward`` merges)

    def on_numpy():
        values, valid = z.numpy(), labels.numpy() != ignore_index
        tops = values.max(axis=1, keepdims=True)
        sums = np.exp(values - tops).sum(axis=1, keepdims=True)
        logp = (values - tops) - np.log(sums)
        picked = np.take_along_axis(logp, np.where(valid, labels.numpy(), 0)[:, None], 1)[:, 0]
        row_losses = np.where(valid, -picked, 0).astype(z.dtype.numpy)
        losses.numpy()[...] = row_losses
        stats.numpy()[...] = np.concatenate([tops, sums], axis=1)
        count.numpy()[0] = valid.sum()
        total.numpy()[...] = row_losses.sum(dtype=np.float64) / (valid.sum() if mean else 1)

    numpy_launch.run_or_defer(step, step._call, on_numpy)
    return (losses if reduction == "none" else total), count, stats


class _Reducing:
    """A forward step's ``finish``: the pieces' row losses (its first of ``outs`` outputs)
    and counts, reduced into its last two (the loss and the count)."""

    def __init__(self, kernel, n: int, mean: bool, outs: int):
        self.reduced, self.n, self.mean, self.outs = kernel.call("reduced"), n, mean, outs

    def arguments(self, args, counted) -> list:
        return [args[-self.outs][: self.n], counted, self.mean, args[-2], args[-1]]

    def __call__(self, args, counted) -> None:
        self.reduced(*self.arguments(args, counted))


def cross_entropy_backward(
    z: Tensor,
    labels: Tensor,
    ignore_index: int,
    reduction: str,
    g: Tensor,
    count: Tensor,
    stats: Tensor,
) -> Tensor:
    kernel = _kernel(z.dtype)
    n, c = z.shape
    dz = uninitialised(z.shape, z.dtype)
    labels = labels.contiguous()
    # Cast and copy as recorded ops: a replay must refill this exact array.
    g = (g if g.dtype is z.dtype else g.astype(z.dtype)).contiguous()
    per_row = reduction == "none"
    step = _RowsStep(
        kernel.call("backward"),
        n,
        c,
        [
            _flat(z, c),
            _flat(labels, 1),
            _flat(g, 1 if per_row else 0),
            _flat(count, 0),
            _flat(stats, 2),
        ],
        [ignore_index, reduction == "mean", per_row],
        [(_array(dz), c)],
    )
    step.reads_stats = _array(stats)  # (its forward's: the pair ``fuse_forward_backward`` finds)

    def on_numpy():
        valid = labels.numpy() != ignore_index
        scale = g.numpy().reshape(-1) * np.ones(n, z.dtype.numpy)  # (one a row, or shared)
        if reduction == "mean":
            scale = scale / count.numpy()[0]
        scale = np.where(valid, scale, 0).astype(z.dtype.numpy)
        grad = np.exp(_log_softmax(z)) * scale[:, None]
        grad[~valid] = 0  # (whatever their logits, as the kernel's)
        rows = np.flatnonzero(valid)
        grad[rows, labels.numpy()[rows]] -= scale[rows]
        dz.numpy()[...] = grad

    numpy_launch.run_or_defer(step, step._call, on_numpy)
    return dz


def fuse_forward_backward(steps: list) -> list:
    """``steps`` with each cross-entropy backward merged with its forward into one
    ``forward_backward`` kernel. Of the steps between them, those that make the backward's
    inputs (the loss's gradient: a seed, a scale) run first, then the merged kernel, then
    the others (a sum of losses reading this one); where that order would change what a
    step reads, or the gradient needs the loss, the two stay apart."""
    out = list(steps)
    for b, (backward, _) in enumerate(steps):
        stats = getattr(backward, "reads_stats", None)
        if stats is None:
            continue
        for f in range(b - 1, -1, -1):
            forward = out[f] and out[f][0]
            if getattr(forward, "loss_of", None) is not None and forward.outs[1] is stats:
                break
        else:
            continue
        order = _gradient_first(forward, backward, [s for s in out[f + 1 : b] if s is not None])
        if order is None:
            continue
        first, rest = order
        merged = [*first, (_forward_backward(forward, backward), ()), *rest]
        out[f : b + 1] = merged + [None] * (b + 1 - f - len(merged))  # (indices stay put)
    return [step for step in out if step is not None]


def _gradient_first(forward, backward, between: list) -> tuple[list, list] | None:
    """The steps ``between`` a forward and its backward that the backward's inputs come
    from, and the others, each in their order: running the first before the merged kernel
    and the others after it computes what running them all in order did. None where it
    does not, or the first read the loss."""
    loss = {owner(a) for a in forward.outs}
    logits = {owner(a) for a in forward.arrays}
    touched = [tuple(map(set, accesses(fn, args))) for fn, args in between]
    needed = {owner(a) for a in backward.arrays} - loss
    first = [False] * len(between)
    for k in range(len(between) - 1, -1, -1):
        reads, writes = touched[k]
        if needed & writes:
            first[k] = True
            needed |= reads
    later_reads, later_writes = set(), set()  # of the other steps so far: they run later
    for moved, (reads, writes) in zip(first, touched):
        if writes & logits:
            return None
        if moved:
            if (
                (reads | writes) & loss
                or writes & (later_reads | later_writes)
                or reads & later_writes
            ):
                return None
        elif writes & loss:
            return None
        else:
            later_reads |= reads
            later_writes |= writes
    return (
        [step for step, moved in zip(between, first) if moved],
        [step for step, moved in zip(between, first) if not moved],
    )


def _forward_backward(forward: _RowsStep, backward: _RowsStep) -> _RowsStep:
    ignore_index, reduction = forward.loss_of
    kernel, (n, c), mean = forward._call.kernel, forward.args[:2], reduction == "mean"
    losses, stats, total, count = forward.outs
    z, labels, gradient = forward.input(0), forward.input(1), backward.input(2)
    return _RowsStep(
        kernel.call("forward_backward"),
        n,
        c,
        [z, labels, (labels[0], labels[1], 0), gradient],
        [n, ignore_index, mean, reduction == "none"],
        [(losses, 1), (stats, 2), (backward.outs[0], c), (total, None), (count, None)],
        extra=np.int64,
        finish=_Reducing(kernel, n, mean, outs=5),
    )


def _log_softmax(z: Tensor) -> np.ndarray:
    values = z.numpy()
    shifted = values - values.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _flat(t: Tensor, per_row: int) -> tuple:
    """A contiguous tensor as a ``_RowsStep`` input: its storage's array and offset."""
    return t._storage.kernel_array, t._offset, per_row


def _array(t: Tensor) -> np.ndarray:
    """A new tensor's storage array, which a ``_RowsStep`` writes from its start."""
    return t._storage.kernel_array
