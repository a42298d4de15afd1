"""numpy's shape functions: numpy's values, dtypes and shapes, views where numpy's are
views, and gradients."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.autograd import gradcheck


def leaf(shape, seed=0):
    return jg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def as_arrays(result):
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def check(got, want):
    """jitgrad's result (a tensor, or a tuple/list of them) against numpy's."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), (type(got), type(want))
    got_list = list(got) if isinstance(got, (tuple, list)) else [got]
    want_list = as_arrays(want)
    assert len(got_list) == len(want_list)
    for g, w in zip(got_list, want_list, strict=True):
        assert isinstance(g, jg.Tensor), type(g)
        assert g.dtype.numpy == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_array_equal(g.numpy(), w)


def shares(got, base) -> bool:
    return np.shares_memory(got.numpy(), base.numpy())


A = np.arange(24).reshape(2, 3, 4)
B = np.arange(6.0).reshape(2, 3)
V = np.array([3, 1, 2], dtype=np.int8)

# name, arguments (arrays become tensors), keyword arguments
CASES = [
    ("hstack", ([V, V],), {}),
    ("hstack", ([B, B],), {}),
    ("hstack", ([B, A[0, :2].astype(np.float32)],), {}),
    ("hstack", ([V, V],), {"dtype": np.float32}),
    ("vstack", ([V, V],), {}),
    ("vstack", ([B, B[:1]],), {}),
    ("vstack", ((np.float64(1.5), np.array([2.0])),), {}),
    ("dstack", ([V, V],), {}),
    ("dstack", ([B, B],), {}),
    ("dstack", ([A, A],), {}),
    ("column_stack", ([V, V],), {}),
    ("column_stack", ([B, B[:, :1]],), {}),
    ("concat", ([B, B],), {"axis": 1}),
    ("concat", ([B, A[0]],), {"axis": None}),
    ("atleast_1d", (np.float32(2.0),), {}),
    ("atleast_1d", (V, B), {}),
    ("atleast_2d", (V,), {}),
    ("atleast_2d", (np.int16(3), A), {}),
    ("atleast_3d", (np.float64(1.0),), {}),
    ("atleast_3d", (V, B, A), {}),
    ("unstack", (B,), {}),
    ("broadcast_arrays", (B[:, :1], V, np.float32(2.0)), {}),
    ("unstack", (A,), {"axis": -1}),
    ("append", (B, A[0]), {}),
    ("append", (B, B), {"axis": 0}),
    ("append", (V, 2.5), {}),
    ("array_split", (np.arange(7), 3), {}),
    ("array_split", (A, [1, 3, 10]), {"axis": 2}),
    ("array_split", (A, 5), {"axis": 1}),
    ("split", (A, [-1]), {"axis": 2}),
    ("split", (A, 2), {"axis": 0}),
    ("hsplit", (A, 3), {}),
    ("hsplit", (np.arange(6), [2, 3]), {}),
    ("vsplit", (B, 2), {}),
    ("dsplit", (A, [1, 2]), {}),
    ("moveaxis", (A, 0, -1), {}),
    ("moveaxis", (A, [0, 1], [2, 0]), {}),
    ("swapaxes", (A, 0, 2), {}),
    ("permute_dims", (A, (2, 0, 1)), {}),
    ("rollaxis", (A, 2), {}),
    ("rollaxis", (A, 0, 3), {}),
    ("rollaxis", (A, 1, -1), {}),
    ("ravel", (A,), {}),
    ("ravel", (A,), {"order": "F"}),
    ("squeeze", (A[:, :1, None],), {}),
    ("squeeze", (A[:, :1, None],), {"axis": (1, 2)}),
    ("expand_dims", (B,), {"axis": (0, -1)}),
    ("tile", (V, 2), {}),
    ("tile", (V, (2, 1, 2)), {}),
    ("tile", (A, (2, 1)), {}),
    ("tile", (B, 1), {}),
    ("tile", (B, (0, 2)), {}),
    ("repeat", (B, 2), {}),
    ("repeat", (B, [1, 0, 3]), {"axis": 1}),
    ("repeat", (A, 3), {"axis": -2}),
    ("roll", (np.arange(10), 3), {}),
    ("roll", (B, -4), {}),
    ("roll", (A, (1, -2, 7)), {"axis": (0, 2, 2)}),
    ("roll", (A, 2), {"axis": 1}),
    ("roll", (A, 0), {"axis": 1}),
    ("rot90", (B,), {}),
    ("rot90", (A,), {"k": 2, "axes": (1, 2)}),
    ("rot90", (A,), {"k": -1, "axes": (2, 0)}),
    ("rot90", (A,), {"k": 4}),
    ("flip", (A,), {"axis": (0, 2)}),
    ("fliplr", (B,), {}),
    ("flipud", (V,), {}),
    ("tril", (B,), {}),
    ("tril", (A,), {"k": -1}),
    ("tril", (V,), {}),
    ("triu", (A,), {"k": 1}),
    ("triu", (B.astype(bool),), {}),
    ("diag", (V,), {}),
    ("diag", (V,), {"k": -2}),
    ("diag", (B,), {"k": 1}),
    ("diag", (B,), {"k": -1}),
    ("diagflat", (B,), {}),
    ("diagflat", ([[1, 2], [3, 4]],), {"k": 1}),
    ("insert", (V, 1, 9), {}),
    ("insert", (B, [1, 1, 3], [7.0, 8.0, 9.0]), {"axis": 1}),
    ("insert", (B, 1, [[7], [8]]), {"axis": 1}),
    ("insert", (B, slice(0, 2), 5.5), {}),
    ("insert", (A, 0, 1.7), {"axis": 0}),
    ("delete", (V, 1), {}),
    ("delete", (A, [0, 2]), {"axis": 1}),
    ("delete", (A, slice(None, None, 2)), {"axis": 2}),
    ("delete", (B, np.array([True, False, True])), {"axis": 1}),
    ("resize", (V, (2, 4)), {}),
    ("resize", (B, 4), {}),
    ("resize", (np.zeros(0, np.int8), 3), {}),
    ("trim_zeros", (np.array([0, 0, 1, 0, 2, 0]),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 0, 2, 0]),), {"trim": "f"}),
    ("trim_zeros", (np.array([0.0, 0.0]),), {}),
    ("trim_zeros", (np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]),), {"axis": -1}),
    ("trim_zeros", (np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0]]),), {"trim": "B"}),
    ("copy", (B,), {}),
    ("copy", (A.transpose(1, 0, 2),), {"order": "K"}),
]


