"""Elementwise ops: each is a forward formula and one gradient formula per input.

A formula is a method taking a math namespace ``m`` first. The forward always runs on the
reference namespace (numpy over arrays); the gradients run on it too, unless the backward
is itself being recorded (``create_graph=True``), when they run on ``tensor_math`` (jitgrad
ops) and so become differentiable. Gradient formulas see ``gy`` (the incoming gradient),
``y`` (the output, for ops with ``saves_output``) and the inputs; broadcasting is undone
by ``sum_to`` here, once, for every op.

Complex operands compute on numpy, and every op that takes them is holomorphic where it
is differentiable: PyTorch's gradient is ``gy`` times the conjugate of the derivative,
which is ``conj(rule(conj(gy)))`` for a rule ``gy * derivative``; a real input of a complex
result takes that gradient's real part.
"""

from __future__ import annotations

import math
import operator
import weakref

import numpy as np

from .. import backend, dtypes, tiers
from .._config import config
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.tensor import Tensor, as_tensor
from ..recording import compute, run
from ..strided import layout
from ..tensor import wrap_numpy
from . import numpy_tier, reference
from .movement import astype
from .numpy_tier import tensor_over
from .sorting import nonzero
from .ufunc import make_ufunc, ufunc


class Elementwise(Function):
    """The evaluator shared by every elementwise op.

    ``result`` says how the output dtype follows the promoted inputs: ``"same"``,
    ``"float"`` (integers become numpy's float for that function: float16 for ``exp`` of
    int8, float64 for true division) or
    ``"bool"`` (comparisons and tests: never differentiable). ``on_bool`` is what bool
    operands alone give where numpy's answer is not bool: ``"int8"`` (floor division,
    remainder, power) or the message of the TypeError numpy raises (subtract, negative).
    ``integer_only`` ops (bitwise) refuse float and complex operands, as numpy does.
    """

    result = "same"
    _lowered = True  # the forward ran a kernel (``forward`` says; known calls always do)
    on_bool: str | None = None
    integer_only = False
    saves_output = False
    differentiates_complex = True
    # The kinds of the dtype the formula computes in ("b", "i", "u", "f") for which numpy
    # raises no floating-point error on any values: its error state need not be set.
    quiet_kinds = ""
    # The op on Python floats, where Python computes numpy's float64 result (IEEE
    # arithmetic and comparisons): the numpy tier's calls of 0-d float64 tensors use it.
    on_python_floats = None
    # The call's description, set by each call and read by the tier that runs it (the
    # numpy tier, or the kernel ``Backend``): per operand, ``slots`` its index among the
    # tensor inputs or None for a constant, and ``constants`` the constant's value or None
    # for a tensor; ``result_dtype`` the promoted dtype the formula computes in. The tier
    # leaves what it decided for this signature in ``decision``; ``known_call`` is the
    # signature's remembered record, for calls that dispatch through the memo.
    slots: list | tuple
    constants: list | tuple
    result_dtype: dtypes.DType
    decision = None
    known_call: _KnownCall | None = None
    _y = _y_storage = None  # the output, saved by ops with saves_output
    _recomputed_from: tuple = ()  # the inputs the backward recomputes y from
    grad_rules: tuple[str | None, ...] = ()
    params: tuple[str, ...] = ()  # attributes that change the formula (part of kernel keys)

    def __call__(self, *inputs):
        # A call whose signature was seen launches the remembered kernel and records, in
        # this one frame and one pass over the inputs: this is the per-op hot path.
        if config.tracing and config.thread.tape is not None:  # a trace keeps every launch
            return self._call_first(inputs, None)  # with its body, for fusion
        signature, recording = (type(self),), False
        if self.params:
            signature += tuple(getattr(self, name) for name in self.params)
        for x in inputs:
            kind = type(x)
            if kind is Tensor or isinstance(x, Tensor):
                signature += (x._storage.dtype, x._shape, x._strides)
                recording = recording or x._requires_grad
            elif kind in _CONSTANT_TYPES:
                signature += (kind,)
            else:
                return self._call_first(inputs, None)
        if recording:  # (calls that may record take kernels, whose backward is fused)
            signature += (True,)
        known = tiers.calls.get(signature)
        if known is None:
            return self._call_first(inputs, signature)
        self.result_dtype, self.slots, self.known_call = known.dtype, known.slots, known
        at = known.tensor_at
        if at is None:  # every operand a tensor: most calls
            tensors, self.constants = inputs, known.no_constants
        elif at.__class__ is int and not known.converts:  # one tensor, constants as they are
            tensors, self.constants = (inputs[at],), list(inputs)
            self.constants[at] = None
        else:
            tensors = (inputs[at],) if at.__class__ is int else at(inputs)
            self.constants = [
                None if slot is not None else self._constant(x)
                for x, slot in zip(inputs, known.slots)
            ]
        out = known.decision.launch(self, tensors)
        if self.saves_output:
            self._y_storage, self._y_version = out._storage, 0  # (a new storage)
        if recording and known.differentiable and config.thread.grad_enabled:
            self._link(tensors, known.output_meta, (weakref.ref(out),))
            out._grad_fn, out._requires_grad = self, True
        return out

    def _call_first(self, inputs, signature):
        """A call of a new signature (or of one not to be remembered): work out the result
        dtype and the tensors' places, run, and remember what the call decided."""
        for x in inputs:
            # Symbolic values (the JIT's IR) build a kernel body from the same formula.
            namespace = getattr(type(x), "formula_namespace", None)
            if namespace is not None:
                return self.f(namespace, *inputs)
        operands = [np.asarray(x) if isinstance(x, (list, tuple)) else x for x in inputs]
        common = dtypes.result_type(*self._dtype_operands(operands))
        if common is dtypes.bool_ and self.on_bool is not None:
            if self.on_bool != "int8":
                raise TypeError(self.on_bool)
            common = dtypes.int8
        if self.integer_only and common.kind not in "bui":
            raise TypeError(
                f"{_name(self)} is only defined for bool and integer operands (as in numpy), "
                f"got {', '.join(dtypes.result_type(x).name for x in operands)}"
            )
        if self.result == "float" and not (common.is_floating_point or common.is_complex):
            common = _float_result(self, common)
        self.result_dtype = common
        # Tensors are the graph's inputs. Python scalars stay constants of the formula,
        # where numpy and jitgrad ops both treat them as weak (NEP 50): no tensor is made.
        self.slots, self.constants, tensors = [], [], []
        for x in operands:
            if isinstance(x, (bool, int, float, complex)):
                self.slots.append(None)
                self.constants.append(self._constant(x))
            else:
                self.slots.append(len(tensors))
                self.constants.append(None)
                tensors.append(as_tensor(x))
        self.decision = self.known_call = None
        out = super().__call__(*tensors)
        if signature is not None and self.decision is not None:
            converts = (
                type(self)._constant is not Elementwise._constant
                or self.result_dtype is dtypes.float16
            )
            self.known_call = _KnownCall(
                self.result_dtype, tuple(self.slots), self.decision, converts, out
            )
            tiers.remember(signature, self.known_call)
        return out

    def _dtype_operands(self, operands):
        return operands

    def _constant(self, value):
        """A Python scalar operand as the formula's constant, once the result dtype
        (``self.result_dtype``) is known: the value itself, but for float16, where numpy (NEP 50)
        converts it to float16 first (1.0 + 2049 is 2048; 70000.0 is inf), though the
        kernel computes in float32."""
        if self.result_dtype is dtypes.float16 and isinstance(value, (int, float)):
            if not isinstance(value, bool):
                with np.errstate(over="ignore"):
                    return float(np.float16(value))
        return value

    def keeps_bool(self, position: int) -> bool:
        return False

    def _args(self, values, as_arrays: bool):
        """The formula's arguments: the inputs (tensors, or their numpy arrays cast to the
        compute dtype) with the constants back in their places."""
        # float16 is computed in float32 and rounded once at the end, as the kernels do.
        compute_dtype = (
            np.float32 if self.result_dtype is dtypes.float16 else self.result_dtype.numpy
        )
        args = []
        for position, (slot, constant) in enumerate(zip(self.slots, self.constants)):
            if slot is None:
                args.append(constant)
            elif not as_arrays:
                args.append(values[slot])
            else:
                a = values[slot]
                if a.dtype != compute_dtype and not (
                    a.dtype == np.bool_ and self.keeps_bool(position)
                ):
                    a = a.astype(compute_dtype)
                args.append(a)
        return args

    def forward(self, *xs):
        kernels = backend.kernels()
        self._lowered = kernels is not None
        # The numpy tier for calls of tensors that require no grad (a recorded call's
        # backward is one fused kernel) outside traces (which fuse kernels).
        # Larger work runs there too until its signature is called again: a one-off call
        # never waits for a compile (numpy_tier.UntilCompiled).
        if self._lowered and config.thread.tape is None and not any(x._requires_grad for x in xs):
            shape = layout.broadcast_shapes(*(x._shape for x in xs))
            fits = numpy_tier.fits(numpy_calls(type(self)), layout.numel(shape))
            if fits or numpy_tier.compiles_later():
                out_dtype = dtypes.bool_ if self.result == "bool" else self.result_dtype
                launch = numpy_tier.ElementwiseLaunch(self, out_dtype, shape, xs)
                self.decision = launch if fits else numpy_tier.UntilCompiled(launch)
                out = self.decision.launch(self, xs)
                if self.saves_output:
                    self._y_storage, self._y_version = out._storage, 0
                return out
        if self._lowered:  # the lowering checks that the shapes broadcast
            out = kernels.elementwise_forward(self, xs)
            if out is not None:
                if self.saves_output:
                    self._y_storage, self._y_version = out._storage, out._storage._version
                return out
            self._lowered = False
        layout.broadcast_shapes(*(x.shape for x in xs))  # names the shapes on mismatch
        y = compute(self._reference_forward, *(x.numpy() for x in xs))
        out = wrap_numpy(y, Tensor)
        if self.saves_output:
            self._y, self._y_storage = y, out._storage
            self._y_version = out._storage._version
        return out

    def _reference_forward(self, *arrays):
        with np.errstate(all="ignore"):
            y = np.asarray(self.f(reference, *self._args(arrays, as_arrays=True)))
        out = dtypes.bool_ if self.result == "bool" else self.result_dtype
        return y.astype(out.numpy, copy=False)

    def backward(self, gy):
        xs = self.inputs
        # The kernel and create_graph recompute y from the inputs; once those were changed
        # in place, y is read from the saved output instead (as PyTorch, which saves it).
        from_output = self.saves_output and self._recompute_is_stale()
        if self._lowered and not config.thread.grad_enabled and not from_output:
            return backend.kernels().elementwise_backward(self, xs, gy)
        grads = [None] * len(xs)
        for rule, slot in zip(self.grad_rules, self.slots):
            if rule is None or slot is None or not xs[slot].requires_grad:
                continue
            x = xs[slot]
            if is_grad_enabled():  # create_graph: the gradient is built from recorded ops
                g = self._recorded_gradient(rule, gy, x)
            else:
                y = self._saved_output() if self.saves_output else None
                if y is not None and self._y_storage._version != self._y_version:
                    # (changed in place since: recomputed from the inputs, as kernels do)
                    y = self._reference_forward(*(x.numpy() for x in xs))
                arrays = (x.numpy() for x in xs)
                g = wrap_numpy(
                    compute(self._reference_gradient, rule, x, gy.numpy(), y, *arrays), Tensor
                )
            grads[slot] = g if grads[slot] is None else grads[slot] + g
        return tuple(grads)

    def _recorded_gradient(self, rule: str, gy, x):
        from . import tensor_math as m  # (the ops of the rules: built on this module)

        args = self._args(self.inputs, as_arrays=False)
        y = self.f(m, *args) if self.saves_output else None
        if self.result_dtype.is_complex:
            from .complex_parts import conj  # (built on this module)

            g = conj(getattr(self, rule)(m, conj(gy), y, *args))
        else:
            g = getattr(self, rule)(m, gy, y, *args)
        g = m.sum_to(g, x.shape)
        if g.dtype.is_complex and not x.dtype.is_complex:
            g = g.real
        return g if g.dtype is x.dtype else g.astype(x.dtype)

    def _reference_gradient(self, rule: str, x, gy, y, *arrays):
        with np.errstate(all="ignore"):
            args = self._args(arrays, as_arrays=True)
            if self.result_dtype.is_complex:
                g = np.conj(getattr(self, rule)(reference, np.conj(gy), y, *args))
            else:
                g = getattr(self, rule)(reference, gy, y, *args)
            g = reference.sum_to(g, x.shape)
            return np.asarray(np.real(g) if x.dtype.kind != "c" else g, dtype=x.dtype.numpy)

    def _apply(self, gys, retain_graph: bool, create_graph: bool):
        # The eager hot path, in one frame: a known call's gradients from its kernel, when
        # none of the inputs the kernel reads (those its rules read, those y is recomputed
        # from) changed since the forward. Anything else (a first call, a recorded
        # backward, an input changed in place) takes Function's path, which names the
        # error or reads the saved output instead.
        known, xs = self.known_call, self.inputs
        if known is not None and xs is not None and not create_graph:
            gy, mask = gys[0], ()
            for x in xs:  # (a loop: no comprehension frame per op)
                mask += (x._requires_grad,)
            decided = known.backward.get((mask, gy._storage.dtype, gy._shape, gy._strides))
            if decided is not None and not (config.tracing and config.thread.tape is not None):
                versions = self._versions
                for i in decided.reads:
                    if xs[i]._storage._version != versions[i]:
                        break
                else:
                    grads = decided.launch(self, xs, gy)
                    if not retain_graph:  # (``_release`` inline)
                        self.inputs = self._y = self._y_storage = None
                    return grads
        return super()._apply(gys, retain_graph, create_graph)

    def _inputs_read_by_backward(self):
        known = self.known_call
        if known is None:
            found = self._find_inputs_read()
        else:
            mask = ()
            for x in self.inputs:  # (a loop: no comprehension frame per op)
                mask += (x._requires_grad,)
            found = known.reads.get(mask)
            if found is None:
                found = known.reads[mask] = self._find_inputs_read()
        self._recomputed_from = found[1]
        if (
            found[1]
            and self._recompute_is_stale()
            and (self._y_storage._version != self._y_version or is_grad_enabled())
        ):
            # Neither the inputs nor the output hold the forward's values any more (or the
            # backward is recorded, which needs y's history): the check raises for them.
            return sorted({*found[0], *found[1]})
        return found[0]

    def _find_inputs_read(self):
        """(the inputs the gradient rules read, the inputs y is recomputed from when a rule
        reads y, both together)"""
        reads = _rule_reads(type(self))
        needed, reads_y = set(), False
        for rule, slot in zip(self.grad_rules, self.slots):
            if rule is not None and slot is not None and self.inputs[slot].requires_grad:
                needed |= {
                    self.slots[p] for p in reads[rule] if p != _Y and self.slots[p] is not None
                }
                reads_y = reads_y or _Y in reads[rule]
        recomputed = tuple(s for s in self.slots if s is not None) if reads_y else ()
        return sorted(needed), recomputed, sorted({*needed, *recomputed})

    def _recompute_is_stale(self) -> bool:
        """Whether an input that y is recomputed from was changed in place since the
        forward (a recomputed y would then be wrong)."""
        for i in self._recomputed_from:
            if self.inputs[i]._storage._version != self._versions[i]:
                return True
        return False

    def _saved_output(self):
        if self._y is None:  # a kernel's output: its memory, unchanged (versions checked)
            shape = self._output_meta[0][0]
            strides = layout.contiguous_strides(shape)
            self._y = Tensor._make(self._y_storage, shape, strides, 0).numpy()
        return self._y

    def _release(self) -> None:  # (``_apply``'s fast path does the same, inline)
        self._y = self._y_storage = None


