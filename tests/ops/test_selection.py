"""take, put, place, putmask, choose, compress, extract, select and piecewise against
numpy (values, dtype, shape, errors), with gradients by finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import assert_matches_numpy

import jitgrad as jg
from jitgrad.autograd import gradcheck

DTYPES = [np.int64, np.float64, np.bool_]


def leaf(shape, seed=0):
    return jg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@st.composite
def take_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    a = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)))
    axis = draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    n = a.size if axis is None else a.shape[axis]
    mode = draw(st.sampled_from(["raise", "wrap", "clip"]))
    bound = n + 2 if mode != "raise" else n
    index_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    indices = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-bound, bound - 1)))
    return a, indices, axis, mode


@settings(max_examples=25, deadline=None)
@given(take_case())
def test_take_equals_numpy(case):
    a, indices, axis, mode = case
    assert_matches_numpy(
        lambda t: jg.take(t, indices, axis, mode=mode),
        lambda x: np.take(x, indices, axis, mode=mode),
        a,
    )
    assert_matches_numpy(
        lambda t: t.take(jg.tensor(indices), axis, mode=mode),
        lambda x: x.take(indices, axis, mode=mode),
        a,
    )


def test_take_gradient_adds_repeats():
    x = leaf((3, 4))
    assert gradcheck(lambda t: jg.take(t, [[0, 3], [3, 3]], axis=1), x)
    assert gradcheck(lambda t: jg.take(t.T, [11, 0, 11, -1]), x)
    assert gradcheck(lambda t: jg.take(t, [5, -1], axis=0, mode="clip"), x)


@settings(max_examples=25, deadline=None)
@given(
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4)),
    st.lists(st.integers(-20, 20), min_size=1, max_size=5),
    st.lists(st.integers(-9, 9), max_size=3),
    st.sampled_from(["wrap", "clip", "raise"]),
)
def test_put_equals_numpy(a, ind, v, mode):
    if mode == "raise":
        ind = [i % a.size for i in ind]
    want = a.copy()
    np.put(want, ind, v, mode=mode)
    t = jg.tensor(a)
    assert jg.put(t, ind, v, mode=mode) is None
    np.testing.assert_array_equal(t.numpy(), want)
    t = jg.tensor(a)
    t.put(jg.tensor(ind), v, mode)
    np.testing.assert_array_equal(t.numpy(), want)


def test_put_records_gradients():
    x, v = leaf((2, 3)), leaf(2, seed=1)

    def put_into(x, v):
        y = x * 1
        jg.put(y, [4, 0, 5], v)  # v cycles: v[0], v[1], v[0]
        return y

    assert gradcheck(put_into, x, v)


def test_place_and_putmask_equal_numpy():
    a = np.arange(10.0).reshape(2, 5)
    mask = a % 3 == 1
    for fn in (np.place, np.putmask):
        want, t = a.copy(), jg.tensor(a)
        fn(want, mask, [-1.0, -2.0])
        getattr(jg, fn.__name__)(t, jg.tensor(mask), jg.tensor([-1.0, -2.0]))
        np.testing.assert_array_equal(t.numpy(), want)
    with pytest.raises(ValueError, match="empty"):
        jg.place(jg.tensor(a), mask, [])
    with pytest.raises(ValueError, match="same size"):
        jg.place(jg.tensor(a), [True], [1.0])


@settings(max_examples=25, deadline=None)
@given(st.data(), st.sampled_from(["raise", "wrap", "clip"]))
def test_choose_equals_numpy(data, mode):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    n = data.draw(st.integers(1, 3))
    high = n - 1 if mode == "raise" else n + 2
    low = 0 if mode == "raise" else -3
    a = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(low, high)))
    shape_of_choice = hnp.broadcastable_shapes(shape, max_dims=2)
    shapes = data.draw(st.lists(shape_of_choice, min_size=n, max_size=n))
    choices = [np.arange(np.prod(s)).reshape(s) * (i + 1.0) for i, s in enumerate(shapes)]
    choices[0] = choices[0].astype(np.int8)
    assert_matches_numpy(
        lambda t, *cs: jg.choose(t, cs, mode=mode),
        lambda x, *cs: np.choose(x, cs, mode=mode),
        a,
        *choices,
    )


def test_choose_gradient_and_method():
    x, y = leaf((2, 3)), leaf(3, seed=1)
    picks = [[0, 1, 1], [1, 0, 1]]
    assert gradcheck(lambda a, b: jg.choose(picks, [a, b]), x, y)
    assert jg.tensor([1, 0]).choose(jg.tensor([[1, 2], [3, 4]])).tolist() == [3, 2]
    with pytest.raises(ValueError, match="invalid entry"):
        jg.choose([0, 2], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="mode"):
        jg.choose([0, 1], [[1, 2], [3, 4]], mode="bounce")


@settings(max_examples=25, deadline=None)
@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)),
    st.data(),
)
def test_compress_and_extract_equal_numpy(a, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    n = a.size if axis is None else a.shape[axis]
    condition = data.draw(st.lists(st.booleans(), max_size=n))
    assert_matches_numpy(
        lambda t: jg.compress(condition, t, axis), lambda x: np.compress(condition, x, axis), a
    )
    assert_matches_numpy(
        lambda t: t.compress(condition, axis), lambda x: x.compress(condition, axis), a
    )
    mask = np.arange(a.size).reshape(a.shape) % 3
    assert_matches_numpy(lambda t: jg.extract(mask, t), lambda x: np.extract(mask, x), a)


def test_compress_gradient_and_errors():
    x = leaf((3, 4))
    assert gradcheck(lambda t: jg.compress([True, False, True], t, axis=0), x)
    assert gradcheck(lambda t: jg.extract(t.detach() > 0, t), x)
    with pytest.raises(IndexError, match="out of bounds"):
        jg.compress([False, False, False, True], jg.arange(3))
    with pytest.raises(ValueError, match="1-d"):
        jg.compress([[True]], jg.arange(3))


SELECT_CASES = [
    (np.arange(6.0).reshape(2, 3), 0),
    (np.arange(6, dtype=np.float32), 0.5),
    (np.arange(6, dtype=np.int8), 0),
    (np.arange(6, dtype=np.int32), np.int64(-1)),
    (np.arange(6), np.array([7.0])),
]


@pytest.mark.parametrize("a, default", SELECT_CASES, ids=lambda v: str(getattr(v, "dtype", v)))
def test_select_equals_numpy(a, default):
    def both(lib, x):
        return lib.select([x < 2, x > 3, x == 2], [x, x * 3, x[..., :1]], default)

    assert_matches_numpy(lambda t: both(jg, t), lambda x: both(np, x), a)


def test_select_gradient_and_errors():
    x, d = leaf((2, 3)), leaf(3, seed=1)
    mask = x.detach()

    def pick(t, default):
        return jg.select([mask < 0, mask > 1], [t * 2, t * t], default)

    assert gradcheck(pick, x, d)
    with pytest.raises(ValueError, match="same length"):
        jg.select([mask > 0], [x, x])
    with pytest.raises(ValueError, match="empty"):
        jg.select([], [])
    with pytest.raises(TypeError, match="invalid entry 1"):
        jg.select([mask > 0, mask], [x, x])


def test_piecewise_equals_numpy():
    a = np.linspace(-2.0, 2.0, 9)
    funcs = [lambda v: -v, lambda v: v * v, 7.5]

    def both(lib, x):
        return lib.piecewise(x, [x < -1, x > 1], funcs)

    assert_matches_numpy(lambda t: both(jg, t), lambda x: both(np, x), a)
    ints = np.arange(-3, 4)
    assert_matches_numpy(
        lambda t: jg.piecewise(t, [t < 0], [lambda v: v * 1.5]),
        lambda x: np.piecewise(x, [x < 0], [lambda v: v * 1.5]),
        ints,
    )
    assert_matches_numpy(
        lambda t: jg.piecewise(t, t > 0, [1, -1]), lambda x: np.piecewise(x, x > 0, [1, -1]), a
    )
    zero_d = np.array(3.0)
    assert_matches_numpy(
        lambda t: jg.piecewise(t, [True], [lambda v: v + 1]),
        lambda x: np.piecewise(x, [True], [lambda v: v + 1]),
        zero_d,
    )


def test_piecewise_gradient_and_errors():
    x = leaf(7)
    conditions = [x.detach() < 0, x.detach() > 1]
    assert gradcheck(lambda t: jg.piecewise(t, conditions, [lambda v: v**3, jg.sin, jg.exp]), x)
    with pytest.raises(ValueError, match="functions are expected"):
        jg.piecewise(x, conditions, [jg.sin])


def test_bad_input_errors():
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        jg.take(jg.arange(3), [5])
    with pytest.raises(IndexError, match="axis 1"):
        jg.take(jg.zeros((2, 3)), [-4], axis=1)
    with pytest.raises(IndexError, match="empty axis"):
        jg.take(jg.zeros(0), [0], mode="wrap")
    with pytest.raises(ValueError, match="mode"):
        jg.take(jg.arange(3), [0], mode="nearest")
    with pytest.raises(IndexError, match="out of bounds"):
        jg.put(jg.arange(3), [3], 1)
    with pytest.raises(TypeError, match="jitgrad tensor"):
        jg.put(np.arange(3), [0], 1)
    with pytest.raises(ValueError, match="out= must be a tensor of the result's shape"):
        jg.take(jg.arange(3), [0], out=jg.zeros(2))


def test_numpy_functions_run_as_jitgrad_ops():
    x = leaf(4)
    assert gradcheck(lambda t: np.take(t, [3, 0, 3]), x)
    assert gradcheck(lambda t: np.compress([True, False, True], t), x)
    assert gradcheck(lambda t: np.extract(np.array([1, 0, 0, 1]), t), x)
    assert gradcheck(lambda t: np.choose([1, 0, 1, 0], [t, t * t]), x)
    assert gradcheck(lambda t: np.select([t.detach() > 0], [t], default=-1.0), x)
    t = jg.zeros(4)
    np.put(t, [1], 5.0)
    np.place(t, t.numpy() == 0, [7.0])
    np.putmask(t, t.numpy() == 5, jg.tensor([1.0, 2.0]))
    assert t.tolist() == [7.0, 2.0, 7.0, 7.0]


def test_take_in_a_jitted_step_follows_each_calls_indices():
    step = jg.jit(lambda t, i: jg.take(t, i, mode="wrap") * 1)
    x = jg.tensor([1.0, 2.0, 3.0])
    assert step(x, jg.tensor([4, 0])).tolist() == [2.0, 1.0]
    assert step(x, jg.tensor([-1, 5])).tolist() == [3.0, 3.0]


@pytest.mark.parametrize(
    "shape, wrap",
    [((3, 3), False), ((5, 3), False), ((5, 3), True), ((2, 4), False), ((3, 3, 3), False)],
)
def test_fill_diagonal_matches_numpy(shape, wrap):
    expected, got = np.zeros(shape), jg.zeros(shape)
    np.fill_diagonal(expected, [1.0, 2.0], wrap)
    assert jg.fill_diagonal(got, [1.0, 2.0], wrap) is None
    np.testing.assert_array_equal(got.numpy(), expected)


def test_fill_diagonal_records_the_write_and_checks_shapes():
    x = jg.ones((3, 3), requires_grad=True)
    y = x * 2
    jg.fill_diagonal(y, 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (1 - np.eye(3)))
    with pytest.raises(ValueError, match="equal length"):
        jg.fill_diagonal(jg.zeros((2, 3, 3)), 1.0)
    with pytest.raises(ValueError, match="at least 2-d"):
        jg.fill_diagonal(jg.zeros(3), 1.0)


def test_out_receives_the_result_as_numpys():
    base = np.arange(6.0).reshape(2, 3)
    for call, shape in [
        ("m.take(a, [2, 0], out=o)", (2,)),
        ("m.compress([1, 0, 1], a, axis=1, out=o)", (2, 2)),
        ("m.choose([[0, 1], [1, 0]], [a[:, :2], -a[:, :2]], out=o)", (2, 2)),
    ]:
        expected = eval(call, {"m": np, "a": base, "o": np.zeros(shape)})
        out = jg.zeros(shape)
        assert eval(call, {"m": jg, "a": jg.tensor(base), "o": out}) is out
        np.testing.assert_array_equal(out.numpy(), expected)
