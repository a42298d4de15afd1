"""Shape ops with gradients. Views stay views: the forward is ``TensorBase``'s view, so the
output shares the input's storage; the backward puts the gradient back in place. Each
moves or sums elements without weighting them, so complex tensors differentiate the same
way (``Function.differentiates_complex``).
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from .. import dtypes
from ..autograd.function import Function, records_nothing
from ..autograd.tensor import Tensor, as_tensor, uninitialised, zeros
from ..device import check_device
from ..recording import run
from ..strided import layout
from ..tensor import TensorBase, assigned_value, is_dtype_arg, transposed_axes
from .numpy_tier import tensor_over
from .reduce_data import sum_to_data
from .torch_keywords import torch_keywords


class _ViewFunction(Function):
    """A shape op whose output may share its input's memory."""

    needs_input_values = False
    differentiates_complex = True
    is_view = True

    def view_of(self, x):
        """The same view of another tensor, without recording."""
        raise NotImplementedError

    def again(self, t) -> Function:
        # One element of the view per element of the base: View's backward puts it back.
        return View(self.view_for(t))


class Reshape(_ViewFunction):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        return TensorBase.reshaped(x, self.shape)

    view_of = forward

    def backward(self, gy):
        return reshape(gy, self.inputs[0].shape)


class Permute(_ViewFunction):
    def __init__(self, axes):
        self.axes = tuple(axes)

    def forward(self, x):
        return TensorBase.permute(x, self.axes)

    view_of = forward

    def backward(self, gy):
        return permute(gy, np.argsort(self.axes).tolist())


class View(_ViewFunction):
    """A one-to-one view chosen by ``take(t)`` (slicing, flip, diagonal): the backward
    writes the gradient into the same view of a zero tensor."""

    def __init__(self, take):
        self.take = take

    def forward(self, x):
        return self.take(x)

    view_of = forward

    def backward(self, gy):
        return Unview(self.take, self.inputs[0].shape)(gy)


class Overwrite(Function):
    """``base`` with its view ``view_of(base)`` replaced by ``part``, out of place: how an
    in-place write through a view is recorded on the view's base (PyTorch's CopySlices)."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, view_of):
        self.view_of = view_of

    def forward(self, base, part):
        out = TensorBase.clone(base)
        TensorBase.copy_(self.view_of(out), part)
        return out

    def backward(self, gy):
        return Overwrite(self.view_of)(gy, zeros((), gy.dtype)), View(self.view_of)(gy)


def write_through(t: Tensor, result: Tensor) -> Tensor:
    """Make ``t`` hold ``result`` (data and history) after an in-place op. When ``t`` is a
    recorded view of another tensor, that base takes the write into its own history too,
    and ``t`` becomes the same view of the rebased base: later gradients through either
    see the write, as in PyTorch."""
    fn = t._grad_fn
    base = fn.base_of(t) if fn is not None else None
    if base is None:
        if result._grad_fn is None and t._requires_grad:
            # Values without history replace values with it (``y.copy_(constant)``): the
            # old values' gradient is zero from now on, not the one they had.
            result = SetItem(Ellipsis)(t, result)
        return t._rebase(result)
    write_through(base, Overwrite(fn.view_for(t))(base, result))
    fn.refresh(t)
    return t


class Unview(Function):
    """The adjoint of ``View``: a zero tensor with ``gy`` placed where ``take`` looks."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, take, shape):
        self.take, self.shape = take, shape

    def forward(self, gy):
        out = zeros(self.shape, gy.dtype)
        TensorBase.copy_(self.take(out), gy)
        return out

    def backward(self, g):
        return View(self.take)(g)


