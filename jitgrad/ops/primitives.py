"""The primitives of elementwise formulas and the op that owns each one's gradient.

A fused kernel body is a DAG of these names (``jit/ir.py``); differentiating it applies,
per node, the gradient rules of the op written here. One line per rule, as data: a
primitive missing from this table has no gradient (comparisons, tests), and
piecewise-constant ones have a zero gradient.
"""

from . import elementwise as ew
from . import unary as un

GRADIENTS = {
    "add": ew.Add, "sub": ew.Subtract, "mul": ew.Multiply, "div": ew.Divide,
    "power": ew.Power, "maximum": ew.Maximum, "minimum": ew.Minimum, "arctan2": ew.Arctan2,
    "floor_divide": ew.FloorDivide, "remainder": ew.Remainder, "where": ew.Where,
    "neg": un.Negative, "negative": un.Negative, "positive": un.Positive, "abs": un.Abs,
    "exp": un.Exp, "expm1": un.Expm1, "log": un.Log, "log1p": un.Log1p, "log2": un.Log2,
    "log10": un.Log10, "sqrt": un.Sqrt, "square": un.Square, "reciprocal": un.Reciprocal,
    "sin": un.Sin, "cos": un.Cos, "tan": un.Tan, "arcsin": un.Arcsin, "arccos": un.Arccos,
    "arctan": un.Arctan, "sinh": un.Sinh, "cosh": un.Cosh, "tanh": un.Tanh,
    "arctanh": un.Arctanh, "sigmoid": un.Sigmoid, "softplus": un.Softplus, "erf": un.Erf,
    "sign": un.Sign, "floor": un.Floor, "ceil": un.Ceil, "trunc": un.Trunc, "rint": un.Round,
    "exp2": un.Exp2, "cbrt": un.Cbrt, "spacing": un.Spacing, "arcsinh": un.Arcsinh,
    "arccosh": un.Arccosh, "hypot": ew.Hypot, "copysign": ew.Copysign,
    "nextafter": ew.Nextafter, "logaddexp": ew.Logaddexp, "logaddexp2": ew.Logaddexp2,
    "fmod": ew.Fmod, "fmax": ew.Fmax, "fmin": ew.Fmin,
}  # fmt: skip
