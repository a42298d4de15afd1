"""RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam against torch.optim: K steps on the
same model and data give the same parameters (float64 to 1e-12, float32 to float
tolerance), eagerly with the reference evaluator, eagerly with kernels and under jg.jit;
their state_dict round trips resume exactly. LBFGS against torch's on Rosenbrock's function,
with and without its line search: the same iterates and evaluation counts."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn, optim

torch = pytest.importorskip("torch")

CONFIGS = [
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.02, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.3)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),  # rectified from step 6
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CONFIGS)]
STEPS = 12


def _data(dtype):
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((1, 4))]
    batches = [rng.standard_normal((5, 3)) for _ in range(STEPS)]
    return [w.astype(dtype) for w in weights], [x.astype(dtype) for x in batches]


def _torch_run(name, options, weights, batches, gamma=None, grouped=True):
    """torch.optim's parameters after a step per batch (and ``ExponentialLR(gamma)``
    stepped after each, when given)."""
    params = [torch.tensor(w, requires_grad=True) for w in weights]
    groups = [{"params": params[:2]}, {"params": params[2:]}] if grouped else params
    opt = getattr(torch.optim, name)(groups, **options)
    sched = None if gamma is None else torch.optim.lr_scheduler.ExponentialLR(opt, gamma)
    for x in batches:
        opt.zero_grad()
        hidden = torch.tanh(torch.tensor(x) @ params[0].T + params[1])
        ((hidden @ params[2].T) ** 2).mean().backward()
        opt.step()
        if sched is not None:
            sched.step()
    return [p.detach().numpy() for p in params]


def _model(weights):
    params = [nn.Parameter(jg.tensor(w)) for w in weights]

    def loss(x):
        hidden = jg.tanh(x @ params[0].T + params[1])
        return ((hidden @ params[2].T) ** 2).mean()

    return params, loss


def _optimizer(name, options, params):
    return getattr(optim, name)([{"params": params[:2]}, {"params": params[2:]}], **options)


def _train(opt, loss, batches, jitted: bool):
    def step(x):
        opt.zero_grad()
        value = loss(x)
        value.backward()
        opt.step()
        return value

    run = jg.jit(step) if jitted else step
    for x in batches:
        run(jg.tensor(x))


@pytest.fixture(params=["reference", "kernels", "jit"])
def mode(request, monkeypatch):
    """How the updates run: the numpy reference evaluator, eager kernels at every size, or
    a jitted training step replayed."""
    if request.param == "reference":
        monkeypatch.setattr(jg.config, "backend", "reference")
    else:
        monkeypatch.setattr(jg.config, "numpy_tier_work", 0)
    return request.param


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_steps_match_torch(name, options, dtype, mode):
    weights, batches = _data(dtype)
    want = _torch_run(name, options, weights, batches)
    params, loss = _model(weights)
    opt = _optimizer(name, options, params)
    advanced = []  # replays of a jitted step rerun the prepared kernels after _advance
    opt._advance = lambda work, launches: advanced.append(type(opt)._advance(opt, work, launches))
    _train(opt, loss, batches, jitted=mode == "jit")
    assert len(advanced) == (STEPS - 2 if mode == "jit" else 0)
    tolerance = dict(rtol=1e-11, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    if name == "NAdam" and dtype == np.float64:
        # torch keeps NAdam's running momentum product in a float32 tensor; ours is a double
        tolerance = dict(rtol=1e-7, atol=1e-8)
    for p, w in zip(params, want, strict=True):
        assert p.dtype.numpy == dtype
        np.testing.assert_allclose(p.numpy(), w, **tolerance)


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=IDS)
def test_state_dict_round_trip_resumes_exactly(name, options, tmp_path):
    weights, batches = _data(np.float64)
    params, loss = _model(weights)
    opt = _optimizer(name, options, params)
    _train(opt, loss, batches[:3], jitted=False)
    jg.save({"params": params, "optim": opt.state_dict()}, tmp_path / "ckpt.jg")
    _train(opt, loss, batches[3:6], jitted=False)  # the uninterrupted run

    ckpt = jg.load(tmp_path / "ckpt.jg")
    params2, loss2 = _model([p.numpy() for p in ckpt["params"]])
    opt2 = _optimizer(name, {**options, "lr": 1.0}, params2)
    opt2.load_state_dict(ckpt["optim"])
    assert opt2.param_groups[0]["lr"] == options.get("lr", opt.defaults["lr"])
    _train(opt2, loss2, batches[3:6], jitted=False)
    for a, b in zip(params, params2, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_defaults_and_state_names_are_pytorchs(name):
    p = nn.Parameter(jg.ones(2))
    ours, theirs = getattr(optim, name)([p]), getattr(torch.optim, name)([torch.ones(2)])
    for key, value in ours.defaults.items():
        assert theirs.defaults[key] == value, key
    p.grad = jg.ones(2)
    ours.step()
    tp = theirs.param_groups[0]["params"][0]
    tp.grad = torch.ones(2)
    theirs.step()
    assert set(ours.state[p]) == set(theirs.state[tp])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda ps: optim.RMSprop(ps, alpha=-0.1), "invalid alpha value"),
        (lambda ps: optim.RMSprop(ps, momentum="a"), "momentum must be a number"),
        (lambda ps: optim.Adagrad(ps, lr_decay=-1), "invalid lr_decay value"),
        (lambda ps: optim.Adagrad(ps, initial_accumulator_value=-1), "initial_accumulator"),
        (lambda ps: optim.Adadelta(ps, rho=1.5), "invalid rho value"),
        (lambda ps: optim.Adadelta(ps, lr=-1), "invalid learning rate"),
        (lambda ps: optim.Adamax(ps, betas=(1.0, 0.9)), "invalid beta parameter at index 0"),
        (lambda ps: optim.NAdam(ps, momentum_decay=-1), "invalid momentum_decay value"),
        (lambda ps: optim.RAdam(ps, eps=-1), "invalid epsilon value"),
        (lambda ps: optim.RAdam(ps, lr=-1), "invalid learning rate"),
        (lambda ps: optim.LBFGS(ps, lr=-1), "invalid learning rate"),
        (lambda ps: optim.LBFGS(ps, line_search_fn="wolfe"), "None or 'strong_wolfe'"),
        (lambda ps: optim.LBFGS(ps, history_size=0), "history_size must be a positive"),
    ],
)
def test_invalid_options_are_named(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make([nn.Parameter(jg.ones(1))])


@pytest.mark.parametrize(("name", "options"), CONFIGS[::2], ids=IDS[::2])
@pytest.mark.parametrize("jitted", [False, True])
def test_a_scheduled_learning_rate_is_followed(name, options, jitted, monkeypatch):
    """The rate changes between steps (a schedule): each replay of a jitted step reads
    it, and the step-dependent numbers follow it, as torch.optim's."""
    monkeypatch.setattr(jg.config, "numpy_tier_work", 0)
    weights, batches = _data(np.float64)
    want = _torch_run(name, options, weights, batches, gamma=0.8, grouped=False)
    ours_params, loss = _model(weights)
    ours = getattr(optim, name)(ours_params, **options)
    schedule = optim.lr_scheduler.ExponentialLR(ours, gamma=0.8)

    def step(x):
        ours.zero_grad()
        loss(x).backward()
        ours.step()

    run = jg.jit(step) if jitted else step
    for x in batches:
        run(jg.tensor(x))
        schedule.step()
    tolerance = dict(rtol=1e-7, atol=1e-8) if name == "NAdam" else dict(rtol=1e-11, atol=1e-12)
    for p, w in zip(ours_params, want, strict=True):
        np.testing.assert_allclose(p.numpy(), w, **tolerance)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_a_jitted_sgd_step_reruns_its_prepared_updates_as_torch_steps(momentum, monkeypatch):
    """From the second replay on, a jitted step's SGD update reruns the launches the last
    one prepared, with or without momentum: no per-parameter update in Python."""
    weights, batches = _data(np.float64)
    want = _torch_run("SGD", dict(lr=0.1, momentum=momentum), weights, batches, grouped=False)
    ours_params, loss = _model(weights)
    ours = optim.SGD(ours_params, lr=0.1, momentum=momentum)
    updates = []
    original = optim.SGD._update
    monkeypatch.setattr(
        optim.SGD, "_update", lambda self, *a: updates.append(1) or original(self, *a)
    )

    @jg.jit
    def step(x):
        ours.zero_grad()
        loss(x).backward()
        ours.step()

    for k, x in enumerate(batches):
        updates.clear()
        step(jg.tensor(x))
        if k >= 2:  # the trace and the first replay prepare the launches
            assert updates == []
    for p, w in zip(ours_params, want, strict=True):
        np.testing.assert_allclose(p.numpy(), w, rtol=1e-11, atol=1e-12)


