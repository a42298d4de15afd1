"""Reduction kernels (sum, max, min over axes) against numpy, over layouts and dtypes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
from jitgrad.jit import reduction


@st.composite
def operands(draw):
    """An array, a strided view of it (permuted, stepped, flipped) and axes to reduce."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=7))
    base = np.random.default_rng(draw(st.integers(0, 99))).standard_normal(shape).astype(dtype)
    order = draw(st.permutations(range(len(shape))))
    steps = tuple(draw(st.sampled_from([1, 2, -1])) for _ in shape)
    axes = draw(st.sets(st.integers(0, len(shape) - 1)))
    return base, tuple(order), steps, tuple(sorted(axes))


def view(x, order, steps):
    x = x.permute(*order) if hasattr(x, "permute") else x.transpose(order)
    return x[tuple(slice(None, None, s) for s in steps)]


@settings(max_examples=80, deadline=None)
@given(case=operands(), kind=st.sampled_from(["sum", "max", "min"]), keepdims=st.booleans())
def test_reductions_match_numpy_over_layouts(case, kind, keepdims):
    base, order, steps, axes = case
    expected = getattr(np, kind)(view(base, order, steps), axis=axes, keepdims=keepdims)
    got = getattr(jg, kind)(view(jg.tensor(base), order, steps), axis=axes, keepdims=keepdims)
    assert got.shape == expected.shape and got.dtype.numpy == expected.dtype
    tol = 1e-5 if base.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), expected, rtol=tol, atol=tol)


def test_layouts_that_merge_use_the_kernel_and_others_fall_back():
    assert reduction._describe((64, 10), (10, 1), (1,)) == ((1, 64, 1, 10), (0, 10, 0, 1))
    # A transposed operand merges its reduced dimensions like a contiguous one.
    assert reduction._describe((5, 6), (1, 5), (0, 1)) == ((1, 1, 1, 30), (0, 0, 0, 1))
    # Three kept dimensions that cannot merge: numpy reduces.
    assert reduction._describe((2, 3, 4, 5), (60, 1, 15, 3), (3,)) is None
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    t = jg.tensor(x).permute(0, 2, 1, 3)
    np.testing.assert_allclose(jg.sum(t, axis=3).numpy(), x.transpose(0, 2, 1, 3).sum(axis=3))


@pytest.mark.parametrize("kind", ["max", "min"])
def test_nan_wins_in_max_and_min(kind):
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], dtype=np.float32)
    for axis in (0, 1, None):
        np.testing.assert_array_equal(
            getattr(jg, kind)(jg.tensor(x), axis=axis).numpy(), getattr(np, kind)(x, axis=axis)
        )


def test_long_sums_stay_accurate():
    # Naive float32 accumulation of 2^20 values of 0.1 drifts by ~1%; blocked float64 does not.
    x = np.full(1 << 20, 0.1, dtype=np.float32)
    got = jg.sum(jg.tensor(x)).item()
    assert abs(got - 0.1 * (1 << 20)) / (0.1 * (1 << 20)) < 1e-5


def test_reductions_replay_inside_a_jitted_step():
    @jg.jit
    def stats(x):
        doubled = x * 2
        shifted = doubled + 1  # fused with the line above: doubled is kept for the sum
        return jg.sum(doubled, axis=0), jg.max(shifted, axis=1)

    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((4, 6)).astype(np.float32)
        total, top = stats(jg.tensor(x))
        np.testing.assert_allclose(total.numpy(), (2 * x).sum(0), rtol=1e-6)
        np.testing.assert_array_equal(top.numpy(), (2 * x + 1).max(1))


# Views of a (4, 200000) array whose reduced runs do not have unit stride, each with the
# axis it is reduced over: a step, a flip, every other column, a transpose (whose rows
# numpy and the kernel add up one after another) and a step in both dimensions (runs that
# do not merge).
STRIDED_VIEWS = {
    "step": (lambda a: a.reshape(-1)[::2], None),
    "flip": (lambda a: a.reshape(-1)[::-1], None),
    "columns": (lambda a: a[:, ::2], 1),
    "transposed": (lambda a: a.reshape(-1, 4).T, 1),
    "both": (lambda a: a[::2, ::3], None),
}


@pytest.mark.parametrize("view_name", STRIDED_VIEWS)
@pytest.mark.parametrize("name", ["sum", "mean", "var", "std", "logsumexp"])
def test_float32_reductions_of_strided_views_are_as_accurate_as_numpy(name, view_name):
    # Serial float32 accumulation of 10^5 values near 0.1 drifts by ~1e-3 relative;
    # pairwise or float64 sums stay near 1e-7.
    make_view, axis = STRIDED_VIEWS[view_name]
    base = (0.1 + 0.01 * np.random.default_rng(6).random((4, 200_000))).astype(np.float32)
    a = make_view(base)
    if name == "logsumexp":
        exact = np.log(np.exp(a.astype(np.float64)).sum(axis))
        numpy_error = np.abs(np.log(np.exp(a).sum(axis)) - exact)
    else:
        exact = getattr(np, name)(a.astype(np.float64), axis=axis)
        numpy_error = np.abs(getattr(np, name)(a, axis=axis) - exact)
    got = getattr(jg, name)(make_view(jg.tensor(base)), axis=axis).numpy()
    assert got.dtype == np.float32
    # A few float32 ulps of slack: numpy may be exact by luck.
    assert np.all(np.abs(got - exact) <= 2 * numpy_error + 4e-7 * np.abs(exact))


def test_sums_of_broadcast_runs_are_as_accurate_as_numpy():
    a = np.broadcast_to(np.full((3, 1), 0.1, np.float32), (3, 100_001))  # strides (4, 0)
    got = jg.sum(jg.full((3, 1), 0.1, dtype=jg.float32).expand(3, 100_001), axis=1)
    np.testing.assert_allclose(a.sum(1), 10000.1, rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), 10000.1, rtol=1e-6)
