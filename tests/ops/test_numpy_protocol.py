"""numpy's functions on tensors (NEP 18): jitgrad's ops where jitgrad has them, numpy's
own result on the tensors' arrays otherwise."""

import numpy as np
import pytest

import jitgrad as jg

A = np.array([[0.5, -2.0, 3.0], [4.0, 1.5, -6.0]])
I8 = np.array([[100, 100, 100], [-7, 3, 2]], dtype=np.int8)

# numpy calls on ``a``, run on the array and on a tensor of it: the results must agree and
# the tensor's must be a tensor of numpy's dtype. ``a`` is A unless the call names I8.
AS_JITGRAD_OPS = [
    "np.sum(a)",
    "np.sum(a, 0)",
    "np.sum(a, axis=1, keepdims=True)",
    "np.sum(a, out=None)",
    "np.sum(a, (0, 1), np.float32)",
    "np.sum(I8)",
    "np.sum(I8, dtype=np.int8)",
    "np.mean(a)",
    "np.mean(a, axis=0, dtype=np.float32)",
    "np.mean(I8)",
    "np.prod(a, 1)",
    "np.prod(I8, dtype=np.int8)",
    "np.max(a)",
    "np.amax(a, 0)",
    "np.min(a, 1, keepdims=True)",
    "np.amin(I8)",
    "np.all(a)",
    "np.any(a > 3, axis=0)",
    "np.std(a)",
    "np.std(a, 0, ddof=1)",
    "np.var(a, correction=1)",
    "np.var(a, axis=1, dtype=np.float32)",
    "np.argmax(a)",
    "np.argmin(a, axis=1)",
    "np.argmax(a, 0, keepdims=True)",
    "np.cumsum(a)",
    "np.cumsum(I8, 1, dtype=np.int8)",
    "np.cumprod(a, axis=0)",
    "np.transpose(a)",
    "np.transpose(a, (1, 0))",
    "np.transpose(a, [1, 0])",
    "np.transpose(a[0], 0)",
    "np.reshape(a, (3, 2))",
    "np.reshape(a, -1, order='C')",
    "np.ravel(a)",
    "np.squeeze(a[None])",
    "np.expand_dims(a, (0, 2))",
    "np.swapaxes(a, 0, 1)",
    "np.moveaxis(a[None], 0, -1)",
    "np.moveaxis(a[None], [0, 1], [2, 0])",
    "np.flip(a)",
    "np.flip(a, 1)",
    "np.diagonal(a, 1)",
    "np.trace(a)",
    "np.broadcast_to(a, (2, 2, 3))",
    "np.concatenate([a, a], axis=1)",
    "np.concatenate((a, A))",
    "np.stack([a, a], -1)",
    "np.take_along_axis(a, np.argmax(A, 1, keepdims=True), 1)",
    "np.pad(a, 1)",
    "np.pad(a, ((0, 1), (2, 0)), constant_values=9)",
    "np.clip(a, -1, 2)",
    "np.clip(a, max=1.0)",
    "np.round(a)",
    "np.around(a / 7, 2)",
    "np.dot(a, A.T)",
    "np.outer(a, a)",
    "np.tensordot(a, a, ([1], [1]))",
    "np.where(a > 0, a, 0.0)",
    "np.sort(a)",
    "np.sort(a, axis=0, kind='stable')",
    "np.median(a)",
    "np.ptp(a, axis=1)",
    "np.cov(a)",
    "np.percentile(a, 30, axis=0)",
    "np.unique(a)",
    "np.linalg.norm(a)",
    "np.linalg.inv(a[:, :2])",
    "np.fft.rfft(a)",
]

# Functions jitgrad does not have: numpy's result on the tensor's array, as numpy gives it.
AS_NUMPY = ["np.size(a)", "np.shape(a)", "np.einsum('ij->j', a)", "np.array_equal(a, A)"]


def run(call, tensor):
    """``call`` on the array it names (A or I8), or on a tensor of it."""
    base = I8 if "I8" in call else A
    a = jg.tensor(base) if tensor else base
    return eval(call.replace("I8", "a"), {"np": np, "A": A, "a": a})


