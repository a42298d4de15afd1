"""The transformer section of RESULTS.md: the training step of ``jitgrad.examples.charlm``
(its default model and batch 32: two pre-LayerNorm blocks of causal self-attention and a
GELU MLP, float32, AdamW), side by side in one run: jitgrad's ``jg.jit`` step, PyTorch eager
with the same model built from ``torch.nn``, and ``jax.jit`` of the same step written by
hand (optax's AdamW when installed, else AdamW by hand); then the jitted step's cold
compile (its first two calls: the trace and the first replay) and a fresh process's first
two steps with the kernel cache filled.

Each side runs in a fresh process of its own (torch and jax are never imported where
jitgrad is timed: see ``isolated``), on the same random batch of character indices, each
library initialising its own parameters; a step's loss starts near ln(vocabulary) on every
side, which the report shows. A side is warmed up with a few steps, then timed step by
step: the median and the fastest and slowest step.

``python -m perf.transformer`` prints the section alone.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from . import launch_env
from .startup import _jitgrad_env, _run, cold_and_warm

VOCAB = 95  # the characters of the standard library's ASCII source
BATCH = 32
WARMUP_STEPS = 3
TARGET_VS_TORCH, TARGET_VS_JAX = 2.0, 1.0
# seconds: the first two calls cold (trace, first replay); warm, from process start to
# the end of the second
COLD_TARGET, WARM_TARGET = 5.0, 1.0


def _batch(context: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, (BATCH, context + 1))
    return ids[:, :-1], ids[:, 1:]


def _time_steps(step, steps: int) -> dict:
    """Warm ``step`` up, then time ``steps`` calls: median, fastest, slowest (seconds), and
    the first call's loss."""
    first_loss = float(step())
    for _ in range(WARMUP_STEPS - 1):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return {
        "median": statistics.median(times),
        "fastest": min(times),
        "slowest": max(times),
        "first_loss": first_loss,
    }


# -- the sides, each run in its own process (``--side``) --------------------------------------


def _jitgrad_side(steps: int) -> dict:
    import jitgrad as jg
    from jitgrad.examples import charlm

    config = charlm.Config(batch=BATCH)
    model, opt = charlm.build(VOCAB, config)
    x, y = (jg.asarray(a) for a in _batch(config.context))
    step = jg.jit(charlm.train_step)
    result = _time_steps(lambda: step(model, opt, x, y).item(), steps)
    plan = next(iter(step.plans.values()))
    result["about"] = f"jitgrad (plan of {len(plan.steps)} steps)"
    result["config"] = {
        "d_model": config.d_model,
        "heads": config.heads,
        "layers": config.layers,
        "context": config.context,
        "lr": config.lr,
    }
    return result


