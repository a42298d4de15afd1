"""Pooling (max, average, adaptive average and max; functions and layers) against PyTorch:
values, indices and gradients over kernel sizes, strides, paddings, dilations, ceil_mode
and adaptive output sizes, in float32 and float64; ties and NaN as PyTorch picks them;
second derivatives; adaptive pools under jg.jit."""

import numpy as np
import pytest
import torch

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

TF = torch.nn.functional
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def against_torch(ours, theirs, shape, dtype=np.float64, seed=0, **kwargs):
    """Values, indices (with return_indices) and the input's gradient of ``ours`` and
    ``theirs`` on one random input of ``shape``."""
    rng = np.random.default_rng(seed)
    array = rng.standard_normal(shape).astype(dtype)
    x, tx = jg.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)
    y, expected = ours(x, **kwargs), theirs(tx, **kwargs)
    if kwargs.get("return_indices"):
        (y, indices), (expected, expected_indices) = y, expected
        assert indices.dtype == jg.int64
        np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    assert y.shape == tuple(expected.shape) and y.dtype.numpy == dtype
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), **tol)
    g = rng.standard_normal(expected.shape).astype(dtype)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **tol)


MAX_POOL2D = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, return_indices=True)),
    (
        (2, 3, 9, 8),
        dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 0), dilation=2, return_indices=True),
    ),
    ((1, 2, 5, 5), dict(kernel_size=2, stride=1)),  # overlapping windows
    ((3, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),  # unbatched
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kwargs", MAX_POOL2D)
def test_max_pool2d_matches_pytorch(shape, kwargs, dtype):
    against_torch(F.max_pool2d, TF.max_pool2d, shape, dtype, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 9), dict(kernel_size=2, ceil_mode=True, return_indices=True)),
        ((2, 3, 10), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
        ((3, 8), dict(kernel_size=4)),
    ],
)
def test_max_pool1d_matches_pytorch(shape, kwargs, dtype):
    against_torch(F.max_pool1d, TF.max_pool1d, shape, dtype, **kwargs)


