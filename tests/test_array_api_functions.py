"""Every function of the Array API standard (2024.12: the main namespace, ``linalg`` and
``fft``) against array-api-strict, the standard's reference namespace: the same generated
inputs go to both, and the results must agree in values, dtype and shape.

``CASES`` maps each function's name to a hypothesis strategy of its calls; the standard's
list of names comes from array-api-strict, so a function jitgrad lacks, or one this file
does not exercise, fails ``test_every_standard_function_exists_and_is_covered``.
"""

from __future__ import annotations

import cmath
import math
from dataclasses import dataclass, field

import array_api_strict as xps
import numpy as np
import pytest
from array_api_strict._array_object import Array as StrictArray
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg

API_VERSION = "2024.12"
# The names array-api-strict adds for its own configuration: not part of the standard.
STRICT_ONLY = {
    "set_array_api_strict_flags",
    "get_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "ArrayAPIStrictFlags",
    "__version__",
}
# Standard functions array-api-strict gates behind a later version than API_VERSION.
ORACLE_VERSION = {"isin": "2025.12", "broadcast_shapes": "2025.12"}

BOOL = ["bool"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTEGRAL = SIGNED + UNSIGNED
REAL_FLOATING = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
FLOATING = REAL_FLOATING + COMPLEX
REAL = INTEGRAL + REAL_FLOATING
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC
INTEGER_OR_BOOL = BOOL + INTEGRAL


# --- calls: generated once, then built in each namespace -------------------------------


class DTypeName(str):
    """A dtype in a call, by name: ``getattr(namespace, name)`` in each namespace."""


@dataclass
class Raw:
    """An argument passed unchanged to both namespaces (a numpy array for from_dlpack)."""

    value: object


@dataclass
class Call:
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def build(self, xp):
        return tuple(in_namespace(a, xp) for a in self.args), {
            k: in_namespace(v, xp) for k, v in self.kwargs.items()
        }


def in_namespace(obj, xp):
    if isinstance(obj, np.ndarray):
        return xp.asarray(obj)
    if isinstance(obj, DTypeName):
        return getattr(xp, str(obj))
    if isinstance(obj, Raw):
        return obj.value
    if isinstance(obj, list | tuple):
        return type(obj)(in_namespace(o, xp) for o in obj)
    return obj


# --- comparison --------------------------------------------------------------------------


def dtype_name(dtype) -> str:
    if isinstance(dtype, type(xps.float32)):
        return np.dtype(dtype._np_dtype).name
    return jg.dtype(dtype).name


def tolerance(dtype: np.dtype) -> float:
    return 1e-4 if dtype in (np.float32, np.complex64) else 1e-9


def assert_same_array(got, want, *, values: bool = True, signed_zeros: bool = False):
    assert isinstance(got, jg.Tensor), f"{type(got).__name__} instead of an array"
    assert dtype_name(got.dtype) == dtype_name(want.dtype)
    assert tuple(got.shape) == want.shape
    if not values:
        return
    got_np, want_np = np.asarray(got.numpy()), want._array
    if want_np.dtype.kind in "biu":
        np.testing.assert_array_equal(got_np, want_np)
        return
    finite = want_np[np.isfinite(want_np)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    tol = tolerance(want_np.dtype)
    np.testing.assert_allclose(got_np, want_np, rtol=tol, atol=tol * scale, equal_nan=True)
    if signed_zeros:
        parts = [np.real, np.imag] if want_np.dtype.kind == "c" else [np.asarray]
        for part in parts:
            g, w = part(got_np), part(want_np)
            zeros = (w == 0) & (g == 0)
            np.testing.assert_array_equal(np.signbit(g[zeros]), np.signbit(w[zeros]))


def assert_same(got, want, **options):
    """``got`` (jitgrad's) agrees with ``want`` (array-api-strict's), recursively."""
    if isinstance(want, StrictArray):
        assert_same_array(got, want, **options)
    elif isinstance(want, tuple) and hasattr(want, "_fields"):
        for name in want._fields:
            assert_same(getattr(got, name), getattr(want, name), **options)
    elif isinstance(want, list | tuple):
        # A tuple where the standard says tuple; its lists (meshgrid, broadcast_arrays)
        # become tuples in its 2025.12 version, as numpy returns them.
        assert isinstance(got, tuple if isinstance(want, tuple) else list | tuple)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, **options)
    elif isinstance(want, type(xps.float32)):
        assert dtype_name(got) == dtype_name(want)
    elif type(want).__name__ in ("finfo_object", "iinfo_object"):
        for name in ("bits", "max", "min", "eps", "smallest_normal"):
            if hasattr(want, name):
                assert getattr(got, name) == getattr(want, name), name
        assert dtype_name(got.dtype) == dtype_name(want.dtype)
    else:
        assert type(got) is type(want) and got == want, (got, want)


# --- strategies ----------------------------------------------------------------------------


def elements(name: str, low=None, high=None):
    """Values of dtype ``name``: small, so sums and products stay exact and in range."""
    if name == "bool":
        return st.booleans()
    if name in INTEGRAL:
        info = np.iinfo(name)
        low = max(info.min, -10 if low is None else low)
        return st.integers(low, min(info.max, 10 if high is None else high))
    width = {"float32": 32, "float64": 64, "complex64": 64, "complex128": 128}[name]
    low, high = -10.0 if low is None else low, 10.0 if high is None else high
    if name in COMPLEX:
        part = st.floats(low, high, width=width // 2, allow_subnormal=False)
        return st.builds(complex, part, part)
    # Subnormal inputs are left out: 1 / x for a subnormal complex x overflows, and numpy's
    # reciprocal and divide tell its parts apart (0 - inf j against nan - inf j).
    return st.floats(low, high, width=width, allow_subnormal=False)


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
NONEMPTY = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def arrays(dtypes, shape=SHAPES, low=None, high=None):
    """Numpy arrays of one of ``dtypes`` (names, or a strategy of names)."""
    names = dtypes if isinstance(dtypes, st.SearchStrategy) else st.sampled_from(dtypes)
    return names.flatmap(lambda n: hnp.arrays(np.dtype(n), shape, elements=elements(n, low, high)))


def promotable_pairs(dtypes) -> list[tuple[str, str]]:
    """The pairs of ``dtypes`` the standard's promotion table defines."""
    pairs = []
    for a in dtypes:
        for b in dtypes:
            try:
                xps.result_type(getattr(xps, a), getattr(xps, b))
            except TypeError:
                continue
            pairs.append((a, b))
    return pairs


def scalar_of(name: str, value):
    if name == "bool":
        return bool(value)
    if name in INTEGRAL:
        return int(value)
    if name in COMPLEX:
        return complex(value)
    return float(value)


def unary(dtypes, low=None, high=None, **kwargs):
    return arrays(dtypes, low=low, high=high).map(lambda x: Call((x,), dict(kwargs)))


@st.composite
def binary(draw, dtypes, low=None, high=None, low2=None, high2=None, scalars=True):
    """Two broadcastable arrays of a promotable pair of ``dtypes``, or an array and a
    Python scalar of its kind."""
    a, b = draw(st.sampled_from(promotable_pairs(dtypes)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2
    x1 = draw(hnp.arrays(np.dtype(a), shapes.input_shapes[0], elements=elements(a, low, high)))
    x2 = draw(hnp.arrays(np.dtype(b), shapes.input_shapes[1], elements=elements(b, low2, high2)))
    if scalars and draw(st.integers(0, 4)) == 0:
        x2 = scalar_of(a, draw(elements(a, low2, high2)))
        if draw(st.booleans()):
            return Call((x2, x1)) if low2 is None and high2 is None else Call((x1, x2))
    return Call((x1, x2))


def axis_of(ndim: int):
    return st.integers(-ndim, ndim - 1) if ndim else st.none()


@st.composite
def axes_of(draw, ndim: int):
    """None, one axis, or a tuple of distinct axes of an ``ndim``-dimensional array."""
    if ndim == 0 or draw(st.booleans()):
        return None
    if draw(st.booleans()):
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))


@st.composite
def reduction(draw, dtypes, shape=SHAPES, dtype_kw=(), **fixed):
    x = draw(arrays(dtypes, shape))
    kwargs = {"axis": draw(axes_of(x.ndim)), "keepdims": draw(st.booleans()), **fixed}
    if dtype_kw and draw(st.booleans()):
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(dtype_kw)))
    return Call((x,), kwargs)


