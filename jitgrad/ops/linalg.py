"""Linear algebra: matmul goes to BLAS through numpy; dot, tensordot and outer are built on
it, and einsum is one Function whose gradient for each operand is another einsum.
"""

from __future__ import annotations

import math
import string
from functools import partial

import numpy as np

from .. import dtypes, tiers
from .._config import config
from ..autograd.function import Function, records_nothing
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor, uninitialised
from ..recording import compute, run
from ..strided import layout
from ..tensor import TensorBase, array_getter, wrap_numpy
from . import blas, numpy_tier, reduce
from .elementwise import multiply
from .movement import Unview, broadcast_to, diagonal, permute, reshape, sum_to


def _matmul(a: np.ndarray, b: np.ndarray) -> Tensor:
    """``a @ b`` with numpy's rules, written by BLAS straight into a new tensor's storage
    (a jitted replay repeats the same BLAS call into the same output: no wrapper, no
    copy). Small products run BLAS on one thread (``blas``)."""
    if a.ndim == 0 or b.ndim == 0:
        np.matmul(a, b)  # numpy names the problem
    rows = a.shape[-2:-1] if a.ndim > 1 else ()  # a 1-d operand's dimension is dropped
    columns = b.shape[-1:] if b.ndim > 1 else ()
    shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), *rows, *columns)
    out = uninitialised(shape, dtypes.from_numpy_dtype(np.result_type(a, b)))
    array = out.numpy()
    a, array = _stack_as_rows(a, b, array)
    run(blas.matmul_for(a, b, array), a, b, array)
    return out


def _stack_as_rows(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> tuple:
    """A stack of matrices times one matrix as one product of a taller matrix, where the
    stack's rows lie at one stride: numpy runs a stack as one small BLAS call per matrix
    (a (32, 64, 64) stack by a transposed weight ran at half the speed of one call)."""
    if a.ndim < 3 or b.ndim != 2:
        return a, out
    rows = math.prod(a.shape[:-1])
    try:
        return np.reshape(a, (rows, a.shape[-1]), copy=False), out.reshape(rows, out.shape[-1])
    except ValueError:  # the stack's rows are not evenly spaced: one call per matrix
        return a, out


def _product_signature(a: Tensor, b: Tensor) -> tuple:
    """A matrix product's key among ``tiers.calls``: its operands' dtypes and layouts."""
    s, t = a._storage, b._storage
    return ("matmul", s.dtype, a._shape, a._strides, t.dtype, b._shape, b._strides)


def _matrix_product(a: Tensor, b: Tensor):
    """The product of matrices laid out as ``a`` and ``b`` (one dtype), by BLAS into a new
    array that becomes the result's storage, as one call of the two tensors."""
    storage_type = type(a._storage)
    if storage_type._half:  # (float16's storage holds its bits: numpy's product, wrapped)
        return lambda a, b: numpy_tier.tensor_of(np.matmul(a.numpy(), b.numpy()))
    array_a, array_b = array_getter(a), array_getter(b)
    shape, strides = (a._shape[0], b._shape[1]), (b._shape[1], 1)
    dtype = np.dtype(storage_type._numpy)
    product = blas.matmul_for(a.numpy(), b.numpy(), np.empty(shape, dtype))

    def call(a, b):
        out = np.empty(shape, dtype)
        product(array_a(a), array_b(b), out)
        return numpy_tier.new_tensor(storage_type, out, shape, strides)

    return call


class MatMul(Function):
    """Matrix product of operands with at least 2 dims; batch dims broadcast."""

    def forward(self, a, b):
        return _matmul(a.numpy(), b.numpy())

    def backward(self, gy):
        a, b = self.inputs
        ga = sum_to(matmul(gy, b.mT), a.shape) if a.requires_grad else None
        gb = sum_to(matmul(a.mT, gy), b.shape) if b.requires_grad else None
        return ga, gb


def matmul(a, b, /) -> Tensor:
    """numpy's matmul: 1-D operands are promoted to matrices and the added dim removed.

    >>> import jitgrad as jg
    >>> (jg.ones((2, 3)) @ jg.arange(3.0)).tolist()
    [3.0, 3.0]
    """
    if a.__class__ is Tensor is b.__class__ and not config.tracing:
        if not (a._requires_grad or b._requires_grad):
            signature = _product_signature(a, b)
            call = tiers.calls.get(signature)
            if call is not None:
                return call(a, b)
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension, not scalars")
    inner_a, inner_b = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if inner_a != inner_b:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} are not aligned "
            f"({inner_a} != {inner_b} in the contracted dimension)"
        )
    if records_nothing(a) and records_nothing(b):
        if len(a._shape) == 2 == len(b._shape) and a._storage.dtype is b._storage.dtype:
            # Two matrices of one dtype: BLAS into a new array that becomes the result's
            # storage (the common product, without the graph's bookkeeping), remembered
            # for the operands' layouts.
            call = _matrix_product(a, b)
            signature = _product_signature(a, b)
            tiers.remember(signature, call)
            return call(a, b)
        if a.ndim > 2 or b.ndim > 2:  # (a stack by a matrix may be one product: _matmul)
            return _matmul(a.numpy(), b.numpy())
        # Vectors, mixed dtypes: numpy's product, whose new array becomes the storage.
        return numpy_tier.tensor_of(np.matmul(a.numpy(), b.numpy()))
    if a.ndim == 1 and b.ndim == 1:
        return reshape(MatMul()(reshape(a, 1, -1), reshape(b, -1, 1)), ())
    if a.ndim == 1:
        out = MatMul()(reshape(a, 1, -1), b)
        return reshape(out, out.shape[:-2] + out.shape[-1:])
    if b.ndim == 1:
        return reshape(MatMul()(a, reshape(b, -1, 1)), a.shape[:-1])
    return MatMul()(a, b)


