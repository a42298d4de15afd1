"""Sums, products and means of integers and bools: numpy's values and dtypes, each element
widened to the accumulator's dtype as it is read, with no widened copy of the operand."""

import contextlib
import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy_oracle import shapes_and_axes

import jitgrad as jg
from jitgrad.jit import reduction

INTEGERS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@st.composite
def strided_operands(draw):
    """(array, axis): a view of full-range values, each dimension stepped (possibly
    backwards) and the dimensions permuted, and the axis of a reduction over it."""
    shape, axis = draw(shapes_and_axes(max_dims=3, max_side=5))
    steps = draw(st.tuples(*(st.sampled_from([1, 2, -1, -3]) for _ in shape)))
    base_shape = tuple(n * abs(s) for n, s in zip(shape, steps))
    base = draw(hnp.arrays(draw(st.sampled_from(INTEGERS)), base_shape))
    view = base[tuple(slice(None, None, s) for s in steps)]
    return view.transpose(draw(st.permutations(range(len(shape))))), axis


@contextlib.contextmanager
def numpy_tier(work: int):
    """Eager reductions of small operands on numpy (``work`` > 0) or on kernels (0)."""
    saved, jg.config.numpy_tier_work = jg.config.numpy_tier_work, work
    try:
        yield
    finally:
        jg.config.numpy_tier_work = saved


def assert_same(result, expected, exact: bool, scale: float = 1.0):
    assert result.dtype.name == expected.dtype.name and result.shape == expected.shape
    if exact:
        np.testing.assert_array_equal(result.numpy(), expected)
    else:  # float64 sums of the same values in another order
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12, atol=1e-12 * scale)


@settings(max_examples=30, deadline=None)
@given(
    case=strided_operands(),
    keepdims=st.booleans(),
    tier=st.sampled_from([0, 10**9]),
)
def test_integer_and_bool_reductions_match_numpy(case, keepdims, tier):
    a, axis = case
    t = jg.from_numpy(a)
    scale = float(np.abs(a.astype(np.float64)).max(initial=1.0))
    line = axis if isinstance(axis, int) else None
    with numpy_tier(tier):
        for name, exact in (("sum", True), ("prod", True), ("mean", False)):
            expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
            assert_same(getattr(jg, name)(t, axis=axis, keepdims=keepdims), expected, exact, scale)
        assert_same(jg.cumsum(t, axis=line), np.cumsum(a, axis=line), True)


def test_sums_in_a_given_dtype_read_integers_as_they_are():
    """A dtype that holds every value is accumulated in; another is cast to first (int64
    into uint64 wraps, as numpy's)."""
    a = np.array([[-128, 127, 5], [-1, 0, 100]], dtype=np.int8)
    for dtype in ("int8", "int16", "int64", "uint64", "float32", "float64"):
        for axis in (None, 0, 1):
            with numpy_tier(0):
                result = jg.sum(jg.from_numpy(a), axis=axis, dtype=dtype)
            assert_same(result, np.sum(a, axis=axis, dtype=dtype), exact=True)


def test_traced_integer_sums_and_means():
    a = np.arange(-60, 60, dtype=np.int8).reshape(12, 10)
    step = jg.jit(lambda t: jg.sum(t, axis=0) + jg.mean(t) + jg.sum(t > 0))
    expected = np.sum(a, axis=0) + np.mean(a) + np.sum(a > 0)
    for _ in range(3):  # traced, then replayed
        assert_same(step(jg.tensor(a)), expected, exact=False, scale=60.0)


def test_an_integer_reduction_reads_its_operand_without_a_widened_copy(monkeypatch):
    monkeypatch.setattr(jg.config, "pool_bytes", 0)  # fresh buffers only: all traced
    jg.empty_cache()
    n = 1 << 22
    a = np.arange(n, dtype=np.int8)
    grid = a.reshape(1 << 11, 1 << 11)
    t, m = jg.from_numpy(a), jg.from_numpy(grid)
    # The kernel takes int8 in and gives int64 out.
    assert reduction.reduce("sum", t, (0,), False, jg.int64) is not None
    reductions = {
        "sum": (lambda: jg.sum(t), np.sum(a)),
        "sum over rows": (lambda: jg.sum(m, axis=0), np.sum(grid, axis=0)),
        "sum of rows": (lambda: jg.sum(m, axis=1), np.sum(grid, axis=1)),
        "strided sum": (lambda: jg.sum(m[:, ::2]), np.sum(grid[:, ::2])),
        "mean": (lambda: jg.mean(t), np.mean(a)),
        "prod": (lambda: jg.prod(t), np.prod(a)),
    }
    for name, (reduce, expected) in reductions.items():
        assert_same(reduce(), expected, exact=name != "mean", scale=128.0 * n)  # (compiles)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            reduce()
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
        # An int64 copy would be 8 bytes per element; an int8 one, 1.
        assert peak < n / 8, f"{name}: {peak / n:.2f} bytes per element at peak"