@st.composite
def cumulative(draw, dtypes):
    x = draw(arrays(dtypes, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)))
    kwargs = {"include_initial": draw(st.booleans())}
    if x.ndim > 1 or draw(st.booleans()):
        kwargs["axis"] = draw(axis_of(x.ndim))
    return Call((x,), kwargs)


def dtype_names(dtypes=ALL):
    return st.sampled_from(dtypes).map(DTypeName)


small_shape = st.lists(st.integers(0, 4), max_size=3).map(tuple)


@st.composite
def like(draw, fill=False):
    x = draw(arrays(ALL))
    kwargs = {}
    target = x.dtype.name
    if draw(st.booleans()):
        target = draw(st.sampled_from(REAL))
        kwargs["dtype"] = DTypeName(target)
    if fill:
        return Call((x,), {"fill_value": scalar_of(target, draw(elements(target))), **kwargs})
    return Call((x,), kwargs)


@st.composite
def creation(draw, fill=False):
    shape = draw(st.one_of(small_shape, st.integers(0, 4)))
    kwargs = {}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(NUMERIC)))
    if fill:
        kind = str(kwargs.get("dtype", draw(st.sampled_from(["bool", "int64", "float64"]))))
        return Call((shape, scalar_of(kind, draw(elements(kind)))), kwargs)
    return Call((shape,), kwargs)


@st.composite
def arange(draw):
    start = draw(st.integers(-5, 5))
    args = [start]
    if draw(st.booleans()):
        args.append(draw(st.integers(-5, 10)))
        if draw(st.booleans()):
            args.append(draw(st.sampled_from([1, 2, 3, -1, -2])))
    if draw(st.booleans()):
        args = [a * 0.5 for a in args]
    kwargs = {}
    if draw(st.booleans()):
        kind = REAL_FLOATING if isinstance(args[0], float) else ["int16", "int64", "float64"]
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(kind)))
    return Call(tuple(args), kwargs)


@st.composite
def asarray(draw):
    x = draw(arrays(ALL))
    obj = x.tolist() if draw(st.booleans()) else x
    kwargs = {"copy": draw(st.sampled_from([None, True]))}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName(x.dtype.name)
    if isinstance(obj, list):
        obj = Raw(obj)
    return Call((obj,), kwargs)


@st.composite
def eye(draw):
    args = [draw(st.integers(0, 5))]
    if draw(st.booleans()):
        args.append(draw(st.integers(0, 5)))
    kwargs = {"k": draw(st.integers(-3, 3))}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(ALL)))
    return Call(tuple(args), kwargs)


@st.composite
def linspace(draw):
    complex_ = draw(st.booleans())
    start, stop = draw(elements("float64")), draw(elements("float64"))
    if complex_:
        start, stop = complex(start, 1.0), complex(stop, -2.0)
    kwargs = {"num": draw(st.integers(0, 6)), "endpoint": draw(st.booleans())}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(COMPLEX if complex_ else FLOATING)))
    return Call((start, stop), kwargs)


