"""The one door through which jitgrad's random API hands out numpy's draws.

Every method of ``Generator`` and ``RandomState`` calls numpy's method of the same name on
the numpy object it wraps, so the numbers are numpy's own for the same seed. jitgrad
tensors and dtypes given as arguments reach numpy as the arrays and dtypes they are;
array results come back as jitgrad tensors, scalar results as numpy returns them.
"""

from __future__ import annotations

import inspect
import warnings
from functools import partial

import numpy as np

from .. import dtypes
from .._config import config
from ..creation import from_numpy
from ..recording import TracerWarning, compute, run
from ..tensor import TensorBase


def plain(value):
    """A jitgrad tensor or dtype as the numpy array (sharing memory) or dtype numpy's
    random methods take; anything else unchanged."""
    if isinstance(value, TensorBase):
        return value.numpy()
    if isinstance(value, dtypes.DType):
        return value.numpy
    return value


def as_result(array: np.ndarray):
    """A drawn array as a tensor sharing its memory. Arrays of dtypes jitgrad has no
    storage for (strings or objects picked by ``choice``, wide unsigned integers) stay
    numpy's arrays: the program gets numpy's result rather than an error."""
    try:
        dtypes.from_numpy_dtype(array.dtype)
    except TypeError:
        return array
    return from_numpy(array)


def draw(method, /, *args, **kwargs):
    """``method(*args, **kwargs)``, a numpy random method, with numpy's result types: an
    array as a jitgrad tensor, a scalar (``size=None``) as the Python or numpy scalar
    numpy returns. A tensor given as ``out=`` is written in place and returned.

    Arrays are drawn through ``compute()``: inside ``jg.jit`` every replay draws fresh
    numbers, as every eager call does. A scalar is a Python value: a replay keeps the one
    drawn while tracing (warned), so ask for ``size=()`` to get a 0-d tensor instead.
    """
    out = kwargs.get("out")
    args = tuple(plain(a) for a in args)
    kwargs = {k: plain(v) for k, v in kwargs.items()}
    if isinstance(out, TensorBase):
        check_may_write(out, method.__name__)
        run(partial(method, *args, **kwargs))
        out._storage._written()
        return out
    first = []  # what the first (eager or traced) call returned, when not an array

    def drawn(*a):
        value = method(*a, **kwargs)
        if not first:
            first.append(None if isinstance(value, np.ndarray) else value)
        return value

    array = compute(drawn, *args)
    if first[0] is None:
        return as_result(array)
    if config.thread.tape is not None:
        warnings.warn(
            f"jg.jit: {method.__name__}() with size=None returns a Python scalar while "
            "tracing: every replay of the plan reuses this one draw; pass size=() for a "
            "0-d tensor drawn again on every call",
            TracerWarning,
            stacklevel=3,
        )
    return first[0]


def check_may_write(t: TensorBase, name: str) -> None:
    """A write by numpy into ``t`` bypasses autograd: allowed where jitgrad's own
    unrecorded in-place writes are (grad mode off, or no gradient involved)."""
    t._check_writable()
    t._check_in_storage()
    check = getattr(t, "_check_inplace", None)  # (a Tensor, not a bare TensorBase)
    if check is not None and check(False):
        raise RuntimeError(
            f"{name}() cannot write into a tensor that requires grad: the new order "
            "carries no gradient; index with a permutation instead (x[rng.permutation(len(x))])"
        )


def shuffle_in_place(method, x, /, *args) -> None:
    """numpy's in-place ``method(x, *args)`` (``shuffle``): on a tensor, its memory is
    shuffled through a numpy view of it, with numpy's permutation for the same state."""
    if not isinstance(x, TensorBase):
        method(x, *args)
        return
    check_may_write(x, "shuffle")
    run(method, x.numpy(), *args)  # recorded: a jg.jit replay shuffles again
    x._storage._written()


def numpy_method(owner: type, name: str):
    """A method that draws with numpy's ``owner.name`` on ``self._numpy`` (see ``draw``),
    with numpy's signature."""
    numpy_function = getattr(owner, name)

    def method(self, *args, **kwargs):
        return draw(getattr(self._numpy, name), *args, **kwargs)

    method.__name__ = name
    method.__signature__ = inspect.signature(numpy_function)
    # numpy's one-line summary (its docstring's second paragraph, after the signature);
    # numpy's examples are left out: they would run as this module's doctests.
    paragraphs = (numpy_function.__doc__ or "").split("\n\n")
    summary = paragraphs[1].strip() if len(paragraphs) > 1 else ""
    method.__doc__ = (
        f"{summary.rstrip('.')}: numpy's ``{owner.__name__}.{name}`` (the same numbers "
        "for the same state), arrays returned as jitgrad tensors."
    )
    return method


def numpy_methods(owner: type, names: tuple[str, ...]):
    """A class decorator adding ``numpy_method(owner, name)`` for each of ``names`` the
    class does not define itself."""

    def add(cls):
        for name in names:
            if name not in cls.__dict__:
                method = numpy_method(owner, name)
                method.__qualname__ = f"{cls.__name__}.{name}"
                method.__module__ = cls.__module__
                setattr(cls, name, method)
        return cls

    return add
