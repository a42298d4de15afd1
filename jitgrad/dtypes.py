"""The dtype table: jitgrad dtype <-> numpy dtype <-> storage class name <-> promotion.

Promotion follows numpy 2 (NEP 50): tensors and dtypes are *strong*, Python scalars are
*weak* and only decide the kind (bool < int < float < complex) of the result, never its
precision. A float or complex Python scalar meeting only integer operands takes the
default dtype, as in PyTorch; with the default (float64) this is exactly numpy's rule.

A jitgrad dtype stands where numpy's dtypes and scalar types stand:

- it compares equal to every numpy spelling of itself (``jg.float32 == np.float32 ==
  np.dtype("f4") == "float32"``) and numpy reads it (``np.dtype(jg.float32)``,
  ``np.zeros(2, dtype=t.dtype)``) through its ``dtype`` attribute;
- it is also the scalar type: ``jg.float32(1.5)`` is a 0-d float32 *tensor*, not a numpy
  scalar, so that it stays in jitgrad (strong under NEP 50 like numpy's scalars, with
  autograd and every tensor method), and ``isinstance(x, jg.float32)`` holds for 0-d
  float32 tensors and numpy float32 scalars;
- ``finfo``/``iinfo`` return numpy's own objects, whose ``dtype`` compares equal to the
  jitgrad dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._config import config


class _DTypeMeta(type):
    """``DType(spec)`` (``jitgrad.dtype(spec)``) looks ``spec`` up in the table, as
    ``np.dtype(spec)`` does: the table's rows are the only instances."""

    def __call__(cls, spec) -> DType:
        return as_dtype(spec)


# One instance per dtype (the table below): two jitgrad dtypes are equal only when they are
# the same object, and hashing one is hashing an object (every eager dispatch key holds
# some). Equality with numpy's spellings (np.float32, np.dtype("f4"), "float32") goes
# through numpy, off the hot path: jitgrad's own code compares dtypes with ``is``.
@dataclass(frozen=True, eq=False)
class DType(metaclass=_DTypeMeta):
    name: str
    numpy: np.dtype = field(repr=False)
    storage_name: str = field(repr=False)
    kind: str = field(repr=False)  # numpy's kind letter: b, u, i, f, c

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize

    @property
    def dtype(self) -> np.dtype:
        """numpy's dtype: what ``np.dtype(jg.float32)`` and ``dtype=jg.float32`` read."""
        return self.numpy

    @property
    def char(self) -> str:
        return self.numpy.char

    @property
    def str(self) -> str:  # noqa: A003  numpy's attribute name
        return self.numpy.str

    @property
    def type(self) -> type:  # noqa: A003  numpy's attribute name
        """numpy's scalar type (``np.float32``), for ``issubclass(d.type, np.floating)``."""
        return self.numpy.type

    @property
    def is_floating_point(self) -> bool:
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_integer(self) -> bool:
        return self.kind in "ui"

    @property
    def is_signed(self) -> bool:
        return self.kind in "ifc"

    def __getattr__(self, attr: str):
        # The rest of numpy's dtype attributes (byteorder, alignment, shape, fields...).
        if attr in _NUMPY_ATTRIBUTES:
            return getattr(self.numpy, attr)
        raise AttributeError(f"'jitgrad.dtype' object has no attribute {attr!r}")

    def __eq__(self, other) -> bool:
        if other is self:
            return True
        if type(other) is DType or other is None:
            return False
        try:
            return self.numpy == np.dtype(other)
        except (TypeError, ValueError):
            return False

    # Identity, at C speed; ``a == b`` implies ``hash(a) == hash(b)`` among jitgrad dtypes
    # (numpy's own np.float32 and np.dtype("f4") also compare equal with unequal hashes).
    __hash__ = object.__hash__

    def __call__(self, value=0):
        """``jg.float32(1.5)``: a 0-d tensor of this dtype (a tensor of it for sequences
        and tensors), as ``np.float32(1.5)`` makes a numpy scalar."""
        return _construct(self, value)

    def __instancecheck__(self, obj) -> bool:
        """``isinstance(x, jg.float32)``: a 0-d tensor of this dtype, or numpy's scalar."""
        if isinstance(obj, np.generic):
            return obj.dtype == self.numpy
        return getattr(obj, "ndim", None) == 0 and getattr(obj, "dtype", None) is self

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"jitgrad.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


_NUMPY_ATTRIBUTES = frozenset(
    (
        "alignment",
        "base",
        "byteorder",
        "descr",
        "fields",
        "flags",
        "hasobject",
        "isalignedstruct",
        "isbuiltin",
        "isnative",
        "metadata",
        "names",
        "ndim",
        "num",
        "shape",
        "subdtype",
    )
)


