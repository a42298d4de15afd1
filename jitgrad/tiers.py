"""Which tier runs eager work: numpy's own loops for small work, kernels for the rest.

A kernel launch costs a fixed few microseconds of Python and, the first time a signature
is seen on a machine, a compile of tens of milliseconds; numpy's loops cost a fraction of a
microsecond per call. Eager work below the size where kernels share work among threads,
that numpy does in one call (a reduction, a copy, a cast, an indexing), runs in numpy;
elementwise formulas, which a kernel fuses into one pass, have their own measure
(``ops/numpy_tier.py``). Traces always take kernels: ``jg.jit`` fuses them.

Floating-point errors pass silently, as in the kernels (``log(0)`` is ``-inf`` without a
warning): formulas evaluate both sides of a ``where``, so numpy's warnings would speak of
values the result never holds.
"""

from __future__ import annotations

import numpy as np

from ._config import config

try:  # numpy's error state is a context variable: setting it is cheaper than errstate()
    from numpy._core._ufunc_config import _extobj_contextvar as numpy_errors

    with np.errstate(all="ignore"):
        IGNORE_ERRORS = numpy_errors.get()
except ImportError:  # pragma: no cover  (another numpy layout: errstate() does the same)
    numpy_errors = None


def quietly(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with numpy's floating-point errors ignored."""
    if numpy_errors is None:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = numpy_errors.set(IGNORE_ERRORS)
    try:
        return fn(*args, **kwargs)
    finally:
        numpy_errors.reset(token)


def small(numel: int) -> bool:
    """Whether eager work over ``numel`` elements that numpy does in one call runs in
    numpy: below the size where kernels share work among threads, numpy's loops are as
    fast as a serial kernel, and cost less to start."""
    return numel < config.numpy_tier_below and config.thread.tape is None


# Eager calls remembered by signature: what a call's work depends on (the op, its
# operands' dtypes, shapes and strides, its arguments) to the frozen decision of how it
# runs, which a later call of that signature takes at once. One cache for every op, emptied
# when a setting the decisions depend on changes (``config.memos``) and when full.
calls: dict = {}
config.memos.append(calls)
_CALLS_LIMIT = 4096


def remember(signature, decision) -> None:
    if len(calls) >= _CALLS_LIMIT:
        calls.clear()
    calls[signature] = decision
