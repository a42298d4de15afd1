"""Attention in PyTorch's spelling: ``F.scaled_dot_product_attention`` and
``nn.MultiheadAttention``, whose parameters carry PyTorch's names (``in_proj_weight``,
``in_proj_bias``, ``out_proj.weight``, ``out_proj.bias``), so a torch state_dict loads.

Both are composed of differentiable ops (matmul, where, softmax, dropout), so gradients of
any order come from theirs.

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
from ..ops.linalg import linear, matmul
from ..ops.movement import concatenate
from ..ops.shaping import repeat, tril
from . import functional as F
from . import init
from ._common import param_dtype
from .layers import Linear
from .module import Module, Parameter


def _attention(q, k, v, mask, dropout_p, scale, safe, generator=None):
    """softmax(q @ k.T · scale + mask) @ v and the attention weights (after dropout).

    ``mask`` is None, a bool tensor (True takes part) or a float tensor (added), each
    broadcast against the scores. With ``safe``, a query that no key may take part for
    attends to nothing (its weights are 0, as PyTorch's SDPA gives); otherwise its
    weights are NaN (as PyTorch's need_weights path gives)."""
    scores = matmul(q, k.mT) * scale
    if mask is not None:
        scores = where(mask, scores, -np.inf) if mask.dtype.kind == "b" else scores + mask
    if mask is not None and safe:
        # Rows of -inf only are given finite scores and zeroed after the softmax: no NaN
        # forward, and none in the gradient.
        dead = reduce.all(scores.detach() == -np.inf, -1, keepdims=True)
        weights = where(dead, 0.0, F.softmax(where(dead, 0.0, scores), -1))
    else:
        weights = F.softmax(scores, -1)
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p, generator=generator)
    return matmul(weights, v), weights


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
    return _attention(q, k, v, mask, dropout_p, scale, safe=True)[0]


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


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim // num_heads`` features each,
    with input and output projections, as PyTorch's ``nn.MultiheadAttention``.

    Inputs are (L, N, E), or (N, L, E) with ``batch_first``, or unbatched (L, E).
    ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N·num_heads, L, S) follow
    PyTorch: a bool True marks a key that does NOT take part, a float is added to the
    scores. ``forward`` returns (output, weights): the weights (N, L, S) averaged over
    heads, (N, num_heads, L, S) with ``average_attn_weights=False``, or None without
    ``need_weights``. ``is_causal`` is PyTorch's hint that ``attn_mask`` is the causal
    mask; the mask itself is applied.

    Parameters start as PyTorch's: xavier_uniform input projections, zero biases,
    xavier_normal ``bias_k``/``bias_v``; ``generator`` seeds them (and the dropout).

    >>> import jitgrad as jg
    >>> mha = jg.nn.MultiheadAttention(8, 2, batch_first=True, generator=0)
    >>> out, w = mha(jg.ones((3, 5, 8)), jg.ones((3, 4, 8)), jg.ones((3, 4, 8)))
    >>> out.shape, w.shape, sorted(mha.state_dict())
    ((3, 5, 8), (3, 5, 4), ['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight'])
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"MultiheadAttention: embed_dim and num_heads must be positive, got "
                f"embed_dim={embed_dim} and num_heads={num_heads}"
            )
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                f"num_heads ({num_heads})"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout}")
        d = param_dtype(dtype)
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.head_dim = self.embed_dim // self.num_heads
        self.add_zero_attn = bool(add_zero_attn)
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty((3 * E, E), d))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(creation.empty((E, E), d))
            self.k_proj_weight = Parameter(creation.empty((E, self.kdim), d))
            self.v_proj_weight = Parameter(creation.empty((E, self.vdim), d))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty((3 * E,), d))
        else:
            self.register_parameter("in_proj_bias", None)
        self.generator = init.as_generator(generator)
        self.out_proj = Linear(E, E, bias=bias, dtype=d, generator=self.generator)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty((1, 1, E), d))
            self.bias_v = Parameter(creation.empty((1, 1, E), d))
        else:
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        rng = self.generator
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight, generator=rng)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w, generator=rng)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k, generator=rng)
            init.xavier_normal_(self.bias_v, generator=rng)

    def _projection_weights(self) -> tuple:
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:E], w[E : 2 * E], w[2 * E :])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        biases = (None,) * 3 if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
        return weights, biases

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights: bool = True,
        attn_mask=None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
        batched = self._check_inputs(query, key, value)
        if is_causal and attn_mask is None:
            raise ValueError(
                "MultiheadAttention: is_causal=True is a hint that attn_mask is the causal "
                "mask; pass attn_mask as well"
            )
        if batched and self.batch_first:
            query, key, value = (t.swapaxes(0, 1) for t in (query, key, value))
        elif not batched:
            query, key, value = (t.reshape(t.shape[0], 1, t.shape[1]) for t in (query, key, value))
        L, N, E = query.shape
        S, H, hd = key.shape[0], self.num_heads, self.head_dim
        mask = self._merged_mask(attn_mask, key_padding_mask, batched, L, N, S, query.dtype)
        (w_q, w_k, w_v), (b_q, b_k, b_v) = self._projection_weights()
        q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
        if self.bias_k is not None:
            k = concatenate([k, self.bias_k.expand(1, N, E)], 0)
            v = concatenate([v, self.bias_v.expand(1, N, E)], 0)

        def heads(t):  # (length, N, E) -> (N, H, length, head_dim)
            return t.reshape(t.shape[0], N, H, hd).permute(1, 2, 0, 3)

        q, k, v = heads(q), heads(k), heads(v)
        if self.add_zero_attn:
            zero = creation.zeros((N, H, 1, hd), k.dtype)
            k, v = concatenate([k, zero], 2), concatenate([v, zero], 2)
        dropout_p = self.dropout if self.training else 0.0
        out, weights = _attention(
            q, k, v, mask, dropout_p, 1 / math.sqrt(hd), not need_weights, self.generator
        )
        out = self.out_proj(out.permute(2, 0, 1, 3).reshape(L, N, E))
        if not batched:
            out = out.reshape(L, E)
        elif self.batch_first:
            out = out.swapaxes(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = reduce.mean(weights, 1)
        if not batched:
            weights = weights.reshape(weights.shape[1:])
        return out, weights

    def _check_inputs(self, query, key, value) -> bool:
        """Refuse inputs of the wrong rank or sizes; True when they are batched."""
        name = "MultiheadAttention"
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(
                f"{name}: query, key and value must all be 3-d (batched) or 2-d (unbatched), "
                f"got shapes {query.shape}, {key.shape}, {value.shape}"
            )
        for what, t, size in (
            ("query", query, self.embed_dim),
            ("key", key, self.kdim),
            ("value", value, self.vdim),
        ):
            if t.shape[-1] != size:
                raise ValueError(
                    f"{name}: {what} of shape {t.shape} must have {size} features (last dimension)"
                )
        batched = query.ndim == 3
        batch_axis = 0 if self.batch_first else 1
        if key.shape[:-1] != value.shape[:-1] or (
            batched and key.shape[batch_axis] != query.shape[batch_axis]
        ):
            raise ValueError(
                f"{name}: key of shape {key.shape} and value of shape {value.shape} must "
                f"have one length and batch, and query of shape {query.shape} the same batch"
            )
        return batched

    def _merged_mask(self, attn_mask, key_padding_mask, batched, L, N, S, dtype):
        """attn_mask and key_padding_mask as one additive float mask broadcasting to the
        scores (N, H, L, S + extra keys), or None. A bool True becomes -inf."""
        name, H = "MultiheadAttention", self.num_heads
        extra = (self.bias_k is not None) + self.add_zero_attn
        masks = []
        if attn_mask is not None:
            m = _additive(name, "attn_mask", attn_mask, dtype)
            if m.shape == (L, S):
                masks.append(m)
            elif m.shape == (N * H, L, S) and batched or m.shape == (H, L, S) and not batched:
                masks.append(m.reshape(N, H, L, S))
            else:
                raise ValueError(
                    f"{name}: attn_mask of shape {m.shape} must be ({L}, {S}) (query length, "
                    f"key length) or ({N * H}, {L}, {S}) (batch·num_heads, query length, "
                    "key length)"
                )
        if key_padding_mask is not None:
            m = _additive(name, "key_padding_mask", key_padding_mask, dtype)
            expected = (N, S) if batched else (S,)
            if m.shape != expected:
                raise ValueError(
                    f"{name}: key_padding_mask of shape {m.shape} must be {expected} "
                    "(batch, key length)"
                )
            masks.append(m.reshape(N, 1, 1, S))
        if not masks:
            return None
        mask = masks[0] if len(masks) == 1 else masks[0] + masks[1]
        if extra:  # the added keys (bias_k, the zero key) are never masked
            pad = creation.zeros((*mask.shape[:-1], extra), mask.dtype)
            mask = concatenate([mask, pad], -1)
        return mask

    def get_config(self) -> dict:
        return {
            "embed_dim": self.embed_dim,
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "bias": self.in_proj_bias is not None,
            "add_bias_kv": self.bias_k is not None,
            "add_zero_attn": self.add_zero_attn,
            "kdim": self.kdim,
            "vdim": self.vdim,
            "batch_first": self.batch_first,
            "dtype": self.out_proj.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _additive(name: str, what: str, mask, dtype) -> Tensor:
    """A PyTorch module mask as an additive float mask: a bool True (masked) is -inf."""
    mask = as_tensor(mask)
    if mask.dtype.kind == "b":
        return where(mask, -np.inf, creation.zeros((), dtype))
    if not mask.dtype.is_floating_point:
        raise TypeError(f"{name}: {what} must be a bool or floating tensor, got {mask.dtype.name}")
    return mask


__all__ = ["scaled_dot_product_attention", "MultiheadAttention"]
