"""Optimizers against hand-computed steps and a step-by-step transcription of PyTorch's
documented algorithms; schedules' learning-rate sequences; state_dict round trips."""

import copy
import math
import pickle

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn, optim
from jitgrad.ops import reference, tensor_math
from jitgrad.optim.lr_scheduler import CosineAnnealingLR, StepLR


def param(values, dtype=jg.float64):
    return nn.Parameter(jg.tensor(values, dtype=dtype))


def run(opt, p, grads):
    """Set each gradient in turn and step; the parameter's values after each step."""
    out = []
    for g in grads:
        p.grad = jg.tensor(g, dtype=p.dtype)
        opt.step()
        out.append(p.numpy().copy())
    return out


def quadratic(opt, p, steps):
    """Minimise sum(p²) (gradient 2p) for ``steps`` steps."""
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        out.append(p.numpy().copy())
    return out


# -- SGD: hand-computed ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, [0.8, 0.64, 0.512]),
        ({"weight_decay": 0.1}, [0.79, 0.6241, 0.493039]),
        # buf = g on the first step, then 0.9·buf + g
        ({"momentum": 0.9}, [0.8, 0.46, 0.062]),
        # dampening does not apply to the first step: buf2 = 0.9·2 + 0.5·1.6 = 2.6
        ({"momentum": 0.9, "dampening": 0.5}, [0.8, 0.54]),
        # d = g + 0.9·buf: 1 - 0.1·3.8 = 0.62; then g=1.24, buf=3.04, d=3.976
        ({"momentum": 0.9, "nesterov": True}, [0.62, 0.2224]),
        ({"maximize": True}, [1.2, 1.44]),
    ],
)
def test_sgd_hand_computed(options, expected):
    p = param([1.0])
    got = quadratic(optim.SGD([p], lr=0.1, **options), p, len(expected))
    np.testing.assert_allclose(np.concatenate(got), expected, rtol=1e-12)


# -- Adam: hand-computed and against the documented algorithm -------------------------------


def test_adam_hand_computed_two_steps():
    p = param([1.0])
    got = quadratic(optim.Adam([p], lr=0.1), p, 2)
    # step 1: m=0.2, v=0.004, m̂=2, v̂=4 -> p = 1 - 0.1·2/(2 + 1e-8)
    assert got[0][0] == pytest.approx(1 - 0.1 * 2 / (2 + 1e-8), rel=1e-14)
    # step 2: g=1.8, m=0.36, v=0.007236, m̂=0.36/0.19, v̂=0.007236/0.001999
    m_hat, v_hat = 0.36 / 0.19, 0.007236 / (1 - 0.999**2)
    assert got[1][0] == pytest.approx(got[0][0] - 0.1 * m_hat / (math.sqrt(v_hat) + 1e-8), rel=1e-9)


def adam_reference(p0, grads, lr, beta1, beta2, eps, wd, amsgrad, decoupled):
    """PyTorch's Adam/AdamW pseudo-code, one step at a time, in float64 numpy."""
    p = np.array(p0, dtype=np.float64)
    m, v, vmax, out = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p), []
    for t, g in enumerate(grads, 1):
        g = np.array(g, dtype=np.float64)
        if decoupled:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        vmax = np.maximum(vmax, v)
        second = vmax if amsgrad else v
        p = p - lr * (m / (1 - beta1**t)) / (np.sqrt(second / (1 - beta2**t)) + eps)
        out.append(p.copy())
    return out


# Gradients that shrink then grow, so AMSGrad's maximum differs from the running v.
GRADS = [[1.0, -2.0, 0.5], [0.1, -0.2, 0.05], [0.05, 0.3, -0.01], [2.0, 0.0, 1.0]]


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("wd", [0.0, 0.1])
def test_adam_family_against_reference(cls, amsgrad, wd):
    p0 = [0.5, -1.0, 2.0]
    p = param(p0)
    opt = cls([p], lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=wd, amsgrad=amsgrad)
    got = run(opt, p, GRADS)
    expected = adam_reference(p0, GRADS, 0.05, 0.8, 0.9, 1e-6, wd, amsgrad, cls is optim.AdamW)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=1e-15)
    if amsgrad:
        assert "max_exp_avg_sq" in opt.state[p]
    assert opt.state[p]["step"] == len(GRADS)