def _converted(value):
    if isinstance(value, np.ndarray):
        return jg.from_numpy(value)
    if isinstance(value, list) and any(isinstance(v, np.ndarray) for v in value):
        return [jg.from_numpy(v) for v in value]
    return value


@pytest.mark.parametrize(("name", "args", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(name, args, kwargs):
    want = getattr(np, name)(*args, **kwargs)
    got = getattr(jg, name)(*(_converted(a) for a in args), **kwargs)
    check(got, want)


VIEWS = [
    ("atleast_3d", (B,), {}),
    ("unstack", (A,), {"axis": 1}),
    ("array_split", (A, 3), {"axis": 2}),
    ("hsplit", (A, 3), {}),
    ("moveaxis", (A, 0, 1), {}),
    ("rollaxis", (A, 2), {}),
    ("ravel", (A,), {}),
    ("rot90", (A,), {}),
    ("rot90", (A,), {"k": 2}),
    ("fliplr", (B,), {}),
    ("flipud", (B,), {}),
    ("diag", (B,), {}),
    ("trim_zeros", (np.array([0, 1, 0]),), {}),
    ("permute_dims", (A, (1, 0, 2)), {}),
    ("broadcast_arrays", (B, V), {}),
]
COPIES = [
    ("tile", (B, 1), {}),
    ("roll", (B, 0), {}),
    ("ravel", (A.T,), {}),
    ("copy", (A,), {}),
    ("resize", (B, (2, 3)), {}),
    ("hstack", ([B],), {}),
    ("block", (B,), {}),
    ("repeat", (B, 1), {"axis": 0}),
    ("diagflat", (V,), {}),
    ("delete", (V, []), {}),
    ("append", (V, []), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), VIEWS + COPIES)
def test_views_share_memory_as_numpy(name, args, kwargs):
    want = getattr(np, name)(*args, **kwargs)
    t = jg.from_numpy(args[0]) if isinstance(args[0], np.ndarray) else _converted(args[0])
    got = getattr(jg, name)(t, *args[1:], **kwargs)
    base = args[0][0] if isinstance(args[0], list) else args[0]
    tb = t[0] if isinstance(t, list) else t
    for g, w in zip(
        got if isinstance(got, (list, tuple)) else [got],
        want if isinstance(want, (list, tuple)) else [want],
        strict=True,
    ):
        assert shares(g, tb) == np.shares_memory(w, base), name


def test_row_stack_warns_as_numpy():
    with pytest.warns(DeprecationWarning):
        got = jg.row_stack([jg.tensor([1, 2]), jg.tensor([3, 4])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(got, np.row_stack([np.array([1, 2]), np.array([3, 4])]))


@pytest.mark.parametrize(
    "nested",
    [
        lambda a, b, c: [[a, b], [c]],
        lambda a, b, c: [a[0], b[0], c[0]],
        lambda a, b, c: [[[a]], [[a]]],
        lambda a, b, c: a,
        lambda a, b, c: [[1, 2], [3, 4]],
    ],
)
def test_block(nested):
    a, b, c = np.ones((2, 2)), np.zeros((2, 1)), np.full((1, 3), 2.0)
    check(jg.block(nested(*map(jg.from_numpy, (a, b, c)))), np.block(nested(a, b, c)))


def test_bad_input_errors():
    x = jg.from_numpy(B)
    with pytest.raises(ValueError, match="does not divide into 4 equal sections"):
        jg.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="number of sections must be positive"):
        jg.array_split(x, 0)
    with pytest.raises(TypeError, match="integer or a sequence of integers"):
        jg.split(x, 1.5)
    with pytest.raises(ValueError, match="vsplit only works"):
        jg.vsplit(jg.arange(4), 2)
    with pytest.raises(ValueError, match="dsplit only works"):
        jg.dsplit(x, 2)
    with pytest.raises(ValueError, match="hsplit only works"):
        jg.hsplit(jg.tensor(1.0), 1)
    with pytest.raises(TypeError, match="sequence"):
        jg.hstack(t for t in (x, x))
    with pytest.raises(TypeError, match="under the rule 'same_kind'"):
        jg.vstack([x, x], dtype=jg.int64)
    with pytest.raises(ValueError, match="repeated axis in `source`"):
        jg.moveaxis(x, [0, 0], [0, 1])
    with pytest.raises(ValueError, match="same number of elements"):
        jg.moveaxis(x, [0, 1], [0])
    with pytest.raises(ValueError, match="'start' arg requires"):
        jg.rollaxis(x, 0, 4)
    with pytest.raises(ValueError, match="axes must be different"):
        jg.rot90(x, axes=(0, 0))
    with pytest.raises(ValueError, match="len\\(axes\\) must be 2"):
        jg.rot90(x, axes=(0,))
    with pytest.raises(ValueError, match=">= 2-d"):
        jg.fliplr(jg.arange(3))
    with pytest.raises(ValueError, match="1- or 2-d"):
        jg.diag(jg.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="cannot be empty"):
        jg.block([[x], []])
    with pytest.raises(ValueError, match="depths are mismatched"):
        jg.block([[x], x])
    with pytest.raises(TypeError, match="is a tuple"):
        jg.block((x, x))
    with pytest.raises(ValueError, match="must be non-negative"):
        jg.resize(x, (-1, 2))
    with pytest.raises(ValueError, match="unexpected character"):
        jg.trim_zeros(x, "x")
    with pytest.raises(ValueError, match="order must be one of"):
        jg.ravel(x, "Z")
    with pytest.raises(ValueError, match="at least one dimension"):
        jg.unstack(jg.tensor(1.0))


def test_pad_bad_mode_and_keywords():
    x = jg.zeros((2, 3))
    with pytest.raises(ValueError, match="unknown mode 'bogus'"):
        jg.pad(x, 1, mode="bogus")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jg.pad(x, 1, mode="edge", stat_length=2)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jg.pad(x, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="reflect_type must be 'even' or 'odd'"):
        jg.pad(x, 1, mode="reflect", reflect_type="both")
    with pytest.raises(ValueError, match="stat_length of 0"):
        jg.pad(x, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="empty axis 0"):
        jg.pad(jg.zeros((0, 3)), 1, mode="mean")


PAD_MODES = [
    {"mode": "constant", "constant_values": ((1, 2), (3, 4))},
    {"mode": "edge"},
    {"mode": "wrap"},
    {"mode": "reflect"},
    {"mode": "symmetric"},
    {"mode": "reflect", "reflect_type": "odd"},
    {"mode": "symmetric", "reflect_type": "odd"},
    {"mode": "linear_ramp"},
    {"mode": "linear_ramp", "end_values": ((1, 2), (-3, 4))},
    {"mode": "mean"},
    {"mode": "mean", "stat_length": 2},
    {"mode": "median"},
    {"mode": "median", "stat_length": (2, 3)},
    {"mode": "maximum"},
    {"mode": "minimum", "stat_length": 1},
]


@settings(max_examples=25, deadline=None)
@given(
    mode=st.sampled_from(PAD_MODES),
    shape=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    widths=st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3), st.integers(0, 3)),
    integer=st.booleans(),
)
def test_pad_matches_numpy(mode, shape, widths, integer):
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(-9, 9, shape) if integer else rng.standard_normal(shape)
    pad_width = ((widths[0], widths[1]), (widths[2], widths[3]))
    check(jg.pad(jg.from_numpy(a), pad_width, **mode), np.pad(a, pad_width, **mode))


@pytest.mark.parametrize("mode", PAD_MODES, ids=lambda m: "-".join(map(str, m.values()))[:30])
def test_pad_gradcheck(mode):
    assert gradcheck(lambda t: jg.pad(t.T, ((4, 1), (2, 5)), **mode), leaf((3, 2)))


def test_pad_second_order_of_a_linear_mode():
    def first(t):
        y = jg.pad(t, 2, mode="reflect", reflect_type="odd")
        (g,) = jg.autograd.grad((y**3).sum(), [t], create_graph=True)
        return g

    assert gradcheck(first, leaf((2, 3)))


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: jg.hstack([t, t * 2]),
        lambda t: jg.vstack([t[0], t]),
        lambda t: jg.dstack([t, t**2]),
        lambda t: jg.column_stack([t[:, 0], t]),
        lambda t: jg.block([[t, t], [t * 3, t]]),
        lambda t: jg.stack(jg.unstack(t, axis=1), axis=0),
        lambda t: jg.append(t, t[0]),
        lambda t: jg.concat(jg.array_split(t, 2, axis=1)[::-1], axis=1),
        lambda t: jg.moveaxis(t, 0, 1) * jg.arange(2.0),
        lambda t: jg.rollaxis(t[None], 2) * jg.arange(1.0, 4.0)[:, None, None],
        lambda t: jg.ravel(t, "F") * jg.arange(6.0),
        lambda t: jg.tile(t, (2, 1, 2)),
        lambda t: jg.repeat(t, [3, 0, 1], axis=1),
        lambda t: jg.repeat(t, 2),
        lambda t: jg.roll(t, (1, -5), axis=(0, 1)) * jg.arange(3.0),
        lambda t: jg.roll(t, 4),
        lambda t: jg.rot90(t, 3) * jg.arange(2.0),
        lambda t: jg.fliplr(t).cumsum(1),
        lambda t: jg.flipud(t).cumsum(0),
        lambda t: jg.tril(t, 1) + jg.triu(t * t, -1),
        lambda t: jg.diag(t[0], 1) + jg.diag(t[1], -1).T,
        lambda t: jg.diag(t, 1) ** 2,
        lambda t: jg.diagflat(t),
        lambda t: jg.insert(t, [0, 2, 2], t[1], axis=1),
        lambda t: jg.insert(t, 3, 5.0),
        lambda t: jg.delete(t, 1, axis=1) ** 2,
        lambda t: jg.resize(t, (4, 5)),
        lambda t: jg.trim_zeros(jg.pad(t, 1)),
        lambda t: jg.copy(t, order="F") * jg.arange(3.0),
    ],
)
def test_gradcheck(fn):
    assert gradcheck(fn, leaf((2, 3)))


