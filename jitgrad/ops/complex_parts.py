"""The parts of complex tensors: ``real`` and ``imag`` as views, ``conj``, numpy's rules.

A complex tensor's elements are pairs of floats in memory (real part first), so its real
and imaginary parts are float tensors over the same bytes: strides doubled, and the
imaginary part one float further on. Writes through them show in the complex tensor, as
in numpy and PyTorch; a real tensor's ``real`` is the tensor itself. Gradients follow
PyTorch's convention for complex tensors: a real loss L gives a complex ``z`` the gradient
dL/d(re z) + i dL/d(im z), so the real part passes its gradient g back as g + 0j, the
imaginary part as 0 + gj, and the conjugate conjugates it.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..autograd.function import Function, records_nothing
from ..autograd.tensor import Tensor, as_tensor
from ..dtypes import DType
from ..recording import compute
from ..tensor import TensorBase, _same_layout, wrap_numpy
from .elementwise import arctan2, equal, not_equal, where
from .numpy_tier import tensor_over
from .unary import ComplexByNumpy

_PART_DTYPES = {"complex64": "float32", "complex128": "float64"}


def _part(z: Tensor, which: int) -> Tensor:
    """The float view of ``z``'s real (``which`` 0) or imaginary (1) parts."""
    # (its writes and the complex storage's are counted together: ``Storage._as_dtype``)
    storage = z._storage._as_dtype(_PART_DTYPES[z.dtype.name])
    storage.untyped()._under_tensors = True  # (a resize_ must not cut under this view)
    strides = tuple(2 * s for s in z._strides)
    # An empty view reads nothing, and numpy refuses an offset at the end of its buffer.
    offset = 2 * z._offset + (which if z.numel() else 0)
    return Tensor._make(storage, z._shape, strides, offset)


class Part(Function):
    """The real (``which`` 0) or imaginary (1) part of a complex tensor: a float view of
    its memory (another storage object over the same bytes, so ``base_of`` is the input)."""

    needs_input_values = False
    is_view = True
    differentiates_complex = True

    def __init__(self, which: int):
        self.which = which

    def forward(self, z):
        return _part(z, self.which)

    view_of = forward

    def base_of(self, t):
        return None if self.inputs is None else self.inputs[0]

    def again(self, t) -> Function:
        return Part(self.which)

    def backward(self, gy):
        g = gy.astype(self.inputs[0].dtype)
        return g * 1j if self.which else g


class Conj(Function):
    needs_input_values = False
    differentiates_complex = True

    def forward(self, z):
        return tensor_over(compute(np.conjugate, z.numpy()))

    def backward(self, gy):
        return Conj()(gy)


class Angle(ComplexByNumpy):
    """The angle of complex z (numpy's, in radians or degrees). Its gradient is PyTorch's:
    a gradient g of the angle gives z the direction i z / |z|**2 scaled by g (0 at 0)."""

    differentiates_complex = True

    def __init__(self, deg: bool):
        super().__init__(partial(np.angle, deg=deg))
        self.scale = 180 / np.pi if deg else 1.0

    def backward(self, gy):
        z = self.inputs[0]
        squared = real(z * Conj()(z))
        turned = where(squared == 0, 0, z * 1j / squared)
        return turned * (gy * self.scale)


def _part_of(z: Tensor, which: int) -> Tensor:
    return _part(z, which) if records_nothing(z) else Part(which)(z)


def real(x, /) -> Tensor:
    """The real part. Of a complex tensor, a float view sharing its memory (writes through
    it change the complex tensor); of any other tensor, the tensor itself, as numpy's view
    of the same data (its gradient flows on).

    >>> import jitgrad as jg
    >>> z = jg.tensor([1 + 2j, 3 - 4j])
    >>> z.real.tolist(), z.real.dtype
    ([1.0, 3.0], jitgrad.float64)
    >>> z.real[0] = 5.0
    >>> z.tolist()
    [(5+2j), (3-4j)]
    """
    x = as_tensor(x)
    return _part_of(x, 0) if x.dtype.is_complex else x


def imag(x, /) -> Tensor:
    """The imaginary part. Of a complex tensor, a float view sharing its memory; of any
    other tensor, read-only zeros of its dtype and shape, as numpy gives (PyTorch raises
    instead: jitgrad is numpy-like here). The zeros carry no gradient.

    >>> import jitgrad as jg
    >>> z = jg.tensor([1 + 2j, 3 - 4j])
    >>> z.imag.tolist()
    [2.0, -4.0]
    >>> z.imag += 1
    >>> z.tolist()
    [(1+3j), (3-3j)]
    >>> jg.tensor([1.5, 2.5]).imag.tolist()
    [0.0, 0.0]
    """
    x = as_tensor(x)
    if x.dtype.is_complex:
        return _part_of(x, 1)
    zeros = np.zeros(x.shape, x.dtype.numpy)
    zeros.flags.writeable = False
    return wrap_numpy(zeros, Tensor)


