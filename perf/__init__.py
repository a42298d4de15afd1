"""jitgrad's benchmarks: ratios against numpy, and PyTorch and JAX when installed, side by side.

A row is one operation measured on jitgrad and numpy in a fresh process of the row's own,
with repeats interleaved so that machine noise hits both alike, and (when installed, and
where the row gives them) on PyTorch and JAX, each in a process of its own right after
(``isolated``): torch and jax are never imported where jitgrad and numpy are timed, and no
row's times depend on the rows that ran before it. Rows are registered
with ``@row``; a row's function builds its data (smaller with ``--quick``) from
``ctx.rng``, which starts from the same seed for every row in every process, and returns a
``Case`` of callables. ``python -m perf`` runs them and writes ``perf/RESULTS.md``. Rows
registered through a ``section`` get a table of their own under its heading; a row's
targets beyond numpy (``vs_torch``, ``vs_jax``, ``floor``) are reported in one table.

Adding a row::

    @row("clone-f64", target=None)
    def _(ctx):
        a = ctx.rng.random(ctx.pick(1 << 24, 1 << 20))
        t = jg.from_numpy(a)
        return Case(f"{a.size} float64", jitgrad=t.clone, numpy=a.copy, alloc_bytes=a.nbytes)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

# The thread-waiting policy the run was started with, read before anything imports jitgrad
# (which sets OMP_WAIT_POLICY=PASSIVE for its own OpenMP threads): the comparators'
# processes get this one, as any user of their library would (``isolated``).
LAUNCH_OMP_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def launch_env() -> dict:
    """The environment of the run's child processes (each row's, each comparator's): the
    one the run was started with, where jitgrad's wait policy is not set, with this
    package importable."""
    env = dict(os.environ)
    if LAUNCH_OMP_WAIT_POLICY is None:
        env.pop("OMP_WAIT_POLICY", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_ROOT, env.get("PYTHONPATH")]))
    return env


@dataclass(frozen=True)
class Case:
    """What one row measures, built at the size the run asks for.

    Each callable runs the operation once and returns its result (or None); the first
    call is the warm-up (it compiles) and its results are compared with numpy's. ``torch``
    and ``jax`` are the comparators' sides (None: the row has none for that library; a
    JAX side blocks until its result is ready). Sides
    that write into one shared output (so that neither gets the faster memory) give
    ``reset``, which clears it between numpy's warm-up and jitgrad's. ``alloc_bytes`` is
    how many bytes of fresh output one call allocates, so the report can say how much of
    the time is page faults.
    """

    size: str
    jitgrad: Callable[[], Any]
    numpy: Callable[[], Any]
    torch: Callable[[], Any] | None = None
    jax: Callable[[], Any] | None = None
    alloc_bytes: int = 0
    reset: Callable[[], Any] | None = None
    rtol: float = 0.0  # results may differ by rounding (fused kernels, polynomial math)
    atol: float | None = None  # the absolute tolerance beside rtol; None: rtol itself
    bytes_moved: int = 0  # bytes read + written once by one call: reported as GB/s
    bandwidth: float = 0.0  # this run's copy bandwidth (bytes/s) to compare GB/s with
    # Python functions jitgrad's side enters per op, counted once after the warm-up: a
    # measure of eager overhead that is the same on every machine and in every run.
    calls_per_op: float = 0.0


@dataclass(frozen=True)
class Context:
    """Handed to every row function. ``torch`` and ``jax`` are set only in that library's
    own process (``isolated``); where jitgrad and numpy are timed both are None."""

    quick: bool
    torch: Any = None  # the torch module, or None
    jax: Any = None  # the jax module (CPU, float64 enabled), or None
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    def pick(self, full, quick):
        return quick if self.quick else full

    def seeded(self) -> Context:
        """This context with a new generator at seed 0: a row gets the same data whether it
        runs alone, after other rows, or in a comparator's process."""
        return replace(self, rng=np.random.default_rng(0))


@dataclass(frozen=True)
class Row:
    name: str
    target: float | None  # the jitgrad speed-up over numpy to reach; None: informational
    build: Callable[[Context], Case]
    note: str = ""
    vs_torch: float | None = None  # the speed-up over PyTorch eager to reach; None: none
    vs_jax: float | None = None  # the speed-up over jax.jit to reach; None: none
    # jitgrad's time over the memory floor (the Case's bytes_moved at its bandwidth) to stay
    # within; None: none
    floor: float | None = None
    section: str = ""  # the report's section (see ``section``); "": the main table


ROWS: dict[str, Row] = {}
SECTIONS: dict[str, str] = {}  # a section's title -> what its rows measure

# The modules whose ``@row``s register the rows, in the report's order.
_ROW_MODULES = ("rows", "rows_compute", "rows_corpus", "rows_fusion")


def row(
    name: str,
    target: float | None = None,
    note: str = "",
    vs_torch: float | None = None,
    vs_jax: float | None = None,
    floor: float | None = None,
    section: str = "",
):
    """Register ``fn(ctx) -> Case`` as the row ``name`` (in definition order)."""
    if section and section not in SECTIONS:
        raise ValueError(f"unknown perf section {section!r}: declare it with section()")

    def register(fn):
        if name in ROWS:
            raise ValueError(f"duplicate perf row {name!r}")
        ROWS[name] = Row(name, target, fn, note, vs_torch, vs_jax, floor, section)
        return fn

    return register


def section(title: str, about: str):
    """Declare the report section ``title``, whose rows get a table of their own under that
    heading, introduced by ``about``: returns ``row`` with the section filled in."""
    if title in SECTIONS:
        raise ValueError(f"duplicate perf section {title!r}")
    SECTIONS[title] = about
    return partial(row, section=title)


def register_rows() -> None:
    """Import the row modules, which register every row (they import jitgrad: a
    comparator's process calls this only after importing its library)."""
    for module in _ROW_MODULES:
        importlib.import_module(f"{__name__}.{module}")
