"""The tensor's numpy surface, and the names numpy and PyTorch give two meanings: numpy's
on positional arguments and ndarray attributes, PyTorch's where its keywords say so."""

import json
import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg

A = np.arange(24.0).reshape(2, 3, 4) % 7  # ties, so indices of extremes are tested too


def same(got, want):
    """``got`` (a tensor) has numpy's values, dtype and shape."""
    want = np.asarray(want)
    assert isinstance(got, jg.Tensor), type(got)
    assert got.dtype.numpy == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got.numpy(), want)


# -- transpose -------------------------------------------------------------------------------


def test_two_dims_are_swapped_as_pytorch_on_a_matrix_too():
    points = jg.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    swapped = points.transpose(0, 1)
    assert swapped.shape == (2, 3) and swapped.stride() == (1, 2)
    assert swapped.storage() is points.storage()
    same(swapped, points.numpy().T)
    same(jg.transpose(points, 0, 1), points.numpy().T)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), ndim=st.integers(1, 4))
def test_transpose_of_two_dims_is_torch_and_of_a_permutation_numpy(data, ndim):
    shape = data.draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, max_side=3))
    a = np.arange(np.prod(shape)).reshape(shape)
    t = jg.from_numpy(a)
    d0, d1 = data.draw(st.integers(-ndim, ndim - 1)), data.draw(st.integers(-ndim, ndim - 1))
    want = torch.from_numpy(a).transpose(d0, d1).numpy()
    for got in (t.transpose(d0, d1), jg.transpose(t, d0, d1), jg.swapaxes(t, dim0=d0, dim1=d1)):
        same(got, want)
    perm = tuple(data.draw(st.permutations(range(ndim))))
    same(t.transpose(perm), a.transpose(perm))
    same(t.transpose(list(perm)), a.transpose(perm))
    same(t.transpose(axes=perm), a.transpose(perm))
    same(jg.transpose(t, perm), np.transpose(a, perm))
    same(jg.transpose(t, axes=perm), np.transpose(a, perm))
    same(t.transpose(), a.transpose())
    same(jg.transpose(t), np.transpose(a))
    if ndim != 2:  # one integer per dimension, as numpy's a.transpose(2, 0, 1)
        same(t.transpose(*perm), a.transpose(*perm))


def test_transpose_refuses_what_neither_library_means():
    t = jg.zeros((2, 3, 4))
    with pytest.raises(TypeError, match="numpy's axes .* or PyTorch's two dimensions"):
        jg.transpose(t, 0, 1, 2)
    with pytest.raises(TypeError, match="not both"):
        t.transpose(0, 1, axes=(1, 0, 2))
    with pytest.raises(ValueError, match="not a permutation of 3 dims"):
        jg.transpose(t, (1, 0))