@st.composite
def meshgrid(draw):
    name = draw(st.sampled_from(NUMERIC))
    count = draw(st.integers(0, 3))
    xs = [draw(arrays([name], hnp.array_shapes(min_dims=1, max_dims=1))) for _ in range(count)]
    return Call(tuple(xs), {"indexing": draw(st.sampled_from(["xy", "ij"]))})


@st.composite
def triangle(draw):
    x = draw(arrays(ALL, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4)))
    return Call((x,), {"k": draw(st.integers(-3, 3))})


@st.composite
def astype(draw):
    x = draw(arrays(ALL))
    # The standard casts complex to complex only.
    target = draw(st.sampled_from(COMPLEX if x.dtype.kind == "c" else ALL))
    return Call((x, DTypeName(target)), {"copy": draw(st.booleans())})


@st.composite
def can_cast(draw):
    """Casts within a kind (bool, integral, floating). Across kinds jg.can_cast answers as
    numpy's safe casting does (bool to int8 is safe), where array-api-strict refuses every
    cast its promotion table lacks."""
    group = draw(st.sampled_from([BOOL, INTEGRAL, FLOATING]))
    source = draw(st.one_of(dtype_names(group), arrays(group)))
    return Call((source, draw(dtype_names(group))))


@st.composite
def info_of(draw, dtypes):
    return Call((draw(st.one_of(dtype_names(dtypes), arrays(dtypes))),))


KIND_NAMES = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
]


@st.composite
def isdtype(draw):
    kind = draw(st.one_of(st.sampled_from(KIND_NAMES), dtype_names()))
    if draw(st.booleans()):
        kind = (kind, draw(st.sampled_from(KIND_NAMES)))
    return Call((draw(dtype_names()), kind))


@st.composite
def result_type(draw):
    groups = [BOOL, SIGNED, UNSIGNED, REAL_FLOATING + COMPLEX]
    group = draw(st.sampled_from(groups))
    pairs = promotable_pairs(group)
    a, b = draw(st.sampled_from(pairs))
    parts = [DTypeName(a), draw(arrays([b], small_shape))]
    if draw(st.booleans()):
        parts.append(scalar_of(a, 1))
    return Call(tuple(draw(st.permutations(parts))))


@st.composite
def broadcast_shapes_call(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=draw(st.integers(1, 3))))
    return shapes


@st.composite
def broadcast_arrays(draw):
    shapes = draw(broadcast_shapes_call())
    name = draw(st.sampled_from(ALL))
    return Call(tuple(draw(arrays([name], s)) for s in shapes.input_shapes))


@st.composite
def broadcast_to(draw):
    shapes = draw(broadcast_shapes_call())
    return Call((draw(arrays(ALL, shapes.input_shapes[0])), shapes.result_shape))


@st.composite
def broadcast_shapes(draw):
    return Call(tuple(draw(broadcast_shapes_call()).input_shapes))


@st.composite
def clip(draw, keywords=False):
    """``clip(x, min, max)``: bounds None, Python scalars or arrays of ``x``'s dtype."""
    name = draw(st.sampled_from(REAL))
    x = draw(arrays([name]))
    bounds = []
    # min <= max: the standard leaves crossed bounds open.
    for low, high in ((None, 0), (0, None)):
        choice = draw(st.integers(0, 2))
        if choice == 0:
            bounds.append(None)
        elif choice == 1:
            bounds.append(scalar_of(name, draw(elements(name, low, high))))
        else:
            shape = hnp.array_shapes(max_dims=1, max_side=1)
            bounds.append(draw(arrays([name], shape, low, high)))
    if keywords:
        return Call((x,), {key: b for key, b in zip(("min", "max"), bounds) if b is not None})
    return Call((x, *bounds))


@st.composite
def take(draw):
    x = draw(arrays(ALL, NONEMPTY))
    axis = draw(axis_of(x.ndim))
    size = x.shape[axis]
    indices = draw(hnp.arrays(np.int64, st.integers(0, 4), elements=st.integers(-size, size - 1)))
    return Call((x, indices), {} if x.ndim == 1 and draw(st.booleans()) else {"axis": axis})


@st.composite
def take_along_axis(draw):
    x = draw(arrays(ALL, NONEMPTY))
    axis = draw(axis_of(x.ndim))
    shape = list(x.shape)
    size = shape[axis]
    shape[axis] = draw(st.integers(0, 4))
    indices = draw(hnp.arrays(np.int64, tuple(shape), elements=st.integers(-size, size - 1)))
    return Call((x, indices), {"axis": axis})