@pytest.mark.parametrize("call", AS_JITGRAD_OPS)
def test_numpy_functions_run_as_jitgrad_ops(call):
    expected, got = run(call, False), run(call, True)
    assert isinstance(got, jg.Tensor)
    assert got.dtype.numpy == np.asarray(expected).dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_numpy_split_gives_tensors():
    parts = np.split(jg.tensor(A), 3, axis=1)
    assert all(isinstance(p, jg.Tensor) for p in parts)
    for got, expected in zip(parts, np.split(A, 3, axis=1), strict=True):
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("call", ["np.where(a > 0)", "np.nonzero(a)", "np.unique(a, True)"])
def test_numpy_functions_of_several_results_give_tensors(call):
    expected, got = run(call, False), run(call, True)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert isinstance(g, jg.Tensor) and g.dtype.numpy == e.dtype
        np.testing.assert_array_equal(g.numpy(), e)


@pytest.mark.parametrize("call", AS_NUMPY)
def test_other_numpy_functions_see_the_tensors_array(call):
    expected, got = run(call, False), run(call, True)
    assert type(got) is type(expected)
    if isinstance(expected, tuple):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)
    else:
        np.testing.assert_array_equal(got, expected)


def test_numpy_functions_carry_gradients():
    x = jg.tensor(A, requires_grad=True)
    y = np.sum(np.transpose(x) ** 2, axis=0) + np.mean(np.reshape(x, (3, 2)))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * A + 2 / 6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: np.reshape(t, 6, order="F"), "order='F'"),
        (lambda t: np.concatenate([t, t], dtype=np.float32), "dtype=a type"),
    ],
)
def test_numpy_arguments_jitgrad_cannot_honour_are_refused(call, message):
    with pytest.raises(TypeError, match=f"cannot take {message}.*t.numpy()"):
        call(jg.tensor(A))


@pytest.mark.parametrize("axes", [(1, 0), (2, 0), (0, 1, 1)])
def test_numpy_transpose_takes_only_a_whole_permutation(axes):
    # np.transpose's axes permute every dimension; (1, 0) of a 3-d tensor is numpy's error,
    # not PyTorch's swap of two dims (which t.transpose(1, 0) is).
    a = np.zeros((2, 3, 4))
    with pytest.raises(ValueError):
        np.transpose(a, axes)
    with pytest.raises(ValueError, match="not a permutation of 3 dims"):
        np.transpose(jg.tensor(a), axes)


# Calls writing into numpy's arrays: numpy's own result.
UFUNCS_AS_NUMPY = ["np.exp(a, where=A > 0, out=np.zeros_like(A))"]
# ufunc calls with keywords, and ufunc methods: jitgrad's, tensors with numpy's values.
UFUNCS_AS_JITGRAD = [
    "np.isinf(a)",
    "np.hypot(a, a)",
    "np.copysign(a, -1.0)",
    "np.fmod(a, 2.5)",
    "np.ldexp(a, 2)",
    "np.signbit(a)",
    "np.frexp(a)",
    "np.add(a, 1, dtype=np.float32)",
    "np.add.reduce(a, axis=1)",
    "np.multiply.accumulate(a)",
    "np.subtract.outer(a, a)",
    "np.maximum.reduceat(I8, [0, 2], axis=1)",
    "np.gcd(I8, 3)",
]


@pytest.mark.parametrize("call", UFUNCS_AS_NUMPY + UFUNCS_AS_JITGRAD)
def test_other_ufunc_calls_give_numpys_values(call):
    expected, got = run(call, False), run(call, True)
    for g, e in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, expected)), strict=True):
        kind = jg.Tensor if call in UFUNCS_AS_JITGRAD else type(e)
        assert type(g) is kind and np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(np.asarray(g), e)


def test_ufunc_out_tensors_receive_numpys_result():
    out = jg.zeros((2, 3))
    assert np.hypot(jg.tensor(A), 1.0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.hypot(A, 1.0))
    q, r = jg.zeros(3, dtype=jg.int8), jg.zeros(3, dtype=jg.int8)
    assert np.divmod(jg.tensor(I8[1]), 2, out=(q, r)) == (q, r)
    assert q.tolist() == [-4, 1, 1] and r.tolist() == [1, 1, 0]
    counts = jg.zeros(3)
    np.add.at(counts, [0, 0, 2], 1.0)  # at writes into its first operand
    assert counts.tolist() == [2.0, 0.0, 1.0]