def test_transpose_is_differentiable_like_torch():
    a = np.random.default_rng(0).normal(size=(3, 2))
    x, xt = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    weights = np.arange(6.0).reshape(2, 3)
    (x.transpose(0, 1) * jg.tensor(weights)).sum().backward()
    (xt.transpose(0, 1) * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


# -- size ------------------------------------------------------------------------------------


def test_size_is_numpys_int_and_pytorchs_call():
    t = jg.zeros((2, 3))
    n = t.size
    assert n == 6 and isinstance(n, int) and n + 1 == 7 and n * 2 == 12 and -n == -6
    assert list(range(n)) == list(range(6)) and hash(n) == hash(6) and {n: "x"}[6] == "x"
    assert json.dumps({"n": n}) == '{"n": 6}' and repr(n) == "6" and f"{n:03d}" == "006"
    assert np.zeros(n).shape == (6,) and np.asarray(n).dtype == np.asarray(6).dtype
    assert type(pickle.loads(pickle.dumps(n))) is int
    assert t.size() == (2, 3) and t.size(0) == 2 and t.size(-1) == 3
    assert jg.zeros(()).size == 1 and jg.zeros((4, 0)).size == 0
    with pytest.raises(IndexError, match="dimension 2"):
        t.size(2)
    assert np.size(t) == np.size(np.zeros((2, 3)))


# -- max, min and friends: numpy's values, or PyTorch's (values, indices) with dim= ------------


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_dim_gives_values_and_indices_as_torch(name, dim, keepdim):
    t, ref = jg.from_numpy(A), torch.from_numpy(A)
    want = getattr(ref, name)(dim=dim, keepdim=keepdim)
    for got in (
        getattr(t, name)(dim=dim, keepdim=keepdim),
        getattr(jg, name)(t, dim=dim, keepdim=keepdim),
    ):
        assert type(got).__name__ == name and got._fields == ("values", "indices")
        values, indices = got
        same(values, want.values.numpy())
        same(got.indices, want.indices.numpy())
        assert indices.dtype is jg.int64


@pytest.mark.parametrize("name", ["max", "min"])
def test_without_dim_it_is_numpys_values(name):
    t = jg.from_numpy(A)
    same(getattr(t, name)(1), getattr(A, name)(1))
    same(getattr(t, name)(axis=1), getattr(A, name)(axis=1))
    same(getattr(t, name)(axis=(0, 2), keepdims=True), getattr(A, name)((0, 2), keepdims=True))
    same(getattr(jg, name)(t, 1), getattr(np, name)(A, 1))
    same(getattr(jg, name)(t, 1, keepdim=True), getattr(np, name)(A, 1, keepdims=True))
    same(getattr(t, name)(), getattr(A, name)())
    same(getattr(jg, "a" + name)(t, dim=0), getattr(np, "a" + name)(A, 0))  # values only


def test_dim_of_max_is_one_dimension_and_not_also_axis():
    t = jg.from_numpy(A)
    with pytest.raises(TypeError, match="one dimension .* use axis="):
        t.max(dim=(0, 1))
    with pytest.raises(TypeError, match="both axis= and dim="):
        t.max(0, dim=1)
    with pytest.raises(TypeError, match="both axis= and dim="):
        jg.min(t, axis=0, dim=1)
    with pytest.raises(TypeError, match="both keepdims= and keepdim="):
        t.max(dim=0, keepdims=True, keepdim=True)
    with pytest.raises(TypeError, match=r"use jg.maximum\(x, other\)"):
        t.max(jg.zeros(4))  # PyTorch's elementwise max(input, other)
    same(t.max(jg.tensor(1)), A.max(np.int64(1)))  # a 0-d integer is an axis, as in numpy


def test_max_with_dim_carries_the_values_gradient():
    a = np.random.default_rng(1).normal(size=(3, 4))
    x, xt = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (x.max(dim=1).values * 2).sum().backward()
    (xt.max(dim=1).values * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


# -- dim= and keepdim= wherever axis= and keepdims= are ----------------------------------------

# (jitgrad's call with numpy's keywords, the same with PyTorch's)
KEYWORD_PAIRS = [
    (lambda t, **k: jg.sum(t, **k), {"axis": 1, "keepdims": True}),
    (lambda t, **k: t.mean(**k), {"axis": 0, "keepdims": True}),
    (lambda t, **k: jg.prod(t, **k), {"axis": -1}),
    (lambda t, **k: t.std(**k, ddof=0), {"axis": 1, "keepdims": True}),
    (lambda t, **k: jg.var(t, **k, correction=1), {"axis": 2}),
    (lambda t, **k: jg.amax(t, **k), {"axis": 2, "keepdims": True}),
    (lambda t, **k: t.argmax(**k), {"axis": 1, "keepdims": True}),
    (lambda t, **k: jg.argmin(t, **k), {"axis": 0}),
    (lambda t, **k: jg.any(t > 3, **k), {"axis": 1}),
    (lambda t, **k: (t > 0).all(**k), {"axis": 2, "keepdims": True}),
    (lambda t, **k: t.cumsum(**k), {"axis": 1}),
    (lambda t, **k: jg.cumprod(t, **k), {"axis": 2}),
    (lambda t, **k: jg.logsumexp(t, **k), {"axis": 1, "keepdims": True}),
    (lambda t, **k: t.ptp(**k), {"axis": 1}),
    (lambda t, **k: jg.flip(t, **k), {"axis": (0, 2)}),
    (lambda t, **k: jg.squeeze(t[:1], **k), {"axis": 0}),
    (lambda t, **k: jg.expand_dims(t, **k), {"axis": 1}),
    (lambda t, **k: jg.cat([t, t], **k), {"axis": 1}),
    (lambda t, **k: jg.concatenate([t, t], **k), {"axis": -1}),
    (lambda t, **k: jg.stack([t, t], **k), {"axis": 2}),
    (lambda t, **k: t.repeat(2, **k), {"axis": 1}),
    (lambda t, **k: t.diagonal(**k), {"axis1": 1, "axis2": 2}),
    (lambda t, **k: t.take_along_axis(jg.zeros((2, 1, 4), dtype=jg.int64), **k), {"axis": 1}),
]
TORCH_NAME = {"axis": "dim", "keepdims": "keepdim", "axis1": "dim1", "axis2": "dim2"}


@pytest.mark.parametrize("call, numpy_kwargs", KEYWORD_PAIRS)
def test_pytorch_keywords_mean_numpys(call, numpy_kwargs):
    t = jg.from_numpy(A)
    torch_kwargs = {TORCH_NAME[k]: v for k, v in numpy_kwargs.items()}
    want = call(t, **numpy_kwargs).numpy()
    same(call(t, **torch_kwargs), want)
    name = next(iter(numpy_kwargs))
    with pytest.raises(TypeError, match=f"both {name}= and {TORCH_NAME[name]}="):
        call(t, **numpy_kwargs, **{TORCH_NAME[name]: numpy_kwargs[name]})


def test_flip_takes_pytorchs_dims():
    t = jg.from_numpy(A)
    same(jg.flip(t, dims=(0, 2)), np.flip(A, (0, 2)))
    same(t.flip(dims=[1]), np.flip(A, 1))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "argmax", "cumsum", "std", "var"])
