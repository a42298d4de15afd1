"""Advanced indexing, assignment, take_along_axis/gather, split and pad against numpy, with
gradients checked by finite differences (on non-contiguous views) and to second order."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.autograd import gradcheck
from jitgrad.ops.indexing import GetItem, ScatterAdd, advanced_index, index_key

BASE = np.arange(60.0).reshape(3, 4, 5)
MASK_34 = np.array([[True, False, True, False], [False, False, True, True], [True] * 4])


def leaf(shape, seed=0):
    rng = np.random.default_rng(seed)
    return jg.tensor(rng.standard_normal(shape), requires_grad=True)


def to_jg(key):
    """The same key with every array as a jitgrad tensor."""
    parts = key if isinstance(key, tuple) else (key,)
    out = tuple(jg.from_numpy(p) if isinstance(p, np.ndarray) else p for p in parts)
    return out if isinstance(key, tuple) else out[0]


def scatter_reference(shape, key, weights):
    """Where each result element came from, by indexing a tensor of flat positions."""
    total = np.zeros(int(np.prod(shape)))
    np.add.at(total, np.arange(total.size).reshape(shape)[key], weights)
    return total.reshape(shape)


# -- forward equals numpy ---------------------------------------------------------------------

KEYS = [
    [0, 2],
    [[0, 1], [2, 2]],
    ([0, 0, 2], [1, 1, 3]),
    ([0, 2], slice(1, 3), [4, 0]),  # advanced indices split by a slice: moved to the front
    (slice(None), [3, 0, 3]),
    (slice(None, None, -1), [3, 0], [[1], [2]]),
    (Ellipsis, [4, 4, 0]),
    (None, [1, 1], None, slice(None), 2),
    (1, [0, 0], slice(None, None, 2)),
    (-1, [-1, -4]),
    np.array([True, False, True]),
    MASK_34,
    (MASK_34, [1, 1, 1, 1, 1, 1, 1, 0]),
    (slice(None), np.array([False, True, True, False]), slice(1, 4)),
    (Ellipsis, np.array([True, False, False, True, True])),
    (np.array([True, False, True]), slice(None), [0, 4]),
    np.ones((3, 4, 5), bool),
    True,
    False,
    (0, True),
    np.array(1),  # a 0-d index array acts as an integer (the result is still a copy)
    (np.array(2), np.array(3)),
    [],
    ([], slice(None)),
    np.zeros((0,), np.int64),
    np.array([[[0]]], np.int32),
    (np.array([0, 1], np.uint8), None),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_forward_equals_numpy(key):
    x = jg.tensor(BASE)
    expected = BASE[key]
    for k in (key, to_jg(key)):
        got = x[k]
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.numpy(), expected)
        assert not np.may_share_memory(got.numpy(), x.numpy())


@pytest.mark.parametrize("dtype", [jg.int64, jg.int8, jg.bool_, jg.float32, jg.complex64])
def test_forward_keeps_dtype(dtype):
    a = (np.arange(12) % 5).reshape(3, 4).astype(dtype.numpy)
    got = jg.tensor(a)[[2, 0, 2], 1:]
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), a[[2, 0, 2], 1:])


def test_index_with_tensors_and_masks_from_comparisons():
    assert jg.tensor([1.0, 2.0, 3.0])[jg.tensor([0, 0, 1])].tolist() == [1.0, 1.0, 2.0]
    x = jg.arange(6)
    assert x[x % 2 == 0].tolist() == [0, 2, 4]
    assert x[[True, False, True, False, False, True]].tolist() == [0, 2, 5]


def test_index_of_non_contiguous_tensors():
    a = np.arange(24.0).reshape(4, 6)
    views = [
        (jg.tensor(a).T, a.T),
        (jg.tensor(a)[::2, ::-3], a[::2, ::-3]),
        (jg.tensor(a[:1]).expand(3, 6), np.broadcast_to(a[:1], (3, 6))),
    ]
    for x, ref in views:
        np.testing.assert_array_equal(x[[1, 0, 0], 1:].numpy(), ref[[1, 0, 0], 1:])
        np.testing.assert_array_equal(x[ref > 5].numpy(), ref[ref > 5])


def test_zero_size_axes():
    x = jg.zeros((0, 3), requires_grad=True)
    y = x[:, [0, 2, 2]]
    assert y.shape == (0, 3)
    y.sum().backward()
    assert x.grad.shape == (0, 3)
    assert jg.tensor(BASE)[[]].shape == (0, 4, 5)


@st.composite
def shape_and_key(draw):
    """A shape and a valid advanced key: integer arrays that broadcast together, or one
    boolean mask, mixed with slices, integers, None and an Ellipsis."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    common = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    use_mask = draw(st.booleans())
    key, axis = [], 0
    while axis < len(shape) and draw(st.integers(0, 4)):
        kind = draw(st.sampled_from(["slice", "int", "none", "advanced", "advanced"]))
        n = shape[axis]
        if kind == "none":
            key.append(None)
            continue
        if kind == "slice":
            bound = st.none() | st.integers(-n - 1, n + 1)
            step = draw(st.none() | st.integers(-2, 2).filter(bool))
            key.append(slice(draw(bound), draw(bound), step))
        elif kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif use_mask:
            span = draw(st.integers(1, min(2, len(shape) - axis)))
            mask_shape = shape[axis : axis + span]
            bits = draw(
                st.lists(
                    st.booleans(),
                    min_size=int(np.prod(mask_shape)),
                    max_size=int(np.prod(mask_shape)),
                )
            )
            key.append(np.array(bits, bool).reshape(mask_shape))
            use_mask = None  # one mask at most: its count need not broadcast with others
            axis += span
            continue
        elif use_mask is None:
            key.append(slice(None))
        else:
            array_shape = tuple(m if draw(st.booleans()) else 1 for m in common)
            values = draw(
                st.lists(
                    st.integers(-n, n - 1),
                    min_size=int(np.prod(array_shape)),
                    max_size=int(np.prod(array_shape)),
                )
            )
            key.append(np.array(values, np.int64).reshape(array_shape))
        axis += 1
    if draw(st.booleans()):
        # Up front, an Ellipsis would shift the key onto the trailing dimensions.
        key.insert(0 if axis == len(shape) and draw(st.booleans()) else len(key), Ellipsis)
    return shape, tuple(key)