def _construct(d: DType, value):
    from .creation import array  # creation builds on this layer
    from .tensor import TensorBase

    if isinstance(value, TensorBase):
        return value.astype(d)
    if isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        # numpy's scalar constructor: its parsing of strings and its overflow errors.
        return array(d.numpy.type(value), dtype=d)
    return array(value, dtype=d)


def _row(name: str, storage_name: str) -> DType:
    np_dtype = np.dtype(name)
    row = object.__new__(DType)
    row.__init__(name, np_dtype, storage_name, np_dtype.kind)
    return row


bool_ = _row("bool", "Bool")
uint8 = _row("uint8", "Byte")
uint16 = _row("uint16", "UInt16")
uint32 = _row("uint32", "UInt32")
uint64 = _row("uint64", "UInt64")
int8 = _row("int8", "Char")
int16 = _row("int16", "Short")
int32 = _row("int32", "Int")
int64 = _row("int64", "Long")
float16 = _row("float16", "Half")
float32 = _row("float32", "Float")
float64 = _row("float64", "Double")
complex64 = _row("complex64", "ComplexFloat")
complex128 = _row("complex128", "ComplexDouble")

ALL_DTYPES: tuple[DType, ...] = (
    bool_,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
)

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES}
_PY_TYPES = {bool: bool_, int: int64}

# Weak Python scalars are ranked by kind only.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def as_dtype(spec) -> DType:
    """Turn any dtype spelling into a jitgrad dtype.

    >>> as_dtype("float32"), as_dtype(np.int8), as_dtype(float)
    (jitgrad.float32, jitgrad.int8, jitgrad.float64)
    """
    if isinstance(spec, DType):
        return spec
    if spec is float:
        return get_default_dtype()
    if spec is complex:
        return default_complex_dtype()
    if isinstance(spec, type) and spec in _PY_TYPES:
        return _PY_TYPES[spec]
    if isinstance(spec, str) and spec in _BY_NAME:
        return _BY_NAME[spec]
    try:
        np_dtype = np.dtype(spec)
    except TypeError:
        raise TypeError(f"cannot interpret {spec!r} as a jitgrad dtype") from None
    return from_numpy_dtype(np_dtype)


def from_numpy_dtype(np_dtype: np.dtype) -> DType:
    """The jitgrad dtype of a numpy dtype; non-native byte order and dtypes jitgrad does not
    have are errors, never silent conversions."""
    if not np_dtype.isnative:
        raise ValueError(
            f"numpy dtype {np_dtype.str!r} has non-native byte order; "
            "convert with a.astype(a.dtype.newbyteorder('=')) first"
        )
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        supported = ", ".join(d.name for d in ALL_DTYPES)
        raise TypeError(
            f"numpy dtype {np_dtype} is not supported by jitgrad (supported: {supported})"
        ) from None


def get_default_dtype() -> DType:
    """The dtype of tensors built from Python floats (float64 unless changed)."""
    return _BY_NAME[config.default_dtype]


def set_default_dtype(dtype) -> None:
    """Set the floating dtype used for Python floats, creation functions and ``Storage``.

    >>> set_default_dtype("float32"); get_default_dtype()
    jitgrad.float32
    >>> set_default_dtype("float64")
    """
    d = as_dtype(dtype)
    if not d.is_floating_point:
        raise TypeError(f"the default dtype must be a floating dtype, got {d.name}")
    config.default_dtype = d.name


def default_complex_dtype() -> DType:
    return complex128 if get_default_dtype() is float64 else complex64


def promote_types(a, b) -> DType:
    """The smallest dtype both ``a`` and ``b`` cast to safely (numpy's table).

    >>> promote_types(uint64, "int64"), promote_types(np.uint8, int8)
    (jitgrad.float64, jitgrad.int16)
    """
    return from_numpy_dtype(np.promote_types(as_dtype(a).numpy, as_dtype(b).numpy))


def _scalar_kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    raise TypeError(f"expected a Python scalar, got {type(value).__name__}")


def scalar_dtype(value) -> DType:
    """The dtype a lone Python scalar gets (bool, int64, or the default float/complex)."""
    return {
        "b": bool_,
        "i": int64,
        "f": get_default_dtype(),
        "c": default_complex_dtype(),
    }[_scalar_kind(value)]


