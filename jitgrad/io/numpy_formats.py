"""numpy's file formats with tensors: ``.npy`` and ``.npz`` (``jg.save`` and ``jg.load``
come here for them, see ``serialize.py``), text (``loadtxt``, ``savetxt``, ``genfromtxt``)
and raw bytes (``fromfile``, ``frombuffer``, ``fromiter``, ``Tensor.tofile``).

Every byte is read and written by numpy's own functions, so the files are numpy's: tensors
go in as the arrays over their memory, and arrays come out as tensors over theirs
(``jg.from_numpy``: a memory map or a buffer stays shared, a read-only one gives a read-only
tensor).

Data that is not numbers (object, structured/record and string arrays: a pickled dict in a
``.npy``, ``genfromtxt(names=True)``, ``loadtxt(dtype=str)``) comes back as numpy's own
array, unchanged, so ``.item()`` and ``data["field"]`` keep working; tensors hold numbers
only. Numbers of a dtype jitgrad does not have (datetime64, longdouble) raise a
``TypeError`` naming the dtype. Numbers stored in the other byte order load as the same
values in native order (a copy; a memory map of them is refused), and a masked array
(``genfromtxt(usemask=True)``) comes back as numpy's masked array.
The rules, with how ``save`` and ``load`` choose a format, are in docs/file-formats.md.
"""

from __future__ import annotations

import collections.abc
import os

import numpy as np

from ..creation import from_numpy
from ..dtypes import DType
from ..tensor import TensorBase
from .format import MAGIC, replacing

