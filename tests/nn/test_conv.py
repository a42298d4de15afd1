"""Convolutions (conv1d, conv2d, conv_transpose2d, unfold, fold and their layers) against
PyTorch: values and gradients of every input, over strides, paddings, dilations and
groups, in float32 and float64; layer initialisation, configs, a jitted CNN training step."""

import math

import numpy as np
import pytest
import torch

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn, optim

TF = torch.nn.functional
TOLERANCE = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def against_torch(ours, theirs, shapes, dtype=np.float64, seed=0, **kwargs):
    """Run ``ours`` and ``theirs`` on the same random inputs of ``shapes``, back-propagate
    the same random output gradient, and compare the output and every input's gradient."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    mine = [jg.tensor(a, requires_grad=True) for a in arrays]
    reference = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, expected = ours(*mine, **kwargs), theirs(*reference, **kwargs)
    assert y.shape == tuple(expected.shape)
    assert y.dtype.numpy == dtype
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), **tol)
    g = rng.standard_normal(expected.shape).astype(dtype)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    for a, b in zip(mine, reference):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **tol)


CONV2D = [
    # input shape, weight shape, with bias, keyword arguments
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    (
        (2, 4, 7, 6),
        (6, 2, 3, 2),
        True,
        dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
    ),
    ((1, 3, 8, 8), (5, 3, 3, 3), False, dict(stride=3, padding=2)),
    ((2, 3, 7, 6), (5, 3, 3, 3), True, dict(padding="same", dilation=2)),
    ((2, 3, 7, 6), (5, 3, 4, 3), True, dict(padding="same")),  # odd total: extra after
    ((2, 3, 7, 6), (5, 3, 2, 2), False, dict(padding="valid", stride=2)),
    ((3, 6, 5, 5), (6, 1, 3, 3), True, dict(padding=1, groups=6)),  # depthwise
    ((2, 4, 5, 5), (8, 4, 1, 1), True, {}),  # pointwise
    ((3, 7, 6), (5, 3, 3, 3), True, dict(padding=1)),  # unbatched
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, w_shape, bias, kwargs", CONV2D)
def test_conv2d_forward_and_gradients_match_pytorch(x_shape, w_shape, bias, kwargs, dtype):
    shapes = [x_shape, w_shape] + ([(w_shape[0],)] if bias else [])
    against_torch(F.conv2d, TF.conv2d, shapes, dtype, **kwargs)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [
        ((2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
        ((2, 3, 8), (4, 3, 4), dict(padding="same")),
        ((3, 10), (2, 3, 3), {}),  # unbatched
    ],
)
def test_conv1d_forward_and_gradients_match_pytorch(x_shape, w_shape, kwargs, dtype):
    against_torch(F.conv1d, TF.conv1d, [x_shape, w_shape, (w_shape[0],)], dtype, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [
        (
            (2, 4, 5, 4),
            (4, 3, 3, 2),
            dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2),
        ),
        ((2, 3, 5, 4), (3, 2, 3, 3), dict(padding=1, output_padding=1, dilation=2)),
        ((1, 2, 4, 4), (2, 3, 4, 4), dict(stride=2, padding=1)),
        ((2, 3, 3), (2, 4, 2, 2), {}),  # unbatched
    ],
)
def test_conv_transpose2d_forward_and_gradients_match_pytorch(x_shape, w_shape, kwargs, dtype):
    out_channels = w_shape[1] * kwargs.get("groups", 1)
    shapes = [x_shape, w_shape, (out_channels,)]
    against_torch(F.conv_transpose2d, TF.conv_transpose2d, shapes, dtype, **kwargs)


def test_random_conv2d_geometries_match_pytorch():
    rng = np.random.default_rng(7)
    for seed in range(12):
        groups = int(rng.choice([1, 2]))
        c_in, c_out = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
        kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
        stride = tuple(int(s) for s in rng.integers(1, 3, 2))
        dilation = tuple(int(d) for d in rng.integers(1, 3, 2))
        padding = tuple(int(p) for p in rng.integers(0, 3, 2))
        size = tuple(d * (k - 1) + 1 + int(rng.integers(0, 4)) for k, d in zip(kernel, dilation))
        against_torch(
            F.conv2d,
            TF.conv2d,
            [(2, c_in, *size), (c_out, c_in // groups, *kernel), (c_out,)],
            seed=seed,
            stride=stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
        )


def test_a_batch_shared_among_threads_keeps_its_columns_chunk_by_chunk(monkeypatch):
    """Cut into a chunk per thread, the forward's columns are kept for the weight's
    gradient, each chunk's at its own place."""
    from jitgrad.ops import convolution

    monkeypatch.setattr(convolution, "_SHARED_FROM", 1)
    monkeypatch.setattr(convolution.threads, "count", lambda: 3)
    assert convolution.chunk_samples(7, 72) == 3
    against_torch(F.conv2d, TF.conv2d, [(7, 2, 5, 5), (4, 2, 3, 3), (4,)], padding=1)
    against_torch(F.conv2d, TF.conv2d, [(7, 3, 9, 9), (4, 3, 3, 3), (4,)], stride=2)


