"""A trace runs its launches whose kernels are not compiled on numpy: every launch of a
plan computes with numpy what its kernel computes, and the first (traced) call of a jitted
function gives what later calls give."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.jit import numpy_launch
from jitgrad.jit.lowering import Launch

FLOATS = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}


def _operands(dtype, shape, layout, rng):
    if dtype == "bool":
        data = rng.standard_normal(shape) > 0
    elif dtype in ("int32", "int64"):
        data = rng.integers(-9, 9, shape).astype(dtype)
    else:
        data = rng.standard_normal(shape).astype(dtype)
    x = jg.asarray(np.ascontiguousarray(data.T) if layout == "transposed" else data)
    return x.T if layout == "transposed" else x


FUNCTIONS = {
    "polynomial": lambda a, b: a * a + 0.5 * b - a * b,
    "transcendental": lambda a, b: jg.tanh(0.7 * a + 0.1) * jg.sigmoid(b) + jg.exp(-a * a),
    "division and a comparison": lambda a, b: jg.where(a > b, a / (b * b + 1), -a),
    "row broadcast": lambda a, b: a * b[..., :1] + b.sum(axis=-1, keepdims=True),
}
BOOLEAN = lambda a, b: jg.where(a, ~b, a & b) | (a ^ b)  # noqa: E731


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(FUNCTIONS)),
    dtype=st.sampled_from(["float16", "float32", "float64", "int32", "int64", "bool"]),
    shape=st.sampled_from([(5,), (3, 4), (2, 3, 5)]),
    layout=st.sampled_from(["contiguous", "transposed"]),
    seed=st.integers(0, 2**16),
)
def test_each_launch_of_a_plan_computes_on_numpy_what_its_kernel_computes(
    name, dtype, shape, layout, seed
):
    rng = np.random.default_rng(seed)
    a, b = (_operands(dtype, shape, layout, rng) for _ in range(2))
    step = jg.jit(BOOLEAN if dtype == "bool" else FUNCTIONS[name])
    traced = step(a, b).numpy().copy()
    replayed = step(a, b).numpy()  # the plan's own kernels
    # (a plan may hold none: its launches fused into a row kernel)
    launches = [fn for fn, _ in next(iter(step.plans.values())).steps if isinstance(fn, Launch)]
    for launch in launches:
        launch()  # the kernel's outputs
        by_kernel = [out.copy() for out in launch.outs]
        numpy_launch.evaluate(launch)
        for got, expected, out_dtype in zip(launch.outs, by_kernel, launch.out_dtypes):
            _close(got, expected, out_dtype)
    _close(traced, replayed, traced.dtype.name)


def _close(got, expected, dtype):
    if dtype in FLOATS:
        if dtype == "float16" and got.dtype == np.uint16:  # (the bits)
            got, expected = got.view(np.float16), expected.view(np.float16)
        np.testing.assert_allclose(got, expected, rtol=FLOATS[dtype], atol=FLOATS[dtype])
    else:
        np.testing.assert_array_equal(got, expected)


def test_a_trace_compiles_no_kernel_its_plan_fuses_away():
    from jitgrad.jit import cache

    # a formula no other test runs: its unfused launches are new kernels
    def f(x):
        y = jg.cosh(x * 0.37 + 0.11)
        return jg.arcsinh(y * 0.53 - 0.29)

    x = jg.asarray(np.linspace(-1.0, 1.0, 50))
    step = jg.jit(f)
    before = cache.stats.compiled
    first = step(x).numpy().copy()
    assert cache.stats.compiled == before  # the trace ran its launches on numpy
    second = step(x).numpy()
    assert cache.stats.compiled == before + 1  # the first replay: the one fused kernel
    np.testing.assert_allclose(first, np.arcsinh(np.cosh(x.numpy() * 0.37 + 0.11) * 0.53 - 0.29))
    np.testing.assert_allclose(second, first, rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_in_place_update_traced_on_numpy(dtype):
    w = jg.asarray(np.arange(6.0, dtype=dtype).reshape(2, 3))

    @jg.jit
    def step(g):
        w.mul_(0.5).add_(g)
        return w.sum()

    g = jg.asarray(np.ones((2, 3), dtype))
    expected = np.arange(6.0).reshape(2, 3)
    for _ in range(3):
        total = step(g)
        expected = expected * 0.5 + 1
        np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(total.item(), expected.sum(), rtol=1e-6)
