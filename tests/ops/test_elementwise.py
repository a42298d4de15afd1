"""Elementwise ops against numpy (forward) and finite differences (backward)."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad._config import config
from jitgrad.autograd import gradcheck

_erf = np.vectorize(math.erf)

# name, numpy reference, domain where the op is smooth (for inputs and gradcheck)
UNARY = [
    ("negative", np.negative, (-3, 3)),
    ("positive", np.positive, (-3, 3)),
    ("abs", np.abs, (-3, 3)),
    ("exp", np.exp, (-3, 3)),
    ("expm1", np.expm1, (-3, 3)),
    ("log", np.log, (0.1, 5)),
    ("log1p", np.log1p, (-0.5, 5)),
    ("log2", np.log2, (0.1, 5)),
    ("log10", np.log10, (0.1, 5)),
    ("sqrt", np.sqrt, (0.1, 5)),
    ("square", np.square, (-3, 3)),
    ("reciprocal", lambda x: 1 / x, (0.3, 3)),
    ("sin", np.sin, (-3, 3)),
    ("cos", np.cos, (-3, 3)),
    ("tan", np.tan, (-1.2, 1.2)),
    ("arcsin", np.arcsin, (-0.9, 0.9)),
    ("arccos", np.arccos, (-0.9, 0.9)),
    ("arctan", np.arctan, (-3, 3)),
    ("sinh", np.sinh, (-3, 3)),
    ("cosh", np.cosh, (-3, 3)),
    ("tanh", np.tanh, (-3, 3)),
    ("arctanh", np.arctanh, (-0.9, 0.9)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-5, 5)),
    ("relu", lambda x: np.maximum(x, 0), (-3, 3)),
    ("leaky_relu", lambda x: np.where(x > 0, x, 0.01 * x), (-3, 3)),
    ("gelu", lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-3, 3)),
    ("silu", lambda x: x / (1 + np.exp(-x)), (-3, 3)),
    ("softplus", lambda x: np.logaddexp(0, x), (-5, 5)),
    ("erf", _erf, (-2, 2)),
    ("sign", np.sign, (-3, 3)),
    ("floor", np.floor, (-3, 3)),
    ("ceil", np.ceil, (-3, 3)),
    ("round", np.round, (-3, 3)),
    ("trunc", np.trunc, (-3, 3)),
]
KINKS = {"abs", "relu", "leaky_relu", "sign", "floor", "ceil", "round", "trunc"}

BINARY = [
    ("add", np.add, (-3, 3), (-3, 3)),
    ("subtract", np.subtract, (-3, 3), (-3, 3)),
    ("multiply", np.multiply, (-3, 3), (-3, 3)),
    ("divide", np.divide, (-3, 3), (0.5, 3)),
    ("power", np.power, (0.2, 3), (-2, 2)),
    ("maximum", np.maximum, (-3, 3), (-3, 3)),
    ("minimum", np.minimum, (-3, 3), (-3, 3)),
    ("arctan2", np.arctan2, (-3, 3), (0.5, 3)),
    ("floor_divide", np.floor_divide, (-3, 3), (0.7, 3)),
    ("remainder", np.remainder, (-3, 3), (0.7, 3)),
]
COMPARISONS = [
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]
SMOOTH_BINARY = {"add", "subtract", "multiply", "divide", "power", "arctan2"}


def values(rng, shape, domain, avoid_kinks=False):
    lo, hi = domain
    x = rng.uniform(lo, hi, size=shape)
    if avoid_kinks:  # keep finite differences away from 0 and from integers
        x = np.round(x) + np.where(rng.random(shape) < 0.5, 0.3, -0.3)
    return x


def noncontiguous(name, rng, shape, domain, avoid_kinks=False):
    """A float64 leaf plus a function that turns it into a transposed, stepped view."""
    base = jg.tensor(values(rng, shape[::-1] + (2,), domain, avoid_kinks), requires_grad=True)
    return base, lambda b: b[..., 0].T if len(shape) > 1 else b[..., 0]


# -- forward -------------------------------------------------------------------------------


@pytest.mark.parametrize("name, ref, domain", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_unary_forward_matches_numpy(name, ref, domain, dtype):
    rng = np.random.default_rng(0)
    x = values(rng, (4, 5), domain).astype(dtype)
    got = getattr(jg, name)(jg.from_numpy(x))
    with np.errstate(all="ignore"):
        expected = ref(x.astype(np.float64)).astype(dtype)
    assert got.dtype.name == dtype
    tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["exp", "sqrt", "sin", "tanh", "log1p", "true_divide"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int64"])
def test_float_ops_on_integers_give_numpys_float(name, dtype):
    a = np.array([1, 2, 3]).astype(dtype)
    args = (a, a) if name == "true_divide" else (a,)
    expected = getattr(np, name)(*args)
    jg.set_default_dtype(jg.float32)  # (the default dtype is for Python floats)
    try:
        got = getattr(jg, name)(*map(jg.tensor, args))
    finally:
        jg.set_default_dtype(jg.float64)
    assert got.dtype.numpy == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-3)
    t = jg.tensor([1, 2, 3])
    assert jg.abs(t).dtype is jg.int64 and jg.negative(t).tolist() == [-1, -2, -3]


def test_functions_numpy_lacks_give_the_smallest_float_holding_integers():
    assert jg.sigmoid(jg.tensor([1, 2], dtype=jg.int8)).dtype is jg.float16
    assert jg.sigmoid(jg.tensor([1, 2])).dtype is jg.float64


def test_abs_of_complex_is_real():
    z = np.array([3 + 4j, -1j, 0, np.inf - 1j, complex(np.nan, 1)])
    for dtype in (np.complex64, np.complex128):
        got, expected = jg.abs(jg.from_numpy(z.astype(dtype))), np.abs(z.astype(dtype))
        assert got.dtype.numpy == expected.dtype
        np.testing.assert_array_equal(got.numpy(), expected)
        assert abs(jg.from_numpy(z.astype(dtype))).dtype.numpy == expected.dtype
    assert jg.absolute(3 + 4j).item() == 5.0
    with pytest.raises(RuntimeError, match="only floating point and complex tensors can"):
        jg.tensor([1]).requires_grad_()


def test_a_complex_result_of_a_real_tensor_passes_back_the_real_part_of_its_gradient():
    # PyTorch's gradients: |3+4j| x gives 5 sign(x); re(x + i) gives 1; im(x) gives 0.
    x = jg.tensor([1.0, -2.0], requires_grad=True)
    y = jg.abs(x * (3 + 4j)).sum() + jg.add(x, jg.tensor([1j, 2j])).real.sum()
    (y + x.astype(jg.complex64).imag.sum()).backward()
    assert x.grad.dtype is jg.float64 and x.grad.tolist() == [6.0, -4.0]
    with jg.no_grad():
        assert (x * 1j).dtype is jg.complex128


def test_holomorphic_ops_of_complex_tensors_have_torchs_gradients():
    z0 = np.array([1 + 2j, -0.5 + 1j, 2 - 1j])
    grads = []
    for m in (jg, torch):
        z, w = m.tensor(z0, requires_grad=True), m.tensor(z0[::-1].copy(), requires_grad=True)
        y = m.exp(z / 4) * w - z * z / (w + 3) + m.sin(z) ** 2
        (y.real.sum() + m.abs(y).sum()).backward()
        grads.append([(t.grad.resolve_conj() if m is torch else t.grad).numpy() for t in (z, w)])
    for got, expected in zip(*grads):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_an_op_without_a_complex_gradient_refuses_a_complex_tensor_that_requires_grad():
    z = jg.tensor([1 + 2j, 3j], requires_grad=True)
    with pytest.raises(RuntimeError, match="MatMul of a complex128 .* does not differentiate"):
        z @ z
    with pytest.raises(RuntimeError, match="does not differentiate it for complex"):
        jg.rint(z)
    with pytest.raises(RuntimeError, match="needs a gradient argument"):
        (z * 2).backward()  # a complex output has no implicit gradient


def test_sign_of_complex_is_z_over_its_magnitude():
    z = np.array([3 + 4j, -1j, 0, -2, np.inf, complex(np.nan, 1)])
    for dtype in (np.complex64, np.complex128):
        t = jg.from_numpy(z.astype(dtype))
        for got in (jg.sign(t), t.sign(), np.sign(t)):
            assert got.dtype.numpy == dtype
            np.testing.assert_array_equal(got.numpy(), np.sign(z.astype(dtype)))


def test_special_values_follow_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324])
    for name, ref in [
        ("exp", np.exp),
        ("log", np.log),
        ("sqrt", np.sqrt),
        ("tanh", np.tanh),
        ("abs", np.abs),
        ("sign", np.sign),
        ("floor", np.floor),
    ]:
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(getattr(jg, name)(jg.from_numpy(x)).numpy(), ref(x))
    np.testing.assert_array_equal(jg.sigmoid(jg.tensor([-1e4, 1e4])).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(jg.softplus(jg.tensor([-1e4, 1e4])).numpy(), [0.0, 1e4])
    np.testing.assert_array_equal(jg.isnan(jg.from_numpy(x)).numpy(), np.isnan(x))
    np.testing.assert_array_equal(jg.isfinite(jg.from_numpy(x)).numpy(), np.isfinite(x))
    np.testing.assert_array_equal(jg.logical_not(jg.from_numpy(x)).numpy(), np.logical_not(x))


def test_clip_and_rounding_options():
    x = np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.14159])
    np.testing.assert_array_equal(jg.clip(jg.from_numpy(x), -1, 2).numpy(), np.clip(x, -1, 2))
    np.testing.assert_array_equal(jg.clip(jg.from_numpy(x), None, 0).numpy(), np.clip(x, None, 0))
    np.testing.assert_array_equal(jg.round(jg.from_numpy(x)).numpy(), np.round(x))
    np.testing.assert_allclose(jg.round(jg.from_numpy(x), 2).numpy(), np.round(x, 2))
    np.testing.assert_array_equal(jg.clip(jg.from_numpy(x)).numpy(), x)  # numpy 2: a copy
    with pytest.raises(ValueError, match="approximate"):
        jg.gelu(jg.from_numpy(x), approximate="cubic")


@pytest.mark.parametrize("backend", ["jit", "reference"])
@pytest.mark.parametrize("decimals", [-3, -1, 2, 309, 400, -309, -400])
def test_rounding_to_any_number_of_places_is_numpys(monkeypatch, backend, decimals):
    # numpy divides by 10 ** -decimals for negative decimals (0.001 has no exact float:
    # -50000 to -3 places was -49999.996 in float32); beyond 308 places the scale is inf
    monkeypatch.setattr(config, "backend", backend)
    x = np.concatenate([[1.2345, -2.5, 0.0], np.arange(-50000.0, -49000.0, 0.5)])
    for dtype in (np.float32, np.float64):
        with np.errstate(all="ignore"):
            want = np.round(x.astype(dtype), decimals)
        got = jg.round(jg.from_numpy(x.astype(dtype)), decimals)
        np.testing.assert_array_equal(got.numpy(), want)


def test_rounding_integers_keeps_them_exact():
    x = np.array([2**62 + 1, 2**53 + 1, -(2**60) - 3, 7])
    t = jg.from_numpy(x)
    for rounded in (jg.round(t), t.round(), np.round(t), jg.round(t, 3)):
        assert rounded.dtype is jg.int64 and rounded.tolist() == x.tolist()
        assert not np.shares_memory(rounded.numpy(), x)
    np.testing.assert_array_equal(jg.round(t, -1).numpy(), np.round(x, -1))
    assert jg.round(jg.tensor([200, 5], dtype=jg.uint8)).tolist() == [200, 5]


broadcastable = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)


@settings(max_examples=60, deadline=None)
@given(
    shapes=broadcastable, op=st.sampled_from(BINARY), dtype=st.sampled_from(["float32", "float64"])
)
def test_binary_forward_broadcasts_like_numpy(shapes, op, dtype):
    name, ref, da, db = op
    rng = np.random.default_rng(1)
    a = values(rng, shapes.input_shapes[0], da).astype(dtype)
    b = values(rng, shapes.input_shapes[1], db).astype(dtype)
    got = getattr(jg, name)(jg.from_numpy(a), jg.from_numpy(b))
    expected = ref(a, b)
    assert got.shape == expected.shape and got.dtype.numpy == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6 if dtype == "float32" else 1e-13)


@settings(max_examples=40, deadline=None)
@given(shapes=broadcastable, name=st.sampled_from(COMPARISONS))
def test_comparisons_give_bool_without_grad(shapes, name):
    rng = np.random.default_rng(2)
    a = rng.integers(-2, 3, shapes.input_shapes[0]).astype(np.float64)
    b = rng.integers(-2, 3, shapes.input_shapes[1]).astype(np.float64)
    ta = jg.tensor(a, requires_grad=True)
    got = getattr(jg, name)(ta, jg.from_numpy(b))
    assert got.dtype is jg.bool and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), getattr(np, name)(a, b))


@pytest.mark.parametrize(
    "a_dtype, b_dtype",
    [
        ("int8", "uint8"),
        ("int32", "float32"),
        ("float16", "float32"),
        ("bool", "int16"),
        ("int64", "float64"),
    ],
)
def test_mixed_dtypes_promote_like_numpy(a_dtype, b_dtype):
    a = np.array([1, 2, 3]).astype(a_dtype)
    b = np.array([3, 1, 2]).astype(b_dtype)
    for name in ("add", "multiply", "maximum", "divide"):
        got = getattr(jg, name)(jg.from_numpy(a), jg.from_numpy(b))
        expected = getattr(np, name)(a, b)
        assert got.dtype.numpy == expected.dtype, name
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-3)


def test_python_scalars_are_weak():
    f32 = jg.ones(2, dtype=jg.float32)
    assert (f32 + 2.0).dtype is jg.float32 and (2 * f32).dtype is jg.float32
    assert (jg.ones(2, dtype=jg.int8) + 1).dtype is jg.int8
    assert (jg.ones(2, dtype=jg.int8) + 1.5).dtype is jg.float64
    assert (f32 / 2).dtype is jg.float32 and (jg.arange(3) / 2).dtype is jg.float64
    with pytest.raises(OverflowError, match="300"):
        jg.ones(2, dtype=jg.uint8) + 300


def test_operators_on_both_sides_and_in_place():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    t = jg.from_numpy(a.copy())
    cases = [
        (t + 1, a + 1),
        (1 - t, 1 - a),
        (t * a, a * a),
        (a / t, a / a),
        (t // 3, a // 3),
        (7 % t, 7 % a),
        (t**2, a**2),
        (2**t, 2**a),
        (t @ a, a @ a),
        (a @ t, a @ a),
        (-t, -a),
        (abs(-t), a),
        (t > 2, a > 2),
        (2 <= t, 2 <= a),
        (t == a, a == a),
        ((t > 1) & (t < 4), (a > 1) & (a < 4)),
        (~(t > 2), ~(a > 2)),
        (np.exp(t), np.exp(a)),
        (np.maximum(a, t), a),
    ]
    for got, expected in cases:
        assert isinstance(got, jg.Tensor)
        np.testing.assert_allclose(got.numpy(), expected)
    t += 1
    t *= 2
    t -= a
    t /= 2
    np.testing.assert_allclose(t.numpy(), ((a + 1) * 2 - a) / 2)


_IN_PLACE_LAYOUTS = {  # base (4, 6) -> the tensor written in place
    "whole": lambda b: b,
    "transposed": lambda b: b.T,
    "rows at an offset": lambda b: b[1:3],
    "every other column": lambda b: b[:, ::2],
    "0-d view": lambda b: b[2, 3, ...],
}


_IN_PLACE_OPS = {  # dtype -> the operators written in place
    np.float32: ["__iadd__", "__isub__", "__imul__", "__itruediv__"],
    np.float64: ["__iadd__", "__isub__", "__imul__", "__itruediv__"],
    np.int32: ["__iadd__", "__isub__", "__imul__", "__ifloordiv__", "__iand__", "__ior__"],
    np.int64: ["__iadd__", "__imul__", "__imod__", "__ixor__"],
    np.bool_: ["__iand__", "__ior__", "__ixor__"],
}


def _operand(rng, dtype, shape):
    """Values >= 1 of ``dtype`` (a Python number for shape None)."""
    if dtype is np.bool_:
        values = rng.integers(0, 2, shape or ()).astype(bool)
    elif np.issubdtype(dtype, np.integer):
        values = rng.integers(1, 6, shape or ()).astype(dtype)
    else:
        values = rng.uniform(1, 2, shape or ()).astype(dtype)
    return values.item() if shape is None else values


@settings(max_examples=60, deadline=None)
@given(
    layout=st.sampled_from(sorted(_IN_PLACE_LAYOUTS)),
    dtype_op=st.sampled_from([(d, op) for d, ops in _IN_PLACE_OPS.items() for op in ops]),
    other_kind=st.sampled_from(["python number", "same shape", "last axis", "0-d"]),
)
def test_repeated_in_place_writes_match_numpy(layout, dtype_op, other_kind):
    """The first write of a signature is worked out, later ones run its remembered call:
    every one writes through views of the base as numpy does, and counts the write."""
    dtype, op = dtype_op
    rng = np.random.default_rng(0)
    for _ in range(3):
        base = _operand(rng, dtype, (4, 6))
        tensor_base = jg.tensor(base)
        a, x = _IN_PLACE_LAYOUTS[layout](base), _IN_PLACE_LAYOUTS[layout](tensor_base)
        if other_kind == "python number":
            other = other_t = _operand(rng, dtype, None)
        else:
            shape = {"same shape": a.shape, "last axis": a.shape[-1:], "0-d": ()}[other_kind]
            other = _operand(rng, dtype, shape)
            other_t = jg.tensor(other)
        version = x._storage._version
        assert getattr(x, op)(other_t) is x
        getattr(a, op)(other)
        assert tensor_base.dtype.numpy == base.dtype
        np.testing.assert_allclose(tensor_base.numpy(), base, rtol=1e-6)
        assert x._storage._version > version
    dtype = np.float32 if dtype is np.bool_ else dtype
    read_only = np.ones(3, dtype)
    read_only.flags.writeable = False
    frozen, writable = jg.from_numpy(read_only), jg.tensor(np.ones(3, dtype))
    writable += 1  # (the signature's call is remembered, then refused for frozen)
    with pytest.raises(ValueError, match="read-only"):
        frozen += 1
    assert read_only.tolist() == [1, 1, 1]


@settings(max_examples=40, deadline=None)
@given(
    layout=st.sampled_from(sorted(_IN_PLACE_LAYOUTS)),
    name=st.sampled_from(["add", "subtract", "maximum", "exp", "negative"]),
    kinds=st.tuples(*[st.sampled_from(["out itself", "tensor", "python number"])] * 2),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_repeated_ufunc_writes_into_out_match_numpy(layout, name, kinds, dtype):
    """``uf(..., out=t)`` is worked out once per signature, then runs its remembered
    call: each write lands in ``t``'s memory as numpy's does, and counts."""
    rng = np.random.default_rng(0)
    nin = getattr(np, name).nin
    for _ in range(3):
        base = rng.uniform(1, 2, (4, 6)).astype(dtype)
        tensor_base = jg.tensor(base)
        out, out_t = _IN_PLACE_LAYOUTS[layout](base), _IN_PLACE_LAYOUTS[layout](tensor_base)
        inputs, inputs_t = [], []
        for kind in kinds[:nin]:
            if kind == "out itself":
                inputs.append(out), inputs_t.append(out_t)
            elif kind == "python number":
                value = float(rng.uniform(1, 2))
                inputs.append(value), inputs_t.append(value)
            else:
                value = rng.uniform(1, 2, out.shape).astype(dtype)
                inputs.append(value), inputs_t.append(jg.tensor(value))
        version = tensor_base._storage._version
        assert getattr(jg, name)(*inputs_t, out=out_t) is out_t
        getattr(np, name)(*inputs, out=out)
        np.testing.assert_allclose(tensor_base.numpy(), base, rtol=1e-6)
        assert tensor_base._storage._version > version


def test_a_remembered_out_write_refuses_a_leaf_that_requires_grad():
    a, b, plain = jg.ones(3), jg.ones(3), jg.zeros(3)
    for _ in range(2):  # (the signature's write is remembered)
        jg.add(a, b, out=plain)
    leaf = jg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        jg.add(a, b, out=leaf)
    assert leaf.tolist() == [0.0, 0.0, 0.0]


def test_in_place_bitwise_operators_write_through_views():
    flags = jg.tensor([True, False, False])
    view = flags[1:]
    view |= True
    assert flags.tolist() == [True, True, True]
    bits = jg.tensor([6, 6, 6], dtype=jg.uint8)
    rows = bits[::2]
    rows &= 3
    rows ^= jg.tensor([1, 7], dtype=jg.uint8)
    assert bits.tolist() == [3, 6, 5] and bits.dtype is jg.uint8
    with pytest.raises(TypeError, match="same_kind"):
        rows ^= jg.tensor([1, 1])  # int64 into uint8, as numpy refuses it


@pytest.mark.parametrize("backend", ["jit", "reference"])
@pytest.mark.parametrize("dtype", ["uint8", "int64", "float64"])
def test_where_takes_any_nonzero_condition_as_true_as_numpy(monkeypatch, backend, dtype):
    # 0.5, NaN, 1j and 256 are true, whatever dtype the result is computed in
    monkeypatch.setattr(config, "backend", backend)
    a, b = np.array([1, 2, 3, 4], dtype=dtype), np.array([10, 20, 30, 40], dtype=dtype)
    for condition in (
        np.array([0.5, 0.0, np.nan, -0.0]),
        np.array([1j, 0, 1, 0]),
        np.array([256, 0, 512, 0], dtype=np.int16),
        [0.5, 0, 2, 0],
        0.5,
    ):
        got = jg.where(jg.tensor(condition), jg.from_numpy(a), jg.from_numpy(b))
        want = np.where(condition, a, b)
        assert got.dtype.numpy == want.dtype and got.tolist() == want.tolist()
        scalar_b = jg.where(condition, jg.from_numpy(a), 0)
        assert scalar_b.tolist() == np.where(condition, a, 0).tolist()


def test_where_broadcasts_and_routes_gradients():
    c = jg.tensor([[True], [False]])
    a = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = jg.tensor(10.0, requires_grad=True)
    y = jg.where(c, a, b)
    np.testing.assert_array_equal(y.numpy(), np.where([[True], [False]], [1.0, 2.0, 3.0], 10.0))
    y.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 1.0] and b.grad.item() == 3.0


# -- backward ------------------------------------------------------------------------------


@pytest.mark.parametrize("name, ref, domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck_on_noncontiguous_inputs(name, ref, domain):
    rng = np.random.default_rng(3)
    base, view = noncontiguous(name, rng, (3, 4), domain, avoid_kinks=name in KINKS)
    op = getattr(jg, name)
    assert gradcheck(lambda b: op(view(b)), base)


@pytest.mark.parametrize("name, ref, da, db", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (3,))]
)
def test_binary_gradcheck_with_broadcasting(name, ref, da, db, shapes):
    rng = np.random.default_rng(4)
    op = getattr(jg, name)
    if name in ("floor_divide", "remainder"):  # keep a / b a quarter away from integers
        a = np.round(values(rng, shapes[0], da)) + 0.5
        b = np.full(shapes[1], 2.0)
    else:
        kinks = name not in SMOOTH_BINARY
        a = values(rng, shapes[0], da, kinks)
        b = values(rng, shapes[1], db, kinks) + (0.05 if kinks else 0)
    assert gradcheck(op, jg.tensor(a, requires_grad=True), jg.tensor(b, requires_grad=True))


def test_gradcheck_through_expanded_and_stepped_views():
    rng = np.random.default_rng(5)
    a = jg.tensor(rng.standard_normal((3, 1)), requires_grad=True)
    b = jg.tensor(rng.standard_normal((8, 10)), requires_grad=True)
    assert gradcheck(lambda a, b: jg.tanh(a.expand(3, 4) * b[::2, ::-2].T[1:4]), a, b)


@pytest.mark.parametrize(
    "name",
    [
        "exp",
        "tanh",
        "sigmoid",
        "sin",
        "log",
        "sqrt",
        "gelu",
        "silu",
        "softplus",
        "reciprocal",
        "erf",
        "arctan",
    ],
)
def test_second_derivatives_match_finite_differences(name):
    op = getattr(jg, name)
    x = jg.tensor([0.3, 0.7, 1.9], requires_grad=True)

    def first(t):
        (g,) = jg.autograd.grad(op(t).sum(), [t], create_graph=True)
        return g

    assert gradcheck(first, x)


def test_gelu_tanh_approximation_and_leaky_slope():
    x = np.linspace(-3, 3, 13)
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(jg.gelu(jg.from_numpy(x), approximate="tanh").numpy(), expected)
    t = jg.tensor([-1.3, 0.4, 2.2], requires_grad=True)
    assert gradcheck(lambda t: jg.gelu(t, approximate="tanh"), t)
    assert gradcheck(lambda t: jg.leaky_relu(t, 0.2), t)
    assert gradcheck(lambda t: jg.clip(t, -1, 1), t)


def test_maximum_ties_share_the_gradient():
    a = jg.tensor([1.0, 2.0], requires_grad=True)
    b = jg.tensor([1.0, 0.0], requires_grad=True)
    jg.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0] and b.grad.tolist() == [0.5, 0.0]


@pytest.mark.parametrize("backend", ["jit", "reference"])
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_pass_the_gradient_to_both_at_nan_as_pytorch(
    monkeypatch, backend, name
):
    monkeypatch.setattr(config, "backend", backend)
    a_values, b_values = [np.nan, 1.0, np.nan, 2.0, 3.0], [1.0, np.nan, np.nan, 2.0, -1.0]
    a = jg.tensor(a_values, requires_grad=True)
    b = jg.tensor(b_values, requires_grad=True)
    getattr(jg, name)(a, b).sum().backward()
    # PyTorch's: only the input that loses a comparison gets none; NaN loses none
    loser = [1.0, 1.0, 1.0, 0.5, 0.0]
    winner = [1.0, 1.0, 1.0, 0.5, 1.0]
    assert a.grad.tolist() == (winner if name == "maximum" else loser)
    assert b.grad.tolist() == (loser if name == "maximum" else winner)


def test_mismatched_shapes_name_both():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        jg.ones((2, 3)) + jg.ones(4)


def test_float16_computes_in_float32():
    x = np.array([0.1, 1000.0, 3.3], dtype=np.float16)
    got = jg.exp(jg.from_numpy(x) / 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.exp(x.astype(np.float32) / 1000).astype(np.float16)
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("backend", ["jit", "reference"])
def test_gradient_of_x_to_the_zero_is_zero_also_at_zero(monkeypatch, backend):
    monkeypatch.setattr(config, "backend", backend)
    for exponent in (0.0, jg.tensor([0.0, 0.0])):
        x = jg.tensor([0.0, 3.0], requires_grad=True)
        (x**exponent).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]  # PyTorch's; b * x ** (b - 1) is 0 * inf at 0
    x = jg.tensor([0.0, 3.0], requires_grad=True)
    (x**2.0).sum().backward()
    assert x.grad.tolist() == [0.0, 6.0]


@pytest.mark.parametrize("backend", ["jit", "reference"])
def test_arctan2_gradient_is_zero_at_the_origin_and_exact_elsewhere(monkeypatch, backend):
    monkeypatch.setattr(config, "backend", backend)
    a_values, b_values = [0.0, 1.0, 0.5, -2.0], [0.0, 0.0, -2.0, 3.0]
    a = jg.tensor(a_values, requires_grad=True)
    b = jg.tensor(b_values, requires_grad=True)
    jg.arctan2(a, b).sum().backward()
    av, bv = np.array(a_values), np.array(b_values)
    with np.errstate(invalid="ignore"):
        r2 = av * av + bv * bv
        want_a, want_b = np.where(r2 == 0, 0, bv / r2), np.where(r2 == 0, 0, -av / r2)
    np.testing.assert_allclose(a.grad.numpy(), want_a, rtol=1e-15)  # PyTorch's: 0 at (0, 0)
    np.testing.assert_allclose(b.grad.numpy(), want_b, rtol=1e-15)


BOOLS = (np.array([True, False, True, False]), np.array([True, True, False, False]))


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "power", "add", "multiply"])
def test_bool_operands_give_numpy_result_dtypes(op):
    with np.errstate(all="ignore"):
        want = getattr(np, op)(*BOOLS)
    got = getattr(jg, op)(*map(jg.array, BOOLS))
    assert got.dtype.numpy == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("backend", ["jit", "reference"])
def test_square_of_bools_is_int8_as_numpy(monkeypatch, backend):
    monkeypatch.setattr(config, "backend", backend)
    want = np.square(BOOLS[0])
    got = jg.square(jg.array(BOOLS[0]))
    assert got.dtype.numpy == want.dtype and got.tolist() == want.tolist()


def test_bool_subtract_and_negative_raise_as_numpy():
    a, b = map(jg.array, BOOLS)
    with pytest.raises(TypeError, match="boolean subtract"):
        jg.subtract(a, b)
    with pytest.raises(TypeError, match="boolean subtract"):
        a.__sub__(True)
    with pytest.raises(TypeError, match="boolean negative"):
        jg.negative(a)
    assert (a - 1).tolist() == (BOOLS[0] - 1).tolist()  # with an int: integer arithmetic


@pytest.mark.parametrize("backend", ["jit", "reference"])
def test_relu_keeps_nan_as_pytorch_and_numpy_maximum(monkeypatch, backend):
    monkeypatch.setattr(config, "backend", backend)
    x = jg.tensor([np.nan, -1.0, 2.0, -0.0, 0.0], requires_grad=True)
    y = jg.relu(x)
    np.testing.assert_array_equal(y.numpy(), [np.nan, 0.0, 2.0, 0.0, 0.0])
    y.backward(jg.ones(5))
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0, 0.0, 0.0])


def test_quiet_ops_need_no_error_state_and_others_stay_silent():
    """Comparisons, integer arithmetic, max/min, bitwise ops and where raise no
    floating-point error on any values, so their direct calls leave numpy's error state
    alone: even under a user's ``errstate(all="raise")`` they raise nothing. Ops that can
    raise one (float overflow) stay as silent as the kernels."""
    f = jg.tensor([np.nan, np.inf, -np.inf, 0.0, 1e38], dtype=jg.float32)
    i = jg.tensor([2**62, -(2**62), 3, 0, 1], dtype=jg.int64)
    quiet = [
        lambda: f < f,
        lambda: f == 0.5,
        lambda: jg.maximum(f, 1.0),
        lambda: jg.minimum(f, f),
        lambda: jg.where(f > 0, f, -f),
        lambda: i * i + i - 7,
        lambda: (i & 6) | (i << 2),
        lambda: jg.logical_and(f, i),
    ]
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for _ in range(2):  # (the second call runs the remembered direct call)
            for op in quiet:
                op()
            overflowed = f * 1e10
            assert np.isinf(overflowed.numpy()[4])
        assert np.geterr()["over"] == "raise"
