"""The IR of fused kernels: a DAG of scalar operations.

Elementwise formulas (``ops/elementwise.py``) run unchanged on ``Expr`` values given the
``symbolic`` namespace below, the third namespace beside ``reference`` (numpy) and
``tensor_math`` (jitgrad ops). What they build is the body of one kernel: loads of input
elements, runtime scalar arguments, literals and operations.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass, field

import numpy as np

from ..ops.primitives import PRIMITIVES

_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class Expr:
    """One scalar value of a kernel body. Compared by identity: a DAG, not a tree."""

    op: str
    args: tuple = ()
    value: object = None  # input/scalar index, or the literal
    id: int = field(default_factory=lambda: next(_ids), repr=False)

    def _bin(self, op, other, swap=False):
        other = other if isinstance(other, Expr) else literal(other)
        return Expr(op, (other, self) if swap else (self, other))

    def __add__(self, o):
        return self._bin("add", o)

    def __radd__(self, o):
        return self._bin("add", o, True)

    def __sub__(self, o):
        return self._bin("subtract", o)

    def __rsub__(self, o):
        return self._bin("subtract", o, True)

    def __mul__(self, o):
        return self._bin("multiply", o)

    def __rmul__(self, o):
        return self._bin("multiply", o, True)

    def __truediv__(self, o):
        return self._bin("divide", o)

    def __rtruediv__(self, o):
        return self._bin("divide", o, True)

    def __floordiv__(self, o):
        return self._bin("floor_divide", o)

    def __rfloordiv__(self, o):
        return self._bin("floor_divide", o, True)

    def __mod__(self, o):
        return self._bin("remainder", o)

    def __rmod__(self, o):
        return self._bin("remainder", o, True)

    def __pow__(self, o):
        return self._bin("power", o)

    def __rpow__(self, o):
        return self._bin("power", o, True)

    def __neg__(self):
        return Expr("negative", (self,))

    def __abs__(self):
        return Expr("abs", (self,))

    def __pos__(self):
        return self

    def __lt__(self, o):
        return self._bin("less", o)

    def __le__(self, o):
        return self._bin("less_equal", o)

    def __gt__(self, o):
        return self._bin("greater", o)

    def __ge__(self, o):
        return self._bin("greater_equal", o)

    def __eq__(self, o):  # type: ignore[override]
        return self._bin("equal", o)

    def __ne__(self, o):  # type: ignore[override]
        return self._bin("not_equal", o)

    def __and__(self, o):
        return self._bin("logical_and", o)

    def __or__(self, o):
        return self._bin("logical_or", o)

    __hash__ = object.__hash__


def load(index: int) -> Expr:
    """Element ``i`` of input array ``index`` (cast to the compute dtype)."""
    return Expr("load", value=index)


def scalar(index: int) -> Expr:
    """Runtime scalar argument ``index`` (a user's constant: changing it never recompiles)."""
    return Expr("scalar", value=index)


def literal(value) -> Expr:
    """A constant of the formula itself (0.5 in gelu), written into the source."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"kernel literals are numbers, got {value!r}")
    return Expr("literal", value=value)


def _call(op: str, *args) -> Expr:
    arity = PRIMITIVES[op].arity
    if len(args) != arity:
        raise TypeError(f"{op} takes {arity} operands, got {len(args)}")
    return Expr(op, tuple(a if isinstance(a, Expr) else literal(a) for a in args))


class symbolic:  # noqa: N801  a namespace, used like a module
    """The math namespace that builds IR (same names as ``ops.reference``)."""

    pi = math.pi


for _name in PRIMITIVES:
    setattr(symbolic, _name, staticmethod(lambda *args, _op=_name: _call(_op, *args)))


def _sum_to(g, shape):
    # Reductions are not part of an elementwise body: the caller reduces afterwards.
    return g


symbolic.sum_to = staticmethod(_sum_to)
del _name

# jitgrad's elementwise ops called on Expr values evaluate their formula in this namespace.
Expr.formula_namespace = symbolic


def topological(outputs) -> list[Expr]:
    """Every node the outputs depend on, each once, operands before users."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack = [(e, False) for e in reversed(outputs)]
    while stack:
        e, expanded = stack.pop()
        if e.id in seen:
            continue
        if expanded:
            seen.add(e.id)
            order.append(e)
            continue
        stack.append((e, True))
        stack.extend((a, False) for a in reversed(e.args) if a.id not in seen)
    return order


# Python's operators, so that an operation of constants gives a number, not a tensor.
_OPERATORS = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "negative": operator.neg,
}


def evaluate(outputs, inputs: list, m, scalars=()) -> list:
    """Run the DAG on concrete values with the math namespace ``m`` (tensors and
    ``tensor_math`` give a recorded, differentiable result), ``scalars`` the values of its
    runtime scalars."""
    values: dict[int, object] = {}
    for e in topological(outputs):
        if e.op == "load":
            values[e.id] = inputs[e.value]
        elif e.op == "scalar":
            values[e.id] = scalars[e.value]
        elif e.op == "literal":
            values[e.id] = e.value
        else:
            args = [values[a.id] for a in e.args]
            fn = _OPERATORS.get(e.op) or getattr(m, e.op)
            values[e.id] = fn(*args)
    return [values[e.id] for e in outputs]


def shared(exprs: list) -> list:
    """``exprs`` with equal subexpressions made one node (recomputed values that several
    loads brought in are computed once)."""
    seen: dict[tuple, Expr] = {}
    memo: dict[int, Expr] = {}
    for e in topological(exprs):
        args = tuple(memo[a.id] for a in e.args)
        value = (type(e.value), e.value) if e.op == "literal" else e.value
        key = (e.op, tuple(a.id for a in args), value)
        new = seen.get(key)
        if new is None:
            new = e if all(a is b for a, b in zip(args, e.args)) else Expr(e.op, args, e.value)
            seen[key] = new
        memo[e.id] = new
    return [memo[e.id] for e in exprs]


def substitute(exprs: list, loads: dict, scalars: dict) -> list:
    """``exprs`` with the loads and scalars named in ``loads`` and ``scalars`` (by index)
    replaced by those expressions."""
    memo: dict[int, Expr] = {}
    for e in topological(exprs):
        if e.op == "load" and e.value in loads:
            new = loads[e.value]
        elif e.op == "scalar" and e.value in scalars:
            new = scalars[e.value]
        elif e.args and any(memo[a.id] is not a for a in e.args):
            new = Expr(e.op, tuple(memo[a.id] for a in e.args), e.value)
        else:
            new = e
        memo[e.id] = new
    return [memo[e.id] for e in exprs]
