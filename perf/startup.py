"""Compile and warm-start times, measured in fresh Python processes: the fused chain's
forward + backward and the jitted digits step, each first with an empty
cache (cold) and then with the cache a cold process filled (warm), beside ``jax.jit`` of
the same code with an empty and a filled persistent compilation cache.

A probe is a script run with ``python -c``. It reads the wall clock (``time.time()``) on
its first line and at the end of its first call, and times that call with
``time.perf_counter()``. The parent reads the wall clock just before it spawns the child,
so "from process start" covers spawning the interpreter, its own start-up (site-packages),
every import, building the inputs and the first call: what someone who types
``python script.py`` waits for.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # puts `perf` on the path
CHAIN_SIZE = 1 << 16  # small: the first call's time is compiling (or loading), not computing

# The targets: (cold first call, warm from process start to the end of the first call).
CHAIN_TARGETS = (1.5, 0.6)
DIGITS_TARGETS = (3.0, 1.0)


@dataclass(frozen=True)
class Start:
    """One fresh process, in seconds from just before its spawn: to its script's first line
    (``python``) and to the end of its first call (``total``); ``first`` is that call alone.
    ``compiled`` and ``loaded`` count jitgrad's kernels compiled and found on disk."""

    python: float
    first: float
    total: float
    compiled: int = 0
    loaded: int = 0


def _run(script: str, env: dict, *args) -> Start:
    """Run a probe, which prints its start time, its first call's seconds, that call's end
    time and (jitgrad's) kernel counts on its last line."""
    spawned = time.time()
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)], env=env, capture_output=True, text=True
    )
    if out.returncode:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"probe exited with {out.returncode}: {tail}")
    began, first, ended, *counts = out.stdout.strip().splitlines()[-1].split()
    return Start(float(began) - spawned, float(first), float(ended) - spawned, *map(int, counts))


def _jitgrad_env(cache: str) -> dict:
    return dict(os.environ, JITGRAD_CACHE_DIR=cache)


def _jax_env(cache: str) -> dict:
    """JAX keeps compiled code on disk only when given a directory: cache every entry."""
    return dict(
        os.environ,
        JAX_COMPILATION_CACHE_DIR=cache,
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
    )


_CHAIN = """
import time
began = time.time()
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import jitgrad as jg
from perf.chain import A, B, chain, chain_numpy_grad
x = np.random.default_rng(0).standard_normal(int(sys.argv[2])).astype(np.float32)
leaf = jg.from_numpy(x.copy()).requires_grad_()
t = time.perf_counter()
chain(leaf, A, B).sum().backward()
first = time.perf_counter() - t
ended = time.time()
want = chain_numpy_grad(x, np.float32(A), np.float32(B))
assert np.allclose(leaf.grad.numpy(), want, rtol=1e-4, atol=1e-4), "gradient differs from numpy's"
stats = jg.jit.stats()
print(began, first, ended, stats["compiled"], stats["disk_hits"])
"""

# The same chain in JAX (perf.comparators), without jitgrad: importing it would charge JAX.
_JAX_CHAIN = """
import time
began = time.time()
import os, sys
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import numpy as np
from perf.comparators import jax_chain_value_and_grad
x = np.random.default_rng(0).standard_normal(int(sys.argv[2])).astype(np.float32)
step = jax_chain_value_and_grad(jax, x)
t = time.perf_counter()
step()
first = time.perf_counter() - t
print(began, first, time.time())
"""

_DIGITS = """
import time
began = time.time()
from jitgrad.examples import digits
import jitgrad as jg
model = digits.build_model(0)
opt = digits.make_optimizer("adam", model.parameters())
x, y, _, _ = digits.load_data(0)
step = jg.jit(digits.train_step)
t = time.perf_counter()
for _ in range(2):  # the trace, then the first replay, which compiles the plan's kernels
    step(model, opt, jg.asarray(x[:64]), jg.asarray(y[:64]))
first = time.perf_counter() - t
ended = time.time()
stats = jg.jit.stats()
print(began, first, ended, stats["compiled"], stats["disk_hits"])
"""

# The same step in JAX (perf.comparators). Data straight from scikit-learn and seeded
# parameters: importing jitgrad would charge JAX its import.
_JAX_DIGITS = """
import time
began = time.time()
import os, sys
sys.path.insert(0, sys.argv[1])
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax
import numpy as np
from sklearn.datasets import load_digits
from perf.comparators import jax_digits_step
data = load_digits()
x, y = (data.data[:64] / 16.0).astype(np.float32), data.target[:64]
rng = np.random.default_rng(0)
shapes = [(128, 64), (128,), (10, 128), (10,)]
params = [rng.uniform(-0.1, 0.1, s).astype(np.float32) for s in shapes]
step = jax_digits_step(jax, params, x, y, "adam")
t = time.perf_counter()
step()
first = time.perf_counter() - t
print(began, first, time.time())
"""


def cold_and_warm(probe, repeats: int) -> tuple[list[Start], list[Start]]:
    """``probe(cache_dir)`` ``repeats`` times, each on a new empty directory (cold), then
    ``repeats`` times on the directory the last cold process filled (warm)."""
    cold, warm = [], []
    for k in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(probe(cache))
            if k == repeats - 1:
                warm = [probe(cache) for _ in range(repeats)]
    return cold, warm


def chain_starts(repeats: int = 3, n: int = CHAIN_SIZE):
    """Cold and warm processes running the chain's forward + backward once."""
    return cold_and_warm(lambda cache: _run(_CHAIN, _jitgrad_env(cache), _ROOT, n), repeats)


def jax_chain_starts(repeats: int = 3, n: int = CHAIN_SIZE):
    return cold_and_warm(lambda cache: _run(_JAX_CHAIN, _jax_env(cache), _ROOT, n), repeats)