class Linear(Function):
    """``x @ weight.T + bias`` as one op, as PyTorch's ``F.linear``: the weight's gradient
    comes out of BLAS already in the weight's layout (``gy.T @ x``), and the bias's is one
    column sum, instead of a transposed view and a broadcast add to undo."""

    def forward(self, x, weight, bias=None):
        y = _matmul(x.numpy(), weight.numpy().T)
        return y if bias is None else y + bias

    def backward(self, gy):
        x, weight = self.inputs[:2]
        gx = gw = gb = None
        if gy.ndim == 2 and x.ndim == 2 and not is_grad_enabled():
            # The usual (batch, features) case outside create_graph: straight BLAS on the
            # arrays (transposes are views), without recording transpose and matmul ops.
            g = gy.numpy()
            gx = _matmul(g, weight.numpy()) if x.requires_grad else None
            gw = _matmul(g.T, x.numpy()) if weight.requires_grad else None
        else:
            gx = matmul(gy, weight) if x.requires_grad else None
            if weight.requires_grad:
                # The row count spelt out: -1 cannot be inferred beside 0 features.
                n = layout.numel(x.shape[:-1])
                rows = gy.reshape(n, gy.shape[-1])
                gw = matmul(rows.mT, x.reshape(n, x.shape[-1]))
        if len(self.inputs) > 2 and self.inputs[2].requires_grad:
            gb = reduce.sum(gy, axis=tuple(range(gy.ndim - 1)))
        return (gx, gw, gb)[: len(self.inputs)]


def linear(x, weight, bias=None) -> Tensor:
    """``x @ weight.T + bias`` over the last dimension of ``x`` (PyTorch's ``F.linear``).

    >>> import jitgrad as jg
    >>> linear(jg.ones((2, 3)), jg.ones((4, 3)), jg.arange(4.0)).tolist()[0]
    [3.0, 4.0, 5.0, 6.0]
    """
    x, weight = as_tensor(x), as_tensor(weight)
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-d (out, in), got shape {weight.shape}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: input of shape {x.shape} does not match weight of shape {weight.shape}: "
            f"its last dimension must be {weight.shape[1]}"
        )
    if bias is None:
        return Linear()(x, weight)
    bias = as_tensor(bias)
    if bias.shape != (weight.shape[0],):
        raise ValueError(
            f"linear: bias of shape {bias.shape} should have shape ({weight.shape[0]},)"
        )
    return Linear()(x, weight, bias)


