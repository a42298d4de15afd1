"""Attention layers in PyTorch's spelling: ``MultiheadAttention``, ``TransformerEncoderLayer``
(self-attention and a feed-forward block, each with a residual connection and a LayerNorm),
``TransformerDecoderLayer`` (self-attention, attention to the encoder's output and a
feed-forward block) and ``TransformerEncoder`` / ``TransformerDecoder`` (stacks of copies
of one layer). Parameters carry PyTorch's names (``in_proj_weight``, ``out_proj.weight``,
``layers.0.linear1.weight``, ``norm.weight``...), so a torch model's state_dict loads.

>>> import jitgrad as jg
>>> layer = jg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
>>> encoder = jg.nn.TransformerEncoder(layer, num_layers=2, norm=jg.nn.LayerNorm(8))
>>> encoder(jg.ones((3, 5, 8))).shape
(3, 5, 8)
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .. import creation
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce
from ..ops.elementwise import where
from ..ops.linalg import linear
from ..ops.movement import concatenate
from ..random import Generator
from . import functional as F
from . import init, registry
from ._common import param_dtype
from .attention import attention_with_weights
from .container import ModuleList
from .layers import Dropout, Linear
from .module import Module, Parameter
from .normalization import LayerNorm


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
        out, weights = attention_with_weights(
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
            elif m.shape == (N * H, L, S):  # (unbatched: N is 1)
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


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: self-attention, (for a decoder)
    attention to the encoder's output, the feed-forward block
    ``linear2(dropout(activation(linear1(x))))``, one LayerNorm and one Dropout per
    block, and the config. Submodules are created in PyTorch's order, so the state_dict
    keys read as PyTorch's."""

    _cross_attention = False

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation="relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__()
        name = type(self).__name__
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(
                    f"{name}: activation should be 'relu', 'gelu' or a callable, got {activation!r}"
                )
            self._activation_name = activation
            activation = _ACTIVATIONS[activation]
        elif callable(activation):
            self._activation_name = None
        else:
            raise TypeError(
                f"{name}: activation should be 'relu', 'gelu' or a callable, got "
                f"{type(activation).__name__}"
            )
        d = param_dtype(dtype)
        rng = init.as_generator(generator)

        def attention():
            return MultiheadAttention(
                d_model,
                nhead,
                dropout=dropout,
                bias=bias,
                batch_first=batch_first,
                dtype=d,
                generator=rng,
            )

        self.self_attn = attention()
        if self._cross_attention:
            self.multihead_attn = attention()
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=d, generator=rng)
        self.dropout = Dropout(dropout, generator=rng)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=d, generator=rng)
        self.norm_first = bool(norm_first)
        blocks = 3 if self._cross_attention else 2
        for i in range(1, blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=d))
        for i in range(1, blocks + 1):
            setattr(self, f"dropout{i}", Dropout(dropout, generator=rng))
        self.activation = activation
        self._dim_feedforward, self._dropout_p = int(dim_feedforward), float(dropout)
        self._layer_norm_eps = float(layer_norm_eps)

    @property
    def batch_first(self) -> bool:
        return self.self_attn.batch_first

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        x = self.self_attn(
            x,
            x,
            x,
            key_padding_mask,
            need_weights=False,
            attn_mask=attn_mask,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _feed_forward(self, x) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))

    def get_config(self) -> dict:
        if self._activation_name is None:
            raise NotImplementedError(
                f"{type(self).__name__} with a callable activation cannot be described in "
                "an architecture file; use activation='relu' or 'gelu'"
            )
        attn = self.self_attn
        return {
            "d_model": attn.embed_dim,
            "nhead": attn.num_heads,
            "dim_feedforward": self._dim_feedforward,
            "dropout": self._dropout_p,
            "activation": self._activation_name,
            "layer_norm_eps": self._layer_norm_eps,
            "batch_first": attn.batch_first,
            "norm_first": self.norm_first,
            "bias": self.linear1.bias is not None,
            "dtype": self.linear1.weight.dtype.name,
        }


class TransformerEncoderLayer(_TransformerLayer):
    """``x + SelfAttention(x)`` then ``x + FeedForward(x)``, each followed by a LayerNorm
    (or, with ``norm_first``, preceded by one), as PyTorch's.

    The feed-forward block is ``linear2(dropout(activation(linear1(x))))``; ``activation``
    is ``"relu"``, ``"gelu"`` or a callable. ``forward(src, src_mask=None,
    src_key_padding_mask=None, is_causal=False)`` takes MultiheadAttention's masks.
    ``generator`` seeds the initialisation and the dropout.

    >>> import jitgrad as jg
    >>> layer = jg.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0)
    >>> [k for k in layer.state_dict() if k.endswith("weight")]
    ['self_attn.in_proj_weight', 'self_attn.out_proj.weight', 'linear1.weight', \
'linear2.weight', 'norm1.weight', 'norm2.weight']
    """

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _ff_block(self, x) -> Tensor:
        return self.dropout2(self._feed_forward(x))


