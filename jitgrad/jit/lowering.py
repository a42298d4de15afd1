"""Lower elementwise Functions to kernels: one for the forward, one for the backward.

The forward kernel evaluates the op's formula ``f`` on symbolic inputs; the backward
kernel evaluates every needed gradient rule in one pass and recomputes the output inside
the kernel instead of keeping it alive. Kernels are found by a structural key (op, its
parameters, dtypes, which operands are constants, the layout pattern) that never contains
sizes or strides, so new shapes with the same pattern reuse them.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, threads, tiers
from .._config import config
from ..autograd.tensor import Tensor, uninitialised
from ..ops.reduce_data import sum_to_data
from ..recording import run, same_items
from ..storage import storage_class
from ..strided import layout
from . import cache, codegen, ir, numpy_launch

# Nested loops are generated up to this many (merged) dimensions; beyond, the numpy
# reference evaluator runs (five unmergeable dimensions are rare in practice).
MAX_NDIM = 4


def forward(op, xs) -> Tensor | None:
    """The op's output computed by a kernel, or None when kernels do not apply."""
    signature = _eager_signature(op, xs)
    if signature is not None:
        decided = tiers.calls.get(signature)
        if decided is not None:
            op.decision = decided
            return decided.launch(op, xs)
    ct = _compute_dtype(op)
    if ct is None:
        return None
    out_dtype = dtypes.bool_ if op.result == "bool" else op.result_dtype
    shape = layout.broadcast_shapes(*(x.shape for x in xs))
    where = plan_layout(shape, _broadcast_strides(xs, shape))
    if where is None:
        return None
    out = uninitialised(shape, out_dtype)
    loads = _loads(op, xs)

    def exprs():
        return [op.f(ir.symbolic, *_symbolic_args(op))]

    key = (
        "forward",
        type(op),
        _params(op),
        tuple(op.slots),
        ct,
        out_dtype.name,
        loads,
        where.pattern,
    )
    prepared = _run(key, exprs, xs, where, loads, _scalars(op, ct), ct, [out])
    op.decision = _decide(tiers.calls, signature, op, prepared, where, [out_dtype], ct)
    return out


def backward(op, xs, gy: Tensor, mask: tuple | None = None):
    """Every needed input gradient in one kernel (then summed over broadcast axes), each of
    its input's shape and dtype; ``mask``: which inputs require grad, if known."""
    if mask is None:
        mask = ()
        for x in xs:  # (a loop: no comprehension frame per op)
            mask += (x._requires_grad,)
    known = op.known_call
    if known is not None and config.thread.tape is None:
        # The forward's known call fixes the op and its operands' layouts: only which inputs
        # need a gradient and the incoming gradient's layout can still differ. The call
        # keeps these decisions itself (``Elementwise._apply`` launches them).
        memo, signature = known.backward, (mask, gy._storage.dtype, gy._shape, gy._strides)
    else:
        memo, signature = tiers.calls, _eager_signature(op, (*xs, gy), mask)
    decided = memo.get(signature) if signature is not None else None
    if decided is not None:
        return decided.launch(op, xs, gy)
    operands = (*xs, gy)
    ct = _compute_dtype(op)
    needed = [
        p
        for p, (rule, slot) in enumerate(zip(op.grad_rules, op.slots))
        if rule is not None and slot is not None and xs[slot].requires_grad
    ]
    shape = gy.shape
    where = plan_layout(shape, _broadcast_strides(operands, shape))
    if ct is None or where is None or not needed:
        return None
    targets = [xs[op.slots[p]] for p in needed]
    out_dtypes = [x.dtype if x.shape == shape else dtypes.as_dtype(ct) for x in targets]
    outs = [uninitialised(shape, d) for d in out_dtypes]
    loads = _loads(op, xs) + ((gy.dtype.name, False),)

    def exprs():
        args = _symbolic_args(op)
        g = ir.load(len(xs))
        y = op.f(ir.symbolic, *args) if op.saves_output else None
        return [getattr(op, op.grad_rules[p])(ir.symbolic, g, y, *args) for p in needed]

    key = (
        "backward",
        type(op),
        _params(op),
        tuple(op.slots),
        tuple(needed),
        ct,
        tuple(d.name for d in out_dtypes),
        loads,
        where.pattern,
    )
    prepared = _run(key, exprs, operands, where, loads, _scalars(op, ct), ct, outs)
    # Per input, the output holding its gradient and whether that is summed over the
    # broadcast axes (a different shape) to fit it.
    gradients = [None] * len(xs)
    for k, (p, x) in enumerate(zip(needed, targets)):
        gradients[op.slots[p]] = (k, x.shape != shape)
    reads = sorted(
        {e.value for e in ir.topological(exprs()) if e.op == "load" and e.value < len(xs)}
    )
    _decide(memo, signature, op, prepared, where, out_dtypes, ct, gradients, tuple(reads))
    return tuple(
        None if g is None else sum_to_as(outs[g[0]], x) if g[1] else outs[g[0]]
        for x, g in zip(xs, gradients)
    )


