"""Parallel kernel launches: the serial kernel run over shares of its outer loop, one share
per thread, on a small pool of Python threads.

Why not numba's ``parallel=True``: numba compiles a ``prange`` loop through its parfor
passes, which cost far more than the loop itself: 0.3-0.4 s per kernel on top of the
serial variant's 0.2 s (measured on the chain y = tanh(0.7x + 0.1)·sigmoid(x) + 0.5x²,
float32). Kernels are ``nogil``, so Python threads run them side by side just as well, and
every generated module holds one function to compile, cache and load. A launch costs
20-25 µs on a busy 2-core machine, about what numba's OpenMP threads cost to wake with
passive waiting (measured side by side); the parallel threshold covers it.

Launches from several user threads at once never wait for each other: while one parallel
launch holds the pool, the others run their kernel serially in their own thread.
"""

from __future__ import annotations

import os
import threading

import numba


class _Worker:
    """A daemon thread that runs one share per ``start``; ``wait`` returns its error."""

    def __init__(self):
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._job = None
        self._error = None
        threading.Thread(target=self._loop, name="jitgrad-kernel", daemon=True).start()

    def _loop(self):
        while True:
            self._go.acquire()
            fn, args = self._job
            self._job = None
            try:
                fn(*args)
            except BaseException as error:  # handed to the launching thread
                self._error = error
            self._done.release()

    def start(self, fn, args) -> None:
        self._job = (fn, args)
        self._go.release()

    def wait(self) -> BaseException | None:
        self._done.acquire()
        error, self._error = self._error, None
        return error


_pool_lock = threading.Lock()
_workers: list[_Worker] = []


def count() -> int:
    """Threads a parallel launch uses (``NUMBA_NUM_THREADS``, by default the CPU count)."""
    return max(1, numba.config.NUMBA_NUM_THREADS)


def bounds(extent: int, align: int) -> list[tuple[int, int]]:
    """``[0, extent)`` cut into up to ``count()`` shares, inner cuts on multiples of
    ``align`` (whole cache lines of a flat output, so no two threads write one line)."""
    parts = min(count(), extent // align) or 1
    cuts = [0] + [extent * k // parts // align * align for k in range(1, parts)] + [extent]
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]


def run(fn, shares: list) -> None:
    """``fn(*args)`` for every argument list in ``shares``: the first in this thread, the
    others on the pool's workers; returns when all are done, raising the first error."""
    if len(shares) == 1 or not _pool_lock.acquire(blocking=False):
        for args in shares:
            fn(*args)
        return
    try:
        while len(_workers) < len(shares) - 1:
            _workers.append(_Worker())
        started = _workers[: len(shares) - 1]
        for worker, args in zip(started, shares[1:]):
            worker.start(fn, args)
        try:
            fn(*shares[0])
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