def test_gradients_against_torch():
    a = np.random.default_rng(1).standard_normal((3, 4))
    x, xt = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = np.random.default_rng(2).standard_normal((4, 6))
    y = jg.tile(jg.roll(jg.rot90(x), 2, axis=0), (1, 2)) * jg.tensor(w)
    yt = torch.tile(torch.roll(torch.rot90(xt), 2, dims=0), (1, 2)) * torch.tensor(w)
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    reps=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    shift=st.integers(-7, 7),
    k=st.integers(-3, 3),
)
def test_shapes_vary(shape, reps, shift, k):
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    t = jg.from_numpy(a)
    check(jg.tile(t, reps), np.tile(a, reps))
    check(jg.roll(t, shift, axis=-1), np.roll(a, shift, axis=-1))
    check(jg.roll(t, shift), np.roll(a, shift))
    check(jg.repeat(t, reps[0], axis=0), np.repeat(a, reps[0], axis=0))
    check(jg.array_split(t, len(reps) + 1, axis=-1), np.array_split(a, len(reps) + 1, axis=-1))
    check(jg.atleast_3d(t), np.atleast_3d(a))
    check(jg.ravel(t.T, "K"), np.ravel(a.T, "K"))
    check(jg.ravel(t[..., ::-1], "A"), np.ravel(a[..., ::-1], "A"))
    check(jg.tril(t, k), np.tril(a, k))
    check(jg.triu(t, k), np.triu(a, k))
    if len(shape) >= 2:
        check(jg.rot90(t, k, axes=(-1, 0)), np.rot90(a, k, axes=(-1, 0)))
    check(jg.resize(t, reps), np.resize(a, reps))