# -- products built on matmul ----------------------------------------------------------------


def tensordot(a, /, b, axes=2) -> Tensor:
    """Sum products over ``axes``: an int N pairs a's last N dims with b's first N; a pair
    of sequences names the dims of each. The result has a's free dims, then b's.

    >>> import jitgrad as jg
    >>> jg.tensordot(jg.ones((2, 3, 4)), jg.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = as_tensor(a), as_tensor(b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    for i, j in zip(axes_a, axes_b, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: shapes {a.shape} and {b.shape} do not match in the summed axes: "
                f"a.shape[{i}] = {a.shape[i]} but b.shape[{j}] = {b.shape[j]}"
            )
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    shape_a = tuple(a.shape[i] for i in free_a)
    shape_b = tuple(b.shape[j] for j in free_b)
    k = layout.numel(a.shape[i] for i in axes_a)
    a2 = reshape(permute(a, free_a + axes_a), (layout.numel(shape_a), k))
    b2 = reshape(permute(b, axes_b + free_b), (k, layout.numel(shape_b)))
    return reshape(MatMul()(a2, b2), shape_a + shape_b)


def _tensordot_axes(a, b, axes) -> tuple[list[int], list[int]]:
    if hasattr(axes, "__index__"):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(
                f"tensordot: axes={n} needs 0 <= axes <= ndim of both operands, "
                f"got shapes {a.shape} and {b.shape}"
            )
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        axes_a, axes_b = axes
    except (TypeError, ValueError):
        raise ValueError(
            f"tensordot: axes must be an int or a pair of axis sequences, got {axes!r}"
        ) from None
    axes_a = [axes_a] if hasattr(axes_a, "__index__") else list(axes_a)
    axes_b = [axes_b] if hasattr(axes_b, "__index__") else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: axes {axes_a} of a and {axes_b} of b differ in length")
    axes_a = [layout.normalize_dim(i, a.ndim) if a.ndim else _no_axis(i, a) for i in axes_a]
    axes_b = [layout.normalize_dim(j, b.ndim) if b.ndim else _no_axis(j, b) for j in axes_b]
    for name, ax in (("a", axes_a), ("b", axes_b)):
        if len(set(ax)) != len(ax):
            raise ValueError(f"tensordot: repeated axis in {ax} of {name}")
    return axes_a, axes_b


def _no_axis(i, t):
    raise IndexError(f"tensordot: axis {i} is out of range for a 0-d operand")


def dot(a, b) -> Tensor:
    """numpy's dot: a product with a scalar, the inner product of vectors, the matrix
    product of matrices, else a sum over a's last axis and b's second-to-last.

    >>> import jitgrad as jg
    >>> jg.dot(jg.arange(3.0), jg.arange(3.0)).item()
    5.0
    """
    a, b = as_tensor(a), as_tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        inner_b = b.shape[0]
        if a.shape[-1] != inner_b:
            raise ValueError(
                f"dot: shapes {a.shape} and {b.shape} are not aligned: "
                f"{a.shape[-1]} (dim {a.ndim - 1}) != {inner_b} (dim 0)"
            )
        return matmul(a, b)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"dot: shapes {a.shape} and {b.shape} are not aligned: "
            f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-2]} (dim {b.ndim - 2})"
        )
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))


def outer(a, b) -> Tensor:
    """The outer product of the flattened operands: ``out[i, j] = a[i] * b[j]``.

    >>> import jitgrad as jg
    >>> jg.outer(jg.arange(2.0), jg.arange(3.0)).tolist()
    [[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]]
    """
    a, b = as_tensor(a), as_tensor(b)
    return multiply(reshape(a, -1, 1), reshape(b, 1, -1))


def trace(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Sum along a diagonal of the 2-D slices over ``axis1`` and ``axis2`` (numpy's trace).

    >>> import jitgrad as jg
    >>> jg.trace(jg.arange(9.0).reshape(3, 3)).item()
    12.0
    """
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"trace needs at least 2 dimensions, got shape {x.shape}")
    return reduce.sum(diagonal(x, offset, axis1, axis2), axis=-1)


