"""Typed storages (Torch7's ``FloatStorage`` & co.): a flat buffer of one dtype.

A typed storage is a dtype over an untyped storage. Views made with
``FloatStorage(other, offset, size)`` get an untyped storage that is a byte-range view of
``other``'s, so writes through either are seen by both.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from . import buffers
from .convert import half_flag
from .elements import ElementOps
from .untyped import UntypedStorage, _check_size, _sequence_to_array


class _KernelArray:
    """``Storage.kernel_array``: the array numba kernels take (float16 travels as its
    uint16 bits). A non-data descriptor, so that a small op result's own attribute of that
    name, its elements' array, is found first, without a call: every launch reads it for
    each operand."""

    def __get__(self, storage, owner=None) -> np.ndarray:
        if storage is None:
            return self
        # (without a ``kernel_array`` of its own, a storage holds its untyped storage)
        untyped = storage.__dict__["_untyped_"]
        pair = untyped._typed.get(storage._numpy)
        return (pair if pair is not None else untyped.typed_arrays(storage._numpy))[1]


class Storage(ElementOps):
    """Base of the typed storages; ``Storage(...)`` itself builds one of the default dtype.

    >>> x = DoubleStorage(10).fill_(0)
    >>> y = DoubleStorage(x, 2, 5).fill_(1)      # a view of x[2:7]
    >>> x.tolist()
    [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """

    dtype: dtypes.DType
    # Bumped by every write through a tensor (``_written``), so autograd can tell that a
    # tensor it saved for backward has changed since.
    _version: int = 0

    def __new__(cls, *args, **kwargs):
        if cls is Storage:
            cls = storage_class(dtypes.get_default_dtype())
        return super().__new__(cls)

    def __init__(self, arg=0, offset: int | None = None, size: int | None = None):
        np_dtype = self.dtype.numpy
        if isinstance(arg, Storage):
            self._untyped = _view_of(self, arg, offset, size)
            return
        if offset is not None or size is not None:
            raise TypeError("offset and size are only accepted with a storage to view")
        if isinstance(arg, UntypedStorage):
            raise TypeError(f"use {type(self).__name__}.from_untyped() to view untyped bytes")
        if isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)):
            self._untyped = UntypedStorage._pooled(_check_size(int(arg)) * np_dtype.itemsize)
        else:
            data = _sequence_to_array(arg, np_dtype)
            self._untyped = UntypedStorage._wrap(data, resizable=True)

    @classmethod
    def _uninitialised(cls, numel: int) -> Storage:
        """``numel`` uninitialised elements, without the constructor's checks: the
        allocation behind every op result."""
        self = object.__new__(cls)
        if cls._holds_small(numel):
            # Most results: numpy's allocator serves them, and the untyped storage is made
            # only when something asks for it (``_untyped``). (``_version`` is set too: an
            # instance's own attribute is read faster than the class's.)
            self.kernel_array, self._version = np.empty(numel, cls._numpy), 0
            return self
        self._untyped = untyped = UntypedStorage._pooled(numel * cls._itemsize)
        data = untyped._bytes.view(cls._numpy)
        # typed_arrays' work, done while it is cheap
        untyped._typed = {cls._numpy: (data, data.view(np.uint16) if cls._half else data)}
        return self

    @classmethod
    def _holding(cls, elements: np.ndarray) -> Storage:
        """A storage whose elements are ``elements``: a new flat array of this type that
        nothing else holds (numpy's result, in the numpy tier)."""
        self = object.__new__(cls)
        self.kernel_array, self._version = elements, 0
        return self

    @classmethod
    def _borrowing(cls, elements: np.ndarray) -> Storage:
        """A storage of ``elements``, a flat array of this type whose memory another array
        owns (``from_numpy``'s): held as a small result's are, its untyped storage made
        only when something asks for it, and never resizable."""
        self = object.__new__(cls)
        self.kernel_array, self._version, self._borrowed = elements, 0, True
        return self

    @classmethod
    def _holds_small(cls, numel: int) -> bool:
        """Whether ``_uninitialised(numel)`` makes a storage of only its elements' array."""
        return numel * cls._itemsize < buffers.SMALL_BYTES and not cls._half

    # A small op result holds only its elements' array, as its ``kernel_array`` (which
    # then shadows the class's descriptor: a launch reads it as a plain attribute), until
    # anything else needs its untyped storage: most results are read by the next ops and
    # dropped, and an untyped storage each (two more objects and two dicts) was a third of
    # the per-op allocation cost and of the garbage collector's work. The untyped storage
    # is a property, not ``__getattr__``: a class with ``__getattr__`` makes every read of
    # its instances' attributes slower, ``kernel_array`` and ``_version`` among them.
    @property
    def _untyped(self) -> UntypedStorage:
        attributes = self.__dict__
        untyped = attributes.get("_untyped_")
        if untyped is not None:
            return untyped
        elements = attributes["kernel_array"]
        untyped = object.__new__(UntypedStorage)
        untyped._bytes, untyped._resizable = elements, not attributes.pop("_borrowed", False)
        untyped._typed = {self._numpy: (elements, elements)}
        # setdefault: two threads materialising at once agree on one untyped storage; from
        # here on it alone says where the elements are (it may be resized)
        untyped = attributes.setdefault("_untyped_", untyped)
        attributes.pop("kernel_array", None)
        return untyped

    @_untyped.setter
    def _untyped(self, untyped: UntypedStorage) -> None:
        self.__dict__["_untyped_"] = untyped

    def __getstate__(self):
        # A pickled storage carries its untyped storage, so sharing survives, and its
        # partner (``_as_dtype``), so that writes stay counted together.
        state = dict(self.__dict__, _untyped=self._untyped)
        partner = state.pop("_partner", None)
        state["_partner"] = partner() if partner is not None else None
        for name in ("_untyped_", "kernel_array"):
            state.pop(name, None)
        return state

    def __setstate__(self, state) -> None:
        state = dict(state)
        self._untyped = state.pop("_untyped")
        partner = state.pop("_partner", None)
        if partner is not None:
            self._partner = weakref.ref(partner)
        self.__dict__.update(state)

    @classmethod
    def from_untyped(cls, untyped: UntypedStorage) -> Storage:
        """This type over ``untyped``'s bytes, sharing them."""
        if untyped.nbytes() % cls.dtype.itemsize:
            raise ValueError(
                f"{untyped.nbytes()} bytes are not a whole number of {cls.dtype.name} elements"
            )
        self = object.__new__(cls)
        self._untyped = untyped
        return self

    @classmethod
    def from_file(cls, filename, shared: bool = False, size: int | None = None) -> Storage:
        """Map ``filename`` as a storage of ``size`` elements.

        ``shared=True`` maps it MAP_SHARED: the file is created or extended as needed and
        writes reach it. ``shared=False`` maps a private copy-on-write view: the file must
        hold ``size`` elements and is never changed. ``size=None`` takes the whole file.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "hello.txt")
        >>> _ = open(path, "wb").write(b"Hello World\\n")
        >>> CharStorage.from_file(path, shared=False).fill_(42).string()
        '************'
        >>> open(path).read()
        'Hello World\\n'
        """
        itemsize = cls.dtype.itemsize
        nbytes = None if size is None else _check_size(size) * itemsize
        untyped = UntypedStorage.from_file(filename, shared=shared, nbytes=nbytes)
        if untyped.nbytes() % itemsize:
            untyped = untyped.view_bytes(0, untyped.nbytes() - untyped.nbytes() % itemsize)
        return cls.from_untyped(untyped)

    @classmethod
    def new_shared(cls, size: int, name: str | None = None) -> Storage:
        """A storage in a new named POSIX shared-memory segment (see ``shared_name``)."""
        nbytes = _check_size(size) * cls.dtype.itemsize
        segment = buffers.SharedSegment(name, nbytes, create=True)
        return cls.from_untyped(UntypedStorage._from_segment(segment))

    @classmethod
    def from_shared(cls, name: str, size: int | None = None) -> Storage:
        """Attach to the shared-memory segment ``name`` made by any process."""
        nbytes = None if size is None else _check_size(size) * cls.dtype.itemsize
        segment = buffers.SharedSegment(name, nbytes, create=False)
        segment.nbytes -= segment.nbytes % cls.dtype.itemsize
        return cls.from_untyped(UntypedStorage._from_segment(segment))

    def _written(self) -> None:
        """Count a write into these elements (``_version``); the storage that reads the
        same bytes as another dtype (``_as_dtype``) counts it too."""
        self._version += 1
        partner = self.__dict__.get("_partner")
        partner = partner() if partner is not None else None
        if partner is not None:
            partner._version += 1

    def _as_dtype(self, dtype) -> Storage:
        """A storage of ``dtype`` over these bytes (a complex tensor's real and imaginary
        parts are floats over its bytes). The two count their writes together: autograd
        then sees a write through either, as it would through one storage. One such
        storage per storage, weakly held both ways."""
        partner = self.__dict__.get("_partner")
        other = partner() if partner is not None else None
        if other is None or other.dtype is not dtypes.as_dtype(dtype):
            other = storage_class(dtype).from_untyped(self._untyped)
            self._partner, other._partner = weakref.ref(other), weakref.ref(self)
            other._version = self._version
        return other

    # -- the data ------------------------------------------------------------------------

    @property
    def array(self) -> np.ndarray:
        """The elements as a 1-D numpy array sharing this storage's memory."""
        attributes = self.__dict__
        elements = attributes.get("kernel_array")  # (a small op result's, see above)
        if elements is not None:
            return elements
        pair = attributes["_untyped_"]._typed.get(self._numpy)  # (typed_arrays' memo)
        return (pair if pair is not None else self._untyped.typed_arrays(self._numpy))[0]

    kernel_array = _KernelArray()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    @property
    def filename(self) -> str | None:
        return self._untyped.filename

    @property
    def shared_name(self) -> str | None:
        return self._untyped.shared_name

    def is_shared(self) -> bool:
        return self._untyped.is_shared()

    def share_memory_(self) -> Storage:
        self._untyped.share_memory_()
        return self

    def resize_(self, size: int) -> Storage:
        """Grow or shrink to ``size`` elements, keeping the prefix."""
        self._untyped.resize_(_check_size(size) * self.dtype.itemsize)
        return self

    def retain(self) -> Storage:
        self._untyped.retain()
        return self

    def free(self) -> None:
        self._untyped.free()

    def byteswap(self) -> Storage:
        """Reverse the byte order of every element in place."""
        self._check_writable()
        self._untyped.byteswap(self.dtype)
        return self

    def _new_like(self, size: int) -> Storage:
        return type(self)(size)

    def _type_name(self) -> str:
        return type(self).__name__

    # -- casts ---------------------------------------------------------------------------

    def type(self, dtype) -> Storage:
        """This storage as ``dtype``: itself if already of that type, else a cast copy."""
        cls = storage_class(dtypes.as_dtype(dtype))
        if isinstance(self, cls):
            return self
        return cls(self.size()).copy_(self)

    def bool(self):
        return self.type(dtypes.bool_)

    def byte(self):
        return self.type(dtypes.uint8)

    def char(self):
        return self.type(dtypes.int8)

    def short(self):
        return self.type(dtypes.int16)

    def int(self):
        return self.type(dtypes.int32)

    def long(self):
        return self.type(dtypes.int64)

    def half(self):
        return self.type(dtypes.float16)

    def float(self):
        return self.type(dtypes.float32)

    def double(self):
        return self.type(dtypes.float64)

    def complex_float(self):
        return self.type(dtypes.complex64)

    def complex_double(self):
        return self.type(dtypes.complex128)


class _ByteText:
    """``string()`` for Byte and Char storages: one character per byte (latin-1), so any
    content round-trips, as Lua strings do in Torch7."""

    def string(self, text: str | bytes | None = None):
        if text is None:
            return self.array.view(np.uint8).tobytes().decode("latin-1")
        if isinstance(text, str):
            try:
                text = text.encode("latin-1")
            except UnicodeEncodeError:
                raise ValueError(
                    "string() stores one byte per character; encode text with characters "
                    "beyond U+00FF to bytes first"
                ) from None
        if not isinstance(text, (bytes, bytearray)):
            raise TypeError(f"string() expects str or bytes, got {type(text).__name__}")
        self._check_writable()
        if len(text) != self.size():
            self.resize_(len(text))
        self.array.view(np.uint8)[:] = np.frombuffer(text, dtype=np.uint8)
        return self


def _view_of(cls_self: Storage, other: Storage, offset, size) -> UntypedStorage:
    if type(other) is not type(cls_self):
        raise TypeError(
            f"a {type(cls_self).__name__} can only view a storage of the same type, "
            f"got {type(other).__name__}"
        )
    n = other.size()
    offset = 0 if offset is None else _check_size(offset, "offset")
    size = n - offset if size is None else _check_size(size)
    if offset + size > n:
        raise ValueError(
            f"view [offset={offset}, size={size}] is out of bounds for a storage of size {n}"
        )
    itemsize = other.dtype.itemsize
    return other.untyped().view_bytes(offset * itemsize, (offset + size) * itemsize)


def _make_storage_class(d: dtypes.DType) -> type[Storage]:
    bases = (Storage, _ByteText) if d.storage_name in ("Byte", "Char") else (Storage,)
    name = f"{d.storage_name}Storage"
    doc = f"A flat buffer of {d.name} elements."
    half = d is dtypes.float16
    # ``half_flag``: how copy kernels are told that ``kernel_array`` holds float16 bits.
    namespace = {
        "dtype": d,
        "__doc__": doc,
        "_numpy": d.numpy,
        "_itemsize": d.itemsize,
        "_half": half,
        "half_flag": half_flag(half),
    }
    cls = type(name, bases, namespace)
    cls.__module__ = "jitgrad"
    return cls


_STORAGE_CLASSES = {d: _make_storage_class(d) for d in dtypes.ALL_DTYPES}


def storage_class(dtype) -> type[Storage]:
    """The typed storage class of ``dtype`` (``storage_class('float32') is FloatStorage``)."""
    return _STORAGE_CLASSES[dtypes.as_dtype(dtype)]


BoolStorage = storage_class(dtypes.bool_)
ByteStorage = storage_class(dtypes.uint8)
UInt16Storage = storage_class(dtypes.uint16)
UInt32Storage = storage_class(dtypes.uint32)
UInt64Storage = storage_class(dtypes.uint64)
CharStorage = storage_class(dtypes.int8)
ShortStorage = storage_class(dtypes.int16)
IntStorage = storage_class(dtypes.int32)
LongStorage = storage_class(dtypes.int64)
HalfStorage = storage_class(dtypes.float16)
FloatStorage = storage_class(dtypes.float32)
DoubleStorage = storage_class(dtypes.float64)
ComplexFloatStorage = storage_class(dtypes.complex64)
ComplexDoubleStorage = storage_class(dtypes.complex128)