# -- eager dispatch ---------------------------------------------------------------------------
# Eager code calls the same op on the same kind of operands over and over. What a call
# decides from its operands (the result dtype, where the tensors sit among the arguments,
# the kernel and its loop layout) is remembered per call signature: the op, its parameters,
# each tensor's dtype, shape and strides and each constant's Python type. A repeated call
# then only allocates its output, launches and records: the per-op overhead is what eager
# autograd is judged by. (Constants' values are not part of it: NEP 50 promotion looks at
# their type, and a value out of an integer dtype's range still fails converting. Nor are
# the default dtype and the backend, which decide too: changing them empties the memo.)


class _KnownCall:
    """What calls of one signature share: the result dtype, the tensors' places among the
    arguments, the forward kernel's decision, whether constants go through ``_constant``,
    per set of inputs requiring grad the inputs the backward reads, and the backward
    kernels' decisions (by that set and the incoming gradient's dtype and layout)."""

    __slots__ = (
        "dtype",
        "slots",
        "decision",
        "converts",
        "reads",
        "backward",
        "differentiable",
        "output_meta",
        "tensor_at",
        "no_constants",
        "direct",
    )

    def __init__(self, dtype, slots, decision, converts, out):
        """``out``: the first call's output (its shape and dtype are every call's)."""
        self.dtype, self.slots, self.reads = dtype, slots, {}
        self.converts, self.backward = converts, {}
        self.no_constants = (None,) * len(slots)  # (the constants of calls without any)
        # Where the call's tensors are among its operands: None when all are tensors, the
        # place of the one tensor, or a getter of their tuple (empty for constants alone).
        positions = [p for p, slot in enumerate(slots) if slot is not None]
        if len(positions) == len(slots):
            self.tensor_at = None
        elif len(positions) == 1:
            self.tensor_at = positions[0]
        elif not positions:
            self.tensor_at = _no_tensors
        else:
            self.tensor_at = operator.itemgetter(*positions)
        out_dtype = out._storage.dtype
        # Integer and bool outputs never carry gradients.
        self.differentiable = out_dtype.kind in "fc"
        self.output_meta = ((out._shape, out_dtype),)
        self.use(decision)

    def use(self, decision) -> None:
        """Make ``decision`` the signature's, with ``direct``: the numpy tier's call of the
        operands as given, for calls that record nothing (``entry``); None where a call
        needs the op (kernels, converted constants)."""
        self.decision, self.direct = decision, None
        if decision.__class__ is numpy_tier.ElementwiseLaunch and not self.converts:
            self.direct = decision.direct


