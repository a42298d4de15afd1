"""numpy's nan-ignoring reductions: each is its plain reduction over x with its nans
replaced by the value that leaves the result unchanged (0 for sums, 1 for products, -inf
for max...), so gradients come free and a nan's gradient is 0. Integers have no nan: they
go straight to the plain reduction, as in numpy. Slices with nothing left warn as numpy
warns and give nan.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, read_value
from .elementwise import where
from .movement import write_out
from .numpy_tier import tensor_over
from .reduce import cumprod, cumsum, max, mean, min, normalize_axes, prod, sum, var  # noqa: A004
from .statistics import order_statistic
from .torch_keywords import torch_keywords
from .unary import abs, isnan, sqrt  # noqa: A004


def _has_nan(x: Tensor) -> bool:
    return x.dtype.is_floating_point or x.dtype.is_complex


def _filled(x: Tensor, value) -> Tensor:
    """``x`` with its nans replaced by ``value``."""
    return where(isnan(x), value, x)


def _real(dtype):
    """The dtype of ``dtype``'s real part (itself if real)."""
    return dtypes.as_dtype(np.zeros(0, dtype.numpy).real.dtype)


def _count(x: Tensor, axes, keepdims: bool, dtype) -> Tensor:
    """How many values of ``x`` are not nan over ``axes``, in ``dtype``."""
    return sum(~isnan(x), axes, keepdims=keepdims).astype(dtype)


def _warn_if(condition: Tensor, message: str) -> None:
    read_value(f"the check behind numpy's warning {message!r}", depth=2)
    if np.any(condition.numpy()):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False) -> Tensor:
    """Sum over ``axis`` treating nans as 0.

    >>> import jitgrad as jg
    >>> jg.nansum(jg.tensor([1.0, float("nan"), 2.0])).item()
    3.0
    """
    x = as_tensor(a)
    x = _filled(x, 0) if _has_nan(x) else x
    return write_out(out, sum(x, axis, keepdims=keepdims, dtype=dtype))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False) -> Tensor:
    """Product over ``axis`` treating nans as 1.

    >>> import jitgrad as jg
    >>> jg.nanprod(jg.tensor([3.0, float("nan"), 2.0])).item()
    6.0
    """
    x = as_tensor(a)
    x = _filled(x, 1) if _has_nan(x) else x
    return write_out(out, prod(x, axis, keepdims=keepdims, dtype=dtype))


def nancumsum(a, axis=None, dtype=None, out=None) -> Tensor:
    """Running sum along ``axis`` (None: flattened) treating nans as 0.

    >>> import jitgrad as jg
    >>> jg.nancumsum(jg.tensor([1.0, float("nan"), 2.0])).tolist()
    [1.0, 1.0, 3.0]
    """
    x = as_tensor(a)
    x = _filled(x, 0) if _has_nan(x) else x
    return write_out(out, cumsum(x, axis, dtype=dtype))


