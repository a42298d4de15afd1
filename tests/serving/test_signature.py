"""Signature.check at the edges of the dtypes: values a cast would wrap or overflow are
refused, and integers too wide for int64 are read as floats where the input is a float."""

import numpy as np
import pytest

from jitgrad.serving.signature import Signature, SignatureError


def signature(dtype: str) -> Signature:
    return Signature.from_manifest(
        {
            "inputs": {"x": {"dtype": dtype, "shape": [-1, 1]}},
            "outputs": {"y": {"dtype": dtype, "shape": [-1]}},
        }
    )


@pytest.mark.parametrize(
    "dtype, value, message",
    [
        ("float16", -(2**63), "magnitude 9223372036854775808 overflows dtype float16"),
        ("float16", 2**63 - 1, "magnitude 9223372036854775807 overflows dtype float16"),
        ("float16", 2**64 - 1, "overflows dtype float16"),
        ("float16", 10**30, "overflows dtype float16"),
        ("float32", -(10**39), "overflows dtype float32"),
        ("float64", 10**400, "a value of about 10\\*\\*400 overflows dtype float64"),
        (
            "int64",
            10**30,
            "values from 1000000000000000000000000000000 to "
            "1000000000000000000000000000000 do not fit dtype int64",
        ),
        ("int32", -(2**63), "do not fit dtype int32"),
        ("bool", 10**30, "expected dtype bool"),
    ],
)
def test_values_out_of_the_dtypes_range_are_refused(dtype, value, message):
    with pytest.raises(SignatureError, match=message):
        signature(dtype).check({"x": [[value]]})


@pytest.mark.parametrize(
    "dtype, values",
    [
        ("float16", [-(2**15), 2**15]),
        ("float32", [-(2**63), 2**63 - 1]),
        ("float64", [-(2**63), 2**64 - 1]),
        ("complex64", [-(2**63), 2**63 - 1]),
    ],
)
def test_integers_that_fit_a_float_input_are_accepted(dtype, values):
    got = signature(dtype).check({"x": [[v] for v in values]})["x"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got[:, 0], np.array([float(v) for v in values], dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_integers_beyond_int64_are_floats_for_a_float_input(dtype):
    got = signature(dtype).check({"x": [[10**30], [2**70], [-(2**64)]]})["x"]
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, np.array([[1e30], [2.0**70], [-(2.0**64)]], dtype))


@pytest.mark.parametrize("value", [None, "1", True])
def test_wide_integers_mixed_with_non_numbers_are_not_numbers(value):
    with pytest.raises(SignatureError, match="rectangular array of numbers"):
        signature("float32").check({"x": [[10**30], [value]]})
