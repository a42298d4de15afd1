"""Ordinary numpy programs run unchanged with jitgrad as ``np`` and give numpy's results:
the same names, values, dtypes and shapes (see ``dropin_corpus``).

A program jitgrad cannot run yet is in ``KNOWN_FAILURES`` with the first missing piece it
meets, and is expected to fail (strictly: one that passes must leave the table).
"""

import re

import numpy
import pytest
from dropin_corpus import KNOWN_FAILURES, PROGRAMS, assert_same_result, names, run

import jitgrad


def _marked(name: str):
    if name in KNOWN_FAILURES:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[name]))
    return name


@pytest.mark.parametrize("name", [_marked(n) for n in names()])
def test_program_gives_numpys_results(name):
    expected = run(name, numpy)
    got = run(name, jitgrad)
    assert isinstance(got, dict), f"run(jitgrad) returned a {type(got).__name__}, not a dict"
    assert sorted(got) == sorted(expected), "the programs' results differ in their names"
    for key, value in expected.items():
        assert_same_result(key, got[key], value)


@pytest.mark.parametrize("name", names())
def test_program_is_seeded_and_self_contained(name):
    """Two runs under numpy give identical results (its random streams are seeded inside),
    and numpy reaches it only as the ``np`` argument."""
    source = (PROGRAMS / f"{name}.py").read_text()
    imports = re.findall(r"^\s*(?:import|from)\s+(\S+)", source, flags=re.MULTILINE)
    numpy_imports = [m for m in imports if m.split(".")[0] in ("numpy", "jitgrad")]
    assert not numpy_imports, f"numpy is a corpus program's argument, never an import: {imports}"
    first, second = run(name, numpy), run(name, numpy)
    assert isinstance(first, dict) and first, "run(np) returns a non-empty dict of results"
    assert sorted(first) == sorted(second)
    for key, value in first.items():
        assert_same_result(key, second[key], value)


def test_the_table_names_only_programs_of_the_corpus():
    assert set(KNOWN_FAILURES) <= set(names()), set(KNOWN_FAILURES) - set(names())


def test_the_corpus_is_large_enough():
    assert len(names()) >= 24


@pytest.mark.parametrize(
    "got, expected",
    [
        (numpy.float32([1.0]), numpy.float64([1.0])),  # dtype
        (numpy.zeros((1, 2)), numpy.zeros(2)),  # shape
        (numpy.array([3]), numpy.array([4])),  # integers exactly
        (numpy.array([1.0 + 1e-6]), numpy.array([1.0])),  # float64 to ~1e-7
        (numpy.float32([1.001]), numpy.float32([1.0])),  # float32 to ~1e-4
        ("loss 0.25", "loss 0.250"),
    ],
)
def test_the_comparison_catches_differences(got, expected):
    with pytest.raises(AssertionError):
        assert_same_result("r", got, expected)


def test_the_comparison_allows_rounding_at_the_results_scale():
    assert_same_result("r", numpy.array([1e6, 5e-4]), numpy.array([1e6 * (1 + 1e-9), 0.0]))
    assert_same_result("r", numpy.float32([2.0, 0.0]), numpy.float32([2.00001, 1e-7]))
    assert_same_result("r", numpy.array([numpy.nan, 1.0]), numpy.array([numpy.nan, 1.0]))
