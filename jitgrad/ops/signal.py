"""numpy's signal helpers: the Bessel function ``i0`` and ``unwrap`` as jitgrad arithmetic
(so differentiable), and numpy's window functions (float64 tensors of numpy's values).

>>> import jitgrad as jg
>>> jg.hanning(5).tolist()
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import inspect
import math
import operator

import numpy as np

# numpy's Chebyshev coefficients of i0 (from Cephes) on [0, 8] and (8, inf).
from numpy.lib._function_base_impl import _i0A, _i0B

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor
from ..tensor import TensorBase
from .calculus import diff
from .elementwise import remainder, where
from .movement import astype, concatenate, narrow
from .numpy_tier import tensor_over
from .reduce import cumsum
from .unary import abs, exp, sqrt


def _chebyshev(x, coefficients):
    """Clenshaw's sum of the Chebyshev series ``coefficients`` at ``x`` (Cephes' chbevl)."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def i0(x) -> Tensor:
    """The modified Bessel function of the first kind of order 0, numpy's ``i0`` (its
    Chebyshev expansions, so differentiable: the gradient is I1). Integers give float64;
    complex is refused, as by numpy.

    >>> import jitgrad as jg
    >>> jg.i0(jg.tensor([0.0, 1.0, 10.0])).round(6).tolist()
    [1.0, 1.266066, 2815.716628]
    """
    x = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    if x.dtype.is_complex:
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = astype(x, dtypes.float64)
    x = abs(x)
    small = x <= 8.0
    # Each expansion sees only the arguments it is for (others replaced by a harmless
    # value), so the branch not taken gives no inf or NaN to the gradient.
    near = where(small, x, 0.0)
    far = where(small, 16.0, x)
    inner = exp(near) * _chebyshev(near / 2.0 - 2, _i0A)
    outer = exp(far) * _chebyshev(32.0 / far - 2.0, _i0B) / sqrt(far)
    return where(small, inner, outer)


def unwrap(p, discont=None, axis: int = -1, *, period=2 * math.pi) -> Tensor:
    """``p`` with jumps of more than ``max(discont, period / 2)`` between neighbours
    along ``axis`` taken back by multiples of ``period``, numpy's ``unwrap``
    (differentiable in p: the corrections are piecewise constant).

    >>> import jitgrad as jg
    >>> jg.unwrap(jg.tensor([0, 1, 2, -1, 0]), period=4).tolist()
    [0, 1, 2, 3, 4]
    """
    p = as_tensor(np.asarray(p) if isinstance(p, (list, tuple)) else p)
    dd = diff(p, axis=axis)
    if discont is None:
        discont = period / 2
    dtype = dtypes.result_type(dd, period)
    if dtype.is_integer:
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high, boundary_ambiguous = period / 2, True
    interval_low = -interval_high
    ddmod = remainder(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        # a jump of exactly period / 2 keeps its sign (mod gave -period / 2 for it)
        ddmod = where((ddmod == interval_low) & (dd > 0), interval_high, ddmod)
    correction = where(abs(dd) < discont, 0, ddmod - dd)
    n = p.shape[axis]
    first, rest = narrow(p, axis, 0, min(n, 1)), narrow(p, axis, min(n, 1), max(n - 1, 0))
    rest = rest + cumsum(correction, axis)
    return concatenate([astype(first, dtype), astype(rest, dtype)], axis)


def _window(numpy_window, example: str):
    name = numpy_window.__name__

    def window(M, *args) -> Tensor:
        M = M.item() if isinstance(M, TensorBase) else operator.index(M)
        args = [a.item() if isinstance(a, TensorBase) else a for a in args]
        return tensor_over(numpy_window(M, *args))

    window.__name__ = window.__qualname__ = name
    window.__signature__ = inspect.signature(numpy_window)
    window.__doc__ = (
        f"numpy's ``{name}`` window of M points (float64; empty for M < 1).\n\n"
        f"    >>> import jitgrad as jg\n    >>> {example}\n    "
    )
    return window


bartlett = _window(np.bartlett, "jg.bartlett(5).tolist()\n    [0.0, 0.5, 1.0, 0.5, 0.0]")
blackman = _window(np.blackman, "jg.blackman(3).round(6).tolist()\n    [-0.0, 1.0, -0.0]")
hamming = _window(np.hamming, "jg.hamming(3).round(6).tolist()\n    [0.08, 1.0, 0.08]")
hanning = _window(np.hanning, "jg.hanning(3).tolist()\n    [0.0, 1.0, 0.0]")
kaiser = _window(np.kaiser, "jg.kaiser(3, 5.0).round(6).tolist()\n    [0.036711, 1.0, 0.036711]")

__all__ = ["i0", "unwrap", "bartlett", "blackman", "hamming", "hanning", "kaiser"]
