"""Pooling layers: MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d and the adaptive pools
(AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d), with PyTorch's arguments (``stride``
defaults to ``kernel_size``)."""

from __future__ import annotations

from ..ops import pooling
from .conv import config_value
from .module import Module


def _argument(value):
    """A size argument as PyTorch keeps it: an int, None, or a tuple (a list from a config
    becomes one)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


class _MaxPoolNd(Module):
    _pool = None

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ):
        super().__init__()
        self.kernel_size, self.stride = _argument(kernel_size), _argument(stride)
        self.padding, self.dilation = _argument(padding), _argument(dilation)
        self.return_indices = bool(return_indices)
        self.ceil_mode = bool(ceil_mode)

    def forward(self, x):
        return type(self)._pool(
            x,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )

    def get_config(self) -> dict:
        return {
            "kernel_size": config_value(self.kernel_size),
            "stride": config_value(self.stride),
            "padding": config_value(self.padding),
            "dilation": config_value(self.dilation),
            "return_indices": self.return_indices,
            "ceil_mode": self.ceil_mode,
        }

    def extra_repr(self) -> str:
        stride = self.kernel_size if self.stride is None else self.stride
        return (
            f"kernel_size={self.kernel_size}, stride={stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """The maximum of each window of (N, C, L) inputs, as PyTorch's ``nn.MaxPool1d``.

    >>> import jitgrad as jg
    >>> jg.nn.MaxPool1d(2)(jg.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[3.0, 2.0]]]
    """

    _pool = staticmethod(pooling.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The maximum of each window of (N, C, H, W) inputs, as PyTorch's ``nn.MaxPool2d``.

    >>> import jitgrad as jg
    >>> jg.nn.MaxPool2d(2)(jg.ones((8, 3, 32, 32))).shape
    (8, 3, 16, 16)
    """

    _pool = staticmethod(pooling.max_pool2d)


class AvgPool1d(Module):
    """The mean of each window of (N, C, L) inputs, as PyTorch's ``nn.AvgPool1d``.

    >>> import jitgrad as jg
    >>> jg.nn.AvgPool1d(2)(jg.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[2.0, 1.0]]]
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ):
        super().__init__()
        self.kernel_size, self.stride = _argument(kernel_size), _argument(stride)
        self.padding = _argument(padding)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)

    def forward(self, x):
        return pooling.avg_pool1d(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )

    def get_config(self) -> dict:
        return {
            "kernel_size": config_value(self.kernel_size),
            "stride": config_value(self.stride),
            "padding": config_value(self.padding),
            "ceil_mode": self.ceil_mode,
            "count_include_pad": self.count_include_pad,
        }

    def extra_repr(self) -> str:
        stride = self.kernel_size if self.stride is None else self.stride
        return f"kernel_size={self.kernel_size}, stride={stride}, padding={self.padding}"


class AvgPool2d(AvgPool1d):
    """The mean of each window of (N, C, H, W) inputs, as PyTorch's ``nn.AvgPool2d``.

    >>> import jitgrad as jg
    >>> jg.nn.AvgPool2d(2)(jg.ones((8, 3, 32, 32))).shape
    (8, 3, 16, 16)
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override=None,
    ):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)
        self.divisor_override = divisor_override

    def forward(self, x):
        return pooling.avg_pool2d(
            x,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def get_config(self) -> dict:
        return {**super().get_config(), "divisor_override": self.divisor_override}


class _AdaptivePoolNd(Module):
    """Pooling to a fixed ``output_size`` whatever the input's size (a None entry keeps
    that dimension's size)."""

    _pool = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _argument(output_size)

    def forward(self, x):
        return type(self)._pool(x, self.output_size)

    def get_config(self) -> dict:
        return {"output_size": config_value(self.output_size)}

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Average pooling of (N, C, L) inputs to ``output_size`` windows, as PyTorch's
    ``nn.AdaptiveAvgPool1d``.

    >>> import jitgrad as jg
    >>> jg.nn.AdaptiveAvgPool1d(2)(jg.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[2.0, 1.0]]]
    """

    _pool = staticmethod(pooling.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Average pooling to a fixed ``output_size`` whatever the input's, as PyTorch's
    ``nn.AdaptiveAvgPool2d`` (a None entry keeps that dimension's size).

    >>> import jitgrad as jg
    >>> jg.nn.AdaptiveAvgPool2d((1, 1))(jg.ones((8, 64, 7, 7))).shape
    (8, 64, 1, 1)
    """

    _pool = staticmethod(pooling.adaptive_avg_pool2d)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = bool(return_indices)

    def forward(self, x):
        return type(self)._pool(x, self.output_size, self.return_indices)

    def get_config(self) -> dict:
        return {**super().get_config(), "return_indices": self.return_indices}


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) inputs to ``output_size`` windows, as PyTorch's
    ``nn.AdaptiveMaxPool1d``.

    >>> import jitgrad as jg
    >>> jg.nn.AdaptiveMaxPool1d(2)(jg.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[3.0, 2.0]]]
    """

    _pool = staticmethod(pooling.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed ``output_size`` whatever the input's, as PyTorch's
    ``nn.AdaptiveMaxPool2d`` (a None entry keeps that dimension's size).

    >>> import jitgrad as jg
    >>> jg.nn.AdaptiveMaxPool2d((2, None))(jg.ones((8, 64, 7, 5))).shape
    (8, 64, 2, 5)
    """

    _pool = staticmethod(pooling.adaptive_max_pool2d)


__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
]
