"""The dtype table and NEP 50 promotion, checked against numpy 2."""

import itertools

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES, as_dtype, result_type

TABLE = [
    ("bool", "Bool", 1, "b"),
    ("uint8", "Byte", 1, "u"),
    ("uint16", "UInt16", 2, "u"),
    ("uint32", "UInt32", 4, "u"),
    ("uint64", "UInt64", 8, "u"),
    ("int8", "Char", 1, "i"),
    ("int16", "Short", 2, "i"),
    ("int32", "Int", 4, "i"),
    ("int64", "Long", 8, "i"),
    ("float16", "Half", 2, "f"),
    ("float32", "Float", 4, "f"),
    ("float64", "Double", 8, "f"),
    ("complex64", "ComplexFloat", 8, "c"),
    ("complex128", "ComplexDouble", 16, "c"),
]


@pytest.mark.parametrize("name, storage, itemsize, kind", TABLE)
def test_table_rows(name, storage, itemsize, kind):
    d = as_dtype(name)
    assert (d.name, d.storage_name, d.itemsize, d.kind) == (name, storage, itemsize, kind)
    assert d.numpy == np.dtype(name)
    assert as_dtype(np.dtype(name)) is d and as_dtype(getattr(np, name)) is d
    assert getattr(jg, f"{storage}Storage").dtype is d
    assert repr(d) == f"jitgrad.{name}"


def test_python_types_and_aliases():
    assert as_dtype(bool) is jg.bool and as_dtype(int) is jg.int64
    assert as_dtype(float) is jg.float64 and as_dtype(complex) is jg.complex128
    assert (jg.half, jg.double, jg.long, jg.short) == (jg.float16, jg.float64, jg.int64, jg.int16)
    with pytest.raises(TypeError, match="longdouble|float128"):
        as_dtype(np.longdouble)
    with pytest.raises(TypeError, match="cannot interpret"):
        as_dtype(object())


@pytest.mark.parametrize("a, b", list(itertools.product(ALL_DTYPES, repeat=2)))
def test_promotion_matches_numpy_with_weak_scalars(a, b):
    assert jg.promote_types(a, b).numpy == np.promote_types(a.numpy, b.numpy)
    for scalar in (True, 3, 2.5, 1j):
        assert result_type(a, b, scalar).numpy == np.result_type(a.numpy, b.numpy, scalar)


def test_weak_scalars_follow_the_default_dtype():
    assert result_type(1, 2.0) is jg.float64 and result_type(True) is jg.bool
    jg.set_default_dtype(jg.float32)
    try:
        assert result_type(jg.int32, 1.0) is jg.float32
        assert result_type(jg.int32, 1j) is jg.complex64
        assert result_type(jg.float64, 1.0) is jg.float64
    finally:
        jg.set_default_dtype(jg.float64)
    with pytest.raises(TypeError, match="at least one"):
        result_type()


def test_dtypes_are_singletons_across_copies_and_pickles():
    import copy
    import pickle

    for d in jg.dtypes.ALL_DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.deepcopy(d) is d
    assert jg.float32 != jg.float64 and len({jg.float32, jg.float32, jg.float64}) == 2


# -- numpy's spellings of a dtype ------------------------------------------------------------


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_dtypes_equal_numpy_spellings_both_ways(d):
    spellings = (d.numpy, d.numpy.type, d.name, d.numpy.str, d.numpy.char)
    for spelling in spellings:
        assert d == spelling and spelling == d and not (d != spelling)
    assert np.dtype(d) == d.numpy and jg.dtype(d.numpy) is d and jg.dtype(d.name) is d
    others = [o for o in ALL_DTYPES if o is not d]
    for o in others:
        assert d != o and d != o.numpy and d != o.numpy.type and d != o.name
    assert d != None and d != "no such dtype" and d != 3  # noqa: E711
    assert str(d) == d.name == d.numpy.name and f"{d}" == d.name
    assert (d.kind, d.itemsize, d.char, d.type, d.str) == (
        d.numpy.kind,
        d.numpy.itemsize,
        d.numpy.char,
        d.numpy.type,
        d.numpy.str,
    )
    assert (d.byteorder, d.alignment, d.shape, d.names) == (
        d.numpy.byteorder,
        d.numpy.alignment,
        d.numpy.shape,
        d.numpy.names,
    )
    assert isinstance(d, jg.dtype) and issubclass(d.type, np.generic)