def test_ufunc_writes_into_tensors_follow_in_place_rules():
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        np.add(jg.ones(3), 1, out=jg.from_numpy(frozen))
    leaf = jg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        np.hypot(jg.ones(3), 1.0, out=leaf)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        np.add.at(leaf, [0], 1.0)
    with pytest.raises(RuntimeError, match="numpy.vecdot cannot write into a tensor that requi"):
        np.vecdot(jg.ones((2, 3)), jg.ones(3), out=leaf[:2] * 2)
    with jg.no_grad():
        np.hypot(jg.ones(3), 0.0, out=leaf)
    assert leaf.tolist() == [1.0, 1.0, 1.0]
    w = jg.ones(3)
    y = leaf * w
    np.sin(jg.ones(3), out=w)  # a write autograd must see: y's backward reads w
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_generalised_ufuncs_of_tensors_run_jitgrads_ops():
    x = jg.tensor(A, requires_grad=True)
    got = np.matvec(x, x[0])
    assert isinstance(got, jg.Tensor) and got.requires_grad
    np.testing.assert_array_equal(got.detach().numpy(), np.matvec(A, A[0]))
    assert isinstance(np.exp(x), jg.Tensor) and np.exp(x).requires_grad


@pytest.mark.parametrize("values", [I8, I8 > 0])
def test_numpy_rint_of_integers_gives_floats_as_numpys_float_ufuncs(values):
    # np.round keeps integers; np.rint, like np.sin, is a float ufunc: jitgrad's float
    got = np.rint(jg.tensor(values))
    assert got.dtype is jg.get_default_dtype() and got.tolist() == np.rint(values).tolist()
    assert np.rint(jg.tensor(A / 7)).tolist() == np.rint(A / 7).tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda m, t: m.sum(t, where=t > 3),
        lambda m, t: m.sum(t, 0, m.float32, None, True, initial=1.5),
        lambda m, t: m.prod(t, 1, None, None, False, initial=2.0, where=t < 5),
        lambda m, t: m.max(t, initial=10.0),
        lambda m, t: m.min(t, 1, None, True, 2.0, t > 2),
        lambda m, t: m.max(t[:0], 0, initial=-1.0),
        lambda m, t: m.mean(t, 0, m.float32, where=t > 1),
        lambda m, t: m.any(t > 4, 0, None, True, where=t < 6),
        lambda m, t: m.all(t > 0, None, None, False, where=t > 5),
        lambda m, t: m.var(t, 1, m.float64, None, 1, True),
        lambda m, t: m.std(t, 0, None, None, 1),
        lambda m, t: m.argmax(t, 1, None, keepdims=True),
    ],
)
def test_reductions_take_numpys_arguments_in_numpys_order(call):
    # numpy's positional order (axis, dtype, out, keepdims...), initial= and where=, the
    # same through jg's functions and through numpy's on tensors
    want = call(np, A)
    for got in (call(jg, jg.tensor(A)), call(np, jg.tensor(A))):
        assert got.dtype.name == np.asarray(want).dtype.name
        np.testing.assert_allclose(np.asarray(got), want)


def test_reductions_write_into_out():
    out = jg.zeros(3)
    assert jg.sum(jg.tensor(A), 0, None, out) is out
    np.testing.assert_array_equal(out.numpy(), A.sum(0))
    assert jg.max(jg.tensor(A), 0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), A.max(0))


def test_max_with_a_mask_needs_initial_as_numpy():
    with pytest.raises(ValueError, match="initial"):
        jg.max(jg.tensor(A), where=jg.tensor(A) > 2)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std"])
def test_a_positional_bool_after_the_axis_is_named_as_numpys_dtype(name):
    with pytest.raises(TypeError, match="numpy's dtype.*keepdim=True"):
        getattr(jg.tensor(A), name)(1, True)
