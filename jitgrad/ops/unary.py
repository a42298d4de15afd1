"""Unary elementwise ops: math functions, activations, rounding and tests.

Each op is its forward formula ``f`` and its gradient ``dx`` side by side (see
``elementwise.py`` for what ``m``, ``gy`` and ``y`` are).
"""

from __future__ import annotations

import builtins
import functools
import math

import numpy as np

from ..autograd.function import Function, records_nothing
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute
from .elementwise import Elementwise, Piecewise, Test, Unary, _op, entry, logical_and, where
from .movement import astype, clone
from .numpy_tier import tensor_of, tensor_over
from .ufunc import _write, ufunc

_LN2, _LN10 = math.log(2), math.log(10)
_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class Negative(Unary):
    quiet_kinds = "biuf"
    needs_input_values = False
    on_bool = (
        "boolean negative, the `-` operator, is not supported (as in numpy); use "
        "logical_not, the `~` operator, instead"
    )

    def f(self, m, x):
        return -x

    def dx(self, m, gy, y, x):
        return -gy


class Positive(Unary):
    quiet_kinds = "biuf"
    needs_input_values = False
    on_bool = "positive, the unary `+` operator, is not defined for bool (as in numpy)"

    def f(self, m, x):
        return +x

    def dx(self, m, gy, y, x):
        return gy


class Abs(Unary):
    quiet_kinds = "biuf"

    def f(self, m, x):
        return m.abs(x)

    def dx(self, m, gy, y, x):
        return gy * m.sign(x)


class ComplexByNumpy(Function):
    """numpy's ``ufunc`` of a complex tensor, where the elementwise evaluator cannot give
    numpy's answer (rounding, the angle). No backward: it refuses a tensor that requires
    grad."""

    def __init__(self, ufunc):
        self.ufunc = ufunc

    def __call__(self, z):
        if z.__class__ is Tensor and records_nothing(z):  # numpy's call, no Function around it
            return tensor_of(self.ufunc(z.numpy()))
        return super().__call__(z)

    def forward(self, z):
        return tensor_over(compute(self.ufunc, z.numpy()))


class ComplexAbs(ComplexByNumpy):
    """|z| of a complex tensor: real, of the same precision (numpy's and PyTorch's dtype;
    the evaluator's output has the inputs' dtype). PyTorch's gradient: g sign(z)."""

    differentiates_complex = True

    def __init__(self):
        super().__init__(np.abs)

    def backward(self, gy):
        return gy * ComplexSign()(self.inputs[0])


class ComplexSign(ComplexByNumpy):
    """numpy 2's sign of complex z, z / |z| (0 at 0; a formula of comparisons gives the
    sign of the real part), NaN + NaN j where either part is NaN (the Array API's answer).
    A gradient G of s = z / |z| gives z the part of G along the unit circle over the
    radius, i s im(conj(s) G) / |z| (0 at 0), PyTorch's ``sgn`` gradient."""

    differentiates_complex = True

    def __init__(self):
        super().__init__(_complex_sign)

    def backward(self, gs):
        from .complex_parts import conj, imag  # (built on this module)

        z = self.inputs[0]
        s, r = ComplexSign()(z), ComplexAbs()(z)
        return where(r == 0, 0, s * imag(conj(s) * gs) * 1j / r)


