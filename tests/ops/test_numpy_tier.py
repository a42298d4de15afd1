"""The numpy tier gives what kernels give: values and dtypes of small eager work, with the
tier on and off, against numpy."""

import operator

import numpy as np
import pytest

import jitgrad as jg

CASES = {
    "multiply": lambda m, a, b: a * b,
    "sigmoid-like": lambda m, a, b: 1 / (1 + m.exp(-a)),
    "sum": lambda m, a, b: a.sum(axis=0),
    "max": lambda m, a, b: a.max(axis=1),
    "mask": lambda m, a, b: a[a > 0.25],
    "gather": lambda m, a, b: a.reshape(-1)[m.asarray([0, 5, 2])],
    "transposed copy": lambda m, a, b: m.ascontiguousarray(a.T),
    "cast": lambda m, a, b: a.astype(m.float32),
    "slice then add": lambda m, a, b: a[1:, ::2] + b[1:, ::2],
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32"])
@pytest.mark.parametrize("case", CASES)
def test_small_work_matches_numpy_on_both_tiers(case, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    a, b = (rng.random((3, 4)) * 2 - 0.5).astype(dtype), rng.random((3, 4)).astype(dtype)
    want = np.asarray(CASES[case](np, a, b))
    results = []
    for work in (4096, 0):  # the numpy tier, then kernels only
        monkeypatch.setattr(jg.config, "numpy_tier_work", work)
        got = CASES[case](jg, jg.asarray(a), jg.asarray(b))
        assert got.dtype.name == want.dtype.name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3 if dtype == "float16" else 1e-6)
        results.append(got)
    # a result of the tier is a tensor of its own: writing to it leaves the operands alone
    results[0][...] = 0
    np.testing.assert_array_equal(np.asarray(CASES[case](np, a, b)), want)


def test_floating_point_errors_pass_silently_as_in_kernels():
    with np.errstate(all="raise"):
        assert jg.log(jg.zeros(3)).tolist() == [-np.inf] * 3


def test_work_beyond_the_tier_compiles_its_kernel_at_the_signatures_second_call(monkeypatch):
    from jitgrad.jit import cache

    monkeypatch.setattr(cache.stats, "kernels", {})  # kernels looked up from here on
    monkeypatch.setattr(jg.config, "compile_after_calls", 2)  # (and decisions forgotten)
    x = jg.asarray(np.linspace(-30.0, 30.0, 10_000))  # sigmoid's formula: 8 numpy calls
    want = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(jg.sigmoid(x).numpy(), want, rtol=1e-12)
    assert not cache.stats.kernels  # the first call ran numpy's loops
    np.testing.assert_allclose(jg.sigmoid(x).numpy(), want, rtol=1e-12)
    assert len(cache.stats.kernels) == 1  # the second compiled (or loaded) the kernel
    np.testing.assert_allclose(jg.sigmoid(x).numpy(), want, rtol=1e-12)
    assert len(cache.stats.kernels) == 1


def test_compile_after_one_call_waits_for_the_kernel_at_the_first(monkeypatch):
    from jitgrad.jit import cache

    monkeypatch.setattr(cache.stats, "kernels", {})
    monkeypatch.setattr(jg.config, "compile_after_calls", 1)
    jg.sigmoid(jg.asarray(np.linspace(-3.0, 3.0, 10_000)))
    assert len(cache.stats.kernels) == 1


REPEATED = {  # calls whose second run of a signature takes a remembered shortcut
    "where": lambda m, a, b: m.where(a > 0.5, a, b),
    "views at offsets": lambda m, a, b: a[1:, ::2] * 2 + b[:-1, 1::2],
    "transposed views": lambda m, a, b: m.maximum(a.T[::-1], b.T),
    "where, a number": lambda m, a, b: m.where(b > 0.5, a, 0),
    "clip": lambda m, a, b: m.clip(a, 0.25, 0.75),
    "clip, integer bounds beyond uint8": lambda m, a, b: m.clip((b * 9).astype(m.uint8), -1, 300),
    "clip by tensors": lambda m, a, b: m.clip(a, b * 0.5, b),
    "concatenate": lambda m, a, b: m.concatenate([a, b], axis=1),
    "concatenate, column-major": lambda m, a, b: m.concatenate([a.T, b.T]),
    "reshape": lambda m, a, b: a.reshape(2, -1),
    "reshape, strided": lambda m, a, b: a.T.reshape(-1),
    "argmax": lambda m, a, b: m.argmax(a, axis=1),
    "std": lambda m, a, b: m.std(a, axis=1, ddof=1),
    "var, keepdims": lambda m, a, b: m.var(b, axis=0, keepdims=True),
    "var of integers": lambda m, a, b: m.var((b * 9).astype(m.int32)),
    "any": lambda m, a, b: m.any(a > 0.9, axis=0),
    "all, keepdims": lambda m, a, b: m.all(b, axis=1, keepdims=True),
    "any of NaN": lambda m, a, b: m.any(a * 0),
    "sort": lambda m, a, b: m.sort(a, axis=0),
    "sort, flattened": lambda m, a, b: m.sort(b, axis=None),
    "zeros": lambda m, a, b: m.zeros((2, 3), dtype=m.int16),
    "ones": lambda m, a, b: m.ones(5, dtype=m.bool),
    "empty's shape": lambda m, a, b: m.asarray(m.empty((3, 2)).shape),
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("case", REPEATED)
def test_repeated_small_calls_match_numpy(case, dtype):
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 4)).astype(dtype), rng.random((3, 4)).astype(dtype)
    a[0, 0] = np.nan
    want = np.asarray(REPEATED[case](np, a, b))
    ja, jb = jg.asarray(a), jg.asarray(b)
    for _ in range(3):  # the first call decides; later ones take what it remembered
        got = REPEATED[case](jg, ja, jb)
        assert got.dtype.name == want.dtype.name and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    if got.numel() and "reshape" not in case:  # (a reshape is a view, as numpy's)
        got[...] = 0  # a tensor of its own: the operands stay as they were
        np.testing.assert_array_equal(ja.numpy(), a)
        np.testing.assert_array_equal(jb.numpy(), b)


