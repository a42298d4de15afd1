"""Measure rows side by side and render the report.

Method: each callable is called once first (compiling, and giving results to compare),
then the sides are timed in interleaved rounds (the order rotates every round) and the
median per side is kept. Calls faster than a few milliseconds are repeated in batches
so that one sample is long enough for the clock. The machine is shared and noisy:
only the ratios measured in one run mean anything, never absolute times across runs.
The same ``measure`` times jitgrad and numpy in the runner's process and one comparator
in each comparator's process (``isolated``), which adds its time to the runner's Result.
"""

from __future__ import annotations

import gc
import hashlib
import os
import platform
import resource
import statistics
import time
from dataclasses import dataclass, field, fields

import numpy as np

from . import SECTIONS, Case, Context, Row

_MIN_SAMPLE = 2e-3  # seconds; shorter calls are batched up to this


@dataclass
class Result:
    row: Row
    case: Case | None
    times: dict[str, float]  # side -> median seconds per call
    others: float = float("nan")  # cores other processes kept busy during the timing
    error: str = ""
    spread: dict = field(default_factory=dict)  # side -> (fastest, slowest) round
    failed: dict = field(default_factory=dict)  # comparator side -> why it was not timed
    loads: dict = field(default_factory=dict)  # comparator side -> others' load in its process
    built: str = ""  # the case's size and its data's fingerprint: equal where built alike
    faulted: dict = field(default_factory=dict)  # side -> bytes of page faults per call

    def to_json(self) -> dict:
        """Everything but the row and the case's callables: what a row's process sends back."""
        data = {name: getattr(self, name) for name in _SENT}
        if self.case is not None:
            data["case"] = {
                f.name: getattr(self.case, f.name)
                for f in fields(Case)
                if not callable(getattr(self.case, f.name))
            }
        return data

    @classmethod
    def from_json(cls, row: Row, data: dict) -> Result:
        case = data.get("case")
        if case is not None:
            case = Case(jitgrad=None, numpy=None, **case)
        sent = {name: data[name] for name in _SENT}
        sent["spread"] = {side: tuple(pair) for side, pair in sent["spread"].items()}
        return cls(row, case, **sent)

    def vs_numpy(self, side: str) -> float | None:
        """numpy's time over ``side``'s: above 1 that side is faster than numpy."""
        if "numpy" in self.times and side in self.times:
            return self.times["numpy"] / self.times[side]
        return None

    @property
    def ratio(self) -> float | None:
        if "numpy" in self.times and "jitgrad" in self.times:
            return self.times["numpy"] / self.times["jitgrad"]
        return None

    @property
    def status(self) -> str:
        if self.error:
            return "ERROR"
        if self.row.target is None:
            return "info"
        return "PASS" if self.ratio >= self.row.target else "MISS"


_SENT = ("times", "others", "error", "spread", "failed", "loads", "built", "faulted")


def _batch(fn) -> int:
    """Calls per timed sample, sized on a call after one more untimed one: a jitted step's
    first call after its trace still compiles the plan's fused kernels."""
    fn()
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    del out
    return max(1, min(10_000, int(_MIN_SAMPLE / max(elapsed, 1e-9))))


