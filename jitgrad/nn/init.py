"""Initialising tensors in place: PyTorch's ``torch.nn.init`` with a seeded generator.

Every function fills ``tensor`` under ``no_grad`` and returns it. ``generator`` is a
``jg.random.Generator``, an int seed, or None (fresh entropy); pass one generator to every
layer of a model to make its whole initialisation reproducible.

>>> import jitgrad as jg
>>> w = jg.empty((3, 4))
>>> bound = 1 / 4 ** 0.5
>>> bool(jg.nn.init.kaiming_uniform_(w, a=5 ** 0.5, generator=0).abs().max() <= bound)
True
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..random import Generator, default_rng
from ..random.default import default_generator


def as_generator(generator) -> Generator:
    """A ``jg.random.Generator`` (``jg.Generator`` is one) from a generator, an int seed or
    None (the default generator)."""
    if isinstance(generator, Generator):
        return generator
    if generator is None:  # the one jg.manual_seed restarts
        return default_generator
    if hasattr(generator, "__index__") and not isinstance(generator, bool):
        return default_rng(int(generator))
    raise TypeError(
        "generator must be a jg.Generator (or a jg.random.Generator), an int seed or None, "
        f"got {type(generator).__name__}"
    )


def _fill(tensor, values):
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"initialisers fill floating tensors, got {tensor.dtype.name}")
    with no_grad():
        tensor.copy_(values)
    return tensor


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill with draws from U(a, b)."""
    values = as_generator(generator).uniform(a, b, tensor.shape, dtype="float64")
    return _fill(tensor, values)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill with draws from N(mean, std²)."""
    values = as_generator(generator).normal(mean, std, tensor.shape, dtype="float64")
    return _fill(tensor, values)


def trunc_normal_(
    tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None
):
    """Fill with draws from N(mean, std²) truncated to [a, b] (drawn again until inside:
    the same distribution as PyTorch's, another stream of numbers)."""
    if not a < b:
        raise ValueError(f"trunc_normal_: a={a} must be below b={b}")
    scale = std * math.sqrt(2)
    inside = (math.erf((b - mean) / scale) - math.erf((a - mean) / scale)) / 2
    if inside < 1e-3:
        raise ValueError(
            f"trunc_normal_: [{a}, {b}] holds {inside:.2g} of N({mean}, {std}²); move the "
            "interval nearer the mean"
        )
    rng = as_generator(generator)
    values = rng.normal(mean, std, tensor.shape, dtype="float64").numpy()
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = rng.normal(mean, std, int(outside.sum()), dtype="float64").numpy()
        outside = (values < a) | (values > b)
    return _fill(tensor, values)


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain``: the Q of a Gaussian matrix's QR,
    its columns' signs fixed by R's diagonal, as PyTorch; dimensions after the first are
    flattened into the columns."""
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_ needs at least 2 dimensions, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows if rows else 0
    drawn = as_generator(generator).standard_normal((rows, cols), dtype="float64").numpy()
    flat = drawn.T if rows < cols else drawn
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    q = q.T if rows < cols else q
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def constant_(tensor, value: float):
    return _fill(tensor, value)


def zeros_(tensor):
    return _fill(tensor, 0.0)


def ones_(tensor):
    return _fill(tensor, 1.0)


_GAIN_ONE = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)
_GAIN_NAMES = (*_GAIN_ONE, "tanh", "relu", "leaky_relu", "selu")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain that keeps activations' variance stable through ``nonlinearity`` (a
    ``nn.functional`` name; PyTorch's table). ``param`` is leaky_relu's negative slope
    (default 0.01) and is ignored by the others.

    >>> from jitgrad import nn
    >>> nn.init.calculate_gain("tanh"), round(nn.init.calculate_gain("leaky_relu", 0.2), 4)
    (1.6666666666666667, 1.3868)
    """
    if nonlinearity in _GAIN_ONE:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        # A bool is an int to Python, but True as a slope is a mistake (PyTorch refuses
        # it too), as is a string that float() would have read.
        if param is not None and (isinstance(param, bool) or not isinstance(param, numbers.Real)):
            raise ValueError(
                f"calculate_gain('leaky_relu', param): param is the negative slope, a real "
                f"number; got {type(param).__name__} {param!r}"
            )
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(
        f"unsupported nonlinearity {nonlinearity!r} for calculate_gain; it knows "
        f"{', '.join(_GAIN_NAMES)}"
    )


def fan_in_and_fan_out(tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *receptive field)."""
    if tensor.ndim < 2:
        raise ValueError(
            f"fan in and fan out need a tensor of at least 2 dimensions, got shape {tensor.shape}"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _no_elements(tensor) -> bool:
    """True, with PyTorch's warning, for a tensor with no elements: there is nothing to fill,
    and a fan of 0 would divide by zero."""
    if 0 not in tensor.shape:
        return False
    warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
    return True


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """U(-b, b) with b = gain·√(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    if _no_elements(tensor):
        return tensor
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """N(0, σ²) with σ = gain·√(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    if _no_elements(tensor):
        return tensor
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
):
    """U(-b, b) with b = gain·√(3 / fan) (He et al.). ``a=√5`` over fan_in gives
    b = 1/√fan_in: PyTorch's default for Linear weights."""
    if _no_elements(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
):
    """N(0, σ²) with σ = gain / √fan."""
    if _no_elements(tensor):
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


__all__ = [
    "uniform_",
    "normal_",
    "trunc_normal_",
    "orthogonal_",
    "constant_",
    "zeros_",
    "ones_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "calculate_gain",
    "fan_in_and_fan_out",
    "as_generator",
]
