"""The learning-rate schedules against torch.optim.lr_scheduler: the same settings give
the same rates (and OneCycleLR and CyclicLR the same momenta) over N steps, ChainedScheduler
composes them as torch's does; state_dict resumes."""

import math

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn, optim

torch = pytest.importorskip("torch")
N = 30


def _optimizers(kind="SGD", **options):
    """(ours, torch's) with two parameter groups at different rates."""
    options = {"lr": 0.1, **options}
    ours = getattr(optim, kind)(
        [{"params": [nn.Parameter(jg.ones(1))]}, {"params": [nn.Parameter(jg.ones(1))], "lr": 0.5}],
        **options,
    )
    theirs = getattr(torch.optim, kind)(
        [{"params": [torch.ones(1, requires_grad=True)]}, {"params": [torch.ones(1)], "lr": 0.5}],
        **options,
    )
    return ours, theirs


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum", 0.0) for g in opt.param_groups]


def _sequence(opt, sched, steps=N, metrics=None):
    out = []
    for k in range(steps):
        out.append([g["lr"] for g in opt.param_groups] + _momenta(opt))
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[k])
    out.append([g["lr"] for g in opt.param_groups] + _momenta(opt))
    return out


def _assert_same(make, kind="SGD", options=None, steps=N, metrics=None):
    ours, theirs = _optimizers(kind, **(options or {}))
    got = _sequence(ours, make(optim.lr_scheduler, ours), steps, metrics)
    want = _sequence(theirs, make(torch.optim.lr_scheduler, theirs), steps, metrics)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    return got


@pytest.mark.parametrize(
    "make",
    [
        lambda S, o: S.LambdaLR(o, lambda e: 1 / (1 + e)),
        lambda S, o: S.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1 + (e % 3)]),
        lambda S, o: S.MultiStepLR(o, milestones=[3, 7, 7, 12]),
        lambda S, o: S.MultiStepLR(o, milestones=[10, 2], gamma=0.5),
        lambda S, o: S.ExponentialLR(o, gamma=0.9),
        lambda S, o: S.LinearLR(o),
        lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=12),
        lambda S, o: S.SequentialLR(
            o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, 0.8)], [5]
        ),
        lambda S, o: S.SequentialLR(
            o,
            [S.ExponentialLR(o, 0.9), S.MultiStepLR(o, [2, 6]), S.CosineAnnealingLR(o, 8)],
            milestones=[4, 15],
        ),
        lambda S, o: S.ConstantLR(o),
        lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=9),
        lambda S, o: S.PolynomialLR(o),
        lambda S, o: S.PolynomialLR(o, total_iters=20, power=2.5),
        lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=7),
        lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
        lambda S, o: S.SequentialLR(
            o, [S.ConstantLR(o, 0.1, 4), S.CosineAnnealingWarmRestarts(o, 5, 2)], [4]
        ),
    ],
    ids=[
        "lambda",
        "lambdas",
        "multistep",
        "multistep-unsorted",
        "exponential",
        "linear",
        "linear-down",
        "sequential-warmup",
        "sequential-three",
        "constant",
        "constant-long",
        "polynomial",
        "polynomial-squared",
        "warm-restarts",
        "warm-restarts-doubling",
        "sequential-constant-restarts",
    ],
)
def test_epoch_schedules_match_torch(make):
    _assert_same(make)


@pytest.mark.parametrize("anneal_strategy", ["cos", "linear"])
@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize(
    ("kind", "options"), [("SGD", {"momentum": 0.9}), ("Adam", {}), ("SGD", {})]
)
@pytest.mark.parametrize("pct_start", [0.3, 0.25])  # the peak on step 8, between 6 and 7
def test_one_cycle_matches_torch(anneal_strategy, three_phase, kind, options, pct_start):
    cycle = "momentum" in options or kind == "Adam"

    def make(S, o):
        return S.OneCycleLR(
            o,
            max_lr=[1.0, 0.3],
            total_steps=N,
            pct_start=pct_start,
            anneal_strategy=anneal_strategy,
            three_phase=three_phase,
            cycle_momentum=cycle,
            div_factor=10.0,
        )

    got = _assert_same(make, kind, options)
    if pct_start == 0.3:  # the extremes are reached
        assert max(row[0] for row in got) == pytest.approx(1.0)
        if cycle:
            assert {round(row[2], 6) for row in got} >= {0.85, 0.95}


