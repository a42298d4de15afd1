"""Building tensors: from data, from numpy (zero-copy), and numpy's creation functions.

Every function takes numpy's arguments, and ``requires_grad=`` like PyTorch's.
"""

from __future__ import annotations

import operator

import numpy as np

from . import dtypes, tiers
from ._config import config
from .autograd.tensor import Tensor
from .device import check_device
from .ops import movement, numpy_tier, reduce, shaping
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


def asarray(
    a,
    /,
    dtype=None,
    order=None,
    *,
    device=None,
    copy: bool | None = None,
    like=None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ``a``, sharing memory when ``a`` is a tensor or a numpy array of the
    right dtype and layout (numpy's ``asarray``; ``copy=True`` always copies, ``False``
    never does). ``order="C"`` or ``"F"`` asks for that contiguous layout (a copy when
    ``a`` is laid out otherwise); a copy in order ``"K"`` (the default) or ``"A"`` keeps
    ``a``'s.

    Data a tensor cannot hold (strings, Python objects, records, dates) gives numpy's own
    array, as numpy would.

    >>> import jitgrad as jg
    >>> x = jg.ones((2, 3))
    >>> jg.asarray(x) is x, jg.asarray(x, order="F").stride()
    (True, (1, 2))
    >>> type(jg.asarray(["pear", "fig"])).__name__
    'ndarray'
    """
    check_device(device)
    try:
        t = _converted(a, dtype, copy, order, "asarray")
    except NotNumbers:
        return np.asarray(a, dtype, order, copy=copy)
    return t.requires_grad_(True) if requires_grad else t


class NotNumbers(TypeError):
    """Data that tensors cannot hold, which numpy reads as strings, bytes, Python objects,
    records or dates (``jg.array`` and ``jg.asarray`` give numpy's own array of it)."""


def _converted(obj, dtype, copy: bool | None, order, who: str) -> Tensor:
    """``obj`` as a tensor of ``dtype`` laid out in ``order``, copied when ``copy`` is
    True or when needed (an error then if ``copy`` is False)."""
    order = "K" if order is None else str(order).upper()
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"{who}: order must be one of 'C', 'F', 'A' or 'K', got {order!r}")
    t = _as_tensor(obj, dtype, copy is False)
    relaid = order in ("C", "F") and not _laid_out_in(t, order)
    if relaid and copy is False:
        raise ValueError(f"{who}: cannot lay the data out in order {order!r} without a copy")
    if relaid or (copy and _shares_memory(t, obj)):
        t = shaping.laid_out(movement.clone, t, order, who)
    return t


def _laid_out_in(t: TensorBase, order: str) -> bool:
    if order == "C":
        return t.is_contiguous()
    return layout.is_contiguous(t.shape[::-1], t.stride()[::-1])


def _shares_memory(t: Tensor, obj) -> bool:
    if isinstance(obj, TensorBase):
        return t._storage is obj._storage
    return isinstance(obj, np.ndarray) and np.may_share_memory(TensorBase.numpy(t), obj)


def _as_tensor(obj, dtype, must_share: bool) -> Tensor:
    """``obj`` as a tensor, sharing its memory where it can (and ``must_share`` it)."""
    d = None if dtype is None else _numeric_dtype(dtype)
    if isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, TensorBase):
        t = Tensor._make(obj._storage, obj.shape, obj.stride(), obj.storage_offset())
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc":
            raise NotNumbers(f"cannot build a tensor from an array of numpy type {obj.dtype}")
        if not obj.dtype.isnative and not must_share:
            # A copy may as well be in native byte order (numpy's asarray with a native
            # dtype converts so too); sharing the memory cannot (from_numpy says so).
            obj = obj.astype(obj.dtype.newbyteorder("="))
        t = from_numpy(obj)
    elif must_share:
        t = from_numpy(_shared_array(obj, d))
    else:
        return _from_data(obj, d)
    if d is not None and d is not t.dtype:
        if must_share:
            raise ValueError(f"cannot turn {t.dtype.name} data into {d.name} without a copy")
        t = t.astype(d)
    return t


def _numeric_dtype(dtype) -> dtypes.DType:
    try:
        return dtypes.as_dtype(dtype)
    except TypeError:
        if np.dtype(dtype).kind not in "biufc":
            raise NotNumbers(f"cannot build a tensor of numpy type {np.dtype(dtype)}") from None
        raise


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


