"""numpy's index tricks and helpers over tensors: ``r_``/``c_`` concatenation by slice
notation, index builders (``ix_``, ``tril_indices``, ...), in-place writes (``copyto``,
``put_along_axis``) and the function appliers (``apply_along_axis``, ``vectorize``).

Indices come from numpy's own routines (int64 tensors); concatenation, writes and the
appliers compose jitgrad ops, so gradients flow through them.

>>> import jitgrad as jg
>>> jg.r_[1:4, 0, [5, 6]].tolist()
[1, 2, 3, 0, 5, 6]
>>> jg.c_[jg.tensor([1, 2]), jg.tensor([3, 4])].tolist()
[[1, 3], [2, 4]]
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd.tensor import Tensor, as_tensor
from .creation import arange, array, linspace
from .ops import movement, shaping
from .ops.indexing import _index_array
from .ops.numpy_tier import tensor_over
from .ops.ufunc import _write
from .strided import layout
from .tensor import TensorBase

# numpy's slice-object builders: plain keys, nothing to compute.
s_, index_exp = np.s_, np.index_exp
ndindex = np.ndindex
# numpy's own: its ufuncs of Python functions give object arrays, which tensors cannot hold.
frompyfunc = np.frompyfunc


def _values(x):
    """A tensor's values as numpy's array (shared memory); anything else as it is."""
    return TensorBase.numpy(x) if isinstance(x, TensorBase) else x


class AxisConcatenator:
    """numpy's ``AxisConcatenator``: ``r_`` and ``c_`` turn the items of an index into
    tensors and concatenate them along ``axis``. ``start:stop:step`` is ``arange``,
    ``start:stop:Nj`` is ``linspace`` with N points; a first item ``'axis'``,
    ``'axis,ndmin'`` or ``'axis,ndmin,trans1d'`` sets how items are joined, and ``'r'`` or
    ``'c'`` asks for a 2-D row or column (numpy's matrix, a 2-D tensor here)."""

    def __init__(self, axis: int = 0, matrix: bool = False, ndmin: int = 1, trans1d: int = -1):
        self.axis, self.matrix, self.ndmin, self.trans1d = axis, matrix, ndmin, trans1d

    def __getitem__(self, key):
        if isinstance(key, str):
            raise ValueError("jitgrad has no matrix type: the string (bmat) form is not supported")
        key = key if isinstance(key, tuple) else (key,)
        axis, matrix, ndmin, trans1d = self.axis, self.matrix, self.ndmin, self.trans1d
        column = False
        objs, typed = [], []  # typed: dtypes, and Python scalars (weak, as numpy's)
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):
                    matrix, column = True, item == "c"
                    continue
                try:
                    numbers = [int(x) for x in item.split(",")]
                except ValueError:
                    raise ValueError(f"unknown special directive {item!r}") from None
                if len(numbers) > 3:
                    raise ValueError(f"unknown special directive {item!r}")
                axis = numbers[0]
                if len(numbers) > 1:
                    ndmin = numbers[1]
                if len(numbers) > 2:
                    trans1d = numbers[2]
                continue
            if isinstance(item, slice):
                obj = _slice_values(item)
                if ndmin > 1:
                    obj = array(obj, copy=None, ndmin=ndmin)
                    if trans1d != -1:
                        obj = movement.swapaxes(obj, -1, trans1d)
                typed.append(obj.dtype)
            elif type(item) in np.ScalarType or isinstance(item, np.generic):
                obj = item
                typed.append(item)
            else:
                item_ndim = np.ndim(_values(item))
                obj = array(item, copy=None, ndmin=ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k1, k2 = trans1d, ndmin - item_ndim
                    if k1 < 0:
                        k1 += k2 + 1
                    axes = list(range(ndmin))
                    obj = movement.transpose(obj, axes[:k1] + axes[k2:] + axes[k1:k2])
                typed.append(obj.dtype)
            objs.append(obj)
        if typed:
            final = dtypes.result_type(*typed)
            objs = [array(obj, copy=None, ndmin=ndmin, dtype=final) for obj in objs]
        result = movement.concatenate(objs, axis)
        if matrix:
            result = shaping.atleast_2d(result)
            if column and result.shape[0] == 1:
                result = result.T
        return result

    def __len__(self) -> int:
        return 0


def _slice_values(item: slice) -> Tensor:
    start = 0 if item.start is None else _item(item.start)
    stop, step = _item(item.stop), 1 if item.step is None else _item(item.step)
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, stop, num=int(abs(step)))
    return arange(start, stop, step)


