"""jitgrad.storage.convert must reproduce numpy's float16 casts bit for bit."""

import itertools

import numpy as np
import pytest
from numba import njit

from jitgrad.storage.convert import (
    cast,
    float_to_half,
    half_flag,
    half_to_double,
    half_to_float,
    store_half,
)

ALL_HALF_BITS = np.arange(1 << 16).astype(np.uint16)

DTYPES = [
    np.bool_,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


@njit
def _map(fn, src):
    out = np.empty(src.size, np.uint16)
    for i in range(src.size):
        out[i] = fn(src[i])
    return out


@njit
def _map_to(fn, src, out):
    for i in range(src.size):
        out[i] = fn(src[i])


@njit
def _cast_all(dst, src, dst_half, src_half):
    for i in range(src.size):
        cast(dst, i, src[i], dst_half, src_half)


def _bits(a):
    """Unsigned view so that NaN payloads and -0.0 take part in comparisons."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    return a.view(f"u{a.itemsize}") if a.dtype.kind == "f" else a


def _assert_bits_equal(got, expected, inputs):
    got = _bits(got).reshape(len(inputs), -1)
    expected = _bits(expected).reshape(len(inputs), -1)
    bad = np.flatnonzero((got != expected).any(axis=1))[:5]
    assert bad.size == 0, f"inputs {inputs[bad]!r}: got {got[bad]!r}, numpy {expected[bad]!r}"


def _check_float_to_half(x):
    """float_to_half(x) == numpy's cast from x's own dtype, for float32 and float64 x."""
    with np.errstate(over="ignore", invalid="ignore"):
        expected = x.astype(np.float16).view(np.uint16)
    _assert_bits_equal(_map(float_to_half, x), expected, x)


def _with_negatives(x):
    return np.concatenate([x, -x])


def test_half_to_float_all_patterns():
    out = np.empty(ALL_HALF_BITS.size, np.float32)
    _map_to(half_to_float, ALL_HALF_BITS, out)
    expected = ALL_HALF_BITS.view(np.float16).astype(np.float32)
    _assert_bits_equal(out, expected, ALL_HALF_BITS)


def test_half_to_double_all_patterns():
    out = np.empty(ALL_HALF_BITS.size, np.float64)
    _map_to(half_to_double, ALL_HALF_BITS, out)
    expected = ALL_HALF_BITS.view(np.float16).astype(np.float64)
    _assert_bits_equal(out, expected, ALL_HALF_BITS)


def test_float_to_half_float32_sweep():
    # Exponents 2**-27 .. 2**18 cover underflow to zero, subnormals, normals
    # and overflow; a prime stride visits every residue of the dropped bits.
    first, last = np.uint32(100 << 23), np.uint32(146 << 23)
    x = _with_negatives(np.arange(first, last, 61, dtype=np.uint32).view(np.float32))
    _check_float_to_half(x)
    _check_float_to_half(x.astype(np.float64))


def test_float_to_half_halfway_points():
    # Rounding boundaries between consecutive finite halves, plus the one
    # between 65504 and the would-be next value 65536 that decides overflow.
    values = ALL_HALF_BITS[:0x7C01].view(np.float16).astype(np.float64)
    values[-1] = 65536.0
    mids = _with_negatives((values[:-1] + values[1:]) / 2)
    for dtype in (np.float32, np.float64):
        m = mids.astype(dtype)
        assert np.array_equal(m, mids)
        _check_float_to_half(
            np.concatenate([m, np.nextafter(m, dtype(np.inf)), np.nextafter(m, dtype(-np.inf))])
        )


def test_float_to_half_random_float64_bits():
    rng = np.random.default_rng(0)
    anything = rng.integers(0, 1 << 64, size=1 << 20, dtype=np.uint64, endpoint=False)
    exponents = rng.integers(1023 - 27, 1023 + 18, size=1 << 20, dtype=np.uint64)
    near_half_range = (anything & np.uint64(0x800F_FFFF_FFFF_FFFF)) | (exponents << np.uint64(52))
    _check_float_to_half(np.concatenate([anything, near_half_range]).view(np.float64))


def test_float_to_half_boundaries():
    edges = np.array(
        [
            0.0,
            65504.0,
            65519.0,
            65520.0,
            65536.0,
            1e300,
            np.inf,
            2.0**-14,
            2.0**-24,
            2.0**-25,
            1.5 * 2.0**-25,
            3 * 2.0**-25,
            2.0**-26,
            2.0**-14 - 2.0**-25,
            2.0**-14 - 2.0**-26,
            5e-324,
            2.2250738585072014e-308,
        ]
    )
    x = _with_negatives(
        np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    )
    _check_float_to_half(x)
    with np.errstate(over="ignore"):
        _check_float_to_half(x.astype(np.float32))


def test_float_to_half_nan_payloads():
    # Quiet and signalling NaNs, payloads in the kept top bits and only in
    # the dropped low bits (which numpy turns into payload 1 to stay NaN).
    f64 = np.array(
        [
            0x7FF8_0000_0000_0000,
            0x7FF0_0000_0000_0001,
            0x7FF0_03FF_FFFF_FFFF,
            0x7FF0_0400_0000_0000,
            0x7FF5_5540_0000_0000,
            0x7FFF_FFFF_FFFF_FFFF,
            0x7FF8_0000_0000_0001,
            0x7FF2_AAAA_AAAA_AAAA,
        ],
        dtype=np.uint64,
    )
    f32 = np.array(
        [
            0x7FC0_0000,
            0x7F80_0001,
            0x7F80_1FFF,
            0x7F80_2000,
            0x7FA0_0000,
            0x7FFF_FFFF,
            0x7FD5_5555,
        ],
        dtype=np.uint32,
    )
    _check_float_to_half((f64 | np.uint64(1 << 63)).view(np.float64))
    _check_float_to_half(f64.view(np.float64))
    _check_float_to_half((f32 | np.uint32(1 << 31)).view(np.float32))
    _check_float_to_half(f32.view(np.float32))


_REALS = np.array(
    [
        0.0,
        -0.0,
        0.5,
        1.0,
        -1.0,
        1.5,
        2.5,
        -2.5,
        127.5,
        128.0,
        -129.0,
        255.9,
        256.0,
        300.7,
        -300.7,
        2049.0,
        65504.0,
        65519.99,
        65520.0,
        1e5,
        2.0**31 - 0.5,
        2.0**31,
        -(2.0**31) - 1,
        2.0**62,
        -(2.0**63),
        1e19,
        1e30,
        3.5e38,
        1e300,
        2.0**-24,
        2.0**-25,
        1e-8,
        1e-40,
        1e-310,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
    ]
)
_INTS = np.array(
    [
        0,
        1,
        -1,
        2,
        127,
        128,
        -128,
        -129,
        255,
        256,
        2047,
        2049,
        32767,
        -32768,
        65504,
        65519,
        65520,
        65535,
        2**31 - 1,
        -(2**31),
        2**53 + 1,
        2**63 - 1,
        -(2**63),
    ]
)


def _store_inputs(dtype):
    if dtype is np.float16:
        return ALL_HALF_BITS.view(np.float16)
    if dtype is np.bool_:
        return np.array([False, True])
    if np.issubdtype(dtype, np.integer):
        return _INTS.astype(dtype)
    with np.errstate(over="ignore"):
        if np.issubdtype(dtype, np.complexfloating):
            # Assigned part by part: real + 1j * imag would turn 1j * inf into nan + inf*j.
            zeros = np.zeros_like(_REALS)
            values = np.empty(4 * _REALS.size, dtype)
            values.real = np.concatenate([_REALS, zeros, _REALS, _REALS])
            values.imag = np.concatenate([zeros, _REALS, _REALS, _REALS[::-1]])
            return values
        return _REALS.astype(dtype)


def _defined_in(src, dst_dtype):
    """Which src values have a defined cast to dst_dtype.

    A float -> int cast of NaN, inf or an out-of-range value is undefined in C
    (numpy warns and returns whatever the CPU gives) and poison in LLVM, where
    the result even depends on whether the loop was vectorized.
    """
    if not np.issubdtype(dst_dtype, np.integer) or src.dtype.kind not in "fc":
        return np.ones(src.size, bool)
    info = np.iinfo(dst_dtype)
    with np.errstate(invalid="ignore"):
        truncated = np.trunc(src.real.astype(np.float64))
        return np.isfinite(truncated) & (truncated >= info.min) & (truncated <= info.max)


def _kernel_view(a):
    return a.view(np.uint16) if a.dtype == np.float16 else a


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize(
    "src_dtype, dst_dtype",
    list(itertools.product(DTYPES, DTYPES)),
    ids=lambda dtype: np.dtype(dtype).name,
)
def test_store_matches_astype(src_dtype, dst_dtype):
    src = _store_inputs(src_dtype)
    src = src[_defined_in(src, dst_dtype)]
    dst = np.zeros(src.size, dst_dtype)
    flags = half_flag(dst.dtype == np.float16), half_flag(src.dtype == np.float16)
    _cast_all(_kernel_view(dst), _kernel_view(src), *flags)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = src.astype(dst_dtype)
    _assert_bits_equal(dst, expected, src)


@njit
def _store_constants(half_grid):
    store_half(half_grid, (0, 1), 1)
    store_half(half_grid, (1, 0), 0.1)
    store_half(half_grid, (1, 1), True)


def test_store_literal_into_2d_half():
    grid = np.zeros((2, 2), np.float16)
    _store_constants(grid.view(np.uint16))
    np.testing.assert_array_equal(grid, np.array([[0, 1], [0.1, 1]], np.float16))


def test_uint16_numbers_are_not_half_bits():
    """The same 16 bits cast as float16's or as uint16's numbers: numpy's two values."""
    bits = np.array([0x3C00, 0x7BFF, 65535], np.uint16)
    as_half = np.zeros(3, np.float32)
    as_number = np.zeros(3, np.float32)
    _cast_all(as_half, bits, *map(half_flag, (False, True)))
    _cast_all(as_number, bits, *map(half_flag, (False, False)))
    np.testing.assert_array_equal(as_half, bits.view(np.float16).astype(np.float32))
    np.testing.assert_array_equal(as_number, bits.astype(np.float32))