def digits_starts(repeats: int = 3):
    """Cold and warm processes running the jitted digits step twice (trace, first replay)."""
    return cold_and_warm(lambda cache: _run(_DIGITS, _jitgrad_env(cache)), repeats)


def jax_digits_starts(repeats: int = 3):
    return cold_and_warm(lambda cache: _run(_JAX_DIGITS, _jax_env(cache), _ROOT), repeats)


# -- report ----------------------------------------------------------------------------------


def _seconds(starts: list[Start], field: str) -> str:
    values = [getattr(s, field) for s in starts]
    cell = f"{statistics.median(values):.2f} s"
    return cell if len(values) == 1 else cell + f" ({min(values):.2f}–{max(values):.2f})"


def _kernels(starts: list[Start]) -> str:
    compiled = statistics.median_low(s.compiled for s in starts)
    return f"{compiled} / {statistics.median_low(s.loaded for s in starts)}"


def _status(starts: list[Start], field: str, limit: float) -> str:
    return "PASS" if statistics.median(getattr(s, field) for s in starts) <= limit else "MISS"


_HEAD = [
    "| process | first call (jg.jit: first two) | from process start to its end "
    "| kernels compiled / from disk | target | status |",
    "|---|---|---|---|---|---|",
]


def _table(
    name: str, starts, jax_starts, jax_installed: bool, repeats: int, targets, python: list
) -> list[str]:
    """Lines of one table: jitgrad (``name``) cold and warm with their targets, then JAX's;
    appends the jitgrad processes' start-up seconds to ``python``."""
    cold_target, warm_target = targets
    lines = list(_HEAD)
    try:
        cold, warm = starts(repeats)
    except (RuntimeError, OSError) as exc:
        return [*lines, f"| {name} | ERROR: {exc} | | | | ERROR |"]
    python += [s.python for s in cold + warm]
    lines += [
        f"| {name}, cold: empty kernel cache | {_seconds(cold, 'first')} "
        f"| {_seconds(cold, 'total')} | {_kernels(cold)} | first call ≤ {cold_target:g} s "
        f"| {_status(cold, 'first', cold_target)} |",
        f"| {name}, warm: disk cache filled | {_seconds(warm, 'first')} "
        f"| {_seconds(warm, 'total')} | {_kernels(warm)} "
        f"| from process start ≤ {warm_target:g} s | {_status(warm, 'total', warm_target)} |",
    ]
    if not jax_installed:
        return [*lines, "| jax.jit | jax not installed | | | | |"]
    try:
        cold, warm = jax_starts(repeats)
    except (RuntimeError, OSError) as exc:
        return [*lines, f"| jax.jit | ERROR: {exc} | | | | |"]
    return [
        *lines,
        f"| jax.jit, cold: empty compilation cache | {_seconds(cold, 'first')} "
        f"| {_seconds(cold, 'total')} | — | — | info |",
        f"| jax.jit, warm: compilation cache filled | {_seconds(warm, 'first')} "
        f"| {_seconds(warm, 'total')} | — | — | info |",
    ]


def startup_lines(jax_installed: bool = False, repeats: int = 3) -> list[str]:
    """The report's compile and warm-start section (JAX's lines need it installed; this
    process never imports it)."""
    python: list[float] = []
    chain = _table(
        "jg.function", chain_starts, jax_chain_starts, jax_installed, repeats, CHAIN_TARGETS, python
    )
    digits = _table(
        "jg.jit", digits_starts, jax_digits_starts, jax_installed, repeats, DIGITS_TARGETS, python
    )
    spawn = f"{statistics.median(python) * 1e3:.0f} ms" if python else "—"
    return [
        "## Compile and warm start",
        "",
        f"Every line is a fresh Python process, run {repeats} times: median, fastest–slowest "
        "in brackets. Each cold process gets a new empty cache directory (`JITGRAD_CACHE_DIR`;"
        " for JAX, `JAX_COMPILATION_CACHE_DIR` with its thresholds set so that every "
        "compiled entry is kept); the warm ones reuse the directory the last cold one filled. "
        '"first call" is timed inside the process with `time.perf_counter()`. "from process '
        'start" is wall-clock time (`time.time()`) from just before this runner spawns the '
        "process to the end of that first call: interpreter start-up, imports, building the "
        f"inputs and the call. Of it, {spawn} (median) passes before the script's first line "
        "runs (spawning Python and its own start-up). The JAX processes import JAX, not "
        "jitgrad.",
        "",
        f"### The fused chain's forward + backward, 2^{CHAIN_SIZE.bit_length() - 1} float32",
        "",
        "`chain(x, 0.7, 0.1).sum().backward()` with `x` requiring grad, `chain` being the "
        "`jg.function` of the chain rows; its gradient is checked against numpy's "
        "hand-derived one after the timing. JAX: the first call of "
        "`jax.jit(jax.value_and_grad(lambda v: chain(v).sum()))`.",
        "",
        *chain,
        "",
        "Targets: cold compile of the chain's forward + backward ≤ 1.5 s; a fresh process "
        "that finds them in the disk cache runs its first call within 0.6 s of starting, "
        "import included. torch.compile is not run here (its first call compiles for tens "
        "of seconds).",
        "",
        "### The digits training step, batch 64, Adam",
        "",
        "jitgrad's processes time the jitted step's first two calls: the first traces it "
        "(computing launches whose kernels are not compiled yet on numpy), the second "
        "compiles the kernels of the plan and runs it. JAX's time the first call of "
        "`jax.jit`, which compiles.",
        "",
        *digits,
        "",
        "Targets: cold compile (the first two calls) ≤ 3 s; warm start: the first two steps "
        "within 1 s of starting.",
        "",
    ]
