"""The loop kernels of the convolutions and max pooling (jitgrad/jit/conv_kernels.py)
compute what the numpy passes of the reference backend compute: values, gradients, the
winning taps of ties and NaNs, and a NaN gradient spread over its window."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad._config import config
from jitgrad.jit import conv_kernels
from jitgrad.ops import convolution

GEOMETRIES = [
    dict(stride=1, padding=1, dilation=1),
    dict(stride=2, padding=0, dilation=1),
    dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1)),
]


def on_both_backends(run):
    """``run()``'s results with the kernels and with the reference backend's numpy."""
    results = {}
    for backend in ("jit", "reference"):
        previous, config.backend = config.backend, backend
        try:
            results[backend] = run()
        finally:
            config.backend = previous
    return results["jit"], results["reference"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("image", [(9, 8), (20, 19)])  # (20, 19): products by sample
def test_convolutions_and_their_gradients_equal_the_numpy_passes(dtype, geometry, groups, image):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, *image)).astype(dtype)
    w = rng.standard_normal((6, 4 // groups, 3, 2)).astype(dtype)
    b = rng.standard_normal(6).astype(dtype)

    def run():
        leaves = [jg.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = F.conv2d(*leaves, groups=groups, **geometry)
        up = F.conv_transpose2d(y, leaves[1], groups=groups, stride=geometry["stride"])
        (y.sum() + (up * up).sum()).backward()
        return [y.numpy(), up.numpy(), *(leaf.grad.numpy() for leaf in leaves)]

    rtol = 1e-4 if dtype == np.float32 else 1e-10
    for got, expected in zip(*on_both_backends(run)):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "geometry",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=(2, 3), stride=1, dilation=(1, 2)),
    ],
)
@pytest.mark.parametrize("image", [(7, 8), (8, 10), (5, 64)])  # (windows in pairs too)
def test_max_pooling_and_its_gradient_equal_the_numpy_passes(dtype, geometry, image):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (2, 3, *image)).astype(dtype)  # many ties
    h, w = image
    for n, c, i, j in [(0, 0, 1, 1), (1, 2, 4, 5), (1, 2, 4, 6), (1, 1, 2, 3), (1, 1, 3, 3)]:
        x[n, c, i % h, j % w] = np.nan  # (neighbours in a row and in a column)
    g = rng.standard_normal((2, 3, *image)).astype(dtype)

    def run():
        leaf = jg.tensor(x, requires_grad=True)
        y, indices = F.max_pool2d(leaf, return_indices=True, **geometry)
        grad = g[..., : y.shape[2], : y.shape[3]].copy()
        grad[0, 1, 0, 0] = np.nan  # reaches the whole window, on both paths
        y.backward(jg.tensor(grad))
        return y.numpy(), indices.numpy(), leaf.grad.numpy()

    (y, indices, grad), (y_ref, indices_ref, grad_ref) = on_both_backends(run)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(indices, indices_ref)
    # (overlapping windows add up in another order: rounding apart; NaNs where they are)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-6, atol=1e-6)
    assert np.isnan(grad_ref).sum() > 1  # the NaN gradient reached its whole window


# (two or one windows a row: pairs meeting in one flat loop, unless a last row is left)
@pytest.mark.parametrize("image", [(8, 16), (8, 4), (4, 2), (7, 4), (5, 2)])
def test_max_pooling_over_many_planes_equals_the_numpy_passes(image):
    """Enough planes that the pair kernels go through them in several blocks."""
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (40, 30, *image)).astype(np.float32)
    x.reshape(-1)[::101] = np.nan
    g = rng.standard_normal((40, 30, image[0] // 2, image[1] // 2)).astype(np.float32)

    def run():
        leaf = jg.tensor(x, requires_grad=True)
        y, indices = F.max_pool2d(leaf, 2, return_indices=True)
        y.backward(jg.tensor(g))
        return y.numpy(), indices.numpy(), leaf.grad.numpy()

    for got, expected in zip(*on_both_backends(run)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("groups", [1, 2])
def test_products_by_sample_equal_pytorch(groups):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((5, 4, 18, 17), (6, 4 // groups, 3, 3), (6,))]
    g = rng.standard_normal((5, 6, 18, 17))
    ours = [jg.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    assert convolution.sample_products(
        convolution.Geometry((3, 3), *[(1, 1)] * 4, (18, 17), (18, 17))
    )
    y = F.conv2d(*ours, padding=1, groups=groups)
    ty = torch.nn.functional.conv2d(*theirs, padding=1, groups=groups)
    y.backward(jg.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    for leaf, twin in zip(ours, theirs):
        np.testing.assert_allclose(leaf.grad.numpy(), twin.grad.numpy(), rtol=1e-10, atol=1e-10)
    up = F.conv_transpose2d(jg.tensor(g), ours[1].detach(), groups=groups, padding=1)
    tup = torch.nn.functional.conv_transpose2d(
        torch.tensor(g), theirs[1].detach(), groups=groups, padding=1
    )
    np.testing.assert_allclose(up.numpy(), tup.numpy(), rtol=1e-10, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(
    lead=st.lists(st.integers(0, 3), min_size=0, max_size=2),
    image=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    before=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    after=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    dtype=st.sampled_from([np.float32, np.float64]),
    fill=st.sampled_from([0, -np.inf, 2.5]),
)
def test_padding_and_cutting_it_off_equal_numpys(lead, image, before, after, dtype, fill):
    x = np.arange(np.prod(lead + list(image)), dtype=dtype).reshape(*lead, *image)
    widths = [(0, 0)] * len(lead) + list(zip(before, after))
    expected = np.pad(x, widths, constant_values=fill)
    padded = np.full(expected.shape, np.nan, dtype)
    conv_kernels.pad(x, padded, before, fill)
    np.testing.assert_array_equal(padded, expected)
    cut = np.full(x.shape, np.nan, dtype)
    conv_kernels.crop(padded, cut, before)
    np.testing.assert_array_equal(cut, x)


@settings(max_examples=60, deadline=None)
@given(
    image=st.tuples(st.integers(1, 40), st.integers(1, 24)),
    stride=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    before=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    after=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    layout=st.sampled_from(["sample", "tap", "window"]),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_packing_and_adding_windows_back_equal_numpys_taps(
    image, stride, dilation, before, after, layout, dtype
):
    """im2col and col2im, with windows narrower and wider than a block gathered whole,
    in the three column layouts, padded or not, against one numpy slice a tap of the image
    padded by np.pad (col2im: of a zero-padded image, cut out)."""
    kernel = (3, 2)
    padded_size = [n + b + a for n, b, a in zip(image, before, after)]
    out = tuple(
        (n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(padded_size, kernel, stride, dilation)
    )
    if min(out) < 1:
        return
    geom = convolution.Geometry(kernel, stride, dilation, before, after, image, out)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, *image)).astype(dtype)
    padded = np.pad(x, [(0, 0), (0, 0), *zip(before, after)])
    buffer = np.full(2 * 3 * 6 * out[0] * out[1], np.nan, dtype)
    _, cols = convolution._columns(buffer, 3, geom, 2, layout)
    conv_kernels.pack(x, cols, stride, dilation, before, after)
    expected = np.empty(cols.shape, dtype)
    for i, j in geom.offsets():
        expected[:, :, i, j] = convolution.window(padded, geom, i, j)
    np.testing.assert_array_equal(cols, expected)
    added = np.ones_like(x)
    conv_kernels.scatter(cols, added, stride, dilation, before, after)
    want = np.ones_like(padded)
    for i, j in geom.offsets():
        convolution.window(want, geom, i, j)[...] += expected[:, :, i, j]
    want = convolution.interior(want, geom)
    # (a padded plane sums its taps before the image's value: rounding apart)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(added, want, rtol=tol, atol=tol)
