"""BatchNorm2d, InstanceNorm1d/2d, GroupNorm, RMSNorm and the functional normalisations
against PyTorch: values, gradients, running statistics, state_dict keys, and a jitted
training step."""

import numpy as np
import pytest
import torch
from nn_torch_oracle import assert_matches_torch, copy_parameters

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn


def data(shape, seed=0, scale=1.0, shift=0.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale + shift


def randomized(torch_module, seed=0):
    """``torch_module`` in float64 with random affine parameters (not the ones and zeros
    they start as, which would hide a swapped weight and bias)."""
    torch_module = torch_module.double()
    with torch.no_grad():
        for i, p in enumerate(torch_module.parameters()):
            p.copy_(torch.tensor(data(tuple(p.shape), seed + i, shift=1.0)))
    return torch_module


def assert_same_module_gradients(module, torch_module):
    grads = {k: p.grad for k, p in torch_module.named_parameters()}
    for name, p in module.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].numpy(), rtol=1e-9, atol=1e-12)


def assert_same_state(module, torch_module):
    for key, value in torch_module.state_dict().items():
        np.testing.assert_allclose(
            module.state_dict()[key].numpy(), value.numpy(), rtol=1e-12, err_msg=key
        )


# -- BatchNorm ------------------------------------------------------------------------------


@pytest.mark.parametrize("momentum", [0.1, 0.3, None])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_2d_trains_and_evaluates_like_torch(momentum, affine):
    tbn = randomized(torch.nn.BatchNorm2d(3, momentum=momentum, affine=affine))
    bn = nn.BatchNorm2d(3, momentum=momentum, affine=affine)
    copy_parameters(bn, tbn)
    for step, shape in enumerate([(4, 3, 5, 2), (2, 3, 3, 3), (5, 3, 1, 4)]):
        for p in (*bn.parameters(), *tbn.parameters()):
            p.grad = None
        assert_matches_torch(bn, tbn, data(shape, step, scale=2.0, shift=0.5), seed=step)
        if affine:
            assert_same_module_gradients(bn, tbn)
        assert_same_state(bn, tbn)
    assert bn.num_batches_tracked.item() == 3
    bn.eval(), tbn.eval()
    assert_matches_torch(bn, tbn, data((2, 3, 2, 2), 7))
    assert_same_state(bn, tbn)  # eval updates nothing
    assert_matches_torch(bn, tbn, data((1, 3, 1, 1), 8))  # one value per channel is fine