@st.composite
def matmul(draw, dtypes=NUMERIC):
    a, b = draw(st.sampled_from(promotable_pairs(dtypes)))
    n, m, k = (draw(st.integers(1, 4)) for _ in range(3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    s1 = (k,) if draw(st.booleans()) else batch.input_shapes[0] + (n, k)
    s2 = (k,) if draw(st.booleans()) else batch.input_shapes[1] + (k, m)
    return Call((draw(arrays([a], s1)), draw(arrays([b], s2))))


@st.composite
def tensordot(draw):
    a, b = draw(st.sampled_from(promotable_pairs(NUMERIC)))
    shared = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    left = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    right = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    x1, x2 = draw(arrays([a], left + shared)), draw(arrays([b], shared + right))
    if draw(st.booleans()):
        return Call((x1, x2), {"axes": len(shared)})
    axes1 = list(range(len(left), len(left) + len(shared)))
    return Call((x1, x2), {"axes": (axes1, list(range(len(shared))))})


@st.composite
def vecdot(draw):
    a, b = draw(st.sampled_from(promotable_pairs(NUMERIC)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3))
    s1, s2 = shapes.input_shapes
    n = draw(st.integers(1, 3))
    s1, s2 = s1[:-1] + (n,) if s1 else (n,), s2[:-1] + (n,) if s2 else (n,)
    return Call((draw(arrays([a], s1)), draw(arrays([b], s2))), {"axis": -1})


def matrix_transpose():
    return unary(ALL).filter(lambda c: c.args[0].ndim >= 2) | st.builds(
        lambda x: Call((x,)), arrays(ALL, hnp.array_shapes(min_dims=2, max_dims=3, max_side=3))
    )


@st.composite
def concat(draw):
    a, b = draw(st.sampled_from(promotable_pairs(NUMERIC + BOOL)))
    shape = draw(NONEMPTY)
    axis = draw(st.one_of(st.none(), axis_of(len(shape))))
    xs = []
    for name in (a, b, a)[: draw(st.integers(1, 3))]:
        s = list(shape)
        if axis is not None:
            s[axis] = draw(st.integers(0, 3))
        xs.append(draw(arrays([name], tuple(s))))
    return Call((xs,), {"axis": axis})


@st.composite
def stack(draw):
    name = draw(st.sampled_from(ALL))
    shape = draw(SHAPES)
    xs = [draw(arrays([name], shape)) for _ in range(draw(st.integers(1, 3)))]
    return Call((tuple(xs),), {"axis": draw(st.integers(-len(shape) - 1, len(shape)))})


@st.composite
def expand_dims(draw):
    x = draw(arrays(ALL))
    return Call((x,), {"axis": draw(st.integers(-x.ndim - 1, x.ndim))})


@st.composite
def with_axes(draw, dtypes=ALL, shape=SHAPES):
    x = draw(arrays(dtypes, shape))
    return Call((x,), {"axis": draw(axes_of(x.ndim))})


@st.composite
def moveaxis(draw):
    x = draw(arrays(ALL, NONEMPTY))
    source = draw(st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=1))
    destination = draw(st.permutations(range(x.ndim)))[: len(source)]
    if len(source) == 1 and draw(st.booleans()):
        return Call((x, source[0] - x.ndim, destination[0]))
    return Call((x, tuple(source), tuple(destination)))


@st.composite
def permute_dims(draw):
    x = draw(arrays(ALL))
    return Call((x, tuple(draw(st.permutations(range(x.ndim))))))


@st.composite
def repeat(draw):
    x = draw(arrays(ALL))
    axis = None if x.ndim == 0 or draw(st.booleans()) else draw(axis_of(x.ndim))
    if x.ndim == 0 and draw(st.booleans()):
        return Call((x, 2))
    size = x.size if axis is None else x.shape[axis]
    if draw(st.booleans()):
        repeats = draw(st.integers(0, 3))
    else:
        count = draw(st.sampled_from([size, 1]))
        repeats = draw(hnp.arrays(np.int64, (count,), elements=st.integers(0, 3)))
    return Call((x, repeats), {"axis": axis} if x.ndim > 1 or axis is not None else {})


@st.composite
def reshape(draw, copy=False):
    x = draw(arrays(ALL))
    shape = list(draw(st.permutations(x.shape)))
    if shape and draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1 if x.size else shape[0]
    return Call((x, tuple(shape)), {"copy": draw(st.sampled_from([None, True]))} if copy else {})


@st.composite
def roll(draw):
    x = draw(arrays(ALL))
    axis = draw(axes_of(x.ndim))
    if isinstance(axis, tuple):
        shift = tuple(draw(st.integers(-5, 5)) for _ in axis)
    else:
        shift = draw(st.integers(-5, 5))
    return Call((x, shift), {"axis": axis})


@st.composite
def squeeze(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=3))
    ones = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, min_size=1))
    shape = tuple(1 if i in ones else s for i, s in enumerate(shape))
    x = draw(arrays(ALL, shape))
    axis = tuple(ones) if len(ones) > 1 or draw(st.booleans()) else ones[0] - len(shape)
    return Call((x,), {"axis": axis})


@st.composite
def tile(draw):
    x = draw(arrays(ALL))
    return Call((x, tuple(draw(st.lists(st.integers(0, 3), max_size=3)))))


@st.composite
def unstack(draw):
    x = draw(arrays(ALL, NONEMPTY))
    return Call((x,), {"axis": draw(axis_of(x.ndim))})


@st.composite
def arg_reduction(draw):
    x = draw(arrays(REAL, NONEMPTY))
    axis = None if draw(st.booleans()) else draw(axis_of(x.ndim))
    return Call((x,), {"axis": axis, "keepdims": draw(st.booleans())})


@st.composite
def nonzero(draw):
    return Call((draw(arrays(ALL, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))),))


@st.composite
def searchsorted(draw):
    a, b = draw(st.sampled_from(promotable_pairs(REAL)))
    x1 = np.sort(draw(arrays([a], hnp.array_shapes(min_dims=1, max_dims=1))))
    x2 = draw(arrays([b]))
    kwargs = {"side": draw(st.sampled_from(["left", "right"]))}
    if draw(st.booleans()):
        perm = np.asarray(draw(st.permutations(range(x1.size))), dtype=np.int64)
        x1 = x1[np.argsort(perm)]
        kwargs["sorter"] = perm
    return Call((x1, x2), kwargs)


@st.composite
def where(draw):
    call = draw(binary(ALL))
    shape = draw(st.sampled_from([(), np.shape(call.args[0])]))
    condition = draw(hnp.arrays(np.bool_, shape))
    return Call((condition, *call.args))