def test_convolutions_in_chunks_of_the_batch_match_pytorch(monkeypatch):
    from jitgrad.ops import convolution

    monkeypatch.setattr(convolution, "_CHUNK_ELEMENTS", 100)  # one or two samples a chunk
    against_torch(F.conv2d, TF.conv2d, [(5, 2, 6, 6), (3, 2, 3, 3), (3,)], padding=1)
    against_torch(F.conv_transpose2d, TF.conv_transpose2d, [(5, 2, 4, 4), (2, 3, 3, 3)], stride=2)
    # The chunks' shares of the weight gradient add up in one order, whichever thread ran
    # which chunk: the same inputs give the same bits.
    rng = np.random.default_rng(0)
    x = jg.tensor(rng.standard_normal((9, 2, 6, 6)).astype(np.float32))
    w = jg.tensor(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), requires_grad=True)
    grads = []
    for _ in range(3):
        w.grad = None
        (F.conv2d(x, w, padding=1) ** 2).sum().backward()
        grads.append(w.grad.numpy().copy())
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_array_equal(grads[0], grads[2])


@pytest.mark.parametrize(
    "kwargs",
    [dict(kernel_size=(2, 3)), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(1, 2))],
)
def test_unfold_and_fold_match_pytorch(kwargs):
    against_torch(F.unfold, TF.unfold, [(2, 3, 7, 6)], **kwargs)
    cols = TF.unfold(torch.zeros(2, 3, 7, 6), **kwargs).shape
    against_torch(F.fold, TF.fold, [tuple(cols)], output_size=(7, 6), **kwargs)


