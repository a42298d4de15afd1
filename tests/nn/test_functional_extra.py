"""Activations (mish, softplus, elu, hardswish, ...), one_hot, pad and the padding layers,
normalize and interpolate against PyTorch: values and gradients, in layers and functional
forms, and under jg.jit."""

import numpy as np
import pytest
import torch
from nn_torch_oracle import assert_matches_torch

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

TF = torch.nn.functional


def data(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def away_from_kinks(shape, seed, kinks=(0.0,)):
    """Values at least 0.05 from each kink (where the two gradients may pick sides)."""
    x = data(shape, seed, scale=4.0)
    for k in kinks:
        near = np.abs(x - k) < 0.05
        x[near] += 0.1
    return x


# -- activations ----------------------------------------------------------------------------

ACTIVATIONS = [
    ("Mish", {}, (), "mish"),
    ("Softplus", {}, (), "softplus"),
    ("Softplus", {"beta": 2.0, "threshold": 5.0}, (2.5,), "softplus"),
    ("Softplus", {"beta": 0.5}, (), "softplus"),
    ("ELU", {}, (0.0,), "elu"),
    ("ELU", {"alpha": 0.3}, (0.0,), "elu"),
    ("Hardswish", {}, (-3.0, 3.0), "hardswish"),
    ("ReLU6", {}, (0.0, 6.0), "relu6"),
    ("LeakyReLU", {"negative_slope": 0.2}, (0.0,), "leaky_relu"),
    ("SiLU", {}, (), "silu"),
    ("ReLU", {}, (0.0,), "relu"),
    ("GELU", {"approximate": "tanh"}, (), "gelu"),
    ("Sigmoid", {}, (), "sigmoid"),
    ("Tanh", {}, (), "tanh"),
]


@pytest.mark.parametrize(
    "name, kwargs, kinks, function", ACTIVATIONS, ids=[f"{a[0]}{a[1]}" for a in ACTIVATIONS]
)
def test_activation_layers_and_functions_like_torch(name, kwargs, kinks, function):
    x = away_from_kinks((4, 6), 1, kinks)
    x[0, :3] = [40.0, -40.0, 800.0]  # far out: no overflow, no nan gradient
    assert_matches_torch(getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs), x)
    assert_matches_torch(
        lambda x: getattr(F, function)(x, **kwargs),
        lambda x: getattr(TF, function)(x, **kwargs),
        x,
    )
    layer = getattr(nn, name)(**kwargs)
    assert nn.from_config(layer.config()).config() == layer.config()
    assert layer(jg.asarray(x.astype(np.float32))).dtype is jg.float32


# -- one_hot --------------------------------------------------------------------------------


def test_one_hot_like_torch():
    labels = np.array([[0, 3], [2, 1], [3, 3]])
    for classes in (-1, 4, 6):
        got = F.one_hot(jg.tensor(labels), classes)
        expected = TF.one_hot(torch.tensor(labels), classes).numpy()
        assert got.dtype is jg.int64
        np.testing.assert_array_equal(got.numpy(), expected)
    assert F.one_hot(jg.tensor(2), 3).tolist() == [0, 0, 1]
    assert F.one_hot(jg.tensor([], dtype=jg.int64), 2).shape == (0, 2)


def test_one_hot_errors():
    with pytest.raises(ValueError, match="class value 4 is out of range for num_classes=3"):
        F.one_hot(jg.tensor([0, 4]), 3)
    with pytest.raises(ValueError, match="class value -1 is out of range"):
        F.one_hot(jg.tensor([0, -1]), 3)
    with pytest.raises(TypeError, match="integer class labels, got float64"):
        F.one_hot(jg.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="cannot infer num_classes from an empty tensor"):
        F.one_hot(jg.tensor([], dtype=jg.int64))
    encode = jg.jit(lambda y: F.one_hot(y, 3))
    encode(jg.tensor([0, 2]))
    with pytest.raises(ValueError, match="class value 3"):  # checked on every call
        encode(jg.tensor([3, 0]))


# -- pad ------------------------------------------------------------------------------------

PADS = [
    ("constant", (3, 4), (1, 2)),
    ("constant", (2, 3, 4), (1, 0, 2, 3)),
    ("constant", (2, 3, 4), (-1, 2, 0, -1, 1, 1)),
    ("reflect", (2, 5), (2, 3)),
    ("reflect", (1, 2, 4, 5), (1, 2, 3, 0)),
    ("reflect", (2, 3, 4), (3, 1)),
    ("replicate", (2, 3, 4), (2, 5)),
    ("replicate", (1, 2, 3, 4), (1, 2, 3, 1)),
    ("replicate", (1, 2, 3, 2, 2), (1, 1, 2, 0, 1, 3)),
    ("circular", (2, 3, 4), (2, 4)),
    ("circular", (1, 2, 3, 4), (1, 2, 3, 0)),
]


