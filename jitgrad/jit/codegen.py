"""Turn a kernel body (IR) into the Python source of one numba function.

Two loop shapes:

- ``flat``: every input is either laid out exactly like the (contiguous) output or is a
  single broadcast element, so one loop over ``n`` elements covers all of them;
- ``strided``: ``ndim`` nested loops (dimensions already merged as far as every operand
  allows) with runtime strides, which covers broadcasting (stride 0), transposes, steps
  and negative strides.

One function per kernel, ``serial``: a parallel launch runs it over shares of its outer loop
on several threads (``threads``), so nothing goes through numba's costly ``prange``
compilation. Sizes and strides are arguments, never literals, so one kernel serves every
shape with the same layout pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ops.primitives import PRIMITIVES
from . import ir


@dataclass(frozen=True)
class Signature:
    """Everything the source depends on besides the body: the cache key's skeleton."""

    # jitgrad dtype names: a float16 array arrives as its uint16 bits and is converted on
    # load and store, a uint16 array holds numbers. Never numpy's names of kernel arrays.
    input_dtypes: tuple[str, ...]
    bool_inputs: tuple[bool, ...]  # loaded as bool (conditions), not cast
    compute: str  # dtype the body computes in
    output_dtypes: tuple[str, ...]
    n_scalars: int
    loop: str  # "flat" or "strided"
    ndim: int  # strided loops only
    broadcast: tuple[bool, ...]  # flat loops: inputs that are one element
    inner: tuple[str, ...] = ()  # strided loops: each input's innermost stride, "unit",
    # "zero" or "any"
    # Flat loops: per output, the input whose memory it is (an in-place update), or None.
    # Storing through that input's own slice tells LLVM that each element is read, then
    # written, at one index; through a separate pointer, its overlap check fails at run
    # time and the scalar loop runs (an SGD update over 8192 float32: 4.4 -> ~1 us).
    aliases: tuple = ()


def generate(outputs: list[ir.Expr], sig: Signature) -> str:
    """Source of a module defining ``serial``, the kernel computing ``outputs``."""
    function = _function(outputs, sig)
    header = ["import math", "import numpy as np", "from numba import njit"]
    if "vm." in function:
        header.append("from jitgrad.jit import vmath as vm")
    header.append("from jitgrad.storage.convert import half_to_float, store, store_half")
    return "\n".join(header) + "\n\n\n" + function


