"""Layers with parameters or randomness: Linear, Bilinear, Embedding, EmbeddingBag,
Dropout, and the shape layers Flatten and Identity.

Parameters are created in the default dtype unless ``dtype=`` says otherwise, and
initialised as PyTorch does from ``generator`` (a ``jg.random.Generator``, an int seed, or
None), so one seeded generator passed to every layer makes a model reproducible.
"""

from __future__ import annotations

import math

from .. import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..device import check_device
from ..ops import linalg
from . import functional as F
from . import init
from ._common import param_dtype
from .activation import written_into
from .conv import config_value
from .embedding_functions import check_bag_mode, padding_index, renorm_options
from .module import Module, Parameter


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight of shape (out_features, in_features).

    Weights start as kaiming_uniform(a=√5), i.e. U(±1/√in_features), and the bias as
    U(±1/√in_features): PyTorch's defaults.

    >>> import jitgrad as jg
    >>> fc = jg.nn.Linear(3, 2, generator=0)
    >>> fc(jg.ones((4, 3))).shape, fc.weight.shape
    ((4, 2), (2, 3))
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, *, dtype=None, generator=None
    ):
        super().__init__()
        d = param_dtype(dtype)
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = Parameter(creation.empty((self.out_features, self.in_features), d))
        if bias:
            self.bias = Parameter(creation.empty((self.out_features,), d))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        rng = init.as_generator(generator)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=rng)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound, generator=rng)

    def forward(self, x) -> Tensor:
        x = as_tensor(x)
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise ValueError(
                f"Linear({self.in_features}, {self.out_features}) got input of shape "
                f"{x.shape}: its last dimension must be {self.in_features}"
            )
        return linalg.linear(x, self.weight, self.bias)

    def get_config(self) -> dict:
        return {
            "in_features": self.in_features,
            "out_features": self.out_features,
            "bias": self.bias is not None,
            "dtype": self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table: row ``i`` of ``weight`` for each index ``i`` (weights start as
    N(0, 1)), with PyTorch's ``nn.Embedding`` arguments. Gradients of repeated indices add
    up. Row ``padding_idx``, if given, starts as zeros and gets no gradient, as in
    PyTorch: a padding token keeps its embedding.

    ``max_norm``, ``norm_type``, ``scale_grad_by_freq`` and ``sparse`` are those of
    ``F.embedding``: with ``max_norm`` each lookup first renormalises in place the rows
    it reads. ``_weight`` is the table itself (its memory, not a copy; ``padding_idx``'s
    row is left as it is), ``_freeze`` makes it need no gradient. ``device`` can only be
    the CPU.

    >>> import jitgrad as jg
    >>> emb = jg.nn.Embedding(10, 3, padding_idx=0, generator=0)
    >>> emb(jg.tensor([[1, 2], [1, 0]])).shape, emb.weight[0].tolist()
    ((2, 2, 3), [0.0, 0.0, 0.0])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
        *,
        generator=None,
    ):
        super().__init__()
        check_device(device)
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.padding_idx = padding_index(padding_idx, self.num_embeddings)
        renorm_options(max_norm, norm_type, type(self).__name__)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), bool(sparse)
        _set_table(self, _weight, dtype, generator)
        self.weight.requires_grad_(not _freeze)

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """A table over ``embeddings`` (a matrix, its memory shared as PyTorch's is: an
        update or a ``max_norm`` renormalisation shows in it), fixed unless ``freeze`` is
        False; the other arguments are the constructor's."""
        embeddings = _pretrained(embeddings)
        return cls(
            *embeddings.shape,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def reset_parameters(self, generator=None) -> None:
        init.normal_(self.weight, generator=generator)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, indices) -> Tensor:
        return F.embedding(
            indices,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def get_config(self) -> dict:
        return {
            "num_embeddings": self.num_embeddings,
            "embedding_dim": self.embedding_dim,
            "padding_idx": self.padding_idx,
            **_norm_config(self),
            "dtype": self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        # PyTorch's wording, so that a printed model reads the same in both.
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text


def _set_table(layer, weight, dtype, generator) -> None:
    """Give an embedding layer its weight: ``weight`` itself when given (checked against
    the layer's shape), else a new one that the layer's ``reset_parameters`` fills."""
    shape = (layer.num_embeddings, layer.embedding_dim)
    if weight is None:
        layer.weight = Parameter(creation.empty(shape, param_dtype(dtype)))
        layer.reset_parameters(generator)
        return
    weight = as_tensor(weight)
    if weight.shape != shape:
        raise ValueError(
            f"{type(layer).__name__}: _weight must have shape {shape} (num_embeddings, "
            f"embedding_dim), got {weight.shape}"
        )
    layer.weight = Parameter(weight)


def _pretrained(embeddings) -> Tensor:
    embeddings = as_tensor(embeddings)
    if embeddings.ndim != 2:
        raise ValueError(f"embeddings must be a matrix, got shape {embeddings.shape}")
    return embeddings.detach()


def _norm_config(layer) -> dict:
    max_norm = None if layer.max_norm is None else float(layer.max_norm)
    return {
        "max_norm": max_norm,
        "norm_type": float(layer.norm_type),
        "scale_grad_by_freq": layer.scale_grad_by_freq,
        "sparse": layer.sparse,
    }


class EmbeddingBag(Module):
    """The sum, mean or max of the embeddings of each bag of indices, as PyTorch's
    ``nn.EmbeddingBag`` (see ``F.embedding_bag``, whose options it takes):
    ``forward(input, offsets=None, per_sample_weights=None)`` takes (B, N) bags, or 1-d
    indices with the bags' start ``offsets``. Weights start as N(0, 1), row
    ``padding_idx`` as zeros, as ``Embedding``; ``_weight`` is the table itself.

    >>> import jitgrad as jg
    >>> bag = jg.nn.EmbeddingBag(10, 3, mode="sum", generator=0)
    >>> bag(jg.tensor([1, 2, 4, 5, 4]), jg.tensor([0, 2])).shape
    (2, 3)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight=None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device=None,
        dtype=None,
        *,
        generator=None,
    ):
        super().__init__()
        check_device(device)
        check_bag_mode(mode, scale_grad_by_freq, sparse, type(self).__name__)
        renorm_options(max_norm, norm_type, type(self).__name__)
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), bool(sparse)
        self.mode, self.include_last_offset = mode, bool(include_last_offset)
        self.padding_idx = padding_index(padding_idx, self.num_embeddings)
        _set_table(self, _weight, dtype, generator)

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """Bags over ``embeddings`` (a matrix, its memory shared as
        ``Embedding.from_pretrained`` shares it), fixed unless ``freeze`` is False; the
        other arguments are the constructor's."""
        embeddings = _pretrained(embeddings)
        bag = cls(
            *embeddings.shape,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            _weight=embeddings,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad_(not freeze)
        return bag

    reset_parameters = Embedding.reset_parameters

    def forward(self, input, offsets=None, per_sample_weights=None) -> Tensor:  # noqa: A002
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def get_config(self) -> dict:
        return {
            "num_embeddings": self.num_embeddings,
            "embedding_dim": self.embedding_dim,
            **_norm_config(self),
            "mode": self.mode,
            "include_last_offset": self.include_last_offset,
            "padding_idx": self.padding_idx,
            "dtype": self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        # PyTorch's wording, so that a printed model reads the same in both.
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text


class Bilinear(Module):
    """``y = x1 · weight · x2 + bias`` with weight of shape (out_features, in1_features,
    in2_features), as PyTorch's ``nn.Bilinear``; weight and bias start as
    U(±1/√in1_features).

    >>> import jitgrad as jg
    >>> layer = jg.nn.Bilinear(3, 4, 5, generator=0)
    >>> layer(jg.ones((2, 3)), jg.ones((2, 4))).shape, layer.weight.shape
    ((2, 5), (5, 3, 4))
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__()
        d = param_dtype(dtype)
        self.in1_features, self.in2_features = int(in1_features), int(in2_features)
        self.out_features = int(out_features)
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = Parameter(creation.empty(shape, d))
        if bias:
            self.bias = Parameter(creation.empty((self.out_features,), d))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        rng = init.as_generator(generator)
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0.0
        init.uniform_(self.weight, -bound, bound, generator=rng)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=rng)

    def forward(self, input1, input2) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def get_config(self) -> dict:
        return {
            "in1_features": self.in1_features,
            "in2_features": self.in2_features,
            "out_features": self.out_features,
            "bias": self.bias is not None,
            "dtype": self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Dropout(Module):
    """Zero each element with probability ``p`` while training (scaling the rest by
    1/(1-p)); the identity in eval mode. The layer keeps its generator, so successive
    masks differ but a seeded run repeats.

    >>> import jitgrad as jg
    >>> drop = jg.nn.Dropout(0.5, generator=0)
    >>> drop(jg.ones(4)).tolist(), drop.eval()(jg.ones(4)).tolist()
    ([2.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, *, generator=None):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = float(p)
        self.inplace = bool(inplace)
        self.generator = init.as_generator(generator)

    def forward(self, x) -> Tensor:
        return written_into(x, self._dropped, self.inplace)

    def _dropped(self, x) -> Tensor:
        return F.dropout(x, self.p, self.training, generator=self.generator)

    def get_config(self) -> dict:
        return {"p": self.p, **({"inplace": True} if self.inplace else {})}

    def extra_repr(self) -> str:
        return f"p={self.p}" + (", inplace=True" if self.inplace else "")


class Dropout1d(Dropout):
    """``Dropout`` of whole channels of (N, C, L) or (C, L) inputs (``F.dropout1d``)."""

    def _dropped(self, x) -> Tensor:
        return F.dropout1d(x, self.p, self.training, generator=self.generator)


class Dropout2d(Dropout):
    """``Dropout`` of whole channels of (N, C, H, W) or (C, H, W) inputs."""

    def _dropped(self, x) -> Tensor:
        return F.dropout2d(x, self.p, self.training, generator=self.generator)


class PixelShuffle(Module):
    """``F.pixel_shuffle``: (N, C·r², H, W) → (N, C, H·r, W·r)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = int(upscale_factor)

    def forward(self, x) -> Tensor:
        return F.pixel_shuffle(x, self.upscale_factor)

    def get_config(self) -> dict:
        return {"upscale_factor": self.upscale_factor}

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``F.pixel_unshuffle``: (N, C, H·r, W·r) → (N, C·r², H, W)."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = int(downscale_factor)

    def forward(self, x) -> Tensor:
        return F.pixel_unshuffle(x, self.downscale_factor)

    def get_config(self) -> dict:
        return {"downscale_factor": self.downscale_factor}

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    """``F.interpolate`` as a layer: to ``size`` or by ``scale_factor``."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
        super().__init__()
        self.size, self.scale_factor = _tuple_if_listed(size), _tuple_if_listed(scale_factor)
        self.mode, self.align_corners = mode, align_corners

    def forward(self, x) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners)

    def get_config(self) -> dict:
        return {
            "size": config_value(self.size),
            "scale_factor": config_value(self.scale_factor),
            "mode": self.mode,
            "align_corners": self.align_corners,
        }

    def extra_repr(self) -> str:
        if self.size is not None:
            return f"size={self.size}, mode={self.mode!r}"
        return f"scale_factor={self.scale_factor}, mode={self.mode!r}"


def _tuple_if_listed(value):
    return tuple(value) if isinstance(value, (list, tuple)) else value


class Flatten(Module):
    """Merge dimensions ``start_dim..end_dim`` into one (by default all but the batch).

    >>> import jitgrad as jg
    >>> jg.nn.Flatten()(jg.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, x) -> Tensor:
        return as_tensor(x).flatten(self.start_dim, self.end_dim)

    def get_config(self) -> dict:
        return {"start_dim": self.start_dim, "end_dim": self.end_dim}

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of ``Flatten``).

    >>> import jitgrad as jg
    >>> jg.nn.Unflatten(1, (3, 4))(jg.zeros((2, 12))).shape
    (2, 3, 4)
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = int(dim), tuple(int(n) for n in unflattened_size)

    def forward(self, x) -> Tensor:
        return as_tensor(x).unflatten(self.dim, self.unflattened_size)

    def get_config(self) -> dict:
        return {"dim": self.dim, "unflattened_size": list(self.unflattened_size)}

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class CosineSimilarity(Module):
    """``F.cosine_similarity`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = int(dim), float(eps)

    def forward(self, x1, x2) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)

    def get_config(self) -> dict:
        return {"dim": self.dim, "eps": self.eps}


class PairwiseDistance(Module):
    """``F.pairwise_distance``: the ``p``-norm of x1 - x2 + eps along the last dimension."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = float(p), float(eps), bool(keepdim)

    def forward(self, x1, x2) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

    def get_config(self) -> dict:
        return {"p": self.norm, "eps": self.eps, "keepdim": self.keepdim}


class Identity(Module):
    """Returns its input (a placeholder that keeps a Sequential's indices stable)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x

    def get_config(self) -> dict:
        return {}


__all__ = [
    "Linear",
    "Bilinear",
    "Embedding",
    "EmbeddingBag",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "Upsample",
    "Flatten",
    "Unflatten",
    "Identity",
    "CosineSimilarity",
    "PairwiseDistance",
]
