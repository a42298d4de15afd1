"""The scheduler of a traced tape: which kernels a plan runs, and what they store.

Passes over the recorded steps, in order:

- ``fuse`` merges runs of elementwise launches over one shape into one kernel
  (``fusion``);
- ``recompute`` lets a kernel compute what it would load from an earlier kernel's output
  from that kernel's own inputs instead, when that reads no more arrays: a backward then
  recomputes the forward's cheap intermediates from ``x`` rather than reading them back;
  and a kernel stops reading the inputs its expressions do not use;
- ``eliminate_dead`` drops the outputs nothing reads: results, gradients and memory the
  caller can reach are kept, and so is everything a step other than a kernel touches;
- ``fuse_rows`` merges reductions with the elementwise work over the same rows into row
  kernels (``row_fusion``), after which dead outputs are dropped again;
- ``fuse_forward_backward`` merges a cross-entropy's backward with its forward (``rows``).

What remains reads each input about once and writes what leaves a kernel once.
"""

from __future__ import annotations

from ..strided import layout
from . import ir
from .binding import accesses, arrays_in, kernel_step, owner
from .fusion import _same_value, build, fuse
from .lowering import Launch
from .row_fusion import fuse_rows
from .rows import fuse_forward_backward

# Expressions larger than this are loaded, not recomputed: past it the arithmetic outweighs
# the memory it saves, and kernels take long to compile.
MAX_RECOMPUTED_NODES = 200


def schedule(steps: list, keep: list, internal: set[int]) -> list:
    """The plan's steps for a tape's ``steps``. ``keep``: arrays whose contents the caller
    sees; ``internal``: the allocations only the plan can reach (``Tape.made_arrays``)."""
    steps = eliminate_dead(recompute(fuse(steps, keep)), keep, internal)
    return eliminate_dead(fuse_forward_backward(fuse_rows(steps, keep)), keep, internal)


def recompute(steps: list) -> list:
    """``steps`` with loads of earlier launches' outputs replaced by the expressions that
    computed them, where that reads no more arrays (``_recomputing``)."""
    writers: dict[int, list[int]] = {}
    for i, (fn, args) in enumerate(steps):
        for key in accesses(fn, args)[1]:
            writers.setdefault(key, []).append(i)
    producers: dict[int, tuple] = {}  # owner -> (step index, launch, output index)
    out = list(steps)
    for i, (fn, _) in enumerate(steps):
        if isinstance(fn, Launch) and fn.exprs is not None:
            new = _recomputing(fn, i, producers, writers) or _without_unused_loads(fn)
            if new is not None:
                fn = new
                out[i] = (new, ())
            for k, o in enumerate(fn.outs):
                producers[owner(o)] = (i, fn, k)
    return out


def _without_unused_loads(launch: Launch) -> Launch | None:
    """``launch`` reading only the inputs its expressions use, or None when it uses them
    all. A gradient rule that needs no operand's value (an add's) is still launched with
    every operand: read, they would keep the forward storing them for nothing."""
    used = {e.value for e in ir.topological(list(launch.exprs)) if e.op == "load"}
    if not used or len(used) == len(launch.arrays):
        return None
    outputs = list(zip(launch.outs, launch.exprs, launch.out_dtypes))
    return rebuilt(launch, _inputs_of(launch), list(launch.scalars), outputs)


def _written_between(key: int, first: int, last: int, writers) -> bool:
    """Whether a step in [first, last) writes allocation ``key``."""
    return any(first <= w < last for w in writers.get(key, ()))


def _recomputing(launch: Launch, at: int, producers, writers) -> Launch | None:
    """``launch`` (step ``at``) recomputing the earlier outputs it loads, or None."""
    shape = launch.shape
    contiguous = layout.contiguous_strides(shape)
    inputs = [
        (a, o, s, load)
        for a, o, s, load in zip(launch.arrays, launch.offsets, launch.strides, launch.loads)
    ]
    scalars = list(launch.scalars)
    exprs = list(launch.exprs)
    changed = False
    # (inputs grows as producers' inputs join: the loop visits those too)
    for k, (a, o, s, load) in enumerate(inputs):
        found = producers.get(owner(a))
        if found is None:
            continue
        p, producer, j = found
        if not (
            producer.shape == shape
            and producer.ct == launch.ct
            and a is producer.outs[j]
            and o == 0
            and s == contiguous
            and _same_value((None, producer.out_dtypes[j]), load, launch.ct)
            and not _written_between(owner(a), p + 1, at, writers)
            and not any(_written_between(owner(b), p, at, writers) for b in producer.arrays)
        ):
            continue
        loaded = {_key(i) for i in inputs}
        new = [
            m
            for m, i in enumerate(_inputs_of(producer))
            if _key(i) not in loaded and _full(i[2], shape)
        ]
        if len(new) > 1:
            continue  # it would read more arrays than it saves
        value = producer.exprs[j]
        if len(ir.topological([value])) > MAX_RECOMPUTED_NODES:
            continue
        # The producer's loads and scalars as this launch's.
        where = {_key(i): n for n, i in enumerate(inputs)}
        load_map = {}
        for m, i in enumerate(_inputs_of(producer)):
            if _key(i) not in where:
                where[_key(i)] = len(inputs)
                inputs.append(i)
            load_map[m] = ir.load(where[_key(i)])
        scalar_map = {m: ir.scalar(len(scalars) + m) for m in range(len(producer.scalars))}
        scalars.extend(producer.scalars)
        (value,) = ir.substitute([value], load_map, scalar_map)
        exprs = ir.substitute(exprs, {k: value}, {})
        changed = True
    if not changed:
        return None
    return rebuilt(launch, inputs, scalars, list(zip(launch.outs, exprs, launch.out_dtypes)))


