"""numpy's other spellings of its scalar types, and its questions about types.

C-named aliases (``intp``, ``intc``, ``single``, ``byte``, ...) are the jitgrad dtypes they
denote on this platform (``np.dtype(np.intc)``), so they call and compare as jitgrad's
dtypes do: ``jg.intc(3)`` is a 0-d int32 tensor. Types of data a tensor cannot hold
(``object_``, ``str_``, ``bytes_``, ``void``, dates) and the type tables are numpy's own.

>>> import jitgrad as jg
>>> jg.intp, jg.intc, jg.single, jg.ubyte
(jitgrad.int64, jitgrad.int32, jitgrad.float32, jitgrad.uint8)
>>> jg.array([1.5], dtype=jg.single).dtype
jitgrad.float32
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .tensor import TensorBase

_ALIASES = (
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
)
(
    int_,
    intp,
    intc,
    longlong,
    byte,
    uint,
    uintp,
    uintc,
    ulong,
    ulonglong,
    ubyte,
    ushort,
    single,
    csingle,
) = (dtypes.as_dtype(getattr(np, name)) for name in _ALIASES)

# numpy's own: the booleans, the non-numeric scalar types, and the type tables.
True_, False_ = np.True_, np.False_
object_, str_, bytes_, void = np.object_, np.str_, np.bytes_, np.void
character, flexible = np.character, np.flexible
datetime64, timedelta64 = np.datetime64, np.timedelta64
ScalarType, typecodes, typename = np.ScalarType, np.typecodes, np.typename
little_endian = np.little_endian


def _numpy_dtype_of(x) -> np.dtype:
    if isinstance(x, (TensorBase, dtypes.DType)):
        return x.dtype if isinstance(x, dtypes.DType) else x.dtype.numpy
    return np.asarray(x).dtype


def _as_jitgrad(np_dtype: np.dtype):
    """The jitgrad dtype of ``np_dtype``; numpy's own dtype where jitgrad has none."""
    try:
        return dtypes.from_numpy_dtype(np.dtype(np_dtype))
    except TypeError:
        return np.dtype(np_dtype)


def common_type(*arrays):
    """The inexact dtype all ``arrays`` convert to (integers count as float64), numpy's
    ``common_type``.

    >>> import jitgrad as jg
    >>> jg.common_type(jg.arange(3), jg.ones(2, dtype=jg.float32))
    jitgrad.float64
    >>> jg.common_type(jg.ones(2, dtype=jg.float16))
    jitgrad.float16
    """
    probes = [np.empty(0, _numpy_dtype_of(a)) for a in arrays]
    return _as_jitgrad(np.common_type(*probes))


def min_scalar_type(a):
    """The smallest dtype holding the value ``a`` (the dtype itself for arrays of more
    than 0 dimensions), numpy's ``min_scalar_type``. Where jitgrad has no such dtype
    (``longdouble``), numpy's dtype.

    >>> import jitgrad as jg
    >>> jg.min_scalar_type(10), jg.min_scalar_type(-1.5), jg.min_scalar_type(jg.zeros(2))
    (jitgrad.uint8, jitgrad.float16, jitgrad.float64)
    """
    value = TensorBase.numpy(a) if isinstance(a, TensorBase) else a
    return _as_jitgrad(np.min_scalar_type(value))


def mintypecode(typechars, typeset: str = "GDFgdf", default: str = "d") -> str:
    """The character of the smallest type in ``typeset`` that the types ``typechars``
    (characters, dtypes or arrays) safely cast to, numpy's ``mintypecode``.

    >>> import jitgrad as jg
    >>> jg.mintypecode(["d", "f", "S"]), jg.mintypecode([jg.float32, jg.complex64])
    ('d', 'F')
    """
    chars = [t if isinstance(t, str) else _numpy_dtype_of(t).char for t in typechars]
    return np.mintypecode(chars, typeset, default)


__all__ = [
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
    "True_",
    "False_",
    "object_",
    "str_",
    "bytes_",
    "void",
    "character",
    "flexible",
    "datetime64",
    "timedelta64",
    "ScalarType",
    "typecodes",
    "typename",
    "little_endian",
    "common_type",
    "min_scalar_type",
    "mintypecode",
]
