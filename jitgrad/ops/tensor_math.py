"""The math namespace of recorded formulas: the same names as ``reference``, as jitgrad
ops on tensors. Elementwise gradients evaluated with it are themselves differentiable.
Its functions are those of ``primitives.PRIMITIVES`` (each row's jitgrad function)."""

from math import pi

from .movement import sum_to
from .primitives import PRIMITIVES as _PRIMITIVES

globals().update({p.name: p.function for p in _PRIMITIVES.values()})

__all__ = ["pi", "sum_to", *_PRIMITIVES]