# -- eager dispatch ---------------------------------------------------------------------------
# Eager code repeats a few signatures (op, constants' positions, operands' dtypes, shapes
# and strides) over and over. What a call decides from them (the kernel, its loop layout,
# the output dtypes) is remembered per signature, so a repeated call only allocates its
# outputs and launches: the per-op overhead is what eager autograd is judged by.


class _Decided:
    """What a signature decided: its kernel, the loop layout, and ``launch``, which
    allocates the outputs and runs the kernel (``_launcher``)."""

    __slots__ = ("kernel", "where", "gradients", "launch", "reads")

    def __init__(
        self, kernel, where, out_dtypes, scalar_type, compiled, op, gradients=None, reads=()
    ):
        """``scalar_type`` converts the op's constants, None when it has none; ``compiled``
        runs the kernel (``Call.direct``); ``gradients``, for a backward: per input of the
        op, None or (the output holding its gradient, whether that is summed to fit it),
        and ``launch`` then returns the gradients; ``reads``, for a backward: the inputs of
        the op that its kernel reads."""
        self.kernel, self.where, self.gradients, self.reads = kernel, where, gradients, reads
        self.launch = _launcher(
            self, [storage_class(d) for d in out_dtypes], scalar_type, compiled, op.slots
        )


def _eager_signature(op, xs, extra=()):
    if config.thread.tape is not None:
        return None  # a trace keeps every launch with its body, for fusion
    return (
        "kernel",
        type(op),
        _params(op),
        tuple(op.slots),
        op.result_dtype,
        extra,
        *[(x.dtype, x._shape, x._strides) for x in xs],
    )


def _decide(memo, signature, op, launch, where, out_dtypes, ct, gradients=None, reads=()):
    """Remember in ``memo`` what ``signature`` decided (``_Decided``); the decision, or
    None."""
    if signature is None or not layout.numel(where.shape):
        return None  # (an empty launch compiled nothing to remember)
    scalar_type = np.dtype(ct).type if launch.scalars else None
    decided = _Decided(
        launch.kernel, where, out_dtypes, scalar_type, launch.direct()[0], op, gradients, reads
    )
    if memo is tiers.calls:
        tiers.remember(signature, decided)
    else:  # (a known call's own decisions: by which inputs need a gradient, gy's layout)
        memo[signature] = decided
    return decided


