"""The numpy tier of elementwise ops (``jitgrad/tiers.py`` says when numpy runs eager work).

numpy computes the op's formula (the reference evaluator's) on the tensors' arrays, and the
result's array becomes the new tensor's storage, without a copy. A formula's work is its
output's elements times the numpy calls it makes: up to ``config.numpy_tier_work`` it runs
here, beyond it in a kernel, which fuses the formula into one pass.
"""

from __future__ import annotations

import numpy as np

from .. import backend, tiers
from .._config import config
from ..autograd.tensor import Tensor
from ..storage import storage_class
from ..strided import layout
from ..tensor import wrap_numpy
from ..tiers import IGNORE_ERRORS, numpy_errors
from . import reference

_new = object.__new__
_ndarray = np.ndarray


def new_tensor(storage_type, array: np.ndarray, shape, strides) -> Tensor:
    """A tensor of ``shape`` over ``array``, a new C-contiguous array of the storage's
    dtype that nothing else holds: it becomes the storage's elements."""
    storage = storage_type._holding(array if array.ndim == 1 else array.reshape(-1))
    return Tensor._make(storage, shape, strides, 0)


def tensor_of(array: np.ndarray) -> Tensor:
    """A tensor of a numpy result: its own array when numpy made a new one, else a copy (a
    view of an operand, a numpy scalar)."""
    if array.__class__ is not _ndarray:
        array = np.array(array)
    elif array.base is not None or not array.flags.c_contiguous:
        array = array.copy()
    storage_type = _STORAGE_TYPES.get(array.dtype)
    if storage_type is None:
        storage_type = _STORAGE_TYPES[array.dtype] = storage_class(array.dtype)
    if storage_type._half:  # (kernels read float16 as its bits: the general wrapping)
        return wrap_numpy(array, Tensor)
    shape = array.shape
    strides = () if not shape else (1,) if len(shape) == 1 else layout.contiguous_strides(shape)
    return new_tensor(storage_type, array, shape, strides)


_STORAGE_TYPES: dict = {}


def reduce(kind: str, x: Tensor, axes: tuple, keepdims: bool, dtype=None) -> Tensor:
    """The reduction ``kind`` ("sum", "max", "min") of ``x`` over ``axes``, in ``dtype``
    (None: ``x``'s), by numpy's ufunc reduction."""
    a = x.numpy()
    dtype = a.dtype if dtype is None else dtype.numpy
    return tensor_of(tiers.quietly(_REDUCTIONS[kind].reduce, a, axes, dtype, None, keepdims))


_REDUCTIONS = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def fits(calls: int, numel: int) -> bool:
    """Whether the numpy tier runs a formula of ``calls`` numpy calls over ``numel``
    output elements: its work, their product, is at most ``config.numpy_tier_work``. A
    formula of one numpy ufunc runs here below the size where kernels share work among
    threads, as numpy's loops are as fast as a serial kernel."""
    if calls == 1:
        return tiers.small(numel)
    return numel * calls <= config.numpy_tier_work


def compiles_later() -> bool:
    """Whether a call whose work is too large for the numpy tier runs there anyway until
    its signature's ``config.compile_after_calls``-th call, which compiles its kernel."""
    return config.compile_after_calls > 1 and config.numpy_tier_work > 0


class UntilCompiled:
    """A signature's decision while its kernel waits: the numpy tier's launch for its first
    ``config.compile_after_calls - 1`` calls, then the kernel (compiled at that call), which
    becomes the signature's decision. A one-off call never waits for the compiler; a
    repeated one compiles once. (Compiling in a background thread instead starves: numba's
    compiler is Python, and a busy foreground holds the GIL.)"""

    __slots__ = ("numpy_launch", "calls_left")

    def __init__(self, numpy_launch: ElementwiseLaunch):
        self.numpy_launch = numpy_launch
        self.calls_left = config.compile_after_calls - 1

    def launch(self, op, tensors):
        known = op.known_call
        if self.calls_left > 0 or known is None:
            self.calls_left -= 1
            return self.numpy_launch.launch(op, tensors)
        op._lowered = True
        out = backend.kernels().elementwise_forward(op, tensors)  # compiles (op.decision)
        if out is None:  # no kernel applies: numpy for good
            known.decision = self.numpy_launch
            return self.numpy_launch.launch(op, tensors)
        known.decision = op.decision
        return out