# -- LBFGS: a closure evaluated as often as its line search asks, on the flat vector ------


def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def _quadratic(x):
    scales = np.linspace(0.5, 3.0, x.shape[0]).astype(np.float32)
    return (((x - 1) ** 2) * x.new_tensor(scales)).sum()


def _lbfgs_run(library, objective, start, options, steps):
    """The parameters, losses and evaluation counts after each ``step(closure)`` of
    ``library``'s LBFGS on ``objective`` (one parameter split in two, so the flat vector
    spans several)."""
    if library is torch:
        params = [torch.tensor(part, requires_grad=True) for part in np.split(start, [2])]
        opt = torch.optim.LBFGS(params, **options)
        join = torch.cat
    else:
        params = [nn.Parameter(jg.tensor(part)) for part in np.split(start, [2])]
        opt = optim.LBFGS(params, **options)
        join = jg.cat

    def closure():
        opt.zero_grad()
        loss = objective(join(params))
        loss.backward()
        return loss

    trail = []
    for _ in range(steps):
        loss = float(opt.step(closure).detach())
        state = opt.state[params[0]]
        x = np.concatenate([p.detach().numpy() for p in params])
        trail.append((x, loss, state["func_evals"], state["n_iter"]))
    return trail, opt


LBFGS_CONFIGS = [
    dict(lr=0.1, max_iter=8, history_size=3),
    dict(lr=1, max_iter=6, history_size=4, line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", tolerance_change=1e-12, max_eval=30),
]


@pytest.mark.parametrize("options", LBFGS_CONFIGS, ids=["fixed", "wolfe", "wolfe-defaults"])
def test_lbfgs_matches_torch_on_rosenbrock(options):
    start = np.array([-1.5, 2.0, 0.5, -0.3, 1.2])
    ours, _ = _lbfgs_run(jg, _rosenbrock, start, options, steps=4)
    theirs, _ = _lbfgs_run(torch, _rosenbrock, start, options, steps=4)
    for (x, loss, evals, iters), (tx, tloss, tevals, titers) in zip(ours, theirs, strict=True):
        assert (evals, iters) == (tevals, titers)
        assert loss == pytest.approx(tloss, rel=1e-10)
        np.testing.assert_allclose(x, tx, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_float32_follows_torch_on_a_quadratic(line_search_fn):
    start = np.array([3.0, -2.0, 0.5, 4.0], np.float32)
    options = dict(lr=0.5, max_iter=5, line_search_fn=line_search_fn)
    ours, _ = _lbfgs_run(jg, _quadratic, start, options, steps=2)
    theirs, _ = _lbfgs_run(torch, _quadratic, start, options, steps=2)
    for (x, *_), (tx, *_) in zip(ours, theirs, strict=True):
        assert x.dtype == np.float32
        np.testing.assert_allclose(x, tx, rtol=1e-5, atol=1e-5)


def test_lbfgs_state_dict_round_trip_resumes_exactly(tmp_path):
    start = np.array([-1.5, 2.0, 0.5, -0.3, 1.2])
    options = dict(max_iter=5, history_size=3, line_search_fn="strong_wolfe")
    _, opt = _lbfgs_run(jg, _rosenbrock, start, options, steps=2)
    params = list(opt.param_groups[0]["params"])
    jg.save({"params": params, "optim": opt.state_dict()}, tmp_path / "ckpt.jg")
    ckpt = jg.load(tmp_path / "ckpt.jg")

    def resume(params, opt):
        def closure():
            opt.zero_grad()
            loss = _rosenbrock(jg.cat(params))
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        return np.concatenate([p.numpy() for p in params])

    want = resume(params, opt)
    params2 = [nn.Parameter(jg.tensor(p.numpy())) for p in ckpt["params"]]
    opt2 = optim.LBFGS(params2, **options)
    opt2.load_state_dict(ckpt["optim"])
    np.testing.assert_array_equal(resume(params2, opt2), want)


def test_lbfgs_defaults_and_refusals_are_pytorchs():
    p = nn.Parameter(jg.ones(2))
    assert optim.LBFGS([p]).defaults == torch.optim.LBFGS([torch.ones(2)]).defaults
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(jg.ones(1))]}])
    opt = optim.LBFGS([p])

    @jg.jit
    def step():
        return opt.step(lambda: (p * p).sum())

    with pytest.raises(RuntimeError, match="outside the jitted function"):
        step()
