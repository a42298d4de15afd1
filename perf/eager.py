"""The eager section of RESULTS.md: per-call times of small ops by op class and size
(numpy, PyTorch eager, jitgrad, side by side in one process), the sizes from which kernels
take over, and the drop-in corpus's total time with a warm and an empty kernel cache.

``python -m perf.eager`` prints the section alone.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import timeit

import numpy as np

import jitgrad as jg

# (op class, what is timed, the statement with ``m`` the module, the sizes' elements)
OPS = [
    ("elementwise", "a * b", "a * b", (16, 4096)),
    ("elementwise", "exp(a)", "m.exp(a)", (16, 4096)),
    ("reduction", "a.sum()", "a.sum()", (16, 4096)),
    ("reduction", "M.max(axis=0)", "M.max(axis=0)", (64 * 64,)),
    ("slicing", "M[3:10, ::2]", "M[3:10, ::2]", (64 * 64,)),
    ("mask", "a[a > .5]", "a[a > 0.5]", (16, 4096)),
    ("copy", "M.T copied", "m.ascontiguousarray(M.T)", (64 * 64,)),
    ("cast", "a.astype(float64)", "a.astype(m.float64)", (16, 4096)),
    ("matmul", "M @ M", "M @ M", (64 * 64,)),
]


def _per_call_us(statement: str, names: dict) -> float:
    timer = timeit.Timer(statement, globals=names)
    number = max(1, int(0.02 / max(timer.timeit(1), 1e-7)))
    return statistics.median(timer.repeat(repeat=7, number=number)) / number * 1e6


def _operands(module, n: int, torch=None) -> dict:
    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    side = int(round(n**0.5))
    matrix = rng.random((side, side))
    if module is np:
        return {"m": np, "a": a, "b": b, "M": matrix}
    if module is torch:
        return {
            "m": torch,
            "a": torch.from_numpy(a),
            "b": torch.from_numpy(b),
            "M": torch.from_numpy(matrix),
        }
    return {"m": jg, "a": jg.asarray(a), "b": jg.asarray(b), "M": jg.asarray(matrix)}


def _torch_statement(statement: str) -> str:
    return (
        statement.replace("m.ascontiguousarray(M.T)", "M.T.contiguous()")
        .replace("axis=0", "dim=0")
        .replace("a.astype(m.float64)", "a.to(m.float64)")
    )


def per_call_rows(torch=None) -> list[tuple]:
    """(class, op, elements, numpy µs, PyTorch µs or None, jitgrad µs) per op and size."""
    rows = []
    for kind, label, statement, sizes in OPS:
        for n in sizes:
            numpy_us = _per_call_us(statement, _operands(np, n))
            torch_us = None
            if torch is not None:
                torch_us = _per_call_us(_torch_statement(statement), _operands(torch, n, torch))
            names = _operands(jg, n)
            eval(statement, names)  # the first call decides (and may compile)
            rows.append((kind, label, n, numpy_us, torch_us, _per_call_us(statement, names)))
    return rows


def _corpus_seconds(cache_dir: str | None) -> tuple[float, float, float]:
    """(numpy, jitgrad's first run, jitgrad's third run) seconds of the whole corpus in a
    new process; with ``cache_dir``, jitgrad's kernels are compiled into that (empty)
    directory. (The second run compiles the kernels of signatures called again.)"""
    env = dict(os.environ)
    if cache_dir is not None:
        env["JITGRAD_CACHE_DIR"] = cache_dir
    script = (
        "import time, numpy as np, jitgrad as jg\n"
        "from perf.rows_corpus import RUNNING, corpus\n"
        "programs = [corpus.load(n) for n in RUNNING]\n"
        "def run(m):\n"
        "    t = time.perf_counter()\n"
        "    for p in programs: p.run(m)\n"
        "    return time.perf_counter() - t\n"
        "run(np)\n"
        "print(run(np), run(jg), run(jg), run(jg))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"the corpus run failed:\n{out.stderr}")
    numpy_s, first_s, _, third_s = map(float, out.stdout.split()[-4:])
    return numpy_s, first_s, third_s


def eager_lines(torch=None) -> list[str]:
    lines = [
        "## Eager calls",
        "",
        "Per call on small arrays, µs (median of 7 rounds, one process; float32 "
        "vectors of the stated elements, float64 square matrices):",
        "",
        "| class | op | elements | numpy | PyTorch | jitgrad | jitgrad / numpy |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for kind, label, n, numpy_us, torch_us, jitgrad_us in per_call_rows(torch):
        torch_cell = "–" if torch_us is None else f"{torch_us:.2f}"
        lines.append(
            f"| {kind} | `{label}` | {n} | {numpy_us:.2f} | {torch_cell} | {jitgrad_us:.2f} "
            f"| {jitgrad_us / numpy_us:.1f}× |"
        )
    config = jg.config
    lines += [
        "",
        f"Kernels take over from numpy's loops at {config.parallel_from():,} elements for "
        "one-call work (a ufunc, a reduction, a copy or cast), and for elementwise "
        f"formulas of several numpy calls from {config.numpy_tier_work:,} element "
        "operations (elements times calls).",
        "",
    ]
    warm = _corpus_seconds(None)
    with tempfile.TemporaryDirectory() as empty:
        cold = _corpus_seconds(empty)
    lines += [
        "The drop-in corpus (tests/dropin/programs), all programs one after another in a new "
        "process, s (the first run loads no kernel; signatures called again compile theirs in "
        "the second; the third runs warm):",
        "",
        "| kernel cache | numpy | jitgrad, first run | jitgrad, third run |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {t[0]:.4f} | {t[1]:.4f} ({t[1] / t[0]:.1f}×) "
            f"| {t[2]:.4f} ({t[2] / t[0]:.1f}×) |"
            for name, t in (("warm", warm), ("empty", cold))
        ),
    ]
    return lines


def comparator_torch():
    """PyTorch on one thread, as numpy and jitgrad's small calls run; None if missing."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


if __name__ == "__main__":
    print("\n".join(eager_lines(comparator_torch())))
