"""A plan's first replay compiles its kernels from both ends.

The first replay runs the plan's steps in order, and each kernel compiles at its first
call: one core compiles while the other idles (numba's compiler holds the GIL, so a thread
would not help). Meanwhile a forked child runs the same steps from the last one back,
compiling each kernel into the shared disk cache: the replay then loads the kernels the
child finished first, and the child loads those the replay did, so the two meet in the
middle. The child's results are thrown away with it: it computes on a copy of this
process's memory and is killed once the replay is done.

Only where it pays: ``os.fork``, two or more cores for this process, and at least
``_FROM`` kernels not on disk yet. ``config.compile_ahead`` (``JITGRAD_COMPILE_AHEAD=0``)
turns it off.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings

from .._config import config
from . import cache

_FROM = 4  # kernels to compile: below, a fork costs more than the child would save


@contextlib.contextmanager
def from_the_end(steps):
    """Run the block (the first replay of ``steps``) beside a child compiling them in
    reverse."""
    child = _fork(steps) if _worth_it(steps) else None
    try:
        yield
    finally:
        if child is not None:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)


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


def _fork(steps) -> int | None:
    with warnings.catch_warnings():  # (Python 3.12 warns about forking with threads)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid:
        return pid
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
