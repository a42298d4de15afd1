"""The ufunc protocol of jitgrad's elementwise functions, against numpy: scalar operands,
keywords (out=, where=, dtype=, casting=), methods, and the functions numpy programs use."""

import math
import warnings

import numpy as np
import pytest
import torch

import jitgrad as jg
from jitgrad.ops.ufunc import UFUNCS

INF, NAN = math.inf, math.nan
# Operands every op accepts: ints for the integer-only ones, a float in (0, 1) elsewhere.
_INTEGER_ONLY = {
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "invert",
    "gcd",
    "lcm",
    "bitwise_count",
}
_NOT_NUMPY = {"relu", "sigmoid", "silu", "softplus", "erf", "frexp", "ldexp", "divmod"}


def _scalar_operands(name, nin):
    if name in _INTEGER_ONLY:
        return (3, 1)[:nin]
    if name == "ldexp":
        return (0.5, 3)
    return (0.5, 0.25)[:nin]


def _numpy_of(name):
    if name == "abs":
        return np.abs
    if name in ("isneginf", "isposinf", "sinc"):
        return getattr(np, name)
    return getattr(np, name, None)


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_every_ufunc_of_scalars_alone_gives_numpys_0d_result(name):
    fn = UFUNCS[name]
    args = _scalar_operands(name, fn.nin)
    got = fn(*args)
    expected = _numpy_of(name)
    if expected is None:  # jitgrad's own (relu, sigmoid...): the tensor op's value
        want = fn(*(jg.tensor(a) for a in args))
        assert got.shape == () and got.dtype is want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy())
        return
    want = expected(*args)
    for g, w in zip(*((x,) if fn.nout == 1 else x for x in (got, want)), strict=True):
        w = np.asarray(w)
        assert isinstance(g, jg.Tensor) and g.shape == () and g.dtype.numpy == w.dtype, name
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)


@pytest.mark.parametrize(
    "call, dtype",
    [
        (lambda: jg.sqrt(2.0), np.float64),
        (lambda: jg.exp(np.float32(0.5)), np.float32),
        (lambda: jg.add(1, 2), np.int64),
        (lambda: jg.maximum(2.0, 3.0), np.float64),
        (lambda: jg.where(True, 1.0, 2.0), np.float64),
        (lambda: jg.exp(np.float64(0.5)), np.float64),
    ],
)
def test_scalar_calls_follow_nep50(call, dtype):
    assert call().dtype.numpy == dtype and call().shape == ()