def test_one_cycle_from_epochs_and_its_end():
    def make(S, o):
        return S.OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=5, cycle_momentum=False)

    _assert_same(make, steps=15)
    ours, _ = _optimizers()
    sched = optim.lr_scheduler.OneCycleLR(ours, max_lr=0.5, total_steps=3, cycle_momentum=False)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="past its total_steps"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps or"):
        optim.lr_scheduler.OneCycleLR(ours, max_lr=0.5)
    with pytest.raises(ValueError, match="neither 'momentum' nor 'betas'"):
        optim.lr_scheduler.OneCycleLR(_optimizers("Adagrad")[0], max_lr=0.5, total_steps=3)


class Damped:
    """A callable scale_fn: state_dict keeps its attributes."""

    def __init__(self):
        self.rate = 0.8

    def __call__(self, x):
        return self.rate**x


@pytest.mark.parametrize(
    ("kind", "options"), [("SGD", {"momentum": 0.9}), ("Adam", {}), ("Adagrad", {})]
)
@pytest.mark.parametrize(
    "settings",
    [
        dict(step_size_up=4),
        dict(step_size_up=3, step_size_down=5, mode="triangular2"),
        dict(step_size_up=2, step_size_down=4, mode="exp_range", gamma=0.97),
        dict(step_size_up=5, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"),
        dict(step_size_up=3, scale_fn=Damped(), base_momentum=[0.7, 0.6], max_momentum=0.95),
    ],
    ids=["triangular", "triangular2", "exp_range", "scale-iterations", "scale-cycle"],
)
def test_cyclic_matches_torch(kind, options, settings):
    cycle = kind != "Adagrad"

    def make(S, o):
        return S.CyclicLR(o, [0.01, 0.05], [0.1, 0.2], cycle_momentum=cycle, **settings)

    got = _assert_same(make, kind, options, steps=40)
    if cycle and len(settings) == 1:  # the triangular cycle reaches both extremes
        assert {round(row[2], 6) for row in got} >= {0.8, 0.9}


@pytest.mark.parametrize(
    "make",
    [
        lambda S, o: [S.ConstantLR(o, factor=0.1, total_iters=6), S.ExponentialLR(o, 0.9)],
        lambda S, o: [S.LinearLR(o, 0.2, total_iters=5), S.StepLR(o, 4, 0.5)],
        lambda S, o: [S.MultiStepLR(o, [3, 9], 0.3), S.CosineAnnealingLR(o, 10, eta_min=0.001)],
        lambda S, o: [S.ExponentialLR(o, 0.95), S.PolynomialLR(o, total_iters=12, power=1.5)],
        lambda S, o: [S.ExponentialLR(o, 0.9), S.LambdaLR(o, lambda e: 1 / (1 + e))],
        lambda S, o: [S.CyclicLR(o, 0.01, 0.1, 3), S.StepLR(o, 2, 0.9)],
    ],
    ids=["constant-exp", "linear-step", "multistep-cosine", "exp-poly", "lambda", "cyclic"],
)
def test_chained_matches_torch(make):
    """Multiplicative schedules' changes compose; LambdaLR's and CyclicLR's rates overwrite
    the ones before them."""
    _assert_same(lambda S, o: S.ChainedScheduler(make(S, o)), options={"momentum": 0.9})
    ours, _ = _optimizers()
    S = optim.lr_scheduler
    with pytest.raises(ValueError, match="at least one scheduler"):
        S.ChainedScheduler([], optimizer=ours)
    with pytest.raises(TypeError, match="not an epoch-driven schedule"):
        S.ChainedScheduler([S.ExponentialLR(ours, 0.5), S.ReduceLROnPlateau(ours)])


METRICS = [5.0, 4.0, 4.0, 4.0, 3.9999, 4.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0] * 3


@pytest.mark.parametrize(
    "options",
    [
        dict(patience=1),
        dict(mode="max", factor=0.5, patience=0),
        dict(patience=2, threshold=0.1, threshold_mode="abs", cooldown=2),
        dict(mode="max", threshold_mode="abs", patience=1, min_lr=[0.02, 0.3]),
        dict(factor=0.5, patience=0, min_lr=0.05),
        dict(patience=0, cooldown=1, eps=0.02),
    ],
)
def test_reduce_on_plateau_matches_torch(options):
    _assert_same(
        lambda S, o: S.ReduceLROnPlateau(o, **options), steps=len(METRICS), metrics=METRICS
    )


def test_reduce_on_plateau_takes_a_tensor_and_resumes():
    ours, _ = _optimizers()
    sched = optim.lr_scheduler.ReduceLROnPlateau(ours, patience=0)
    sched.step(jg.tensor(1.0))
    sched.step(jg.tensor(2.0))
    assert sched.get_last_lr() == pytest.approx([0.01, 0.05])
    again, _ = _optimizers()
    resumed = optim.lr_scheduler.ReduceLROnPlateau(again, patience=0)
    resumed.load_state_dict(sched.state_dict())
    assert resumed.best == 1.0 and resumed.num_bad_epochs == 0
    with pytest.raises(ValueError, match="factor must be below 1.0"):
        optim.lr_scheduler.ReduceLROnPlateau(ours, factor=1.0)
    with pytest.raises(ValueError, match="mode must be"):
        optim.lr_scheduler.ReduceLROnPlateau(ours, mode="lowest")


class Halving:
    def __init__(self):
        self.base = 0.5

    def __call__(self, epoch):
        return self.base**epoch


@pytest.mark.parametrize(
    "make",
    [
        lambda S, o: S.MultiStepLR(o, milestones=[2, 5], gamma=0.5),
        lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=6),
        lambda S, o: S.LambdaLR(o, Halving()),
        lambda S, o: S.OneCycleLR(o, max_lr=1.0, total_steps=12),
        lambda S, o: S.SequentialLR(
            o, [S.LinearLR(o, total_iters=3), S.ExponentialLR(o, 0.5)], [3]
        ),
        lambda S, o: S.CyclicLR(o, 0.01, 0.1, 2, 3, scale_fn=Damped(), scale_mode="iterations"),
        lambda S, o: S.ChainedScheduler([S.ConstantLR(o, 0.5, 3), S.ExponentialLR(o, 0.8)]),
    ],
)
def test_state_dict_resumes_the_sequence(make, tmp_path):
    opt, _ = _optimizers(momentum=0.9)
    sched = make(optim.lr_scheduler, opt)
    _sequence(opt, sched, 4)
    jg.save(sched.state_dict(), tmp_path / "sched.jg")
    want = _sequence(opt, sched, 6)
    opt2, _ = _optimizers(momentum=0.9)
    sched2 = make(optim.lr_scheduler, opt2)
    sched2.load_state_dict(jg.load(tmp_path / "sched.jg"))
    assert _sequence(opt2, sched2, 6)[1:] == want[1:]


