"""numpy's power-series polynomials (highest power first): polyval, polyder and polyint
are jitgrad arithmetic, so differentiable; polyfit is numpy's least squares, differentiable
in y (the fit is linear in y); roots and poly are numpy's eigenvalue routines.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor, zeros
from ..recording import compute
from ..tensor import TensorBase
from .linalg import matmul
from .movement import concatenate, stack
from .numpy_tier import tensor_over
from .products import convolve


def _values(x):
    return x.numpy() if isinstance(x, TensorBase) else np.asarray(x)


def polyval(p, x) -> Tensor:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by
    Horner's rule; differentiable in p and x.

    >>> import jitgrad as jg
    >>> jg.polyval(jg.tensor([3.0, 0.0, 1.0]), jg.tensor([1.0, 2.0])).tolist()
    [4.0, 13.0]
    """
    if isinstance(x, poly1d):
        return poly1d(p)(x)
    p, x = _coefficients(p), as_tensor(x)
    y = zeros(x.shape, x.dtype)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def polyder(p, m=1) -> Tensor:
    """The coefficients of the ``m``-th derivative of the polynomial ``p``.

    >>> import jitgrad as jg
    >>> jg.polyder(jg.tensor([1, 1, 1, 1])).tolist()
    [3, 2, 1]
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    given, p = p, _coefficients(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * tensor_over(np.arange(n, 0, -1))
    return _as_poly1d_if(p, given)


def polyint(p, m=1, k=None) -> Tensor:
    """The coefficients of the ``m``-th antiderivative of ``p``, with integration
    constants ``k`` (a scalar, or one per integration; 0 by default).

    >>> import jitgrad as jg
    >>> jg.polyint(jg.tensor([3.0, 2.0, 1.0])).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = np.atleast_1d(np.zeros(m, float) if k is None else _values(k))
    if len(k) == 1 and m > 1:
        k = k[0] * np.ones(m, float)
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    given, p = p, _coefficients(p)
    for i in range(m):
        integrated = p / tensor_over(np.arange(p.shape[0], 0, -1))
        p = concatenate([integrated, tensor_over(k[i : i + 1])])
    return _as_poly1d_if(p, given)


class PolyFit(Function):
    """numpy's least-squares coefficients of y; the gradient is the fit's linear map,
    transposed (the map is the fit of each unit vector, found only when needed)."""

    def __init__(self, x, deg, rcond, w):
        self.x, self.deg, self.rcond, self.w = x, deg, rcond, w

    def forward(self, y):
        return tensor_over(
            compute(lambda v: np.polyfit(self.x, v, self.deg, self.rcond, w=self.w), y.numpy())
        )

    def backward(self, gy):
        y = self.inputs[0]
        unit = np.eye(len(self.x))
        fit = tensor_over(
            np.polyfit(self.x, unit, self.deg, self.rcond, w=self.w).astype(gy.dtype.numpy)
        )
        return matmul(fit.T, gy).astype(y.dtype)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """numpy's least-squares polynomial fit of degree ``deg`` (coefficients highest power
    first; one column per column of a 2-D y), differentiable in y. ``full`` adds the
    residuals, rank, singular values and rcond; ``cov`` the coefficients' covariance.

    >>> import jitgrad as jg
    >>> jg.polyfit(jg.tensor([0.0, 1.0, 2.0]), jg.tensor([1.0, 3.0, 5.0]), 1).round(6).tolist()
    [2.0, 1.0]
    """
    x_values, y = _values(x), as_tensor(y)
    w = None if w is None else _values(w)
    if full or cov:
        found = np.polyfit(x_values, y.numpy(), deg, rcond, full, w, cov)
        rest = tuple(tensor_over(f) if isinstance(f, np.ndarray) else f for f in found[1:])
    if y.dtype.kind in "biu" or y.dtype.name in ("float16", "float32"):
        y = y.astype("float64")  # numpy fits in float64
    coefficients = PolyFit(x_values, deg, rcond, w)(y)
    return (coefficients, *rest) if full or cov else coefficients


def roots(p) -> Tensor:
    """The roots of the polynomial ``p`` (numpy's companion-matrix eigenvalues).

    >>> import jitgrad as jg
    >>> sorted(jg.roots(jg.tensor([1.0, -3.0, 2.0])).tolist())
    [1.0, 2.0]
    """
    return tensor_over(np.roots(_values(p)))