def test_dim_forms_match_torch(name):
    # (std and var in PyTorch's spelling divide by n - 1, as PyTorch's)
    t, ref = jg.from_numpy(A), torch.from_numpy(A)
    kwargs = {} if name == "cumsum" else {"keepdim": True}
    got = getattr(jg, name)(t, dim=1, **kwargs)
    want = getattr(torch, name)(ref, dim=1, **kwargs)
    got, want = (got.values, want.values) if name == "max" else (got, want)
    np.testing.assert_allclose(got.numpy(), want.numpy())
    assert got.shape == tuple(want.shape)


# -- ndarray methods with numpy's meaning ------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    order=st.sampled_from("CFAK"),
    transposed=st.booleans(),
)
def test_copy_ravel_flatten_as_numpy(shape, order, transposed):
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    a = a.T if transposed else a
    t = jg.from_numpy(a)
    if order in "CF":  # (jitgrad's memory order is row-major, whatever 'K' asks)
        same(t.copy(order), a.copy(order))
    for got, want in (
        (t.ravel(order), a.ravel(order)),
        (t.flatten(order), a.flatten(order)),
        (jg.ravel(t, order), np.ravel(a, order)),
    ):
        same(got, want)
    flat = t.flatten()
    flat[0] = 99
    assert t.numpy().flat[0] != 99  # numpy's flatten always copies
    view = t.ravel()
    if a.flags.c_contiguous:
        assert view.storage() is t.storage()


