"""Data tensors cannot hold (strings, objects) stays numpy's: jg.array gives numpy's array,
and the sorting and set functions give numpy's results for it."""

import numpy as np
import pytest

import jitgrad as jg

WORDS = ["pear", "apple", "fig", "apple", "kiwi"]


@pytest.mark.parametrize(
    "data, dtype",
    [
        (WORDS, None),
        ([b"a", b"b"], None),
        ([[1, "x"]], None),
        (np.array([1, None]), None),
        ([1, 2], str),
        ([1, 2], object),
        (np.array(["2026-01-01"], "datetime64[D]"), None),
    ],
)
def test_array_of_data_that_tensors_cannot_hold_is_numpys(data, dtype):
    for make in (jg.array, jg.asarray):
        got, expected = make(data, dtype), getattr(np, make.__name__)(data, dtype)
        assert type(got) is np.ndarray and got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match="cannot build a tensor"):
        jg.tensor(data, dtype)  # PyTorch's spelling builds tensors only


CALLS = [
    "m.unique(w, return_inverse=True, return_counts=True)",
    "m.sort(w)",
    "m.argsort(w)",
    "m.searchsorted(m.sort(w), 'fig')",
    "m.isin(w, ['fig', 'kiwi'])",
    "m.intersect1d(w, ['fig', 'plum'])",
    "m.union1d(w, ['plum'])",
    "m.setdiff1d(w, ['fig'])",
    "m.setxor1d(w, ['fig', 'plum'])",
    "m.unique_counts(w)",
    "m.partition(w, 2)",
]


@pytest.mark.parametrize("call", CALLS)
def test_sorting_and_sets_of_strings_give_numpys_results(call):
    got = eval(call, {"m": jg, "w": jg.array(WORDS)})
    expected = eval(call, {"m": np, "w": np.array(WORDS)})
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(g), e)


def test_numbers_still_give_tensors():
    assert isinstance(jg.unique(jg.array([3, 1, 3])), jg.Tensor)
    assert isinstance(jg.sort([3.0, 1.0]), jg.Tensor)