def _function(outputs: list[ir.Expr], sig: Signature) -> str:
    body = _Body(sig)
    results = [body.value(e) for e in outputs]
    n_in = len(sig.input_dtypes)
    scalars = [f"s{j}" for j in range(sig.n_scalars)]
    outs = [f"out{k}" for k in range(len(outputs))]
    lines = ["@njit(cache=True, error_model='numpy', nogil=True)"]
    if sig.loop == "flat":
        params = ["n"] + [f"a{i}, o{i}" for i in range(n_in)] + scalars + outs
        lines.append(f"def serial({', '.join(params)}):")
        hoisted = [i for i in range(n_in) if sig.broadcast[i]]
        for i in hoisted:
            lines.append(f"    x{i} = {body.load(i, f'a{i}[o{i}]')}")
        lines.extend(f"    {line}" for line in body.prologue)
        for i in range(n_in):
            if i not in hoisted:
                # A slice taken once lets LLVM see unit-stride access: a0[o0 + i] in the loop
                # kept it from vectorising (4x slower at 2^18 float32, measured).
                lines.append(f"    v{i} = a{i}[o{i}:o{i} + n]")
        lines.append("    for i in range(n):")
        for i in range(n_in):
            if i not in hoisted:
                lines.append(f"        x{i} = {body.load(i, f'v{i}[i]')}")
        index = "i"
        indent = "        "
        targets = [
            outs[k] if j is None else f"v{j}"
            for k, j in enumerate(sig.aliases or [None] * len(outs))
        ]
    else:
        d = sig.ndim
        params = ["shape"] + [f"a{i}, o{i}, st{i}" for i in range(n_in)] + scalars + outs
        lines.append(f"def serial({', '.join(params)}):")
        for k in range(d):
            lines.append(f"    n{k} = shape[{k}]")
            for i in range(n_in):
                lines.append(f"    st{i}_{k} = st{i}[{k}]")
        lines.extend(f"    {line}" for line in body.prologue)
        indent = "    "
        for k in range(d - 1):
            lines.append(f"{indent}for i{k} in range(n{k}):")
            indent += "    "
            for i in range(n_in):
                base = f"o{i}" if k == 0 else f"b{i}_{k - 1}"
                lines.append(f"{indent}b{i}_{k} = {base} + i{k} * st{i}_{k}")
        # The innermost loop is where the time goes: operands with unit stride there are
        # sliced once per row and ones with stride 0 loaded once per row, so LLVM sees
        # plain unit-stride loops and vectorises them (a bias add over (64, 128) float32
        # went from 6.4 to about 1 us).
        last = d - 1
        row = "0"
        for k in range(last):
            row = f"i{k}" if k == 0 else f"({row}) * n{k} + i{k}"
        row = f"({row}) * n{last}" if last else "0"
        for k in range(len(outputs)):
            lines.append(f"{indent}w{k} = out{k}[{row}:{row} + n{last}]")
        for i, kind in enumerate(sig.inner):
            base = f"o{i}" if last == 0 else f"b{i}_{last - 1}"
            if kind == "unit":
                lines.append(f"{indent}v{i} = a{i}[{base}:{base} + n{last}]")
            elif kind == "zero":
                lines.append(f"{indent}x{i} = {body.load(i, f'a{i}[{base}]')}")
            else:
                lines.append(f"{indent}r{i} = {base}")
        lines.append(f"{indent}for i{last} in range(n{last}):")
        indent += "    "
        for i, kind in enumerate(sig.inner):
            if kind == "unit":
                lines.append(f"{indent}x{i} = {body.load(i, f'v{i}[i{last}]')}")
            elif kind == "any":
                element = f"a{i}[r{i} + i{last} * st{i}_{last}]"
                lines.append(f"{indent}x{i} = {body.load(i, element)}")
        index = f"i{last}"
        targets = [f"w{k}" for k in range(len(outputs))]
    lines.extend(f"{indent}{line}" for line in body.lines)
    for target, value, dtype in zip(targets, results, sig.output_dtypes):
        save = "store_half" if dtype == "float16" else "store"
        lines.append(f"{indent}{save}({target}, {index}, {value})")
    return "\n".join(lines) + "\n"