def _time(fn, number: int) -> tuple[float, float]:
    """Seconds per call, and bytes per call of the pages the calls faulted in."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    for _ in range(number):
        out = fn()
        del out  # free a fresh output before the next call, as a user's loop would
    seconds = (time.perf_counter() - start) / number
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return seconds, faults * resource.getpagesize() / number


def _fault_pair(nbytes: int):
    """Callables whose time difference is the cost of faulting in ``nbytes`` fresh bytes."""
    warm = np.empty(nbytes, np.uint8)

    def fresh():
        np.empty(nbytes, np.uint8).fill(1)

    def reused():
        warm.fill(1)

    return fresh, reused


def _same(a, b, rtol: float = 0.0, atol: float | None = None) -> bool:
    if hasattr(a, "detach"):  # a torch tensor
        a = a.detach()
    a, b = np.asarray(a), np.asarray(b)
    if rtol:
        return np.allclose(a, b, rtol=rtol, atol=rtol if atol is None else atol)
    return np.array_equal(a, b)


def copy_bandwidth() -> float:
    """Bytes per second of a STREAM-like copy (read + write) of 2^24 float32, here, now."""
    src = np.ones(1 << 24, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = min(_time(lambda: np.copyto(dst, src), 5)[0] for _ in range(3))
    return 2 * src.nbytes / best


class _LoadMeter:
    """CPU time other processes used while a block ran, in cores (from /proc/stat).

    The machine is shared: a parallel kernel whose second thread competes with another
    process can lose several scheduler ticks per call, which says nothing about the kernel.
    """

    _TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __enter__(self):
        self.wall, self.ours, self.busy = time.perf_counter(), time.process_time(), self._busy()
        return self

    def __exit__(self, *exc):
        wall = time.perf_counter() - self.wall
        ours = time.process_time() - self.ours
        busy = self._busy() - self.busy
        valid = wall > 0 and self.busy >= 0
        self.others = max(0.0, busy - ours) / wall if valid else float("nan")

    @classmethod
    def _busy(cls) -> float:
        """Seconds of CPU the whole machine has spent busy (user, system, irq, steal)."""
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return -1.0
        # user nice system idle iowait irq softirq steal ...
        return sum(fields[i] for i in (0, 1, 2, 5, 6, 7) if i < len(fields)) / cls._TICK


def measure(
    row: Row,
    ctx: Context,
    repeats: int,
    attempts: int = 3,
    wait: float = 0.0,
    sides: tuple[str, ...] = ("numpy", "jitgrad"),
) -> Result:
    """Measure a row's ``sides`` (of "numpy", "jitgrad" and COMPARATORS), building it from
    ``ctx.seeded()``; while other processes load the machine, measure again (up to
    ``attempts`` times in all, each after waiting up to ``wait`` seconds for the machine
    to be quiet) and keep the attempt they disturbed least."""
    ctx = ctx.seeded()
    try:
        case = row.build(ctx)
    except Exception as exc:  # a broken row must not hide the others
        return Result(row, None, {}, error=f"setup failed: {type(exc).__name__}: {exc}")
    # Where the generator ended fingerprints the data drawn from it (same seed, same draws).
    state = hashlib.sha256(repr(ctx.rng.bit_generator.state).encode()).hexdigest()[:12]
    built = f"{case.size}, data {state}"
    best = None
    for attempt in range(attempts):
        if attempt:
            wait_quiet(wait)
        result = _measure_case(row, case, repeats, sides, check=not attempt)
        result.built = built
        if result.error or not result.times:
            return result
        if best is None or result.others < best.others:
            best = result
        if not result.others >= BUSY:  # (NaN when /proc/stat is unreadable: keep it)
            break
    return best


def wait_quiet(timeout: float) -> None:
    """Sleep until other processes use less than BUSY cores (over half a second), or
    ``timeout`` seconds have passed."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        with _LoadMeter() as load:
            time.sleep(0.5)
        if not load.others >= BUSY:
            return


BUSY = 0.25  # cores used by other processes above which a row is measured again


COMPARATORS = ("torch", "jax")  # the libraries beside numpy, as Case and Context name them


