"""What the example training jobs share: scikit-learn's digits, the training step and its
loop with tqdm progress bars, the accuracy, the timing printout, the command line's
common flags and saving (and optionally serving) the trained model."""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn, optim
from jitgrad.data import DataLoader, TensorDataset
from jitgrad.io import save_model

EAGER_WARMUP_STEPS = 5  # the first eager steps compile the per-op kernels: not timed


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test) as numpy arrays: float32 pixels in [0, 1] (one row
    of 64 per image) and int64 labels, split by a permutation seeded with ``seed``."""
    pixels, labels = _digits()
    x = (pixels / 16.0).astype(np.float32)
    y = labels.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = round(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits: (1797 × 64 pixels in 0..16, 1797 labels). Read from the file
    scikit-learn bundles (one row per image, its label last), since its loader imports
    scikit-learn and SciPy first: 0.4 s, most of a warm start's budget. Through the
    loader when the file is not where scikit-learn keeps it."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        raise SystemExit(
            "the digits examples need scikit-learn (its bundled digits dataset): "
            "pip install 'jitgrad[examples]'"
        )
    for root in spec.submodule_search_locations or ():
        path = Path(root) / "datasets" / "data" / "digits.csv.gz"
        if path.is_file():
            with gzip.open(path, "rt") as f:
                table = np.loadtxt(f, delimiter=",")
            return table[:, :-1], table[:, -1]
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return bunch.data, bunch.target


def train_step(model, optimizer, x, y):
    """One step: forward, cross-entropy, backward, update. Returns the loss."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def accuracy(model, x, y) -> float:
    """The fraction of samples whose largest logit is the label (eval mode, no graph)."""
    was_training = model.training
    model.eval()
    try:
        with jg.no_grad():
            predicted = model(jg.asarray(x)).numpy().argmax(axis=1)
    finally:
        model.train(was_training)
    return float((predicted == np.asarray(y)).mean())


@dataclass
class Result:
    model: nn.Module
    test_accuracy: float
    epoch_losses: list[float] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)
    seconds: float = 0.0
    first_step_seconds: float = 0.0
    kernels: dict = field(default_factory=dict)  # jg.jit.stats() after the first step


def fit(
    model: nn.Module,
    optimizer: optim.Optimizer,
    data: tuple,
    epochs: int,
    batch_size: int,
    seed: int,
    progress: bool = False,
    use_jit: bool = True,
    scheduler=None,
) -> Result:
    """Train ``model`` on ``data`` = (x_train, y_train, x_test, y_test) for ``epochs``
    shuffled passes (seeded with ``seed``) and return it with its test accuracy, the mean
    loss of each epoch and every step's wall time. ``progress`` shows a tqdm bar per epoch
    (``tqdm.auto``: a widget in notebooks, a line on terminals); ``use_jit`` runs the step
    under ``jg.jit`` (traced once per batch shape, then replayed); ``scheduler`` steps once
    per epoch."""
    x_train, y_train, x_test, y_test = data
    loader = DataLoader(
        TensorDataset(jg.asarray(x_train), jg.asarray(y_train)),
        batch_size=batch_size,
        shuffle=True,
        generator=seed,
    )
    bars = _progress_bars() if progress else None
    step = jg.jit(train_step) if use_jit else train_step
    result = Result(model, 0.0)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        bar = None
        if bars is not None:
            bar = bars(total=len(loader), desc=f"epoch {epoch:>3}/{epochs}", leave=True)
        total, count = 0.0, 0
        for x, y in loader:
            t0 = time.perf_counter()
            loss = step(model, optimizer, x, y)
            elapsed = time.perf_counter() - t0
            if result.first_step_seconds:
                result.step_times.append(elapsed)
            else:  # compiles, or loads kernels from the disk cache: reported apart
                result.first_step_seconds, result.kernels = elapsed, jg.jit.stats()
            total, count = total + loss.item() * len(y), count + len(y)
            if bar is not None:
                bar.set_postfix(loss=f"{total / count:.4f}", refresh=False)
                bar.update()
        result.epoch_losses.append(total / count)
        if bar is not None:
            bar.close()
        if scheduler is not None:
            scheduler.step()
    result.seconds = time.perf_counter() - start
    result.test_accuracy = accuracy(model, x_test, y_test)
    return result


