"""The Transformer encoder in PyTorch's spelling: ``TransformerEncoderLayer`` (self-attention
and a feed-forward block, each with a residual connection and a LayerNorm) and
``TransformerEncoder`` (a stack of copies of one layer). state_dict keys are PyTorch's
(``layers.0.self_attn.in_proj_weight``, ``layers.0.linear1.weight``, ``norm.weight``...),
so a torch encoder's weights load.

>>> import jitgrad as jg
>>> layer = jg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
>>> encoder = jg.nn.TransformerEncoder(layer, num_layers=2, norm=jg.nn.LayerNorm(8))
>>> encoder(jg.ones((3, 5, 8))).shape
(3, 5, 8)
"""

from __future__ import annotations

import copy

from ..autograd.tensor import Tensor
from ..random import Generator
from . import functional as F
from . import init
from ._common import param_dtype
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import Dropout, Linear
from .module import Module
from .normalization import LayerNorm

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
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
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(
                    f"TransformerEncoderLayer: activation should be 'relu', 'gelu' or a "
                    f"callable, got {activation!r}"
                )
            self._activation_name = activation
            activation = _ACTIVATIONS[activation]
        elif callable(activation):
            self._activation_name = None
        else:
            raise TypeError(
                "TransformerEncoderLayer: activation should be 'relu', 'gelu' or a callable, "
                f"got {type(activation).__name__}"
            )
        d = param_dtype(dtype)
        rng = init.as_generator(generator)
        self.self_attn = MultiheadAttention(
            d_model,
            nhead,
            dropout=dropout,
            bias=bias,
            batch_first=batch_first,
            dtype=d,
            generator=rng,
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=d, generator=rng)
        self.dropout = Dropout(dropout, generator=rng)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=d, generator=rng)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=d)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=d)
        self.dropout1 = Dropout(dropout, generator=rng)
        self.dropout2 = Dropout(dropout, generator=rng)
        self.activation = activation
        self._dim_feedforward, self._dropout_p = int(dim_feedforward), float(dropout)
        self._layer_norm_eps = float(layer_norm_eps)

    @property
    def batch_first(self) -> bool:
        return self.self_attn.batch_first

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

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

    def _ff_block(self, x) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def get_config(self) -> dict:
        if self._activation_name is None:
            raise NotImplementedError(
                "TransformerEncoderLayer with a callable activation cannot be described in "
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


class TransformerEncoder(Module):
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

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(
                f"TransformerEncoder: encoder_layer must be a Module, got "
                f"{type(encoder_layer).__name__}"
            )
        if num_layers < 0:
            raise ValueError(f"TransformerEncoder: num_layers must be >= 0, got {num_layers}")
        # The copies share the layer's generators (a deep copy would repeat their draws).
        shared = {
            id(g): g
            for m in encoder_layer.modules()
            for g in vars(m).values()
            if isinstance(g, Generator)
        }
        self.layers = ModuleList(
            copy.deepcopy(encoder_layer, dict(shared)) for _ in range(num_layers)
        )
        self.num_layers = int(num_layers)
        self.norm = norm
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

    def get_config(self) -> dict:
        if not self.num_layers:
            raise NotImplementedError("a TransformerEncoder of no layers has no layer to describe")
        return {
            "encoder_layer": self.layers[0].config(),
            "num_layers": self.num_layers,
            "norm": None if self.norm is None else self.norm.config(),
        }

    @classmethod
    def from_config(cls, args: dict) -> TransformerEncoder:
        from .registry import from_config

        norm = args.get("norm")
        return cls(
            from_config(args["encoder_layer"]),
            args["num_layers"],
            None if norm is None else from_config(norm),
        )


__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]
