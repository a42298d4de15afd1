"""Dask arrays whose chunks are jitgrad tensors.

Dask runs numpy's functions on its chunks; on tensors they run as jitgrad's ops (numpy's
``__array_function__`` and ``__array_ufunc__``, ``ops/numpy_protocol.py``), and the
dispatch tables below send Dask's own concatenation, tensordot, empty chunks and element
counts to jitgrad directly.

>>> import jitgrad as jg, jitgrad.dask as jgd
>>> x = jgd.from_tensor(jg.arange(12.0).reshape(3, 4), chunks=(2, 2))
>>> total = (x * 2).sum(axis=0).compute()
>>> type(total).__name__, total.tolist()
('Tensor', [24.0, 30.0, 36.0, 42.0])
"""

from __future__ import annotations

import functools
import math
import os

import dask.array as da
import numpy as np
from dask.array import dispatch
from dask.base import normalize_token
from dask.sizeof import sizeof

from .. import creation
from ..dtypes import as_dtype
from ..io import serialize
from ..ops import linalg, movement
from ..tensor import TensorBase


def from_tensor(t: TensorBase, chunks="auto", *, name=None) -> da.Array:
    """A Dask array of ``t`` cut into ``chunks`` (Dask's chunk spec): each chunk a view of
    ``t``'s memory, computed on with jitgrad."""
    if not isinstance(t, TensorBase):
        raise TypeError(f"from_tensor expects a jitgrad tensor, got {type(t).__name__}")
    return da.from_array(t, chunks=chunks, name=name, asarray=False, meta=_meta(t))


def from_file(path, chunks="auto", *, key=None) -> da.Array:
    """A Dask array of the tensor in a file ``jg.save`` wrote, read chunk by chunk.

    Each chunk's task maps the file (``jg.load(path, mmap=True)``, once per process) and
    takes its slice as a view of the mapping: the file is never read whole, and a chunk's
    bytes are read when the chunk is used. ``key`` picks the tensor in a file that holds a
    dict, list or tuple of them (a dict's key, a sequence's index).
    """
    path = os.path.abspath(os.fspath(path))
    status = os.stat(path)
    stamp = (status.st_mtime_ns, status.st_size)
    t = _saved_tensor(path, key, stamp)
    source = _SavedTensor(path, key, stamp, tuple(t.shape), t.dtype.numpy)
    return da.from_array(source, chunks=chunks, asarray=False, fancy=False, meta=_meta(t))


class _SavedTensor:
    """A tensor saved in a file, as Dask's ``from_array`` reads one (shape, dtype,
    indexing), that pickles as its path: a chunk's task maps the file where it runs."""

    def __init__(self, path: str, key, stamp: tuple, shape: tuple, dtype):
        self.path, self.key, self.stamp = path, key, stamp
        self.shape, self.dtype, self.ndim = shape, dtype, len(shape)

    def __getitem__(self, index):
        return _saved_tensor(self.path, self.key, self.stamp)[index]

    def __dask_tokenize__(self):
        return ("jitgrad-saved-tensor", self.path, repr(self.key), self.stamp)


@functools.lru_cache(maxsize=16)
def _mapped_file(path: str, stamp: tuple):
    # (stamp: a file replaced since, as jg.save replaces files, maps afresh)
    return serialize.load(path, mmap=True)


def _saved_tensor(path: str, key, stamp: tuple) -> TensorBase:
    saved = _mapped_file(path, stamp)
    if key is None:
        if not isinstance(saved, TensorBase):
            raise ValueError(
                f"{path} holds a {type(saved).__name__}, not one tensor: pass key= to pick "
                "one of its tensors"
            )
        return saved
    try:
        found = saved[key]
    except (KeyError, IndexError, TypeError):
        raise KeyError(f"{path} holds no tensor at key {key!r}") from None
    if not isinstance(found, TensorBase):
        raise ValueError(f"{path} holds a {type(found).__name__} at key {key!r}, not a tensor")
    return found


def _meta(t: TensorBase) -> TensorBase:
    """Dask's ``meta`` of an array of chunks like ``t``: an empty tensor of its dtype."""
    return creation.empty((0,) * t.ndim, dtype=t.dtype)


def _sizeof(t: TensorBase) -> int:
    return t.nbytes


def _normalize(t: TensorBase):
    return ("jitgrad", t.dtype.name, normalize_token(t.numpy()))


def _empty(shape, dtype=None, **kwargs):
    return creation.empty(shape, dtype=None if dtype is None else as_dtype(dtype), **kwargs)


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """The elements a reduction over ``axis`` of chunk ``x`` counts (Dask's mean and
    variance divide by it), as a tensor of the reduction's shape."""
    dims = range(x.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    dims = {d % x.ndim for d in dims}
    count = math.prod(x.shape[d] for d in dims)
    kept = [1 if d in dims else n for d, n in enumerate(x.shape)]
    shape = kept if keepdims else [n for d, n in enumerate(x.shape) if d not in dims]
    return creation.full(tuple(shape), count, dtype=as_dtype(dtype or np.float64))


def _nannumel(x, **kwargs):
    return np.sum(~np.isnan(x), **kwargs)


def register() -> None:
    """Register jitgrad tensors in Dask's chunk dispatch, ``sizeof`` and tokenizer."""
    dispatch.concatenate_lookup.register(TensorBase)(movement.concatenate)
    dispatch.tensordot_lookup.register(TensorBase)(linalg.tensordot)
    dispatch.empty_lookup.register(TensorBase)(_empty)
    dispatch.numel_lookup.register(TensorBase)(_numel)
    dispatch.nannumel_lookup.register(TensorBase)(_nannumel)
    sizeof.register(TensorBase)(_sizeof)
    normalize_token.register(TensorBase)(_normalize)
