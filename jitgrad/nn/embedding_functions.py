"""Embedding lookups in PyTorch's functional spelling, ``F.embedding`` and
``F.embedding_bag``, with PyTorch's options: ``padding_idx``, ``max_norm`` with
``norm_type`` (the rows looked up are renormalised in place first), ``scale_grad_by_freq``
and ``sparse``.

Index checks and the renormalisation are recorded numpy work (``recording.run``): a jitted
step checks and renormalises with every call's indices, not the trace's.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import creation
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor
from ..ops.elementwise import where
from ..ops.indexing import GetItem, index_key, take_along_axis
from ..recording import compute, compute_all, run


def embedding(
    input,  # noqa: A002
    weight,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Row ``i`` of ``weight`` for each integer index ``i`` of ``input`` (PyTorch's
    lookup: indices in ``[0, len(weight))``). Gradients of repeated indices add up; row
    ``padding_idx`` gets none.

    ``max_norm``: first, each row that ``input`` looks up and whose ``norm_type``-norm
    exceeds ``max_norm`` is scaled in place, by max_norm / (norm + 1e-7), as PyTorch's
    ``embedding_renorm_`` does; this writes into ``weight`` without recording a
    gradient, and counts as a write (autograd then refuses a graph that saved the
    weight before). ``scale_grad_by_freq``: each index's share of its row's gradient is
    divided by how often ``input`` holds that index. ``sparse`` is accepted: the
    gradient is dense, with the values of PyTorch's sparse gradient (and, unlike
    PyTorch, it may be combined with ``scale_grad_by_freq``).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.embedding(jg.tensor([2, 0]), jg.arange(6.0).reshape(3, 2)).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    >>> table = jg.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> _ = F.embedding(jg.tensor([0, 1]), table, max_norm=1.0)
    >>> table.norm(dim=1).round(decimals=6).tolist()
    [1.0, 0.5]
    """
    indices, weight = _checked(input, weight, "embedding")
    padding = padding_index(padding_idx, weight.shape[0])
    max_norm = renorm_options(max_norm, norm_type, "embedding")
    run(_check_indices, indices.numpy(), weight.shape[0])
    if max_norm is not None:
        renorm_(weight, indices, max_norm, norm_type)
    return _lookup(indices, weight, padding, scale_grad_by_freq)


def _checked(input, weight, name: str) -> tuple[Tensor, Tensor]:  # noqa: A002
    indices, weight = as_tensor(input), as_tensor(weight)
    if not indices.dtype.is_integer:
        raise TypeError(f"{name} takes integer indices, got a {indices.dtype.name} tensor")
    if weight.ndim != 2:
        raise ValueError(f"{name}: weight must be a matrix, got shape {weight.shape}")
    return indices, weight


def _lookup(indices: Tensor, weight: Tensor, padding: int | None, scale_grad_by_freq) -> Tensor:
    """``weight[indices]`` (indices checked), the gradient scaled by frequency and held
    back from the padding row as asked."""
    if scale_grad_by_freq and weight.requires_grad and is_grad_enabled():
        key = index_key(weight.shape, indices)
        share = compute(_frequency_shares, key[0], weight.shape[0], weight.dtype.numpy)
        rows = FrequencyScaledLookup(key, as_tensor(share))(weight)
    else:
        rows = weight[indices]
    if padding is None:
        return rows
    # The padding row's value as it is, its gradient held back.
    held = (indices == padding).reshape(*indices.shape, 1)
    return where(held, rows.detach(), rows)


class FrequencyScaledLookup(GetItem):
    """``weight[key]`` whose gradient divides each index's contribution by how often the
    key holds that index: PyTorch's ``scale_grad_by_freq``. (Defined here, beside its one
    user: the gather is ``GetItem``'s, only the backward's factor is the embedding's.)"""

    def __init__(self, key: tuple, share: Tensor):
        super().__init__(key)
        self.share = share

    def backward(self, gy):
        return super().backward(gy * self.share)


def _frequency_shares(indices: np.ndarray, n: int, dtype) -> np.ndarray:
    """1 / (how often ``indices`` holds each index), one per index, shaped to scale rows."""
    counts = np.bincount(indices.reshape(-1).astype(np.intp), minlength=n)
    return (1.0 / counts[indices]).astype(dtype)[..., None]