def test_amsgrad_changes_the_result():
    a, b = param([1.0, 1.0, 1.0]), param([1.0, 1.0, 1.0])
    plain = run(optim.Adam([a], lr=0.1), a, GRADS)
    ams = run(optim.Adam([b], lr=0.1, amsgrad=True), b, GRADS)
    assert not np.allclose(plain[-1], ams[-1])


def test_adamw_decoupled_decay_on_zero_gradient():
    p = param([2.0])
    run(optim.AdamW([p], lr=0.1, weight_decay=0.5), p, [[0.0], [0.0]])
    assert p.item() == pytest.approx(2.0 * 0.95 * 0.95, rel=1e-14)
    assert optim.AdamW([param([1.0])]).defaults["weight_decay"] == 0.01


def test_adam_maximize():
    p = param([1.0])
    run(optim.Adam([p], lr=0.1, maximize=True), p, [[2.0]])
    assert p.item() == pytest.approx(1.1, rel=1e-8)


# -- dtypes, storage versions, the formulas themselves -----------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
        lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
        lambda ps: optim.AdamW(ps, lr=0.1),
    ],
)
def test_float32_parameters_stay_float32_and_match_float64(make):
    p32, p64 = param(GRADS[0], jg.float32), param(GRADS[0])
    opt32, opt64 = make([p32]), make([p64])
    got32, got64 = run(opt32, p32, GRADS), run(opt64, p64, GRADS)
    assert p32.dtype is jg.float32
    assert all(t.dtype is jg.float32 for t in opt32.state[p32].values() if isinstance(t, jg.Tensor))
    np.testing.assert_allclose(np.array(got32), np.array(got64), rtol=2e-5, atol=1e-6)


def test_step_bumps_storage_versions_so_stale_graphs_fail():
    p = param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    y = (p * p).sum()
    (p * p).sum().backward()
    version = p.storage()._version
    opt.step()
    assert p.storage()._version > version
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()


def test_formulas_are_namespace_agnostic():
    """The same update formula gives the same values on numpy arrays (reference) and on
    jitgrad tensors (tensor_math): what lets the JIT lower it as written."""
    p, g, m, v, vmax = (
        np.array(x) for x in ([0.5, -1.0], [0.2, 0.3], [0.1, 0.0], [0.01, 0.02], [0.02, 0.01])
    )
    hyper = dict(
        lr=0.1,
        beta1=0.9,
        beta2=0.99,
        eps=1e-8,
        weight_decay=0.1,
        step=3,
        amsgrad=True,
        decoupled_weight_decay=True,
        maximize=False,
    )
    arrays = optim.adam_update(reference, p, g, m, v, vmax, **hyper)
    tensors = optim.adam_update(tensor_math, *(jg.asarray(a) for a in (p, g, m, v, vmax)), **hyper)
    for a, t in zip(arrays, tensors, strict=True):
        np.testing.assert_allclose(a, t.numpy(), rtol=1e-15)
    sgd = dict(
        lr=0.1,
        weight_decay=0.0,
        momentum=0.9,
        dampening=0.0,
        nesterov=True,
        maximize=False,
        first_step=False,
    )
    a_p, a_b = optim.sgd_update(reference, p, g, m, **sgd)
    t_p, t_b = optim.sgd_update(tensor_math, jg.asarray(p), jg.asarray(g), jg.asarray(m), **sgd)
    np.testing.assert_allclose(a_p, t_p.numpy(), rtol=1e-15)
    np.testing.assert_allclose(a_b, t_b.numpy(), rtol=1e-15)


def test_parameters_without_gradient_are_skipped():
    a, b = param([1.0]), param([1.0])
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = jg.tensor([1.0])
    opt.step()
    assert b.item() == 1.0 and b not in opt.state


def test_closure_is_called_with_grad_enabled():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with jg.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 1.0 and p.item() == pytest.approx(0.8)


# -- groups, zero_grad, validation ---------------------------------------------------------------


