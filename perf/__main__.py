"""``python -m perf [--quick] [--rows NAME ...]``: run the benchmarks, write RESULTS.md."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

from . import (
    ROWS,
    Context,
    dask,
    eager,
    isolated,
    launch_env,
    models,
    register_rows,
    serving,
    startup,
    transformer,
)
from .runner import (
    COMPARATORS,
    Result,
    measure,
    other_targets,
    plot,
    report,
    tables,
    threading_layer,
)

_RESULTS = os.path.join(os.path.dirname(__file__), "RESULTS.md")
register_rows()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes and few repeats: a smoke check"
    )
    parser.add_argument(
        "--rows",
        nargs="+",
        metavar="NAME",
        help="run only these rows (without startup, serving, models and the other sections)",
    )
    parser.add_argument("--repeat", type=int, help="timed rounds per row (default 15, quick 3)")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        metavar="SECONDS",
        help="before measuring a disturbed row again, wait up to this "
        "long for the other processes to go idle (default 5, quick 0)",
    )
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    # A row's own process (see _measure_alone) writes its results here instead of a report.
    parser.add_argument("--result-file", help=argparse.SUPPRESS)
    parser.add_argument(
        "--output", default=_RESULTS, help="report file (default perf/RESULTS.md); '-' writes none"
    )
    args = parser.parse_args(argv)

    if args.list:
        width = max(map(len, ROWS))
        for r in ROWS.values():
            target = "informational" if r.target is None else f"target ≥ {r.target:g}×"
            print(f"{r.name:{width}} {target}")
        return 0
    names = args.rows or list(ROWS)
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    repeats = args.repeat or (3 if args.quick else 15)
    wait = args.wait_quiet if args.wait_quiet is not None else (0.0 if args.quick else 5.0)

    if args.result_file:  # this process is one row's: measure it, send it back, no report
        (name,) = names
        result, installed, compared_with = _measure_here(name, args.quick, repeats, wait)
        with open(args.result_file, "w") as f:
            json.dump(
                {
                    "result": result.to_json(),
                    "installed": installed,
                    "compared_with": compared_with,
                    "layer": threading_layer(),
                },
                f,
            )
        return 0
    results, layer = [], "not initialised"
    installed, compared_with = dict.fromkeys(COMPARATORS, False), ""
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        result, sent = _measure_alone(name, args.quick, repeats, wait)
        results.append(result)
        if sent:
            installed, compared_with = sent["installed"], sent["compared_with"]
            layer = sent["layer"] if sent["layer"] != "not initialised" else layer
    missing = [side for side, there in installed.items() if not there]
    if missing:
        print(
            f"not installed: {', '.join(missing)} (their columns say so; `make perf` "
            "installs them)",
            file=sys.stderr,
        )
    print("\n".join(tables(results, installed) + other_targets(results, installed)))
    sections = []
    if not args.quick and not args.rows:  # measurements beyond the rows, minutes each
        sections = [
            *startup.startup_lines(installed["jax"]),
            *serving.serving_lines(),
            *eager.eager_lines(eager.comparator_torch() if installed["torch"] else None),
            *models.models_lines(),
            *transformer.transformer_lines(installed),
            *dask.dask_lines(),
        ]
    print("\n".join(sections))

    given = sys.argv[1:] if argv is None else argv
    command = "python -m perf" + "".join(" " + shlex.quote(a) for a in given)
    if args.output != "-":
        chart = os.path.join(os.path.dirname(os.path.abspath(args.output)), "plots", "ratios.png")
        if plot(results, chart):
            picture = (
                f"![speed-ups over numpy per row: jitgrad, PyTorch and JAX]"
                f"(plots/{os.path.basename(chart)})"
            )
            sections = [picture, "", *sections]
        with open(args.output, "w") as f:
            f.write(
                report(
                    results,
                    args.quick,
                    installed,
                    compared_with,
                    layer,
                    command,
                    repeats,
                    wait,
                    sections,
                )
            )
        print(f"wrote {os.path.relpath(args.output)}", file=sys.stderr)
    return 1 if any(r.error for r in results) else 0


def _measure_alone(name: str, quick: bool, repeats: int, wait: float) -> tuple[Result, dict]:
    """Measure row ``name`` in a fresh process of its own, which starts fresh comparator
    processes: its Result, and what that process says of the comparators (``installed``,
    ``compared_with``) and of numba (``layer``), or {} when the process failed. A process
    that timed earlier rows would hand the row a heap shaped by their frees, which moves
    numpy's times on rows that allocate temporaries (see the report's method)."""
    command = [
        sys.executable,
        "-m",
        "perf",
        "--rows",
        name,
        "--repeat",
        str(repeats),
        "--wait-quiet",
        str(wait),
    ] + ["--quick"] * quick
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "result.json")
        code = subprocess.run(command + ["--result-file", path], env=launch_env()).returncode
        if code or not os.path.exists(path):
            why = f"its process exited with code {code} (its error went to stderr)"
            return Result(ROWS[name], None, {}, error=why), {}
        with open(path) as f:
            sent = json.load(f)
    return Result.from_json(ROWS[name], sent.pop("result")), sent


def _measure_here(name: str, quick: bool, repeats: int, wait: float):
    """Measure row ``name`` in this process, PyTorch's and JAX's sides in processes of their
    own: its Result, which comparators are installed, and their versions."""
    with isolated.start(quick) as children:
        result = measure(ROWS[name], Context(quick=quick), repeats, wait=wait)
        _check_isolated(name)
        for child in children:
            child.measure(result, repeats, wait)
        installed = {child.library: child.installed for child in children}
        return result, installed, ", ".join(child.about for child in children)


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