class TransformerDecoderLayer(_TransformerLayer):
    """``x + SelfAttention(x)``, then ``x + Attention(x, memory)`` (to the encoder's
    output), then ``x + FeedForward(x)``, each followed by a LayerNorm (or, with
    ``norm_first``, preceded by one), as PyTorch's.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)`` takes
    MultiheadAttention's masks: ``tgt_mask`` (T, T) for the self-attention,
    ``memory_mask`` (T, S) for the attention to ``memory``; the ``*_is_causal`` flags are
    hints that the mask given is the causal one. Arguments as ``TransformerEncoderLayer``.

    >>> import jitgrad as jg
    >>> layer = jg.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, batch_first=True)
    >>> layer(jg.ones((3, 5, 4)), jg.ones((3, 7, 4))).shape
    (3, 5, 4)
    """

    _cross_attention = True

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(
            x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        )
        return self.norm3(x + self._ff_block(x))

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal) -> Tensor:
        x = self.multihead_attn(
            x,
            memory,
            memory,
            key_padding_mask,
            need_weights=False,
            attn_mask=attn_mask,
            is_causal=is_causal,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x) -> Tensor:
        return self.dropout3(self._feed_forward(x))


def _copies(name: str, argument: str, layer, num_layers: int) -> ModuleList:
    """``num_layers`` deep copies of ``layer`` (the ``argument`` of stack ``name``),
    sharing its generators (a deep copy would repeat their draws, and every copy would
    drop the same)."""
    if not isinstance(layer, Module):
        raise TypeError(f"{name}: {argument} must be a Module, got {type(layer).__name__}")
    if num_layers < 0:
        raise ValueError(f"{name}: num_layers must be >= 0, got {num_layers}")
    shared = {
        id(g): g for m in layer.modules() for g in vars(m).values() if isinstance(g, Generator)
    }
    return ModuleList(copy.deepcopy(layer, dict(shared)) for _ in range(num_layers))


class _LayerStack(Module):
    """``num_layers`` copies of one layer, then ``norm`` if given. A subclass names the
    layer's argument in ``layer_argument``, which is also the layer's key in its config."""

    layer_argument: str

    def __init__(self, layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _copies(type(self).__name__, self.layer_argument, layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def get_config(self) -> dict:
        if not self.num_layers:
            raise NotImplementedError(
                f"a {type(self).__name__} of no layers has no layer to describe"
            )
        return {
            self.layer_argument: self.layers[0].config(),
            "num_layers": self.num_layers,
            "norm": None if self.norm is None else self.norm.config(),
        }

    @classmethod
    def from_config(cls, args: dict) -> _LayerStack:
        norm = args.get("norm")
        return cls(
            registry.from_config(args[cls.layer_argument]),
            args["num_layers"],
            None if norm is None else registry.from_config(norm),
        )


class TransformerEncoder(_LayerStack):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given.

    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)`` passes the
    masks to every layer. Every position is computed, padded ones too (PyTorch's nested
    tensor shortcut, which zeroes them in eval mode, is not taken: ``enable_nested_tensor``
    and ``mask_check`` are accepted for compatibility). The copies draw their dropout
    masks from the layer's generator in turn, so each layer drops differently.

    >>> import jitgrad as jg
    >>> layer = jg.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)
    >>> list(jg.nn.TransformerEncoder(layer, 2).state_dict())[-2:]
    ['layers.1.norm2.weight', 'layers.1.norm2.bias']
    """

    layer_argument = "encoder_layer"

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ):
        super().__init__(encoder_layer, num_layers, norm)
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        x = src
        for layer in self.layers:
            x = layer(
                x,
                src_mask=mask,
                src_key_padding_mask=src_key_padding_mask,
                is_causal=bool(is_causal),
            )
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(_LayerStack):
    """``num_layers`` copies of ``decoder_layer`` applied in turn, each attending to
    ``memory``, then ``norm`` if given, as PyTorch's.

    ``forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)`` passes
    the masks to every layer. The copies draw their dropout masks from the layer's
    generator in turn.

    >>> import jitgrad as jg
    >>> layer = jg.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8)
    >>> list(jg.nn.TransformerDecoder(layer, 2).state_dict())[-2:]
    ['layers.1.norm3.weight', 'layers.1.norm3.bias']
    """

    layer_argument = "decoder_layer"

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__(decoder_layer, num_layers, norm)

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ):
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal),
                memory_is_causal=memory_is_causal,
            )
        return x if self.norm is None else self.norm(x)


__all__ = [
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
    "TransformerDecoderLayer",
    "TransformerDecoder",
]
