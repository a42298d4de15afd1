"""PyTorch's tensor conveniences, bound to ``Tensor`` in one table (``TORCH_METHODS``).

None of these names is an ndarray method, so they take PyTorch's meaning (see
docs/numpy-and-pytorch.md): dtype shorthands (``x.float()``, ``x.long()``), ``x.t()``,
named comparisons (``x.eq(y)``), ``x.norm(p, dim)``, ``x.softmax(dim)``, tensors of the
same dtype (``x.new_zeros(shape)``), masking, scatters (``scatter_reduce`` too) and
``index_add`` (each out of place and differentiable, with an in-place ``_`` form),
``x.to(dtype or device)``, and the everyday shape and selection methods (``chunk``,
``split``, ``view_as``, ``index_select``, ``topk``, ``roll``, ``tril``...) and random fills
(``uniform_``, ``normal_``).

>>> import jitgrad as jg
>>> x = jg.tensor([[1.0, -2.0], [3.0, 4.0]])
>>> x.masked_fill(x < 0, 0.0).tolist()
[[1.0, 0.0], [3.0, 4.0]]
>>> x.new_zeros(3).long().tolist()
[0, 0, 0]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..device import check_device
from ..recording import run
from ..strided import layout
from ..tensor import TensorBase
from . import elementwise as ew
from . import indexing, movement, reduce, shaping, sorting, torch_functions, unary
from .indexing import ScatterAdd, _index_array, _out_of_range, index_put
from .methods import _save_before_overwrite

# -- dtypes and devices --------------------------------------------------------------------


def _as(dtype):
    def method(self, memory_format=None):
        return movement.astype(self, dtype, copy=False)

    method.__name__ = dtype.name
    method.__doc__ = f"This tensor as {dtype.name}: itself when it is already (PyTorch's)."
    return method


def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """PyTorch's ``to``: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
    ``to(other)`` (other's dtype), or by keyword. This tensor itself when nothing changes,
    unless ``copy=True``; the CPU is jitgrad's one device.

    >>> import jitgrad as jg
    >>> x = jg.ones(2)
    >>> x.to("cpu") is x, x.to(jg.int32).dtype, x.to("cpu", jg.float16).dtype
    (True, jitgrad.int32, jitgrad.float16)
    """
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments, got {len(args)}")
    for arg in args:
        if isinstance(arg, TensorBase):
            given = arg.dtype
        else:
            try:
                given = dtypes.as_dtype(arg)
            except TypeError:
                check_device(arg)  # a ValueError for devices other than the CPU
                continue
        if dtype is not None:
            raise TypeError("to() got the dtype twice")
        dtype = given
    check_device(device)
    return movement.astype(self, self.dtype if dtype is None else dtype, copy=bool(copy))


# -- shape, comparisons, norms, softmax ----------------------------------------------------


def cpu(self, memory_format=None):
    """This tensor itself: the CPU is jitgrad's one device."""
    return self


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """An error naming the problem: jitgrad computes on the CPU only."""
    check_device("cuda" if device is None else device)
    return self  # (a CPU spelling of the device)


def t(self):
    """The transpose of a matrix; a tensor of at most 1 dimension as it is (PyTorch's)."""
    if self.ndim > 2:
        raise ValueError(
            f"t() expects a tensor of at most 2 dimensions, got {self.ndim}; use "
            "transpose(d0, d1) or .mT"
        )
    return movement.transpose(self) if self.ndim == 2 else self


def _compare(cls):
    def method(self, other):
        return cls()(self, other)

    return method


def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """PyTorch's ``Tensor.norm``: the ``p``-norm of all elements (``dim=None``) or along
    ``dim`` (an int or a tuple); "fro" is the 2-norm of the elements, "nuc" the nuclear
    norm of the matrices over ``dim`` (the last two by default).

    >>> import jitgrad as jg
    >>> jg.tensor([[3.0, 0.0], [0.0, 4.0]]).norm().item()
    5.0
    """
    from .. import linalg  # (jitgrad.linalg is built on ops: a layer above)

    x = self if dtype is None else movement.astype(self, dtype, copy=False)
    if p == "nuc":
        axes = (-2, -1) if dim is None else tuple(dim)
        return linalg.norm(x, ord="nuc", axis=axes, keepdims=keepdim)
    order = 2 if p == "fro" else p
    if isinstance(order, str):
        raise ValueError(f"norm: p must be a number, 'fro' or 'nuc', got {p!r}")
    return linalg.vector_norm(x, axis=dim, keepdims=keepdim, ord=order)


def softmax(self, dim: int, dtype=None):
    """softmax along ``dim`` (``F.softmax``), computed in ``dtype`` when given."""
    from ..nn import functional  # (nn is built on ops: a layer above)

    x = self if dtype is None else movement.astype(self, dtype, copy=False)
    return functional.softmax(x, dim=dim)


def log_softmax(self, dim: int, dtype=None):
    """log-softmax along ``dim`` (``F.log_softmax``), computed in ``dtype`` when given."""
    from ..nn import functional  # (nn is built on ops: a layer above)

    x = self if dtype is None else movement.astype(self, dtype, copy=False)
    return functional.log_softmax(x, dim=dim)


# -- new tensors like this one -------------------------------------------------------------


def _shape(size: tuple) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))``, as PyTorch's size arguments."""
    if len(size) == 1 and not hasattr(size[0], "__index__"):
        size = tuple(size[0])
    return tuple(int(n) for n in size)