# -- einsum ----------------------------------------------------------------------------------


class Einsum(Function):
    """``np.einsum`` over operands whose subscripts are letters only (no ellipsis) and
    whose dims agree in size (no broadcasting): the public ``einsum`` arranges both.

    The gradient of operand k is the einsum of the output gradient with the other operands
    onto k's distinct letters; letters no other subscript mentions were summed inside k
    alone, so the gradient is constant along them (a broadcast); a letter repeated in k
    (``ii``) read its diagonal, so the gradient is written back onto that diagonal.
    """

    def __init__(self, terms: tuple[str, ...], out: str):
        self.terms, self.out = terms, out

    def forward(self, *xs):
        arrays = [x.numpy() for x in xs]
        # Path optimisation pays for itself (BLAS, pairwise order) beyond small operands.
        optimize = len(arrays) > 2 or any(a.size >= 4096 for a in arrays)
        # compute() copies when numpy answers with a view of an input (ii->i).
        y = compute(partial(np.einsum, _spec(self.terms, self.out), optimize=optimize), *arrays)
        return wrap_numpy(y, Tensor)

    def backward(self, gy):
        grads = []
        for k, (x, term) in enumerate(zip(self.inputs, self.terms, strict=True)):
            if not x.requires_grad:
                grads.append(None)
                continue
            others = [t for i, t in enumerate(self.terms) if i != k]
            operands = [t for i, t in enumerate(self.inputs) if i != k]
            distinct = "".join(dict.fromkeys(term))
            seen = set(self.out).union(*others)
            kept = "".join(c for c in distinct if c in seen)
            g = _contract((self.out, *others), kept, (gy, *operands))
            if kept != distinct:
                sizes = dict(zip(term, x.shape, strict=True))
                g = reshape(g, tuple(sizes[c] if c in kept else 1 for c in distinct))
                g = broadcast_to(g, tuple(sizes[c] for c in distinct))
            if distinct != term:
                g = Unview(_diagonal_taker(term), x.shape)(g)
            if g.dtype is not x.dtype:
                g = g.astype(x.dtype)
            grads.append(g)
        return tuple(grads)


def _spec(terms, out) -> str:
    return ",".join(terms) + "->" + out


def _diagonal_taker(term: str):
    """The view of a tensor subscripted ``term`` at its distinct letters, with a repeated
    letter's dims walked together (``ii`` -> its diagonal, ``iij`` -> ``ij``)."""
    distinct = "".join(dict.fromkeys(term))

    def take(t):
        strides, shape = t.stride(), t.shape
        return TensorBase.as_strided(
            t,
            tuple(shape[term.index(c)] for c in distinct),
            tuple(sum(s for s, d in zip(strides, term, strict=True) if d == c) for c in distinct),
            t.storage_offset(),
        )

    return take


def _contract(terms, out: str, operands) -> Tensor:
    """Einsum over normalised subscripts; a pure axis reordering stays a view."""
    if len(terms) == 1 and len(set(terms[0])) == len(terms[0]) and set(terms[0]) == set(out):
        order = [terms[0].index(c) for c in out]
        return operands[0] if order == sorted(order) else permute(operands[0], order)
    return Einsum(tuple(terms), out)(*operands)