class _Body:
    """Straight-line code for the DAG, one local per shared node."""

    def __init__(self, sig: Signature, prefix: str = "t"):
        self.sig, self.prefix = sig, prefix
        self.lines: list[str] = []
        # Nodes that depend on scalars and literals only (an optimizer's bias corrections)
        # are computed once before the loop, with plain libm: no vectorised code to inline.
        self.prologue: list[str] = []
        self.invariant: set[int] = set()
        self.names: dict[int, str] = {}
        self.ct = f"np.{sig.compute}"
        self.suffix = {"float32": "f32", "float64": "f64"}.get(sig.compute)

    def load(self, i: int, element: str) -> str:
        dtype = self.sig.input_dtypes[i]
        if self.sig.bool_inputs[i] and dtype == "bool":
            return element
        if dtype == "float16":  # its bits: numba has no float16
            element = f"half_to_float({element})"
            dtype = "float32"
        return element if dtype == self.sig.compute else f"{self.ct}({element})"

    def value(self, e: ir.Expr) -> str:
        for node in ir.topological([e]):
            if node.id not in self.names:
                self.names[node.id] = self._emit(node)
        return self.names[e.id]

    def _emit(self, e: ir.Expr) -> str:
        if e.op == "load":
            return f"x{e.value}"
        if e.op == "scalar":
            return f"s{e.value}"
        if e.op == "literal":
            return self._literal(e.value)
        a = [self.names[arg.id] for arg in e.args]
        invariant = all(a.op in ("scalar", "literal") or a.id in self.invariant for a in e.args)
        code = self._expression(e.op, a, vectorised=not invariant)
        name = f"{self.prefix}{len(self.lines) + len(self.prologue)}"
        if invariant:
            self.invariant.add(e.id)
            self.prologue.append(f"{name} = {code}")
        else:
            self.lines.append(f"{name} = {code}")
        return name

    def _literal(self, value) -> str:
        # (numpy's scalars to Python's: their repr names their type)
        value = float(value) if isinstance(value, float) else int(value)
        text = repr(value)
        if text in ("inf", "-inf", "nan"):  # names no kernel module defines
            text = text.replace("inf", "np.inf").replace("nan", "np.nan")
        if self.sig.compute == "bool" or (
            isinstance(value, float) and self.sig.compute.startswith(("int", "uint"))
        ):
            return text
        return f"{self.ct}({text})"

    def _expression(self, op: str, a: list[str], vectorised: bool = True) -> str:
        """The code of primitive ``op`` on operands ``a``: where vectorised, its ``vmath``
        function for this precision if there is one, else its kernel expression. A few
        depend on the compute dtype or on a literal operand (``_SPECIAL``)."""
        primitive = PRIMITIVES.get(op)
        if primitive is None or len(a) != primitive.arity:
            raise NotImplementedError(f"no kernel code for the operation {op!r}")
        special = _SPECIAL.get(op)
        code = special(self, primitive, a) if special is not None else None
        if code is not None:
            return code
        if vectorised and primitive.vmath is not None and self.suffix is not None:
            from . import vmath

            fn = f"{primitive.vmath}_{self.suffix}"
            if hasattr(vmath, fn):
                return f"vm.{fn}({', '.join(a)})"
        return self._kernel(primitive, a)

    def _kernel(self, primitive, a: list[str]) -> str:
        return primitive.kernel.format(*a, one=self._literal(1), zero=self._literal(0), ct=self.ct)

    def _floor_divide(self, primitive, a: list[str]) -> str | None:
        if self.sig.compute == "int64":
            # numba's // of the int64 minimum by -1 overflows to 0; numpy's wraps to it
            return f"(-{a[0]} if {a[1]} == -1 else {self._kernel(primitive, a)})"
        return None

    def _power(self, primitive, a: list[str]) -> str | None:
        if a[1] in (self._literal(2), self._literal(2.0)):
            return f"({a[0]} * {a[0]})"
        if a[1] == self._literal(0.5):
            return f"np.sqrt({a[0]})"
        if self.sig.compute.startswith(("int", "uint")):
            return f"vm.ipow({a[0]}, {a[1]})"
        return None

    def _invert(self, primitive, a: list[str]) -> str | None:
        # ~ of a bool is an int in Python (and numba): not is numpy's
        return f"({a[0]} == 0)" if self.sig.compute == "bool" else None

    def _shift(self, primitive, a: list[str]) -> str:
        # A count outside [0, bits) is undefined behaviour in C and LLVM (x86 masks it to
        # its low bits); numpy defines it as every bit shifted out, sign bits in from the
        # left for signed values. numba widens small integers, so the width is the compute
        # dtype's: the store back wraps what went past it, as numpy's narrow shift does.
        bits = np.dtype(self.sig.compute).itemsize * 8
        in_range = f"({a[1]} >= 0 and {a[1]} < {bits})"
        signed_right = primitive.name == "right_shift" and self.sig.compute.startswith("int")
        out = f"({a[0]} >> {bits - 1})" if signed_right else self._literal(0)
        return f"({self._kernel(primitive, a)} if {in_range} else {out})"


# Primitives whose code depends on the compute dtype or on a literal operand: None falls
# back to the table's.
_SPECIAL = {
    "floor_divide": _Body._floor_divide,
    "power": _Body._power,
    "invert": _Body._invert,
    "left_shift": _Body._shift,
    "right_shift": _Body._shift,
}
