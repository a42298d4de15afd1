"""The tensor methods and Python operators, bound to ``Tensor`` in one table.

``Tensor``'s class is defined below the ops (autograd layer); this module gives it the
differentiable behaviour users type: ``x + y``, ``x.sum(1)``, ``x.reshape(2, 3)``, ``x[1:]``,
``x += 1``. The data-only versions stay reachable as ``TensorBase.<name>``.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import records_nothing
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..strided import layout
from ..tensor import TensorBase
from . import (
    complex_parts,
    indexing,
    linalg,
    movement,
    numpy_protocol,
    reduce,
    shaping,
    statistics,
    unary,
)
from . import elementwise as ew
from .numpy_tier import new_tensor as _new_tensor
from .ufunc import written_in_place


def _swap(fn):
    return lambda a, b: fn(b, a)


def _getitem(x, key):
    # numpy's rule: integers for every dimension (no Ellipsis, no None) select an element,
    # a copy, as numpy's scalar is; a later write to x does not change it, nor it x.
    if key.__class__ is int and x._shape and records_nothing(x):  # (x[i]: the commonest)
        shape = x._shape
        n = shape[0]
        if -n <= key < n:
            at = x._offset + (key + n if key < 0 else key) * x._strides[0]
            if len(shape) > 1:
                return x._view(shape[1:], x._strides[1:], at)
            storage = x._storage
            if storage._half:  # (float16 is stored as its bits: the general copy)
                return x._view((), (), at)._copied()
            return _new_tensor(type(storage), storage.kernel_array[at : at + 1].copy(), (), ())
    if key.__class__ is not Tensor and _is_basic(key):
        element = _selects_element(key, len(x._shape))
        if records_nothing(x):  # a view is recorded only for gradients to flow through it
            view = TensorBase.__getitem__(x, key)
            return view._copied() if element else view
        view = movement.basic_index(x, key)
        return movement.clone(view) if element else view
    return indexing.advanced_index(x, key)


def _selects_element(key, ndim: int) -> bool:
    """Whether a basic index selects one element as numpy's scalar: an integer for each
    of the ``ndim`` dimensions, nothing else (``a[()]`` of a 0-d ``a`` too)."""
    if key.__class__ is not tuple:
        key = (key,)
    if len(key) != ndim:
        return False
    for k in key:  # (a loop: slicing is among the most frequent calls)
        if k.__class__ is slice or k is None or k is Ellipsis:
            return False
    return True


def _is_basic(key) -> bool:
    # (A loop with the common kinds first: indexing is among the most frequent calls.)
    for k in key if key.__class__ is tuple else (key,):
        kind = k.__class__
        if kind is slice or kind is int or k is None or k is Ellipsis:
            continue
        if isinstance(k, (bool, np.bool_, TensorBase, np.ndarray)) or not hasattr(k, "__index__"):
            return False
    return True


def _inplace(op):
    """``x op= y``: recorded as ``x = op(x, y)`` when gradients flow, else a raw write
    (numpy's ufunc into x's memory where it applies: ``ufunc.written_in_place``)."""

    def method(self, other):
        written = written_in_place(op, self, other)
        if written is not None:
            return written
        other_requires = isinstance(other, Tensor) and other.requires_grad
        result = op(self, other) if self._check_inplace(other_requires) else None
        if result is not None:
            _save_before_overwrite(result, self)
            return movement.write_through(self, _cast_for_inplace(self, result))
        with no_grad():
            result = op(self.detach(), other)
        TensorBase.copy_(self, _cast_for_inplace(self, result))
        return self

    return method


def _save_before_overwrite(result, target) -> None:
    """When ``result``'s backward reads ``target``'s values (``y *= w`` with ``w``
    requiring grad), keep a copy of them for it: ``target`` is about to be overwritten
    with ``result`` (PyTorch saves the original for such in-place ops too)."""
    fn = result._grad_fn
    if fn is None or fn.inputs is None:
        return
    for i in fn._inputs_read_by_backward():
        if fn.inputs[i] is target:
            saved = target.detach().clone()
            saved._requires_grad = True  # (backward asks which inputs want a gradient)
            fn.inputs = fn.inputs[:i] + (saved,) + fn.inputs[i + 1 :]
            fn._versions[i] = saved._storage._version


def _cast_for_inplace(self, result):
    if result.dtype is not self.dtype and not np.can_cast(
        result.dtype.numpy, self.dtype.numpy, "same_kind"
    ):
        raise TypeError(
            f"in-place result of dtype {result.dtype.name} cannot be stored in a "
            f"{self.dtype.name} tensor (numpy's same_kind rule); use an out-of-place op"
        )
    return result if result.shape == self.shape else _broadcast_result(self, result)


def _broadcast_result(self, result):
    if layout.broadcast_shapes(self.shape, result.shape) != self.shape:
        raise ValueError(
            f"in-place result of shape {result.shape} does not fit a tensor of shape {self.shape}"
        )
    return movement.broadcast_to(result, self.shape)


def _copy_(self, src):
    src_t = src if isinstance(src, Tensor) else None
    if self._check_inplace(src_t is not None and src_t.requires_grad):
        # Recorded as a copy of src, as PyTorch's CopyBackwards: src may be a view of self
        # (x.copy_(x.flip(0))), and self, rebased onto it, would be a view of itself.
        value = movement.astype(as_tensor(src), self.dtype)
        return movement.write_through(self, movement.broadcast_to(value, self.shape))
    TensorBase.copy_(self, src.detach() if src_t is not None else src)
    return self


def _fill_(self, value):
    if self._check_inplace(False):
        return movement.write_through(self, self * 0 + value)
    TensorBase.fill_(self, value)
    return self


def _fill(self, value) -> None:
    """numpy's ``a.fill(value)``: in place, returning None."""
    _fill_(self, value)