def _launcher(decided: _Decided, out_storages, scalar_type, compiled, slots):
    """``launch(op, xs)`` (a forward's) or ``launch(op, xs, gy)`` (a backward's) for one
    decision: the kernel over the operands' arrays and offsets (and the layout's strides),
    the op's constants and new outputs. It returns a forward's one output, or a
    backward's gradients (one per input of the op). Its source is written for the
    decision's operands, constants, outputs and layout, every fixed value bound as a
    name: this is the per-op hot path of eager code, forward and backward, where loops
    over those or lookups of them cost more than the kernel call itself."""
    where, gradients = decided.where, decided.gradients
    n = layout.numel(where.shape)
    names = {
        "compiled": compiled,
        "kernel": decided.kernel,
        "new": object.__new__,
        "empty": np.empty,
        "Tensor": Tensor,
        "size": where._size_arg,
        "n": n,
        "shape": where.shape,
        "out_strides": layout.contiguous_strides(where.shape),
        "kind": scalar_type,
        "fit": sum_to_as,
    }
    xs = [f"x{k}" for k in range(sum(slot is not None for slot in slots))]
    lines = [f"def launch(op, xs{', gy' if gradients else ''}):"]
    if xs:  # (an op of constants alone, jg.sqrt(2.0), has no tensor to unpack)
        lines.append(f"    {', '.join(xs)}, = xs")
    if gradients is not None:  # the incoming gradient is the kernel's last operand
        lines.append(f"    x{len(xs)} = gy")
        xs.append(f"x{len(xs)}")
    args = ["size"]
    for k, x in enumerate(xs):
        args += [f"{x}._storage.kernel_array", f"{x}._offset"]
        if where._stride_args:
            names[f"strides{k}"] = where._stride_args[k]
            args.append(f"strides{k}")
    if scalar_type is not None:
        # A float kernel takes a Python float as it is: it rounds it to its own precision
        # as numpy's float32() and float64() would. Other numbers (ints, which can overflow
        # either, and constants in integer kernels) get numpy's conversion and its errors.
        floats = np.issubdtype(scalar_type, np.floating)
        lines.append("    constants = op.constants")
        for j, slot in enumerate(slots):
            if slot is None:
                guard = f"if c{j}.__class__ is not float: " if floats else ""
                lines += [f"    c{j} = constants[{j}]", f"    {guard}c{j} = kind(c{j})"]
                args.append(f"c{j}")
    outs = []
    for k, cls in enumerate(out_storages):
        names[f"Storage{k}"], names[f"dtype{k}"] = cls, cls._numpy
        # (inline: Storage._uninitialised's common case)
        lines.append((_NEW_SMALL if cls._holds_small(n) else _NEW_STORAGE).format(k=k))
        lines.append(_NEW_TENSOR.format(k=k))
        args.append(f"a{k}")
        outs.append(f"t{k}")
    if gradients is not None:  # x{k} is the op's input k
        outs = [
            "None" if g is None else f"fit(t{g[0]}, x{k})" if g[1] else f"t{g[0]}"
            for k, g in enumerate(gradients)
        ]
        result = f"({', '.join(outs)},)"
    else:
        (result,) = outs  # an elementwise forward has one output
    lines += [f"    compiled({', '.join(args)})", "    kernel.calls += 1", f"    return {result}"]
    exec("\n".join(lines), names)  # noqa: S102  (source built above from fixed pieces)
    return names["launch"]


_NEW_SMALL = """\
    s{k} = new(Storage{k})
    a{k} = s{k}.kernel_array = empty(n, dtype{k})
    s{k}._version = 0"""
_NEW_STORAGE = "    s{k} = Storage{k}._uninitialised(n); a{k} = s{k}.kernel_array"
_NEW_TENSOR = """\
    t{k} = new(Tensor)
    t{k}._storage, t{k}._shape, t{k}._strides, t{k}._offset = s{k}, shape, out_strides, 0
    t{k}._requires_grad, t{k}._grad, t{k}._grad_fn = False, None, None
    t{k}._output_nr, t{k}._accumulator = 0, None"""