@st.composite
def isin(draw):
    a, b = draw(st.sampled_from(promotable_pairs(INTEGRAL)))
    return Call(
        (draw(arrays([a])), draw(arrays([b]))),
        {"invert": draw(st.booleans())},
    )


@st.composite
def sort(draw):
    x = draw(arrays(REAL, NONEMPTY))
    return Call(
        (x,),
        {"axis": draw(axis_of(x.ndim)), "descending": draw(st.booleans()), "stable": True},
    )


@st.composite
def diff(draw):
    x = draw(arrays(NUMERIC, NONEMPTY))
    axis = draw(axis_of(x.ndim))
    kwargs = {"axis": axis, "n": draw(st.integers(1, 2))}
    for key in ("prepend", "append"):
        if draw(st.booleans()):
            shape = list(x.shape)
            shape[axis] = draw(st.integers(1, 2))
            kwargs[key] = draw(arrays([x.dtype.name], tuple(shape)))
    return Call((x,), kwargs)


# --- linalg --------------------------------------------------------------------------------

STACKS = st.lists(st.integers(1, 2), max_size=1).map(tuple)


@st.composite
def square(draw, dtypes=FLOATING, kind="general", n=None):
    """Stacks of square matrices: well conditioned ("general"), Hermitian positive definite
    ("positive"), or of low rank ("singular")."""
    name = draw(st.sampled_from(dtypes))
    n = draw(st.integers(1, 4)) if n is None else n
    a = draw(arrays([name], draw(STACKS) + (n, n)))
    if kind == "positive":
        a = a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n, dtype=name)
    elif kind == "general":
        a = a + 20 * n * np.eye(n, dtype=name)
    elif kind == "singular":
        a[..., -1, :] = 0
    return a.astype(name)


@st.composite
def matrices(draw, dtypes=FLOATING):
    name = draw(st.sampled_from(dtypes))
    shape = draw(STACKS) + (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    return draw(arrays([name], shape))


def one_matrix(strategy, **kwargs):
    return strategy.map(lambda x: Call((x,), dict(kwargs)))


@st.composite
def cholesky(draw):
    return Call((draw(square(kind="positive")),), {"upper": draw(st.booleans())})


@st.composite
def cross(draw):
    a, b = draw(st.sampled_from(promotable_pairs(NUMERIC)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=2))
    s1, s2 = shapes.input_shapes
    return Call((draw(arrays([a], s1 + (3,))), draw(arrays([b], s2 + (3,)))), {"axis": -1})


@st.composite
def diagonal(draw):
    x = draw(arrays(ALL, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4)))
    return Call((x,), {"offset": draw(st.integers(-3, 3))})


@st.composite
def matrix_norm(draw):
    ord_ = draw(st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]))
    x = draw(square(kind="general")) if ord_ in (-2, -1, -math.inf) else draw(matrices())
    return Call((x,), {"keepdims": draw(st.booleans()), "ord": ord_})


@st.composite
def matrix_power(draw):
    power = draw(st.integers(-2, 3))
    return Call((draw(square()), power))


@st.composite
def matrix_rank(draw):
    x = draw(st.one_of(square(kind="singular"), square(kind="general")))
    return Call((x,), {"rtol": draw(st.sampled_from([None, 1e-3]))})


@st.composite
def outer(draw):
    a, b = draw(st.sampled_from(promotable_pairs(NUMERIC)))
    one_dim = hnp.array_shapes(min_dims=1, max_dims=1)
    return Call((draw(arrays([a], one_dim)), draw(arrays([b], one_dim))))


@st.composite
def pinv(draw):
    return Call((draw(matrices()),), {"rtol": draw(st.sampled_from([None, 1e-3]))})


@st.composite
def qr(draw):
    x = draw(matrices())
    return Call((x,), {"mode": draw(st.sampled_from(["reduced", "complete"]))})


@st.composite
def solve(draw):
    a = draw(square(kind="general"))
    n = a.shape[-1]
    if a.ndim == 2 and draw(st.booleans()):
        b = draw(arrays([a.dtype.name], (n,)))
    else:
        b = draw(arrays([a.dtype.name], a.shape[:-1] + (draw(st.integers(1, 3)),)))
    return Call((a, b))


@st.composite
def svd(draw):
    return Call((draw(matrices()),), {"full_matrices": draw(st.booleans())})


@st.composite
def trace(draw):
    x = draw(arrays(NUMERIC, hnp.array_shapes(min_dims=2, max_dims=3, max_side=4)))
    kwargs = {"offset": draw(st.integers(-2, 2))}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName("complex128" if x.dtype.kind == "c" else "float64")
    return Call((x,), kwargs)


@st.composite
def vector_norm(draw):
    x = draw(arrays(FLOATING))
    ord_ = draw(st.sampled_from([1, 2, 3, math.inf, -math.inf, 0, -1]))
    return Call((x,), {"axis": draw(axes_of(x.ndim)), "keepdims": draw(st.booleans()), "ord": ord_})


# --- fft -----------------------------------------------------------------------------------


@st.composite
def fft_1d(draw, dtypes, min_n=1):
    x = draw(arrays(dtypes, hnp.array_shapes(min_dims=1, max_dims=2, min_side=min_n)))
    kwargs = {"axis": draw(axis_of(x.ndim)), "norm": draw(st.sampled_from(NORMS))}
    if draw(st.booleans()):
        kwargs["n"] = draw(st.integers(max(min_n, 1), 6))
    return Call((x,), kwargs)


NORMS = ["backward", "ortho", "forward"]