def _item(value):
    return value.item() if isinstance(value, TensorBase) else value


class RClass(AxisConcatenator):
    """``r_[...]``: items concatenated along the first axis (numpy's ``r_``).

    >>> import jitgrad as jg
    >>> jg.r_[0:1:3j, 9.0].tolist(), jg.r_["0,2", [1, 2], [3, 4]].tolist()
    ([0.0, 0.5, 1.0, 9.0], [[1, 2], [3, 4]])
    """

    def __init__(self):
        super().__init__(0)

    def __repr__(self) -> str:
        return "jitgrad.r_"


class CClass(AxisConcatenator):
    """``c_[...]``: items as columns (1-D ones of at least two dimensions), concatenated
    along the last axis (numpy's ``c_``).

    >>> import jitgrad as jg
    >>> jg.c_[jg.tensor([[1, 2]]), 0, 0, jg.tensor([[3]])].tolist()
    [[1, 2, 0, 0, 3]]
    """

    def __init__(self):
        super().__init__(-1, ndmin=2, trans1d=0)

    def __repr__(self) -> str:
        return "jitgrad.c_"


r_, c_ = RClass(), CClass()


def ix_(*args) -> tuple:
    """An open mesh of index tensors from 1-D sequences (bools: their ``nonzero``), numpy's
    ``ix_``: ``a[jg.ix_(rows, cols)]`` picks the cross product.

    >>> import jitgrad as jg
    >>> [t.shape for t in jg.ix_([0, 1], [2, 4, 5])]
    [(2, 1), (1, 3)]
    """
    return tuple(tensor_over(v) for v in np.ix_(*(_values(a) for a in args)))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """The row and column indices of the lower triangle of an (n, m) array, numpy's.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.tril_indices(3, -1)]
    [[1, 2, 2], [0, 0, 1]]
    """
    return tuple(map(tensor_over, np.tril_indices(n, k, m)))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """The row and column indices of the upper triangle of an (n, m) array, numpy's.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.triu_indices(3, 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    return tuple(map(tensor_over, np.triu_indices(n, k, m)))


def _square_shape(arr, who: str) -> tuple:
    shape = np.shape(_values(arr))
    if len(shape) != 2:
        raise ValueError(f"{who}: input array must be 2-d, got {len(shape)}-d")
    return shape


def tril_indices_from(arr, k: int = 0) -> tuple:
    """``tril_indices`` for the 2-D ``arr``'s shape.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.tril_indices_from(jg.zeros((2, 3)))]
    [[0, 1, 1], [0, 0, 1]]
    """
    n, m = _square_shape(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k: int = 0) -> tuple:
    """``triu_indices`` for the 2-D ``arr``'s shape.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.triu_indices_from(jg.zeros((2, 3)), 1)]
    [[0, 0, 1], [1, 2, 2]]
    """
    n, m = _square_shape(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """``ndim`` copies of ``arange(n)``: the main diagonal's indices of an (n,)*ndim array.

    >>> import jitgrad as jg
    >>> a = jg.zeros((3, 3)); a[jg.diag_indices(3)] = 1.0; a.tolist()[1]
    [0.0, 1.0, 0.0]
    """
    return tuple(map(tensor_over, np.diag_indices(n, ndim)))


def diag_indices_from(arr) -> tuple:
    """``diag_indices`` of ``arr``, whose sides must all be equal (at least 2-D).

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.diag_indices_from(jg.zeros((2, 2)))]
    [[0, 1], [0, 1]]
    """
    return tuple(map(tensor_over, np.diag_indices_from(np.broadcast_to(0, np.shape(_values(arr))))))


def mask_indices(n: int, mask_func, k=0) -> tuple:
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (``mask_func`` such as
    ``jg.triu``), numpy's ``mask_indices``.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.mask_indices(2, jg.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    from .creation import ones

    mask = mask_func(ones((n, n), dtype=int), k)
    return tuple(map(tensor_over, np.nonzero(np.asarray(_values(mask)))))


class ndenumerate:  # noqa: N801  numpy's name
    """(index, value) for every element of ``arr`` in C order, values numpy's scalars, as
    numpy's ``ndenumerate``.

    >>> import jitgrad as jg
    >>> [(i, int(v)) for i, v in jg.ndenumerate(jg.tensor([[1, 2]]))]
    [((0, 0), 1), ((0, 1), 2)]
    """

    def __init__(self, arr):
        self._iter = np.ndenumerate(_values(arr))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._iter)


def put_along_axis(arr, indices, values, axis) -> None:
    """Write ``values`` into ``arr`` at ``indices`` along ``axis`` (``None``: the
    flattened ``arr``, 1-D indices), in place: numpy's ``put_along_axis``. The write is
    recorded for gradients as ``arr[key] = values`` is.

    >>> import jitgrad as jg
    >>> a = jg.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> jg.put_along_axis(a, jg.argmax(a, axis=1, keepdims=True), 0.0, axis=1); a.tolist()
    [[10.0, 0.0, 20.0], [0.0, 40.0, 50.0]]
    """
    if not isinstance(arr, TensorBase):
        raise TypeError(f"put_along_axis writes into a tensor, got {type(arr).__name__}")
    idx = _index_array(indices, "put_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        idx = np.where(idx < 0, idx + arr.size, idx)
        if idx.size and (idx.min() < 0 or idx.max() >= arr.size):
            raise IndexError(f"index out of bounds for size {arr.size}")
        arr[np.unravel_index(idx, arr.shape)] = values
        return
    if idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = layout.normalize_dim(axis, arr.ndim)
    ones = (1,) * arr.ndim
    key = tuple(
        idx if d == axis else np.arange(n).reshape(ones[:d] + (n,) + ones[d + 1 :])
        for d, n in enumerate(arr.shape)
    )
    arr[key] = values


def copyto(dst, src, casting: str = "same_kind", where=True) -> None:
    """Copy ``src`` (broadcast) into ``dst`` where ``where`` holds, casting by
    ``casting``, numpy's ``copyto``; recorded for gradients as an in-place write.

    >>> import jitgrad as jg
    >>> a = jg.zeros(3)
    >>> jg.copyto(a, jg.tensor([1.0, 2.0, 3.0]), where=jg.tensor([True, False, True]))
    >>> a.tolist()
    [1.0, 0.0, 3.0]
    """
    if not isinstance(dst, (TensorBase, np.ndarray)):
        kind = type(dst).__name__
        raise TypeError(f"copyto() argument 1 must be a tensor or an array, not {kind}")
    dst_dtype = dst.dtype.numpy if isinstance(dst, TensorBase) else dst.dtype
    if isinstance(src, (bool, int, float, complex)):
        # A Python scalar is weak (NEP 50): numpy decides whether it fits dst's dtype.
        np.copyto(np.empty((), dst_dtype), src, casting=casting)
        src = as_tensor(np.asarray(src, dst_dtype))
    elif isinstance(src, (list, tuple)):
        src = as_tensor(np.asarray(src))
    else:
        src = as_tensor(src)
    mask = None
    if where is not True:
        mask = as_tensor(np.asarray(where) if isinstance(where, (list, tuple, bool)) else where)
        if mask.dtype is not dtypes.bool_:
            raise TypeError(
                f"Cannot cast array data from {mask.dtype.numpy!r} to dtype('bool') "
                "according to the rule 'safe'"
            )
    _write("copyto", dst, src, mask, casting, src.requires_grad)


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis``, the results stacked
    where the axis was (numpy's ``apply_along_axis``); differentiable where ``func1d`` is.

    >>> import jitgrad as jg
    >>> jg.apply_along_axis(lambda v: v[0] + v[-1], 1, jg.tensor([[1, 2, 3], [4, 5, 6]])).tolist()
    [4, 10]
    """
    from .ops.movement import stack

    arr = as_tensor(arr)
    axis = layout.normalize_dim(axis, arr.ndim)
    moved = shaping.moveaxis(arr, axis, -1)
    outer = moved.shape[:-1]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    results = [as_tensor(func1d(moved[index], *args, **kwargs)) for index in np.ndindex(outer)]
    first = results[0]
    stacked = stack([r.astype(first.dtype, copy=False) for r in results])
    buff = stacked.reshape(outer + first.shape)
    dims = list(range(buff.ndim))
    split = buff.ndim - first.ndim
    return buff.permute(dims[:axis] + dims[split:] + dims[axis:split])


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping the dimension
    (``func`` must keep it or drop it), numpy's ``apply_over_axes``.

    >>> import jitgrad as jg
    >>> jg.apply_over_axes(jg.sum, jg.ones((2, 3, 4)), [0, 2]).tolist()
    [[[8.0], [8.0], [8.0]]]
    """
    val = as_tensor(a)
    n = val.ndim
    for axis in np.atleast_1d(axes).tolist():
        axis = axis + n if axis < 0 else axis
        res = as_tensor(func(val, axis))
        if res.ndim != val.ndim:
            res = movement.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


class vectorize:  # noqa: N801  numpy's name
    """A Python function applied elementwise over tensors with numpy's broadcasting, by
    ``numpy.vectorize`` on their values (``otypes``, ``excluded``, ``signature`` and
    ``cache`` as numpy's); results are tensors (numpy's arrays for data tensors cannot
    hold), without gradients.

    >>> import jitgrad as jg
    >>> f = jg.vectorize(lambda a, b: a - b if a > b else a + b)
    >>> f(jg.tensor([1, 2, 3, 4]), 2).tolist()
    [3, 4, 1, 2]
    >>> @jg.vectorize(otypes=[jg.float32])
    ... def half(x):
    ...     return x / 2
    >>> half([1, 2]).dtype
    jitgrad.float32
    """

    def __init__(
        self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache=False, signature=None
    ):
        if otypes is not None and not isinstance(otypes, str):
            otypes = [dtypes.as_dtype(t).char if isinstance(t, dtypes.DType) else t for t in otypes]
        self._options = {
            "otypes": otypes,
            "doc": doc,
            "excluded": excluded,
            "cache": cache,
            "signature": signature,
        }
        self._numpy = None
        if pyfunc is not np._NoValue:
            self._numpy = np.vectorize(pyfunc, **self._options)
            self.pyfunc = pyfunc
            self.__doc__ = self._numpy.__doc__

    def __call__(self, *args, **kwargs):
        if self._numpy is None:  # @vectorize(otypes=...): the decorated function comes now
            return vectorize(args[0], **self._options)
        args = [_plain(a) for a in args]
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        result = self._numpy(*args, **kwargs)
        return tuple(map(_tensor_of, result)) if isinstance(result, tuple) else _tensor_of(result)


def _plain(x):
    if isinstance(x, TensorBase):
        return TensorBase.numpy(x.detach() if isinstance(x, Tensor) else x)
    return x


def _tensor_of(values):
    values = np.asarray(values)
    return tensor_over(values) if values.dtype.kind in "biufc" else values


__all__ = [
    "r_",
    "c_",
    "s_",
    "index_exp",
    "ix_",
    "ndindex",
    "ndenumerate",
    "tril_indices",
    "triu_indices",
    "tril_indices_from",
    "triu_indices_from",
    "diag_indices",
    "diag_indices_from",
    "mask_indices",
    "put_along_axis",
    "copyto",
    "apply_along_axis",
    "apply_over_axes",
    "vectorize",
    "frompyfunc",
]
