"""Gradient clipping and flat parameter vectors, in PyTorch's spelling
(``torch.nn.utils``).

Clipping computes with tensor ops only (no ``.item()``): the norm stays a tensor, and the
gradients are scaled by a coefficient clamped to at most 1, so a clipped training step
traces and replays under ``jg.jit`` with the norm recomputed at every call.

>>> import jitgrad as jg
>>> w = jg.nn.Parameter(jg.zeros(2))
>>> w.grad = jg.tensor([3.0, 4.0])
>>> jg.nn.utils.clip_grad_norm_([w], max_norm=1.0).item()
5.0
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..autograd.grad_mode import no_grad
from ..autograd.tensor import Tensor, as_tensor
from ..linalg import vector_norm
from ..ops import unary
from ..ops.movement import concatenate, stack

# Added to the norm before dividing, as PyTorch does: a zero norm scales by max_norm/1e-6,
# clamped to 1.
_EPS = 1e-6


def _tensors(parameters, what: str) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    if not isinstance(parameters, Iterable):
        raise TypeError(f"{what} must be a tensor or an iterable of tensors, got {parameters!r}")
    tensors = list(parameters)
    for k, p in enumerate(tensors):
        if not isinstance(p, Tensor):
            raise TypeError(f"{what}[{k}] is a {type(p).__name__}, not a tensor")
    return tensors


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not hasattr(type(value), "__float__"):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    return float(value)


def clip_grad_norm_(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``
    norm (the norm of the per-gradient norms) is at most ``max_norm``; returns that total
    norm (before clipping) as a 0-d tensor. Parameters without a gradient are skipped;
    none at all gives a norm of 0. ``foreach`` is accepted for PyTorch's signature.

    ``error_if_nonfinite`` raises a RuntimeError when the norm is nan or infinite; that
    check reads the norm's value, so a jitted step with it decides at trace time.
    """
    max_norm = _number(max_norm, "max_norm")
    norm_type = _number(norm_type, "norm_type")
    grads = [p.grad for p in _tensors(parameters, "parameters") if p.grad is not None]
    if not grads:
        return as_tensor(0.0)
    with no_grad():
        norms = [vector_norm(g.detach(), ord=norm_type) for g in grads]
        total = norms[0] if len(norms) == 1 else vector_norm(stack(norms), ord=norm_type)
        if error_if_nonfinite and not bool(unary.isfinite(total)):
            raise RuntimeError(
                f"the total norm of order {norm_type} of the gradients is non-finite, so it "
                "cannot be clipped; pass error_if_nonfinite=False to scale by it anyway"
            )
        coefficient = unary.clip(max_norm / (total + _EPS), None, 1.0)
        for g in grads:
            g.mul_(coefficient.astype(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp the gradients of ``parameters`` in place to [-clip_value, clip_value]."""
    clip_value = _number(clip_value, "clip_value")
    with no_grad():
        for p in _tensors(parameters, "parameters"):
            if p.grad is not None:
                p.grad.copy_(unary.clip(p.grad, -clip_value, clip_value))


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and joined into one 1-d tensor (differentiable).

    >>> import jitgrad as jg
    >>> parameters_to_vector([jg.ones((2, 2)), jg.zeros(1)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    tensors = _tensors(parameters, "parameters")
    if not tensors:
        raise ValueError("parameters_to_vector: no parameters to join")
    return concatenate([p.reshape(-1) for p in tensors])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copy consecutive slices of the 1-d ``vec`` into ``parameters`` (each reshaped to
    its parameter); ``vec`` must have exactly as many elements as the parameters.

    PyTorch points each parameter's ``.data`` at a view of ``vec``; jitgrad writes the
    values into the parameters' own memory, which optimizers and jitted steps keep
    reading.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected vec to be a tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vec must be 1-d, got shape {vec.shape}")
    tensors = _tensors(parameters, "parameters")
    total = sum(math.prod(p.shape) for p in tensors)
    if vec.shape[0] != total:
        raise ValueError(f"vec has {vec.shape[0]} elements, the parameters {total}")
    with no_grad():
        start = 0
        for p in tensors:
            n = math.prod(p.shape)
            p.copy_(vec[start : start + n].reshape(p.shape))
            start += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
