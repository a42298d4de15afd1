"""``python -m perf [--quick] [--rows NAME ...]``: run the benchmarks, write RESULTS.md."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from . import ROWS, Context, isolated, serving, startup
from . import rows as _rows  # noqa: F401  (registers the rows)
from . import rows_compute as _rows_compute  # noqa: F401
from .runner import COMPARATORS, measure, notes, plot, quoted, report, table

_RESULTS = os.path.join(os.path.dirname(__file__), "RESULTS.md")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few repeats: a smoke check")  # fmt: skip
    parser.add_argument("--rows", nargs="+", metavar="NAME", help="run only these rows")
    parser.add_argument("--repeat", type=int, help="timed rounds per row (default 15, quick 3)")
    parser.add_argument("--wait-quiet", type=float, metavar="SECONDS",
                        help="before measuring a disturbed row again, wait up to this "
                        "long for the other processes to go idle (default 5, quick 0)")  # fmt: skip
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    parser.add_argument("--output", default=_RESULTS,
                        help="report file (default perf/RESULTS.md); '-' writes none")  # fmt: skip
    args = parser.parse_args(argv)

    if args.list:
        for r in ROWS.values():
            target = "informational" if r.target is None else f"target ≥ {r.target:g}×"
            print(f"{r.name:24} {target}")
        return 0
    names = args.rows or list(ROWS)
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    repeats = args.repeat or (3 if args.quick else 15)
    wait = args.wait_quiet if args.wait_quiet is not None else (0.0 if args.quick else 5.0)

    results = []
    with isolated.start(args.quick) as children:  # torch and jax, each in its own process
        installed = {child.library: child.installed for child in children}
        compared_with = ", ".join(child.about for child in children)
        missing = [side for side, there in installed.items() if not there]
        if missing:
            print(f"not installed: {', '.join(missing)} (their columns say so; `make perf` "
                  "installs them)", file=sys.stderr)  # fmt: skip
        for name in names:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            result = measure(ROWS[name], Context(quick=args.quick), repeats, wait=wait)
            _check_isolated(name)
            for child in children:
                child.measure(result, repeats, wait)
            results.append(result)
    print("\n".join(table(results, installed) + [""] + notes(results)
                    + quoted(results, installed)))  # fmt: skip
    sections = []
    if not args.quick:
        sections = startup.startup_lines(installed["jax"]) + serving.serving_lines()
    print("\n".join(sections))

    given = sys.argv[1:] if argv is None else argv
    command = "python -m perf" + "".join(" " + shlex.quote(a) for a in given)
    if args.output != "-":
        chart = os.path.join(os.path.dirname(os.path.abspath(args.output)), "plots", "ratios.png")
        if plot(results, chart):
            picture = (f"![speed-ups over numpy per row: jitgrad, PyTorch and JAX]"
                       f"(plots/{os.path.basename(chart)})")  # fmt: skip
            sections = [picture, "", *sections]
        with open(args.output, "w") as f:
            f.write(report(results, args.quick, installed, compared_with, command, repeats, wait,
                           sections))  # fmt: skip
        print(f"wrote {os.path.relpath(args.output)}", file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def _check_isolated(name: str) -> None:
    """Fail the run as soon as a row imports a comparator into this process: its threads
    would move every later jitgrad and numpy time."""
    leaked = [side for side in COMPARATORS if side in sys.modules]
    if leaked:
        raise RuntimeError(
            f"row {name} imported {', '.join(leaked)} into the process that times jitgrad and "
            "numpy; build comparators' sides from ctx.torch and ctx.jax, which are set only in "
            "their own processes (perf.isolated)"
        )


if __name__ == "__main__":
    sys.exit(main())
