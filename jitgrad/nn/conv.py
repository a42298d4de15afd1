"""Convolution layers: Conv1d, Conv2d and ConvTranspose2d, with PyTorch's arguments,
parameter shapes and initialisation (weights kaiming_uniform(a=√5), i.e. U(±1/√fan_in),
and the bias U(±1/√fan_in), fan_in = the weight's dimension 1 times the kernel's area).
"""

from __future__ import annotations

import math

from .. import creation
from ..autograd.tensor import Tensor
from ..ops import convolution
from . import init
from ._common import param_dtype
from .module import Module, Parameter


def config_value(value):
    """A tuple argument as JSON keeps it (a list); anything else as it is."""
    return list(value) if isinstance(value, tuple) else value


class _ConvNd(Module):
    """What the convolution layers share: arguments, parameters, initialisation, config."""

    _dims = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        output_padding=0,
        dtype=None,
        generator=None,
    ):
        super().__init__()
        name, n = type(self).__name__, self._dims
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        if isinstance(groups, bool) or not hasattr(groups, "__index__") or groups < 1:
            raise ValueError(f"{name}: groups must be a positive int, got {groups!r}")
        self.groups = int(groups)
        for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % groups:
                raise ValueError(f"{name}: {what}={channels} must be divisible by groups={groups}")
        if padding_mode != "zeros":
            raise ValueError(
                f"{name}: padding_mode {padding_mode!r} is not supported, only 'zeros'"
            )
        self.padding_mode = padding_mode
        self.kernel_size = convolution.pair(name, "kernel_size", kernel_size, n)
        self.stride = convolution.pair(name, "stride", stride, n)
        self.dilation = convolution.pair(name, "dilation", dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid") or self._transposed:
                raise ValueError(f"{name}: padding {padding!r} is not one of the allowed strings")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' needs stride 1, got {self.stride}")
            self.padding = padding
        else:
            self.padding = convolution.pair(name, "padding", padding, n, minimum=0)
        self.output_padding = convolution.pair(name, "output_padding", output_padding, n, 0)
        d = param_dtype(dtype)
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight = Parameter(creation.empty(shape, d))
        if bias:
            self.bias = Parameter(creation.empty((self.out_channels,), d))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        rng = init.as_generator(generator)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=rng)
        if self.bias is not None:
            fan_in, _ = init.fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound, generator=rng)

    def get_config(self) -> dict:
        config = {
            "in_channels": self.in_channels,
            "out_channels": self.out_channels,
            "kernel_size": config_value(self.kernel_size),
            "stride": config_value(self.stride),
            "padding": config_value(self.padding),
            "dilation": config_value(self.dilation),
            "groups": self.groups,
            "bias": self.bias is not None,
            "padding_mode": self.padding_mode,
            "dtype": self.weight.dtype.name,
        }
        if self._transposed:
            config["output_padding"] = config_value(self.output_padding)
        return config

    def extra_repr(self) -> str:
        n = self._dims
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        text += f", stride={self.stride}"
        if self.padding != (0,) * n:
            text += f", padding={self.padding!r}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """1-d convolution over (N, C, L) (or (C, L)) inputs, as PyTorch's ``nn.Conv1d``.

    >>> import jitgrad as jg
    >>> conv = jg.nn.Conv1d(4, 8, 3, padding=1, generator=0)
    >>> conv(jg.ones((2, 4, 10))).shape, conv.weight.shape
    ((2, 8, 10), (8, 4, 3))
    """

    _dims = 1

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype=dtype,
            generator=generator,
        )

    def forward(self, x) -> Tensor:
        return convolution.conv1d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class Conv2d(_ConvNd):
    """2-d convolution over (N, C, H, W) (or (C, H, W)) inputs, as PyTorch's
    ``nn.Conv2d``.

    >>> import jitgrad as jg
    >>> conv = jg.nn.Conv2d(3, 16, 3, stride=2, padding=1, generator=0)
    >>> conv(jg.ones((2, 3, 32, 32))).shape, conv.weight.shape
    ((2, 16, 16, 16), (16, 3, 3, 3))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype=dtype,
            generator=generator,
        )

    def forward(self, x) -> Tensor:
        return convolution.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )


class ConvTranspose2d(_ConvNd):
    """The transpose of a 2-d convolution (the gradient of Conv2d with respect to its
    input), as PyTorch's ``nn.ConvTranspose2d``; ``forward(x, output_size)`` picks the
    output_padding that gives that size.

    >>> import jitgrad as jg
    >>> up = jg.nn.ConvTranspose2d(16, 3, 3, stride=2, padding=1, output_padding=1, generator=0)
    >>> up(jg.ones((2, 16, 16, 16))).shape, up.weight.shape
    ((2, 3, 32, 32), (16, 3, 3, 3))
    """

    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        *,
        dtype=None,
        generator=None,
    ):
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            output_padding=output_padding,
            dtype=dtype,
            generator=generator,
        )

    def forward(self, x, output_size=None) -> Tensor:
        extra = self.output_padding
        if output_size is not None:
            extra = self._output_padding_for(x, output_size)
        return convolution.conv_transpose2d(
            x, self.weight, self.bias, self.stride, self.padding, extra, self.groups, self.dilation
        )

    def _output_padding_for(self, x, output_size) -> tuple[int, int]:
        size = tuple(output_size)[-2:]
        extra = []
        for k, (n, want) in enumerate(zip(x.shape[-2:], size)):
            smallest = (
                (n - 1) * self.stride[k]
                - 2 * self.padding[k]
                + self.dilation[k] * (self.kernel_size[k] - 1)
                + 1
            )
            largest = smallest + max(self.stride[k], self.dilation[k]) - 1
            if not smallest <= want <= largest:
                raise ValueError(
                    f"ConvTranspose2d: output_size {tuple(output_size)} is out of reach: "
                    f"dimension {k} can be {smallest} to {largest} for input of shape {x.shape}"
                )
            extra.append(want - smallest)
        return tuple(extra)


__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]
