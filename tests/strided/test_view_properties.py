"""Property tests: random chains of views compared element for element with numpy's own."""

import warnings

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES

DTYPES = st.sampled_from(ALL_DTYPES)
SHAPES = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)


def base_pair(dtype, shape):
    # Non-negative: a negative float cast to an unsigned type is undefined in C and numpy.
    values = (np.arange(int(np.prod(shape))) % 97).reshape(shape)
    a = values.astype(dtype.numpy)
    return a, jg.from_numpy(a)


@st.composite
def basic_index(draw, shape):
    key = []
    indexed = draw(st.integers(0, len(shape)))
    for n in shape[:indexed]:
        if draw(st.booleans()):
            key.append(None)
        if n and draw(st.booleans()):
            key.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = draw(st.none() | st.integers(-3, 3).filter(bool))
            key.append(slice(draw(bound), draw(bound), step))
    if draw(st.booleans()):
        # Mid-key, an Ellipsis would shift later keys onto other dimensions.
        key.insert(0 if indexed == len(shape) and draw(st.booleans()) else len(key), Ellipsis)
    return tuple(key)


@st.composite
def view_step(draw, shape):
    """One view as a pair of functions (numpy, jitgrad) that must agree."""
    ndim = len(shape)
    ops = ["index", "flip", "unsqueeze", "reshape"]
    if ndim:
        ops += ["permute", "swap", "narrow", "expand"]
    if ndim >= 2:
        ops += ["diagonal"]
    op = draw(st.sampled_from(ops))
    if op == "index":
        key = draw(basic_index(shape))
        return lambda a: a[key], lambda t: t[key]
    if op == "flip":
        return lambda a: np.flip(a), lambda t: t.flip()
    if op == "unsqueeze":
        d = draw(st.integers(-ndim - 1, ndim))
        return lambda a: np.expand_dims(a, d), lambda t: t.unsqueeze(d)
    if op == "reshape":
        return lambda a: a.reshape(-1), lambda t: t.reshape(-1)
    if op == "permute":
        perm = draw(st.permutations(range(ndim)))
        return lambda a: a.transpose(perm), lambda t: t.permute(perm)
    if op == "swap":
        d0, d1 = draw(st.integers(0, ndim - 1)), draw(st.integers(0, ndim - 1))
        return lambda a: a.swapaxes(d0, d1), lambda t: t.swapaxes(d0, d1)
    if op == "narrow":
        d = draw(st.integers(0, ndim - 1))
        start = draw(st.integers(0, shape[d]))
        length = draw(st.integers(0, shape[d] - start))
        index = (slice(None),) * d + (slice(start, start + length),)
        return lambda a: a[index], lambda t: t.narrow(d, start, length)
    if op == "expand":
        target = tuple(draw(st.integers(0, 3)) if n == 1 else n for n in shape)
        lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
        full = lead + target
        return lambda a: np.broadcast_to(a, full), lambda t: t.expand(*full)
    k = draw(st.integers(-3, 3))
    return lambda a: np.diagonal(a, k), lambda t: t.diagonal(k)


