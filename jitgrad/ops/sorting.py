"""Sorting and searching: numpy's functions, computed by numpy's own routines.

Orders, positions and counts (``argsort``, ``searchsorted``, ``nonzero``...) are integer
tensors that carry no gradient. Results that are input values moved to new places
(``sort``, ``partition``) are ``take_along_axis`` of the input at the positions numpy's
routine chose, so their gradient flows back to the elements they came from.

Every index array is recorded (``compute_all``): a ``jg.jit`` replay recomputes it
from that call's values, and fails loudly when its shape changed.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from ..autograd.function import records_nothing
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, compute_all
from ..strided import layout
from ..tensor import TensorBase
from .indexing import _take_along
from .movement import reshape, write_through
from .numpy_data import also_for_numpy_data
from .numpy_tier import tensor_over


def _array(value) -> np.ndarray:
    """The numpy array a tensor shares memory with; other values as numpy reads them."""
    return TensorBase.numpy(value) if isinstance(value, TensorBase) else np.asarray(value)


def along_axis(x: Tensor, axis) -> tuple[Tensor, int]:
    """``x`` and the non-negative axis to work along; ``axis=None`` is the flattened
    ``x``'s only axis (numpy's rule for sort, argsort, partition, take...)."""
    if axis is None:
        return reshape(x, -1), 0
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"an axis must be an integer, not a bool: got {axis!r}")
    if x.ndim == 0:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for a 0-d tensor")
    return x, layout.normalize_dim(axis, x.ndim)


def _no_fields(order) -> None:
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


def _argsort(a, axis, kind, stable, descending):
    if not descending:
        return np.argsort(a, axis=axis, kind=kind, stable=stable)
    # Ascending positions in the flipped array, flipped back: largest first, equal values
    # kept in their input order (the Array API's stable descending sort), NaN first.
    flipped = np.argsort(np.flip(a, axis), axis=axis, kind=kind, stable=stable)
    return np.flip(a.shape[axis] - 1 - flipped, axis)


class SortResult(NamedTuple):
    """PyTorch's result of ``sort(x, dim=...)``."""

    values: Tensor
    indices: Tensor


@also_for_numpy_data
def argsort(
    a, /, axis=-1, kind=None, order=None, *, stable=None, descending: bool = False, dim=None
) -> Tensor:
    """The int64 positions that sort ``a`` along ``axis`` (numpy's ``argsort``; NaN
    last). ``descending=True`` (Array API, PyTorch) gives largest first, NaN first;
    ``dim=`` is PyTorch's spelling of ``axis=``.

    >>> import jitgrad as jg
    >>> jg.argsort(jg.tensor([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    >>> jg.argsort(jg.tensor([3.0, 1.0, 2.0]), descending=True).tolist()
    [0, 2, 1]
    """
    _no_fields(order)
    x, axis = along_axis(as_tensor(a), axis if dim is None else dim)
    sort_order = partial(_argsort, axis=axis, kind=kind, stable=stable, descending=descending)
    return tensor_over(compute(sort_order, x.numpy()))


@also_for_numpy_data
def sort(a, /, axis=-1, kind=None, order=None, *, stable=None, descending: bool = False, dim=None):
    """``a`` sorted along ``axis`` (numpy's ``sort``: NaN last; ``axis=None`` sorts the
    flattened tensor). Differentiable: each element's gradient goes back to where it came
    from. ``descending=True`` (Array API) sorts largest first. With PyTorch's ``dim=``,
    PyTorch's result: the named tuple ``(values, indices)``.

    >>> import jitgrad as jg
    >>> x = jg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> y = jg.sort(x)
    >>> y.tolist()
    [1.0, 2.0, 3.0]
    >>> (y * jg.tensor([1.0, 10.0, 100.0])).sum().backward()
    >>> x.grad.tolist()
    [100.0, 1.0, 10.0]
    >>> jg.sort(jg.tensor([[2, 1]]), dim=1).indices.tolist()
    [[1, 0]]
    """
    _no_fields(order)
    x, axis = along_axis(as_tensor(a), axis if dim is None else dim)
    if dim is None and not descending and records_nothing(x):  # numpy's sort, one call
        return tensor_over(np.sort(x.numpy(), axis=axis, kind=kind, stable=stable))
    indices = argsort(x, axis, kind, stable=stable, descending=descending)
    values = _take_along(x, indices.numpy(), axis)
    return values if dim is None else SortResult(values, indices)


