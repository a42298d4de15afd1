"""numpy's shape-manipulation functions, built from the differentiable views and joins of
``movement`` and the gathers of ``indexing``: gradients come free, and a result is a view
of its input where numpy's is (``ravel`` of a contiguous tensor, ``moveaxis``, ``rot90``,
``atleast_2d``, the pieces of ``array_split``), a new tensor where numpy's is a copy.

>>> import jitgrad as jg
>>> x = jg.arange(6.0).reshape(2, 3)
>>> jg.hstack([x, x]).shape, jg.vstack([x, x]).shape, jg.dstack([x, x]).shape
((2, 6), (4, 3), (2, 3, 2))
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import dtypes
from ..autograd.function import records_nothing
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute
from ..strided import layout
from ..tensor import TensorBase
from . import numpy_tier
from .elementwise import where
from .indexing import advanced_index, split, split_views
from .movement import (
    Unview,
    astype,
    basic_index,
    broadcast_to,
    clone,
    concatenate,
    diagonal,
    flatten,
    flip,
    permute,
    reshape,
)
from .numpy_tier import tensor_over
from .torch_keywords import torch_keywords

# -- numpy's joins ---------------------------------------------------------------------------


def _sequence(arrays, who: str) -> list:
    """The arrays of a join as a list; numpy 2 refuses generators and bare arrays."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(
            f"{who}: arrays to stack must be passed as a sequence (a list or tuple), got "
            f"{type(arrays).__name__}"
        )
    return [as_tensor(a) for a in arrays]


def _joined(arrays: list, axis, dtype, casting: str) -> Tensor:
    """numpy's ``concatenate`` with ``dtype=`` and ``casting=``: each input cast to ``dtype``
    under the ``casting`` rule."""
    if dtype is not None:
        d = dtypes.as_dtype(dtype)
        for a in arrays:
            if not np.can_cast(a.dtype.numpy, d.numpy, casting):
                raise TypeError(
                    f"cannot cast a {a.dtype.name} array to {d.name} under the rule {casting!r}"
                )
        arrays = [astype(a, d, copy=False) for a in arrays]
    return concatenate(arrays, axis)


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """The Array API's ``concat``: numpy's ``concatenate``.

    >>> import jitgrad as jg
    >>> jg.concat([jg.zeros((1, 2)), jg.ones((2, 2))]).tolist()
    [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
    """
    return concatenate(arrays, axis)


def atleast_1d(*arys):
    """Each input with at least one dimension (a view): one tensor for one input, else a
    tuple, as in numpy.

    >>> import jitgrad as jg
    >>> jg.atleast_1d(3.0).shape, [t.shape for t in jg.atleast_1d(1, [2, 3])]
    ((1,), [(1,), (2,)])
    """
    return _each(arys, lambda t: reshape(t, 1) if t.ndim == 0 else t)


def atleast_2d(*arys):
    """Each input with at least two dimensions: 1-d ``(n,)`` becomes ``(1, n)``.

    >>> import jitgrad as jg
    >>> jg.atleast_2d([1, 2]).shape
    (1, 2)
    """
    return _each(arys, lambda t: reshape(t, (1,) * (2 - t.ndim) + t.shape) if t.ndim < 2 else t)


def atleast_3d(*arys):
    """Each input with at least three dimensions: ``(n,)`` becomes ``(1, n, 1)``, ``(m, n)``
    becomes ``(m, n, 1)``, as in numpy.

    >>> import jitgrad as jg
    >>> jg.atleast_3d([1, 2]).shape, jg.atleast_3d([[1, 2]]).shape
    ((1, 2, 1), (1, 2, 1))
    """

    def three(t):
        if t.ndim == 0:
            return reshape(t, (1, 1, 1))
        if t.ndim == 1:
            return reshape(t, (1, t.shape[0], 1))
        return reshape(t, t.shape + (1,)) if t.ndim == 2 else t

    return _each(arys, three)


def _each(arys, fn):
    results = tuple(fn(as_tensor(a)) for a in arys)
    return results[0] if len(results) == 1 else results