def result_type(*operands) -> DType:
    """The dtype of an operation over ``operands`` (dtypes in any spelling, tensors, numpy
    arrays and scalars, which are strong, or Python scalars, which are weak), by NEP 50.

    >>> result_type(int8, 1.0), result_type(float32, 2), result_type(float32, 1j)
    (jitgrad.float64, jitgrad.float32, jitgrad.complex64)
    """
    strong: DType | None = None
    weak = []
    for op in operands:
        if _is_python_scalar(op):
            weak.append(op)
            continue
        d = dtype_of(op)
        strong = d if strong is None else promote_types(strong, d)
    if strong is None:
        if not weak:
            raise TypeError("result_type() needs at least one operand")
        return scalar_dtype(max(weak, key=lambda w: _KIND_RANK[_scalar_kind(w)]))
    for w in weak:
        kind = _scalar_kind(w)
        if _KIND_RANK[kind] <= _KIND_RANK[strong.kind]:
            continue
        if kind == "c" and strong.is_floating_point:
            strong = complex128 if strong is float64 else complex64
        else:
            strong = scalar_dtype(w)
    return strong


def _is_python_scalar(value) -> bool:
    # (numpy's float64 and bool subclass Python's: they are strong, numpy's scalars)
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def dtype_of(x) -> DType:
    """The jitgrad dtype of a dtype in any spelling, a tensor, a numpy array or scalar, or a
    Python scalar (alone: bool, int64 or the default float/complex dtype).

    >>> dtype_of(np.float32(1)), dtype_of(np.zeros(2, np.uint8)), dtype_of(2)
    (jitgrad.float32, jitgrad.uint8, jitgrad.int64)
    """
    if isinstance(x, DType):
        return x
    if _is_python_scalar(x):
        return scalar_dtype(x)
    if not isinstance(x, (type, str, np.dtype)) and hasattr(x, "dtype"):
        x = x.dtype
    return as_dtype(x)


def finfo(x, /) -> np.finfo:
    """numpy's machine limits of a floating or complex dtype (given in any spelling, or as
    a tensor or array): ``bits, eps, max, min, tiny, smallest_normal, resolution, dtype``.
    The object is numpy's own; its ``dtype`` compares equal to the jitgrad dtype.

    >>> f = finfo(float32); f.bits, float(f.eps) == 2.0**-23, f.dtype == float32
    (32, True, True)
    """
    return np.finfo(dtype_of(x).numpy)


def iinfo(x, /) -> np.iinfo:
    """numpy's machine limits of an integer dtype (any spelling, a tensor or an array):
    ``bits, min, max, dtype``, in numpy's own object.

    >>> iinfo(uint8).max, iinfo("int16").min, iinfo(uint64).bits
    (255, -32768, 64)
    """
    return np.iinfo(dtype_of(x).numpy)


def can_cast(from_, /, to, casting: str = "safe") -> bool:
    """Whether ``from_`` (a dtype, tensor or array) casts to ``to`` under ``casting`` (no,
    equiv, safe, same_kind, unsafe), as ``np.can_cast``. Python scalars are refused as by
    numpy 2: the answer would depend on the value.

    >>> can_cast(int8, float32), can_cast(int64, float32), can_cast(uint64, "int64")
    (True, False, False)
    """
    if _is_python_scalar(from_):
        return np.can_cast(from_, as_dtype(to).numpy, casting)  # numpy's TypeError
    return bool(np.can_cast(dtype_of(from_).numpy, as_dtype(to).numpy, casting))


def isdtype(dtype, kind) -> bool:
    """The Array API's dtype test: ``kind`` is a dtype, one of 'bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric', or a
    tuple of these.

    >>> isdtype(uint32, "unsigned integer"), isdtype(float16, ("integral", "complex floating"))
    (True, False)
    """
    kinds = kind if isinstance(kind, tuple) else (kind,)
    kinds = tuple(k if isinstance(k, str) else as_dtype(k).numpy for k in kinds)
    return bool(np.isdtype(as_dtype(dtype).numpy, kinds))


# numpy's abstract scalar types, for ``issubdtype(t.dtype, jg.floating)``.
generic, number = np.generic, np.number
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating


def issubdtype(arg1, arg2) -> bool:
    """``np.issubdtype`` over jitgrad dtypes too: is ``arg1`` (a dtype) below ``arg2`` (a
    dtype or an abstract type such as ``floating``) in numpy's type hierarchy?

    >>> issubdtype(float32, floating), issubdtype(uint8, signedinteger)
    (True, False)
    """
    return bool(np.issubdtype(_numpy_spelling(arg1), _numpy_spelling(arg2)))


def _numpy_spelling(spec):
    return spec if isinstance(spec, type) and issubclass(spec, np.generic) else dtype_of(spec).numpy
