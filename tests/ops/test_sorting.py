"""Sorting and searching against numpy (values, dtype, shape, errors), gradients by
finite differences and against PyTorch, and the in-place Tensor methods."""

from functools import partial

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import assert_matches_numpy

import jitgrad as jg
from jitgrad.autograd import gradcheck

DTYPES = [np.int64, np.int8, np.float64, np.bool_]


@st.composite
def arrays(draw, min_dims=1):
    """Small arrays with many ties (and NaN among floats) of the test dtypes."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=5))
    if dtype is np.float64:
        elements = st.sampled_from([-1.5, 0.0, 2.0, 3.25, np.nan, -np.inf])
    elif dtype is np.bool_:
        elements = st.booleans()
    else:
        elements = st.integers(-3, 3)
    return draw(hnp.arrays(dtype, shape, elements=elements))


@st.composite
def array_and_axis(draw):
    a = draw(arrays())
    axis = draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    return a, axis


@settings(max_examples=25, deadline=None)
@given(array_and_axis(), st.sampled_from([None, "stable", "heapsort"]))
def test_sort_and_argsort_equal_numpy(a_axis, kind):
    a, axis = a_axis
    assert_matches_numpy(lambda t: jg.sort(t, axis, kind), lambda x: np.sort(x, axis, kind), a)
    assert_matches_numpy(
        lambda t: jg.argsort(t, axis, kind), lambda x: np.argsort(x, axis, kind), a
    )


@settings(max_examples=25, deadline=None)
@given(array_and_axis())
def test_descending_is_the_stable_reverse_order(a_axis):
    a, axis = a_axis
    got = jg.argsort(jg.tensor(a), axis, descending=True, stable=True).numpy()
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    picked = np.take_along_axis(flat, got, ax)
    # largest first (NaN first, as the largest), equal values in their input order
    key = np.where(np.isnan(picked), np.inf, picked) if a.dtype.kind == "f" else picked
    n = key.shape[ax]
    assert (np.take(key, range(n - 1), ax) >= np.take(key, range(1, n), ax)).all()
    want = np.flip(np.argsort(np.flip(flat, ax), ax, stable=True), ax)
    want = flat.shape[ax] - 1 - want
    np.testing.assert_array_equal(got, want)
    values = jg.sort(jg.tensor(a), axis, descending=True).numpy()
    np.testing.assert_array_equal(values, picked)


@settings(max_examples=25, deadline=None)
@given(arrays(), st.data())
def test_partition_equals_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    if n == 0:
        return
    kth = data.draw(st.one_of(st.integers(-n, n - 1), st.lists(st.integers(0, n - 1), max_size=3)))
    assert_matches_numpy(
        lambda t: jg.partition(t, kth, axis), lambda x: np.partition(x, kth, axis), a
    )
    assert_matches_numpy(
        lambda t: jg.argpartition(t, kth, axis), lambda x: np.argpartition(x, kth, axis), a
    )


def test_partition_values_come_from_their_positions():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=(3, 40)).astype(float)
    x = jg.tensor(a, requires_grad=True)
    weights = rng.standard_normal(a.shape)
    (jg.partition(x, [3, 20], axis=1) * jg.tensor(weights)).sum().backward()
    # each input element received the weight of the place its value went to: the
    # weighted sums of values agree
    np.testing.assert_allclose(
        (x.grad.numpy() * a).sum(), (np.partition(a, [3, 20], axis=1) * weights).sum()
    )


def test_sort_and_partition_gradients():
    x = jg.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: jg.sort(t, axis=0), x)
    assert gradcheck(lambda t: jg.sort(t.T, axis=None), x)
    assert gradcheck(lambda t: jg.sort(t, descending=True), x)
    assert gradcheck(lambda t: jg.partition(t, 2), x)


def test_stable_sort_gradient_with_ties_equals_torch():
    a = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [0.0, 0.0, 0.0, 5.0, 0.0]])
    w = np.arange(10.0).reshape(2, 5)
    x = jg.tensor(a, requires_grad=True)
    (jg.sort(x, stable=True) * jg.tensor(w)).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    (torch.sort(xt, stable=True).values * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    xt.grad = None
    (torch.sort(xt, stable=True, descending=True).values * torch.tensor(w)).sum().backward()
    x.grad = None
    (jg.sort(x, stable=True, descending=True) * jg.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_dim_gives_pytorchs_values_and_indices():
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    got = jg.sort(jg.tensor(a), dim=1, descending=True)
    want = torch.sort(torch.tensor(a), dim=1, descending=True)
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    assert got.indices.dtype is jg.int64


def test_lexsort_equals_numpy():
    first = np.array([1, 5, 1, 4, 3, 4, 4])
    last = np.array([9, 4, 0, 4, 0, 2, 1])
    want = np.lexsort((first, last))
    np.testing.assert_array_equal(jg.lexsort([jg.tensor(first), jg.tensor(last)]).numpy(), want)
    both = np.stack([first, last])
    np.testing.assert_array_equal(jg.lexsort(jg.tensor(both)).numpy(), np.lexsort(both))
    grid = np.stack([both, both[::-1]], axis=-1)
    np.testing.assert_array_equal(
        jg.lexsort(jg.tensor(grid), axis=0).numpy(), np.lexsort(grid, axis=0)
    )


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(-5, 5), max_size=8).map(sorted),
    st.one_of(st.integers(-6, 6), st.lists(st.integers(-6, 6), max_size=4)),
    st.sampled_from(["left", "right"]),
)
def test_searchsorted_equals_numpy(a, v, side):
    a = np.array(a, dtype=np.int64)
    assert_matches_numpy(
        lambda t: jg.searchsorted(t, v, side), lambda x: np.searchsorted(x, v, side), a
    )
    order = np.random.default_rng(0).permutation(a.size)
    shuffled = a[np.argsort(order)]
    assert_matches_numpy(
        lambda t: jg.searchsorted(t, v, side, sorter=jg.tensor(order)),
        lambda x: np.searchsorted(x, v, side, sorter=order),
        shuffled,
    )


def test_searchsorted_of_floats_with_nan():
    a = np.array([1.0, 2.0, np.nan])
    v = np.array([np.nan, 1.5, 3.0])
    for side in ("left", "right"):
        got = jg.searchsorted(jg.tensor(a), jg.tensor(v), side=side)
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(a, v, side=side))


@settings(max_examples=25, deadline=None)
@given(arrays())
def test_nonzero_family_equals_numpy(a):
    assert_matches_numpy(jg.nonzero, np.nonzero, a)
    assert_matches_numpy(lambda t: jg.where(t), np.where, a)
    assert_matches_numpy(jg.flatnonzero, np.flatnonzero, a)
    assert_matches_numpy(jg.argwhere, np.argwhere, a)
    assert_matches_numpy(jg.count_nonzero, np.count_nonzero, a)
    for axis in range(a.ndim):
        for keepdims in (False, True):
            assert_matches_numpy(
                partial(jg.count_nonzero, axis=axis, keepdims=keepdims),
                partial(np.count_nonzero, axis=axis, keepdims=keepdims),
                a,
            )


def test_nonzero_results():
    t = jg.tensor([[0.0, 1.5], [np.nan, 0.0]])
    rows, cols = jg.nonzero(t)
    assert rows.dtype is cols.dtype is jg.int64
    assert (rows.tolist(), cols.tolist()) == ([0, 1], [1, 0])
    assert jg.nonzero(t, as_tuple=False).tolist() == [[0, 1], [1, 0]]
    assert [r.tolist() for r in jg.nonzero(t, as_tuple=True)] == [[0, 1], [1, 0]]
    assert jg.argwhere(jg.tensor(3)).shape == (1, 0)
    assert jg.count_nonzero(t).shape == ()
    x = jg.tensor([1.0, 0.0, 2.0], requires_grad=True)
    assert jg.nonzero(x)[0].tolist() == [0, 2]


def test_where_still_selects_with_three_arguments():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    jg.where(x > 1.5, x * 2, 0.0).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="both or neither"):
        jg.where(x > 1.5, x)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="out of bounds"):
        jg.partition(jg.tensor([1, 2, 3]), 3)
    with pytest.raises(ValueError, match="out of bounds"):
        jg.argpartition(jg.tensor([1, 2, 3]), -4)
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        jg.searchsorted(jg.tensor([1, 2]), 1, side="middle")
    with pytest.raises(np.exceptions.AxisError):
        jg.sort(jg.tensor(1.0))
    with pytest.raises(IndexError):
        jg.sort(jg.tensor([1, 2]), axis=1)
    with pytest.raises(ValueError, match="order"):
        jg.sort(jg.tensor([1, 2]), order="f")
    with pytest.raises(ValueError, match="0d"):
        jg.nonzero(jg.tensor(1.0))
    with pytest.raises(TypeError, match="bool"):
        jg.argsort(jg.tensor([1, 2]), axis=True)


# -- Tensor methods ---------------------------------------------------------------------------


def test_sort_method_sorts_in_place_as_numpy():
    a = np.array([[3, 1, 2], [9, 7, 8]])
    t = jg.tensor(a)
    assert t.sort(axis=0) is None
    np.testing.assert_array_equal(t.numpy(), np.sort(a, axis=0))
    assert t.sort() is None
    np.testing.assert_array_equal(t.numpy(), np.sort(a))
    view = jg.tensor(a)[:, ::-1]
    view.sort()
    np.testing.assert_array_equal(view.numpy(), np.sort(a[:, ::-1]))


def test_sort_method_with_dim_is_pytorchs():
    t = jg.tensor([[3, 1, 2]])
    values, indices = t.sort(dim=1)
    assert t.tolist() == [[3, 1, 2]]
    assert (values.tolist(), indices.tolist()) == ([[1, 2, 3]], [[1, 2, 0]])
    assert t.sort(descending=True).values.tolist() == [[3, 2, 1]]


def test_in_place_sort_records_the_gradient():
    x = jg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    y = x * 1
    y.sort()
    (y * jg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
    with pytest.raises(RuntimeError, match="leaf"):
        x.sort()


def test_partition_and_other_methods():
    a = np.array([5, 1, 4, 2, 3])
    t = jg.tensor(a)
    assert t.partition(2) is None
    np.testing.assert_array_equal(t.numpy(), np.partition(a, 2))
    t = jg.tensor(a)
    np.testing.assert_array_equal(t.argpartition(2).numpy(), a.argpartition(2))
    np.testing.assert_array_equal(t.argsort().numpy(), a.argsort())
    assert t.argsort(dim=0, descending=True).tolist() == [0, 2, 4, 3, 1]
    assert jg.tensor([1, 3, 5]).searchsorted(3, "right").item() == 2
    assert [r.tolist() for r in jg.tensor([[0, 2]]).nonzero()] == [[0], [1]]
    assert jg.tensor([[0, 2]]).nonzero(as_tuple=False).tolist() == [[0, 1]]


def test_sort_in_a_jitted_step_follows_each_calls_values():
    step = jg.jit(lambda t: jg.sort(t) * 2)
    for a in ([3.0, 1.0, 2.0], [0.0, 9.0, -1.0], [5.0, 4.0, 3.0]):
        np.testing.assert_array_equal(step(jg.tensor(a)).numpy(), np.sort(a) * 2)


def test_numpy_functions_run_as_jitgrad_ops():
    x = jg.tensor([3.0, 1.0, 2.0], requires_grad=True)
    y = np.sort(x, kind="stable")
    assert isinstance(y, jg.Tensor)
    (y * jg.tensor([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]
    assert np.argsort(x).tolist() == [1, 2, 0]
    assert np.partition(x, 1).tolist() == np.partition(x.detach().numpy(), 1).tolist()
    assert np.searchsorted(jg.tensor([1, 2]), 2, side="right").item() == 2
    assert [i.tolist() for i in np.nonzero(x)] == [[0, 1, 2]]
    assert [i.tolist() for i in np.where(x > 1.5)] == [[0, 2]]
    assert np.where(x > 1.5, x, 0.0).tolist() == [3.0, 0.0, 2.0]
    assert np.count_nonzero(x > 1.5, axis=0).item() == 2
    assert np.lexsort([jg.tensor([1, 0])]).tolist() == [1, 0]
    for func in (np.flatnonzero, np.argwhere):
        assert isinstance(func(x), jg.Tensor)


def test_nonzero_in_a_jitted_step_follows_each_calls_values():
    step = jg.jit(lambda t: jg.nonzero(t)[0] + 0)
    assert step(jg.tensor([0, 1, 1])).tolist() == [1, 2]
    assert step(jg.tensor([1, 0, 1])).tolist() == [0, 2]
    with pytest.raises(ValueError, match="depends on the data"):
        step(jg.tensor([1, 1, 1]))