def test_second_derivatives_of_conv2d_match_pytorch():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    xs = jg.tensor(x, requires_grad=True), jg.tensor(w, requires_grad=True)
    ts = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (gx,) = jg.autograd.grad(
        (F.conv2d(*xs, stride=2, padding=1) ** 2).sum(), xs[0], create_graph=True
    )
    (tgx,) = torch.autograd.grad(
        (TF.conv2d(*ts, stride=2, padding=1) ** 2).sum(), ts[0], create_graph=True
    )
    (gx * gx).sum().backward()
    (tgx * tgx).sum().backward()
    np.testing.assert_allclose(xs[1].grad.numpy(), ts[1].grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xs[0].grad.numpy(), ts[0].grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: F.conv2d(jg.ones((1, 4, 5, 5)), jg.ones((2, 3, 3, 3))),
            "expects 3 input channels",
        ),
        (lambda: F.conv2d(jg.ones((1, 3, 2, 2)), jg.ones((2, 3, 3, 3))), "kernel spans 3"),
        (
            lambda: F.conv2d(jg.ones((1, 3, 5, 5)), jg.ones((2, 3, 3, 3)), groups=2),
            "groups=2 does not divide",
        ),
        (
            lambda: F.conv2d(jg.ones((1, 4, 5, 5)), jg.ones((3, 2, 3, 3)), groups=2),
            "groups=2 does not divide",
        ),
        (
            lambda: F.conv2d(jg.ones((1, 3, 5, 5)), jg.ones((2, 3, 3, 3)), jg.ones(3)),
            "bias of shape",
        ),
        (lambda: F.conv2d(jg.ones((3, 5)), jg.ones((2, 3, 3, 3))), "expected a 4-d"),
        (
            lambda: F.conv2d(
                jg.ones((1, 3, 5, 5)), jg.ones((2, 3, 3, 3)), stride=2, padding="same"
            ),
            "stride 1",
        ),
        (
            lambda: F.conv2d(jg.ones((1, 3, 5, 5)), jg.ones((2, 3, 3, 3)), stride=0),
            "stride must be at least 1",
        ),
        (
            lambda: F.conv2d(jg.ones((1, 3, 5, 5)), jg.ones((2, 3, 3, 3)), padding="full"),
            "padding must be",
        ),
        (lambda: F.conv1d(jg.ones((1, 3, 5)), jg.ones((2, 3, 7))), "kernel spans 7"),
        (
            lambda: F.conv_transpose2d(jg.ones((1, 2, 3, 3)), jg.ones((3, 2, 3, 3))),
            "expects 3 input channels",
        ),
        (
            lambda: F.conv_transpose2d(
                jg.ones((1, 2, 3, 3)), jg.ones((2, 2, 3, 3)), output_padding=1
            ),
            "output_padding",
        ),
        (lambda: F.fold(jg.ones((1, 5, 4)), (3, 3), 2), "multiple of the kernel's 4 taps"),
        (lambda: nn.Conv2d(3, 4, 3, groups=2), "in_channels=3 must be divisible by groups=2"),
        (lambda: nn.Conv2d(4, 3, 3, groups=2), "out_channels=3 must be divisible by groups=2"),
        (lambda: nn.Conv2d(3, 4, 3, padding_mode="reflect"), "padding_mode"),
        (lambda: nn.Conv2d(3, 4, 3)(jg.ones((1, 2, 5, 5))), "expects 3 input channels"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_mixed_or_integer_dtypes_are_a_type_error():
    with pytest.raises(TypeError, match="one dtype"):
        F.conv2d(jg.ones((1, 1, 3, 3), dtype=jg.float32), jg.ones((1, 1, 2, 2)))
    with pytest.raises(TypeError, match="float32 and float64"):
        F.conv2d(jg.ones((1, 1, 3, 3), dtype=jg.int64), jg.ones((1, 1, 2, 2), dtype=jg.int64))


@pytest.mark.parametrize(
    "layer, shape",
    [
        (lambda g: nn.Conv1d(4, 6, 3, groups=2, generator=g), (6, 2, 3)),
        (lambda g: nn.Conv2d(3, 8, (3, 5), generator=g), (8, 3, 3, 5)),
        (lambda g: nn.ConvTranspose2d(4, 6, 3, groups=2, generator=g), (4, 3, 3, 3)),
    ],
)
def test_layer_init_follows_pytorch_bounds_and_is_seeded(layer, shape):
    a, b = layer(0), layer(0)
    assert a.weight.shape == shape and a.bias.shape == (a.out_channels,)
    fan_in = shape[1] * math.prod(shape[2:])
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=√5) and the bias alike
    for p in (a.weight, a.bias):
        values = p.numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.8 * bound  # spread over the whole interval
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    assert not np.array_equal(a.weight.numpy(), layer(1).weight.numpy())


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_layers_compute_what_pytorch_layers_with_their_weights_compute():
    x = np.random.default_rng(0).standard_normal((2, 4, 9, 8))
    pairs = [
        (
            nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, generator=0),
            torch.nn.Conv2d(4, 6, 3, 2, 1, groups=2),
        ),
        (
            nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1, generator=0),
            torch.nn.ConvTranspose2d(4, 3, 3, 2, 1, output_padding=1),
        ),
        (
            nn.Conv2d(4, 2, 3, padding="same", bias=False, generator=0),
            torch.nn.Conv2d(4, 2, 3, padding="same", bias=False),
        ),
    ]
    for ours, theirs in pairs:
        theirs.double()
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(ours.weight.numpy()))
            if ours.bias is not None:
                theirs.bias.copy_(torch.tensor(ours.bias.numpy()))
        np.testing.assert_allclose(
            ours(jg.tensor(x)).numpy(),
            theirs(torch.tensor(x)).detach().numpy(),
            rtol=1e-5,
            atol=1e-5,
        )
    conv1d = nn.Conv1d(4, 3, 2, dilation=2, bias=False, generator=0)
    reference = TF.conv1d(torch.tensor(x[:, :, 0]), torch.tensor(conv1d.weight.numpy()), dilation=2)
    np.testing.assert_allclose(
        conv1d(jg.tensor(x[:, :, 0])).numpy(), reference.numpy(), rtol=1e-5, atol=1e-5
    )


def test_conv_transpose2d_output_size_picks_the_output_padding():
    up = nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1, generator=0)
    x = jg.ones((1, 2, 4, 4))
    assert up(x).shape == (1, 2, 7, 7)
    assert up(x, output_size=(8, 7)).shape == (1, 2, 8, 7)
    with pytest.raises(ValueError, match="out of reach"):
        up(x, output_size=(9, 9))


def test_repr_and_config_round_trip():
    net = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1, groups=1, generator=0),
        nn.ConvTranspose2d(4, 2, 2, stride=2, bias=False, generator=0),
        nn.Conv1d(2, 2, 3, padding="same", generator=0),
    )
    assert repr(net[0]) == "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(net[1]) == "ConvTranspose2d(4, 2, kernel_size=(2, 2), stride=(2, 2), bias=False)"
    rebuilt = nn.from_config(net.config())
    assert rebuilt.config() == net.config()
    assert repr(rebuilt) == repr(net)


