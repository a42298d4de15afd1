"""NLLLoss, L1Loss, BCELoss, SmoothL1Loss, HuberLoss, KLDivLoss and CosineEmbeddingLoss
and their functional forms against PyTorch: values and gradients for every reduction."""

import numpy as np
import pytest
import torch
from nn_torch_oracle import assert_matches_torch

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

REDUCTIONS = ["mean", "sum", "none"]


def data(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def probabilities(shape, seed=0):
    return np.random.default_rng(seed).uniform(0.02, 0.98, shape)


def both(name, **kwargs):
    """The jitgrad and torch losses of PyTorch's class ``name`` made with ``kwargs``."""
    weight = kwargs.pop("weight", None)
    jg_kwargs, torch_kwargs = dict(kwargs), dict(kwargs)
    if weight is not None:
        jg_kwargs["weight"], torch_kwargs["weight"] = jg.tensor(weight), torch.tensor(weight)
    return getattr(nn, name)(**jg_kwargs), getattr(torch.nn, name)(**torch_kwargs)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("L1Loss", {}),
        ("SmoothL1Loss", {}),
        ("SmoothL1Loss", {"beta": 0.5}),
        ("SmoothL1Loss", {"beta": 0.0}),
        ("HuberLoss", {}),
        ("HuberLoss", {"delta": 0.3}),
        ("HuberLoss", {"delta": 2.5}),
    ],
)
def test_regression_losses_like_torch(name, kwargs, reduction):
    loss, tloss = both(name, reduction=reduction, **kwargs)
    assert_matches_torch(loss, tloss, data((4, 5), 1, 2.0), data((4, 5), 2))
    functional = {"L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss", "HuberLoss": "huber_loss"}
    f = getattr(F, functional[name])
    torch_f = getattr(torch.nn.functional, functional[name])
    assert_matches_torch(
        lambda x, t: f(x, t, reduction=reduction, **kwargs),
        lambda x, t: torch_f(x, t, reduction=reduction, **kwargs),
        data((3, 2, 4), 3),
        data((3, 2, 4), 4),
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (4,)])
def test_nll_loss_like_torch(shape, weighted, reduction):
    rng = np.random.default_rng(5)
    logp = torch.log_softmax(torch.tensor(data(shape, 6)), dim=0 if len(shape) == 1 else 1)
    labels = rng.integers(0, 4, shape[:1] + shape[2:] if len(shape) > 1 else ())
    labels.flat[0] = -100  # ignored
    weight = np.array([0.5, 2.0, 1.0, 1.5]) if weighted else None
    loss, tloss = both("NLLLoss", weight=weight, reduction=reduction)
    assert_matches_torch(loss, tloss, logp.numpy(), labels)
    ignore = 2 if labels.ndim else int(labels)
    loss, tloss = both("NLLLoss", weight=weight, ignore_index=ignore, reduction=reduction)
    if labels.ndim:
        labels.flat[0] = 1
    assert_matches_torch(loss, tloss, logp.numpy(), labels)
    jw = None if weight is None else jg.tensor(weight)
    tw = None if weight is None else torch.tensor(weight)
    assert_matches_torch(
        lambda x, t: F.nll_loss(x, t, weight=jw, reduction=reduction),
        lambda x, t: torch.nn.functional.nll_loss(x, t, weight=tw, reduction=reduction),
        logp.numpy(),
        labels,
    )


