"""Order statistics and moments: numpy's median, quantile, percentile, average, cov,
corrcoef and ptp, composed of differentiable jitgrad ops so that gradients come free.

Which sorted elements a quantile takes, and how it weighs them, depend only on how many
values a slice has and on q. They are read off numpy's own quantile of the ranks 0..n-1
(rank i at the i-th smallest value, nan where the value is nan): that quantile is
``low + gamma`` with ``low`` the index of the lower element and ``gamma`` the weight of the
next one. So every ``method=`` numpy has is numpy's, nan slices are numpy's, and the
result is a weighted take of x's elements, which autograd differentiates.
"""

from __future__ import annotations

import builtins
import warnings
from functools import partial

import numpy as np

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, read_value
from ..strided import layout
from ..tensor import TensorBase
from .elementwise import where
from .indexing import take_along_axis
from .linalg import matmul
from .movement import broadcast_to, clone, concatenate, diagonal, write_out
from .numpy_tier import tensor_over
from .reduce import max, mean, min, normalize_axes, sum  # noqa: A004
from .torch_keywords import torch_keywords, values_indices
from .unary import clip, sqrt

# numpy's methods that pick one observed value (never interpolate): numpy takes the value
# without a lerp, so an infinite neighbour cannot turn it into nan.
_DISCRETE_METHODS = {"inverted_cdf", "closest_observation", "lower", "higher", "nearest"}


def _array(value) -> np.ndarray:
    """A tensor's values (shared) or any array-like as a numpy array."""
    return value.numpy() if isinstance(value, TensorBase) else np.asarray(value)


def _kept_shape(shape, axes) -> tuple[int, ...]:
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def axes_last(x: Tensor, axes) -> Tensor:
    """``x`` with the dims ``axes`` moved to the end and flattened into one."""
    rest = [i for i in range(x.ndim) if i not in axes]
    moved = x.permute(rest + list(axes)) if x.ndim else x
    return moved.reshape(*(x.shape[i] for i in rest), layout.numel(x.shape[i] for i in axes))


