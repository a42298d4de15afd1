"""Fusion of a traced tape: consecutive elementwise launches become one kernel.

Launches that follow each other on the tape and compute over the same shape in the same
compute dtype are merged: a later launch's load of an earlier launch's output becomes
the expression that produced it, so the intermediate is never written to memory or read
back. An intermediate is still stored when anything outside the group reads its memory
(another step, a result, a gradient), and a launch that reads one back other than
element for element in its own dtype (transposed, flipped, or rounded to float16 or
wrapped to a narrow integer when stored) starts a new group. One pass over memory per
fused group is what brings elementwise chains close to the bandwidth floor.
"""

from __future__ import annotations

import numpy as np

from ..strided import layout
from . import cache, ir, lowering
from .binding import accesses, owner


def fuse(steps: list, keep: list[np.ndarray]) -> list:
    """``steps`` with runs of fusable launches merged. ``keep``: arrays whose contents
    must survive (results, gradients, inputs)."""
    groups: list[list] = []
    for fn, args in steps:
        if isinstance(fn, lowering.Launch) and fn.exprs is not None:
            last = groups[-1] if groups and isinstance(groups[-1], list) else None
            if (
                last
                and last[-1].shape == fn.shape
                and last[-1].ct == fn.ct
                and not _reads_back(last, fn)
            ):
                last.append(fn)
                continue
            groups.append([fn])
        else:
            groups.append((fn, args))
    readers = users(steps, keep)
    fused = []
    for group in groups:
        if isinstance(group, tuple):
            fused.append(group)
        elif len(group) == 1:
            fused.append((group[0], ()))
        else:
            fused.append((_merge(group, readers), ()))
    return fused


def _reads_back(group, launch) -> bool:
    """Whether ``launch`` reads memory a member of ``group`` writes other than as the
    value that member computed, element for element: in another order (a transpose, a
    flip) or rounded to a narrower dtype. In one loop it would read what the merged
    kernel never stores, or stores only later."""
    written = {
        owner(out): (out, dtype)
        for member in group
        for out, dtype in zip(member.outs, member.out_dtypes)
    }
    contiguous = layout.contiguous_strides(launch.shape)
    for a, o, s, load in zip(launch.arrays, launch.offsets, launch.strides, launch.loads):
        out, dtype = written.get(owner(a), (None, None))
        if out is not None and not (
            a is out and o == 0 and s == contiguous and _same_value((None, dtype), load, launch.ct)
        ):
            return True
    return False


def users(steps, keep) -> dict[int, set[int]]:
    """For each memory owner, the ids of the steps that read or write it (-1: the caller
    sees it)."""
    found: dict[int, set[int]] = {}
    for fn, args in steps:
        reads, writes = accesses(fn, args)
        for key in reads + writes:
            found.setdefault(key, set()).add(id(fn))
    for a in keep:
        found.setdefault(owner(a), set()).add(-1)
    return found


def _merge(group, readers) -> lowering.Launch:
    members = {id(launch) for launch in group}
    shape = group[0].shape
    contiguous = layout.contiguous_strides(shape)
    inputs: dict[tuple, int] = {}
    arrays, offsets, strides, loads = [], [], [], []
    scalars: list = []
    produced: dict[int, tuple] = {}  # id(out array) -> (expr, dtype)
    outputs: list = []
    for launch in group:
        load_map = {}
        for k, (a, o, s, load) in enumerate(
            zip(launch.arrays, launch.offsets, launch.strides, launch.loads)
        ):
            made = produced.get(id(a))
            if (
                made is not None
                and o == 0
                and s == contiguous
                and _same_value(made, load, launch.ct)
            ):
                load_map[k] = made[0]
                continue
            key = (id(a), o, s, load)
            if key not in inputs:
                inputs[key] = len(arrays)
                arrays.append(a)
                offsets.append(o)
                strides.append(s)
                loads.append(load)
            load_map[k] = ir.load(inputs[key])
        scalar_map = {j: ir.scalar(len(scalars) + j) for j in range(len(launch.scalars))}
        scalars.extend(launch.scalars)
        exprs = ir.substitute(launch.exprs, load_map, scalar_map)
        for out, e, dtype in zip(launch.outs, exprs, launch.out_dtypes):
            produced[id(out)] = (e, dtype)
            outputs.append((out, e, dtype))
    stored = [out for out in outputs if readers.get(owner(out[0]), set()) - members]
    return build(shape, group[0].ct, (arrays, offsets, strides, loads), scalars, stored)


def build(shape, ct: str, inputs, scalars: list, outputs: list) -> lowering.Launch:
    """The launch computing ``outputs``, (array, expression, dtype) triples, from
    ``inputs``, (arrays, offsets, strides, loads) over ``shape``, and ``scalars``."""
    arrays, offsets, strides, loads = inputs
    outs = [out for out, _, _ in outputs]
    exprs = [e for _, e, _ in outputs]
    out_dtypes = tuple(dtype for _, _, dtype in outputs)
    where = lowering.plan_layout(shape, strides)
    aliases = lowering.in_place_aliases(where.pattern, arrays, offsets, outs)
    source = lowering._source(
        exprs, tuple(loads), ct, out_dtypes, len(scalars), where.pattern, aliases
    )
    # The source is the key: a fused group has no smaller description. The debug log
    # names it by its hash (JITGRAD_DEBUG=2 prints it).
    kernel = cache.get(("fused", source), lambda: source)
    return lowering.Launch(
        kernel, where, arrays, offsets, tuple(loads), scalars, ct, outs, out_dtypes, exprs
    )


def _same_value(made, load, ct: str) -> bool:
    """Reading the stored output back gives exactly the expression's value: no rounding
    to a narrower dtype in between, and bools stay bools."""
    _, out_dtype = made
    dtype, as_bool = load
    if out_dtype == "bool":
        return dtype == "bool" and as_bool
    if np.dtype(out_dtype).kind in "iu" and np.dtype(out_dtype).itemsize < 8:
        return False  # computed in 64 bits (numba's integer arithmetic), wrapped when stored
    return out_dtype == dtype == ct and not as_bool