def _no_tensors(inputs) -> tuple:
    return ()


_CONSTANT_TYPES = (float, int, bool)


class _Trace:
    """What running a formula on probes saw: the inputs it read, and how many numpy calls
    the reference evaluator would make for it."""

    def __init__(self):
        self.reads: set[int] = set()
        self.calls = 0


class _Probe:
    """A stand-in value that records which inputs a formula reads and counts the
    operations applied to it."""

    def __init__(self, trace: _Trace, index: int | None = None):
        self.trace, self.index = trace, index

    def _combine(self, *others):
        _mark(self.trace, (self, *others), 1)
        return _Probe(self.trace)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _combine
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __pos__ = _combine
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __abs__ = __invert__ = _combine
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _combine
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _combine
    __hash__ = object.__hash__


class _ProbeMath:
    """The formula namespace of probes: a function that is one numpy ufunc in the
    reference evaluator counts one call, one written from several counts ``_HEAVY``."""

    def __init__(self, trace: _Trace):
        self.trace = trace

    def __getattr__(self, name):
        value = getattr(reference, name)
        if not callable(value):
            return value
        weight = 1 if isinstance(value, np.ufunc) or name in _ONE_NUMPY_CALL else _HEAVY

        def call(*args):
            _mark(self.trace, args, weight)
            return _Probe(self.trace)

        return call