class Unbind(_ViewFunction):
    """The slices of ``x`` along ``axis``, views of it (PyTorch's ``unbind``): their
    gradients are stacked into one tensor, where one slice at a time would fill a zero
    tensor each and add them up."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return tuple(self._slice(k)(x) for k in range(x.shape[self.axis]))

    def _slice(self, k: int):
        key = (slice(None),) * self.axis + (k,)
        return lambda t: TensorBase.__getitem__(t, key)

    def view_for(self, t):
        return self._slice(t._output_nr)  # (each output its own slice)

    def backward(self, *gys):
        return stack(gys, axis=self.axis)


class Concatenate(Function):
    needs_input_values = False
    differentiates_complex = True

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, *xs):
        arrays = [x.numpy() for x in xs]
        shape = list(xs[0].shape)
        shape[self.axis] = sum(x.shape[self.axis] for x in xs)
        out = uninitialised(tuple(shape), dtypes.from_numpy_dtype(np.result_type(*arrays)))
        # (written in place: a traced plan's replay joins straight into the result)
        run(partial(_join_into, axis=self.axis), out.numpy(), *arrays)
        return out

    def backward(self, gy):
        grads, start = [], 0
        for x in self.inputs:
            n = x.shape[self.axis]
            grads.append(gy.narrow(self.axis, start, n))
            start += n
        return tuple(grads)


def _join_into(out, *arrays, axis):
    np.concatenate(arrays, axis, out=out)


# -- what users call -------------------------------------------------------------------------


class SumTo(Function):
    """Sum over broadcast axes back to ``shape``: the adjoint of ``broadcast_to``."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, x):
        return sum_to_data(x, self.shape)

    def backward(self, gy):
        return broadcast_to(gy, self.inputs[0].shape)


class BroadcastTo(Function):
    needs_input_values = False
    differentiates_complex = True
    is_view = True

    def __init__(self, shape):
        self.shape = layout.as_shape(shape)

    def forward(self, x):
        return TensorBase.broadcast_to(x, self.shape)

    view_of = forward

    def again(self, t) -> Function:
        return BroadcastTo(self.shape)

    def backward(self, gy):
        return sum_to(gy, self.inputs[0].shape)


def sum_to(x, shape) -> Tensor:
    x = as_tensor(x)
    return x if x.shape == tuple(shape) else SumTo(shape)(x)


def broadcast_to(x, /, shape) -> Tensor:
    """``x`` seen as ``shape`` (an int or a sequence of ints, as numpy's), without copying.

    >>> import jitgrad as jg
    >>> jg.broadcast_to(jg.tensor([1, 2]), (2, 2)).tolist()
    [[1, 2], [1, 2]]
    """
    x = as_tensor(x)
    shape = layout.as_shape(shape)
    return x if x.shape == shape else BroadcastTo(shape)(x)


def reshape(x, /, shape=(), *sizes, copy=None) -> Tensor:
    """numpy's reshape: a view when the strides allow, else a copy; -1 infers one size.
    The sizes may also come one per argument, as PyTorch's ``reshape(x, 2, 3)``. The
    standard's ``copy=True`` always copies; ``copy=False`` never does, an error when the
    strides forbid a view.

    >>> import jitgrad as jg
    >>> jg.reshape(jg.arange(6), (2, 3)).shape, jg.reshape(jg.arange(6), 3, -1).shape
    ((2, 3), (3, 2))
    """
    x = as_tensor(x)
    if copy is not None:
        out = reshape(x, shape, *sizes)
        if copy is False and out._storage is not x._storage:
            raise ValueError("reshape(copy=False): the strides of x allow no view of this shape")
        return clone(out) if copy and out._storage is x._storage else out
    shape = (shape, *sizes)
    shape = layout.infer_shape(
        shape[0] if len(shape) == 1 and not _is_int(shape[0]) else shape, x.numel()
    )
    if shape == x.shape:
        return x
    if records_nothing(x):  # a view is recorded only for gradients to flow through it
        return TensorBase.reshaped(x, shape)
    return Reshape(shape)(x)


def view(x, *shape) -> Tensor:
    """Like reshape, but an error instead of a copy when the strides forbid a view. Given
    a dtype, the same bytes read as that dtype (numpy's and PyTorch's ``view(dtype)``):
    a new tensor without gradient, the last dimension rescaled by the itemsizes.

    >>> import jitgrad as jg
    >>> jg.arange(6).view(3, 2).shape, jg.ones(2).view(jg.int32).tolist()
    ((3, 2), [0, 1072693248, 0, 1072693248])
    """
    x = as_tensor(x)
    viewed = TensorBase.view(x, *shape)  # raises with the reason when impossible
    if is_dtype_arg(shape):
        # Another dtype's values have no gradient; the same dtype is a view as any other.
        same = viewed.dtype is x.dtype
        return _view_op(x, lambda t: TensorBase.view(t, *shape)) if same else viewed.detach()
    return reshape(x, *shape)