@st.composite
def fft_nd(draw, dtypes, min_n=1):
    x = draw(arrays(dtypes, hnp.array_shapes(min_dims=1, max_dims=3, min_side=min_n)))
    kwargs = {"norm": draw(st.sampled_from(NORMS))}
    if draw(st.booleans()):
        axes = draw(st.lists(st.integers(0, x.ndim - 1), unique=True, min_size=1))
        kwargs["axes"] = tuple(axes)
        if draw(st.booleans()):
            kwargs["s"] = tuple(draw(st.integers(max(min_n, 1), 5)) for _ in axes)
    return Call((x,), kwargs)


@st.composite
def fftfreq(draw):
    kwargs = {"d": draw(st.sampled_from([1.0, 0.5, 3.0]))}
    if draw(st.booleans()):
        kwargs["dtype"] = DTypeName(draw(st.sampled_from(REAL_FLOATING)))
    return Call((draw(st.integers(1, 7)),), kwargs)


@st.composite
def fftshift(draw):
    x = draw(arrays(FLOATING, NONEMPTY))
    return Call((x,), {"axes": draw(axes_of(x.ndim))})


# --- the table -----------------------------------------------------------------------------


def sort_values(xp, result):
    """The standard leaves unique_values' order open: compared sorted."""
    return xp.sort(result)


def isin_oracle(call: Call):
    """array-api-strict's isin ignores ``invert``: the standard's answer is its negation."""
    kwargs = {k: v for k, v in call.kwargs.items() if k != "invert"}
    found = run_oracle("isin", Call(call.args, kwargs))
    return xps.logical_not(found) if call.kwargs.get("invert") else found


@dataclass
class Case:
    strategy: st.SearchStrategy
    values: bool = True  # False where the standard leaves the values unspecified
    oracle: object = None  # Call -> the standard's result, where array-api-strict errs
    normalize: object = None  # (namespace, result) -> the result as compared
    signed_zeros: bool = False  # whether -0.0 and 0.0 are told apart


UNARY_ELEMENTWISE = {
    "abs": NUMERIC,
    "acos": FLOATING,
    "acosh": FLOATING,
    "asin": FLOATING,
    "asinh": FLOATING,
    "atan": FLOATING,
    "atanh": FLOATING,
    "bitwise_invert": INTEGER_OR_BOOL,
    "ceil": REAL,
    "conj": NUMERIC,
    "cos": FLOATING,
    "cosh": FLOATING,
    "exp": FLOATING,
    "expm1": FLOATING,
    "floor": REAL,
    "imag": COMPLEX,
    "isfinite": NUMERIC,
    "isinf": NUMERIC,
    "isnan": NUMERIC,
    "log": FLOATING,
    "log1p": FLOATING,
    "log2": FLOATING,
    "log10": FLOATING,
    "logical_not": BOOL,
    "negative": NUMERIC,
    "positive": NUMERIC,
    "real": NUMERIC,
    "reciprocal": FLOATING,
    "round": NUMERIC,
    "sign": NUMERIC,
    "signbit": REAL_FLOATING,
    "sin": FLOATING,
    "sinh": FLOATING,
    "square": NUMERIC,
    "sqrt": FLOATING,
    "tan": FLOATING,
    "tanh": FLOATING,
    "trunc": REAL,
}
BINARY_ELEMENTWISE = {
    "add": NUMERIC,
    "atan2": REAL_FLOATING,
    "bitwise_and": INTEGER_OR_BOOL,
    "bitwise_or": INTEGER_OR_BOOL,
    "bitwise_xor": INTEGER_OR_BOOL,
    "copysign": REAL_FLOATING,
    "divide": FLOATING,
    "equal": ALL,
    "greater": REAL,
    "greater_equal": REAL,
    "hypot": REAL_FLOATING,
    "less": REAL,
    "less_equal": REAL,
    "logaddexp": REAL_FLOATING,
    "logical_and": BOOL,
    "logical_or": BOOL,
    "logical_xor": BOOL,
    "maximum": REAL,
    "minimum": REAL,
    "multiply": NUMERIC,
    "nextafter": REAL_FLOATING,
    "not_equal": ALL,
    "subtract": NUMERIC,
}

