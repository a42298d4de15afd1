"""numpy's C-named scalar types as jitgrad dtypes, and numpy's questions about types."""

import numpy as np
import pytest

import jitgrad as jg

ALIASES = [
    "int_",
    "intp",
    "intc",
    "longlong",
    "byte",
    "uint",
    "uintp",
    "uintc",
    "ulong",
    "ulonglong",
    "ubyte",
    "ushort",
    "single",
    "csingle",
]


@pytest.mark.parametrize("name", ALIASES)
def test_alias_is_the_dtype_numpy_means(name):
    alias, numpy_type = getattr(jg, name), getattr(np, name)
    assert isinstance(alias, jg.dtype)
    assert alias == numpy_type and alias.numpy == np.dtype(numpy_type)
    value = alias(3)
    assert isinstance(value, jg.Tensor) and value.ndim == 0 and value.dtype is alias
    assert jg.zeros(2, dtype=alias).numpy().dtype == np.dtype(numpy_type)
    assert isinstance(value, alias) and isinstance(numpy_type(3), alias)


def test_numpy_own_types_and_tables():
    assert jg.True_ is np.True_ and jg.False_ is np.False_
    assert jg.str_ is np.str_ and jg.object_ is np.object_ and jg.bytes_ is np.bytes_
    words = jg.array(["a", "bc"], dtype=jg.str_)
    assert isinstance(words, np.ndarray) and words.dtype.kind == "U"
    assert jg.ScalarType == np.ScalarType and jg.typecodes == np.typecodes
    assert jg.typename("d") == np.typename("d") and jg.little_endian == np.little_endian
    assert jg.issubdtype(jg.datetime64, jg.generic)


@pytest.mark.parametrize(
    "dtypes",
    [
        ("int64",),
        ("int8", "float32"),
        ("float16",),
        ("float32", "complex64"),
        ("float32",),
        ("bool",),
    ],
)
def test_common_type_matches_numpy(dtypes):
    arrays = [np.zeros(2, d) for d in dtypes]
    try:
        want = np.common_type(*arrays)
    except TypeError:
        with pytest.raises(TypeError):
            jg.common_type(*map(jg.from_numpy, arrays))
        return
    got = jg.common_type(*map(jg.from_numpy, arrays))
    assert isinstance(got, jg.dtype) and got == want


@pytest.mark.parametrize("value", [10, -10, 70000, 1.5, 1e50, 1 + 1j, True, np.zeros(2, np.int8)])
def test_min_scalar_type_matches_numpy(value):
    got = jg.min_scalar_type(jg.tensor(value) if isinstance(value, np.ndarray) else value)
    assert isinstance(got, jg.dtype) and got == np.min_scalar_type(value)
    assert jg.min_scalar_type(jg.tensor(70000)) == np.min_scalar_type(np.array(70000))


def test_min_scalar_type_beyond_jitgrad_dtypes_is_numpy_dtype():
    got = jg.min_scalar_type(np.longdouble("1e4000"))
    assert isinstance(got, np.dtype) and got == np.min_scalar_type(np.longdouble("1e4000"))
    assert jg.min_scalar_type(1000) is jg.uint16


@pytest.mark.parametrize("chars", [["d", "f"], ["f", "F"], ["i"], ["S", "f"], "fD"])
def test_mintypecode_matches_numpy(chars):
    assert jg.mintypecode(chars) == np.mintypecode(chars)
    assert jg.mintypecode(chars, "fd", "f") == np.mintypecode(chars, "fd", "f")
    assert jg.mintypecode([jg.float32, jg.zeros(1, dtype=jg.complex128)]) == "D"
