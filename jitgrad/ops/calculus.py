"""Differences, running totals and integrals: numpy's diff, ediff1d, gradient,
trapezoid, interp and the Array API's cumulative_sum/cumulative_prod.

All but interp are slices, differences and sums of jitgrad ops, so gradients come free.
interp takes numpy's values and differentiates them in x and fp.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute
from ..strided import layout
from ..tensor import TensorBase
from .elementwise import not_equal
from .indexing import ScatterAdd, advanced_index
from .movement import broadcast_to, concatenate
from .numpy_tier import tensor_over
from .reduce import cumprod, cumsum, sum  # noqa: A004


def _along(x: Tensor, axis: int, part) -> Tensor:
    """``x[..., part, ...]`` with ``part`` (a slice or an int) at ``axis``."""
    return x[(slice(None),) * axis + (part,)]


def _differences(x: Tensor, axis: int) -> Tensor:
    """x[i+1] - x[i] along ``axis``; != for bools, as numpy."""
    later, earlier = _along(x, axis, slice(1, None)), _along(x, axis, slice(None, -1))
    return not_equal(later, earlier) if x.dtype is dtypes.bool_ else later - earlier


def diff(a, /, n=1, axis=-1, prepend=None, append=None) -> Tensor:
    """The ``n``-th discrete difference along ``axis``, after ``prepend`` and ``append``
    (scalars are broadcast to one slice) are joined to ``a``.

    >>> import jitgrad as jg
    >>> jg.diff(jg.tensor([1, 4, 9, 16])).tolist(), jg.diff(jg.tensor([1, 4, 9]), n=2).tolist()
    ([3, 5, 7], [2])
    """
    x = as_tensor(a)
    if n == 0:
        return x
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = layout.normalize_dim(axis, x.ndim)
    parts = []
    for value in (prepend, x, append):
        if value is None:
            continue
        value = as_tensor(value)
        if value.ndim == 0:
            value = broadcast_to(value, x.shape[:axis] + (1,) + x.shape[axis + 1 :])
        parts.append(value)
    if len(parts) > 1:
        x = concatenate(parts, axis=axis)
    for _ in range(n):
        x = _differences(x, axis)
    return x


def ediff1d(ary, to_end=None, to_begin=None) -> Tensor:
    """Differences of the flattened ``ary``, with ``to_begin`` and ``to_end`` around them,
    in ary's dtype.

    >>> import jitgrad as jg
    >>> jg.ediff1d(jg.tensor([[1, 2], [4, 7]]), to_begin=-9).tolist()
    [-9, 1, 2, 3]
    """
    x = as_tensor(ary).reshape(-1)
    parts = []
    for name, value in (("to_begin", to_begin), (None, None), ("to_end", to_end)):
        if name is None:
            parts.append(x[1:] - x[:-1])
            continue
        if value is None:
            continue
        value = as_tensor(value)
        if not np.can_cast(value.dtype.numpy, x.dtype.numpy, casting="same_kind"):
            raise TypeError(
                f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule."
            )
        parts.append(value.reshape(-1).astype(x.dtype, copy=False))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _spacings(varargs, f: Tensor, axes) -> list:
    """gradient's spacing per axis: a scalar, or the differences of 1-D coordinates."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    spacings = []
    for axis, given in zip(axes, varargs, strict=True):
        coords = given.numpy() if isinstance(given, TensorBase) else np.asarray(given)
        if coords.ndim == 0:
            spacings.append(coords)
            continue
        if coords.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(coords) != f.shape[axis]:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        if coords.dtype.kind in "iub":
            coords = coords.astype(np.float64)
        steps = np.diff(coords)
        spacings.append(steps[0] if (steps == steps[0]).all() else steps)
    return spacings


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside, ``edge_order`` one-sided ones at the
    ends; spacing a scalar or 1-D coordinates per axis. One tensor per axis (a tuple for
    several), as numpy.

    >>> import jitgrad as jg
    >>> jg.gradient(jg.tensor([1.0, 2.0, 4.0, 7.0, 11.0])).tolist()
    [1.0, 1.5, 2.5, 3.5, 4.0]
    """
    f = as_tensor(f)
    axes = tuple(range(f.ndim)) if axis is None else axis
    axes = layout.normalize_dims((axes,) if isinstance(axes, int) else tuple(axes), f.ndim)
    spacings = _spacings(varargs, f, axes)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind in "biu":
        f = f.astype(dtypes.float64)
    slopes = []
    for axis, step in zip(axes, spacings, strict=True):
        if f.shape[axis] < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, at least "
                "(edge_order + 1) elements are required."
            )
        slopes.append(_slope(f, axis, step, edge_order))
    return slopes[0] if len(slopes) == 1 else tuple(slopes)


def _slope(f: Tensor, axis: int, step, edge_order: int) -> Tensor:
    """numpy's gradient of ``f`` along one axis (its formulas, term for term)."""

    def at(part):
        return _along(f, axis, part)

    def along(coefficients):  # 1-D coefficients of the interior, broadcast along axis
        shape = [1] * f.ndim
        shape[axis] = -1
        return tensor_over(np.asarray(coefficients).reshape(shape))

    uniform = np.ndim(step) == 0
    if uniform:
        inside = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * step)
    else:
        dx1, dx2 = step[:-1], step[1:]
        a = along(-dx2 / (dx1 * (dx1 + dx2)))
        b = along((dx2 - dx1) / (dx1 * dx2))
        c = along(dx1 / (dx2 * (dx1 + dx2)))
        inside = a * at(slice(None, -2)) + b * at(slice(1, -1)) + c * at(slice(2, None))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / (step if uniform else step[0])
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / (step if uniform else step[-1])
    else:
        if uniform:
            a, b, c = -1.5 / step, 2.0 / step, -0.5 / step
        else:
            dx1, dx2 = step[0], step[1]
            a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = -dx1 / (dx2 * (dx1 + dx2))
        first = a * at(slice(0, 1)) + b * at(slice(1, 2)) + c * at(slice(2, 3))
        if uniform:
            a, b, c = 0.5 / step, -2.0 / step, 1.5 / step
        else:
            dx1, dx2 = step[-2], step[-1]
            a = dx2 / (dx1 * (dx1 + dx2))
            b = -(dx2 + dx1) / (dx1 * dx2)
            c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * at(slice(-3, -2)) + b * at(slice(-2, -1)) + c * at(slice(-1, None))
    # numpy writes every part into an array of f's dtype
    parts = [p.astype(f.dtype, copy=False) for p in (first, inside, last)]
    return concatenate(parts, axis=axis)