def array(
    object,
    dtype=None,
    *,
    copy: bool | None = True,
    order="K",
    subok: bool = False,
    ndmin: int = 0,
    ndmax: int = 0,
    like=None,
    requires_grad: bool = False,
) -> Tensor:
    """numpy's ``array``: a copy of ``object``; ``copy=None`` shares its memory where it can,
    ``copy=False`` must share it (a ValueError when a copy is needed), as in numpy 2.
    ``ndmin`` prepends axes of length 1; ``order`` lays a copy out ('K' and 'A' as the
    data is, 'C' row-major, 'F' column-major).

    Data a tensor cannot hold (strings, Python objects, records, dates) gives numpy's own
    array, as numpy would.

    >>> import jitgrad as jg
    >>> jg.array([1, 2], ndmin=3).shape
    (1, 1, 2)
    """
    if object.__class__ is list and dtype is None and copy is True and order == "K" and not ndmax:
        elements = _elements_of_scalars(object) if config.thread.tape is None else None
        if elements is not None and not ndmin:  # (``np.array([x[1], -x[0]])`` in scalar code)
            t = numpy_tier.tensor_of(elements)
            return t.requires_grad_(True) if requires_grad else t
    if ndmax:
        # numpy reads nested sequences only ``ndmax`` levels deep: deeper ones would be
        # Python objects, which a tensor cannot hold.
        values = np.array(
            object, dtype=None if dtype is None else dtypes.as_dtype(dtype).numpy, ndmax=ndmax
        )
        if values.dtype == np.object_:
            raise TypeError(f"array: ndmax={ndmax} leaves Python objects, not numbers")
        copy = None if copy and not np.may_share_memory(values, object) else copy
        object = values
    try:
        t = _converted(object, dtype, copy, order, "array")
    except NotNumbers:
        return np.array(object, dtype, copy=copy, order=order, ndmin=ndmin)
    if t.ndim < ndmin:
        t = movement.reshape(t, (1,) * (ndmin - t.ndim) + t.shape)
    return t.requires_grad_(True) if requires_grad else t


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """PyTorch's ``tensor``: always a new leaf tensor holding a copy of ``data``.

    >>> import jitgrad as jg
    >>> jg.tensor([[1, 2], [3, 4]]).stride()
    (2, 1)
    """
    data = data.detach() if isinstance(data, Tensor) else data
    t = _converted(data, dtype, True, None, "tensor")
    return t.requires_grad_(True) if requires_grad else t


def _from_data(obj, d: dtypes.DType | None) -> Tensor:
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"cannot build a tensor from {type(obj).__name__}")
    untraced = config.thread.tape is None
    if untraced and d is None and obj.__class__ in (list, tuple):
        elements = _elements_of_scalars(obj)
        if elements is not None:  # (``np.array([x[1], -x[0]])`` in scalar code)
            return numpy_tier.tensor_of(elements)
    if untraced and obj.__class__ in (list, tuple) and any(_is_tensor(x) for x in obj):
        # (numpy reads a tensor nested in a list by its protocols: its array is quicker)
        obj = [x.numpy() if isinstance(x, TensorBase) else x for x in obj]
    values = np.asarray(obj) if d is None else np.asarray(obj, dtype=d.numpy)
    if not values.dtype.isnative:  # (arrays of another byte order, nested in a list)
        values = values.astype(values.dtype.newbyteorder("="))
    if d is None:
        if values.dtype.kind not in "biufc":
            raise NotNumbers(f"cannot build a tensor from data of numpy type {values.dtype}")
        d = dtypes.from_numpy_dtype(values.dtype)
        if values.dtype.kind in "fc":
            d = _inferred_float_dtype(obj, d)
    if obj.__class__ in (list, tuple) or np.isscalar(obj):
        return _made_by_numpy(values, d)
    return _filled_by_numpy(values, d)


def _elements_of_scalars(seq):
    """The array of ``seq``'s elements where all are 0-d tensors of one dtype (read from
    their storages, no array per element), else None."""
    first = seq[0] if seq else None
    if first.__class__ is not Tensor or first._shape:
        return None
    storage_type = first._storage.__class__
    for x in seq:
        if x.__class__ is not Tensor or x._shape or x._storage.__class__ is not storage_type:
            return None
    if storage_type._half:  # (stored as its bits: read through the float16 view)
        return np.array([x._storage.array[x._offset] for x in seq], np.float16)
    return np.array([x._storage.kernel_array[x._offset] for x in seq], storage_type._numpy)