@also_for_numpy_data
def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """numpy's ``argpartition``: int64 positions putting the ``kth`` element(s) of ``a``
    where a sort would, smaller ones before and larger ones after, in no given order.

    >>> import jitgrad as jg
    >>> x = jg.tensor([5, 1, 4, 2, 3])
    >>> x[jg.argpartition(x, 2)][2].item()
    3
    """
    _no_fields(order)
    x, axis = along_axis(as_tensor(a), axis)
    find = partial(np.argpartition, kth=_array(kth), axis=axis, kind=kind)
    return tensor_over(compute(find, x.numpy()))


def _partition_positions(a, kth, axis, kind):
    """Positions of ``a``'s elements in numpy's ``partition(a, kth)``, which may arrange
    equal and unordered elements unlike ``argpartition``: the n-th smallest element of
    the input goes where the n-th smallest of the partition is."""
    parted = np.partition(a, kth, axis=axis, kind=kind)
    where_sorted = np.argsort(parted, axis=axis, kind="stable")
    positions = np.empty(a.shape, np.intp)
    np.put_along_axis(positions, where_sorted, np.argsort(a, axis=axis, kind="stable"), axis)
    return positions


@also_for_numpy_data
def partition(a, kth, axis=-1, kind="introselect", order=None) -> Tensor:
    """numpy's ``partition``: the ``kth`` element(s) where a sort would put them, smaller
    ones before, larger after (the same arrangement as numpy's). Differentiable.

    >>> import jitgrad as jg
    >>> jg.partition(jg.tensor([5, 1, 4, 2, 3]), 2)[2].item()
    3
    """
    _no_fields(order)
    x, axis = along_axis(as_tensor(a), axis)
    find = partial(_partition_positions, kth=_array(kth), axis=axis, kind=kind)
    return _take_along(x, compute(find, x.numpy()), axis)


def lexsort(keys, axis=-1) -> Tensor:
    """numpy's ``lexsort``: int64 positions sorting by the last key, ties broken by the
    one before it, and so on (``keys`` a sequence of tensors or a 2-D tensor's rows).

    >>> import jitgrad as jg
    >>> jg.lexsort([jg.tensor([1, 2, 3]), jg.tensor([0, 1, 0])]).tolist()
    [0, 2, 1]
    """
    if isinstance(keys, (TensorBase, np.ndarray)):
        return tensor_over(compute(partial(np.lexsort, axis=axis), _array(keys)))
    arrays = [_array(k) for k in keys]
    return tensor_over(compute(lambda *ks: np.lexsort(ks, axis=axis), *arrays))


def _searchsorted(a, v, sorter=None, *, side):
    return np.searchsorted(a, v, side=side, sorter=sorter).astype(np.int64, copy=False)


