"""``save`` and ``load``: objects of tensors to and from the file format of ``format.py``.

Sharing is decided by the root untyped storage (``t.untyped_storage()._root()``), as in
PyTorch: all tensors over one root are saved with that root's whole bytes, once, and load
as views of one storage again.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ..autograd.tensor import Tensor
from ..dtypes import DType, int16, int32, int64
from ..storage import Storage, UntypedStorage, buffers, storage_class
from ..strided import layout
from . import codec, numpy_formats
from .format import (
    FORMAT_VERSION,
    PREFIX,
    FormatError,
    check_int,
    check_keys,
    dtype_of,
    header_length,
    layout_file,
    native_byte_order,
    parse_header,
    write_atomically,
)

_TENSOR_KEYS = {
    "storage",
    "storage_byte_offset",
    "storage_nbytes",
    "dtype",
    "offset",
    "shape",
    "strides",
}
_OPTIONAL_TENSOR_KEYS = frozenset({"requires_grad"})
_SWAP_DTYPE = {2: int16, 4: int32, 8: int64}  # byteswap runs on whole words of this width


def save(obj, path, allow_pickle: bool = True, fix_imports: bool = True) -> None:
    """Save a tensor, or nested dicts, lists and tuples of tensors and plain values
    (None, bool, int, float, str), to ``path``; or save as numpy does.

    Tensors that share a root storage are saved with it once and load sharing it again.
    The file is replaced atomically: a failed save leaves any old file untouched.

    >>> import os, tempfile, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "state.jg")
    >>> a = jg.arange(6.0)
    >>> jg.save({"a": a, "tail": a[3:], "step": 7}, path)
    >>> state = jg.load(path)
    >>> state["tail"].tolist(), state["tail"].storage() is state["a"].storage()
    ([3.0, 4.0, 5.0], True)

    numpy's order, ``save(file, arr)`` (a file name or object first, the data second), is
    numpy's ``np.save``: a ``.npy`` file, ``.npy`` appended to a name without it. The format
    follows the file: a file object or a name ending in ``.npy`` is numpy's ``.npy`` in
    either order, a name ending in ``.npz`` given second is numpy's ``.npz`` (``savez``: a
    dict's keys name its arrays), a name ending in ``.jg`` is jitgrad's format in either
    order, and any other name given second is jitgrad's format. ``allow_pickle`` is numpy's
    (object arrays in numpy's files); ``fix_imports`` does nothing, as in numpy. The rule
    is tabled in docs/file-formats.md.

    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "x")
    >>> jg.save(path, jg.arange(3))
    >>> np.load(path + ".npy")
    array([0, 1, 2])
    """
    if not _is_destination(path) and _is_destination(obj):  # numpy's order: save(file, arr)
        obj, path = path, obj
        if not _names_suffix(path, ".jg"):
            numpy_formats.save_npy(path, obj, allow_pickle)
            return
    elif hasattr(path, "write") or _names_suffix(path, ".npy"):
        numpy_formats.save_npy(path, obj, allow_pickle)
        return
    elif _names_suffix(path, ".npz"):
        named = obj if isinstance(obj, dict) else {"arr_0": obj}
        numpy_formats.savez(path, allow_pickle=allow_pickle, **named)
        return
    path = _fspath(path)
    roots: list[UntypedStorage] = []
    storages: list[dict] = []
    index_of_root: dict[int, int] = {}

    def tensor_entry(t: Tensor, where: str) -> dict:
        typed = t.storage()
        untyped = typed.untyped()
        root = untyped._root()
        sid = index_of_root.get(id(root))
        if sid is None:
            sid = index_of_root[id(root)] = len(roots)
            roots.append(root)
            storages.append({"dtype": t.dtype.name, "nbytes": root.nbytes(), "offset": 0})
        nbytes = untyped.nbytes()
        start = untyped.data_ptr() - root.data_ptr() if nbytes else 0
        if not 0 <= start <= start + nbytes <= root.nbytes():
            raise RuntimeError(
                f"cannot save the tensor at {where}: its storage no longer lies inside the "
                "storage it was cut from (was the base storage moved or resized?)"
            )
        try:
            layout.check_in_bounds(t.shape, t.stride(), t.storage_offset(), typed.size())
        except ValueError as e:
            raise ValueError(f"cannot save the tensor at {where}: {e}") from None
        entry = {
            "storage": sid,
            "storage_byte_offset": start,
            "storage_nbytes": nbytes,
            "dtype": t.dtype.name,
            "offset": t.storage_offset(),
            "shape": list(t.shape),
            "strides": list(t.stride()),
        }
        if t.requires_grad:  # as torch.save: the tensor loads as a leaf that requires grad
            entry["requires_grad"] = True
        return entry

    tree = codec.encode(obj, tensor_entry)
    header = {
        "format_version": FORMAT_VERSION,
        "byte_order": native_byte_order(),
        "alignment": buffers.ALIGNMENT,
        "storages": storages,
        "object": tree,
    }
    blobs = [root._data() for root in roots]
    prefix, offsets = layout_file(header, [b.size for b in blobs])
    write_atomically(path, prefix, blobs, offsets)


def load(
    file,
    mmap_mode=None,
    allow_pickle: bool = False,
    fix_imports: bool = True,
    encoding: str = "ASCII",
    *,
    max_header_size: int = 10000,
    mmap: bool = False,
):
    """Load what ``save`` wrote, with the same storage sharing; or what numpy's ``np.save``
    and ``np.savez`` wrote, as numpy's ``np.load`` does.

    ``mmap=False`` reads the bytes into memory. ``mmap=True`` maps the file copy-on-write:
    nothing is read until used, the tensors are writable, and writes never reach the file.
    But the pages not written yet are the file's own, as with ``torch.load(mmap=True)``
    and numpy's memory maps: a file changed in place afterwards changes the tensors, and
    one truncated makes reading them kill the process (SIGBUS). ``save`` never does that
    (it replaces files whole), copying over the file in place does.
    A malformed file raises ``FormatError`` (a ``ValueError``) naming it; no code from the
    file is ever run.

    >>> import os, tempfile, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jg")
    >>> jg.save((jg.arange(4).view(2, 2).T, None, float("nan")), path)
    >>> x, none, nan = jg.load(path, mmap=False)
    >>> x.tolist(), x.stride(), none, nan
    ([[0, 2], [1, 3]], (1, 2), None, nan)

    The format is read from the file's first bytes, whatever its name, as ``np.load`` does:
    a ``.npy`` loads as a tensor, an ``.npz`` as an ``NpzFile`` (a mapping of names to
    tensors), and a file object is read by numpy. The other arguments are numpy's:
    ``mmap_mode`` ("r", "r+", "c") maps a ``.npy`` into a tensor sharing the memory map
    (``mmap=True`` is "c"); on a jitgrad file "r" and "c" are ``mmap=True``. Only with
    ``allow_pickle=True`` does a file that is neither load as numpy's pickle (running its
    code, as numpy warns).

    >>> import numpy as np
    >>> np.save(path := os.path.join(tempfile.mkdtemp(), "a.npy"), np.eye(2, dtype="f4"))
    >>> jg.load(path, mmap_mode="r")
    tensor([[1., 0.],
            [0., 1.]], dtype=jitgrad.float32)
    """
    if numpy_formats.is_numpy_file(file, allow_pickle):
        mmap_mode = mmap_mode if mmap_mode is not None else "c" if mmap else None
        return numpy_formats.load_numpy(
            file, mmap_mode, allow_pickle, fix_imports, encoding, max_header_size
        )
    if mmap_mode is not None:
        if mmap_mode not in ("r", "c"):
            raise ValueError(
                f"mmap_mode={mmap_mode!r}: a jitgrad file maps copy-on-write only (mmap_mode "
                "'r' or 'c', writes stay in memory); save a .npy to map a file written through"
            )
        mmap = True
    path = _fspath(file)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a jitgrad file", path)
    if mmap:
        data, _ = buffers.map_file(path, None, shared=False)
        size = data.size
        length = header_length(path, data[: PREFIX.size].tobytes(), size)
        header = parse_header(path, data[PREFIX.size : PREFIX.size + length].tobytes(), size)
        specs = _check_object(path, header)
        roots = [
            UntypedStorage._wrap(data[e["offset"] : e["offset"] + e["nbytes"]], filename=path)
            for e in header["storages"]
        ]
    else:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            length = header_length(path, f.read(PREFIX.size), size)
            header = parse_header(path, _read_exactly(f, path, PREFIX.size, length), size)
            specs = _check_object(path, header)
            roots = [_read_storage(f, path, e["offset"], e["nbytes"]) for e in header["storages"]]
    if header["byte_order"] != native_byte_order():
        _byteswap(path, roots, specs)
    return _build(path, header, roots)


# -- loading, step by step -----------------------------------------------------------------


@dataclass(frozen=True)
class _View:
    """A typed storage as the file describes it: a dtype over a byte range of one storage."""

    sid: int
    start: int
    nbytes: int
    dtype: DType


def _check_object(path: str, header: dict) -> list[_View]:
    """Check every tensor entry of the object tree; the typed storages they use."""
    views: list[_View] = []

    def check(entry, where):
        views.append(_tensor_spec(path, header["storages"], entry, where)[0])

    codec.decode(header["object"], path, check)
    return views


def _tensor_spec(path: str, storages: list[dict], entry, where: str):
    where = f"the tensor at {where}"
    check_keys(path, entry, _TENSOR_KEYS, where, _OPTIONAL_TENSOR_KEYS)
    sid = check_int(path, entry["storage"], f"{where}: storage", low=0)
    if sid >= len(storages):
        raise FormatError(path, f"out of bounds: {where} uses storage {sid} of {len(storages)}")
    d = dtype_of(path, entry["dtype"], where)
    start = check_int(path, entry["storage_byte_offset"], f"{where}: storage_byte_offset", 0)
    nbytes = check_int(path, entry["storage_nbytes"], f"{where}: storage_nbytes", 0)
    if start + nbytes > storages[sid]["nbytes"] or nbytes % d.itemsize:
        raise FormatError(
            path,
            f"out of bounds: {where} views bytes [{start}, {start + nbytes}) as {d.name} "
            f"in storage {sid} of {storages[sid]['nbytes']} bytes",
        )
    offset = check_int(path, entry["offset"], f"{where}: offset")
    shape, strides = entry["shape"], entry["strides"]
    if not isinstance(shape, list) or not isinstance(strides, list) or len(shape) != len(strides):
        raise FormatError(path, f"corrupt header: {where} has shape {shape!r}, strides {strides!r}")
    shape = tuple(check_int(path, n, f"{where}: shape", low=0) for n in shape)
    strides = tuple(check_int(path, s, f"{where}: strides") for s in strides)
    try:
        layout.check_in_bounds(shape, strides, offset, nbytes // d.itemsize)
    except ValueError as e:
        raise FormatError(path, f"out of bounds: {where}: {e}") from None
    requires_grad = entry.get("requires_grad", False)
    if requires_grad is not False and (requires_grad is not True or d.kind not in "fc"):
        raise FormatError(path, f"corrupt header: {where} has requires_grad {requires_grad!r}")
    return _View(sid, start, nbytes, d), shape, strides, offset, requires_grad


def _read_exactly(f, path: str, offset: int, nbytes: int) -> bytes:
    f.seek(offset)
    raw = f.read(nbytes)
    if len(raw) != nbytes:
        raise FormatError(path, f"truncated file: {nbytes} bytes expected at {offset}")
    return raw


def _read_storage(f, path: str, offset: int, nbytes: int) -> UntypedStorage:
    data = buffers.allocate(nbytes)
    f.seek(offset)
    done = 0
    while done < nbytes:
        got = f.readinto(memoryview(data)[done:])
        if not got:
            raise FormatError(path, f"truncated file: storage at {offset} ends after {done} bytes")
        done += got
    return UntypedStorage._wrap(data, resizable=True)


def _byteswap(path: str, roots: list[UntypedStorage], views: list[_View]) -> None:
    """Turn every storage to native byte order, as words of the width its tensors use."""
    by_storage: dict[int, list[_View]] = {}
    for v in views:
        width = v.dtype.itemsize // (2 if v.dtype.is_complex else 1)
        if width > 1 and v.nbytes:
            by_storage.setdefault(v.sid, []).append(v)
    for sid, used in by_storage.items():
        words = {(v.dtype.itemsize // (2 if v.dtype.is_complex else 1), v.start) for v in used}
        widths = {w for w, _ in words}
        phases = {s % w for w, s in words}
        if len(widths) > 1 or len(phases) > 1:
            names = sorted({v.dtype.name for v in used})
            raise FormatError(
                path,
                f"storage {sid} was written in the other byte order and is viewed as "
                f"{', '.join(names)} at offsets that disagree on word boundaries: no single "
                "byte swap makes all of them right",
            )
        lo = min(v.start for v in used)
        hi = max(v.start + v.nbytes for v in used)
        roots[sid].view_bytes(lo, hi).byteswap(_SWAP_DTYPE[widths.pop()])


def _build(path: str, header: dict, roots: list[UntypedStorage]):
    untyped: dict[tuple[int, int, int], UntypedStorage] = {}
    typed: dict[_View, Storage] = {}
    first_typed: dict[tuple[int, int, int], Storage] = {}

    def storage_of(v: _View) -> Storage:
        if v not in typed:
            key = (v.sid, v.start, v.nbytes)
            if key not in untyped:
                root = roots[v.sid]
                whole = v.start == 0 and v.nbytes == root.nbytes()
                untyped[key] = root if whole else root.view_bytes(v.start, v.start + v.nbytes)
            first = first_typed.get(key)
            if first is not None and first.dtype is not v.dtype:
                # the same bytes as another dtype (a complex tensor's parts): their writes
                # are counted together again, as in the saved process
                typed[v] = first._as_dtype(v.dtype)
            else:
                typed[v] = storage_class(v.dtype).from_untyped(untyped[key])
                first_typed.setdefault(key, typed[v])
        return typed[v]

    def make_tensor(entry, where):
        v, shape, strides, offset, requires_grad = _tensor_spec(
            path, header["storages"], entry, where
        )
        return Tensor(storage_of(v), shape, strides, offset).requires_grad_(requires_grad)

    return codec.decode(header["object"], path, make_tensor)


def _is_destination(obj) -> bool:
    return isinstance(obj, (str, bytes, os.PathLike)) or hasattr(obj, "write")


def _names_suffix(path, suffix: str) -> bool:
    return isinstance(path, (str, bytes, os.PathLike)) and os.fsdecode(path).endswith(suffix)


def _fspath(path) -> str:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fsdecode(os.fspath(path))