@settings(max_examples=150, deadline=None)
@given(shape_and_key(), st.booleans())
def test_forward_and_backward_match_numpy(shape_key, tensor_parts):
    shape, key = shape_key
    a = np.random.default_rng(0).standard_normal(shape)
    x = jg.tensor(a, requires_grad=True)
    jkey = to_jg(key) if tensor_parts else key
    expected = a[key]
    y = advanced_index(x, jkey)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(x[jkey].numpy(), expected)
    w = np.random.default_rng(1).standard_normal(expected.shape)
    (y * jg.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), scatter_reference(shape, key, w))


# -- gradients ---------------------------------------------------------------------------------


def test_getitem_records_a_function():
    x = leaf((3, 4))
    y = x[[0, 0, 2]]
    assert isinstance(y.grad_fn, GetItem)
    assert y.requires_grad and not y.is_leaf
    with jg.no_grad():
        assert x[[0, 0, 2]].grad_fn is None


def test_recorded_key_is_a_copy_of_the_index_tensor():
    x = leaf(4)
    idx = jg.tensor([1, 1, 3])
    y = x[idx]
    idx[0] = 0  # changing the index afterwards does not reroute the gradient
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 1.0]


def test_repeated_indices_accumulate():
    x = leaf(4)
    x[jg.tensor([1, 1, 1, 3])].sum().backward()
    assert x.grad.tolist() == [0.0, 3.0, 0.0, 1.0]