@pytest.mark.parametrize("mode, shape, pad", PADS, ids=[f"{m}-{p}" for m, _, p in PADS])
def test_pad_like_torch(mode, shape, pad):
    assert_matches_torch(
        lambda x: F.pad(x, pad, mode=mode), lambda x: TF.pad(x, pad, mode=mode), data(shape, 2)
    )


def test_pad_with_a_value_like_torch():
    assert_matches_torch(
        lambda x: F.pad(x, (1, 1, 2, 0), value=-3.5),
        lambda x: TF.pad(x, (1, 1, 2, 0), value=-3.5),
        data((2, 3), 3),
    )


def test_pad_errors():
    x = jg.ones((1, 2, 3))
    with pytest.raises(ValueError, match="even number of widths"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(x, (1, 1), mode="wrap")
    with pytest.raises(ValueError, match=r"widths \(3, 0\) of dimension 2 must be less than its"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match=r"must be at most its size 3"):
        F.pad(x, (4, 0), mode="circular")
    with pytest.raises(ValueError, match=r"dimension 1 of size 0"):
        F.pad(jg.ones((1, 0, 3)), (1, 1, 1, 1), mode="replicate")
    with pytest.raises(ValueError, match="last 1 to 3 dimensions"):
        F.pad(jg.ones(3), (1, 1), mode="replicate")
    with pytest.raises(ValueError, match="value applies to mode 'constant' only"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(TypeError, match="widths must be integers"):
        F.pad(x, (1.5, 1))


PAD_LAYERS = [
    ("ZeroPad2d", (1,), (2, 3, 4, 5)),
    ("ZeroPad2d", ((1, 0, -1, 2),), (3, 4, 5)),
    ("ConstantPad1d", ((2, 1), -1.5), (2, 3, 4)),
    ("ConstantPad1d", (3, 2.0), (3, 4)),
    ("ConstantPad2d", ((0, 1, 2, 3), 0.5), (2, 3, 4, 5)),
    ("ReflectionPad1d", (3,), (2, 3, 5)),
    ("ReflectionPad1d", ((1, 2),), (3, 4)),
    ("ReflectionPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)),
    ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReplicationPad1d", ((4, 0),), (2, 3, 2)),
    ("ReplicationPad2d", ((3, 1, 2, 0),), (2, 1, 3, 2)),
    ("ReplicationPad2d", (1,), (3, 4, 5)),
]


@pytest.mark.parametrize(
    "name, args, shape", PAD_LAYERS, ids=[f"{n}-{a}" for n, a, _ in PAD_LAYERS]
)
def test_padding_layers_like_torch(name, args, shape):
    layer, torch_layer = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert_matches_torch(layer, torch_layer, data(shape, 4))
    assert repr(layer) == repr(torch_layer)
    assert layer.padding == torch_layer.padding
    rebuilt = nn.from_config(layer.config())
    assert repr(rebuilt) == repr(layer) and rebuilt.config() == layer.config()


def test_padding_layer_errors():
    with pytest.raises(ValueError, match=r"ReflectionPad2d: padding must be an int or 4 ints"):
        nn.ReflectionPad2d((1, 2))
    with pytest.raises(ValueError, match=r"ZeroPad2d: padding must be an int or 4 ints"):
        nn.ZeroPad2d((1, 2, 3, 4.0))
    with pytest.raises(ValueError, match="last 1 to 3 dimensions of an input with one or two more"):
        nn.ReflectionPad2d(1)(jg.ones((3, 3)))
    with pytest.raises(ValueError, match="must be less than its size 3"):
        nn.ReflectionPad1d(3)(jg.ones((1, 2, 3)))


# -- normalize ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, dim", [(2.0, 1), (1.0, 1), (3.0, -1), (2.0, 0), (float("inf"), 1), (0.5, 1), (1.5, 0)]
)
def test_normalize_like_torch(p, dim):
    x = data((4, 5), 4)
    x[1] = 0.0  # a zero vector stays zero, with a finite gradient
    x[2] *= 1e-14  # a vector shorter than eps
    x[3, 1] = 0.0  # a zero entry: |x|**p's derivative there is infinite for p < 1
    assert_matches_torch(
        lambda x: F.normalize(x, p=p, dim=dim), lambda x: TF.normalize(x, p=p, dim=dim), x
    )
    assert_matches_torch(F.normalize, TF.normalize, data((2, 3, 4), 5))
    with pytest.raises(ValueError, match="p must be positive"):
        F.normalize(jg.ones(3), p=0, dim=0)


# -- interpolate ----------------------------------------------------------------------------

INTERPOLATIONS = [
    ((2, 3, 5), {"size": 8}),
    ((2, 3, 5), {"size": 3}),
    ((2, 3, 5), {"scale_factor": 2}),
    ((2, 3, 5), {"scale_factor": 1.7}),
    ((1, 2, 3, 4), {"size": (5, 7)}),
    ((1, 2, 4, 6), {"size": (3, 4)}),
    ((1, 2, 3, 4), {"scale_factor": (2, 1.5)}),
    ((1, 2, 3, 5), {"scale_factor": 0.6}),
    ((1, 2, 3, 5), {"scale_factor": 1.3, "recompute_scale_factor": True}),
]


@pytest.mark.parametrize("shape, sizing", INTERPOLATIONS, ids=[str(i) for i in INTERPOLATIONS])
@pytest.mark.parametrize("mode", ["nearest", "linear", "align_corners"])
def test_interpolate_like_torch(shape, sizing, mode):
    kwargs = dict(sizing)
    if mode != "nearest":
        kwargs["mode"] = "linear" if len(shape) == 3 else "bilinear"
        kwargs["align_corners"] = mode == "align_corners"
    assert_matches_torch(
        lambda x: F.interpolate(x, **kwargs), lambda x: TF.interpolate(x, **kwargs), data(shape, 6)
    )


def test_interpolate_float32_and_integers():
    x = data((1, 1, 3, 3), 7).astype(np.float32)
    got = F.interpolate(jg.asarray(x), scale_factor=1.5, mode="bilinear")
    expected = TF.interpolate(torch.tensor(x), scale_factor=1.5, mode="bilinear").numpy()
    assert got.dtype is jg.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)
    labels = np.arange(6).reshape(1, 1, 2, 3)  # nearest copies integers too
    got = F.interpolate(jg.tensor(labels), size=(3, 5))
    expected = TF.interpolate(torch.tensor(labels, dtype=torch.float64), size=(3, 5)).numpy()
    assert got.dtype is jg.int64
    np.testing.assert_array_equal(got.numpy(), expected)


def test_interpolate_errors():
    x = jg.ones((1, 2, 3, 3))
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match=r"mode 'bilinear' needs 4-d input"):
        F.interpolate(jg.ones((1, 2, 3)), size=4, mode="bilinear")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.interpolate(x, size=4, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners applies to the linear modes only"):
        F.interpolate(x, size=4, align_corners=True)
    with pytest.raises(ValueError, match="size must be one positive int or 2 of them"):
        F.interpolate(x, size=(4, 4, 4))
    with pytest.raises(TypeError, match="needs floating input"):
        F.interpolate(jg.ones((1, 1, 2, 2), dtype=jg.int64), size=3, mode="bilinear")


# -- under jg.jit ---------------------------------------------------------------------------


def test_a_jitted_step_with_these_functions_equals_eager():
    rng = np.random.default_rng(0)
    batches = [jg.tensor(rng.standard_normal((2, 1, 3, 4))) for _ in range(2)]

    def make():
        scale = jg.tensor(rng.standard_normal((1, 1, 6, 8)) * 0.0 + 1.0, requires_grad=True)
        opt = jg.optim.SGD([scale], lr=0.1)

        def step(x):
            opt.zero_grad()
            h = F.interpolate(x, scale_factor=2, mode="bilinear") * scale
            h = nn.ReplicationPad2d((1, 0, 0, 1))(nn.ReflectionPad2d((0, 1, 1, 0))(F.mish(h)))
            h = F.elu(F.hardswish(h), 0.5) + F.softplus(h, beta=2.0)
            h = F.interpolate(h, size=(4, 5)) + F.pad(h, (0, 0, -2, -2), value=1.0)[..., :5]
            loss = F.normalize(h.reshape(2, -1), dim=1).sum() + F.leaky_relu(h, 0.1).mean()
            loss.backward()
            opt.step()
            return loss

        return scale, step

    (eager_scale, eager), (jit_scale, jitted) = make(), make()
    jitted = jg.jit(jitted)
    for i in range(4):
        assert jitted(batches[i % 2]).item() == pytest.approx(eager(batches[i % 2]).item(), 1e-12)
    np.testing.assert_allclose(jit_scale.numpy(), eager_scale.numpy(), rtol=1e-12)
    assert jitted.traces == 1