class ElementwiseLaunch:
    """A signature's numpy-tier decision: ``launch(op, tensors)`` evaluates the op's
    formula with numpy on the tensors' arrays and returns the new tensor.

    Everything the signature fixes is worked out once: per operand of the formula, None
    for a constant, else how its array is had (the storage's own array when the tensor is
    contiguous and fills it; a view of the given byte strides otherwise) and the dtype it
    is cast to first (float16 computes in float32, as the kernels do; ints in a float op
    in the float)."""

    __slots__ = ("storage_type", "out_dtype", "shape", "strides", "whole", "f", "launch", "specs")

    def __init__(self, op, out_dtype, shape, xs):
        self.storage_type = storage_class(out_dtype)
        self.out_dtype = np.dtype(out_dtype.numpy)
        self.shape = tuple(shape)
        self.strides = layout.contiguous_strides(self.shape)
        self.f = type(op).f
        compute = np.dtype(
            np.float32 if op.result_dtype.numpy == np.float16 else op.result_dtype.numpy
        )
        self.whole, self.specs = [], []
        for position, slot in enumerate(op.slots):
            if slot is None:
                self.specs.append(None)
                continue
            x = xs[slot]
            dtype = np.dtype(x.dtype.numpy)
            contiguous = x._strides == layout.contiguous_strides(x._shape)
            whole = layout.numel(x._shape) if contiguous and not x._storage._half else None
            cast = None
            if dtype != compute and not (dtype == np.bool_ and op.keeps_bool(position)):
                cast = compute
            byte_strides = tuple(s * dtype.itemsize for s in x._strides)
            reshape = x._shape if len(x._shape) != 1 else None
            self.specs.append((slot, whole, reshape, x._shape, dtype, byte_strides, cast))
            self.whole.append(whole)
        tensors = [spec for spec in self.specs if spec is not None]
        plain = all(spec[1] is not None and spec[6] is None for spec in tensors)
        self.launch = self._general
        if plain and numpy_errors is not None and self.shape:
            if len(self.specs) == len(tensors) == 2:
                self.launch = _binary(self, xs)
            elif len(tensors) == 1 and len(self.specs) <= 2:
                constant_at = None if len(self.specs) == 1 else self.specs.index(None)
                self.launch = _one_tensor(self, xs, constant_at)

    def _general(self, op, tensors):
        op._lowered = False
        args = []
        for spec, constant in zip(self.specs, op.constants):
            if spec is None:
                args.append(constant)
                continue
            slot, whole, reshape, shape, dtype, byte_strides, cast = spec
            x = tensors[slot]
            a = x._storage.kernel_array
            if whole is None or x._offset or a.size != whole:
                a = _ndarray(shape, dtype, a, x._offset * dtype.itemsize, byte_strides)
            elif reshape is not None:
                a = a.reshape(reshape)
            args.append(a if cast is None else a.astype(cast))
        y = tiers.quietly(self.f, op, reference, *args)
        if y.__class__ is not _ndarray:
            y = np.asarray(y)
        if y.dtype is not self.out_dtype:
            y = y.astype(self.out_dtype)
        elif y.base is not None or not y.flags.c_contiguous:
            y = y.copy()  # (a view of an operand, or numpy's Fortran order for such operands)
        else:
            for a in args:
                if y is a:  # (a formula that returns an operand: the result is new memory)
                    y = y.copy()
                    break
        if y.shape != self.shape:  # (a formula that ignores an input, broadcast by it)
            y = np.broadcast_to(y, self.shape).copy()
        if self.storage_type._half:
            return tensor_of(y)  # (float16 gets its bits' storage there)
        return new_tensor(self.storage_type, y, self.shape, self.strides)


