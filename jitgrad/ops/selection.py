"""Picking and placing elements by position or condition: numpy's ``take``, ``put``,
``choose``, ``compress``, ``extract``, ``select``, ``piecewise``, ``place`` and
``putmask``.

Every result is built from the differentiable gather (``GetItem``), ``where`` and
indexed assignment, so gradients reach the elements picked; positions are computed by
numpy's routines and recorded for ``jg.jit`` replays.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor, zeros
from ..recording import compute, compute_all, run
from ..strided import layout
from ..tensor import TensorBase
from . import elementwise as ew
from .indexing import GetItem, _check_along, _index_array, _take_along, advanced_index, index_put
from .movement import astype, basic_index, broadcast_to, reshape, stack, write_out
from .sorting import _array, along_axis

_MODES = ("raise", "wrap", "clip")


def _in_range(idx: np.ndarray, n: int, mode: str, who: str, axis: int = 0) -> np.ndarray:
    """Indices of an axis of size ``n`` under numpy's ``mode``: "raise" checks them
    (negative ones count from the end), "wrap" takes them modulo ``n``, "clip" clips
    them to ``[0, n)``. Computed and checked as recorded steps, so that a jitted call
    treats its own indices."""
    if mode not in _MODES:
        raise ValueError(f"{who}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if n == 0 and idx.size:
        raise IndexError(f"{who}: cannot take {idx.size} elements from an empty axis")
    if mode == "raise":
        run(_check_along, idx, n, axis, who)
        return idx
    if mode == "wrap":
        return compute(np.mod, idx, n)
    return compute(np.clip, idx, 0, n - 1)


def take(a, /, indices, axis=None, out=None, mode="raise") -> Tensor:
    """numpy's ``take``: the elements of ``a`` at ``indices`` along ``axis`` (of the
    flattened ``a`` for ``axis=None``); the result has ``indices``' shape in place of that
    axis. ``mode`` "wrap" and "clip" bring out-of-range indices back. Differentiable.

    >>> import jitgrad as jg
    >>> jg.take(jg.tensor([[1, 2], [3, 4]]), [3, 0]).tolist()
    [4, 1]
    >>> jg.take(jg.tensor([[1, 2], [3, 4]]), [[1]], axis=1).tolist()
    [[[2]], [[4]]]
    >>> jg.take(jg.tensor([1, 2, 3]), 5, mode="clip").item()
    3
    """
    return write_out(out, take_at(a, _index_array(indices, "take"), axis, mode))


def take_at(a, idx: np.ndarray, axis=None, mode="raise") -> Tensor:
    """``take`` at an index array of the caller's own (computed by a recorded step, or
    a recorded copy): used as it is, so that a ``jg.jit`` replay sees each call's."""
    x, axis = along_axis(as_tensor(a), axis)
    idx = _in_range(idx, x.shape[axis], mode, "take", axis)
    return GetItem((slice(None),) * axis + (idx,))(x)


def _flat_positions(idx: np.ndarray, shape) -> tuple:
    return np.unravel_index(np.where(idx < 0, idx + layout.numel(shape), idx), shape)


def _cycled(values, n: int) -> Tensor:
    """``n`` elements of the flattened ``values``, repeated as often as needed."""
    return take_at(reshape(values, -1), np.arange(n) % values.numel())


def put(a, ind, v, mode="raise") -> None:
    """numpy's ``put``: in place, the flattened ``a`` takes ``v``'s elements (repeated as
    needed) at the positions ``ind`` (the last write wins). Recorded for gradients as
    ``a[...] = ...`` is.

    >>> import jitgrad as jg
    >>> a = jg.zeros(5)
    >>> jg.put(a, [0, 3], [1.0, 2.0])
    >>> a.tolist()
    [1.0, 0.0, 0.0, 2.0, 0.0]
    """
    if not isinstance(a, Tensor):
        raise TypeError(f"put: a must be a jitgrad tensor, got {type(a).__name__}")
    idx = _in_range(_index_array(ind, "put").reshape(-1), a.numel(), mode, "put")
    v = as_tensor(v)
    if v.numel() == 0:
        return  # nothing to write, as in numpy
    a[compute_all(_flat_positions, idx, a.shape)] = _cycled(v, idx.size)


