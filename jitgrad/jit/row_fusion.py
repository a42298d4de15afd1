"""Row kernels: reductions over the last axis fused with the elementwise work around them.

Softmax, log_softmax, layer normalisation and their gradients reduce each row and then
use the row's result in elementwise work over that row. Traced op by op, that is a
kernel per reduction and per elementwise group, each reading and writing whole tensors.
A row kernel takes one row at a time, (R, C) after merging the leading axes: each
reduction is a loop over the row (the elementwise work that produces its operand is
computed in that loop, into a row-sized scratch that the sum then adds up), the
row's results (max, sum, mean, variance) stay in locals, and a last loop over the row
writes the elementwise outputs that anything outside the kernel reads. A row stays in
cache between the loops, so memory sees one read of the inputs and one write of the
outputs. Rows are shared out among threads.

Sums add up in float64, in the order that vectorises: a fused float32 sum rounds to the
eager one's value but in rare ties, a float64 one within a few ulps of it.
"""

from __future__ import annotations

import re

import numpy as np

from .. import threads
from .._config import config
from ..ops.primitives import PRIMITIVES
from ..recording import same_items
from ..strided import layout
from . import cache, codegen, ir
from .binding import accesses, owner
from .fusion import _same_value, users
from .lowering import Launch
from .reduction import Reduce


def fuse_rows(steps: list, keep: list) -> list:
    """``steps`` with each reduction over the rows' last axis, or summing over the rows, fused
    with the elementwise launches and reductions around it over the same rows into a
    row kernel."""
    readers = users(steps, keep)
    out: list = []
    group: _Group | None = None
    for step in steps:
        fn, args = step
        if group is not None and group.join(fn):
            continue
        if isinstance(fn, Reduce):
            started = _Group.starting(fn)
            if started is not None:
                if group is not None:
                    out.extend(group.close(readers))
                group = started
                # The kernels just before it over the same rows join it too.
                while (
                    out
                    and isinstance(out[-1][0], (Launch, Reduce))
                    and group.join(out[-1][0], before=True)
                ):
                    out.pop()
                continue
        if group is not None:
            if group.independent(fn, args):
                out.append(step)  # runs before the group, which waits for more members
                continue
            out.extend(group.close(readers))
            group = None
        out.append(step)
    if group is not None:
        out.extend(group.close(readers))
    return out


def _rows_of(shape) -> tuple[int, int]:
    return layout.numel(shape[:-1]), shape[-1]


def _row_strides(strides, full_shape) -> tuple[int, int] | None:
    """(row stride, column stride) of an operand laid over ``full_shape``'s rows (its
    leading axes merged into one), or None when they do not merge."""
    lead, lead_strides = full_shape[:-1], strides[:-1]
    merged, merged_strides = layout.coalesce(list(lead), list(lead_strides))
    kept = [s for n, s in zip(merged, merged_strides) if n > 1]
    if len(kept) > 1:
        return None
    return (kept[0] if kept else 0), strides[-1]


