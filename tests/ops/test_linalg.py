"""matmul, dot, tensordot, outer, trace and einsum against numpy and finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad.autograd import grad, gradcheck

DTYPES = [jg.float32, jg.float64]
RTOL = {jg.float32: 1e-5, jg.float64: 1e-12}


def data(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def leaf(shape, seed=0):
    return jg.tensor(data(shape, seed), requires_grad=True)


# Non-contiguous inputs: each kind is a leaf of some shape plus the view that turns it
# into an operand of the wanted shape, built inside the checked function.
def transposed(shape, seed):
    return leaf(shape[::-1], seed), lambda t: t.permute(list(range(t.ndim - 1, -1, -1)))


def stepped(shape, seed):
    if not shape:
        return leaf(shape, seed), lambda t: t
    return leaf(shape[:-1] + (2 * shape[-1],), seed), lambda t: t[..., ::2]


def expanded(shape, seed):
    if not shape:
        return leaf(shape, seed), lambda t: t
    return leaf((1,) + shape[1:], seed), lambda t: t.expand(shape)


LAYOUTS = [transposed, stepped, expanded]


def operands(shapes, rotate=0):
    """Leaves and views for ``shapes``, cycling through the layouts."""
    made = [LAYOUTS[(i + rotate) % 3](s, seed=i + 1) for i, s in enumerate(shapes)]
    return [m[0] for m in made], [m[1] for m in made]


def check_grad(fn, shapes, rotate=0):
    leaves, views = operands(shapes, rotate)
    assert gradcheck(lambda *xs: fn(*(v(x) for v, x in zip(views, xs, strict=True))), *leaves)


# -- matmul ----------------------------------------------------------------------------------


@st.composite
def matmul_shapes(draw):
    batch = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3)
    )
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    a = batch.input_shapes[0] + (n, k)
    b = batch.input_shapes[1] + (k, m)
    if draw(st.booleans()):
        a = (k,)
    elif draw(st.booleans()):
        b = (k,)
    return a, b


@settings(max_examples=40, deadline=None)
@given(shapes=matmul_shapes(), dtype=st.sampled_from(DTYPES))
def test_matmul_matches_numpy(shapes, dtype):
    a, b = data(shapes[0], 1, dtype.numpy), data(shapes[1], 2, dtype.numpy)
    got = jg.from_numpy(a) @ jg.from_numpy(b)
    expected = np.matmul(a, b)
    assert got.shape == expected.shape and got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("shapes", [((5, 3), (3,)), ((3,), (3, 2)), ((3,), (3,)), ((4, 3), (3, 2))])
@pytest.mark.parametrize(
    "dtypes", [(np.float64, np.float32), (np.int64, np.float32), (np.int8, np.int16)]
)
def test_products_of_mixed_dtypes_take_numpys_dtype(shapes, dtypes):
    a, b = (data(s, k, d) for k, (s, d) in enumerate(zip(shapes, dtypes)))
    got = jg.from_numpy(a) @ jg.from_numpy(b)
    expected = np.matmul(a, b)
    assert got.shape == expected.shape and got.dtype.numpy == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "shapes",
    [
        ((3, 4), (4, 2)),
        ((2, 3, 4), (4, 2)),
        ((1, 3, 4), (2, 4, 2)),
        ((4,), (2, 4, 3)),
        ((2, 3, 4), (4,)),
        ((4,), (4,)),
    ],
)
@pytest.mark.parametrize("rotate", [0, 1, 2])
def test_matmul_gradcheck(shapes, rotate):
    check_grad(jg.matmul, shapes, rotate)


@pytest.mark.parametrize("x_shape", [(5, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("rotate", [0, 1, 2])
def test_linear_matches_numpy_and_gradcheck(x_shape, bias, rotate):
    shapes = [x_shape, (4, 3)] + ([(4,)] if bias else [])
    arrays = [data(s, i + 1) for i, s in enumerate(shapes)]
    expected = arrays[0] @ arrays[1].T + (arrays[2] if bias else 0)
    np.testing.assert_allclose(
        jg.nn.functional.linear(*map(jg.tensor, arrays)).numpy(), expected, rtol=1e-12
    )
    check_grad(jg.nn.functional.linear, shapes, rotate)


def test_linear_second_derivatives_match_the_matmul_form():
    """create_graph takes linear's recorded backward (the first-order one is straight BLAS)."""

    def second(form):
        x, w = leaf((5, 3), 1), leaf((4, 3), 2)
        (gw,) = jg.autograd.grad(jg.tanh(form(x, w)).sum(), [w], create_graph=True)
        (gx,) = jg.autograd.grad((gw * gw).sum(), [x])
        return gw.numpy(), gx.numpy()

    for got, want in zip(second(jg.nn.functional.linear), second(lambda x, w: x @ w.T)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_linear_weight_gradient_comes_out_in_the_weights_layout():
    x, w, b = jg.tensor(data((5, 3))), leaf((4, 3), 1), leaf((4,), 2)
    jg.nn.functional.linear(x, w, b).sum().backward()
    assert w.grad.is_contiguous() and w.grad.shape == (4, 3)
    np.testing.assert_allclose(w.grad.numpy(), np.ones((5, 4)).T @ x.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 5.0))


