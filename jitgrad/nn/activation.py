"""Activation layers: each wraps one function of ``jitgrad.nn.functional``.

>>> import jitgrad as jg
>>> jg.nn.LeakyReLU(0.1)(jg.tensor([-1.0, 2.0])).tolist()
[-0.1, 2.0]
"""

from __future__ import annotations

from .. import creation
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor
from . import functional as F
from ._common import param_dtype
from .module import Module, Parameter


def written_into(x, function, inplace: bool):
    """``function(x)``; with PyTorch's ``inplace=True`` written into ``x``, which is
    returned. Where gradients flow, the function reads a copy of ``x``, whose values its
    backward may need; writing into a leaf that requires grad is an error, as in
    PyTorch."""
    if not inplace:
        return function(x)
    recorded = isinstance(x, Tensor) and x.requires_grad and is_grad_enabled()
    source = x.clone() if recorded else x
    y = function(source)
    return x if y is source else x.copy_(y)


class _Activation(Module):
    """An elementwise activation with PyTorch's ``inplace``: its config and repr are its
    ``_settings`` (the other constructor arguments, kept as attributes of those names, as
    the losses' are), then ``inplace`` when set."""

    _settings: tuple[str, ...] = ()

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = bool(inplace)

    def forward(self, x):
        return written_into(x, self.function, self.inplace)

    def get_config(self) -> dict:
        settings = {name: getattr(self, name) for name in self._settings}
        return {**settings, **({"inplace": True} if self.inplace else {})}

    def extra_repr(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.get_config().items())


class ReLU(_Activation):
    """max(x, 0)."""

    def function(self, x):
        return F.relu(x)


class SiLU(_Activation):
    """x·sigmoid(x) (swish)."""

    def function(self, x):
        return F.silu(x)


class Mish(_Activation):
    """x·tanh(softplus(x))."""

    def function(self, x):
        return F.mish(x)


class Hardswish(_Activation):
    """x·relu6(x + 3) / 6."""

    def function(self, x):
        return F.hardswish(x)


class ReLU6(_Activation):
    """min(max(x, 0), 6)."""

    def function(self, x):
        return F.relu6(x)


class _WithoutInplace(_Activation):
    """An activation whose PyTorch layer takes no ``inplace``."""

    def __init__(self):
        super().__init__()


class Tanh(_WithoutInplace):
    def function(self, x):
        return F.tanh(x)


class Sigmoid(_WithoutInplace):
    def function(self, x):
        return F.sigmoid(x)


class LeakyReLU(_Activation):
    """x where x > 0, else ``negative_slope``·x."""

    _settings = ("negative_slope",)

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__(inplace)
        self.negative_slope = float(negative_slope)

    def function(self, x):
        return F.leaky_relu(x, self.negative_slope)


class ELU(_Activation):
    """x where x > 0, else ``alpha``·(exp(x) - 1)."""

    _settings = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__(inplace)
        self.alpha = float(alpha)

    def function(self, x):
        return F.elu(x, self.alpha)


class Softplus(Module):
    """log(1 + exp(``beta``·x)) / beta, and x itself where beta·x > ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = float(beta), float(threshold)

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)

    def get_config(self) -> dict:
        return {"beta": self.beta, "threshold": self.threshold}

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


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


class Softmin(Softmax):
    """softmax(-x) along ``dim``."""

    def forward(self, x):
        return F.softmin(x, dim=self.dim)


class LogSigmoid(_WithoutInplace):
    """log(sigmoid(x)), without overflow."""

    def function(self, x):
        return F.logsigmoid(x)


class Softsign(_WithoutInplace):
    """x / (1 + |x|)."""

    def function(self, x):
        return F.softsign(x)


class Hardtanh(_Activation):
    """x limited to [``min_val``, ``max_val``]."""

    _settings = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__(inplace)
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val {min_val} is above max_val {max_val}")
        self.min_val, self.max_val = float(min_val), float(max_val)

    def function(self, x):
        return F.hardtanh(x, self.min_val, self.max_val)


class GLU(Module):
    """a·sigmoid(b), ``a`` and ``b`` the two halves of ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = int(dim)

    def forward(self, x):
        return F.glu(x, self.dim)

    def get_config(self) -> dict:
        return {"dim": self.dim}

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """max(x, 0) + a·min(x, 0) with a learned slope ``a``: one for all channels, or one
    per channel (dimension 1) with ``num_parameters`` channels, each starting at
    ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, *, dtype=None):
        super().__init__()
        self.num_parameters, self.init = int(num_parameters), float(init)
        self.weight = Parameter(
            creation.full((self.num_parameters,), self.init, param_dtype(dtype))
        )

    def forward(self, x):
        return F.prelu(x, self.weight)

    def get_config(self) -> dict:
        return {
            "num_parameters": self.num_parameters,
            "init": self.init,
            "dtype": self.weight.dtype.name,
        }

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


__all__ = [
    "Softmin",
    "LogSigmoid",
    "Softsign",
    "Hardtanh",
    "GLU",
    "PReLU",
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Mish",
    "Hardswish",
    "Softplus",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
]
