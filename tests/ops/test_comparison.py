"""isclose, allclose, array_equal and array_equiv against numpy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg

VALUES = st.sampled_from([0.0, 1.0, 1.0 + 1e-6, 1.0 + 1e-4, -0.0, 1e-9, np.inf, -np.inf, np.nan])


@settings(max_examples=25, deadline=None)
@given(
    a=st.lists(VALUES, min_size=3, max_size=3),
    b=st.lists(VALUES, min_size=3, max_size=3),
    rtol=st.sampled_from([1e-5, 0.0, 1e-3]),
    atol=st.sampled_from([1e-8, 0.0, 1e-3]),
    equal_nan=st.booleans(),
)
def test_isclose_and_allclose_match_numpy(a, b, rtol, atol, equal_nan):
    a, b = np.array(a), np.array(b)
    got = jg.isclose(jg.from_numpy(a), jg.from_numpy(b), rtol, atol, equal_nan)
    assert got.dtype is jg.bool_
    np.testing.assert_array_equal(got.numpy(), np.isclose(a, b, rtol, atol, equal_nan))
    assert jg.allclose(jg.from_numpy(a), b, rtol, atol, equal_nan) is bool(
        np.allclose(a, b, rtol, atol, equal_nan)
    )


def test_isclose_broadcasts_and_takes_scalars():
    a = np.array([[1.0], [2.0]])
    np.testing.assert_array_equal(
        jg.isclose(jg.from_numpy(a), [1.0, 2.0]).numpy(), np.isclose(a, [1.0, 2.0])
    )
    assert jg.isclose(1.0, 1.0 + 1e-9).shape == ()
    assert jg.isclose(jg.tensor([1, 2]), jg.tensor([1, 3])).tolist() == [True, False]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([1, 2], [1, 2]),
        ([1, 2], [[1, 2]]),
        ([1.0, np.nan], [1.0, np.nan]),
        ([1, 2], [1, 2, 3]),
        ([[1, 1]], [1]),
    ],
)
def test_array_equal_and_equiv_match_numpy(a, b):
    x = jg.tensor(a)
    for equal_nan in (False, True):
        assert jg.array_equal(x, b, equal_nan=equal_nan) is bool(
            np.array_equal(a, b, equal_nan=equal_nan)
        )
    assert jg.array_equiv(x, b) is bool(np.array_equiv(a, b))
