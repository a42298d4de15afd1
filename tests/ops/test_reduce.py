"""Reductions against numpy and finite differences."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import shapes_and_axes

import jitgrad as jg
from jitgrad.autograd import gradcheck

REDUCTIONS = [
    ("sum", np.sum),
    ("mean", np.mean),
    ("prod", np.prod),
    ("max", np.max),
    ("min", np.min),
    ("var", np.var),
    ("std", np.std),
    ("all", np.all),
    ("any", np.any),
    (
        "logsumexp",
        lambda a, axis=None, keepdims=False: np.log(np.exp(a).sum(axis, keepdims=keepdims)),
    ),  # noqa: E501
]
DIFFERENTIABLE = ["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp"]


def array_and_axis():
    return shapes_and_axes(max_dims=4, max_side=4)


@settings(max_examples=80, deadline=None)
@given(case=array_and_axis(), op=st.sampled_from(REDUCTIONS), keepdims=st.booleans())
def test_reductions_match_numpy(case, op, keepdims):
    shape, axis = case
    name, ref = op
    a = np.random.default_rng(0).uniform(0.5, 1.5, shape)
    got = getattr(jg, name)(jg.from_numpy(a), axis=axis, keepdims=keepdims)
    expected = ref(a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
def test_reduction_gradcheck(name, axis):
    rng = np.random.default_rng(1)
    base = jg.tensor(rng.permutation(24).reshape(4, 3, 2) / 7.0 + 0.5, requires_grad=True)
    fn = getattr(jg, name)
    # The input is a transposed view; distinct values keep max/min away from ties.
    assert gradcheck(lambda b: fn(b.permute(2, 1, 0), axis=axis), base)
    assert gradcheck(lambda b: fn(b.permute(2, 1, 0), axis=axis, keepdims=True), base)


@settings(max_examples=40, deadline=None)
@given(
    case=array_and_axis(),
    dtype=st.sampled_from([np.complex64, np.complex128]),
    ddof=st.integers(0, 1),
    keepdims=st.booleans(),
)
def test_var_and_std_of_complex_are_real(case, dtype, ddof, keepdims):
    shape, axis = case
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    for name, ref in (("var", np.var), ("std", np.std)):
        with np.errstate(all="ignore"), warnings.catch_warnings():  # ddof=1 of one element
            warnings.simplefilter("ignore", RuntimeWarning)  # gives inf or nan, as numpy
            expected = ref(a, axis=axis, keepdims=keepdims, ddof=ddof)
            got = getattr(jg, name)(jg.from_numpy(a), axis, keepdims=keepdims, ddof=ddof).numpy()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.complex64 else 1e-12)


def test_prod_gradient_with_zeros():
    x = jg.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 4.0, 2.0]], requires_grad=True)
    jg.prod(x, axis=1).sum().backward()
    assert x.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 2.0, 4.0]]
    assert gradcheck(lambda t: jg.prod(t, axis=0), x)


@pytest.mark.parametrize(
    "shape, axis", [((2, 0), 0), ((0, 3), 1), ((0, 0), 0), ((2, 0, 3), (0, 2))]
)
def test_prod_gradient_of_an_empty_tensor(shape, axis):
    # A kept dim of size 0 left the reduced length to infer from 0 elements: the backward
    # raised "cannot reshape 0 elements" where PyTorch gives an empty gradient.
    x = jg.zeros(shape, requires_grad=True)
    jg.prod(x, axis=axis).sum().backward()
    assert x.grad.shape == shape and x.grad.dtype == jg.float64


def cumprod_gradient_reference(a, gy, axis):
    """Σ_{j>=i} gy_j·Π_{k<=j, k≠i} a_k along ``axis``, by brute force (no division)."""
    a, gy = np.moveaxis(a, axis, -1), np.moveaxis(gy, axis, -1)
    out = np.zeros_like(a)
    for i in range(a.shape[-1]):
        others = a.copy()
        others[..., i] = 1
        out[..., i] = (gy * np.cumprod(others, -1))[..., i:].sum(-1)
    return np.moveaxis(out, -1, axis)


@settings(max_examples=60, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    data=st.data(),
)
def test_cumprod_gradient_is_exact_with_zeros(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rng.uniform(-2, 2, shape) * (rng.random(shape) > data.draw(st.sampled_from([0, 0.3, 0.7])))
    gy = rng.standard_normal(shape)
    x = jg.tensor(a, requires_grad=True)
    jg.cumprod(x, axis).backward(jg.tensor(gy))
    np.testing.assert_allclose(x.grad.numpy(), cumprod_gradient_reference(a, gy, axis), atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumprod_gradient_with_one_and_several_zeros(axis):
    x = jg.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    assert x.grad.tolist() == [1.0, 32.0, 0.0, 0.0]  # PyTorch's values
    a = np.array([[0.0, 2.0, 0.0, 3.0], [1.5, 0.0, 0.0, 2.0], [0.5, 2.0, 3.0, 0.0]])
    assert gradcheck(lambda t: jg.cumprod(t, axis), jg.tensor(a, requires_grad=True))
    assert gradcheck(lambda t: jg.cumprod(t.T, axis), jg.tensor(a.T.copy(), requires_grad=True))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumprod_second_order_gradient_with_zeros(axis):
    # Past a zero the first gradient is 0, yet it still depends on that zero: its own
    # gradient is not 0 (PyTorch's double backward agrees).
    a = np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [2.0, 3.0, 4.0], [0.5, 2.0, 0.0]])
    gy = np.random.default_rng(2).standard_normal(a.shape)

    def first(t):
        (g,) = jg.autograd.grad(jg.cumprod(t, axis), [t], jg.tensor(gy), create_graph=True)
        return g

    assert gradcheck(first, jg.tensor(a, requires_grad=True))


def test_max_ties_share_the_gradient():
    x = jg.tensor([3.0, 1.0, 3.0], requires_grad=True)
    jg.max(x).backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]


def test_argmax_argmin_cumulative():
    a = np.random.default_rng(2).standard_normal((3, 5))
    t = jg.from_numpy(a)
    for axis in (None, 0, 1, -1):
        assert jg.argmax(t, axis=axis).tolist() == np.argmax(a, axis=axis).tolist()
        assert jg.argmin(t, axis).tolist() == np.argmin(a, axis).tolist()
    assert jg.argmax(t, axis=1, keepdims=True).shape == (3, 1)
    for axis in (None, 0, 1):
        np.testing.assert_allclose(jg.cumsum(t, axis).numpy(), np.cumsum(a, axis))
        np.testing.assert_allclose(jg.cumprod(t, axis).numpy(), np.cumprod(a, axis))
    x = jg.tensor(a + 3.0, requires_grad=True)
    assert gradcheck(lambda t: jg.cumsum(t.T, axis=0), x)
    assert gradcheck(lambda t: jg.cumprod(t, axis=1), x)


def test_integer_sums_and_means():
    t = jg.tensor([[1, 2], [3, 4]], dtype=jg.int32)
    assert jg.sum(t).dtype.numpy == np.sum(np.array([1], np.int32)).dtype
    assert jg.mean(t).item() == 2.5 and jg.mean(t).dtype is jg.float64
    assert jg.sum(jg.tensor([True, True, False])).item() == 2


@settings(max_examples=40, deadline=None)
@given(
    case=array_and_axis(),
    dtype=st.sampled_from([np.bool_, np.uint8, np.uint32, np.int8, np.int16, np.int64]),
    name=st.sampled_from(["sum", "prod", "cumsum", "cumprod", "mean"]),
)
def test_integer_and_bool_reductions_accumulate_as_numpy(case, dtype, name):
    shape, axis = case
    if name.startswith("cum") and isinstance(axis, tuple):
        axis = axis[0]
    a = np.random.default_rng(4).integers(0, 256, shape).astype(dtype)
    got = getattr(jg, name)(jg.from_numpy(a), axis)
    # numpy's accumulators: uint64 for unsigned integers, int64 for signed ones and bools.
    expected = getattr(np, name)(a, axis)
    assert got.dtype == expected.dtype
    if name == "mean":  # (in float64, as numpy: summed in another order)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-14)
    else:
        np.testing.assert_array_equal(got.numpy(), expected)


def test_sum_in_a_given_dtype_wraps_as_numpy():
    a = np.array([200, 100, 7], np.uint8)
    got = jg.sum(jg.from_numpy(a), dtype=jg.uint8)
    assert got.dtype is jg.uint8 and got.item() == a.sum(dtype=np.uint8)


def test_torch_aliases_and_methods():
    a = np.arange(12.0).reshape(3, 4)
    t = jg.from_numpy(a)
    np.testing.assert_array_equal(t.sum(dim=1, keepdim=True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_array_equal(t.max(0).numpy(), a.max(0))
    np.testing.assert_allclose(t.var(ddof=1).item(), a.var(ddof=1))
    np.testing.assert_allclose(jg.var(t, 1, correction=1).numpy(), a.var(1, ddof=1))
    np.testing.assert_allclose(t.std(axis=0).numpy(), a.std(0))
    with pytest.raises(TypeError, match="either axis= or dim="):
        jg.sum(t, axis=0, dim=1)
    with pytest.raises(IndexError, match="out of range"):
        jg.sum(t, axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        jg.sum(t, axis=(0, 0))
    with pytest.raises(ValueError, match="empty axis"):
        jg.max(jg.zeros((0, 3)), axis=0)


def test_logsumexp_is_stable():
    x = jg.tensor([[1e4, 1e4 + 1.0], [-1e4, -np.inf]], requires_grad=True)
    out = jg.logsumexp(x, axis=1)
    np.testing.assert_allclose(out.numpy(), [1e4 + 1 + np.log1p(np.exp(-1.0)), -1e4])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0], [1 / (1 + np.e), np.e / (1 + np.e)])
    assert x.grad.numpy()[1].tolist() == [1.0, 0.0]


def test_second_order_through_reductions():
    x = jg.tensor([0.5, 1.5, -0.3], requires_grad=True)

    def first(t):
        (g,) = jg.autograd.grad(
            jg.logsumexp(t) + jg.std(t) * jg.mean(t * t), [t], create_graph=True
        )
        return g

    assert gradcheck(first, x)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_float16_means_add_up_in_float32_as_numpy(axis):
    # A float16 sum overflows past 65504 and stalls once the running sum's ulp exceeds
    # the values added; numpy and PyTorch sum a float16 mean in float32.
    for a in (np.full((2, 2), 60000, np.float16), np.full((3000, 4), 0.1, np.float16)):
        got = jg.mean(jg.from_numpy(a), axis)
        assert got.dtype is jg.float16
        np.testing.assert_allclose(got.numpy(), np.mean(a, axis), rtol=1e-3)
        # Sums stay in float16, with numpy's values.
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(jg.sum(jg.from_numpy(a), axis).numpy(), np.sum(a, axis))


def test_float16_mean_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.full((3, 4), 60000, np.float16)
    x, ref = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    jg.mean(x, 0).backward(jg.ones(4, dtype=jg.float16))
    ref.mean(0).backward(torch.ones(4, dtype=torch.float16))
    assert x.grad.dtype is jg.float16
    np.testing.assert_array_equal(x.grad.numpy(), ref.grad.numpy())


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize(("axis", "ddof"), [(1, 2), (1, 3), (0, 5), (None, 4), (None, 9)])
def test_var_and_std_with_ddof_past_the_count_match_numpy(name, axis, ddof):
    # numpy divides by max(n - ddof, 0): inf for a spread-out slice, nan for a constant one.
    a = np.array([[1.0, 2.0], [3.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = getattr(np, name)(a, axis=axis, ddof=ddof)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0"):
        got = getattr(jg, name)(jg.from_numpy(a), axis=axis, ddof=ddof)
    np.testing.assert_array_equal(got.numpy(), expected)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ref = getattr(torch, name)(torch.from_numpy(a), dim=axis, correction=ddof)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())


REDUCTION_NAMES = [name for name, _ in REDUCTIONS]


@pytest.mark.parametrize("name", REDUCTION_NAMES)
@pytest.mark.parametrize("value", [3.5, 3, True])
def test_a_0d_tensor_reduces_over_axis_0_or_minus_1_as_over_none(name, value):
    # One rule for every reduction: PyTorch's, and numpy's for sum, prod, max, min, all
    # and any (numpy's mean, var and std alone raise AxisError).
    t = jg.tensor(value)
    fn = getattr(jg, name)
    expected = fn(t)
    for axis in (0, -1, (0,), [-1]):
        for keepdims in (False, True):
            got = fn(t, axis=axis, keepdims=keepdims)
            assert got.shape == () and got.dtype is expected.dtype
            assert got.tolist() == expected.tolist()
    if name in ("sum", "prod", "max", "min", "all", "any"):
        assert got.tolist() == getattr(np, name)(np.array(value), axis=0).tolist()
    with pytest.raises(IndexError, match="dimension 1 is out of range"):
        fn(t, axis=1)
    with pytest.raises(ValueError, match="repeated axis"):
        fn(t, axis=(0, -1))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "var", "logsumexp"])
def test_0d_reduction_over_axis_0_gradient_matches_torch(name):
    torch = pytest.importorskip("torch")
    x, ref = jg.tensor(1.5, requires_grad=True), torch.tensor(1.5, requires_grad=True)
    getattr(jg, name)(x, 0).backward()
    kwargs = {"correction": 0} if name == "var" else {}
    getattr(torch, "amax" if name == "max" else "amin" if name == "min" else name)(
        ref, 0, **kwargs
    ).backward()
    assert x.grad.shape == () and x.grad.item() == ref.grad.item()


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_running_sum_and_product_of_a_0d_tensor(name):
    # numpy's shape (1,) for any axis; the gradient has x's shape.
    for axis in (None, 0, -1):
        x = jg.tensor(1.5, requires_grad=True)
        y = getattr(jg, name)(x, axis)
        assert y.shape == getattr(np, name)(np.array(1.5), axis).shape == (1,)
        y.sum().backward()
        assert x.grad.shape == () and x.grad.item() == 1.0
    with pytest.raises(IndexError, match="out of range"):
        getattr(jg, name)(jg.tensor(1.5), 1)


@pytest.mark.parametrize(
    ("shape", "axis"), [((0,), None), ((0, 3), 0), ((0, 3), 1), ((2, 0), None)]
)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_over_an_empty_axis_is_minus_inf_as_torch(shape, axis, keepdims):
    torch = pytest.importorskip("torch")
    x, ref = jg.zeros(shape, requires_grad=True), torch.zeros(shape, requires_grad=True)
    out = jg.logsumexp(x, axis, keepdims)
    expected = torch.logsumexp(ref, tuple(range(len(shape))) if axis is None else axis, keepdims)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    out.sum().backward()
    expected.sum().backward()
    assert x.grad.shape == tuple(ref.grad.shape) == shape


@pytest.mark.parametrize("name", ["std", "var"])
@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 1])
def test_std_and_var_gradients_at_zero_variance_match_torch(name, ddof, axis):
    torch = pytest.importorskip("torch")
    # Constant rows (zero variance) beside a spread-out one; all constant for axis=None.
    a = np.array([[2.0, 2.0, 2.0], [1.0, 3.0, 4.0], [-1.0, -1.0, -1.0]])
    if axis is None:
        a = np.full((2, 3), 0.5)
    x, ref = jg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out = getattr(jg, name)(x, axis=axis, ddof=ddof)
    expected = getattr(torch, name)(ref, dim=axis, correction=ddof)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64", "complex64"])
def test_reductions_take_a_dtype_as_numpy(name, dtype):
    a = np.arange(1, 7, dtype=np.int64).reshape(2, 3)
    if name == "mean" and dtype.startswith("int"):  # as PyTorch: no integer mean
        with pytest.raises(TypeError, match="float or complex dtype, got " + dtype):
            jg.mean(jg.tensor(a), dtype=dtype)
        return
    for axis in (None, 0, 1):
        want = getattr(np, name)(a, axis=axis, dtype=dtype)
        got = getattr(jg, name)(jg.tensor(a), axis=axis, dtype=dtype)
        method = getattr(jg.tensor(a), name)(axis, dtype=dtype)
        for result in (got, method):
            assert result.dtype.name == np.dtype(dtype).name
            np.testing.assert_allclose(result.numpy(), want, rtol=1e-6)


def test_a_reduction_in_another_dtype_sends_its_gradient_back_in_the_input_dtype():
    x = jg.tensor([1.0, 2.0, 4.0], dtype=jg.float32, requires_grad=True)
    y = jg.mean(x, dtype=jg.float64) + jg.prod(x, dtype=jg.float64)
    y = y + x.cumsum(0, dtype="float64").sum()
    assert y.dtype is jg.float64
    y.backward()
    assert x.grad.dtype is jg.float32
    np.testing.assert_allclose(x.grad.numpy(), 1 / 3 + np.array([8.0, 4.0, 2.0]) + [3, 2, 1])


@pytest.mark.parametrize("axis", [True, (0, False), np.bool_(True)])
def test_a_bool_axis_is_refused_as_numpy_does(axis):
    with pytest.raises(TypeError, match="not a bool"):
        jg.sum(jg.ones((2, 3)), axis=axis)
