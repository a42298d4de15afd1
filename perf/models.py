"""The models section of RESULTS.md: whole training steps and layers as users write them,
jitgrad beside PyTorch eager and ``jax.jit``, each library in a process of its own.

- The CNN example's training step (``jitgrad.examples.cnn``: two 3×3 convolutions with
  ReLU and 2×2 max pooling, a linear head; float32, cross-entropy, Adam lr 1e-2) on one
  batch of 64 1×8×8 images: jitgrad's ``jg.jit`` of the example's ``train_step``
  (``loss.backward()``, ``optimizer.step()``), PyTorch eager with the same layers and
  ``torch.optim.Adam``, and ``jax.jit`` of a hand-written step (optax's Adam when installed,
  else Adam by hand), its parameters and optimizer state donated.
- ``conv2d`` forward + backward alone: input 64×32×32×32 and a 64×32×3×3 weight with bias,
  padding 1, float32, every input requiring grad; jitgrad and PyTorch eager.
- The jitted CNN step's first two calls (trace and first replay) in fresh processes
  (``perf.startup``'s probes): with an empty kernel cache (cold compile) and with the
  cache a cold process filled (from process start to the end of the second step).

``python -m perf.models [--quick]`` prints the section alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from . import launch_env
from .startup import _jitgrad_env, _run, _seconds, cold_and_warm

BATCH = 64
LR = 1e-2
CONV_INPUT = (64, 32, 32, 32)  # N, C, H, W
CONV_WEIGHT = (64, 32, 3, 3)  # out channels, in channels, KH, KW
SIDES = ("jitgrad", "torch", "jax")
# (what, side measured against, the speed-up over it to reach)
TARGETS = {("cnn", "torch"): 2.0, ("cnn", "jax"): 1.0, ("conv", "torch"): 1.0}


def cnn_batch():
    """The batch every side trains on: seeded 64×1×8×8 float32 pixels in [0, 1), labels."""
    rng = np.random.default_rng(0)
    x = rng.random((BATCH, 1, 8, 8), dtype=np.float32)
    return x, rng.integers(0, 10, BATCH)


def conv_operands():
    """(input, weight, bias, output gradient) of the conv2d row, float32, seeded."""
    rng = np.random.default_rng(0)
    n, c, h, w = CONV_INPUT
    shapes = (CONV_INPUT, CONV_WEIGHT, (CONV_WEIGHT[0],), (n, CONV_WEIGHT[0], h, w))
    return [rng.standard_normal(s, dtype=np.float32) for s in shapes]


def _times(call, warmup: int, timed: int) -> list[float]:
    for _ in range(warmup):
        call()
    times = []
    for _ in range(timed):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


# -- each library's side, run in its own process (``_side``) ----------------------------------


def jitgrad_sides():
    import jitgrad as jg
    from jitgrad.examples import cnn

    model = cnn.build_model(0)
    opt = cnn.make_optimizer(model.parameters(), LR)
    x, y = map(jg.asarray, cnn_batch())
    step = jg.jit(cnn.train_step)

    x_np, w_np, b_np, g_np = conv_operands()
    g = jg.asarray(g_np)
    leaves = [jg.asarray(a).requires_grad_() for a in (x_np, w_np, b_np)]

    def conv():
        for leaf in leaves:
            leaf.grad = None
        jg.nn.functional.conv2d(*leaves, padding=1).backward(g)

    return lambda: step(model, opt, x, y).item(), conv, f"jitgrad {jg.__version__}"


def torch_sides():
    from .comparators import about, load

    torch = load("torch")
    if torch is None:
        return None
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(128, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    x, y = (torch.from_numpy(a) for a in cnn_batch())

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    x_np, w_np, b_np, g_np = conv_operands()
    g = torch.from_numpy(g_np)
    leaves = [torch.from_numpy(a).requires_grad_() for a in (x_np, w_np, b_np)]

    def conv():
        for leaf in leaves:
            leaf.grad = None
        F.conv2d(*leaves, padding=1).backward(g)

    return step, conv, about("torch", torch)


def jax_sides():
    from .comparators import about, load

    jax = load("jax")
    if jax is None:
        return None
    jnp, lax = jax.numpy, jax.lax
    rng = np.random.default_rng(0)

    def uniform(shape, fan_in):  # PyTorch's default initialisation's range
        bound = 1 / np.sqrt(fan_in)
        return jnp.asarray(rng.uniform(-bound, bound, shape).astype(np.float32))

    params = (
        uniform((16, 1, 3, 3), 9),
        uniform((16,), 9),
        uniform((32, 16, 3, 3), 144),
        uniform((32,), 144),
        uniform((10, 128), 128),
        uniform((10,), 128),
    )

    def conv_relu_pool(h, w, b):
        h = lax.conv_general_dilated(
            h, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW")
        )
        h = jnp.maximum(h + b[None, :, None, None], 0)
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss_fn(p, x, y):
        w1, b1, w2, b2, w3, b3 = p
        h = conv_relu_pool(conv_relu_pool(x, w1, b1), w2, b2)
        z = h.reshape(h.shape[0], -1) @ w3.T + b3
        return -jnp.take_along_axis(jax.nn.log_softmax(z), y[:, None], axis=1).mean()

    try:
        import optax
    except ImportError:
        optax = None
    if optax is not None:
        adam = optax.adam(LR)

        def update(p, state, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            changes, state = adam.update(g, state, p)
            return optax.apply_updates(p, changes), state, loss

        state, how = adam.init(params), "optax.adam"
    else:

        def update(p, state, x, y, b1=0.9, b2=0.999, eps=1e-8):
            m, v, t = state
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            t = t + 1
            m = tuple(b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g))
            v = tuple(b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g))
            c1, c2 = 1 - b1**t, 1 - b2**t
            p = tuple(
                pi - LR * (mi / c1) / (jnp.sqrt(vi / c2) + eps) for pi, mi, vi in zip(p, m, v)
            )
            return p, (m, v, t), loss

        zeros = tuple(jnp.zeros_like(a) for a in params)
        state, how = (
            (zeros, tuple(jnp.zeros_like(a) for a in params), jnp.float32(0)),
            "Adam by hand",
        )
    fn = jax.jit(update, donate_argnums=(0, 1))
    carry = [params, state]
    x, y = (jax.device_put(a) for a in cnn_batch())

    def step():
        carry[0], carry[1], loss = fn(carry[0], carry[1], x, y)
        return float(loss)  # waits for the step, as .item() does on the other sides

    return step, None, f"{about('jax', jax)}, {how}"


def _side(library: str, quick: bool) -> dict:
    """Time one library's sides in this process: {"cnn": [s...], "conv": [s...] or None,
    "about": str}, or {} when the library is not installed."""
    built = {"jitgrad": jitgrad_sides, "torch": torch_sides, "jax": jax_sides}[library]()
    if built is None:
        return {}
    step, conv, about = built
    cnn_times = _times(step, warmup=10, timed=20 if quick else 300)
    conv_times = None if conv is None else _times(conv, warmup=2, timed=3 if quick else 20)
    return {"cnn": cnn_times, "conv": conv_times, "about": about}


def measure_sides(quick: bool = False) -> dict:
    """Every library's times, each measured in a fresh process of its own."""
    measured = {}
    for library in SIDES:
        command = [sys.executable, "-m", "perf.models", "--side", library]
        out = subprocess.run(
            command + ["--quick"] * quick, env=launch_env(), capture_output=True, text=True
        )
        if out.returncode:
            tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
            measured[library] = {"error": tail}
        else:
            measured[library] = json.loads(out.stdout.strip().splitlines()[-1])
    return measured


