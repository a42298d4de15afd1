"""Normalisation in PyTorch's functional spelling: ``batch_norm``, ``instance_norm``,
``layer_norm``, ``group_norm``, ``rms_norm`` and ``normalize`` (unit p-norm vectors).

All are compositions of differentiable ops (mean, subtract, multiply, sqrt), so their
gradients, of any order, come from those ops'; the normalisation layers call these.
"""

from __future__ import annotations

import math

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce, unary
from ..ops.elementwise import maximum, where
from ..strided import layout


def normalized(x: Tensor, axes: tuple[int, ...], eps: float):
    """(x - mean) / sqrt(var + eps) over ``axes`` with the biased variance; also returns
    the mean and variance (keepdims) for running statistics."""
    mean = reduce.mean(x, axes, keepdims=True)
    centered = x - mean
    var = reduce.mean(centered * centered, axes, keepdims=True)
    return centered / unary.sqrt(var + eps), mean, var


def _checked(name: str, what: str, t, shape: tuple, x: Tensor):
    """``t`` as a tensor of ``shape`` (one entry per channel, or the normalised shape), or
    None."""
    if t is None:
        return None
    t = as_tensor(t)
    if t.shape != shape:
        raise ValueError(
            f"{name}: {what} of shape {t.shape} should have shape {shape} for input of "
            f"shape {x.shape}"
        )
    return t


def _per_channel_arguments(name: str, x: Tensor, running_mean, running_var, weight, bias):
    """A per-channel norm's running statistics, weight and bias, each checked to be one
    entry per channel of ``x`` (axis 1), or None."""
    shape = (x.shape[1],)
    return (
        _checked(name, "running_mean", running_mean, shape, x),
        _checked(name, "running_var", running_var, shape, x),
        _checked(name, "weight", weight, shape, x),
        _checked(name, "bias", bias, shape, x),
    )


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    """(1, C, 1, ...): the shape in which a per-channel (C,) tensor broadcasts against
    ``x``."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _scale_and_shift(y: Tensor, weight, bias, shape: tuple) -> Tensor:
    """y·weight + bias, each (when given) reshaped to ``shape`` to broadcast."""
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def batch_norm(
    input,  # noqa: A002  PyTorch's name
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training: bool = False,
    momentum=0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (axis 1) of an (N, C, ...) input over the batch and the
    other axes, then scale by ``weight`` and shift by ``bias`` (each (C,) or None).

    Training: the batch's statistics are used, and ``running_mean`` / ``running_var``
    (when given) updated in place as ``running = (1 - momentum)·running +
    momentum·batch`` with the unbiased batch variance; ``momentum`` is a number or a 0-d
    tensor. Otherwise the running statistics are used.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> mean, var = jg.zeros(2), jg.ones(2)
    >>> y = F.batch_norm(jg.tensor([[0.0, 10.0], [2.0, 30.0]]), mean, var, training=True)
    >>> y.round(3).tolist(), mean.tolist(), var.tolist()
    ([[-1.0, -1.0], [1.0, 1.0]], [0.1, 2.0], [1.1, 20.9])
    """
    name = "batch_norm"
    x = as_tensor(input)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: input must be (N, C, ...), got shape {x.shape}")
    channels = x.shape[1]
    running_mean, running_var, weight, bias = _per_channel_arguments(
        name, x, running_mean, running_var, weight, bias
    )
    channel = _channel_shape(x)
    if training:
        n = x.numel() // channels if channels else 0
        # Batch statistics of one value normalise everything to 0: PyTorch refuses them.
        if n <= 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when using batch "
                f"statistics (training, or no running statistics), got input of shape "
                f"{x.shape}"
            )
        if momentum is None and (running_mean is not None or running_var is not None):
            raise ValueError(
                "batch_norm: momentum must be a number or a 0-d tensor to update running "
                "statistics, got None"
            )
        y, mean, var = normalized(x, (0, *range(2, x.ndim)), eps)
        _update_running(running_mean, mean, momentum, 1)
        _update_running(running_var, var, momentum, n / (n - 1))
    else:
        y = _by_running_stats(name, x, running_mean, running_var, eps, "training=True")
    return _scale_and_shift(y, weight, bias, channel)