_HEAVY = 8  # numpy calls counted for a reference function written from several
_ONE_NUMPY_CALL = ("where", "power")  # reference functions that are one numpy call each


def _mark(trace: _Trace, values, calls: int) -> None:
    trace.calls += calls
    trace.reads.update(v.index for v in values if isinstance(v, _Probe) and v.index is not None)


def _probe_op(cls):
    probe = cls.__new__(cls)
    probe.__dict__.update(_PROBE_PARAMETERS)
    return probe


_Y = -1  # the output y among a rule's reads


def _rule_reads(cls) -> dict[str, set[int]]:
    """For each gradient rule of ``cls``, the inputs it reads (and ``_Y`` when it reads the
    output), found by running the rule once on probes (rules are straight-line formulas, so
    one run sees every read). Cached on the class."""
    table = cls.__dict__.get("_reads")
    if table is None:
        arity = len(cls.grad_rules)
        table = {}
        for rule in filter(None, cls.grad_rules):
            trace = _Trace()
            getattr(cls, rule)(
                _probe_op(cls),
                _ProbeMath(trace),
                _Probe(trace),
                _Probe(trace, _Y),
                *(_Probe(trace, i) for i in range(arity)),
            )
            table[rule] = trace.reads
        cls._reads = table
    return table


def numpy_calls(cls) -> int:
    """How many numpy calls the reference evaluator makes for one evaluation of ``cls``'s
    formula, found by running it once on probes; cached on the class. (The numpy tier
    weighs an op's work by it: ``numpy_tier.fits``.)"""
    calls = cls.__dict__.get("_numpy_calls")
    if calls is None:
        trace = _Trace()
        cls.f(
            _probe_op(cls),
            _ProbeMath(trace),
            *(_Probe(trace, i) for i in range(len(cls.grad_rules))),
        )
        cls._numpy_calls = calls = max(trace.calls, 1)
    return calls


# Parameters of parametrised ops take these values while probing; reads don't depend on them.
_PROBE_PARAMETERS = {
    "negative_slope": 0.01,
    "approximate": "none",
    "has_min": True,
    "has_max": True,
    "decimals": 0,
}


class Unary(Elementwise):
    grad_rules = ("dx",)


class Binary(Elementwise):
    grad_rules = ("da", "db")


class Comparison(Binary):
    quiet_kinds = "biuf"
    result = "bool"
    grad_rules = (None, None)
    beyond_int64 = True  # logical ops: numpy raises OverflowError for ints beyond int64

    def __call__(self, *inputs):
        # numpy 2 compares a Python int beyond the other operand's integer range as the
        # number it is (uint8 == -1 is False, int8 < 300 True), where arithmetic raises
        # OverflowError. Such a call compares in int64, or beyond it in float64 with the
        # int as infinity: every int64 lies on the same side of both.
        if int not in map(type, inputs):  # (most comparisons: nothing to look at)
            return super().__call__(*inputs)
        for k, x in enumerate(inputs):
            other = inputs[1 - k] if len(inputs) == 2 else None
            if type(x) is not int or not isinstance(other, (Tensor, np.ndarray, np.generic)):
                continue
            d = dtypes.as_dtype(other.dtype)
            if not (d.is_integer or d is dtypes.bool_):
                continue
            info = np.iinfo(d.numpy if d.is_integer else np.int64)  # (bool with int: int64)
            if info.min <= x <= info.max:
                continue
            wide = dtypes.int64 if -(2**63) <= x < 2**63 else dtypes.float64
            if wide is dtypes.float64 and (d is dtypes.bool_ or not self.beyond_int64):
                name = d.name if d.is_integer else "int64"
                raise OverflowError(f"Python integer {x} out of bounds for {name} (as numpy)")
            operands = list(inputs)
            operands[k] = x if wide is dtypes.int64 else math.inf if x > 0 else -math.inf
            operands[1 - k] = as_tensor(other).astype(wide)
            return type(self)()(*operands)
        return super().__call__(*inputs)


class Test(Unary):
    result = "bool"
    grad_rules = (None,)
    quiet_kinds = "biuf"  # (isnan, isfinite, isinf, signbit, logical_not: no arithmetic)


class Piecewise(Unary):
    """Piecewise-constant ops: their gradient is zero wherever it exists (PyTorch)."""

    needs_input_values = False

    def dx(self, m, gy, y, x):
        return gy * 0


def _float_result(op: Elementwise, common: dtypes.DType) -> dtypes.DType:
    """The dtype of a float function of integers or bools, numpy's: its ufunc's loop
    (``exp`` of int8 is float16, true division float64); for functions numpy lacks
    (``sigmoid``), the smallest float that holds the operands' values."""
    ufunc = getattr(np, _name(op), None)
    if isinstance(ufunc, np.ufunc):
        try:
            loop = ufunc.resolve_dtypes((common.numpy,) * ufunc.nin + (None,) * ufunc.nout)
            return dtypes.from_numpy_dtype(loop[-1])
        except (TypeError, np._core._exceptions._UFuncNoLoopError):
            pass
    return dtypes.promote_types(common, dtypes.float16)