@pytest.mark.parametrize("bias", [True, False])
def test_batch_norm_1d_on_sequences_like_torch(bias):
    tbn = randomized(torch.nn.BatchNorm1d(4, bias=bias))
    bn = nn.BatchNorm1d(4, bias=bias)
    copy_parameters(bn, tbn)
    assert repr(bn) == repr(tbn)
    assert_matches_torch(bn, tbn, data((3, 4, 6), 1))
    assert_same_module_gradients(bn, tbn)
    assert_same_state(bn, tbn)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_without_running_stats_uses_the_batch_like_torch(training):
    tbn = randomized(torch.nn.BatchNorm2d(2, track_running_stats=False)).train(training)
    bn = nn.BatchNorm2d(2, track_running_stats=False).train(training)
    copy_parameters(bn, tbn)
    assert_matches_torch(bn, tbn, data((3, 2, 2, 2), 4))
    assert_same_module_gradients(bn, tbn)
    assert list(bn.state_dict()) == list(tbn.state_dict()) == ["weight", "bias"]


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 2, 3), (2, 3, 1, 2, 2)])
def test_functional_batch_norm_like_torch(training, shape):
    stats = [data(3, 10), np.abs(data(3, 11)) + 0.5]
    jg_stats = [jg.tensor(s) for s in stats]
    torch_stats = [torch.tensor(s) for s in stats]

    def with_stats(stats):
        return lambda x, w, b: F_of(x)(x, *stats, w, b, training=training, momentum=0.2, eps=1e-3)

    def F_of(x):
        return F.batch_norm if isinstance(x, jg.Tensor) else torch.nn.functional.batch_norm

    x, w, b = data(shape, 1, scale=3.0), data(3, 2), data(3, 3)
    assert_matches_torch(with_stats(jg_stats), with_stats(torch_stats), x, w, b)
    for got, expected in zip(jg_stats, torch_stats):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    if training:  # no running statistics at all, and no affine
        assert_matches_torch(
            lambda x: F.batch_norm(x, None, None, training=True),
            lambda x: torch.nn.functional.batch_norm(x, None, None, training=True),
            x,
        )


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"BatchNorm2d\(3\) expects input of shape \(N, 3, H, W\)"):
        nn.BatchNorm2d(3)(jg.ones((4, 3)))
    with pytest.raises(ValueError, match=r"BatchNorm2d\(3\) expects"):
        nn.BatchNorm2d(3)(jg.ones((2, 4, 2, 2)))
    bn = nn.BatchNorm2d(3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(jg.ones((1, 3, 1, 1)))
    assert bn.num_batches_tracked.item() == 0  # a refused batch is not counted
    with pytest.raises(
        ValueError, match="running_mean and running_var are required.*training=True"
    ):
        F.batch_norm(jg.ones((2, 3)), None, None)
    with pytest.raises(ValueError, match="momentum must be a number or a 0-d tensor"):
        F.batch_norm(jg.ones((2, 3)), jg.zeros(3), jg.ones(3), training=True, momentum=None)
    with pytest.raises(ValueError, match=r"weight of shape \(2,\) should have shape \(3,\)"):
        F.batch_norm(jg.ones((2, 3)), None, None, weight=jg.ones(2), training=True)


# -- InstanceNorm ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layer, shapes",
    [
        ("InstanceNorm1d", [(4, 3, 5), (2, 3, 2), (3, 7)]),
        ("InstanceNorm2d", [(4, 3, 5, 2), (2, 3, 3, 3), (3, 1, 4)]),
    ],
)
@pytest.mark.parametrize("affine, bias", [(False, True), (True, True), (True, False)])
@pytest.mark.parametrize("track_running_stats, momentum", [(False, 0.1), (True, 0.3), (True, None)])
def test_instance_norm_trains_and_evaluates_like_torch(
    layer, shapes, affine, bias, track_running_stats, momentum
):
    kwargs = dict(
        momentum=momentum, affine=affine, bias=bias, track_running_stats=track_running_stats
    )
    tnorm = randomized(getattr(torch.nn, layer)(3, **kwargs))
    norm = getattr(nn, layer)(3, **kwargs)
    copy_parameters(norm, tnorm)
    assert list(norm.state_dict()) == list(tnorm.state_dict())
    assert repr(norm) == repr(tnorm)
    for step, shape in enumerate(shapes):  # the last one unbatched
        for p in (*norm.parameters(), *tnorm.parameters()):
            p.grad = None
        assert_matches_torch(norm, tnorm, data(shape, step, scale=2.0, shift=0.5), seed=step)
        if affine:
            assert_same_module_gradients(norm, tnorm)
        assert_same_state(norm, tnorm)
    norm.eval(), tnorm.eval()
    assert_matches_torch(norm, tnorm, data(shapes[0], 7))
    assert_same_state(norm, tnorm)