def _clip(self, min=None, max=None):  # noqa: A002  numpy's and PyTorch's keyword names
    return unary.clip(self, min, max)


def _setitem(self, key, value):
    basic = _is_basic(key)
    if basic and _numpy_writes(self, value) and _assigned_by_numpy(self, key, value):
        return None
    value_requires = isinstance(value, Tensor) and value.requires_grad
    if self._check_inplace(value_requires):
        value = movement.astype(as_tensor(value), self.dtype, copy=False)
        put = movement.set_item if basic else indexing.index_put
        return movement.write_through(self, put(self, key, value))
    if basic:
        TensorBase.__setitem__(self, key, value.detach() if isinstance(value, Tensor) else value)
        return None
    indexing.advanced_assign(self, key, value)
    return None


def _numpy_writes(x, value) -> bool:
    """Whether numpy's assignment into ``x``'s array may do ``x[key] = value`` for a basic
    key: nothing is recorded, ``x`` holds no element twice (no zero stride) and is not
    float16 (stored as its bits), and ``value`` is a Python number or a tensor of ``x``'s
    dtype (numpy converts numbers as jitgrad does; other dtypes cast in jitgrad's copy)."""
    kind = value.__class__
    if kind is Tensor:
        if value._storage.dtype is not x._storage.dtype or value._requires_grad:
            return False
    elif not (kind is float or kind is int or kind is bool):
        return False
    return records_nothing(x) and not x._storage._half and 0 not in x._strides


def _assigned_by_numpy(x, key, value) -> bool:
    """``x[key] = value`` by numpy's assignment (``_numpy_writes``), or False for a tensor
    value numpy refuses: extra size-1 dimensions for one element, which torch takes."""
    target = x.numpy()
    if not target.flags.writeable:
        x._check_writable()  # raises, naming the problem
    if value.__class__ is not Tensor:
        target[key] = value
    else:
        try:
            target[key] = value.numpy()
        except ValueError:
            return False
    x._storage._written()
    return True