def test_param_groups_take_their_own_options():
    a, b = param([1.0]), param([1.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    a.grad, b.grad = jg.tensor([1.0]), jg.tensor([1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    assert [g["momentum"] for g in opt.param_groups] == [0.0, 0.9]
    assert "Parameter Group 1" in repr(opt)


def test_zero_grad():
    p = param([1.0, 2.0])
    opt = optim.SGD([p], lr=0.1)
    p.grad = jg.tensor([3.0, 4.0])
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_invalid_arguments_are_named():
    p = param([1.0])
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="single tensor"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="invalid learning rate"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="optimize tensors"):
        optim.SGD([1.0], lr=0.1)
    # a set's order changes between runs, and state_dict numbers parameters by order
    with pytest.raises(TypeError, match="not a set"):
        optim.SGD([{"params": {p}}], lr=0.1)  # PyTorch refuses this too
    with pytest.raises(TypeError, match="not a set"):
        optim.SGD({p}, lr=0.1)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(TypeError, match="not a set"):
        opt.add_param_group({"params": {param([2.0])}})


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda p: optim.Adam([p], betas=(0.9, 0.99, 0.5)), ValueError, r"betas must be a pair"),
        (lambda p: optim.Adam([p], betas=0.9), ValueError, r"betas must be a pair"),
        (lambda p: optim.Adam([p], betas=(None, 0.9)), TypeError, r"betas\[0\] must be a number"),
        (lambda p: optim.AdamW([p], eps="1e-8"), TypeError, "eps must be a number, got str"),
        (lambda p: optim.SGD([p], lr=None), TypeError, "SGD: lr must be a number, got NoneType"),
        (lambda p: optim.SGD([p], lr=0.1, momentum=None), TypeError, "momentum must be a number"),
    ],
)
def test_options_of_the_wrong_kind_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make(param([1.0]))


def test_adam_betas_may_be_a_list():
    assert optim.Adam([param([1.0])], betas=[0.8, 0.9]).param_groups[0]["betas"] == (0.8, 0.9)


# -- state_dict --------------------------------------------------------------------------------


def _small_model():
    return nn.Sequential(nn.Linear(3, 4, generator=0), nn.Tanh(), nn.Linear(4, 1, generator=1))


def _train(model, opt, steps: int) -> None:
    x = jg.asarray(np.random.default_rng(0).standard_normal((8, 3)))
    for _ in range(steps):
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: optim.Adam(
            [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.01}], lr=0.1, amsgrad=True
        ),
    ],
)
def test_state_dict_round_trip_resumes_exactly(make, tmp_path):
    model = _small_model()
    opt = make(list(model.parameters()))
    _train(model, opt, 3)
    jg.save({"model": model.state_dict(), "optim": opt.state_dict()}, tmp_path / "ckpt.jg")
    _train(model, opt, 2)  # the uninterrupted run

    resumed = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    ckpt = jg.load(tmp_path / "ckpt.jg")
    resumed.load_state_dict(ckpt["model"])
    opt2 = make(list(resumed.parameters()))
    opt2.load_state_dict(ckpt["optim"])
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    _train(resumed, opt2, 2)
    for (k, a), b in zip(model.state_dict().items(), resumed.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda obj: pickle.loads(pickle.dumps(obj))])
@pytest.mark.parametrize(
    "make",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
    ],
)
def test_model_and_optimizer_copied_after_steps_train_on_identically(make, duplicate):
    # As torch.optim optimizers do; the prepared kernel launches did not pickle.
    model = _small_model()
    opt = make(list(model.parameters()))
    _train(model, opt, 2)
    model2, opt2 = duplicate((model, opt))
    params2 = list(map(id, model2.parameters()))
    assert list(map(id, opt2.param_groups[0]["params"])) == params2
    assert set(map(id, opt2.state)) == set(params2)
    _train(model, opt, 2)
    _train(model2, opt2, 2)
    for (k, a), b in zip(model.state_dict().items(), model2.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_state_dict_layout_and_copies():
    p = param([1.0, 2.0])
    opt = optim.Adam([p], lr=0.1)
    run(opt, p, [[1.0, 1.0]])
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"} and sd["state"][0]["step"] == 1
    other = param([0.0, 0.0], jg.float32)
    opt2 = optim.Adam([other], lr=0.5)
    opt2.load_state_dict(sd)
    loaded = opt2.state[other]["exp_avg"]
    assert loaded.dtype is jg.float32  # cast to the parameter's dtype
    assert loaded.storage() is not opt.state[p]["exp_avg"].storage()  # copied
    assert opt2.param_groups[0]["lr"] == 0.1


def test_load_state_dict_errors():
    a, b = param([1.0]), param([1.0])
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="has 2 parameters, this optimizer's has 1"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="1 parameter groups, this optimizer has 2"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="exactly the keys"):
        optim.SGD([a], lr=0.1).load_state_dict({"state": {}})