def _torch_side(steps: int, d_model: int, heads: int, layers: int, context: int, lr: float):
    import torch
    from torch import nn
    from torch.nn import functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
            self.fc1, self.fc2 = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)

        def forward(self, x):
            n, length, d = x.shape
            qkv = self.qkv(self.norm1(x)).reshape(n, length, 3, heads, d // heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(n, length, d))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))

    class CharTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.token, self.position = nn.Embedding(VOCAB, d_model), nn.Embedding(context, d_model)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.norm, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, VOCAB)

        def forward(self, ids):
            x = self.token(ids) + self.position(torch.arange(ids.shape[-1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.norm(x))

    torch.manual_seed(0)
    model = CharTransformer()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    x, y = (torch.from_numpy(a) for a in _batch(context))

    def step():
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    result = _time_steps(step, steps)
    result["about"] = f"torch {torch.__version__} eager ({torch.get_num_threads()} threads)"
    return result


def _jax_side(steps: int, d_model: int, heads: int, layers: int, context: int, lr: float):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp

    try:
        import optax
    except ImportError:
        optax = None

    rng = np.random.default_rng(0)

    def dense(n_in, n_out):  # PyTorch's nn.Linear initialisation
        bound = 1 / math.sqrt(n_in)
        return {
            "w": jnp.asarray(rng.uniform(-bound, bound, (n_in, n_out)), jnp.float32),
            "b": jnp.asarray(rng.uniform(-bound, bound, n_out), jnp.float32),
        }

    def norm():
        return {"g": jnp.ones(d_model, jnp.float32), "b": jnp.zeros(d_model, jnp.float32)}

    params = {
        "token": jnp.asarray(rng.standard_normal((VOCAB, d_model)), jnp.float32),
        "position": jnp.asarray(rng.standard_normal((context, d_model)), jnp.float32),
        "blocks": [
            {
                "norm1": norm(),
                "qkv": dense(d_model, 3 * d_model),
                "proj": dense(d_model, d_model),
                "norm2": norm(),
                "fc1": dense(d_model, 4 * d_model),
                "fc2": dense(4 * d_model, d_model),
            }
            for _ in range(layers)
        ],
        "norm": norm(),
        "head": dense(d_model, VOCAB),
    }

    def layer_norm(p, x):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * p["g"] + p["b"]

    def linear(p, x):
        return x @ p["w"] + p["b"]

    causal = jnp.tril(jnp.ones((context, context), bool))

    def block(p, x):
        n, length, d = x.shape
        qkv = linear(p["qkv"], layer_norm(p["norm1"], x)).reshape(n, length, 3, heads, -1)
        q, k, v = qkv.transpose(2, 0, 3, 1, 4)
        scores = jnp.where(causal, q @ k.swapaxes(-1, -2) / math.sqrt(d // heads), -jnp.inf)
        a = jax.nn.softmax(scores, -1) @ v
        x = x + linear(p["proj"], a.transpose(0, 2, 1, 3).reshape(n, length, d))
        h = jax.nn.gelu(linear(p["fc1"], layer_norm(p["norm2"], x)), approximate=False)
        return x + linear(p["fc2"], h)

    def loss_fn(p, x, y):
        h = p["token"][x] + p["position"][jnp.arange(x.shape[-1])]
        for b in p["blocks"]:
            h = block(b, h)
        logits = linear(p["head"], layer_norm(p["norm"], h))
        log_p = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(log_p, y[..., None], axis=-1).mean()

    if optax is not None:
        optimizer = optax.adamw(lr, weight_decay=0.01)
        state = optimizer.init(params)

        def update(p, state, x, y):
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            updates, state = optimizer.update(g, state, p)
            return optax.apply_updates(p, updates), state, loss

        how = "optax.adamw"
    else:

        def zeros():  # one buffer per moment: both are donated
            return jax.tree_util.tree_map(jnp.zeros_like, params)

        state = (zeros(), zeros(), jnp.float32(0))

        def update(p, state, x, y, b1=0.9, b2=0.999, eps=1e-8, decay=0.01):
            m, v, t = state
            loss, g = jax.value_and_grad(loss_fn)(p, x, y)
            t = t + 1
            m = jax.tree_util.tree_map(lambda mi, gi: b1 * mi + (1 - b1) * gi, m, g)
            v = jax.tree_util.tree_map(lambda vi, gi: b2 * vi + (1 - b2) * gi * gi, v, g)
            c1, c2 = 1 - b1**t, 1 - b2**t

            def new(pi, mi, vi):
                pi = pi * (1 - lr * decay)
                return pi - lr * (mi / c1) / (jnp.sqrt(vi / c2) + eps)

            return jax.tree_util.tree_map(new, p, m, v), (m, v, t), loss

        how = "AdamW by hand"
    fn = jax.jit(update, donate_argnums=(0, 1))
    x, y = (jax.device_put(a) for a in _batch(context))
    carry = [params, state]

    def step():
        carry[0], carry[1], loss = fn(carry[0], carry[1], x, y)
        return jax.block_until_ready(loss)

    result = _time_steps(step, steps)
    result["about"] = f"jax {jax.__version__} jax.jit ({how})"
    return result


def _run_side(side: str, steps: int, config: dict | None = None, **env) -> dict:
    """One side in a fresh process (``env``: variables set in it): its result, or
    {"error": why}."""
    command = [sys.executable, "-m", "perf.transformer", "--side", side, "--steps", str(steps)]
    if config is not None:
        command += ["--config", json.dumps(config)]
    out = subprocess.run(command, env={**launch_env(), **env}, capture_output=True, text=True)
    if out.returncode:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"its process exited with code {out.returncode}: {tail}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- compile and warm start -------------------------------------------------------------------

_STEP_PROBE = """
import time
began = time.time()
import numpy as np
import jitgrad as jg
from jitgrad.examples import charlm
config = charlm.Config(batch=32)
model, opt = charlm.build(95, config)
ids = np.random.default_rng(0).integers(0, 95, (32, config.context + 1))
x, y = jg.asarray(ids[:, :-1]), jg.asarray(ids[:, 1:])
step = jg.jit(charlm.train_step)
t = time.perf_counter()
for _ in range(2):  # the trace, then the first replay, which compiles the plan's kernels
    step(model, opt, x, y)
first = time.perf_counter() - t
ended = time.time()
stats = jg.jit.stats()
print(began, first, ended, stats["compiled"], stats["disk_hits"])
"""


def transformer_lines(installed: dict | None = None, steps: int = 20) -> list[str]:
    """The report's transformer section. ``installed`` says which comparators to run
    (None: those importable)."""
    ours = _run_side("jitgrad", steps)
    lines = [
        "## Transformer training step",
        "",
        "The step of `python -m jitgrad.examples.charlm` at batch 32 with its default model "
        "(float32, AdamW), each library in a fresh process of its own on the same batch "
        f"of {VOCAB} characters; {WARMUP_STEPS} warm-up steps, then {steps} timed steps: "
        "median (fastest–slowest).",
        "",
    ]
    if "error" in ours:
        return [*lines, f"jitgrad: ERROR: {ours['error']}", ""]
    config = ours["config"]
    lines += [
        f"Model: {config['layers']} blocks, d_model {config['d_model']}, {config['heads']} "
        f"heads, context {config['context']}.",
        "",
        "| side | step | jitgrad's speed-up over it | target | status | first loss |",
        "|---|---|---|---|---|---|",
        f"| {ours['about']}, jg.jit | {_cell(ours)} | — | — | — | {ours['first_loss']:.3f} |",
    ]
    # The same step with every product on one BLAS thread: how much of the step is OpenBLAS's
    # second thread competing with the parallel kernels between the products.
    single = _run_side("jitgrad", steps, JITGRAD_BLAS_ONE_THREAD_UP_TO=str(1 << 62))
    if "error" not in single:
        lines.append(
            f"| the same, JITGRAD_BLAS_ONE_THREAD_UP_TO=2^62 (every product on one BLAS thread) "
            f"| {_cell(single)} | — | — | info: {ours['median'] / single['median']:.2f}× "
            f"faster than the row above | {single['first_loss']:.3f} |"
        )
    for side, target in (("torch", TARGET_VS_TORCH), ("jax", TARGET_VS_JAX)):
        if installed is not None and not installed.get(side):
            lines.append(f"| {side} | not installed | | | | |")
            continue
        theirs = _run_side(side, steps, config)
        if "error" in theirs:
            lines.append(f"| {side} | ERROR: {theirs['error']} | | | | |")
            continue
        speedup = theirs["median"] / ours["median"]
        status = "PASS" if speedup >= target else "MISS"
        lines.append(
            f"| {theirs['about']} | {_cell(theirs)} | {speedup:.2f}× | ≥ {target:g}× | "
            f"{status} | {theirs['first_loss']:.3f} |"
        )
    lines += ["", f"A first loss near ln({VOCAB}) = {math.log(VOCAB):.3f}: an untrained model.", ""]
    return lines + _start_lines()


def _start_lines(repeats: int = 1) -> list[str]:
    try:
        cold, warm = cold_and_warm(lambda cache: _run(_STEP_PROBE, _jitgrad_env(cache)), repeats)
    except (RuntimeError, OSError) as exc:
        return [f"Compile and warm start: ERROR: {exc}", ""]
    first_cold = statistics.median(s.first for s in cold)
    warm_total = statistics.median(s.total for s in warm)
    return [
        "| jitted step, fresh process | first two steps | from process start to their end | "
        "kernels compiled / from disk | target | status |",
        "|---|---|---|---|---|---|",
        f"| cold: empty kernel cache | {first_cold:.2f} s | "
        f"{statistics.median(s.total for s in cold):.2f} s | {cold[0].compiled} / "
        f"{cold[0].loaded} | first two steps ≤ {COLD_TARGET:g} s | "
        f"{'PASS' if first_cold <= COLD_TARGET else 'MISS'} |",
        f"| warm: disk cache filled | {statistics.median(s.first for s in warm):.2f} s | "
        f"{warm_total:.2f} s | {warm[0].compiled} / {warm[0].loaded} | from process start "
        f"≤ {WARM_TARGET:g} s | {'PASS' if warm_total <= WARM_TARGET else 'MISS'} |",
        "",
    ]


def _cell(result: dict) -> str:
    return (
        f"{result['median'] * 1e3:.2f} ms ({result['fastest'] * 1e3:.2f}–"
        f"{result['slowest'] * 1e3:.2f})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.transformer", description=__doc__)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per side")
    parser.add_argument("--side", choices=("jitgrad", "torch", "jax"), help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side is None:
        print("\n".join(transformer_lines(steps=args.steps)))
        return 0
    if args.side == "jitgrad":
        result = _jitgrad_side(args.steps)
    else:
        side = _torch_side if args.side == "torch" else _jax_side
        result = side(args.steps, **json.loads(args.config))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