def _setitem_method(self, key, value) -> None:
    _setitem(self, key, value)


def _comparison(cls):
    """``x == y`` and the other comparisons: NotImplemented for an operand that is not
    numbers (None, an arbitrary object), so Python falls back to identity (``==`` False,
    ``!=`` True) and ordering is Python's TypeError, as with PyTorch's tensors."""

    call = ew.entry(cls)

    def method(self, other):
        try:
            return call(self, other)
        except TypeError:
            if _is_numeric(other):
                raise
            return NotImplemented

    return method


def _is_numeric(value) -> bool:
    if isinstance(value, (TensorBase, np.ndarray, np.generic, bool, int, float, complex)):
        return True
    try:
        return np.asarray(value).dtype.kind in "biufc"
    except (TypeError, ValueError):
        return False


def _iterate(self):
    """The slices along the first axis, as numpy iterates (a vector's elements are copies,
    as ``x[i]``'s are); under autograd PyTorch's ``unbind``, whose backward stacks their
    gradients."""
    if records_nothing(self) or not self._shape:
        if len(self._shape) == 1 and not self._storage._half:
            # one copy of the vector, each element the storage of one of its items
            values, kind = self.numpy().copy(), type(self._storage)
            return (_new_tensor(kind, values[k : k + 1], (), ()) for k in range(len(values)))
        return TensorBase.__iter__(self)
    if len(self._shape) == 1:
        return (movement.clone(e) for e in movement.unbind(self))
    return iter(movement.unbind(self))


def _contains(self, value) -> bool:
    """``value in t``: whether any element equals it (numpy, PyTorch), any dimensions."""
    found = self == value
    if not isinstance(found, TensorBase):  # Python's identity fallback, for None and such
        return bool(found)
    return bool(reduce.any(found))


