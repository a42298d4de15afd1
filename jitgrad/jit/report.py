"""Human-readable reports of what the JIT generated and ran."""

from __future__ import annotations

from collections import Counter

from . import compiled_plan
from .binding import arrays_in
from .cache import Kernel, stats
from .reduction import Reduce
from .row_fusion import RowLaunch
from .schedule import traffic


def _describe(kernel: Kernel) -> str:
    return (
        f"kernel {kernel.key[:12]}  calls={kernel.calls}  "
        f"first-call seconds={kernel.compile_seconds:.3f}  file={kernel.path}\n{kernel.source}"
    )


def explain_process() -> str:
    counts = stats.snapshot()
    lines = [
        "jitgrad JIT: "
        + ", ".join(
            f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in counts.items()
        )
    ]
    lines += [_describe(k) for k in stats.kernels.values()]
    return "\n\n".join(lines)


def explain_jitted(jitted) -> str:
    lines = [f"{jitted.__name__}: {len(jitted.plans)} plan(s), traced {jitted.traces} time(s)"]
    for key, plan in jitted.plans.items():
        kinds = Counter(_step_name(fn) for fn, _ in plan.steps)
        lines.append(
            f"plan for {key[-1]}\n  {len(plan.steps)} steps: "
            + ", ".join(f"{name} x{n}" for name, n in kinds.most_common())
            + f"\n  trace took {plan.trace_seconds:.3f} s; replayed {plan.replays} time(s) (the "
            "kernels' calls count the first replay, not the direct calls of later ones)"
            + _compiled_runs(plan)
        )
        lines.append(_traffic(plan))
        seen = set()
        for fn, _ in plan.steps:
            kernel = getattr(fn, "kernel", None)
            if isinstance(kernel, Kernel) and kernel.key not in seen:
                seen.add(kernel.key)
                lines.append(_describe(kernel))
    return "\n\n".join(lines)


def _compiled_runs(plan) -> str:
    """How a replay makes its calls once runs of them are compiled (``compiled_plan``)."""
    runs = [fn for fn, _ in plan._calls or () if isinstance(fn, compiled_plan.Run)]
    if not runs:
        return ""
    inside = sum(len(run.calls) for run in runs)
    return (
        f"\n  replays make {len(plan._calls)} call(s): {len(runs)} compiled run(s) of "
        f"{inside} calls, {len(plan._calls) - len(runs)} from Python"
    )


def _traffic(plan) -> str:
    """The bytes each kernel reads and writes, and the plan's total against the least its
    inputs and outputs need: a missed fusion shows as the ratio."""
    rows, kernels, other = [], 0, 0
    for k, (fn, args) in enumerate(plan.steps):
        moved = traffic(fn)
        if moved is None:
            other += sum(a.nbytes for a in {id(a): a for a in arrays_in(args)}.values())
            continue
        kernels += sum(moved)
        rows.append(
            f"  step {k}: {_step_name(fn)} reads {_size(moved[0])}, writes {_size(moved[1])}"
        )
    total = kernels + other
    ratio = f" ({total / plan.minimum_bytes:.2f}x)" if plan.minimum_bytes else ""
    return "\n".join(
        [
            f"  memory traffic: {_size(total)} moved{ratio} against a minimum of "
            f"{_size(plan.minimum_bytes)} (inputs read once, outputs written once); kernels "
            f"{_size(kernels)}, other steps touch {_size(other)}",
            *rows,
        ]
    )


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _step_name(fn) -> str:
    if isinstance(fn, RowLaunch):
        return "row kernel"
    if isinstance(fn, Reduce):
        return "reduction"
    if isinstance(getattr(fn, "kernel", None), Kernel):
        return "fused kernel"
    return getattr(fn, "__name__", type(fn).__name__)
