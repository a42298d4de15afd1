"""The reference evaluator's math: numpy over arrays, under the names jitgrad's ops use.

Elementwise formulas (``ops/elementwise.py``) are written against a namespace ``m``. Given
this module they compute with numpy on arrays (the eager path, and later the oracle the JIT
is tested against); given ``jitgrad.ops.tensor_math`` the same formulas build a recorded
graph of tensors (``create_graph``).
"""

from __future__ import annotations

import math

import numpy as np

from ..strided import layout as _layout  # private: this module is a formula namespace

pi = math.pi

# numpy's ufuncs under jitgrad's names (most are identical).
exp, expm1, log, log1p, log2, log10 = np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10
sqrt, square, reciprocal = np.sqrt, np.square, np.reciprocal
sin, cos, tan, arcsin, arccos, arctan = np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan
sinh, cosh, tanh, arctanh = np.sinh, np.cosh, np.tanh, np.arctanh
abs, sign, negative, positive = np.abs, np.sign, np.negative, np.positive
floor, ceil, trunc, rint = np.floor, np.ceil, np.trunc, np.rint
isnan, isfinite, logical_not = np.isnan, np.isfinite, np.logical_not
maximum, minimum, arctan2, power = np.maximum, np.minimum, np.arctan2, np.power
floor_divide, remainder, where = np.floor_divide, np.remainder, np.where
equal, not_equal, less, less_equal = np.equal, np.not_equal, np.less, np.less_equal
greater, greater_equal = np.greater, np.greater_equal
logical_and, logical_or, logical_xor = np.logical_and, np.logical_or, np.logical_xor
bitwise_and, bitwise_or, bitwise_xor, invert = (
    np.bitwise_and,
    np.bitwise_or,
    np.bitwise_xor,
    np.invert,
)
left_shift, right_shift = np.left_shift, np.right_shift
exp2, cbrt, signbit, isinf, spacing = np.exp2, np.cbrt, np.signbit, np.isinf, np.spacing
arcsinh, arccosh = np.arcsinh, np.arccosh
hypot, copysign, nextafter, logaddexp, logaddexp2 = (
    np.hypot,
    np.copysign,
    np.nextafter,
    np.logaddexp,
    np.logaddexp2,
)
fmod, fmax, fmin = np.fmod, np.fmax, np.fmin

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    # numpy has no erf; math.erf is correctly rounded in double precision.
    return np.asarray(_erf(x), dtype=np.result_type(x, np.float32))


def sigmoid(x):
    # exp(-softplus(-x)) never overflows, for either sign of x.
    return np.exp(-np.logaddexp(0, -x))


def softplus(x):
    return np.logaddexp(0, x)


def sum_to(g, shape):
    """Sum ``g`` over the axes that broadcasting added, back to ``shape``."""
    g = np.asarray(g)
    if g.shape == tuple(shape):
        return g
    return g.sum(axis=_layout.broadcast_axes(g.shape, shape), keepdims=True).reshape(shape)
