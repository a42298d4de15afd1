"""TensorBase: a typed storage seen through a shape, strides (in elements) and an offset.

Element ``(i0, …, in)`` lives at ``storage[offset + Σ ik·sk]``. Every view below makes new
metadata over the same storage and never copies; copies are explicit (``contiguous``,
``clone``, ``astype``, a cast in ``copy_``) and run the kernels in ``strided/``.

This is the data half of a tensor, as ``TensorBase`` is in PyTorch: nothing here records
gradients. ``jitgrad.Tensor`` (autograd layer) derives from it; every tensor made here is
of the caller's class, so a view of a ``Tensor`` is a ``Tensor``.
"""

from __future__ import annotations

import copyreg
import operator

import numpy as np

from . import dtypes, tiers
from ._config import config
from .device import CPU, Device, check_device
from .recording import read_value, run
from .storage import Storage, UntypedStorage, storage_class
from .storage import kernels as storage_kernels
from .strided import layout
from .strided.copy import copy_strided

_ndarray = np.ndarray


class TensorBase:
    """An n-dimensional view of a flat storage.

    >>> import jitgrad as jg
    >>> points = jg.arange(9).reshape(3, 3)
    >>> sub = points[1:3, 1:3]
    >>> sub.storage_offset(), sub.stride(), sub.is_contiguous()
    (4, (3, 1), False)
    >>> sub.contiguous().tolist()
    [[4, 5], [7, 8]]
    """

    __slots__ = ("_storage", "_shape", "_strides", "_offset", "__weakref__")
    __array_priority__ = 100  # numpy defers mixed operations to the tensor

    def __init__(self, storage: Storage, shape, strides=None, offset: int = 0):
        if not isinstance(storage, Storage):
            raise TypeError(f"a tensor is built over a typed storage, got {type(storage).__name__}")
        shape = layout.as_shape(shape)
        strides = layout.contiguous_strides(shape) if strides is None else _int_tuple(strides)
        if len(strides) != len(shape):
            raise ValueError(f"shape {shape} and strides {strides} differ in length")
        offset = operator.index(offset)
        layout.check_in_bounds(shape, strides, offset, storage.size())
        storage.untyped()._under_tensors = True
        self._storage = storage
        self._shape = shape
        self._strides = strides
        self._offset = offset

    @classmethod
    def _make(cls, storage: Storage, shape, strides, offset: int):
        """A tensor over a layout known to be valid (no checks: the hot path of views)."""
        t = cls.__new__(cls)
        t._storage = storage
        t._shape = tuple(shape)
        t._strides = tuple(strides)
        t._offset = offset
        return t

    @classmethod
    def _uninitialised(cls, shape, dtype):
        """A new contiguous tensor whose elements are yet to be written: every op's result."""
        return cls._make(
            storage_class(dtype)._uninitialised(layout.numel(shape)),
            shape,
            layout.contiguous_strides(shape),
            0,
        )

    def _view(self, shape, strides, offset=None):
        # Layouts derived from an in-bounds one stay in bounds: no check needed. An empty
        # view reads nothing, but an offset moved by its index (an integer into a (4, 0)
        # tensor, whose storage is empty) may leave the storage: it keeps its base's.
        if offset is None or 0 in shape:
            offset = self._offset
        return self._make(self._storage, shape, strides, offset)

    # -- metadata ------------------------------------------------------------------------

    @property
    def dtype(self) -> dtypes.DType:
        return self._storage.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> SizeInt:
        """The number of elements, an ``int`` as numpy's ``a.size``; calling it gives
        PyTorch's ``t.size()`` (the shape) and ``t.size(dim)`` (one length)."""
        return SizeInt(self._shape)

    def numel(self) -> int:
        return layout.numel(self._shape)

    def stride(self, dim: int | None = None):
        """Strides in elements, or the stride of one dimension (PyTorch's ``stride``;
        numpy's ``strides`` attribute counts bytes)."""
        if dim is None:
            return self._strides
        return self._strides[layout.normalize_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, as numpy's ``a.strides`` (``stride()`` counts elements)."""
        itemsize = self.dtype.itemsize
        return tuple(s * itemsize for s in self._strides)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def flags(self) -> TensorFlags:
        """numpy's memory-layout flags (``t.flags["C_CONTIGUOUS"]``, ``t.flags.writeable``),
        read-only: a tensor's layout changes only through its methods."""
        return TensorFlags(self)

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def storage(self) -> Storage:
        self._storage.untyped()._under_tensors = True
        return self._storage

    def untyped_storage(self):
        return self.storage().untyped()

    def data_ptr(self) -> int:
        """Address of the first element (storage address + offset × itemsize)."""
        return self._storage.data_ptr() + self._offset * self.dtype.itemsize

    def is_contiguous(self) -> bool:
        return layout.is_contiguous(self._shape, self._strides)

    # -- views ---------------------------------------------------------------------------

    def __getitem__(self, key) -> TensorBase:
        shape, strides, offset = layout.index_layout(self._shape, self._strides, self._offset, key)
        return self._view(shape, strides, offset)

    def view(self, *shape) -> TensorBase:
        """The same elements in another shape, without copying; an error when the strides
        make that impossible (``reshape`` copies instead)."""
        if is_dtype_arg(shape):
            return self._view_as_dtype(dtypes.as_dtype(shape[0]))
        shape = layout.infer_shape(_shape_args(shape), self.numel())
        strides = layout.view_strides(self._shape, self._strides, shape)
        if strides is None:
            raise ValueError(
                f"cannot view shape {self._shape} with strides {self._strides} as {shape}: "
                "not contiguous along the merged dimensions; use reshape()"
            )
        return self._view(shape, strides)

    def _view_as_dtype(self, dtype: dtypes.DType) -> TensorBase:
        """The same bytes read as ``dtype`` (numpy's ``a.view(dtype)``): a new itemsize
        rescales the last dimension, which must then be contiguous."""
        old, new = self.dtype.itemsize, dtype.itemsize
        shape = list(self._shape)
        strides = [s * old for s in self._strides]  # in bytes from here on
        if old != new:
            if not self.ndim:
                raise ValueError(
                    f"cannot view a 0-d {self.dtype.name} tensor as {dtype.name}: the "
                    "itemsizes differ; view a 1-d tensor instead"
                )
            if shape[-1] != 1 and strides[-1] != old:
                raise ValueError(
                    f"cannot view a tensor with strides {self._strides} as {dtype.name}: the "
                    "last dimension must be contiguous when the itemsize changes"
                )
            if shape[-1] * old % new:
                raise ValueError(
                    f"cannot view shape {self._shape} of {self.dtype.name} as {dtype.name}: the "
                    f"last dimension's {shape[-1] * old} bytes are not a multiple of {new}"
                )
            shape[-1], strides[-1] = shape[-1] * old // new, new
        offset = self._offset * old
        if offset % new or any(s % new for s in strides):
            raise ValueError(
                f"cannot view this {self.dtype.name} tensor as {dtype.name}: its offset or "
                f"strides in bytes ({offset}, {tuple(strides)}) are not multiples of {new}"
            )
        storage = self._storage._as_dtype(dtype)
        storage.untyped()._under_tensors = True
        return self._make(storage, shape, [s // new for s in strides], offset // new)

    def reshape(self, *shape) -> TensorBase:
        """A view when the strides allow one, else a contiguous copy (as numpy)."""
        return self.reshaped(layout.infer_shape(_shape_args(shape), self.numel()))

    def reshaped(self, shape: tuple) -> TensorBase:
        """``reshape`` to a resolved ``shape`` of as many elements (no -1)."""
        strides = layout.view_strides(self._shape, self._strides, shape)
        if strides is None:
            return self.contiguous().view(shape)
        return self._view(shape, strides)

    def permute(self, *dims) -> TensorBase:
        dims = _shape_args(dims)
        axes = [layout.normalize_dim(d, self.ndim) for d in dims]
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"permute({tuple(dims)}) is not a permutation of {self.ndim} dims")
        return self._view([self._shape[a] for a in axes], [self._strides[a] for a in axes])

    def transpose(self, *dims, axes=None) -> TensorBase:
        """See ``transposed_axes``: two dims are swapped (PyTorch), anything else is
        numpy's permutation."""
        return self.permute(transposed_axes(self.ndim, dims, axes))

    def swapaxes(self, dim0: int, dim1: int) -> TensorBase:
        return self.permute(layout.swapped(self.ndim, dim0, dim1))

    @property
    def T(self) -> TensorBase:
        return self.transpose()

    @property
    def mT(self) -> TensorBase:
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, got {self.ndim}")
        return self.swapaxes(-2, -1)

    def expand(self, *sizes) -> TensorBase:
        """Repeat size-1 dimensions with stride 0 (``-1`` keeps a size); never copies."""
        sizes = _shape_args(sizes)
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise ValueError(f"expand{tuple(sizes)} has fewer dimensions than shape {self._shape}")
        target = tuple(
            self._shape[i - lead] if n == -1 and i >= lead else operator.index(n)
            for i, n in enumerate(sizes)
        )
        if any(n < 0 for n in target):
            raise ValueError(f"invalid size {tuple(sizes)} for expand")
        return self.broadcast_to(target)

    def broadcast_to(self, shape) -> TensorBase:
        shape = layout.as_shape(shape)
        return self._view(shape, layout.broadcast_strides(self._shape, self._strides, shape))

    def squeeze(self, dim=None) -> TensorBase:
        if dim is None:
            keep = [i for i, n in enumerate(self._shape) if n != 1]
        else:
            dims = layout.normalize_dims(_dims_arg(dim), self.ndim)
            for d in dims:
                if self._shape[d] != 1:
                    raise ValueError(f"cannot squeeze dimension {d} of size {self._shape[d]}")
            keep = [i for i in range(self.ndim) if i not in dims]
        return self._view([self._shape[i] for i in keep], [self._strides[i] for i in keep])

    def unsqueeze(self, dim: int) -> TensorBase:
        d = layout.normalize_dim(dim, self.ndim + 1)
        stride = self._strides[d] * self._shape[d] if d < self.ndim else 1
        return self._view(
            self._shape[:d] + (1,) + self._shape[d:],
            self._strides[:d] + (stride,) + self._strides[d:],
        )

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> TensorBase:
        if self.ndim == 0:
            return self.reshape(1)
        start = layout.normalize_dim(start_dim, self.ndim)
        end = layout.normalize_dim(end_dim, self.ndim)
        if start > end:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        merged = layout.numel(self._shape[start : end + 1])
        return self.reshape(self._shape[:start] + (merged,) + self._shape[end + 1 :])

    def narrow(self, dim: int, start: int, length: int) -> TensorBase:
        if not self.ndim:
            raise IndexError("narrow() cannot be applied to a 0-d tensor")
        d = layout.normalize_dim(dim, self.ndim)
        n = self._shape[d]
        start = operator.index(start)
        if start < 0:
            start += n
        if not 0 <= start <= n or not 0 <= length <= n - start:
            raise IndexError(
                f"narrow: [{start}, {start}+{length}) is outside dimension {d} of size {n}"
            )
        index = [slice(None)] * self.ndim
        index[d] = slice(start, start + length)
        return TensorBase.__getitem__(self, tuple(index))

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TensorBase:
        a, b = layout.normalize_dim(dim1, self.ndim), layout.normalize_dim(dim2, self.ndim)
        if a == b:
            raise ValueError(f"diagonal needs two different dimensions, got {dim1} and {dim2}")
        n1, n2 = self._shape[a], self._shape[b]
        if offset >= 0:
            length, start = max(min(n1, n2 - offset), 0), offset * self._strides[b]
        else:
            length, start = max(min(n1 + offset, n2), 0), -offset * self._strides[a]
        rest = [i for i in range(self.ndim) if i not in (a, b)]
        return self._view(
            [self._shape[i] for i in rest] + [length],
            [self._strides[i] for i in rest] + [self._strides[a] + self._strides[b]],
            self._offset + start,
        )

    def flip(self, dims=None) -> TensorBase:
        if dims is None:
            dims = range(self.ndim)
        index = [slice(None)] * self.ndim
        for d in layout.normalize_dims(_dims_arg(dims), self.ndim):
            index[d] = slice(None, None, -1)
        return TensorBase.__getitem__(self, tuple(index))

    def as_strided(self, size, stride, storage_offset: int | None = None) -> TensorBase:
        """Any layout over the same storage, checked to stay inside it."""
        offset = self._offset if storage_offset is None else storage_offset
        return type(self)(self._storage, size, stride, offset)

    def set_(self, source=None, storage_offset: int = 0, size=None, stride=None) -> TensorBase:
        """Point this tensor at ``source`` (a storage or a tensor) with a new layout."""
        if isinstance(source, TensorBase):
            storage, storage_offset, size, stride = (
                source._storage,
                source._offset,
                source._shape,
                source._strides,
            )
        elif isinstance(source, Storage):
            storage = source
        else:
            raise TypeError(f"set_ expects a storage or a tensor, got {type(source).__name__}")
        if storage.dtype is not self.dtype:
            raise TypeError(f"set_: storage of {storage.dtype.name} for a {self.dtype.name} tensor")
        size = (storage.size(),) if size is None else size
        new = TensorBase(storage, size, stride, storage_offset)
        self._storage, self._shape, self._strides, self._offset = (
            new._storage,
            new._shape,
            new._strides,
            new._offset,
        )
        config.memory_epoch += 1
        return self

    # -- copies --------------------------------------------------------------------------

    def _copied(self, dtype=None) -> TensorBase:
        """A contiguous copy in a fresh storage: nothing to check about a destination that
        nothing else can see or overlap."""
        d = dtype
        if d is None:
            d = self._storage.dtype
        elif d.__class__ is not dtypes.DType:
            d = dtypes.as_dtype(d)
        signature = ("copy", self.__class__, self._storage.dtype, self._shape, self._strides, d)
        if config.thread.tape is None:  # (a trace records the kernel's copy)
            call = tiers.calls.get(signature)
            if call is not None:
                return call(self)
        storage_type = storage_class(d)
        if (
            tiers.small(layout.numel(self._shape))
            and storage_type._holds_small(1)
            and (d.is_complex or not self._storage.dtype.is_complex)
        ):
            # numpy's copy and cast loops, into a new array that becomes the storage (a
            # complex to real cast stays with the kernel, which drops the imaginary part
            # without numpy's warning); remembered for the layout
            try:
                self.numpy()
            except ValueError:  # (numpy's bounds check: the layout left a shrunk storage)
                self._check_in_storage()  # raises, naming the problem
                raise
            call = _numpy_copy(self, storage_type)
            tiers.remember(signature, call)
            return call(self)
        out = self._uninitialised(self._shape, d)
        if out.numel():
            self._check_in_storage()
            source, target = self._storage, out._storage
            run(
                copy_strided,
                source.kernel_array,
                source.half_flag,
                self._offset,
                self._strides,
                target.kernel_array,
                target.half_flag,
                0,
                out._strides,
                self._shape,
            )
        return out

    def contiguous(self) -> TensorBase:
        """Self when already row-major dense, else a copy into a new storage."""
        if self.is_contiguous():
            return self
        return self.clone()

    def clone(self) -> TensorBase:
        return self._copied()

    def astype(self, dtype, copy: bool = True) -> TensorBase:
        d = dtypes.as_dtype(dtype)
        if d is self.dtype and not copy:
            return self
        return self._copied(d)

    def to(self, dtype) -> TensorBase:
        """Self when already of ``dtype``, else a cast copy (PyTorch)."""
        return self.astype(dtype, copy=False)

    def copy_(self, src) -> TensorBase:
        """Copy ``src`` (tensor, array, sequence or scalar) into this tensor, broadcasting
        and casting."""
        self._copy_from(self._source(src).broadcast_to(self._shape))
        return self

    def _source(self, src) -> TensorBase:
        """``src`` (tensor, array, sequence or scalar) as a tensor to copy into this one."""
        if _is_scalar(src):
            return scalar_tensor(src, self.dtype)
        if not isinstance(src, TensorBase):
            return wrap_numpy(assigned_array(src, self.dtype), TensorBase)
        return src

    def fill_(self, value) -> TensorBase:
        if self.is_contiguous():
            self._check_writable()
            self._check_in_storage()
            bits = self._storage._kernel_scalar(value)
            self._storage._written()
            start = self._offset
            run(storage_kernels.fill, self._storage.kernel_array, start, start + self.numel(), bits)
            return self
        return self.copy_(value)

    def zero_(self) -> TensorBase:
        return self.fill_(0)

    def __setitem__(self, key, value) -> None:
        view = TensorBase.__getitem__(self, key)
        view._copy_from(assigned_value(view._source(value), view.ndim).broadcast_to(view._shape))

    def _check_writable(self) -> None:
        if not self._storage.array.flags.writeable:
            raise ValueError("tensor is read-only: it shares memory with a read-only buffer")

    def _check_in_storage(self) -> None:
        # Kernels trust the layout; a storage shrunk by resize_() after this tensor was made
        # would let them write past its end.
        layout.check_in_bounds(self._shape, self._strides, self._offset, self._storage.size())

    def _copy_from(self, src: TensorBase) -> None:
        """Elementwise copy of a same-shaped tensor, staging through a temporary when the
        two overlap in memory."""
        self._check_writable()
        if self.numel() == 0:
            return
        for n, s in zip(self._shape, self._strides):
            if s == 0 and n > 1:
                raise ValueError(
                    f"cannot write into a broadcast view (shape {self._shape}, strides "
                    f"{self._strides}): several elements share one memory location"
                )
        self._check_in_storage()
        src._check_in_storage()
        if _may_overlap(self, src) and not _same_layout(self, src):
            src = src.clone()
        self._storage._written()
        source = (src._storage.kernel_array, src._storage.half_flag, src._offset, src._strides)
        target = (self._storage.kernel_array, self._storage.half_flag, self._offset, self._strides)
        run(copy_strided, *source, *target, self._shape)

    # -- pickling ------------------------------------------------------------------------

    def __reduce_ex__(self, protocol):
        """Pickle the storage and the layout: tensors pickled together that share a storage
        share it again once loaded (see ``UntypedStorage.__reduce_ex__`` for storages in
        shared memory or files)."""
        return copyreg.__newobj__, (type(self),), self.__getstate__()

    def __getstate__(self):
        return self._storage, self._shape, self._strides, self._offset

    def __setstate__(self, state) -> None:
        # Checked as a tensor built by hand is: a layout reaching past its storage would
        # have the kernels read outside it.
        TensorBase.__init__(self, *state[:4])

    # -- Python and numpy interop --------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A numpy array sharing this tensor's memory (same data pointer, no copy)."""
        # Eager ops call this on every array they hand to BLAS or a kernel: no property
        # calls and no generator frame beyond the storage's array.
        array, strides = self._storage.array, self._strides
        if strides == (1,) and array.shape == self._shape and not self._offset:
            return array.view()  # (the whole of its storage, flat: the commonest)
        itemsize = array.itemsize
        if len(strides) == 2:  # (the commonest view after a vector: a matrix's)
            in_bytes = (strides[0] * itemsize, strides[1] * itemsize)
        else:
            in_bytes = tuple([s * itemsize for s in strides])
        return _ndarray(self._shape, array.dtype, array, self._offset * itemsize, in_bytes)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(
                    f"cannot convert a {self.dtype.name} tensor to {dtype} without a copy"
                )
            return a.astype(dtype)
        return a.copy() if copy else a

    # The Array API standard's array protocol: its namespace, its device, DLPack (numpy's
    # own exporter, over the memory this tensor shares with its array: zero-copy).

    def __array_namespace__(self, *, api_version: str | None = None):
        import jitgrad

        if api_version not in (None, *jitgrad.array_api.SUPPORTED_VERSIONS):
            raise ValueError(
                f"jitgrad implements the Array API standard {jitgrad.__array_api_version__}, "
                f"not {api_version!r}"
            )
        return jitgrad

    @property
    def device(self) -> Device:
        return CPU

    def to_device(self, device, /, *, stream=None):
        """This tensor on ``device``: itself, since jitgrad has the CPU only."""
        check_device(device)
        return self

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.numpy().__dlpack__(
            stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.numpy().__dlpack_device__()

    def item(self, *index):
        """One element as a Python number: the only one, or the one at a flat index or
        a multi-index (numpy's ``a.item(*args)``)."""
        if not index:
            return self._scalar("item()")
        read_value("item()")
        return self.numpy().item(*index)

    def tobytes(self, order: str = "C") -> bytes:
        """The elements' raw bytes in ``order`` (numpy's ``tobytes``)."""
        read_value("tobytes()")
        return self.numpy().tobytes(order)

    def _scalar(self, how: str):
        """The one element as a Python number, for ``how`` (item(), float()...)."""
        if self.numel() != 1:
            raise ValueError(f"{how} needs a tensor of one element, this one has {self.numel()}")
        read_value(how, depth=2)
        return self.numpy().item()

    def tolist(self):
        read_value("tolist()")
        return self.numpy().tolist()

    def tofile(self, fid, sep: str = "", format: str = "%s") -> None:  # noqa: A002  numpy's
        """Write the elements in C order to ``fid`` (a file name or open file), as numpy's
        ``ndarray.tofile``: raw bytes, or text between ``sep`` when ``sep`` is given.
        ``jg.fromfile`` reads them back."""
        read_value("tofile()")
        self.numpy().tofile(fid, sep, format)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to "
                "check that an array is not empty."
                if self.numel() == 0
                else "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._scalar("bool()"))

    def __float__(self) -> float:
        return float(self._scalar("float()"))

    def __int__(self) -> int:
        return int(self._scalar("int()"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex()"))

    def __index__(self) -> int:
        # numpy's rule for the dtype (integers only, not bools); PyTorch's for the shape
        # (any one-element tensor).
        if self.numel() != 1 or self.dtype.kind not in "iu":
            raise TypeError(
                "only integer scalar arrays can be converted to a scalar index, got dtype "
                f"{self.dtype.name} and shape {self._shape}"
            )
        return int(self._scalar("an index"))

    def __round__(self, ndigits: int | None = None):
        """``round(t)`` is a Python int and ``round(t, 2)`` a 0-d tensor of t's dtype, as
        for numpy's scalars (0-d tensors only, as numpy's arrays have no ``__round__``)."""
        if self.ndim != 0 or self.dtype.kind not in "iuf":
            raise TypeError(
                f"round() needs a 0-d real number tensor, got dtype {self.dtype.name} and "
                f"shape {self._shape}"
            )
        if ndigits is None:
            return round(self._scalar("round()"))
        return self.round(ndigits)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its number (``f"{loss:.3f}"``), as numpy's scalars do."""
        if self.ndim == 0:
            return format(self._scalar("format()"), spec)
        if spec:
            raise TypeError(
                f"unsupported format string {spec!r} for a tensor of shape "
                f"{self.shape}: format its elements, or a 0-d tensor"
            )
        return str(self)

    def __repr__(self) -> str:
        prefix = "tensor("
        body = np.array2string(self.numpy(), separator=", ", prefix=prefix)
        default = (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_)
        suffix = "" if self.dtype in default else f", dtype={self.dtype!r}"
        if self.numel() == 0:
            suffix = f", size={self._shape}{suffix}"
        return f"{prefix}{body}{suffix})"


def transposed_axes(ndim: int, dims: tuple, axes=None) -> tuple[int, ...]:
    """The permutation ``t.transpose(*dims)`` (or ``axes=``) asks for.

    No argument (or None): the dimensions reversed, as numpy's ``a.transpose()``. Two
    integers: those two dimensions swapped, as PyTorch's ``t.transpose(0, 1)``, whatever
    the number of dimensions. One sequence, ``axes=``, or one integer per dimension of a
    tensor that is not 2-D: numpy's full permutation.
    """
    if axes is not None:
        if dims:
            raise TypeError("transpose: give the axes as arguments or as axes=, not both")
        dims = (axes,)
    if not dims or (len(dims) == 1 and dims[0] is None):
        return tuple(range(ndim - 1, -1, -1))
    if len(dims) == 2 and all(layout.is_index(d) for d in dims):
        return tuple(layout.swapped(ndim, *dims))
    return _shape_args(dims)


class SizeInt(int):
    """A tensor's element count: a real ``int`` (numpy's ``a.size``) that PyTorch's
    ``t.size()`` and ``t.size(dim)`` can call for the shape and one length.

    >>> import jitgrad as jg
    >>> t = jg.zeros((2, 3))
    >>> t.size, t.size == 6, t.size(), t.size(-1)
    (6, True, (2, 3), 3)
    """

    def __new__(cls, shape: tuple[int, ...]):
        self = super().__new__(cls, layout.numel(shape))
        self.shape = shape
        return self

    def __call__(self, dim: int | None = None):
        if dim is None:
            return self.shape
        return self.shape[layout.normalize_dim(dim, len(self.shape))]

    def __reduce__(self):
        return int, (int(self),)  # a plain int once pickled or copied


def is_dtype_arg(args: tuple) -> bool:
    """Whether ``view(*args)`` names a dtype (numpy's ``a.view(dtype)``) rather than a shape."""
    return len(args) == 1 and isinstance(args[0], (dtypes.DType, np.dtype, str, type))


def _int_tuple(values) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"expected a sequence of integers, got {values!r}") from None


def _shape_args(args):
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f(np.array([2, 3]))`` alike."""
    if len(args) == 1 and not layout.is_index(args[0]):
        return tuple(args[0])
    return args


def _dims_arg(dim):
    return (dim,) if layout.is_index(dim) else tuple(dim)


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


def scalar_tensor(value, dtype: dtypes.DType, cls: type[TensorBase] = TensorBase):
    """A 0-d tensor of class ``cls`` holding ``value`` cast to ``dtype`` (numpy's casting:
    an out-of-range integer is an OverflowError)."""
    storage = storage_class(dtype)(1)
    storage[0] = value
    return cls._make(storage, (), (), 0)


def assigned_array(value, dtype: dtypes.DType) -> np.ndarray:
    """A non-tensor ``value`` written into a tensor of ``dtype``, converted as numpy's
    ``__setitem__`` converts it: an array as it is (the write casts it unsafely), Python
    values checked against the dtype (an out-of-range int is an OverflowError, NaN into an
    integer dtype a ValueError, a complex into a real one a TypeError)."""
    return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype.numpy)


def assigned_value(value, ndim: int):
    """``value`` (a tensor) as ``x[key] = value`` writes it into ``ndim`` dimensions: numpy
    and PyTorch drop a value's extra leading size-1 dimensions there (``t[0] = ones((1, 3))``
    for a (2, 3) ``t``), though broadcasting, and so ``copy_``, would not. A recorded
    tensor's reshape is recorded."""
    extra = value.ndim - ndim
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):
        return value.reshape(value.shape[extra:])
    return value


def _may_overlap(a: TensorBase, b: TensorBase) -> bool:
    # Bounds only: exact overlap is NP-hard in general and a needless stage is just a copy.
    return np.may_share_memory(a.numpy(), b.numpy())


def _same_layout(a: TensorBase, b: TensorBase) -> bool:
    return a.data_ptr() == b.data_ptr() and a._strides == b._strides and a.dtype is b.dtype


class TensorFlags:
    """numpy's ``flagsobj`` of a tensor, by key or by attribute, read-only.

    >>> import jitgrad as jg
    >>> t = jg.zeros((2, 3))
    >>> t.flags["C_CONTIGUOUS"], t.T.flags.f_contiguous, t.T.flags.owndata
    (True, True, False)
    """

    _KEYS = {
        "C": "C_CONTIGUOUS",
        "F": "F_CONTIGUOUS",
        "W": "WRITEABLE",
        "A": "ALIGNED",
        "O": "OWNDATA",
        "CONTIGUOUS": "C_CONTIGUOUS",
        "FORTRAN": "F_CONTIGUOUS",
        "FNC": "FNC",
        "FORC": "FORC",
        "X": "WRITEBACKIFCOPY",
    }

    def __init__(self, tensor: TensorBase):
        array = tensor.numpy()
        storage = tensor._storage
        whole = tensor._offset == 0 and array.size == storage.size()
        self._values = {key: bool(array.flags[key]) for key in set(self._KEYS.values())}
        self._values["OWNDATA"] = whole and tensor.is_contiguous()

    def __getitem__(self, key: str) -> bool:
        name = self._KEYS.get(key.upper(), key.upper())
        if name not in self._values:
            raise KeyError(f"unknown flag {key!r}")
        return self._values[name]

    def __getattr__(self, name: str) -> bool:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"tensor flags have no attribute {name!r}") from None

    def __setattr__(self, name: str, value) -> None:
        if name == "_values":
            object.__setattr__(self, name, value)
            return
        raise AttributeError(
            f"tensor flags are read-only (setting {name!r}); a tensor is writeable unless it "
            "shares a read-only buffer"
        )

    __setitem__ = __setattr__

    def __repr__(self) -> str:
        shown = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED")
        return "\n".join(f"  {k} : {self._values[k]}" for k in shown)


def array_getter(like: TensorBase):
    """The quickest way to the numpy array of tensors laid out as ``like`` (its dtype,
    shape and strides): a contiguous tensor's own elements (reshaped to its shape) where
    it fills its storage, else its view (``numpy()``); a 0-d tensor's element as an array
    of one element, which broadcasts as the 0-d array does."""
    shape = like._shape
    if like._storage._half:
        return TensorBase.numpy
    if like._strides != layout.contiguous_strides(shape):  # a view: its byte strides fixed
        dtype = like._storage.kernel_array.dtype
        in_bytes = tuple(s * dtype.itemsize for s in like._strides)

        def view(x):
            return _ndarray(
                shape, dtype, x._storage.kernel_array, x._offset * dtype.itemsize, in_bytes
            )

        return view
    if not shape:  # (as an array of one element: no view to make, numpy's result an array)

        def element(x):
            a, at = x._storage.kernel_array, x._offset
            return a if not at and a.size == 1 else a[at : at + 1]

        return element
    whole, reshape = layout.numel(shape), len(shape) != 1

    def array(x):
        a = x._storage.kernel_array
        if x._offset or a.size != whole:
            return x.numpy()
        return a.reshape(shape) if reshape else a

    return array


def _numpy_copy(like: TensorBase, storage_type):
    """The contiguous copy of tensors laid out as ``like`` into a new storage of
    ``storage_type``, by numpy's copy and cast loops, as one call of the tensor."""
    shape, strides = like._shape, layout.contiguous_strides(like._shape)
    dtype, make, array = storage_type._numpy, like.__class__._make, array_getter(like)
    # A cast that keeps every value raises no floating-point error: no error state to set.
    safe, errors = np.can_cast(array(like).dtype, dtype, "safe"), tiers.numpy_errors

    def call(t):
        source = array(t)
        if safe:
            copied = source.astype(dtype, "C")
        elif errors is None:
            copied = tiers.quietly(source.astype, dtype, "C")
        else:
            token = errors.set(tiers.IGNORE_ERRORS)
            try:
                copied = source.astype(dtype, "C")
            finally:
                errors.reset(token)
        return make(storage_type._holding(copied.reshape(-1)), shape, strides, 0)

    return call


def wrap_numpy(a: np.ndarray, cls: type[TensorBase]):
    """A tensor of class ``cls`` sharing ``a``'s memory (``jg.from_numpy`` for users)."""
    if type(a) is not np.ndarray:
        if not isinstance(a, np.ndarray):
            raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(a).__name__}")
        # A subclass's own methods (a masked array's reshape and view keep and check its
        # mask) would not give its memory: see the plain ndarray it is, as np.asarray and
        # torch.from_numpy do (a masked array's mask is dropped).
        a = a.view(np.ndarray)
    dtype = dtypes.from_numpy_dtype(a.dtype)
    itemsize = dtype.itemsize
    if any(s % itemsize for s in a.strides):
        raise ValueError(
            f"array strides {a.strides} are not multiples of its itemsize {itemsize}; "
            "use np.ascontiguousarray() first"
        )
    strides = tuple(s // itemsize for s in a.strides)
    if a.size == 0:
        return cls._make(storage_class(dtype)(0), a.shape, strides, 0)
    if a.flags.c_contiguous:  # the common case (every op result): no stride walk
        storage_type = storage_class(dtype)
        if storage_type._half:  # (kernels take float16 as its bits: the untyped storage's)
            untyped = UntypedStorage._wrap(a.reshape(-1).view(np.uint8))
            return cls._make(storage_type.from_untyped(untyped), a.shape, strides, 0)
        return cls._make(storage_type._borrowing(a.reshape(-1)), a.shape, strides, 0)
    lo, hi = layout.extent(a.shape, strides, 0)
    # Walk every negatively strided dim backwards: the view starts at the lowest address.
    # (Ellipsis keeps a 0-d array a view: a[()] would return a numpy scalar copy.)
    lowest = a[(Ellipsis, *(slice(None, None, -1) if s < 0 else slice(None) for s in strides))]
    flat = np.lib.stride_tricks.as_strided(
        lowest, shape=(hi - lo + 1,), strides=(itemsize,), writeable=a.flags.writeable
    )
    untyped = UntypedStorage._wrap(flat.view(np.uint8))
    return cls._make(storage_class(dtype).from_untyped(untyped), a.shape, strides, -lo)
