"""The math namespace of recorded formulas: the same names as ``reference``, as jitgrad
ops on tensors. Elementwise gradients evaluated with it are themselves differentiable."""

from math import pi

from .elementwise import (
    arctan2,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    equal,
    floor_divide,
    greater,
    greater_equal,
    left_shift,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    not_equal,
    power,
    remainder,
    right_shift,
    where,
)
from .reduce import sum_to
from .unary import (
    abs,
    arccos,
    arcsin,
    arctan,
    arctanh,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    expm1,
    floor,
    invert,
    isfinite,
    isnan,
    log,
    log1p,
    log2,
    log10,
    logical_not,
    negative,
    positive,
    reciprocal,
    sigmoid,
    sign,
    sin,
    sinh,
    softplus,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)
from .unary import round as rint

__all__ = [name for name in dir() if not name.startswith("_")]