@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_dtype_arguments_cross_between_numpy_and_jitgrad(d):
    t = jg.zeros(2, dtype=d.numpy.type)
    assert t.dtype is d and jg.zeros(2, dtype=d.numpy).dtype is d
    assert np.zeros(2, dtype=t.dtype).dtype == d.numpy
    assert np.arange(3).astype(t.dtype).dtype == d.numpy
    assert t.astype(np.dtype(d.name)).dtype is d


def test_dtype_hash_is_identity_and_dicts_keyed_by_dtype_work():
    table = {d: d.name for d in ALL_DTYPES}
    assert all(table[jg.dtype(d.name)] == d.name for d in ALL_DTYPES)
    assert hash(jg.float32) == object.__hash__(jg.float32)
    assert len(set(ALL_DTYPES) | set(ALL_DTYPES)) == len(ALL_DTYPES)
    assert jg.float32 in (jg.float16, np.float32) and jg.float32 not in (jg.int8, "float64")


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        jg.float32.nope  # noqa: B018
    assert not hasattr(jg.float32, "__deepcopy__")


# -- scalar types --------------------------------------------------------------------------


SCALARS = [
    ("uint8", 10),
    ("uint32", 4000000000),
    ("uint64", 2**64 - 1),
    ("int8", -5),
    ("int64", "3"),
    ("float32", 1.5),
    ("float32", "1.5"),
    ("float16", 0.1),
    ("float64", True),
    ("complex64", 1 + 2j),
    ("bool", 3),
    ("int32", np.float64(7.9)),
]


@pytest.mark.parametrize("name, value", SCALARS)
def test_scalar_types_build_0d_tensors_like_numpy_scalars(name, value):
    d = getattr(jg, name if name != "bool" else "bool_")
    t = d(value)
    expected = getattr(np, name if name != "bool" else "bool_")(value)
    assert isinstance(t, jg.ndarray) and t.shape == () and t.dtype is d
    assert t.item() == expected.item()
    assert isinstance(t, d) and isinstance(expected, d)


def test_scalar_types_of_tensors_sequences_and_nothing():
    x = jg.tensor(2.5, requires_grad=True)
    y = jg.float32(x)
    assert y.dtype is jg.float32 and y.requires_grad
    (y * 2).backward()
    assert x.grad.item() == 2.0
    assert jg.float32([1, 2]).tolist() == [1.0, 2.0] and jg.float32([1, 2]).dtype is jg.float32
    assert jg.float64().item() == 0.0 and jg.bool_().item() is False
    assert jg.bool(2).item() is True


def test_scalar_type_overflow_is_numpys_error():
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        jg.uint8(300)
    with pytest.raises(OverflowError, match="out of bounds for uint64"):
        jg.uint64(-1)


def test_isinstance_with_a_scalar_type():
    assert isinstance(jg.float32(1), jg.float32) and not isinstance(jg.float32(1), jg.float64)
    assert isinstance(np.float32(1), jg.float32) and not isinstance(np.float64(1), jg.float32)
    assert not isinstance(jg.zeros(2, dtype=jg.float32), jg.float32)  # arrays are not scalars
    assert not isinstance(1.5, jg.float64) and not isinstance("float32", jg.float32)
    assert isinstance(jg.int8(1), (jg.float32, jg.int8))


# -- limits, casting and kinds -------------------------------------------------------------

FLOATS = [d for d in ALL_DTYPES if d.kind in "fc"]
INTEGERS = [d for d in ALL_DTYPES if d.kind in "iu"]


@pytest.mark.parametrize("d", FLOATS, ids=lambda d: d.name)
def test_finfo_matches_numpy(d):
    for spelling in (d, d.name, d.numpy, jg.zeros(1, dtype=d)):
        f, expected = jg.finfo(spelling), np.finfo(d.numpy)
        assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution) == (
            expected.bits,
            expected.eps,
            expected.max,
            expected.min,
            expected.tiny,
            expected.smallest_normal,
            expected.resolution,
        )
    real = {jg.complex64: jg.float32, jg.complex128: jg.float64}.get(d, d)
    assert jg.finfo(d).dtype == real and real == jg.finfo(d).dtype