class Layout:
    """Where a launch's operands sit, worked out once: the loop ``pattern`` (part of the
    kernel's cache key: never sizes or strides) and the arguments describing the sizes and
    strides to the kernel.

    ``pattern`` is ("flat", which inputs are one broadcast element) when every input is
    laid out like the contiguous output or is one element, else ("strided", merged ndim,
    each input's innermost stride: "unit", "zero" or "any")."""

    __slots__ = ("shape", "strides", "pattern", "_size_arg", "_stride_args")

    def __init__(self, shape, strides, pattern, merged_shape=None, merged_strides=()):
        self.shape, self.strides, self.pattern = tuple(shape), strides, pattern
        if merged_shape is None:
            self._size_arg = layout.numel(shape)
        else:
            self._size_arg = np.array(merged_shape, dtype=np.int64)
        self._stride_args = [np.array(s, dtype=np.int64) for s in merged_strides]

    def kernel_args(self, arrays, offsets) -> list:
        args = [self._size_arg]
        if self._stride_args:
            for a, o, s in zip(arrays, offsets, self._stride_args):
                args += (a, o, s)
        else:
            for a, o in zip(arrays, offsets):
                args += (a, o)
        return args

    def extent(self) -> int:
        """The length of the kernel's outer loop: what a parallel launch shares out."""
        return int(self._size_arg[0]) if self._stride_args else self._size_arg

    def share(self, args, lo: int, hi: int, n_outs: int) -> list:
        """``args`` (``kernel_args``, scalars, outputs) narrowed to the outer loop's
        iterations [lo, hi): the kernel then computes that share of its outputs."""
        share = list(args)
        if self._stride_args:
            sizes = share[0] = args[0].copy()
            sizes[0] = hi - lo
            row = int(np.prod(sizes[1:]))
            for k, strides in enumerate(self._stride_args):
                share[2 + 3 * k] += lo * int(strides[0])
        else:
            share[0] = hi - lo
            row = 1
            for k, one in enumerate(self.pattern[1]):
                if not one:
                    share[2 + 2 * k] += lo
        for p in range(len(args) - n_outs, len(args)):
            share[p] = args[p][lo * row : hi * row]
        return share


# A flat parallel launch cuts its range on multiples of this many elements: no two threads
# write one cache line of the output.
_FLAT_ALIGN = 64


class _Split:
    """A parallel launch's callable: the kernel ``fn`` over pieces of the outer loop, shared
    among threads as they come (``threads.run``). Each piece's arguments are worked out
    when the arguments change, not at every call: a plan replays the same ones, and
    building them (a few µs a piece) held the GIL both threads wait for."""

    __slots__ = ("fn", "where", "n_outs", "bounds", "_seen", "_shares")
    shares_threads = True  # (blas.switched_once: BLAS stays on one thread beside it)

    def __init__(self, fn, where: Layout, n_outs: int, parts: int):
        self.fn, self.where, self.n_outs = fn, where, n_outs
        align = 1 if where.pattern[0] == "strided" else _FLAT_ALIGN
        self.bounds = threads.bounds(where.extent(), align, parts)
        self._seen, self._shares = (), []

    def __call__(self, *args) -> None:
        shares = self._shares
        if not same_items(args, self._seen):
            share, n_outs = self.where.share, self.n_outs
            shares = self._shares = [share(args, lo, hi, n_outs) for lo, hi in self.bounds]
            self._seen = args
        fn = self.fn

        def piece(k):
            fn(*shares[k])

        threads.run(piece, len(shares))


def plan_layout(shape, strides) -> Layout | None:
    """The layout of operands with these (broadcast) strides computing an output of
    ``shape``; None beyond ``MAX_NDIM`` unmergeable dimensions."""
    contiguous = layout.contiguous_strides(shape)
    used = [k for k, n in enumerate(shape) if n > 1]
    broadcast = []
    for s in strides:
        if all(s[k] == 0 for k in used):
            broadcast.append(True)
        elif all(s[k] == contiguous[k] for k in used):
            broadcast.append(False)
        else:
            break
    else:
        return Layout(shape, strides, ("flat", tuple(broadcast)))
    merged, _, *merged_strides = layout.coalesce(shape, contiguous, *strides)
    if len(merged) > MAX_NDIM:
        return None
    inner = tuple("unit" if s[-1] == 1 else "zero" if s[-1] == 0 else "any" for s in merged_strides)
    return Layout(shape, strides, ("strided", len(merged), inner), merged, merged_strides)