@pytest.mark.parametrize("use_input_stats", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 3), (1, 3, 2, 1, 2)])
def test_functional_instance_norm_like_torch(use_input_stats, shape):
    stats = [data(3, 10), np.abs(data(3, 11)) + 0.5]
    jg_stats = [jg.tensor(s) for s in stats]
    torch_stats = [torch.tensor(s) for s in stats]

    def with_stats(instance_norm, stats):
        return lambda x, w, b: instance_norm(
            x, *stats, w, b, use_input_stats=use_input_stats, momentum=0.2, eps=1e-3
        )

    assert_matches_torch(
        with_stats(F.instance_norm, jg_stats),
        with_stats(torch.nn.functional.instance_norm, torch_stats),
        data(shape, 1, scale=3.0),
        data(3, 2),
        data(3, 3),
    )
    for got, expected in zip(jg_stats, torch_stats):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    assert_matches_torch(F.instance_norm, torch.nn.functional.instance_norm, data(shape, 4))


def test_instance_norm_errors():
    with pytest.raises(ValueError, match=r"InstanceNorm2d\(3\) expects input of shape \(3, H, W\)"):
        nn.InstanceNorm2d(3)(jg.ones((3, 4)))
    with pytest.raises(ValueError, match=r"InstanceNorm1d\(3\) expects .*got \(2, 4, 5\)"):
        nn.InstanceNorm1d(3, affine=True)(jg.ones((2, 4, 5)))
    with pytest.warns(UserWarning, match="with 4 channels"):
        nn.InstanceNorm1d(3)(jg.ones((2, 4, 5)))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        nn.InstanceNorm2d(3)(jg.ones((2, 3, 1, 1)))
    with pytest.raises(ValueError, match="at least one spatial dimension"):
        F.instance_norm(jg.ones((2, 3)))
    with pytest.raises(ValueError, match="pass use_input_stats=True"):
        F.instance_norm(jg.ones((2, 3, 4)), use_input_stats=False)


# -- GroupNorm ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "groups, shape", [(3, (2, 6, 3, 4)), (2, (3, 4, 5)), (1, (2, 6)), (4, (2, 4, 2, 2, 2))]
)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_like_torch(groups, shape, affine):
    tgn = randomized(torch.nn.GroupNorm(groups, shape[1], eps=1e-4, affine=affine), seed=3)
    gn = nn.GroupNorm(groups, shape[1], eps=1e-4, affine=affine)
    copy_parameters(gn, tgn)
    assert_matches_torch(gn, tgn, data(shape, 5, scale=2.0, shift=1.0))
    if affine:
        assert_same_module_gradients(gn, tgn)
    assert list(gn.state_dict()) == list(tgn.state_dict())
    assert_matches_torch(
        lambda x, w, b: F.group_norm(x, groups, w, b),
        lambda x, w, b: torch.nn.functional.group_norm(x, groups, w, b),
        data(shape, 6),
        data(shape[1], 7),
        data(shape[1], 8),
    )


def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"num_channels=6 must be divisible by num_groups=4"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match=r"GroupNorm\(2, 4\) expects input of shape \(N, 4,"):
        nn.GroupNorm(2, 4)(jg.ones((2, 6, 3)))
    with pytest.raises(ValueError, match="channels 6 must be divisible by num_groups=4"):
        F.group_norm(jg.ones((2, 6, 3)), 4)


# -- RMSNorm and LayerNorm ------------------------------------------------------------------


@pytest.mark.parametrize("normalized_shape", [5, (3, 5)])
@pytest.mark.parametrize("eps", [None, 1e-3])
@pytest.mark.parametrize("affine", [True, False])
def test_rms_norm_like_torch(normalized_shape, eps, affine):
    trms = randomized(torch.nn.RMSNorm(normalized_shape, eps=eps, elementwise_affine=affine))
    rms = nn.RMSNorm(normalized_shape, eps=eps, elementwise_affine=affine)
    copy_parameters(rms, trms)
    assert_matches_torch(rms, trms, data((2, 3, 5), 1, scale=0.01 if eps is None else 1.0))
    if affine:
        assert_same_module_gradients(rms, trms)
    assert list(rms.state_dict()) == list(trms.state_dict())