def _measure_case(
    row: Row, case: Case, repeats: int, sides: tuple[str, ...], check: bool = True
) -> Result:
    """Time ``sides`` of ``case`` in interleaved rounds. With ``check``, numpy's first call
    gives the result the other sides' first calls are checked against, whether numpy is
    timed or not; a comparator whose first call fails or differs is reported in
    ``failed``, not timed. Without, the sides are taken as checked and warm: a case whose
    calls update state (a training step) gives its first calls' results only once."""
    fns = {side: getattr(case, side) for side in sides if getattr(case, side) is not None}
    if not fns:
        return Result(row, case, {})  # the row has no side for this library
    failed = {}
    try:
        expected = np.array(case.numpy() if check else None)  # warm-up: compile time stays out
        if case.reset is not None:
            case.reset()
        for side in [s for s in fns if s != "numpy" and check]:
            try:
                got = fns[side]()
                # numpy's side returning None (a step run for its effects) checks nothing
                same = expected.dtype == object or _same(got, expected, case.rtol, case.atol)
                why = "" if same else "result differs from numpy's"
                del got
            except Exception as exc:
                if side == "jitgrad":
                    raise
                why = f"{type(exc).__name__}: {exc}"
            if why and side == "jitgrad":
                return Result(row, case, {}, error=f"jitgrad's {why}")
            if why:  # a comparator that fails is reported, not fatal
                failed[side] = why
                del fns[side]
        del expected
        if not fns:
            return Result(row, case, {}, failed=failed)
        if "numpy" in fns and case.alloc_bytes:
            fns["fault"], fns["fault-base"] = _fault_pair(case.alloc_bytes)
        numbers = {side: _batch(fn) for side, fn in fns.items()}
        samples: dict[str, list[float]] = {side: [] for side in fns}
        faulted: dict[str, list[float]] = {side: [] for side in fns}
        names = list(fns)
        gc.collect()
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with _LoadMeter() as load:
                for rnd in range(repeats):
                    k = rnd % len(names)
                    for side in names[k:] + names[:k]:
                        seconds, faults = _time(fns[side], numbers[side])
                        samples[side].append(seconds)
                        faulted[side].append(faults)
        finally:
            if gc_was_enabled:
                gc.enable()
    except Exception as exc:
        return Result(row, case, {}, error=f"{type(exc).__name__}: {exc}")
    times = {side: statistics.median(s) for side, s in samples.items()}
    spread = {side: (min(s), max(s)) for side, s in samples.items()}
    if "fault" in times:
        times["fault"] = max(0.0, times["fault"] - times.pop("fault-base"))
    faulted = {side: statistics.median(f) for side, f in faulted.items()}
    return Result(
        row, case, times, others=load.others, spread=spread, failed=failed, faulted=faulted
    )


# -- report ----------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def _spread(r: Result, side: str) -> str:
    low, high = r.spread.get(side, (None, None))
    if low is None:
        return _ms(r.times[side])
    return f"{_ms(r.times[side])} ({_ms(low)}–{_ms(high)})"


_LABELS = {"torch": "PyTorch", "jax": "JAX"}