# -- keywords ---------------------------------------------------------------------------------
A = np.array([[-1.5, 2.0, -3.0], [4.0, -0.5, 6.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_out_writes_in_place_casting_and_broadcasting_as_numpy(dtype):
    a = A.astype(dtype)
    t = jg.tensor(a)
    assert jg.maximum(t, 0, out=t) is t
    np.testing.assert_array_equal(t.numpy(), np.maximum(a, 0))
    out = jg.zeros((2, 2, 3), dtype=jg.float64)
    jg.multiply(jg.tensor(a), 2, out=out)  # broadcast into out's shape, cast same_kind
    np.testing.assert_array_equal(out.numpy(), np.multiply(a, 2, out=np.zeros((2, 2, 3))))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        jg.add(jg.tensor(a), 1, out=jg.zeros(2))
    if dtype is not np.int64:
        with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
            jg.add(jg.tensor(a[0]), 1, out=jg.zeros(3, dtype=jg.int64))
    arr = np.zeros(3, dtype)
    assert jg.add(jg.tensor(a[0]), 1, out=arr) is arr
    np.testing.assert_array_equal(arr, a[0] + 1)


def test_where_keeps_outs_old_values_and_zeros_without_out():
    mask = A > 0
    out = jg.tensor(np.full_like(A, 7.0))
    jg.exp(jg.tensor(A), where=jg.tensor(mask), out=out)
    np.testing.assert_array_equal(out.numpy(), np.exp(A, where=mask, out=np.full_like(A, 7.0)))
    got = jg.sqrt(jg.tensor(A), where=mask)
    np.testing.assert_array_equal(got.numpy()[mask], np.sqrt(A[mask]))
    assert (got.numpy()[~mask] == 0).all()
    with pytest.raises(TypeError, match="bool"):
        jg.exp(jg.tensor(A), where=jg.tensor([1, 0, 1]))


@pytest.mark.parametrize(
    "fn, args, dtype",
    [
        ("add", (np.array([1, 2], np.int64), 1), np.float32),
        ("exp", (np.array([1, 2], np.int64),), np.float32),
        ("multiply", (np.array([1.5, 2.5]), 2), np.float32),
        ("add", (np.array([1.5, 2.5]), 2.25), np.float64),
    ],
)
def test_dtype_selects_numpys_loop(fn, args, dtype):
    got = getattr(jg, fn)(
        *(jg.tensor(a) if isinstance(a, np.ndarray) else a for a in args), dtype=dtype
    )
    want = getattr(np, fn)(*args, dtype=dtype)
    assert got.dtype.numpy == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
def test_casting_errors_are_numpys(casting):
    a32, a64 = np.ones(2, np.float32), np.ones(2, np.int64)
    for call in [
        lambda m, x, y: m.add(x, y, casting=casting),
        lambda m, x, y: m.add(x, y, dtype=np.int32, casting=casting),
    ]:
        try:
            want, error = call(np, a32, a64), None
        except TypeError as e:
            want, error = None, e
        if error is not None:
            with pytest.raises(TypeError):
                call(jg, jg.tensor(a32), jg.tensor(a64))
        else:
            got = call(jg, jg.tensor(a32), jg.tensor(a64))
            assert got.dtype.numpy == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match="casting must be one of"):
        jg.add(jg.tensor(a32), 1, casting="bad")


def test_out_records_like_an_in_place_operator():
    x = jg.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    h = x * 2
    jg.maximum(h, 0, out=h)  # h's old values feed its own backward
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 0.0])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        jg.exp(jg.ones(3), out=jg.ones(3, requires_grad=True))
    x.grad = None
    y = jg.exp(x, where=jg.tensor([True, False, True]))  # where= alone: differentiable
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [math.exp(-1.0), 0.0, math.exp(-3.0)])


def test_two_output_ufuncs_take_a_tuple_of_outs():
    q, r = jg.zeros(3, dtype=jg.int64), jg.zeros(3, dtype=jg.int64)
    assert jg.divmod(jg.tensor([7, -7, 5]), 2, out=(q, r)) == (q, r)
    assert q.tolist() == [3, -4, 2] and r.tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="one entry per ufunc output"):
        jg.modf(jg.tensor([1.5]), out=(jg.zeros(1),))


# -- methods ----------------------------------------------------------------------------------
M = np.array([[1.0, -2.0, 3.0, 0.5], [4.0, 5.0, -6.0, 2.0], [0.5, 1.0, 2.0, -1.0]])


@pytest.mark.parametrize(
    "name",
    [
        "add",
        "multiply",
        "maximum",
        "minimum",
        "subtract",
        "logical_and",
        "logical_or",
        "logical_xor",
    ],
)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"axis": 1},
        {"axis": None, "keepdims": True},
        {"axis": 1, "initial": 1.0},
        {"axis": 0, "where": M > 0, "initial": 3.0},
    ],
)
def test_reduce_is_numpys(name, kwargs):
    if name in ("subtract",) and kwargs.get("axis", 0) is None:
        pytest.skip("numpy refuses to reduce subtract over several axes")
    if name.startswith("logical") and "initial" in kwargs:
        kwargs = {**kwargs, "initial": True}
    want = getattr(np, name).reduce(M, **kwargs)
    kwargs = {k: jg.tensor(v) if k == "where" else v for k, v in kwargs.items()}
    got = getattr(jg, name).reduce(jg.tensor(M), **kwargs)
    assert got.dtype.numpy == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want)


