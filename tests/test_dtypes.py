"""The dtype table and NEP 50 promotion, checked against numpy 2."""

import itertools

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES, as_dtype, result_type

TABLE = [
    ("bool", "Bool", 1, "b"), ("uint8", "Byte", 1, "u"), ("int8", "Char", 1, "i"),
    ("int16", "Short", 2, "i"), ("int32", "Int", 4, "i"), ("int64", "Long", 8, "i"),
    ("float16", "Half", 2, "f"), ("float32", "Float", 4, "f"), ("float64", "Double", 8, "f"),
    ("complex64", "ComplexFloat", 8, "c"), ("complex128", "ComplexDouble", 16, "c"),
]  # fmt: skip


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
    with pytest.raises(TypeError, match="uint16"):
        as_dtype("uint16")
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