def _made(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_(True) if requires_grad else t


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of ``size`` filled with ``fill_value``, of this tensor's dtype unless
    ``dtype`` is given."""
    from ..creation import full  # (creation builds on ops)

    check_device(device)
    made = full(_shape((size,)), fill_value, dtype=self.dtype if dtype is None else dtype)
    return _made(made, requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of ``size`` (``new_zeros(2, 3)`` or ``new_zeros((2, 3))``) in this dtype."""
    return new_full(self, _shape(size), 0, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """Ones of ``size`` in this tensor's dtype (or ``dtype``)."""
    return new_full(self, _shape(size), 1, dtype=dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of ``size`` in this tensor's dtype (or ``dtype``)."""
    from ..creation import empty  # (creation is built on ops: a layer above)

    check_device(device)
    made = empty(_shape(size), dtype=self.dtype if dtype is None else dtype)
    return _made(made, requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of ``data`` (no history) in this tensor's dtype (or ``dtype``)."""
    check_device(device)
    if isinstance(data, TensorBase):
        data = data.detach()
    made = movement.astype(as_tensor(data), self.dtype if dtype is None else dtype, copy=True)
    return _made(made, requires_grad)


# -- masks, scatters, index_add --------------------------------------------------------------


def _in_place(out_of_place):
    """The ``_`` form of an out-of-place op: its result written into this tensor, recorded
    when gradients flow (as ``x.add_(y)``), else a raw write."""

    def method(self, *args, **kwargs):
        given = (*args, *kwargs.values())
        requires = any(isinstance(a, Tensor) and a.requires_grad for a in given)
        if self._check_inplace(requires):
            result = out_of_place(self, *args, **kwargs)
            _save_before_overwrite(result, self)
            return movement.write_through(self, result)
        with no_grad():
            result = out_of_place(self.detach(), *args, **kwargs)
        TensorBase.copy_(self, result)
        return self

    method.__name__ = out_of_place.__name__ + "_"
    method.__doc__ = f"``{out_of_place.__name__}`` in place; returns this tensor."
    return method


def _value(self, value) -> Tensor:
    """A fill value as a tensor of this tensor's dtype (PyTorch casts it)."""
    if isinstance(value, TensorBase):
        if value.ndim != 0:
            raise ValueError(
                f"the fill value must be a number or a 0-d tensor, got shape {value.shape}"
            )
        return movement.astype(value, self.dtype, copy=False)
    return as_tensor(np.asarray(value, dtype=self.dtype.numpy))


def masked_fill(self, mask, value):
    """This tensor with ``value`` where the bool ``mask`` (broadcast to it) is True;
    differentiable in this tensor (and in a 0-d tensor ``value``)."""
    mask = as_tensor(mask)
    if mask.dtype is not dtypes.bool_:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    if layout.broadcast_shapes(mask.shape, self.shape) != self.shape:
        raise ValueError(
            f"masked_fill: mask of shape {mask.shape} does not broadcast to {self.shape}"
        )
    return ew.where(mask, _value(self, value), self)


def _scatter_key(self, dim: int, index, who: str):
    """The numpy key of ``self`` for a PyTorch scatter: position ``i`` of ``index`` goes to
    ``self[i with dim replaced by index[i]]``; the index must not be larger than ``self``
    outside ``dim``, and its entries lie in [0, self.shape[dim])."""
    idx = _index_array(index, who)
    if idx.ndim != self.ndim:
        raise ValueError(
            f"{who}: index of shape {idx.shape} and self of shape {self.shape} must have the "
            "same number of dimensions"
        )
    dim = layout.normalize_dim(dim, self.ndim)
    for d, (n, m) in enumerate(zip(self.shape, idx.shape, strict=True)):
        if d != dim and m > n:
            raise ValueError(
                f"{who}: index of shape {idx.shape} is larger than self of shape "
                f"{self.shape} in dimension {d}"
            )
    run(_check_range, idx, self.shape[dim], dim, who)  # recorded: a replay checks its own
    ones = (1,) * self.ndim
    key = tuple(
        idx if d == dim else np.arange(m).reshape(ones[:d] + (m,) + ones[d + 1 :])
        for d, m in enumerate(idx.shape)
    )
    return key, idx.shape


def _check_range(idx, n: int, dim: int, who: str) -> None:
    bad = _out_of_range(idx, n, 0)
    if bad is not None:
        raise IndexError(f"{who}: index {bad} is out of bounds for dimension {dim} with size {n}")


def _source(src, shape, who: str) -> Tensor:
    """The part of ``src`` that an index of ``shape`` reads (its leading corner)."""
    src = as_tensor(src)
    if src.ndim != len(shape) or any(m > n for m, n in zip(shape, src.shape, strict=True)):
        raise ValueError(f"{who}: src of shape {src.shape} is smaller than index of shape {shape}")
    if src.shape == tuple(shape):
        return src
    return movement.basic_index(src, tuple(slice(0, m) for m in shape))


def scatter(self, dim: int, index, src=None, *, value=None):
    """PyTorch's ``scatter``: a copy of this tensor with ``out[..., index[i], ...] =
    src[i]`` along ``dim`` (or the number ``value``); differentiable in both (a position
    written twice keeps the last write).

    >>> import jitgrad as jg
    >>> jg.zeros(4).scatter(0, jg.tensor([3, 0]), jg.tensor([1.0, 2.0])).tolist()
    [2.0, 0.0, 0.0, 1.0]
    """
    if src is None and value is None:
        raise TypeError("scatter() needs src (a tensor) or value (a number)")
    if src is not None and value is not None:
        raise TypeError("scatter() takes src or value, not both")
    key, shape = _scatter_key(self, dim, index, "scatter")
    if src is None or not isinstance(src, TensorBase):
        fill = _value(self, src if value is None else value)
        return index_put(self, key, movement.broadcast_to(fill, shape))
    part = movement.astype(_source(src, shape, "scatter"), self.dtype, copy=False)
    return index_put(self, key, part)


def scatter_add(self, dim: int, index, src):
    """PyTorch's ``scatter_add``: a copy of this tensor with ``src[i]`` added at
    ``index[i]`` along ``dim``; repeated positions accumulate. Differentiable in both.

    >>> import jitgrad as jg
    >>> jg.zeros(3).scatter_add(0, jg.tensor([2, 2, 0]), jg.ones(3)).tolist()
    [1.0, 0.0, 2.0]
    """
    key, shape = _scatter_key(self, dim, index, "scatter_add")
    part = movement.astype(_source(src, shape, "scatter_add"), self.dtype, copy=False)
    return self + ScatterAdd(key, self.shape)(part)


def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True):
    """PyTorch's ``scatter_reduce``: a copy of this tensor with each ``src[i]`` reduced
    into ``out[..., index[i], ...]`` along ``dim`` by ``reduce`` ("sum", "prod", "mean",
    "amax" or "amin"); ``include_self=False`` leaves this tensor's value out wherever a
    value arrives. Differentiable in both (ties of amax/amin share the gradient).

    >>> import jitgrad as jg
    >>> x = jg.tensor([1.0, 2.0, 3.0])
    >>> x.scatter_reduce(0, jg.tensor([0, 0, 2]), jg.tensor([4.0, 5.0, 6.0]), "amax").tolist()
    [5.0, 2.0, 6.0]
    >>> x.scatter_reduce(0, jg.tensor([0, 0]), jg.tensor([4.0, 5.0]), "mean",
    ...                  include_self=False).tolist()
    [4.5, 2.0, 3.0]
    """
    if reduce not in indexing.SCATTER_REDUCTIONS:
        raise ValueError(
            "scatter_reduce: reduce must be one of "
            f"{', '.join(map(repr, indexing.SCATTER_REDUCTIONS))}, got {reduce!r}"
        )
    key, shape = _scatter_key(self, dim, index, "scatter_reduce")
    part = movement.astype(_source(src, shape, "scatter_reduce"), self.dtype, copy=False)
    return indexing.ScatterReduce(key, reduce, bool(include_self))(self, part)


def index_add(self, dim: int, index, source, *, alpha=1):
    """PyTorch's ``index_add``: a copy of this tensor with ``alpha · source`` added to the
    slices ``index`` selects along ``dim`` (``index`` 1-d, one entry per slice of
    ``source``); repeated indices accumulate. Differentiable in both.

    >>> import jitgrad as jg
    >>> jg.zeros((3, 2)).index_add(0, jg.tensor([0, 2, 0]), jg.ones((3, 2))).tolist()
    [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    """
    idx = _index_array(index, "index_add")
    if idx.ndim != 1:
        raise ValueError(f"index_add: index must be 1-d, got shape {idx.shape}")
    source = as_tensor(source)
    dim = layout.normalize_dim(dim, max(self.ndim, 1))
    want = self.shape[:dim] + (len(idx),) + self.shape[dim + 1 :]
    if source.shape != want:
        raise ValueError(
            f"index_add: source of shape {source.shape} does not match index of length "
            f"{len(idx)} along dimension {dim} of self of shape {self.shape} (expected {want})"
        )
    run(_check_range, idx, self.shape[dim], dim, "index_add")
    key = (slice(None),) * dim + (idx,)
    part = movement.astype(source if alpha == 1 else source * alpha, self.dtype, copy=False)
    return self + ScatterAdd(key, self.shape)(part)


# -- shapes, selections and the rest of PyTorch's everyday methods -------------------------


def expand_as(self, other):
    """This tensor broadcast to ``other``'s shape (a view)."""
    return movement.broadcast_to(self, other.shape)


def view_as(self, other):
    """A view of this tensor in ``other``'s shape."""
    return movement.view(self, other.shape)


def reshape_as(self, other):
    """This tensor in ``other``'s shape (a view when the strides allow)."""
    return movement.reshape(self, other.shape)


def type_as(self, other):
    """This tensor in ``other``'s dtype: itself when it already is."""
    return movement.astype(self, other.dtype, copy=False)


def unflatten(self, dim: int, sizes):
    """Dimension ``dim`` split into ``sizes`` (one of them may be -1)."""
    dim = layout.normalize_dim(dim, self.ndim)
    return movement.reshape(self, self.shape[:dim] + tuple(sizes) + self.shape[dim + 1 :])


def index_select(self, dim: int, index):
    """The entries at ``index`` (a 1-d integer tensor) along ``dim``, a new tensor."""
    idx = _index_array(index, "index_select")
    if idx.ndim != 1:
        raise ValueError(f"index_select: index must be 1-d, got shape {idx.shape}")
    dim = layout.normalize_dim(dim, max(self.ndim, 1))
    run(_check_range, idx, self.shape[dim] if self.ndim else 1, dim, "index_select")
    if self.ndim == 0:
        return self.reshape(1)[idx].reshape(())
    return self[(slice(None),) * dim + (idx,)]


def masked_select(self, mask):
    """The entries where the bool ``mask`` is True, in a 1-d tensor; the two broadcast
    against each other."""
    mask = as_tensor(mask)
    if mask.dtype is not dtypes.bool_:
        raise TypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype.name}")
    shape = layout.broadcast_shapes(self.shape, mask.shape)
    return movement.broadcast_to(self, shape)[movement.broadcast_to(mask, shape)]


def roll(self, shifts, dims=None):
    """The entries shifted by ``shifts`` along ``dims`` (all flattened when None), those
    pushed past the end coming back at the start."""
    return shaping.roll(self, shifts, axis=dims)


def tril(self, diagonal: int = 0):
    """The lower triangle of the last two dimensions, zeros above ``diagonal``."""
    return shaping.tril(self, k=diagonal)


def triu(self, diagonal: int = 0):
    """The upper triangle of the last two dimensions, zeros below ``diagonal``."""
    return shaping.triu(self, k=diagonal)


def clamp(self, min=None, max=None):  # noqa: A002  PyTorch's names
    """The entries limited to ``[min, max]``."""
    return unary.clip(self, min=min, max=max)


def repeat_interleave(self, repeats, dim=None, *, output_size=None):
    """Each entry repeated ``repeats`` times along ``dim`` (flattened when None): numpy's
    ``repeat``. (``x.repeat(...)`` is numpy's too.)"""
    return shaping.repeat(self, repeats, axis=dim)


def _extreme(reduction):
    def method(self, dim=(), keepdim: bool = False):
        return reduction(self, axis=None if dim == () else dim, keepdims=keepdim)

    method.__name__ = reduction.__name__
    method.__doc__ = f"``{reduction.__name__}`` over ``dim`` (every dimension by default)."
    return method


class TopK(NamedTuple):
    """PyTorch's result of ``topk``."""

    values: Tensor
    indices: Tensor


def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """The ``k`` largest entries along ``dim`` (smallest with ``largest=False``), in order,
    and their indices; equal entries in the order they come."""
    dim = layout.normalize_dim(dim, max(self.ndim, 1))
    n = self.shape[dim] if self.ndim else 1
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} is out of range for dimension {dim} of length {n}")
    order = sorting.argsort(self, axis=dim, stable=True, descending=largest)
    indices = movement.narrow(order, dim, 0, k) if self.ndim else order
    return TopK(indexing.take_along_axis(self, indices, dim if self.ndim else None), indices)


def _random(fill):
    """``x.uniform_()``, ``x.normal_()``: the entries drawn afresh in place (no gradient
    flows back through them)."""

    def drawn(self, *args, generator=None):
        from ..nn import init  # (nn builds on ops)

        values = TensorBase.clone(self.detach())
        getattr(init, fill)(values, *args, generator=generator)
        return values

    drawn.__name__ = fill[:-1]
    return _in_place(drawn)


TORCH_METHODS = {
    "float": _as(dtypes.float32),
    "double": _as(dtypes.float64),
    "half": _as(dtypes.float16),
    "long": _as(dtypes.int64),
    "int": _as(dtypes.int32),
    "bool": _as(dtypes.bool_),
    "to": to,
    "cpu": cpu,
    "cuda": cuda,
    "is_cuda": property(lambda self: False, doc="False: jitgrad computes on the CPU."),
    "t": t,
    "eq": _compare(ew.Equal),
    "ne": _compare(ew.NotEqual),
    "lt": _compare(ew.Less),
    "gt": _compare(ew.Greater),
    "le": _compare(ew.LessEqual),
    "ge": _compare(ew.GreaterEqual),
    "norm": norm,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_full": new_full,
    "new_empty": new_empty,
    "new_tensor": new_tensor,
    "masked_fill": masked_fill,
    "masked_fill_": _in_place(masked_fill),
    "scatter": scatter,
    "scatter_": _in_place(scatter),
    "scatter_add": scatter_add,
    "scatter_add_": _in_place(scatter_add),
    "scatter_reduce": scatter_reduce,
    "scatter_reduce_": _in_place(scatter_reduce),
    "index_add": index_add,
    "index_add_": _in_place(index_add),
    "chunk": torch_functions.chunk,
    "split": torch_functions.split_sizes,
    "tensor_split": torch_functions.tensor_split,
    "movedim": torch_functions.movedim,
    "swapdims": movement.swapaxes,
    "expand_as": expand_as,
    "view_as": view_as,
    "reshape_as": reshape_as,
    "type_as": type_as,
    "unflatten": unflatten,
    "index_select": index_select,
    "masked_select": masked_select,
    "roll": roll,
    "tril": tril,
    "tril_": _in_place(tril),
    "triu": triu,
    "triu_": _in_place(triu),
    "clamp_": _in_place(clamp),
    "clip_": _in_place(clamp),
    "repeat_interleave": repeat_interleave,
    "amax": _extreme(reduce.amax),
    "amin": _extreme(reduce.amin),
    "topk": topk,
    "nelement": Tensor.numel,
    "lerp": torch_functions.lerp,
    "lerp_": _in_place(torch_functions.lerp),
    "rsqrt": torch_functions.rsqrt,
    "rsqrt_": _in_place(torch_functions.rsqrt),
    "uniform_": _random("uniform_"),
    "normal_": _random("normal_"),
}

for _name, _method in TORCH_METHODS.items():
    setattr(Tensor, _name, _method)
del _name, _method