def plot(results: list[Result], path: str) -> bool:
    """A bar chart of jitgrad's speed-up over numpy per row with its target, and PyTorch's
    and JAX's speed-ups as markers; False without matplotlib (an optional dependency of the
    report)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    measured = [r for r in results if not r.error and r.ratio is not None]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(measured) + 1.2), dpi=90)
    names = [r.row.name for r in measured]
    colors = [
        "tab:green" if r.status == "PASS" else "tab:red" if r.status == "MISS" else "tab:gray"
        for r in measured
    ]
    ax.barh(names, [r.ratio for r in measured], color=colors)
    for k, r in enumerate(measured):
        if r.row.target is not None:
            ax.plot([r.row.target] * 2, [k - 0.4, k + 0.4], color="black", linewidth=2)
    for side, marker in zip(COMPARATORS, ("o", "D")):
        points = [(r.vs_numpy(side), k) for k, r in enumerate(measured) if side in r.times]
        if points:
            ax.scatter(
                *zip(*points),
                marker=marker,
                s=28,
                zorder=3,
                label=_LABELS[side],
                edgecolors="black",
                linewidths=0.5,
            )
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("speed-up over numpy (log scale; bars: jitgrad, black ticks: its targets)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    ax.invert_yaxis()
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def _comparator(r: Result, side: str, installed: bool) -> list[str]:
    """The time and ratio cells of one comparator."""
    if not installed:
        return ["not installed", "—"]
    if side in r.failed:
        return [f"not timed: {r.failed[side]}", "—"]
    if side not in r.times:
        return ["—", "—"]
    return [_spread(r, side), f"{r.vs_numpy(side):.2f}×"]


def _line(cells) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def table(results: list[Result], installed: dict[str, bool]) -> list[str]:
    """The table of ``results``; ``installed`` says which of COMPARATORS could be imported."""
    if not results:
        return []
    head = ["row", "size", "numpy", "jitgrad", "jitgrad vs numpy", "target", "status"]
    for side in COMPARATORS:
        head += [side, f"{side} vs numpy"]
    head += ["page faults of the output", "others' load"]
    lines = [_line(head), "|" + "---|" * len(head)]
    for r in results:
        if r.error:
            cells = [r.row.name, r.case.size if r.case else "", "", "", "", _target(r), "ERROR"]
            cells += ["", ""] * len(COMPARATORS)
            cells += [r.error, ""]
        else:
            t = r.times
            cells = [
                r.row.name,
                r.case.size,
                _spread(r, "numpy"),
                _spread(r, "jitgrad"),
                f"{r.ratio:.2f}×",
                _target(r),
                r.status,
            ]
            for side in COMPARATORS:
                cells += _comparator(r, side, installed[side])
            if "fault" in t:
                cells += [
                    f"{_ms(t['fault'])} ({t['fault'] / t['numpy']:.0%} of numpy, "
                    f"{t['fault'] / t['jitgrad']:.0%} of jitgrad)"
                ]
            else:
                cells += ["—"]
            cells += [f"{r.others:.2f} cores"]
        lines.append(_line(cells))
    return lines


def tables(results: list[Result], installed: dict[str, bool]) -> list[str]:
    """The main table and its notes, then each section's table and notes under its
    heading (``perf.section``)."""
    main = [r for r in results if not r.row.section]
    lines = [*table(main, installed), "", *notes(main)] if main else []
    for title, about in SECTIONS.items():
        rows = [r for r in results if r.row.section == title]
        if rows:
            lines += [f"## {title}", "", about, "", *table(rows, installed), "", *notes(rows)]
    return lines


def _floor(r: Result) -> float:
    """Seconds the row's call would take moving its bytes at the copy bandwidth."""
    return r.case.bytes_moved / r.case.bandwidth


def other_targets(results: list[Result], installed: dict[str, bool]) -> list[str]:
    """The rows' targets beyond numpy (speed-ups over PyTorch eager and jax.jit, time
    within a factor of the memory floor), and whether this run met them."""
    lines = []
    for r in results:
        against = [
            (side, target)
            for side, target in (("torch", r.row.vs_torch), ("jax", r.row.vs_jax))
            if target is not None and installed.get(side, False)
        ]
        for side, target in against:
            label = {"torch": "PyTorch eager", "jax": "jax.jit"}[side]
            if r.error or side not in r.times or "jitgrad" not in r.times:
                lines.append(_line([r.row.name, label, "—", f"≥ {target:g}×", "ERROR"]))
                continue
            ratio = r.times[side] / r.times["jitgrad"]
            status = "PASS" if ratio >= target else "MISS"
            lines.append(_line([r.row.name, label, f"{ratio:.2f}×", f"≥ {target:g}×", status]))
        if r.row.floor is not None:
            limit = f"≤ {r.row.floor:g}×"
            if r.error or "jitgrad" not in r.times:
                lines.append(_line([r.row.name, "memory floor", "—", limit, "ERROR"]))
                continue
            over = r.times["jitgrad"] / _floor(r)
            status = "PASS" if over <= r.row.floor else "MISS"
            label = f"memory floor ({_ms(_floor(r))})"
            lines.append(_line([r.row.name, label, f"{over:.2f}×", limit, status]))
    if not lines:
        return []
    head = [
        "## Targets against PyTorch eager, jax.jit and the memory floor",
        "",
        "The memory floor is the time to move the bytes a call must read and write once "
        "at the copy bandwidth measured beside it.",
        "",
        "| row | against | jitgrad's speed-up over it, or its time over the floor | target "
        "| status |",
        "|---|---|---|---|---|",
    ]
    return [*head, *lines, ""]