def einsum(subscripts: str, *operands) -> Tensor:
    """Einstein summation, numpy's ``einsum``: explicit (``"ij,jk->ik"``) or implicit
    (``"ij,jk"``: letters seen once, in alphabetical order) output, ``...`` for broadcast
    dims, repeated letters for diagonals and traces. Differentiable in every operand.

    >>> import jitgrad as jg
    >>> a = jg.arange(6.0).reshape(2, 3)
    >>> jg.einsum("ij,kj->ik", a, a).tolist()
    [[5.0, 14.0], [14.0, 50.0]]
    >>> jg.einsum("ii", jg.eye(3)).item()
    3.0
    """
    if not isinstance(subscripts, str):
        raise TypeError(
            f"einsum expects a subscripts string first (einsum('ij,jk->ik', a, b)), "
            f"got {type(subscripts).__name__}"
        )
    xs = [as_tensor(x) for x in operands]
    terms, out = _parse(subscripts, [x.shape for x in xs])
    sizes = _letter_sizes(subscripts, terms, xs)
    xs = [broadcast_to(x, tuple(sizes[c] for c in term)) for x, term in zip(xs, terms, strict=True)]
    return _contract(terms, out, xs)


def _parse(subscripts: str, shapes) -> tuple[list[str], str]:
    """Subscripts as one letter per dim for each operand, plus the output's letters:
    ``...`` becomes fresh letters (right-aligned, as broadcasting) and an implicit output
    is written out."""
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise ValueError(f"einsum: subscripts {subscripts!r} contain more than one '->'")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
            f"{len(shapes)} were given"
        )
    for part in (*terms, out):
        bad = set(part.replace("...", "")) - set(string.ascii_letters)
        if bad or part.count("...") > 1:
            what = f"character(s) {''.join(sorted(bad))!r}" if bad else "more than one '...'"
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}: {what} in {part!r}")
    used = set(spec)
    fresh = [c for c in string.ascii_letters if c not in used]
    ell_dims = []
    for i, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        named = len(term.replace("...", ""))
        if "..." in term and named <= len(shape):
            ell_dims.append(len(shape) - named)
        elif named != len(shape) or "..." in term:
            raise ValueError(
                f"einsum: operand {i} has shape {shape} ({len(shape)} dims) but its "
                f"subscripts {term!r} name {named}"
            )
    n_ell = max(ell_dims, default=0)
    if n_ell > len(fresh):
        raise ValueError(f"einsum: too many dimensions for subscripts {subscripts!r}")
    ell = "".join(fresh[:n_ell])
    expanded = []
    for term, shape in zip(terms, shapes, strict=True):
        if "..." in term:
            k = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", ell[n_ell - k :])
        expanded.append(term)
    if not arrow:
        letters = "".join(expanded)
        once = sorted(c for c in set(lhs) & set(string.ascii_letters) if letters.count(c) == 1)
        return expanded, ell + "".join(once)
    if "..." in out:
        out = out.replace("...", ell)
    elif n_ell and any("..." in t for t in terms):
        raise ValueError(
            f"einsum: subscripts {subscripts!r} broadcast over '...' in the operands but "
            "the output has no '...' to put those dimensions"
        )
    if len(set(out)) != len(out):
        raise ValueError(f"einsum: output subscripts {out!r} repeat a letter")
    missing = set(out) - set("".join(expanded))
    if missing:
        raise ValueError(
            f"einsum: output letter(s) {''.join(sorted(missing))!r} of {subscripts!r} "
            "appear in no operand"
        )
    return expanded, out


def _letter_sizes(subscripts: str, terms, xs) -> dict[str, int]:
    """Each letter's size; dims of size 1 broadcast to the others (as numpy's einsum)."""
    sizes: dict[str, int] = {}
    for i, (term, x) in enumerate(zip(terms, xs, strict=True)):
        own: dict[str, int] = {}
        for c, n in zip(term, x.shape, strict=True):
            if own.setdefault(c, n) != n:
                raise ValueError(
                    f"einsum: operand {i} of shape {x.shape} repeats {c!r} in "
                    f"{subscripts!r} over dimensions of different sizes ({own[c]} and {n})"
                )
            known = sizes.get(c)
            if known is None or known == 1:
                sizes[c] = n
            elif n not in (1, known):
                shapes = ", ".join(str(t.shape) for t in xs)
                raise ValueError(
                    f"einsum: letter {c!r} of {subscripts!r} has sizes {known} and {n} in "
                    f"operands of shapes {shapes}, which do not broadcast"
                )
    return sizes


__all__ = ["matmul", "dot", "outer", "tensordot", "einsum", "trace"]
