"""numpy's creation functions: numpy's values, dtypes, shapes and layouts, numpy's
signatures, and gradients where the result is a function of tensors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.autograd import gradcheck


def check(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(want), type(got)
        for g, w in zip(got, want, strict=True):
            check(g, w)
        return
    want = np.asarray(want)
    assert isinstance(got, jg.Tensor), type(got)
    assert got.dtype.numpy == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def element_strides(a: np.ndarray):
    return tuple(s // a.itemsize for s in a.strides)


CASES = [
    ("identity", (3,), {}),
    ("identity", (2,), {"dtype": int}),
    ("tri", (3,), {}),
    ("tri", (2, 4, 1), {"dtype": np.int8}),
    ("tri", (3, 2, -1), {"dtype": bool}),
    ("indices", ((2, 3),), {}),
    ("indices", ((2, 1, 3),), {"dtype": np.float32}),
    ("indices", ((2, 3),), {"sparse": True}),
    ("indices", ((),), {}),
    ("logspace", (0, 3, 4), {}),
    ("logspace", (0, 3, 4), {"base": 2.0, "endpoint": False}),
    ("logspace", (0, 2, 3), {"dtype": int}),
    ("logspace", ([0, 1], [2, 3], 3), {"axis": 1}),
    ("geomspace", (1, 1000, 4), {}),
    ("geomspace", (-1, -16, 5), {"dtype": np.float32}),
    ("geomspace", (1j, 16j, 3), {}),
    ("vander", ([1, 2, 3],), {}),
    ("vander", (np.array([1, 2, 3], np.int8), 4), {"increasing": True}),
    ("vander", (np.array([0.5, -2.0], np.float32),), {}),
    ("vander", ([True, False], 3), {}),
    ("vander", ([1.0, 2.0], 0), {}),
    ("vander", ([1 + 1j, 2.0],), {}),
    ("linspace", (0, 1, 5), {"endpoint": False}),
    ("linspace", ([0, 1], [4, 9], 3), {"axis": -1}),
    ("eye", (2, 3, 1), {"dtype": np.int16}),
    ("zeros", ((2, 3),), {"dtype": np.int32}),
    ("ones", (4,), {"dtype": bool}),
    ("full", ((2, 2), 7.5), {}),
    ("full", ((2, 3), [1, 2, 3]), {"dtype": np.float32}),
    ("zeros_like", (np.arange(6).reshape(2, 3),), {}),
    ("ones_like", (np.arange(6).reshape(2, 3),), {"dtype": float, "shape": (4,)}),
    ("full_like", (np.arange(3), 2.7), {}),
    ("full_like", (np.arange(3), [1, 2, 3]), {"dtype": np.float32}),
    ("ascontiguousarray", (np.arange(6.0).reshape(2, 3).T,), {}),
    ("ascontiguousarray", (np.float32(3.0),), {}),
    ("asfortranarray", (np.arange(6.0).reshape(2, 3),), {}),
    ("asfortranarray", (5,), {"dtype": np.int8}),
    ("array", ([1, 2],), {"ndmin": 3}),
    ("array", ([[1, 2], [3, 4]],), {"order": "F"}),
    ("asarray", ([[1, 2], [3, 4]], np.float32, "F"), {}),
]


def _converted(value):
    return jg.from_numpy(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize(("name", "args", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, args, kwargs):
    want = getattr(np, name)(*args, **kwargs)
    got = getattr(jg, name)(*(_converted(a) for a in args), **kwargs)
    check(got, want)
    # (numpy's ranges along a later axis are views of a row-major result: values suffice)
    if isinstance(want, np.ndarray) and want.ndim > 1 and want.size > 1 and "space" not in name:
        assert got.stride() == element_strides(want), name


@pytest.mark.parametrize(
    "key",
    [
        slice(0, 5),
        slice(0, 1, 5j),
        (slice(0, 3), slice(1, 7, 2)),
        (slice(-1, 1, 3j), slice(0, 4)),
        (slice(0, 2.5, 0.5), slice(3)),
        slice(5, 0, -2),
    ],
)
def test_mgrid_and_ogrid(key):
    check(jg.mgrid[key], np.mgrid[key])
    want = np.ogrid[key]
    check(jg.ogrid[key], tuple(want) if isinstance(want, (tuple, list)) else want)


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 4), min_size=0, max_size=3),
    indexing=st.sampled_from(["xy", "ij"]),
    sparse=st.booleans(),
    copy=st.booleans(),
)
def test_meshgrid(sizes, indexing, sparse, copy):
    vectors = [np.arange(n, dtype=np.float64) * (i + 1) for i, n in enumerate(sizes)]
    tensors = [jg.from_numpy(v) for v in vectors]
    got = jg.meshgrid(*tensors, indexing=indexing, sparse=sparse, copy=copy)
    want = np.meshgrid(*vectors, indexing=indexing, sparse=sparse, copy=copy)
    check(got, want)
    for g, w, v, t in zip(got, want, vectors, tensors, strict=True):
        assert np.shares_memory(g.numpy(), t.numpy()) == np.shares_memory(w, v)


def test_meshgrid_and_vander_gradients():
    x = jg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = jg.tensor([1.5, 0.0], requires_grad=True)
    assert gradcheck(lambda a, b: jg.meshgrid(a, b)[0] * jg.meshgrid(a, b)[1] ** 2, (x, y))
    assert gradcheck(lambda a, b: jg.meshgrid(a, b, sparse=True, indexing="ij")[1] * 3, (x, y))
    assert gradcheck(lambda a: jg.vander(a), x)
    zeros = jg.tensor([0.0, 0.0, 1.0], requires_grad=True)  # x**0 at 0: gradient 0, not nan
    assert gradcheck(lambda a: jg.vander(a, 4, increasing=True), zeros)


def test_fromfunction():
    check(
        jg.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
        np.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
    )
    check(
        jg.fromfunction(lambda i: i**2, (4,), dtype=int),
        np.fromfunction(lambda i: i**2, (4,), dtype=int),
    )
    scale = jg.tensor(2.0, requires_grad=True)
    out = jg.fromfunction(lambda i, j, s: (i + j) * s, (2, 2), s=scale)
    out.sum().backward()
    assert scale.grad.item() == 4.0


def test_layouts_follow_order():
    assert jg.zeros((2, 3, 4), order="F").stride() == element_strides(
        np.zeros((2, 3, 4), order="F")
    )
    prototype = np.zeros((2, 3, 4)).transpose(2, 0, 1)
    for order in ("K", "A", "C", "F"):
        want = np.empty_like(prototype, order=order)
        got = jg.empty_like(jg.from_numpy(prototype), order=order)
        assert got.stride() == element_strides(want), order
    fortran = np.asfortranarray(np.zeros((2, 3)))
    assert jg.zeros_like(jg.from_numpy(fortran)).stride() == (1, 2)
    assert jg.ones_like(jg.from_numpy(fortran), order="A").stride() == (1, 2)
    a = np.arange(6.0).reshape(2, 3).T
    for order in ("K", "A", "C", "F"):
        assert jg.array(jg.from_numpy(a), order=order).stride() == element_strides(
            np.array(a, order=order)
        ), order


def test_copy_semantics_of_asarray_and_array():
    a = np.arange(6.0).reshape(2, 3)
    t = jg.from_numpy(a)
    assert jg.asarray(t) is t
    assert np.shares_memory(jg.asarray(a).numpy(), a)
    assert not np.shares_memory(jg.asarray(a, copy=True).numpy(), a)
    assert not np.shares_memory(jg.array(a).numpy(), a)
    assert np.shares_memory(jg.array(a, copy=None).numpy(), a)
    assert np.shares_memory(jg.array(t, copy=None, ndmin=4).numpy(), a)
    assert np.shares_memory(jg.ascontiguousarray(t).numpy(), a)
    assert not np.shares_memory(jg.asfortranarray(t).numpy(), a)
    assert np.shares_memory(jg.asfortranarray(t.T).numpy(), a)
    with pytest.raises(ValueError, match="without a copy"):
        jg.asarray(t, order="F", copy=False)
    with pytest.raises(ValueError, match="without a copy"):
        jg.asarray(t, dtype=jg.float32, copy=False)
    with pytest.raises(ValueError, match="order must be one of"):
        jg.asarray(t, order="X")
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    jg.copy(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_numpy_positional_order_is_not_requires_grad():
    t = jg.zeros((2, 2), float, "F")
    assert not t.requires_grad and t.stride() == (1, 2)
    with pytest.raises(ValueError, match="order must be one of 'C' or 'F'"):
        jg.zeros((2, 2), float, True)
    with pytest.raises(ValueError, match="CPU only; device 'cuda'"):
        jg.ones(2, device="cuda")
    assert jg.zeros(2, requires_grad=True).requires_grad


def test_bad_input_errors():
    with pytest.raises(ValueError, match="indexing must be 'xy' or 'ij'"):
        jg.meshgrid(jg.arange(2), indexing="yx")
    with pytest.raises(ValueError, match="one-dimensional"):
        jg.vander(jg.zeros((2, 2)))
    with pytest.raises(ValueError, match="N must be non-negative"):
        jg.vander(jg.zeros(2), -1)


def test_arrays_of_zero_dimensional_tensors_keep_their_dtype():
    y = jg.tensor([1.5, -2.0, 4.0], dtype=jg.float32)
    got = jg.array([y[1], y[0] * 2, -y[2]])
    assert got.dtype is jg.float32 and got.tolist() == [-2.0, 3.0, -4.0]
    mixed = jg.array([jg.tensor(1), y[0]])  # an int and a float32: the float's dtype
    assert mixed.dtype is jg.float32 and mixed.tolist() == [1.0, 1.5]
    halves = jg.tensor([0.5, 2.0], dtype=jg.float16)
    assert jg.array([halves[1], halves[0]]).tolist() == [2.0, 0.5]
    grid = jg.tensor([[1.0, 2.0], [3.0, 4.0]])
    corner = grid[1, 1, ...]  # a 0-d view at an offset
    copied = jg.array([corner, grid[0, 1, ...]])
    copied += 10  # (a new tensor: the views and their base keep their values)
    assert copied.tolist() == [14.0, 12.0] and grid.tolist() == [[1.0, 2.0], [3.0, 4.0]]
