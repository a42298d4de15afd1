"""rint, fix, gcd, lcm and bitwise_count against numpy: values, dtypes, ufunc keywords."""

import numpy as np
import pytest
from numpy_oracle import assert_matches_numpy

import jitgrad as jg
from jitgrad.autograd import gradcheck
from jitgrad.ops.ufunc import UFUNCS

X = np.array([-12, 0, 7, 18, -5], dtype=np.int64)
Y = np.array([18, 5, 0, 12, -15], dtype=np.int64)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize(
    "dtypes", [("int64", "int64"), ("int8", "int32"), ("uint8", "uint8"), ("float64", "int64")]
)
def test_gcd_lcm_match_numpy(name, dtypes):
    a, b = ((abs(v) if d == "uint8" else v).astype(d) for v, d in zip((X, Y), dtypes))
    ours, theirs = getattr(jg, name), getattr(np, name)
    assert_matches_numpy(ours, theirs, a, b)
    assert_matches_numpy(lambda t: ours(t, 4), lambda t: theirs(t, 4), a)
    assert_matches_numpy(lambda t: ours(True, t), lambda t: theirs(True, t), a)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool", "float64"])
def test_bitwise_count_matches_numpy(dtype):
    a = np.array([0, 7, -8, 127, -1, 255]).astype(dtype)
    assert_matches_numpy(jg.bitwise_count, np.bitwise_count, a)


def test_integer_ufuncs_take_keywords_and_methods():
    for name in ("gcd", "lcm", "bitwise_count", "rint"):
        assert name in UFUNCS and getattr(jg, name).nin == getattr(np, name).nin
    out = jg.zeros(5, dtype=jg.int64)
    assert jg.gcd(jg.tensor(X), jg.tensor(Y), out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.gcd(X, Y))
    mask = np.array([True, False, True, False, True])
    got = jg.lcm(jg.tensor(X), 3, where=jg.tensor(mask))
    np.testing.assert_array_equal(got.numpy()[mask], np.lcm(X, 3)[mask])
    got = jg.gcd(jg.tensor(X), jg.tensor(Y), dtype=jg.int32)
    assert got.dtype == np.gcd(X, Y, dtype=np.int32).dtype
    assert jg.gcd.reduce(jg.tensor([12, 18, 30])).item() == 6
    np.testing.assert_array_equal(
        jg.lcm.outer(jg.tensor([2, 3]), jg.tensor([4, 5])).numpy(), np.lcm.outer([2, 3], [4, 5])
    )


@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "int8",
        "uint8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
    ],
)
def test_rint_matches_numpy(dtype):
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.7, 0.0]).astype(dtype)
    assert_matches_numpy(jg.rint, np.rint, a)
    assert_matches_numpy(
        lambda t: jg.rint(t, dtype=jg.float64), lambda t: np.rint(t, dtype=np.float64), a
    )


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64", "bool"])
def test_fix_matches_numpy(dtype):
    a = np.array([-2.5, -1.0, -0.5, 0.5, 1.0, 2.7]).astype(dtype)
    assert_matches_numpy(jg.fix, np.fix, a)
    if dtype == "float64":
        out = jg.zeros(6)
        assert jg.fix(jg.tensor(a), out=out) is out
        np.testing.assert_array_equal(out.numpy(), np.fix(a))
        assert jg.around is jg.round


def test_rint_and_fix_are_piecewise_constant():
    x = jg.tensor([0.2, 1.7, -2.4], requires_grad=True)
    (jg.rint(x) * 3 + jg.fix(x) + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
    assert gradcheck(lambda x: jg.rint(x) + x * x, x)