def test_rms_norm_default_eps_is_the_input_dtypes():
    x = data((4, 6), 2, scale=1e-4).astype(np.float32)  # small values: eps shows
    got = nn.RMSNorm(6, dtype=jg.float32)(jg.asarray(x))
    expected = torch.nn.RMSNorm(6)(torch.tensor(x)).detach().numpy()
    assert got.dtype is jg.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)
    assert_matches_torch(
        lambda x, w: F.rms_norm(x, (6,), w),
        lambda x, w: torch.nn.functional.rms_norm(x, (6,), w),
        data((4, 6), 3, scale=1e-7),  # float64's eps
        data(6, 4),
    )


def test_functional_layer_norm_like_torch():
    for shape in [(4,), (3, 4)]:
        assert_matches_torch(
            lambda x, w, b, shape=shape: F.layer_norm(x, shape, w, b, eps=1e-3),
            lambda x, w, b, shape=shape: torch.nn.functional.layer_norm(x, shape, w, b, eps=1e-3),
            data((2, 3, 4), 1, scale=2.0),
            data(shape, 2),
            data(shape, 3),
        )
    assert_matches_torch(
        lambda x: F.layer_norm(x, 4),
        lambda x: torch.nn.functional.layer_norm(x, (4,)),
        data((5, 4), 4),
    )
    with pytest.raises(ValueError, match=r"last 1 dimension\(s\) must be \(4,\)"):
        F.layer_norm(jg.ones((2, 3)), 4)
    with pytest.raises(ValueError, match=r"weight of shape \(3,\) should have shape \(4,\)"):
        F.layer_norm(jg.ones((2, 4)), 4, jg.ones(3))


def test_norm_layers_rebuild_from_their_configs():
    for layer in (
        nn.BatchNorm2d(3, momentum=None, affine=False),
        nn.GroupNorm(2, 4, eps=1e-3, dtype=jg.float32),
        nn.RMSNorm((2, 3), elementwise_affine=False),
        nn.RMSNorm(4, eps=1e-4, dtype=jg.float32),
        nn.InstanceNorm1d(3),
        nn.InstanceNorm2d(4, momentum=None, affine=True, track_running_stats=True),
    ):
        rebuilt = nn.from_config(layer.config())
        assert type(rebuilt) is type(layer) and rebuilt.config() == layer.config()
        assert repr(rebuilt) == repr(layer)


# -- a jitted training step -----------------------------------------------------------------


class NormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 24, generator=0)
        self.bn = nn.BatchNorm2d(6, momentum=None)
        self.gn = nn.GroupNorm(3, 6)
        self.rms = nn.RMSNorm(24)
        self.ln = nn.LayerNorm(24)
        self.instance = nn.InstanceNorm1d(6, affine=True, track_running_stats=True)
        self.out = nn.Linear(24, 3, generator=1)

    def forward(self, x):
        h = self.fc(x).reshape(-1, 6, 2, 2)
        h = self.instance(F.relu(self.gn(self.bn(h))).reshape(-1, 6, 4)).reshape(-1, 24)
        return self.out(self.ln(self.rms(h)))


def test_a_jitted_training_step_with_norm_layers_equals_eager():
    rng = np.random.default_rng(0)
    batches = [
        (jg.tensor(rng.standard_normal((6, 8))), jg.tensor(rng.integers(0, 3, 6))) for _ in range(3)
    ]
    runs = []
    for jitted in (False, True):
        model = NormNet()
        opt = jg.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        run = jg.jit(step) if jitted else step
        losses = [run(*batches[i % 3]).item() for i in range(6)]
        runs.append((losses, model.state_dict()))
        if jitted:
            assert run.traces == 1
    (eager_losses, eager_state), (jit_losses, jit_state) = runs
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-12)
    assert eager_losses[-1] < eager_losses[0]  # it trains
    for key, value in eager_state.items():
        np.testing.assert_allclose(jit_state[key].numpy(), value.numpy(), rtol=1e-10, err_msg=key)
