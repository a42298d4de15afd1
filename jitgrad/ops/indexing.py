"""Advanced indexing, gathers, split and pad: numpy's semantics, with gradients.

Two Functions carry everything that picks elements by index: ``GetItem`` (numpy's
advanced indexing, a copy) and its adjoint ``ScatterAdd`` (``np.add.at`` into zeros, so an
element picked twice gets both gradients). Each is the other's backward, so gradients of
any order come free. ``ScatterReduce`` (PyTorch's ``scatter_reduce``) differentiates
through them. ``take_along_axis``/``gather`` and the copying modes of ``pad`` are
``GetItem`` with a key built for them; ``split`` is basic views, and so is the gradient
of constant ``pad``; the modes linear in the values (mean, linear ramps, odd reflections)
take numpy's values and send gradients back through each axis's padding matrix.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from .. import backend
from .._config import config
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, compute_all, run
from ..strided import layout
from ..tensor import TensorBase, assigned_array
from . import numpy_tier
from .movement import basic_index, clone, sum_to
from .numpy_tier import tensor_over
from .torch_keywords import torch_keywords


def _put(target, key, source):
    target[key] = source


def _take(a, key):
    return a[key]


def _scatter_add(g, key, shape):
    out = np.zeros(shape, dtype=g.dtype)
    kernels = backend.kernels()
    if kernels is not None and len(key) == 1 and isinstance(key[0], np.ndarray):
        add_rows = kernels.row_scatter(out, key[0], g)  # whole rows: an embedding's
        if add_rows is not None:
            add_rows(out, key[0], g)
            return out
    np.add.at(out, key, g)
    return out


class GetItem(Function):
    """``x[key]`` for an advanced ``key`` (numpy's rules): a new tensor, never a view."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, key: tuple):
        self.key = key

    def forward(self, x):
        # compute() copies when a key that turned out basic (0-d index arrays) gives a view.
        return tensor_over(compute(_take, x.numpy(), self.key))

    def backward(self, gy):
        return ScatterAdd(self.key, self.inputs[0].shape)(gy)


class ScatterAdd(Function):
    """Zeros of ``shape`` with ``g`` added at ``key``; repeated positions accumulate."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, key: tuple, shape):
        self.key, self.shape = key, tuple(shape)

    def forward(self, g):
        return tensor_over(compute(_scatter_add, g.numpy(), self.key, self.shape))

    def backward(self, gg):
        return GetItem(self.key)(gg)


SCATTER_REDUCTIONS = {
    "sum": np.add,
    "prod": np.multiply,
    "mean": np.add,
    "amax": np.maximum,
    "amin": np.minimum,
}


def _reduction_identity(ufunc, dtype: np.dtype):
    if ufunc is np.add:
        return 0
    if ufunc is np.multiply:
        return 1
    largest = ufunc is np.maximum
    if dtype.kind == "f":
        return -np.inf if largest else np.inf
    if dtype.kind == "b":
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


def _scatter_count(key, shape, include_self: bool, dtype):
    """How many values a mean over each position of a scatter divides by: the scattered
    ones, plus self's when included; 1 where nothing was scattered (self is kept)."""
    count = np.full(shape, int(include_self), dtype=dtype)
    np.add.at(count, key, 1)
    return np.maximum(count, 1, out=count)


def _scatter_reduced(x, src, key, reduce: str, include_self: bool):
    ufunc = SCATTER_REDUCTIONS[reduce]
    out = x.copy()
    if not include_self:
        out[key] = _reduction_identity(ufunc, out.dtype)
    ufunc.at(out, key, src)
    if reduce == "mean":
        count = _scatter_count(key, x.shape, include_self, out.dtype)
        if out.dtype.kind in "iu":
            out //= count  # PyTorch floors an integer mean
        else:
            out /= count
    return out


class ScatterReduce(Function):
    """``x`` with each ``src`` element reduced into the position ``key`` sends it to
    (PyTorch's ``scatter_reduce``); with ``include_self`` False, ``x``'s own value at a
    position that receives any is left out. Gradients are PyTorch's formulas."""

    def __init__(self, key: tuple, reduce: str, include_self: bool):
        self.key, self.reduce, self.include_self = key, reduce, include_self

    def forward(self, x, src):
        reduced = compute(
            _scatter_reduced, x.numpy(), src.numpy(), self.key, self.reduce, self.include_self
        )
        return tensor_over(reduced)

    def backward(self, g):
        from .elementwise import where  # (elementwise builds on this module)

        x, src = self.inputs
        gather = GetItem(self.key)
        if self.reduce == "sum":
            gx, gsrc = g, gather(g)
        elif self.reduce == "mean":
            count = _scatter_count_tensor(self.key, x.shape, self.include_self, g.dtype)
            gx = g / count
            gsrc = gather(gx)
        elif self.reduce == "prod":
            gx, gsrc = self._product_gradients(g, where)
        else:
            # Ties share the gradient evenly. As PyTorch, self counts among the ties
            # wherever it equals the result, even where include_self=False left it out.
            result = self.applied_to(x.detach(), src.detach())
            x_hit = (x.detach() == result).astype(g.dtype)
            src_hit = (src.detach() == gather(result)).astype(g.dtype)
            shared = g / (x_hit + ScatterAdd(self.key, x.shape)(src_hit))
            gx, gsrc = x_hit * shared, src_hit * gather(shared)
        if not self.include_self:
            gx = gx * tensor_over(compute(_unwritten, self.key, x.shape, g.dtype.numpy))
        return gx, gsrc

    def applied_to(self, x, src) -> Tensor:
        """This reduction of other values, recorded when gradients flow."""
        return ScatterReduce(self.key, self.reduce, self.include_self)(x, src)

    def _product_gradients(self, g, where):
        """PyTorch's: each factor's gradient is the product of the others, taken without
        dividing by a zero factor; a position with two zeros gives every factor 0."""
        x, src = self.inputs
        gather = GetItem(self.key)
        unzeroed_x = where(x == 0, 1, x)
        gx = g * self.applied_to(unzeroed_x, src) / unzeroed_x
        src_zero = src == 0
        zeros_there = gather(ScatterAdd(self.key, x.shape)(src_zero.astype(g.dtype)))
        lone_zero = src_zero & (zeros_there == 1)
        others = gather(g * self.applied_to(x, where(lone_zero, 1, src)))
        quotient = gather(g * self.applied_to(x, src)) / where(src_zero, 1, src)
        return gx, where(lone_zero, others, quotient)


def _scatter_count_tensor(key, shape, include_self: bool, dtype) -> Tensor:
    # Recorded: a jitted step counts each call's indices.
    return tensor_over(compute(_scatter_count, key, shape, include_self, dtype.numpy))


class Pad(Function):
    """numpy's constant ``pad``; the gradient is the centre of the output gradient."""

    needs_input_values = False
    differentiates_complex = True

    def __init__(self, widths, values):
        self.widths, self.values = widths, values

    def forward(self, x):
        pad_constant = partial(np.pad, mode="constant", constant_values=self.values)
        return tensor_over(compute(pad_constant, x.numpy(), self.widths))

    def backward(self, gy):
        centre = tuple(
            slice(b, b + n) for (b, _), n in zip(self.widths, self.inputs[0].shape, strict=True)
        )
        return basic_index(gy, centre)  # its adjoint pads with zeros: create_graph works


# -- keys ------------------------------------------------------------------------------------

_VALID = (
    "only integers, slices (:), ellipsis (...), None and integer or boolean arrays are "
    "valid indices"
)


def _snapshot(a: np.ndarray) -> np.ndarray:
    """A private copy of an array (indices, or a value overlapping its target), made by a
    recorded write: a jitted step copies each call's values, where a plain copy would
    keep the traced ones forever."""
    copy = np.empty_like(a)
    run(np.copyto, copy, a)
    return copy


def _index_part(part):
    """One component of a key as numpy takes it; index tensors and sequences become
    (copied) numpy arrays, so a later write to them cannot change a recorded key."""
    if part is None or part is Ellipsis or isinstance(part, slice):
        return part
    if isinstance(part, (bool, np.bool_)):
        return np.asarray(part, dtype=bool)
    if isinstance(part, (TensorBase, np.ndarray)):
        array = _snapshot(part.numpy() if isinstance(part, TensorBase) else part)
    elif hasattr(part, "__index__"):
        return operator.index(part)
    elif isinstance(part, (float, complex, str, bytes, np.generic)):
        value = part.item() if isinstance(part, np.generic) else part
        raise IndexError(f"{_VALID}; got {type(part).__name__} {value!r}")
    else:
        try:
            array = np.asarray(part)
        except ValueError:
            raise IndexError(f"index {part!r} is not a rectangular sequence of integers") from None
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.intp)  # [] indexes nothing, as in numpy
    if array.dtype.kind not in "biu":
        raise IndexError(
            f"arrays used as indices must be of integer or boolean type, got {array.dtype}"
        )
    return array