def poly(seq_of_zeros) -> Tensor:
    """The coefficients of the monic polynomial with the given roots (or of a square
    matrix's characteristic polynomial).

    >>> import jitgrad as jg
    >>> jg.poly(jg.tensor([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    return tensor_over(np.poly(_values(seq_of_zeros)))


def _coefficients(p) -> Tensor:
    """A polynomial's coefficients as a 1-D tensor (a ``poly1d``'s, or the sequence's)."""
    if isinstance(p, poly1d):
        return p.coeffs
    p = as_tensor(np.asarray(p) if isinstance(p, (list, tuple)) else p)
    return p.reshape(1) if p.ndim == 0 else p


def _as_poly1d_if(result, *operands):
    """numpy's rule: a poly1d among the operands makes the result one."""
    if any(isinstance(p, poly1d) for p in operands):
        return tuple(map(poly1d, result)) if isinstance(result, tuple) else poly1d(result)
    return result


def _aligned(a1: Tensor, a2: Tensor) -> tuple[Tensor, Tensor]:
    """The two coefficient tensors, the shorter padded with leading zeros."""
    gap = a2.shape[0] - a1.shape[0]
    if gap > 0:
        a1 = concatenate([zeros((gap,), a1.dtype), a1])
    elif gap < 0:
        a2 = concatenate([zeros((-gap,), a2.dtype), a2])
    return a1, a2


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first, or ``poly1d``),
    numpy's ``polyadd``; differentiable.

    >>> import jitgrad as jg
    >>> jg.polyadd(jg.tensor([1, 2]), jg.tensor([9, 5, 4])).tolist()
    [9, 6, 6]
    """
    x, y = _aligned(_coefficients(a1), _coefficients(a2))
    return _as_poly1d_if(x + y, a1, a2)


def polysub(a1, a2):
    """The difference ``a1 - a2`` of two polynomials, numpy's ``polysub``.

    >>> import jitgrad as jg
    >>> jg.polysub(jg.tensor([2, 10, -2]), jg.tensor([3, 10, -4])).tolist()
    [-1, 0, 2]
    """
    x, y = _aligned(_coefficients(a1), _coefficients(a2))
    return _as_poly1d_if(x - y, a1, a2)


def polymul(a1, a2):
    """The product of two polynomials (leading zeros dropped first), numpy's
    ``polymul``: their coefficients' convolution, differentiable.

    >>> import jitgrad as jg
    >>> jg.polymul(jg.tensor([1.0, 2.0, 3.0]), jg.tensor([9.0, 5.0, 1.0])).tolist()
    [9.0, 23.0, 38.0, 17.0, 3.0]
    """
    result = convolve(poly1d(a1).coeffs, poly1d(a2).coeffs)
    return _as_poly1d_if(result, a1, a2)


def polydiv(u, v):
    """The quotient and remainder of the polynomial division ``u / v`` (floats), numpy's
    ``polydiv`` by its long division; differentiable.

    >>> import jitgrad as jg
    >>> q, r = jg.polydiv(jg.tensor([3.0, 5.0, 2.0]), jg.tensor([2.0, 1.0]))
    >>> q.tolist(), r.tolist()
    ([1.5, 1.75], [0.25])
    """
    a, b = _coefficients(u) + 0.0, _coefficients(v) + 0.0
    dtype = (a[0] + b[0]).dtype
    m, n = a.shape[0] - 1, b.shape[0] - 1
    scale = 1.0 / b[0]
    quotient = []
    r = a.astype(dtype)
    for k in range(m - n + 1):
        d = scale * r[k]
        quotient.append(d)
        r = concatenate([r[:k], r[k : k + n + 1] - d * b, r[k + n + 1 :]])
    q = _stacked(quotient, dtype) if quotient else zeros((1,), dtype)
    while r.shape[0] > 1 and np.allclose(_values(r[0].detach()), 0, rtol=1e-14):
        r = r[1:]
    return _as_poly1d_if((q, r), u, v)


def _stacked(values: list, dtype) -> Tensor:
    """0-d tensors as one 1-D tensor of ``dtype``."""
    return stack(values).astype(dtype, copy=False)


class poly1d:  # noqa: N801  numpy's name
    """A one-variable polynomial, numpy's ``poly1d``: coefficients (highest power first,
    a tensor, leading zeros dropped) or, with ``r=True``, its roots. Callable (Horner's
    rule), with arithmetic (``+ - * / **``), ``roots``, ``deriv`` and ``integ``, all
    jitgrad ops, so differentiable in the coefficients.

    >>> import jitgrad as jg
    >>> p = jg.poly1d([1.0, 2.0, 3.0])
    >>> p(0.5).item(), (p * p).coeffs.tolist(), p.deriv().coeffs.tolist()
    (4.25, [1.0, 4.0, 10.0, 12.0, 9.0], [2.0, 2.0])
    >>> print(p)
       2
    1 x + 2 x + 3
    """

    __hash__ = None

    def __init__(self, c_or_r, r: bool = False, variable: str | None = None):
        if isinstance(c_or_r, poly1d):
            self._variable = c_or_r._variable if variable is None else variable
            self._coeffs = c_or_r._coeffs
            return
        if r:
            c_or_r = poly(c_or_r)
        c = _coefficients(c_or_r)
        if c.ndim > 1:
            raise ValueError("Polynomial must be 1d only.")
        nonzero = np.flatnonzero(_values(c.detach()))
        c = c[nonzero[0] :] if nonzero.size else zeros((1,), c.dtype)
        self._coeffs = c
        self._variable = "x" if variable is None else variable

    @property
    def coeffs(self) -> Tensor:
        """The coefficients, highest power first."""
        return self._coeffs

    c = coef = coefficients = coeffs

    @property
    def variable(self) -> str:
        return self._variable

    @property
    def order(self) -> int:
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self) -> Tensor:
        return roots(self._coeffs)

    r = roots

    def __array__(self, dtype=None, copy=None):
        values = _values(self._coeffs.detach())
        return values if dtype is None else values.astype(dtype)

    def __repr__(self) -> str:
        return "poly1d(" + repr(_values(self._coeffs.detach()))[6:-1] + ")"

    def __str__(self) -> str:
        return str(np.poly1d(_values(self._coeffs.detach()), variable=self._variable))

    def __len__(self) -> int:
        return self.order

    def __call__(self, val):
        if isinstance(val, poly1d):
            result = poly1d(0.0)
            for c in self._coeffs:
                result = result * val + c
            return result
        return polyval(self._coeffs, val)

    def __neg__(self):
        return poly1d(-self._coeffs)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if _is_scalar(other):
            return poly1d(self._coeffs * other)
        return poly1d(polymul(self._coeffs, _coefficients(poly1d(other))))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __add__(self, other):
        return poly1d(polyadd(self._coeffs, _coefficients(poly1d(other))))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(polysub(self._coeffs, _coefficients(poly1d(other))))

    def __rsub__(self, other):
        return poly1d(polysub(_coefficients(poly1d(other)), self._coeffs))

    def __pow__(self, val):
        if not isinstance(val, int) or val != int(val) or val < 0:
            raise ValueError("Power to non-negative integers only.")
        result = poly1d(1)
        for _ in range(val):
            result = result * self
        return result

    def __truediv__(self, other):
        if _is_scalar(other):
            return poly1d(self._coeffs / other)
        return polydiv(self, poly1d(other))

    def __rtruediv__(self, other):
        if _is_scalar(other):
            return poly1d(other / self._coeffs)
        return polydiv(poly1d(other), self)

    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        a, b = _values(self._coeffs.detach()), _values(other._coeffs.detach())
        return a.shape == b.shape and bool((a == b).all())

    def __ne__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        return not self.__eq__(other)

    def __getitem__(self, power):
        if power > self.order or power < 0:
            return self._coeffs.dtype.numpy.type(0)
        return self._coeffs[self.order - power]

    def __setitem__(self, power, value):
        if power < 0:
            raise ValueError("Does not support negative powers.")
        if power > self.order:
            grown = zeros((power - self.order,), self._coeffs.dtype)
            self._coeffs = concatenate([grown, self._coeffs])
        self._coeffs[self.order - power] = value

    def __iter__(self):
        return iter(self._coeffs)

    def integ(self, m: int = 1, k=0):
        """The ``m``-th antiderivative, with integration constants ``k``."""
        return poly1d(polyint(self._coeffs, m=m, k=k))

    def deriv(self, m: int = 1):
        """The ``m``-th derivative."""
        return poly1d(polyder(self._coeffs, m=m))


def _is_scalar(x) -> bool:
    return np.isscalar(x) or (isinstance(x, TensorBase) and x.ndim == 0)


__all__ = [
    "polyval",
    "polyder",
    "polyint",
    "polyfit",
    "roots",
    "poly",
    "polyadd",
    "polysub",
    "polymul",
    "polydiv",
    "poly1d",
]
