"""Bit shifts (left_shift, right_shift, << and >>) and divmod against numpy 2: values,
result dtypes, out-of-range shift counts and numpy's errors, on both backends."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import BACKENDS, INTS, assert_matches_numpy, backend

import jitgrad as jg

SHIFTS = [("left_shift", "__lshift__", "__rlshift__"), ("right_shift", "__rshift__", "__rrshift__")]


def values(dtype, shape):
    if dtype == "bool":
        return hnp.arrays(np.bool_, shape)
    info = np.iinfo(dtype)
    return hnp.arrays(dtype, shape, elements=st.integers(int(info.min), int(info.max)))


def counts(dtype, shape):
    """Shift counts: mostly around the bit width (below, at, past it, negative), where C's
    shifts are undefined and numpy's are not, sometimes anywhere in the dtype's range."""
    if dtype == "bool":
        return hnp.arrays(np.bool_, shape)
    info, bits = np.iinfo(dtype), np.dtype(dtype).itemsize * 8
    near = st.integers(max(int(info.min), -3), min(int(info.max), 2 * bits + 3))
    return hnp.arrays(dtype, shape, elements=near | st.integers(int(info.min), int(info.max)))


# -- shifts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("name, operator, reflected", SHIFTS)
@pytest.mark.parametrize("dtype", INTS + ["bool"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_shifts_are_numpys(backend_name, name, operator, reflected, dtype, data):
    a = data.draw(values(dtype, (4, 6)))
    b = data.draw(counts(dtype, (4, 6)))
    fn = getattr(np, name)
    with backend(backend_name):
        assert_matches_numpy(getattr(jg, name), fn, a, b)
        assert_matches_numpy(lambda x, y: getattr(x, operator)(y), fn, a, b)
        assert_matches_numpy(lambda x, y: fn(x, y), fn, a, b)  # numpy's ufunc on tensors
        # broadcasting, and strided operands (steps, a transpose, a broadcast row)
        assert_matches_numpy(getattr(jg, name), fn, a, b[:1])
        assert_matches_numpy(
            lambda x, y: getattr(jg, name)(x[::2, ::-3], y.T.T[1::2, ::3]),
            lambda x, y: fn(x[::2, ::-3], y[1::2, ::3]),
            a,
            b,
        )
        column_major = np.asfortranarray(a)
        assert_matches_numpy(
            lambda x, y: getattr(jg, name)(x.T, y[:, :4]),
            lambda x, y: fn(x.T, y[:, :4]),
            column_major,
            b[:1],
        )
        # Python ints, weak (NEP 50), on either side: past the width, negative, too big
        for count in (True, 0, 1, 7, 8, 15, 31, 63, 64, 100, -1, 300):
            assert_matches_numpy(getattr(jg, name), fn, a, count)
            assert_matches_numpy(
                lambda x, c=count: getattr(x, operator)(c), lambda x, c=count: fn(x, c), a
            )
        for value in (1, -1, 5, 200):
            assert_matches_numpy(
                lambda y, v=value: getattr(y, reflected)(v), lambda y, v=value: fn(v, y), b
            )


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_shift_counts_past_the_width_and_negative_shift_everything_out(backend_name):
    # numpy 2: left gives 0, right gives 0 or -1 (the sign) for every count outside
    # [0, bits); C leaves these undefined and x86 would shift by the count mod the width.
    with backend(backend_name):
        for dtype in INTS:
            bits = np.dtype(dtype).itemsize * 8
            signed = dtype.startswith("int")
            a = np.array([5, -5, -1, 1] if signed else [5, 250, 255, 1], dtype)
            for count in [bits, bits + 1, 2 * bits, bits + bits // 2] + ([-1, -bits] * signed):
                b = np.full(4, count, dtype)
                left = jg.left_shift(jg.from_numpy(a), jg.from_numpy(b))
                right = jg.right_shift(jg.from_numpy(a), jg.from_numpy(b))
                assert left.tolist() == [0, 0, 0, 0], (dtype, count)
                sign = [0, -1, -1, 0] if signed else [0, 0, 0, 0]
                assert right.tolist() == sign, (dtype, count)
                np.testing.assert_array_equal(left.numpy(), np.left_shift(a, b))
                np.testing.assert_array_equal(right.numpy(), np.right_shift(a, b))


def test_shifts_promote_and_refuse_as_numpy():
    i8, u8, i64 = np.array([3, -7], np.int8), np.array([1, 200], np.uint8), np.array([6, 5])
    cases = [
        (i8, u8),
        (u8, i8),
        (i8, i64),
        (np.array([True, False]), np.array([True, True])),
        (np.array([True]), u8),
        (u8, True),
        (True, u8),
        (i64, 2.5),
        (i64, np.array([1.0])),
        (np.array([1.0]), 1),
        (np.array([1.5], np.float16), np.array([1], np.int8)),
        (np.array([1 + 1j]), 1),
        (u8, -1),
        (i8, 300),
        (3, np.array([70], np.int8)),
    ]
    for a, b in cases:
        assert_matches_numpy(jg.left_shift, np.left_shift, a, b)
        assert_matches_numpy(jg.right_shift, np.right_shift, a, b)
    assert jg.left_shift(jg.tensor([True]), True).dtype is jg.int8  # bools shift as int8
    with pytest.raises(TypeError, match="left_shift is only defined .* got int64, float64"):
        jg.tensor([1]) << 2.5
    with pytest.raises(TypeError, match="right_shift is only defined .* got float32, int64"):
        jg.right_shift(jg.tensor([1.0], dtype=jg.float32), jg.tensor([1]))
    with pytest.raises(ValueError, match="broadcast"):
        jg.left_shift(jg.tensor([1, 2]), jg.tensor([1, 2, 3]))


def test_in_place_shifts_write_through_views_and_keep_the_dtype():
    base = np.arange(12, dtype=np.int16).reshape(3, 4)
    x = jg.from_numpy(base.copy())
    view = x[:, 1:3]
    view <<= 3
    view >>= jg.tensor([1, 2], dtype=jg.int8)
    want = base.copy()
    want[:, 1:3] <<= 3
    want[:, 1:3] >>= np.array([1, 2], np.int8)
    np.testing.assert_array_equal(x.numpy(), want)
    assert x.dtype is jg.int16
    y = jg.tensor([1, 2], dtype=jg.uint8)
    with pytest.raises(TypeError, match="same_kind"):  # numpy: int16 cannot go into uint8
        y <<= jg.tensor([1, 1], dtype=jg.int8)
    with pytest.raises(TypeError, match="same_kind"):  # nor bools' int8 into bool
        flags = jg.tensor([True, False])
        flags <<= True
    with pytest.raises(TypeError, match="only defined for bool and integer"):
        y >>= 1.0
    assert y.tolist() == [1, 2]


def test_shifts_run_in_a_trace_and_carry_no_gradient():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(TypeError, match="only defined for bool and integer"):
        x << 1

    @jg.jit
    def step(x, k):
        return jg.where((k << 2 >> 1) > 2, x * 2, x).sum()

    k = jg.tensor([0, 1, 2])
    for _ in range(2):
        loss = step(x.detach(), k)
        assert loss.item() == 1 + 2 + 6
    shifted = k << 1
    assert not shifted.requires_grad and shifted.grad_fn is None


# -- divmod ----------------------------------------------------------------------------------

SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.5,
    -2.5,
    7.0,
    -7.0,
    0.1,
    np.inf,
    -np.inf,
    np.nan,
    1e-300,
    5e-324,
    1e308,
    -3.0,
]


def divmod_values(dtype, shape):
    if dtype == "bool":
        return hnp.arrays(np.bool_, shape)
    if dtype.startswith("float"):
        numbers = st.sampled_from(SPECIAL) | st.floats(-1e4, 1e4)
        return st.lists(numbers, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
            lambda v: _cast(np.array(v).reshape(shape), dtype)
        )
    info = np.iinfo(dtype)
    edges = st.sampled_from(
        [v for v in (0, 1, -1, 2, 7, int(info.min), int(info.max)) if info.min <= v <= info.max]
    )
    return hnp.arrays(dtype, shape, elements=edges | st.integers(int(info.min), int(info.max)))


def _cast(a, dtype):
    with np.errstate(over="ignore"):  # (1e308 is inf in float16 and float32)
        return a.astype(dtype)


def assert_same_floats(got, want):
    """Equal values and dtypes, NaN where numpy has NaN and signed zeros where it has them."""
    assert got.dtype.numpy == want.dtype, (got.dtype, want.dtype)
    got = got.numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + ["bool", "float16", "float32", "float64"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_divmod_is_numpys(backend_name, dtype, data):
    a = data.draw(divmod_values(dtype, (3, 8)))
    b = data.draw(divmod_values(dtype, (3, 8)))
    with backend(backend_name), np.errstate(all="ignore"):
        calls = [
            (lambda x, y: jg.divmod(x, y), lambda x, y: np.divmod(x, y)),
            (lambda x, y: divmod(x, y), lambda x, y: np.divmod(x, y)),
            (lambda x, y: np.divmod(x, y), lambda x, y: np.divmod(x, y)),
            # broadcasting and strided operands
            (
                lambda x, y: jg.divmod(x[:, ::-2], y[1:2, 1::2]),
                lambda x, y: np.divmod(x[:, ::-2], y[1:2, 1::2]),
            ),
            (lambda x, y: jg.divmod(x.T, y[0, :3]), lambda x, y: np.divmod(x.T, y[0, :3])),
        ]
        for got_fn, want_fn in calls:
            got = got_fn(jg.from_numpy(a), jg.from_numpy(b))
            want = want_fn(a, b)
            assert isinstance(got, tuple) and len(got) == 2
            for g, w in zip(got, want, strict=True):
                assert_same_floats(g, w)
        # Python scalars on either side (weak, NEP 50), zero included
        for scalar in (3, -2, 0, True) + ((2.5, -0.0, float("inf")) if "float" in dtype else ()):
            assert_matches_numpy(
                lambda x, s=scalar: divmod(x, s), lambda x, s=scalar: np.divmod(x, s), a
            )
            assert_matches_numpy(
                lambda x, s=scalar: divmod(s, x), lambda x, s=scalar: np.divmod(s, x), a
            )


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_divmod_by_zero_and_the_integer_minimum_by_minus_one(backend_name):
    # numpy: an integer divided by 0 gives quotient 0 and remainder 0; the minimum divided
    # by -1 wraps to itself with remainder 0; floats give inf/nan with the signs below.
    with backend(backend_name), np.errstate(all="ignore"):
        for dtype in INTS:
            info = np.iinfo(dtype)
            a = np.array([7, info.min, info.max, 0], dtype)
            b = np.array([0, -1 if info.min else 1, 0, 0], dtype)
            q, r = jg.divmod(jg.from_numpy(a), jg.from_numpy(b))
            want_q, want_r = np.divmod(a, b)
            assert q.tolist() == want_q.tolist() and r.tolist() == want_r.tolist(), dtype
            assert q.tolist()[0] == 0 and r.tolist()[0] == 0
        for dtype in ["float16", "float32", "float64"]:
            a = np.array([1.0, -1.0, 0.0, np.inf, 5.0, -5.0, np.nan, 5.0], dtype)
            b = np.array([0.0, 0.0, 0.0, 2.0, np.inf, np.inf, 1.0, -np.inf], dtype)
            q, r = jg.divmod(jg.from_numpy(a), jg.from_numpy(b))
            want_q, want_r = np.divmod(a, b)
            assert_same_floats(q, want_q)
            assert_same_floats(r, want_r)


def test_divmod_refuses_complex_and_mismatched_shapes():
    with pytest.raises(TypeError, match="floor_divide"):
        divmod(jg.tensor([1 + 2j]), 2)
    with pytest.raises(TypeError, match="floor_divide"):
        jg.divmod(jg.tensor([1.0]), jg.tensor([1j]))
    with pytest.raises(ValueError, match="broadcast"):
        jg.divmod(jg.tensor([1.0, 2.0]), jg.tensor([1.0, 2.0, 3.0]))
    assert jg.divmod(jg.tensor([True]), jg.tensor([True]))[0].dtype is jg.int8  # numpy's rule


def test_divmod_gradients_are_its_parts():
    # the quotient is piecewise constant (no gradient); the remainder a - b * floor(a / b)
    a_values, b_values = np.array([7.5, -7.5, 3.0, 0.25]), np.array([2.0, 2.0, -1.5, 1.0])
    a = jg.tensor(a_values, requires_grad=True)
    b = jg.tensor(b_values, requires_grad=True)
    q, r = divmod(a, b)
    (q * 10 + r * jg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(
        b.grad.numpy(), -np.floor_divide(a_values, b_values) * np.array([1.0, 2.0, 3.0, 4.0])
    )
    x = jg.tensor([5.0, -5.0], requires_grad=True)
    _, r = divmod(3.0, x)
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), -np.floor_divide(3.0, [5.0, -5.0]))