def renorm_options(max_norm, norm_type, name: str) -> float | None:
    """``max_norm`` checked (None, or a non-negative number), and ``norm_type`` a number:
    refused with the reason otherwise."""
    if isinstance(norm_type, (str, bytes)) or not isinstance(norm_type, numbers.Real):
        raise TypeError(
            f"{name}: norm_type must be a number (the p of the p-norm), got {norm_type!r}"
        )
    if math.isnan(norm_type):
        raise ValueError(f"{name}: norm_type must be a number (the p of the p-norm), got nan")
    if max_norm is None:
        return None
    if not isinstance(max_norm, numbers.Real):
        raise TypeError(f"{name}: max_norm must be a number or None, got {max_norm!r}")
    # PyTorch takes a negative max_norm and flips the sign of every row it scales; no
    # norm is negative, so jitgrad refuses it.
    if not max_norm >= 0:
        raise ValueError(
            f"{name}: max_norm must be a non-negative number (the largest norm a row may "
            f"keep), got {max_norm}"
        )
    return float(max_norm)


def renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale in place each row of ``weight`` that ``indices`` picks and whose
    ``norm_type``-norm exceeds ``max_norm`` down to ``max_norm`` (PyTorch's
    ``embedding_renorm_``); no gradient is recorded, and the weight's version moves."""
    if not (weight.dtype.is_floating_point or weight.dtype.is_complex):
        raise TypeError(
            f"embedding: max_norm needs a floating-point weight, got a {weight.dtype.name} one"
        )
    weight._check_writable()
    run(_renorm_rows, weight.numpy(), indices.numpy(), max_norm, float(norm_type))
    weight._storage._written()


def _renorm_rows(table: np.ndarray, indices: np.ndarray, max_norm: float, p: float) -> None:
    rows = np.unique(indices)
    picked = table[rows]
    if not picked.size:
        return
    # Norms in float64 and the factor in the weight's precision (float32 at least), as
    # PyTorch compares a norm read as a double and scales with its float factor.
    with np.errstate(divide="ignore"):  # (a negative p over a zero: an infinite term)
        norms = np.linalg.norm(picked.astype(np.result_type(picked, np.float64)), p, axis=1)
    over = norms > max_norm
    if over.any():
        factor = (max_norm / (norms[over] + 1e-7)).astype(np.result_type(table, np.float32))
        table[rows[over]] = picked[over] * factor[:, None]


def padding_index(padding_idx, num_embeddings: int) -> int | None:
    """``padding_idx`` checked against the table's size, a negative one counted from the
    end."""
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
        raise TypeError(f"padding_idx must be an integer, got {padding_idx!r}")
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(
            f"padding_idx {padding_idx} is out of range for {num_embeddings} embeddings"
        )
    return int(padding_idx) % num_embeddings


def _check_indices(a: np.ndarray, n: int) -> None:
    # Negative indices would wrap around (numpy's rule); a lookup table refuses them, as
    # PyTorch does.
    bad = a[(a < 0) | (a >= n)]
    if bad.size:
        raise IndexError(
            f"Embedding: index {bad[0]} is out of range for {n} embeddings "
            f"(indices must be in [0, {n}))"
        )


BAG_MODES = ("sum", "mean", "max")


def check_bag_mode(mode: str, scale_grad_by_freq, sparse, name: str) -> None:
    """Refuse a mode other than sum, mean and max, and what PyTorch refuses for max."""
    if mode not in BAG_MODES:
        raise ValueError(f"{name}: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(
            f"{name}: mode 'max' does not support scale_grad_by_freq (its gradient goes to "
            "one row per bag and feature)"
        )
    if mode == "max" and sparse:
        raise ValueError(f"{name}: mode 'max' does not support sparse=True, as in PyTorch")


def embedding_bag(
    input,  # noqa: A002
    weight,
    offsets=None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
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
    gradient of ``max`` goes to the first row that holds each maximum. ``max_norm``
    renormalises in place every row that ``input`` holds, as ``embedding`` does.
    ``scale_grad_by_freq`` (modes "sum" and "mean") divides each index's share of its
    row's gradient by how often ``input`` holds that index: PyTorch's documented rule,
    which its CUDA kernels follow (its CPU kernel of torch 2.13 divides some rows by
    another index's count). ``sparse`` (modes "sum" and "mean") is accepted: the
    gradient is dense, with the values of PyTorch's sparse gradient.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> table = jg.arange(6.0).reshape(3, 2)
    >>> F.embedding_bag(jg.tensor([0, 2, 1]), table, jg.tensor([0, 2]), mode="sum").tolist()
    [[4.0, 6.0], [2.0, 3.0]]
    """
    name = "embedding_bag"
    indices, weight = _checked(input, weight, name)
    check_bag_mode(mode, scale_grad_by_freq, sparse, name)
    padding = padding_index(padding_idx, weight.shape[0])
    max_norm = renorm_options(max_norm, norm_type, name)
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
    run(_check_indices, flat.numpy(), weight.shape[0])
    if max_norm is not None:
        renorm_(weight, flat, max_norm, norm_type)
    rows = _lookup(flat, weight, None, scale_grad_by_freq)
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
