"""The strided tensor core: the strides notes step by step, views, copies, numpy interop."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config
from jitgrad.dtypes import ALL_DTYPES

# -- the strides notes, step by step -----------------------------------------------------


def test_points_storage_offset_and_strides():
    points = jg.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    assert points.storage().tolist() == [4.0, 1.0, 5.0, 3.0, 2.0, 1.0]
    second = points[1]
    assert second.storage_offset() == 2 and second.size() == (2,) and second.stride() == (1,)
    assert points.stride() == (2, 1)
    second_copy = points[1].clone()
    second_copy[0] = 10.0
    assert points[1, 0].item() == 5.0
    second[0] = 10.0
    assert points[1, 0].item() == 10.0


def test_transpose_shares_storage():
    points = jg.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    points_t = points.T
    assert points_t.storage() is points.storage()
    assert points_t.untyped_storage().data_ptr() == points.untyped_storage().data_ptr()
    assert points.stride() == (2, 1) and points_t.stride() == (1, 2)
    some = jg.ones((3, 4, 5))
    transposed = some.transpose(0, 2)
    assert transposed.shape == (5, 4, 3)
    assert some.stride() == (20, 5, 1) and transposed.stride() == (1, 5, 20)


def test_contiguous_copies_only_when_needed():
    points = jg.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    assert points.is_contiguous() and points.contiguous() is points
    points_t = points.T
    assert not points_t.is_contiguous()
    dense = points_t.contiguous()
    assert dense.stride() == (3, 1)
    assert dense.storage().tolist() == [4.0, 5.0, 2.0, 1.0, 3.0, 1.0]
    assert dense.storage() is not points.storage()


def test_sub_matrix_offset_strides_and_contiguous_copy():
    points = jg.arange(9).reshape(3, 3)
    sub = points[1:3, 1:3]
    assert sub.storage_offset() == 4 and sub.stride() == (3, 1)
    assert not sub.is_contiguous()
    dense = sub.contiguous()
    assert dense.storage() is not points.storage()
    assert dense.storage().size() == 4 and dense.storage().tolist() == [4, 5, 7, 8]


def test_numpy_round_trips_keep_the_data_pointer():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = jg.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    back = t.numpy()
    assert back.ctypes.data == a.ctypes.data and np.asarray(t).ctypes.data == a.ctypes.data
    back[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 1] = -1
    assert a[1, 1] == -1
    assert jg.asarray(a).data_ptr() == a.ctypes.data
    v = a[::-1, 1::2]
    tv = jg.from_numpy(v)
    assert tv.data_ptr() == v.ctypes.data and tv.stride() == (-4, 2)
    np.testing.assert_array_equal(tv.numpy(), v)
    assert tv.numpy().ctypes.data == v.ctypes.data


# -- views -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [jg.float64, jg.float16, jg.int32])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_an_element_is_a_copy_as_numpys_scalar_is(dtype, requires_grad):
    requires_grad = requires_grad and dtype.is_floating_point
    a = np.arange(6).reshape(2, 3).astype(dtype.numpy)
    t = jg.tensor(a, requires_grad=requires_grad)
    x = t * 1 if requires_grad else t  # (a non-leaf: it may be written in place)
    elements = [x[1, 2], x[-1][-1], x[1][2], next(iter(x[1][2:]))]
    with jg.no_grad():
        x[1, 2] = 9
        x[1] += 10
    for e in elements:
        assert e.shape == () and e.item() == a[1, 2], "a later write to x changed it"
    assert x.tolist() == [[0, 1, 2], [13, 14, 19]]
    element = t[0, 1]
    element += 5  # (a copy: the tensor keeps its value)
    assert t[0, 1].item() == 1 and element.item() == 6
    first, second, third = t[0]  # (iterated elements: copies, none sharing another's value)
    first += 5
    second *= 2
    assert [first.item(), second.item(), third.item()] == [5, 2, 2]
    assert t[0].tolist() == [0, 1, 2]
    if requires_grad:
        (t[0, 1] * 3 + t[1][2] * t[1][2]).backward()
        expected = np.zeros((2, 3))
        expected[0, 1], expected[1, 2] = 3, 10
        np.testing.assert_array_equal(t.grad.numpy(), expected)


def test_basic_indexing_matches_numpy():
    a = np.arange(60).reshape(3, 4, 5)
    t = jg.from_numpy(a)
    for key in [
        1,
        -1,
        (1, 2),
        (slice(None), 0),
        (Ellipsis, 2),
        (None, 1),
        (slice(None, None, -2),),
        (1, slice(3, 0, -1), None, slice(None, None, 2)),
        (Ellipsis, None),
        (slice(5, 10),),
        (0, 0, 0),
        (),
        (slice(None), Ellipsis, slice(1, -1)),
    ]:
        view = t[key]
        np.testing.assert_array_equal(view.numpy(), a[key], err_msg=str(key))
        # an element is a copy, as numpy's scalar is; anything else a view
        assert (view.storage() is t.storage()) == isinstance(a[key], np.ndarray), key


def test_view_and_reshape():
    t = jg.arange(12)
    assert t.view(3, 4).stride() == (4, 1)
    assert t.view(-1, 6).shape == (2, 6)
    tt = t.view(3, 4).T
    with pytest.raises(ValueError, match=r"cannot view shape \(4, 3\) with strides \(1, 4\) as"):
        tt.view(12)
    r = tt.reshape(12)
    assert r.storage() is not t.storage()
    np.testing.assert_array_equal(r.numpy(), np.arange(12).reshape(3, 4).T.reshape(12))
    merged = jg.arange(24).view(2, 3, 4)[:, :, :2]  # non-contiguous, yet the first two dims merge
    assert merged.view(6, 2).storage() is merged.storage()
    assert jg.arange(6).reshape((2, 3)).shape == (2, 3)


def test_the_strided_core_takes_shapes_and_dims_as_numpy_arrays():
    from jitgrad.tensor import TensorBase

    a = np.arange(6.0).reshape(1, 2, 3)
    t = TensorBase._make(jg.from_numpy(a).storage(), a.shape, (6, 3, 1), 0)
    assert t.view(np.array([3, 2])).shape == (3, 2)
    assert t.reshape(np.array([6])).shape == (6,)
    assert t.permute(np.array([2, 0, 1])).shape == (3, 1, 2)
    assert t.expand(np.array([4, 2, 3])).shape == (4, 2, 3)
    assert t.squeeze(np.array([0])).shape == (2, 3)
    np.testing.assert_array_equal(t.flip(np.array([2])).numpy(), a[:, :, ::-1])


def test_permute_expand_squeeze_unsqueeze_flatten():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = jg.from_numpy(a)
    np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.transpose(1, 0, 2).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.mT.numpy(), a.swapaxes(-1, -2))
    np.testing.assert_array_equal(t.T.numpy(), a.T)
    e = jg.arange(3).view(3, 1).expand(2, -1, 4)
    assert e.shape == (2, 3, 4) and e.stride() == (0, 1, 0)
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(np.arange(3).reshape(3, 1), (2, 3, 4)))
    assert jg.zeros((1, 3, 1)).squeeze().shape == (3,)
    assert jg.zeros((1, 3, 1)).squeeze(-1).shape == (1, 3)
    assert jg.zeros(3).unsqueeze(0).shape == (1, 3) and jg.zeros(3).unsqueeze(-1).shape == (3, 1)
    assert t.flatten().shape == (24,) and t.flatten(1).shape == (2, 12)
    # numpy's flatten() copies; PyTorch's start_dim/end_dim spelling views when it can
    assert t.flatten().storage() is not t.storage() and t.flatten(0).storage() is t.storage()


def test_narrow_diagonal_flip_as_strided():
    a = np.arange(20.0).reshape(4, 5)
    t = jg.from_numpy(a)
    np.testing.assert_array_equal(t.narrow(1, 1, 3).numpy(), a[:, 1:4])
    np.testing.assert_array_equal(t.narrow(0, -2, 2).numpy(), a[-2:])
    for k in (-3, -1, 0, 2, 4, 7):
        np.testing.assert_array_equal(t.diagonal(k).numpy(), np.diagonal(a, k), err_msg=str(k))
    np.testing.assert_array_equal(t.flip(0).numpy(), a[::-1])
    np.testing.assert_array_equal(t.flip().numpy(), a[::-1, ::-1])
    w = t.as_strided((3, 2), (1, 5), 2)
    np.testing.assert_array_equal(
        w.numpy(), np.lib.stride_tricks.as_strided(a.ravel()[2:], (3, 2), (8, 40))
    )
    with pytest.raises(ValueError, match="outside a storage of size 20"):
        t.as_strided((5, 5), (5, 1))


@pytest.mark.parametrize(
    "take",
    [
        lambda t: t.flip((0, -2)),
        lambda t: jg.flip(t, (1, 1)),
        lambda t: np.flip(t, (1, -1)),
        lambda t: t[:1].squeeze((0, 0)),
        lambda t: jg.squeeze(t[:1], (0, -2)),
    ],
)
def test_a_dimension_named_twice_is_refused(take):
    # (flipped or squeezed once, silently, before; numpy and PyTorch refuse it)
    with pytest.raises(ValueError, match=r"repeated axis in \(.*\) of a tensor of 2 dim"):
        take(jg.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize(
    "take",
    [
        lambda t: t.flip(0),
        lambda t: jg.flip(t, -1),
        lambda t: t.squeeze(0),
        lambda t: jg.squeeze(t, (-1,)),
        lambda t: t.transpose(0, -1),
        lambda t: jg.swapaxes(t, 0, 0),
    ],
)
def test_a_0d_tensors_dim_0_is_its_one_element(take, requires_grad):
    """As in PyTorch, dim 0 (or -1) of a 0-d tensor names its one element: flipping,
    squeezing or swapping it gives the tensor (it raised raw IndexErrors)."""
    t = jg.tensor(1.5, requires_grad=requires_grad)
    y = take(t)
    assert y.shape == () and y.item() == 1.5
    if requires_grad:
        (y * 2).backward()
        assert t.grad.item() == 2.0


@pytest.mark.parametrize(
    "take, error",
    [
        (lambda t: t.flip(1), IndexError),
        (lambda t: t.squeeze(1), IndexError),
        (lambda t: t.flip((0, -1)), ValueError),
        (lambda t: t.narrow(0, 0, 1), IndexError),
    ],
)
def test_a_0d_tensor_refuses_other_dims(take, error):
    with pytest.raises(error, match="out of range|repeated axis|0-d tensor"):
        take(jg.tensor(1.5))


@pytest.mark.parametrize(
    "make",
    [
        lambda: jg.ones(1).expand(2**40, 2**40),
        lambda: jg.ones(1).as_strided((2**32, 2**32), (0, 0)),
        lambda: jg.empty((2**40, 2**40)),
        lambda: jg.ones(1).reshape(1, 1).broadcast_to((2**62, 4)),
    ],
)
def test_shapes_beyond_int64_indices_are_refused(make):
    with pytest.raises(ValueError, match="elements"):
        make()


def test_set_points_a_tensor_at_another_storage():
    s = jg.FloatStorage([0, 1, 2, 3, 4, 5])
    t = jg.empty(0, jg.float32)
    t.set_(s, 1, (2, 2), (2, 1))
    assert t.tolist() == [[1, 2], [3, 4]]
    t.set_(s)
    assert t.shape == (6,)
    other = jg.arange(4, dtype=jg.float32)
    t.set_(other)
    assert t.storage() is other.storage()
    with pytest.raises(TypeError, match="float64"):
        t.set_(jg.DoubleStorage(3))
    with pytest.raises(ValueError, match="outside"):
        t.set_(s, 5, (2,))


# -- copies and writes -------------------------------------------------------------------


def test_copy_broadcasts_and_casts():
    t = jg.zeros((2, 3), dtype=jg.int32)
    t.copy_(jg.tensor([1.7, -2.2, 3.0]))
    assert t.tolist() == [[1, -2, 3], [1, -2, 3]]
    t.copy_(np.array([[5], [6]]))
    assert t.tolist() == [[5, 5, 5], [6, 6, 6]]
    t.copy_(7)
    assert t.tolist() == [[7] * 3] * 2
    with pytest.raises(ValueError, match="broadcast"):
        t.copy_(jg.zeros(4))
    with pytest.raises(OverflowError):
        jg.zeros(2, dtype=jg.uint8).copy_(300)


def test_setitem_with_views_and_broadcast_values():
    a = np.zeros((4, 5))
    t = jg.zeros((4, 5))
    for key, value in [
        ((1,), 3.0),
        ((slice(None), 2), [1, 2, 3, 4]),
        ((slice(None, None, -1), slice(1, 3)), 9),
    ]:
        a[key] = value
        t[key] = value
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(IndexError, match="out of bounds"):
        t[4] = 1
    t[[0, 1]] = 7  # integer arrays index too (advanced indexing, numpy semantics)
    a[[0, 1]] = 7
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize(
    "key, value_shape",
    [
        (0, (1, 3)),
        (0, (1, 1, 3)),
        (slice(1, None), (1, 1, 1, 3)),
        ((1, slice(2, 3)), (1, 1)),
        (Ellipsis, (1, 2, 1)),
        ((None, 0), (1, 1, 1)),
    ],
)
def test_assigned_values_lose_extra_leading_ones_as_in_numpy(key, value_shape):
    value = np.arange(1.0, 1.0 + np.prod(value_shape)).reshape(value_shape)
    for src in (value, jg.from_numpy(value), value.tolist()):
        a, t = np.zeros((2, 3)), jg.zeros((2, 3))
        a[key] = value
        t[key] = src
        np.testing.assert_array_equal(t.numpy(), a)
    # numpy refuses a sequence for one element (a[1, 2] = ones((1, 1))); torch takes it
    t = jg.zeros((2, 3))
    t[1, 2] = jg.ones((1, 1))
    assert t[1, 2].item() == 1.0
    # Only leading ones go, as in numpy; and copy_ broadcasts strictly, as torch's copy_
    with pytest.raises(ValueError, match=r"cannot broadcast shape \(2, 3\)"):
        jg.zeros((2, 3))[0] = jg.ones((2, 3))
    with pytest.raises(ValueError, match=r"cannot broadcast shape \(1, 3\)"):
        jg.zeros((2, 3))[0].copy_(jg.ones((1, 3)))


def test_overlapping_copy_is_staged():
    a = np.arange(10.0)
    t = jg.from_numpy(a.copy())
    t[1:] = t[:-1]
    a[1:] = a[:-1].copy()
    np.testing.assert_array_equal(t.numpy(), a)
    m = jg.arange(16.0).view(4, 4)
    m.copy_(m.T)
    np.testing.assert_array_equal(m.numpy(), np.arange(16.0).reshape(4, 4).T)


def test_writing_into_broadcast_view_is_refused():
    e = jg.zeros(3).view(3, 1).expand(3, 4)
    with pytest.raises(ValueError, match="broadcast view"):
        e.fill_(1)


def test_read_only_numpy_memory_stays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = jg.from_numpy(a)
    assert t.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="read-only"):
        t.fill_(1)
    with pytest.raises(ValueError, match="read-only"):
        t[0] = 1


@pytest.mark.parametrize("threshold", [0, 1 << 30], ids=["parallel", "serial"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_contiguous_of_strided_views_for_every_dtype(dtype, threshold, monkeypatch):
    monkeypatch.setattr(config, "parallel_threshold", threshold)
    base = (np.arange(4 * 70 * 66) % 251 - 120).reshape(4, 70, 66).astype(dtype.numpy)
    t = jg.from_numpy(base)
    for view, ref in [
        (t.permute(2, 0, 1), base.transpose(2, 0, 1)),
        (t[:, ::-3, 1::2], base[:, ::-3, 1::2]),
        (t.permute(0, 2, 1)[:, 3:, ::-1], base.transpose(0, 2, 1)[:, 3:, ::-1]),
        (t[1].T, base[1].T),
        (t[:, :1].expand(4, 5, 66), np.broadcast_to(base[:, :1], (4, 5, 66))),
    ]:
        out = view.contiguous()
        assert out.is_contiguous()
        np.testing.assert_array_equal(out.numpy(), ref)


def test_fill_of_strided_view_and_zero():
    t = jg.ones((4, 6))
    t[:, ::2].fill_(5)
    t[1].zero_()
    ref = np.ones((4, 6))
    ref[:, ::2] = 5
    ref[1] = 0
    np.testing.assert_array_equal(t.numpy(), ref)


def test_astype_and_to():
    t = jg.tensor([[1.5, -2.5], [0.0, 3.25]])
    assert t.to(jg.float64) is t and t.astype(jg.float64) is not t
    h = t.T.astype("float16")
    assert h.dtype is jg.float16 and h.is_contiguous()
    np.testing.assert_array_equal(
        h.numpy(), np.array([[1.5, -2.5], [0.0, 3.25]]).T.astype(np.float16)
    )
    assert t.astype(jg.int8).tolist() == [[1, -2], [0, 3]]
    assert t.astype(jg.bool).tolist() == [[True, True], [False, True]]


# -- Python protocol ---------------------------------------------------------------------


def test_python_protocol():
    t = jg.arange(6).view(2, 3)
    assert len(t) == 2 and [r.tolist() for r in t] == [[0, 1, 2], [3, 4, 5]]
    assert t.ndim == t.dim() == 2 and t.numel() == 6 and t.size(-1) == 3
    assert t.nbytes == 48 and t.element_size() == t.itemsize == 8
    assert t[1, 2].item() == 5 and int(t[1, 2]) == 5 and float(t[0, 1]) == 1.0
    assert bool(jg.tensor(1)) and not bool(jg.tensor(0.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    with pytest.raises(ValueError, match="one element"):
        t.item()
    with pytest.raises(TypeError, match="0-d"):
        len(jg.tensor(3))
    with pytest.raises(IndexError, match="dimension 2"):
        t.size(2)


@pytest.mark.parametrize("other", [None, object(), "abc"], ids=["None", "object", "str"])
def test_comparing_with_what_is_not_numbers_is_identity_as_in_pytorch(other):
    t = jg.ones(2)
    assert (t == other) is False and (t != other) is True and (other == t) is False
    assert t not in [other] and t in [other, t]
    with pytest.raises(TypeError, match="'<' not supported"):
        _ = t < other
    with pytest.raises(ValueError, match="broadcast"):  # numbers that do not fit still raise
        _ = t == [1, 2, 3]


def test_in_looks_through_every_element_as_numpy_and_pytorch():
    assert 1.0 in jg.ones((2, 2)) and 2.0 not in jg.ones((2, 2))
    assert 5 in jg.tensor(5) and 4 not in jg.tensor(5)
    assert jg.ones(2) in jg.ones((3, 2)) and jg.zeros(2) not in jg.ones((3, 2))
    assert None not in jg.ones(2) and float("nan") not in jg.tensor([float("nan")])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_one_element_integer_tensors_are_indices(dtype):
    items = list(range(10, 20))
    for shape in ((), (1,), (1, 1)):
        t = jg.ones(shape, dtype=dtype)
        if dtype.kind in "iu":  # numpy's dtypes: integers, not bools
            assert items[t] == 11 and range(5)[t] == 1
        else:
            with pytest.raises(TypeError, match="only integer scalar arrays .* scalar index"):
                items[t]
    with pytest.raises(TypeError, match=r"only integer scalar arrays .* shape \(2,\)"):
        items[jg.ones(2, dtype=dtype)]


@pytest.mark.parametrize("dtype", [jg.int64, np.int64, "int64", np.dtype("float32"), float])
def test_view_as_a_dtype_reads_the_same_bytes_as_numpy(dtype):
    t = jg.ones((2, 4), requires_grad=True)
    a, dtype_np = np.ones((2, 4)), getattr(dtype, "numpy", dtype)
    for view, expected in (
        (lambda: t.view(dtype), a.view(dtype_np)),
        (lambda: jg.view(t, dtype), a.view(dtype_np)),
        (lambda: t[0].view(dtype), a[0].view(dtype_np)),
    ):
        got = view()
        assert got.shape == expected.shape and got.requires_grad == (got.dtype is t.dtype)
        np.testing.assert_array_equal(got.numpy(), expected)
        start = expected.__array_interface__["data"][0] - a.ctypes.data
        assert got.data_ptr() == t.data_ptr() + start


def test_repr_is_numpy_like():
    assert repr(jg.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]])"
    assert repr(jg.tensor([1, 2], dtype=jg.int8)) == "tensor([1, 2], dtype=jitgrad.int8)"
    assert repr(jg.zeros((0, 3))) == "tensor([], size=(0, 3))"
    assert repr(jg.tensor(2.5)) == "tensor(2.5)"


# -- creation ----------------------------------------------------------------------------


def test_creation_functions_match_numpy():
    np.testing.assert_array_equal(jg.zeros((2, 3)).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(jg.ones(4, dtype=jg.int16).numpy(), np.ones(4, np.int16))
    assert jg.full((2,), 7).dtype is jg.int64 and jg.full((2,), 7.0).dtype is jg.float64
    assert jg.full((2,), True).dtype is jg.bool
    np.testing.assert_array_equal(jg.arange(2, 11, 3).numpy(), np.arange(2, 11, 3))
    np.testing.assert_array_equal(jg.arange(1.0, 0.0, -0.25).numpy(), np.arange(1.0, 0.0, -0.25))
    np.testing.assert_allclose(jg.linspace(0, 1, 7).numpy(), np.linspace(0, 1, 7))
    np.testing.assert_array_equal(jg.eye(3, 4, 1).numpy(), np.eye(3, 4, 1))
    like = jg.zeros_like(jg.ones((2, 2), dtype=jg.float32))
    assert like.dtype is jg.float32 and like.tolist() == [[0, 0], [0, 0]]
    assert jg.full_like(like, 3).tolist() == [[3, 3], [3, 3]]
    assert jg.ones_like(like).tolist() == [[1, 1], [1, 1]] and jg.empty_like(like).shape == (2, 2)
    assert jg.empty((2, 0)).numel() == 0


def test_dtype_inference_and_default_dtype():
    assert jg.tensor([1, 2]).dtype is jg.int64
    assert jg.tensor([1.0, 2]).dtype is jg.float64
    assert jg.tensor([True]).dtype is jg.bool
    assert jg.tensor([1j]).dtype is jg.complex128
    assert jg.tensor(np.float32(2)).dtype is jg.float32
    jg.set_default_dtype("float32")
    try:
        assert jg.tensor([1.0]).dtype is jg.float32 and jg.zeros(2).dtype is jg.float32
        assert jg.tensor([1j]).dtype is jg.complex64
        assert jg.tensor(np.zeros(2)).dtype is jg.float64
    finally:
        jg.set_default_dtype("float64")
    with pytest.raises(TypeError, match="floating"):
        jg.set_default_dtype("int32")


# (data, dtype with the default float64, with the default float32): PyTorch's dtypes.
# Python floats and complexes take the default; typed values keep theirs; a list promotes
# its floating elements' dtypes, its integers and bools giving way to them.
TYPED_FLOAT_DATA = [
    ("[jg.ones(2, dtype=jg.float32)] * 2", jg.float32, jg.float32),
    ("[np.float16(1)]", jg.float16, jg.float16),
    ("[np.float64(1)]", jg.float64, jg.float64),
    ("[jg.tensor(1.0, dtype=jg.float64)]", jg.float64, jg.float64),
    ("[np.complex128(1)]", jg.complex128, jg.complex128),
    ("[1.0, np.float32(2)]", jg.float64, jg.float32),
    ("[1, np.float32(2)]", jg.float32, jg.float32),
    ("[np.int32(1), np.float16(2)]", jg.float16, jg.float16),
    ("[[np.float32(1)], [1.0]]", jg.float64, jg.float32),
    ("[np.float32(1), 1j]", jg.complex128, jg.complex64),
    ("[np.complex64(1), 1.0]", jg.complex128, jg.complex64),
    ("[True, 1.5]", jg.float64, jg.float32),
    ("torch.ones(2)", jg.float32, jg.float32),
]


@pytest.mark.parametrize("default", ["float64", "float32"])
@pytest.mark.parametrize(
    "data, in_float64, in_float32", TYPED_FLOAT_DATA, ids=[row[0] for row in TYPED_FLOAT_DATA]
)
def test_typed_float_data_keeps_its_dtype_as_in_pytorch(data, in_float64, in_float32, default):
    torch = pytest.importorskip("torch")
    names = {"np": np, "jg": jg, "torch": torch}
    jg.set_default_dtype(default)
    try:
        expected = in_float64 if default == "float64" else in_float32
        assert jg.tensor(eval(data, names)).dtype is expected
        assert jg.asarray(eval(data, names)).dtype is expected
    finally:
        jg.set_default_dtype("float64")


def test_float64_data_in_a_list_is_not_rounded_to_a_float32_default():
    exact = np.float64(1) + 1e-10
    jg.set_default_dtype("float32")
    try:
        assert jg.tensor([exact]).item() == exact
    finally:
        jg.set_default_dtype("float64")


def test_tensor_copies_and_asarray_shares():
    a = np.arange(3.0)
    assert jg.tensor(a).data_ptr() != a.ctypes.data
    assert jg.array(a).data_ptr() != a.ctypes.data
    assert jg.asarray(a).data_ptr() == a.ctypes.data
    t = jg.asarray(a)
    assert jg.asarray(t) is t
    assert jg.asarray(t, dtype=jg.float32).dtype is jg.float32
    with pytest.raises(ValueError, match="without a copy"):
        jg.asarray(t, dtype=jg.float32, copy=False)


def test_random_generator_is_seeded_like_numpy():
    rng, ref = jg.random.default_rng(5), np.random.default_rng(5)
    np.testing.assert_array_equal(rng.random((2, 3)).numpy(), ref.random((2, 3)))
    np.testing.assert_array_equal(rng.standard_normal(4).numpy(), ref.standard_normal(4))
    np.testing.assert_array_equal(rng.normal(1, 2, 3).numpy(), ref.normal(1, 2, 3))
    np.testing.assert_array_equal(rng.uniform(-1, 1, 3).numpy(), ref.uniform(-1, 1, 3))
    np.testing.assert_array_equal(rng.integers(0, 9, 5).numpy(), ref.integers(0, 9, 5))
    np.testing.assert_array_equal(rng.permutation(6).numpy(), ref.permutation(6))
    assert rng.random(3, dtype=jg.float32).dtype is jg.float32
    with pytest.raises(TypeError, match="floating"):
        rng.random(3, dtype=jg.int32)


def test_random_integers_of_bool_dtype_are_numpys():
    rng, ref = jg.random.default_rng(3), np.random.default_rng(3)
    got, want = rng.integers(0, 2, 8, dtype=jg.bool), ref.integers(0, 2, 8, dtype=bool)
    assert got.dtype is jg.bool and got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="out of bounds for bool"):
        rng.integers(0, 3, 2, dtype=bool)
    with pytest.raises(TypeError, match="integer or bool dtype"):
        rng.integers(0, 3, 2, dtype=jg.float32)


def test_float32_draws_are_numpys_float32_streams():
    rng, ref = jg.random.default_rng(1), np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        np.testing.assert_array_equal(
            rng.random(5, dtype=dtype).numpy(), ref.random(5, dtype=dtype)
        )
        np.testing.assert_array_equal(
            rng.standard_normal(5, dtype=dtype).numpy(), ref.standard_normal(5, dtype=dtype)
        )


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_uniform_draws_stay_below_high_in_narrow_dtypes(dtype):
    # float64 draws just below the bound round up to it in float16/float32
    rng = jg.random.default_rng(0)
    assert rng.random(200_000, dtype=dtype).numpy().max() < 1
    values = rng.uniform(0.0, 1.0, 200_000, dtype=dtype).numpy()
    assert values.max() < 1 and values.dtype == np.dtype(dtype)
    shifted = rng.uniform(np.array([0.0, 5.0]), 6.0, (50_000, 2), dtype=dtype).numpy()
    assert shifted.max() < 6 and shifted[:, 1].min() >= 5


@pytest.mark.parametrize("code", ["f4", "f8", "i2", "i8", "c16"])
def test_copies_of_arrays_in_the_other_byte_order_are_native_as_numpy_s(code):
    other = ">" if np.little_endian else "<"
    values = (np.arange(6) - 2).reshape(2, 3).astype(other + code)
    want = values.astype("=" + code)
    for t in (jg.tensor(values), jg.asarray(values), jg.tensor([values[0], values[1]])):
        assert t.dtype.numpy == want.dtype
        np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(jg.asarray(values, dtype="float32").numpy(), want)


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: jg.zeros((2, -1)), ValueError, "negative"),
        (lambda: jg.zeros("abc"), TypeError, "shape"),
        (lambda: jg.zeros(3, dtype="float128"), TypeError, "float128"),
        (lambda: jg.from_numpy(np.zeros(2, np.longdouble)), TypeError, "float128"),
        (lambda: jg.from_numpy(np.zeros(2, ">f4")), ValueError, "byte order"),
        (lambda: jg.asarray(np.zeros(2, ">f4"), copy=False), ValueError, "byte order"),
        (lambda: jg.from_numpy([1, 2]), TypeError, "ndarray"),
        (lambda: jg.tensor(["a"]), TypeError, "numpy type"),
        (lambda: jg.tensor("abc"), TypeError, "str"),
        (lambda: jg.zeros((2, 3))[2], IndexError, "out of bounds"),
        (lambda: jg.zeros((2, 3))[0, 0, 0], IndexError, "too many indices"),
        (lambda: jg.zeros((2, 3))[..., ...], IndexError, "single ellipsis"),
        (lambda: jg.zeros((2, 3))[1.5], IndexError, "valid indices"),
        (lambda: jg.zeros((2, 3)).view(4), ValueError, "cannot reshape 6 elements"),
        (lambda: jg.zeros((2, 3)).reshape(-1, -1), ValueError, "only one dimension"),
        (lambda: jg.zeros((2, 3)).permute(0, 0), ValueError, "not a permutation"),
        (lambda: jg.zeros((2, 3)).permute(0, 2), IndexError, "out of range"),
        (lambda: jg.zeros((2, 3)).expand(4, 3), ValueError, "cannot broadcast"),
        (lambda: jg.zeros((2, 3)).expand(3), ValueError, "fewer dimensions"),
        (lambda: jg.zeros((2, 3)).squeeze(0), ValueError, "size 2"),
        (lambda: jg.zeros((2, 3)).narrow(1, 2, 2), IndexError, "outside dimension 1"),
        (lambda: jg.zeros((2, 3)).diagonal(0, 1, 1), ValueError, "two different"),
        (lambda: jg.zeros(3).mT, ValueError, "2 dimensions"),
        (lambda: jg.Tensor(jg.FloatStorage(4), (2, 3)), ValueError, "outside a storage of size 4"),
        (lambda: jg.Tensor(jg.FloatStorage(4), (2,), (1,), -1), ValueError, "outside"),
        (lambda: jg.Tensor(np.zeros(3), (3,)), TypeError, "typed storage"),
        (lambda: jg.arange(0, 5, 0), ValueError, "step"),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_storage_under_tensors_cannot_shrink_below_them():
    # Kernels trust a tensor's layout: a shrunk storage would let them read past its end.
    t = jg.arange(10.0)
    with pytest.raises(RuntimeError, match="cannot shrink a storage that tensors are built on"):
        t.storage().resize_(2)
    s = jg.DoubleStorage(10)
    jg.Tensor(s, (10,))
    with pytest.raises(RuntimeError, match="cannot shrink"):
        s.resize_(4)
    t.storage().resize_(20)  # growing keeps every tensor inside it
    assert t.sum().item() == 45.0 and t.storage().size() == 20
    assert jg.DoubleStorage(10).resize_(4).size() == 4  # no tensor over it: free to shrink


def test_arange_step_none_and_full_of_an_array_as_numpy():
    assert jg.arange(0, 5, None).tolist() == list(range(5)) and jg.arange(5, None).dtype is jg.int64
    np.testing.assert_array_equal(jg.full((2, 3), [1, 2, 3]).numpy(), np.full((2, 3), [1, 2, 3]))
    f32 = np.array([0.5, 1.5], np.float32)
    assert jg.full((3, 2), f32).dtype is jg.float32
    assert jg.full((2,), jg.tensor(2.5)).tolist() == [2.5, 2.5]
    assert jg.full((2,), [1.5, 2.5], dtype=jg.int32).tolist() == [1, 2]


def test_arange_of_typed_numbers_takes_the_kind_only_as_numpy():
    for bound in (
        np.int8(5),
        np.uint8(5),
        np.array(5, np.int16),
        jg.tensor(5, dtype=jg.int8),
        np.float32(2.5),
        np.float16(2.5),
        jg.tensor(2.5, dtype=jg.float32),
    ):
        want = np.arange(np.asarray(bound).item() if isinstance(bound, jg.Tensor) else bound)
        got = jg.arange(bound)
        assert got.dtype.numpy == want.dtype and got.tolist() == want.tolist()
    assert jg.arange(np.int8(1), np.int8(7), np.int8(2)).dtype is jg.int64
    assert jg.arange(0, np.float32(1), 0.25).dtype is jg.float64


def test_full_like_of_an_array_broadcasts_it_as_numpy():
    like = np.zeros((2, 3), np.int32)
    for fill in ([1, 2, 3], np.array([[1.5], [2.5]]), jg.tensor([7, 8, 9])):
        want = np.full_like(like, np.asarray(fill))
        got = jg.full_like(jg.from_numpy(like), fill)
        assert got.dtype is jg.int32 and got.tolist() == want.tolist()
    assert jg.full_like(like, [1, 2, 3], dtype=jg.float32).dtype is jg.float32


def test_masked_arrays_are_seen_as_their_data():
    # As np.asarray and PyTorch (from_numpy, tensor, as_tensor): the mask is dropped.
    m = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    shared = jg.from_numpy(m)
    m[0] = 5.0
    assert shared.tolist() == [5.0, 2.0] and jg.asarray(m).data_ptr() == m.ctypes.data
    assert jg.tensor(m).tolist() == [5.0, 2.0]


def test_linspace_keeps_complex_bounds():
    np.testing.assert_array_equal(jg.linspace(1 + 1j, 2, 3).numpy(), np.linspace(1 + 1j, 2, 3))
    assert jg.linspace(0, 1j, 2).dtype is jg.complex128
    assert jg.linspace(0, 1j, 2, dtype=jg.complex64).dtype is jg.complex64
    assert jg.linspace(0, 1, 3).dtype is jg.get_default_dtype()


def test_zero_size_tensors_are_contiguous_whatever_their_strides():
    empty = jg.zeros((3, 4)).as_strided((0, 4), (7, 3))
    assert empty.is_contiguous() and np.empty((0, 4)).flags.c_contiguous


def test_a_0d_tensor_formats_as_its_number():
    assert f"{jg.array(3.5):.2f}" == "3.50" and f"{jg.array(7):04d}" == "0007"
    assert f"{jg.ones(2)}" == str(jg.ones(2))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{jg.ones(2):.2f}"


def test_array_copy_false_never_copies_as_numpy_2():
    a = np.ones(3)
    shared = jg.array(a, copy=False)
    a[0] = 5.0
    assert shared.tolist() == [5.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="without a copy"):
        jg.array(a, dtype=jg.float32, copy=False)
    assert jg.array(a, dtype=jg.float32, copy=None).dtype is jg.float32
    for data in ([1, 2], 1.5):  # Python data is always converted, so copied
        with pytest.raises(ValueError, match=r"from a (list|float) without a copy"):
            jg.asarray(data, copy=False)
        with pytest.raises(ValueError, match="copy=None to copy"):
            jg.array(data, copy=False)
    buffer = bytearray(b"\x01\x02")  # memory exported by a buffer is shared
    shared = jg.asarray(buffer, copy=False)
    buffer[0] = 7
    assert shared.tolist() == [7, 2]


def test_flags_match_numpys_and_are_read_only():
    a = np.zeros((3, 4), dtype=np.float32)
    t = jg.tensor(a)
    for view, array in [(t, a), (t.T, a.T), (t[:, 1], a[:, 1]), (t[1:], a[1:])]:
        for key in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE", "ALIGNED", "C", "F"):
            assert view.flags[key] == array.flags[key], key
        assert view.flags.c_contiguous == array.flags.c_contiguous
    assert t.flags.owndata and not t[1:].flags.owndata
    with pytest.raises(AttributeError, match="read-only"):
        t.flags.writeable = False
    with pytest.raises(KeyError, match="NOPE"):
        t.flags["NOPE"]