class Exp(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.exp(x)

    def dx(self, m, gy, y, x):
        return gy * y


class Expm1(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.expm1(x)

    def dx(self, m, gy, y, x):
        return gy * (y + 1)


class Log(Unary):
    result = "float"

    def f(self, m, x):
        return m.log(x)

    def dx(self, m, gy, y, x):
        return gy / x


class Log1p(Unary):
    result = "float"

    def f(self, m, x):
        return m.log1p(x)

    def dx(self, m, gy, y, x):
        return gy / (1 + x)


class Log2(Unary):
    result = "float"

    def f(self, m, x):
        return m.log2(x)

    def dx(self, m, gy, y, x):
        return gy / (x * _LN2)


class Log10(Unary):
    result = "float"

    def f(self, m, x):
        return m.log10(x)

    def dx(self, m, gy, y, x):
        return gy / (x * _LN10)


class Sqrt(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.sqrt(x)

    def dx(self, m, gy, y, x):
        return gy / (2 * y)


class Square(Unary):
    on_bool = "int8"  # numpy's square has no bool loop: bools square as int8

    def f(self, m, x):
        return x * x

    def dx(self, m, gy, y, x):
        return 2 * x * gy


class Reciprocal(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return 1 / x

    def dx(self, m, gy, y, x):
        return -gy * y * y


class Sin(Unary):
    result = "float"

    def f(self, m, x):
        return m.sin(x)

    def dx(self, m, gy, y, x):
        return gy * m.cos(x)


class Cos(Unary):
    result = "float"

    def f(self, m, x):
        return m.cos(x)

    def dx(self, m, gy, y, x):
        return -gy * m.sin(x)


class Tan(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.tan(x)

    def dx(self, m, gy, y, x):
        return gy * (1 + y * y)


class Arcsin(Unary):
    result = "float"

    def f(self, m, x):
        return m.arcsin(x)

    def dx(self, m, gy, y, x):
        return gy / m.sqrt(1 - x * x)


class Arccos(Unary):
    result = "float"

    def f(self, m, x):
        return m.arccos(x)

    def dx(self, m, gy, y, x):
        return -gy / m.sqrt(1 - x * x)


class Arctan(Unary):
    result = "float"

    def f(self, m, x):
        return m.arctan(x)

    def dx(self, m, gy, y, x):
        return gy / (1 + x * x)


class Sinh(Unary):
    result = "float"

    def f(self, m, x):
        return m.sinh(x)

    def dx(self, m, gy, y, x):
        return gy * m.cosh(x)


class Cosh(Unary):
    result = "float"

    def f(self, m, x):
        return m.cosh(x)

    def dx(self, m, gy, y, x):
        return gy * m.sinh(x)


class Tanh(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.tanh(x)

    def dx(self, m, gy, y, x):
        return gy * (1 - y * y)


class Arctanh(Unary):
    result = "float"

    def f(self, m, x):
        return m.arctanh(x)

    def dx(self, m, gy, y, x):
        return gy / (1 - x * x)


class Arcsinh(Unary):
    result = "float"

    def f(self, m, x):
        return m.arcsinh(x)

    def dx(self, m, gy, y, x):
        return gy / m.sqrt(x * x + 1)


class Arccosh(Unary):
    result = "float"

    def f(self, m, x):
        return m.arccosh(x)

    def dx(self, m, gy, y, x):
        return gy / m.sqrt(x * x - 1)


class Exp2(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.exp2(x)

    def dx(self, m, gy, y, x):
        return gy * y * _LN2


class Cbrt(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.cbrt(x)

    def dx(self, m, gy, y, x):
        return gy / (3 * y * y)


class Deg2rad(Unary):
    result, needs_input_values = "float", False

    def f(self, m, x):
        return x * (math.pi / 180)  # numpy's formula: one multiplication by pi / 180

    def dx(self, m, gy, y, x):
        return gy * (math.pi / 180)


class Rad2deg(Unary):
    result, needs_input_values = "float", False

    def f(self, m, x):
        return x * (180 / math.pi)

    def dx(self, m, gy, y, x):
        return gy * (180 / math.pi)


class Fabs(Abs):
    result = "float"  # numpy's fabs has float loops only: integers give floats


class Sinc(Unary):
    """sin(pi x) / (pi x), 1 at 0 (numpy's normalised sinc)."""

    result, saves_output = "float", True

    def f(self, m, x):
        t = m.where(x == 0, 1e-20, x) * math.pi  # numpy's way past 0 / 0
        return m.sin(t) / t

    def dx(self, m, gy, y, x):
        return m.where(x == 0, 0, gy * (m.cos(x * math.pi) - y) / x)


class Sigmoid(Unary):
    result, saves_output = "float", True

    def f(self, m, x):
        return m.sigmoid(x)

    def dx(self, m, gy, y, x):
        return gy * y * (1 - y)


class Relu(Unary):
    # Written as "0 where x <= 0" so that NaN passes through (PyTorch's relu and numpy's
    # maximum keep it): bad input stays visible downstream.
    def f(self, m, x):
        return m.where(x <= 0, 0, x)

    def dx(self, m, gy, y, x):
        return m.where(x <= 0, 0, gy)


class LeakyRelu(Unary):
    result, params = "float", ("negative_slope",)

    def __init__(self, negative_slope: float = 0.01):
        self.negative_slope = negative_slope

    def f(self, m, x):
        return m.where(x > 0, x, x * self.negative_slope)

    def dx(self, m, gy, y, x):
        return m.where(x > 0, gy, gy * self.negative_slope)


class Gelu(Unary):
    """x·Φ(x), or with ``approximate="tanh"`` the tanh approximation PyTorch offers."""

    result, params = "float", ("approximate",)

    def __init__(self, approximate: str = "none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def f(self, m, x):
        if self.approximate == "tanh":
            return 0.5 * x * (1 + m.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        return 0.5 * x * (1 + m.erf(x * _SQRT1_2))

    def dx(self, m, gy, y, x):
        if self.approximate == "tanh":
            t = m.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
            dt = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x) * (1 - t * t)
            return gy * (0.5 * (1 + t) + 0.5 * x * dt)
        return gy * (0.5 * (1 + m.erf(x * _SQRT1_2)) + x * _INV_SQRT_2PI * m.exp(-0.5 * x * x))


class Silu(Unary):
    result = "float"

    def f(self, m, x):
        return x * m.sigmoid(x)

    def dx(self, m, gy, y, x):
        s = m.sigmoid(x)
        return gy * s * (1 + x * (1 - s))


class Softplus(Unary):
    result = "float"

    def f(self, m, x):
        return m.softplus(x)

    def dx(self, m, gy, y, x):
        return gy * m.sigmoid(x)


class Erf(Unary):
    result = "float"

    def f(self, m, x):
        return m.erf(x)

    def dx(self, m, gy, y, x):
        return gy * _TWO_OVER_SQRT_PI * m.exp(-x * x)


class Clip(Elementwise):
    """x limited to [lo, hi], numpy's ``minimum(maximum(x, lo), hi)``; a missing bound is
    a placeholder the formula never reads (``has_min``, ``has_max``). Bounds may be
    tensors: the gradients are PyTorch clamp's (x owns ties, hi wins when lo > hi)."""

    grad_rules, params = ("dx", "dlo", "dhi"), ("has_min", "has_max")

    def __init__(self, has_min: bool, has_max: bool):
        self.has_min, self.has_max = has_min, has_max

    def _dtype_operands(self, operands):
        x, lo, hi = operands
        return [x] + [lo] * self.has_min + [hi] * self.has_max

    def _constant(self, value):
        if self.result_dtype.is_integer and type(value) is int:
            # Beyond the dtype's range, a Python int clips like the range's end (numpy 2
            # compares it as the number it is); converted, it would raise or wrap.
            info = np.iinfo(self.result_dtype.numpy)
            return min(max(value, int(info.min)), int(info.max))
        return super()._constant(value)

    # where rather than maximum/minimum: differentiated as part of a jg.function, where's
    # rule routes the whole gradient as dx does (maximum's and minimum's split it at ties).
    def f(self, m, x, lo, hi):
        if self.has_min:
            x = m.where(_or_nan(x < lo, x, lo), lo, x)
        if self.has_max:
            x = m.where(_or_nan(x > hi, x, hi), hi, x)
        return x

    def dx(self, m, gy, y, x, lo, hi):
        inside = x == x  # NaN positions get no gradient, like PyTorch's clamp
        if self.has_min:
            inside = inside & (x >= lo)
        if self.has_max:
            inside = inside & (x <= hi)
        return m.where(inside, gy, 0)

    # PyTorch's rules, also where lo = hi > x: then no input gets the gradient.
    def dlo(self, m, gy, y, x, lo, hi):
        below = x < lo
        if self.has_max:
            below = below & (lo < hi)
        return m.where(below, gy, 0)

    def dhi(self, m, gy, y, x, lo, hi):
        above = x > hi
        if self.has_min:
            above = above | (hi < lo)
        return m.where(above, gy, 0)


def _or_nan(beyond, x, bound):
    """Where x is beyond the bound, or the bound is NaN: a NaN bound gives NaN, as numpy's
    maximum and minimum."""
    if isinstance(bound, (int, float)):  # a formula constant: known now
        return beyond if bound == bound else (x == x) | (x != x)
    return beyond | (bound != bound)


class Sign(Piecewise):
    on_bool = "sign is not defined for bool (as in numpy); use x.astype(int8) first"

    # Written out rather than numba's np.sign, which gave 255 for uint8 values >= 128 and
    # -0.0 for -0.0; x - x keeps NaN and makes -0.0 numpy's +0.0.
    def f(self, m, x):
        return m.where(x > 0, 1, m.where(x < 0, -1, x - x))


class Floor(Piecewise):
    quiet_kinds = "biuf"

    def f(self, m, x):
        return m.floor(x)


class Ceil(Piecewise):
    quiet_kinds = "biuf"

    def f(self, m, x):
        return m.ceil(x)


class Trunc(Piecewise):
    quiet_kinds = "biuf"

    def f(self, m, x):
        return m.trunc(x)


class Round(Piecewise):
    """Round half to even, as numpy's ``round`` (``decimals`` places)."""

    params = ("decimals",)

    def __init__(self, decimals: int = 0):
        self.decimals = int(decimals)

    def f(self, m, x):
        if self.decimals == 0:
            return m.rint(x)
        # numpy's steps: divide by 10 ** -decimals rather than multiply by its inexact
        # reciprocal; a scale beyond float64's range is inf (numpy's NaN), not an error.
        places = builtins.abs(self.decimals)
        scale = 10.0**places if places <= 308 else math.inf
        if self.decimals < 0:
            return m.rint(x / scale) * scale
        return m.rint(x * scale) / scale


class Isnan(Test):
    def f(self, m, x):
        return m.isnan(x)


class Isfinite(Test):
    def f(self, m, x):
        return m.isfinite(x)


class Isinf(Test):
    def f(self, m, x):
        return m.isinf(x)


class Signbit(Test):
    def f(self, m, x):
        return m.signbit(x)


class Spacing(Piecewise):
    """The distance from x to the next float away from zero (numpy's ``spacing``)."""

    result = "float"

    def f(self, m, x):
        return m.spacing(x + 0.0)  # (-0.0 + 0.0 is 0.0, whose spacing numpy gives)


class NanToNum(Elementwise):
    """x with NaN, +inf and -inf replaced by the constants ``nan``, ``posinf`` and
    ``neginf`` (operands, so new values reuse the kernel); the gradient flows where x is
    finite."""

    grad_rules = ("dx", None, None, None)

    def _dtype_operands(self, operands):
        return operands[:1]

    def f(self, m, x, nan, posinf, neginf):
        return m.where(
            x != x, nan, m.where(x == math.inf, posinf, m.where(x == -math.inf, neginf, x))
        )

    def dx(self, m, gy, y, x, nan, posinf, neginf):
        return m.where(m.isfinite(x), gy, 0)


class Invert(Unary):
    """~x: bitwise not of integers, logical not of bools (numpy's ``invert``)."""

    quiet_kinds = "biu"
    integer_only = True
    grad_rules = (None,)

    def f(self, m, x):
        return m.invert(x)


class LogicalNot(Test):
    def f(self, m, x):
        return m.logical_not(x)


negative = _op(
    Negative, "negative", "-x.", example=("jg.negative(jg.tensor([1, -2])).tolist()", "[-1, 2]")
)
positive = _op(
    Positive,
    "positive",
    "+x (a copy).",
    example=("jg.positive(jg.tensor([1, -2])).tolist()", "[1, -2]"),
)
exp = _op(
    Exp,
    "exp",
    "e ** x.",
    example=("jg.exp(jg.tensor([0.0, 1.0])).tolist()", "[1.0, 2.718281828459045]"),
)
expm1 = _op(
    Expm1,
    "expm1",
    "e ** x - 1, accurate near 0.",
    example=("jg.expm1(jg.tensor([0.0, 1e-10])).tolist()", "[0.0, 1.00000000005e-10]"),
)
log = _op(
    Log,
    "log",
    "Natural logarithm.",
    example=("jg.log(jg.tensor([1.0, 0.0])).tolist()", "[0.0, -inf]"),
)
log1p = _op(
    Log1p,
    "log1p",
    "log(1 + x), accurate near 0.",
    example=("jg.log1p(jg.tensor([0.0, 1e-10])).tolist()", "[0.0, 9.999999999500001e-11]"),
)
log2 = _op(
    Log2,
    "log2",
    "Base-2 logarithm.",
    example=("jg.log2(jg.tensor([1.0, 8.0])).tolist()", "[0.0, 3.0]"),
)
log10 = _op(
    Log10,
    "log10",
    "Base-10 logarithm.",
    example=("jg.log10(jg.tensor([1.0, 1000.0])).tolist()", "[0.0, 3.0]"),
)
sqrt = _op(
    Sqrt,
    "sqrt",
    "Square root.",
    example=("jg.sqrt(jg.tensor([4.0, 2.0])).tolist()", "[2.0, 1.4142135623730951]"),
)
square = _op(
    Square, "square", "x * x.", example=("jg.square(jg.tensor([3, -2])).tolist()", "[9, 4]")
)
reciprocal = _op(
    Reciprocal,
    "reciprocal",
    "1 / x.",
    example=("jg.reciprocal(jg.tensor([2.0, 4.0])).tolist()", "[0.5, 0.25]"),
)
sin = _op(
    Sin, "sin", "Sine.", example=("jg.sin(jg.tensor([0.0, jg.pi / 2])).tolist()", "[0.0, 1.0]")
)
cos = _op(
    Cos, "cos", "Cosine.", example=("jg.cos(jg.tensor([0.0, jg.pi])).tolist()", "[1.0, -1.0]")
)
tan = _op(
    Tan,
    "tan",
    "Tangent.",
    example=("jg.tan(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 1.5574077246549023]"),
)
arcsin = _op(
    Arcsin,
    "arcsin",
    "Inverse sine.",
    example=("jg.arcsin(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 1.5707963267948966]"),
)
arccos = _op(
    Arccos,
    "arccos",
    "Inverse cosine.",
    example=("jg.arccos(jg.tensor([1.0, 0.0])).tolist()", "[0.0, 1.5707963267948966]"),
)
arctan = _op(
    Arctan,
    "arctan",
    "Inverse tangent.",
    example=("jg.arctan(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 0.7853981633974483]"),
)
sinh = _op(
    Sinh,
    "sinh",
    "Hyperbolic sine.",
    example=("jg.sinh(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 1.1752011936438014]"),
)
cosh = _op(
    Cosh,
    "cosh",
    "Hyperbolic cosine.",
    example=("jg.cosh(jg.tensor([0.0, 1.0])).tolist()", "[1.0, 1.5430806348152437]"),
)
tanh = _op(
    Tanh,
    "tanh",
    "Hyperbolic tangent.",
    example=("jg.tanh(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 0.7615941559557649]"),
)
arctanh = _op(
    Arctanh,
    "arctanh",
    "Inverse hyperbolic tangent.",
    example=("jg.arctanh(jg.tensor([0.0, 0.5])).tolist()", "[0.0, 0.5493061443340549]"),
)
arcsinh = _op(
    Arcsinh,
    "arcsinh",
    "Inverse hyperbolic sine.",
    example=("jg.arcsinh(jg.tensor([0.0, 1.0])).tolist()", "[0.0, 0.881373587019543]"),
)
arccosh = _op(
    Arccosh,
    "arccosh",
    "Inverse hyperbolic cosine.",
    example=("jg.arccosh(jg.tensor([1.0, 2.0])).tolist()", "[0.0, 1.3169578969248168]"),
)
exp2 = _op(Exp2, "exp2", "2 ** x.")
cbrt = _op(Cbrt, "cbrt", "The real cube root (negative for negative x).")
deg2rad = _op(Deg2rad, "deg2rad", "Degrees to radians: x * pi / 180.")
rad2deg = _op(Rad2deg, "rad2deg", "Radians to degrees: x * 180 / pi.")
radians, degrees = deg2rad, rad2deg
fabs = _op(Fabs, "fabs", "|x| as a float (numpy's ``fabs``: no complex, integers give floats).")
sinc = _op(
    Sinc, "sinc", "sin(pi x) / (pi x), and 1 at 0: numpy's normalised ``sinc``.", numpy_name=""
)  # (numpy's sinc is a function, not a ufunc)
isinf = _op(
    Isinf,
    "isinf",
    "True where x is +inf or -inf.",
    example=("jg.isinf(jg.tensor([1.0, jg.nan, -jg.inf])).tolist()", "[False, False, True]"),
)
signbit = _op(
    Signbit,
    "signbit",
    "True where x's sign bit is set (-0.0 and -nan included).",
    example=("jg.signbit(jg.tensor([-0.0, 0.0, -1.0])).tolist()", "[True, False, True]"),
)
spacing = _op(Spacing, "spacing", "The distance from x to the next float away from zero.")
sigmoid = _op(Sigmoid, "sigmoid", "1 / (1 + e ** -x), computed without overflow.")
relu = _op(Relu, "relu", "max(x, 0).")
silu = _op(Silu, "silu", "x * sigmoid(x).")
softplus = _op(Softplus, "softplus", "log(1 + e ** x), computed without overflow.")
erf = _op(Erf, "erf", "The error function.")
floor = _op(
    Floor,
    "floor",
    "Largest integer <= x.",
    example=("jg.floor(jg.tensor([-1.5, 1.5])).tolist()", "[-2.0, 1.0]"),
)
ceil = _op(
    Ceil,
    "ceil",
    "Smallest integer >= x.",
    example=("jg.ceil(jg.tensor([-1.5, 1.5])).tolist()", "[-1.0, 2.0]"),
)
trunc = _op(
    Trunc,
    "trunc",
    "x rounded toward zero.",
    example=("jg.trunc(jg.tensor([-1.5, 1.5])).tolist()", "[-1.0, 1.0]"),
)
isnan = _op(
    Isnan,
    "isnan",
    "True where x is NaN.",
    example=("jg.isnan(jg.tensor([1.0, jg.nan, jg.inf])).tolist()", "[False, True, False]"),
)
isfinite = _op(
    Isfinite,
    "isfinite",
    "True where x is neither infinite nor NaN.",
    example=("jg.isfinite(jg.tensor([1.0, jg.nan, jg.inf])).tolist()", "[True, False, False]"),
)
invert = _op(
    Invert,
    "invert",
    "~x: bitwise not of integers, logical not of bools.",
    example=("jg.invert(jg.tensor([0, 5])).tolist()", "[-1, -6]"),
)
bitwise_not = invert
logical_not = _op(
    LogicalNot,
    "logical_not",
    "not x, elementwise, as bool.",
    example=("jg.logical_not(jg.tensor([True, False])).tolist()", "[False, True]"),
)


@ufunc(nin=1)
def abs(x):  # noqa: A001  numpy's spelling
    """|x|. Complex x gives real magnitudes of the same precision, as numpy.

    >>> import jitgrad as jg
    >>> jg.abs(jg.tensor([-2.0, 3.0])).tolist(), jg.abs(jg.tensor([3 + 4j])).dtype
    ([2.0, 3.0], jitgrad.float64)
    """
    if _is_complex(x):
        return ComplexAbs()(x)
    return _real_abs(x)


absolute = abs
_real_abs = entry(Abs)  # (a remembered call without the op object)


@ufunc(nin=1)
def sign(x):
    """-1, 0 or 1 (NaN stays NaN); for complex x, x / |x| (0 at 0), as numpy 2, and
    NaN + NaN j where either part is NaN, as the Array API standard says.

    >>> import jitgrad as jg
    >>> jg.sign(jg.tensor([-2.0, 0.0, 3.0])).tolist(), jg.sign(jg.tensor([3 + 4j, 0j])).tolist()
    ([-1.0, 0.0, 1.0], [(0.6+0.8j), 0j])
    """
    if _is_complex(x):
        return ComplexSign()(x)
    return Sign()(x)


def _complex_sign(z: np.ndarray) -> np.ndarray:
    # numpy's sign(nan + inf j) is 1j: the standard's answer is NaN + NaN j.
    with_nan = np.isnan(z.real) | np.isnan(z.imag)
    return np.where(with_nan, np.asarray(complex(np.nan, np.nan), z.dtype), np.sign(z))


def _is_complex(x) -> bool:
    return isinstance(x, complex) or getattr(getattr(x, "dtype", None), "kind", None) == "c"


@ufunc(nin=1, numpy_name="")  # (numpy's isneginf is a function, not a ufunc)
def isneginf(x):
    """True where x is -inf.

    >>> import jitgrad as jg
    >>> jg.isneginf(jg.tensor([-float("inf"), 0.0, float("inf")])).tolist()
    [True, False, False]
    """
    return logical_and(isinf(x), signbit(x))


@ufunc(nin=1, numpy_name="")
def isposinf(x):
    """True where x is +inf.

    >>> import jitgrad as jg
    >>> jg.isposinf(jg.tensor([-float("inf"), 0.0, float("inf")])).tolist()
    [False, False, True]
    """
    return logical_and(isinf(x), logical_not(signbit(x)))


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """x with NaN as ``nan``, +inf as ``posinf`` and -inf as ``neginf`` (by default the
    largest and the most negative finite value of x's dtype), numpy's ``nan_to_num``;
    ``copy=False`` writes into x. Integers and bools have none: a copy, or x itself.
    Complex x: the real and imaginary parts each. Differentiable where x is finite.

    >>> import jitgrad as jg
    >>> jg.nan_to_num(jg.tensor([float("nan"), float("inf"), -1.0]), posinf=9.0).tolist()
    [0.0, 9.0, -1.0]
    """
    t = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    if t.dtype.is_complex:
        replaced = functools.partial(np.nan_to_num, nan=nan, posinf=posinf, neginf=neginf)
        result = ComplexByNumpy(replaced)(t)
    elif t.dtype.kind in "biu":
        result = t
    else:
        info = np.finfo(t.dtype.numpy)
        big = float(info.max) if posinf is None else posinf
        small = float(info.min) if neginf is None else neginf
        result = NanToNum()(t, nan, big, small)
    if not copy:
        return _write("nan_to_num", t, result, None, "unsafe", t.requires_grad)
    return clone(result) if result is t else result


def leaky_relu(x, negative_slope: float = 0.01):
    """x where x > 0, else negative_slope * x."""
    return LeakyRelu(negative_slope)(x)


def gelu(x, approximate: str = "none"):
    """x·Φ(x) (``approximate="tanh"``: PyTorch's tanh approximation)."""
    return Gelu(approximate)(x)


def clip(x, /, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002  the standard's
    """x limited to [a_min, a_max], numpy's ``clip``: either bound may be None (both: a
    copy), a number or a tensor, broadcasting; the bounds take part in the result dtype.
    ``min=`` and ``max=`` are the standard's (and numpy 2's) names of the bounds.

    >>> import jitgrad as jg
    >>> jg.clip(jg.tensor([1, 5, 9], dtype=jg.uint8), -1, 4).tolist()
    [1, 4, 4]
    >>> jg.clip(jg.tensor([1.0, 5.0, 9.0]), max=6.0).tolist()
    [1.0, 5.0, 6.0]
    """
    if (min is not None and a_min is not None) or (max is not None and a_max is not None):
        raise TypeError("clip() got a bound twice: pass a_min or min=, a_max or max=, not both")
    a_min, a_max = a_min if min is None else min, a_max if max is None else max
    if a_min is None and a_max is None:
        return positive(x)
    return Clip(a_min is not None, a_max is not None)(
        x, 0 if a_min is None else a_min, 0 if a_max is None else a_max
    )


def round(x, /, decimals: int = 0):  # noqa: A001  numpy's spelling
    """Round half to even to ``decimals`` places. Integers and bools are whole already:
    to ``decimals >= 0`` places they come back as they are (a copy), as in numpy.

    >>> import jitgrad as jg
    >>> jg.round(jg.tensor([0.5, 1.5, 2.675]), 2).tolist(), jg.round(jg.tensor([2**53 + 1])).item()
    ([0.5, 1.5, 2.68], 9007199254740993)
    """
    if decimals >= 0 and getattr(getattr(x, "dtype", None), "kind", None) in ("b", "i", "u"):
        # rint would take them through float64, which rounds every integer beyond 2**53.
        return clone(x)
    return Round(decimals)(x)


@ufunc(nin=1)
def rint(x):
    """x rounded to the nearest integer, halves to even, numpy's ``rint``: integers and
    bools give floats (numpy's loops: float16 for 8-bit ones, float32 for 16-bit, float64
    beyond), complex x rounds both parts.

    >>> import jitgrad as jg
    >>> jg.rint(jg.tensor([-1.5, 0.5, 2.7])).tolist(), jg.rint(jg.tensor([3], dtype=jg.int8)).dtype
    ([-2.0, 0.0, 3.0], jitgrad.float16)
    """
    x = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    if x.dtype.kind == "c":
        return ComplexByNumpy(np.rint)(x)
    if x.dtype.kind in "biu":
        x = astype(x, np.rint.resolve_dtypes((x.dtype.numpy, None))[1])
    return Round()(x)


def fix(x, out=None):
    """x rounded toward zero, numpy's ``fix`` (``trunc``: integers stay integers);
    ``out=`` as in ``trunc``.

    >>> import jitgrad as jg
    >>> jg.fix(jg.tensor([-2.5, 2.5])).tolist()
    [-2.0, 2.0]
    """
    return trunc(x) if out is None else trunc(x, out=out)


around = round  # numpy's other spelling of round

__all__ = [
    "rint",
    "fix",
    "around",
    "negative",
    "positive",
    "abs",
    "absolute",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "square",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arctanh",
    "sigmoid",
    "relu",
    "leaky_relu",
    "gelu",
    "silu",
    "softplus",
    "erf",
    "sign",
    "floor",
    "ceil",
    "round",
    "trunc",
    "clip",
    "isnan",
    "isfinite",
    "logical_not",
    "invert",
    "bitwise_not",
    "arcsinh",
    "arccosh",
    "exp2",
    "cbrt",
    "deg2rad",
    "rad2deg",
    "radians",
    "degrees",
    "fabs",
    "sinc",
    "isinf",
    "signbit",
    "spacing",
    "isneginf",
    "isposinf",
    "nan_to_num",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "bitwise_invert",
]

# The Array API standard's spellings.
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh
bitwise_invert = invert
