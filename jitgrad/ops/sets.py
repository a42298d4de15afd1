"""Unique elements and set operations: numpy's functions, computed by numpy's own
routines.

Values are gathered from the inputs at the positions numpy reports (the first occurrence
of each value), so they are differentiable: the gradient of a unique value goes to its
first occurrence in the input (in ``ar1`` before ``ar2`` for two inputs). Positions,
inverses, counts and membership masks are integer or boolean tensors without gradient.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, compute_all
from .movement import astype, concatenate, reshape
from .numpy_data import also_for_numpy_data
from .numpy_tier import tensor_over
from .selection import compress, take_at
from .sorting import _array, sort


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique_arrays(a, return_index, return_inverse, return_counts, axis, equal_nan, sorted):
    """numpy's ``unique`` outputs with the values replaced by the first position of each
    unique value: ``(first, [index], [inverse], [counts])``."""
    flags = dict(axis=axis, equal_nan=equal_nan)
    parts = np.unique(a, return_index, return_inverse, return_counts, sorted=sorted, **flags)
    if return_index:
        return (parts[1], *parts[1:])
    # The positions come from a second call: asking numpy's for them could change the
    # inverse's order among NaNs that are all distinct (equal_nan=False).
    values = parts[0] if isinstance(parts, tuple) else parts
    ordered, first = np.unique(a, return_index=True, **flags)
    if axis is None:
        # Unsorted values come in numpy's hash table's order: the same values, so sorting
        # them lines them up with the sorted ones, whose first positions we have.
        first = first[np.argsort(np.argsort(values, kind="stable"), kind="stable")]
    return (first, *parts[1:]) if isinstance(parts, tuple) else (first,)


@also_for_numpy_data
def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    sorted=True,  # noqa: A002  numpy's name
):
    """numpy's ``unique``: the distinct elements of ``ar`` (of the flattened ``ar``, or
    the distinct slices along ``axis``), sorted; with the flags, also the int64 first
    positions, the inverse (positions in the result that rebuild ``ar``) and the counts,
    as a tuple in that order. The values are differentiable: each one's gradient goes to
    its first occurrence.

    >>> import jitgrad as jg
    >>> jg.unique(jg.tensor([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    >>> values, counts = jg.unique(jg.tensor([3, 1, 3, 2]), return_counts=True)
    >>> counts.tolist()
    [1, 1, 2]
    """
    x = as_tensor(ar)
    find = partial(
        _unique_arrays,
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
        equal_nan=equal_nan,
        sorted=sorted,
    )
    first, *rest = compute_all(find, x.numpy())
    values = take_at(x, first, axis)
    if not (return_index or return_inverse or return_counts):
        return values
    return (values, *(tensor_over(r) for r in rest))


@also_for_numpy_data
def unique_all(x, /) -> UniqueAllResult:
    """The Array API's ``unique_all``: values, first positions, inverse and counts
    (every NaN distinct).

    >>> import jitgrad as jg
    >>> jg.unique_all(jg.tensor([2, 1, 2])).inverse_indices.tolist()
    [1, 0, 1]
    """
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


@also_for_numpy_data
def unique_counts(x, /) -> UniqueCountsResult:
    """The Array API's ``unique_counts``: values and counts (every NaN distinct).

    >>> import jitgrad as jg
    >>> jg.unique_counts(jg.tensor([2, 1, 2])).counts.tolist()
    [1, 2]
    """
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


@also_for_numpy_data
def unique_inverse(x, /) -> UniqueInverseResult:
    """The Array API's ``unique_inverse``: values and inverse (every NaN distinct).

    >>> import jitgrad as jg
    >>> jg.unique_inverse(jg.tensor([2, 1, 2])).inverse_indices.tolist()
    [1, 0, 1]
    """
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


@also_for_numpy_data
def unique_values(x, /) -> Tensor:
    """The Array API's ``unique_values``: the distinct values (every NaN distinct), in
    numpy's order, which is not necessarily sorted.

    >>> import jitgrad as jg
    >>> sorted(jg.unique_values(jg.tensor([2, 1, 2])).tolist())
    [1, 2]
    """
    return unique(x, equal_nan=False, sorted=False)


@also_for_numpy_data
def isin(element, /, test_elements, assume_unique=False, invert=False, *, kind=None) -> Tensor:
    """numpy's ``isin``: a boolean tensor of ``element``'s shape, true where the element
    is among ``test_elements`` (false with ``invert=True``).

    >>> import jitgrad as jg
    >>> jg.isin(jg.tensor([[1, 2], [3, 4]]), [2, 3]).tolist()
    [[False, True], [True, False]]
    """
    member = partial(np.isin, assume_unique=assume_unique, invert=invert, kind=kind)
    return tensor_over(compute(member, _array(element), _array(test_elements)))


def _flattened(*arrays) -> list[Tensor]:
    return [reshape(as_tensor(a), -1) for a in arrays]


@also_for_numpy_data
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """numpy's ``intersect1d``: the sorted values in both inputs (flattened); with
    ``return_indices``, also their first positions in each. Differentiable through
    ``ar1``'s elements.

    >>> import jitgrad as jg
    >>> jg.intersect1d(jg.tensor([3, 1, 2]), jg.tensor([2, 3, 5])).tolist()
    [2, 3]
    """
    a1, a2 = _flattened(ar1, ar2)
    find = partial(np.intersect1d, assume_unique=assume_unique, return_indices=True)
    _, first1, first2 = compute_all(find, a1.numpy(), a2.numpy())
    values = astype(take_at(a1, first1), dtypes.result_type(a1, a2), copy=False)
    return (values, tensor_over(first1), tensor_over(first2)) if return_indices else values


@also_for_numpy_data
def union1d(ar1, ar2) -> Tensor:
    """numpy's ``union1d``: the sorted distinct values in either input (flattened).

    >>> import jitgrad as jg
    >>> jg.union1d(jg.tensor([3, 1]), jg.tensor([2, 3])).tolist()
    [1, 2, 3]
    """
    return unique(concatenate(_flattened(ar1, ar2)))


@also_for_numpy_data
def setdiff1d(ar1, ar2, assume_unique=False) -> Tensor:
    """numpy's ``setdiff1d``: the distinct values of ``ar1`` that are not in ``ar2``,
    sorted (in ``ar1``'s order with ``assume_unique=True``).

    >>> import jitgrad as jg
    >>> jg.setdiff1d(jg.tensor([4, 1, 3, 1]), jg.tensor([3, 5])).tolist()
    [1, 4]
    """
    if assume_unique:
        (a1,) = _flattened(ar1)
        a2 = _array(ar2)
    else:
        a1, a2 = unique(ar1), compute(np.unique, _array(ar2))
    absent = partial(np.isin, assume_unique=True, invert=True)
    return compress(compute(absent, a1.numpy(), a2), a1)


def _alone(sorted_values):
    """Where a sorted array's value differs from both neighbours."""
    differs = np.concatenate(([True], sorted_values[1:] != sorted_values[:-1], [True]))
    return differs[1:] & differs[:-1]


@also_for_numpy_data
def setxor1d(ar1, ar2, assume_unique=False) -> Tensor:
    """numpy's ``setxor1d``: the sorted values in exactly one of the inputs.

    >>> import jitgrad as jg
    >>> jg.setxor1d(jg.tensor([1, 2, 3]), jg.tensor([2, 3, 4])).tolist()
    [1, 4]
    """
    both = _flattened(ar1, ar2) if assume_unique else [unique(ar1), unique(ar2)]
    values = sort(concatenate(both))
    if values.numel() == 0:
        return values
    return compress(compute(_alone, values.numpy()), values)


__all__ = [
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "isin",
    "intersect1d",
    "union1d",
    "setdiff1d",
    "setxor1d",
]
