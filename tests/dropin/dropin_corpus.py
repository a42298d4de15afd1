"""The drop-in corpus: ordinary numpy programs, each a ``run(np)`` that takes the numpy
module (or jitgrad in its place) and returns a dict of named results.

The harness (``test_corpus.py``) and the perf rows (``perf/rows_corpus.py``) both read the
programs and the table of known failures from here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy

PROGRAMS = Path(__file__).resolve().parent / "programs"

# Programs jitgrad cannot run yet (as `import jitgrad as np`), with the first missing piece
# each one meets. The harness marks them xfail(strict=True): a program that starts to pass
# fails the suite until its line here is removed. `python -m tools.corpus_status` runs them
# all and prints where each fails now.
KNOWN_FAILURES: dict[str, str] = {}


def names() -> list[str]:
    """Every program of the corpus, by file name without ``.py``, sorted."""
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def load(name: str) -> ModuleType:
    """The program ``name`` as a fresh module (its ``run`` takes the numpy-like module)."""
    spec = importlib.util.spec_from_file_location(f"dropin_program_{name}", PROGRAMS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(name: str, np: ModuleType) -> dict:
    """Run program ``name`` on ``np``, leaving numpy's global random state as it was (a
    program may seed the legacy ``np.random``)."""
    state = numpy.random.get_state()
    try:
        return load(name).run(np)
    finally:
        numpy.random.set_state(state)


# rtol per floating kind of the result (complex by its parts): rounding of a different
# summation order, accumulated over a program's iterations, stays well inside these.
_RTOL = {2: 1e-2, 4: 1e-4, 8: 1e-7}


def assert_same_result(key: str, got, expected) -> None:
    """``got`` (jitgrad's) matches numpy's ``expected``: the same dtype and shape as
    ``np.asarray`` sees them, integers, booleans and strings exactly, floats within a
    tolerance for their precision (relative, and absolute at the scale of the result)."""
    if isinstance(expected, str):
        assert got == expected, f"{key}: {got!r} != numpy's {expected!r}"
        return
    e, g = numpy.asarray(expected), numpy.asarray(got)
    assert g.dtype == e.dtype, f"{key}: dtype {g.dtype} != numpy's {e.dtype}"
    assert g.shape == e.shape, f"{key}: shape {g.shape} != numpy's {e.shape}"
    if e.dtype.kind not in "fc":
        numpy.testing.assert_array_equal(g, e, err_msg=key, strict=True)
        return
    part = e.real.dtype.itemsize if e.dtype.kind == "c" else e.dtype.itemsize
    rtol = _RTOL[part]
    finite = numpy.abs(e[numpy.isfinite(e)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    numpy.testing.assert_allclose(
        g, e, rtol=rtol, atol=rtol * 1e-2 * scale, equal_nan=True, err_msg=key
    )
