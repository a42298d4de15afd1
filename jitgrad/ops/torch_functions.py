"""PyTorch's module functions that numpy has no name for, with PyTorch's meaning: splitting
into chunks (``chunk``, ``tensor_split``), batched and fused products (``bmm``,
``addmm``), pairwise distances (``cdist``), ``movedim``, ``lerp``, ``rsqrt``, and PyTorch's draws
``normal`` and ``multinomial``. Each is composed of jitgrad ops (the pieces of a split
are views), so gradients flow and ``jg.jit`` replays draw afresh.

>>> import jitgrad as jg
>>> [t.tolist() for t in jg.chunk(jg.arange(5), 2)]
[[0, 1, 2], [3, 4]]
>>> jg.lerp(jg.zeros(2), jg.ones(2), 0.25).tolist()
[0.25, 0.25]
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from .._config import config
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor
from ..autograd.tensor import as_tensor as _tensor
from ..strided import layout
from . import elementwise as ew
from . import movement, reduce, shaping, unary
from .indexing import split_views
from .linalg import matmul

__all__ = [
    "addmm",
    "as_tensor",
    "baddbmm",
    "bmm",
    "cdist",
    "chunk",
    "clamp",
    "dist",
    "index_select",
    "is_tensor",
    "lerp",
    "masked_select",
    "mm",
    "movedim",
    "multinomial",
    "mv",
    "norm",
    "normal",
    "numel",
    "rsqrt",
    "scatter_reduce",
    "softmax",
    "tensor_split",
    "topk",
]


def chunk(x, chunks: int, dim: int = 0) -> list[Tensor]:
    """``x`` cut along ``dim`` into pieces of ``ceil(n / chunks)`` elements, the last one
    smaller, so possibly fewer than ``chunks`` pieces (PyTorch's ``chunk``); views."""
    x = _tensor(x)
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    if x.ndim == 0:
        raise ValueError("chunk needs a tensor with at least one dimension, got a 0-d tensor")
    dim = layout.normalize_dim(dim, x.ndim)
    n = x.shape[dim]
    if n == 0:  # (PyTorch's: as many empty pieces as asked for)
        return split_sizes(x, [0] * chunks, dim)
    return split_sizes(x, -(-n // chunks), dim)


def split_sizes(x, split_size_or_sections, dim: int = 0) -> list[Tensor]:
    """PyTorch's ``split``: pieces of ``split_size_or_sections`` elements along ``dim``
    (the last smaller), or of each of the listed sizes, which must add up to its length;
    views. (``jg.split`` is numpy's, which cuts into equal sections or at indices.)"""
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("split needs a tensor with at least one dimension, got a 0-d tensor")
    dim = layout.normalize_dim(dim, x.ndim)
    n = x.shape[dim]
    if hasattr(split_size_or_sections, "__index__"):
        size = operator.index(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise ValueError(
                f"split: split_size must be positive (0 only for an empty dimension), got {size}"
            )
        sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
    else:
        sizes = [operator.index(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise ValueError(f"split: sizes {sizes} do not add up to dimension {dim}'s length {n}")
    bounds = [0]
    for s in sizes:
        bounds.append(bounds[-1] + s)
    return split_views(x, bounds[1:-1], dim, equal=False)


def tensor_split(x, indices_or_sections, dim: int = 0) -> list[Tensor]:
    """PyTorch's ``tensor_split`` (numpy's ``array_split``): ``N`` sections along ``dim``
    whose lengths differ by at most one, or pieces between the given indices; views."""
    return split_views(x, indices_or_sections, dim, equal=False)


def movedim(x, source, destination) -> Tensor:
    """PyTorch's name for numpy's ``moveaxis``: a view with the dimensions ``source``
    moved to ``destination``."""
    return shaping.moveaxis(x, source, destination)


def bmm(a, b) -> Tensor:
    """Batched matrix product of two 3-d tensors, ``(n, i, k) @ (n, k, j)``."""
    a, b = _tensor(a), _tensor(b)
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError(f"bmm needs two 3-d tensors, got shapes {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ValueError(
            f"bmm: shapes {a.shape} and {b.shape} do not multiply (batch sizes must be equal "
            "and the first tensor's last dimension the second's middle one)"
        )
    return matmul(a, b)


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002  PyTorch's name
    """``beta · input + alpha · (mat1 @ mat2)`` for matrices, ``input`` broadcast."""
    mat1, mat2 = _tensor(mat1), _tensor(mat2)
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"addmm needs two matrices, got shapes {mat1.shape} and {mat2.shape}")
    return _scaled_sum(input, matmul(mat1, mat2), beta, alpha)


def _scaled_sum(input, product: Tensor, beta, alpha) -> Tensor:  # noqa: A002
    """``beta · input + alpha · product``, ``input`` broadcast."""
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # (PyTorch ignores input then, NaN and inf included)
        return product + movement.broadcast_to(_tensor(input), product.shape) * 0
    return product + (input if beta == 1 else _tensor(input) * beta)


def lerp(start, end, weight) -> Tensor:
    """``start + weight · (end - start)``, elementwise with broadcasting."""
    start = _tensor(start)
    return start + weight * (end - start)


def rsqrt(x) -> Tensor:
    """``1 / sqrt(x)``, elementwise."""
    return 1 / unary.sqrt(x)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:  # noqa: A002
    """``beta · input + alpha · bmm(batch1, batch2)``, ``input`` broadcast."""
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def mm(a, b) -> Tensor:
    """The product of two matrices."""
    a, b = _tensor(a), _tensor(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"mm needs two matrices, got shapes {a.shape} and {b.shape}")
    return matmul(a, b)


def mv(a, v) -> Tensor:
    """The product of a matrix and a vector."""
    a, v = _tensor(a), _tensor(v)
    if a.ndim != 2 or v.ndim != 1:
        raise ValueError(f"mv needs a matrix and a vector, got shapes {a.shape} and {v.shape}")
    return matmul(a, v)


def dist(a, b, p=2) -> Tensor:
    """The ``p``-norm of ``a - b`` (broadcast), over all entries."""
    return (_tensor(a) - _tensor(b)).norm(p)


def cdist(x1, x2, p=2.0, compute_mode=None) -> Tensor:
    """PyTorch's ``cdist``: the ``p``-norm distances between the rows of ``x1`` (…, P, M)
    and of ``x2`` (…, R, M), batch dimensions broadcast: a (…, P, R) tensor. ``p`` ≥ 0,
    ``inf`` too; ``compute_mode`` is accepted for PyTorch's signature (every mode computes
    the differences directly, the exact one of its modes). Differentiable, with a zero
    gradient where two rows coincide, as PyTorch's.

    >>> import jitgrad as jg
    >>> jg.cdist(jg.tensor([[0.0, 0.0], [1.0, 1.0]]), jg.tensor([[3.0, 4.0]])).tolist()
    [[5.0], [3.605551275463989]]
    """
    x1, x2 = _tensor(x1), _tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ValueError(
            f"cdist needs tensors of at least 2 dimensions, got shapes {x1.shape} and {x2.shape}"
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(
            f"cdist: x1 of shape {x1.shape} and x2 of shape {x2.shape} must have rows of the "
            "same length (the last dimension)"
        )
    if not p >= 0:
        raise ValueError(f"cdist only supports non-negative p values, got {p}")
    differences = movement.unsqueeze(x1, -2) - movement.unsqueeze(x2, -3)
    if p in (0, 2, math.inf):
        return differences.norm(p, dim=-1)
    # |d|^p and its root taken where they are not 0 only: their derivatives there are
    # infinite for p < 1, and PyTorch's gradient is 0 at an equal entry or row.
    size = abs(differences)
    zero = size == 0
    powered = ew.where(zero, 0.0, ew.where(zero, 1.0, size) ** p).sum(axis=-1)
    if p == 1:
        return powered
    empty = powered == 0
    return ew.where(empty, 0.0, ew.where(empty, 1.0, powered) ** (1.0 / p))


def numel(x) -> int:
    """The number of entries of ``x``."""
    return _tensor(x).numel()


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a jitgrad tensor."""
    return isinstance(obj, Tensor)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """PyTorch's ``as_tensor``: ``data`` as a tensor, sharing its memory where it can
    (numpy's ``asarray``)."""
    from ..creation import asarray  # (creation builds on ops)

    return asarray(data, dtype=dtype, device=device)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None) -> Tensor:
    """PyTorch's ``normal``: draws from N(mean, std), ``mean`` and ``std`` tensors or
    numbers broadcast together (an element's own mean and deviation), or two numbers and
    a ``size``. A draw: no gradient flows to ``mean`` or ``std`` (PyTorch's are zeros).

    >>> import jitgrad as jg
    >>> jg.normal(jg.zeros(3), jg.tensor([0.0, 0.0, 0.0])).tolist()
    [0.0, 0.0, 0.0]
    """
    from ..random.default import randn  # (random builds on creation, which builds on ops)

    tensors = [_tensor(v) for v in (mean, std) if isinstance(v, (Tensor, np.ndarray))]
    if tensors:
        if size is not None:
            raise TypeError("normal: size= is for a number mean and std; tensors give the shape")
        shape = layout.broadcast_shapes(*(t.shape for t in tensors))
        if dtype is None:
            dtype = dtypes.result_type(*tensors)
    elif size is None:
        raise TypeError("normal: a number mean and std need a size")
    else:
        shape = size
    if not config.tracing and bool(reduce.any(_tensor(std) < 0)):
        raise ValueError("normal: std must be non-negative")
    with no_grad():
        drawn = randn(shape, generator=generator, dtype=dtype)
        return drawn * std + mean


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None):  # noqa: A002
    """PyTorch's ``multinomial``: ``num_samples`` category indices drawn from each row of
    ``input`` (1-d, or 2-d rows: non-negative weights, summing to anything positive), as
    int64. Without ``replacement`` a category is drawn at most once per row, each draw
    among those left in proportion to their weights.

    Each category's log-weight plus Gumbel noise ranks it: the largest is a draw from the
    weights, and the ``num_samples`` largest in order are draws without replacement.

    >>> import jitgrad as jg
    >>> sorted(jg.multinomial(jg.tensor([0.0, 1.0, 1.0, 0.0]), 2).tolist())
    [1, 2]
    """
    from ..random.default import rand  # (random builds on creation, which builds on ops)

    weights = _tensor(input)
    if weights.ndim not in (1, 2) or not weights.dtype.is_floating_point:
        raise ValueError(
            "multinomial: input must be 1-d or 2-d floating-point weights, got "
            f"{weights.dtype.name} of shape {weights.shape}"
        )
    n = operator.index(num_samples)
    if n <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {n}")
    categories = weights.shape[-1]
    if not replacement and n > categories:
        raise ValueError(
            f"multinomial: cannot draw {n} samples from {categories} categories without replacement"
        )
    rows = weights.detach().reshape(-1, categories)
    if not config.tracing:  # (the values a trace sees are only its first call's)
        values = rows.numpy()
        if not np.isfinite(values).all() or (values < 0).any():
            raise ValueError("multinomial: weights must be finite and non-negative")
        nonzero = (values > 0).sum(axis=1)
        if (nonzero == 0).any():
            raise ValueError("multinomial: a row of weights sums to 0")
        if not replacement and (nonzero < n).any():
            raise ValueError(
                f"multinomial: a row has fewer than {n} categories of positive weight to "
                "draw without replacement"
            )
    with no_grad():
        drawn = (len(rows), n if replacement else 1, categories)
        gumbel = -unary.log(-unary.log(rand(drawn, generator=generator, dtype=rows.dtype)))
        keys = unary.log(rows).reshape(len(rows), 1, categories) + gumbel
        if replacement:
            picked = reduce.argmax(keys, axis=-1)
        else:
            picked = keys.reshape(len(rows), categories).topk(n, dim=-1).indices
        return picked.reshape(weights.shape[:-1] + (n,))


def _method(name: str, doc: str):
    def function(x, *args, **kwargs):
        return getattr(_tensor(x), name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


clamp = _method("clamp", "``x`` limited to ``[min, max]`` (``clip``'s PyTorch name).")
softmax = _method("softmax", "softmax along ``dim`` (``F.softmax``).")
topk = _method("topk", "The ``k`` largest entries along ``dim`` and their indices.")
index_select = _method("index_select", "The entries at ``index`` along ``dim``.")
masked_select = _method("masked_select", "The entries where ``mask`` is True, 1-d.")
scatter_reduce = _method(
    "scatter_reduce", "``x`` with ``src`` reduced into it at ``index`` along ``dim``."
)
norm = _method("norm", "PyTorch's ``norm``: the ``p``-norm over ``dim`` (all entries by default).")