@pytest.mark.parametrize("d", INTEGERS, ids=lambda d: d.name)
def test_iinfo_matches_numpy(d):
    for spelling in (d, d.name, d.numpy.type, jg.zeros(1, dtype=d)):
        i, expected = jg.iinfo(spelling), np.iinfo(d.numpy)
        assert (i.bits, i.min, i.max) == (expected.bits, expected.min, expected.max)
        assert i.dtype == d and d == i.dtype


def test_finfo_and_iinfo_refuse_the_other_kind():
    with pytest.raises(ValueError):
        jg.finfo(jg.int32)
    with pytest.raises(ValueError):
        jg.iinfo(jg.float32)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_can_cast_matches_numpy_over_all_pairs(casting):
    for a, b in itertools.product(ALL_DTYPES, repeat=2):
        expected = np.can_cast(a.numpy, b.numpy, casting)
        assert jg.can_cast(a, b, casting) is expected, (a, b)
        assert jg.can_cast(jg.zeros(1, dtype=a), b.numpy, casting) is expected
    with pytest.raises(TypeError, match="Python int"):
        jg.can_cast(3, jg.uint8)


KINDS = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
    ("bool", "real floating"),
    jg.int8,
    (jg.uint8, "bool"),
]


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_isdtype_matches_numpy(kind):
    np_kind = (
        tuple(k.numpy if isinstance(k, jg.dtype) else k for k in kind)
        if isinstance(kind, tuple)
        else (kind.numpy if isinstance(kind, jg.dtype) else kind)
    )
    for d in ALL_DTYPES:
        assert jg.isdtype(d, kind) is np.isdtype(d.numpy, np_kind), d


def test_issubdtype_over_numpys_abstract_types():
    for d in ALL_DTYPES:
        for abstract in (
            jg.floating,
            jg.integer,
            jg.signedinteger,
            jg.unsignedinteger,
            jg.complexfloating,
            jg.inexact,
            jg.number,
            jg.generic,
        ):
            assert jg.issubdtype(d, abstract) is np.issubdtype(d.numpy, abstract)
    assert jg.issubdtype(jg.zeros(1, dtype=jg.uint32).dtype, np.unsignedinteger)


def test_result_type_takes_numpy_inputs():
    cases = [
        (np.float32(1), "int64"),
        (np.zeros(2, np.int8), np.uint8),
        (np.dtype("u4"), 1.5),
        ("uint64", np.int64),
        (np.uint64(1), -1),
        (float, np.float32),
        (np.int16(1), 2**40),
    ]
    for operands in cases:
        assert jg.result_type(*operands) == np.result_type(*operands), operands
    assert jg.result_type(jg.zeros(2, dtype=jg.uint8), np.zeros(2, np.int8)) is jg.int16


# -- broadcasting and constants ------------------------------------------------------------


def test_broadcast_shapes_matches_numpy():
    for shapes in [((2, 1), (3,)), ((), (4, 1, 2)), (5, (1,)), ((0, 1), (1, 3))]:
        assert jg.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        jg.broadcast_shapes((2,), (3,))


def test_broadcast_arrays_are_differentiable_views():
    a = jg.arange(3.0, requires_grad=True)
    b = jg.ones((2, 1), requires_grad=True)
    x, y = jg.broadcast_arrays(a, b)
    expected = np.broadcast_arrays(np.arange(3.0), np.ones((2, 1)))
    assert isinstance(jg.broadcast_arrays(a), tuple)
    for got, want in zip((x, y), expected, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    assert x.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    (x * y).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0] and b.grad.tolist() == [[3.0], [3.0]]
    assert jg.broadcast_to(a, (2, 3)).stride() == (0, 1)


def test_numpy_constants_and_names():
    assert (jg.pi, jg.e, jg.euler_gamma, jg.inf) == (np.pi, np.e, np.euler_gamma, np.inf)
    assert np.isnan(jg.nan) and jg.newaxis is None
    t = jg.arange(3)
    assert isinstance(t, jg.ndarray) and t[jg.newaxis].shape == (1, 3)