def test_copy_and_flatten_carry_gradients():
    x = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x.copy() * x.flatten().reshape(2, 2)).sum().backward()
    same(x.grad, 2 * np.array([[1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(ValueError, match="order must be one of"):
        x.ravel("X")


def test_fill_item_tobytes_tolist():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    t = jg.from_numpy(a.copy())
    assert t.item(4) == a.item(4) and t.item(1, 0) == a.item(1, 0) and t.item((0, 2)) == 2
    assert type(t.item(4)) is int and t[1, 1].item() == 4
    with pytest.raises(ValueError, match="one element"):
        t.item()
    assert t.tobytes() == a.tobytes() and t.T.tobytes() == a.T.tobytes()
    assert t.T.tobytes("F") == a.T.tobytes("F") and t.tolist() == a.tolist()
    assert t.fill(7) is None and t.tolist() == [[7] * 3] * 2
    view = t[:, 1]
    view.fill(-1)
    assert t.tolist() == [[7, -1, 7]] * 2


def test_clip_round_trace_dot_all_any_ptp():
    a = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    t = jg.from_numpy(a)
    same(t.clip(-1, 1), a.clip(-1, 1))
    same(t.clip(min=0), a.clip(min=0))
    same(t.clip(max=0.5), a.clip(max=0.5))
    same(t.clamp(min=-0.5, max=0.5), torch.from_numpy(a).clamp(min=-0.5, max=0.5).numpy())
    same(t.round(1), a.round(1))
    same(t.trace(), a.trace())
    same(t.trace(1), a.trace(1))
    same(t.dot(t.T), a.dot(a.T))
    same((t > 0).all(1), (a > 0).all(1))
    same((t > 0).any(axis=0), (a > 0).any(axis=0))
    same(t.ptp(), np.ptp(a))
    same(t.ptp(0), np.ptp(a, 0))
    same(jg.ptp(t, axis=1, keepdims=True), np.ptp(a, axis=1, keepdims=True))
    same(t.argmax(1), a.argmax(1))
    same(t.cumsum(0), a.cumsum(0))
    same(t.cumprod(), a.cumprod())


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_std_var_take_ddof_and_pytorchs_names(ddof):
    t, ref = jg.from_numpy(A), torch.from_numpy(A)
    np.testing.assert_allclose(t.std(ddof=ddof).item(), A.std(ddof=ddof))
    np.testing.assert_allclose(t.var(1, ddof=ddof).numpy(), A.var(1, ddof=ddof))
    np.testing.assert_allclose(
        t.var(dim=1, correction=ddof).numpy(), ref.var(dim=1, correction=ddof).numpy()
    )
    unbiased = bool(ddof)
    np.testing.assert_allclose(
        t.std(dim=0, unbiased=unbiased).numpy(), ref.std(dim=0, unbiased=unbiased).numpy()
    )
    with pytest.raises(TypeError, match="ddof=, unbiased="):
        t.std(ddof=1, unbiased=True)
    # numpy's spelling: numpy's ddof=0; PyTorch's (dim=, keepdim=): PyTorch's correction=1
    np.testing.assert_allclose(jg.var(t, 1).numpy(), A.var(1))
    np.testing.assert_allclose(jg.var(t, dim=1).numpy(), ref.var(dim=1).numpy())
    np.testing.assert_allclose(t.std(0, keepdim=True).numpy(), ref.std(0, keepdim=True).numpy())
    np.testing.assert_allclose(t.var(dim=2, ddof=ddof).numpy(), A.var(2, ddof=ddof))


@settings(max_examples=25, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3),
    repeats=st.integers(0, 3),
    axis=st.none() | st.integers(-3, 2),
)
def test_repeat_is_numpys(shape, repeats, axis):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    if axis is not None and not -a.ndim <= axis < a.ndim:
        with pytest.raises(IndexError):
            jg.from_numpy(a).repeat(repeats, axis)
        return
    same(jg.from_numpy(a).repeat(repeats, axis), a.repeat(repeats, axis))
    same(jg.repeat(jg.from_numpy(a), repeats, axis=axis), np.repeat(a, repeats, axis=axis))


def test_repeat_counts_gradient_and_tile():
    a = np.arange(6.0).reshape(2, 3)
    x, xt = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got = x.repeat([1, 0, 2], axis=1)
    same(got, a.repeat([1, 0, 2], axis=1))
    want = xt.repeat_interleave(torch.tensor([1, 0, 2]), dim=1)
    (got * got).sum().backward()
    (want * want).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    with pytest.raises(ValueError):
        x.repeat([1, 2], axis=1)
    same(jg.tile(jg.from_numpy(a), (2, 1, 2)), np.tile(a, (2, 1, 2)))
    same(jg.tile(jg.from_numpy(a), 3), np.tile(a, 3))
    same(jg.tile(jg.from_numpy(a), 3), torch.from_numpy(a).repeat(1, 3).numpy())


@pytest.mark.parametrize("to", ["int32", "uint8", "float32", "int64", "complex128", "int16"])
@pytest.mark.parametrize(
    "take",
    [
        lambda a: a,
        lambda a: a[1:],
        lambda a: a[:, 1:3],
        lambda a: a[::-1],
        lambda a: a.T[:, :1],
    ],
)
def test_view_as_dtype_reads_bytes_as_numpy(take, to):
    a = take(np.arange(24.0).reshape(4, 6))
    t = take(jg.from_numpy(np.arange(24.0).reshape(4, 6)))
    try:
        want = a.view(to)
    except ValueError:
        with pytest.raises(ValueError, match="cannot view"):
            t.view(to)
        return
    start = want.__array_interface__["data"][0] - a.base.ctypes.data
    if start % want.itemsize or any(s % want.itemsize for s in want.strides):
        # numpy's unaligned views: jitgrad's storages index whole elements
        with pytest.raises(ValueError, match="not multiples of"):
            t.view(to)
        return
    got = t.view(to)
    same(got, want)
    assert got.strides == want.strides and got.untyped_storage() is t.untyped_storage()
    got.view(t.dtype)[...] = -1.0  # writes through to the same memory
    assert (t.numpy() == -1.0).all()


def test_view_keeps_shapes():
    t = jg.arange(12.0)
    assert t.view(3, 4).shape == (3, 4) and t.view((2, -1)).shape == (2, 6)
    with pytest.raises(ValueError, match="cannot view a 0-d"):
        jg.tensor(1.0).view(jg.int32)


def test_flat_reads_writes_and_iterates_as_numpys_flatiter():
    a = np.arange(12).reshape(3, 4)
    for take in (lambda x: x, lambda x: x.T, lambda x: x[::2, 1:]):
        t, b = take(jg.from_numpy(a.copy())), take(a.copy())
        for key in (5, -1, slice(1, 7, 2), [0, 3], np.array([2, 1])):
            if isinstance(key, int) and key >= b.size:
                continue
            same(t.flat[key], b.flat[key])
        assert [int(v) for v in t.flat] == list(b.flat) and len(t.flat) == b.size
        np.testing.assert_array_equal(np.asarray(t.flat), np.asarray(b.flat))
        t.flat[1] = 100
        b.flat[1] = 100
        t.flat[[0, 2]] = -5
        b.flat[[0, 2]] = -5
        same(t, b)
        assert t.flat.base is t


def test_flat_writes_are_recorded():
    x = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    y.flat[3] = 0.0
    y.sum().backward()
    same(x.grad, np.array([[1.0, 1.0], [1.0, 0.0]]))


@settings(max_examples=25, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    dtype=st.sampled_from(["int8", "float32", "complex128"]),
    step=st.integers(-2, 2).filter(bool),
)
def test_byte_attributes_as_numpy(shape, dtype, step):
    a = np.zeros(shape, dtype)[..., ::step]
    t = jg.zeros(shape, dtype=dtype)[..., ::step]
    assert t.strides == a.strides and t.nbytes == a.nbytes and t.itemsize == a.itemsize
    assert t.stride() == tuple(s // a.itemsize for s in a.strides)  # elements, as PyTorch
    assert t.ndim == a.ndim and t.size == a.size and t.T.shape == a.T.shape
    if a.ndim >= 2:
        assert t.mT.shape == np.matrix_transpose(a).shape


def test_values_and_indices_serves_any_pytorch_name_with_a_dim():
    # sort: numpy's copy without dim=, PyTorch's (values, indices) with it
    from jitgrad.ops.torch_keywords import values_and_indices

    def argsort(a, axis=-1):
        return jg.from_numpy(np.argsort(a.numpy(), axis, kind="stable"))

    @values_and_indices(argsort)
    def sort(a, axis=-1):
        return jg.take_along_axis(a, argsort(a, axis), axis)

    t, ref = jg.from_numpy(A), torch.from_numpy(A)
    same(sort(t, 0), np.sort(A, 0))
    got, want = sort(t, dim=1), ref.sort(dim=1, stable=True)
    same(got.values, want.values.numpy())
    same(got.indices, want.indices.numpy())
    assert type(got).__name__ == "sort"


@pytest.mark.parametrize("value", [7.0, [1.0, 2.0], np.arange(6.0), np.arange(8.0)])
def test_assigning_flat_fills_in_row_major_order_as_numpy(value):
    a, t = np.zeros((2, 3)), jg.zeros((2, 3))
    a.flat = value
    t.flat = value
    np.testing.assert_array_equal(t.numpy(), a)
    view = jg.zeros((3, 2)).T  # a strided view: written in its own row-major order
    view.flat = value
    np.testing.assert_array_equal(view.numpy(), a)
