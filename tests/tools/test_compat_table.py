"""docs/numpy-compatibility.md is what ``python -m tools.compat_table`` generates now, and
the generator classifies names as its page says."""

import sys
from pathlib import Path

import numpy as np

import jitgrad

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools import compat_table  # noqa: E402


def test_the_committed_table_is_up_to_date():
    assert compat_table.OUTPUT.read_text() == compat_table.generate(), (
        f"docs/numpy-compatibility.md is out of date: run `{compat_table.COMMAND}` "
        "from the repository's root and commit the page"
    )


def _entry(namespace, name):
    rows = compat_table.entries(namespace, jitgrad)
    return next(r for r in rows if r.name == name)


def test_every_public_numpy_name_has_one_row():
    names = [r.name for r in compat_table.entries("numpy.fft", jitgrad)]
    assert names == sorted(n for n in dir(np.fft) if not n.startswith("_"))


def test_statuses_and_gradients_of_known_names():
    assert (_entry("numpy", "exp").status, _entry("numpy", "exp").gradient) == ("jitgrad", "yes")
    assert _entry("numpy", "argmax").gradient == "—"  # indices
    assert _entry("numpy", "float32").status == "jitgrad"  # a jitgrad DType


def test_a_re_exported_numpy_function_is_not_counted_as_jitgrads(monkeypatch):
    monkeypatch.setattr(jitgrad, "kron", np.kron, raising=False)
    assert _entry("numpy", "kron").status == "re-export"


def test_a_numpy_function_missing_from_jitgrad_is_classified_by_dispatch(monkeypatch):
    monkeypatch.delattr(jitgrad, "exp")
    exp = _entry("numpy", "exp")  # numpy's ufunc still runs jitgrad's op on tensors
    assert (exp.status, exp.note, exp.gradient) == ("via numpy", "jitgrad op", "yes")
    assert _entry("numpy", "busday_count").status == "via numpy"  # dispatches, from C
    monkeypatch.delattr(jitgrad, "printoptions", raising=False)
    assert _entry("numpy", "printoptions").status == "missing"  # numpy's takes no arrays


def test_the_probe_says_no_for_a_function_without_a_graph(monkeypatch):
    detached = lambda x: jitgrad.exp(x).detach()  # noqa: E731
    monkeypatch.setattr(jitgrad, "expm1", detached)
    monkeypatch.setattr(detached, "__module__", "jitgrad.ops.unary", raising=False)
    assert _entry("numpy", "expm1").gradient == "no"


def test_the_probe_says_no_for_a_function_that_refuses_operands_requiring_grad(monkeypatch):
    def refusing(x):
        if x.requires_grad:
            raise RuntimeError("no gradients here")
        return jitgrad.exp(x)

    refusing.__module__ = "jitgrad.ops.unary"
    monkeypatch.setattr(jitgrad, "expm1", refusing)
    assert _entry("numpy", "expm1").gradient == "no"
    monkeypatch.setattr(jitgrad, "expm1", lambda x: 1 / 0)  # runs on nothing: not measured
    jitgrad.expm1.__module__ = "jitgrad.ops.unary"
    assert _entry("numpy", "expm1").gradient == "?"