def _name(op: Elementwise) -> str:
    """The op's function name (``BitwiseAnd`` -> ``bitwise_and``), for messages."""
    return "".join("_" + c.lower() if c.isupper() else c for c in type(op).__name__)[1:]


def _op(cls, name: str, doc: str, numpy_name: str | None = None, example=None):
    """The function users call: ``cls``'s op as a ufunc (``ufunc.make_ufunc``) calling
    ``entry(cls)`` without keywords, its docstring ``doc`` and the ``example`` (a call and
    its result shown)."""
    return make_ufunc(
        name,
        len(cls.grad_rules),
        doc,
        cls.__module__,
        plain=entry(cls),
        numpy_name=numpy_name,
        example=example,
    )


def entry(cls):
    """The call of ``cls``'s op on its operands. A call that records nothing (no tensor
    requires grad, no trace runs) of a signature seen before, with tensors of type Tensor
    and Python numbers, runs its remembered numpy-tier launch (``_KnownCall.direct``)
    without making the op: the per-call path of small eager work. Any other call is the
    op's. The signature is the one ``Elementwise.__call__`` remembers calls by."""
    if cls.params or len(cls.grad_rules) not in (1, 2):

        def call(*operands):
            return cls()(*operands)

        return call
    known_calls, constant_types = tiers.calls, _CONSTANT_TYPES

    if len(cls.grad_rules) == 1:

        def call(x):
            if x.__class__ is Tensor and not x._requires_grad and not config.tracing:
                known = known_calls.get((cls, x._storage.dtype, x._shape, x._strides))
                if known is not None and known.direct is not None:
                    return known.direct(x)
            return cls()(x)

        return call

    def call(x1, x2):
        if not config.tracing:
            known, kind1, kind2 = None, x1.__class__, x2.__class__
            if kind1 is Tensor:
                if kind2 is Tensor:
                    if not (x1._requires_grad or x2._requires_grad):
                        known = known_calls.get(
                            (
                                cls,
                                x1._storage.dtype,
                                x1._shape,
                                x1._strides,
                                x2._storage.dtype,
                                x2._shape,
                                x2._strides,
                            )
                        )
                elif kind2 in constant_types and not x1._requires_grad:
                    signature = (cls, x1._storage.dtype, x1._shape, x1._strides, kind2)
                    known = known_calls.get(signature)
            elif kind2 is Tensor and kind1 in constant_types and not x2._requires_grad:
                known = known_calls.get((cls, kind1, x2._storage.dtype, x2._shape, x2._strides))
            if known is not None and known.direct is not None:
                return known.direct(x1, x2)
        return cls()(x1, x2)

    return call


# -- arithmetic ----------------------------------------------------------------------------


class Add(Binary):
    on_python_floats = operator.add
    quiet_kinds = "biu"
    needs_input_values = False

    def f(self, m, a, b):
        return a + b

    def da(self, m, gy, y, a, b):
        return gy

    def db(self, m, gy, y, a, b):
        return gy


class Subtract(Binary):
    on_python_floats = operator.sub
    quiet_kinds = "biu"
    needs_input_values = False
    on_bool = (
        "boolean subtract, the `-` operator, is not supported (as in numpy); use "
        "logical_xor, the `^` operator, instead"
    )

    def f(self, m, a, b):
        return a - b

    def da(self, m, gy, y, a, b):
        return gy

    def db(self, m, gy, y, a, b):
        return -gy


class Multiply(Binary):
    on_python_floats = operator.mul
    quiet_kinds = "biu"

    def f(self, m, a, b):
        return a * b

    def da(self, m, gy, y, a, b):
        return gy * b

    def db(self, m, gy, y, a, b):
        return gy * a


class Divide(Binary):
    on_python_floats = operator.truediv
    result = "float"

    def f(self, m, a, b):
        return a / b

    def da(self, m, gy, y, a, b):
        return gy / b

    def db(self, m, gy, y, a, b):
        return -gy * a / (b * b)


class Power(Binary):
    saves_output = True
    on_bool = "int8"

    def __call__(self, a, b):
        # numpy refuses negative integer exponents of integers (kernels would give garbage):
        # checked on every call, and by every replay of a traced one, before anything runs.
        a, b = (np.asarray(v) if isinstance(v, (list, tuple)) else v for v in (a, b))
        base, exponent = _integer_kind(a), _integer_kind(b)
        if base is not None and exponent is not None:
            if not hasattr(b, "dtype"):  # (out of an unsigned base's range: OverflowError)
                if base != "u":
                    _refuse_negative_exponents(np.asarray(b))
            elif exponent == "i":
                run(_refuse_negative_exponents, b.numpy() if hasattr(b, "numpy") else b)
        return super().__call__(a, b)

    def f(self, m, a, b):
        return m.power(a, b)

    def da(self, m, gy, y, a, b):
        # d(a ** 0)/da is 0 everywhere, also at a = 0 where b a ** (b - 1) is 0 * inf.
        return m.where(b == 0, 0, gy * b * m.power(a, b - 1))

    def db(self, m, gy, y, a, b):
        # 0 ** b has no log; PyTorch defines the gradient there as 0 for b >= 0.
        return m.where((a == 0) & (b >= 0), 0, gy * y * m.log(a))


def _integer_kind(x) -> str | None:
    """numpy's kind letter of an integer or bool operand ("b", "i", "u"), else None (a
    symbolic kernel value has no dtype)."""
    if isinstance(x, bool):
        return "b"
    if isinstance(x, int):
        return "i"
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    return kind if kind in ("b", "i", "u") else None


def _refuse_negative_exponents(exponents: np.ndarray) -> None:
    if (exponents < 0).any():
        raise ValueError("Integers to negative integer powers are not allowed.")


# PyTorch's rules: ties share the gradient, and only an input that loses a comparison gets
# none, so both get all of it where either is NaN (no comparison holds).
class Maximum(Binary):
    quiet_kinds = "biuf"

    def f(self, m, a, b):
        return m.maximum(a, b)

    def da(self, m, gy, y, a, b):
        return m.where(a < b, 0, m.where(a == b, gy * 0.5, gy))

    def db(self, m, gy, y, a, b):
        return m.where(b < a, 0, m.where(a == b, gy * 0.5, gy))