def test_a_signature_no_kernel_takes_settles_on_the_direct_call():
    """Complex powers have no kernel: once the kernel is tried and refused, the signature's
    later calls take the numpy tier's direct call, which computes numpy's ``z ** 2``
    (numpy's square, not its general power: they differ where a square overflows)."""
    from jitgrad import tiers
    from jitgrad.ops import elementwise

    z = np.full(1 << 16, 1 + 2j)
    z[:2] = [1e200 + 1e200j, np.inf + 1j]
    with np.errstate(all="ignore"):
        want = z**2
    tz = jg.asarray(z)
    signature = (elementwise.Power, tz._storage.dtype, tz._shape, tz._strides, int)
    for _ in range(jg.config.compile_after_calls + 1):
        np.testing.assert_array_equal((tz**2).numpy(), want)
    assert tiers.calls[signature].direct is not None
    np.testing.assert_array_equal((tz**2).numpy(), want)


SPECIAL_FLOATS = [0.0, -0.0, 1.5, -2.0, 1e308, 5e-324, np.inf, -np.inf, np.nan]
PYTHON_FLOAT_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@pytest.mark.parametrize("symbol", PYTHON_FLOAT_OPS)
def test_zero_d_float64_calls_equal_numpy_bit_for_bit(symbol):
    """0-d float64 tensors and Python numbers compute on Python floats: the result's bits
    (the sign of zero, inf, nan) and dtype are numpy's, a division by zero included, and
    Python ints convert as numpy converts them."""
    op = PYTHON_FLOAT_OPS[symbol]
    values = np.array(SPECIAL_FLOATS)
    tensors = jg.asarray(values)
    views = jg.asarray(values.reshape(3, 3))  # 0-d views at an offset: x[i, j, ...]
    constants = [2.5, -0.0, 3, 2**53 + 1, True]
    for _ in range(2):  # the second pass runs the remembered calls
        for i, a in enumerate(values):
            pairs = []
            with np.errstate(all="ignore"):
                for j, b in enumerate(values):
                    pairs.append((op(values[i], b), op(tensors[i], views[j // 3, j % 3, ...])))
                for c in constants:
                    pairs.append((op(values[i], c), op(tensors[i], c)))
                    pairs.append((op(c, values[i]), op(c, tensors[i])))
            for want, got in pairs:
                assert got.dtype.numpy == np.asarray(want).dtype
                assert np.asarray(want).tobytes() == got.numpy().tobytes(), (a, symbol)
    with pytest.raises(OverflowError, match="too large"):
        op(tensors[2], 10**400)


@pytest.mark.parametrize("name", ["add", "multiply", "power", "exp", "maximum", "where"])
def test_a_formula_of_one_numpy_call_weighs_one(name):
    from jitgrad.ops.elementwise import numpy_calls
    from jitgrad.ops.primitives import PRIMITIVES

    assert numpy_calls(PRIMITIVES[name].op_class) == 1


def test_small_integer_powers_called_again_compile_nothing(monkeypatch):
    """``(xx - 16) ** 2`` on a 24x32 grid is one numpy call of 768 elements: the numpy
    tier's work however often it is called."""
    from jitgrad.jit import cache

    monkeypatch.setattr(cache.stats, "kernels", {})
    grid = jg.asarray(np.arange(768).reshape(24, 32))
    for _ in range(jg.config.compile_after_calls + 1):
        np.testing.assert_array_equal(
            ((grid - 16) ** 2).numpy(), (np.arange(768) - 16).reshape(24, 32) ** 2
        )
    assert not cache.stats.kernels


QUIET_UNARY = ["negative", "positive", "abs", "floor", "ceil", "trunc", "isnan", "isfinite"]
QUIET_UNARY += ["isinf", "signbit", "logical_not", "invert"]


@pytest.mark.parametrize("name", QUIET_UNARY)
def test_ops_that_raise_no_floating_point_error_leave_numpys_error_state_alone(name):
    """Their direct calls skip setting numpy's error state: under the user's
    ``errstate(all="raise")`` they still raise nothing, on any value, and equal numpy."""
    values = {
        "float32": np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1e-45, 3e38]),
        "float64": np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 5e-324, 1e308]),
        "int64": np.array([np.iinfo(np.int64).min, -1, 0, 7]),
        "int8": np.array([-128, 127, 0]),
    }
    for dtype, v in values.items():
        a = v.astype(dtype)
        try:
            want = getattr(np, name)(a)
        except TypeError:  # (invert of floats: numpy refuses them, as jitgrad does)
            continue
        t = jg.asarray(a)
        for _ in range(3):  # the second and later calls run the remembered direct call
            with np.errstate(all="raise"):
                got = getattr(jg, name)(t)
            np.testing.assert_array_equal(got.numpy(), want)
    with np.errstate(all="raise"):  # (ops that may raise one still silence it)
        for _ in range(3):
            assert jg.sign(jg.asarray([np.inf, -np.inf])).tolist() == [1.0, -1.0]
