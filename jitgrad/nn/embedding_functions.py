"""Embedding lookups in PyTorch's functional spelling: ``F.embedding`` and
``F.embedding_bag``.

Index checks are recorded numpy work (``recording.run``): a jitted step checks every
call's indices, not the trace's.
"""

from __future__ import annotations

import numpy as np

from .. import creation
from ..autograd.tensor import Tensor, as_tensor
from ..ops.elementwise import where
from ..ops.indexing import take_along_axis
from ..recording import compute, compute_all, run


def embedding(input, weight, padding_idx: int | None = None) -> Tensor:  # noqa: A002
    """Row ``i`` of ``weight`` for each integer index ``i`` of ``input`` (PyTorch's
    lookup: indices in ``[0, len(weight))``). Gradients of repeated indices add up; row
    ``padding_idx`` gets none.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.embedding(jg.tensor([2, 0]), jg.arange(6.0).reshape(3, 2)).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    indices, weight = as_tensor(input), as_tensor(weight)
    if not indices.dtype.is_integer:
        raise TypeError(f"embedding takes integer indices, got a {indices.dtype.name} tensor")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be a matrix, got shape {weight.shape}")
    # Recorded, so that a jitted step checks the indices of every call, not the trace's.
    run(_check_indices, indices.numpy(), weight.shape[0])
    rows = weight[indices]
    if padding_idx is None:
        return rows
    # The padding row's value as it is, its gradient held back.
    padding = (indices == padding_idx % weight.shape[0]).reshape(*indices.shape, 1)
    return where(padding, rows.detach(), rows)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(
    input,  # noqa: A002
    weight,
    offsets=None,
    max_norm=None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights=None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of the rows of ``weight`` over each bag of indices, as
    PyTorch's ``F.embedding_bag``: (B, N) ``input`` holds B bags of N indices; 1-d
    ``input`` holds bags one after another, bag b starting at ``offsets[b]`` (the last
    entry of ``offsets`` ends the last bag when ``include_last_offset``).

    Indices equal to ``padding_idx`` take no part; an empty bag gives zeros.
    ``per_sample_weights`` (``input``'s shape, mode "sum") scales each row. The
    gradient of ``max`` goes to the first row that holds each maximum. ``sparse`` is
    accepted and the gradient dense; ``max_norm`` and ``scale_grad_by_freq`` are not
    supported.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> table = jg.arange(6.0).reshape(3, 2)
    >>> F.embedding_bag(jg.tensor([0, 2, 1]), table, jg.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    name = "embedding_bag"
    indices, weight = as_tensor(input), as_tensor(weight)
    if mode not in _BAG_MODES:
        raise ValueError(f"{name}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if max_norm is not None or scale_grad_by_freq:
        raise ValueError(f"{name}: max_norm and scale_grad_by_freq are not supported")
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{name}: per_sample_weights is only supported for mode='sum'")
        per_sample_weights = as_tensor(per_sample_weights)
        if per_sample_weights.shape != indices.shape:
            raise ValueError(
                f"{name}: per_sample_weights of shape {per_sample_weights.shape} must have "
                f"the input's shape {indices.shape}"
            )
    if indices.ndim == 2:
        if offsets is not None:
            raise ValueError(
                f"{name}: offsets must be None for 2-d input (each row is a bag), got offsets"
            )
        count, size = indices.shape
        bounds, include_last_offset = np.arange(count + 1) * size, True
    elif indices.ndim == 1:
        if offsets is None:
            raise ValueError(f"{name}: 1-d input needs offsets (where each bag starts)")
        offsets = as_tensor(offsets)
        if offsets.ndim != 1 or not offsets.dtype.is_integer:
            raise ValueError(
                f"{name}: offsets must be a 1-d integer tensor, got shape {offsets.shape} "
                f"of {offsets.dtype.name}"
            )
        bounds = offsets.numpy()
        run(_check_offsets, bounds, indices.shape[0])
        count = len(bounds) - 1 if include_last_offset else len(bounds)
    else:
        raise ValueError(
            f"{name}: input must be 1-d (with offsets) or 2-d (bags of equal size), got "
            f"shape {indices.shape}"
        )
    flat = indices.reshape(-1)
    rows = embedding(flat, weight)
    padding = None if padding_idx is None else int(padding_idx) % weight.shape[0]
    bag, valid, sizes = compute_all(_bags, flat.numpy(), bounds, include_last_offset, padding)
    if mode == "max":
        if not flat.shape[0]:
            return creation.zeros((count, weight.shape[1]), weight.dtype)
        winner, filled = compute_all(_bag_winners, rows.numpy(), bag, valid, count)
        return where(as_tensor(filled), take_along_axis(rows, as_tensor(winner), 0), 0)
    scale = compute(_bag_scale, valid, sizes, bag, mode, np.dtype(weight.dtype.numpy))
    scale = as_tensor(scale)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights.reshape(-1)
    total = creation.zeros((count, weight.shape[1]), weight.dtype)
    return total.index_add(0, as_tensor(bag), rows * scale.reshape(-1, 1))


def _check_offsets(offsets: np.ndarray, length: int) -> None:
    if offsets.size and offsets[0] != 0:
        raise ValueError(
            f"embedding_bag: offsets[0] must be 0 (the first bag's start), got {offsets[0]}"
        )
    if (np.diff(offsets) < 0).any() or (offsets > length).any():
        raise ValueError(
            f"embedding_bag: offsets must be non-decreasing and at most the input's length "
            f"{length}, got {offsets.tolist()}"
        )


def _bags(flat: np.ndarray, bounds: np.ndarray, include_last_offset: bool, padding):
    """Each index's bag, whether it takes part (inside a bag, not padding), and each bag's
    size; bag b starts at ``bounds[b]``, and the last entry of ``bounds`` ends the last
    bag when ``include_last_offset``."""
    position = np.arange(flat.shape[0])
    starts, end = (bounds[:-1], bounds[-1]) if include_last_offset else (bounds, len(flat))
    bag = np.searchsorted(starts, position, side="right") - 1
    valid = (bag >= 0) & (position < end)
    if padding is not None:
        valid &= flat != padding
    bag = np.where(valid, bag, 0)  # (an index outside every bag adds nothing to bag 0)
    return bag, valid, np.bincount(bag[valid], minlength=len(starts))


def _bag_scale(valid, sizes, bag, mode: str, dtype) -> np.ndarray:
    """Each index's factor in its bag's sum: 1, or 1 / the bag's size for a mean; 0 when
    it takes no part."""
    if mode == "sum":
        return valid.astype(dtype)
    return (valid / np.maximum(sizes, 1)[bag]).astype(dtype)


def _bag_winners(rows: np.ndarray, bag, valid, count: int):
    """For each bag and feature, the row that holds the maximum (the first, or the first
    NaN), and whether the bag has any row."""
    taking = np.where(valid[:, None], rows, -np.inf)
    best = np.full((count, rows.shape[1]), -np.inf, rows.dtype)
    np.maximum.at(best, bag[valid], taking[valid])
    holds = valid[:, None] & ((taking == best[bag]) | np.isnan(taking))
    winner = np.full(best.shape, rows.shape[0])
    position = np.broadcast_to(np.arange(rows.shape[0])[:, None], rows.shape)
    np.minimum.at(winner, bag, np.where(holds, position, rows.shape[0]))
    filled = np.bincount(bag[valid], minlength=count)[:, None] > 0
    return np.where(filled, winner, 0), filled


def _check_indices(a: np.ndarray, n: int) -> None:
    # Negative indices would wrap around (numpy's rule); a lookup table refuses them, as
    # PyTorch does.
    bad = a[(a < 0) | (a >= n)]
    if bad.size:
        raise IndexError(
            f"Embedding: index {bad[0]} is out of range for {n} embeddings "
            f"(indices must be in [0, {n}))"
        )
