"""Values of every dtype against numpy 2: creation, wrap-around arithmetic, promotion over
all pairs, sums, casts, save/load, zero-copy interop, and 0-d tensors used as numbers."""

import itertools
import math
import operator
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES

UNSIGNED = [jg.uint8, jg.uint16, jg.uint32, jg.uint64]
# Large enough for the kernel path, small enough to keep the suite quick.
N = 6000


def assert_same(got, expected):
    got = got.numpy() if isinstance(got, jg.ndarray) else np.asarray(got)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def values_of(d, n=N):
    """Values that reach both ends of d's range, repeated to ``n`` elements."""
    if d.kind in "ui":
        info = np.iinfo(d.numpy)
        base = [0, 1, 2, 7, info.max, info.max - 1, info.min, info.min + 1, info.max // 3]
    elif d.kind == "b":
        base = [True, False, True]
    else:
        base = [0.0, 1.5, -2.25, 7.0, 100.0, -0.0, 3.0]
    return np.resize(np.array(base, dtype=d.numpy), n)


@pytest.mark.parametrize("d", ALL_DTYPES, ids=str)
def test_creation_matches_numpy(d):
    assert_same(jg.zeros(3, dtype=d), np.zeros(3, dtype=d.numpy))
    assert_same(jg.ones((2, 2), dtype=d.name), np.ones((2, 2), dtype=d.name))
    assert_same(jg.full(2, 1, dtype=d.numpy.type), np.full(2, 1, dtype=d.numpy.type))
    assert_same(jg.arange(5, dtype=d), np.arange(5, dtype=d.numpy)) if d.kind in "uif" else None
    assert_same(jg.array(values_of(d, 9).tolist(), dtype=d), values_of(d, 9))


@pytest.mark.parametrize("n", [N, 9], ids=["kernels", "small"])
@pytest.mark.parametrize("d", UNSIGNED, ids=str)
def test_unsigned_arithmetic_wraps_around_as_numpy(d, n):
    a = values_of(d, n)
    b = np.roll(a, 1)
    x, y = jg.asarray(a), jg.asarray(b)
    with np.errstate(all="ignore"):
        for op in (
            operator.add,
            operator.sub,
            operator.mul,
            operator.and_,
            operator.or_,
            operator.xor,
        ):
            assert_same(op(x, y), op(a, b))
        for scalar in (1, 255, 3):
            assert_same(x + scalar, a + scalar)
            assert_same(x - scalar, a - scalar)
            assert_same(x * scalar, a * scalar)
        assert_same(-x, -a)
        assert_same(~x, ~a)
        assert_same(x // 7, a // 7)
        assert_same(x % 7, a % 7)
        assert_same(x << 3, a << 3)
        assert_same(x >> 1, a >> 1)
        assert_same(x & 0xFF, a & 0xFF)
        assert_same(x | 1, a | 1)
        assert_same(x ^ 5, a ^ 5)
        assert_same(x.max(), a.max())
        assert_same(x.min(), a.min())
        assert_same(x < 5, a < 5)
        assert_same(x == y, a == b)
        assert_same(x / 2, a / 2)


@pytest.mark.parametrize("d", UNSIGNED, ids=str)
def test_unsigned_with_out_of_range_python_ints_follows_numpy(d):
    x = jg.zeros(3, dtype=d)
    with pytest.raises(OverflowError, match=f"out of bounds for {d.name}"):
        x + (-1)
    assert_same(x == -1, np.zeros(3, d.numpy) == -1)


def test_uint64_meets_int64_in_float64():
    a = np.array([2**64 - 1, 5], np.uint64)
    b = np.array([-1, 3], np.int64)
    assert_same(jg.asarray(a) + jg.asarray(b), a + b)
    assert_same(jg.asarray(a) >> jg.asarray(np.array([1, 2], np.uint64)), a >> np.uint64([1, 2]))


@pytest.fixture
def reference_backend():
    """The numpy evaluator: the result dtypes are decided as with kernels, without
    compiling one kernel per pair."""
    jg.config.backend = "reference"
    yield
    jg.config.backend = "jit"


def test_binary_promotion_over_all_pairs_matches_numpy(reference_backend):
    tensors = {d: jg.ones(2, dtype=d) for d in ALL_DTYPES}
    for a, b in itertools.product(ALL_DTYPES, repeat=2):
        expected = np.result_type(a.numpy, b.numpy)
        assert (tensors[a] * tensors[b]).dtype == expected, (a, b)
        assert jg.result_type(a, b) == expected
        assert_same(tensors[a] * tensors[b], np.ones(2, a.numpy) * np.ones(2, b.numpy))


@pytest.mark.parametrize("d", ALL_DTYPES, ids=str)
def test_sums_accumulate_in_numpys_dtype(d):
    a = values_of(d, 64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected_sum, expected_prod = a.sum(), a[:5].prod()
        expected_cumsum = a.cumsum()
    x = jg.asarray(a)
    got = x.sum()
    assert got.dtype == expected_sum.dtype
    if d.kind == "f":
        np.testing.assert_allclose(got.numpy(), expected_sum, rtol=1e-3)
    else:
        assert_same(got, expected_sum)
        assert_same(x[:5].prod(), expected_prod)
        assert_same(x.cumsum(), expected_cumsum)


@pytest.mark.parametrize("src", UNSIGNED + [jg.float16, jg.float32, jg.float64, jg.int64], ids=str)
def test_casts_to_and_from_unsigned_match_numpy(src):
    a = values_of(src, 64)
    if src.kind == "f":
        with np.errstate(over="ignore"):  # (float16 has no 4e9: inf, as intended)
            a = np.concatenate([a, [-300.0, 4e9, 1e19]]).astype(src.numpy)
    x = jg.asarray(a)
    for dst in ALL_DTYPES:
        if src.kind == "f" and dst.kind in "ui":
            # Out of the destination's range a float -> int cast is undefined in C (numpy
            # gives what the CPU gives): compare inside the range of int64 only.
            w = a.astype(np.float64)  # (the bounds below overflow float16)
            info = np.iinfo(dst.numpy)
            inside = (
                (w >= -(2.0**63))
                & (w < 2.0**63)
                & ((w >= 0) | (info.bits == 64) | (w > -(2.0**info.bits)))
            )
            inside &= (w < 2.0**info.bits) | (info.bits < 64)
            if info.bits < 32:  # numpy's C cast of these goes through a 32-bit int
                inside &= np.abs(w) < 2.0**31
        else:
            inside = np.ones(a.shape, bool)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = a.astype(dst.numpy)
            got = x.astype(dst).numpy()
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got[inside], expected[inside], err_msg=f"{src}->{dst}")


@pytest.mark.parametrize("d", UNSIGNED, ids=str)
def test_unsigned_indexing_matches_numpy(d):
    a = values_of(d, 12).reshape(3, 4)
    x = jg.asarray(a)
    assert_same(x[1], a[1])
    assert_same(x[:, ::2], a[:, ::2])
    assert_same(x[x > 5], a[a > 5])
    index = np.array([2, 0], np.uint64)
    assert_same(x[jg.asarray(index)], a[index])
    x[0, 0] = 9
    a[0, 0] = 9
    assert_same(x, a)


def test_save_load_roundtrip_of_every_dtype(tmp_path):
    tensors = {d.name: jg.asarray(values_of(d, 10)) for d in ALL_DTYPES}
    path = tmp_path / "all.jg"
    jg.save(tensors, path)
    loaded = jg.load(path)
    for name, t in tensors.items():
        assert loaded[name].dtype is t.dtype
        assert_same(loaded[name], t.numpy())


@pytest.mark.parametrize("d", ALL_DTYPES, ids=str)
def test_numpy_interop_is_zero_copy_both_ways(d):
    a = values_of(d, 8)
    t = jg.from_numpy(a)
    assert t.dtype is d and np.shares_memory(t.numpy(), a) and np.shares_memory(np.asarray(t), a)
    assert np.asarray(t).dtype == d.numpy
    storage = jg.storage.storage_class(d)(4)
    assert storage.dtype is d and type(storage).__name__ == f"{d.storage_name}Storage"


def test_unsigned_storages_are_named_as_pytorch_would():
    assert jg.UInt32Storage.dtype is jg.uint32 and jg.UInt64Storage.dtype is jg.uint64
    assert jg.UInt16Storage.dtype is jg.uint16
    assert jg.UInt16Storage([65535, 3]).tolist() == [65535, 3]
    s = jg.UInt64Storage([2**64 - 1, 1])
    assert s.tolist() == [2**64 - 1, 1]


# -- float16 travels to kernels as uint16 bits: the two must never be confused -------------


@pytest.mark.parametrize("n", [N, 9], ids=["kernels", "small"])
def test_float16_and_uint16_with_the_same_bits_keep_their_own_values(n):
    bits = np.resize(np.array([0x3C00, 0xC100, 0x7BFF, 0x0001, 7, 65535, 0x7C00], np.uint16), n)
    halves = bits.view(np.float16)
    u, h = jg.asarray(bits), jg.asarray(halves)
    f = jg.asarray(np.linspace(-2, 2, n, dtype=np.float32))
    f_np = f.numpy()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # one kernel shape (16-bit array times float32 into float32), two dtypes
        assert_same(u * f, bits * f_np)
        assert_same(h * f, halves * f_np)
        assert_same(u + u, bits + bits)
        assert_same(h + h, halves + halves)
        assert_same(u + h, bits + halves)
        assert_same(h - u, halves - bits)
        for dst in (jg.float16, jg.uint16, jg.float32, jg.float64, jg.int32, jg.uint8):
            for src, a in ((u, bits), (h, halves)):
                got, expected = src.astype(dst).numpy(), a.astype(dst.numpy)
                if dst.kind in "ui" and a.dtype.kind == "f":
                    inside = np.isfinite(a) & (a >= 0) & (a < 2.0**dst.numpy.itemsize)
                    got, expected = got[inside], expected[inside]
                np.testing.assert_array_equal(got, expected, err_msg=f"{a.dtype}->{dst}")
        # strided copies (transposes) and copies between storages cast as values too
        assert_same(u.reshape(-1, 1).T.astype(jg.float16), bits.reshape(-1, 1).T.astype(np.float16))
        storage = jg.HalfStorage(n).copy_(jg.UInt16Storage(bits.tolist()))
        np.testing.assert_array_equal(storage.array, bits.astype(np.float16))
        back = jg.UInt16Storage(n).copy_(jg.HalfStorage(halves.tolist()))
        inside = np.isfinite(halves) & (halves >= 0)
        np.testing.assert_array_equal(back.array[inside], halves.astype(np.uint16)[inside])
        assert_same(u.sum(), bits.sum())
        assert_same(jg.where(u > 7, u, h), np.where(bits > 7, bits, halves))


def test_fused_kernels_keep_float16_and_uint16_apart():
    bits = (np.arange(N) * 7919 % 65536).astype(np.uint16)
    halves = bits.view(np.float16)
    f = np.linspace(-1, 1, N, dtype=np.float32)

    @jg.jit
    def step(u, h, f):
        return (u + u) * 3, u * f - h, h + h

    with np.errstate(all="ignore"):
        expected = ((bits + bits) * np.uint16(3), bits * f - halves, halves + halves)
        for _ in range(2):  # a trace, then a replay of its fused kernels
            for got, e in zip(step(jg.asarray(bits), jg.asarray(halves), jg.asarray(f)), expected):
                assert_same(got, e)


def test_iinfo_of_uint16():
    assert np.iinfo(jg.uint16).max == 65535 and jg.iinfo(jg.uint16).bits == 16
    assert jg.iinfo(jg.zeros(1, dtype=jg.uint16)).min == 0


# -- 0-d tensors behave like the numbers they hold -----------------------------------------


def test_0d_tensors_convert_like_numpy_scalars():
    t = jg.tensor(2.567)
    assert float(t) == 2.567 and int(t) == 2 and bool(t) and complex(t) == 2.567
    assert math.sqrt(jg.tensor(4.0)) == 2.0 and t.item() == 2.567
    assert f"{t:.3f}" == "2.567" and format(t, "e") == format(2.567, "e")
    assert f"{jg.tensor(5):5d}" == "    5" and f"{jg.uint64(2**64 - 1):d}" == str(2**64 - 1)
    assert [10, 20, 30][jg.tensor(1)] == 20 and operator.index(jg.uint8(3)) == 3
    if jg.tensor(3) > 2:
        pass
    else:
        pytest.fail("a 0-d comparison should be usable in an if")


@pytest.mark.parametrize(
    "value, ndigits", [(2.567, 2), (2.5, None), (3.5, None), (2567, -2), (25, None), (-1.25, 1)]
)
def test_round_like_numpy_scalars(value, ndigits):
    for d in ("float64", "float32", "int64"):
        if isinstance(value, float) and d == "int64":
            continue
        expected = round(np.dtype(d).type(value), ndigits)
        got = round(jg.tensor(value, dtype=d), ndigits)
        if ndigits is None:
            assert type(got) is int and got == expected
        else:
            assert_same(got, np.asarray(expected))


def test_round_refuses_arrays_and_complex():
    with pytest.raises(TypeError, match="0-d real"):
        round(jg.ones(2))
    with pytest.raises(TypeError, match="0-d real"):
        round(jg.tensor(1 + 2j))


def test_index_only_from_integers_as_numpy():
    for t in (jg.tensor(True), jg.tensor(3.0)):
        with pytest.raises(TypeError, match="only integer scalar arrays"):
            operator.index(t)


def test_truth_value_of_many_elements_is_numpys_error():
    with pytest.raises(ValueError, match=r"more than one element is ambiguous. Use a.any\(\)"):
        bool(jg.ones(3))
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(jg.ones(0))
    assert bool(jg.ones(1)) and not bool(jg.zeros((1, 1)))