def _progress_bars():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise SystemExit(
            "the examples' progress bars need tqdm: pip install 'jitgrad[examples]'"
        ) from None
    return tqdm


def eager_step_times(model, optimizer, x, y, steps: int = 40) -> list[float]:
    """Wall times of eager (not jitted) training steps of ``model`` on one batch."""
    x, y = jg.asarray(x), jg.asarray(y)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        train_step(model, optimizer, x, y)
        times.append(time.perf_counter() - t0)
    return times[EAGER_WARMUP_STEPS:]


def warm_start_seconds(example: str, batch_size: int) -> float:
    """Seconds from a fresh interpreter's start to the end of its first jitted training
    step of ``jitgrad.examples.<example>``, with this process's kernels already in the
    disk cache."""
    code = (
        "import time; t = time.perf_counter()\n"
        f"from jitgrad.examples import {example}\n"
        f"{example}.train(epochs=1, batch_size={batch_size}, train_limit={batch_size})\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def format_time(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def print_timings(result: Result, args, example: str, eager_times) -> None:
    """The printout after training: test accuracy, the first step (compile or disk cache),
    the median step, and for a jitted run the median eager step (``eager_times()``) and a
    fresh process's warm start."""
    median = statistics.median(result.step_times)
    mode = "eager" if args.no_jit else "jitted"
    print(f"test accuracy: {result.test_accuracy:.2%}")
    kernels = result.kernels
    print(
        f"first step: {result.first_step_seconds:.2f} s ({mode}; kernels compiled: "
        f"{kernels.get('compiled', 0)}, loaded from the disk cache: "
        f"{kernels.get('disk_hits', 0)})"
    )
    print(
        f"median step time: {format_time(median)} ({mode}, batch {args.batch_size}), "
        f"{len(result.step_times) + 1} steps in {result.seconds:.2f} s"
    )
    if not args.no_jit:
        eager = statistics.median(eager_times())
        print(
            f"median eager step: {format_time(eager)}: the jitted step is "
            f"{eager / median:.1f}× faster"
        )
        print(
            f"warm start: a fresh process trains its first jitted step "
            f"{warm_start_seconds(example, args.batch_size):.2f} s after starting"
        )


def parser(prog: str, description: str, epochs: int, output: str, lr_help: str):
    """The flags every example takes; an example adds its own."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument(
        "--epochs",
        type=int,
        default=epochs,
        help=f"passes over the training set (default: {epochs})",
    )
    p.add_argument("--batch-size", type=int, default=64, help="samples per step (default: 64)")
    p.add_argument("--lr", type=float, default=None, help=lr_help)
    p.add_argument(
        "--output",
        default=output,
        help="model directory to write, a version directory under a base path (default: "
        f"{output}; replaced if it exists)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the split, the initialisation and the shuffling (default: 0)",
    )
    p.add_argument(
        "--no-jit",
        action="store_true",
        help="run the training step eagerly instead of under jg.jit",
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="then serve the saved model "
        "over HTTP on loopback, answer one predict request and stop",
    )
    return p


def parse(p: argparse.ArgumentParser, argv) -> argparse.Namespace:
    args = p.parse_args(argv)
    if args.epochs <= 0 or args.batch_size <= 0:
        p.error("--epochs and --batch-size must be positive")
    return args


def save_and_serve(result: Result, args, input_shape: tuple, extra: dict) -> None:
    """Write the model directory ``args.output`` (input ``x`` of ``input_shape`` per sample,
    float32) and, with ``--serve``, serve it and answer one request."""
    save_model(
        result.model,
        args.output,
        input_name="x",
        input_shape=input_shape,
        input_dtype="float32",
        warmup_batch_sizes=(1, args.batch_size),
        overwrite=True,
        extra={
            "dataset": "sklearn.datasets.load_digits",
            "classes": list(range(10)),
            "pixel_scale": 1 / 16,
            "test_accuracy": result.test_accuracy,
            "epochs": args.epochs,
            "seed": args.seed,
            **extra,
        },
    )
    print(f"saved model to {args.output}")
    if args.serve:
        from jitgrad.serving.demo import serve_once

        output = Path(args.output)
        serve_once(output.parent, output.parent.name)