METHODS = {
    # arithmetic, both sides
    "__add__": ew.add._plain,
    "__radd__": _swap(ew.add),
    "__sub__": ew.subtract._plain,
    "__rsub__": _swap(ew.subtract),
    "__mul__": ew.multiply._plain,
    "__rmul__": _swap(ew.multiply),
    "__truediv__": ew.divide._plain,
    "__rtruediv__": _swap(ew.divide),
    "__floordiv__": ew.floor_divide,
    "__rfloordiv__": _swap(ew.floor_divide),
    "__mod__": ew.remainder,
    "__rmod__": _swap(ew.remainder),
    "__divmod__": ew.divmod,
    "__rdivmod__": _swap(ew.divmod),
    "__pow__": ew.power,
    "__rpow__": _swap(ew.power),
    "__matmul__": linalg.matmul,
    "__rmatmul__": _swap(linalg.matmul),
    "__neg__": unary.negative,
    "__pos__": unary.positive,
    "__abs__": unary.abs,
    # comparisons and logic
    "__eq__": _comparison(ew.Equal),
    "__ne__": _comparison(ew.NotEqual),
    "__lt__": _comparison(ew.Less),
    "__le__": _comparison(ew.LessEqual),
    "__gt__": _comparison(ew.Greater),
    "__ge__": _comparison(ew.GreaterEqual),
    "__contains__": _contains,
    "__and__": ew.bitwise_and,
    "__rand__": _swap(ew.bitwise_and),
    "__or__": ew.bitwise_or,
    "__ror__": _swap(ew.bitwise_or),
    "__xor__": ew.bitwise_xor,
    "__rxor__": _swap(ew.bitwise_xor),
    "__lshift__": ew.left_shift,
    "__rlshift__": _swap(ew.left_shift),
    "__rshift__": ew.right_shift,
    "__rrshift__": _swap(ew.right_shift),
    "__invert__": unary.invert,
    "__hash__": object.__hash__,
    "__array_ufunc__": numpy_protocol.array_ufunc,
    "__array_function__": numpy_protocol.array_function,
    # in place
    "__iadd__": _inplace(ew.add),
    "add_": _inplace(ew.add),
    "__isub__": _inplace(ew.subtract),
    "sub_": _inplace(ew.subtract),
    "__imul__": _inplace(ew.multiply),
    "mul_": _inplace(ew.multiply),
    "__itruediv__": _inplace(ew.divide),
    "div_": _inplace(ew.divide),
    "__ifloordiv__": _inplace(ew.floor_divide),
    "__imod__": _inplace(ew.remainder),
    "__ipow__": _inplace(ew.power),
    "pow_": _inplace(ew.power),
    # (without these, Python would run ``v |= m`` as ``v = v | m``: a new tensor, and the
    # memory ``v`` views unchanged)
    "__iand__": _inplace(ew.bitwise_and),
    "__ior__": _inplace(ew.bitwise_or),
    "__ixor__": _inplace(ew.bitwise_xor),
    "__ilshift__": _inplace(ew.left_shift),
    "__irshift__": _inplace(ew.right_shift),
    "copy_": _copy_,
    "fill_": _fill_,
    "fill": _fill,
    "zero_": lambda self: _fill_(self, 0),
    "__setitem__": _setitem_method,
    # indexing and shape
    "__getitem__": _getitem,
    "reshape": movement.reshape,
    "view": movement.view,
    "permute": movement.permute,
    "transpose": movement.transpose_method,
    "swapaxes": movement.swapaxes,
    "T": property(movement.transpose),
    "mT": property(movement.matrix_transpose),
    "expand": movement.expand,
    "broadcast_to": movement.broadcast_to,
    "squeeze": movement.squeeze,
    "unsqueeze": movement.unsqueeze,
    "flatten": shaping.flatten_method,
    "ravel": shaping.ravel,
    "narrow": movement.narrow,
    "unbind": movement.unbind,
    "__iter__": _iterate,
    "diagonal": movement.diagonal,
    "flip": movement.flip,
    "astype": movement.astype,
    "clone": movement.clone,
    "copy": shaping.copy_method,
    "repeat": shaping.repeat,
    "flat": property(movement.FlatIterator, movement.FlatIterator.assign),
    "dot": linalg.dot,
    "trace": linalg.trace,
    "contiguous": movement.contiguous,
    # complex parts (numpy's properties, setters included: ``z.imag += 1`` assigns back)
    "real": property(complex_parts.real, complex_parts._set_real),
    "imag": property(complex_parts.imag, complex_parts._set_imag),
    "conj": complex_parts.conj,
    "conjugate": complex_parts.conj,
    # reductions
    "sum": reduce.sum,
    "mean": reduce.mean,
    "prod": reduce.prod,
    "max": reduce.max,
    "min": reduce.min,
    "all": reduce.all,
    "any": reduce.any,
    "logsumexp": reduce.logsumexp,
    "var": reduce.var,
    "std": reduce.std,
    "ptp": statistics.ptp,
    "median": statistics.median_lower,
    "argmax": reduce.argmax,
    "argmin": reduce.argmin,
    "cumsum": reduce.cumsum,
    "cumprod": reduce.cumprod,
    # math
    "matmul": linalg.matmul,
    "clip": _clip,
    "clamp": _clip,
    "round": unary.round,
    "abs": unary.abs,
    "exp": unary.exp,
    "log": unary.log,
    "sqrt": unary.sqrt,
    "square": unary.square,
    "sin": unary.sin,
    "cos": unary.cos,
    "tanh": unary.tanh,
    "sigmoid": unary.sigmoid,
    "relu": unary.relu,
    "sign": unary.sign,
    "floor": unary.floor,
    "ceil": unary.ceil,
    "gather": lambda self, dim, index: indexing.gather(self, dim, index),
    "take_along_axis": indexing.take_along_axis,
}

for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
del _name, _method
