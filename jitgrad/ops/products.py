"""Products of vectors and arrays beyond matmul: numpy's convolve, correlate, cross and
kron, and the Array API's vecdot. Each is gathers, products and sums of jitgrad ops, so
gradients in both operands come free.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..autograd.tensor import Tensor, as_tensor
from ..strided import layout
from ..tensor import TensorBase
from .complex_parts import conj
from .indexing import advanced_index
from .linalg import matmul, tensordot
from .movement import concatenate, flip, stack
from .reduce import sum  # noqa: A004
from .ufunc import _write


def _move_axis(x: Tensor, source: int, destination: int) -> Tensor:
    """``x`` with dim ``source`` moved to ``destination`` (a view)."""
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return x.permute(order)


def _vectors(a, v) -> tuple[Tensor, Tensor]:
    a, v = as_tensor(a), as_tensor(v)
    for name, t in (("a", a), ("v", v)):
        if t.ndim != 1:
            raise ValueError(
                f"object too deep for desired array: {name} must be 1-D, got shape {t.shape}"
            )  # noqa: E501
        if t.shape[0] == 0:
            raise ValueError(f"{name} cannot be empty")
    return a, v


def _sliding(a: Tensor, w: Tensor, start: int, length: int) -> Tensor:
    """Sums ``Σ_i a[j + i - (m - 1)]·w[i]`` (a zero outside) for j in start..start+length:
    the full correlation of a with w, rows start.. of it."""
    m = w.shape[0]
    zeros = as_tensor(np.zeros(m - 1, a.dtype.numpy))
    padded = concatenate([zeros, a, zeros]) if m > 1 else a
    windows = np.arange(start, start + length)[:, None] + np.arange(m)[None, :]
    out = sum(advanced_index(padded, (windows,)) * w, axis=1)
    return out.astype(dtypes.result_type(a.dtype, w.dtype), copy=False)


def _mode_rows(n: int, m: int, mode: str) -> tuple[int, int]:
    """(first row, count) of the full correlation's rows that ``mode`` keeps."""
    if mode in ("full", 2):
        return 0, n + m - 1
    if mode in ("valid", 0):
        return min(n, m) - 1, abs(n - m) + 1
    if mode in ("same", 1):
        if n >= m:
            return (m - 1) - m // 2, n
        # (numpy correlates the other way round and reverses: its rows from the far end)
        return (n + m - 1) - ((n - 1) - n // 2) - m, m
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def correlate(a, v, mode="valid") -> Tensor:
    """Cross-correlation of two 1-D sequences, ``c[k] = Σ_n a[n+k]·conj(v[n])``, over the
    lags ``mode`` keeps ('valid', 'same' or 'full'), as numpy.

    >>> import jitgrad as jg
    >>> jg.correlate(jg.tensor([1.0, 2.0, 3.0]), jg.tensor([0.0, 1.0, 0.5])).tolist()
    [3.5]
    """
    a, v = _vectors(a, v)
    start, length = _mode_rows(a.shape[0], v.shape[0], mode)
    return _sliding(a, conj(v) if v.dtype.is_complex else v, start, length)


def convolve(a, v, mode="full") -> Tensor:
    """Discrete linear convolution of two 1-D sequences, over the positions ``mode`` keeps
    ('full', 'same' or 'valid'), as numpy.

    >>> import jitgrad as jg
    >>> jg.convolve(jg.tensor([1.0, 2.0, 3.0]), jg.tensor([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, v = _vectors(a, v)
    if v.shape[0] > a.shape[0]:
        a, v = v, a  # convolution commutes; numpy centres 'same' on the longer one
    start, length = _mode_rows(a.shape[0], v.shape[0], mode)
    return _sliding(a, flip(v, 0), start, length)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> Tensor:
    """Cross product of 3-vectors (or 2-vectors, with numpy's deprecation warning) along
    ``axisa``/``axisb``, the result's vectors along ``axisc`` (all three ``axis`` if given).

    >>> import jitgrad as jg
    >>> jg.cross(jg.tensor([1.0, 0.0, 0.0]), jg.tensor([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = _move_axis(a, layout.normalize_dim(axisa, a.ndim), a.ndim - 1)
    b = _move_axis(b, layout.normalize_dim(axisb, b.ndim), b.ndim - 1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if a.shape[-1] == 2 or b.shape[-1] == 2:
        warnings.warn(
            "Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
            "vectors instead. (deprecated in NumPy 2.0)",
            DeprecationWarning,
            stacklevel=2,
        )
    dtype = dtypes.promote_types(a.dtype, b.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else None
    b2 = b[..., 2] if b.shape[-1] == 3 else None
    if a2 is None:
        x, y = a1 * b2, -(a0 * b2)
    elif b2 is None:
        x, y = -(a2 * b1), a2 * b0
    else:
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    out = stack([x, y, z], axis=-1)
    return _move_axis(out, out.ndim - 1, layout.normalize_dim(axisc, out.ndim))


def kron(a, b) -> Tensor:
    """Kronecker product: blocks of ``b`` scaled by each element of ``a``, with the
    shorter shape padded by leading 1s.

    >>> import jitgrad as jg
    >>> jg.kron(jg.tensor([1, 10]), jg.tensor([1, 2, 3])).tolist()
    [1, 2, 3, 10, 20, 30]
    """
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    a_shape = (1,) * (nd - a.ndim) + a.shape
    b_shape = (1,) * (nd - b.ndim) + b.shape
    # a's dims at even places, b's at odd: their product, reshaped, is the block matrix
    spread_a = a.reshape([n for s in a_shape for n in (s, 1)])
    spread_b = b.reshape([n for s in b_shape for n in (1, s)])
    return (spread_a * spread_b).reshape([p * q for p, q in zip(a_shape, b_shape, strict=True)])


def vecdot(x1, x2, /, *, axis=-1) -> Tensor:
    """Dot products of vectors along ``axis`` (other dims broadcast), conjugating ``x1``:
    the Array API's vecdot.

    >>> import jitgrad as jg
    >>> jg.vecdot(jg.tensor([[1.0, 2.0], [3.0, 4.0]]), jg.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: both operands need at least one dimension")
    x1 = _move_axis(x1, layout.normalize_dim(axis, x1.ndim), x1.ndim - 1)
    x2 = _move_axis(x2, layout.normalize_dim(axis, x2.ndim), x2.ndim - 1)
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(
            f"vecdot: the vectors have different lengths, {x1.shape[-1]} and {x2.shape[-1]}"
        )
    out = sum((conj(x1) if x1.dtype.is_complex else x1) * x2, axis=-1)
    return out.astype(dtypes.result_type(x1.dtype, x2.dtype), copy=False)


def vdot(a, b, /) -> Tensor:
    """The dot product of ``a`` and ``b`` flattened, conjugating ``a`` (numpy's
    ``vdot``); differentiable.

    >>> import jitgrad as jg
    >>> jg.vdot(jg.tensor([[1, 2], [3, 4]]), jg.tensor([[1, 0], [0, 1]])).item()
    5
    """
    a, b = as_tensor(a), as_tensor(b)
    if a.numel() != b.numel():
        raise ValueError(f"vdot: vectors of different sizes, {a.numel()} and {b.numel()}")
    return vecdot(a.reshape(-1), b.reshape(-1))


def inner(a, b, /) -> Tensor:
    """numpy's ``inner``: sums of products over the last axes of ``a`` and ``b``, the
    result having ``a``'s other axes then ``b``'s (a product when either is 0-d).

    >>> import jitgrad as jg
    >>> jg.inner(jg.tensor([[1, 2], [3, 4]]), jg.tensor([1, 1])).tolist()
    [3, 7]
    """
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"inner: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim "
            f"{a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})"
        )
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def _gufunc_out(name: str, result: Tensor, out) -> Tensor:
    if out is None:
        return result
    (o,) = out if isinstance(out, tuple) else (out,)
    return _write(name, o, result, None, "same_kind", result.requires_grad)


def matvec(x1, x2, /, out=None) -> Tensor:
    """Matrix-vector products over the last two axes of ``x1`` and the last of ``x2``
    (others broadcast), numpy's ``matvec``; differentiable in both.

    >>> import jitgrad as jg
    >>> jg.matvec(jg.tensor([[1.0, 2.0], [3.0, 4.0]]), jg.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(
            f"matvec: needs a matrix and a vector, got {x1.ndim} and {x2.ndim} dimensions"
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(
            f"matvec: matrix of shape {x1.shape} and vector of length "
            f"{x2.shape[-1]} do not match in the core dimension"
        )
    return _gufunc_out("matvec", matmul(x1, x2[..., None])[..., 0], out)


def vecmat(x1, x2, /, out=None) -> Tensor:
    """Vector-matrix products of the (conjugated) vectors on the last axis of ``x1`` with
    the matrices on the last two of ``x2``, numpy's ``vecmat``; differentiable in both.

    >>> import jitgrad as jg
    >>> jg.vecmat(jg.tensor([1.0, 1.0]), jg.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [4.0, 6.0]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(
            f"vecmat: needs a vector and a matrix, got {x1.ndim} and {x2.ndim} dimensions"
        )
    if x1.shape[-1] != x2.shape[-2]:
        raise ValueError(
            f"vecmat: vector of length {x1.shape[-1]} and matrix of shape "
            f"{x2.shape} do not match in the core dimension"
        )
    v = conj(x1) if x1.dtype.is_complex else x1
    return _gufunc_out("vecmat", matmul(v[..., None, :], x2)[..., 0, :], out)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    """numpy's ``einsum_path`` on the operands' values: the contraction order numpy would
    take, and its report (a list and a string, numpy's own).

    >>> import jitgrad as jg
    >>> jg.einsum_path("ij,jk,kl->il", jg.ones((2, 3)), jg.ones((3, 4)), jg.ones((4, 5)))[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    values = [TensorBase.numpy(x) if isinstance(x, TensorBase) else x for x in operands]
    return np.einsum_path(subscripts, *values, optimize=optimize, einsum_call=einsum_call)


__all__ = [
    "convolve",
    "correlate",
    "cross",
    "kron",
    "vecdot",
    "vdot",
    "inner",
    "matvec",
    "vecmat",
    "einsum_path",
]
