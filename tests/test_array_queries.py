"""numpy's questions about arrays, and its conditional conversions, over tensors."""

import numpy as np
import pytest

import jitgrad as jg


def test_shape_questions_match_numpy():
    a = np.zeros((2, 3, 4))
    t = jg.from_numpy(a)
    for obj, value in [(t, a), ([[1, 2]], [[1, 2]]), (1.5, 1.5), (jg.tensor(2.0), np.float64(2))]:
        assert jg.ndim(obj) == np.ndim(value)
        assert jg.shape(obj) == np.shape(value)
        assert jg.size(obj) == np.size(value)
    for axis in (0, -1, (0, 2)):
        assert jg.size(t, axis) == np.size(a, axis)
    assert type(jg.size(t)) is int and type(jg.ndim(t)) is int


def test_scalar_and_iterable_questions():
    assert jg.isscalar(1.5) and jg.isscalar("s") and not jg.isscalar(jg.tensor(1.0))
    assert not jg.isscalar([1])
    assert jg.iterable(jg.zeros(2)) and jg.iterable([1]) and not jg.iterable(3)


def test_isfortran_matches_numpy():
    for a in (np.zeros((2, 3)), np.zeros((2, 3), order="F"), np.zeros(3), np.zeros((3, 1))):
        assert jg.isfortran(jg.from_numpy(a)) == np.isfortran(a)
    assert jg.isfortran(jg.zeros((2, 3)).T)
    with pytest.raises(TypeError):
        jg.isfortran([1, 2])


def test_memory_sharing_matches_numpy():
    a = np.arange(12.0)
    t = jg.from_numpy(a)
    pairs = [
        (slice(0, 6), slice(6, 12)),
        (slice(0, 7), slice(6, 12)),
        (slice(0, None, 2), slice(1, None, 2)),
        (slice(None), slice(None)),
    ]
    for s1, s2 in pairs:
        assert jg.may_share_memory(t[s1], t[s2]) == np.may_share_memory(a[s1], a[s2])
        assert jg.shares_memory(t[s1], t[s2]) == np.shares_memory(a[s1], a[s2])
    assert jg.shares_memory(t, a) and not jg.shares_memory(t, t.clone())
    assert jg.shares_memory(t.reshape(3, 4).T, t[5, ...])
    assert not jg.shares_memory(t, t[5])  # (an element is a copy, as numpy's scalar is)
    x = jg.ones(3, requires_grad=True)
    assert jg.shares_memory(x, x[1:])


def test_asanyarray_and_asarray_chkfinite():
    t = jg.ones(2)
    assert jg.asanyarray(t) is t
    assert jg.asanyarray([1, 2], dtype=jg.float32).dtype == jg.float32
    assert jg.asarray_chkfinite([1, 2]).dtype == jg.int64
    assert jg.asarray_chkfinite(t) is t
    for bad in ([1.0, np.inf], [np.nan], [complex(0, np.inf)]):
        with pytest.raises(ValueError, match="infs or NaNs"):
            jg.asarray_chkfinite(bad)
        with pytest.raises(ValueError):
            np.asarray_chkfinite(bad)


@pytest.mark.parametrize("requirements", [None, "C", "F", ["A", "W"], "O", ["F", "O"], "E"])
def test_require_matches_numpy(requirements):
    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    want = np.require(a, np.float32, requirements)
    got = jg.require(jg.from_numpy(a), jg.float32, requirements)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS"):
        if want.flags[flag]:
            assert got.flags[flag], flag
    if want.flags.owndata:  # (a tensor's flags call a column-major copy a view of one)
        assert not jg.shares_memory(got, jg.from_numpy(a))


def test_require_keeps_what_meets_it_and_refuses_nonsense():
    t = jg.zeros((2, 3))
    assert jg.require(t, requirements="C") is t
    assert jg.shares_memory(jg.require(t.T, requirements="F"), t)
    assert not jg.shares_memory(jg.require(t[1], requirements="O"), t)
    with pytest.raises(ValueError, match="both 'C' and 'F'"):
        jg.require(t, requirements="CF")
    with pytest.raises(KeyError):
        jg.require(t, requirements="Q")
