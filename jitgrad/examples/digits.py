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

import sys

import jitgrad as jg
from jitgrad import nn, optim

from ._training import (
    Result,
    accuracy,
    fit,
    load_data,
    parse,
    parser,
    print_timings,
    save_and_serve,
    train_step,
)
from ._training import eager_step_times as _eager_step_times
from ._training import warm_start_seconds as _warm_start_seconds

__all__ = ["accuracy", "build_model", "load_data", "main", "make_optimizer", "train", "train_step"]

DEFAULT_LR = {"adam": 1e-2, "sgd": 0.02}


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


def train(
    epochs: int = 20,
    batch_size: int = 64,
    optimizer: str = "adam",
    lr: float | None = None,
    seed: int = 0,
    train_limit: int | None = None,
    progress: bool = False,
    use_jit: bool = True,
) -> Result:
    """Train on the digits and return the model, its test accuracy, the mean loss of each
    epoch and every step's wall time. ``train_limit`` trains on the first samples only;
    ``progress`` shows a progress bar per epoch; ``use_jit`` runs the step under
    ``jg.jit`` (traced once per batch shape, then replayed)."""
    x_train, y_train, x_test, y_test = load_data(seed)
    if train_limit is not None:
        x_train, y_train = x_train[:train_limit], y_train[:train_limit]
    model = build_model(seed)
    opt = make_optimizer(optimizer, model.parameters(), lr)
    data = (x_train, y_train, x_test, y_test)
    return fit(model, opt, data, epochs, batch_size, seed, progress, use_jit)


def eager_step_times(batch_size: int, steps: int = 40, seed: int = 0) -> list[float]:
    """Wall times of eager (not jitted) Adam steps on a fresh model, for comparison."""
    x_train, y_train, _, _ = load_data(seed)
    model = build_model(seed)
    opt = make_optimizer("adam", model.parameters())
    return _eager_step_times(model, opt, x_train[:batch_size], y_train[:batch_size], steps)


def warm_start_seconds(batch_size: int) -> float:
    """Seconds from a fresh interpreter's start to the end of its first jitted digits step,
    with this process's kernels already in the disk cache."""
    return _warm_start_seconds("digits", batch_size)


def parse_args(argv=None):
    p = parser(
        "python -m jitgrad.examples.digits",
        "Train an MLP (64 → 128 → ReLU → 10, float32) on scikit-learn's "
        "handwritten digits and save it as a model directory for serving.",
        epochs=20,
        output="./models/digits/1",
        lr_help="learning rate (default: 0.01 for adam, 0.02 for sgd)",
    )
    p.add_argument(
        "--optimizer",
        choices=("adam", "sgd"),
        default="adam",
        help="adam, or sgd with momentum 0.9 (default: adam)",
    )
    return parse(p, argv)


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
        progress=True,
        use_jit=not args.no_jit,
    )
    print_timings(result, args, "digits", lambda: eager_step_times(args.batch_size, seed=args.seed))
    save_and_serve(result, args, (64,), {"optimizer": args.optimizer, "lr": lr})
    return 0


if __name__ == "__main__":
    sys.exit(main())