class Minimum(Binary):
    quiet_kinds = "biuf"

    def f(self, m, a, b):
        return m.minimum(a, b)

    def da(self, m, gy, y, a, b):
        return m.where(a > b, 0, m.where(a == b, gy * 0.5, gy))

    def db(self, m, gy, y, a, b):
        return m.where(b > a, 0, m.where(a == b, gy * 0.5, gy))


class Arctan2(Binary):
    result = "float"

    def f(self, m, a, b):
        return m.arctan2(a, b)

    # At the origin, where the angle has no derivative, both gradients are 0 (PyTorch's
    # convention), not 0/0.
    def da(self, m, gy, y, a, b):
        r2 = a * a + b * b
        return m.where(r2 == 0, 0, gy * b / r2)

    def db(self, m, gy, y, a, b):
        r2 = a * a + b * b
        return m.where(r2 == 0, 0, -gy * a / r2)


class FloorDivide(Binary):
    needs_input_values = False
    on_bool = "int8"

    def f(self, m, a, b):
        return m.floor_divide(a, b)

    def da(self, m, gy, y, a, b):
        return gy * 0

    def db(self, m, gy, y, a, b):
        return gy * 0


class Remainder(Binary):
    on_bool = "int8"

    def f(self, m, a, b):
        return m.remainder(a, b)

    def da(self, m, gy, y, a, b):
        return gy

    def db(self, m, gy, y, a, b):
        return -gy * m.floor_divide(a, b)


class Hypot(Binary):
    result, saves_output = "float", True

    def f(self, m, a, b):
        return m.hypot(a, b)

    # At the origin, where the norm has no derivative, both gradients are 0 (PyTorch's
    # subgradient of a norm), not 0/0.
    def da(self, m, gy, y, a, b):
        return m.where(y == 0, 0, gy * a / y)

    def db(self, m, gy, y, a, b):
        return m.where(y == 0, 0, gy * b / y)


class Copysign(Binary):
    """|a| with b's sign; the gradient is PyTorch's: y / a for a (0 at a = 0), none for b."""

    result, saves_output = "float", True

    def f(self, m, a, b):
        return m.copysign(a, b)

    def da(self, m, gy, y, a, b):
        return m.where(a == 0, 0, gy * y / a)

    def db(self, m, gy, y, a, b):
        return gy * 0


class Nextafter(Binary):
    """The next float after a toward b: piecewise constant, so zero gradients."""

    result = "float"

    def f(self, m, a, b):
        return m.nextafter(a, b)

    def da(self, m, gy, y, a, b):
        return gy * 0

    db = da


class Logaddexp(Binary):
    result, saves_output = "float", True

    def f(self, m, a, b):
        return m.logaddexp(a, b)

    def da(self, m, gy, y, a, b):
        return gy * m.exp(a - y)

    def db(self, m, gy, y, a, b):
        return gy * m.exp(b - y)


class Logaddexp2(Binary):
    result, saves_output = "float", True

    def f(self, m, a, b):
        return m.logaddexp2(a, b)

    def da(self, m, gy, y, a, b):
        return gy * m.exp2(a - y)

    def db(self, m, gy, y, a, b):
        return gy * m.exp2(b - y)


class Fmod(Binary):
    """C's remainder: the sign of a (numpy's ``fmod``), PyTorch's gradients."""

    on_bool = "int8"

    def f(self, m, a, b):
        return m.fmod(a, b)

    def da(self, m, gy, y, a, b):
        return gy

    def db(self, m, gy, y, a, b):
        return -gy * m.trunc(a / b)


# NaN-ignoring maximum and minimum; PyTorch's gradients: a takes it where it wins, ties
# included, or where b is NaN; b takes the rest.
class Fmax(Binary):
    def f(self, m, a, b):
        return m.fmax(a, b)

    def da(self, m, gy, y, a, b):
        return m.where((a >= b) | (b != b), gy, 0)

    def db(self, m, gy, y, a, b):
        return m.where((a >= b) | (b != b), 0, gy)


class Fmin(Binary):
    def f(self, m, a, b):
        return m.fmin(a, b)

    def da(self, m, gy, y, a, b):
        return m.where((a <= b) | (b != b), gy, 0)

    def db(self, m, gy, y, a, b):
        return m.where((a <= b) | (b != b), 0, gy)


class Heaviside(Binary):
    """0 for a < 0, b at a = 0, 1 for a > 0 (NaN stays NaN): zero gradients."""

    result = "float"

    def f(self, m, a, b):
        return m.where(a < 0, 0, m.where(a > 0, 1, m.where(a == 0, b, a)))

    def da(self, m, gy, y, a, b):
        return gy * 0

    db = da


class Ldexp(Binary):
    """a * 2 ** b for integer b; the result has a's float dtype, as numpy's ``ldexp``."""

    result = "float"

    def __call__(self, a, b):
        if getattr(type(a), "formula_namespace", None) is None:
            kind = _integer_kind(np.asarray(b) if isinstance(b, (list, tuple)) else b)
            if kind not in ("i", "u", "b"):
                raise TypeError("ldexp: the exponents b must be integers (as in numpy)")
        return super().__call__(a, b)

    def _dtype_operands(self, operands):
        return operands[:1]

    def f(self, m, a, b):
        return a * m.exp2(b)

    def da(self, m, gy, y, a, b):
        return gy * m.exp2(b)

    def db(self, m, gy, y, a, b):
        return gy * 0