GRAD_CASES = {
    "transposed, repeated rows": ((4, 5), lambda t: t.T[[0, 0, 2, -1], ::2]),
    "stepped slices then arrays": ((6, 5), lambda t: t[::2, 1:][[1, 1, 0], [3, 3, 0]]),
    "expanded": ((3,), lambda t: t.reshape(3, 1).expand(3, 4)[[0, 0, 2], [1, 1, 3]]),
    "arrays around a slice": ((3, 4, 5), lambda t: t[[0, 2, 2], :, [4, 1, 1]]),
    "mask on a transpose": ((4, 3), lambda t: t.T[jg.tensor(MASK_34)]),
    "mask with a trailing slice": ((3, 4, 5), lambda t: t[jg.tensor(MASK_34), 1::2]),
    "negative step and 2-d index": ((5, 4), lambda t: t[::-1][jg.tensor([[0, 4], [4, 4]])]),
    "twice": ((4, 4), lambda t: t[[0, 0, 3]][:, [1, 1]] * t[[1, 2, 3]][:, [2, 2]]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_getitem_gradcheck(name):
    shape, fn = GRAD_CASES[name]
    assert gradcheck(fn, leaf(shape))


def test_scatter_add_gradcheck():
    key = index_key((3, 4), ([0, 0, 2], slice(None)))
    assert gradcheck(lambda g: ScatterAdd(key, (3, 4))(g.T), leaf((4, 3)))


def test_second_order_through_getitem():
    x = leaf(4)
    idx = jg.tensor([0, 0, 2])
    (g,) = jg.autograd.grad((x[idx] ** 3).sum(), [x], create_graph=True)
    a = x.detach().numpy()
    expected = np.zeros(4)
    np.add.at(expected, [0, 0, 2], 3 * a[[0, 0, 2]] ** 2)
    np.testing.assert_allclose(g.numpy(), expected)
    assert g.grad_fn is not None
    (g2,) = jg.autograd.grad(g.sum(), [x])
    second = np.zeros(4)
    np.add.at(second, [0, 0, 2], 6 * a[[0, 0, 2]])
    np.testing.assert_allclose(g2.numpy(), second)


def test_second_order_gradcheck():
    def first_grad(t):
        v = t.T
        (g,) = jg.autograd.grad((v[[0, 0, 2], 1:] ** 3).sum(), [t], create_graph=True)
        return g

    assert gradcheck(first_grad, leaf((4, 3)))


# -- assignment ----------------------------------------------------------------------------------

ASSIGNMENTS = [
    ([0, 2], 7.0),
    ([0, 0, 1], np.array([[1.0], [2.0], [3.0]])),  # repeated index: numpy keeps the last
    (MASK_34, 1.5),
    (MASK_34, np.arange(8.0)),
    ((slice(None), [1, 3]), np.array([[1.0], [2.0], [3.0]])),
    (([0, 2], slice(1, 3)), np.array([9.0, 8.0])),
    ((Ellipsis, [0]), 5),
    (np.array([True, False, True]), np.arange(4.0)),
    (([2, 0], [3, 3]), [-1.0, -2.0]),
    ([], 1.0),
]


@pytest.mark.parametrize("key, value", ASSIGNMENTS, ids=[str(i) for i in range(len(ASSIGNMENTS))])
def test_assignment_equals_numpy(key, value):
    expected = np.arange(12.0).reshape(3, 4)
    expected[key] = value
    for k, v in (
        (key, value),
        (to_jg(key), to_jg(value) if isinstance(value, np.ndarray) else value),
    ):
        x = jg.tensor(np.arange(12.0).reshape(3, 4))
        version = x._storage._version
        x[k] = v
        np.testing.assert_array_equal(x.numpy(), expected)
        assert x._storage._version > version


def test_assignment_casts_and_writes_through_views():
    a = np.arange(12).reshape(3, 4)
    base = jg.tensor(a)
    base.T[[1, 3], 1:] = jg.tensor([[0.7, 2.5]])
    expected = a.copy()
    expected.T[[1, 3], 1:] = np.array([[0.7, 2.5]])
    np.testing.assert_array_equal(base.numpy(), expected)
    assert base.dtype is jg.int64


PYTHON_VALUES = [  # (dtype, value): numpy checks Python values against the target dtype
    ("uint8", -1),
    ("uint8", [-1, 300]),
    ("uint8", 2**40),
    ("int32", float("nan")),
    ("int32", [np.nan]),
    ("float32", 1 + 2j),
    ("float32", [1j]),
    ("uint8", np.int64(-1)),
    ("uint8", np.array([-1, 300])),  # numpy values cast unsafely
    ("int32", [2.7, -2.7]),
    ("float16", [1e6]),
    ("int8", [True, False]),
]


@pytest.mark.parametrize("dtype, value", PYTHON_VALUES)
@pytest.mark.parametrize(
    "key", [[0, 1], slice(0, 2), np.array([True, True, False])], ids=["advanced", "basic", "mask"]
)
def test_assigned_python_values_are_checked_as_numpy_checks_them(dtype, value, key):
    expected = np.zeros(3, dtype)
    tensor = jg.zeros(3, dtype=dtype)
    with np.errstate(over="ignore"):
        try:
            expected[key] = value
        except (OverflowError, ValueError, TypeError) as e:
            with pytest.raises(type(e)):
                tensor[key] = value
            assert tensor.tolist() == [0, 0, 0]
            return
        tensor[key] = value
    np.testing.assert_array_equal(tensor.numpy(), expected)


@st.composite
def _basic_keys(draw, ndim):
    """A basic key of up to ``ndim`` integers and slices (steps of either sign), with an
    Ellipsis or a None among them at times."""
    parts = []
    for size in (3, 4, 5)[:ndim]:
        if draw(st.booleans()):
            parts.append(draw(st.integers(-size, size - 1)))
        else:
            start, stop = draw(st.integers(-size, size)), draw(st.integers(-size, size))
            parts.append(slice(start, stop, draw(st.sampled_from([1, 2, -1, -2]))))
    parts = parts[: draw(st.integers(1, ndim))]
    extra = draw(st.sampled_from([None, Ellipsis, "none"]))
    if extra != "none":
        parts.insert(draw(st.integers(0, len(parts))), extra)
    return tuple(parts)


@settings(max_examples=80, deadline=None)
@given(
    key=_basic_keys(3),
    dtype=st.sampled_from(["float64", "float32", "int32", "bool"]),
    value_kind=st.sampled_from(["number", "tensor", "last axis", "overlapping view"]),
    view=st.sampled_from(["whole", "transposed"]),
)
def test_basic_assignment_equals_numpy(key, dtype, value_kind, view):
    """``x[key] = value`` for basic keys writes as numpy's assignment does: through views
    of the base, from values that overlap it, counting the write."""
    base = (BASE % 7 > 2) if dtype == "bool" else BASE.astype(dtype)  # (3, 4, 5)
    if view == "transposed":  # the (3, 4, 5) transposed view of a (5, 4, 3) base
        base = base.T.copy()
    expected, tensor_base = base.copy(), jg.tensor(base)
    a, x = (expected.T, tensor_base.T) if view == "transposed" else (expected, tensor_base)
    target_shape = a[key].shape
    if value_kind == "number":
        value = value_t = True if dtype == "bool" else 3
    elif value_kind == "overlapping view":
        value = a[(slice(None, None, -1),) * a.ndim][key].copy()  # (numpy's own copy first)
        value_t = x[(slice(None, None, -1),) * x.ndim][key]
    else:
        shape = target_shape if value_kind == "tensor" else target_shape[-1:]
        value = (np.arange(np.prod(shape)) % 2 + 5).astype(base.dtype).reshape(shape)
        value_t = jg.tensor(value)
    version = tensor_base._storage._version
    a[key] = value
    x[key] = value_t
    np.testing.assert_array_equal(tensor_base.numpy(), expected)
    assert tensor_base._storage._version > version or not a[key].size


def test_basic_assignment_refusals():
    a = np.arange(6.0)
    a.flags.writeable = False
    frozen = jg.from_numpy(a)
    for value in (1.0, jg.ones(2, dtype=jg.float64)):
        with pytest.raises(ValueError, match="read-only"):
            frozen[1:3] = value
        with pytest.raises(ValueError, match="broadcast view"):
            jg.zeros((1, 3)).expand(2, 3)[:, :2] = value
    assert a.tolist() == [0, 1, 2, 3, 4, 5]
    with pytest.raises(IndexError, match="out of bounds"):
        jg.zeros(3)[3] = 1.0


def test_assignment_into_a_leaf_under_no_grad():
    x = leaf(4)
    with jg.no_grad():
        x[[0, 0, 2]] = 1.0
    assert x.numpy()[[0, 2]].tolist() == [1.0, 1.0]
    assert x.is_leaf and x.requires_grad


def test_assignment_from_an_overlapping_value():
    x = jg.arange(5.0)
    x[[0, 1, 2, 3, 4]] = x.flip(0)
    assert x.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


def test_assignment_refusals():
    a = np.arange(6.0)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        jg.from_numpy(a)[[0]] = 1.0
    with pytest.raises(ValueError, match="broadcast view"):
        jg.zeros((1, 3)).expand(2, 3)[[0]] = 1.0
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(2, 4\)"):
        jg.zeros((3, 4))[[0, 1]] = jg.ones(3)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        jg.zeros((3, 4))[[0, 3]] = 1.0


# -- bad keys ----------------------------------------------------------------------------------

BAD_KEYS = [
    ([0, 5], IndexError, "index 5 is out of bounds for axis 0 with size 3"),
    ((slice(None), [-5]), IndexError, "index -5 is out of bounds for axis 1 with size 4"),
    (([0], 7), IndexError, "index 7 is out of bounds for axis 1 with size 4"),
    ((Ellipsis, [9]), IndexError, "index 9 is out of bounds for axis 2 with size 5"),
    ((None, slice(None), [4]), IndexError, "index 4 is out of bounds for axis 1 with size 4"),
    ((np.array([0]), np.array(4)), IndexError, "index 4 is out of bounds for axis 1"),
    (
        np.ones((3, 5), bool),
        IndexError,
        r"boolean index of shape \(3, 5\) does not match the indexed shape \(3, 4\)",
    ),
    (
        (slice(None), np.array([True, False])),
        IndexError,
        r"boolean index of shape \(2,\) does not match the indexed shape \(4,\)",
    ),
    (np.array([0.0, 1.0]), IndexError, "integer or boolean type, got float64"),
    (([0], np.array([1.0])), IndexError, "integer or boolean type, got float64"),
    (1.5, IndexError, "valid indices; got float 1.5"),
    (([0], 1.5), IndexError, "got float 1.5"),
    (np.float64(1.0), IndexError, "got float64 1.0"),
    ("a", IndexError, "got str"),
    (([0], 0, 0, 0), IndexError, r"too many indices for a tensor of shape \(3, 4, 5\)"),
    ((Ellipsis, [0], Ellipsis), IndexError, "single ellipsis"),
    ([[0, 1], [2]], IndexError, "not a rectangular sequence"),
    (([0, 1], [0, 1, 2]), IndexError, "shape mismatch"),
]


@pytest.mark.parametrize(
    "key, error, message", BAD_KEYS, ids=[str(i) for i in range(len(BAD_KEYS))]
)
def test_bad_keys(key, error, message):
    x = jg.tensor(BASE, requires_grad=True)
    with pytest.raises(error, match=message):
        x[key]
    if isinstance(key, np.ndarray) or (
        isinstance(key, tuple) and any(isinstance(k, np.ndarray) for k in key)
    ):
        with pytest.raises(error, match=message):
            x[to_jg(key)]


def test_float_index_tensor_message():
    with pytest.raises(IndexError, match="got float32"):
        jg.arange(4.0)[jg.tensor([0.0, 1.0], dtype=jg.float32)]


# -- take_along_axis and gather -------------------------------------------------------------------


@st.composite
def take_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    d = axis % len(shape)
    index_shape = tuple(
        draw(st.integers(0, 4)) if i == d else draw(st.sampled_from([n, 1]))
        for i, n in enumerate(shape)
    )
    n = shape[d]
    values = draw(
        st.lists(
            st.integers(-n, n - 1),
            min_size=int(np.prod(index_shape)),
            max_size=int(np.prod(index_shape)),
        )
    )
    return shape, np.array(values, np.int64).reshape(index_shape), axis


@settings(max_examples=80, deadline=None)
@given(take_case())
def test_take_along_axis_matches_numpy(case):
    shape, indices, axis = case
    a = np.random.default_rng(0).standard_normal(shape)
    x = jg.tensor(a, requires_grad=True)
    y = jg.take_along_axis(x, jg.from_numpy(indices), axis)
    expected = np.take_along_axis(a, indices, axis)
    np.testing.assert_array_equal(y.numpy(), expected)
    w = np.random.default_rng(1).standard_normal(expected.shape)
    (y * jg.tensor(w)).sum().backward()
    reference = np.zeros(a.size)
    flat = np.take_along_axis(np.arange(a.size).reshape(shape), indices, axis)
    np.add.at(reference, flat, w)
    np.testing.assert_allclose(x.grad.numpy(), reference.reshape(shape))


def test_take_along_axis_flattened_and_gradcheck():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(
        jg.take_along_axis(jg.tensor(a), [11, 0, 0], axis=None).numpy(),
        np.take_along_axis(a, np.array([11, 0, 0]), axis=None),
    )
    idx = jg.tensor([[0, 0, 2], [1, 1, 1], [3, 0, 3], [2, 2, 0]])
    assert gradcheck(lambda t: jg.take_along_axis(t.T, idx, axis=0), leaf((3, 4)))
    assert gradcheck(lambda t: jg.take_along_axis(t[::2], idx[:, :1].T, axis=1), leaf((6, 4)))
    assert gradcheck(lambda t: jg.take_along_axis(t, idx[:1], axis=1), leaf((3, 4)))


def gather_reference(a, dim, index):
    out = np.empty(index.shape, a.dtype)
    for pos in np.ndindex(*index.shape):
        source = list(pos)
        source[dim] = index[pos]
        out[pos] = a[tuple(source)]
    return out


def test_gather_is_pytorchs():
    a = np.arange(20.0).reshape(4, 5)
    index = np.array([[3, 0, 3], [1, 1, 2]])
    for dim in (0, 1, -1):
        i = index if dim == 0 else index % 4
        got = jg.gather(jg.tensor(a), dim, jg.tensor(i))
        np.testing.assert_array_equal(got.numpy(), gather_reference(a, dim % 2, i))
    assert gradcheck(lambda t: jg.gather(t.T, 1, jg.tensor(index)), leaf((5, 4)))


def test_gather_and_take_along_axis_of_a_0d_tensor():
    # Both failed with a raw "tuple index out of range" from inside jitgrad.
    torch = pytest.importorskip("torch")
    for dim in (0, -1):  # PyTorch's gather takes the one element
        x = jg.tensor(5.0, requires_grad=True)
        y = jg.gather(x, dim, jg.tensor(0))
        assert y.shape == () and y.item() == torch.gather(torch.tensor(5.0), dim, torch.tensor(0))
        y.backward()
        assert x.grad.item() == 1.0
    with pytest.raises(IndexError, match="index 1 is out of bounds for dimension 0 with size 1"):
        jg.gather(jg.tensor(5.0), 0, jg.tensor(1))
    with pytest.raises(IndexError):  # numpy's AxisError; PyTorch's take_along_dim refuses too
        np.take_along_axis(np.array(5.0), np.array(0), 0)
    with pytest.raises(IndexError, match="out of range for a 0-d tensor; use axis=None"):
        jg.take_along_axis(jg.tensor(5.0), jg.tensor(0), 0)
    assert jg.take_along_axis(jg.tensor(5.0), jg.tensor([0, 0]), None).tolist() == [5.0, 5.0]


def test_jitted_gather_reads_each_calls_indices():
    x = jg.arange(12.0).reshape(3, 4)
    step = jg.jit(lambda x, i: jg.gather(x, 1, i))
    narrow = jg.jit(lambda x, i: jg.gather(x, 0, i))  # index smaller than x outside dim
    for index in ([[0], [1], [2]], [[3], [3], [3]], [[2], [0], [1]]):
        i = jg.tensor(index)
        np.testing.assert_array_equal(step(x, i).numpy(), jg.gather(x, 1, i).numpy())
        j = jg.tensor(index[:2]) % 3
        np.testing.assert_array_equal(narrow(x, j.T).numpy(), jg.gather(x, 0, j.T).numpy())


def test_take_and_gather_errors():
    x = jg.zeros((3, 4))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        jg.take_along_axis(x, jg.tensor([[4]]), axis=1)
    with pytest.raises(IndexError, match="integer array"):
        jg.take_along_axis(x, jg.tensor([[1.0]]), axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        jg.take_along_axis(x, jg.tensor([1]), axis=1)
    with pytest.raises(ValueError, match="do not broadcast"):
        jg.take_along_axis(x, jg.zeros((2, 1), dtype=jg.int64), axis=1)
    with pytest.raises(ValueError, match="1-D indices"):
        jg.take_along_axis(x, jg.tensor([[1]]), axis=None)
    with pytest.raises(ValueError, match="larger than input"):
        jg.gather(x, 1, jg.zeros((4, 1), dtype=jg.int64))
    with pytest.raises(IndexError, match="gather: indices must be an integer array"):
        jg.gather(x, 1, jg.zeros((3, 1)))
    with pytest.raises(IndexError, match="dimension 2 is out of range"):
        jg.gather(x, 2, jg.zeros((3, 1), dtype=jg.int64))


@pytest.mark.parametrize("jitted", [False, True])
def test_gather_refuses_negative_and_large_indices_as_torch(jitted):
    # PyTorch's gather has no negative indices; numpy's take_along_axis has, and keeps them.
    torch = pytest.importorskip("torch")
    x = jg.tensor([[1.0, 2.0], [3.0, 4.0]])
    gather, take = (lambda x, i: jg.gather(x, 1, i)), (lambda x, i: jg.take_along_axis(x, i, 1))
    if jitted:  # a replayed step checks the indices of each call
        gather, take = jg.jit(gather), jg.jit(take)
        gather(x, jg.tensor([[0], [0]]))
        take(x, jg.tensor([[0], [0]]))
    ok = [[1], [0]]
    np.testing.assert_array_equal(gather(x, jg.tensor(ok)).numpy(), [[2.0], [3.0]])
    for bad in ([[-1], [0]], [[1], [2]]):
        with pytest.raises(RuntimeError, match="out of bounds for dimension 1 with size 2"):
            torch.gather(torch.tensor(x.numpy()), 1, torch.tensor(bad))
        with pytest.raises(IndexError, match=r"^gather: index .* out of bounds for dimension 1"):
            gather(x, jg.tensor(bad))
    np.testing.assert_array_equal(take(x, jg.tensor([[-1], [0]])).numpy(), [[2.0], [3.0]])
    with pytest.raises(IndexError, match=r"^take_along_axis: index 2 is out of bounds"):
        take(x, jg.tensor([[1], [2]]))


def test_gather_errors_name_gather():
    x = jg.tensor([[1.0, 2.0]])
    with pytest.raises(IndexError, match=r"^gather: index 3 is out of bounds for dimension 0"):
        jg.gather(x, 0, jg.tensor([[3]]))


# -- split ---------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
    st.integers(0, 2),
    st.one_of(st.integers(1, 6), st.lists(st.integers(-7, 8), max_size=4)),
)
def test_split_matches_numpy(shape, axis, how):
    axis %= len(shape)
    a = np.arange(float(np.prod(shape))).reshape(shape)
    if isinstance(how, int) and shape[axis] % how:
        with pytest.raises(ValueError, match="does not divide"):
            jg.split(jg.tensor(a), how, axis)
        return
    pieces = jg.split(jg.tensor(a), how, axis)
    expected = np.split(a, how, axis)
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected, strict=True):
        assert p.shape == e.shape
        np.testing.assert_array_equal(p.numpy(), e)


def test_split_takes_arrays_and_tensors():
    a = np.arange(8.0)
    for how in (np.array([2, 5]), jg.tensor([2, 5]), np.array(4), jg.tensor(4)):
        expected = np.split(a, np.asarray(how))
        got = jg.split(jg.tensor(a), how)
        assert [p.tolist() for p in got] == [e.tolist() for e in expected]


def test_split_gradients_and_errors():
    assert gradcheck(lambda t: jg.split(t.T, [1, 3], axis=1), leaf((5, 3)))
    assert gradcheck(lambda t: jg.split(t[:, ::2], 2), leaf((4, 5)))
    with pytest.raises(ValueError, match="axis 0 of size 5 does not divide into 2"):
        jg.split(jg.zeros(5), 2)
    with pytest.raises(ValueError, match="must be positive"):
        jg.split(jg.zeros(4), 0)
    with pytest.raises(ValueError, match="0-d"):
        jg.split(jg.tensor(1.0), 1)
    with pytest.raises(TypeError, match="sequence of integers"):
        jg.split(jg.zeros(4), [1.5])


# -- pad -----------------------------------------------------------------------------------------

MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@st.composite
def pad_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), max_size=3)))
    form = draw(st.sampled_from(["int", "pair", "per-axis", "dict"]))
    width = st.integers(0, 6)
    if form == "int":
        widths = draw(width)
    elif form == "pair":
        widths = (draw(width), draw(width))
    elif form == "per-axis" and shape:  # numpy refuses () for a 0-d array
        widths = tuple((draw(width), draw(width)) for _ in shape)
    else:
        widths = {draw(st.integers(0, 5)) % max(len(shape), 1): draw(width)} if shape else 1
    return shape, widths, draw(st.sampled_from(MODES))


