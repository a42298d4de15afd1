"""UntypedStorage: the bytes under every storage and tensor.

An untyped storage owns heap bytes, maps a file or a shared-memory segment, wraps a numpy
array's memory, or is a view of a byte range of another untyped storage. Typed storages
read the same bytes through numpy views cached here, so a resize is seen by all of them.
"""

from __future__ import annotations

import copy
import os
import threading
import weakref

import numpy as np

from .. import dtypes
from .._config import config
from . import buffers, kernels
from .elements import ElementOps

_HALF = np.dtype(np.float16)
_BYTE = np.dtype(np.uint8)


class UntypedStorage(ElementOps):
    """A flat buffer of bytes, PyTorch's ``torch.UntypedStorage``.

    >>> s = UntypedStorage(4).fill_(7)
    >>> s.tolist(), s.nbytes()
    ([7, 7, 7, 7], 4)
    """

    dtype = dtypes.uint8

    def __init__(self, arg=0):
        if isinstance(arg, UntypedStorage):
            raise TypeError("use UntypedStorage.clone() to copy a storage")
        if isinstance(arg, (int, np.integer)) and not isinstance(arg, (bool, np.bool_)):
            self._init_pooled(_check_size(int(arg), "nbytes"))
        else:
            self._init(_sequence_to_array(arg, np.dtype(np.uint8)), resizable=True)

    # Defaults of the rarely changed state, kept on the class: every op result wraps a
    # storage, so its construction sets only what differs.
    _owner = None
    _base: UntypedStorage | None = None
    _resizable = False
    # Set once tensors are built over this storage by hand or a tensor's storage is handed
    # out (tensor.py): shrinking it then would leave tensors reaching past its end, which
    # kernels, trusting a tensor's layout, would read.
    _under_tensors = False
    _views: weakref.WeakSet[UntypedStorage] | None = None  # created on first view_bytes
    _refcount = 1
    filename: str | None = None
    _path: str | None = None  # a shared file map's absolute path, for pickling
    _shared = False
    _finalizer = None
    # Reference counting, resizing and moving to shared memory are rare and brief: one
    # lock serves every storage.
    _lock = threading.Lock()

    def _init(
        self,
        data: np.ndarray,
        *,
        owner=None,
        base=None,
        resizable=False,
        filename=None,
        shared=False,
    ) -> None:
        self._bytes: np.ndarray | None = data
        self._typed: dict[np.dtype, tuple[np.ndarray, np.ndarray]] = {}
        if resizable:
            self._resizable = True
        if base is not None:
            self._base = base
        if filename is not None:
            self.filename = filename
        if shared:
            self._shared = True
        if owner is not None:
            self._owner = owner
            self._finalizer = weakref.finalize(self, buffers.close_owner, owner)

    @classmethod
    def _pooled(cls, nbytes: int) -> UntypedStorage:
        self = cls.__new__(cls)
        self._init_pooled(nbytes)
        return self

    def _own(self, data: np.ndarray) -> None:
        self._bytes, self._typed, self._resizable = data, {}, True

    def _init_pooled(self, nbytes: int) -> None:
        """Owned, uninitialised bytes; large ones come from and return to the pool."""
        data, raw = buffers.pool.allocate(nbytes)
        self._own(data)
        if raw is not None:
            weakref.finalize(self, buffers.pool.recycle, raw)

    @classmethod
    def _wrap(cls, data: np.ndarray, **how) -> UntypedStorage:
        self = cls.__new__(cls)
        self._init(data, **how)
        return self

    # -- where the bytes come from -------------------------------------------------------

    @classmethod
    def from_file(cls, filename, shared: bool = False, nbytes: int | None = None):
        """Map ``filename`` (see ``Storage.from_file``); sizes are in bytes here."""
        if nbytes is not None:
            _check_size(nbytes, "nbytes")
        data, mapping = buffers.map_file(filename, nbytes, shared)
        self = cls._wrap(data, owner=mapping, filename=str(filename), shared=shared)
        if shared:
            self._path = os.path.abspath(filename)
        return self

    @classmethod
    def _from_segment(cls, segment: buffers.SharedSegment) -> UntypedStorage:
        return cls._wrap(segment.array(), owner=segment, shared=True)

    def view_bytes(self, start: int, stop: int) -> UntypedStorage:
        """An untyped storage sharing bytes ``[start, stop)`` of this one."""
        if not 0 <= start <= stop <= self.nbytes():
            raise ValueError(
                f"byte range [{start}, {stop}) is outside a storage of {self.nbytes()} bytes"
            )
        view = UntypedStorage._wrap(self._data()[start:stop], base=self)
        view._shared = self._shared
        view.filename = self.filename
        if self._views is None:
            self._views = weakref.WeakSet()
        self._views.add(view)
        return view

    @property
    def shared_name(self) -> str | None:
        """The name another process attaches with, for shared-memory storages."""
        owner = self._root()._owner
        return owner.name if isinstance(owner, buffers.SharedSegment) else None

    def is_shared(self) -> bool:
        """True for shared-memory storages and files mapped with ``shared=True``."""
        return self._shared

    def share_memory_(self) -> UntypedStorage:
        """Move the bytes into a new POSIX shared-memory segment (no-op if already shared)."""
        if self._shared:
            return self
        if self._base is not None or not (self._resizable or self.filename):
            raise RuntimeError(
                "share_memory_() can only move a storage that owns its bytes; this one is "
                "a view or wraps memory owned elsewhere (e.g. a numpy array)"
            )
        if self._views:
            raise RuntimeError("cannot move a storage while storage views of it exist")
        with self._lock:
            old = self._data()
            segment = buffers.SharedSegment(None, old.size, create=True)
            fresh = segment.array()
            fresh[:] = old
            old_owner = self._owner
            self._set_bytes(fresh)
            self._owner, self._shared, self._resizable, self.filename = segment, True, False, None
            if self._finalizer is not None:
                self._finalizer.detach()
            self._finalizer = weakref.finalize(self, buffers.close_owner, segment)
            buffers.close_owner(old_owner)
        return self

    # -- pickling and copying ------------------------------------------------------------

    def __reduce_ex__(self, protocol):
        """Pickle as PyTorch's multiprocessing does: shared bytes by reference, the rest by
        value.

        A storage in a shared-memory segment pickles as the segment's name; unpickling
        attaches to it (in any process, which never becomes the segment's creator: only
        the creator unlinks it, so it must outlive the unpickling). A file mapped with
        ``shared=True`` pickles as its absolute path and size and is mapped again on load,
        the file then having to exist and hold that many bytes. Any other storage, a
        private copy-on-write file map included, pickles its bytes. A view pickles with
        its base (all of the base's bytes), so a base and its views pickled together
        share again after unpickling.
        """
        if self._base is not None:
            start = self._start_in_base()
            return _view_of, (self._base, start, start + self.nbytes())
        if isinstance(self._owner, buffers.SharedSegment):
            return _attach_segment, (self._owner.name, self.nbytes())
        if self._shared:
            return _map_shared_file, (self._path, self.nbytes())
        return _from_bytes, (self._data(),)

    def __deepcopy__(self, memo) -> UntypedStorage:
        """A private copy of the bytes: never shared, mapped or named, as PyTorch's; a view's
        copy is a view of its base's copy."""
        if self._base is not None:
            start = self._start_in_base()
            return copy.deepcopy(self._base, memo).view_bytes(start, start + self.nbytes())
        return _from_bytes(self._data())

    def _start_in_base(self) -> int:
        return self.data_ptr() - self._base.data_ptr()

    # -- the bytes -----------------------------------------------------------------------

    def _root(self) -> UntypedStorage:
        return self if self._base is None else self._base._root()

    def _data(self) -> np.ndarray:
        data = self._bytes
        if data is None:
            raise RuntimeError("storage was freed (its reference count reached zero)")
        if data.dtype is not _BYTE:
            # A small op result keeps only its elements' array until its bytes are asked
            # for (Storage._uninitialised): one numpy view fewer per op result.
            data = self._bytes = data.view(_BYTE)
        return data

    def _set_bytes(self, data: np.ndarray) -> None:
        self._bytes = data
        self._typed.clear()
        config.memory_epoch += 1

    def typed_arrays(self, np_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """This storage's bytes as a 1-D array of ``np_dtype``, and the array kernels take
        (the same, or its uint16 bits for float16, which numba does not support)."""
        pair = self._typed.get(np_dtype)
        if pair is None:  # the first use of a fresh op result: kept cheap
            data = self._data().view(np_dtype)
            pair = (data, data.view(np.uint16) if np_dtype is _HALF else data)
            self._typed[np_dtype] = pair
        return pair

    @property
    def array(self) -> np.ndarray:
        return self.typed_arrays(self.dtype.numpy)[0]

    @property
    def kernel_array(self) -> np.ndarray:
        return self.array

    def nbytes(self) -> int:
        return self._data().size

    def data_ptr(self) -> int:
        return self._data().__array_interface__["data"][0]

    def untyped(self) -> UntypedStorage:
        return self

    def resize_(self, nbytes: int) -> UntypedStorage:
        """Grow or shrink to ``nbytes``, keeping the common prefix."""
        _check_size(nbytes, "nbytes")
        with self._lock:
            if not self._resizable:
                raise RuntimeError(
                    "cannot resize a storage that is a view, maps a file or shared memory, "
                    "or wraps a numpy array"
                )
            if self._views:
                raise RuntimeError("cannot resize a storage while storage views of it exist")
            old = self._data()
            if nbytes < old.size and self._under_tensors:
                raise RuntimeError(
                    f"cannot shrink a storage that tensors are built on ({old.size} -> {nbytes} "
                    "bytes): they would reach past its end; resize a clone() of it instead"
                )
            fresh = buffers.allocate(nbytes)
            keep = min(old.size, nbytes)
            fresh[:keep] = old[:keep]
            self._set_bytes(fresh)
        return self

    def byteswap(self, dtype) -> UntypedStorage:
        """Reverse the byte order of every element of ``dtype`` in place."""
        d = dtypes.as_dtype(dtype)
        width = d.itemsize // 2 if d.is_complex else d.itemsize
        self._check_writable()
        data = self._data()
        if data.size % d.itemsize:
            raise ValueError(f"{data.size} bytes are not a whole number of {d.name} elements")
        kernels.byteswap(data, width)
        return self

    # -- Torch7's reference count --------------------------------------------------------

    def retain(self) -> UntypedStorage:
        with self._lock:
            if self._bytes is None:
                raise RuntimeError("cannot retain a freed storage")
            self._refcount += 1
        return self

    def free(self) -> None:
        """Drop one reference; at zero the bytes are released and later use raises."""
        with self._lock:
            if self._bytes is None:
                raise RuntimeError("storage was already freed")
            self._refcount -= 1
            if self._refcount:
                return
            self._set_bytes(None)
            self._base = None
            if self._finalizer is not None:
                self._finalizer()

    def refcount(self) -> int:
        return self._refcount

    def _new_like(self, size: int) -> UntypedStorage:
        return UntypedStorage(size)

    def _type_name(self) -> str:
        return "UntypedStorage"


def _from_bytes(data: np.ndarray) -> UntypedStorage:
    fresh = buffers.allocate(data.size)  # aligned, owned and writable whatever ``data`` is
    fresh[:] = data
    return UntypedStorage._wrap(fresh, resizable=True)


def _view_of(base: UntypedStorage, start: int, stop: int) -> UntypedStorage:
    return base.view_bytes(start, stop)


def _attach_segment(name: str, nbytes: int) -> UntypedStorage:
    return UntypedStorage._from_segment(buffers.SharedSegment(name, nbytes, create=False))


def _map_shared_file(path: str, nbytes: int) -> UntypedStorage:
    # Mapping shared would create or extend a missing or shorter file: the pickled
    # storage's bytes are gone then, and loading says so instead.
    size = os.stat(path).st_size
    if size < nbytes:
        raise ValueError(
            f"file {path!r} holds {size} bytes; the pickled storage mapping it had {nbytes}"
        )
    return UntypedStorage.from_file(path, shared=True, nbytes=nbytes)


def _check_size(n: int, what: str = "size") -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"{what} must be non-negative, got {n}")
    return int(n)


def _sequence_to_array(seq, np_dtype: np.dtype) -> np.ndarray:
    if isinstance(seq, (str, bytes)) or not hasattr(seq, "__len__"):
        raise TypeError(
            f"a storage is built from a size, a sequence or a storage, not {type(seq).__name__}"
        )
    # numpy's conversion names the problem: out-of-range ints, complex into real, strings.
    values = np.array(seq, dtype=np_dtype)
    if values.ndim != 1:
        raise ValueError(f"a storage is one-dimensional; got data of shape {values.shape}")
    data = buffers.allocate(values.nbytes).view(np_dtype)
    data[:] = values
    return data.view(np.uint8)