# -- the jitted CNN step's first two calls in fresh processes -----------------------------------

_CNN_PROBE = """
import time
began = time.time()
import jitgrad as jg
from jitgrad.examples import cnn
model = cnn.build_model(0)
opt = cnn.make_optimizer(model.parameters())
x, y, _, _ = cnn.load_images(0)
step = jg.jit(cnn.train_step)
t = time.perf_counter()
for _ in range(2):  # the trace, then the first replay, which compiles the plan's kernels
    step(model, opt, jg.asarray(x[:64]), jg.asarray(y[:64])).item()
first = time.perf_counter() - t
ended = time.time()
stats = jg.jit.stats()
print(began, first, ended, stats["compiled"], stats["disk_hits"])
"""


def cnn_starts(repeats: int = 3):
    """Cold and warm processes running the jitted CNN step twice (trace, first replay)."""
    return cold_and_warm(lambda cache: _run(_CNN_PROBE, _jitgrad_env(cache)), repeats)


# -- report -------------------------------------------------------------------------------------


def _ms(times) -> str:
    """The median, and the fastest in brackets: on a loaded machine the fastest shows what
    the code does when it gets the cores."""
    return f"{statistics.median(times) * 1e3:.2f} ms ({min(times) * 1e3:.2f})"


def _row(what: str, label: str, measured: dict) -> list[str]:
    """Table lines of one measurement (``what``: "cnn" or "conv") across the libraries."""
    mine = measured["jitgrad"].get(what)
    lines = []
    for library in SIDES:
        side = measured[library]
        name = {"jitgrad": "jitgrad", "torch": "PyTorch eager", "jax": "jax.jit"}[library]
        if "error" in side:
            lines.append(f"| {label} | {name} | ERROR: {side['error']} | | | |")
            continue
        if not side:
            lines.append(f"| {label} | {name} | not installed | | | |")
            continue
        times = side.get(what)
        if times is None:
            continue
        if library == "jitgrad":
            lines.append(f"| {label} | {name} | {_ms(times)} | — | — | — |")
            continue
        speedup = statistics.median(times) / statistics.median(mine) if mine else float("nan")
        target = TARGETS.get((what, library))
        status = "info" if target is None else ("PASS" if speedup >= target else "MISS")
        target_cell = "—" if target is None else f"≥ {target:g}×"
        lines.append(
            f"| {label} | {name} | {_ms(times)} | {speedup:.2f}× | {target_cell} | {status} |"
        )
    return lines