def place(arr, mask, vals) -> None:
    """numpy's ``place``: in place, the elements of ``arr`` where ``mask`` is true take
    ``vals``' elements in order (repeated as needed).

    >>> import jitgrad as jg
    >>> a = jg.arange(5)
    >>> jg.place(a, a > 1, [10, 20])
    >>> a.tolist()
    [0, 1, 10, 20, 10]
    """
    _put_masked(arr, mask, vals, "place", by_position=False)


def fill_diagonal(a, val, wrap: bool = False) -> None:
    """numpy's ``fill_diagonal``: in place, the main diagonal of ``a`` (every dimension of
    equal length beyond 2-d) takes ``val`` (repeated as needed); ``wrap`` continues a
    tall matrix's diagonal below its first N columns' square, as numpy's.

    >>> import jitgrad as jg
    >>> a = jg.zeros((3, 3))
    >>> jg.fill_diagonal(a, [1.0, 2.0])
    >>> a.tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]
    """
    a = as_tensor(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    # numpy's own rule: every (1 + sum of the flat strides of a step down each axis)-th
    # element, stopping at the square's end unless ``wrap``.
    step = 1 + int(np.cumprod(a.shape[:-1]).sum()) if a.ndim > 2 else a.shape[1] + 1
    end = None if wrap or a.ndim > 2 else a.shape[1] * a.shape[1]
    positions = np.arange(a.numel())[:end:step]
    values = as_tensor(val)
    a.flat[positions] = take_at(reshape(values, -1), np.arange(positions.size) % values.numel())


def putmask(a, mask, values) -> None:
    """numpy's ``putmask``: in place, ``a.flat[i] = values.flat[i % values.size]``
    wherever ``mask.flat[i]`` is true.

    >>> import jitgrad as jg
    >>> a = jg.arange(5)
    >>> jg.putmask(a, a > 1, jg.tensor([10, 20]))
    >>> a.tolist()
    [0, 1, 10, 20, 10]
    """
    _put_masked(a, mask, values, "putmask", by_position=True)


def _put_masked(a, mask, values, who: str, by_position: bool) -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"{who}: the target must be a jitgrad tensor, got {type(a).__name__}")
    mask = np.asarray(_array(mask), dtype=bool)
    if mask.size != a.numel():
        raise ValueError(
            f"{who}: mask of shape {mask.shape} and data of shape {a.shape} must be the same size"
        )
    mask = mask.reshape(a.shape)
    values = reshape(as_tensor(values), -1)
    picked = np.flatnonzero(mask) if by_position else np.arange(np.count_nonzero(mask))
    if values.numel() == 0:
        if picked.size:
            raise ValueError(f"{who}: cannot insert from an empty array")
        return
    a[mask] = take_at(values, picked % values.numel())


def choose(a, choices, out=None, mode="raise") -> Tensor:
    """numpy's ``choose``: at each position, the element of ``choices[a]`` there (``a``
    and every choice broadcast together). Differentiable in the choices.

    >>> import jitgrad as jg
    >>> jg.choose(jg.tensor([0, 1, 0]), [jg.tensor([1, 2, 3]), 10]).tolist()
    [1, 10, 3]
    """
    idx = _index_array(a, "choose")
    if isinstance(choices, TensorBase):
        choices = [basic_index(choices, i) for i in range(choices.shape[0])]
    options = [as_tensor(c) for c in choices]
    if not options:
        raise ValueError("choose: choices must not be empty")
    if mode == "raise":
        run(_check_choices, idx, len(options))
    else:
        idx = _in_range(idx, len(options), mode, "choose")
    shape = layout.broadcast_shapes(idx.shape, *(c.shape for c in options))
    dtype = dtypes.result_type(*options)
    stacked = stack([broadcast_to(astype(c, dtype, copy=False), shape) for c in options])
    picked = _take_along(stacked, np.broadcast_to(idx, shape)[np.newaxis], 0, who="choose")
    return write_out(out, reshape(picked, shape))


def _check_choices(idx: np.ndarray, n: int) -> None:
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise ValueError(f"choose: invalid entry {bad} in the choice array, with {n} choices")


def compress(condition, a, axis=None, out=None) -> Tensor:
    """numpy's ``compress``: the slices of ``a`` along ``axis`` (of the flattened ``a``
    for ``axis=None``) where the 1-D ``condition`` is true. Differentiable.

    >>> import jitgrad as jg
    >>> jg.compress([False, True], jg.tensor([[1, 2], [3, 4]]), axis=0).tolist()
    [[3, 4]]
    """
    condition = _array(condition)
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got shape {condition.shape}")
    return write_out(out, take_at(a, compute(np.flatnonzero, condition), axis))