def eliminate_dead(steps: list, keep: list, internal: set[int]) -> list:
    """``steps`` without the kernels' outputs that nothing later reads and nothing outside
    the plan can reach (and without kernels left with none)."""
    live = {owner(a) for a in keep}
    kept = []
    for fn, args in reversed(steps):
        if kernel_step(fn):
            dead = [
                k for k, o in enumerate(fn.outs) if owner(o) in internal and owner(o) not in live
            ]
            if len(dead) == len(fn.outs):
                continue
            if dead and isinstance(fn, Launch) and fn.exprs is not None:
                outputs = [
                    out
                    for k, out in enumerate(zip(fn.outs, fn.exprs, fn.out_dtypes))
                    if k not in dead
                ]
                fn = rebuilt(fn, _inputs_of(fn), list(fn.scalars), outputs)
                args = ()
        live.update(accesses(fn, args)[0])
        kept.append((fn, args))
    kept.reverse()
    return kept


def rebuilt(launch: Launch, inputs: list, scalars: list, outputs: list) -> Launch:
    """A launch over ``launch``'s shape computing ``outputs`` ((array, expression, dtype)
    triples), reading only the ``inputs`` and ``scalars`` they use."""
    nodes = ir.topological([e for _, e, _ in outputs])
    used = sorted({e.value for e in nodes if e.op == "load"})
    # Scalars of equal value are one (the constants of ops that were fused or recomputed
    # twice), so that their expressions become one too.
    values: dict[tuple, int] = {}
    scalar_map = {}
    for m in sorted({e.value for e in nodes if e.op == "scalar"}):
        n = values.setdefault((type(scalars[m]), scalars[m].tobytes()), len(values))
        scalar_map[m] = ir.scalar(n)
    exprs = ir.substitute(
        [e for _, e, _ in outputs], {m: ir.load(n) for n, m in enumerate(used)}, scalar_map
    )
    exprs = ir.shared(exprs)
    kept_scalars = [None] * len(values)
    for m, e in scalar_map.items():
        kept_scalars[e.value] = scalars[m]
    chosen = [inputs[m] for m in used]
    columns = tuple(list(column) for column in zip(*chosen)) if chosen else ([], [], [], [])
    return build(
        launch.shape,
        launch.ct,
        columns,
        kept_scalars,
        [(o, e, d) for (o, _, d), e in zip(outputs, exprs)],
    )


def _inputs_of(launch: Launch) -> list[tuple]:
    return list(zip(launch.arrays, launch.offsets, launch.strides, launch.loads))


def _key(item: tuple) -> tuple:
    a, o, s, load = item
    return id(a), o, s, load


def _full(strides, shape) -> bool:
    """Whether an operand of these strides varies over ``shape`` (is not one element)."""
    return any(s != 0 for s, n in zip(strides, shape) if n > 1)


def traffic(fn) -> tuple[int, int] | None:
    """(bytes a kernel step reads, bytes it writes): each input element it reads once, each
    output element once; None for other steps."""
    if not kernel_step(fn):
        return None
    return fn.read_bytes(), sum(o.nbytes for o in fn.outs)


def minimum_traffic(steps: list, keep: list) -> int:
    """The bytes a plan must move at least: every allocation it reads before writing it
    read once, every one the caller sees that it writes written once."""
    kept = {owner(a): a for a in keep}
    seen: set[int] = set()
    read = written = 0
    written_keys: set[int] = set()
    for fn, args in steps:
        reads, writes = accesses(fn, args)
        arrays = {owner(a): a for a in (fn.arrays if kernel_step(fn) else arrays_in(args))}
        for key in reads:
            if key not in seen:
                seen.add(key)
                if key in arrays:
                    read += arrays[key].nbytes
        for key in writes:
            seen.add(key)
            if key in kept and key not in written_keys:
                written_keys.add(key)
                written += kept[key].nbytes
    return read + written
