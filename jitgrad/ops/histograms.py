"""Counting into bins: numpy's histogram, histogram2d, histogramdd, histogram_bin_edges,
bincount and digitize. Bins and counts are numpy's own (computed on the tensors' values);
a weighted count is differentiable in its weights (each weight's gradient is its bin's).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor, zeros
from ..recording import compute
from ..tensor import TensorBase
from .indexing import GetItem
from .movement import concatenate
from .numpy_tier import tensor_over


def _values(x):
    """A tensor's values (shared), any array-like or None as numpy takes it."""
    return x.numpy() if isinstance(x, TensorBase) else x


class WeightedCount(Function):
    """The sum of ``weights`` per bin, bins given by ``index`` (-1: outside every bin);
    the gradient of a weight is its bin's gradient (0 outside)."""

    def __init__(self, index: np.ndarray, bins: int):
        self.index, self.bins = index, bins

    def forward(self, weights):
        count = partial(_bin_sums, index=self.index, bins=self.bins)
        return tensor_over(compute(count, weights.numpy()))

    def backward(self, gy):
        inside = self.index >= 0
        # a zero beyond the last bin stands for "outside"
        beyond = zeros((1,), gy.dtype)
        return GetItem((np.where(inside, self.index, self.bins),))(concatenate([gy, beyond]))


def _bin_sums(weights, index, bins):
    inside = index >= 0
    return np.bincount(index[inside], weights[inside], minlength=bins)[:bins]


def bincount(x, weights=None, minlength=0) -> Tensor:
    """How often each non-negative integer occurs in the 1-D ``x`` (the sum of its
    ``weights`` if given, float64 and differentiable in them).

    >>> import jitgrad as jg
    >>> jg.bincount(jg.tensor([0, 1, 1, 3])).tolist()
    [1, 2, 0, 1]
    """
    index = np.asarray(_values(x))
    # numpy's checks (1-D, integers, none negative, minlength) and its counts
    counts = compute(partial(np.bincount, minlength=minlength), index)
    if weights is None:
        return tensor_over(counts)
    w = as_tensor(weights)
    if w.dtype.is_complex:
        raise TypeError("Cannot cast array data from dtype('complex128') to dtype('float64')")
    if w.shape != index.shape:
        raise ValueError("The weights and list don't have the same length.")
    return WeightedCount(index.astype(np.int64), counts.shape[0])(w.astype("float64"))


def digitize(x, bins, right=False) -> Tensor:
    """The index of the bin each value of ``x`` falls in (numpy's digitize: bins
    increasing or decreasing; ``right`` puts a value equal to an edge in the lower bin).

    >>> import jitgrad as jg
    >>> jg.digitize(jg.tensor([0.5, 1.0, 2.5]), [1.0, 2.0, 3.0]).tolist()
    [0, 1, 2]
    """
    found = compute(partial(np.digitize, right=right), _values(as_tensor(x)), _values(bins))
    return tensor_over(found.astype(np.int64))


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Tensor:  # noqa: A002
    """numpy's bin edges of ``a``: ``bins`` equal bins, the given edges, or a rule's
    name ('auto', 'fd', 'sturges'...).

    >>> import jitgrad as jg
    >>> jg.histogram_bin_edges(jg.tensor([0.0, 1.0, 2.0]), bins=2).tolist()
    [0.0, 1.0, 2.0]
    """
    edges = np.histogram_bin_edges(_values(as_tensor(a)), _values(bins), range, _values(weights))
    return tensor_over(edges)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``(hist, bin_edges)`` of ``a`` as numpy's (int64 counts, or float64 with
    ``density`` or ``weights``); the counts are differentiable in the weights.

    >>> import jitgrad as jg
    >>> hist, edges = jg.histogram(jg.tensor([0.0, 0.5, 1.0, 2.0]), bins=2)
    >>> hist.tolist(), edges.tolist()
    ([2, 2], [0.0, 1.0, 2.0])
    """
    values = _values(as_tensor(a))
    if not (isinstance(weights, Tensor) and weights.requires_grad):
        hist, edges = np.histogram(values, _values(bins), range, density, _values(weights))
        return tensor_over(hist), tensor_over(edges)
    edges = np.histogram_bin_edges(values, _values(bins), range)
    w = as_tensor(weights)
    if w.shape != np.shape(values):
        raise ValueError("weights should have the same shape as a.")
    index = _bin_index(values.ravel(), edges)
    hist = WeightedCount(index, len(edges) - 1)(w.reshape(-1).astype("float64"))
    if density:
        hist = hist / (hist.sum() * tensor_over(np.diff(edges)))
    return hist, tensor_over(edges)


def _bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """numpy's bin of each value (the last bin closed on the right), -1 outside them all."""
    index = np.searchsorted(edges, values, side="right") - 1
    index[values == edges[-1]] = len(edges) - 2
    outside = (values < edges[0]) | (values > edges[-1]) | np.isnan(values)
    return np.where(outside, -1, index).astype(np.int64)


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``(H, xedges, yedges)``: numpy's two-dimensional histogram of the points (x, y).

    >>> import jitgrad as jg
    >>> h, xe, ye = jg.histogram2d(jg.tensor([0.0, 1.0]), jg.tensor([0.0, 1.0]), bins=2)
    >>> h.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    bins = [_values(b) for b in bins] if isinstance(bins, (list, tuple)) else _values(bins)
    h, xedges, yedges = np.histogram2d(
        _values(as_tensor(x)), _values(as_tensor(y)), bins, range, density, _values(weights)
    )
    return tensor_over(h), tensor_over(xedges), tensor_over(yedges)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``(H, edges)``: numpy's D-dimensional histogram of the rows of ``sample``.

    >>> import jitgrad as jg
    >>> h, edges = jg.histogramdd(jg.tensor([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> h.tolist(), len(edges)
    ([[1.0, 0.0], [0.0, 1.0]], 2)
    """
    bins = [_values(b) for b in bins] if isinstance(bins, (list, tuple)) else _values(bins)
    h, edges = np.histogramdd(_values(as_tensor(sample)), bins, range, density, _values(weights))
    return tensor_over(h), [tensor_over(e) for e in edges]


__all__ = [
    "bincount",
    "digitize",
    "histogram_bin_edges",
    "histogram",
    "histogram2d",
    "histogramdd",
]