def _is_tensor(x) -> bool:
    return isinstance(x, TensorBase)


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
#
# numpy's signatures, with PyTorch's ``requires_grad=`` as a keyword after them. ``order=``
# lays the tensor out: "C" row-major, "F" column-major (a permuted view of a row-major
# buffer, which the strides express), "K"/"A" like the prototype of a ``*_like``. ``like=``
# (numpy's dispatch to another array library) is accepted and changes nothing: the result
# is a jitgrad tensor.


def _laid_out_empty(shape, d: dtypes.DType, axes: list[int]) -> Tensor:
    buffer = Tensor(storage_class(d)(layout.numel(shape)), tuple(shape[a] for a in axes))
    return buffer if axes == sorted(axes) else TensorBase.permute(buffer, np.argsort(axes).tolist())


def empty(
    shape, dtype=None, order="C", *, device=None, like=None, requires_grad: bool = False
) -> Tensor:
    """An uninitialised tensor, row-major (``order="C"``) or column-major (``"F"``).

    >>> import jitgrad as jg
    >>> jg.empty((2, 3)).stride(), jg.empty((2, 3), order="F").stride()
    ((3, 1), (1, 2))
    """
    return _made(np.empty, None, shape, dtype, order, device, requires_grad)


def _made(make, fill, shape, dtype, order, device, requires_grad: bool) -> Tensor:
    """empty (``fill`` None), zeros and ones. Small row-major work outside a trace is
    ``make(shape, dtype)``, numpy's array as the storage (the numpy tier's measure,
    ``tiers.small``): one numpy call instead of jitgrad's allocation and fill. Else a
    storage of jitgrad's (from the pool when large) filled with ``fill``, which a trace
    records."""
    check_device(device)
    shape = layout.as_shape(shape)
    d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
    if order == "C" and tiers.small(layout.numel(shape)):
        out = numpy_tier.tensor_of(make(shape, d.numpy))
    else:
        out = _laid_out_empty(shape, d, shaping.storage_axes(len(shape), order))
        if fill is not None:
            TensorBase.fill_(out, fill)
    return out.requires_grad_(requires_grad) if requires_grad else out


