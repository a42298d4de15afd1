"""Activation layers: each wraps one function of ``jitgrad.nn.functional``.

>>> import jitgrad as jg
>>> jg.nn.LeakyReLU(0.1)(jg.tensor([-1.0, 2.0])).tolist()
[-0.1, 2.0]
"""

from __future__ import annotations

from . import functional as F
from .module import Module


class _Stateless(Module):
    """An activation without arguments."""

    def get_config(self) -> dict:
        return {}


class ReLU(_Stateless):
    """max(x, 0)."""

    def forward(self, x):
        return F.relu(x)


class SiLU(_Stateless):
    """x·sigmoid(x) (swish)."""

    def forward(self, x):
        return F.silu(x)


class Tanh(_Stateless):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(_Stateless):
    def forward(self, x):
        return F.sigmoid(x)


class LeakyReLU(Module):
    """x where x > 0, else ``negative_slope``·x."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = float(negative_slope)

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

    def get_config(self) -> dict:
        return {"negative_slope": self.negative_slope}

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """x·Φ(x); ``approximate="tanh"`` uses the tanh approximation."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def get_config(self) -> dict:
        return {"approximate": self.approximate}

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """exp(x) normalised along ``dim`` (default: the last)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = int(dim)

    def forward(self, x):
        return F.softmax(x, dim=self.dim)

    def get_config(self) -> dict:
        return {"dim": self.dim}

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log(softmax(x)) along ``dim``, computed stably."""

    def forward(self, x):
        return F.log_softmax(x, dim=self.dim)


__all__ = ["ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"]
