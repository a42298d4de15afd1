"""unique (and the Array API's unique_*), isin and the 1-D set operations against numpy,
with the gradients of their values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import assert_matches_numpy

import jitgrad as jg
from jitgrad.autograd import gradcheck

DTYPES = [np.int64, np.float64, np.bool_]


@st.composite
def arrays(draw, max_dims=3):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=0, max_side=5))
    if dtype is np.float64:
        elements = st.sampled_from([-1.5, 0.0, 2.0, np.nan, np.inf])
    elif dtype is np.bool_:
        elements = st.booleans()
    else:
        elements = st.integers(-2, 2)
    return draw(hnp.arrays(dtype, shape, elements=elements))


FLAGS = st.tuples(st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=25, deadline=None)
@given(arrays(), FLAGS, st.booleans(), st.booleans())
def test_unique_equals_numpy(a, flags, equal_nan, is_sorted):
    def call(lib, x):
        return lib.unique(x, *flags, equal_nan=equal_nan, sorted=is_sorted)

    assert_matches_numpy(lambda t: call(jg, t), lambda x: call(np, x), a)


@settings(max_examples=25, deadline=None)
@given(arrays(max_dims=2), FLAGS, st.data())
def test_unique_along_an_axis_equals_numpy(a, flags, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    if a.shape[axis] == 0 or a.size == 0:
        return
    assert_matches_numpy(
        lambda t: jg.unique(t, *flags, axis=axis), lambda x: np.unique(x, *flags, axis=axis), a
    )


@settings(max_examples=25, deadline=None)
@given(arrays())
def test_array_api_unique_functions_equal_numpy(a):
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(jg, name)(jg.tensor(a)), getattr(np, name)(a)
        assert type(got).__name__ == type(want).__name__
        assert got._fields == want._fields
        for g, w in zip(got, want, strict=True):
            assert g.dtype.numpy == w.dtype
            np.testing.assert_array_equal(g.numpy(), w)
    assert_matches_numpy(jg.unique_values, np.unique_values, a)


def test_unique_values_keep_numpys_unsorted_order():
    a = np.array([3, 1, 2, 3, 1, 7, -4])
    np.testing.assert_array_equal(jg.unique_values(jg.tensor(a)).numpy(), np.unique_values(a))


def test_unique_gradient_goes_to_first_occurrences():
    x = jg.tensor([3.0, 1.0, 3.0, 2.0, 1.0], requires_grad=True)
    values, counts = jg.unique(x, return_counts=True)
    (values * jg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 0.0, 10.0, 0.0]
    assert gradcheck(
        lambda t: jg.unique(t.reshape(2, 3), axis=1),
        jg.tensor(np.random.default_rng(0).standard_normal(6), requires_grad=True),
    )
    x = jg.tensor([2.0, 2.0, 5.0], requires_grad=True)
    jg.unique_values(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


@settings(max_examples=25, deadline=None)
@given(arrays(max_dims=2), arrays(max_dims=2), st.booleans())
def test_isin_equals_numpy(a, b, invert):
    assert_matches_numpy(
        lambda s, t: jg.isin(s, t, invert=invert), lambda x, y: np.isin(x, y, invert=invert), a, b
    )


@settings(max_examples=25, deadline=None)
@given(arrays(max_dims=2), arrays(max_dims=2))
def test_set_operations_equal_numpy(a, b):
    for name in ("union1d", "setdiff1d", "setxor1d"):
        fn = getattr(jg, name)
        assert_matches_numpy(fn, getattr(np, name), a, b)
    assert_matches_numpy(jg.intersect1d, np.intersect1d, a, b)
    assert_matches_numpy(
        lambda s, t: jg.intersect1d(s, t, return_indices=True),
        lambda x, y: np.intersect1d(x, y, return_indices=True),
        a,
        b,
    )


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_set_operations_of_unique_inputs_equal_numpy(data):
    a = np.array(data.draw(st.lists(st.integers(-5, 5), unique=True, max_size=6)), np.int64)
    b = np.array(data.draw(st.lists(st.integers(-5, 5), unique=True, max_size=6)), np.int64)
    for name in ("setdiff1d", "setxor1d", "intersect1d"):
        assert_matches_numpy(
            lambda s, t, name=name: getattr(jg, name)(s, t, assume_unique=True),
            lambda x, y, name=name: getattr(np, name)(x, y, assume_unique=True),
            a,
            b,
        )


def test_set_operation_gradients():
    rng = np.random.default_rng(1)
    a = jg.tensor(rng.standard_normal(5), requires_grad=True)
    b = jg.tensor(rng.standard_normal(4), requires_grad=True)

    def shared(x, y):  # the inputs share values: intersect1d and setdiff1d are not empty
        return jg.concatenate([x, y, x[:2]])

    assert gradcheck(lambda x, y: jg.union1d(shared(x, y), y), a, b)
    assert gradcheck(lambda x, y: jg.setxor1d(shared(x, y), y), a, b)
    assert gradcheck(lambda x, y: jg.setdiff1d(shared(x, y), y), a, b)
    assert gradcheck(lambda x, y: jg.intersect1d(shared(x, y), x), a, b)
    x = jg.tensor([4.0, 1.0, 2.0], requires_grad=True)
    jg.intersect1d(x, jg.tensor([2, 4])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_mixed_dtypes_promote_as_numpy():
    a, b = np.array([1, 2, 3], np.int8), np.array([2.0, 3.0, 9.5])
    for name in ("union1d", "intersect1d", "setxor1d", "setdiff1d"):
        assert_matches_numpy(getattr(jg, name), getattr(np, name), a, b)


def test_bad_input_errors():
    with pytest.raises(np.exceptions.AxisError):
        jg.unique(jg.tensor([1, 2]), axis=1)
    with pytest.raises(ValueError, match="kind"):
        jg.isin(jg.tensor([1.0]), [1.0], kind="table")


def test_numpy_functions_run_as_jitgrad_ops():
    x = jg.tensor([2.0, 1.0, 2.0], requires_grad=True)
    values, counts = np.unique(x, return_counts=True)
    assert isinstance(values, jg.Tensor) and counts.tolist() == [1, 2]
    values.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0]
    assert np.unique_all(x).counts.tolist() == [1, 2]
    assert np.unique_counts(x).values.tolist() == [1.0, 2.0]
    assert np.unique_inverse(x).inverse_indices.tolist() == [1, 0, 1]
    assert sorted(np.unique_values(x).tolist()) == [1.0, 2.0]
    assert np.isin(x, [1.0]).tolist() == [False, True, False]
    assert np.intersect1d(x, [2.0, 5.0]).tolist() == [2.0]
    assert np.union1d(x, [5.0]).tolist() == [1.0, 2.0, 5.0]
    assert np.setdiff1d(x, [1.0]).tolist() == [2.0]
    assert np.setxor1d(x, [1.0, 3.0]).tolist() == [2.0, 3.0]


def test_unique_in_a_jitted_step_follows_each_calls_values():
    step = jg.jit(lambda t: jg.unique(t, return_inverse=True)[1] * 1)
    for a in ([3, 1, 3], [0, 0, 5], [2, 9, 2]):
        assert step(jg.tensor(a)).tolist() == np.unique(a, return_inverse=True)[1].tolist()