def test_reduce_methods_attributes_and_errors():
    i8 = np.array([[100, 100], [3, 4]], dtype=np.int8)
    assert jg.add.reduce(jg.tensor(i8)).dtype.numpy == np.add.reduce(i8).dtype
    got = jg.add.reduce(jg.tensor(i8), dtype=np.int8)
    np.testing.assert_array_equal(got.numpy(), np.add.reduce(i8, dtype=np.int8))
    with pytest.raises(ValueError, match="does not have an identity"):
        jg.maximum.reduce(jg.tensor(M), where=jg.tensor(M > 0))
    with pytest.raises(ValueError, match="only supported for binary functions"):
        jg.exp.reduce(jg.tensor(M))
    for name in ["add", "multiply", "maximum", "logical_and", "bitwise_or", "exp", "divmod"]:
        fn, ref = getattr(jg, name), getattr(np, name)
        assert (fn.nin, fn.nout, fn.nargs, fn.identity, fn.__name__) == (
            ref.nin,
            ref.nout,
            ref.nargs,
            ref.identity,
            ref.__name__,
        )


def test_reduce_add_and_multiply_are_differentiable():
    x = jg.tensor(M, requires_grad=True)
    (jg.add.reduce(x, axis=1).sum() + jg.multiply.reduce(x, axis=0).sum()).backward()
    xt = torch.tensor(M, requires_grad=True)
    (xt.sum(1).sum() + xt.prod(0).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("name", ["add", "multiply", "maximum"])
@pytest.mark.parametrize("axis", [0, 1])
def test_accumulate_is_numpys(name, axis):
    for values in (M, M.astype(np.int64)):
        want = getattr(np, name).accumulate(values, axis=axis)
        got = getattr(jg, name).accumulate(jg.tensor(values), axis=axis)
        assert got.dtype.numpy == want.dtype
        np.testing.assert_allclose(got.numpy(), want)


@pytest.mark.parametrize("name", ["add", "maximum", "subtract"])
@pytest.mark.parametrize("indices, axis", [([0, 2], 1), ([0, 3, 1], 1), ([2, 0, 1], 0)])
def test_reduceat_is_numpys(name, indices, axis):
    want = getattr(np, name).reduceat(M, indices, axis=axis)
    got = getattr(jg, name).reduceat(jg.tensor(M), indices, axis=axis)
    assert got.dtype.numpy == want.dtype
    np.testing.assert_allclose(got.numpy(), want)
    with pytest.raises(IndexError):
        getattr(jg, name).reduceat(jg.tensor(M), [0, 9], axis=axis)


def test_outer_is_numpys_and_differentiable():
    a, b = np.array([1.0, 2.0, 3.0]), M[:2, :2]
    for name in ["add", "subtract", "multiply", "maximum"]:
        want = getattr(np, name).outer(a, b)
        np.testing.assert_array_equal(
            getattr(jg, name).outer(jg.tensor(a), jg.tensor(b)).numpy(), want
        )
    x = jg.tensor(a, requires_grad=True)
    jg.multiply.outer(x, jg.tensor([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [11.0, 11.0, 11.0]


def test_at_is_unbuffered_and_in_place():
    for name, values in [("add", 1.0), ("subtract", 2.0), ("multiply", 3.0), ("maximum", 0.5)]:
        a = np.arange(5.0)
        t = jg.tensor(a)
        getattr(np, name).at(a, [0, 0, 3], values)
        assert getattr(jg, name).at(t, [0, 0, 3], values) is None
        np.testing.assert_array_equal(t.numpy(), a)
    t = jg.tensor(np.arange(5.0))
    jg.negative.at(t, [1, 1])
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    via_numpy = jg.zeros(3)
    np.add.at(via_numpy, jg.tensor([2, 2]), jg.tensor([1.0, 2.0]))
    assert via_numpy.tolist() == [0.0, 0.0, 3.0]


def test_add_at_records_a_scatter_add():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = jg.tensor([1.0, 1.0], requires_grad=True)
    y = x * 1
    jg.add.at(y, [0, 0], v * 2)
    assert y.tolist() == [5.0, 2.0, 3.0]
    (y * jg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and v.grad.tolist() == [2.0, 2.0]


# -- new functions ----------------------------------------------------------------------------
X = np.array([-2.0, -0.0, 0.0, 0.3, 1.5, INF, -INF, NAN])
Y = np.array([1.0, -1.0, 0.0, 2.0, -0.5, 3.0, INF, 1.0])
UNARY = [
    "exp2",
    "cbrt",
    "deg2rad",
    "rad2deg",
    "degrees",
    "radians",
    "fabs",
    "sinc",
    "isinf",
    "isneginf",
    "isposinf",
    "signbit",
    "spacing",
    "arcsinh",
    "nan_to_num",
]
BINARY = [
    "hypot",
    "copysign",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "fmod",
    "fmax",
    "fmin",
    "heaviside",
    "float_power",
    "mod",
    "true_divide",
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_new_functions_match_numpy_with_inf_and_nan(name, dtype):
    args = (X.astype(dtype),) if name in UNARY else (X.astype(dtype), Y.astype(dtype))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(*args)
        got = getattr(jg, name)(*(jg.tensor(a) for a in args))
    assert got.dtype.numpy == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-6 if dtype is np.float32 else 1e-14)


@pytest.mark.parametrize("name", ["arccosh", "ldexp", "frexp", "modf"])
def test_other_new_functions_match_numpy(name):
    x = np.array([1.0, 1.5, 8.0, -2.5, 0.75, INF, -0.0])
    args = {"arccosh": (np.abs(x) + 1,), "ldexp": (x, np.arange(7) - 3)}.get(name, (x,))
    want = getattr(np, name)(*args)
    got = getattr(jg, name)(*(jg.tensor(a) for a in args))
    for g, w in zip(
        *((v,) if name in ("arccosh", "ldexp") else v for v in (got, want)), strict=True
    ):
        assert g.dtype.numpy == w.dtype
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-15)
        assert (np.signbit(g.numpy()) == np.signbit(w)).all()


def test_array_api_spellings_are_the_same_ufuncs():
    pairs = {
        "acos": "arccos",
        "asin": "arcsin",
        "atan": "arctan",
        "atan2": "arctan2",
        "acosh": "arccosh",
        "asinh": "arcsinh",
        "atanh": "arctanh",
        "pow": "power",
        "bitwise_invert": "invert",
        "bitwise_left_shift": "left_shift",
        "bitwise_right_shift": "right_shift",
        "mod": "remainder",
        "true_divide": "divide",
        "absolute": "abs",
    }
    for alias, name in pairs.items():
        assert getattr(jg, alias) is getattr(jg, name), alias


P = np.array([-1.7, -0.4, 0.3, 1.2, 2.5])
Q = np.array([0.5, -1.1, 0.8, -2.0, 1.3])
GRADIENTS = [
    ("hypot", 2, torch.hypot),
    ("copysign", 2, torch.copysign),
    ("logaddexp", 2, torch.logaddexp),
    ("logaddexp2", 2, torch.logaddexp2),
    ("fmod", 2, torch.fmod),
    ("fmax", 2, torch.fmax),
    ("fmin", 2, torch.fmin),
    ("exp2", 1, torch.exp2),
    ("cbrt", 1, lambda x: torch.sign(x) * x.abs() ** (1 / 3)),
    ("deg2rad", 1, torch.deg2rad),
    ("rad2deg", 1, torch.rad2deg),
    ("sinc", 1, torch.sinc),
    ("arcsinh", 1, torch.asinh),
    ("fabs", 1, torch.abs),
    ("nan_to_num", 1, torch.nan_to_num),
    ("float_power", 2, torch.float_power),
]


@pytest.mark.parametrize("name, nin, reference", GRADIENTS)
def test_new_functions_gradients_match_torch(name, nin, reference):
    args = (P, Q)[:nin] if name != "float_power" else (np.abs(P), Q)
    xs = [jg.tensor(a, requires_grad=True) for a in args]
    ts = [torch.tensor(a, requires_grad=True) for a in args]
    getattr(jg, name)(*xs).sum().backward()
    reference(*ts).sum().backward()
    for x, t in zip(xs, ts, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_unimplemented_numpy_functions_say_so_once_under_debug(monkeypatch):
    from jitgrad._config import config
    from jitgrad.ops import numpy_protocol

    monkeypatch.setattr(config, "debug", 1)
    numpy_protocol._report_numpy_fallback.cache_clear()
    with pytest.warns(UserWarning, match="numpy.packbits.*without gradients"):
        np.packbits(jg.tensor([1, 0, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.packbits(jg.tensor([1, 0, 1]))  # once per function
        np.median(jg.tensor([1.0, 2.0]))  # jitgrad's own: nothing to say
    numpy_protocol._report_numpy_fallback.cache_clear()