class Launch:
    """One kernel call over fixed arrays. While tracing, it also keeps what fusion needs:
    the body (``exprs``), per-input loads and strides, and the output arrays."""

    # Recorded by a jg.jit trace, or prepared for a plan's replays: the plan owns the arrays
    # it reads, so eager optimizer steps never repoint it (``_reusable``).
    traced = False

    def __init__(
        self,
        kernel,
        where: Layout,
        arrays,
        offsets,
        loads,
        scalars,
        ct,
        outs,
        out_dtypes,
        exprs=None,
    ):
        """``loads`` and ``out_dtypes`` name the jitgrad dtypes of the input and output
        arrays (``outs``), which for float16 hold its bits."""
        self.kernel, self.shape, self.strides = kernel, where.shape, where.strides
        self.arrays, self.offsets, self.loads = arrays, offsets, loads
        self.scalars, self.ct, self.outs, self.exprs = scalars, ct, outs, exprs
        self.out_dtypes = out_dtypes
        self._call = kernel.call("serial")
        numel, threshold = layout.numel(self.shape), config.parallel_from(kernel.computes_much)
        parts = threads.pieces(numel, threshold) if numel >= threshold else 1
        self._split = _Split(self._call, where, len(outs), parts) if parts > 1 else None
        prefix = where.kernel_args(arrays, offsets)
        self._per_input = 2 if where.pattern[0] == "flat" else 3  # (a, o) or (a, o, strides)
        self._scalar_slots = slice(len(prefix), len(prefix) + len(scalars))
        self.args = prefix + list(scalars) + outs

    def set_scalars(self, values) -> None:
        self.args[self._scalar_slots] = values

    def set_number(self, name: str, value) -> None:
        """One named scalar of an update launch (``update``), e.g. Adam's step count."""
        self.args[self._scalar_slots.start + self.numbers.index(name)] = self.scalar_type(value)
        self.hyper_values = None  # the next ``update`` call refreshes every scalar

    def point_input(self, k: int, array, offset: int) -> None:
        """Read input ``k`` from ``array`` at ``offset`` (same dtype and layout)."""
        at, offset_at = self._input_positions(k)
        self.args[at] = self.arrays[k] = array
        self.args[offset_at] = self.offsets[k] = offset

    def _input_positions(self, k: int) -> tuple[int, int]:
        # args: the size, then per input its array, offset (and strides), ...
        return 1 + self._per_input * k, 2 + self._per_input * k

    def array_positions(self) -> list[tuple[int, int | None]]:
        """(position of an array in ``args``, position of its offset or None for outputs)."""
        inputs = [self._input_positions(k) for k in range(len(self.arrays))]
        first_out = len(self.args) - len(self.outs)
        return inputs + [(first_out + k, None) for k in range(len(self.outs))]

    def read_bytes(self) -> int:
        """The bytes of the input elements it reads (a broadcast one once)."""
        return sum(
            a.itemsize * layout.numel([n for n, s in zip(self.shape, strides) if s != 0])
            for a, strides in zip(self.arrays, self.strides)
        )

    def __call__(self) -> None:
        if self._split is None or self._call.compiled is None:
            self._call(*self.args)  # the first call compiles, in this thread, over it all
        else:
            self._split(*self.args)

    def direct(self) -> tuple:
        """(function, arguments) that run this launch: ``Call.direct`` over ``args`` itself
        (the list that repointing updates), without this launch's own frame."""
        fn = self._call.direct(self.args)
        if self._split is not None and fn is not self._call:
            split = self._split
            fn = _Split(fn, split.where, split.n_outs, len(split.bounds))
        return fn, self.args