def full(
    shape, fill_value, dtype=None, order="C", *, device=None, like=None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ``fill_value`` (a number, or values broadcast to ``shape`` as numpy's
    ``full`` takes them); its dtype follows the value when none is given.

    >>> import jitgrad as jg
    >>> jg.full((2, 3), [1, 2, 3]).tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    if isinstance(fill_value, (bool, int, float, complex, np.generic)):
        d = dtypes.result_type(fill_value) if dtype is None else dtype
        return _filled(empty(shape, d, order, device=device), fill_value, requires_grad)
    values = asarray(fill_value).detach()
    out = empty(shape, values.dtype if dtype is None else dtype, order, device=device)
    TensorBase.copy_(out, values.broadcast_to(out.shape))
    return out.requires_grad_(requires_grad)


def zeros(
    shape, dtype=None, order="C", *, device=None, like=None, requires_grad: bool = False
) -> Tensor:
    """A tensor of zeros (float64 by default).

    >>> import jitgrad as jg
    >>> jg.zeros((2, 1)).tolist(), jg.zeros(2, dtype=jg.int32).dtype
    ([[0.0], [0.0]], jitgrad.int32)
    """
    return _made(np.zeros, 0, shape, dtype, order, device, requires_grad)


def ones(
    shape, dtype=None, order="C", *, device=None, like=None, requires_grad: bool = False
) -> Tensor:
    """A tensor of ones (float64 by default).

    >>> import jitgrad as jg
    >>> jg.ones((2, 1)).tolist(), jg.ones(2, dtype=jg.bool).tolist()
    ([[1.0], [1.0]], [True, True])
    """
    return _made(np.ones, 1, shape, dtype, order, device, requires_grad)


def empty_like(
    prototype,
    /,
    dtype=None,
    order="K",
    subok: bool = True,
    shape=None,
    *,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """An uninitialised tensor of ``prototype``'s shape and dtype (or ``shape``, ``dtype``),
    laid out as ``prototype`` with ``order="K"`` (numpy's default).

    >>> import jitgrad as jg
    >>> jg.empty_like(jg.zeros((2, 3)).T).stride()
    (1, 3)
    """
    check_device(device)
    t = asarray(prototype)
    shape = t.shape if shape is None else layout.as_shape(shape)
    d = t.dtype if dtype is None else dtypes.as_dtype(dtype)
    out = _laid_out_empty(shape, d, shaping.storage_axes(len(shape), order, t))
    return out.requires_grad_(requires_grad)


def zeros_like(
    a,
    /,
    dtype=None,
    order="K",
    subok: bool = True,
    shape=None,
    *,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Zeros of ``a``'s shape and dtype (or ``shape``, ``dtype``).

    >>> import jitgrad as jg
    >>> jg.zeros_like(jg.tensor([1, 2])).tolist()
    [0, 0]
    """
    out = empty_like(a, dtype, order, subok, shape, device=device)
    return _filled(out, 0, requires_grad)


def ones_like(
    a,
    /,
    dtype=None,
    order="K",
    subok: bool = True,
    shape=None,
    *,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Ones of ``a``'s shape and dtype (or ``shape``, ``dtype``).

    >>> import jitgrad as jg
    >>> jg.ones_like(jg.tensor([1, 2]), dtype=jg.float32).tolist()
    [1.0, 1.0]
    """
    out = empty_like(a, dtype, order, subok, shape, device=device)
    return _filled(out, 1, requires_grad)


def full_like(
    a,
    /,
    fill_value,
    dtype=None,
    order="K",
    subok: bool = True,
    shape=None,
    *,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """``fill_value`` in ``a``'s shape and dtype (or ``shape``, ``dtype``).

    >>> import jitgrad as jg
    >>> jg.full_like(jg.tensor([1, 2]), 7).tolist()
    [7, 7]
    """
    out = empty_like(a, dtype, order, subok, shape, device=device)
    TensorBase.copy_(out, asarray(fill_value).detach().broadcast_to(out.shape))
    return out.requires_grad_(requires_grad)


def arange(
    start, stop=None, step=1, dtype=None, *, device=None, like=None, requires_grad: bool = False
) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; integers unless a bound is a float.

    >>> import jitgrad as jg
    >>> jg.arange(3).tolist(), jg.arange(0, 1, 0.25).tolist()
    ([0, 1, 2], [0.0, 0.25, 0.5, 0.75])
    """
    check_device(device)
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    integers = start.__class__ is int and stop.__class__ is int and step.__class__ is int
    if not integers:
        # numpy and PyTorch take only the kind of typed bounds (np.int8(5), a 0-d tensor):
        # arange(np.int8(5)) is int64, as arange(5).
        start, stop, step = (
            v.item()
            if isinstance(v, (np.generic, np.ndarray, TensorBase)) and np.ndim(v) == 0
            else v
            for v in (start, stop, step)
        )
        integers = start.__class__ is int and stop.__class__ is int and step.__class__ is int
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is not None:
        d = dtypes.as_dtype(dtype)
    elif integers:
        d = dtypes.int64
    else:
        d = dtypes.result_type(start, stop, step)
    values = np.arange(start, stop, step, dtype=d.numpy)
    out = _made_by_numpy(values, d)
    return out.requires_grad_(True) if requires_grad else out


def _plain(value):
    """A bound of a spaced range as numpy takes it (tensors as their arrays)."""
    return TensorBase.numpy(value) if isinstance(value, TensorBase) else value


def linspace(
    start,
    stop,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype=None,
    axis: int = 0,
    *,
    device=None,
    requires_grad: bool = False,
):
    """``num`` evenly spaced values from ``start`` to ``stop`` (arrays of bounds give one
    range per element, along ``axis``), in the default dtype (its complex counterpart for
    complex bounds) unless ``dtype`` is given; with ``retstep``, also the step.

    >>> import jitgrad as jg
    >>> jg.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    check_device(device)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    start, stop = _plain(start), _plain(stop)
    if dtype is not None:
        d = dtypes.as_dtype(dtype)
    elif np.iscomplexobj(start) or np.iscomplexobj(stop):
        d = dtypes.result_type(dtypes.get_default_dtype(), dtypes.complex64)
    else:
        d = dtypes.get_default_dtype()
    values, step = np.linspace(start, stop, num, endpoint, retstep=True, dtype=d.numpy, axis=axis)
    out = _made_by_numpy(values, d).requires_grad_(requires_grad)
    return (out, step) if retstep else out


def logspace(
    start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0
) -> Tensor:
    """``base ** linspace(start, stop, num)``: numpy's values and dtype.

    >>> import jitgrad as jg
    >>> jg.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    d = None if dtype is None else dtypes.as_dtype(dtype).numpy
    values = np.logspace(_plain(start), _plain(stop), num, endpoint, _plain(base), d, axis)
    return _numpy_values(values)


def geomspace(
    start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0
) -> Tensor:
    """``num`` values from ``start`` to ``stop`` in geometric progression: numpy's values
    and dtype.

    >>> import jitgrad as jg
    >>> jg.geomspace(1, 1000, 4).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    d = None if dtype is None else dtypes.as_dtype(dtype).numpy
    return _numpy_values(np.geomspace(_plain(start), _plain(stop), num, endpoint, d, axis))


def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype=None,
    order="C",
    *,
    device=None,
    like=None,
    requires_grad: bool = False,
) -> Tensor:
    """Ones on the ``k``-th diagonal of an ``N`` by ``M`` matrix of zeros.

    >>> import jitgrad as jg
    >>> jg.eye(2, 3, k=1).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    out = zeros((N, N if M is None else M), dtype, order, device=device)
    TensorBase.fill_(out.diagonal(k), 1)
    return out.requires_grad_(requires_grad)


def identity(n: int, dtype=None, *, like=None, requires_grad: bool = False) -> Tensor:
    """The ``n`` by ``n`` identity matrix.

    >>> import jitgrad as jg
    >>> jg.identity(2, dtype=int).tolist()
    [[1, 0], [0, 1]]
    """
    return eye(n, dtype=dtype, requires_grad=requires_grad)


def tri(N: int, M: int | None = None, k: int = 0, dtype=float, *, like=None) -> Tensor:
    """Ones at and below the ``k``-th diagonal of an ``N`` by ``M`` matrix, zeros above.

    >>> import jitgrad as jg
    >>> jg.tri(2, 3).tolist()
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    return _numpy_values(np.tri(N, M, k, dtype=dtypes.as_dtype(dtype).numpy))


def indices(dimensions, dtype=int, sparse: bool = False):
    """The index of each position of a grid of shape ``dimensions``, one row per axis (an
    array of shape ``(len(dimensions), *dimensions)``), or, ``sparse``, a tuple of
    broadcastable ones.

    >>> import jitgrad as jg
    >>> jg.indices((2, 2)).tolist()
    [[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
    """
    grid = np.indices(tuple(dimensions), dtype=dtypes.as_dtype(dtype).numpy, sparse=sparse)
    return tuple(map(_numpy_values, grid)) if sparse else _numpy_values(grid)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function`` called with one tensor of coordinates per axis of ``shape``, as numpy's
    ``fromfunction`` (whatever it returns is the result).

    >>> import jitgrad as jg
    >>> jg.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int).tolist()
    [[0, 1, 2], [10, 11, 12]]
    """
    grid = indices(shape, dtype=dtype)
    return function(*(shaping.unstack(grid) if grid.shape[0] else ()), **kwargs)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> tuple:
    """Coordinate tensors from coordinate vectors: ``indexing="xy"`` (Cartesian: the first
    two axes swapped) or ``"ij"`` (matrix). ``sparse`` keeps each one broadcastable
    instead of full; ``copy=False`` gives views (broadcast ones when not sparse).
    Gradients reach the vectors.

    >>> import jitgrad as jg
    >>> x, y = jg.meshgrid(jg.tensor([1, 2, 3]), jg.tensor([4, 5]))
    >>> x.tolist(), y.tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    ndim = len(xi)
    ones = (1,) * ndim
    places = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        places[0], places[1] = 1, 0
    output = [
        movement.reshape(asarray(x), ones[:p] + (-1,) + ones[p + 1 :])
        for x, p in zip(xi, places, strict=True)
    ]
    if not sparse:
        output = list(shaping.broadcast_arrays(*output))
    return tuple(movement.clone(t) for t in output) if copy else tuple(output)


class _GridIndexer:
    """numpy's ``mgrid`` (one dense grid) and ``ogrid`` (a tuple of broadcastable ones):
    indexed with slices, ``start:stop:step`` is numpy's ``arange`` and ``start:stop:Nj``
    (a complex step) ``N`` points as ``linspace``.

    >>> import jitgrad as jg
    >>> jg.mgrid[0:2, 0:3].shape, jg.mgrid[0:1:3j].tolist()
    ((2, 2, 3), [0.0, 0.5, 1.0])
    >>> [t.shape for t in jg.ogrid[0:2, 0:3]]
    [(2, 1), (1, 3)]
    """

    def __init__(self, grid, name: str):
        self._grid, self._name = grid, name

    def __getitem__(self, key):
        values = self._grid[_plain_key(key)]
        if isinstance(values, (tuple, list)):
            return tuple(map(_numpy_values, values))
        return _numpy_values(values)

    def __repr__(self) -> str:
        return f"jitgrad.{self._name}"


def _plain_key(key):
    if isinstance(key, tuple):
        return tuple(map(_plain_key, key))
    if isinstance(key, slice):
        return slice(*(_item(v) for v in (key.start, key.stop, key.step)))
    return _item(key)


def _item(value):
    return value.item() if isinstance(value, TensorBase) else value


mgrid = _GridIndexer(np.mgrid, "mgrid")
ogrid = _GridIndexer(np.ogrid, "ogrid")


def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the vector ``x``: columns ``x**(N-1), ..., x, 1`` (the
    other way round when ``increasing``), in numpy's dtype (integers stay integers, in
    int64). Gradients reach ``x``.

    >>> import jitgrad as jg
    >>> jg.vander(jg.tensor([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional tensor or sequence, got {x.ndim}-d")
    n = x.shape[0]
    N = n if N is None else operator.index(N)
    if N < 0:
        raise ValueError(f"vander: N must be non-negative, got {N}")
    d = dtypes.from_numpy_dtype(np.promote_types(x.dtype.numpy, np.int64))
    if N == 0:
        return zeros((n, 0), d)
    x = movement.astype(x, d, copy=False)
    powers = [ones((n, 1), d), movement.broadcast_to(movement.reshape(x, (n, 1)), (n, N - 1))]
    columns = reduce.cumprod(movement.concatenate(powers, 1), 1)
    return columns if increasing else movement.contiguous(movement.flip(columns, 1))


def ascontiguousarray(a, dtype=None, *, like=None) -> Tensor:
    """``a`` as a row-major contiguous tensor of at least one dimension: ``a`` itself when
    it already is one.

    >>> import jitgrad as jg
    >>> jg.ascontiguousarray(jg.ones((2, 3)).T).stride()
    (2, 1)
    """
    t = a if dtype is None and a.__class__ is Tensor else asarray(a, dtype)
    return movement.contiguous(movement.reshape(t, 1) if not t._shape else t)


def asfortranarray(a, dtype=None, *, like=None) -> Tensor:
    """``a`` as a column-major (Fortran) contiguous tensor of at least one dimension:
    ``a`` itself when it already is one.

    >>> import jitgrad as jg
    >>> jg.asfortranarray(jg.ones((2, 3))).stride()
    (1, 2)
    """
    t = asarray(a, dtype)
    t = movement.reshape(t, 1) if t.ndim == 0 else t
    if layout.is_contiguous(t.shape[::-1], t.stride()[::-1]):
        return t
    return shaping.copy(t, order="F")


def _numpy_values(values: np.ndarray) -> Tensor:
    """numpy's freshly computed ``values`` as a tensor of their dtype."""
    values = np.asarray(values)
    return _made_by_numpy(values, dtypes.from_numpy_dtype(values.dtype))


def _filled(t: Tensor, value, requires_grad: bool) -> Tensor:
    TensorBase.fill_(t, value)
    return t.requires_grad_(requires_grad)


def _made_by_numpy(values: np.ndarray, d: dtypes.DType) -> Tensor:
    """A tensor of ``values``, which numpy made for this call, in ``d``: outside a trace
    their array becomes its storage; a trace records the fill, which replays repeat."""
    if config.thread.tape is None:
        return numpy_tier.tensor_of(values.astype(d.numpy, copy=False))
    return _filled_by_numpy(values, d)


def _filled_by_numpy(values: np.ndarray, d: dtypes.DType) -> Tensor:
    out = empty(values.shape, d)
    run(np.copyto, out.numpy(), values)
    return out


__all__ = [
    "from_numpy",
    "asarray",
    "array",
    "tensor",
    "empty",
    "full",
    "zeros",
    "ones",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "arange",
    "linspace",
    "logspace",
    "geomspace",
    "eye",
    "identity",
    "tri",
    "indices",
    "fromfunction",
    "meshgrid",
    "mgrid",
    "ogrid",
    "vander",
    "ascontiguousarray",
    "asfortranarray",
]
