"""Human-readable reports of what the JIT generated and ran."""

from __future__ import annotations

from collections import Counter

from .cache import Kernel, stats


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
        )
        seen = set()
        for fn, _ in plan.steps:
            kernel = getattr(fn, "kernel", None)
            if isinstance(kernel, Kernel) and kernel.key not in seen:
                seen.add(kernel.key)
                lines.append(_describe(kernel))
    return "\n\n".join(lines)


def _step_name(fn) -> str:
    if isinstance(getattr(fn, "kernel", None), Kernel):
        return "fused kernel"
    return getattr(fn, "__name__", type(fn).__name__)
