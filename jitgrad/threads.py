"""Parallel kernel launches: the serial kernel run over pieces of its outer loop on a small
pool of Python threads. Generated kernels (``jit.lowering``) and flat storage fills and
copies (``storage.kernels``) launch this way.

Why not numba's ``parallel=True``: numba compiles a ``prange`` loop through its parfor
passes, which cost far more than the loop itself: 0.3-0.4 s per kernel on top of the
serial variant's 0.2 s (measured on the chain y = tanh(0.7x + 0.1)·sigmoid(x) + 0.5x²,
float32). Kernels are ``nogil``, so Python threads run them side by side just as well, and
every generated module holds one function to compile, cache and load. A launch costs
20-25 µs on a busy 2-core machine, about what numba's OpenMP threads cost to wake with
passive waiting (measured side by side); the parallel threshold covers it.

Why pieces, taken as they come, rather than one fixed share per thread: a worker whose
virtual CPU sat idle can wake milliseconds late (3.8 ms seen here for a 5 ms launch). With
fixed halves the launch then takes the delay plus a whole half; with pieces the launching
thread goes on taking them meanwhile, and the late worker only helps with the rest.

Launches from several user threads at once never wait for each other: while one parallel
launch holds the pool, the others run their pieces serially in their own thread.

Why spin before sleeping: a thread asleep on a lock wakes through the kernel, and on a
virtual machine that is an interrupt to an idle virtual CPU, 30-50 µs here; a launch
handed over that way cost more than a 2^13-element tanh kernel computes. So a worker
that finished its piece, and the launching thread waiting for its workers, first watch
a counter for about a millisecond (yielding the CPU at every turn, so another runnable
thread, a BLAS one say, is not kept from the core) and only then sleep on their lock.
Launches in a row, as in a training step, then hand over in a few µs.
"""

from __future__ import annotations

import os
import threading

import numba
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# Turns of watching before sleeping: a sched_yield each, about 0.5 µs here.
SPIN_TURNS = 2000 if os.name == "posix" else 0


@intrinsic
def _load_acquire(typingctx, counters, index):
    """counters[index], read from memory at every call (another thread writes it)."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, signature.args[0], array, [args[1]])
        return builder.load_atomic(pointer, "acquire", 8)

    return types.int64(counters, index), codegen


@intrinsic
def _sched_yield(typingctx):
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield"
        )
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.none(), codegen


@njit(cache=True, nogil=True)
def _watch(counters, index, value, turns):
    """Whether counters[index] became ``value`` within ``turns`` turns."""
    for _ in range(turns):
        if _load_acquire(counters, index) == value:
            return True
        _sched_yield()
    return False


class _Worker:
    """A daemon thread that runs one share per ``start``; ``wait`` returns its error."""

    def __init__(self):
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._job = None
        self._error = None
        # Jobs started and jobs finished, which the waiting threads watch.
        self._counts = np.zeros(2, np.int64)
        threading.Thread(target=self._loop, name="jitgrad-kernel", daemon=True).start()

    def _loop(self):
        counts = self._counts
        while True:
            if SPIN_TURNS:
                _watch(counts, 0, counts[1] + 1, SPIN_TURNS)
            self._go.acquire()
            job, self._job = self._job, None
            try:
                job()
            except BaseException as error:  # handed to the launching thread
                self._error = error
            # Hold nothing of the launch while idle: its arrays (a pooled output buffer
            # among them) are free to go as soon as the caller drops them.
            job = None
            counts[1] += 1
            self._done.release()

    def start(self, job) -> None:
        self._job = job
        self._counts[0] += 1
        self._go.release()

    def wait(self) -> BaseException | None:
        if SPIN_TURNS:
            _watch(self._counts, 1, self._counts[0], SPIN_TURNS)
        self._done.acquire()
        error, self._error = self._error, None
        return error


_pool_lock = threading.Lock()
_workers: list[_Worker] = []


def count() -> int:
    """Threads a parallel launch uses (``NUMBA_NUM_THREADS``, by default the CPU count)."""
    return max(1, numba.config.NUMBA_NUM_THREADS)


# A launch is cut into at most this many pieces per thread: enough for the launching
# thread to cover a late worker, few enough that building each piece's arguments (a few
# µs) stays far below the piece's own work.
PIECES_PER_THREAD = 8


def pieces(numel: int, threshold: int) -> int:
    """How many pieces a parallel launch over ``numel`` elements is cut into: one per
    thread at the parallel ``threshold`` (where sharing just pays), more as the launch
    grows, each piece at least a threshold's worth of elements."""
    return max(count(), min(numel // threshold, PIECES_PER_THREAD * count()))


def bounds(extent: int, align: int, parts: int) -> list[tuple[int, int]]:
    """``[0, extent)`` cut into up to ``parts`` balanced pieces, inner cuts on multiples
    of ``align`` (whole cache lines of a flat output, so no two threads write one line)."""
    parts = min(parts, extent // align) or 1
    cuts = [0] + [extent * k // parts // align * align for k in range(1, parts)] + [extent]
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]


def run(task, n: int, serial: bool = False) -> None:
    """``task(k)`` for every piece ``k`` in ``range(n)``: this thread and up to
    ``count() - 1`` of the pool's workers each take the next piece nobody has taken until
    none is left. Returns when all are done, raising the first error. ``serial``: every
    piece in this thread (a kernel's first call, which compiles it)."""
    if n == 1 or serial or not _pool_lock.acquire(blocking=False):
        for k in range(n):
            task(k)
        return
    try:
        helpers = min(count(), n) - 1
        while len(_workers) < helpers:
            _workers.append(_Worker())
        started = _workers[:helpers]
        untaken = iter(range(n))  # (next() on a range iterator is atomic under the GIL)

        def take_pieces():
            for k in untaken:
                task(k)

        for worker in started:
            worker.start(take_pieces)
        try:
            take_pieces()
        finally:
            errors = [worker.wait() for worker in started]
    finally:
        _pool_lock.release()
    for error in errors:
        if error is not None:
            raise error


def _forget_workers() -> None:
    """A forked child has none of its parent's threads: it starts its own when needed."""
    global _pool_lock
    _workers.clear()
    _pool_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_workers)