def test_load_state_dict_checks_every_parameter_before_writing():
    a, b = param([1.0, 2.0]), param([1.0, 2.0, 3.0])
    source = optim.SGD([a, b], lr=0.5, momentum=0.9)
    run(source, a, [[1.0, 1.0]])
    sd = source.state_dict()
    sd["state"][1] = {"momentum_buffer": jg.zeros(2)}  # b has 3 elements
    target_a, target_b = param([0.0, 0.0]), param([0.0, 0.0, 0.0])
    target = optim.SGD([target_a, target_b], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="state 'momentum_buffer' of parameter 1 has shape"):
        target.load_state_dict(sd)
    assert not target.state.get(target_a) and target.param_groups[0]["lr"] == 0.1


# -- schedules ---------------------------------------------------------------------------------


def lrs(scheduler, opt, n):
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return out


def test_step_lr_sequence():
    opt = optim.SGD([param([1.0])], lr=0.1)
    got = lrs(StepLR(opt, step_size=3, gamma=0.5), opt, 8)
    np.testing.assert_allclose(got, [0.1] * 3 + [0.05] * 3 + [0.025] * 2, rtol=1e-15)


def test_cosine_annealing_sequence_and_groups():
    opt = optim.SGD([{"params": [param([1.0])]}, {"params": [param([1.0])], "lr": 1.0}], lr=0.1)
    sched = CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    got = lrs(sched, opt, 9)
    expected = [0.01 + 0.09 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(9)]
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert got[4] == pytest.approx(0.01) and got[8] == pytest.approx(0.1)
    second = 0.01 + 0.99 * (1 + math.cos(math.pi * 9 / 4)) / 2
    assert sched.get_last_lr()[1] == pytest.approx(second)


@pytest.mark.parametrize("join", [0, 1, 3])
@pytest.mark.parametrize("schedule", [dict(step_size=2, gamma=0.5), dict(T_max=6, eta_min=0.01)])
def test_a_group_added_later_is_scheduled_as_pytorch_does(schedule, join):
    torch = pytest.importorskip("torch")
    kind = "StepLR" if "step_size" in schedule else "CosineAnnealingLR"
    runs = {}
    for lib, make in ((optim, lambda: param([1.0])), (torch.optim, lambda: torch.ones(1))):
        opt = lib.SGD([make()], lr=1.0)
        sched = getattr(lib.lr_scheduler, kind)(opt, **schedule)
        rates = []
        for epoch in range(6):
            if epoch == join:  # from its own rate, scaled as the schedule goes on
                opt.add_param_group({"params": [make()], "lr": 0.3})
            opt.step()
            sched.step()
            rates.append([group["lr"] for group in opt.param_groups])
        runs[lib] = rates
    for got, want in zip(runs[optim], runs[torch.optim], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    "kind, schedule",
    [
        (StepLR, dict(step_size=1, gamma=0.5)),
        (CosineAnnealingLR, dict(T_max=10)),
    ],
)
@pytest.mark.parametrize("order", ["optimizer first", "scheduler first"])
def test_a_resumed_optimizer_trains_at_the_restored_rate(kind, schedule, order):
    # Resuming as PyTorch's docs do (load the optimizer, build the scheduler, load it) left
    # the rate at the schedule's start for the next epoch while get_last_lr() said otherwise.
    opt = optim.SGD([param([1.0])], lr=1.0)
    sched = kind(opt, **schedule)
    lrs(sched, opt, 3)
    want = opt.param_groups[0]["lr"]
    opt2 = optim.SGD([param([1.0])], lr=1.0)
    if order == "optimizer first":
        opt2.load_state_dict(opt.state_dict())
        sched2 = kind(opt2, **schedule)
    else:
        sched2 = kind(opt2, **schedule)
        opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    assert opt2.param_groups[0]["lr"] == sched2.get_last_lr()[0] == want != 1.0
    assert lrs(sched2, opt2, 3) == lrs(sched, opt, 3)


def test_scheduler_state_dict_resumes():
    opt = optim.SGD([param([1.0])], lr=1.0)
    sched = StepLR(opt, step_size=2, gamma=0.1)
    lrs(sched, opt, 3)
    state = sched.state_dict()
    opt2 = optim.SGD([param([1.0])], lr=1.0)
    sched2 = StepLR(opt2, step_size=2, gamma=0.1)
    sched2.load_state_dict(state)
    sched.step(), sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()
    with pytest.raises(ValueError, match="step_size"):
        StepLR(opt, step_size=0)
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(optim.SGD([param([1.0])], lr=1.0), step_size=1, last_epoch=3)