AVG_POOL2D = [
    ((2, 3, 8, 8), dict(kernel_size=2)),
    ((2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (
        (2, 3, 7, 6),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    ),
    ((2, 3, 7, 6), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), divisor_override=5)),
    ((3, 6, 6), dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kwargs", AVG_POOL2D)
def test_avg_pool2d_matches_pytorch(shape, kwargs, dtype):
    against_torch(F.avg_pool2d, TF.avg_pool2d, shape, dtype, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, kwargs",
    [
        (
            (2, 3, 9),
            dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        ),
        ((3, 8), dict(kernel_size=2)),
    ],
)
def test_avg_pool1d_matches_pytorch(shape, kwargs, dtype):
    against_torch(F.avg_pool1d, TF.avg_pool1d, shape, dtype, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, size",
    [
        ((2, 3, 8, 6), (4, 3)),
        ((2, 3, 7, 6), (3, 4)),
        ((2, 3, 8, 6), (4, None)),
        ((3, 5, 5), 1),
        ((1, 2, 3, 3), 5),
    ],
)
def test_adaptive_avg_pool2d_matches_pytorch(shape, size, dtype):
    against_torch(F.adaptive_avg_pool2d, TF.adaptive_avg_pool2d, shape, dtype, output_size=size)


ADAPTIVE_SIZES_2D = [
    ((2, 3, 8, 6), (4, 3)),  # tiling windows
    ((2, 3, 7, 6), (3, 4)),  # overlapping windows of uneven sizes
    ((2, 3, 8, 6), (4, None)),
    ((3, 5, 5), 1),  # unbatched
    ((1, 2, 3, 3), 5),  # more windows than elements
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, size", ADAPTIVE_SIZES_2D)
def test_adaptive_max_pool2d_matches_pytorch(shape, size, dtype):
    for return_indices in (False, True):
        against_torch(
            F.adaptive_max_pool2d,
            TF.adaptive_max_pool2d,
            shape,
            dtype,
            output_size=size,
            return_indices=return_indices,
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, size", [((2, 3, 8), 4), ((2, 3, 7), 3), ((3, 5), 7), ((2, 2, 9), (2,))]
)
def test_adaptive_1d_pools_match_pytorch(shape, size, dtype):
    against_torch(F.adaptive_avg_pool1d, TF.adaptive_avg_pool1d, shape, dtype, output_size=size)
    for return_indices in (False, True):
        against_torch(
            F.adaptive_max_pool1d,
            TF.adaptive_max_pool1d,
            shape,
            dtype,
            output_size=size,
            return_indices=return_indices,
        )


def test_random_adaptive_pool_sizes_match_pytorch():
    rng = np.random.default_rng(7)
    for seed in range(10):
        shape = (2, 2, *(int(n) for n in rng.integers(1, 9, 2)))
        size = tuple(int(n) for n in rng.integers(1, 6, 2))
        against_torch(
            F.adaptive_max_pool2d,
            TF.adaptive_max_pool2d,
            shape,
            seed=seed,
            output_size=size,
            return_indices=True,
        )
        against_torch(
            F.adaptive_avg_pool1d, TF.adaptive_avg_pool1d, shape[1:], seed=seed, output_size=size[0]
        )


def test_adaptive_max_pool_ties_pick_what_pytorch_picks():
    """Equal maxima in overlapping windows of uneven sizes: the first in row-major order."""
    x = np.array([[[[0.0, 2.0, 1.0], [2.0, 2.0, 0.0], [1.0, 0.0, 2.0]]]])
    y, indices = F.adaptive_max_pool2d(jg.tensor(x), 2, return_indices=True)
    ty, tindices = TF.adaptive_max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())


def test_adaptive_pool_layers_under_jit_equal_eager():
    rng = np.random.default_rng(3)
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, generator=0), nn.AdaptiveMaxPool2d((3, 2)))
    head = nn.Sequential(nn.AdaptiveAvgPool1d(2), nn.AdaptiveMaxPool1d(1))

    def step(x):
        net.zero_grad()
        loss = head(net(x).flatten(2)).sum()
        loss.backward()
        return loss.detach(), net[0].weight.grad.clone()

    jitted = jg.jit(step)
    for shape in [(2, 2, 7, 5), (1, 2, 5, 8), (2, 2, 7, 5), (2, 2, 7, 5)]:
        x = jg.tensor(rng.standard_normal(shape))
        traces = jitted.traces
        (loss, grad), (eager_loss, eager_grad) = jitted(x), step(x)
        np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-12)
        np.testing.assert_allclose(grad.numpy(), eager_grad.numpy(), rtol=1e-12)
    assert jitted.traces == traces  # the last call replayed a plan


def test_random_pool_geometries_match_pytorch():
    rng = np.random.default_rng(5)
    for seed in range(12):
        kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
        stride = tuple(int(s) for s in rng.integers(1, 4, 2))
        padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
        ceil_mode = bool(rng.integers(0, 2))
        shape = (2, 2, *(k + int(rng.integers(0, 5)) for k in kernel))
        common = dict(kernel_size=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode)
        against_torch(F.max_pool2d, TF.max_pool2d, shape, seed=seed, return_indices=True, **common)
        for include in (True, False):
            against_torch(
                F.avg_pool2d, TF.avg_pool2d, shape, seed=seed, count_include_pad=include, **common
            )


def test_max_pool_ties_and_nan_pick_what_pytorch_picks():
    x = np.array([[[[1.0, 1.0, np.nan, 2.0], [1.0, 0.0, 3.0, np.nan]]]])
    y, indices = F.max_pool2d(jg.tensor(x), 2, return_indices=True)
    ty, tindices = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())


