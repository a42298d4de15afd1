"""Measure rows side by side and render the report.

Method: each callable is called once first (compiling, and giving results to compare),
then the sides are timed in interleaved rounds (the order rotates every round) and the
median per side is kept. Calls faster than a few milliseconds are repeated in batches
so that one sample is long enough for the clock. The machine is shared and noisy:
only the ratios measured in one run mean anything, never absolute times across runs.
"""

from __future__ import annotations

import datetime
import gc
import os
import platform
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from . import Case, Context, Row

_MIN_SAMPLE = 2e-3  # seconds; shorter calls are batched up to this


@dataclass
class Result:
    row: Row
    case: Case | None
    times: dict[str, float]  # side -> median seconds per call
    others: float = float("nan")  # cores other processes kept busy during the timing
    error: str = ""
    spread: dict = field(default_factory=dict)  # side -> (fastest, slowest) round

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


def _batch(fn) -> int:
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    del out
    return max(1, min(10_000, int(_MIN_SAMPLE / max(elapsed, 1e-9))))


def _time(fn, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        out = fn()
        del out  # free a fresh output before the next call, as a user's loop would
    return (time.perf_counter() - start) / number


def _fault_pair(nbytes: int):
    """Callables whose time difference is the cost of faulting in ``nbytes`` fresh bytes."""
    warm = np.empty(nbytes, np.uint8)

    def fresh():
        np.empty(nbytes, np.uint8).fill(1)

    def reused():
        warm.fill(1)

    return fresh, reused


def _same(a, b, rtol: float = 0.0) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if rtol:
        return np.allclose(a, b, rtol=rtol, atol=rtol)
    return np.array_equal(a, b)


def copy_bandwidth() -> float:
    """Bytes per second of a STREAM-like copy (read + write) of 2^24 float32, here, now."""
    src = np.ones(1 << 24, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = min(_time(lambda: np.copyto(dst, src), 5) for _ in range(3))
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


def measure(row: Row, ctx: Context, repeats: int, attempts: int = 3, wait: float = 0.0) -> Result:
    """Measure a row; while other processes load the machine, measure again (up to
    ``attempts`` times in all, each after waiting up to ``wait`` seconds for the machine
    to be quiet) and keep the attempt they disturbed least."""
    try:
        case = row.build(ctx)
    except Exception as exc:  # a broken row must not hide the others
        return Result(row, None, {}, error=f"setup failed: {type(exc).__name__}: {exc}")
    best = None
    for attempt in range(attempts):
        if attempt:
            wait_quiet(wait)
        result = _measure_case(row, case, repeats)
        if result.error:
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


def _measure_case(row: Row, case: Case, repeats: int) -> Result:
    sides = {"numpy": case.numpy, "jitgrad": case.jitgrad}
    if case.torch is not None:
        sides["torch"] = case.torch
    if case.alloc_bytes:
        sides["fault"], sides["fault-base"] = _fault_pair(case.alloc_bytes)
    try:
        expected = np.array(case.numpy())  # warm-up calls: compile time stays out
        if case.reset is not None:
            case.reset()
        got = case.jitgrad()
        if expected.ndim and not _same(got, expected, case.rtol):
            return Result(row, case, {}, error="jitgrad's result differs from numpy's")
        del got, expected
        numbers = {side: _batch(fn) for side, fn in sides.items()}
        samples: dict[str, list[float]] = {side: [] for side in sides}
        names = list(sides)
        gc.collect()
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with _LoadMeter() as load:
                for rnd in range(repeats):
                    k = rnd % len(names)
                    for side in names[k:] + names[:k]:
                        samples[side].append(_time(sides[side], numbers[side]))
        finally:
            if gc_was_enabled:
                gc.enable()
    except Exception as exc:
        return Result(row, case, {}, error=f"{type(exc).__name__}: {exc}")
    times = {side: statistics.median(s) for side, s in samples.items()}
    spread = {side: (min(s), max(s)) for side, s in samples.items()}
    if case.alloc_bytes:
        times["fault"] = max(0.0, times["fault"] - times.pop("fault-base"))
    return Result(row, case, times, others=load.others, spread=spread)


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


def plot(results: list[Result], path: str) -> bool:
    """A bar chart of jitgrad's speed-up per row with its target; False without
    matplotlib (an optional dependency of the report)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    measured = [r for r in results if not r.error and r.ratio is not None]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(measured) + 1.2), dpi=90)
    names = [r.row.name for r in measured]
    colors = ["tab:green" if r.status == "PASS" else "tab:red" if r.status == "MISS"
              else "tab:gray" for r in measured]  # fmt: skip
    ax.barh(names, [r.ratio for r in measured], color=colors)
    for k, r in enumerate(measured):
        if r.row.target is not None:
            ax.plot([r.row.target] * 2, [k - 0.4, k + 0.4], color="black", linewidth=2)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("jitgrad speed-up over numpy (log scale; black ticks: targets)")
    ax.invert_yaxis()
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def table(results: list[Result], with_torch: bool) -> list[str]:
    head = ["row", "size", "numpy", "jitgrad", "jitgrad vs numpy", "target", "status"]
    if with_torch:
        head += ["torch", "torch vs numpy"]
    head += ["page faults of the output", "others' load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        if r.error:
            cells = [r.row.name, r.case.size if r.case else "", "", "", "", _target(r), "ERROR"]
            if with_torch:
                cells += ["", ""]
            cells += [r.error, ""]
        else:
            t = r.times
            cells = [r.row.name, r.case.size, _spread(r, "numpy"), _spread(r, "jitgrad"),
                     f"{r.ratio:.2f}×", _target(r), r.status]  # fmt: skip
            if with_torch:
                if "torch" in t:
                    cells += [_ms(t["torch"]), f"{t['numpy'] / t['torch']:.2f}×"]
                else:
                    cells += ["", ""]
            if "fault" in t:
                cells += [f"{_ms(t['fault'])} ({t['fault'] / t['numpy']:.0%} of numpy, "
                          f"{t['fault'] / t['jitgrad']:.0%} of jitgrad)"]  # fmt: skip
            else:
                cells += ["—"]
            cells += [f"{r.others:.2f} cores"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def notes(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        said = [r.row.note] if r.row.note else []
        fault = r.times.get("fault", 0.0)
        if fault and fault >= 0.5 * r.times["jitgrad"]:
            said.append(
                f"page faults of the fresh output are {fault / r.times['jitgrad']:.0%} of "
                "jitgrad's time: they, not the kernel, dominate"
            )
        if r.case is not None and r.case.bytes_moved and "jitgrad" in r.times:
            rate = r.case.bytes_moved / r.times["jitgrad"]
            said.append(
                f"jitgrad moves {rate / 1e9:.1f} GB/s, {rate / r.case.bandwidth:.0%} of the "
                f"copy bandwidth measured beside it ({r.case.bandwidth / 1e9:.1f} GB/s)"
            )
        if r.others >= BUSY:
            said.append(
                f"other processes kept {r.others:.1f} of the cores busy during its quietest "
                "attempt: the parallel kernels' second thread competed with them"
            )
        if said:
            lines.append(f"- {r.row.name}: " + "; ".join(said))
    return [*lines, ""] if lines else []


def _target(r: Result) -> str:
    return "—" if r.row.target is None else f"≥ {r.row.target:g}×"


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "unavailable"


# How idle worker threads wait decides what a parallel kernel costs when another process
# holds a core, so the report records them.
_THREAD_ENV = ("NUMBA_THREADING_LAYER", "NUMBA_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def machine(torch) -> list[str]:
    import llvmlite
    import numba

    from jitgrad._config import config

    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        layer = "not initialised"
    lines = [
        f"- nproc: {len(os.sched_getaffinity(0))} (os.cpu_count() {os.cpu_count()}); "
        f"CPU: {_cpu_model()}",
        f"- load average at the end of the run: {' '.join(_read('/proc/loadavg').split()[:3])}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}"
        f", llvmlite {llvmlite.__version__}"
        + (f", torch {torch.__version__}" if torch else ", torch not installed")
        + (", jax installed (no row compares with it yet)" if _has("jax") else ", jax not installed"),  # noqa: E501
        f"- numba threads: {numba.get_num_threads()}, threading layer: {layer}; "
        f"jitgrad parallel_threshold: {config.parallel_threshold} elements",
        f"- transparent huge pages: {_read('/sys/kernel/mm/transparent_hugepage/enabled')}",
    ]
    waiting = [f"{k}={os.environ[k]}" for k in _THREAD_ENV if os.environ.get(k)]
    lines.append(
        "- thread waiting: "
        + (", ".join(waiting) if waiting else "libgomp defaults (no OMP_*/GOMP_* set)")
    )
    if os.environ.get("OPENBLAS_CORETYPE"):
        lines.append(f"- OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (no row uses BLAS)")
    return lines


_QUICK_NOTE = " — quick mode: small sizes, few repeats (a smoke check, not a result)"


def report(results: list[Result], ctx: Context, command: str, repeats: int, wait: float,
           sections: list[str] = ()) -> str:  # fmt: skip
    with_torch = ctx.torch is not None
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# jitgrad performance against numpy",
        "",
        f"Command: `{command}` — {when}" + _QUICK_NOTE * ctx.quick,
        "",
        "Times are medians per call over " + f"{repeats} interleaved rounds (fastest–slowest "
        "round in brackets), after one warm-up "
        "call (compilation excluded). \"jitgrad vs numpy\" is numpy's time over jitgrad's: "
        "above 1 jitgrad is faster. Only ratios within one run compare; absolute times move "
        'by up to 2× between runs on this shared machine. "others\' load" is the CPU other '
        f"processes used during the timing, in cores; a row measured while it was ≥ {BUSY} "
        "is measured again (up to three attempts, the later ones after waiting up to "
        f"{wait:g} s for a quiet machine) and the least disturbed attempt is kept.",
        "",
        *table(results, with_torch),
        "",
        *notes(results),
        '"page faults of the output" is the measured cost of faulting in a fresh output of '
        "that size on one thread (`np.empty(n).fill()` minus the same fill into reused memory; "
        '"—": the row allocates no large output). Rows that allocate pay it on both sides, as a '
        "user does; where it is a large share of jitgrad's time, the kernel itself is not the "
        "bottleneck. jitgrad's parallel kernels fault pages in on both threads, so the share "
        "can read above 100%.",
        "",
        *sections,
        "## Machine",
        "",
        *machine(ctx.torch),
        "",
    ]
    return "\n".join(out)
