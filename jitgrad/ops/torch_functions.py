"""PyTorch's module functions that numpy has no name for, with PyTorch's meaning: splitting
into chunks (``chunk``, ``tensor_split``), batched and fused products (``bmm``,
``addmm``), ``movedim``, ``lerp`` and ``rsqrt``. Each is composed of differentiable ops
(the pieces of a split are views).

>>> import jitgrad as jg
>>> [t.tolist() for t in jg.chunk(jg.arange(5), 2)]
[[0, 1, 2], [3, 4]]
>>> jg.lerp(jg.zeros(2), jg.ones(2), 0.25).tolist()
[0.25, 0.25]
"""

from __future__ import annotations

import operator

from ..autograd.tensor import Tensor, as_tensor
from ..strided import layout
from . import movement, shaping, unary
from .indexing import split_views
from .linalg import matmul

__all__ = ["addmm", "bmm", "chunk", "lerp", "movedim", "rsqrt", "tensor_split"]


def chunk(x, chunks: int, dim: int = 0) -> list[Tensor]:
    """``x`` cut along ``dim`` into pieces of ``ceil(n / chunks)`` elements, the last one
    smaller, so possibly fewer than ``chunks`` pieces (PyTorch's ``chunk``); views."""
    x = as_tensor(x)
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    if x.ndim == 0:
        raise ValueError("chunk needs a tensor with at least one dimension, got a 0-d tensor")
    dim = layout.normalize_dim(dim, x.ndim)
    n = x.shape[dim]
    if n == 0:  # (PyTorch's: as many empty pieces as asked for)
        return split_sizes(x, [0] * chunks, dim)
    size = -(-n // chunks)
    return split_sizes(x, [min(size, n - start) for start in range(0, n, size)], dim)


def split_sizes(x, split_size_or_sections, dim: int = 0) -> list[Tensor]:
    """PyTorch's ``split``: pieces of ``split_size_or_sections`` elements along ``dim``
    (the last smaller), or of each of the listed sizes, which must add up to its length;
    views. (``jg.split`` is numpy's, which cuts into equal sections or at indices.)"""
    x = as_tensor(x)
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
    a, b = as_tensor(a), as_tensor(b)
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
    mat1, mat2 = as_tensor(mat1), as_tensor(mat2)
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"addmm needs two matrices, got shapes {mat1.shape} and {mat2.shape}")
    product = matmul(mat1, mat2)
    product = product if alpha == 1 else product * alpha
    if beta == 0:  # (PyTorch ignores input then, NaN and inf included)
        return product + movement.broadcast_to(as_tensor(input), product.shape) * 0
    return product + (input if beta == 1 else as_tensor(input) * beta)


def lerp(start, end, weight) -> Tensor:
    """``start + weight · (end - start)``, elementwise with broadcasting."""
    start = as_tensor(start)
    return start + weight * (end - start)


def rsqrt(x) -> Tensor:
    """``1 / sqrt(x)``, elementwise."""
    return 1 / unary.sqrt(x)