@pytest.mark.parametrize(
    "ours, theirs, kwargs",
    [
        (F.max_pool2d, TF.max_pool2d, dict(kernel_size=3, stride=2, padding=1)),
        (
            F.avg_pool2d,
            TF.avg_pool2d,
            dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
        ),
    ],
)
def test_second_derivatives_through_pooling_match_pytorch(ours, theirs, kwargs):
    """The gradient's own gradient: the pooled gradient is itself pooled, weighted."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 2, 6, 5)), rng.standard_normal((2, 2, 3, 3))
    xs, ws = jg.tensor(x, requires_grad=True), jg.tensor(w, requires_grad=True)
    txs, tws = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (g,) = jg.autograd.grad((ours(xs, **kwargs) * ws).sum(), xs, create_graph=True)
    (tg,) = torch.autograd.grad((theirs(txs, **kwargs) * tws).sum(), txs, create_graph=True)
    (g * g * g).sum().backward()
    (tg * tg * tg).sum().backward()
    np.testing.assert_allclose(ws.grad.numpy(), tws.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: F.max_pool2d(jg.ones((1, 1, 2, 2)), 3), "no window fits"),
        (lambda: F.max_pool2d(jg.ones((1, 1, 5, 5)), 2, padding=2), "at most half"),
        (lambda: F.avg_pool2d(jg.ones((1, 1, 5, 5)), 3, padding=2), "at most half"),
        (lambda: F.max_pool2d(jg.ones((5, 5)), 2), "expected a 4-d"),
        (lambda: F.max_pool1d(jg.ones((1, 1, 5)), 0), "kernel_size must be at least 1"),
        (lambda: F.avg_pool2d(jg.ones((1, 1, 5, 5)), 2, divisor_override=0), "divisor_override"),
        (lambda: F.adaptive_avg_pool2d(jg.ones((1, 1, 5, 5)), (1, 2, 3)), "output_size"),
        (lambda: F.adaptive_max_pool2d(jg.ones((5, 5)), 2), "expected a 4-d"),
        (lambda: F.adaptive_max_pool2d(jg.ones((1, 1, 5, 5)), 0), "output_size must be at least"),
        (lambda: F.adaptive_max_pool1d(jg.ones((1, 1, 1, 5)), 2), "expected a 3-d"),
        (lambda: F.adaptive_avg_pool1d(jg.ones((1, 1, 5)), (2, 2)), "output_size must be an int"),
        (lambda: nn.AdaptiveMaxPool1d(3)(jg.ones(5)), "adaptive_max_pool1d: expected a 3-d"),
        (
            lambda: F.max_pool2d(jg.ones((1, 1, 5, 5)), (2, 2, 2)),
            "kernel_size must be an int or 2 ints",
        ),
    ],
)
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_layers_match_the_functions_and_round_trip_their_config():
    x = jg.tensor(np.random.default_rng(0).standard_normal((2, 3, 9, 8)))
    layers = [
        (nn.MaxPool2d(3, 2, 1, ceil_mode=True), F.max_pool2d(x, 3, 2, 1, ceil_mode=True)),
        (
            nn.AvgPool2d((2, 3), count_include_pad=False),
            F.avg_pool2d(x, (2, 3), count_include_pad=False),
        ),
        (nn.AdaptiveAvgPool2d((3, None)), F.adaptive_avg_pool2d(x, (3, None))),
        (nn.AdaptiveMaxPool2d((4, 3)), F.adaptive_max_pool2d(x, (4, 3))),
        (nn.AdaptiveAvgPool1d(5), F.adaptive_avg_pool1d(x[:, :, 0], 5)),
        (nn.AdaptiveMaxPool1d(5), F.adaptive_max_pool1d(x[:, :, 0], 5)),
        (nn.MaxPool1d(2), F.max_pool1d(x[:, :, 0], 2)),
        (nn.AvgPool1d(3, 1, 1), F.avg_pool1d(x[:, :, 0], 3, 1, 1)),
    ]
    for layer, expected in layers:
        inputs = x if "2d" in type(layer).__name__ else x[:, :, 0]
        np.testing.assert_array_equal(layer(inputs).numpy(), expected.numpy())
        rebuilt = nn.from_config(layer.config())
        assert rebuilt.config() == layer.config() and repr(rebuilt) == repr(layer)
        np.testing.assert_array_equal(rebuilt(inputs).numpy(), expected.numpy())
    assert (
        repr(nn.MaxPool2d(2))
        == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    y, indices = nn.MaxPool2d(2, return_indices=True)(x)
    assert y.shape == indices.shape == (2, 3, 4, 4)
    y, indices = nn.AdaptiveMaxPool2d(3, return_indices=True)(x)
    assert y.shape == indices.shape == (2, 3, 3, 3)
    assert repr(nn.AdaptiveMaxPool2d((3, None))) == "AdaptiveMaxPool2d(output_size=(3, None))"
    assert nn.AdaptiveMaxPool1d(2, True).config() == {
        "type": "AdaptiveMaxPool1d",
        "args": {"output_size": 2, "return_indices": True},
    }
