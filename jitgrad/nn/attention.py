"""Attention in PyTorch's functional spelling: ``F.scaled_dot_product_attention``, and the
computation ``nn.MultiheadAttention`` shares with it.

It is composed of differentiable ops (matmul, where, softmax, dropout), so gradients of any
order come from theirs. (A dedicated Function with a hand-written backward is no faster
in a jitted step: the matrix products dominate.)

>>> import jitgrad as jg
>>> import jitgrad.nn.functional as F
>>> q = k = v = jg.ones((2, 4, 3, 8))  # (batch, heads, length, head_dim)
>>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
(2, 4, 3, 8)
"""

from __future__ import annotations

import math

import numpy as np

from .. import creation
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce
from ..ops.elementwise import where
from ..ops.linalg import matmul
from ..ops.shaping import repeat, tril
from ..ops.unary import exp
from .activation_functions import _shifted


def attention_with_weights(q, k, v, mask, dropout_p, scale, safe, generator=None):
    """softmax(q @ k.T · scale + mask) @ v and the attention weights (after dropout).

    ``mask`` is None, a bool tensor (True takes part) or a float tensor (added), each
    broadcast against the scores. With ``safe``, a query that no key may take part for
    attends to nothing (its weights are 0, as PyTorch's SDPA gives); otherwise its
    weights are NaN (as PyTorch's need_weights path gives)."""
    from . import functional as F  # (functional exports scaled_dot_product_attention)

    scores = matmul(q, k.mT) * scale
    if mask is not None:
        scores = where(mask, scores, -np.inf) if mask.dtype.kind == "b" else scores + mask
    weights = _safe_softmax(scores) if mask is not None and safe else F.softmax(scores, -1)
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p, generator=generator)
    return matmul(weights, v), weights


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax along the last axis, 0 on rows of -inf only, with no NaN in the gradient.
    Shifted by its finite maximum, a row's exponentials sum to at least 1 unless every
    score is -inf: those rows divide zeros by 1 (and their gradient, times the zero
    exponentials, is zero), in the same row kernel as softmax's."""
    e = exp(_shifted(scores, -1))
    total = reduce.sum(e, -1, keepdims=True)
    return e / where(total == 0, 1.0, total)


def _check_mask(name: str, mask: Tensor, shape: tuple) -> None:
    """Refuse a mask that does not broadcast to the scores' ``shape`` or is neither bool
    nor floating."""
    if not (mask.dtype.kind == "b" or mask.dtype.is_floating_point):
        raise TypeError(f"{name} must be a bool or floating tensor, got {mask.dtype.name}")
    try:
        fits = np.broadcast_shapes(mask.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name} of shape {mask.shape} does not broadcast to the attention scores' "
            f"shape {tuple(shape)} (batch..., query length, key length)"
        )


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key.T · scale + mask) @ value, as PyTorch's.

    ``query`` is (..., L, E), ``key`` (..., S, E), ``value`` (..., S, Ev); the batch
    dimensions broadcast. ``attn_mask`` broadcasts to (..., L, S): a bool mask says which
    keys take part (True), a float mask is added to the scores. ``is_causal`` lets query
    ``i`` see keys ``0..i`` only. ``scale`` defaults to 1/√E. ``dropout_p`` drops
    attention weights (always: this form has no eval mode). ``enable_gqa`` lets the
    query have a multiple of key's and value's heads (dimension -3), each key head
    serving a group of query heads. A query with no key to attend to gets zeros.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> q, k, v = jg.zeros((1, 2, 4)), jg.zeros((1, 2, 4)), jg.tensor([[[0.0, 2.0], [4.0, 6.0]]])
    >>> F.scaled_dot_product_attention(q, k, v).tolist()  # equal scores: the values' mean
    [[[2.0, 4.0], [2.0, 4.0]]]
    """
    name = "scaled_dot_product_attention"
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    for what, t in (("query", q), ("key", k), ("value", v)):
        if t.ndim < 2:
            raise ValueError(f"{name}: {what} must have at least 2 dimensions, got {t.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"{name}: query of shape {q.shape} and key of shape {k.shape} must have one "
            "embedding size (last dimension)"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"{name}: key of shape {k.shape} and value of shape {v.shape} must have one "
            "sequence length (dimension -2)"
        )
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{name}: dropout_p must be in [0, 1], got {dropout_p}")
    if enable_gqa:
        k, v = _grouped(name, q, k), _grouped(name, q, v)
    L, S = q.shape[-2], k.shape[-2]
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"{name}: the batch dimensions of query {q.shape}, key {k.shape} and value "
            f"{v.shape} do not broadcast"
        ) from None
    mask = None
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{name}: pass attn_mask or is_causal=True, not both")
        mask = tril(creation.ones((L, S), "bool"))
    elif attn_mask is not None:
        mask = as_tensor(attn_mask)
        _check_mask(f"{name}: attn_mask", mask, (*batch, L, S))
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return attention_with_weights(q, k, v, mask, dropout_p, scale, safe=True)[0]


def _grouped(name: str, q: Tensor, kv: Tensor) -> Tensor:
    """Key or value with each of its heads (dimension -3) repeated for the group of query
    heads it serves."""
    if q.ndim < 3 or kv.ndim < 3:
        raise ValueError(
            f"{name}: enable_gqa needs a heads dimension (-3) in query {q.shape} and "
            f"key/value {kv.shape}"
        )
    heads, kv_heads = q.shape[-3], kv.shape[-3]
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(
            f"{name}: enable_gqa needs the query's {heads} heads to be a multiple of "
            f"key's and value's {kv_heads}"
        )
    return repeat(kv, heads // kv_heads, axis=-3)


__all__ = ["scaled_dot_product_attention"]
