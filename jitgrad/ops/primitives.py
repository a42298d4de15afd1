"""The primitives of elementwise formulas: one row each, the single place that names them.

Elementwise formulas (``elementwise.py``, ``unary.py``) call ``m.<name>(...)`` on a math
namespace ``m``, and a fused kernel body is a DAG of these names (``jit/ir.py``). Every
namespace and the kernel generator are built from this table:

- ``numpy``: the reference evaluator's function (``reference.py``, numpy over arrays);
- ``kernel``: the expression ``jit/codegen.py`` writes, a format string of the operands
  ``{0} {1} {2}``, the constants ``{one}`` and ``{zero}`` and the compute type ``{ct}``
  (``np.float32``...), with the modules ``np`` and ``math`` in scope;
- ``vmath``: the name of its vectorizable implementation in ``jit/vmath`` (``exp`` for
  ``exp_f32`` and ``exp_f64``), which a kernel's loop calls instead where it has one;
- ``owner``: the op class (in ``unary.py`` or ``elementwise.py``) whose gradient rules
  differentiate it in a fused kernel's DAG (``jit/composite.py``), and whose module
  holds the jitgrad function of the same name (``tensor_math.py``). Comparisons, tests and
  bitwise ops have owners whose rules are None: no gradient.

Names are numpy's (``negative``, ``subtract``, ``rint``); ``sigmoid``, ``softplus`` and
``erf``, which numpy lacks, are jitgrad's. Adding a primitive is one row here plus its op
class (``f`` and the gradient rules).
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Primitive:
    name: str
    arity: int
    numpy: Callable
    kernel: str
    owner: str  # "unary.Exp": module in jitgrad.ops, then class (imported lazily: the op
    # modules import the reference namespace, which this table builds)
    vmath: str | None = None

    @functools.cached_property
    def op_class(self) -> type:
        """The op class owning the gradient (``owner``, imported)."""
        module, cls = self.owner.split(".")
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls)

    @functools.cached_property
    def function(self) -> Callable:
        """jitgrad's function of this name, the op on tensors (``tensor_math``)."""
        return getattr(importlib.import_module(self.op_class.__module__), self.name)


_erf_object = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    # numpy has no erf: float32 and float16 take the kernels' float32 erf on arrays, others
    # math.erf (correctly rounded in double precision), one Python call an element.
    dtype = np.result_type(x, np.float32)
    if dtype == np.float32:
        from ..jit.vmath.special import erf_f32_of_array  # (jit builds on ops: a layer above)

        return erf_f32_of_array(x)
    return np.asarray(_erf_object(x), dtype=dtype)


def _sigmoid(x):
    # exp(-softplus(-x)) never overflows, for either sign of x.
    return np.exp(-np.logaddexp(0, -x))


def _softplus(x):
    return np.logaddexp(0, x)


def _power(a, b):
    # An array to a Python number's power as numpy's ``**`` computes it: its fast paths
    # (square for 2, sqrt for 0.5, reciprocal for -1) are what ``x ** 2`` gives in numpy,
    # and seven times faster on complex arrays than the general power.
    if a.__class__ is np.ndarray and (b.__class__ is int or b.__class__ is float):
        return a**b
    return np.power(a, b)


def _numpy_call(name: str, arity: int) -> str:
    return f"np.{name}({', '.join(f'{{{k}}}' for k in range(arity))})"


def _row(name, arity, kernel=None, owner=None, vmath=None, numpy=None) -> Primitive:
    """A row whose unspecified fields are numpy's: ``np.<name>`` evaluates it, a call of
    numba's ``np.<name>`` is its kernel code, and ``<Name>`` (in ``unary.py`` for one
    operand, ``elementwise.py`` for more) owns it."""
    if owner is None:
        cls = "".join(part.capitalize() for part in name.split("_"))  # floor_divide: FloorDivide
        owner = f"unary.{cls}" if arity == 1 else f"elementwise.{cls}"
    return Primitive(
        name,
        arity,
        getattr(np, name) if numpy is None else numpy,
        _numpy_call(name, arity) if kernel is None else kernel,
        owner,
        vmath,
    )