def notes(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        said = [r.row.note] if r.row.note else []
        fault = r.times.get("fault", 0.0)
        share = r.faulted.get("jitgrad", 0.0) / r.case.alloc_bytes if fault else 0.0
        if fault and share < 0.5:
            said.append(
                f"jitgrad's calls reuse its pooled buffers: they fault in "
                f"{share:.0%} of their output's pages"
            )
        elif fault and fault >= 0.5 * r.times["jitgrad"]:
            said.append(
                f"page faults of the fresh output are {fault / r.times['jitgrad']:.0%} of "
                "jitgrad's time: they, not the kernel, dominate"
            )
        if r.case is not None and r.case.bytes_moved and "jitgrad" in r.times:
            rate = r.case.bytes_moved / r.times["jitgrad"]
            said.append(
                f"jitgrad moves {rate / 1e9:.1f} GB/s, {rate / r.case.bandwidth:.0%} of the "
                f"copy bandwidth measured beside it ({r.case.bandwidth / 1e9:.1f} GB/s; at it "
                f"the call would take {_ms(_floor(r))}, the memory floor)"
            )
        if r.case is not None and r.case.calls_per_op:
            said.append(
                f"jitgrad enters {r.case.calls_per_op:.1f} Python functions per op "
                "(counted, not timed: the same on every machine)"
            )
        if r.others >= BUSY:
            said.append(
                f"other processes kept {r.others:.1f} of the cores busy during its quietest "
                "attempt: the parallel kernels' second thread competed with them"
            )
        for side, load in r.loads.items():
            if load >= BUSY:
                said.append(
                    f"other processes kept {load:.1f} of the cores busy while "
                    f"{_LABELS[side]}'s process timed it"
                )
        if said:
            lines.append(f"- {r.row.name}: " + "; ".join(said))
    return [*lines, ""] if lines else []


def _target(r: Result) -> str:
    return "—" if r.row.target is None else f"≥ {r.row.target:g}×"


def _cpu_model() -> str:
    """The CPU's name, the microarchitecture numba compiles for and its widest vectors:
    this machine kind comes as Zen 4 (AVX-512) or Zen 3 (AVX2) hosts, whose figures differ
    by 2-7x, so a run names which it had."""
    import llvmlite.binding as llvm

    name, flags = platform.processor() or "unknown", ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    vectors = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "no AVX2"
    return f"{name} ({llvm.get_host_cpu_name()}, {vectors})"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "unavailable"


# How idle worker threads wait decides what a parallel kernel costs when another process
# holds a core, so the report records them.
_THREAD_ENV = ("NUMBA_THREADING_LAYER", "NUMBA_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def threading_layer() -> str:
    import numba

    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        return "not initialised"


def machine(compared_with: str, layer: str) -> list[str]:
    """What the report says of the machine; ``layer`` is numba's threading layer in the
    rows' processes (this one runs no kernel)."""
    import llvmlite
    import numba

    from jitgrad import threads
    from jitgrad._config import LIGHT_KERNEL_FACTOR, config
    from jitgrad.jit import cache

    lines = [
        f"- nproc: {len(os.sched_getaffinity(0))} (os.cpu_count() {os.cpu_count()}); "
        f"CPU: {_cpu_model()}",
        f"- load average at the end of the run: {' '.join(_read('/proc/loadavg').split()[:3])}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}"
        f", llvmlite {llvmlite.__version__}",
        f"- compared with (each in a process of its own): {compared_with}",
        f"- numba threads: {numba.get_num_threads()}, threading layer: {layer} (strided "
        f"copies and transposes); generated kernels with transcendental math from "
        f"{config.parallel_threshold} elements on, others (and flat copies and fills) from "
        f"{config.parallel_threshold * LIGHT_KERNEL_FACTOR}: on {threads.count()} of "
        f"jitgrad's own threads, in up to {threads.PIECES_PER_THREAD} pieces per thread "
        "taken as they come (threads.py); kernels compiled with LLVM interleaving "
        f"{cache.VECTOR_INTERLEAVE} vectors of their loops (jit/cache.py)",
        f"- transparent huge pages: {_read('/sys/kernel/mm/transparent_hugepage/enabled')}",
    ]
    waiting = [f"{k}={os.environ[k]}" for k in _THREAD_ENV if os.environ.get(k)]
    lines.append(
        "- thread waiting: "
        + (", ".join(waiting) if waiting else "libgomp defaults (no OMP_*/GOMP_* set)")
    )
    lines.append(f"- BLAS loaded (numpy's serves numpy's and jitgrad's matmuls): {_blas()}")
    pinned = [
        f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ
    ]
    lines.append(
        "- OpenBLAS kernels: "
        + (
            ", ".join(pinned)
            if pinned
            else "OpenBLAS's own choice (no OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE set)"
        )
    )
    lines.append(
        f"- matrix products up to {config.blas_one_thread_up_to} multiply-adds run "
        "BLAS on one thread (jitgrad; numpy's side uses numpy's threads)"
    )
    return lines


def _blas() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    found = [
        f"{i['internal_api']} {i.get('version') or '?'} ({os.path.basename(i['filepath'])}"
        f"), {i['num_threads']} threads, {i.get('architecture') or '?'} kernels"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    ]
    return "; ".join(found) or "none loaded"


_QUICK_NOTE = " — quick mode: small sizes, few repeats (a smoke check, not a result)"


def report(
    results: list[Result],
    quick: bool,
    installed: dict[str, bool],
    compared_with: str,
    layer: str,
    command: str,
    repeats: int,
    wait: float,
    sections: list[str] = (),
) -> str:
    """The whole RESULTS.md; ``installed`` and ``compared_with`` (the comparators' versions)
    come from the comparators' processes, ``layer`` from the rows' processes."""
    out = [
        "# jitgrad performance against numpy, PyTorch and JAX",
        "",
        f"Command: `{command}`" + _QUICK_NOTE * quick,
        "",
        f"Method: every row runs in fresh processes. Times are medians per call over {repeats} "
        "interleaved rounds (fastest–slowest round in brackets) after one warm-up call "
        "(compilation excluded); a ratio is numpy's time over the other side's (above 1: "
        "faster than numpy), and only ratios within one run compare. PyTorch (eager) and JAX "
        "(`jax.jit`; eager `jax.grad` on the autograd rows, as their notes say) run the same "
        "row, built from the same seeded data and checked against numpy's result, each in a "
        "process of its own while the others wait, on the CPU in the row's dtype. \"others' "
        f'load" is the CPU other processes used during the timing; a row measured while it '
        f"was ≥ {BUSY} cores is measured again (up to three attempts, waiting up to {wait:g} s "
        'for a quiet machine) and the least disturbed attempt is kept. "not installed": the '
        'library cannot be imported (`make perf` installs both); "—": the row has no side '
        "for it.",
        "",
        '"page faults of the output" is the measured cost of faulting in a fresh output of '
        "that size on one thread (`np.empty(n).fill()` minus the same fill into reused memory; "
        '"—": the row allocates no large output). A side that allocates its output afresh pays '
        "it, as a user does; where it is a large share of jitgrad's time, the kernel itself is "
        "not the bottleneck. jitgrad's parallel kernels fault pages in on both threads, so the "
        "share can read above 100%. The pages each side's calls did fault in are counted "
        "(`getrusage`'s minor faults): where jitgrad's calls reused its pooled buffers, the "
        "notes say so instead.",
        "",
        *tables(results, installed),
        *other_targets(results, installed),
        *sections,
        "## Machine",
        "",
        *machine(compared_with, layer),
        "",
    ]
    return "\n".join(out)