class _Group:
    """The members of one row kernel, as they join: their values over rows ``R`` and
    columns ``C``, the external inputs they read and the outputs they write."""

    def __init__(self, shape, ct: str, flat: int | None = None):
        """``flat``: the length of the vector the group's (rows, columns) cut, if it
        computes over a vector."""
        self.shape, self.ct, self.flat = shape, ct, flat
        self.rows, self.cols = _rows_of(shape)
        self.members: list = []
        self.inputs: list[tuple] = []  # (array, offset, (row stride, col stride), load)
        self.scalars: list = []
        self.values: dict[int, tuple] = {}  # owner -> ("element" | "row", expression, array)
        self.row_values: list[tuple] = []  # ("map", expr) or (kind, element expr)
        self.outputs: list[tuple] = []  # (array, level, expression, dtype)
        # Sums over the rows, finished once every row is done: (kind, expression, array,
        # dtype), kind "column" (each column's sum), "total" (of every element) or
        # "row total" (of a row value over the rows).
        self.accumulations: list[tuple] = []
        self.read: set[int] = set()  # allocations read from outside the group
        self.written: set[int] = set()

    @classmethod
    def starting(cls, reduce: Reduce) -> _Group | None:
        """A group over the rows of ``reduce``'s operand: one reducing each row, or
        (once launches before it join) one summing over the rows of a matrix or more."""
        shape = reduce.shape
        if (
            len(shape) == 1
            and reduce.kind == "sum"
            and reduce.load in ("float32", "float64")
            and reduce.out_dtype == reduce.load
            and shape[0] >= config.parallel_threshold
        ):
            # A long vector's sum: its elements taken as rows of a few thousand, so that
            # threads share them and the producers' work is summed where it is computed.
            cols = next((c for c in (4096, 2048, 1024, 512, 256) if shape[0] % c == 0), None)
            group = cls((shape[0] // cols, cols), reduce.load, flat=shape[0]) if cols else None
            return group if group is not None and group.join(reduce) else None
        if (
            len(shape) < 1
            or (reduce.axes != (len(shape) - 1,) and len(shape) < 2)
            or reduce.load not in ("float32", "float64")
            or reduce.out_dtype != reduce.load
            or shape[-1] < 2
            or layout.numel(shape) == 0
            # One long row would run on one thread, where the reduction shares it out.
            or (
                layout.numel(shape[:-1]) < threads.count()
                and shape[-1] >= config.parallel_threshold
            )
        ):
            return None
        group = cls(shape, reduce.load)
        return group if group.join(reduce) else None

    # -- joining -----------------------------------------------------------------------------

    def join(self, fn, before: bool = False) -> bool:
        """Add ``fn`` when it computes over the group's rows: at the end, or ``before`` the
        first member (a kernel that ran just before it)."""
        saved = (
            list(self.inputs),
            list(self.scalars),
            dict(self.values),
            list(self.row_values),
            list(self.outputs),
            list(self.accumulations),
            set(self.read),
            set(self.written),
        )
        if before:  # every member is derived again after it: its values come first
            members = [fn, *self.members]
            self._reset()
            ok = all(self._add(m) for m in members)
        else:
            members = [*self.members, fn]
            ok = self._add(fn)
        if not ok:
            (
                self.inputs,
                self.scalars,
                self.values,
                self.row_values,
                self.outputs,
                self.accumulations,
                self.read,
                self.written,
            ) = saved
            return False
        self.members = members
        return True

    def _reset(self) -> None:
        self.inputs, self.scalars, self.values = [], [], {}
        self.row_values, self.outputs, self.accumulations = [], [], []
        self.read, self.written = set(), set()

    def _add(self, fn) -> bool:
        if isinstance(fn, Reduce):
            return self._add_reduce(fn)
        if isinstance(fn, Launch) and fn.exprs is not None and fn.ct == self.ct:
            return self._add_launch(fn)
        return False

    def _level(self, shape) -> str | None:
        if tuple(shape) == tuple(self.shape) or (self.flat and tuple(shape) == (self.flat,)):
            return "element"
        if not self.flat and tuple(shape) in (self.shape[:-1] + (1,), self.shape[:-1]):
            return "row"
        return None

    def _operand(self, array, offset, strides, load, shape, level: str):
        """The expression reading one operand of a member of ``level`` over ``shape``:
        a value of the group, or a new input; None when the group cannot read it."""
        if self.flat and tuple(shape) == (self.flat,):  # element i is (i // cols, i % cols)
            (step,) = strides
            shape, strides = self.shape, (step * self.cols, step)
        found = self.values.get(owner(array))
        lead = len(self.shape) - 1
        if level == "row":  # its strides as the row value's over the whole shape
            strides = tuple(strides[:lead]) + (0,)
        if found is not None:
            kind, value, stored = found
            dtype = next(d for a, _, _, d in self.outputs if a is stored)
            if kind == "element":
                ok = level == "element" and strides == layout.contiguous_strides(shape)
            else:  # a row value is read once per row, in the rows' order
                rows = layout.contiguous_strides(self.shape[:lead])
                ok = strides[lead] == 0 and all(
                    strides[k] == rows[k] for k in range(lead) if self.shape[k] > 1
                )
            if not (ok and array is stored and offset == 0):
                return None
            return value if _same_value((None, dtype), load, self.ct) else None
        if owner(array) in self.written:
            return None  # (written by the group in another layout)
        rs = _row_strides(strides, self.shape)
        if rs is None:
            return None
        key = (id(array), offset, rs, load)
        for k, (a, o, s, d) in enumerate(self.inputs):
            if (id(a), o, s, d) == key:
                return ir.load(k)
        self.inputs.append((array, offset, rs, load))
        self.read.add(owner(array))
        return ir.load(len(self.inputs) - 1)

    def _row_level(self, e: ir.Expr) -> bool:
        """Whether an expression is one value per row: it loads no input along the row."""
        return all(n.op != "load" or self.inputs[n.value][2][1] == 0 for n in ir.topological([e]))

    def _add_launch(self, launch: Launch) -> bool:
        level = self._level(launch.shape)
        if level is None:
            return False
        load_map = {}
        for k, (a, o, s, load) in enumerate(
            zip(launch.arrays, launch.offsets, launch.strides, launch.loads)
        ):
            value = self._operand(a, o, s, load, launch.shape, level)
            if value is None or (level == "row" and not self._row_level(value)):
                return False
            load_map[k] = value
        if any(owner(o) in self.read for o in launch.outs):
            return False  # it overwrites what the group reads
        scalar_map = {m: ir.scalar(len(self.scalars) + m) for m in range(len(launch.scalars))}
        self.scalars.extend(launch.scalars)
        exprs = ir.substitute(launch.exprs, load_map, scalar_map)
        for o, e, dtype in zip(launch.outs, exprs, launch.out_dtypes):
            if level == "row":
                self.row_values.append(("map", e))
                e = ir.Expr("row", (), len(self.row_values) - 1)
            self.values[owner(o)] = (level, e, o)
            self.outputs.append((o, level, e, dtype))
            self.written.add(owner(o))
        return True

    def _add_reduce(self, reduce: Reduce) -> bool:
        if reduce.load != self.ct or reduce.out_dtype != self.ct or owner(reduce.out) in self.read:
            return False
        n = len(self.shape)
        shape, axes = tuple(reduce.shape), reduce.axes
        if self.flat and shape == (self.flat,) and reduce.kind == "sum":
            kind, level = "total", "element"
        elif shape == tuple(self.shape):
            if axes == (n - 1,):
                kind = reduce.kind
            elif reduce.kind == "sum" and axes == tuple(range(n - 1)) and n > 1:
                kind = "column"
            elif reduce.kind == "sum" and axes == tuple(range(n)):
                kind = "total"
            else:
                return False
            level = "element"
        elif (
            self._level(shape) == "row"
            and reduce.kind == "sum"
            and axes == tuple(range(len(shape)))
        ):
            kind, level = "row total", "row"
        else:
            return False
        value = self._operand(
            reduce.array, reduce.offset, reduce.strides, (reduce.load, False), shape, level
        )
        if value is None or (level == "row" and not self._row_level(value)):
            return False
        self.written.add(owner(reduce.out))
        if kind in ("column", "total", "row total"):
            self.accumulations.append((kind, value, reduce.out, reduce.out_dtype))
            return True
        self.row_values.append((kind, value))
        e = ir.Expr("row", (), len(self.row_values) - 1)
        self.values[owner(reduce.out)] = ("row", e, reduce.out)
        self.outputs.append((reduce.out, "row", e, reduce.out_dtype))
        return True

    def independent(self, fn, args) -> bool:
        """Whether a step that cannot join may run before the group's kernel: it reads
        nothing the group writes and writes nothing the group reads."""
        reads, writes = accesses(fn, args)
        return not (set(reads) & self.written or set(writes) & (self.read | self.written))

    # -- closing -----------------------------------------------------------------------------

    def close(self, readers) -> list:
        """The steps that run the group: one row kernel, or a lone reduction as it was."""
        if len(self.members) < 2:
            return [(m, ()) for m in self.members]  # a reduction alone, as recorded
        members = {id(m) for m in self.members}
        stored = [o for o in self.outputs if readers.get(owner(o[0]), set()) - members]
        accumulated = [a for a in self.accumulations if readers.get(owner(a[2]), set()) - members]
        return [(RowLaunch(self, stored, accumulated), ())]


class RowLaunch:
    """One row kernel over fixed arrays (``_Group``'s members): a step of a plan, which
    binding and scheduling see like a ``Launch`` (``arrays``, ``outs``, ``args``).

    Its rows are shared out among threads in pieces; each piece adds its rows' sums over
    the rows (``accumulated``) into a partial row of its own, and ``combine`` adds those
    up once every piece is done."""

    def __init__(self, group: _Group, stored: list, accumulated: list):
        inputs = group.inputs
        self.shape, self.ct = group.shape, group.ct
        self.arrays = [a for a, _, _, _ in inputs]
        self.outs = [a for a, _, _, _ in stored] + [a for _, _, a, _ in accumulated]
        source = _source(group, stored, accumulated)
        self.kernel = cache.get(("rows", source), lambda: source)
        self._call = self.kernel.call("serial")
        # (only a kernel with sums over the rows has a combine to compile)
        self._combine = self.kernel.call("combine") if accumulated else None
        self.args = [group.rows, group.cols]
        for a, o, (rs, cs), _ in inputs:
            self.args += [a, o, rs, cs]
        self.args += list(group.scalars) + self.outs
        self._first_out = len(self.args) - len(self.outs)
        self._row_outs = [level == "row" for _, level, _, _ in stored]
        numel = layout.numel(self.shape)
        threshold = config.parallel_from(True)
        parts = threads.pieces(numel, threshold) if numel >= threshold else 1
        self._bounds = threads.bounds(group.rows, 1, parts)
        self._seen, self._shares = (), []
        self._parts = [
            np.zeros((len(self._bounds), group.cols if kind == "column" else 1))
            for kind, _, _, _ in accumulated
        ]

    def array_positions(self) -> list[tuple[int, int | None]]:
        inputs = [(2 + 4 * k, 3 + 4 * k) for k in range(len(self.arrays))]
        return inputs + [(self._first_out + k, None) for k in range(len(self.outs))]

    def read_bytes(self) -> int:
        rows, cols = self.args[0], self.args[1]
        return sum(
            a.itemsize * (rows if rs else 1) * (cols if cs else 1)
            for a, _, rs, cs in zip(*[iter(self.args[2 : 2 + 4 * len(self.arrays)])] * 4)
        )

    def __call__(self) -> None:
        self._run(self._call, self._combine, self.args)

    def direct(self) -> tuple:
        if self._call.compiled is None:
            return self, []
        n = len(self.args) - len(self._parts)
        fn = self._call.direct(self.args[:n] + [p[0] for p in self._parts])
        combine = self._combine.direct([self._parts[0], self.args[n]]) if self._parts else None
        return (lambda *args: self._run(fn, combine, args)), self.args

    def _run(self, fn, combine, args) -> None:
        parts = self._parts
        n = len(args) - len(parts)  # the kernel's own arguments; then the sums' outputs
        shares = self._shares
        if not same_items(args, self._seen):  # (worked out again only when they change)
            shares = self._shares = [self._share(args, n, k) for k in range(len(self._bounds))]
            self._seen = tuple(args)

        def piece(k):
            fn(*shares[k])

        threads.run(piece, len(shares), serial=self._call.compiled is None)
        for p, out in zip(parts, args[n:]):
            combine(p, out)

    def _share(self, args, n: int, k: int) -> list:
        """Piece ``k``'s arguments: its rows of every input and output, its partial rows."""
        lo, hi = self._bounds[k]
        cols, first_out = args[1], self._first_out
        share = list(args[:n])
        share[0] = hi - lo
        for i in range(len(self.arrays)):  # (array, offset, row stride, column stride)
            share[3 + 4 * i] = args[3 + 4 * i] + lo * args[4 + 4 * i]
        for j, row in enumerate(self._row_outs):
            out = args[first_out + j]
            share[first_out + j] = out[lo:hi] if row else out[lo * cols : hi * cols]
        return share + [p[k] for p in self._parts]


def _source(group: _Group, stored: list, accumulated: list) -> str:
    """The module of a row kernel computing ``stored`` ((array, level, expression, dtype))
    and the sums ``accumulated`` ((kind, expression, array, dtype)) into partial rows."""
    inputs = group.inputs
    sig = codegen.Signature(
        input_dtypes=tuple(load[0] for _, _, _, load in inputs),
        bool_inputs=tuple(load[1] for _, _, _, load in inputs),
        compute=group.ct,
        output_dtypes=tuple(d for _, _, _, d in stored),
        n_scalars=len(group.scalars),
        loop="rows",
        ndim=0,
        broadcast=(),
    )
    kinds = ["zero" if cs == 0 else "unit" if cs == 1 else "any" for _, _, (_, cs), _ in inputs]
    # The loops of one row, in order: the reductions' operands (those depending on the same
    # earlier row values share a loop; a row map is no loop), then the stored elements and
    # the sums over the rows. One DAG for all: a value several members computed is one node.
    row_values = group.row_values
    needed = sorted(
        _needed(row_values, [e for _, _, e, _ in stored] + [e for _, e, _, _ in accumulated])
    )
    elements = [k for k, (_, level, _, _) in enumerate(stored) if level == "element"]
    per_element = [k for k, (kind, _, _, _) in enumerate(accumulated) if kind != "row total"]
    shared = ir.shared(
        [row_values[k][1] for k in needed]
        + [stored[k][2] for k in elements]
        + [e for _, e, _, _ in accumulated]
    )
    definitions = dict(zip(needed, shared))
    element_exprs = shared[len(needed) : len(needed) + len(elements)]
    sums = shared[len(needed) + len(elements) :]
    phase: dict[int, int] = {}
    for k in needed:
        deps = [phase[n.value] for n in ir.topological([definitions[k]]) if n.op == "row"]
        phase[k] = max(deps, default=0) + (row_values[k][0] != "map")
    reductions: dict[int, list[int]] = {}
    for k in needed:
        if row_values[k][0] != "map":
            reductions.setdefault(phase[k], []).append(k)
    last = element_exprs + [sums[k] for k in per_element]
    loops = [[definitions[k] for k in ks] for _, ks in sorted(reductions.items())]
    if last:
        loops.append(last)
    # Transcendental values that more than one loop needs are computed once, in the first,
    # and kept in a row-sized buffer that later loops read: a row stays in cache.
    seen_in: dict[int, int] = {}
    heavy: dict[int, ir.Expr] = {}
    for n, exprs in enumerate(loops):
        for node in ir.topological(exprs):
            first = seen_in.setdefault(node.id, n)
            if first != n and _transcendental(node) and _varies(node, kinds):
                heavy[node.id] = node
    held: set[int] = set()
    scalar_lines: list[str] = []

    def named(body, exprs):
        for node in ir.topological(exprs):
            if node.op == "row":
                body.names[node.id] = f"r{node.value}"
        return body

    def loop(exprs, prefix):
        """The body of one loop over a row: loads, the held values, the code."""
        body = named(codegen._Body(sig, prefix), exprs)
        loaded_held = []
        for node in ir.topological(exprs):
            if node.id in held:
                body.names[node.id] = f"hv{node.id}"
                loaded_held.append(f"hv{node.id} = h{node.id}[j]")
        values = [body.value(e) for e in exprs]
        scalar_lines.extend(body.prologue)
        keep = [
            f"h{node.id}[j] = {body.names[node.id]}"
            for node in ir.topological(exprs)
            if node.id in heavy and node.id not in held
        ]
        held.update(n.id for n in ir.topological(exprs) if n.id in heavy)
        used = sorted(
            {n.value for n in ir.topological(exprs) if n.op == "load" and kinds[n.value] != "zero"}
        )
        loads = [
            f"x{i} = "
            + body.load(i, f"v{i}[j]" if kinds[i] == "unit" else f"a{i}[b{i} + j * cs{i}]")
            for i in used
        ]
        return values, loads + loaded_held + body.lines + keep

    body_lines: list[str] = []
    scratches: list[str] = []

    def row_level(exprs, prefix) -> list[str]:
        body = named(codegen._Body(sig, prefix), exprs)
        values = [body.value(e) for e in exprs]
        scalar_lines.extend(body.prologue)
        body_lines.extend(body.lines)
        return values

    def row_maps(p):
        for k in needed:
            if row_values[k][0] == "map" and phase[k] == p:
                (value,) = row_level([definitions[k]], f"m{k}_")
                body_lines.append(f"r{k} = {value}")

    row_maps(0)
    for p, ks in sorted(reductions.items()):
        # An operand that is an input's row as it is: reduced where it lies.
        direct = {
            k: definitions[k].value
            for k in ks
            if definitions[k].op == "load"
            and kinds[definitions[k].value] == "unit"
            and inputs[definitions[k].value][3][0] == group.ct
        }
        looped = [k for k in ks if k not in direct]
        # An operand kept in a row buffer for later loops is reduced there.
        operands = {k: f"h{definitions[k].id}" for k in looped if definitions[k].id in heavy}
        if looped:
            values, lines = loop([definitions[k] for k in looped], f"e{p}_")
            body_lines.append("for j in range(cols):")
            body_lines += [f"    {line}" for line in lines]
            for k, value in zip(looped, values):
                if k not in operands:
                    operands[k] = f"scratch{k}"
                    scratches.append(operands[k])
                    body_lines.append(f"    scratch{k}[j] = {value}")
        for k in ks:
            operand = f"v{direct[k]}" if k in direct else operands[k]
            body_lines.append(f"r{k} = DT(row_{row_values[k][0]}({operand}, cols))")
        row_maps(p)
    if last:
        values, lines = loop(last, "y")
        for k in elements:
            body_lines.append(f"w{k} = out{k}[r * cols:(r + 1) * cols]")
        body_lines.append("for j in range(cols):")
        body_lines += [f"    {line}" for line in lines]
        for k, value in zip(elements, values):
            save = "store_half" if stored[k][3] == "float16" else "store"
            body_lines.append(f"    {save}(w{k}, j, {value})")
        for k, value in zip(per_element, values[len(elements) :]):
            if accumulated[k][0] == "column":
                body_lines.append(f"    part{k}[j] += {value}")
            else:
                body_lines.append(f"    total{k}[j] = {value}")
                scratches.append(f"total{k}")
        for k in per_element:
            if accumulated[k][0] == "total":
                body_lines.append(f"part{k}[0] += row_sum(total{k}, cols)")
    for k, (kind, _, _, _) in enumerate(accumulated):
        if kind == "row total":
            (value,) = row_level([sums[k]], f"t{k}_")
            body_lines.append(f"part{k}[0] += {value}")
    for k, (_, level, e, dtype) in enumerate(stored):
        if level == "row":
            save = "store_half" if dtype == "float16" else "store"
            body_lines.append(f"{save}(out{k}, r, r{e.value})")
    params = ["rows", "cols"]
    params += [f"a{i}, o{i}, rs{i}, cs{i}" for i in range(len(inputs))]
    params += [f"s{j}" for j in range(len(group.scalars))]
    params += [f"out{k}" for k in range(len(stored))]
    params += [f"part{k}" for k in range(len(accumulated))]
    lines = [
        "@njit(cache=True, error_model='numpy', nogil=True)",
        f"def serial({', '.join(params)}):",
        *[f"    {name} = np.empty(cols, DT)" for name in scratches],
        *[f"    h{n} = np.empty(cols, DT)" for n in heavy],
        *[f"    part{k}[:] = 0.0" for k in range(len(accumulated))],
        *[f"    {line}" for line in scalar_lines],
        "    for r in range(rows):",
    ]
    for i, kind in enumerate(kinds):
        lines.append(f"        b{i} = o{i} + r * rs{i}")
        if kind == "zero":
            lines.append(f"        x{i} = {codegen._Body(sig).load(i, f'a{i}[b{i}]')}")
        elif kind == "unit":
            lines.append(f"        v{i} = a{i}[b{i}:b{i} + cols]")
    lines += [f"        {line}" for line in body_lines]
    header = [
        "import math",
        "import numpy as np",
        "from numba import njit",
        "from jitgrad.jit import vmath as vm",
        "from jitgrad.jit.row_reductions import combine, row_max, row_min, row_sum",
        "from jitgrad.storage.convert import half_to_float, store, store_half",
        "",
        f"DT = np.{group.ct}",
    ]
    source = "\n".join(header) + "\n\n\n" + "\n".join(lines) + "\n"
    # Node ids name the held buffers: renumbered, so equal kernels have equal sources.
    for n, node_id in enumerate(heavy):
        source = re.sub(rf"\bh(v?){node_id}\b", rf"h\g<1>_{n}", source)
    return source


def _transcendental(node: ir.Expr) -> bool:
    primitive = PRIMITIVES.get(node.op)
    return primitive is not None and primitive.vmath is not None


def _varies(node: ir.Expr, kinds) -> bool:
    """Whether a value changes along the row (it loads an element)."""
    return any(n.op == "load" and kinds[n.value] != "zero" for n in ir.topological([node]))


def _needed(row_values, exprs) -> set[int]:
    """The row values that ``exprs`` use, directly or through other row values."""
    needed: set[int] = set()
    pending = list(exprs)
    while pending:
        for node in ir.topological([pending.pop()]):
            if node.op == "row" and node.value not in needed:
                needed.add(node.value)
                pending.append(row_values[node.value][1])
    return needed