CASES: dict[str, Case] = {
    **{name: Case(unary(dtypes)) for name, dtypes in UNARY_ELEMENTWISE.items()},
    **{name: Case(binary(dtypes)) for name, dtypes in BINARY_ELEMENTWISE.items()},
    # Integer division by zero and shifts past the width are unspecified: drawn away.
    "floor_divide": Case(binary(REAL, low2=1)),
    "remainder": Case(binary(REAL, low2=1)),
    "pow": Case(binary(NUMERIC, low=-3, high=3, low2=0, high2=3)),
    "bitwise_left_shift": Case(binary(INTEGRAL, low=0, low2=0, high2=7)),
    "bitwise_right_shift": Case(binary(INTEGRAL, low2=0, high2=7)),
    "clip": Case(clip()),
    # creation
    "arange": Case(arange()),
    "asarray": Case(asarray()),
    "empty": Case(creation(), values=False),
    "empty_like": Case(like(), values=False),
    "eye": Case(eye()),
    "from_dlpack": Case(arrays(ALL).map(lambda x: Call((Raw(x),)))),
    "full": Case(creation(fill=True)),
    "full_like": Case(like(fill=True)),
    "linspace": Case(linspace()),
    "meshgrid": Case(meshgrid()),
    "ones": Case(creation()),
    "ones_like": Case(like()),
    "zeros": Case(creation()),
    "zeros_like": Case(like()),
    "tril": Case(triangle()),
    "triu": Case(triangle()),
    # data types
    "astype": Case(astype()),
    "broadcast_arrays": Case(broadcast_arrays()),
    "broadcast_shapes": Case(broadcast_shapes()),
    "broadcast_to": Case(broadcast_to()),
    "can_cast": Case(can_cast()),
    "finfo": Case(info_of(FLOATING)),
    "iinfo": Case(info_of(INTEGRAL)),
    "isdtype": Case(isdtype()),
    "result_type": Case(result_type()),
    "__array_namespace_info__": Case(st.just(Call(()))),
    # indexing
    "take": Case(take()),
    "take_along_axis": Case(take_along_axis()),
    # linear algebra
    "matmul": Case(matmul()),
    "matrix_transpose": Case(matrix_transpose()),
    "tensordot": Case(tensordot()),
    "vecdot": Case(vecdot()),
    # manipulation
    "concat": Case(concat()),
    "expand_dims": Case(expand_dims()),
    "flip": Case(with_axes()),
    "moveaxis": Case(moveaxis()),
    "permute_dims": Case(permute_dims()),
    "repeat": Case(repeat()),
    "reshape": Case(reshape()),
    "roll": Case(roll()),
    "squeeze": Case(squeeze()),
    "stack": Case(stack()),
    "tile": Case(tile()),
    "unstack": Case(unstack()),
    # searching
    "argmax": Case(arg_reduction()),
    "argmin": Case(arg_reduction()),
    "count_nonzero": Case(reduction(ALL)),
    "nonzero": Case(nonzero()),
    "searchsorted": Case(searchsorted()),
    "where": Case(where()),
    # sets
    "isin": Case(isin(), oracle=isin_oracle),
    "unique_all": Case(unary(REAL)),
    "unique_counts": Case(unary(REAL)),
    "unique_inverse": Case(unary(REAL)),
    "unique_values": Case(unary(REAL), normalize=sort_values),
    # sorting
    "argsort": Case(sort()),
    "sort": Case(sort()),
    # statistics
    "cumulative_sum": Case(cumulative(NUMERIC)),
    "cumulative_prod": Case(cumulative(NUMERIC)),
    "max": Case(reduction(REAL, NONEMPTY)),
    "min": Case(reduction(REAL, NONEMPTY)),
    "mean": Case(reduction(FLOATING)),
    "prod": Case(reduction(NUMERIC, dtype_kw=["int64", "float64", "complex128"])),
    "sum": Case(reduction(NUMERIC, dtype_kw=["int64", "float64", "complex128"])),
    "std": Case(reduction(REAL_FLOATING, NONEMPTY, correction=0)),
    "var": Case(reduction(REAL_FLOATING, NONEMPTY, correction=1)),
    # utility
    "all": Case(reduction(ALL)),
    "any": Case(reduction(ALL)),
    "diff": Case(diff()),
    # linalg
    "linalg.cholesky": Case(cholesky()),
    "linalg.cross": Case(cross()),
    "linalg.det": Case(one_matrix(square())),
    "linalg.diagonal": Case(diagonal()),
    "linalg.eigh": Case(one_matrix(square(kind="positive", dtypes=REAL_FLOATING))),
    "linalg.eigvalsh": Case(one_matrix(square(kind="positive"))),
    "linalg.inv": Case(one_matrix(square())),
    "linalg.matmul": Case(matmul()),
    "linalg.matrix_norm": Case(matrix_norm()),
    "linalg.matrix_power": Case(matrix_power()),
    "linalg.matrix_rank": Case(matrix_rank()),
    "linalg.matrix_transpose": Case(matrix_transpose()),
    "linalg.outer": Case(outer()),
    "linalg.pinv": Case(pinv()),
    "linalg.qr": Case(qr()),
    "linalg.slogdet": Case(one_matrix(square())),
    "linalg.solve": Case(solve()),
    "linalg.svd": Case(svd()),
    "linalg.svdvals": Case(one_matrix(matrices())),
    "linalg.tensordot": Case(tensordot()),
    "linalg.trace": Case(trace()),
    "linalg.vecdot": Case(vecdot()),
    "linalg.vector_norm": Case(vector_norm()),
    # fft
    "fft.fft": Case(fft_1d(COMPLEX)),
    "fft.ifft": Case(fft_1d(COMPLEX)),
    "fft.fftn": Case(fft_nd(COMPLEX)),
    "fft.ifftn": Case(fft_nd(COMPLEX)),
    "fft.rfft": Case(fft_1d(REAL_FLOATING)),
    "fft.irfft": Case(fft_1d(COMPLEX, min_n=2)),
    "fft.rfftn": Case(fft_nd(REAL_FLOATING)),
    "fft.irfftn": Case(fft_nd(COMPLEX, min_n=2)),
    "fft.hfft": Case(fft_1d(COMPLEX, min_n=2)),
    "fft.ihfft": Case(fft_1d(REAL_FLOATING)),
    "fft.fftfreq": Case(fftfreq()),
    "fft.rfftfreq": Case(fftfreq()),
    "fft.fftshift": Case(fftshift()),
    "fft.ifftshift": Case(fftshift()),
}

# Failures whose fix lies outside this change; strict, so a fix makes them fail loudly.
XFAIL: dict[str, str] = {}


def standard_functions() -> list[str]:
    """The standard's functions, as array-api-strict lists them: ``name``, ``linalg.name``,
    ``fft.name``."""
    names = []
    for prefix, module in (("", xps), ("linalg.", xps.linalg), ("fft.", xps.fft)):
        for name in module.__all__:
            obj = getattr(module, name)
            if name in STRICT_ONLY or isinstance(obj, type) or not callable(obj):
                continue
            names.append(prefix + name)
    return names


def resolve(namespace, dotted: str):
    for part in dotted.split("."):
        namespace = getattr(namespace, part)
    return namespace