def trapezoid(y, x=None, dx=1.0, axis=-1) -> Tensor:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points
    ``x`` (1-D, or y's shape) or spaced ``dx`` apart; differentiable in y and x.

    >>> import jitgrad as jg
    >>> jg.trapezoid(jg.tensor([1.0, 2.0, 3.0]), x=jg.tensor([0.0, 1.0, 3.0])).item()
    6.5
    """
    y = as_tensor(y)
    axis = layout.normalize_dim(axis, y.ndim)
    if x is None:
        width = dx
    else:
        x = as_tensor(x)
        if x.ndim == 1:
            shape = [1] * y.ndim
            shape[axis] = x.shape[0] - 1
            width = diff(x).reshape(shape)
        else:
            width = diff(x, axis=axis)
    heights = _along(y, axis, slice(1, None)) + _along(y, axis, slice(None, -1))
    return sum(width * heights / 2.0, axis)


def _with_initial(running: Tensor, x: Tensor, axis: int, initial) -> Tensor:
    shape = x.shape[:axis] + (1,) + x.shape[axis + 1 :]
    start = tensor_over(np.full(shape, initial, dtype=running.dtype.numpy))
    return concatenate([start, running], axis=axis)


def _cumulative(x, axis, dtype, include_initial, product: bool) -> Tensor:
    x = as_tensor(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                "axis must be specified for multi-dimensional arrays, got a tensor of "
                f"shape {x.shape}"
            )
        axis = 0
    if x.ndim == 0:
        raise ValueError("cumulative_sum and cumulative_prod need at least 1 dimension")
    axis = layout.normalize_dim(axis, x.ndim)
    running = (cumprod if product else cumsum)(x, axis, dtype=dtype)
    return _with_initial(running, x, axis, int(product)) if include_initial else running


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False) -> Tensor:
    """Running sum along ``axis`` (needed beyond 1-D), with a leading 0 if
    ``include_initial``: the Array API's (and numpy's) cumulative_sum.

    >>> import jitgrad as jg
    >>> jg.cumulative_sum(jg.tensor([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative(x, axis, dtype, include_initial, False)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False) -> Tensor:
    """Running product along ``axis`` (needed beyond 1-D), with a leading 1 if
    ``include_initial``.

    >>> import jitgrad as jg
    >>> jg.cumulative_prod(jg.tensor([[1, 2], [3, 4]]), axis=1).tolist()
    [[1, 2], [3, 12]]
    """
    return _cumulative(x, axis, dtype, include_initial, True)


# -- interp ----------------------------------------------------------------------------------


def _interp_weights(x, xp, n_fp, left, right, period):
    """For each x: the indices of fp's two neighbours and their weights in the result (0
    where left or right gives it), and the slope between them (0 outside xp)."""
    fp_index = np.arange(len(xp))
    if period is not None:
        # numpy's periodic case: coordinates taken modulo the period, xp sorted and
        # extended by one point on each side
        x, xp = x % period, xp % period
        order = np.argsort(xp, kind="stable")
        xp = np.concatenate([xp[order][-1:] - period, xp[order], xp[order][:1] + period])
        fp_index = np.concatenate([order[-1:], order, order[:1]])
    if len(xp) == 1:
        low = np.zeros(x.shape, np.int64)
        t = np.zeros(x.shape)
        gap = np.ones(x.shape)
    else:
        low = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
        gap = xp[low + 1] - xp[low]
        t = (x - xp[low]) / gap
    high = np.minimum(low + 1, len(xp) - 1)
    inside = np.ones(x.shape, bool)
    if period is None:
        below, above = x < xp[0], x > xp[-1]
        inside = ~(below | above)
        t = np.where(below, 0.0, np.where(above, 1.0, t))
        low_weight = np.where(below, left is None, np.where(above, 0.0, 1 - t))
        high_weight = np.where(above, right is None, np.where(below, 0.0, t))
    else:
        low_weight, high_weight = 1 - t, t
    return fp_index[low], fp_index[high], low_weight, high_weight, np.where(inside, 1 / gap, 0.0)


class Interp(Function):
    """numpy's interp of x (differentiable) in the points (xp, fp) (differentiable in fp)."""

    def __init__(self, xp: np.ndarray, left, right, period):
        self.xp, self.left, self.right, self.period = xp, left, right, period

    def forward(self, x, fp):
        values = compute(
            np.interp, x.numpy(), self.xp, fp.numpy(), self.left, self.right, self.period
        )
        return tensor_over(values)

    def backward(self, gy):
        x, fp = self.inputs
        low, high, low_weight, high_weight, per_x = compute(
            lambda v: np.stack(
                _interp_weights(v, self.xp, fp.shape[0], self.left, self.right, self.period)
            ),
            x.numpy(),
        )
        low, high = low.astype(np.int64).ravel(), high.astype(np.int64).ravel()
        flat = gy.reshape(-1)
        n = (fp.shape[0],)
        g_fp = ScatterAdd((low,), n)(flat * tensor_over(low_weight.ravel()))
        g_fp = g_fp + ScatterAdd((high,), n)(flat * tensor_over(high_weight.ravel()))
        g_x = None
        if not fp.dtype.is_complex:
            rise = advanced_index(fp, (high,)) - advanced_index(fp, (low,))
            g_x = (flat * rise * tensor_over(per_x.ravel())).reshape(x.shape).astype(x.dtype)
        return g_x, g_fp.astype(fp.dtype)


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """numpy's one-dimensional piecewise-linear interpolation of the points (xp, fp) at
    ``x``; differentiable in x (the slope) and in fp.

    >>> import jitgrad as jg
    >>> fp = jg.tensor([0.0, 10.0, 30.0], requires_grad=True)
    >>> y = jg.interp(jg.tensor([0.5, 1.5]), [0.0, 1.0, 2.0], fp); y.tolist()
    [5.0, 20.0]
    >>> y.sum().backward(); fp.grad.tolist()
    [0.5, 1.0, 0.5]
    """
    x, fp = as_tensor(x), as_tensor(fp)
    xp_values = xp.numpy() if isinstance(xp, TensorBase) else np.asarray(xp)
    if x.dtype.kind in "biu":
        x = x.astype(dtypes.float64)
    if fp.dtype.kind in "biu" or fp.dtype is dtypes.float32 or fp.dtype is dtypes.float16:
        fp = fp.astype(dtypes.float64)  # numpy interpolates in float64 (complex128)
    if fp.dtype is dtypes.complex64:
        fp = fp.astype(dtypes.complex128)
    # numpy's checks of the points, before any work
    np.interp(np.zeros(0), xp_values, fp.numpy(), left, right, period)
    return Interp(xp_values.astype(np.float64), left, right, period)(x, fp)


__all__ = [
    "diff",
    "ediff1d",
    "gradient",
    "trapezoid",
    "cumulative_sum",
    "cumulative_prod",
    "interp",
]
