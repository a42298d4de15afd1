"""The jitgrad file format: a JSON header, then raw storage bytes, 64-byte aligned.

Layout of a file (all integers little-endian)::

    offset 0   8 bytes   magic  b"JITGRAD\\0"
    offset 8   8 bytes   uint64 L, the length of the header in bytes
    offset 16  L bytes   header: UTF-8 JSON (the writer emits ASCII only), padded with
                         spaces so that 16 + L is a multiple of 64
    then                 the storages' raw bytes, each at the file offset its header entry
                         gives (a multiple of 64), zero bytes between them

The header is one JSON object::

    {
      "format_version": 1,
      "byte_order": "little" | "big",      # of the storage bytes (the writer's own)
      "alignment": 64,                     # informational; readers accept any offsets
      "storages": [{"dtype": "float64", "nbytes": 96, "offset": 128}, ...],
      "object": <the saved object, encoded as below>
    }

A *storage* is the whole byte buffer under one group of tensors: the root untyped storage
that their storages are views of (as in PyTorch, a slice saves its whole base). ``offset``
is its absolute file offset, ``nbytes`` its length, ``dtype`` the dtype of the first tensor
saved over it (informational: a storage may be viewed as several dtypes).

The object is encoded as JSON with single-key objects as tags, so that every JSON object in
the tree is a tag and user dicts can never be mistaken for one:

    ``null``, ``true``/``false``, integers, strings   None, bool, int, str
    finite numbers with a fraction or exponent       float (Python's repr: exact)
    ``{"float": "nan" | "inf" | "-inf"}``             the non-finite floats
    ``{"list": [...]}``, ``{"tuple": [...]}``         list, tuple
    ``{"dict": [[key, value], ...]}``                 dict (keys encoded like values, so
                                                      ``1``, ``"1"``, ``1.0``, ``True`` and
                                                      ``None`` keys keep their type and order)
    ``{"tensor": {...}}``                             a tensor, see below

A tensor entry::

    {"storage": 0,                 # index into "storages"
     "storage_byte_offset": 0,     # where the tensor's typed storage starts in that storage
     "storage_nbytes": 96,         # and how long it is
     "dtype": "float64",
     "offset": 2,                  # in elements of dtype, within the typed storage
     "shape": [3, 4], "strides": [1, 4],   # strides in elements
     "requires_grad": true}        # present only when true: it loads as a leaf that does

Tensors with equal (storage, storage_byte_offset, storage_nbytes, dtype) load over one
typed storage object; all tensors of one storage share its bytes, whatever their dtypes.

Reading never runs code (no pickle): the header is JSON, checked entry by entry before any
tensor is built; every problem raises ``FormatError`` (a ``ValueError``) naming the file.
A file written on a machine of the other byte order is byteswapped after reading, each
storage in words of the width its tensors use (half of a complex itemsize); a storage whose
tensors disagree on word width or word boundaries (e.g. int32 and int16 over the same
bytes) cannot be swapped right for all of them and is refused.

Writing is atomic: the file is written under a temporary name in the same directory,
flushed and fsynced, renamed over the target with ``os.replace`` and the directory fsynced.

Versioning: ``format_version`` is raised on any change an older reader would misread; a
reader refuses versions it does not know.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import struct
import sys

from .. import dtypes
from ..storage.buffers import ALIGNMENT

MAGIC = b"JITGRAD\0"
FORMAT_VERSION = 1
PREFIX = struct.Struct("<8sQ")  # magic, header length
# Integers in shapes, strides and offsets must fit the int64 that numpy and numba use.
_INT_LIMIT = 1 << 63


class FormatError(ValueError):
    """A file that is not a well-formed jitgrad file; the message names the file."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path!r}: {problem}")
        self.path = path


def align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


# -- writing -------------------------------------------------------------------------------


def layout_file(header: dict, sizes: list[int]) -> tuple[bytes, list[int]]:
    """The encoded prefix + header, and the file offset of each storage.

    Fills ``header["storages"][i]["offset"]`` in place. Offsets are absolute, so their
    digits change the header's length; grow the data start until the header fits.
    """
    start = 0
    while True:
        offsets = []
        position = start
        for entry, size in zip(header["storages"], sizes, strict=True):
            offsets.append(position)
            entry["offset"] = position
            position = align(position + size)
        # ASCII only: lone surrogates in str values survive as \u escapes.
        text = json.dumps(header, allow_nan=False, separators=(",", ":"))
        body = text.encode("utf-8")
        needed = align(PREFIX.size + len(body))
        if needed <= start:
            body += b" " * (start - PREFIX.size - len(body))
            return PREFIX.pack(MAGIC, len(body)) + body, offsets
        start = needed


def write_atomically(path: str, prefix: bytes, blobs: list, offsets: list[int]) -> None:
    """Write ``prefix`` then each blob at its file offset (zero bytes between) to ``path``,
    atomically (see ``replacing``)."""
    with replacing(path) as f:
        f.write(prefix)
        position = len(prefix)
        for blob, offset in zip(blobs, offsets, strict=True):
            f.write(b"\0" * (offset - position))
            f.write(blob)
            position = offset + len(blob)


