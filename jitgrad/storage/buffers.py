"""Where a storage's bytes come from: the heap, a mapped file, or POSIX shared memory.

Each function returns a writable one-dimensional uint8 array plus the object that owns the
mapping (to be closed when the storage is released), or ``None`` when numpy's own
reference counting owns the memory.
"""

from __future__ import annotations

import errno
import mmap
import os
import secrets
import stat
import sys
import threading
from multiprocessing import shared_memory

import numpy as np

# Kernels vectorise with 64-byte (AVX-512) loads; the save format aligns to the same.
ALIGNMENT = 64


# Below this size alignment buys nothing (a few vectors) and finding the address costs
# more than allocating: numpy's own 16-byte alignment serves every dtype.
SMALL_BYTES = 4096


def allocate(nbytes: int) -> np.ndarray:
    """Uninitialised heap bytes; from ``SMALL_BYTES`` up the first byte is 64-byte
    aligned."""
    if nbytes < SMALL_BYTES:
        return np.empty(nbytes, dtype=np.uint8)
    return _aligned(np.empty(nbytes + ALIGNMENT, dtype=np.uint8), nbytes)


def _aligned(raw: np.ndarray, nbytes: int) -> np.ndarray:
    start = -raw.__array_interface__["data"][0] % ALIGNMENT
    return raw[start : start + nbytes]


class BufferPool:
    """Large freed buffers kept for reuse, by size.

    A fresh large allocation costs more than the kernel that fills it: the pages fault in
    one by one (a 64 MiB output made a 7 ms kernel take 37 ms here). Buffers from
    ``MIN_BYTES`` up are therefore returned here when their storage dies, if nothing
    else still points into them, and handed out again for the same size, up to
    ``config.pool_bytes`` in total. ``jg.empty_cache()`` drops them all.
    """

    MIN_BYTES = 1 << 20
    PAGE = 4096

    def __init__(self):
        self._free: dict[int, list[np.ndarray]] = {}
        self._returned: list[np.ndarray] = []  # from dead storages, not yet checked
        self.held = 0
        self._lock = threading.Lock()

    def allocate(self, nbytes: int):
        """(aligned bytes, the raw allocation to hand back when the storage dies) —
        the raw part is None below the pooling size."""
        if nbytes < self.MIN_BYTES:
            return allocate(nbytes), None
        size = -(-(nbytes + ALIGNMENT) // self.PAGE) * self.PAGE
        with self._lock:
            self._sort_returned()
            bucket = self._free.get(size)
            raw = bucket.pop() if bucket else None
            if raw is not None:
                self.held -= size
        if raw is None:
            raw = np.empty(size, dtype=np.uint8)
        return _aligned(raw, nbytes), raw

    def recycle(self, raw: np.ndarray) -> None:
        """Called as a storage dies; its own views of ``raw`` are not gone yet, so the
        check that nothing else uses it waits for the next allocation."""
        with self._lock:
            self._returned.append(raw)

    def _sort_returned(self) -> None:
        from .._config import config

        pending, self._returned = self._returned, []
        for raw in pending:
            # The list, the loop variable and getrefcount's argument: anything more is a
            # live numpy view of the buffer, which must not be handed out again.
            if sys.getrefcount(raw) > 3:
                if raw.size + self.held <= config.pool_bytes:
                    self._returned.append(raw)  # look again once the view is gone
            elif self.held + raw.size <= config.pool_bytes:
                self._free.setdefault(raw.size, []).append(raw)
                self.held += raw.size

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self._returned.clear()
            self.held = 0


pool = BufferPool()


def map_file(filename: str, nbytes: int | None, shared: bool):
    """Map ``filename``.

    shared=True: MAP_SHARED, the file is created or extended to ``nbytes`` and writes reach
    it. shared=False: a private copy-on-write mapping; the file must already hold
    ``nbytes`` and never changes. ``nbytes=None`` maps the whole file.
    """
    path = os.fspath(filename)
    if shared:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    else:
        fd = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):  # (mmap's own error names no path)
            kind = "a directory" if stat.S_ISDIR(status.st_mode) else "not a regular file"
            raise OSError(
                errno.EISDIR if kind == "a directory" else errno.ENODEV, f"cannot map {kind}", path
            )
        file_size = status.st_size
        if nbytes is None:
            nbytes = file_size
        elif nbytes > file_size:
            if not shared:
                raise ValueError(
                    f"file {path!r} holds {file_size} bytes but {nbytes} were asked for; "
                    "a private mapping never extends its file (use shared=True)"
                )
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            return np.empty(0, dtype=np.uint8), None
        access = mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY
        mapping = mmap.mmap(fd, nbytes, access=access)
    finally:
        os.close(fd)
    return np.frombuffer(mapping, dtype=np.uint8, count=nbytes), mapping