_ROWS = [
    # arithmetic
    _row("add", 2, "({0} + {1})"),
    _row("subtract", 2, "({0} - {1})"),
    _row("multiply", 2, "({0} * {1})"),
    _row("divide", 2, "({0} / {1})"),
    _row("power", 2, "({0} ** {1})", vmath="pow", numpy=_power),
    _row("floor_divide", 2, "({0} // {1})"),
    _row("remainder", 2, "({0} % {1})"),
    _row("negative", 1, "(-{0})"),
    _row("positive", 1, "{0}"),
    _row("abs", 1, "abs({0})"),
    _row("square", 1, "({0} * {0})"),
    _row("reciprocal", 1, "({one} / {0})"),
    # NaN in either operand propagates, as in numpy
    _row("maximum", 2, "({0} if ({0} >= {1} or {0} != {0}) else {1})"),
    _row("minimum", 2, "({0} if ({0} <= {1} or {0} != {0}) else {1})"),
    _row("fmax", 2),
    _row("fmin", 2),
    _row("fmod", 2),
    _row("hypot", 2),
    _row("copysign", 2),
    _row("nextafter", 2),
    _row("where", 3, "({1} if {0} else {2})"),
    # exponentials and logarithms
    _row("exp", 1, vmath="exp"),
    _row("expm1", 1, vmath="expm1"),
    _row("exp2", 1),
    _row("log", 1, vmath="log"),
    _row("log1p", 1, vmath="log1p"),
    _row("log2", 1),
    _row("log10", 1),
    _row("logaddexp", 2),
    _row("logaddexp2", 2),
    _row("sqrt", 1),
    _row("cbrt", 1),
    # trigonometric and hyperbolic
    _row("sin", 1, vmath="sin"),
    _row("cos", 1, vmath="cos"),
    _row("tan", 1),
    _row("arcsin", 1),
    _row("arccos", 1),
    _row("arctan", 1),
    _row("arctan2", 2),
    _row("sinh", 1),
    _row("cosh", 1),
    _row("tanh", 1, vmath="tanh"),
    _row("arcsinh", 1),
    _row("arccosh", 1),
    _row("arctanh", 1),
    # activations and special functions
    _row("sigmoid", 1, "({one} / ({one} + np.exp(-{0})))", vmath="sigmoid", numpy=_sigmoid),
    _row("softplus", 1, "np.logaddexp({zero}, {0})", vmath="softplus", numpy=_softplus),
    _row("erf", 1, "{ct}(math.erf({0}))", vmath="erf", numpy=_erf),
    # rounding and piecewise-constant functions (zero gradients)
    _row("sign", 1),
    _row("floor", 1),
    _row("ceil", 1),
    _row("trunc", 1),
    _row("rint", 1, owner="unary.Round"),
    _row("spacing", 1),
    # comparisons, tests and logic (no gradient)
    _row("equal", 2, "({0} == {1})"),
    _row("not_equal", 2, "({0} != {1})"),
    _row("less", 2, "({0} < {1})"),
    _row("less_equal", 2, "({0} <= {1})"),
    _row("greater", 2, "({0} > {1})"),
    _row("greater_equal", 2, "({0} >= {1})"),
    _row("logical_and", 2, "(({0} != 0) & ({1} != 0))"),
    _row("logical_or", 2, "(({0} != 0) | ({1} != 0))"),
    _row("logical_xor", 2, "(({0} != 0) != ({1} != 0))"),
    _row("logical_not", 1, "({0} == 0)"),
    _row("isnan", 1, "({0} != {0})"),
    _row("isfinite", 1),
    _row("isinf", 1),
    _row("signbit", 1),
    # bitwise (integers and bools)
    _row("bitwise_and", 2, "({0} & {1})"),
    _row("bitwise_or", 2, "({0} | {1})"),
    _row("bitwise_xor", 2, "({0} ^ {1})"),
    _row("invert", 1, "(~{0})"),
    _row("left_shift", 2, "({0} << {1})"),
    _row("right_shift", 2, "({0} >> {1})"),
]

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _ROWS}
"""Every primitive by name."""