def test_every_standard_function_exists_and_is_covered():
    functions = standard_functions()
    assert len(functions) > 140 and "linalg.svd" in functions and "fft.fftn" in functions
    missing = [name for name in functions if not callable(getattr_dotted(jg, name))]
    assert missing == []
    assert sorted(set(functions) - set(CASES)) == []
    assert sorted(set(CASES) - set(functions)) == []


def test_every_standard_name_exists():
    for module, ours in ((xps, jg), (xps.linalg, jg.linalg), (xps.fft, jg.fft)):
        missing = [n for n in module.__all__ if n not in STRICT_ONLY and not hasattr(ours, n)]
        assert missing == [], module.__name__
    for name in ("e", "inf", "nan", "pi"):
        assert getattr(jg, name) == getattr(xps, name) or math.isnan(getattr(jg, name))
    assert jg.newaxis is None


def getattr_dotted(namespace, dotted: str):
    try:
        return resolve(namespace, dotted)
    except AttributeError:
        return None


def run_oracle(name: str, call: Call):
    args, kwargs = call.build(xps)
    with xps.ArrayAPIStrictFlags(api_version=ORACLE_VERSION.get(name, API_VERSION)):
        return resolve(xps, name)(*args, **kwargs)


def with_xfails(params, xfails=None):
    xfails = XFAIL if xfails is None else xfails
    return [
        pytest.param(
            *(p if isinstance(p, tuple) else (p,)),
            marks=pytest.mark.xfail(strict=True, reason=xfails[p]),
        )
        if p in xfails
        else p
        for p in params
    ]


def check_call(name: str, call: Call, case: Case):
    args, kwargs = call.build(jg)
    try:
        want = case.oracle(call) if case.oracle else run_oracle(name, call)
    except (ValueError, ArithmeticError):
        # Input without an answer (the -inf norm of nothing): an error in jitgrad too.
        with pytest.raises(Exception):  # noqa: B017  the standard names no exception type
            resolve(jg, name)(*args, **kwargs)
        return
    got = resolve(jg, name)(*args, **kwargs)
    if case.normalize:
        got, want = case.normalize(jg, got), case.normalize(xps, want)
    if name == "__array_namespace_info__":
        assert got.capabilities() == want.capabilities()
        assert {k: dtype_name(v) for k, v in got.default_dtypes().items()} == {
            k: dtype_name(v) for k, v in want.default_dtypes().items()
        }
        assert sorted(got.dtypes()) == sorted(want.dtypes())
        return
    assert_same(got, want, values=case.values, signed_zeros=case.signed_zeros)


@pytest.mark.parametrize("name", with_xfails(sorted(CASES)))
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_function_matches_the_reference_namespace(name, data):
    case = CASES[name]
    check_call(name, data.draw(case.strategy, label="call"), case)


@settings(max_examples=5, deadline=None)
@given(call=clip(keywords=True).filter(lambda c: c.kwargs))
def test_clip_takes_min_and_max_keywords(call):
    check_call("clip", call, CASES["clip"])


# --- special cases -------------------------------------------------------------------------

# The operands of the standard's special-case tables (NaN, signed zeros and infinities, the
# boundaries of the functions' domains, halves for the rounding functions), and ordinary
# values beside them.
SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.0]
SPECIAL += [-2.0, math.pi / 2, -math.pi / 4, 1e-300, 1e300]
SPECIAL_PARTS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0]
SPECIAL_COMPLEX = [complex(a, b) for a in SPECIAL_PARTS for b in SPECIAL_PARTS]
SPECIAL_BINARY = {
    name: dtypes
    for name, dtypes in {
        **BINARY_ELEMENTWISE,
        "floor_divide": REAL,
        "remainder": REAL,
        "pow": NUMERIC,
    }.items()
    if "float64" in dtypes
}


def special_cases(names, dtypes):
    return with_xfails(
        [
            (name, dtype)
            for name in names
            for dtype in dtypes
            if dtype in {**UNARY_ELEMENTWISE, **SPECIAL_BINARY}[name]
        ],
        XFAIL_SPECIAL,
    )


def special_operand(dtype: str, name: str = "") -> np.ndarray:
    values = SPECIAL_COMPLEX if dtype in COMPLEX else SPECIAL
    if name == "sign" and dtype in COMPLEX:
        # The standard leaves sign(z) of an infinite z without NaN parts to complex
        # division's rules, which leave it open: numpy's 1 + 0j for inf + 0j, where
        # array-api-strict computes inf / inf.
        values = [z for z in values if cmath.isnan(z) or cmath.isfinite(z)]
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=dtype)


# Special cases whose fix lies outside this change, by (function, dtype).
XFAIL_SPECIAL: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize(
    ("name", "dtype"), special_cases(sorted(UNARY_ELEMENTWISE), REAL_FLOATING + COMPLEX)
)
def test_unary_special_cases(name, dtype):
    call = Call((special_operand(dtype, name),))
    check_call(name, call, Case(st.nothing(), signed_zeros=dtype in REAL_FLOATING))


@pytest.mark.parametrize(
    ("name", "dtype"), special_cases(sorted(SPECIAL_BINARY), REAL_FLOATING + COMPLEX)
)
def test_binary_special_cases(name, dtype):
    x = special_operand(dtype)
    call = Call((x[:, None], x[None, :]))
    check_call(name, call, Case(st.nothing(), signed_zeros=dtype in REAL_FLOATING))


@settings(max_examples=5, deadline=None)
@given(call=reshape(copy=True))
def test_reshape_takes_copy(call):
    check_call("reshape", call, CASES["reshape"])
