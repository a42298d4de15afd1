"""jitgrad's benchmarks: ratios against numpy (and PyTorch when installed), side by side.

A row is one operation measured on jitgrad and numpy in the same process, with repeats
interleaved so that machine noise hits both sides alike. Rows are registered with
``@row``; a row's function builds its data (smaller with ``--quick``) and returns a
``Case`` of callables. ``python -m perf`` runs them and writes ``perf/RESULTS.md``.

Adding a row::

    @row("clone-f64", target=None)
    def _(ctx):
        a = ctx.rng.random(ctx.pick(1 << 24, 1 << 20))
        t = jg.from_numpy(a)
        return Case(f"{a.size} float64", jitgrad=t.clone, numpy=a.copy, alloc_bytes=a.nbytes)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Case:
    """What one row measures, built at the size the run asks for.

    Each callable runs the operation once and returns its result (or None); the first
    call is the warm-up (it compiles) and its results are compared with numpy's. Sides
    that write into one shared output (so that neither gets the faster memory) give
    ``reset``, which clears it between numpy's warm-up and jitgrad's. ``alloc_bytes`` is
    how many bytes of fresh output one call allocates, so the report can say how much of
    the time is page faults.
    """

    size: str
    jitgrad: Callable[[], Any]
    numpy: Callable[[], Any]
    torch: Callable[[], Any] | None = None
    alloc_bytes: int = 0
    reset: Callable[[], Any] | None = None
    rtol: float = 0.0  # results may differ by rounding (fused kernels, polynomial math)
    bytes_moved: int = 0  # bytes read + written once by one call: reported as GB/s
    bandwidth: float = 0.0  # this run's copy bandwidth (bytes/s) to compare GB/s with


@dataclass(frozen=True)
class Context:
    """Handed to every row function."""

    quick: bool
    torch: Any  # the torch module, or None when it is not importable
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    def pick(self, full, quick):
        return quick if self.quick else full


@dataclass(frozen=True)
class Row:
    name: str
    target: float | None  # the jitgrad speed-up over numpy to reach; None: informational
    build: Callable[[Context], Case]
    note: str = ""


ROWS: dict[str, Row] = {}


def row(name: str, target: float | None = None, note: str = ""):
    """Register ``fn(ctx) -> Case`` as the row ``name`` (in definition order)."""

    def register(fn):
        if name in ROWS:
            raise ValueError(f"duplicate perf row {name!r}")
        ROWS[name] = Row(name, target, fn, note)
        return fn

    return register
