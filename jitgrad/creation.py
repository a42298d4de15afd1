"""Building tensors: from data, from numpy (zero-copy), and numpy's creation functions.

Every function takes ``requires_grad=`` like PyTorch's.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd.tensor import Tensor
from .recording import run
from .storage import storage_class
from .strided import layout
from .tensor import TensorBase, wrap_numpy


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor sharing ``a``'s memory: writes through either are seen by both. An ndarray
    subclass is seen as the plain ndarray it is (a masked array's mask is dropped, as by
    ``np.asarray`` and PyTorch's ``from_numpy``).

    >>> import numpy as np, jitgrad as jg
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> t = jg.from_numpy(a.T)
    >>> t.data_ptr() == a.ctypes.data, t.stride()
    (True, (1, 3))
    """
    return wrap_numpy(a, Tensor)


def asarray(obj, dtype=None, copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``obj``, sharing memory when ``obj`` is a tensor or a numpy array of the
    right dtype (numpy's ``asarray``; ``copy=True`` always copies, ``False`` never does)."""
    d = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, TensorBase):
        t = Tensor._make(obj._storage, obj.shape, obj.stride(), obj.storage_offset())
    elif isinstance(obj, np.ndarray):
        if not obj.dtype.isnative and copy is not False:
            # A copy may as well be in native byte order (numpy's asarray with a native
            # dtype converts so too); sharing the memory cannot (from_numpy says so).
            obj, copy = obj.astype(obj.dtype.newbyteorder("=")), None
        t = from_numpy(obj)
    elif copy is False:
        t = from_numpy(_shared_array(obj, d))
    else:
        return _from_data(obj, d).requires_grad_(requires_grad)
    if d is not None and d is not t.dtype:
        if copy is False:
            raise ValueError(f"cannot turn {t.dtype.name} data into {d.name} without a copy")
        t = t.astype(d)
    elif copy:
        t = t.clone()
    return t.requires_grad_(True) if requires_grad else t


def _shared_array(obj, d: dtypes.DType | None) -> np.ndarray:
    """``obj``'s memory as an array, for ``copy=False``: objects that export memory
    (buffers, other libraries' arrays) share it; data that must be converted (lists,
    Python numbers) cannot."""
    try:
        return np.asarray(obj, dtype=None if d is None else d.numpy, copy=False)
    except ValueError:
        kind = type(obj)
        name = kind.__name__
        if kind.__module__ != "builtins":
            name = f"{kind.__module__.partition('.')[0]}.{name}"
        raise ValueError(
            f"cannot build a tensor from a {name} without a copy: copy=False "
            "must share the data's memory (numpy 2's rule); pass copy=None to copy when needed"
        ) from None


def array(obj, dtype=None, copy: bool | None = True, requires_grad: bool = False) -> Tensor:
    """numpy's ``array``: a copy of ``obj``; ``copy=None`` shares its memory where it can,
    ``copy=False`` must share it (a ValueError when a copy is needed), as in numpy 2."""
    return asarray(obj, dtype, copy=copy, requires_grad=requires_grad)


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``tensor``: always a new leaf tensor holding a copy of ``data``.

    >>> import jitgrad as jg
    >>> jg.tensor([[1, 2], [3, 4]]).stride()
    (2, 1)
    """
    data = data.detach() if isinstance(data, Tensor) else data
    return asarray(data, dtype, copy=True, requires_grad=requires_grad)


def _from_data(obj, d: dtypes.DType | None) -> Tensor:
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"cannot build a tensor from {type(obj).__name__}")
    values = np.asarray(obj) if d is None else np.asarray(obj, dtype=d.numpy)
    if not values.dtype.isnative:  # (arrays of another byte order, nested in a list)
        values = values.astype(values.dtype.newbyteorder("="))
    if d is None:
        if values.dtype.kind not in "biufc":
            raise TypeError(f"cannot build a tensor from data of numpy type {values.dtype}")
        d = dtypes.from_numpy_dtype(values.dtype)
        if values.dtype.kind in "fc":
            d = _inferred_float_dtype(obj, d)
    return _filled_by_numpy(values, d)


def _inferred_float_dtype(obj, found: dtypes.DType) -> dtypes.DType:
    """PyTorch's dtype for floating data: Python floats and complexes take the default
    dtype (its complex counterpart), typed values (numpy scalars and arrays, tensors,
    other arrays) keep theirs, and a list promotes its floating elements' dtypes; its
    integers and bools give way to them (``[1, np.float32(2)]`` is float32). numpy, which
    read every Python float as float64, found ``found``."""
    if type(obj) is float:
        return dtypes.get_default_dtype()
    if type(obj) is complex:
        return dtypes.default_complex_dtype()
    if not isinstance(obj, (list, tuple)):
        return found
    first = obj
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    # Every dtype here is at most numpy's for its value, so the answer is at most ``found``:
    # a first element of dtype ``found`` settles it without looking at the rest.
    if not isinstance(first, (list, tuple)) and _leaf_dtype(first) is found:
        return found
    leaves: set = set()
    _float_leaves(obj, leaves)
    result = None
    for leaf in leaves:
        result = leaf if result is None else dtypes.promote_types(result, leaf)
    return found if result is None else result


def _float_leaves(seq, leaves: set) -> None:
    """The dtypes of the floating and complex values in nested lists ``seq``. Grouped by
    type, so that a long list of Python numbers costs one pass in C."""
    for kind in set(map(type, seq)):
        if kind is float:
            leaves.add(dtypes.get_default_dtype())
        elif kind is complex:
            leaves.add(dtypes.default_complex_dtype())
        elif kind is bool or kind is int:
            continue
        elif kind is list or kind is tuple:
            for x in seq:
                if type(x) is kind:
                    _float_leaves(x, leaves)
        else:
            for x in seq:
                if type(x) is kind:
                    d = _leaf_dtype(x)
                    if d.is_floating_point or d.is_complex:
                        leaves.add(d)


def _leaf_dtype(value) -> dtypes.DType:
    if type(value) is float:
        return dtypes.get_default_dtype()
    if type(value) is complex:
        return dtypes.default_complex_dtype()
    if isinstance(value, (bool, int)):
        return dtypes.scalar_dtype(value)
    if isinstance(value, TensorBase):
        return value.dtype
    if not isinstance(value, (np.ndarray, np.generic)):
        value = np.asarray(value)
    return dtypes.from_numpy_dtype(value.dtype.newbyteorder("="))  # (the values convert)


# -- numpy's creation functions ------------------------------------------------------------


def empty(shape, dtype=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised contiguous tensor."""
    shape = layout.as_shape(shape)
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(storage_class(d)(layout.numel(shape)), shape, requires_grad=requires_grad)


def full(shape, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``fill_value`` (a number, or values broadcast to ``shape`` as numpy's
    ``full`` takes them); its dtype follows the value when none is given.

    >>> import jitgrad as jg
    >>> jg.full((2, 3), [1, 2, 3]).tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    if isinstance(fill_value, (bool, int, float, complex, np.generic)):
        out = empty(shape, dtypes.result_type(fill_value) if dtype is None else dtype)
        return _filled(out, fill_value, requires_grad)
    values = asarray(fill_value).detach()
    out = empty(shape, values.dtype if dtype is None else dtype)
    TensorBase.copy_(out, values.broadcast_to(out.shape))
    return out.requires_grad_(requires_grad)


def zeros(shape, dtype=None, requires_grad: bool = False) -> Tensor:
    return _filled(empty(shape, dtype), 0, requires_grad)


def ones(shape, dtype=None, requires_grad: bool = False) -> Tensor:
    return _filled(empty(shape, dtype), 1, requires_grad)


def empty_like(t, dtype=None, requires_grad: bool = False) -> Tensor:
    t = asarray(t)
    return empty(t.shape, t.dtype if dtype is None else dtype, requires_grad)


def zeros_like(t, dtype=None, requires_grad: bool = False) -> Tensor:
    return _filled(empty_like(t, dtype), 0, requires_grad)


def ones_like(t, dtype=None, requires_grad: bool = False) -> Tensor:
    return _filled(empty_like(t, dtype), 1, requires_grad)


def full_like(t, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    t = asarray(t)
    return full(t.shape, fill_value, t.dtype if dtype is None else dtype, requires_grad)


def arange(start, stop=None, step=1, dtype=None, requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; integers unless a bound is a float.

    >>> import jitgrad as jg
    >>> jg.arange(3).tolist(), jg.arange(0, 1, 0.25).tolist()
    ([0, 1, 2], [0.0, 0.25, 0.5, 0.75])
    """
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    # numpy and PyTorch take only the kind of typed bounds (np.int8(5), a 0-d tensor):
    # arange(np.int8(5)) is int64, as arange(5).
    start, stop, step = (
        v.item() if isinstance(v, (np.generic, np.ndarray, TensorBase)) and np.ndim(v) == 0 else v
        for v in (start, stop, step)
    )
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = dtypes.result_type(start, stop, step) if dtype is None else dtypes.as_dtype(dtype)
    values = np.arange(start, stop, step, dtype=d.numpy)
    return _filled_by_numpy(values, d).requires_grad_(requires_grad)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    """``num`` evenly spaced values from ``start`` to ``stop``, in the default dtype (its
    complex counterpart for complex bounds) unless ``dtype`` is given."""
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    if dtype is not None:
        d = dtypes.as_dtype(dtype)
    elif np.iscomplexobj(start) or np.iscomplexobj(stop):
        d = dtypes.result_type(dtypes.get_default_dtype(), dtypes.complex64)
    else:
        d = dtypes.get_default_dtype()
    values = np.linspace(start, stop, num, endpoint=endpoint, dtype=d.numpy)
    return _filled_by_numpy(values, d).requires_grad_(requires_grad)


def eye(n: int, m: int | None = None, k: int = 0, dtype=None, requires_grad=False) -> Tensor:
    out = zeros((n, n if m is None else m), dtype)
    TensorBase.fill_(out.diagonal(k), 1)
    return out.requires_grad_(requires_grad)


def _filled(t: Tensor, value, requires_grad: bool) -> Tensor:
    TensorBase.fill_(t, value)
    return t.requires_grad_(requires_grad)


def _filled_by_numpy(values: np.ndarray, d: dtypes.DType) -> Tensor:
    out = empty(values.shape, d)
    run(np.copyto, out.numpy(), values)
    return out