def _run(key, exprs, xs, where: Layout, loads, scalars, ct, outs) -> Launch:
    out_dtypes = tuple(o.dtype.name for o in outs)
    arrays = [x._storage.kernel_array for x in xs]
    offsets = [x._offset for x in xs]
    out_arrays = [o._storage.kernel_array for o in outs]
    aliases = in_place_aliases(where.pattern, arrays, offsets, out_arrays)
    kernel = cache.get(
        (key, aliases),
        lambda: _source(exprs(), loads, ct, out_dtypes, len(scalars), where.pattern, aliases),
    )
    tracing = config.thread.tape is not None
    launch = Launch(
        kernel,
        where,
        arrays,
        offsets,
        loads,
        scalars,
        ct,
        out_arrays,
        out_dtypes,
        exprs() if tracing else None,
    )
    if layout.numel(where.shape):  # (in a trace, the scheduler may never run this kernel)
        numpy_launch.run_or_defer(launch, launch._call, lambda: numpy_launch.evaluate(launch))
    return launch


# -- the pieces ------------------------------------------------------------------------------


def _compute_dtype(op) -> str | None:
    d = op.result_dtype
    if d.is_complex:
        return None  # complex math stays with the reference evaluator
    return "float32" if d is dtypes.float16 else d.name


def _params(op) -> tuple:
    return tuple(getattr(op, name) for name in op.params)


def _loads(op, xs) -> tuple:
    """Per tensor input: its dtype's name, and whether it is loaded as bool."""
    positions = {slot: p for p, slot in enumerate(op.slots) if slot is not None}
    return tuple(
        (
            x.dtype.name,
            x.dtype is dtypes.bool_ and op.keeps_bool(positions[k]),
        )
        for k, x in enumerate(xs)
    )


def _symbolic_args(op) -> list:
    args, n_scalars = [], 0
    for slot in op.slots:
        if slot is None:
            args.append(ir.scalar(n_scalars))
            n_scalars += 1
        else:
            args.append(ir.load(slot))
    return args


def _scalars(op, ct: str) -> list:
    kind = np.dtype(ct).type
    return [kind(c) for c, slot in zip(op.constants, op.slots) if slot is None]


def _broadcast_strides(xs, shape) -> list[tuple]:
    return [layout.broadcast_strides(x.shape, x.stride(), shape) for x in xs]


def in_place_aliases(pattern, arrays, offsets, out_arrays) -> tuple:
    """Per output of a flat loop, the input that is the same memory (an in-place update
    reading and writing each element at one index), or None."""
    if pattern[0] != "flat":
        return ()
    broadcast = pattern[1]
    return tuple(
        next(
            (
                k
                for k, (a, o) in enumerate(zip(arrays, offsets))
                if a is out and o == 0 and not broadcast[k]
            ),
            None,
        )
        for out in out_arrays
    )


def _source(exprs, loads, ct, out_dtypes, n_scalars, pattern, aliases=()) -> str:
    kind, detail, *inner = pattern
    sig = codegen.Signature(
        input_dtypes=tuple(d for d, _ in loads),
        bool_inputs=tuple(b for _, b in loads),
        compute=ct,
        output_dtypes=tuple(out_dtypes),
        n_scalars=n_scalars,
        loop=kind,
        ndim=detail if kind == "strided" else 0,
        broadcast=detail if kind == "flat" else (),
        inner=inner[0] if inner else (),
        aliases=aliases,
    )
    return codegen.generate(exprs, sig)


def sum_to_as(g: Tensor, x: Tensor) -> Tensor:
    """A kernel's gradient over the broadcast shape, summed back to ``x``'s shape and
    dtype."""
    summed = sum_to_data(g, x.shape)
    return summed if summed.dtype is x.dtype else summed.astype(x.dtype)