@pytest.mark.parametrize(
    "x_shape, w_shape",
    [((2, 5, 3), (0, 3)), ((2, 5, 0), (4, 0)), ((2, 0), (4, 0)), ((0, 3), (4, 3))],
)
@pytest.mark.parametrize("create_graph", [False, True])
def test_linear_gradients_with_no_features(x_shape, w_shape, create_graph):
    # With 0 input or output features, the weight's gradient flattened x and gy with
    # reshape(-1, 0), which has no -1 to infer: "cannot reshape 0 elements" from inside.
    x, w = leaf(x_shape, 1), leaf(w_shape, 2)
    gx, gw = jg.autograd.grad(
        jg.nn.functional.linear(x, w).sum(), [x, w], create_graph=create_graph
    )
    np.testing.assert_array_equal(gx.numpy(), np.ones(x_shape[:-1] + (w_shape[0],)) @ w.numpy())
    rows = x.numpy().reshape(int(np.prod(x_shape[:-1])), x_shape[-1])
    np.testing.assert_array_equal(gw.numpy(), np.ones((w_shape[0], rows.shape[0])) @ rows)


@pytest.mark.parametrize(
    "args, message",
    [
        (((2, 3), (4, 2)), "last dimension must be 2"),
        (((2, 3), (3,)), "must be 2-d"),
        (((2, 3), (4, 3), (3,)), r"bias of shape \(3,\) should have shape \(4,\)"),
    ],
)
def test_linear_rejects_mismatched_shapes(args, message):
    with pytest.raises(ValueError, match=message):
        jg.nn.functional.linear(*(jg.zeros(s) for s in args))


def test_matmul_second_order():
    a, b = leaf((3, 4), 1), leaf((4, 2), 2)
    # d/dA sum((AB)^2) = 2 (AB) B^T; its gradient is checked by finite differences too.
    (ga,) = grad(((a @ b) ** 2).sum(), [a], create_graph=True)
    np.testing.assert_allclose(ga.numpy(), 2 * (a.numpy() @ b.numpy()) @ b.numpy().T)
    (gb,) = grad(ga.sum(), [b])
    ones = np.ones((3, 4))
    expected = 2 * (a.numpy().T @ ones @ b.numpy() + ones.T @ a.numpy() @ b.numpy())
    np.testing.assert_allclose(gb.numpy(), expected, rtol=1e-12)
    assert gradcheck(lambda a, b: grad(((a.T.T @ b) ** 2).sum(), [a], create_graph=True)[0], a, b)


@pytest.mark.parametrize(
    "op", [jg.matmul, jg.dot, jg.outer, lambda a, b: jg.einsum("ij,jk->ik", a, b)]
)
def test_mixed_dtype_gradients_have_each_input_dtype(op):
    # As PyTorch and jitgrad's elementwise ops: .grad has its leaf's dtype, whatever the
    # wider dtype the op computed in.
    a = jg.ones((2, 3), dtype=jg.float32, requires_grad=True)
    b = jg.ones((3, 2), dtype=jg.float64, requires_grad=True)
    if op is jg.outer:
        a, b = jg.ones(2, dtype=jg.float32, requires_grad=True), b[0].detach().requires_grad_()
    op(a, b).sum().backward()
    assert (a.grad.dtype, b.grad.dtype) == (jg.float32, jg.float64)


def test_matmul_errors():
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 2\)"):
        jg.ones((2, 3)) @ jg.ones((4, 2))
    with pytest.raises(ValueError, match="scalars"):
        jg.matmul(jg.ones(()), jg.ones(3))


# -- dot, tensordot, outer, trace ------------------------------------------------------------

DOT_SHAPES = [
    ((), (3,)),
    ((2, 3), ()),
    ((3,), (3,)),
    ((2, 3), (3, 4)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (4, 3, 2)),
]


