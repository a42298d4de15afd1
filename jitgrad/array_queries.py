"""numpy's questions about arrays (``ndim``, ``shape``, ``size``, ``isfortran``, memory
sharing) and its conversions with conditions (``asanyarray``, ``asarray_chkfinite``,
``require``), over tensors.

Memory questions are numpy's own on the tensors' arrays, which view the tensors' storages:
two tensors share memory exactly when their byte ranges in one buffer overlap.

>>> import jitgrad as jg
>>> x = jg.zeros((2, 3))
>>> jg.shape(x), jg.ndim(x), jg.size(x, 1), jg.shares_memory(x, x[1])
((2, 3), 2, 3, True)
"""

from __future__ import annotations

import numpy as np

from .creation import asarray
from .ops import movement, shaping
from .tensor import TensorBase

# numpy's own: they ask Python about the object, never about its values.
iterable, isscalar = np.iterable, np.isscalar


def _values(a):
    return TensorBase.numpy(a) if isinstance(a, TensorBase) else a


def ndim(a) -> int:
    """The number of dimensions of ``a`` (a tensor, an array, a nested sequence or a
    scalar), numpy's ``ndim``.

    >>> import jitgrad as jg
    >>> jg.ndim(jg.zeros((2, 3))), jg.ndim([[1, 2]]), jg.ndim(1.5)
    (2, 2, 0)
    """
    return a.ndim if isinstance(a, TensorBase) else np.ndim(a)


def shape(a) -> tuple:
    """The shape of ``a``, numpy's ``shape``.

    >>> import jitgrad as jg
    >>> jg.shape(jg.zeros((2, 3))), jg.shape([[1, 2, 3]])
    ((2, 3), (1, 3))
    """
    return tuple(a.shape) if isinstance(a, TensorBase) else np.shape(a)


def size(a, axis=None) -> int:
    """The number of elements of ``a``, or along ``axis`` (an int or a tuple of them),
    numpy's ``size``.

    >>> import jitgrad as jg
    >>> jg.size(jg.zeros((2, 3))), jg.size(jg.zeros((2, 3)), 0)
    (6, 2)
    """
    return np.size(_values(a), axis)


def isfortran(a) -> bool:
    """True where ``a`` is laid out column-major and not also row-major (numpy's
    ``isfortran``).

    >>> import jitgrad as jg
    >>> jg.isfortran(jg.zeros((2, 3)).T), jg.isfortran(jg.zeros(3))
    (True, False)
    """
    if not isinstance(a, (TensorBase, np.ndarray)):
        raise TypeError(f"isfortran: expected a tensor or an array, got {type(a).__name__}")
    return bool(np.isfortran(_values(a)))


def may_share_memory(a, b, /, max_work=None) -> bool:
    """Whether ``a`` and ``b`` might share memory (their byte ranges overlap), numpy's
    ``may_share_memory``.

    >>> import jitgrad as jg
    >>> x = jg.arange(6)
    >>> jg.may_share_memory(x[::2], x[1::2]), jg.may_share_memory(x, jg.arange(6))
    (True, False)
    """
    return bool(np.may_share_memory(_values(a), _values(b), max_work))


def shares_memory(a, b, /, max_work=None) -> bool:
    """Whether ``a`` and ``b`` have an element in common memory (exactly, unlike
    ``may_share_memory``), numpy's ``shares_memory``.

    >>> import jitgrad as jg
    >>> x = jg.arange(6)
    >>> jg.shares_memory(x[::2], x[1::2]), jg.shares_memory(x[:3], x[2:])
    (False, True)
    """
    return bool(np.shares_memory(_values(a), _values(b), max_work))


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``asarray``: a tensor is jitgrad's only array class (numpy's ``asanyarray``).

    >>> import jitgrad as jg
    >>> x = jg.ones(2); jg.asanyarray(x) is x
    True
    """
    return asarray(a, dtype, order, device=device, copy=copy, like=like)


def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray``, raising ValueError when a floating or complex result holds inf or
    NaN (numpy's ``asarray_chkfinite``).

    >>> import jitgrad as jg
    >>> jg.asarray_chkfinite([1.0, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: array must not contain infs or NaNs
    """
    t = asarray(a, dtype, order)
    if isinstance(t, TensorBase) and t.dtype.kind in "fc":
        if not np.isfinite(TensorBase.numpy(t)).all():
            raise ValueError("array must not contain infs or NaNs")
    return t


_REQUIREMENTS = {
    "C": "C",
    "C_CONTIGUOUS": "C",
    "CONTIGUOUS": "C",
    "F": "F",
    "F_CONTIGUOUS": "F",
    "FORTRAN": "F",
    "A": "A",
    "ALIGNED": "A",
    "W": "W",
    "WRITEABLE": "W",
    "O": "O",
    "OWNDATA": "O",
    "E": "E",
    "ENSUREARRAY": "E",
}


def require(a, dtype=None, requirements=None):
    """A tensor of ``a`` in ``dtype`` meeting ``requirements`` ('C' or 'F' contiguous,
    'A' aligned, 'W' writeable, 'O' owning its data, 'E' an array), copied only when
    needed, numpy's ``require``.

    >>> import jitgrad as jg
    >>> t = jg.require(jg.zeros((2, 3)).T, requirements="C")
    >>> t.is_contiguous(), t.shape
    (True, (3, 2))
    """
    if requirements is None:
        wanted = set()
    else:
        try:
            wanted = {_REQUIREMENTS[r.upper()] for r in requirements}
        except KeyError as e:
            raise KeyError(f"require: unknown requirement {e.args[0]!r}") from None
    if "C" in wanted and "F" in wanted:
        raise ValueError("Cannot specify both 'C' and 'F' order")
    order = "C" if "C" in wanted else "F" if "F" in wanted else "A"
    t = asarray(a, dtype, order)
    if not isinstance(t, TensorBase):
        return np.require(t, dtype, requirements)
    copy = ("O" in wanted and not t.flags.owndata) or ("W" in wanted and not t.flags.writeable)
    if copy:
        t = shaping.laid_out(movement.clone, t, "F" if order == "F" else "C", "require")
    return t


__all__ = [
    "iterable",
    "isscalar",
    "ndim",
    "shape",
    "size",
    "isfortran",
    "may_share_memory",
    "shares_memory",
    "asanyarray",
    "asarray_chkfinite",
    "require",
]