class TinyCNN(nn.Module):
    """Conv2d -> ReLU -> MaxPool2d -> Flatten -> Linear, and its PyTorch twin's weights."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(2, 4, 3, padding=1, dtype=jg.float64, generator=0),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * 3 * 3, 3, dtype=jg.float64, generator=1),
        )

    def forward(self, x):
        return self.net(x)

    def torch_twin(self):
        twin = torch.nn.Sequential(
            torch.nn.Conv2d(2, 4, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Flatten(),
            torch.nn.Linear(4 * 3 * 3, 3),
        ).double()
        with torch.no_grad():
            for (_, p), (_, q) in zip(self.named_parameters(), twin.named_parameters()):
                q.copy_(torch.tensor(p.numpy()))
        return twin


def test_a_jitted_cnn_training_step_equals_eager_and_pytorch():
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((4, 2, 6, 6)), rng.integers(0, 3, 4)) for _ in range(3)]
    models = [TinyCNN() for _ in range(2)]
    twin = models[0].torch_twin()

    def make_step(model):
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    eager, jitted = make_step(models[0]), jg.jit(make_step(models[1]))
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    for i in range(6):
        x, y = batches[i % 3]
        le = eager(jg.tensor(x), jg.tensor(y)).item()
        lj = jitted(jg.tensor(x), jg.tensor(y)).item()
        twin_opt.zero_grad()
        lt = TF.cross_entropy(twin(torch.tensor(x)), torch.tensor(y))
        lt.backward()
        twin_opt.step()
        assert lj == pytest.approx(le, rel=1e-12)
        assert le == pytest.approx(lt.item(), rel=1e-10)
    assert jitted.traces == 1
    for p, q, r in zip(models[0].parameters(), models[1].parameters(), twin.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(p.numpy(), r.detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("chunks", ["one per thread", "more than threads"])
def test_jitted_convolutions_replay_their_chunks_on_new_values(monkeypatch, chunks):
    """A replay runs each chunk's calls as the trace worked them out (a batch of a chunk
    per thread), or works them out again (more chunks than threads): either way on the
    values of the call, in every map."""
    from jitgrad.ops import convolution

    if chunks == "one per thread":
        monkeypatch.setattr(convolution, "_SHARED_FROM", 1)
    else:
        monkeypatch.setattr(convolution, "_CHUNK_ELEMENTS", 200)
    w = jg.tensor(np.random.default_rng(1).standard_normal((4, 3, 3, 3)), requires_grad=True)

    def step(x):
        w.grad = None
        y = F.conv2d(x, w, padding=1)
        (y * y).sum().backward()
        return y, x.grad, w.grad

    jitted = jg.jit(step)
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    for seed in range(3):
        x = np.random.default_rng(seed + 10).standard_normal((6, 3, 5, 5))
        y, gx, gw = jitted(jg.tensor(x, requires_grad=True))
        tx = torch.tensor(x, requires_grad=True)
        tw.grad = None
        ty = TF.conv2d(tx, tw, padding=1)
        (ty * ty).sum().backward()
        for mine, theirs in ((y, ty), (gx, tx.grad), (gw, tw.grad)):
            np.testing.assert_allclose(mine.numpy(), theirs.detach().numpy(), rtol=1e-10)
    assert jitted.traces == 1


def test_a_map_works_its_calls_out_again_for_other_arrays():
    from jitgrad.ops import convolution

    geom = convolution.Geometry((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (4, 4), (4, 4))
    conv = convolution.windows_from_image(geom, 1)
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((2, 3, 3, 3))
    for _ in range(2):
        image = rng.standard_normal((2, 3, 4, 4))
        out = np.empty((2, 2, 4, 4))
        conv(image, weight, None, out, None)
        expected = TF.conv2d(torch.tensor(image), torch.tensor(weight), padding=1).numpy()
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_a_saved_cnn_is_served_with_jitted_plans_that_predict_as_the_model(tmp_path):
    from jitgrad.serving.predictor import Predictor
    from jitgrad.serving.signature import Signature

    model = TinyCNN().net
    x = np.random.default_rng(1).standard_normal((3, 2, 6, 6))
    jg.io.save_model(model, tmp_path / "cnn", input_shape=(2, 6, 6), input_dtype="float64")
    loaded, manifest = jg.io.load_model(tmp_path / "cnn")
    predictor = Predictor(loaded, Signature.from_manifest(manifest["signature"]), [3])
    assert predictor.warm_up()["plans"] == "enabled"  # replays equal the eager model
    (served,) = predictor({"x": x}).values()
    with jg.no_grad():
        np.testing.assert_allclose(served, model(jg.tensor(x)).numpy(), rtol=1e-12)
