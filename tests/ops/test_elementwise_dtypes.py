"""Elementwise ops on integers, bools and float16 against numpy 2: result dtypes, integer
semantics (bits, wrapping, out-of-range Python ints) and numpy's TypeErrors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import BACKENDS, INTS, assert_matches_numpy, backend

import jitgrad as jg


def int_arrays(dtype, shape=(7,)):
    info = np.iinfo(dtype)
    return hnp.arrays(dtype, shape, elements=st.integers(int(info.min), int(info.max)))


# -- bitwise ops (1) -------------------------------------------------------------------------

BITWISE = [("bitwise_and", "__and__"), ("bitwise_or", "__or__"), ("bitwise_xor", "__xor__")]


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("name, operator", BITWISE)
@pytest.mark.parametrize("dtype", INTS + ["bool"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_bitwise_ops_are_numpys(backend_name, name, operator, dtype, data):
    with backend(backend_name):
        _check_bitwise(name, operator, dtype, data)


def _check_bitwise(name, operator, dtype, data):
    if dtype == "bool":
        a, b = (data.draw(hnp.arrays(np.bool_, (7,))) for _ in range(2))
    else:
        a, b = (data.draw(int_arrays(dtype)) for _ in range(2))
    assert_matches_numpy(getattr(jg, name), getattr(np, name), a, b)
    assert_matches_numpy(lambda x, y: getattr(x, operator)(y), getattr(np, name), a, b)
    assert_matches_numpy(lambda x, y: getattr(np, name)(x, y), getattr(np, name), a, b)
    # strided operands and Python scalars (weak: they take the tensor's dtype)
    assert_matches_numpy(
        lambda x: getattr(jg, name)(x[::2], x[1::2]),
        lambda x: getattr(np, name)(x[::2], x[1::2]),
        a,
    )
    for scalar in (True, 3, 100):
        assert_matches_numpy(getattr(jg, name), getattr(np, name), a, scalar)
    assert_matches_numpy(jg.invert, np.invert, a)
    assert_matches_numpy(lambda x: ~x, np.invert, a)
    assert_matches_numpy(lambda x: np.bitwise_not(x), np.bitwise_not, a)


def test_bitwise_ops_mix_dtypes_and_refuse_floats_as_numpy():
    i = np.array([6, 5])
    for a, b in [
        (i, np.array([3, 3], np.int8)),
        (np.array([True, False]), 2),
        (np.array([True]), np.array([3], np.uint8)),
        (i, 2.5),
        (i, np.array([1.0])),
        (np.array([1.0]), np.array([1.0])),
        (np.array([300], np.int16), -1),
    ]:
        assert_matches_numpy(lambda x, y: x & y, np.bitwise_and, a, b)
        assert_matches_numpy(lambda x, y: x | y, np.bitwise_or, a, b)
    assert_matches_numpy(lambda x: np.int8(3) & x, lambda x: np.int8(3) & x, i)
    with pytest.raises(TypeError, match="invert is only defined for bool and integer"):
        ~jg.tensor([1.0])
    with pytest.raises(TypeError, match="bitwise_xor is only defined .* got int64, float64"):
        jg.tensor([1]) ^ 2.5
    with pytest.raises(OverflowError):  # numpy 2: -1 does not convert to uint8
        jg.tensor([1], dtype=jg.uint8) & -1


def test_bitwise_ops_of_comparisons_are_logical_and_run_in_a_trace():
    x = jg.tensor([1.0, 2.0, 3.0])

    @jg.jit
    def step(x):
        inside = (x > 1) & ~(x > 2) | (x == 1) ^ (x == 3)
        return jg.where(inside, x, 0).sum()

    for _ in range(2):
        assert step(x).item() == 1 + 2 + 3
    assert ((x > 1) & (x < 3)).tolist() == [False, True, False]


# -- sign (2) --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + ["float16", "float32", "float64", "bool"])
def test_sign_is_numpys_for_every_dtype(backend_name, dtype):
    if dtype == "bool":
        x = np.array([True, False])
    elif dtype in INTS:
        info = np.iinfo(dtype)
        x = np.arange(info.min, info.max + 1, max(1, (info.max - info.min) // 997)).astype(dtype)
        x = np.concatenate([x, np.array([info.min, info.max, 0, 1], dtype)])
    else:
        x = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, 3, -2, 1e-8], dtype)
    with backend(backend_name):
        assert_matches_numpy(jg.sign, np.sign, x)
        assert_matches_numpy(lambda t: jg.sign(t[::-2]), lambda a: np.sign(a[::-2]), x)
    if x.dtype.kind == "f":  # numpy's sign of -0.0 is +0.0
        got = jg.sign(jg.from_numpy(x)).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.sign(x)))


def test_sign_of_bool_raises_as_numpy():
    with pytest.raises(TypeError, match="sign is not defined for bool"):
        jg.sign(jg.tensor([True]))


# -- clip (3) --------------------------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + ["float16", "float64"])
def test_clip_is_numpys_with_any_bounds(backend_name, dtype):
    x = np.array([0, 1, 5, 9, 100, 127], dtype)
    bounds = [
        (-1, 4),
        (-1000, 1000),
        (3, None),
        (None, 4),
        (None, None),
        (2.5, 4),
        (5, 2),
        (np.array([0, 6, 0, 2, 7, 120], dtype), 8),
        (1, np.array([3], np.int16)),
        (np.array([[1], [4]], np.int8), np.array([3, 5, 6, 7, 8, 9], dtype)),
    ]
    if dtype.startswith("float"):
        bounds += [(np.nan, 4), (np.array([np.nan, 1, 1, 1, 1, 1], dtype), None)]
    with backend(backend_name):
        for lo, hi in bounds:
            for call in (jg.clip, np.clip, lambda t, lo, hi: t.clip(lo, hi)):
                assert_matches_numpy(call, np.clip, x, lo, hi)
    assert_matches_numpy(jg.clip, np.clip, np.array([True]), None, None)  # numpy: TypeError


@settings(max_examples=60, deadline=None)
@given(
    values=hnp.arrays(np.float64, (3, 6), elements=st.integers(-3, 3).map(float)),
    has=st.sampled_from([(True, True), (True, False), (False, True)]),
    as_scalar=st.booleans(),
)
def test_clip_gradients_are_torch_clamps_at_ties_and_crossed_bounds(values, has, as_scalar):
    torch = pytest.importorskip("torch")

    x, lo, hi = values
    lo, hi = (lo if has[0] else None), (hi if has[1] else None)
    if as_scalar:
        lo, hi = (None if b is None else float(b[0]) for b in (lo, hi))
    tensors = [
        jg.tensor(b, requires_grad=True) if isinstance(b, np.ndarray) else b for b in (x, lo, hi)
    ]
    torch_tensors = [
        torch.tensor(b, requires_grad=True) if isinstance(b, np.ndarray) else b for b in (x, lo, hi)
    ]
    y = jg.clip(*tensors)
    want = torch.clamp(*torch_tensors)
    np.testing.assert_array_equal(y.numpy(), want.detach().numpy())
    y.backward(jg.ones(6))
    want.backward(torch.ones(6))
    for got, expected in zip(tensors, torch_tensors):
        if isinstance(got, jg.Tensor):
            np.testing.assert_array_equal(got.grad.numpy(), expected.grad.numpy())


def test_clip_differentiates_in_a_fused_function_and_at_second_order():
    @jg.function
    def f(x):
        return jg.clip(x, 0.5, 2.0) * x

    x = jg.tensor([0.0, 1.0, 3.0], requires_grad=True)
    f(x).sum().backward()
    assert x.grad.tolist() == [0.5, 2.0, 2.0]
    x = jg.tensor([0.0, 1.0, 3.0], requires_grad=True)
    lo = jg.tensor([0.5, 0.5, 0.5], requires_grad=True)
    (g,) = jg.autograd.grad((jg.clip(x, lo, 2.0) ** 2).sum(), [lo], create_graph=True)
    assert g.tolist() == [1.0, 0.0, 0.0]


# -- Python ints beyond an integer dtype's range (4) -----------------------------------------

COMPARE = [
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]
ARITHMETIC = ["add", "subtract", "multiply", "maximum", "bitwise_and"]


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_out_of_range_python_ints_compare_and_raise_in_arithmetic_as_numpy(backend_name, dtype):
    x = np.array([0, 1, 127], dtype)
    if dtype != "bool":
        info = np.iinfo(dtype)
        x = np.array([info.min, 0, 1, info.max], dtype)
    scalars = [
        -1,
        0,
        255,
        256,
        300,
        -129,
        2**31,
        -(2**31) - 1,
        2**63 - 1,
        2**63,
        -(2**63) - 1,
        2**64,
        2**70,
        -(2**1100),
    ]
    with backend(backend_name):
        for v in scalars:
            for name in COMPARE + ARITHMETIC:
                assert_matches_numpy(getattr(jg, name), getattr(np, name), x, v)
                assert_matches_numpy(getattr(jg, name), getattr(np, name), v, x)
            # the memo of a call signature is decided on a value in range: it still holds
            assert_matches_numpy(lambda t, s: (t == 0, t == s)[1], np.equal, x, v)
            assert_matches_numpy(lambda s, t: (0 < t, s < t)[1], np.less, v, x)


# -- integer powers ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + ["bool"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_integer_powers_wrap_and_refuse_negative_exponents_as_numpy(backend_name, dtype, data):
    bases = data.draw(hnp.arrays(dtype, (6,)) if dtype == "bool" else int_arrays(dtype, (6,)))
    small = hnp.arrays(dtype, (6,), elements=st.integers(-3, 70) if dtype != "bool" else None)
    exponents = data.draw(small if dtype != "uint8" else int_arrays(dtype, (6,)))
    with backend(backend_name):
        assert_matches_numpy(lambda a, b: a**b, np.power, bases, exponents)
        for scalar in (0, 3, 63, 2**40 + 1, -1):
            assert_matches_numpy(lambda a, s=scalar: a**s, lambda a, s=scalar: a**s, bases)
        assert_matches_numpy(lambda b: 3**b, lambda b: 3**b, exponents)


def test_a_negative_integer_exponent_is_refused_on_every_call_and_replay():
    powers = jg.jit(lambda a, b: a**b)
    base = jg.tensor([2, 3])
    assert powers(base, jg.tensor([1, 2])).tolist() == [2, 9]
    assert powers(base, jg.tensor([3, 0])).tolist() == [8, 1]  # (the replay)
    with pytest.raises(ValueError, match="negative integer powers"):
        powers(base, jg.tensor([1, -1]))
    x = jg.tensor([2, 3])
    with pytest.raises(ValueError, match="negative integer powers"):
        x **= jg.tensor([-1, 1])
    assert x.tolist() == [2, 3]  # refused before anything was written
    assert (jg.tensor([2.0]) ** -1).tolist() == [0.5]  # floats take any exponent


# -- float16 with Python scalars -----------------------------------------------------------

FLOAT16 = np.arange(2**16, dtype=np.uint16).view(np.float16)
FLOAT16_OPS = {
    "add": lambda a, s: a + s,
    "rsub": lambda a, s: s - a,
    "mul": lambda a, s: a * s,
    "div": lambda a, s: a / s,
    "rdiv": lambda a, s: s / a,
    "less": lambda a, s: a < s,
    "equal": lambda a, s: a == s,
    "clip": lambda a, s: a.clip(None, s),
}


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("op", FLOAT16_OPS)
def test_python_scalars_become_float16_first_as_numpy(backend_name, op):
    # NEP 50: the weak scalar is converted to float16 before the operation, so every
    # float16 value (NaN and inf included) must give numpy's result and dtype.
    fn = FLOAT16_OPS[op]
    with backend(backend_name):
        for scalar in (0.1, 1 / 3, 3.14159, 2049, 65519.0, 70000.0, -2.5, 1e-8, 2**40):
            assert_matches_numpy(
                lambda a, s=scalar: fn(a, s), lambda a, s=scalar: fn(a, s), FLOAT16
            )


@pytest.mark.parametrize("backend_name", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_floor_division_of_the_minimum_by_minus_one_wraps_as_numpy(backend_name, dtype):
    low = np.iinfo(dtype).min
    a = np.array([low, low, 7, -7, low], dtype)
    b = np.array([-1, 1, -1, 0, 2], dtype)
    with backend(backend_name):
        assert_matches_numpy(lambda x, y: x // y, np.floor_divide, a, b)
        assert_matches_numpy(lambda x, y: x % y, np.remainder, a, b)
        assert_matches_numpy(lambda x: x // -1, lambda x: x // -1, a)