add = _op(
    Add,
    "add",
    "a + b, broadcasting (numpy's ``add``).",
    example=("jg.add(jg.tensor([1, 2]), 3).tolist()", "[4, 5]"),
)
subtract = _op(
    Subtract,
    "subtract",
    "a - b, broadcasting.",
    example=("jg.subtract(jg.tensor([5, 7]), 2).tolist()", "[3, 5]"),
)
multiply = _op(
    Multiply,
    "multiply",
    "a * b, broadcasting.",
    example=("jg.multiply(jg.tensor([1.5, 2.0]), 2).tolist()", "[3.0, 4.0]"),
)
divide = _op(
    Divide,
    "divide",
    "a / b (true division: integers give floats).",
    example=("jg.divide(jg.tensor([1, 3]), 2).tolist()", "[0.5, 1.5]"),
)
power = _op(
    Power,
    "power",
    "a ** b, broadcasting.",
    example=("jg.power(jg.tensor([2, 3]), 2).tolist()", "[4, 9]"),
)
maximum = _op(
    Maximum,
    "maximum",
    "Elementwise larger of a and b (NaN propagates).",
    example=("jg.maximum(jg.tensor([1.0, jg.nan, 5.0]), 3.0).tolist()", "[3.0, nan, 5.0]"),
)
minimum = _op(
    Minimum,
    "minimum",
    "Elementwise smaller of a and b (NaN propagates).",
    example=("jg.minimum(jg.tensor([1.0, jg.nan, 5.0]), 3.0).tolist()", "[1.0, nan, 3.0]"),
)
arctan2 = _op(
    Arctan2,
    "arctan2",
    "Angle of the point (b, a): numpy's arctan2(a, b).",
    example=("jg.arctan2(jg.tensor([1.0, 0.0]), 0.0).tolist()", "[1.5707963267948966, 0.0]"),
)
floor_divide = _op(
    FloorDivide,
    "floor_divide",
    "a // b, rounding toward minus infinity.",
    example=("jg.floor_divide(jg.tensor([7, -7]), 2).tolist()", "[3, -4]"),
)
remainder = _op(
    Remainder,
    "remainder",
    "a % b with the sign of b (numpy, Python).",
    example=("jg.remainder(jg.tensor([7, -7]), 3).tolist()", "[1, 2]"),
)
hypot = _op(
    Hypot,
    "hypot",
    "sqrt(a ** 2 + b ** 2), without overflow.",
    example=("jg.hypot(jg.tensor([3.0, 5.0]), jg.tensor([4.0, 12.0])).tolist()", "[5.0, 13.0]"),
)
copysign = _op(
    Copysign,
    "copysign",
    "|a| with the sign of b.",
    example=("jg.copysign(jg.tensor([1.0, -2.0]), -1.0).tolist()", "[-1.0, -2.0]"),
)
nextafter = _op(
    Nextafter,
    "nextafter",
    "The next float after a in the direction of b.",
    example=("jg.nextafter(jg.tensor([1.0]), 2.0).tolist()", "[1.0000000000000002]"),
)
logaddexp = _op(
    Logaddexp,
    "logaddexp",
    "log(e ** a + e ** b), without overflow.",
    example=("jg.logaddexp(jg.tensor([0.0]), 0.0).tolist()", "[0.6931471805599453]"),
)
logaddexp2 = _op(Logaddexp2, "logaddexp2", "log2(2 ** a + 2 ** b), without overflow.")
fmod = _op(Fmod, "fmod", "The remainder of a / b with the sign of a (C's fmod).")
fmax = _op(Fmax, "fmax", "Elementwise larger of a and b, ignoring NaN unless both are.")
fmin = _op(Fmin, "fmin", "Elementwise smaller of a and b, ignoring NaN unless both are.")
heaviside = _op(Heaviside, "heaviside", "0 where a < 0, b where a == 0, 1 where a > 0.")
ldexp = _op(Ldexp, "ldexp", "a * 2 ** b, b integers.")
mod, true_divide, pow = remainder, divide, power  # noqa: A001  numpy's and the Array API's
atan2 = arctan2


@ufunc(nin=2)
def float_power(x1, x2):
    """x1 ** x2 computed in float64 (complex128 for complex operands), numpy's
    ``float_power``.

    >>> import jitgrad as jg
    >>> jg.float_power(jg.tensor([2, 3], dtype=jg.int8), -1).tolist()
    [0.5, 0.3333333333333333]
    """
    return power(*(_in_float64(x) for x in (x1, x2)))


def _in_float64(x):
    if isinstance(x, (bool, int, float)):
        return float(x)
    if isinstance(x, complex):
        return x
    x = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    return astype(x, dtypes.complex128 if x.dtype.is_complex else dtypes.float64, copy=False)