class _SharedMemory(shared_memory.SharedMemory):
    def __del__(self):
        # Arrays handed to users may still export the mapping when this object goes (at
        # interpreter exit, typically): it is unmapped once they are gone, and there is
        # nothing to report (the base class lets that BufferError print a traceback).
        try:
            self.close()
        except (BufferError, OSError):
            pass


def _attach_untracked(name: str) -> _SharedMemory:
    """Map the existing segment ``name`` without registering it with multiprocessing's
    resource tracker, which unlinks what is registered when the process exits.

    Registering and then unregistering cannot be right everywhere: a spawned or forked
    child shares its parent's tracker, where unregistering drops the creator's
    registration (the tracker then reports a KeyError when the creator unlinks the
    segment), while a process started otherwise has a tracker of its own, which would
    unlink the segment at exit if the registration stayed.
    """
    if sys.version_info >= (3, 13):
        return _SharedMemory(name, create=False, track=False)
    if not shared_memory._USE_POSIX:  # no tracking of shared memory there
        return _SharedMemory(name, create=False)
    # SharedMemory.__init__'s attaching path, less its resource_tracker.register call.
    shm = _SharedMemory.__new__(_SharedMemory)
    shm._name = "/" + name
    shm._fd = shared_memory._posixshmem.shm_open(shm._name, os.O_RDWR, mode=0o600)
    try:
        shm._size = os.fstat(shm._fd).st_size
        shm._mmap = mmap.mmap(shm._fd, shm._size)
    except OSError:
        os.close(shm._fd)
        shm._fd = -1
        raise
    shm._buf = memoryview(shm._mmap)
    return shm


class SharedSegment:
    """A named POSIX shared-memory segment (``/dev/shm/<name>`` on Linux).

    The process that creates a segment unlinks it when its storage is released; processes
    that attach only unmap. Attaching must not register with multiprocessing's resource
    tracker, or the segment would be unlinked when the attaching process exits; attaching
    in the creating process must leave the creator's registration in place.
    """

    def __init__(self, name: str | None, nbytes: int | None, create: bool):
        if create:
            name = name or f"jitgrad_{os.getpid()}_{secrets.token_hex(6)}"
            # A zero-byte segment cannot be mapped; keep one byte and expose none.
            self.shm = _SharedMemory(name, create=True, size=max(nbytes, 1))
            self.nbytes = nbytes
        else:
            try:
                self.shm = _attach_untracked(name)
            except FileNotFoundError:
                raise FileNotFoundError(f"no shared-memory segment named {name!r}") from None
            available = self.shm.size
            if nbytes is not None and nbytes > available:
                self.shm.close()
                raise ValueError(
                    f"shared-memory segment {name!r} holds {available} bytes, "
                    f"{nbytes} were asked for"
                )
            self.nbytes = available if nbytes is None else nbytes
        self.name = self.shm.name
        self.creator = create

    def array(self) -> np.ndarray:
        return np.frombuffer(self.shm.buf, dtype=np.uint8, count=self.nbytes)

    def close(self) -> None:
        # Unlink first: closing raises BufferError while user arrays still map the segment.
        if self.creator:
            self.creator = False
            try:
                self.shm.unlink()
            except FileNotFoundError:
                pass
        self.shm.close()


def close_owner(owner) -> None:
    """Release a mapping once no array of ours uses it.

    Arrays handed to users (``t.numpy()``) may still export the buffer; then the mapping
    stays until they are gone and Python's own finalisers unmap it.
    """
    if owner is None:
        return
    try:
        owner.close()
    except BufferError:
        pass
