"""Reductions: each a Function with forward (numpy) and backward (jitgrad ops) side by side.

Reductions whose gradient follows from others (mean, var, std, logsumexp, ptp) are written
as compositions of these, so their higher-order gradients come for free. All take numpy's
``axis``/``keepdims`` and PyTorch's ``dim``/``keepdim`` (``torch_keywords``); ``max`` and
``min`` given ``dim=`` return PyTorch's ``(values, indices)``.
"""

from __future__ import annotations

import builtins
import warnings
from functools import partial

import numpy as np

from .. import dtypes, tiers
from .._config import config
from ..autograd.function import Function, records_nothing
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor, filled, zeros
from ..recording import compute
from ..strided import layout
from . import numpy_tier
from .elementwise import maximum, minimum, where
from .movement import broadcast_to, concatenate, write_out
from .numpy_tier import tensor_over
from .reduce_data import _reduced
from .torch_keywords import torch_keywords, values_and_indices
from .unary import abs, exp, isfinite, log, sqrt  # noqa: A004


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple) as a sorted tuple of non-negative dims.

    A 0-d tensor takes axis 0 or -1 for its one element, as in PyTorch and numpy's sum,
    prod, max, min, all and any (numpy's mean, var and std alone refuse it): it has no
    dimension to reduce, so every reduction over it gives the 0-d result of axis=None.
    """
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    for a in axes:  # (bool is an int subclass; numpy refuses it as an axis)
        if isinstance(a, (bool, np.bool_)):
            raise TypeError(f"an axis must be an integer, not a bool: got {axis!r}")
    return tuple(sorted(layout.normalize_dims(axes, ndim)))


def _kept_shape(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class Sum(Function):
    """A sum in ``dtype`` (None: x's): another is an integer or bool x's wider one, which
    the reduction accumulates in as it reads x (``_read_in``)."""

    needs_input_values = False
    differentiates_complex = True  # (its gradient broadcasts gy, whatever the dtype)

    def __init__(self, axes, keepdims, dtype=None):
        self.axes, self.keepdims, self.dtype = axes, keepdims, dtype

    def forward(self, x):
        # In the dtype chosen by sum() or mean() (numpy's own would widen uint8 to uint64).
        d = self.dtype or x.dtype
        return _reduced("sum", x, self.axes, self.keepdims, partial(np.sum, dtype=d.numpy), d)

    def backward(self, gy):
        x = self.inputs[0]
        return broadcast_to(gy.reshape(_kept_shape(x.shape, self.axes)), x.shape)


class Prod(Function):
    """A product in ``dtype`` (None: x's), as ``Sum``."""

    def __init__(self, axes, keepdims, dtype=None):
        self.axes, self.keepdims, self.dtype = axes, keepdims, dtype

    def forward(self, x):
        d = (self.dtype or x.dtype).numpy
        return tensor_over(
            compute(partial(np.prod, axis=self.axes, keepdims=self.keepdims, dtype=d), x.numpy())
        )

    def backward(self, gy):
        # d(prod)/dx_i is the product of the others: exclusive cumulative products from
        # both ends, so zeros in x need no special case.
        x = self.inputs[0]
        rest = [i for i in range(x.ndim) if i not in self.axes]
        moved = x.permute(rest + list(self.axes))
        # The reduced length spelt out: -1 cannot be inferred beside a kept dim of size 0.
        kept = moved.shape[: len(rest)]
        flat = moved.reshape(*kept, layout.numel(moved.shape[len(rest) :]))
        one = flat[..., :1] * 0 + 1
        left = cumprod(concatenate([one, flat[..., :-1]], axis=-1), axis=-1)
        right = cumprod(concatenate([one, flat[..., 1:].flip(-1)], axis=-1), axis=-1).flip(-1)
        others = (left * right).reshape(moved.shape)
        inverse = np.argsort(rest + list(self.axes)).tolist()
        g = broadcast_to(gy.reshape(_kept_shape(x.shape, self.axes)), x.shape)
        return g * others.permute(inverse)


class Extreme(Function):
    """max or min over axes; ties share the gradient equally (PyTorch's amax/amin)."""

    def __init__(self, axes, keepdims, largest: bool):
        self.axes, self.keepdims, self.largest = axes, keepdims, largest

    def forward(self, x):
        if x.numel() == 0 and builtins.any(x.shape[i] == 0 for i in self.axes):
            raise ValueError(f"{'max' if self.largest else 'min'} of an empty axis has no value")
        kind = "max" if self.largest else "min"
        return _reduced(kind, x, self.axes, self.keepdims, np.max if self.largest else np.min)

    def backward(self, gy):
        x = self.inputs[0]
        kept = _kept_shape(x.shape, self.axes)
        y = Extreme(self.axes, True, self.largest)(x.detach())
        mask = (x.detach() == y).astype(gy.dtype)
        count = Sum(self.axes, True)(mask)
        return broadcast_to(gy.reshape(kept), x.shape) * mask / count


class Cumulative(Function):
    """A running sum or product in ``dtype`` (None: x's), as ``Sum``."""

    def __init__(self, axis: int, product: bool, dtype=None):
        self.axis, self.product, self.dtype = axis, product, dtype

    def forward(self, x):
        accumulate = np.cumprod if self.product else np.cumsum
        d = (self.dtype or x.dtype).numpy
        return tensor_over(compute(partial(accumulate, axis=self.axis, dtype=d), x.numpy()))

    def backward(self, gy):
        x, axis = self.inputs[0], self.axis

        def from_end(t):  # Σ_{j>=i} t_j
            return cumsum(t.flip(axis), axis).flip(axis)

        if not self.product:
            return from_end(gy)
        if is_grad_enabled():
            return _cumprod_gradient_differentiable(x, gy, axis)
        # dy_j/dx_i = Π_{k<=j, k≠i} x_k for j >= i. Before x's first zero that is y_j / x_i;
        # at the first zero, the running product with that zero taken as 1; after it, 0.
        # Masks rather than a branch on the data, so that a jitted step serves any input.
        zero = x.detach() == 0
        seen = cumsum(zero, axis)
        before, first = seen == 0, zero & (seen == 1)
        divided = from_end(gy * cumprod(x, axis)) / where(before, x, 1)
        at_first = from_end(gy * cumprod(where(first, 1, x), axis))
        return where(before, divided, where(first, at_first, 0))


def _cumprod_gradient_differentiable(x, gy, axis: int):
    """Σ_{j>=i} gy_j·Π_{k<=j, k≠i} x_k with every x_k a factor (PyTorch's double-backward
    formula). The masked formula has the same values, but past x's first zero it is a
    constant 0, whose gradient is not: there it is that zero times the product of the
    others. O(n²) along ``axis``, as PyTorch's; only create_graph pays for it."""
    n = x.shape[axis]
    rows = x.swapaxes(axis, -1).unsqueeze(-2)  # rows[..., i, k] = x_k, i the one left out
    others = cumprod(where(np.eye(n, dtype=bool), 1, rows), -1)
    later = np.triu(np.ones((n, n), dtype=bool))  # j >= i
    g = sum(where(later, gy.swapaxes(axis, -1).unsqueeze(-2) * others, 0), -1)
    return g.swapaxes(axis, -1)


class ArgExtreme(Function):
    def __init__(self, axis, keepdims, largest: bool):
        self.axis, self.keepdims, self.largest = axis, keepdims, largest

    def forward(self, x):
        find = np.argmax if self.largest else np.argmin
        find = partial(find, axis=self.axis, keepdims=self.keepdims)
        return tensor_over(compute(lambda a: find(a).astype(np.int64), x.numpy()))


class Truth(Function):
    def __init__(self, axes, keepdims, every: bool):
        self.axes, self.keepdims, self.every = axes, keepdims, every

    def forward(self, x):
        reduce = np.all if self.every else np.any
        return tensor_over(
            compute(partial(reduce, axis=self.axes, keepdims=self.keepdims), x.numpy())
        )


# -- what users call -------------------------------------------------------------------------


def _check_dtype_argument(dtype) -> None:
    if isinstance(dtype, bool):  # PyTorch's t.sum(dim, keepdim) spelt positionally
        raise TypeError(
            f"the argument after the axis is numpy's dtype, got {dtype}; PyTorch's keepdim "
            "goes by keyword: keepdim=True"
        )


def _remembered(kind: str, x, axis, keepdims) -> tuple:
    """(signature, call) of a reduction that records nothing, of a tensor of type Tensor
    over ``axis`` as given: its key among ``tiers.calls`` and the call remembered there
    (None before its first call); (None, None) for any other call."""
    if x.__class__ is Tensor and not x._requires_grad and not config.tracing:
        # Python ints alone: a bool (refused) or numpy's bool_ equals and hashes as an int
        if (axis is None or axis.__class__ is int or _ints(axis)) and keepdims.__class__ is bool:
            signature = (kind, x._storage.dtype, x._shape, x._strides, axis, keepdims)
            return signature, tiers.calls.get(signature)
    return None, None


def _ints(axis) -> bool:
    return axis.__class__ is tuple and builtins.all(a.__class__ is int for a in axis)


def _reduction(function, kind: str, x: Tensor, axes, keepdims: bool, extra, signature=None):
    """``function(axes, keepdims, extra)(x)`` (``extra``: a sum's dtype, an extreme's
    ``largest``); small work that records nothing goes to numpy's reduction at once,
    without the Function (the numpy tier: ``tiers.py``), and is remembered by its
    ``signature`` (``_remembered``)."""
    if not x._requires_grad and not config.tracing and tiers.small(layout.numel(x._shape)):
        if kind == "sum":
            return numpy_tier.reduce(kind, x, axes, keepdims, extra, signature)
        if 0 not in x._shape:
            return numpy_tier.reduce(kind, x, axes, keepdims, None, signature)
    return function(axes, keepdims, extra)(x)


def _accumulator(dtype):
    """The dtype sums and products of ``dtype`` accumulate in, numpy's: uint64 for
    unsigned integers, int64 for signed integers and bool."""
    if dtype.kind == "u":
        return dtypes.uint64
    return dtypes.int64 if dtype.kind in "bi" else dtype


def _read_in(x: Tensor, dtype):
    """(operand, dtype) of a sum or product in ``dtype``: an integer or bool ``x`` as it is
    when ``dtype`` holds its every value (the reduction widens each element as it reads
    it, as numpy's sum(dtype=) does: no widened copy), else ``x`` cast to ``dtype``."""
    if dtype is x.dtype or (
        x.dtype.kind in "biu" and np.can_cast(x.dtype.numpy, dtype.numpy, "safe")
    ):
        return x, dtype
    return x.astype(dtype), dtype


def _accumulated(x, dtype):
    """(operand, dtype) of a sum or product: in ``dtype`` if given, else in the dtype
    sums and products accumulate in (``_read_in``)."""
    _check_dtype_argument(dtype)
    x = as_tensor(x)
    return _read_in(x, _accumulator(x.dtype) if dtype is None else dtypes.as_dtype(dtype))


@torch_keywords
def sum(  # noqa: A001
    x, /, axis=None, dtype=None, out=None, keepdims=False, *, initial=None, where=True
) -> Tensor:
    """Sum over ``axis`` (None: all), numpy's: signed integers and bools sum in int64,
    unsigned integers in uint64; ``initial`` is added, and only the elements where
    ``where`` holds count.

    >>> import jitgrad as jg
    >>> jg.sum(jg.arange(6).reshape(2, 3), axis=1).tolist()
    [3, 12]
    >>> jg.sum(jg.tensor([1.0, 2.0, 3.0]), initial=10.0, where=jg.tensor([True, False, True]))
    tensor(14.)
    """
    signature = None
    if dtype is None and out is None and initial is None and where is True:
        signature, call = _remembered("sum", x, axis, keepdims)
        if call is not None:
            return call(x)
    summed, dtype = _accumulated(x if where is True else _only(where, x, 0), dtype)
    if summed is not x:  # (a copy: what is remembered reduces x itself)
        signature = None
    axes = normalize_axes(axis, len(summed._shape))
    total = _reduction(Sum, "sum", summed, axes, keepdims, dtype, signature)
    if initial is not None:
        total = total + initial
    return total if out is None else write_out(out, total)


# The dtypes a mean adds up in (float16 adds up in float32; integers average in floats).
_OWN_MEAN_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


@torch_keywords
def mean(x, /, axis=None, dtype=None, out=None, keepdims=False, *, where=True) -> Tensor:
    """Mean over ``axis`` (None: all), in ``dtype`` if given (a float or complex one, as
    PyTorch asks). Integers and bools average in the default float dtype; float16 adds up
    in float32 and rounds the mean once, as numpy and PyTorch (a float16 sum overflows
    past 65504).

    >>> import jitgrad as jg
    >>> jg.mean(jg.full(4, 60000.0, dtype=jg.float16)).item()
    60000.0
    >>> jg.mean(jg.tensor([1.0, 2.0, 6.0]), where=jg.tensor([True, False, True])).item()
    3.5
    """
    if dtype is None and out is None and where is True:
        signature, call = _remembered("mean", x, axis, keepdims)
        if call is not None:
            return call(x)
        if signature is not None and tiers.small(layout.numel(x._shape)):
            own = x._storage.dtype in _OWN_MEAN_DTYPES
            if own or x._storage.dtype.kind in "biu":  # (ints and bools add up in the float)
                axes = normalize_axes(axis, len(x._shape))
                in_dtype = None if own else dtypes.get_default_dtype()
                return numpy_tier.reduce("mean", x, axes, keepdims, in_dtype, signature)
    _check_dtype_argument(dtype)
    x = as_tensor(x)
    if where is not True:  # the mean of the elements where ``where`` holds
        mask = broadcast_to(as_tensor(where), x.shape)
        total = sum(_only(mask, x, 0), axis, dtype, keepdims=keepdims)
        if not (total.dtype.is_floating_point or total.dtype.is_complex):
            total = total.astype(dtypes.get_default_dtype())
        count = sum(mask, axis, keepdims=keepdims).astype(total.dtype)
        return write_out(out, total / count)
    axes = normalize_axes(axis, x.ndim)
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"mean: dtype must be a float or complex dtype, got {dtype.name}")
    elif x.dtype.is_floating_point or x.dtype.is_complex:
        dtype = x.dtype
    else:
        dtype = dtypes.get_default_dtype()
    x, dtype = _read_in(x, dtype)
    count = layout.numel(x.shape[i] for i in axes)
    if dtype is dtypes.float16:
        result = (Sum(axes, keepdims)(x.astype(dtypes.float32)) / count).astype(dtypes.float16)
    else:
        result = Sum(axes, keepdims, dtype)(x) / count
    return write_out(out, result)


@torch_keywords
def prod(
    x, /, axis=None, dtype=None, out=None, keepdims=False, *, initial=None, where=True
) -> Tensor:
    """Product over ``axis`` (None: all), in ``dtype`` if given. Integers and bools
    multiply in int64 or uint64, as ``sum``; ``initial`` multiplies it, and only the
    elements where ``where`` holds count.

    >>> import jitgrad as jg
    >>> jg.prod(jg.tensor([200, 2], dtype=jg.uint8)).item()
    400
    """
    x, dtype = _accumulated(_only(where, x, 1), dtype)
    product = Prod(normalize_axes(axis, x.ndim), keepdims, dtype)(x)
    return write_out(out, product if initial is None else product * initial)


@values_and_indices(lambda x, axis, keepdims: argmax(x, axis, keepdims=keepdims))
def max(x, /, axis=None, out=None, keepdims=False, initial=None, where=True) -> Tensor:  # noqa: A001
    """The largest values over ``axis`` (None: all), as numpy's ``max``; with PyTorch's
    ``dim=`` (one dimension), PyTorch's ``(values, indices)`` named tuple. Tied maxima
    share the gradient equally.

    >>> import jitgrad as jg
    >>> t = jg.tensor([[1, 5, 2], [7, 0, 3]])
    >>> t.max(1).tolist(), jg.max(t, axis=0).tolist()
    ([5, 7], [7, 5, 3])
    >>> values, indices = t.max(dim=1)
    >>> values.tolist(), indices.tolist()
    ([5, 7], [1, 0])
    """
    return _extreme(x, axis, out, keepdims, initial, where, True)


@values_and_indices(lambda x, axis, keepdims: argmin(x, axis, keepdims=keepdims))
def min(x, /, axis=None, out=None, keepdims=False, initial=None, where=True) -> Tensor:  # noqa: A001
    """The smallest values over ``axis``, as numpy's ``min``; with PyTorch's ``dim=``,
    PyTorch's ``(values, indices)`` named tuple (see ``max``).

    >>> import jitgrad as jg
    >>> jg.min(jg.tensor([[1, 5], [7, 0]]), dim=0, keepdim=True).indices.tolist()
    [[0, 1]]
    """
    return _extreme(x, axis, out, keepdims, initial, where, False)


def _extreme(x, axis, out, keepdims, initial, where, largest: bool) -> Tensor:
    """numpy's ``max`` (``largest``) or ``min``: ``initial`` takes part in every
    reduction, which may then be empty; ``where`` needs it, as in numpy."""
    name = "max" if largest else "min"
    signature = None
    if out is None and initial is None and where is True:
        signature, call = _remembered(name, x, axis, keepdims)
        if call is not None:
            return call(x)
    x = as_tensor(x)
    if where is not True:
        if initial is None:
            raise ValueError(
                f"{name}: where= needs initial= (the reduction has no identity), as in numpy"
            )
        x = _only(where, x, initial)
    axes = normalize_axes(axis, x.ndim)
    if initial is not None and 0 in (x.shape[i] for i in axes):
        shape = _kept_shape(x.shape, axes) if keepdims else _reduced_shape(x.shape, axes)
        return write_out(out, filled(shape, x.dtype, initial))
    result = _reduction(Extreme, name, x, axes, keepdims, largest, signature=signature)
    if initial is not None:
        result = (maximum if largest else minimum)(result, initial)
    return write_out(out, result)


def _only(mask, x, fill):
    """``x`` where ``mask`` holds, else ``fill`` (numpy's ``where=`` of reductions)."""
    return x if mask is True else where(mask, x, fill)


def _reduced_shape(shape, axes) -> tuple:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


amax, amin = torch_keywords(max.__wrapped__), torch_keywords(min.__wrapped__)


@torch_keywords
def argmax(x, /, axis=None, out=None, *, keepdims=False) -> Tensor:
    """The int64 position of the largest value (the first of equals) along ``axis``, of
    the flattened ``x`` when None.

    >>> import jitgrad as jg
    >>> x = jg.tensor([[1, 5], [7, 2]])
    >>> jg.argmax(x).item(), jg.argmax(x, axis=1).tolist()
    (2, [1, 0])
    """
    x = as_tensor(x)
    axis = None if axis is None else layout.normalize_dim(axis, x.ndim)
    return write_out(out, ArgExtreme(axis, keepdims, True)(x))


@torch_keywords
def argmin(x, /, axis=None, out=None, *, keepdims=False) -> Tensor:
    """The int64 position of the smallest value (the first of equals) along ``axis``, of
    the flattened ``x`` when None.

    >>> import jitgrad as jg
    >>> jg.argmin(jg.tensor([[1, 5], [7, 2]]), axis=0, keepdims=True).tolist()
    [[0, 1]]
    """
    x = as_tensor(x)
    axis = None if axis is None else layout.normalize_dim(axis, x.ndim)
    return write_out(out, ArgExtreme(axis, keepdims, False)(x))


_PYTORCH_CORRECTION = {
    "torch_defaults": {"correction": 1},
    "unless_given": ("ddof", "correction", "unbiased"),
}


@torch_keywords(**_PYTORCH_CORRECTION)
def var(
    x,
    /,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    correction=None,
    unbiased=None,
):
    """Variance with ``ddof`` (numpy) or ``correction`` (PyTorch) degrees of freedom;
    PyTorch's ``unbiased=True`` is ``ddof=1``. Called with PyTorch's ``dim=`` or
    ``keepdim=`` and none of these, it divides by ``n - 1`` as PyTorch does; else by
    ``n - ddof`` (numpy's ``ddof=0``). For complex x it is the mean of ``|x - mean|**2``:
    real, as numpy.

    >>> import jitgrad as jg
    >>> jg.var(jg.tensor([1.0, 2.0, 3.0, 4.0])).item(), jg.var(jg.tensor([1j, -1j])).item()
    (1.25, 1.0)
    """
    x, ddof = _spread_operand(x, dtype, ddof, correction, unbiased)
    small = _small_spread(np.var, x, axis, ddof, keepdims)
    if small is not None:
        return write_out(out, small)
    axes = normalize_axes(axis, x.ndim)
    count = layout.numel(x.shape[i] for i in axes)
    if ddof >= count:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    centered = x - mean(x, axes, keepdims=True)
    if centered.dtype.is_complex:
        centered = abs(centered)
    # numpy's divisor: never negative, so too few elements give inf (or nan), not a
    # negative variance.
    squares = sum(centered * centered, axes, keepdims=keepdims)
    return write_out(out, squares / builtins.max(count - ddof, 0))


@torch_keywords(**_PYTORCH_CORRECTION)
def std(
    x,
    /,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    correction=None,
    unbiased=None,
):
    """Square root of ``var``, with its degrees of freedom. Its gradient is 0 where the
    variance is 0, as PyTorch's: sqrt's slope is infinite there and var's is 0, so the
    chain rule alone gives nan.

    >>> import jitgrad as jg
    >>> x = jg.ones(3, requires_grad=True)
    >>> jg.std(x).backward(); x.grad.tolist()
    [0.0, 0.0, 0.0]
    """
    x, ddof = _spread_operand(x, dtype, ddof, correction, unbiased)
    small = _small_spread(np.std, x, axis, ddof, keepdims)
    if small is not None:
        return write_out(out, small)
    v = var(x, axis, ddof=ddof, keepdims=keepdims)
    zero = v == 0
    # sqrt runs on v with its zeros replaced, so no inf slope meets where's 0 gradient.
    return write_out(out, where(zero, 0, sqrt(where(zero, 1, v))))


@torch_keywords
def logsumexp(x, axis=None, keepdims=False) -> Tensor:
    """log(sum(exp(x))) without overflow: the max is taken out first. Over an empty axis
    it is -inf, as PyTorch and SciPy.

    >>> import jitgrad as jg
    >>> jg.logsumexp(jg.zeros((0, 2)), axis=0).tolist()
    [-inf, -inf]
    """
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    if layout.numel(x.shape[i] for i in axes) == 0:
        # An empty axis has no max; its sum of no exponentials is 0, so log gives -inf
        # (PyTorch's and SciPy's value).
        shift = zeros(_kept_shape(x.shape, axes), x.dtype)
    else:
        shift = Extreme(axes, True, True)(x.detach())
        shift = where(isfinite(shift), shift, 0)
    out = log(sum(exp(x - shift), axes, keepdims=True)) + shift
    return out if keepdims else out.squeeze(axes)


def _spread_operand(x, dtype, ddof, correction, unbiased) -> tuple[Tensor, int]:
    """(operand, ddof) of var and std: ``x`` in ``dtype``, numpy's ``ddof``."""
    _check_dtype_argument(dtype)
    x = as_tensor(x)
    if dtype is not None:
        x = x.astype(dtype, copy=False)
    return x, _ddof(ddof, correction, unbiased)


def _small_spread(numpy_spread, x: Tensor, axis, ddof: int, keepdims: bool):
    """numpy's var or std (``numpy_spread``) of small work that records nothing, in one
    call (the numpy tier), or None: float16 (its mean's rounding is the kernels'), degrees
    of freedom left for none (var warns, once), or any other call."""
    if not records_nothing(x) or x._storage._half or not tiers.small(layout.numel(x._shape)):
        return None
    axes = normalize_axes(axis, x.ndim)
    if ddof >= layout.numel(x._shape[i] for i in axes):
        return None
    a = x.numpy()
    return tensor_over(tiers.quietly(numpy_spread, a, axis=axes, ddof=ddof, keepdims=keepdims))


def _ddof(ddof, correction, unbiased) -> int:
    """numpy's ``ddof`` from it or PyTorch's ``correction`` / ``unbiased`` (one of them)."""
    given = [
        name for name, v in (("correction", correction), ("unbiased", unbiased)) if v is not None
    ]
    if len(given) > 1 or (given and ddof != 0):
        named = ", ".join(f"{n}=" for n in (["ddof"] if ddof != 0 else []) + given)
        raise TypeError(f"got {named}: they all set the degrees of freedom; pass one")
    if unbiased is not None:
        return int(bool(unbiased))
    return ddof if correction is None else correction


@torch_keywords
def all(x, /, axis=None, out=None, keepdims=False, *, where=True) -> Tensor:  # noqa: A001
    """Whether every element along ``axis`` (all axes when None) is true (nonzero).

    >>> import jitgrad as jg
    >>> x = jg.tensor([[1, 0], [2, 3]])
    >>> jg.all(x).item(), jg.all(x, axis=1).tolist()
    (False, [False, True])
    """
    return _truth("all", x, axis, out, keepdims, where)


@torch_keywords
def any(x, /, axis=None, out=None, keepdims=False, *, where=True) -> Tensor:  # noqa: A001
    """Whether some element along ``axis`` (all axes when None) is true (nonzero).

    >>> import jitgrad as jg
    >>> x = jg.tensor([[0, 0], [2, 0]])
    >>> jg.any(x).item(), jg.any(x, axis=0).tolist()
    (True, [True, False])
    """
    return _truth("any", x, axis, out, keepdims, where)


def _truth(kind: str, x, axis, out, keepdims: bool, where) -> Tensor:
    """``all`` or ``any`` (``kind``); small work that records nothing is numpy's logical
    reduction, remembered by signature as sums are."""
    every = kind == "all"
    signature = None
    if out is None and where is True:
        signature, call = _remembered(kind, x, axis, keepdims)
        if call is not None:
            return call(x)
    x = as_tensor(_only(where, x, every))
    axes = normalize_axes(axis, x.ndim)
    if records_nothing(x) and tiers.small(layout.numel(x._shape)):
        found = numpy_tier.reduce(kind, x, axes, keepdims, dtypes.bool_, signature)
        return write_out(out, found)
    return write_out(out, Truth(axes, keepdims, every)(x))


def _scanned(x, axis, dtype):
    """(operand, axis, dtype) of a running sum or product: axis None flattens x, as
    numpy; so does a 0-d x, whose only axes are 0 and -1 (numpy's result has shape (1,)
    too)."""
    x, dtype = _accumulated(x, dtype)
    if axis is not None:
        axis = layout.normalize_dim(axis, x.ndim)
    if axis is None or x.ndim == 0:
        return x.reshape(-1), 0, dtype
    return x, axis, dtype


@torch_keywords
def cumsum(x, axis=None, dtype=None) -> Tensor:
    """Running sum along ``axis`` (None: over the flattened tensor, as numpy), in ``dtype``
    if given. Integers and bools accumulate in int64 or uint64, as ``sum``.

    >>> import jitgrad as jg
    >>> jg.cumsum(jg.tensor([200, 200], dtype=jg.uint8)).tolist()
    [200, 400]
    """
    x, axis, dtype = _scanned(x, axis, dtype)
    return Cumulative(axis, False, dtype)(x)


@torch_keywords
def cumprod(x, axis=None, dtype=None) -> Tensor:
    """Running product along ``axis``, in ``dtype`` if given; its gradient is exact with
    zeros in x too. Integers and bools multiply in int64 or uint64, as ``sum``.

    >>> import jitgrad as jg
    >>> x = jg.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    >>> x.cumprod(0).sum().backward(); x.grad.tolist()
    [1.0, 32.0, 0.0, 0.0]
    """
    x, axis, dtype = _scanned(x, axis, dtype)
    return Cumulative(axis, True, dtype)(x)


__all__ = [
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "logsumexp",
    "all",
    "any",
    "cumsum",
    "cumprod",
]