@pytest.mark.parametrize("shapes", DOT_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_matches_numpy(shapes, dtype):
    a, b = data(shapes[0], 1, dtype.numpy), data(shapes[1], 2, dtype.numpy)
    got = jg.dot(jg.from_numpy(a), jg.from_numpy(b))
    expected = np.dot(a, b)
    assert got.shape == np.shape(expected) and got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("shapes", DOT_SHAPES)
def test_dot_gradcheck(shapes):
    check_grad(jg.dot, shapes, rotate=len(shapes[0]))


TENSORDOT_CASES = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 4), 1),
    ((2, 3), (4,), 0),
    ((), (3,), 0),
    ((2, 3, 4), (4, 2, 3), ([0, 1], [1, 2])),
    ((3, 4), (4, 3), ([1, 0], [0, 1])),
    ((2, 3), (3, 2), (1, 0)),
    ((2, 3, 4), (4, 3), ([-1, 1], [0, -1])),
]


@pytest.mark.parametrize("sa, sb, axes", TENSORDOT_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensordot_matches_numpy(sa, sb, axes, dtype):
    a, b = data(sa, 1, dtype.numpy), data(sb, 2, dtype.numpy)
    got = jg.tensordot(jg.from_numpy(a), jg.from_numpy(b), axes)
    expected = np.tensordot(a, b, axes)
    assert got.shape == expected.shape and got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("sa, sb, axes", TENSORDOT_CASES)
def test_tensordot_gradcheck(sa, sb, axes):
    check_grad(lambda a, b: jg.tensordot(a, b, axes), [sa, sb], rotate=len(sa))


def test_tensordot_and_dot_errors():
    a, b = jg.ones((2, 3)), jg.ones((4, 5))
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4, 5\).*a.shape\[1\] = 3"):
        jg.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="axes=3"):
        jg.tensordot(a, b, 3)
    with pytest.raises(ValueError, match="differ in length"):
        jg.tensordot(a, b, ([0, 1], [0]))
    with pytest.raises(ValueError, match="repeated axis"):
        jg.tensordot(jg.ones((2, 2)), jg.ones((2, 2)), ([0, 0], [0, 1]))
    with pytest.raises(ValueError, match=r"dot: shapes \(2, 3\) and \(4, 5\)"):
        jg.dot(a, b)
    with pytest.raises(ValueError, match=r"dot: shapes \(2, 3\) and \(2, 4, 5\)"):
        jg.dot(a, jg.ones((2, 4, 5)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_outer_matches_numpy_and_gradcheck(dtype):
    a, b = data((2, 3), 1, dtype.numpy), data((4,), 2, dtype.numpy)
    got = jg.outer(jg.from_numpy(a), jg.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), np.outer(a, b), rtol=RTOL[dtype])
    check_grad(jg.outer, [(2, 3), (4,)])


TRACE_CASES = [
    ((3, 3), 0, 0, 1),
    ((3, 4), 1, 0, 1),
    ((3, 4), -2, 0, 1),
    ((2, 3, 4), 0, 1, 2),
    ((2, 3, 4), 1, 2, 0),
    ((3, 3), 5, 0, 1),
    ((2, 3, 4), -1, -1, -3),
]


@pytest.mark.parametrize("shape, offset, axis1, axis2", TRACE_CASES)
def test_trace_matches_numpy_and_gradcheck(shape, offset, axis1, axis2):
    a = data(shape, 3)
    got = jg.trace(jg.from_numpy(a), offset, axis1, axis2)
    np.testing.assert_allclose(got.numpy(), np.trace(a, offset, axis1, axis2), rtol=1e-12)
    check_grad(lambda x: jg.trace(x, offset, axis1, axis2), [shape])
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        jg.trace(jg.ones(3))


# -- einsum ----------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->i", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
    ("...ij,jk->...ik", [(2, 3), (3, 2)]),
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij,jj->i", [(2, 3), (3, 3)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),  # a labelled dim of size 1 broadcasts, as numpy
    ("ij,kl->", [(2, 3), (2, 2)]),  # letters summed inside one operand
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 2, 3), (1, 2, 3, 3)]),
    ("ijk,ikj->", [(2, 3, 3), (2, 3, 3)]),
    # implicit output: letters seen once, alphabetical (upper case first), '...' first
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ba", [(2, 3)]),
    ("bAa", [(2, 3, 2)]),
    ("ii", [(3, 3)]),
    ("i,i", [(3,), (3,)]),
    ("...j,j", [(2, 3), (3,)]),
    ("i...->...i", [(2, 3)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum_matches_numpy(subscripts, shapes, dtype):
    arrays = [data(s, i, dtype.numpy) for i, s in enumerate(shapes)]
    got = jg.einsum(subscripts, *(jg.from_numpy(a) for a in arrays))
    expected = np.einsum(subscripts, *arrays)
    assert got.shape == expected.shape and got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=RTOL[dtype], atol=1e-6)


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_gradcheck(subscripts, shapes):
    check_grad(lambda *xs: jg.einsum(subscripts, *xs), shapes, rotate=len(subscripts))


def test_einsum_same_tensor_twice():
    x = leaf((3, 3), 4)
    assert gradcheck(lambda x: jg.einsum("ij,jk->ik", x, x.T), x)
    assert gradcheck(lambda x: jg.einsum("ii,i->i", x, x[0]), x)


@pytest.mark.parametrize(
    "subscripts, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 2)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("ii,ij->j", [(3, 3), (3, 2)]),
        ("i,j->ij", [(2,), (3,)]),
    ],
)
def test_einsum_second_order(subscripts, shapes):
    """The gradient's own gradient, against finite differences of the gradient."""

    def first_grad(a, b):
        y = jg.einsum(subscripts, a, b)
        return grad((y * y).sum(), [a], create_graph=True)[0]

    assert gradcheck(first_grad, leaf(shapes[0], 1), leaf(shapes[1], 2))