def hstack(tup, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """Join along the second axis (the first for 1-d inputs).

    >>> import jitgrad as jg
    >>> jg.hstack([jg.tensor([1, 2]), jg.tensor([3])]).tolist()
    [1, 2, 3]
    """
    arrays = [atleast_1d(a) for a in _sequence(tup, "hstack")]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return _joined(arrays, axis, dtype, casting)


def vstack(tup, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """Join along the first axis, 1-d inputs as rows.

    >>> import jitgrad as jg
    >>> jg.vstack([jg.tensor([1, 2]), jg.tensor([3, 4])]).tolist()
    [[1, 2], [3, 4]]
    """
    arrays = [atleast_2d(a) for a in _sequence(tup, "vstack")]
    return _joined(arrays, 0, dtype, casting)


def row_stack(tup, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """``vstack`` under numpy's deprecated name (with numpy's DeprecationWarning)."""
    warnings.warn(
        "`row_stack` alias is deprecated. Use `vstack` directly.", DeprecationWarning, stacklevel=2
    )
    return vstack(tup, dtype=dtype, casting=casting)


def dstack(tup) -> Tensor:
    """Join along the third axis, after ``atleast_3d``.

    >>> import jitgrad as jg
    >>> jg.dstack([jg.tensor([1, 2]), jg.tensor([3, 4])]).tolist()
    [[[1, 3], [2, 4]]]
    """
    return concatenate([atleast_3d(a) for a in _sequence(tup, "dstack")], 2)


def column_stack(tup) -> Tensor:
    """Join 1-d inputs as columns (and 2-d ones as they are) along the second axis.

    >>> import jitgrad as jg
    >>> jg.column_stack([jg.tensor([1, 2]), jg.tensor([3, 4])]).tolist()
    [[1, 3], [2, 4]]
    """
    arrays = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in _sequence(tup, "column_stack")]
    return concatenate(arrays, 1)


def block(arrays) -> Tensor:
    """Assemble a tensor from nested lists of blocks (numpy's ``block``): the innermost
    lists join along the last axis, the next ones along the one before, and so on.

    >>> import jitgrad as jg
    >>> a, b = jg.ones((2, 2)), jg.zeros((2, 1))
    >>> jg.block([[a, b], [jg.zeros((1, 3))]]).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    leaves: list = []
    depth = _block_depth(arrays, "arrays", leaves)
    ndim = max([depth, *(as_tensor(leaf).ndim for leaf in leaves)])

    def build(item, level: int) -> Tensor:
        if level == depth:
            t = as_tensor(item)
            return reshape(t, (1,) * (ndim - t.ndim) + t.shape)
        return concatenate([build(i, level + 1) for i in item], level - depth)

    result = build(arrays, 0)
    return clone(result) if depth == 0 else result


def _block_depth(item, where_: str, leaves: list) -> int:
    if isinstance(item, tuple):
        raise TypeError(
            f"block: {where_} is a tuple. Only lists can be used to arrange blocks, and "
            "block does not read a tuple as an array"
        )
    if not isinstance(item, list):
        leaves.append(item)
        return 0
    if not item:
        raise ValueError(f"block: list at {where_} cannot be empty")
    depths = {_block_depth(x, f"{where_}[{i}]", leaves) for i, x in enumerate(item)}
    if len(depths) != 1:
        raise ValueError(f"block: list depths are mismatched inside {where_}: {sorted(depths)}")
    return depths.pop() + 1


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The Array API's ``unstack``: views of ``x`` along ``axis``, one per index.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.unstack(jg.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("unstack: the input must have at least one dimension")
    axis = layout.normalize_dim(axis, x.ndim)
    lead = (slice(None),) * axis
    return tuple(basic_index(x, lead + (i,)) for i in range(x.shape[axis]))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` (ints or sequences of ints) broadcast to.

    >>> import jitgrad as jg
    >>> jg.broadcast_shapes((2, 1), (3,), 1)
    (2, 3)
    """
    return layout.broadcast_shapes(*(layout.as_shape(s) for s in shapes))


def broadcast_arrays(*args, subok: bool = False) -> tuple:
    """The tensors broadcast against each other: views (of stride 0 along the broadcast
    axes), as numpy's.

    >>> import jitgrad as jg
    >>> [t.shape for t in jg.broadcast_arrays(jg.zeros((2, 1)), jg.zeros(3))]
    [(2, 3), (2, 3)]
    """
    tensors = [as_tensor(a) for a in args]
    shape = layout.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in tensors)


def append(arr, values, axis: int | None = None) -> Tensor:
    """``values`` joined after ``arr`` along ``axis``; both flattened when it is None.

    >>> import jitgrad as jg
    >>> jg.append(jg.tensor([[1, 2]]), [3, 4]).tolist()
    [1, 2, 3, 4]
    """
    arr, values = as_tensor(arr), as_tensor(values)
    if axis is None:
        arr, values, axis = reshape(arr, -1), reshape(values, -1), 0
    return concatenate([arr, values], axis)


# -- numpy's splits --------------------------------------------------------------------------


def array_split(ary, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """``split`` that allows sections of unequal sizes: of ``N`` sections along an axis of
    length ``n``, the first ``n % N`` have one element more. Pieces are views.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.array_split(jg.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    return split_views(ary, indices_or_sections, axis, equal=False)


def hsplit(ary, indices_or_sections) -> list[Tensor]:
    """``split`` along the second axis (the first for 1-d tensors)."""
    ary = as_tensor(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on tensors of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections) -> list[Tensor]:
    """``split`` along the first axis of a tensor of at least 2 dimensions."""
    ary = as_tensor(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on tensors of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections) -> list[Tensor]:
    """``split`` along the third axis of a tensor of at least 3 dimensions."""
    ary = as_tensor(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on tensors of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


# -- axes ------------------------------------------------------------------------------------


def _axes(axis, ndim: int, name: str) -> list[int]:
    axes = [axis] if layout.is_index(axis) else list(axis)
    norm = [layout.normalize_dim(a, ndim) for a in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"repeated axis in `{name}` argument: {axis!r}")
    return norm


def moveaxis(a, /, source, destination) -> Tensor:
    """A view with the axes ``source`` moved to the places ``destination``, the others
    keeping their order.

    >>> import jitgrad as jg
    >>> jg.moveaxis(jg.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = as_tensor(a)
    source = _axes(source, a.ndim, "source")
    destination = _axes(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [d for d in range(a.ndim) if d not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return permute(a, order)


def permute_dims(x, /, axes) -> Tensor:
    """The Array API's ``permute_dims``: numpy's ``transpose`` with its axes given.

    >>> import jitgrad as jg
    >>> jg.permute_dims(jg.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return permute(x, tuple(axes))


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """A view with ``axis`` moved to before position ``start`` (numpy's older spelling of
    ``moveaxis``)."""
    a = as_tensor(a)
    n = a.ndim
    axis = layout.normalize_dim(axis, n)
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise ValueError(f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, got {start}")
    if axis < start:
        start -= 1
    order = [d for d in range(n) if d != axis]
    order.insert(start, axis)
    return permute(a, order)


def ravel(a, order: str = "C") -> Tensor:
    """The elements in one dimension, read in ``order`` ('C' row-major, 'F' column-major,
    'A' column-major for a Fortran-contiguous tensor, 'K' axes in memory order): a view
    when the layout allows, else a copy, as in numpy.

    >>> import jitgrad as jg
    >>> x = jg.tensor([[1, 2], [3, 4]])
    >>> jg.ravel(x).tolist(), jg.ravel(x, "F").tolist(), jg.ravel(x.T, "K").tolist()
    ([1, 2, 3, 4], [1, 3, 2, 4], [1, 2, 3, 4])
    """
    a = as_tensor(a)
    return reshape(memory_ordered(a, order, "ravel"), -1)


def flatten_method(x, start_dim=None, end_dim: int = -1, order: str = "C") -> Tensor:
    """``t.flatten()``: numpy's, a row-major (``order``) copy in one dimension; given
    PyTorch's ``start_dim``/``end_dim``, PyTorch's ``flatten`` (a view when possible).

    >>> import jitgrad as jg
    >>> x = jg.zeros((2, 3, 4))
    >>> x.flatten().shape, x.flatten(1).shape, x.flatten("F").shape
    ((24,), (2, 12), (24,))
    """
    if isinstance(start_dim, str):
        start_dim, order = None, start_dim
    if start_dim is None and end_dim == -1:
        return clone(ravel(x, order))
    return flatten(x, 0 if start_dim is None else start_dim, end_dim)


def memory_ordered(a: Tensor, order: str, who: str) -> Tensor:
    """``a`` as a view whose row-major order is the element order ``order`` names ('K':
    axes by decreasing stride size, each read in its own direction, as numpy's)."""
    axes = storage_axes(a.ndim, order, a, who)
    return a if axes == sorted(axes) else permute(a, axes)


def storage_axes(ndim: int, order, prototype: Tensor | None = None, who: str = "") -> list:
    """The axes from the slowest to the fastest in memory for numpy's ``order``: 'C'
    row-major, 'F' column-major; given a ``prototype``, 'A' (column-major for a Fortran-
    but not C-contiguous prototype) and 'K' (the prototype's own axis order, by stride)."""
    order = "C" if order is None else str(order).upper()
    if order not in ("C", "F", "A", "K") or (prototype is None and order not in ("C", "F")):
        allowed = "'C', 'F', 'A' or 'K'" if prototype is not None else "'C' or 'F'"
        raise ValueError(f"{who or 'order'}: order must be one of {allowed}, got {order!r}")
    c_order = list(range(ndim))
    if order == "C" or ndim < 2 or (prototype is not None and prototype.ndim != ndim):
        return c_order
    if order == "F":
        return c_order[::-1]
    if order == "A":
        fortran = _is_fortran(prototype) and not prototype.is_contiguous()
        return c_order[::-1] if fortran else c_order
    return sorted(c_order, key=lambda d: -abs(prototype.stride()[d]))


def _is_fortran(a: Tensor) -> bool:
    return layout.is_contiguous(a.shape[::-1], a.stride()[::-1])


# -- repetition, rotation, flips -------------------------------------------------------------


def tile(A, /, reps) -> Tensor:
    """``A`` repeated ``reps`` times along each axis (a copy); ``reps`` longer than ``A``'s
    dimensions adds leading axes.

    >>> import jitgrad as jg
    >>> jg.tile(jg.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    reps = (reps,) if layout.is_index(reps) else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    a = as_tensor(A)
    if a.ndim < len(reps):
        a = reshape(a, (1,) * (len(reps) - a.ndim) + a.shape)
    reps = (1,) * (a.ndim - len(reps)) + reps
    spread = reshape(a, tuple(x for n in a.shape for x in (1, n)))
    big = broadcast_to(spread, tuple(x for r, n in zip(reps, a.shape, strict=True) for x in (r, n)))
    out = reshape(big, tuple(r * n for r, n in zip(reps, a.shape, strict=True)))
    return clone(out) if out._storage is a._storage else out


@torch_keywords
def repeat(a, /, repeats, axis: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times (a number, or one per element along
    ``axis``); the flattened tensor when ``axis`` is None. Gradients of the copies add up.

    >>> import jitgrad as jg
    >>> jg.repeat(jg.tensor([[1, 2], [3, 4]]), [1, 2], axis=0).tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    a = as_tensor(a)
    if axis is None:
        a, axis = reshape(a, -1), 0
    axis = layout.normalize_dim(axis, a.ndim)
    if isinstance(repeats, TensorBase):
        repeats = repeats.numpy()
    index = np.repeat(np.arange(a.shape[axis]), repeats)
    return advanced_index(a, (slice(None),) * axis + (index,))


def roll(a, /, shift, axis=None) -> Tensor:
    """Elements shifted by ``shift`` along ``axis`` (ints or matching tuples), those pushed
    off one end coming back at the other: a copy. No axis: the flattened tensor's.

    >>> import jitgrad as jg
    >>> jg.roll(jg.tensor([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    a = as_tensor(a)
    if records_nothing(a):  # numpy's roll, one copy into a new array (that names bad axes)
        return numpy_tier.tensor_of(np.roll(a.numpy(), shift, axis))
    if axis is None:
        return reshape(roll(reshape(a, -1), shift, 0), a.shape)
    totals: dict[int, int] = {}
    for s, ax in np.broadcast(np.asarray(shift), np.asarray(axis)):
        ax = layout.normalize_dim(int(ax), a.ndim)
        totals[ax] = totals.get(ax, 0) + int(s)
    out = a
    for ax, s in totals.items():
        n = a.shape[ax]
        s = s % n if n else 0
        if s:
            lead = (slice(None),) * ax
            out = concatenate(
                [
                    basic_index(out, lead + (slice(n - s, None),)),
                    basic_index(out, lead + (slice(None, n - s),)),
                ],
                ax,
            )
    return clone(out) if out is a else out


def rot90(m, k: int = 1, axes=(0, 1)) -> Tensor:
    """A view of ``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the
    first axis towards the second.

    >>> import jitgrad as jg
    >>> jg.rot90(jg.tensor([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    m = as_tensor(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got {axes}")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError(f"rot90: axes must be different, got {axes}")
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(f"rot90: axes={axes} out of range for a tensor of ndim={m.ndim}")
    k %= 4
    if k == 0:
        return basic_index(m, slice(None))
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return permute(flip(m, axes[1]), order)
    return flip(permute(m, order), axes[1])


def fliplr(m) -> Tensor:
    """A view with the second axis reversed (left-right)."""
    m = as_tensor(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got {m.ndim}-d")
    return basic_index(m, (slice(None), slice(None, None, -1)))


def flipud(m) -> Tensor:
    """A view with the first axis reversed (up-down)."""
    m = as_tensor(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d, got a 0-d tensor")
    return basic_index(m, slice(None, None, -1))


# -- triangles and diagonals -----------------------------------------------------------------


def _triangle_mask(shape, k: int, lower: bool) -> Tensor:
    if len(shape) == 0:
        raise ValueError("tril and triu need at least one dimension, got a 0-d tensor")
    rows, cols = shape[-2:] if len(shape) >= 2 else (shape[-1], shape[-1])
    return tensor_over(np.tri(rows, cols, k if lower else k - 1, dtype=bool))


def tril(m, /, k: int = 0) -> Tensor:
    """The lower triangle of (each matrix of) ``m``: zeros above the ``k``-th diagonal.

    >>> import jitgrad as jg
    >>> jg.tril(jg.ones((2, 3)), 1).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    m = as_tensor(m)
    return where(_triangle_mask(m.shape, k, True), m, as_tensor(np.zeros(1, m.dtype.numpy)))


def triu(m, /, k: int = 0) -> Tensor:
    """The upper triangle of (each matrix of) ``m``: zeros below the ``k``-th diagonal.

    >>> import jitgrad as jg
    >>> jg.triu(jg.ones((2, 3)), 1).tolist()
    [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    m = as_tensor(m)
    return where(_triangle_mask(m.shape, k, False), as_tensor(np.zeros(1, m.dtype.numpy)), m)


def diag(v, k: int = 0) -> Tensor:
    """A 1-d ``v`` on the ``k``-th diagonal of a square matrix of zeros, or the ``k``-th
    diagonal of a 2-d ``v`` (a view).

    >>> import jitgrad as jg
    >>> jg.diag(jg.tensor([1, 2]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    >>> jg.diag(jg.tensor([[1, 2], [3, 4]])).tolist()
    [1, 4]
    """
    v = as_tensor(v)
    k = operator.index(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        return Unview(lambda t: TensorBase.diagonal(t, k), (n, n))(v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: input must be 1- or 2-d, got {v.ndim}-d")


def diagflat(v, k: int = 0) -> Tensor:
    """The flattened ``v`` on the ``k``-th diagonal of a square matrix of zeros."""
    return diag(reshape(as_tensor(v), -1), k)


# -- inserting, deleting, resizing -----------------------------------------------------------


def _labels(shape) -> np.ndarray:
    return np.arange(layout.numel(shape), dtype=np.int64).reshape(shape)


def insert(arr, obj, values, axis: int | None = None) -> Tensor:
    """``values`` inserted before the indices ``obj`` along ``axis`` (of the flattened
    ``arr`` when None), cast to ``arr``'s dtype: numpy's ``insert``, with gradients to both.

    >>> import jitgrad as jg
    >>> jg.insert(jg.tensor([1, 2, 3]), 1, [8, 9]).tolist()
    [1, 8, 9, 2, 3]
    """
    arr = as_tensor(arr)
    values = astype(as_tensor(values), arr.dtype, copy=False)
    obj = obj.numpy() if isinstance(obj, TensorBase) else obj
    # numpy places labels of arr's elements (>= 0) and of the values' (< 0); the result
    # gathers from both, flattened and joined.
    where_from = compute(_inserted_labels, arr.shape, obj, values.shape, axis)
    source = concatenate([reshape(arr, -1), reshape(values, -1)])
    return advanced_index(source, where_from)


def _inserted_labels(shape, obj, values_shape, axis) -> np.ndarray:
    labels = np.insert(_labels(shape), obj, -1 - _labels(values_shape), axis)
    return np.where(labels >= 0, labels, layout.numel(shape) - 1 - labels)


def delete(arr, obj, axis: int | None = None) -> Tensor:
    """``arr`` without the entries ``obj`` (indices, a slice or a mask) along ``axis`` (of
    the flattened ``arr`` when None): a copy, as numpy's.

    >>> import jitgrad as jg
    >>> jg.delete(jg.tensor([[1, 2], [3, 4]]), 0, axis=1).tolist()
    [[2], [4]]
    """
    arr = as_tensor(arr)
    obj = obj.numpy() if isinstance(obj, TensorBase) else obj
    kept = compute(lambda: np.delete(_labels(arr.shape), obj, axis))
    return advanced_index(reshape(arr, -1), kept)


def resize(a, new_shape) -> Tensor:
    """A tensor of ``new_shape`` filled with ``a``'s flattened elements, repeated as needed
    (zeros when ``a`` is empty): numpy's ``resize``.

    >>> import jitgrad as jg
    >>> jg.resize(jg.tensor([1, 2, 3]), (2, 4)).tolist()
    [[1, 2, 3, 1], [2, 3, 1, 2]]
    """
    new_shape = (new_shape,) if layout.is_index(new_shape) else tuple(new_shape)
    new_shape = tuple(operator.index(n) for n in new_shape)
    if any(n < 0 for n in new_shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {new_shape}")
    a = reshape(as_tensor(a), -1)
    size = layout.numel(new_shape)
    if a.numel() == 0 or size == 0:
        return as_tensor(np.zeros(new_shape, a.dtype.numpy))
    repeats = -(-size // a.numel())
    flat = concatenate([a] * repeats)
    return reshape(basic_index(flat, slice(0, size)), new_shape)


def trim_zeros(filt, trim: str = "fb", axis=None) -> Tensor:
    """A view of ``filt`` without its leading (``"f"``) and trailing (``"b"``) zeros along
    each of ``axis`` (all axes when None): the bounding box of the nonzero elements.

    >>> import jitgrad as jg
    >>> jg.trim_zeros(jg.tensor([0, 0, 1, 2, 0])).tolist()
    [1, 2]
    """
    filt = as_tensor(filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    axes = range(filt.ndim) if axis is None else _axes(axis, filt.ndim, "axis")
    nonzero = np.argwhere(filt.numpy())
    if nonzero.size == 0:
        start = stop = np.zeros(filt.ndim, dtype=np.intp)
    else:
        start, stop = nonzero.min(axis=0), nonzero.max(axis=0) + 1
    key = tuple(
        slice(
            start[d] if "f" in trim or nonzero.size == 0 else None,
            stop[d] if "b" in trim or nonzero.size == 0 else None,
        )
        if d in axes
        else slice(None)
        for d in range(filt.ndim)
    )
    return basic_index(filt, key)


def copy(a, order: str = "K", subok: bool = False) -> Tensor:
    """A copy of ``a`` (with gradients to ``a``), laid out in ``order``: 'C' row-major,
    'F' column-major, 'K'/'A' as ``a`` is.

    >>> import jitgrad as jg
    >>> jg.copy(jg.ones((2, 3)), order="F").stride()
    (1, 2)
    """
    a = as_tensor(a)
    return laid_out(clone, a, order, "copy")


def copy_method(a, order: str = "C") -> Tensor:
    """``t.copy(order='C')``: numpy's ``ndarray.copy``, row-major unless ``order`` says
    otherwise (the function ``copy`` keeps the layout: its default order is 'K').

    >>> import jitgrad as jg
    >>> jg.ones((2, 3)).T.copy().stride(), jg.ones((2, 3)).T.copy(order="K").stride()
    ((2, 1), (1, 3))
    """
    if order == "C":  # (the default, and row-major: clone's own layout)
        return clone(a)
    return laid_out(clone, as_tensor(a), order, "copy")


def laid_out(copier, a: Tensor, order: str, who: str) -> Tensor:
    """``copier(a)`` (a contiguous copy) in the memory order ``order`` names."""
    axes = storage_axes(a.ndim, "K" if order is None else order, a, who)
    if axes == sorted(axes):
        return copier(a)
    return permute(copier(permute(a, axes)), np.argsort(axes).tolist())


__all__ = [
    "concat",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "hstack",
    "vstack",
    "row_stack",
    "dstack",
    "column_stack",
    "block",
    "unstack",
    "broadcast_shapes",
    "broadcast_arrays",
    "append",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "moveaxis",
    "permute_dims",
    "rollaxis",
    "ravel",
    "tile",
    "repeat",
    "roll",
    "rot90",
    "fliplr",
    "flipud",
    "tril",
    "triu",
    "diag",
    "diagflat",
    "insert",
    "delete",
    "resize",
    "trim_zeros",
    "copy",
]