# The common calls (one or two contiguous tensors, at most one constant, no casts) in one
# frame each, every fixed value bound (``new_tensor``'s work inline): this is the per-op
# hot path of small eager work.


def _binary(decision: ElementwiseLaunch, xs):
    f, out, storage_type = decision.f, decision.out_dtype, decision.storage_type
    shape, strides, one_dim = decision.shape, decision.strides, len(decision.shape) == 1
    (n0, n1), shape0, shape1 = decision.whole, xs[0]._shape, xs[1]._shape
    reshape0, reshape1 = len(shape0) != 1, len(shape1) != 1
    errors, ignore = numpy_errors, IGNORE_ERRORS

    def launch(op, tensors):
        op._lowered = False
        x0, x1 = tensors
        a0, a1 = x0._storage.kernel_array, x1._storage.kernel_array
        if x0._offset or a0.size != n0:
            a0 = x0.numpy()
        elif reshape0:
            a0 = a0.reshape(shape0)
        if x1._offset or a1.size != n1:
            a1 = x1.numpy()
        elif reshape1:
            a1 = a1.reshape(shape1)
        token = errors.set(ignore)
        try:
            y = f(op, reference, a0, a1)
        finally:
            errors.reset(token)
        if (
            y.__class__ is not _ndarray
            or y.dtype is not out
            or y.base is not None
            or y is a0
            or y is a1
            or y.shape != shape
        ):
            y = _fresh(y, out, shape)
        s = _new(storage_type)
        s.kernel_array, s._version = y if one_dim else y.reshape(-1), 0
        t = _new(Tensor)
        t._storage, t._shape, t._strides, t._offset = s, shape, strides, 0
        t._requires_grad, t._grad, t._grad_fn, t._output_nr, t._accumulator = _FRESH
        return t

    return launch


def _one_tensor(decision: ElementwiseLaunch, xs, constant_at: int | None):
    """A formula of one contiguous tensor (``exp(x)``), or of it and a constant at
    ``constant_at`` (``x * 2``, ``0.5 < x``)."""
    f, out, storage_type = decision.f, decision.out_dtype, decision.storage_type
    shape, strides, one_dim = decision.shape, decision.strides, len(decision.shape) == 1
    (n0,), shape0 = decision.whole, xs[0]._shape
    reshape0 = len(shape0) != 1
    errors, ignore = numpy_errors, IGNORE_ERRORS

    def launch(op, tensors):
        op._lowered = False
        (x0,) = tensors
        a0 = x0._storage.kernel_array
        if x0._offset or a0.size != n0:
            a0 = x0.numpy()
        elif reshape0:
            a0 = a0.reshape(shape0)
        token = errors.set(ignore)
        try:
            if constant_at is None:
                y = f(op, reference, a0)
            elif constant_at:
                y = f(op, reference, a0, op.constants[1])
            else:
                y = f(op, reference, op.constants[0], a0)
        finally:
            errors.reset(token)
        if (
            y.__class__ is not _ndarray
            or y.dtype is not out
            or y.base is not None
            or y is a0
            or y.shape != shape
        ):
            y = _fresh(y, out, shape)
        s = _new(storage_type)
        s.kernel_array, s._version = y if one_dim else y.reshape(-1), 0
        t = _new(Tensor)
        t._storage, t._shape, t._strides, t._offset = s, shape, strides, 0
        t._requires_grad, t._grad, t._grad_fn, t._output_nr, t._accumulator = _FRESH
        return t

    return launch


_FRESH = (False, None, None, 0, None)  # a new tensor's autograd fields


def _fresh(y, dtype, shape) -> np.ndarray:
    """A formula's result as a new C-contiguous array of ``dtype`` and ``shape``."""
    y = np.asarray(y)
    if y.shape != shape:
        y = np.broadcast_to(y, shape)
    return np.array(y, dtype=dtype, order="C")