def _index_array(indices, who: str) -> np.ndarray:
    """The integer index array of a gather, as a numpy copy."""
    if isinstance(indices, TensorBase):
        array = _snapshot(indices.numpy())
    else:
        try:
            array = np.array(indices)
        except ValueError:
            raise IndexError(f"{who}: indices {indices!r} are not a rectangular array") from None
    if array.dtype.kind not in "iu":
        raise IndexError(f"{who}: indices must be an integer array, got dtype {array.dtype}")
    return array


def _is_mask(part) -> bool:
    return isinstance(part, np.ndarray) and part.dtype == np.bool_


def _out_of_range(part, n: int, lowest: int | None = None):
    """An index in ``part`` outside ``[lowest, n)`` (``lowest`` -n by default: numpy's
    rule), or None."""
    lowest = -n if lowest is None else lowest
    if isinstance(part, int):
        return None if lowest <= part < n else part
    if part.size == 0:
        return None
    low, high = part.min(), part.max()
    if low < lowest:
        return int(low)
    return int(high) if high >= n else None


def index_key(shape, key) -> tuple:
    """``key`` as the tuple numpy indexes with, checked against ``shape`` so that bad
    indices raise an IndexError naming the index, the axis and its size."""
    shape = tuple(shape)
    parts = tuple(_index_part(p) for p in (key if isinstance(key, tuple) else (key,)))
    if sum(p is Ellipsis for p in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    taken = sum(0 if p is None or p is Ellipsis else p.ndim if _is_mask(p) else 1 for p in parts)
    if taken > len(shape):
        raise IndexError(
            f"too many indices for a tensor of shape {shape}: the key indexes {taken} "
            f"dimensions, the tensor has {len(shape)}"
        )
    axis = 0
    for p in parts:
        if p is None:
            continue
        if p is Ellipsis:
            axis += len(shape) - taken
        elif isinstance(p, slice):
            axis += 1
        elif _is_mask(p):
            span = shape[axis : axis + p.ndim]
            if p.shape != span:
                raise IndexError(
                    f"boolean index of shape {p.shape} does not match the indexed shape "
                    f"{span} (axes {axis} to {axis + p.ndim - 1} of a tensor of shape {shape})"
                )
            axis += p.ndim
        else:
            bad = _out_of_range(p, shape[axis])
            if bad is not None:
                raise IndexError(
                    f"index {bad} is out of bounds for axis {axis} with size {shape[axis]}"
                )
            axis += 1
    return parts


# -- what users call -------------------------------------------------------------------------


def advanced_index(x, key) -> Tensor:
    """``x[key]`` with integer arrays or boolean masks in ``key`` (numpy's advanced
    indexing, mixed freely with slices, integers, None and ``...``). The result is a copy;
    gradients of repeated indices add up.

    >>> import jitgrad as jg
    >>> x = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> x[[0, 0, 1], 1].tolist()
    [2.0, 2.0, 4.0]
    >>> x[x > 1.5].sum().backward()
    >>> x.grad.tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    x = as_tensor(x)
    if not x._requires_grad and config.thread.tape is None and _numpy_key(key):
        # No gradient: numpy's indexing of the arrays (its errors name a bad index or a
        # mismatched mask), a new array either way.
        if key.__class__ is Tensor:
            return numpy_tier.tensor_of(x.numpy()[key.numpy()])
        parts = tuple([k.numpy() if k.__class__ is Tensor else k for k in key])
        return numpy_tier.tensor_of(x.numpy()[parts])
    return GetItem(index_key(x.shape, key))(x)


def _numpy_key(key) -> bool:
    """Whether numpy indexes with ``key`` as jitgrad does: an integer or bool tensor, or a
    tuple of those, integers, slices, None and ``...``."""
    if key.__class__ is Tensor:
        return key._storage.dtype.kind in "biu"
    if key.__class__ is not tuple:
        return False
    for k in key:
        kind = k.__class__
        if kind is Tensor:
            if k._storage.dtype.kind not in "biu":
                return False
        elif not (kind is int or kind is slice or k is None or k is Ellipsis):
            return False
    return True


def advanced_assign(x, key, value) -> None:
    """Raw in-place ``x[key] = value`` for an advanced ``key`` (numpy's semantics: the value
    is broadcast and cast; a repeated index keeps the last write). Records no gradient.

    >>> import jitgrad as jg
    >>> x = jg.zeros(4)
    >>> x[[0, 2]] = jg.tensor([5.0, 6.0])
    >>> x.tolist()
    [5.0, 0.0, 6.0, 0.0]
    """
    # Nothing to record: numpy's assignment of the arrays, whose errors name a bad index or
    # a mismatched mask; no copies of the index arrays, which are read now.
    eager = config.thread.tape is None and _numpy_key(key)
    if eager:
        parts = key if key.__class__ is tuple else (key,)
        key = tuple([k.numpy() if k.__class__ is Tensor else k for k in parts])
    else:
        key = index_key(x.shape, key)
    target = TensorBase.numpy(x)
    if not target.flags.writeable:
        TensorBase._check_writable(x)  # raises, naming the problem
    if 0 in x._strides and any(s == 0 and n > 1 for n, s in zip(x._shape, x._strides)):
        raise ValueError(
            f"cannot write into a broadcast view (shape {x.shape}, strides {x.stride()}): "
            "several elements share one memory location"
        )
    if isinstance(value, TensorBase):
        source = TensorBase.numpy(value)
    else:
        source = assigned_array(value, x.dtype)
    if np.may_share_memory(source, target):
        # Copied first; in a trace by a recorded copy, which each replay makes again.
        source = source.copy() if eager else _snapshot(source)
    try:
        run(_put, target, key, source)
    except ValueError:
        picked = np.broadcast_to(np.zeros((), bool), x.shape)[key].shape
        raise ValueError(
            f"cannot assign a value of shape {source.shape} to the indexed part of shape "
            f"{picked} of a tensor of shape {x.shape}: the shapes do not broadcast"
        ) from None
    x._storage._written()


def _winners(key, shape):
    """An array of ``shape`` holding, at each position ``key`` writes, the flat index of
    the written element that won (the last one), and -1 elsewhere; and those labels."""
    winner = np.full(shape, -1, dtype=np.int64)
    written = np.broadcast_to(np.zeros((), bool), shape)[key].shape
    labels = np.arange(int(np.prod(written)), dtype=np.int64).reshape(written)
    winner[key] = labels
    return winner, labels


def _unwritten(key, shape, dtype):
    return (_winners(key, shape)[0] < 0).astype(dtype)


def _written_last(key, shape, dtype):
    winner, labels = _winners(key, shape)
    return (winner[key] == labels).astype(dtype)


class IndexPut(Function):
    """``x`` with ``x[key] = value`` for an advanced key, out of place: how a recorded
    assignment is rebased. With repeated indices the last write wins, in the forward and
    in the gradient, which reaches only the value elements that were written last."""

    needs_input_values = False

    def __init__(self, key):
        self.key = key

    def forward(self, x, value):
        out = TensorBase.clone(x)
        advanced_assign(out, self.key, value)
        return out

    def backward(self, gy):
        x, value = self.inputs
        # Recorded: a jitted step computes the masks from each call's indices.
        dtype = gy.dtype.numpy
        kept = tensor_over(compute(_unwritten, self.key, x.shape, dtype))
        won = tensor_over(compute(_written_last, self.key, x.shape, dtype))
        gx = gy * kept if x.requires_grad else None
        gv = sum_to(GetItem(self.key)(gy) * won, value.shape) if value.requires_grad else None
        return gx, gv


def index_put(x, key, value) -> Tensor:
    """``x`` with ``x[key] = value`` as a new tensor (advanced ``key``), with gradients."""
    x = as_tensor(x)
    return IndexPut(index_key(x.shape, key))(x, value)


@torch_keywords
def take_along_axis(x, /, indices, axis: int | None = -1) -> Tensor:
    """Pick ``x``'s elements along ``axis`` at ``indices`` (same number of dimensions as
    ``x``; other dimensions broadcast): numpy's ``take_along_axis``. ``axis=None`` works on
    the flattened tensor.

    >>> import jitgrad as jg
    >>> x = jg.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> jg.take_along_axis(x, jg.argmax(x, axis=1, keepdims=True), axis=1).tolist()
    [[30.0], [60.0]]
    """
    x = as_tensor(x)
    idx = _index_array(indices, "take_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(
                f"take_along_axis with axis=None needs 1-D indices, got shape {idx.shape}"
            )
        x, axis = x.reshape(-1), 0
    elif x.ndim == 0:
        # numpy's rule, and PyTorch's take_along_dim's: a 0-d tensor has no axis to take
        # along (axis=None takes its one element).
        raise IndexError(
            f"take_along_axis: axis {axis} is out of range for a 0-d tensor; use axis=None"
        )
    return _take_along(x, idx, axis)


def _check_along(idx: np.ndarray, n: int, axis: int, who: str) -> None:
    """Raise for an index of a gather along an axis of size ``n`` that is out of bounds:
    outside [-n, n) for numpy's take_along_axis, [0, n) for PyTorch's gather."""
    bad = _out_of_range(idx, n, 0 if who == "gather" else None)
    if bad is not None:
        what = "dimension" if who == "gather" else "axis"
        raise IndexError(f"{who}: index {bad} is out of bounds for {what} {axis} with size {n}")


def _take_along(x: Tensor, idx: np.ndarray, axis: int, who: str = "take_along_axis") -> Tensor:
    """take_along_axis (or, with ``who="gather"``, gather) on an index array already
    copied by ``_index_array``: copying it again here would be unrecorded, and a jitted
    step would keep the traced indices."""
    if idx.ndim != x.ndim:
        raise ValueError(
            f"take_along_axis: indices of shape {idx.shape} and x of shape {x.shape} must "
            "have the same number of dimensions"
        )
    axis = layout.normalize_dim(axis, x.ndim)
    for d, (n, m) in enumerate(zip(x.shape, idx.shape, strict=True)):
        if d != axis and n != m and 1 not in (n, m):
            raise ValueError(
                f"take_along_axis: indices of shape {idx.shape} do not broadcast against x "
                f"of shape {x.shape} in dimension {d} (axis is {axis})"
            )
    # Recorded, so that a jitted step checks the indices of every call, not the trace's.
    run(_check_along, idx, x.shape[axis], axis, who)
    ones = (1,) * x.ndim
    key = tuple(
        idx if d == axis else np.arange(n).reshape(ones[:d] + (n,) + ones[d + 1 :])
        for d, n in enumerate(x.shape)
    )
    return GetItem(key)(x)


def gather(x, dim: int, index) -> Tensor:
    """PyTorch's ``gather``: ``out[i][j] = x[index[i][j]][j]`` for ``dim=0`` and so on. The
    index may be smaller than ``x`` outside ``dim`` (never larger); nothing broadcasts, and
    indices must be in ``[0, x.shape[dim])``, as PyTorch's (``take_along_axis`` takes
    negative ones, as numpy's).

    >>> import jitgrad as jg
    >>> jg.gather(jg.tensor([[1, 2], [3, 4]]), 1, jg.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    x = as_tensor(x)
    idx = _index_array(index, "gather")
    if idx.ndim != x.ndim:
        raise ValueError(
            f"gather: index of shape {idx.shape} and input of shape {x.shape} must have the "
            "same number of dimensions"
        )
    dim = layout.normalize_dim(dim, x.ndim)
    if x.ndim == 0:
        # PyTorch takes a 0-d input's dim 0 (or -1) as its one element: gather from it as
        # from a tensor of shape (1,).
        return _take_along(x.reshape(1), idx.reshape(1), 0, "gather").reshape(())
    for d, (n, m) in enumerate(zip(x.shape, idx.shape, strict=True)):
        if d != dim and m > n:
            raise ValueError(
                f"gather: index of shape {idx.shape} is larger than input of shape {x.shape} "
                f"in dimension {d} (only dimension {dim} may differ freely)"
            )
    if any(m != n for d, (n, m) in enumerate(zip(x.shape, idx.shape, strict=True)) if d != dim):
        x = basic_index(
            x, tuple(slice(None) if d == dim else slice(0, m) for d, m in enumerate(idx.shape))
        )
    return _take_along(x, idx, dim, "gather")


def split(x, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """numpy's ``split``: ``N`` equal sections along ``axis`` (an error when the size is not
    a multiple of ``N``), or pieces between the given split points. Pieces are views.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.split(jg.arange(6), 3)]
    [[0, 1], [2, 3], [4, 5]]
    >>> [t.tolist() for t in jg.split(jg.arange(6), [1, 4])]
    [[0], [1, 2, 3], [4, 5]]
    """
    return split_views(x, indices_or_sections, axis, equal=True)


def split_views(x, indices_or_sections, axis: int, equal: bool) -> list[Tensor]:
    """The views of ``split`` (``equal``) and ``array_split`` (sections that may differ by
    one: the first ``n % N`` get one element more, as in numpy)."""
    who = "split" if equal else "array_split"
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError(f"{who} needs a tensor with at least one dimension, got a 0-d tensor")
    axis = layout.normalize_dim(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (TensorBase, np.ndarray)):
        indices_or_sections = indices_or_sections.tolist()  # an int when 0-d
    if hasattr(indices_or_sections, "__index__"):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{who}: the number of sections must be positive, got {sections}")
        if equal and n % sections:
            raise ValueError(
                f"split: axis {axis} of size {n} does not divide into {sections} equal "
                "sections; array_split allows unequal ones"
            )
        size, longer = divmod(n, sections)
        bounds = [i * size + min(i, longer) for i in range(sections + 1)]
    else:
        try:
            bounds = [0, *(operator.index(p) for p in indices_or_sections), n]
        except TypeError:
            raise TypeError(
                f"{who}: indices_or_sections must be an integer or a sequence of integers, "
                f"got {indices_or_sections!r}"
            ) from None
    lead = (slice(None),) * axis
    return [basic_index(x, lead + (slice(a, b),)) for a, b in zip(bounds, bounds[1:], strict=False)]


# numpy's pad modes and the keywords each takes.
_MODE_KEYWORDS = {
    "constant": ("constant_values",),
    "empty": (),
    "edge": (),
    "wrap": (),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "minimum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
}


def _pairs(values, ndim: int, name: str) -> np.ndarray:
    """numpy's forms of a per-axis (before, after) argument as an (ndim, 2) array."""
    array = np.asarray(values)
    if ndim == 0 and array.size == 0:
        return np.zeros((0, 2), np.intp)  # nothing to pad: () fits a 0-d tensor
    if array.ndim <= 2:
        try:
            return np.broadcast_to(array, (ndim, 2))
        except ValueError:
            pass
    raise ValueError(
        f"pad: {name} of shape {array.shape} does not fit a tensor of {ndim} dimensions: give "
        "an int, a (before, after) pair or one pair per axis"
    )


def _pad_widths(x: Tensor, pad_width) -> tuple:
    if isinstance(pad_width, dict):  # {axis: width or (before, after)}; others get none
        pairs = [(0, 0)] * x.ndim
        for axis, width in pad_width.items():
            pairs[layout.normalize_dim(axis, x.ndim)] = tuple(_pairs(width, 1, "pad_width")[0])
        pad_width = pairs
    widths = _pairs(pad_width, x.ndim, "pad_width")
    if widths.dtype.kind not in "iu" and widths.size:
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width cannot be negative, got {pad_width!r}")
    return tuple((int(b), int(a)) for b, a in widths)


def _numpy_pad(a, widths, mode, kwargs):
    return np.pad(a, widths, mode=mode, **kwargs)


def _axis_pad_matrix(n: int, width, mode: str, kwargs: dict, axis: int, ndim: int):
    """The matrix ``M`` of one axis's padding when it is linear in the values (the constant
    part of ``linear_ramp`` aside): numpy's pad of the identity's columns."""
    per_axis = {
        k: _pairs(v, ndim, k)[axis] if k != "reflect_type" else v for k, v in kwargs.items()
    }
    if "end_values" in per_axis:
        per_axis["end_values"] = 0  # the ramp's constant part has no gradient
    if "stat_length" in per_axis:
        per_axis["stat_length"] = (tuple(per_axis["stat_length"]), (1, 1))
    return np.pad(np.eye(n), (width, (0, 0)), mode=mode, **per_axis)


def _along(matrix: Tensor, t: Tensor, axis: int) -> Tensor:
    """``matrix`` applied to each line of ``t`` along ``axis``."""
    from .linalg import tensordot  # (linalg builds on the elementwise ops, which build on this)

    moved = tensordot(matrix, t, ([1], [axis]))
    order = list(range(1, t.ndim))
    order.insert(axis, 0)
    return moved.permute(order)


class LinearPad(Function):
    """numpy's pad in a mode linear in the values (``mean``, ``linear_ramp``, odd
    ``reflect`` and ``symmetric``): numpy's values forward; backward, the transposed
    per-axis matrices, last axis first (numpy pads the axes in order)."""

    needs_input_values = False

    def __init__(self, widths, mode: str, kwargs: dict):
        self.widths, self.mode, self.kwargs = widths, mode, kwargs

    def forward(self, x):
        return tensor_over(compute(_numpy_pad, x.numpy(), self.widths, self.mode, self.kwargs))

    def backward(self, gy):
        shape = self.inputs[0].shape
        for axis in reversed(range(gy.ndim)):
            if any(self.widths[axis]):
                m = _axis_pad_matrix(
                    shape[axis], self.widths[axis], self.mode, self.kwargs, axis, gy.ndim
                )
                gy = _along(tensor_over(m.T.astype(gy.dtype.numpy)), gy, axis)
        return gy


def _order_statistics(a, axis: int, side: int, width, length, mode: str):
    """The indices along ``axis`` of the elements a pad in ``mode`` copies (maximum,
    minimum) or averages (median: two middle ones) on ``side`` (0 before, 1 after),
    repeated over the padded width: two arrays, equal but for an even median."""
    n = a.shape[axis]
    length = n if length is None else min(int(length), n)
    if length <= 0:
        raise ValueError("stat_length of 0 yields no value for padding")
    start = 0 if side == 0 else n - length
    chunk = np.take(a, np.arange(start, start + length), axis=axis)
    if mode == "median":
        order = np.argsort(chunk, axis=axis, kind="stable")
        picks = [np.take(order, [(length - 1) // 2], axis), np.take(order, [length // 2], axis)]
    else:
        pick = np.argmax if mode == "maximum" else np.argmin
        picks = [pick(chunk, axis=axis, keepdims=True)] * 2
    return np.stack([np.repeat(p + start, width[side], axis=axis) for p in picks])


def _stat_pad(x: Tensor, widths, mode: str, stat_length) -> Tensor:
    """``maximum``, ``minimum`` and ``median`` pads, axis by axis, as gathers of the elements
    numpy's statistic picks: the gradient reaches them."""
    lengths = _pairs(np.array(stat_length, dtype=object), x.ndim, "stat_length")
    for axis, width in enumerate(widths):
        if not any(width):
            continue
        sides = [
            compute(_order_statistics, x.numpy(), axis, side, width, lengths[axis][side], mode)
            for side in (0, 1)
        ]
        centre = np.arange(x.shape[axis]).reshape([-1 if d == axis else 1 for d in range(x.ndim)])
        centre = np.broadcast_to(centre, x.shape)
        keys = [np.concatenate([sides[0][i], centre, sides[1][i]], axis=axis) for i in (0, 1)]
        low = _take_along(x, keys[0], axis)
        x = low if mode != "median" else (low + _take_along(x, keys[1], axis)) / 2
    return x


def pad(x, pad_width, mode: str = "constant", constant_values=None, **kwargs) -> Tensor:
    """numpy's ``pad``, every mode: ``"constant"`` (``constant_values``), ``"edge"``,
    ``"reflect"`` and ``"symmetric"`` (``reflect_type``), ``"wrap"``, ``"linear_ramp"``
    (``end_values``), ``"maximum"``, ``"minimum"``, ``"mean"``, ``"median"``
    (``stat_length``) and ``"empty"`` (zeros here). ``pad_width`` is an int, a
    ``(before, after)`` pair, one pair per axis, or a dict ``{axis: int or pair}`` (other
    axes unpadded). Gradients reach the input in every mode; ``"median"`` pads of integer
    tensors (numpy's rounded means) are numpy's values without one.

    >>> import jitgrad as jg
    >>> jg.pad(jg.tensor([1, 2, 3]), (1, 2)).tolist()
    [0, 1, 2, 3, 0, 0]
    >>> jg.pad(jg.tensor([1, 2, 3]), 2, mode="reflect").tolist()
    [3, 2, 1, 2, 3, 2, 1]
    >>> jg.pad(jg.tensor([1.0, 2.0]), (2, 1), mode="linear_ramp", end_values=5).tolist()
    [5.0, 3.0, 1.0, 2.0, 5.0]
    """
    x = as_tensor(x)
    widths = _pad_widths(x, pad_width)
    if callable(mode):
        # numpy's own padding by the function, on the values: what the function computes
        # is opaque to jitgrad, so no gradient passes it.
        if x.requires_grad and is_grad_enabled():
            raise RuntimeError(
                "pad: a function as mode gives no gradient (jitgrad cannot see what it "
                "computes); detach() the input or pad under jg.no_grad()"
            )
        widths_array = np.asarray(widths)
        return tensor_over(compute(lambda a: np.pad(a, widths_array, mode, **kwargs), x.numpy()))
    if mode not in _MODE_KEYWORDS:
        raise ValueError(f"pad: unknown mode {mode!r}; use one of {list(_MODE_KEYWORDS)}")
    # numpy's np.pad on tensors passes constant_values=0 whatever the mode: that one is
    # taken as not given.
    if constant_values is not None and (mode == "constant" or np.any(constant_values != 0)):
        kwargs["constant_values"] = constant_values
    unsupported = set(kwargs) - set(_MODE_KEYWORDS[mode])
    if unsupported:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {unsupported}")
    if x.ndim == 0:
        return clone(x)  # nothing to pad, as in numpy
    if mode in ("constant", "empty"):
        values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values")
        return Pad(widths, tuple(map(tuple, values.tolist())))(x)
    for d, (n, w) in enumerate(zip(x.shape, widths, strict=True)):
        if n == 0 and any(w):
            raise ValueError(
                f"pad: cannot extend the empty axis {d} with mode {mode!r}: only 'constant' "
                "and 'empty' can"
            )
    odd = kwargs.get("reflect_type", "even")
    if odd not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {odd!r}")
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and odd == "even"):
        # Every output element copies one input element, axis by axis: an outer index.
        key = np.ix_(
            *(np.pad(np.arange(n), w, mode=mode) for n, w in zip(x.shape, widths, strict=True))
        )
        return GetItem(key)(x)
    if mode in ("maximum", "minimum") or (mode == "median" and x.dtype.kind in "fc"):
        return _stat_pad(x, widths, mode, kwargs.get("stat_length"))
    if mode == "median":
        return tensor_over(compute(_numpy_pad, x.numpy(), widths, mode, kwargs))
    return LinearPad(widths, mode, kwargs)(x)


def unravel_index(indices, shape, order: str = "C") -> tuple[Tensor, ...]:
    """numpy's ``unravel_index``: the coordinates in an array of ``shape`` of flat
    ``indices``, one int64 tensor per dimension.

    >>> import jitgrad as jg
    >>> [t.tolist() for t in jg.unravel_index(jg.tensor([5, 7]), (3, 4))]
    [[1, 1], [1, 3]]
    """
    flat = indices.numpy() if isinstance(indices, TensorBase) else indices
    coordinates = compute_all(lambda i: np.unravel_index(i, shape, order), flat)
    return tuple(tensor_over(c) for c in coordinates)


def ravel_multi_index(multi_index, dims, mode="raise", order: str = "C") -> Tensor:
    """numpy's ``ravel_multi_index``: the flat indices of coordinates in an array of shape
    ``dims``, an int64 tensor.

    >>> import jitgrad as jg
    >>> jg.ravel_multi_index((jg.tensor([1, 1]), jg.tensor([1, 3])), (3, 4)).tolist()
    [5, 7]
    """
    coordinates = [c.numpy() if isinstance(c, TensorBase) else c for c in multi_index]
    return tensor_over(
        compute(lambda *c: np.ravel_multi_index(c, dims, mode=mode, order=order), *coordinates)
    )


__all__ = ["take_along_axis", "gather", "split", "pad", "unravel_index", "ravel_multi_index"]
