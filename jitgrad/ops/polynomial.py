"""numpy's power-series polynomials (highest power first): polyval, polyder and polyint
are jitgrad arithmetic, so differentiable; polyfit is numpy's least squares, differentiable
in y (the fit is linear in y); roots and poly are numpy's eigenvalue routines.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor, zeros
from ..recording import compute
from ..tensor import TensorBase, wrap_numpy
from .linalg import matmul
from .movement import concatenate


def _wrap(array) -> Tensor:
    return wrap_numpy(np.asarray(array), Tensor)


def _values(x):
    return x.numpy() if isinstance(x, TensorBase) else np.asarray(x)


def polyval(p, x) -> Tensor:
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by
    Horner's rule; differentiable in p and x.

    >>> import jitgrad as jg
    >>> jg.polyval(jg.tensor([3.0, 0.0, 1.0]), jg.tensor([1.0, 2.0])).tolist()
    [4.0, 13.0]
    """
    p, x = as_tensor(p), as_tensor(x)
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
    p = as_tensor(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = p[:-1] * _wrap(np.arange(n, 0, -1))
    return p


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
    p = as_tensor(p)
    for i in range(m):
        integrated = p / _wrap(np.arange(p.shape[0], 0, -1))
        p = concatenate([integrated, _wrap(k[i : i + 1])])
    return p


class PolyFit(Function):
    """numpy's least-squares coefficients of y; the gradient is the fit's linear map,
    transposed (the map is the fit of each unit vector, found only when needed)."""

    def __init__(self, x, deg, rcond, w):
        self.x, self.deg, self.rcond, self.w = x, deg, rcond, w

    def forward(self, y):
        return _wrap(compute(lambda v: np.polyfit(self.x, v, self.deg, self.rcond, w=self.w),
                             y.numpy()))  # fmt: skip

    def backward(self, gy):
        y = self.inputs[0]
        unit = np.eye(len(self.x))
        fit = _wrap(np.polyfit(self.x, unit, self.deg, self.rcond, w=self.w).astype(gy.dtype.numpy))
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
        rest = tuple(_wrap(f) if isinstance(f, np.ndarray) else f for f in found[1:])
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
    return _wrap(np.roots(_values(p)))


def poly(seq_of_zeros) -> Tensor:
    """The coefficients of the monic polynomial with the given roots (or of a square
    matrix's characteristic polynomial).

    >>> import jitgrad as jg
    >>> jg.poly(jg.tensor([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    return _wrap(np.poly(_values(seq_of_zeros)))


__all__ = ["polyval", "polyder", "polyint", "polyfit", "roots", "poly"]