def conj(x, /) -> Tensor:
    """The complex conjugate: of a complex tensor, a new tensor with the imaginary parts
    negated; any other tensor is its own conjugate and comes back as it is (PyTorch's
    ``conj``; numpy gives an equal copy), gradient included.

    >>> import jitgrad as jg
    >>> jg.conj(jg.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    x = as_tensor(x)
    return Conj()(x) if x.dtype.is_complex else x


conjugate = conj


def angle(z, deg: bool = False) -> Tensor:
    """The counterclockwise angle of each element from the positive real axis, in radians
    (degrees with ``deg``), as numpy's ``angle``: 0 or pi for real numbers.

    >>> import jitgrad as jg
    >>> jg.angle(jg.tensor([1j, -1.0]), deg=True).tolist()
    [90.0, 180.0]
    """
    z = as_tensor(z)
    if z.dtype.is_complex:
        return Angle(deg)(z)
    radians = arctan2(imag(z), z)
    return radians * (180 / np.pi) if deg else radians


def _set_real(x: Tensor, value) -> None:
    """``x.real = value``: numpy's setter, a write of ``value`` into the real parts."""
    _assign(real(x), value)


def _set_imag(x: Tensor, value) -> None:
    if not x.dtype.is_complex:
        raise TypeError(
            f"a {x.dtype.name} tensor has no imaginary part to set (as in numpy); make it "
            "complex first, e.g. x.astype(jg.complex128)"
        )
    _assign(imag(x), value)


def _assign(part: Tensor, value) -> None:
    # ``z.real += 1`` has already written through the view it read; Python then assigns
    # that view back, which is nothing to do.
    if isinstance(value, TensorBase) and value._shape == part._shape and _same_layout(value, part):
        return
    part[...] = value


def _operand(x) -> Tensor:
    return as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)


def iscomplex(x) -> Tensor:
    """True where x has a nonzero imaginary part (always False for real dtypes), numpy's
    ``iscomplex``; a 0-d bool tensor for a scalar.

    >>> import jitgrad as jg
    >>> jg.iscomplex(jg.tensor([1 + 1j, 1 + 0j])).tolist(), jg.iscomplex(jg.tensor([1.0])).tolist()
    ([True, False], [False])
    """
    return not_equal(imag(_operand(x)), 0)


def isreal(x) -> Tensor:
    """True where x's imaginary part is zero (always True for real dtypes), numpy's
    ``isreal``.

    >>> import jitgrad as jg
    >>> jg.isreal(jg.tensor([1 + 1j, 1 + 0j])).tolist()
    [False, True]
    """
    return equal(imag(_operand(x)), 0)


def iscomplexobj(x) -> bool:
    """Whether x's dtype (or the dtype numpy gives x's data) is complex, whatever its
    values, numpy's ``iscomplexobj``.

    >>> import jitgrad as jg
    >>> jg.iscomplexobj(jg.tensor([1 + 0j])), jg.iscomplexobj([1.0]), jg.iscomplexobj(1j)
    (True, False, True)
    """
    if isinstance(x, (type, np.dtype, DType)):
        return False  # a type is no array (numpy sees an object array of it)
    try:
        kind = np.dtype(x.dtype).type
    except (AttributeError, TypeError):
        kind = np.asarray(x).dtype.type
    return issubclass(kind, np.complexfloating)


def isrealobj(x) -> bool:
    """``not iscomplexobj(x)``, numpy's ``isrealobj``.

    >>> import jitgrad as jg
    >>> jg.isrealobj(jg.tensor([1.0])), jg.isrealobj(jg.tensor([1j]))
    (True, False)
    """
    return not iscomplexobj(x)


def real_if_close(a, tol=100) -> Tensor:
    """The real part of a complex ``a`` whose imaginary parts are all below ``tol``
    (in machine epsilons of a's dtype when ``tol > 1``), else ``a``: numpy's
    ``real_if_close``.

    >>> import jitgrad as jg
    >>> jg.real_if_close(jg.tensor([2.1 + 4e-14j, 5.2 + 3e-15j]), tol=1000).tolist()
    [2.1, 5.2]
    """
    t = _operand(a)
    if not t.dtype.is_complex:
        return t
    if tol > 1:
        tol = float(np.finfo(t.dtype.numpy).eps) * tol
    if np.all(np.abs(imag(t).numpy()) < tol):
        return real(t)
    return t


def sort_complex(a) -> Tensor:
    """``a`` sorted by real part, then imaginary part, as complex (complex64 for 8- and
    16-bit integers, complex128 for other real dtypes), numpy's ``sort_complex``.

    >>> import jitgrad as jg
    >>> jg.sort_complex(jg.tensor([5, 3, 6, 2, 1])).tolist()
    [(1+0j), (2+0j), (3+0j), (5+0j), (6+0j)]
    """
    values = _operand(a).detach().numpy()
    return tensor_over(np.sort_complex(values))


__all__ = [
    "real",
    "imag",
    "conj",
    "conjugate",
    "angle",
    "iscomplex",
    "isreal",
    "iscomplexobj",
    "isrealobj",
    "real_if_close",
    "sort_complex",
]
