"""Tensors between Dask workers: a header (dtype, shape, strides, offset) and one raw frame
of the storage bytes the tensor covers, registered with ``distributed``'s ``dask_serialize``
so that no tensor is pickled on its way.

The frame is a memoryview over the tensor's own memory (no copy): a view sends the bytes
from its lowest to its highest element, and one whose elements are sparse in that span (a
long stride) sends a compact copy instead. The receiver wraps the frame it was given.

>>> import jitgrad as jg
>>> from distributed.protocol import deserialize, serialize
>>> t = jg.arange(12.0).reshape(3, 4)[:, 1:3]
>>> header, frames = serialize(t, serializers=["dask"])
>>> frames[0].nbytes, deserialize(header, frames).tolist()
(80, [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]])
"""

from __future__ import annotations

import numpy as np
from distributed.protocol import dask_deserialize, dask_serialize

from ..autograd.tensor import Tensor
from ..dtypes import as_dtype
from ..storage import UntypedStorage, buffers, storage_class
from ..strided import layout
from ..tensor import TensorBase

# A view whose span holds more than this many times its elements travels as a compact copy.
SPARSE_SPAN = 2


def serialize_tensor(t: TensorBase) -> tuple[dict, list]:
    """``(header, [frame])``: the bytes ``t`` covers and how to read them."""
    itemsize = t.dtype.itemsize
    numel = t.numel()
    if numel == 0:
        lo = hi = t.storage_offset()
    else:
        lo, hi = layout.extent(t.shape, t.stride(), t.storage_offset())
        if hi - lo + 1 > SPARSE_SPAN * numel:
            t = t.contiguous()
            lo, hi = 0, numel - 1
    data = t.untyped_storage()._data()
    stop = (hi + 1) * itemsize if numel else lo * itemsize
    frame = memoryview(data[lo * itemsize : stop])
    header = {
        "dtype": t.dtype.name,
        "shape": list(t.shape),
        "strides": list(t.stride()),
        "offset": t.storage_offset() - lo,
        "requires_grad": bool(getattr(t, "requires_grad", False)),
        "writeable": bool(data.flags.writeable),
    }
    return header, [frame]


def deserialize_tensor(header: dict, frames: list) -> Tensor:
    """The tensor ``serialize_tensor`` described, over the received frame's memory (copied
    only when jitgrad cannot use it as it is: read-only for a writable tensor, or not
    aligned to the element size)."""
    (frame,) = frames
    dtype = as_dtype(header["dtype"])
    data = np.frombuffer(frame, dtype=np.uint8)
    aligned = data.ctypes.data % dtype.itemsize == 0
    if not aligned or (header["writeable"] and not data.flags.writeable):
        copy = buffers.allocate(data.size)
        copy[...] = data
        data = copy
    storage = storage_class(dtype).from_untyped(UntypedStorage._wrap(data))
    t = Tensor(storage, tuple(header["shape"]), tuple(header["strides"]), header["offset"])
    if header["requires_grad"]:  # as jg.save: a leaf that requires grad
        t.requires_grad_(True)
    return t


def register() -> None:
    """Make ``distributed`` send jitgrad tensors (and their subclasses) this way."""
    dask_serialize.register(TensorBase)(serialize_tensor)
    dask_deserialize.register(TensorBase)(deserialize_tensor)
