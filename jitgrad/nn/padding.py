"""Padding layers: ZeroPad2d, ConstantPad1d/2d, ReflectionPad1d/2d and ReplicationPad1d/2d,
``F.pad`` with PyTorch's arguments. ``padding`` is one int for every side or, from the
last dimension backwards, (left, right) for 1-d and (left, right, top, bottom) for 2-d.
"""

from __future__ import annotations

from ..autograd.tensor import Tensor
from .conv import config_value
from .module import Module
from .shaping_functions import pad


class _PadNd(Module):
    _dims: int
    _mode: str

    def __init__(self, padding):
        super().__init__()
        self.padding = _widths(type(self).__name__, padding, 2 * self._dims)

    def forward(self, x) -> Tensor:
        return pad(x, self.padding, self._mode)

    def get_config(self) -> dict:
        return {"padding": config_value(self.padding)}

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _widths(name: str, padding, count: int) -> tuple[int, ...]:
    """``padding`` as ``count`` widths: one int repeated, or ``count`` ints."""
    widths = (padding,) * count if hasattr(padding, "__index__") else tuple(padding)
    if len(widths) != count or not all(
        hasattr(w, "__index__") and not isinstance(w, bool) for w in widths
    ):
        raise ValueError(f"{name}: padding must be an int or {count} ints, got {padding!r}")
    return tuple(int(w) for w in widths)


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, x) -> Tensor:
        return pad(x, self.padding, "constant", self.value)

    def get_config(self) -> dict:
        return {**super().get_config(), "value": self.value}

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with ``value`` (negative widths crop), as PyTorch's
    ``nn.ConstantPad1d``.

    >>> import jitgrad as jg
    >>> jg.nn.ConstantPad1d((1, 2), 9.0)(jg.tensor([[1.0, 2.0]])).tolist()
    [[9.0, 1.0, 2.0, 9.0, 9.0]]
    """

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with ``value`` (negative widths crop), as PyTorch's
    ``nn.ConstantPad2d``.

    >>> import jitgrad as jg
    >>> jg.nn.ConstantPad2d((1, 0, 0, 1), 9.0)(jg.tensor([[1.0]])).tolist()
    [[9.0, 1.0], [9.0, 9.0]]
    """

    _dims = 2


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dimensions with zeros, as PyTorch's ``nn.ZeroPad2d``.

    >>> import jitgrad as jg
    >>> jg.nn.ZeroPad2d(1)(jg.ones((2, 3, 4, 4))).shape
    (2, 3, 6, 6)
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def get_config(self) -> dict:
        return {"padding": config_value(self.padding)}

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dimension of (N, C, L) or (C, L) inputs with its mirror image (the
    edge not repeated), as PyTorch's ``nn.ReflectionPad1d``.

    >>> import jitgrad as jg
    >>> jg.nn.ReflectionPad1d(2)(jg.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions of (N, C, H, W) or (C, H, W) inputs with their mirror
    image, as PyTorch's ``nn.ReflectionPad2d``."""

    _dims, _mode = 2, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dimension of (N, C, L) or (C, L) inputs by repeating its edge, as
    PyTorch's ``nn.ReplicationPad1d``.

    >>> import jitgrad as jg
    >>> jg.nn.ReplicationPad1d((2, 1))(jg.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 1.0, 2.0, 2.0]]
    """

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions of (N, C, H, W) or (C, H, W) inputs by repeating their
    edges, as PyTorch's ``nn.ReplicationPad2d``."""

    _dims, _mode = 2, "replicate"


__all__ = [
    "ZeroPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad1d",
    "ReplicationPad2d",
]
