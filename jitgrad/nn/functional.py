"""The functional forms of jitgrad.nn in PyTorch's spelling: ``F.softmax(x, dim=1)``,
``F.cross_entropy(logits, labels)``, ``F.batch_norm``, ``F.pad``, ``F.conv2d``.

Activations live in ``activation_functions.py``, losses in ``loss_functions.py``,
normalisation in ``norm_functions.py``, padding and resampling in
``shaping_functions.py``, embedding lookups in ``embedding_functions.py``, attention in
``attention.py``, convolution and pooling in ``jitgrad/ops``; this module gathers them
under one name.
"""

from __future__ import annotations

import numpy as np

from ..autograd.tensor import Tensor, as_tensor
from ..ops.convolution import conv1d, conv2d, conv_transpose2d, fold, unfold
from ..ops.linalg import linear
from ..ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ..ops.unary import gelu, leaky_relu, relu, sigmoid, silu, tanh
from ..recording import compute
from .activation_functions import (
    elu,
    glu,
    hardswish,
    hardtanh,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu6,
    softmax,
    softmin,
    softplus,
    softsign,
)
from .attention import scaled_dot_product_attention
from .embedding_functions import embedding, embedding_bag
from .init import as_generator
from .loss_functions import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .norm_functions import (
    batch_norm,
    cosine_similarity,
    group_norm,
    instance_norm,
    layer_norm,
    normalize,
    pairwise_distance,
    rms_norm,
)
from .shaping_functions import interpolate, one_hot, pad


def dropout(x, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Zero each element with probability ``p`` and scale the kept ones by 1 / (1 - p), so
    the expectation is unchanged; the identity when not training. ``generator`` is a
    ``jg.random.Generator`` or an int seed; None draws from the default generator, which
    ``jg.manual_seed`` restarts.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.dropout(jg.ones(6), 0.5, generator=jg.random.default_rng(0)).tolist()
    [2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    """
    return _dropped(as_tensor(x), p, training, generator, None)


def dropout1d(x, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Zero whole channels: each (sample, channel) row of an (N, C, L) or (C, L) input
    with probability ``p``, the kept ones scaled by 1 / (1 - p)."""
    return _dropped(as_tensor(x), p, training, generator, 1)


def dropout2d(x, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Zero whole channels: each (sample, channel) plane of an (N, C, H, W) or (C, H, W)
    input with probability ``p``, the kept ones scaled by 1 / (1 - p)."""
    return _dropped(as_tensor(x), p, training, generator, 2)


def _dropped(x: Tensor, p: float, training: bool, generator, spatial: int | None) -> Tensor:
    """``x`` times a mask of kept (1 / (1 - p)) and dropped (0) entries, one draw per
    element, or per channel over the last ``spatial`` dimensions."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    shape = x.shape
    if spatial is not None:
        if x.ndim not in (spatial + 1, spatial + 2):
            layouts = {1: "(N, C, L) or (C, L)", 2: "(N, C, H, W) or (C, H, W)"}[spatial]
            raise ValueError(f"dropout{spatial}d takes {layouts} inputs, got shape {shape}")
        shape = shape[: x.ndim - spatial] + (1,) * spatial
    if not training or p == 0:
        return x
    generator = as_generator(generator)  # (None: the one jg.manual_seed restarts)
    dtype = x.dtype.numpy if x.dtype.is_floating_point else np.float64
    if p == 1:
        mask = np.zeros(shape, dtype)
    else:
        draws = generator.random(shape).numpy()
        mask = compute(lambda r: ((r >= p) / (1 - p)).astype(dtype), draws)
    return x * as_tensor(mask)


def pixel_shuffle(input, upscale_factor: int) -> Tensor:  # noqa: A002
    """(..., C·r², H, W) → (..., C, H·r, W·r): each group of r² channels spread over an
    r×r block of pixels."""
    x, r = as_tensor(input), int(upscale_factor)
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: {c} channels are not a multiple of {r}² = {r * r}")
    n = len(lead)
    blocks = x.reshape(*lead, c // (r * r), r, r, h, w)
    moved = blocks.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return moved.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:  # noqa: A002
    """(..., C, H·r, W·r) → (..., C·r², H, W), the inverse of ``pixel_shuffle``."""
    x, r = as_tensor(input), int(downscale_factor)
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: {h}×{w} pixels do not divide into {r}×{r} blocks")
    n = len(lead)
    blocks = x.reshape(*lead, c, h // r, r, w // r, r)
    moved = blocks.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return moved.reshape(*lead, c * r * r, h // r, w // r)


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """``y[..., o] = input1 · weight[o] · input2 + bias[o]``, as PyTorch's
    ``F.bilinear``: ``weight`` (out, in1, in2), inputs (..., in1) and (..., in2).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.bilinear(jg.tensor([[1.0, 2.0]]), jg.tensor([[3.0]]), jg.ones((1, 2, 1))).tolist()
    [[9.0]]
    """
    x1, x2, weight = as_tensor(input1), as_tensor(input2), as_tensor(weight)
    if weight.ndim != 3:
        raise ValueError(f"bilinear: weight must be 3-d (out, in1, in2), got shape {weight.shape}")
    out, in1, in2 = weight.shape
    if x1.shape[-1:] != (in1,) or x2.shape[-1:] != (in2,) or x1.shape[:-1] != x2.shape[:-1]:
        raise ValueError(
            f"bilinear: inputs of shapes {x1.shape} and {x2.shape} must be (..., {in1}) and "
            f"(..., {in2}) with the same leading dimensions, for weight of shape {weight.shape}"
        )
    # weight·input2 for every (out, in1) pair as one matrix product, then the dot with input1.
    mixed = linear(x2, weight.reshape(out * in1, in2)).reshape(*x2.shape[:-1], out, in1)
    y = (mixed * x1.reshape(*x1.shape[:-1], 1, in1)).sum(-1)
    return y if bias is None else y + bias


__all__ = [
    "linear",
    "dropout",
    "dropout1d",
    "dropout2d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "embedding",
    "embedding_bag",
    "bilinear",
    # activations
    "softmax",
    "log_softmax",
    "relu",
    "relu6",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "leaky_relu",
    "softplus",
    "mish",
    "elu",
    "hardswish",
    "logsigmoid",
    "softmin",
    "hardtanh",
    "softsign",
    "glu",
    "prelu",
    # losses
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "cosine_embedding_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    # normalisation
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    # shaping
    "one_hot",
    "pad",
    "interpolate",
    # convolution and pooling
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "unfold",
    "fold",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    # attention
    "scaled_dot_product_attention",
]