def _ranks(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The rank of each sorted position along the last axis, nan where its value is nan."""
    ranks = np.broadcast_to(np.arange(values.shape[-1], dtype=np.float64), values.shape)
    if values.dtype.kind in "fc":
        ranks = np.where(np.isnan(np.take_along_axis(values, order, -1)), np.nan, ranks)
    return ranks


def order_statistic(numpy_fn, a, q, axis, method, keepdims, weights=None) -> Tensor:
    """``numpy_fn`` (np.quantile, np.percentile, np.nanquantile, np.nanpercentile) of ``a``
    as a weighted take of a's elements (see the module's docstring)."""
    x = as_tensor(a)
    q_array = _array(q)
    # numpy's own checks (q's range, the method, a's dtype) and its result dtype.
    # A Python scalar q stays one: numpy's result dtype depends on it being weak.
    q_given = q if isinstance(q, (int, float)) else q_array
    probe = numpy_fn(np.zeros(2, x.dtype.numpy), q_given, method=method)
    out_dtype = dtypes.as_dtype(np.asarray(probe).dtype)
    axes = normalize_axes(axis, x.ndim)
    if weights is not None or layout.numel(x.shape[i] for i in axes) == 0:
        # (numpy's weighted quantiles are its inverted_cdf alone; an empty slice has no
        # element to take: numpy's value, or its error, without a gradient)
        fn = partial(numpy_fn, q=q_array, axis=axes, method=method, keepdims=keepdims)
        return tensor_over(compute(lambda v: fn(v, weights=weights), x.numpy()))
    flat = axes_last(x, axes)
    values = flat.detach().numpy()
    order = compute(partial(np.argsort, axis=-1, kind="stable"), values)  # nans last
    ranks = compute(_ranks, values, order)
    quantile = compute(lambda r: numpy_fn(r, q_array, axis=-1, method=method), ranks)
    # quantile: q's dims, then flat's leading dims; the takes want them the other way.
    quantile = np.moveaxis(quantile.reshape(q_array.size, *flat.shape[:-1]), 0, -1)
    unknown = np.isnan(quantile)
    low = np.floor(np.where(unknown, 0, quantile))
    gamma = np.where(unknown, 0, quantile - low)
    low = low.astype(np.int64)
    # the next element, but never past a slice's last value that is not nan
    last = np.maximum(np.sum(~np.isnan(ranks), axis=-1, keepdims=True) - 1, 0)
    high = np.minimum(low + 1, last)
    work = flat.astype(out_dtype, copy=False)
    below = take_along_axis(work, tensor_over(np.take_along_axis(order, low, -1)), -1)
    if method in _DISCRETE_METHODS:
        result = below
    else:
        above = take_along_axis(work, tensor_over(np.take_along_axis(order, high, -1)), -1)
        t = tensor_over(gamma.astype(out_dtype.numpy))
        step = above - below
        # numpy's lerp: from the nearer end, so t = 0 and t = 1 give the elements exactly
        result = where(t >= 0.5, above - step * (1 - t), below + step * t)
    if unknown.any():
        result = where(tensor_over(unknown), np.nan, result)
    result = result.permute(result.ndim - 1, *range(result.ndim - 1))
    kept = _kept_shape(x.shape, axes) if keepdims else flat.shape[:-1]
    return result.reshape(*q_array.shape, *kept)


def quantile(
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
    """The ``q``-th quantiles (q in [0, 1]) over ``axis``, by any of numpy's ``method=``
    values; differentiable in ``a`` (the gradient goes to the elements taken).

    >>> import jitgrad as jg
    >>> x = jg.tensor([4.0, 1.0, 3.0, 2.0], requires_grad=True)
    >>> q = jg.quantile(x, 0.5); q.item()
    2.5
    >>> q.backward(); x.grad.tolist()
    [0.0, 0.0, 0.5, 0.5]
    >>> jg.quantile(x, [0.0, 1.0], method="lower").tolist()
    [1.0, 4.0]
    """
    return write_out(out, order_statistic(np.quantile, a, q, axis, method, keepdims, weights))


def percentile(
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
    """The ``q``-th percentiles (q in [0, 100]): ``quantile`` of ``q / 100``.

    >>> import jitgrad as jg
    >>> jg.percentile(jg.arange(5), [25, 50]).tolist()
    [1.0, 2.0]
    """
    return write_out(out, order_statistic(np.percentile, a, q, axis, method, keepdims, weights))


def median(
    a, axis=None, out=None, overwrite_input=False, keepdims=False, *, dim=None, keepdim=False
):
    """The median over ``axis``: the mean of the two middle values of an even count.
    Integers give float64, floats keep their dtype, as numpy's. PyTorch's ``dim=`` gives
    its ``(values, indices)`` along that dimension instead, the lower of the two middle
    values (``median_lower``).

    >>> import jitgrad as jg
    >>> jg.median(jg.tensor([[1, 5, 2], [8, 4, 6]]), axis=1).tolist()
    [2.0, 6.0]
    >>> jg.median(jg.tensor([[1.0, 5.0, 2.0, 4.0]]), dim=1)
    median(values=tensor([2.]), indices=tensor([2]))
    """
    if dim is not None:
        if axis is not None:
            raise TypeError("median() got both axis= and dim=: pass either axis= or dim=")
        return median_lower(a, dim, keepdim or keepdims)
    return write_out(out, order_statistic(np.quantile, a, 0.5, axis, "linear", keepdims))


def median_lower(x, dim=None, keepdim: bool = False):
    """PyTorch's ``median``: the lower of the two middle values of an even count. Over all
    elements (``dim`` None) the value alone; along ``dim``, the named tuple ``(values,
    indices)``, the indices of those values in ``x``. Differentiable in the values.

    >>> import jitgrad as jg
    >>> jg.tensor([3.0, 1.0, 4.0, 2.0]).median().item()
    2.0
    """
    x = as_tensor(x)
    if dim is None:
        flat = x.reshape(-1)
        return take_along_axis(flat, _lower_middle(flat, 0, False), 0).reshape(())
    dim = layout.normalize_dim(dim, builtins.max(x.ndim, 1))
    indices = _lower_middle(x, dim, True)
    values = take_along_axis(x, indices, dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values_indices("median", values, indices)


def _lower_middle(x: Tensor, axis: int, keepdims: bool) -> Tensor:
    """The positions in ``x`` of its lower middle values along ``axis`` (kept as length 1)."""
    n = x.shape[axis] if x.ndim else 1
    if n == 0:
        raise IndexError("median of an empty dimension: it has no middle value")
    order = compute(partial(np.argsort, axis=axis, kind="stable"), x.numpy())
    middle = np.take(order, [(n - 1) // 2], axis=axis) if x.ndim else order.reshape(1)
    return tensor_over(middle)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The mean over ``axis`` weighted by ``weights`` (a's shape, or 1-D along one axis);
    with ``returned``, also the sum of the weights, broadcast to the average's shape.

    >>> import jitgrad as jg
    >>> jg.average(jg.tensor([1.0, 2.0, 4.0]), weights=[1, 1, 2]).item()
    2.75
    """
    x = as_tensor(a)
    axes = normalize_axes(axis, x.ndim)
    if weights is None:
        avg = mean(x, axes, keepdims=keepdims)
        scale = x.numel() // builtins.max(avg.numel(), 1)
        scale = as_tensor(np.asarray(scale, dtype=avg.dtype.numpy))
    else:
        w = as_tensor(weights)
        result_dtype = dtypes.result_type(x.dtype, w.dtype)
        if x.dtype.kind in "biu":
            result_dtype = dtypes.result_type(result_dtype, dtypes.float64)
        if w.shape != x.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            given = (axis,) if isinstance(axis, int) else tuple(axis)
            given = layout.normalize_dims(given, x.ndim)
            if w.shape != tuple(x.shape[i] for i in given):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along specified axis."
                )
            w = w.permute(*np.argsort(given).tolist()) if w.ndim > 1 else w
            w = w.reshape(tuple(n if i in given else 1 for i, n in enumerate(x.shape)))
        w = w.astype(result_dtype, copy=False)
        scale = sum(w, axes, keepdims=keepdims)
        read_value("average's check of its weights")
        if np.any(scale.numpy() == 0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = sum(x.astype(result_dtype, copy=False) * w, axes, keepdims=keepdims) / scale
    if returned:
        return avg, scale if scale.shape == avg.shape else clone(broadcast_to(scale, avg.shape))
    return avg


def _weights(values, name: str, n: int) -> np.ndarray:
    """cov's ``fweights`` or ``aweights`` as a float64 array, checked as numpy checks them."""
    w = np.asarray(_array(values), dtype=float)
    if name == "fweights" and not np.all(w == np.around(w)):
        raise TypeError("fweights must be integer")
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if np.any(w < 0):
        raise ValueError(f"{name} cannot be negative")
    return w


def cov(
    m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None
) -> Tensor:
    """The covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``), and of ``y``'s; numpy's weights and degrees of freedom.

    >>> import jitgrad as jg
    >>> jg.cov(jg.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = as_tensor(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = as_tensor(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = dtypes.result_type(m.dtype, dtypes.float64, *(() if y is None else (y.dtype,)))
    dtype = dtypes.as_dtype(dtype)
    x = m.astype(dtype, copy=False)
    if x.ndim < 2:
        x = x.reshape(1, -1)
    if not rowvar and m.ndim == 2:
        x = x.T
    if x.shape[0] == 0:
        return tensor_over(np.empty((0, 0), dtype.numpy))
    if y is not None:
        y = y.astype(dtype, copy=False)
        y = y.reshape(1, -1) if y.ndim < 2 else y
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = concatenate([x, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = _weights(fweights, "fweights", x.shape[1])
    if aweights is not None:
        aw = _weights(aweights, "aweights", x.shape[1])
        w = aw if w is None else w * aw
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = float(w_sum.numpy().flat[0].real)
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(w * aw) / w_sum
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    centered = x - avg.reshape(-1, 1)
    weighted = centered if w is None else centered * tensor_over(w.astype(dtype.numpy))
    c = matmul(centered, weighted.T.conj()) * np.true_divide(1, fact)
    return c.squeeze()


def corrcoef(x, y=None, rowvar=True, *, dtype=None) -> Tensor:
    """Pearson's correlation coefficients: ``cov`` scaled to a unit diagonal, clipped to
    [-1, 1] as numpy.

    >>> import jitgrad as jg
    >>> jg.corrcoef(jg.tensor([1.0, 2.0, 3.0]), jg.tensor([3.0, 1.0, -1.0])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c  # one variable: numpy's c / c (1, or nan for no variance)
    d = diagonal(c)
    stddev = sqrt(d.real if d.dtype.is_complex else d)
    c = c / stddev.reshape(-1, 1) / stddev.reshape(1, -1)
    if c.dtype.is_complex:
        return clip(c.real, -1, 1) + 1j * clip(c.imag, -1, 1)
    return clip(c, -1, 1)


@torch_keywords
def ptp(a, axis=None, out=None, keepdims=False) -> Tensor:
    """Range of values (maximum - minimum) over ``axis``, in a's dtype.

    >>> import jitgrad as jg
    >>> jg.ptp(jg.tensor([[4, 9, 2], [1, 3, 3]]), axis=1).tolist()
    [7, 2]
    """
    x = as_tensor(a)
    return write_out(out, max(x, axis, keepdims=keepdims) - min(x, axis, keepdims=keepdims))


__all__ = ["quantile", "percentile", "median", "average", "cov", "corrcoef", "ptp"]