def permute(x, *axes) -> Tensor:
    x = as_tensor(x)
    axes = tuple(axes[0]) if len(axes) == 1 and not _is_int(axes[0]) else axes
    axes = tuple(layout.normalize_dim(a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute({axes}) is not a permutation of {x.ndim} dims")
    if records_nothing(x):
        return TensorBase.permute(x, axes)
    return Permute(axes)(x)


def transpose_method(x, *dims, axes=None) -> Tensor:
    """``t.transpose(...)``: no argument reverses the dimensions (numpy); two integers
    swap those two dimensions (PyTorch), whatever ``t.ndim``; one sequence, ``axes=`` or
    one integer per dimension is numpy's full permutation.

    >>> import jitgrad as jg
    >>> points = jg.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    >>> points.transpose(0, 1).shape, points.transpose((1, 0)).shape
    ((2, 3), (2, 3))
    >>> jg.ones((2, 3, 4)).transpose(0, 2).shape, jg.ones((2, 3, 4)).transpose(2, 0, 1).shape
    ((4, 3, 2), (4, 2, 3))
    """
    x = as_tensor(x)
    return permute(x, transposed_axes(x.ndim, dims, axes))


def transpose(a, axes=None, *dim1) -> Tensor:
    """numpy's ``transpose(a, axes=None)``: ``axes`` is a full permutation (None
    reverses the dimensions). PyTorch's ``transpose(x, dim0, dim1)``, which numpy
    refuses, swaps two dimensions.

    >>> import jitgrad as jg
    >>> x = jg.ones((2, 3, 4))
    >>> jg.transpose(x).shape, jg.transpose(x, (1, 0, 2)).shape, jg.transpose(x, 0, 2).shape
    ((4, 3, 2), (3, 2, 4), (4, 3, 2))
    """
    a = as_tensor(a)
    if not dim1:
        if axes is None and records_nothing(a):  # (``t.T``: the dimensions reversed)
            return TensorBase._view(a, a._shape[::-1], a._strides[::-1])
        return permute(a, transposed_axes(a.ndim, (), axes))
    if len(dim1) > 1 or not (_is_int(axes) and _is_int(dim1[0])):
        raise TypeError(
            "transpose takes numpy's axes (one permutation) or PyTorch's two dimensions "
            f"to swap, got {(axes, *dim1)!r}"
        )
    return swapaxes(a, axes, dim1[0])


@torch_keywords(dim0="axis1", dim1="axis2")
def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    """Swap two dimensions (numpy's ``swapaxes``, PyTorch's ``transpose(dim0, dim1)``)."""
    x = as_tensor(x)
    return permute(x, layout.swapped(x.ndim, axis1, axis2))


def matrix_transpose(x, /) -> Tensor:
    """The matrices of ``x`` (its last two dims) transposed, a view (``x.mT``).

    >>> import jitgrad as jg
    >>> jg.matrix_transpose(jg.tensor([[1, 2, 3]])).tolist()
    [[1], [2], [3]]
    """
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"mT needs at least 2 dimensions, got {x.ndim}")
    return swapaxes(x, -2, -1)


def expand(x, *sizes) -> Tensor:
    x = as_tensor(x)
    target = TensorBase.expand(x, *sizes).shape
    return broadcast_to(x, target)


@torch_keywords
def squeeze(x, /, axis=None) -> Tensor:
    """``x`` without its axes of length 1 (those of ``axis`` only, when given), a view.

    >>> import jitgrad as jg
    >>> jg.squeeze(jg.zeros((1, 2, 1))).shape, jg.squeeze(jg.zeros((1, 2, 1)), axis=0).shape
    ((2,), (2, 1))
    """
    x = as_tensor(x)
    return reshape(x, TensorBase.squeeze(x, axis).shape)


def unsqueeze(x, dim: int) -> Tensor:
    x = as_tensor(x)
    return reshape(x, TensorBase.unsqueeze(x, dim).shape)


@torch_keywords
def expand_dims(x, /, axis) -> Tensor:
    """numpy's ``expand_dims``: new axes of length 1 at each of ``axis`` (an int or a
    tuple), counted in the result's dimensions.

    >>> import jitgrad as jg
    >>> jg.expand_dims(jg.zeros((2, 3)), 0).shape, jg.expand_dims(jg.zeros((2, 3)), (0, -1)).shape
    ((1, 2, 3), (1, 2, 3, 1))
    """
    x = as_tensor(x)
    axes = (axis,) if isinstance(axis, int) or hasattr(axis, "__index__") else tuple(axis)
    ndim = x.ndim + len(axes)
    places = sorted(layout.normalize_dim(a, ndim) for a in axes)
    if len(set(places)) != len(places):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    shape = list(x.shape)
    for place in places:
        shape.insert(place, 1)
    return reshape(x, tuple(shape))


def flatten(x, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    x = as_tensor(x)
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = layout.normalize_dim(start_dim, x.ndim), layout.normalize_dim(end_dim, x.ndim)
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = layout.numel(x.shape[start : end + 1])
    return reshape(x, x.shape[:start] + (merged,) + x.shape[end + 1 :])


class FlatIterator:
    """``t.flat``: the tensor's elements in row-major order, as numpy's ``flatiter``:
    ``t.flat[i]`` reads, ``t.flat[i] = v`` writes into ``t``, iterating gives 0-d
    tensors.

    >>> import jitgrad as jg
    >>> t = jg.zeros((2, 2))
    >>> t.flat[3] = 7.0; t.flat[1:].tolist(), len(t.flat)
    ([0.0, 0.0, 7.0], 4)
    """

    def __init__(self, base: Tensor):
        self.base = base

    def _key(self, index):
        # numpy's flat index -> the multi-index into ``base`` (a basic one for an integer).
        flat = np.arange(self.base.numel())[_plain(index)]
        return np.unravel_index(flat, self.base.shape)

    def __getitem__(self, index) -> Tensor:
        return self.base[self._key(index)]

    def __setitem__(self, index, value) -> None:
        self.base[self._key(index)] = value

    def __len__(self) -> int:
        return self.base.numel()

    @staticmethod
    def assign(base: Tensor, value) -> None:
        """``t.flat = value``: every element of ``t`` in row-major order takes ``value``'s
        elements, repeated as needed (numpy's)."""
        values = reshape(as_tensor(value), -1)
        if values.numel() == 0:
            return
        cycled = values[np.arange(base.numel()) % values.numel()]
        base[...] = reshape(cycled, base.shape)

    def __iter__(self):
        return iter(reshape(self.base, -1))

    def __array__(self, dtype=None, copy=None):
        return np.asarray(reshape(self.base, -1).numpy(), dtype=dtype)


def _plain(index):
    """A flat index with tensors as numpy arrays, for numpy to apply to a range."""
    if isinstance(index, TensorBase):
        return index.numpy()
    if isinstance(index, tuple):
        return tuple(_plain(i) for i in index)
    return index


def _view_op(x, take) -> Tensor:
    x = as_tensor(x)
    take(x)  # validate eagerly: errors name the problem before anything is recorded
    return View(take)(x)


def basic_index(x, key) -> Tensor:
    return _view_op(x, lambda t: TensorBase.__getitem__(t, key))


def narrow(x, dim: int, start: int, length: int) -> Tensor:
    return _view_op(x, lambda t: TensorBase.narrow(t, dim, start, length))


@torch_keywords
def diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    if not _is_int(offset):
        # The view's layout is computed from it: a float would make a float shape.
        raise TypeError(
            f"diagonal: offset must be an integer, got {type(offset).__name__} {offset!r}"
        )
    offset = operator.index(offset)
    return _view_op(x, lambda t: TensorBase.diagonal(t, offset, axis1, axis2))


@torch_keywords(dims="axis")
def flip(x, /, axis=None) -> Tensor:
    """``x`` with the order of its elements reversed along ``axis`` (all axes by
    default), a view.

    >>> import jitgrad as jg
    >>> jg.flip(jg.tensor([[1, 2], [3, 4]])).tolist(), jg.flip(jg.tensor([[1, 2]]), axis=1).tolist()
    ([[4, 3], [2, 1]], [[2, 1]])
    """
    return _view_op(x, lambda t: TensorBase.flip(t, axis))


@torch_keywords
def concatenate(tensors, axis: int = 0) -> Tensor:
    """Join tensors along an existing axis (numpy's ``concatenate``, PyTorch's ``cat``);
    ``axis=None`` joins them flattened."""
    xs = [as_tensor(t) for t in tensors]
    if not xs:
        raise ValueError("concatenate needs at least one tensor")
    if axis is None:
        xs, axis = [reshape(t, -1) for t in xs], 0
    axis = layout.normalize_dim(axis, xs[0].ndim)
    first = xs[0]._shape
    for t in xs[1:]:
        shape = t._shape
        if (
            len(shape) != len(first)
            or shape[:axis] != first[:axis]
            or shape[axis + 1 :] != first[axis + 1 :]
        ):
            raise ValueError(
                f"concatenate along axis {axis}: shapes {xs[0].shape} and {t.shape} differ "
                "in another axis"
            )
    if all(records_nothing(t) for t in xs):
        return tensor_over(np.concatenate([t.numpy() for t in xs], axis))
    return Concatenate(axis)(*xs)


cat = concatenate


@torch_keywords
def stack(tensors, /, axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new axis.

    >>> import jitgrad as jg
    >>> jg.stack([jg.tensor([1, 2]), jg.tensor([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    xs = [as_tensor(t) for t in tensors]
    if not xs:
        raise ValueError("stack needs at least one tensor")
    for t in xs[1:]:
        if t.shape != xs[0].shape:
            raise ValueError(f"stack needs equal shapes, got {xs[0].shape} and {t.shape}")
    axis = layout.normalize_dim(axis, xs[0].ndim + 1)
    return concatenate([unsqueeze(t, axis) for t in xs], axis)


@torch_keywords
def unbind(x, /, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``axis``, each a view without that axis (PyTorch's
    ``unbind``; iterating a tensor gives its slices along the first axis the same way).

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.unbind(jg.tensor([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("unbind needs a tensor with at least one dimension, got a 0-d tensor")
    unbound = Unbind(layout.normalize_dim(axis, x.ndim))
    return unbound.forward(x) if records_nothing(x) else unbound(x)


def _is_int(value) -> bool:
    return layout.is_index(value)


class Cast(Function):
    """A copy in another (or the same) dtype; the gradient is cast back."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        return TensorBase.astype(x, self.dtype)

    def backward(self, gy):
        return astype(gy, self.inputs[0].dtype)


class SetItem(Function):
    """``x`` with ``x[key] = value``, out of place: how a recorded in-place write is rebased."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, key):
        self.key = key

    def forward(self, x, value):
        out = TensorBase.clone(x)
        TensorBase.copy_(TensorBase.__getitem__(out, self.key), value)
        return out

    def backward(self, gy):
        x, value = self.inputs
        gx = SetItem(self.key)(gy, zeros((), gy.dtype))
        return gx, sum_to(basic_index(gy, self.key), value.shape)


def astype(x, dtype, /, copy: bool = True, *, device=None) -> Tensor:
    """``x`` as ``dtype``: a new tensor, or ``x`` itself when it has that dtype already
    and ``copy=False``. ``device=`` takes the CPU only.

    >>> import jitgrad as jg
    >>> x = jg.tensor([1.5, 2.5])
    >>> jg.astype(x, jg.int32).tolist(), jg.astype(x, jg.float64, copy=False) is x
    ([1, 2], True)
    """
    if device is not None:
        check_device(device)
    if x.__class__ is not Tensor:
        x = as_tensor(x)
    d = dtype if dtype.__class__ is dtypes.DType else dtypes.as_dtype(dtype)
    if d is x._storage.dtype and not copy:
        return x
    return x._copied(d) if records_nothing(x) else Cast(d)(x)


def clone(x) -> Tensor:
    if x.__class__ is not Tensor:
        x = as_tensor(x)
    return x._copied() if records_nothing(x) else Cast(x.dtype)(x)


def contiguous(x) -> Tensor:
    if x.__class__ is not Tensor:
        x = as_tensor(x)
    return x if x.is_contiguous() else clone(x)


def set_item(x, key, value) -> Tensor:
    value = assigned_value(as_tensor(value), TensorBase.__getitem__(x, key).ndim)
    return SetItem(key)(x, value)


def write_out(out, result):
    """``result``, or ``out`` with ``result`` written into it (cast to ``out``'s dtype, a
    recorded write): numpy's ``out=`` for a function computed out of place."""
    if out is None:
        return result
    if not isinstance(out, TensorBase) or tuple(out.shape) != tuple(result.shape):
        shown = getattr(out, "shape", type(out).__name__)
        raise ValueError(f"out= must be a tensor of the result's shape {result.shape}, got {shown}")
    out[...] = result
    return out