@settings(max_examples=120, deadline=None)
@given(pad_case(), st.sampled_from([0, -2.5, ((1, 2),)]))
def test_pad_matches_numpy(case, values):
    shape, widths, mode = case
    a = np.random.default_rng(0).standard_normal(shape)
    x = jg.tensor(a, requires_grad=True)
    kwargs = {"constant_values": values} if mode == "constant" else {}
    y = jg.pad(x, widths, mode=mode, **kwargs)
    expected = np.pad(a, widths, mode=mode, **kwargs)
    np.testing.assert_array_equal(y.numpy(), expected)
    w = np.random.default_rng(1).standard_normal(expected.shape)
    (y * jg.tensor(w)).sum().backward()
    reference = np.zeros(a.size)
    positions = np.arange(a.size).reshape(shape)
    if mode == "constant":
        source = np.pad(positions, widths, constant_values=-1)
        np.add.at(reference, source[source >= 0], w[source >= 0])
    else:
        np.add.at(reference, np.pad(positions, widths, mode=mode), w)
    np.testing.assert_allclose(x.grad.numpy(), reference.reshape(shape), atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_pad_gradcheck(mode):
    assert gradcheck(lambda t: jg.pad(t.T[::2], ((1, 3), (2, 0)), mode=mode), leaf((3, 5)))
    assert gradcheck(lambda t: jg.pad(t.reshape(1, 2).expand(3, 2), 2, mode=mode), leaf((2,)))


def test_pad_second_order():
    def first_grad(t):
        (g,) = jg.autograd.grad((jg.pad(t, 1) ** 3).sum(), [t], create_graph=True)
        return g

    assert gradcheck(first_grad, leaf((2, 3)))


def test_pad_keeps_dtype_and_errors():
    y = jg.pad(jg.tensor([1, 2], dtype=jg.int8), 1, constant_values=7)
    assert y.dtype is jg.int8 and y.tolist() == [7, 1, 2, 7]
    x = jg.zeros((2, 3))
    with pytest.raises(ValueError, match="cannot be negative"):
        jg.pad(x, -1)
    with pytest.raises(TypeError, match="must be integers"):
        jg.pad(x, 1.5)
    with pytest.raises(ValueError, match=r"pad_width of shape \(3, 2\) does not fit a tensor of 2"):
        jg.pad(x, ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(RuntimeError, match="a function as mode gives no gradient"):
        jg.pad(jg.ones(3, requires_grad=True), 1, mode=lambda vector, widths, axis, kwargs: None)
    with pytest.raises(ValueError, match="unknown mode 'bogus'"):
        jg.pad(x, 1, mode="bogus")
    with pytest.raises(ValueError, match="empty axis 0"):
        jg.pad(jg.zeros((0, 3)), 1, mode="reflect")


def test_recorded_advanced_assignment_routes_gradients_to_the_last_write():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = jg.tensor([10.0, 20.0, 30.0], requires_grad=True)
    y = x * 1
    y[[0, 2, 0]] = v  # index 0 is written twice: the last write (30) wins
    assert y.tolist() == [30.0, 2.0, 20.0, 4.0]
    (y * jg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 4.0]
    assert v.grad.tolist() == [0.0, 3.0, 1.0]
    mask = jg.tensor([True, False, True, False])

    def assign(base, value):
        out = base * 1
        out[mask] = value * 2
        return out

    assert jg.autograd.gradcheck(
        assign, jg.tensor(np.arange(4.0), requires_grad=True), jg.tensor(0.5, requires_grad=True)
    )


def test_jitted_advanced_assignment_routes_gradients_by_each_calls_indices():
    weights = jg.arange(1.0, 6.0)

    def step(base, index, value):
        out = base * 1
        out[index] = value
        (out * weights).sum().backward()
        return base.grad, value.grad

    jitted = jg.jit(step)
    for index in ([0, 1], [2, 3], [4, 4], [1, -4], [0, 2]):
        grads = []
        for fn in (step, jitted):
            base = jg.zeros(5, requires_grad=True)
            value = jg.tensor([1.0, 2.0], requires_grad=True)
            grads.append([g.tolist() for g in fn(base, jg.tensor(index), value)])
        assert grads[1] == grads[0], index


def test_jitted_advanced_assignment_from_an_overlapping_view_reads_each_calls_values():
    def step(x, index):
        x[index] = x[2:4]  # the source views the target: staged through a copy
        return x

    jitted = jg.jit(step)
    for scale in (1.0, 2.0, 3.0):
        expected = step(jg.arange(5.0) * scale, jg.tensor([0, 1])).tolist()
        assert jitted(jg.arange(5.0) * scale, jg.tensor([0, 1])).tolist() == expected


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_multi_index_match_numpy(order):
    flat = np.array([0, 5, 11, 7])
    got = jg.unravel_index(jg.tensor(flat), (3, 4), order)
    expected = np.unravel_index(flat, (3, 4), order)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype.numpy == e.dtype
        np.testing.assert_array_equal(g.numpy(), e)
    back = jg.ravel_multi_index(got, (3, 4), order=order)
    np.testing.assert_array_equal(back.numpy(), flat)
    assert [int(c) for c in np.unravel_index(jg.tensor(7), (3, 4))] == [1, 3]
    with pytest.raises(ValueError, match="invalid entry"):
        jg.ravel_multi_index((jg.tensor([3]), jg.tensor([0])), (3, 4))


def test_pad_with_a_function_as_mode_is_numpys():
    def pad_with(vector, pad_width, iaxis, kwargs):
        vector[: pad_width[0]] = kwargs.get("padder", 10)
        vector[vector.size - pad_width[1] :] = -iaxis

    a = np.arange(6.0).reshape(2, 3)
    for kwargs in ({}, {"padder": 7}):
        got = jg.pad(jg.tensor(a), ((1, 2), (2, 1)), pad_with, **kwargs)
        expected = np.pad(a, ((1, 2), (2, 1)), pad_with, **kwargs)
        assert got.dtype.numpy == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)