def test_bad_settings_are_named():
    opt, _ = _optimizers()
    S = optim.lr_scheduler
    with pytest.raises(ValueError, match="start_factor must be in"):
        S.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="expected 2 lr_lambdas"):
        S.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError, match="expects 1 milestones"):
        S.SequentialLR(opt, [S.ExponentialLR(opt, 0.5), S.ExponentialLR(opt, 0.5)], [])
    other, _ = _optimizers()
    with pytest.raises(ValueError, match="another optimizer"):
        S.SequentialLR(opt, [S.ExponentialLR(opt, 0.5), S.ExponentialLR(other, 0.5)], [2])
    assert math.isclose(S.ExponentialLR(opt, 0.5).get_last_lr()[0], 0.1)
    with pytest.raises(ValueError, match="mode must be 'triangular'"):
        S.CyclicLR(opt, 0.01, 0.1, mode="triangle")
    with pytest.raises(ValueError, match="scale_mode must be"):
        S.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 1.0, scale_mode="epochs")
    with pytest.raises(ValueError, match="expected 2 values for max_lr"):
        S.CyclicLR(opt, 0.01, [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="neither 'momentum' nor 'betas'"):
        S.CyclicLR(_optimizers("Adagrad")[0], 0.01, 0.1)


def test_warm_restarts_take_fractional_epochs_as_torch():
    """``step(epoch + i / batches)``, the SGDR paper's per-batch schedule."""
    ours, theirs = _optimizers()
    mine = optim.lr_scheduler.CosineAnnealingWarmRestarts(ours, T_0=2, T_mult=2)
    other = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(theirs, T_0=2, T_mult=2)
    for epoch in range(7):
        for i in range(4):
            mine.step(epoch + i / 4)
            other.step(epoch + i / 4)
            np.testing.assert_allclose(mine.get_last_lr(), other.get_last_lr(), rtol=1e-12)
    with pytest.raises(ValueError, match="negative"):
        mine.step(-1.5)
    assert mine.last_epoch == 6.75  # (left as it was)