def nancumprod(a, axis=None, dtype=None, out=None) -> Tensor:
    """Running product along ``axis`` (None: flattened) treating nans as 1.

    >>> import jitgrad as jg
    >>> jg.nancumprod(jg.tensor([2.0, float("nan"), 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    x = as_tensor(a)
    x = _filled(x, 1) if _has_nan(x) else x
    return write_out(out, cumprod(x, axis, dtype=dtype))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False) -> Tensor:
    """Mean of the values that are not nan; nan (with numpy's warning) where none is.

    >>> import jitgrad as jg
    >>> jg.nanmean(jg.tensor([[1.0, float("nan")], [2.0, 4.0]]), axis=1).tolist()
    [1.0, 3.0]
    """
    x = as_tensor(a)
    if not _has_nan(x):
        return write_out(out, mean(x, axis, keepdims=keepdims, dtype=dtype))
    axes = normalize_axes(axis, x.ndim)
    total = sum(_filled(x, 0), axes, keepdims=keepdims, dtype=dtype)
    count = _count(x, axes, keepdims, _real(total.dtype))
    _warn_if(count == 0, "Mean of empty slice")
    return write_out(out, total / count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Variance of the values that are not nan, with ``ddof`` (or ``correction``) degrees
    of freedom; nan (with numpy's warning) where fewer than ``ddof`` + 1 are left.

    >>> import jitgrad as jg
    >>> jg.nanvar(jg.tensor([1.0, float("nan"), 3.0])).item()
    1.0
    """
    x = as_tensor(a)
    ddof = ddof if correction is None else correction
    if not _has_nan(x):
        result = var(x if dtype is None else x.astype(dtype), axis, keepdims=keepdims, ddof=ddof)
        return write_out(out, result)
    axes = normalize_axes(axis, x.ndim)
    mask = isnan(x)
    filled = where(mask, 0, x) if dtype is None else where(mask, 0, x).astype(dtype)
    count = _count(x, axes, True, _real(filled.dtype))
    centered = where(mask, 0, filled - sum(filled, axes, keepdims=True) / count)
    if centered.dtype.is_complex:
        centered = abs(centered)
    freedom = count - ddof if keepdims else (count - ddof).squeeze(axes)
    bad = freedom <= 0
    _warn_if(bad, "Degrees of freedom <= 0 for slice.")
    result = sum(centered * centered, axes, keepdims=keepdims) / where(bad, 1, freedom)
    return write_out(out, where(bad, np.nan, result))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
    """Square root of ``nanvar``; its gradient is 0 where the variance is 0, as ``std``'s.

    >>> import jitgrad as jg
    >>> jg.nanstd(jg.tensor([1.0, float("nan"), 3.0])).item()
    1.0
    """
    v = nanvar(a, axis, dtype, None, ddof, keepdims, correction=correction)
    zero = v == 0
    return write_out(out, where(zero, 0, sqrt(where(zero, 1, v))))


def _nan_extreme(a, axis, out, keepdims, largest: bool) -> Tensor:
    x = as_tensor(a)
    reduce = max if largest else min
    if not _has_nan(x):
        return write_out(out, reduce(x, axis, keepdims=keepdims))
    axes = normalize_axes(axis, x.ndim)
    mask = isnan(x)
    empty = mask.all(axes, keepdims=keepdims)
    _warn_if(empty, "All-NaN slice encountered")
    result = reduce(where(mask, -np.inf if largest else np.inf, x), axes, keepdims=keepdims)
    return write_out(out, where(empty, np.nan, result))


def nanmax(a, axis=None, out=None, keepdims=False) -> Tensor:
    """Maximum ignoring nans; nan (with numpy's warning) for a slice of nans only.

    >>> import jitgrad as jg
    >>> jg.nanmax(jg.tensor([1.0, float("nan"), 3.0])).item()
    3.0
    """
    return _nan_extreme(a, axis, out, keepdims, True)


def nanmin(a, axis=None, out=None, keepdims=False) -> Tensor:
    """Minimum ignoring nans; nan (with numpy's warning) for a slice of nans only.

    >>> import jitgrad as jg
    >>> jg.nanmin(jg.tensor([1.0, float("nan"), 3.0])).item()
    1.0
    """
    return _nan_extreme(a, axis, out, keepdims, False)


def _nan_arg_extreme(numpy_fn, a, axis, out, keepdims) -> Tensor:
    x = as_tensor(a)
    find = partial(numpy_fn, axis=axis, keepdims=keepdims)  # raises numpy's errors
    found = compute(lambda v: find(v).astype(np.int64), x.numpy())
    return write_out(out, tensor_over(found))


@torch_keywords
def nanargmax(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the maximum ignoring nans; ValueError for a slice of nans only.

    >>> import jitgrad as jg
    >>> jg.nanargmax(jg.tensor([float("nan"), 2.0, 1.0])).item()
    1
    """
    return _nan_arg_extreme(np.nanargmax, a, axis, out, keepdims)


@torch_keywords
def nanargmin(a, axis=None, out=None, *, keepdims=False) -> Tensor:
    """Index of the minimum ignoring nans; ValueError for a slice of nans only.

    >>> import jitgrad as jg
    >>> jg.nanargmin(jg.tensor([float("nan"), 2.0, 1.0])).item()
    2
    """
    return _nan_arg_extreme(np.nanargmin, a, axis, out, keepdims)


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> Tensor:
    """``quantile`` of the values that are not nan.

    >>> import jitgrad as jg
    >>> jg.nanquantile(jg.tensor([1.0, float("nan"), 3.0, 2.0]), 0.5).item()
    2.0
    """
    return write_out(out, order_statistic(np.nanquantile, a, q, axis, method, keepdims, weights))


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
) -> Tensor:
    """``percentile`` of the values that are not nan.

    >>> import jitgrad as jg
    >>> jg.nanpercentile(jg.tensor([1.0, float("nan"), 3.0]), 50).item()
    2.0
    """
    return write_out(out, order_statistic(np.nanpercentile, a, q, axis, method, keepdims, weights))


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False) -> Tensor:
    """``median`` of the values that are not nan.

    >>> import jitgrad as jg
    >>> jg.nanmedian(jg.tensor([[1.0, float("nan"), 4.0]]), axis=1).tolist()
    [2.5]
    """
    return write_out(out, order_statistic(np.nanquantile, a, 0.5, axis, "linear", keepdims))


__all__ = [
    "nansum",
    "nanprod",
    "nancumsum",
    "nancumprod",
    "nanmean",
    "nanvar",
    "nanstd",
    "nanmax",
    "nanmin",
    "nanargmax",
    "nanargmin",
    "nanquantile",
    "nanpercentile",
    "nanmedian",
]