def models_lines(quick: bool = False, repeats: int = 3) -> list[str]:
    measured = measure_sides(quick)
    about = "; ".join(s["about"] for s in measured.values() if s.get("about"))
    lines = [
        "## Models: training steps and layers",
        "",
        "Each library in a fresh process of its own, one after another; median of "
        f"{'20' if quick else '300'} steps (the first 10 untimed) and of "
        f"{'3' if quick else '20'} conv2d calls (2 untimed). {about}.",
        "",
        "| what | library | median (fastest) | jitgrad's speed-up (medians) | target | status |",
        "|---|---|---:|---:|---|---|",
        *_row("cnn", f"CNN training step, batch {BATCH}, Adam", measured),
        *_row(
            "conv",
            "conv2d forward + backward, 64×32×32×32, 3×3 → 64, padding 1",
            measured,
        ),
        "",
        "The CNN step is `jitgrad.examples.cnn`'s model and `train_step` under `jg.jit` "
        "(ending in `loss.item()`, as the PyTorch step does; JAX's ends in `float(loss)`); "
        "conv2d is `F.conv2d(x, w, b, padding=1).backward(g)` with every input requiring "
        "grad, eagerly on both sides.",
        "",
    ]
    try:
        cold, warm = cnn_starts(1 if quick else repeats)
    except (RuntimeError, OSError) as exc:
        return [*lines, f"The CNN step in fresh processes: ERROR: {exc}", ""]
    return [
        *lines,
        "The jitted CNN step's first two calls (the trace, then the first replay, which "
        "compiles the plan's kernels) in fresh processes, as `perf.startup` measures them:",
        "",
        "| process | first two steps | from process start to their end |",
        "|---|---|---|",
        f"| cold: empty kernel cache | {_seconds(cold, 'first')} | {_seconds(cold, 'total')} |",
        f"| warm: disk cache filled | {_seconds(warm, 'first')} | {_seconds(warm, 'total')} |",
        "",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.models", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few steps and one fresh process")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        print(json.dumps(_side(args.side, args.quick)))
    else:
        print("\n".join(models_lines(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
