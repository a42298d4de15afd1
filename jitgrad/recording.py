"""The one door through which array memory is written.

Every kernel launch, BLAS call and numpy computation that writes an array goes through
``run(fn, *args)``: ``fn`` writes its results into arrays among ``args``. Eagerly this is
just the call. While ``jg.jit`` traces a function, each call is also appended to the
tape, and replaying the tape later repeats the same writes into the same (preallocated)
arrays without any of the Python that decided them.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._config import config


class TracerWarning(UserWarning):
    """A traced function read a tensor's value as a Python object: the plan keeps what it
    read then (as ``torch.jit.trace`` warns for the same read)."""


def read_value(how: str, depth: int = 1) -> None:
    """Warn when a tensor's value leaves as a Python object (``how``) while ``jg.jit``
    traces: replays never read it again, so control flow or numbers built on it stay as
    they were in the trace. ``depth``: frames between the caller's code and this call."""
    if config.thread.tape is not None:
        warnings.warn(
            f"jg.jit: {how} read a tensor's value while tracing: the plan keeps the value "
            "read now and its replays never read it again. Return the tensor instead, or "
            "call retrace() when the value changes what the function does",
            TracerWarning,
            stacklevel=2 + depth,
        )


def run(fn, *args) -> None:
    tape = config.thread.tape
    if tape is None:
        fn(*args)
        return
    # The call is recorded as one unit: writes inside it are not recorded again.
    config.thread.tape = None
    try:
        fn(*args)
    finally:
        config.thread.tape = tape
    tape.record(fn, args)


def same_items(items, seen: tuple) -> bool:
    """Whether ``items`` holds the very objects of ``seen``, in order: a recorded call that
    prepared its work for ``seen`` may run it again (a plan's replays pass the same
    arrays, unless binding repointed one)."""
    return len(items) == len(seen) and all(a is b for a, b in zip(items, seen))


def compute(fn, *args):
    """``fn(*args)`` as a new array, recorded so that a replay recomputes it into that same
    array."""
    tape = config.thread.tape
    config.thread.tape = None
    try:
        result = np.asarray(fn(*args))
    finally:
        config.thread.tape = tape
    result = _own(result, args)
    if tape is not None:
        tape.record(_into, (fn, args, result))
    return result


def compute_all(fn, *args) -> tuple:
    """``compute`` for an ``fn`` that gives a tuple of arrays (a factorization's parts)."""
    tape = config.thread.tape
    config.thread.tape = None
    try:
        results = tuple(_own(np.asarray(r), args) for r in fn(*args))
    finally:
        config.thread.tape = tape
    if tape is not None:
        tape.record(_into_each, (fn, args, results))
    return results


def _own(result: np.ndarray, args) -> np.ndarray:
    # A view of an input (einsum, 0-d indexing) is no buffer of its own.
    if any(isinstance(a, np.ndarray) and np.may_share_memory(result, a) for a in args):
        return result.copy()
    return result


def _into(fn, args, out) -> None:
    _refill(out, fn(*args))


def _into_each(fn, args, outs) -> None:
    for out, value in zip(outs, fn(*args)):
        _refill(out, value)


def _refill(out: np.ndarray, value) -> None:
    if np.shape(value) != out.shape:
        raise ValueError(
            f"jg.jit: a result of shape {out.shape} when traced has shape {np.shape(value)} "
            "now: its shape depends on the data (a boolean mask, nonzero, unique...), which "
            "a replayed plan cannot follow; call the function without jg.jit"
        )
    out[...] = value