def update(formula, tensors, outputs, hyper: dict, launches: dict | None = None):
    """Run an optimizer's update formula as one kernel writing its results in place
    (``optim.optimizer.apply_update``). Numbers are runtime scalars, so a changing learning
    rate or step count never recompiles; bools are structural. Returns the launch (its
    ``updated`` tensors are ``outputs``), or None when it cannot run as a kernel (the
    caller then uses the reference evaluator).

    ``launches`` (the optimizer's) keeps the prepared launch of each parameter: the next
    step over the same arrays only swaps the scalars in, which is what makes a training
    step's update cost one kernel call per parameter."""
    tracing = config.thread.tape is not None
    if launches is not None:
        launch = launches.get((formula, id(tensors[0])))
        if launch is not None and _reusable(launch, tensors, hyper):
            launch.traced |= tracing
            run(launch)
            for o in outputs:
                if o is not None:
                    o._storage._written()
            return launch
    present = [t for t in tensors if t is not None]
    numbers = sorted(k for k, v in hyper.items() if not isinstance(v, bool))
    flags = tuple(sorted((k, v) for k, v in hyper.items() if isinstance(v, bool)))
    shape = present[0].shape
    d = present[0].dtype
    if not d.is_floating_point or any(t.shape != shape or t.dtype is not d for t in present):
        return None
    targets = [o for o in outputs if o is not None]
    contiguous = layout.contiguous_strides(shape)
    if any(o._offset != 0 or (o.stride() != contiguous and o.numel() > 1) for o in targets):
        return None
    where = plan_layout(
        shape, [layout.broadcast_strides(t.shape, t.stride(), shape) for t in present]
    )
    if where is None:
        return None
    ct = "float32" if d is dtypes.float16 else d.name
    loads = tuple((t.dtype.name, False) for t in present)
    kind = np.dtype(ct).type
    scalars = [kind(hyper[k]) for k in numbers]
    which = tuple(t is not None for t in tensors) + tuple(o is not None for o in outputs)

    def exprs():
        loads_ = iter(ir.load(k) for k in range(len(present)))
        args = [None if t is None else next(loads_) for t in tensors]
        symbols = {k: ir.scalar(j) for j, k in enumerate(numbers)}
        results = formula(ir.symbolic, *args, **symbols, **dict(flags))
        return [r for r, o in zip(results, outputs) if o is not None]

    key = ("update", formula, flags, tuple(numbers), which, ct, loads, where.pattern)
    launch = _run(key, exprs, present, where, loads, scalars, ct, targets)
    launch.scalar_type, launch.numbers, launch.flags = kind, numbers, flags
    launch.hyper_values = tuple(hyper.values())
    launch.updated = list(outputs)
    launch.traced = tracing
    if launches is not None:
        launches[(formula, id(tensors[0]))] = launch
    for o in targets:
        o._storage._written()
    return launch


def _reusable(launch: Launch, tensors, hyper: dict) -> bool:
    """Whether an update's prepared launch serves this call: same flags, same arrays (its
    scalars are refreshed when a number changed). The hot path of every optimizer step.

    An eager step brings a new gradient tensor each time: an input the launch only reads
    is repointed at the new array when dtype and layout match, unless a traced plan owns
    the launch."""
    values = tuple(hyper.values())
    if values != launch.hyper_values:
        if any(hyper[k] != v for k, v in launch.flags):
            return False
        launch.set_scalars([launch.scalar_type(hyper[k]) for k in launch.numbers])
        launch.hyper_values = values
    arrays, outs = launch.arrays, launch.outs
    k = 0
    for t in tensors:
        if t is None:
            continue
        if k == len(arrays):
            return False
        array = t._storage.kernel_array
        if array is not arrays[k]:
            read_only = not any(a is o for a in (array, arrays[k]) for o in outs)
            if not (
                read_only
                and not launch.traced
                and t.dtype.name == launch.loads[k][0]
                and t._shape == launch.shape
                and layout.broadcast_strides(t._shape, t._strides, t._shape) == launch.strides[k]
            ):
                return False
            launch.point_input(k, array, t._offset)
        k += 1
    return k == len(arrays)