@contextlib.contextmanager
def replacing(path: str):
    """A binary file to write ``path``'s new contents into: written next to ``path`` under a
    temporary name, fsynced, then renamed over ``path``; on any failure the temporary file
    is removed and ``path`` is untouched. As writing in place would, a symbolic link is
    written through to its target, and an existing file keeps its permission bits."""
    asked = path
    if not path:
        raise FileNotFoundError(errno.ENOENT, "an empty path names no file", asked)
    path = os.path.realpath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), asked)
    directory = os.path.dirname(path)
    base = os.path.basename(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            # 0o666 so the umask decides the mode, as for any file the user creates.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
        except OSError as exc:  # named after the file asked for, not the temporary one
            raise OSError(exc.errno, exc.strerror, asked) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    # Makes the rename itself durable. Some file systems refuse to fsync a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- reading -------------------------------------------------------------------------------


def header_length(path: str, prefix: bytes, file_size: int) -> int:
    """Check the magic and return the header length, from the file's first 16 bytes."""
    if not MAGIC.startswith(prefix[: len(MAGIC)]):
        raise FormatError(
            path,
            f"not a jitgrad file (magic {prefix[:8]!r}, expected {MAGIC!r}), nor numpy's "
            ".npy or .npz; numpy's pickles load only with allow_pickle=True (runs their code)",
        )
    if file_size < PREFIX.size:
        raise FormatError(path, f"truncated file: {file_size} bytes, shorter than its prefix")
    _, length = PREFIX.unpack(prefix[: PREFIX.size])
    if PREFIX.size + length > file_size:
        raise FormatError(
            path,
            f"truncated file: header of {length} bytes declared, "
            f"only {file_size - PREFIX.size} present",
        )
    return length


def parse_header(path: str, raw: bytes, file_size: int) -> dict:
    """Decode and check the header's top level and storage table (not the object tree)."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise FormatError(path, f"corrupt header: {type(e).__name__}: {e}") from None
    if not isinstance(header, dict):
        raise FormatError(path, f"corrupt header: a JSON {type(header).__name__}, not an object")
    version = header.get("format_version")
    if type(version) is not int:
        raise FormatError(path, f"corrupt header: format_version is {version!r}")
    if version != FORMAT_VERSION:
        raise FormatError(
            path,
            f"unsupported format version {version} (this jitgrad reads version "
            f"{FORMAT_VERSION}); a newer jitgrad may have written it",
        )
    byte_order = header.get("byte_order")
    if byte_order not in ("little", "big"):
        raise FormatError(path, f"corrupt header: byte_order is {byte_order!r}")
    if "object" not in header:
        raise FormatError(path, "corrupt header: no 'object' entry")
    storages = header.get("storages")
    if not isinstance(storages, list):
        raise FormatError(path, "corrupt header: 'storages' is not a list")
    data_start = PREFIX.size + len(raw)
    spans = []
    for i, entry in enumerate(storages):
        where = f"storage {i}"
        check_keys(path, entry, {"dtype", "nbytes", "offset"}, where)
        dtype_of(path, entry["dtype"], where)
        nbytes = check_int(path, entry["nbytes"], f"{where} nbytes", low=0)
        offset = check_int(path, entry["offset"], f"{where} offset", low=data_start)
        if offset + nbytes > file_size:
            raise FormatError(
                path,
                f"truncated file: {where} needs bytes [{offset}, {offset + nbytes}), "
                f"the file has {file_size}",
            )
        if nbytes:
            spans.append((offset, offset + nbytes, i))
    # Overlapping storages would load as hidden aliases of each other: refuse them.
    spans.sort()
    for (_, end, a), (start, _, b) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise FormatError(path, f"corrupt header: storages {a} and {b} overlap in the file")
    header["byte_order"] = byte_order
    return header


def native_byte_order() -> str:
    return sys.byteorder


# -- checks shared with the object decoder -------------------------------------------------


def check_keys(path: str, entry, keys: set[str], where: str, optional: frozenset = frozenset()):
    if not isinstance(entry, dict) or not keys <= set(entry) <= keys | optional:
        also = f" (and optionally {sorted(optional)})" if optional else ""
        raise FormatError(
            path,
            f"corrupt header: {where} must be an object with keys {sorted(keys)}{also}, "
            f"got {entry!r}",
        )


def check_int(path: str, value, where: str, low: int = -_INT_LIMIT) -> int:
    if type(value) is not int:
        raise FormatError(path, f"corrupt header: {where} is {value!r}, not an integer")
    if not low <= value < _INT_LIMIT:
        raise FormatError(path, f"out of bounds: {where} is {value}")
    return value


def dtype_of(path: str, name, where: str) -> dtypes.DType:
    found = {d.name: d for d in dtypes.ALL_DTYPES}.get(name) if isinstance(name, str) else None
    if found is None:
        raise FormatError(path, f"unknown dtype {name!r} in {where}")
    return found
