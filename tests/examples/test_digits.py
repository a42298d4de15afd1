"""The digits example: a seeded run on a slice reaches a measured accuracy, the command
line works end to end, and its output is a loadable model directory."""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

import jitgrad as jg  # noqa: E402
from jitgrad.examples import _training, digits  # noqa: E402
from jitgrad.io import load_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Measured: seed 0, Adam lr 1e-2, 8 epochs of batch 32 over the first 400 training samples
# reach 96.4% on the 359 test samples (seeds 0-3: 89.7-96.4%). The run is seeded, so the
# threshold only leaves room for rounding differences between backends and BLAS builds.
SLICE_THRESHOLD = 0.93


def test_seeded_slice_reaches_threshold_and_repeats():
    a = digits.train(epochs=8, batch_size=32, optimizer="adam", seed=0, train_limit=400)
    assert a.test_accuracy >= SLICE_THRESHOLD
    assert a.epoch_losses[-1] < a.epoch_losses[0] / 5
    b = digits.train(epochs=8, batch_size=32, optimizer="adam", seed=0, train_limit=400)
    np.testing.assert_allclose(a.epoch_losses, b.epoch_losses, rtol=1e-6)
    assert a.test_accuracy == b.test_accuracy


def test_sgd_slice_learns():
    # Measured: 8 epochs reach 91.6% with seed 0 (seeds 0-3: 89.1-91.6%).
    r = digits.train(epochs=8, batch_size=32, optimizer="sgd", seed=0, train_limit=400)
    assert r.test_accuracy >= 0.88


def test_data_split_and_model():
    x_train, y_train, x_test, y_test = digits.load_data(0)
    assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)
    assert x_train.dtype == np.float32 and 0 <= x_train.min() and x_train.max() <= 1
    assert y_train.dtype == np.int64
    model = digits.build_model(0)
    assert [p.dtype for p in model.parameters()] == [jg.float32] * 4
    assert [p.shape for p in model.parameters()] == [(128, 64), (128,), (10, 128), (10,)]


def test_digits_read_from_scikit_learns_file_equal_its_loader(monkeypatch):
    from sklearn.datasets import load_digits

    bunch = load_digits()
    pixels, labels = _training._digits()
    np.testing.assert_array_equal(pixels, bunch.data)
    np.testing.assert_array_equal(labels, bunch.target)
    # without the file where scikit-learn keeps it, the loader gives the same arrays
    monkeypatch.setattr(_training.Path, "is_file", lambda self: False)
    pixels, labels = _training._digits()
    np.testing.assert_array_equal(pixels, bunch.data)
    np.testing.assert_array_equal(labels, bunch.target)


def test_train_step_is_a_plain_function():
    model = digits.build_model(0)
    opt = digits.make_optimizer("sgd", model.parameters())
    x_train, y_train, _, _ = digits.load_data(0)
    x, y = jg.asarray(x_train[:16]), jg.asarray(y_train[:16])
    before = model[0].weight.numpy().copy()
    loss = digits.train_step(model, opt, x, y)
    assert loss.shape == () and loss.dtype is jg.float32
    assert not np.array_equal(model[0].weight.numpy(), before)


def test_main_writes_a_loadable_model_directory(tmp_path, capsys):
    out = tmp_path / "models" / "digits" / "1"
    assert digits.main(["--epochs", "2", "--optimizer", "adam", "--output", str(out)]) == 0
    printed = capsys.readouterr()
    assert "test accuracy:" in printed.out and "median step time:" in printed.out
    assert "epoch   2/2: 100%" in printed.err and "loss=" in printed.err
    model, manifest = load_model(out)
    assert manifest["signature"]["inputs"] == {"x": {"dtype": "float32", "shape": [-1, 64]}}
    assert manifest["signature"]["outputs"]["output"]["shape"] == [-1, 10]
    _, _, x_test, y_test = digits.load_data(0)
    reported = manifest["extra"]["test_accuracy"]
    assert digits.accuracy(model, x_test, y_test) == pytest.approx(reported)
    assert digits.main(["--epochs", "1", "--output", str(out)]) == 0  # a rerun replaces it


def test_help_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "jitgrad.examples.digits", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    for flag in ("--epochs", "--batch-size", "--optimizer", "--lr", "--output", "--seed"):
        assert flag in result.stdout


def test_bad_flags_are_rejected(capsys):
    with pytest.raises(SystemExit):
        digits.parse_args(["--epochs", "0"])
    assert "must be positive" in capsys.readouterr().err


def test_without_scikit_learn_the_job_says_what_to_install(monkeypatch):
    real = _training.importlib.util.find_spec
    monkeypatch.setattr(
        _training.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sklearn" else real(name, *a),
    )
    with pytest.raises(SystemExit, match=r"pip install 'jitgrad\[examples\]'"):
        digits.load_data(0)