def _by_running_stats(name: str, x: Tensor, running_mean, running_var, eps, hint: str):
    """``x`` normalised per channel (axis 1) by the running statistics; ``hint`` names the
    argument that would use the input's statistics instead."""
    if running_mean is None or running_var is None:
        raise ValueError(
            f"{name}: running_mean and running_var are required when not using the input's "
            f"statistics (pass {hint} to normalise by them)"
        )
    channel = _channel_shape(x)
    return (x - running_mean.reshape(channel)) / unary.sqrt(running_var.reshape(channel) + eps)


def instance_norm(
    input,  # noqa: A002  PyTorch's name
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats: bool = True,
    momentum=0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of an (N, C, ...) input over its spatial
    axes, then scale by ``weight`` and shift by ``bias`` (each (C,) or None).

    With ``use_input_stats`` the sample's own statistics are used, and ``running_mean``
    / ``running_var`` (when given) updated in place by their averages over the batch
    (the unbiased variance), as ``batch_norm`` updates them. Otherwise the running
    statistics are used.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.instance_norm(jg.tensor([[[1.0, 3.0], [0.0, 10.0]]])).round(3).tolist()
    [[[-1.0, 1.0], [-1.0, 1.0]]]
    """
    name = "instance_norm"
    x = as_tensor(input)
    if x.ndim < 3:
        raise ValueError(
            f"instance_norm: input must be (N, C, ...) with at least one spatial dimension, "
            f"got shape {x.shape}"
        )
    running_mean, running_var, weight, bias = _per_channel_arguments(
        name, x, running_mean, running_var, weight, bias
    )
    channel = _channel_shape(x)
    if not use_input_stats:
        y = _by_running_stats(name, x, running_mean, running_var, eps, "use_input_stats=True")
        return _scale_and_shift(y, weight, bias, channel)
    n = math.prod(x.shape[2:])
    # A sample's statistics over one value normalise it to 0: PyTorch refuses them.
    if n <= 1:
        raise ValueError(
            f"instance_norm: expected more than 1 spatial element when using the input's "
            f"statistics, got input of shape {x.shape}"
        )
    y, mean, var = normalized(x, tuple(range(2, x.ndim)), eps)
    if running_mean is not None or running_var is not None:
        _update_running(running_mean, reduce.mean(mean.detach(), 0), momentum, 1)
        _update_running(running_var, reduce.mean(var.detach(), 0), momentum, n / (n - 1))
    return _scale_and_shift(y, weight, bias, channel)


def _update_running(running, batch: Tensor, momentum, correction: float) -> None:
    if running is None:
        return
    with no_grad():
        value = batch.detach().reshape(running.shape)
        if correction != 1:
            value = value * correction
        running.mul_(1 - momentum).add_(value * momentum)


def as_shape(normalized_shape) -> tuple[int, ...]:
    """A normalised shape given as one int or a sequence of them, as a tuple."""
    shape = (normalized_shape,) if hasattr(normalized_shape, "__index__") else normalized_shape
    return tuple(int(n) for n in shape)


def _check_trailing(name: str, x: Tensor, normalized_shape) -> tuple[int, ...]:
    """``normalized_shape`` as a tuple, checked to be the trailing dimensions of ``x``."""
    shape = as_shape(normalized_shape)
    k = len(shape)
    if x.ndim < k or x.shape[x.ndim - k :] != shape:
        raise ValueError(
            f"{name}: input of shape {x.shape} does not end with normalized_shape {shape}: "
            f"its last {k} dimension(s) must be {shape}"
        )
    return shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Normalise over the trailing ``normalized_shape`` dimensions of each sample, then
    scale by ``weight`` and shift by ``bias`` (each of ``normalized_shape`` or None).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> [round(v, 4) for v in F.layer_norm(jg.tensor([1.0, 3.0]), (2,)).tolist()]
    [-1.0, 1.0]
    """
    x = as_tensor(input)
    shape = _check_trailing("layer_norm", x, normalized_shape)
    y, _, _ = normalized(x, tuple(range(x.ndim - len(shape), x.ndim)), eps)
    weight = _checked("layer_norm", "weight", weight, shape, x)
    return _scale_and_shift(y, weight, _checked("layer_norm", "bias", bias, shape, x), shape)


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None) -> Tensor:  # noqa: A002
    """x / sqrt(mean(x²) + eps) over the trailing ``normalized_shape`` dimensions, scaled
    by ``weight``; ``eps=None`` is the machine epsilon of the input's dtype (PyTorch's).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> [round(v, 6) for v in F.rms_norm(jg.tensor([3.0, 4.0]), (2,)).tolist()]
    [0.848528, 1.131371]
    """
    x = as_tensor(input)
    shape = _check_trailing("rms_norm", x, normalized_shape)
    if eps is None:
        eps = float(dtypes.finfo(x.dtype).eps) if x.dtype.is_floating_point else 0.0
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / unary.sqrt(reduce.mean(x * x, axes, keepdims=True) + eps)
    return _scale_and_shift(y, _checked("rms_norm", "weight", weight, shape, x), None, shape)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:  # noqa: A002
    """Normalise each sample of an (N, C, ...) input over groups of ``C / num_groups``
    channels (and the other axes), then scale and shift each channel by ``weight`` and
    ``bias`` (each (C,) or None).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> y = F.group_norm(jg.tensor([[1.0, 3.0, 0.0, 10.0]]), 2)
    >>> [round(v, 4) for v in y.tolist()[0]]
    [-1.0, 1.0, -1.0, 1.0]
    """
    x = as_tensor(input)
    if x.ndim < 2:
        raise ValueError(f"group_norm: input must be (N, C, ...), got shape {x.shape}")
    channels = x.shape[1]
    groups = int(num_groups)
    if groups <= 0 or channels % groups:
        raise ValueError(
            f"group_norm: the number of channels {channels} must be divisible by "
            f"num_groups={num_groups}"
        )
    grouped = x.reshape(x.shape[0], groups, -1)
    y, _, _ = normalized(grouped, (2,), eps)
    weight = _checked("group_norm", "weight", weight, (channels,), x)
    bias = _checked("group_norm", "bias", bias, (channels,), x)
    channel = _channel_shape(x)
    return _scale_and_shift(y.reshape(x.shape), weight, bias, channel)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:  # noqa: A002
    """x / max(‖x‖_p, eps) along ``dim``: unit vectors, and zero vectors left at zero.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.normalize(jg.tensor([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    x = as_tensor(input)
    return x / maximum(_norm(x, p, dim, True, "normalize"), eps)


def _norm(x: Tensor, p, dim: int, keepdims: bool, who: str) -> Tensor:
    """The ``p``-norm of ``x`` along ``dim``, with a zero gradient where it is 0."""
    axis = layout.normalize_dim(dim, x.ndim)
    p = float(p)
    if p == math.inf:
        return reduce.max(unary.abs(x), axis, keepdims=keepdims)
    if not p > 0:
        raise ValueError(f"{who}: p must be positive (or inf), got {p}")
    if p == 2:
        powered = x * x
    elif p < 1:  # |x|**p's derivative is infinite at 0: zero entries are taken at 1, then 0
        nonzero = x != 0
        powered = where(nonzero, where(nonzero, unary.abs(x), 1) ** p, 0)
    else:
        powered = unary.abs(x) ** p
    total = reduce.sum(powered, axis, keepdims=keepdims)
    # The root of a zero sum is taken at 1 instead (and its result replaced by 0): the
    # root's derivative at 0 is infinite, and eps gives that entry a zero gradient.
    positive = total > 0
    safe = where(positive, total, 1)
    root = unary.sqrt(safe) if p == 2 else safe ** (1 / p)
    return where(positive, root, 0)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1·x2 / (max(‖x1‖, eps)·max(‖x2‖, eps)) along ``dim``, the two broadcast.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.cosine_similarity(jg.tensor([[3.0, 4.0]]), jg.tensor([[1.0, 0.0]])).tolist()
    [0.6]
    """
    x1, x2 = as_tensor(x1), as_tensor(x2)
    dot = reduce.sum(x1 * x2, layout.normalize_dim(dim, max(x1.ndim, x2.ndim)))
    n1 = maximum(_norm(x1, 2, dim, False, "cosine_similarity"), eps)
    return dot / (n1 * maximum(_norm(x2, 2, dim, False, "cosine_similarity"), eps))


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """‖x1 - x2 + eps‖_p along the last dimension, the two broadcast."""
    difference = as_tensor(x1) - as_tensor(x2) + eps
    return _norm(difference, p, -1, keepdim, "pairwise_distance")


__all__ = [
    "batch_norm",
    "instance_norm",
    "layer_norm",
    "group_norm",
    "rms_norm",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
]