@also_for_numpy_data
def searchsorted(a, /, v, side="left", sorter=None) -> Tensor:
    """numpy's ``searchsorted``: int64 positions at which inserting ``v`` keeps the 1-D
    ``a`` sorted (``side="right"`` after equal elements; ``sorter`` the positions that
    sort ``a``). A scalar ``v`` gives a 0-d tensor.

    >>> import jitgrad as jg
    >>> jg.searchsorted(jg.tensor([1, 2, 2, 3]), jg.tensor([2, 5])).tolist()
    [1, 4]
    >>> jg.searchsorted(jg.tensor([1, 2, 2, 3]), 2, side="right").item()
    3
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    arrays = (_array(a), _array(v)) + (() if sorter is None else (_array(sorter),))
    return tensor_over(compute(partial(_searchsorted, side=side), *arrays))


def nonzero(a, /, *, as_tuple: bool | None = None):
    """numpy's ``nonzero``: a tuple of int64 tensors, one per dimension, of the positions
    of the nonzero elements. PyTorch's ``as_tuple=False`` gives its ``(n, ndim)`` tensor
    instead (``argwhere``); ``as_tuple=True`` is numpy's tuple.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.nonzero(jg.tensor([[0, 1], [2, 0]]))]
    [[0, 1], [1, 0]]
    >>> jg.nonzero(jg.tensor([[0, 1], [2, 0]]), as_tuple=False).tolist()
    [[0, 1], [1, 0]]
    """
    if as_tuple is False:
        return argwhere(a)
    return tuple(tensor_over(i) for i in compute_all(np.nonzero, _array(as_tensor(a))))


def flatnonzero(a) -> Tensor:
    """numpy's ``flatnonzero``: int64 positions of the nonzero elements of the flattened
    tensor.

    >>> import jitgrad as jg
    >>> jg.flatnonzero(jg.tensor([[0, 1], [2, 0]])).tolist()
    [1, 2]
    """
    return tensor_over(compute(np.flatnonzero, _array(as_tensor(a))))


def argwhere(a) -> Tensor:
    """numpy's ``argwhere``: the ``(n, ndim)`` int64 tensor of the nonzero elements'
    positions, one row each.

    >>> import jitgrad as jg
    >>> jg.argwhere(jg.tensor([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    return tensor_over(compute(np.argwhere, _array(as_tensor(a))))


def count_nonzero(a, /, axis=None, *, keepdims: bool = False) -> Tensor:
    """numpy's ``count_nonzero``: the int64 number of nonzero elements (a 0-d tensor for
    ``axis=None``), or per position along the other axes.

    >>> import jitgrad as jg
    >>> jg.count_nonzero(jg.tensor([[0, 1], [2, 3]])).item()
    3
    >>> jg.count_nonzero(jg.tensor([[0, 1], [2, 3]]), axis=0).tolist()
    [1, 2]
    """
    count = partial(np.count_nonzero, axis=axis, keepdims=keepdims)
    return tensor_over(compute(lambda x: np.asarray(count(x), np.int64), _array(as_tensor(a))))


# -- Tensor methods ---------------------------------------------------------------------------


def _in_place(t: Tensor, result_of) -> None:
    """Overwrite ``t`` with ``result_of(t)``: recorded when gradients flow (as ``x += 1``
    is), else a raw write."""
    if t._check_inplace(False):
        write_through(t, result_of(t))
        return
    with no_grad():
        result = result_of(t.detach())
    TensorBase.copy_(t, result)


def _sort_method(self, axis=-1, kind=None, order=None, *, stable=None, dim=None, descending=None):
    """numpy's ``t.sort(axis)``: sorts ``t`` in place and returns None. PyTorch's
    ``t.sort(dim=..., descending=...)`` (either keyword given) returns ``(values,
    indices)`` and leaves ``t`` as it is."""
    if dim is not None or descending is not None:
        dim = axis if dim is None else dim
        return sort(self, kind=kind, stable=stable, descending=bool(descending), dim=dim)
    _in_place(self, partial(sort, axis=axis, kind=kind, order=order, stable=stable))
    return None


def _partition_method(self, kth, axis=-1, kind="introselect", order=None) -> None:
    """numpy's ``t.partition(kth)``: partitions ``t`` in place and returns None."""
    _in_place(self, partial(partition, kth=kth, axis=axis, kind=kind, order=order))


def _nonzero_method(self, *, as_tuple: bool | None = None):
    """numpy's ``t.nonzero()``: a tuple of int64 tensors, one per dimension; PyTorch's
    ``as_tuple=False`` gives its ``(n, ndim)`` tensor."""
    return nonzero(self, as_tuple=as_tuple)


METHODS = {
    "sort": _sort_method,
    "argsort": argsort,
    "partition": _partition_method,
    "argpartition": argpartition,
    "searchsorted": searchsorted,
    "nonzero": _nonzero_method,
}

for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
del _name, _method

__all__ = [
    "sort",
    "argsort",
    "partition",
    "argpartition",
    "lexsort",
    "searchsorted",
    "nonzero",
    "flatnonzero",
    "argwhere",
    "count_nonzero",
]
