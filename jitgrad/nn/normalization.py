"""Normalisation layers: LayerNorm, RMSNorm, GroupNorm, BatchNorm1d/2d and
InstanceNorm1d/2d normalise their input, then scale and shift it by learned ``weight``
and ``bias``.

Each calls its function in ``norm_functions.py``, composed of differentiable ops (mean,
subtract, multiply, sqrt), so their gradients, of any order, come from those ops'.
"""

from __future__ import annotations

import warnings

from .. import creation
from ..autograd.tensor import Tensor, as_tensor
from . import norm_functions
from ._common import param_dtype
from .module import Module, Parameter


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions of each sample.

    >>> import jitgrad as jg
    >>> ln = jg.nn.LayerNorm(4)
    >>> y = ln(jg.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> round(y.mean().item(), 6), round(y.var().item(), 4)
    (0.0, 1.0)
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        *,
        dtype=None,
    ):
        super().__init__()
        self.normalized_shape = norm_functions.as_shape(normalized_shape)
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        d = param_dtype(dtype)
        if self.elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, d))
            if bias:
                self.bias = Parameter(creation.zeros(self.normalized_shape, d))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self._dtype = d.name

    def forward(self, x) -> Tensor:
        return norm_functions.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def get_config(self) -> dict:
        dtype = self._dtype if self.weight is None else self.weight.dtype.name
        return {
            "normalized_shape": list(self.normalized_shape),
            "eps": self.eps,
            "elementwise_affine": self.elementwise_affine,
            "bias": self.bias is not None,
            "dtype": dtype,
        }

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class RMSNorm(Module):
    """Divide by the root mean square over the trailing ``normalized_shape`` dimensions
    of each sample and scale by ``weight``; ``eps=None`` is the machine epsilon of the
    input's dtype.

    >>> import jitgrad as jg
    >>> y = jg.nn.RMSNorm(2)(jg.tensor([[3.0, 4.0]]))
    >>> [round(v, 6) for v in y.tolist()[0]]
    [0.848528, 1.131371]
    """

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        elementwise_affine: bool = True,
        *,
        dtype=None,
    ):
        super().__init__()
        self.normalized_shape = norm_functions.as_shape(normalized_shape)
        self.eps = None if eps is None else float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        d = param_dtype(dtype)
        if self.elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, d))
        else:
            self.register_parameter("weight", None)
        self._dtype = d.name

    def forward(self, x) -> Tensor:
        return norm_functions.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def get_config(self) -> dict:
        return {
            "normalized_shape": list(self.normalized_shape),
            "eps": self.eps,
            "elementwise_affine": self.elementwise_affine,
            "dtype": self._dtype if self.weight is None else self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class GroupNorm(Module):
    """Normalise each sample of an (N, C, ...) input over ``num_groups`` groups of
    channels, then scale and shift each channel.

    >>> import jitgrad as jg
    >>> y = jg.nn.GroupNorm(2, 4)(jg.tensor([[1.0, 3.0, 0.0, 10.0]]))
    >>> [round(v, 4) for v in y.tolist()[0]]
    [-1.0, 1.0, -1.0, 1.0]
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        dtype=None,
    ):
        super().__init__()
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        if self.num_groups <= 0 or self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNorm: num_channels={num_channels} must be divisible by "
                f"num_groups={num_groups}"
            )
        self.eps = float(eps)
        self.affine = bool(affine)
        d = param_dtype(dtype)
        if self.affine:
            self.weight = Parameter(creation.ones((self.num_channels,), d))
            self.bias = Parameter(creation.zeros((self.num_channels,), d))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self._dtype = d.name

    def forward(self, x) -> Tensor:
        x = as_tensor(x)
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm({self.num_groups}, {self.num_channels}) expects input of shape "
                f"(N, {self.num_channels}, ...), got {x.shape}"
            )
        return norm_functions.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def get_config(self) -> dict:
        return {
            "num_groups": self.num_groups,
            "num_channels": self.num_channels,
            "eps": self.eps,
            "affine": self.affine,
            "dtype": self._dtype if self.weight is None else self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _NormBase(Module):
    """What the per-channel normalisations share: ``num_features`` channels, an optional
    per-channel ``weight`` and ``bias`` (``affine``; ``bias=False`` keeps the weight
    alone, as PyTorch's), running statistics
    (``track_running_stats``), their config and repr."""

    _input_shapes: dict[int, str]  # accepted ndim -> the shape named in errors, C for channels

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
        dtype=None,
    ):
        super().__init__()
        d = param_dtype(dtype)
        self.num_features = int(num_features)
        self.eps = float(eps)
        self.momentum = None if momentum is None else float(momentum)
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        if self.affine:
            self.weight = Parameter(creation.ones((self.num_features,), d))
        else:
            self.register_parameter("weight", None)
        if self.affine and bias:
            self.bias = Parameter(creation.zeros((self.num_features,), d))
        else:
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", creation.zeros((self.num_features,), d))
            self.register_buffer("running_var", creation.ones((self.num_features,), d))
            self.register_buffer("num_batches_tracked", creation.zeros((), "int64"))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self._dtype = d.name

    def _refuse_shape(self, x: Tensor) -> None:
        shapes = " or ".join(
            s.replace("C", str(self.num_features)) for s in self._input_shapes.values()
        )
        raise ValueError(
            f"{type(self).__name__}({self.num_features}) expects input of shape {shapes}, "
            f"got {x.shape}"
        )

    def get_config(self) -> dict:
        return {
            "num_features": self.num_features,
            "eps": self.eps,
            "momentum": self.momentum,
            "affine": self.affine,
            "bias": self.bias is not None,
            "track_running_stats": self.track_running_stats,
            "dtype": self._param_dtype(),
        }

    def _param_dtype(self) -> str:
        t = self.weight if self.weight is not None else self.running_mean
        return self._dtype if t is None else t.dtype.name

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    """Normalise each of ``num_features`` channels (axis 1) over the batch and the other
    axes.

    Training: batch statistics are used, and the running ones updated as
    ``running = (1 - momentum)·running + momentum·batch`` (the unbiased variance; with
    ``momentum=None`` a cumulative average). Eval: the running statistics are used.
    Without ``track_running_stats`` batch statistics are used in both modes.
    """

    def forward(self, x) -> Tensor:
        x = as_tensor(x)
        if x.ndim not in self._input_shapes or x.shape[1] != self.num_features:
            self._refuse_shape(x)
        updating = self.training and self.track_running_stats
        factor = self.momentum
        if updating and factor is None:  # cumulative moving average
            # A tensor, not .item(): a jitted step reads the count on every call.
            count = self.num_batches_tracked + 1
            factor = 1.0 / count.astype(self.running_mean.dtype)
        y = norm_functions.batch_norm(
            x,
            self.running_mean,  # (None without track_running_stats)
            self.running_var,
            self.weight,
            self.bias,
            training=self.training or not self.track_running_stats,
            momentum=factor,
            eps=self.eps,
        )
        if updating:  # (after batch_norm: a refused input leaves the count as it was)
            self.num_batches_tracked.add_(1)
        return y


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of an (N, C) or (N, C, L) input (see ``_BatchNorm``).

    >>> import jitgrad as jg
    >>> bn = jg.nn.BatchNorm1d(2)
    >>> _ = bn(jg.tensor([[0.0, 10.0], [2.0, 30.0]]))
    >>> bn.running_mean.tolist(), bn.running_var.tolist(), bn.num_batches_tracked.item()
    ([0.1, 2.0], [1.1, 20.9], 1)
    """

    _input_shapes = {2: "(N, C)", 3: "(N, C, L)"}


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of each channel of an (N, C, H, W) input (see ``_BatchNorm``).

    >>> import jitgrad as jg
    >>> bn = jg.nn.BatchNorm2d(1)
    >>> _ = bn(jg.tensor([[[[0.0, 2.0]]], [[[4.0, 6.0]]]]))
    >>> [round(v, 6) for v in bn.running_mean.tolist() + bn.running_var.tolist()]
    [0.3, 1.566667]
    """

    _input_shapes = {4: "(N, C, H, W)"}


class _InstanceNorm(_NormBase):
    """Normalise each channel of each sample over its spatial axes, as PyTorch's
    ``nn.InstanceNorm*d``: no affine parameters and no running statistics by default.

    With ``track_running_stats`` the running statistics are updated while training (by
    the batch's average of the samples' statistics; ``momentum=None`` updates nothing,
    as PyTorch's) and used in eval mode. ``num_batches_tracked`` is kept in the state for
    PyTorch's state_dict keys and, as there, not counted.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        *,
        bias: bool = True,
        dtype=None,
    ):
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, bias=bias, dtype=dtype
        )

    def forward(self, x) -> Tensor:
        x = as_tensor(x)
        if x.ndim not in self._input_shapes:
            self._refuse_shape(x)
        unbatched = x.ndim == min(self._input_shapes)
        if unbatched:
            x = x.reshape(1, *x.shape)
        if x.shape[1] != self.num_features:
            if self.affine or self.track_running_stats:
                self._refuse_shape(x)
            # Without per-channel state any channel count normalises: PyTorch only warns.
            warnings.warn(
                f"{type(self).__name__}({self.num_features}) got input of shape {x.shape} "
                f"with {x.shape[1]} channels; without affine parameters it normalises them "
                "all the same",
                stacklevel=2,
            )
        y = norm_functions.instance_norm(
            x,
            self.running_mean,  # (None without track_running_stats)
            self.running_var,
            self.weight,
            self.bias,
            use_input_stats=self.training or not self.track_running_stats,
            momentum=0.0 if self.momentum is None else self.momentum,
            eps=self.eps,
        )
        return y.reshape(y.shape[1:]) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of an (N, C, L) or (C, L) input (see ``_InstanceNorm``).

    >>> import jitgrad as jg
    >>> y = jg.nn.InstanceNorm1d(2)(jg.tensor([[[1.0, 3.0], [0.0, 10.0]]]))
    >>> y.round(3).tolist()
    [[[-1.0, 1.0], [-1.0, 1.0]]]
    """

    _input_shapes = {2: "(C, L)", 3: "(N, C, L)"}


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of an (N, C, H, W) or (C, H, W) input (see
    ``_InstanceNorm``).

    >>> import jitgrad as jg
    >>> jg.nn.InstanceNorm2d(3, affine=True)(jg.ones((2, 3, 4, 4))).shape
    (2, 3, 4, 4)
    """

    _input_shapes = {3: "(C, H, W)", 4: "(N, C, H, W)"}


__all__ = [
    "LayerNorm",
    "RMSNorm",
    "GroupNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "InstanceNorm1d",
    "InstanceNorm2d",
]