@settings(max_examples=200, deadline=None)
@given(dtype=DTYPES, shape=SHAPES, data=st.data())
def test_view_chains_match_numpy_and_never_copy(dtype, shape, data):
    a, t = base_pair(dtype, shape)
    for _ in range(data.draw(st.integers(1, 4))):
        numpy_op, jitgrad_op = data.draw(view_step(a.shape))
        before = t.storage()
        a_next = numpy_op(a)
        if not np.shares_memory(a_next, a):  # numpy copied (reshape, or a[()] of a 0-d)
            np.testing.assert_array_equal(jitgrad_op(t).numpy(), a_next)
            a = np.array(a_next)
            t = jg.from_numpy(a)
            continue
        t = jitgrad_op(t)
        a = a_next
        assert t.shape == a.shape
        assert t.storage() is before
        view = t.numpy()
        np.testing.assert_array_equal(view, a)
        if a.size:
            assert view.__array_interface__["data"][0] == a.__array_interface__["data"][0]
            # A stride along a dimension of size 1 is never used; numpy and PyTorch differ.
            used = [i for i, n in enumerate(a.shape) if n > 1]
            assert [t.stride(i) for i in used] == [a.strides[i] // a.itemsize for i in used]
        dense = t.contiguous()
        assert dense.is_contiguous() == True  # noqa: E712
        np.testing.assert_array_equal(dense.numpy(), a)


@settings(max_examples=150, deadline=None)
@given(src_dtype=DTYPES, dst_dtype=DTYPES, shape=SHAPES.filter(len), data=st.data())
def test_copy_into_views_casts_and_broadcasts_like_numpy(src_dtype, dst_dtype, shape, data):
    dst_np, dst = base_pair(dst_dtype, shape)
    perm = data.draw(st.permutations(range(len(shape))))
    flips = tuple(slice(None, None, -1) if data.draw(st.booleans()) else slice(None) for _ in shape)
    dst_np_view, dst_view = dst_np.transpose(perm)[flips], dst.permute(perm)[flips]
    # The source broadcasts from a suffix of the destination's shape with some dims at 1.
    target = dst_np_view.shape[data.draw(st.integers(0, len(shape))) :]
    src_shape = tuple(1 if data.draw(st.booleans()) else n for n in target)
    src_np, src = base_pair(src_dtype, src_shape)
    if src_shape:
        src_np, src = src_np[::-1], src.flip(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        dst_np_view[...] = src_np
    dst_view.copy_(src)
    np.testing.assert_array_equal(dst.numpy(), dst_np)


@settings(max_examples=100, deadline=None)
@given(dtype=DTYPES, shape=SHAPES, data=st.data())
def test_from_numpy_of_any_view_shares_memory(dtype, shape, data):
    a, _ = base_pair(dtype, shape)
    numpy_op, _ = data.draw(view_step(a.shape))
    v = numpy_op(a)
    assume(isinstance(v, np.ndarray))  # numpy turns some 0-d views into scalars
    t = jg.from_numpy(v)
    np.testing.assert_array_equal(t.numpy(), v)
    if v.size:
        assert t.data_ptr() == v.__array_interface__["data"][0]
        assert np.shares_memory(t.numpy(), a) == np.shares_memory(v, a)


EMPTY_BASES = {
    "zeros": lambda shape, dtype: jg.zeros(shape, dtype=dtype),
    "from_numpy": lambda shape, dtype: jg.from_numpy(np.zeros(shape, dtype.numpy)),
    "row of a wider zeros": lambda shape, dtype: jg.zeros((3, *shape), dtype=dtype)[2],
}


@settings(max_examples=150, deadline=None)
@given(
    dtype=DTYPES,
    shape=SHAPES.filter(lambda s: 0 in s),
    base=st.sampled_from(sorted(EMPTY_BASES)),
    data=st.data(),
)
def test_views_of_empty_tensors_stay_usable_like_numpy(dtype, shape, base, data):
    # jitgrad's own empty tensors have non-zero strides (from_numpy's have numpy's zeros):
    # an index that moves the offset by them must not carry it past the empty storage.
    a, t = np.zeros(shape, dtype.numpy), EMPTY_BASES[base](shape, dtype)
    for _ in range(data.draw(st.integers(1, 3))):
        numpy_op, jitgrad_op = data.draw(view_step(a.shape))
        a, t = numpy_op(a), jitgrad_op(t)
        assert t.shape == a.shape
        assert 0 <= t.storage_offset() <= t.storage().size()
        np.testing.assert_array_equal(t.numpy(), a)
        assert t.tolist() == a.tolist()
        assert t.sum().item() == a.sum()
        assert "size=" in repr(t)
        assert t.contiguous().shape == a.shape


def test_an_integer_index_into_an_empty_tensor_saves_and_loads(tmp_path):
    v = jg.zeros((4, 0))[1]
    assert v.shape == (0,) and v.storage_offset() == 0
    jg.save(v, tmp_path / "v.jg")
    assert jg.load(tmp_path / "v.jg").shape == (0,)
