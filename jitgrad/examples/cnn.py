"""``python -m jitgrad.examples.cnn``: train a small CNN on scikit-learn's handwritten
digits as 1×8×8 images.

The split and scaling are the digits example's (80/20, seeded; pixels in [0, 1]). The
network (float32)::

    Conv2d(1, 16, 3, padding=1) → ReLU → MaxPool2d(2)     16×4×4
    Conv2d(16, 32, 3, padding=1) → ReLU → MaxPool2d(2)    32×2×2
    Flatten → Linear(128, 10)

is trained with cross-entropy and Adam, its learning rate annealed along a cosine over the
epochs. The test accuracy, the step times and the saved model directory (by default
``./models/digits-cnn/1``, served by ``python -m jitgrad.serving``) are printed.

    python -m jitgrad.examples.cnn --epochs 15 --lr 0.01
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

__all__ = [
    "accuracy",
    "build_model",
    "load_images",
    "main",
    "make_optimizer",
    "train",
    "train_step",
]

IMAGE_SHAPE = (1, 8, 8)
DEFAULT_LR = 1e-2


def load_images(seed: int = 0):
    """(x_train, y_train, x_test, y_test): the digits split with the images as
    (N, 1, 8, 8) float32."""
    x_train, y_train, x_test, y_test = load_data(seed)
    return (
        x_train.reshape(-1, *IMAGE_SHAPE),
        y_train,
        x_test.reshape(-1, *IMAGE_SHAPE),
        y_test,
    )


def build_model(seed: int = 0) -> nn.Sequential:
    """Two 3×3 convolutions (16 and 32 channels, padded), each followed by ReLU and 2×2
    max pooling, then a linear head to the 10 classes; float32, from one seeded generator."""
    rng = jg.random.default_rng(seed)
    f32 = jg.float32
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1, dtype=f32, generator=rng),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1, dtype=f32, generator=rng),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 10, dtype=f32, generator=rng),
    )


def make_optimizer(params, lr: float = DEFAULT_LR) -> optim.Adam:
    return optim.Adam(params, lr=lr)


def train(
    epochs: int = 15,
    batch_size: int = 64,
    lr: float = DEFAULT_LR,
    seed: int = 0,
    train_limit: int | None = None,
    progress: bool = False,
    use_jit: bool = True,
) -> Result:
    """Train on the digit images and return the model, its test accuracy, the mean loss of
    each epoch and every step's wall time. ``train_limit`` trains on the first samples
    only; ``progress`` shows a progress bar per epoch; ``use_jit`` runs the step under
    ``jg.jit``."""
    x_train, y_train, x_test, y_test = load_images(seed)
    if train_limit is not None:
        x_train, y_train = x_train[:train_limit], y_train[:train_limit]
    model = build_model(seed)
    opt = make_optimizer(model.parameters(), lr)
    cosine = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    data = (x_train, y_train, x_test, y_test)
    return fit(model, opt, data, epochs, batch_size, seed, progress, use_jit, cosine)


def eager_step_times(batch_size: int, steps: int = 40, seed: int = 0) -> list[float]:
    """Wall times of eager (not jitted) steps on a fresh model, for comparison."""
    x_train, y_train, _, _ = load_images(seed)
    model = build_model(seed)
    opt = make_optimizer(model.parameters())
    return _eager_step_times(model, opt, x_train[:batch_size], y_train[:batch_size], steps)


def parse_args(argv=None):
    p = parser(
        "python -m jitgrad.examples.cnn",
        "Train a small CNN (two 3×3 convolutions with ReLU and max pooling, a linear "
        "head; float32) on scikit-learn's handwritten digits as 1×8×8 images and save it "
        "as a model directory for serving.",
        epochs=15,
        output="./models/digits-cnn/1",
        lr_help=f"Adam's initial learning rate, annealed along a cosine (default: {DEFAULT_LR})",
    )
    return parse(p, argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    lr = DEFAULT_LR if args.lr is None else args.lr
    print(
        f"cnn: conv 1→16 → pool → conv 16→32 → pool → linear 128→10 (float32), adam "
        f"lr={lr} (cosine), batch {args.batch_size}, {args.epochs} epochs, seed {args.seed}"
    )
    result = train(
        args.epochs, args.batch_size, lr, args.seed, progress=True, use_jit=not args.no_jit
    )
    print_timings(result, args, "cnn", lambda: eager_step_times(args.batch_size, seed=args.seed))
    save_and_serve(result, args, IMAGE_SHAPE, {"optimizer": "adam", "lr": lr, "schedule": "cosine"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