@ufunc(nin=1, nout=2)
def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1,
    numpy's ``frexp``: values of numpy's, without gradient.

    >>> import jitgrad as jg
    >>> m, e = jg.frexp(jg.tensor([8.0, 0.75]))
    >>> m.tolist(), e.tolist(), e.dtype
    ([0.5, 0.75], [4, 0], jitgrad.int32)
    """
    x = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    values = x.detach().numpy()
    return tuple(tensor_over(compute(_frexp_part, values, k)) for k in (0, 1))


def _frexp_part(x, k: int):
    return np.frexp(x)[k]


@ufunc(nin=1, nout=2)
def modf(x):
    """(fractional part, integral part), both with x's sign, numpy's ``modf``; the
    fractional part carries x's gradient.

    >>> import jitgrad as jg
    >>> f, i = jg.modf(jg.tensor([-2.5, 3.0]))
    >>> f.tolist(), i.tolist()
    ([-0.5, 0.0], [-2.0, 3.0])
    """
    from . import unary  # (unary builds on this module)

    x = as_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    if x.dtype.kind in "biu":
        x = x.astype(dtypes.get_default_dtype())
    whole = unary.trunc(x)
    # inf's fraction is 0 (not inf - inf); copysign keeps -0.0 for negative whole numbers.
    fraction = copysign(where(unary.isinf(x), 0, x - whole), x)
    return fraction, whole


@ufunc(nin=2, nout=2)
def divmod(a, b) -> tuple[Tensor, Tensor]:  # (shadows the builtin here: numpy's name)
    """``(floor_divide(a, b), remainder(a, b))``, numpy's ``divmod``; also what Python's
    ``divmod(t, b)`` and ``divmod(a, t)`` give for tensors. Each part has its op's dtype,
    gradient and errors (complex operands are refused, as in numpy).

    >>> import jitgrad as jg
    >>> q, r = divmod(jg.tensor([7, -7]), 2)
    >>> q.tolist(), r.tolist()
    ([3, -4], [1, 1])
    """
    return floor_divide(a, b), remainder(a, b)


# -- comparisons and logic -----------------------------------------------------------------


def _named_binary(base: type, name: str, doc: str, example=None, **attributes):
    """The op class whose formula is the math namespace's function ``name`` (comparisons,
    logic, bitwise ops) and its function."""
    cls = type(
        name.title().replace("_", ""),
        (base,),
        {"f": lambda self, m, a, b: getattr(m, name)(a, b), **attributes},
    )
    return cls, _op(cls, name, doc, example=example)


def _comparison(name: str, symbol: str, result: str, beyond_int64: bool = True, **attributes):
    """``name``'s op class and function; ``result`` is its example's, on [0, 1, 2] and 1."""
    return _named_binary(
        Comparison,
        name,
        f"a {symbol} b elementwise, as a bool tensor.",
        (f"jg.{name}(jg.tensor([0, 1, 2]), 1).tolist()", result),
        beyond_int64=beyond_int64,
        **attributes,
    )


Equal, equal = _comparison("equal", "==", "[False, True, False]", on_python_floats=operator.eq)
NotEqual, not_equal = _comparison(
    "not_equal", "!=", "[True, False, True]", on_python_floats=operator.ne
)
Less, less = _comparison("less", "<", "[True, False, False]", on_python_floats=operator.lt)
LessEqual, less_equal = _comparison(
    "less_equal", "<=", "[True, True, False]", on_python_floats=operator.le
)
Greater, greater = _comparison("greater", ">", "[False, False, True]", on_python_floats=operator.gt)
GreaterEqual, greater_equal = _comparison(
    "greater_equal", ">=", "[False, True, True]", on_python_floats=operator.ge
)
LogicalAnd, logical_and = _comparison(
    "logical_and", "and", "[False, True, True]", beyond_int64=False
)
LogicalOr, logical_or = _comparison("logical_or", "or", "[True, True, True]", beyond_int64=False)
LogicalXor, logical_xor = _comparison(
    "logical_xor", "xor", "[True, False, False]", beyond_int64=False
)


class Bitwise(Binary):
    """numpy's bitwise ops: on integers bit by bit, on bools logical (the result stays
    bool). Piecewise constant in integers: no gradient (an input requiring grad is a
    float, and floats are refused)."""

    quiet_kinds = "biu"

    integer_only = True
    grad_rules = (None, None)


def _bitwise(name: str, symbol: str, result: str):
    """``name``'s op class and function; ``result`` is its example's, on [12, 10] and 6."""
    return _named_binary(
        Bitwise,
        name,
        f"a {symbol} b elementwise: bitwise on integers, logical on bools (numpy's rule).",
        (f"jg.{name}(jg.tensor([12, 10]), 6).tolist()", result),
    )


BitwiseAnd, bitwise_and = _bitwise("bitwise_and", "&", "[4, 2]")
BitwiseOr, bitwise_or = _bitwise("bitwise_or", "|", "[14, 14]")
BitwiseXor, bitwise_xor = _bitwise("bitwise_xor", "^", "[10, 12]")


class Shift(Bitwise):
    """numpy's bit shifts: bools shift as int8 (numpy's rule). A count outside [0, bits of
    the result dtype), negative ones included, shifts every bit out: left gives 0, right
    gives 0, or -1 for a negative signed value (numpy 2's defined result, where C's shift
    is undefined)."""

    on_bool = "int8"


LeftShift, left_shift = _named_binary(
    Shift,
    "left_shift",
    "a << b elementwise, on integers (counts of the bit width or more, or negative, give 0).",
    ("jg.left_shift(jg.tensor([1, 3]), 2).tolist()", "[4, 12]"),
)
RightShift, right_shift = _named_binary(
    Shift,
    "right_shift",
    "a >> b elementwise, on integers "
    "(arithmetic for signed: counts of the bit width or "
    "more, or negative, give 0 or -1).",
    ("jg.right_shift(jg.tensor([16, -16]), 2).tolist()", "[4, -4]"),
)


class Where(Elementwise):
    quiet_kinds = "biuf"
    grad_rules = (None, "da", "db")

    def __call__(self, c, a, b):
        # A condition that is not bool would be cast to the result's dtype (0.5 to 0 in an
        # integer result, 1j to a real): numpy's truth is "nonzero", NaN and 1j included.
        if getattr(type(c), "formula_namespace", None) is None:
            if isinstance(c, (list, tuple)):
                c = np.asarray(c)
            if isinstance(c, (int, float, complex)):
                c = bool(c)
            elif getattr(getattr(c, "dtype", None), "kind", "b") != "b":
                c = not_equal(c, 0)
        return super().__call__(c, a, b)

    def _dtype_operands(self, operands):
        return operands[1:]  # the condition does not take part in promotion

    def keeps_bool(self, position: int) -> bool:
        return position == 0

    def f(self, m, c, a, b):
        return m.where(c, a, b)

    def da(self, m, gy, y, c, a, b):
        return m.where(c, gy, 0)

    def db(self, m, gy, y, c, a, b):
        return m.where(c, 0, gy)


def where(condition, x=None, y=None, /):
    """``x`` where ``condition`` holds, else ``y`` (broadcasting all three, differentiable
    in ``x`` and ``y``); with ``condition`` alone, numpy's ``nonzero(condition)``.

    >>> import jitgrad as jg
    >>> jg.where(jg.tensor([True, False]), 1.0, 2.0).tolist()
    [1.0, 2.0]
    >>> [t.tolist() for t in jg.where(jg.tensor([0, 3, 4]))]
    [[1, 2]]
    """
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    if condition.__class__ is Tensor and condition._storage.dtype is dtypes.bool_:
        direct = _remembered_direct(Where, (condition, x, y))
        if direct is not None:
            return direct(condition, x, y)
    return Where()(condition, x, y)


def _remembered_direct(cls, operands):
    """The numpy tier's remembered ``direct`` call of ``cls`` (an op without params) on
    ``operands`` (tensors and Python numbers) when the call records nothing, else None:
    ``entry``'s lookup for ops of any arity."""
    if config.tracing:
        return None
    signature = (cls,)
    for x in operands:
        kind = x.__class__
        if kind is Tensor:
            if x._requires_grad:
                return None
            signature += (x._storage.dtype, x._shape, x._strides)
        elif kind in _CONSTANT_TYPES:
            signature += (kind,)
        else:
            return None
    known = tiers.calls.get(signature)
    return None if known is None else known.direct


__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "arctan2",
    "floor_divide",
    "remainder",
    "divmod",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "where",
    "hypot",
    "copysign",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "fmod",
    "fmax",
    "fmin",
    "heaviside",
    "ldexp",
    "float_power",
    "frexp",
    "modf",
    "mod",
    "true_divide",
    "pow",
    "atan2",
    "bitwise_left_shift",
    "bitwise_right_shift",
]
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
