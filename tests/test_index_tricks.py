"""numpy's index tricks over tensors: values, dtypes and shapes as numpy's, gradients
through r_/c_, put_along_axis, copyto and the appliers."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck


def same(got, want):
    assert isinstance(got, jg.Tensor), type(got)
    want = np.asarray(want)
    assert got.dtype.numpy == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_array_equal(got.numpy(), want)


A = np.arange(6.0).reshape(2, 3)
B = np.array([[7, 8, 9]], dtype=np.int32)


@pytest.mark.parametrize(
    "build",
    [
        lambda m, a, b: m.r_[1:4, 0, [5, 6]],
        lambda m, a, b: m.r_[0:1:5j, 2.5],
        lambda m, a, b: m.r_[a, b],
        lambda m, a, b: m.r_["1", a, a],
        lambda m, a, b: m.r_["0,2", [1, 2], [3, 4]],
        lambda m, a, b: m.r_["0,2,0", [1, 2], [3, 4]],
        lambda m, a, b: m.r_["-1,3,1", a, a],
        lambda m, a, b: m.r_[np.int8(1), [2, 3]],
        lambda m, a, b: m.r_[np.array([1, 2], np.int8), 3],
        lambda m, a, b: m.c_[[1, 2], [3, 4]],
        lambda m, a, b: m.c_[a, a],
        lambda m, a, b: m.c_[b, 0, 0, b],
        lambda m, a, b: m.r_[3],
    ],
)
def test_concatenators_match_numpy(build):
    ja, jb = jg.from_numpy(A), jg.from_numpy(B)
    same(build(jg, ja, jb), build(np, A, B))


def test_concatenator_directives_and_errors():
    same(jg.r_["r", [1, 2], [3]], np.atleast_2d(np.r_[[1, 2], [3]]))
    same(jg.r_["c", [1, 2], [3]], np.atleast_2d(np.r_[[1, 2], [3]]).T)
    with pytest.raises(ValueError, match="first entry"):
        jg.r_[[1], "0"]
    with pytest.raises(ValueError, match="directive"):
        jg.r_["a,b", [1]]
    with pytest.raises(OverflowError):  # as numpy: 300 is a weak scalar, the result int8
        jg.r_[jg.tensor([1, 2], dtype=jg.int8), 300]
    assert len(jg.r_) == 0 and repr(jg.c_) == "jitgrad.c_"


def test_concatenators_carry_gradients():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    y = jg.tensor([[3.0], [4.0]], requires_grad=True)
    assert gradcheck(lambda x: jg.r_[x, 0.0, x * 2], x)
    assert gradcheck(lambda x, y: jg.c_[x, y, x], x, y)


def test_index_builders_match_numpy():
    for got, want in [
        (jg.ix_([0, 1], [2, 4]), np.ix_([0, 1], [2, 4])),
        (jg.ix_(jg.tensor([True, False, True])), np.ix_(np.array([True, False, True]))),
        (jg.tril_indices(4, -1, 5), np.tril_indices(4, -1, 5)),
        (jg.triu_indices(3), np.triu_indices(3)),
        (jg.tril_indices_from(jg.zeros((3, 4)), 1), np.tril_indices_from(np.zeros((3, 4)), 1)),
        (jg.triu_indices_from(jg.zeros((3, 4)), -1), np.triu_indices_from(np.zeros((3, 4)), -1)),
        (jg.diag_indices(3, 3), np.diag_indices(3, 3)),
        (jg.diag_indices_from(jg.zeros((2, 2, 2))), np.diag_indices_from(np.zeros((2, 2, 2)))),
        (jg.mask_indices(3, jg.triu, 1), np.mask_indices(3, np.triu, 1)),
        (jg.mask_indices(3, jg.tril), np.mask_indices(3, np.tril)),
    ]:
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    with pytest.raises(ValueError):
        jg.tril_indices_from(jg.zeros(3))
    with pytest.raises(ValueError):
        jg.diag_indices_from(jg.zeros((2, 3)))


def test_iterators_match_numpy():
    t = jg.tensor([[1.5, 2.5], [3.5, 4.5]], dtype=jg.float32)
    got, want = list(jg.ndenumerate(t)), list(np.ndenumerate(t.numpy()))
    assert got == want and type(got[0][1]) is np.float32
    assert list(jg.ndindex(2, 3)) == list(np.ndindex(2, 3))
    assert jg.s_[1:2, ::2] == np.s_[1:2, ::2] and jg.index_exp[1] == (1,)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_put_along_axis_matches_numpy(axis):
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([[2, 0, 1, 1]]) if axis == 0 else np.array([[3], [0], [-1]])
    if axis is None:
        idx = np.array([0, 5, -1])
    values = -np.arange(1.0, 1 + np.broadcast_shapes(idx.shape, (1,))[0] * 0 + 1)
    want = a.copy()
    np.put_along_axis(want, idx, values, axis)
    t = jg.tensor(a)
    assert jg.put_along_axis(t, jg.tensor(idx), jg.tensor(values), axis) is None
    same(t, want)


def test_put_along_axis_gradient_and_errors():
    idx = jg.tensor([[1], [0]])

    def f(x, v):
        y = x * 1.0
        jg.put_along_axis(y, idx, v, axis=1)
        return y

    x = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = jg.tensor([[5.0], [6.0]], requires_grad=True)
    assert gradcheck(f, x, v)
    with pytest.raises(ValueError, match="same number of dimensions"):
        jg.put_along_axis(jg.zeros((2, 2)), jg.tensor([0]), 1.0, axis=1)
    with pytest.raises(ValueError, match="single dimension"):
        jg.put_along_axis(jg.zeros((2, 2)), idx, 1.0, axis=None)
    with pytest.raises(IndexError):
        jg.put_along_axis(jg.zeros((2, 2)), jg.tensor([[5], [0]]), 1.0, axis=1)


@pytest.mark.parametrize(
    ("dst_dtype", "src", "casting", "where"),
    [
        ("float64", np.array([1.0, 2.0, 3.0]), "same_kind", True),
        ("float32", np.array([1.0, 2.0, 3.0]), "same_kind", [True, False, True]),
        ("float32", 1.5, "same_kind", True),
        ("int64", 1.5, "same_kind", True),
        ("int8", np.array([1.0]), "same_kind", True),
        ("int8", np.array([300]), "same_kind", True),
        ("int8", np.array([300]), "safe", True),
        ("float64", np.array([1 + 1j]), "same_kind", True),
        ("float32", np.array([1.0, 2.0]), "same_kind", True),
        ("int32", np.array([7]), "unsafe", np.array([False, True, True])),
    ],
)
def test_copyto_matches_numpy(dst_dtype, src, casting, where):
    want = np.zeros(3, dst_dtype)
    t = jg.zeros(3, dtype=dst_dtype)
    try:
        np.copyto(want, src, casting=casting, where=where)
    except Exception as e:  # noqa: BLE001  the error type is what is compared
        builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
        with pytest.raises(builtin):
            jg.copyto(
                t,
                jg.tensor(src) if isinstance(src, np.ndarray) else src,
                casting=casting,
                where=where,
            )
        return
    jg.copyto(
        t,
        jg.tensor(src) if isinstance(src, np.ndarray) else src,
        casting=casting,
        where=jg.tensor(where) if isinstance(where, np.ndarray) else where,
    )
    same(t, want)


def test_copyto_gradient_and_arrays():
    mask = jg.tensor([True, False, True])

    def f(x, s):
        y = x * 1.0
        jg.copyto(y, s * 2.0, where=mask)
        return y

    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = jg.tensor([4.0], requires_grad=True)
    assert gradcheck(f, x, s)
    a = np.zeros(2)
    jg.copyto(a, jg.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(a, [1.0, 2.0])
    with pytest.raises(TypeError):
        jg.copyto([0, 0], 1)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_apply_along_axis_matches_numpy(axis):
    a = np.arange(24.0).reshape(2, 3, 4)
    for fn, jfn in [
        (lambda v: v.sum(), lambda v: v.sum()),
        (lambda v: v[::-1] * 2, lambda v: v[::-1] * 2),
        (lambda v: np.outer(v, v)[:2], lambda v: jg.outer(v, v)[:2]),
    ]:
        same(jg.apply_along_axis(jfn, axis, jg.tensor(a)), np.apply_along_axis(fn, axis, a))
    same(
        jg.apply_along_axis(lambda v, k: v[k], axis, jg.tensor(a), 1),
        np.apply_along_axis(lambda v, k: v[k], axis, a, 1),
    )


def test_apply_along_axis_gradient_and_errors():
    x = jg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert gradcheck(lambda x: jg.apply_along_axis(lambda v: (v * v).sum(), 1, x), x)
    with pytest.raises(ValueError, match="iteration dimensions are 0"):
        jg.apply_along_axis(lambda v: v, 1, jg.zeros((0, 3)))


def test_apply_over_axes_matches_numpy():
    a = np.arange(24.0).reshape(2, 3, 4)
    same(jg.apply_over_axes(jg.sum, jg.tensor(a), [0, 2]), np.apply_over_axes(np.sum, a, [0, 2]))
    same(
        jg.apply_over_axes(lambda x, ax: jg.max(x, ax, keepdims=True), jg.tensor(a), -1),
        np.apply_over_axes(lambda x, ax: np.max(x, ax, keepdims=True), a, -1),
    )
    with pytest.raises(ValueError, match="correct shape"):
        jg.apply_over_axes(lambda x, ax: x.sum(), jg.tensor(a), [0])
    x = jg.tensor(a[:1, :2, :2].copy(), requires_grad=True)
    assert gradcheck(lambda x: jg.apply_over_axes(jg.sum, x * x, [0, 1]), x)


def test_vectorize_matches_numpy():
    def fn(a, b):
        return a - b if a > b else a + b

    a = np.array([1, 2, 3, 4])
    same(jg.vectorize(fn)(jg.tensor(a), 2), np.vectorize(fn)(a, 2))
    same(
        jg.vectorize(fn, otypes=[jg.float32])(jg.tensor(a), 2),
        np.vectorize(fn, otypes=[np.float32])(a, 2),
    )
    q, r = jg.vectorize(divmod)(jg.tensor(a), 3)
    same(q, a // 3)
    same(r, a % 3)
    words = jg.vectorize(lambda n: "x" * n)(jg.tensor([1, 2]))
    assert isinstance(words, np.ndarray) and words.tolist() == ["x", "xx"]
    mean = jg.vectorize(lambda v: v.mean(), signature="(n)->()")
    same(mean(jg.tensor([[1.0, 3.0], [5.0, 9.0]])), np.array([2.0, 7.0]))

    @jg.vectorize
    def double(x):
        return 2 * x

    same(double(jg.tensor([1.0, 2.0])), np.array([2.0, 4.0]))
    assert jg.vectorize(fn, doc="about").__doc__ == "about"
    plus_one = jg.frompyfunc(lambda x: x + 1, 1, 1)(jg.tensor([1, 2]))
    assert plus_one.dtype == object and plus_one.tolist() == [2, 3]


def test_numpy_calls_on_tensors_run_these_functions():
    x = jg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = np.apply_along_axis(lambda v: (v * v).sum(), 1, x)
    assert isinstance(y, jg.Tensor) and y.requires_grad
    a = jg.zeros(3)
    np.copyto(a, jg.tensor([1.0, 2.0, 3.0]), where=jg.tensor([True, False, True]))
    assert a.tolist() == [1.0, 0.0, 3.0]
    rows, cols = np.ix_(jg.tensor([0, 1]), jg.tensor([2]))
    assert isinstance(rows, jg.Tensor) and cols.shape == (1, 1)
    assert np.shape(x) == (2, 3) and np.size(x, 1) == 3 and np.ndim(x) == 2
    assert np.array_repr(jg.tensor([1, 2])) == "array([1, 2])"
    assert np.i0(x).requires_grad and np.unwrap(x).requires_grad
    assert isinstance(np.fix(jg.tensor([1.5])), jg.Tensor)
    assert isinstance(np.real_if_close(jg.tensor([1 + 0j])), jg.Tensor)