@settings(max_examples=30, deadline=None)
@given(
    batch=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    n=st.integers(1, 3),
    k=st.integers(1, 3),
    m=st.integers(1, 3),
    dtype=st.sampled_from(DTYPES),
)
def test_einsum_broadcast_batch_matches_numpy(batch, n, k, m, dtype):
    a = data(batch.input_shapes[0] + (n, k), 1, dtype.numpy)
    b = data(batch.input_shapes[1] + (k, m), 2, dtype.numpy)
    got = jg.einsum("...ij,...jk->...ik", jg.from_numpy(a), jg.from_numpy(b))
    np.testing.assert_allclose(
        got.numpy(), np.einsum("...ij,...jk->...ik", a, b), rtol=RTOL[dtype], atol=1e-6
    )
    np.testing.assert_allclose(got.numpy(), np.matmul(a, b), rtol=RTOL[dtype], atol=1e-6)


def test_einsum_result_does_not_alias_its_input():
    x = jg.from_numpy(data((3, 3)))
    d = jg.einsum("ii->i", x)
    d.fill_(0.0)
    assert np.all(np.diag(x.numpy()) != 0)
    # a pure transpose is a view, as numpy's einsum returns one
    assert jg.einsum("ij->ji", x).data_ptr() == x.data_ptr()


def test_einsum_mixed_dtypes_and_integers():
    a = jg.tensor(data((2, 3), 1, np.float32), requires_grad=True)
    b = jg.tensor(data((3,), 2), requires_grad=True)
    y = jg.einsum("ij,j->i", a, b)
    assert y.dtype is jg.float64
    y.sum().backward()
    assert a.grad.dtype is jg.float32 and b.grad.dtype is jg.float64
    i = np.arange(6).reshape(2, 3)
    assert jg.einsum("ij,ij->", jg.from_numpy(i), jg.from_numpy(i)).item() == 55


@pytest.mark.parametrize(
    "subscripts, shapes, match",
    [
        ("ij,jk->ik", [(2, 3)], "name 2 operand"),
        ("ij,jk->ik", [(2, 3), (4, 2)], "'j'.*sizes 3 and 4"),
        ("ij->i", [(2, 3, 4)], r"shape \(2, 3, 4\).*'ij' name 2"),
        ("ij->i", [(2,)], r"shape \(2,\)"),
        ("i1->i", [(2, 3)], "invalid subscripts"),
        ("ij->ii", [(2, 3)], "repeat"),
        ("ij->k", [(2, 3)], "'k'.*no operand"),
        ("ii->i", [(2, 3)], "different sizes"),
        ("...ij->ij", [(2, 3, 4)], r"no '\.\.\.'"),
        ("ij->i->j", [(2, 3)], "more than one"),
    ],
)
def test_einsum_errors_name_the_problem(subscripts, shapes, match):
    with pytest.raises(ValueError, match=match):
        jg.einsum(subscripts, *(jg.ones(s) for s in shapes))


def test_einsum_needs_subscripts_first():
    with pytest.raises(TypeError, match="subscripts string"):
        jg.einsum(jg.ones(3), "i->")