def extract(condition, arr) -> Tensor:
    """numpy's ``extract``: the elements of the flattened ``arr`` where the flattened
    ``condition`` is nonzero. Differentiable.

    >>> import jitgrad as jg
    >>> x = jg.arange(6).reshape(2, 3)
    >>> jg.extract(x % 2 == 0, x).tolist()
    [0, 2, 4]
    """
    return compress(_array(condition).reshape(-1), arr)


def select(condlist, choicelist, default=0) -> Tensor:
    """numpy's ``select``: at each position, the element of the choice whose condition
    is the first true one there, else ``default`` (all broadcast together).
    Differentiable in the choices and ``default``.

    >>> import jitgrad as jg
    >>> x = jg.arange(5)
    >>> jg.select([x < 2, x > 3], [x, x * 10], default=-1).tolist()
    [0, 1, -1, -1, 40]
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"select: {len(choicelist)} choices for {len(condlist)} conditions; the lists of "
            "cases and conditions must have the same length"
        )
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    conditions = [as_tensor(c) for c in condlist]
    for i, c in enumerate(conditions):
        if c.dtype is not dtypes.bool_:
            raise TypeError(
                f"select: invalid entry {i} in condlist: should be a boolean tensor, got "
                f"{c.dtype.name}"
            )
    # numpy's rule: the choices are arrays (strong), a Python scalar default is weak.
    weak_default = default if isinstance(default, (bool, int, float, complex)) else _array(default)
    dtype = np.result_type(np.result_type(*(_array(c) for c in choicelist)), weak_default)
    dtype = dtypes.from_numpy_dtype(dtype)
    result = astype(as_tensor(default), dtype, copy=False)
    for condition, choice in zip(reversed(conditions), reversed(choicelist), strict=True):
        result = ew.where(condition, astype(as_tensor(choice), dtype, copy=False), result)
    shape = layout.broadcast_shapes(*(t.shape for t in (*conditions, result)))
    return broadcast_to(astype(result, dtype, copy=False), shape)


def piecewise(x, condlist, funclist, *args, **kw) -> Tensor:
    """numpy's ``piecewise``: ``x``'s dtype and shape, holding ``funclist[i](x[cond])``
    (or the constant ``funclist[i]``) where ``condlist[i]`` is true, zeros elsewhere; one
    function more than conditions applies where none is true. Differentiable through the
    functions.

    >>> import jitgrad as jg
    >>> x = jg.tensor([-2.0, -1.0, 1.0, 2.0])
    >>> jg.piecewise(x, [x < 0, x > 0], [lambda v: -v, lambda v: v * 10]).tolist()
    [2.0, 1.0, 10.0, 20.0]
    """
    x = as_tensor(x)
    n_funcs = len(funclist)
    if isinstance(condlist, TensorBase):
        condlist = TensorBase.numpy(condlist)
    # numpy's rule: a single condition (not a list of them) is a list of one.
    if np.isscalar(condlist) or (
        not isinstance(condlist[0], (list, np.ndarray, TensorBase)) and x.ndim != 0
    ):
        condlist = [condlist]
    conditions = np.asarray([_array(c) for c in condlist], dtype=bool)
    n = len(conditions)
    if n == n_funcs - 1:  # the last function applies where no condition holds
        otherwise = ~np.any(conditions, axis=0, keepdims=True)
        conditions = np.concatenate([conditions, otherwise], axis=0)
    elif n != n_funcs:
        raise ValueError(
            f"piecewise: with {n} condition(s), either {n} or {n + 1} functions are expected, "
            f"got {n_funcs}"
        )
    y = zeros(x.shape, dtype=x.dtype)
    for condition, func in zip(conditions, funclist, strict=True):
        if not callable(func):
            value = func
        else:
            picked = advanced_index(x, condition)
            if picked.numel() == 0:
                continue
            value = func(picked, *args, **kw)
        y = index_put(y, condition, astype(as_tensor(value), x.dtype, copy=False))
    return y


# -- Tensor methods ---------------------------------------------------------------------------

METHODS = {
    "take": take,
    "put": put,
    "choose": choose,
    "compress": lambda self, condition, axis=None, out=None: compress(condition, self, axis, out),
}

for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
del _name, _method

__all__ = [
    "take",
    "put",
    "place",
    "putmask",
    "fill_diagonal",
    "choose",
    "compress",
    "extract",
    "select",
    "piecewise",
]