LAYOUTS = [
    lambda a: a,
    lambda a: a[:, ::-1],
    lambda a: a.transpose(2, 0, 1)[::-1],
    lambda a: a[::2, :, 1:3].T,
    lambda a: a.transpose(1, 2, 0)[:, ::-1],
]


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("view", LAYOUTS)
def test_ravel_and_copy_orders(view, order):
    a = np.arange(24.0).reshape(2, 3, 4)
    v, t = view(a), view(jg.from_numpy(a))
    got, want = jg.ravel(t, order), np.ravel(v, order)
    check(got, want)
    assert shares(got, t) == np.shares_memory(want, a)
    got, want = jg.copy(t, order), np.copy(v, order)
    check(got, want)
    assert got.stride() == tuple(s // want.itemsize for s in want.strides)


def test_numpy_functions_run_as_jitgrad_ops():
    x = leaf((2, 3))
    assert gradcheck(lambda t: np.hstack([t, t * 2], dtype=np.float64), x)
    assert gradcheck(lambda t: np.block([[t], [t]]), x)
    assert gradcheck(lambda t: np.tile(np.roll(t, 1, axis=1), (2, 1)), x)
    assert gradcheck(lambda t: np.insert(np.delete(t, 0, axis=1), 1, t[:, 0], axis=1), x)
    assert gradcheck(lambda t: np.vander(np.ravel(np.tril(t), order="F")), x)
    assert gradcheck(lambda t: np.trim_zeros(np.resize(t, 7)) * np.copy(t, order="F")[0, 0], x)
    assert type(np.zeros_like(x, shape=(2,))) is jg.Tensor
    assert type(np.array_split(x, 2, axis=1)[0]) is jg.Tensor
    assert all(type(t) is jg.Tensor for t in np.atleast_2d(x[0], x))
    assert gradcheck(lambda t: np.pad(t, 2, mode="reflect", reflect_type="odd"), x)