def test_nll_loss_errors():
    with pytest.raises(IndexError, match="nll_loss: target label 5 is out of range for 3 classes"):
        F.nll_loss(jg.zeros((2, 3)), jg.tensor([0, 5]))
    with pytest.raises(ValueError, match=r"nll_loss: target of shape \(3,\) does not match"):
        F.nll_loss(jg.zeros((2, 3)), jg.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="weight of shape .2,. should have one entry per class"):
        nn.NLLLoss(weight=jg.ones(2))(jg.zeros((2, 3)), jg.tensor([0, 1]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_loss_like_torch(weighted, reduction):
    weight = np.abs(data((1, 5), 7)) if weighted else None
    loss, tloss = both("BCELoss", weight=weight, reduction=reduction)
    p, t = probabilities((4, 5), 8), np.random.default_rng(9).uniform(0, 1, (4, 5))
    assert_matches_torch(loss, tloss, p, t)
    # certain predictions: each log is clamped at -100, as PyTorch's
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    t = np.array([1.0, 0.0, 0.0, 1.0, 0.3])
    loss, tloss = both("BCELoss", reduction=reduction)
    assert_matches_torch(loss, tloss, p, t, grad=False)


def test_bce_loss_gradient_is_finite_at_certain_predictions():
    p = jg.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    F.binary_cross_entropy(p, jg.tensor([1.0, 0.0, 0.0, 1.0])).backward()
    assert np.isfinite(p.grad.numpy()).all()


def test_bce_loss_refuses_values_outside_zero_and_one():
    with pytest.raises(ValueError, match=r"probability in \[0, 1\], got 1.5"):
        F.binary_cross_entropy(jg.tensor([0.5, 1.5]), jg.tensor([0.0, 1.0]))
    step = jg.jit(lambda p, t: F.binary_cross_entropy(p, t))
    step(jg.tensor([0.5, 0.2]), jg.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"got -0.5"):  # checked on every call of the plan
        step(jg.tensor([-0.5, 0.2]), jg.tensor([0.0, 1.0]))


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize("reduction", [*REDUCTIONS, "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_like_torch(reduction, log_target):
    logp = torch.log_softmax(torch.tensor(data((3, 5), 10)), 1).numpy()
    q = probabilities((3, 5), 11)
    target = np.log(probabilities((3, 5), 12)) if log_target else q
    loss, tloss = both("KLDivLoss", reduction=reduction, log_target=log_target)
    assert_matches_torch(loss, tloss, logp, target)
    assert_matches_torch(
        lambda x, t: F.kl_div(x, t, reduction=reduction, log_target=log_target),
        lambda x, t: torch.nn.functional.kl_div(x, t, reduction=reduction, log_target=log_target),
        logp,
        target,
    )
    # A zero target contributes 0 (its own gradient, -x here, is nan in PyTorch).
    q[0, 1] = 0.0
    jq, tq = jg.tensor(q), torch.tensor(q)
    assert_matches_torch(
        lambda x: F.kl_div(x, jq, reduction=reduction),
        lambda x: torch.nn.functional.kl_div(x, tq, reduction=reduction),
        logp,
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3, -0.2])
def test_cosine_embedding_loss_like_torch(reduction, margin):
    loss, tloss = both("CosineEmbeddingLoss", margin=margin, reduction=reduction)
    x1, x2 = data((6, 4), 13), data((6, 4), 14)
    x2[0] = 0.0  # a zero vector: cos 0, as PyTorch's eps gives
    labels = np.array([1, -1, 1, -1, -1, 1])
    # (the zero vector's gradient is about 1e4, from 1 / sqrt(eps): rounded at 1e-9)
    assert_matches_torch(loss, tloss, x1, x2, labels, rtol=1e-8)
    assert_matches_torch(loss, tloss, data(4, 15), data(4, 16), np.array(-1))


def test_positional_arguments_in_torchs_order():
    w = np.array([0.5, 2.0, 1.0])
    logp = torch.log_softmax(torch.tensor(data((4, 3), 20)), 1).numpy()
    assert_matches_torch(
        lambda x, t: F.nll_loss(x, t, jg.tensor(w)),
        lambda x, t: torch.nn.functional.nll_loss(x, t, torch.tensor(w)),
        logp,
        np.array([0, 2, 1, 1]),
    )
    assert_matches_torch(
        lambda p, t: F.binary_cross_entropy(p, t, jg.tensor(w)),
        lambda p, t: torch.nn.functional.binary_cross_entropy(p, t, torch.tensor(w)),
        probabilities((4, 3), 21),
        probabilities((4, 3), 22),
    )
    assert_matches_torch(
        lambda a, b, y: F.cosine_embedding_loss(a, b, y, 0.2),
        lambda a, b, y: torch.nn.functional.cosine_embedding_loss(a, b, y, 0.2),
        data((4, 3), 23),
        data((4, 3), 24),
        np.array([1, -1, -1, 1]),
    )


def test_loss_argument_errors():
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.L1Loss(reduction="avg")
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.huber_loss(jg.ones(2), jg.ones(2), reduction="batchmean")
    with pytest.raises(ValueError, match="beta must not be negative"):
        nn.SmoothL1Loss(beta=-1.0)
    with pytest.raises(ValueError, match="delta must be positive"):
        F.huber_loss(jg.ones(2), jg.ones(2), delta=0.0)
    with pytest.raises(ValueError, match=r"target of shape \(3,\) does not match"):
        F.l1_loss(jg.ones(2), jg.ones(3))
    with pytest.raises(ValueError, match=r"target of shape \(3,\) should have shape \(2,\)"):
        F.cosine_embedding_loss(jg.ones((2, 4)), jg.ones((2, 4)), jg.ones(3))
    with pytest.raises(ValueError, match="must have one shape"):
        F.cosine_embedding_loss(jg.ones((2, 4)), jg.ones((2, 3)), jg.ones(2))


def test_losses_rebuild_from_their_configs():
    for loss in (
        nn.L1Loss(reduction="sum"),
        nn.SmoothL1Loss(beta=0.5),
        nn.HuberLoss("none", delta=2.0),
        nn.KLDivLoss("batchmean", log_target=True),
        nn.CosineEmbeddingLoss(margin=0.1),
        nn.NLLLoss(weight=jg.tensor([1.0, 2.0], dtype=jg.float32), ignore_index=3),
        nn.BCELoss(weight=jg.tensor([0.5, 1.0])),
    ):
        rebuilt = nn.from_config(loss.config())
        assert type(rebuilt) is type(loss) and rebuilt.config() == loss.config()
    assert list(nn.NLLLoss(weight=jg.ones(2)).state_dict()) == ["weight"]  # a buffer
    weight = nn.from_config(nn.BCELoss(weight=jg.ones(2, dtype=jg.float32)).config()).weight
    assert weight.dtype is jg.float32


def test_a_jitted_step_with_these_losses_equals_eager():
    rng = np.random.default_rng(0)
    batches = [
        (jg.tensor(rng.standard_normal((5, 4))), jg.tensor(rng.integers(0, 3, 5))) for _ in range(2)
    ]

    def make():
        fc = nn.Linear(4, 3, generator=0)
        opt = jg.optim.SGD(fc.parameters(), lr=0.05)

        def step(x, y):
            opt.zero_grad()
            scores = fc(x)
            logp = F.log_softmax(scores, dim=1)
            p = F.sigmoid(scores)
            hot = F.one_hot(y, 3).astype(scores.dtype)
            loss = (
                F.nll_loss(logp, y, weight=jg.tensor([1.0, 2.0, 0.5]))
                + F.binary_cross_entropy(p, hot)
                + F.smooth_l1_loss(scores, hot, beta=0.5)
                + F.kl_div(logp, F.softmax(x[:, :3], dim=1), reduction="batchmean")
                + F.cosine_embedding_loss(scores, x[:, :3], jg.tensor([1, -1, 1, -1, 1]))
            )
            loss.backward()
            opt.step()
            return loss

        return fc, step

    (eager_fc, eager), (jit_fc, jitted) = make(), make()
    jitted = jg.jit(jitted)
    for i in range(4):
        x, y = batches[i % 2]
        assert jitted(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    np.testing.assert_allclose(jit_fc.weight.numpy(), eager_fc.weight.numpy(), rtol=1e-12)
    assert jitted.traces == 1


def _signs(shape, seed):
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0)


PAIRWISE_LOSSES = [  # (class, settings, arrays, positions of targets: no gradient)
    ("MarginRankingLoss", {"margin": 0.3}, lambda: (data(6, 1), data(6, 2), _signs(6, 3)), (2,)),
    ("HingeEmbeddingLoss", {"margin": 0.5}, lambda: (data((3, 4), 4), _signs((3, 4), 5)), (1,)),
    ("SoftMarginLoss", {}, lambda: (data((3, 4), 6), _signs((3, 4), 7)), (1,)),
    (
        "MultiLabelSoftMarginLoss",
        {"weight": np.array([0.5, 1.0, 2.0, 1.5])},
        lambda: (data((3, 4), 8), (data((3, 4), 9) > 0).astype(float)),
        (1,),
    ),
    (
        "TripletMarginLoss",
        {"margin": 0.5},
        lambda: (data((5, 3), 10), data((5, 3), 11), data((5, 3), 12)),
        (),
    ),
    (
        "TripletMarginLoss",
        {"p": 1.0, "swap": True},
        lambda: (data((5, 3), 13), data((5, 3), 14), data((5, 3), 15)),
        (),
    ),
    (
        "PoissonNLLLoss",
        {},
        lambda: (data((3, 4), 16), np.floor(np.abs(data((3, 4), 17)) * 3)),
        (1,),
    ),
    (
        "PoissonNLLLoss",
        {"log_input": False, "full": True},
        lambda: (np.abs(data((3, 4), 18)) + 0.1, np.floor(np.abs(data((3, 4), 19)) * 3)),
        (1,),
    ),
    (
        "GaussianNLLLoss",
        {"full": True},
        lambda: (data((3, 4), 20), data((3, 4), 21), np.abs(data((3, 4), 22)) + 0.1),
        (1,),
    ),
    (
        "GaussianNLLLoss",
        {"eps": 0.05},
        lambda: (data((3, 4), 23), data((3, 4), 24), np.abs(data((3, 1), 25)) * 0.1),
        (1,),
    ),
]


def _targets_fixed(loss, positions):
    return lambda *args: loss(*(a.detach() if k in positions else a for k, a in enumerate(args)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(
    "name, kwargs, arrays, targets",
    PAIRWISE_LOSSES,
    ids=[f"{n}-{k}" for n, k, _, _ in PAIRWISE_LOSSES],
)
def test_margin_triplet_and_likelihood_losses_like_torch(name, kwargs, arrays, targets, reduction):
    ours, theirs = both(name, reduction=reduction, **kwargs)
    assert_matches_torch(_targets_fixed(ours, targets), _targets_fixed(theirs, targets), *arrays())
    assert repr(nn.from_config(ours.config())) == repr(ours)


def test_gaussian_nll_loss_refuses_a_negative_variance():
    with pytest.raises(ValueError, match="var has negative entries"):
        F.gaussian_nll_loss(jg.ones(3), jg.ones(3), jg.tensor([1.0, -1.0, 1.0]))
