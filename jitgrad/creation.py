"""Building tensors: from data, from numpy (zero-copy), and numpy's creation functions."""

from __future__ import annotations

import numpy as np

from . import dtypes
from .storage import UntypedStorage, storage_class
from .strided import layout
from .tensor import Tensor


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing ``a``'s memory: writes through either are seen by both.

    >>> a = np.arange(6.0).reshape(2, 3)
    >>> t = from_numpy(a.T)
    >>> t.data_ptr() == a.ctypes.data, t.stride()
    (True, (1, 3))
    """
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(a).__name__}")
    dtype = dtypes.from_numpy_dtype(a.dtype)
    itemsize = dtype.itemsize
    if any(s % itemsize for s in a.strides):
        raise ValueError(
            f"array strides {a.strides} are not multiples of its itemsize {itemsize}; "
            "use np.ascontiguousarray() first"
        )
    strides = tuple(s // itemsize for s in a.strides)
    if a.size == 0:
        return Tensor(storage_class(dtype)(0), a.shape, strides, 0)
    lo, hi = layout.extent(a.shape, strides, 0)
    # Walk every negatively strided dim backwards: the view starts at the lowest address.
    # (Ellipsis keeps a 0-d array a view: a[()] would return a numpy scalar copy.)
    lowest = a[(Ellipsis, *(slice(None, None, -1) if s < 0 else slice(None) for s in strides))]
    flat = np.lib.stride_tricks.as_strided(
        lowest, shape=(hi - lo + 1,), strides=(itemsize,), writeable=a.flags.writeable
    )
    untyped = UntypedStorage._wrap(flat.view(np.uint8))
    return Tensor(storage_class(dtype).from_untyped(untyped), a.shape, strides, -lo)


def asarray(obj, dtype=None, copy: bool | None = None) -> Tensor:
    """A tensor of ``obj``, sharing memory when ``obj`` is a tensor or a numpy array of the
    right dtype (numpy's ``asarray``; ``copy=True`` always copies, ``False`` never does)."""
    d = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, np.ndarray):
        t = from_numpy(obj)
    else:
        return _from_data(obj, d)
    if d is not None and d is not t.dtype:
        if copy is False:
            raise ValueError(f"cannot turn {t.dtype.name} data into {d.name} without a copy")
        return t.astype(d)
    return t.clone() if copy else t


def array(obj, dtype=None, copy: bool = True) -> Tensor:
    """numpy's ``array``: a copy of ``obj`` unless ``copy=False`` allows sharing."""
    return asarray(obj, dtype, copy=True if copy else None)


def tensor(data, dtype=None) -> Tensor:
    """PyTorch's ``tensor``: always a new tensor holding a copy of ``data``.

    >>> tensor([[1, 2], [3, 4]]).stride()
    (2, 1)
    """
    return asarray(data, dtype, copy=True)


def _from_data(obj, d: dtypes.DType | None) -> Tensor:
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"cannot build a tensor from {type(obj).__name__}")
    values = np.asarray(obj) if d is None else np.asarray(obj, dtype=d.numpy)
    if d is None:
        if values.dtype.kind not in "biufc":
            raise TypeError(f"cannot build a tensor from data of numpy type {values.dtype}")
        if isinstance(obj, np.generic) or values.dtype.kind not in "fc":
            d = dtypes.from_numpy_dtype(values.dtype)
        elif values.dtype.kind == "c":
            d = dtypes.default_complex_dtype()
        else:
            # Python floats take the default dtype, as in PyTorch (float64 = numpy's rule).
            d = dtypes.get_default_dtype()
    return _filled_by_numpy(values, d)


# -- numpy's creation functions ------------------------------------------------------------


def empty(shape, dtype=None) -> Tensor:
    """An uninitialised contiguous tensor."""
    shape = layout.as_shape(shape)
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(storage_class(d)(layout.numel(shape)), shape)


def full(shape, fill_value, dtype=None) -> Tensor:
    """A tensor of ``fill_value``; its dtype follows the value when none is given."""
    if dtype is None:
        dtype = dtypes.result_type(fill_value)
    return empty(shape, dtype).fill_(fill_value)


def zeros(shape, dtype=None) -> Tensor:
    return empty(shape, dtype).fill_(0)


def ones(shape, dtype=None) -> Tensor:
    return empty(shape, dtype).fill_(1)


def empty_like(t, dtype=None) -> Tensor:
    t = asarray(t)
    return empty(t.shape, t.dtype if dtype is None else dtype)


def zeros_like(t, dtype=None) -> Tensor:
    return empty_like(t, dtype).fill_(0)


def ones_like(t, dtype=None) -> Tensor:
    return empty_like(t, dtype).fill_(1)


def full_like(t, fill_value, dtype=None) -> Tensor:
    return empty_like(t, dtype).fill_(fill_value)


def arange(start, stop=None, step=1, dtype=None) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; integers unless a bound is a float.

    >>> arange(3).tolist(), arange(0, 1, 0.25).tolist()
    ([0, 1, 2], [0.0, 0.25, 0.5, 0.75])
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = dtypes.result_type(start, stop, step) if dtype is None else dtypes.as_dtype(dtype)
    return _filled_by_numpy(np.arange(start, stop, step, dtype=d.numpy), d)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None) -> Tensor:
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    return _filled_by_numpy(np.linspace(start, stop, num, endpoint=endpoint, dtype=d.numpy), d)


def eye(n: int, m: int | None = None, k: int = 0, dtype=None) -> Tensor:
    out = zeros((n, n if m is None else m), dtype)
    out.diagonal(k).fill_(1)
    return out


def _filled_by_numpy(values: np.ndarray, d: dtypes.DType) -> Tensor:
    out = empty(values.shape, d)
    out.numpy()[...] = values
    return out