__all__ = [
    "NpzFile",
    "savez",
    "savez_compressed",
    "loadtxt",
    "savetxt",
    "genfromtxt",
    "fromfile",
    "frombuffer",
    "fromiter",
]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with members, an empty zip (numpy's test)


# -- .npy and .npz -------------------------------------------------------------------------


def is_numpy_file(file, allow_pickle: bool) -> bool:
    """Whether ``jg.load`` reads ``file`` with numpy: a ``.npy`` or ``.npz`` by its first
    bytes (whatever its name, as ``np.load`` decides), a file object that is not a jitgrad
    file, or, with ``allow_pickle``, any file that does not start like a jitgrad file."""
    if hasattr(file, "read"):
        if not hasattr(file, "seek"):
            return True  # numpy reads it or names the problem
        start = file.tell()
        magic = file.read(len(MAGIC))
        file.seek(start)
        if isinstance(magic, bytes) and magic == MAGIC:
            raise TypeError(
                "a jitgrad file loads from its path, not from an open file: "
                "jg.load(path) maps or reads it by offset"
            )
        return True
    try:
        with open(file, "rb") as f:
            magic = f.read(len(MAGIC))
    except (OSError, TypeError, ValueError):
        return False  # the jitgrad reader raises the error that names the problem
    if magic.startswith(_NPY_MAGIC) or magic.startswith(_ZIP_MAGICS):
        return True
    return allow_pickle and len(magic) == len(MAGIC) and magic != MAGIC


def load_numpy(file, mmap_mode, allow_pickle, fix_imports, encoding, max_header_size):
    """``np.load``'s result with tensors for arrays (``NpzFile`` for an ``.npz``)."""
    result = np.load(
        file,
        mmap_mode=mmap_mode,
        allow_pickle=allow_pickle,
        fix_imports=fix_imports,
        encoding=encoding,
        max_header_size=max_header_size,
    )
    if isinstance(result, np.lib.npyio.NpzFile):
        return NpzFile(result)
    return _tensor(result, f"{_name(file)}", shared=mmap_mode is not None)


def save_npy(file, arr, allow_pickle: bool = True) -> None:
    """``np.save(file, arr)``: ``.npy`` appended to a name without it; a named file is
    replaced atomically."""
    _write(file, ".npy", np.save, (_array(arr),), {}, allow_pickle)


class NpzFile(collections.abc.Mapping):
    """An ``.npz`` file opened by ``jg.load``: numpy's ``NpzFile`` whose arrays come out as
    tensors. A mapping of names to tensors read on access, ``.files`` lists the names,
    ``.f.name`` is ``self["name"]``, and ``with`` (or ``close()``) closes the file.

    >>> import os, tempfile, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "arrays.npz")
    >>> jg.savez(path, jg.arange(3), w=jg.ones((2, 2)))
    >>> with jg.load(path) as npz:
    ...     npz.files, npz["arr_0"].tolist(), npz.f.w.shape
    (['w', 'arr_0'], [0, 1, 2], (2, 2))
    """

    def __init__(self, npz: np.lib.npyio.NpzFile):
        self._npz = npz
        self.f = _Attributes(self)

    @property
    def files(self) -> list[str]:
        return self._npz.files

    def __getitem__(self, key: str):
        if self._npz.zip is None:  # numpy's own would fail on None.open
            raise ValueError(f"read of {key!r} from a closed NpzFile")
        return _tensor(self._npz[key], f"{key!r} in {_name(self._npz.fid)}")

    def __iter__(self):
        return iter(self._npz)

    def __len__(self) -> int:
        return len(self._npz)

    def __contains__(self, key) -> bool:
        return key in self._npz

    def close(self) -> None:
        self._npz.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"NpzFile {_name(self._npz.fid)} with keys: {', '.join(self.files)}"


class _Attributes:
    """``npz.f.name`` for ``npz["name"]``, as numpy's ``NpzFile.f``."""

    def __init__(self, npz: NpzFile):
        self._npz = npz

    def __getattr__(self, name: str):
        try:
            return self._npz[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return self._npz.files


def savez(file, *args, allow_pickle: bool = True, **kwds) -> None:
    """Save several tensors into one uncompressed ``.npz`` file, as numpy's ``savez``:
    positional ones named ``arr_0``, ``arr_1``..., keyword ones by their keyword.
    ``.npz`` is appended to a name without it; a named file is replaced atomically.

    >>> import os, tempfile, numpy as np, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "pair")
    >>> jg.savez(path, jg.arange(2), x=jg.zeros(3, dtype="float32"))
    >>> npz = np.load(path + ".npz")
    >>> npz["arr_0"], npz["x"]
    (array([0, 1]), array([0., 0., 0.], dtype=float32))
    """
    _write(file, ".npz", np.savez, tuple(map(_array, args)), _arrays(kwds), allow_pickle)


def savez_compressed(file, *args, allow_pickle: bool = True, **kwds) -> None:
    """``savez`` with the arrays deflate-compressed, as numpy's ``savez_compressed``.

    >>> import os, tempfile, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "zeros.npz")
    >>> jg.savez_compressed(path, z=jg.zeros(10_000))
    >>> os.path.getsize(path) < 1000, jg.load(path)["z"].shape
    (True, (10000,))
    """
    kwds = _arrays(kwds)
    _write(file, ".npz", np.savez_compressed, tuple(map(_array, args)), kwds, allow_pickle)


def _write(file, suffix: str, numpy_save, args: tuple, kwds: dict, allow_pickle: bool) -> None:
    if hasattr(file, "write"):
        numpy_save(file, *args, allow_pickle=allow_pickle, **kwds)
        return
    path = os.fsdecode(os.fspath(file))
    if not path.endswith(suffix):  # as numpy: "a" names "a.npy"
        path += suffix
    with replacing(path) as f:
        numpy_save(f, *args, allow_pickle=allow_pickle, **kwds)


# -- text ----------------------------------------------------------------------------------


def loadtxt(
    fname,
    dtype=float,
    comments="#",
    delimiter=None,
    converters=None,
    skiprows=0,
    usecols=None,
    unpack=False,
    ndmin=0,
    encoding=None,
    max_rows=None,
    *,
    quotechar=None,
    like=None,
):
    """numpy's ``loadtxt`` (every keyword, numpy's parsing), returning a tensor, whose
    columns unpack into tensors with ``unpack=True`` (``x, y = loadtxt(f, unpack=True)``);
    numpy's array for a structured ``dtype``.

    >>> import io, jitgrad as jg
    >>> jg.loadtxt(io.StringIO("# x y\\n1 2\\n3 4\\n"), dtype=jg.int32)
    tensor([[1, 2],
            [3, 4]], dtype=jitgrad.int32)
    """
    result = np.loadtxt(
        fname,
        _numpy_dtype(dtype),
        comments,
        delimiter,
        converters,
        skiprows,
        usecols,
        unpack,
        ndmin,
        encoding,
        max_rows,
        quotechar=quotechar,
        like=_array(like),
    )
    return _tensors(result, f"loadtxt of {_name(fname)}")


def genfromtxt(
    fname,
    dtype=float,
    comments="#",
    delimiter=None,
    skip_header=0,
    skip_footer=0,
    converters=None,
    missing_values=None,
    filling_values=None,
    usecols=None,
    names=None,
    excludelist=None,
    deletechars=" !#$%&'()*+,-./:;<=>?@[\\]^{|}~",
    replace_space="_",
    autostrip=False,
    case_sensitive=True,
    defaultfmt="f%i",
    unpack=None,
    usemask=False,
    loose=True,
    invalid_raise=True,
    max_rows=None,
    encoding=None,
    *,
    ndmin=0,
    like=None,
):
    """numpy's ``genfromtxt`` (every keyword, missing values filled by numpy), returning a
    tensor. With ``names`` (or a structured ``dtype``) the result has named fields, which
    tensors do not have: it is numpy's structured array, its fields plain arrays; with
    ``usemask=True`` numpy's masked array.

    >>> import io, jitgrad as jg
    >>> jg.genfromtxt(io.StringIO("1,2\\n3,\\n"), delimiter=",", filling_values=-1)
    tensor([[ 1.,  2.],
            [ 3., -1.]])
    """
    result = np.genfromtxt(
        fname,
        _numpy_dtype(dtype),
        comments,
        delimiter,
        skip_header,
        skip_footer,
        converters,
        missing_values,
        filling_values,
        usecols,
        names,
        excludelist,
        deletechars,
        replace_space,
        autostrip,
        case_sensitive,
        defaultfmt,
        unpack,
        usemask,
        loose,
        invalid_raise,
        max_rows,
        encoding,
        ndmin=ndmin,
        like=_array(like),
    )
    return _tensors(result, f"genfromtxt of {_name(fname)}")


def savetxt(
    fname,
    X,
    fmt="%.18e",
    delimiter=" ",
    newline="\n",
    header="",
    footer="",
    comments="# ",
    encoding=None,
) -> None:
    """numpy's ``savetxt`` of a tensor (1-D or 2-D): the same text, byte for byte.

    >>> import io, jitgrad as jg
    >>> out = io.StringIO()
    >>> jg.savetxt(out, jg.arange(4).reshape(2, 2), fmt="%d", delimiter=",", header="a,b")
    >>> print(out.getvalue(), end="")
    # a,b
    0,1
    2,3
    """
    np.savetxt(fname, _array(X), fmt, delimiter, newline, header, footer, comments, encoding)


# -- raw bytes -----------------------------------------------------------------------------


def fromfile(file, dtype=None, count=-1, sep="", offset=0, *, like=None):
    """A tensor of the elements in ``file`` (a name or open file), as numpy's ``fromfile``:
    raw bytes of ``dtype`` (float64 by default), or text between ``sep``. It reads what
    ``Tensor.tofile`` writes.

    >>> import os, tempfile, jitgrad as jg
    >>> path = os.path.join(tempfile.mkdtemp(), "raw.bin")
    >>> jg.arange(6, dtype="int16").reshape(2, 3).T.tofile(path)
    >>> jg.fromfile(path, dtype=jg.int16)
    tensor([0, 3, 1, 4, 2, 5], dtype=jitgrad.int16)
    """
    result = np.fromfile(file, _numpy_dtype(dtype), count, sep, offset, like=_array(like))
    return _tensor(result, f"fromfile of {_name(file)}")


def frombuffer(buffer, dtype=None, count=-1, offset=0, *, like=None):
    """A 1-D tensor over ``buffer``'s memory (no copy), as numpy's ``frombuffer``: writes
    through a writable buffer (``bytearray``, ``memoryview``, ``mmap``, an array, a
    contiguous tensor) are seen by the tensor and back; a read-only buffer (``bytes``)
    gives a read-only tensor.

    >>> import jitgrad as jg
    >>> raw = bytearray(8)
    >>> t = jg.frombuffer(raw, dtype=jg.int16)
    >>> raw[2] = 7
    >>> t
    tensor([0, 7, 0, 0], dtype=jitgrad.int16)
    """
    if isinstance(buffer, TensorBase):
        buffer = TensorBase.numpy(buffer)
    result = np.frombuffer(buffer, _numpy_dtype(dtype), count, offset, like=_array(like))
    return _tensor(result, f"frombuffer of a {type(buffer).__name__}", shared=True)


def fromiter(iter, dtype, count=-1, *, like=None):  # noqa: A002  numpy's name
    """A 1-D tensor of the values ``iter`` yields, as numpy's ``fromiter``.

    >>> import jitgrad as jg
    >>> jg.fromiter((i * i for i in range(4)), dtype=jg.float32)
    tensor([0., 1., 4., 9.], dtype=jitgrad.float32)
    """
    result = np.fromiter(iter, _numpy_dtype(dtype), count, like=_array(like))
    return _tensor(result, "fromiter")


# -- arrays in, tensors out ----------------------------------------------------------------


def _array(obj):
    """A tensor as the numpy array over its memory; anything else as given, for numpy."""
    return TensorBase.numpy(obj) if isinstance(obj, TensorBase) else obj


def _arrays(named: dict) -> dict:
    return {name: _array(value) for name, value in named.items()}


def _numpy_dtype(dtype):
    return dtype.numpy if isinstance(dtype, DType) else dtype


def _tensors(result, where: str):
    if isinstance(result, (list, tuple)):  # unpack=True of a structured result: its fields
        return type(result)(_tensor(a, where) for a in result)
    return _tensor(result, where)


def _tensor(a, where: str, shared: bool = False):
    """numpy's result as a tensor over its memory; what tensors cannot hold as numpy's own
    (see the module's docstring) or a ``TypeError`` naming the dtype."""
    if not isinstance(a, np.ndarray) or isinstance(a, np.ma.MaskedArray):
        return a  # a pickled object, a masked array
    if a.dtype.kind in "OVUS":  # not numbers: objects, records, strings
        return a
    if not a.dtype.isnative:
        if shared:
            raise ValueError(
                f"{where}: cannot share memory of dtype {a.dtype.str!r}, stored in the other "
                "byte order: load it without mmap_mode (a copy in native order)"
            )
        a = a.astype(a.dtype.newbyteorder("="))
    try:
        return from_numpy(a)
    except TypeError as e:
        raise TypeError(f"{where}: {e}") from None


def _name(file) -> str:
    """The file as error messages name it."""
    if isinstance(file, (str, bytes, os.PathLike)):
        return repr(os.fsdecode(os.fspath(file)))
    name = getattr(file, "name", None)
    return repr(name) if isinstance(name, str) else f"a {type(file).__name__}"
