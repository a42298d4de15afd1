"""``python -m jitgrad.examples.digits``: train an MLP on scikit-learn's handwritten digits.

The 1797 8×8 images (bundled with scikit-learn: no download) are scaled to [0, 1] and
split 80/20 with a seeded permutation; an MLP 64 → 128 → ReLU → 10 (float32) is trained
with cross-entropy and Adam (or SGD); the test accuracy, the median step time and the
saved model directory are printed. The model directory (``jitgrad.io.save_model``) is what
the serving layer loads: ``<base>/<name>/<version>``, by default ``./models/digits/1``.

    python -m jitgrad.examples.digits --epochs 20 --optimizer sgd --lr 0.05

``train_step`` is one plain function of (model, optimizer, x, y): the unit the JIT
compiles as a whole.
"""

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

DEFAULT_LR = {"adam": 1e-2, "sgd": 0.02}


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test) as numpy arrays: float32 pixels in [0, 1] and
    int64 labels, split by a permutation seeded with ``seed``."""
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
    scikit-learn and SciPy first: 0.4 s here, most of a warm start's budget. Through the
    loader when the file is not where scikit-learn keeps it."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        raise SystemExit(
            "the digits example needs scikit-learn (its bundled digits dataset): "
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


def build_model(seed: int = 0) -> nn.Sequential:
    """The MLP 64 → 128 → ReLU → 10 in float32, initialised from one seeded generator."""
    rng = jg.random.default_rng(seed)
    return nn.Sequential(
        nn.Linear(64, 128, dtype=jg.float32, generator=rng),
        nn.ReLU(),
        nn.Linear(128, 10, dtype=jg.float32, generator=rng),
    )


def make_optimizer(name: str, params, lr: float | None = None) -> optim.Optimizer:
    lr = DEFAULT_LR[name] if lr is None else lr
    if name == "adam":
        return optim.Adam(params, lr=lr)
    if name == "sgd":
        return optim.SGD(params, lr=lr, momentum=0.9)
    raise ValueError(f"unknown optimizer {name!r}: choose 'adam' or 'sgd'")


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


class ProgressBar:
    """One line per epoch: redrawn in place on a terminal, printed once when done
    otherwise (logs stay readable)."""

    def __init__(self, total: int, label: str, stream=None, width: int = 24):
        self.total, self.label, self.width = total, label, width
        self.stream = sys.stderr if stream is None else stream
        self.live = getattr(self.stream, "isatty", lambda: False)()

    def _line(self, done: int, loss: float) -> str:
        filled = self.width * done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.label} [{bar}] {done}/{self.total} loss {loss:.4f}"

    def update(self, done: int, loss: float) -> None:
        if self.live:
            self.stream.write("\r" + self._line(done, loss))
            self.stream.flush()

    def close(self, loss: float, suffix: str = "") -> None:
        line = self._line(self.total, loss) + suffix
        self.stream.write(("\r" if self.live else "") + line + "\n")
        self.stream.flush()


@dataclass
class Result:
    model: nn.Module
    test_accuracy: float
    epoch_losses: list[float] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)
    seconds: float = 0.0
    first_step_seconds: float = 0.0
    kernels: dict = field(default_factory=dict)  # jg.jit.stats() after the first step


def train(
    epochs: int = 20,
    batch_size: int = 64,
    optimizer: str = "adam",
    lr: float | None = None,
    seed: int = 0,
    train_limit: int | None = None,
    progress=None,
    use_jit: bool = True,
) -> Result:
    """Train on the digits and return the model, its test accuracy, the mean loss of each
    epoch and every step's wall time. ``train_limit`` trains on the first samples only;
    ``progress`` is a stream for the progress bars (None: no bars); ``use_jit`` runs the
    step under ``jg.jit`` (traced once per batch shape, then replayed)."""
    x_train, y_train, x_test, y_test = load_data(seed)
    if train_limit is not None:
        x_train, y_train = x_train[:train_limit], y_train[:train_limit]
    model = build_model(seed)
    opt = make_optimizer(optimizer, model.parameters(), lr)
    loader = DataLoader(
        TensorDataset(jg.asarray(x_train), jg.asarray(y_train)),
        batch_size=batch_size,
        shuffle=True,
        generator=seed,
    )
    step = jg.jit(train_step) if use_jit else train_step
    result = Result(model, 0.0)
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        label = f"epoch {epoch:>3}/{epochs}"
        bar = None if progress is None else ProgressBar(len(loader), label, progress)
        total, count = 0.0, 0
        for k, (x, y) in enumerate(loader, 1):
            t0 = time.perf_counter()
            loss = step(model, opt, x, y)
            elapsed = time.perf_counter() - t0
            if result.first_step_seconds:
                result.step_times.append(elapsed)
            else:  # compiles, or loads kernels from the disk cache: reported apart
                result.first_step_seconds, result.kernels = elapsed, jg.jit.stats()
            total, count = total + loss.item() * len(y), count + len(y)
            if bar is not None:
                bar.update(k, total / count)
        result.epoch_losses.append(total / count)
        if bar is not None:
            bar.close(total / count)
    result.seconds = time.perf_counter() - start
    result.test_accuracy = accuracy(model, x_test, y_test)
    return result


def eager_step_times(batch_size: int, steps: int = 40, seed: int = 0) -> list[float]:
    """Wall times of eager (not jitted) training steps on a fresh model, for comparison."""
    x_train, y_train, _, _ = load_data(seed)
    model = build_model(seed)
    opt = make_optimizer("adam", model.parameters())
    x, y = jg.asarray(x_train[:batch_size]), jg.asarray(y_train[:batch_size])
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        train_step(model, opt, x, y)
        times.append(time.perf_counter() - t0)
    return times[5:]  # the first steps compile the per-op kernels


def warm_start_seconds(batch_size: int) -> float:
    """Seconds from a fresh interpreter's start to the end of its first jitted training
    step, with this process's kernels already in the disk cache."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from jitgrad.examples import digits\n"
        f"digits.train(epochs=1, batch_size={batch_size}, train_limit={batch_size})\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def _format_time(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m jitgrad.examples.digits",
        description="Train an MLP (64 → 128 → ReLU → 10, float32) on scikit-learn's "
        "handwritten digits and save it as a model directory for serving.",
    )
    parser.add_argument(
        "--epochs", type=int, default=20, help="passes over the training set (default: 20)"
    )
    parser.add_argument("--batch-size", type=int, default=64, help="samples per step (default: 64)")
    parser.add_argument(
        "--optimizer",
        choices=("adam", "sgd"),
        default="adam",
        help="adam, or sgd with momentum 0.9 (default: adam)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        default=None,
        help="learning rate (default: 0.01 for adam, 0.02 for sgd)",
    )
    parser.add_argument(
        "--output",
        default="./models/digits/1",
        help="model directory to "
        "write, a version directory under a base path (default: "
        "./models/digits/1; replaced if it exists)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the split, the initialisation and the shuffling (default: 0)",
    )
    parser.add_argument(
        "--no-jit",
        action="store_true",
        help="run the training step eagerly instead of under jg.jit",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="then serve the saved model "
        "over HTTP on loopback, answer one predict request and stop",
    )
    args = parser.parse_args(argv)
    if args.epochs <= 0 or args.batch_size <= 0:
        parser.error("--epochs and --batch-size must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    lr = DEFAULT_LR[args.optimizer] if args.lr is None else args.lr
    print(
        f"digits: MLP 64 → 128 → ReLU → 10 (float32), {args.optimizer} lr={lr}, "
        f"batch {args.batch_size}, {args.epochs} epochs, seed {args.seed}"
    )
    result = train(
        args.epochs,
        args.batch_size,
        args.optimizer,
        lr,
        args.seed,
        progress=sys.stderr,
        use_jit=not args.no_jit,
    )
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
        f"median step time: {_format_time(median)} ({mode}, batch {args.batch_size}), "
        f"{len(result.step_times) + 1} steps in {result.seconds:.2f} s"
    )
    if not args.no_jit:
        eager = statistics.median(eager_step_times(args.batch_size, seed=args.seed))
        print(
            f"median eager step: {_format_time(eager)}: the jitted step is "
            f"{eager / median:.1f}× faster"
        )
        print(
            f"warm start: a fresh process trains its first jitted step "
            f"{warm_start_seconds(args.batch_size):.2f} s after starting"
        )
    save_model(
        result.model,
        args.output,
        input_name="x",
        input_shape=(64,),
        input_dtype="float32",
        warmup_batch_sizes=(1, args.batch_size),
        overwrite=True,
        extra={
            "dataset": "sklearn.datasets.load_digits",
            "classes": list(range(10)),
            "pixel_scale": 1 / 16,
            "test_accuracy": result.test_accuracy,
            "optimizer": args.optimizer,
            "lr": lr,
            "epochs": args.epochs,
            "seed": args.seed,
        },
    )
    print(f"saved model to {args.output}")
    if args.serve:
        from jitgrad.serving.demo import serve_once

        output = Path(args.output)
        serve_once(output.parent, output.parent.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
