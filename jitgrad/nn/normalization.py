"""LayerNorm and BatchNorm1d: normalise to zero mean and unit variance, then scale and
shift by learned ``weight`` and ``bias``.

Both are composed of differentiable ops (mean, subtract, multiply, sqrt), so their
gradients, of any order, come from those ops'.
"""

from __future__ import annotations

from .. import creation
from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce, unary
from ._common import param_dtype
from .module import Module, Parameter


def _normalize(x: Tensor, axes: tuple[int, ...], eps: float):
    """(x - mean) / sqrt(var + eps) over ``axes`` with the biased variance; also returns
    the mean and variance (keepdims) for running statistics."""
    mean = reduce.mean(x, axes, keepdims=True)
    centered = x - mean
    var = reduce.mean(centered * centered, axes, keepdims=True)
    return centered / unary.sqrt(var + eps), mean, var


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
        shape = (normalized_shape,) if hasattr(normalized_shape, "__index__") else normalized_shape
        self.normalized_shape = tuple(int(n) for n in shape)
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
        x = as_tensor(x)
        k = len(self.normalized_shape)
        if x.shape[x.ndim - k :] != self.normalized_shape or x.ndim < k:
            raise ValueError(
                f"LayerNorm({self.normalized_shape}) got input of shape {x.shape}: its last "
                f"{k} dimension(s) must be {self.normalized_shape}"
            )
        y, _, _ = _normalize(x, tuple(range(x.ndim - k, x.ndim)), self.eps)
        if self.weight is not None:
            y = y * self.weight
        if self.bias is not None:
            y = y + self.bias
        return y

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


class BatchNorm1d(Module):
    """Normalise each of ``num_features`` channels of an (N, C) or (N, C, L) input.

    Training: batch statistics are used, and the running ones updated as
    ``running = (1 - momentum)·running + momentum·batch`` (the unbiased variance; with
    ``momentum=None`` a cumulative average). Eval: the running statistics are used.
    Without ``track_running_stats`` batch statistics are used in both modes.

    >>> import jitgrad as jg
    >>> bn = jg.nn.BatchNorm1d(2)
    >>> _ = bn(jg.tensor([[0.0, 10.0], [2.0, 30.0]]))
    >>> bn.running_mean.tolist(), bn.running_var.tolist(), bn.num_batches_tracked.item()
    ([0.1, 2.0], [1.1, 20.9], 1)
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
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
            self.bias = Parameter(creation.zeros((self.num_features,), d))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", creation.zeros((self.num_features,), d))
            self.register_buffer("running_var", creation.ones((self.num_features,), d))
            self.register_buffer("num_batches_tracked", creation.zeros((), "int64"))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self._dtype = d.name

    def forward(self, x) -> Tensor:
        x = as_tensor(x)
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            raise ValueError(
                f"BatchNorm1d({self.num_features}) expects input of shape (N, "
                f"{self.num_features}) or (N, {self.num_features}, L), got {x.shape}"
            )
        axes = (0,) if x.ndim == 2 else (0, 2)
        channel = (1, self.num_features) + (() if x.ndim == 2 else (1,))
        use_batch = self.training or not self.track_running_stats
        if use_batch:
            n = x.numel() // self.num_features
            # Batch statistics of one value normalise everything to 0, in eval mode too
            # (no running statistics to use instead): PyTorch refuses both.
            if n <= 1:
                raise ValueError(
                    f"BatchNorm1d needs more than 1 value per channel when it uses batch "
                    f"statistics (training, or track_running_stats=False), got input of "
                    f"shape {x.shape}"
                )
            y, mean, var = _normalize(x, axes, self.eps)
            if self.training and self.track_running_stats:
                self._update_running(mean, var, n)
        else:
            mean = self.running_mean.reshape(channel)
            var = self.running_var.reshape(channel)
            y = (x - mean) / unary.sqrt(var + self.eps)
        if self.affine:
            y = y * self.weight.reshape(channel) + self.bias.reshape(channel)
        return y

    def _update_running(self, mean: Tensor, var: Tensor, n: int) -> None:
        with no_grad():
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                # A tensor, not .item(): a jitted step reads the count on every call.
                count = self.num_batches_tracked.astype(self.running_mean.dtype)
                factor = 1.0 / count
            else:
                factor = self.momentum
            unbiased = var.detach().reshape(self.num_features) * (n / (n - 1))
            batch_mean = mean.detach().reshape(self.num_features)
            self.running_mean.mul_(1 - factor).add_(batch_mean * factor)
            self.running_var.mul_(1 - factor).add_(unbiased * factor)

    def get_config(self) -> dict:
        return {
            "num_features": self.num_features,
            "eps": self.eps,
            "momentum": self.momentum,
            "affine": self.affine,
            "track_running_stats": self.track_running_stats,
            "dtype": self._param_dtype(),
        }

    def _param_dtype(self) -> str:
        t = self.weight if self.weight is not None else self.running_mean
        return self._dtype if t is None else t.dtype.name

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


__all__ = ["LayerNorm", "BatchNorm1d"]
