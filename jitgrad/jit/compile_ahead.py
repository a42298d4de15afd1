"""A plan's first replay compiles its kernels from both ends.

The first replay runs the plan's steps in order, and each kernel compiles at its first
call: one core compiles while the other idles (numba's compiler holds the GIL, so a thread
would not help). Meanwhile a forked child runs the same steps from the last one back,
compiling each kernel into the shared disk cache: the replay then loads the kernels the
child finished first, and the child loads those the replay did, so the two meet in the
middle. The child's results are thrown away with it: it computes on a copy of this
process's memory and is killed once the replay is done.

Neither compiles what the other is compiling: each claims a kernel in memory the two
share before compiling it (``_Claims``). The replay, reaching a kernel the child is
compiling, waits for it and loads it; the child, reaching one the replay is compiling,
goes on to the next.

Only where it pays: ``os.fork``, two or more cores for this process, and at least
``_FROM`` kernels not on disk yet. ``config.compile_ahead`` (``JITGRAD_COMPILE_AHEAD=0``)
turns it off.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import signal
import time
import warnings

from numba.core.registry import cpu_target

from .._config import config
from . import cache

_FROM = 4  # kernels to compile: below, a fork costs more than the child would save


@contextlib.contextmanager
def from_the_end(steps):
    """Run the block (the first replay of ``steps``) beside a child compiling them in
    reverse."""
    claims = _fork(steps) if _worth_it(steps) else None
    try:
        yield
    finally:
        if claims is not None:
            cache.claims = None
            if claims.child_runs():
                os.kill(claims.child, signal.SIGKILL)
                os.waitpid(claims.child, 0)


# A claim's states: free, taken by the replay, taken by the child, compiled.
_FREE, _REPLAY, _CHILD, _DONE = range(4)


class _Claims:
    """Which process compiles which of the plan's kernel functions: one byte each in
    memory shared with the child (``cache._compile`` asks). Two processes taking one
    claim at the same instant both compile it, as they would without claims."""

    def __init__(self, functions: list):
        self.slots = {id(f): k for k, f in enumerate(functions)}
        self.states = mmap.mmap(-1, max(1, len(functions)))  # (shared with a forked child)
        self.child: int | None = None  # set in the replay's process: the child to wait for
        self._reaped = False

    def take(self, function) -> bool:
        """Claim ``function`` before compiling it: False when the other process compiled
        it or is compiling it (in the replay, once it is done: then it loads from disk)."""
        k = self.slots.get(id(function))
        if k is None:
            return True
        mine = _CHILD if self.child is None else _REPLAY
        while self.states[k] not in (_FREE, mine):
            if self.states[k] == _DONE or self.child is None:
                return False
            if not self.child_runs():  # (killed, its claim left taken)
                break
            time.sleep(0.002)
        self.states[k] = mine
        return True

    def done(self, function) -> None:
        k = self.slots.get(id(function))
        if k is not None:
            self.states[k] = _DONE

    def child_runs(self) -> bool:
        """Whether the child still runs (one that ended is reaped here)."""
        if not self._reaped and os.waitpid(self.child, os.WNOHANG) != (0, 0):
            self._reaped = True
        return not self._reaped


def _worth_it(steps) -> bool:
    if not config.compile_ahead or not hasattr(os, "fork"):
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if cores < 2:
        return False
    pending = sum(any(_pending(call) for call in _calls_of(fn)) for fn, _ in steps)
    return pending >= _FROM


def _calls_of(fn) -> list:
    """The kernel calls a plan step makes (a launch's, a reduction's, or a call itself)."""
    if isinstance(fn, cache.Call):
        return [fn]
    found = (getattr(fn, name, None) for name in ("_call", "call", "_combine"))
    return [call for call in found if isinstance(call, cache.Call)]


def _pending(call) -> bool:
    """Whether ``call`` is compiled neither in this process nor on disk."""
    return call.compiled is None and not os.path.exists(call.kernel.index_path(call.variant))


def _fork(steps) -> _Claims:
    # numba installs its registries before the first compile (0.1-0.2 s): done here once,
    # the child inherits them instead of installing them again.
    cpu_target.target_context.refresh()
    pending = [call for fn, _ in steps for call in _calls_of(fn) if _pending(call)]
    claims = _Claims([getattr(call.kernel.module, call.variant) for call in pending])
    with warnings.catch_warnings():  # (Python 3.12 warns about forking with threads)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    cache.claims = claims
    if pid:
        claims.child = pid
        return claims
    try:  # the child: compile from the end, quietly, and never return into the caller
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        warnings.simplefilter("ignore")
        for fn, args in reversed(steps):
            if any(_pending(call) for call in _calls_of(fn)):
                try:
                    fn(*args)
                except BaseException:  # (its inputs are whatever memory held: any error)
                    pass
    finally:
        os._exit(0)
