"""jg.jit: a traced and replayed step gives what eager execution gives."""

import collections
import gc
import warnings
import weakref

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config

F = jg.nn.functional


def mlp_params(seed=1, dtype=jg.float32):
    r = jg.random.default_rng(seed)
    return [
        (r.standard_normal((8, 16), dtype=dtype) * 0.3).requires_grad_(),
        jg.zeros(16, dtype=dtype, requires_grad=True),
        (r.standard_normal((16, 4), dtype=dtype) * 0.3).requires_grad_(),
        jg.zeros(4, dtype=dtype, requires_grad=True),
    ]


def make_step(params, lr=0.2):
    def step(x, y):
        for p in params:
            p.grad = None
        w1, b1, w2, b2 = params
        hidden = jg.relu(x @ w1 + b1)
        loss = F.cross_entropy(hidden @ w2 + b2, y)
        loss.backward()
        with jg.no_grad():
            for p in params:
                p.sub_(lr * p.grad)
        return loss

    return step


@pytest.mark.parametrize("dtype", [jg.float32, jg.float64])
def test_jitted_training_equals_eager_for_20_steps(dtype):
    rng = np.random.default_rng(0)
    xs = [jg.tensor(rng.standard_normal((32, 8)), dtype=dtype) for _ in range(4)]
    ys = [jg.tensor(rng.integers(0, 4, 32)) for _ in range(4)]
    eager_params, jit_params = mlp_params(dtype=dtype), mlp_params(dtype=dtype)
    eager, jitted = make_step(eager_params), jg.jit(make_step(jit_params))
    for i in range(20):
        le = eager(xs[i % 4], ys[i % 4]).item()
        lj = jitted(xs[i % 4], ys[i % 4]).item()
        assert lj == pytest.approx(le, rel=1e-6 if dtype is jg.float32 else 1e-12)
    for a, b in zip(eager_params, jit_params):
        np.testing.assert_allclose(
            b.numpy(), a.numpy(), rtol=1e-5 if dtype is jg.float32 else 1e-12
        )
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-7)
    assert jitted.traces == 1


def test_new_batch_size_retraces_without_compiling():
    params = mlp_params()
    step = jg.jit(make_step(params))
    rng = np.random.default_rng(1)
    step(
        jg.tensor(rng.standard_normal((16, 8)), dtype=jg.float32), jg.tensor(rng.integers(0, 4, 16))
    )
    before = jg.jit.stats()["generated"]
    step(jg.tensor(rng.standard_normal((5, 8)), dtype=jg.float32), jg.tensor(rng.integers(0, 4, 5)))
    assert step.traces == 2 and jg.jit.stats()["generated"] == before


def test_returned_tensors_are_not_overwritten_by_later_calls():
    @jg.jit
    def double(x):
        return x * 2

    a = double(jg.tensor([1.0, 2.0]))
    b = double(jg.tensor([5.0, 6.0]))
    assert a.tolist() == [2.0, 4.0] and b.tolist() == [10.0, 12.0]


def test_gradients_accumulate_like_eager_when_not_zeroed():
    w_eager = jg.tensor([1.0, -2.0], requires_grad=True)
    w_jit = jg.tensor([1.0, -2.0], requires_grad=True)

    def accumulate(w):
        def f(x):
            (jg.tanh(x * w)).sum().backward()

        return f

    jitted = jg.jit(accumulate(w_jit))
    eager = accumulate(w_eager)
    for k in range(3):
        x = jg.tensor([0.5 * k, 1.0])
        eager(x)
        jitted(x)
        np.testing.assert_allclose(w_jit.grad.numpy(), w_eager.grad.numpy(), rtol=1e-12)


def test_gradients_cleared_on_some_leaves_only_accumulate_like_eager():
    """A plan traced with one leaf's gradient present still assigns the other's: when
    that one holds a gradient instead, neither plan fits."""
    leaves = [
        [jg.tensor([1.0, 2.0], requires_grad=True), jg.tensor([3.0], requires_grad=True)]
        for _ in range(2)
    ]

    def accumulate(w):
        def f(x):
            (w[0] * x).sum().backward()
            (w[1] * x.sum()).sum().backward()

        return f

    eager, jitted = accumulate(leaves[0]), jg.jit(accumulate(leaves[1]))
    x = jg.tensor([1.0, 1.0])
    for clear in [None, 0, 1, None, 0]:
        for w in leaves:
            if clear is not None:
                w[clear].grad = None
        eager(x)
        jitted(x)
        for a, b in zip(*leaves):
            np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


def test_input_gradients_and_random_numbers_are_fresh_each_call():
    gen = jg.random.default_rng(3)

    @jg.jit
    def f(x):
        y = F.dropout(x, 0.5, generator=gen).sum()
        y.backward()
        return y

    x = jg.ones(1000, requires_grad=True)
    first = f(x).item()
    assert set(np.unique(x.grad.numpy())) <= {0.0, 2.0}
    second = f(x).item()
    assert first != second  # a new mask every call
    assert set(np.unique(x.grad.numpy())) <= {0.0, 2.0, 4.0}  # accumulated, as eager
    assert x.grad.numpy().sum() == pytest.approx(first + second)


def test_fusion_keeps_results_identical_and_reduces_steps():
    def chain(x):
        return jg.tanh(x * 0.7 + 0.1) * jg.sigmoid(x) + 0.5 * x * x

    jitted = jg.jit(chain)
    x = jg.tensor(np.linspace(-3, 3, 101))
    np.testing.assert_allclose(jitted(x).numpy(), chain(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(jitted(x * 2).numpy(), chain(x * 2).numpy(), rtol=1e-12)
    for scale in (3, 4):  # replays after the first call compiled kernels directly
        np.testing.assert_allclose(jitted(x * scale).numpy(), chain(x * scale).numpy(), rtol=1e-12)
    (plan,) = jitted.plans.values()
    launches = [fn for fn, _ in plan.steps if type(fn).__name__ == "Launch"]
    assert len(launches) == 1  # seven elementwise ops, one kernel
    report = jg.jit.explain(jitted)
    assert "fused kernel x1" in report and "replayed 3 time(s)" in report


@pytest.mark.parametrize(
    "f, dtype",
    [
        (lambda x: (x + 1) * 2, "float16"),  # stored rounded to float16, computed in float32
        (lambda x: (x * 2.0).T + 1.0, "float64"),  # read back in another order
        (lambda x: (lambda y: y.flip(0) + y)(x * 2.0), "float64"),
        (lambda x: (x * 3) // 2, "int8"),  # stored wrapped, computed in 64 bits
        (lambda x: (x * 3) // 2, "int32"),
        (lambda x: (x + 100) > x, "int8"),
        (lambda x: (x * 2, (x * 2) > 0), "float16"),
    ],
)
def test_fused_kernels_read_back_intermediates_as_eager_stores_them(f, dtype):
    jitted = jg.jit(f)
    for k in range(3):
        base = np.array([[100, 10, -100], [2**30 if dtype == "int32" else 7, k, -3], [1, 2, 3]])
        x = jg.tensor(base + k).astype(dtype)
        got, want = jitted(x), f(x)
        for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_retrace_limit_warns():
    f = jg.jit(lambda x: x + 1, max_traces=2)
    f(jg.ones(1))
    f(jg.ones(2))
    with pytest.warns(UserWarning, match="traced 3 times"):
        f(jg.ones(3))


def test_number_arguments_select_plans_by_value():
    f = jg.jit(lambda x, s: 1.0 / (x * s))
    x = jg.tensor([1.0, 2.0])
    for v in (1.0, 2.0, 3.0):  # numpy scalars: by value, not identity (ids are reused)
        s = np.float32(v)
        np.testing.assert_array_equal(f(x, s).numpy(), (1.0 / (x * s)).numpy())
        del s
    assert f(x, 0.0).tolist() == [np.inf, np.inf]
    assert f(x, -0.0).tolist() == [-np.inf, -np.inf]  # not the plan of 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every NaN is one value: no retrace per call
        for _ in range(10):
            assert np.isnan(f(x, float("nan")).numpy()).all()
    assert f.traces == 6


def test_a_new_default_dtype_selects_another_plan():
    @jg.jit
    def f(x):
        return x.sum(), jg.zeros(2), jg.tensor([0.1])

    x = jg.ones(2, dtype=jg.float32)
    before = jg.get_default_dtype()
    try:
        for dtype in (jg.float64, jg.float32, jg.float64):
            jg.set_default_dtype(dtype)
            _, zeros, tenth = f(x)
            assert zeros.dtype is dtype and tenth.dtype is dtype
            assert tenth.item() == jg.tensor([0.1]).item()
    finally:
        jg.set_default_dtype(before)
    assert f.traces == 2


def test_an_object_argument_freed_never_lends_its_plan_to_one_taking_its_id():
    """Plans know object arguments by id: while a plan exists its objects stay alive, or
    a new object could take a freed one's id and replay its plan over the old memory."""

    class State:
        __slots__ = ("w", "__weakref__")

    f = jg.jit(lambda state, x: state.w * x)
    x = jg.ones(2)
    refs = []
    for k in range(4):
        state = State()
        state.w = jg.full((2,), float(k))
        refs.append(weakref.ref(state))
        assert f(state, x).tolist() == [k, k]
        del state
        gc.collect()
    assert all(ref() is not None for ref in refs) and f.traces == 4
    f.retrace()
    gc.collect()
    assert all(ref() is None for ref in refs)  # (held by the plans, not leaked)


def test_a_jitted_method_takes_its_instance_as_an_argument():
    class Trainer:
        def __init__(self, seed):
            self.model = jg.nn.Linear(3, 2, generator=seed)
            self.opt = jg.optim.SGD(self.model.parameters(), lr=0.1)

        @jg.jit
        def step(self, x, y):
            self.opt.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.opt.step()
            return loss

    jitted, eager = [Trainer(0), Trainer(1)], [Trainer(0), Trainer(1)]
    x, y = jg.ones((4, 3)), jg.zeros((4, 2))
    for _ in range(3):
        for j, e in zip(jitted, eager):
            assert j.step(x, y).item() == pytest.approx(Trainer.step.fn(e, x, y).item())
    for j, e in zip(jitted, eager):
        assert_same_parameters([e.model, j.model])
    assert Trainer.step.traces == 2 and jitted[0].step.traces == 2  # one plan per instance
    assert "plan" in jg.jit.explain(jitted[0].step)


def test_retrace_forgets_the_guards_and_does_not_count_toward_the_limit():
    modules = [jg.nn.Sequential(jg.nn.Dropout(0.5)) for _ in range(2)]
    model = modules[0]
    step = jg.jit(lambda x: model(x), max_traces=2)
    x = jg.ones(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with jg.no_grad():
            step(x)
            model = modules[1]  # a module swapped in, then retrace()
            for _ in range(4):
                step.retrace()
                step(x)
            model.eval()  # guarded: the plan of the new trace's module
            assert step(x).tolist() == [1.0] * 8


def test_indices_are_read_on_every_call():
    w = jg.arange(10.0, requires_grad=True)

    @jg.jit
    def pick(i):
        w.grad = None
        out = w[i] * 2
        out.sum().backward()
        return out

    assert pick(jg.tensor([0, 0])).tolist() == [0.0, 0.0]
    assert pick(jg.tensor([3, 4])).tolist() == [6.0, 8.0]
    assert w.grad.tolist() == [0, 0, 0, 2, 2, 0, 0, 0, 0, 0]


def test_optimizer_zero_grad_inside_a_jitted_step_does_not_accumulate():
    from jitgrad import nn, optim

    model = nn.Linear(3, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)

    @jg.jit
    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).sum()
        loss.backward()
        return loss

    x = jg.ones((4, 3))
    step(x)
    first = model.weight.grad.numpy().copy()
    step(x)
    np.testing.assert_allclose(model.weight.grad.numpy(), first)  # replaced, not summed


@pytest.mark.parametrize("after", ["none", "halved"])
def test_gradients_cleared_or_replaced_after_backward_are_left_as_the_step_left_them(after):
    """A step that zeroes gradients (or rescales them) after its update leaves what it
    left eagerly: a replay must not hand back the gradients backward computed."""
    models = [jg.nn.Linear(2, 2, generator=jg.random.default_rng(0)) for _ in range(2)]
    opts = [jg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]

    def step(model, opt, x, w):
        loss = (model(x) ** 2).sum() + (w * w).sum()
        loss.backward()
        opt.step()
        for t in [*model.parameters(), w]:
            t.grad = None if after == "none" else t.grad * 0.5
        return loss

    jitted = jg.jit(step)
    ws = [jg.tensor([1.0, 2.0], requires_grad=True) for _ in range(2)]
    for k in range(4):
        if after == "halved":
            for t in ws:
                t.grad = None  # (else each call adds to the one left before)
        x = jg.tensor([[1.0, 0.5 * k]])
        assert step(models[0], opts[0], x, ws[0]).item() == pytest.approx(
            jitted(models[1], opts[1], x, ws[1]).item()
        )
        assert_same_parameters(models)
        for a, b in zip([*models[0].parameters(), ws[0]], [*models[1].parameters(), ws[1]]):
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12)
    assert jitted.traces == (1 if after == "none" else 2)  # (halved ones are added to)


@pytest.mark.parametrize("zeroing", [None, "module", "optimizer-to-zero", "optimizer"])
def test_a_step_reads_the_gradients_eager_backward_would_leave(zeroing):
    """Without zeroing, the update reads the gradients summed over the calls; zeroing
    them in place (not to None) restarts the sum every call, as eagerly."""
    models = [jg.nn.Linear(2, 1, generator=jg.random.default_rng(0)) for _ in range(2)]
    opts = [jg.optim.SGD(m.parameters(), lr=0.1) for m in models]

    def step(model, opt, x):
        if zeroing == "module":
            model.zero_grad()
        elif zeroing is not None:
            opt.zero_grad(set_to_none=zeroing == "optimizer")
        (model(x) ** 2).sum().backward()
        opt.step()

    jitted = jg.jit(step)
    for k in range(4):
        x = jg.tensor([[1.0, 0.5 * k]])
        step(models[0], opts[0], x)
        jitted(models[1], opts[1], x)
        assert_same_parameters(models)
        for a, b in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6)


def twin_linear_models(make):
    """Two identical Linear(3, 2) models with their optimizers (``make``), and a training
    step on ``(model ** 2).sum()``."""
    from jitgrad import nn

    models = [nn.Linear(3, 2, generator=jg.random.default_rng(0)) for _ in range(2)]
    opts = [make(list(m.parameters())) for m in models]

    def step(model, opt, x):
        opt.zero_grad()
        loss = (model(x) ** 2).sum()
        loss.backward()
        opt.step()
        return loss

    return models, opts, step


def assert_same_parameters(models):
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: jg.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
        lambda ps: jg.optim.Adam(ps, lr=0.05),
    ],
)
@pytest.mark.parametrize("as_tensor", [False, True])
def test_optimizers_under_jit_follow_eager_through_a_learning_rate_change(make, as_tensor):
    """A learning rate is read live by every replay, as a scheduler would change it; one
    given as a 0-d tensor may be changed in place."""
    models, opts, step = twin_linear_models(make)
    if as_tensor:
        for opt in opts:
            opt.param_groups[0]["lr"] = jg.tensor(opt.param_groups[0]["lr"])
    jitted = jg.jit(step)
    x = jg.tensor(np.random.default_rng(1).standard_normal((4, 3)))
    for i in range(8):
        if i == 5:
            for opt in opts:
                if as_tensor:
                    opt.param_groups[0]["lr"].fill_(0.01)
                else:
                    opt.param_groups[0]["lr"] = 0.01
        step(models[0], opts[0], x)
        jitted(models[1], opts[1], x)
        assert_same_parameters(models)


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: jg.optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: jg.optim.Adam(ps, lr=0.05),
    ],
)
def test_eager_steps_between_jitted_ones_leave_the_plan_intact(make):
    """Eager steps repoint an update's prepared launch at each new gradient; the launches
    a jitted plan replays must keep reading the plan's own gradient buffers."""
    models, opts, step = twin_linear_models(make)
    jitted = jg.jit(step)
    rng = np.random.default_rng(1)
    for i in range(8):
        x = jg.tensor(rng.standard_normal((4, 3)))
        step(models[0], opts[0], x)
        (jitted if i % 3 == 0 else step)(models[1], opts[1], x)
        assert_same_parameters(models)


def _snapshot(value):
    if isinstance(value, jg.Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value)
    return value


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_jitted_step_follows_a_loaded_optimizer_state(name):
    from jitgrad import nn

    options = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.05)
    models = [nn.Linear(3, 2, generator=jg.random.default_rng(0)) for _ in range(2)]
    opts = [getattr(jg.optim, name)(list(m.parameters()), **options) for m in models]

    def step(model, opt, x):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()

    jitted = jg.jit(step)
    x = jg.tensor(np.random.default_rng(2).standard_normal((4, 3)))
    saved = None
    for i in range(9):
        if i == 3:
            saved = [_snapshot((m.state_dict(), o.state_dict())) for m, o in zip(models, opts)]
        if i == 6:  # back to the state of step 3, restored into fresh tensors
            for (m_state, o_state), m, o in zip(saved, models, opts):
                m.load_state_dict(m_state)
                o.load_state_dict(o_state)
        step(models[0], opts[0], x)
        jitted(models[1], opts[1], x)
        for a, b in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)


BIG = 1 << 17  # above the parallel threshold: large buffers pass by reference


def test_large_inputs_and_results_pass_by_reference_without_aliasing():
    @jg.jit
    def scaled(x):
        return jg.tanh(x) * 2 + x

    rng = np.random.default_rng(5)
    xs = [rng.standard_normal(BIG).astype(np.float32) for _ in range(3)]
    kept = [x.copy() for x in xs]
    results = [scaled(jg.tensor(x)) for x in xs]
    plan = next(iter(scaled.plans.values()))
    assert plan._inputs[0][2] is not None and plan._handed  # neither copied in nor out
    for x, before, r in zip(xs, kept, results):  # earlier results survive later calls
        np.testing.assert_array_equal(x, before)
        np.testing.assert_allclose(r.numpy(), np.tanh(x) * 2 + x, rtol=1e-6, atol=1e-6)
    assert len({r.data_ptr() for r in results}) == 3


def test_read_only_caller_memory_passes_by_reference_in_every_replay():
    # Replays call compiled code without the dispatcher's per-call type matching; a
    # read-only array is a different numba type from the writable one the plan traced.
    scaled = jg.jit(lambda x: jg.tanh(x) * 2 + x)
    for k in range(4):
        x = np.linspace(-3, 3, BIG).astype(np.float32) * (k + 1)
        x.flags.writeable = False
        np.testing.assert_allclose(
            scaled(jg.from_numpy(x)).numpy(), np.tanh(x) * 2 + x, rtol=1e-6, atol=1e-6
        )
    assert next(iter(scaled.plans.values()))._inputs[0][2] is not None  # by reference


def test_large_gradients_by_reference_match_eager():
    seed = jg.full((BIG,), 0.5)

    def grad_of(x):
        (jg.sigmoid(x) * x).backward(seed)
        return x.grad

    jitted = jg.jit(grad_of)
    rng = np.random.default_rng(6)
    for _ in range(3):
        x = rng.standard_normal(BIG).astype(np.float32)
        eager_leaf, jit_leaf = jg.tensor(x, requires_grad=True), jg.tensor(x, requires_grad=True)
        expected = grad_of(eager_leaf).numpy()
        got = jitted(jit_leaf)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(jit_leaf.grad.numpy(), expected, rtol=1e-6)


def test_large_buffers_read_outside_kernels_are_still_copied():
    w = jg.ones((BIG // 64, 64)) * 0.5

    @jg.jit
    def project(x):
        y = jg.exp(x)
        return y, y @ w.T[:, :1]  # y also feeds BLAS: it must not leave with the caller

    x = np.random.default_rng(7).standard_normal((BIG // 64, 64)).astype(np.float32)
    first = project(jg.tensor(x))
    second = project(jg.tensor(x * 2))
    plan = next(iter(project.plans.values()))
    assert not plan._handed
    np.testing.assert_allclose(first[0].numpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(second[1].numpy(), np.exp(2 * x) @ np.full((64, 1), 0.5), rtol=1e-5)


def _sgd_on_argument(w, x):
    w.grad = None
    loss = ((x * w).sum() - 1) ** 2
    loss.backward()
    with jg.no_grad():
        w.sub_(0.1 * w.grad)
    return loss


@pytest.mark.parametrize("n", [2, BIG], ids=["small", "by-reference size"])
def test_in_place_writes_to_arguments_reach_the_callers_tensors(n):
    x = jg.tensor(np.linspace(0.5, 1, n))
    runs = []
    for step in (_sgd_on_argument, jg.jit(_sgd_on_argument)):
        w = jg.tensor(np.linspace(-1, 1, n), requires_grad=True)
        runs.append(([step(w, x).item() for _ in range(3)], w.numpy().copy()))
    (eager_losses, eager_w), (jit_losses, jit_w) = runs
    np.testing.assert_allclose(jit_losses, eager_losses, rtol=1e-12)
    np.testing.assert_allclose(jit_w, eager_w, rtol=1e-12)
    assert not np.array_equal(jit_w, np.linspace(-1, 1, n))


def test_item_assignment_to_an_argument_reaches_the_caller():
    step = jg.jit(lambda x: (x.__setitem__((0, 0), x.sum()), x * 2)[1])
    x = jg.ones((2, 2))
    for want in (4.0, 7.0):
        assert step(x)[0, 0].item() == 2 * want
        assert x[0, 0].item() == want


def test_a_tensor_passed_twice_is_one_tensor_in_the_plan():
    def bump_and_read(a, b):
        a += 1
        return b * 1

    step = jg.jit(bump_and_read)
    y = jg.zeros(3)
    assert [step(y, y).tolist()[0] for _ in range(3)] == [1.0, 2.0, 3.0]
    z = jg.zeros(3)
    assert step(y, z).tolist() == [0.0, 0.0, 0.0]  # two tensors: another plan
    assert y.tolist() == [4.0] * 3 and step.traces == 2


VIEW_PAIRS = {  # two arguments viewing one storage, as (first, second) of a base
    "transposed": (lambda b: b, lambda b: b.T),
    "inner slice": (lambda b: b, lambda b: b[1:, ::2]),
    "slice first": (lambda b: b[1:], lambda b: b),
    "overlapping rows": (lambda b: b[:2], lambda b: b[1:]),
    "disjoint rows": (lambda b: b[:1], lambda b: b[2:]),
    "reversed": (lambda b: b.flip(1), lambda b: b.reshape(-1)),
}


@pytest.mark.parametrize("size", [4, BIG // 4], ids=["small", "large"])
@pytest.mark.parametrize("pair", VIEW_PAIRS)
def test_arguments_viewing_one_storage_see_each_others_writes(pair, size):
    first, second = VIEW_PAIRS[pair]

    def bump_and_read(a, b):
        a.mul_(2.0)
        a += 1
        return b * 3

    step = jg.jit(bump_and_read)
    eager_base, jit_base = (jg.tensor(np.arange(4.0 * size).reshape(4, size)) for _ in range(2))
    for _ in range(3):
        want = bump_and_read(first(eager_base), second(eager_base))
        got = step(first(jit_base), second(jit_base))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(jit_base.numpy(), eager_base.numpy())
    assert step.traces == 1


def test_keyword_arguments_are_arguments_like_the_others():
    w = jg.tensor([1.0, 2.0], requires_grad=True)

    def step(x, *, weight, scale=2.0, out=None):
        weight.grad = None
        loss = (x * weight).sum() * scale
        loss.backward()
        if out is not None:
            out.add_(weight.grad)
        return loss

    jitted = jg.jit(step)
    total = jg.zeros(2)
    assert jitted(jg.ones(2), weight=w).item() == 6.0
    assert jitted(jg.ones(2), weight=w, scale=3.0, out=total).item() == 9.0
    assert jitted(jg.ones(2) * 2, weight=w, out=total, scale=3.0).item() == 18.0
    assert total.tolist() == [9.0, 9.0] and w.grad.tolist() == [6.0, 6.0]
    assert jitted.traces == 2  # a new keyword set retraces; their order does not
    with pytest.raises(TypeError, match="weight"):
        jitted(jg.ones(2))


def test_namedtuples_and_dict_subclasses_pass_in_and_out_as_they_are():
    Pair = collections.namedtuple("Pair", "a b")

    @jg.jit
    def step(pair, table):
        return Pair(pair.a * table["scale"], pair.b + 1), collections.OrderedDict(s=pair.a.sum())

    for k in range(3):
        table = collections.defaultdict(list, scale=jg.tensor([float(k)]))
        out, sums = step(Pair(jg.tensor([1.0, 2.0]), jg.tensor([k])), table)
        assert type(out) is Pair and type(sums) is collections.OrderedDict
        assert out.a.tolist() == [k, 2.0 * k] and out.b.tolist() == [k + 1]
        assert sums["s"].item() == 3.0
    assert step.traces == 1


def test_a_data_dependent_shape_raises_a_clear_error_on_replay():
    total = jg.jit(lambda x: x[x > 0].sum())
    assert total(jg.tensor([1.0, -1.0, 2.0])).item() == 3.0
    assert total(jg.tensor([-5.0, 4.0, 2.0])).item() == 6.0  # the same count: fine
    with pytest.raises(ValueError, match="depends on the data"):
        total(jg.tensor([1.0, 1.0, 2.0]))


@pytest.mark.parametrize("view", ["reversed", "transposed", "expanded"])
def test_large_inputs_that_are_not_contiguous_are_read_right_on_every_replay(view):
    base = np.arange(2.0 * BIG).reshape(2, BIG)
    make = {
        "reversed": lambda t: t[:, ::-1],
        "transposed": lambda t: t.T,
        "expanded": lambda t: t[:1].expand(2, BIG),
    }[view]
    step = jg.jit(lambda x: x * 2 + 1)
    for k in range(3):
        got = step(make(jg.tensor(base + k))).numpy()
        np.testing.assert_array_equal(got, make(jg.tensor(base + k)).numpy() * 2 + 1)


def test_large_arguments_and_views_of_large_results_are_returned_fresh():
    n = 1 << 16  # above the parallel threshold: passed and handed over by reference
    returns_input = jg.jit(lambda x: (x * 2.0, x, x[:4]))

    @jg.jit
    def returns_a_view(x):
        a = x * 2.0
        return a, a[::2]

    for k in range(1, 4):
        x = jg.full((n,), float(k), dtype=jg.float32)
        doubled, same, head = returns_input(x)
        assert (doubled.numpy() == 2 * k).all() and (same.numpy() == k).all()
        assert (head.numpy() == k).all()
        a, every_other = returns_a_view(x)
        assert (a.numpy() == 2 * k).all() and (every_other.numpy() == 2 * k).all()


def test_an_argument_whose_memory_the_function_also_reaches_directly_is_refused():
    w = jg.tensor([1.0, 2.0, 3.0])

    def update_through_the_closure(a):
        w.mul_(2.0)
        return a + 0.0

    def update_through_the_argument(a):
        a.add_(1.0)
        return w * 1.0

    for f in (update_through_the_closure, update_through_the_argument):
        with pytest.raises(RuntimeError, match="directly, not through the argument"):
            jg.jit(f)(w[0:2])
    reads_both = jg.jit(lambda a: a * w)  # reading it both ways is fine
    squares = [v * v for v in w.tolist()]
    assert reads_both(w).tolist() == squares and reads_both(w).tolist() == squares


@pytest.mark.parametrize("n", [8, 1 << 16])  # copied out, or handed over by reference
def test_results_that_view_one_another_stay_views_as_eagerly(n):
    @jg.jit
    def halves(x):
        a = x * 2.0
        return a, a[::2], {"tail": a[-2:]}

    for k in range(1, 4):
        a, every_other, rest = halves(jg.full((n,), float(k), dtype=jg.float32))
        a[0] = -1.0
        a[-1] = -2.0
        assert every_other[0].item() == -1.0 and rest["tail"][1].item() == -2.0
        assert every_other[1].item() == 2 * k


@pytest.mark.parametrize("n", [8, BIG])
def test_a_result_returned_twice_or_an_argument_returned_is_one_tensor_as_eagerly(n):
    @jg.jit
    def step(x):
        x.mul_(2.0)
        y = x + 1.0
        return y, y, x, x[1:3]

    for k in range(1, 4):
        x = jg.full((n,), float(k))
        y, again, same, middle = step(x)
        assert again is y and same is x
        middle[0] = -1.0  # a view of the caller's tensor, as x[1:3] is eagerly
        assert x[1].item() == -1.0 and x[0].item() == 2.0 * k and y[0].item() == 2.0 * k + 1
    assert step.traces == 1


def test_large_input_gradients_accumulate_across_calls():
    x = jg.tensor(np.ones(BIG), requires_grad=True)
    step = jg.jit(lambda x: (x * 3).sum().backward())
    for k in range(1, 5):
        step(x)
        assert x.grad[0].item() == 3.0 * k and x.grad[-1].item() == 3.0 * k


@pytest.mark.parametrize("n", [2, BIG])
def test_a_step_reads_the_gradient_its_argument_holds_from_before_the_call(n):
    """Without zeroing, an argument's gradient adds up over the calls, and an update
    inside the step reads the sum, as eagerly."""

    def step(x):
        loss = (x * x).sum()
        loss.backward()
        with jg.no_grad():
            x.sub_(0.1 * x.grad)
        return loss

    jitted = jg.jit(step)
    xs = [jg.tensor(np.linspace(1.0, 2.0, n), requires_grad=True) for _ in range(2)]
    for _ in range(4):
        assert jitted(xs[1]).item() == pytest.approx(step(xs[0]).item(), rel=1e-12)
        np.testing.assert_allclose(xs[1].numpy(), xs[0].numpy(), rtol=1e-12)
        np.testing.assert_allclose(xs[1].grad.numpy(), xs[0].grad.numpy(), rtol=1e-12)
    assert jitted.traces == 2  # without a gradient, then adding to one


def test_a_jitted_function_called_inside_another_is_part_of_its_plan():
    inner = jg.jit(lambda x: x + 1)
    inner(jg.tensor([0.0]))  # inner has a plan of its own already
    outer = jg.jit(lambda x: inner(x) * 10)
    assert [outer(jg.tensor([v])).item() for v in (0.0, 1.0, 2.0)] == [10.0, 20.0, 30.0]


def test_calls_from_several_threads_take_turns():
    import threading

    double = jg.jit(lambda x: x * 2)
    double(jg.zeros(1000))
    wrong = []

    def work(v):
        for _ in range(100):
            if not (double(jg.full((1000,), v)).numpy() == 2 * v).all():
                wrong.append(v)

    users = [threading.Thread(target=work, args=(v,)) for v in (1.0, 2.0, 3.0)]
    for user in users:
        user.start()
    for user in users:
        user.join()
    assert not wrong


def test_train_and_eval_modes_select_their_own_plans():
    model = jg.nn.Sequential(jg.nn.Linear(3, 4), jg.nn.BatchNorm1d(4), jg.nn.Dropout(0.5))
    x = jg.tensor(np.random.default_rng(0).standard_normal((8, 3)))

    class Holder:  # reached through a bound method's object, as the serving predictor's
        def __init__(self):
            self.model = model

        def forward(self, x):
            return self.model(x)

    for step in (jg.jit(lambda x: model(x)), jg.jit(Holder().forward)):
        model.train()
        with jg.no_grad():
            step(x)
            model.eval()
            stats = model[1].running_mean.numpy().copy()
            np.testing.assert_allclose(step(x).numpy(), model(x).numpy(), rtol=1e-12)
            np.testing.assert_array_equal(model[1].running_mean.numpy(), stats)  # eval: kept
            model.train()
            step(x)
        assert step.traces == 2  # training again reuses the first plan


def _predict(model, x):  # a helper chain three calls deep from the jitted function
    return _forward(model, x)


def _forward(model, x):
    return model(x)


def test_modes_of_modules_passed_as_arguments_or_reached_deep_select_plans():
    model = jg.nn.Sequential(
        jg.nn.Linear(4, 4, generator=0), jg.nn.Dropout(0.5, generator=1), jg.nn.BatchNorm1d(4)
    )
    x = jg.tensor(np.random.default_rng(0).standard_normal((6, 4)))

    def by_argument(model, x):
        with jg.no_grad():
            return model(x)

    def deep(x):
        with jg.no_grad():
            return _predict(model, x)

    for step, args in ((jg.jit(by_argument), (model, x)), (jg.jit(deep), (x,))):
        model.train()
        step(*args)
        model.eval()
        stats = model[2].running_mean.numpy().copy()
        got = step(*args).numpy()  # (called with grad enabled, as the first call was)
        np.testing.assert_array_equal(model[2].running_mean.numpy(), stats)
        with jg.no_grad():
            np.testing.assert_array_equal(got, model(x).numpy())
        assert step.traces == 2


def test_a_mode_assigned_directly_selects_another_plan():
    dropout = jg.nn.Dropout(0.5, generator=1)
    step = jg.jit(lambda x: dropout(x))
    x = jg.ones(64)
    assert (step(x).numpy() == 0).any()
    dropout.training = False  # (not through eval(): the guard must see it all the same)
    np.testing.assert_array_equal(step(x).numpy(), x.numpy())
    dropout.training = True
    assert (step(x).numpy() == 0).any() and step.traces == 2


def test_freezing_a_parameter_or_adding_a_group_selects_another_plan():
    jitted_model, eager_model = (jg.nn.Linear(3, 2, generator=0) for _ in range(2))
    extra = {m: jg.ones(2, requires_grad=True) for m in (jitted_model, eager_model)}
    optimizers = {m: jg.optim.SGD(m.parameters(), lr=0.1) for m in extra}
    x = jg.ones((4, 3))

    def step(model):
        opt = optimizers[model]
        opt.zero_grad()
        loss = ((model(x) + extra[model]) ** 2).sum()
        loss.backward()
        opt.step()
        return loss

    jitted = jg.jit(lambda: step(jitted_model))
    for change in (None, "freeze", "group", None):
        for model in extra:
            if change == "freeze":
                model.weight.requires_grad_(False)
            elif change == "group":
                optimizers[model].add_param_group({"params": [extra[model]]})
        np.testing.assert_allclose(jitted().numpy(), step(eager_model).numpy(), rtol=1e-6)
        for a, b in zip(jitted_model.parameters(), eager_model.parameters()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
        np.testing.assert_allclose(extra[jitted_model].numpy(), extra[eager_model].numpy())
    assert jitted_model.weight.grad is None
    assert jitted.traces == 3


def test_freezing_or_unfreezing_a_closed_over_tensor_selects_another_plan():
    """Tensors outside any module: which of them require grad is part of the plan too."""
    leaves = {k: [jg.tensor([1.0, 2.0], requires_grad=True), jg.tensor([3.0])] for k in "ej"}

    def step(w):
        for v in w:
            v.grad = None
        loss = (x * w[0]).sum() * w[1].sum()
        loss.backward()
        with jg.no_grad():
            for v in w:
                if v.grad is not None:
                    v.sub_(0.1 * v.grad)
        return loss

    x = jg.tensor([1.0, 1.0])
    jitted = jg.jit(lambda: step(leaves["j"]))
    for change in (None, "unfreeze", None, "freeze", None):
        for w in leaves.values():
            if change is not None:
                w[0 if change == "freeze" else 1].requires_grad_(change == "unfreeze")
        assert jitted().item() == pytest.approx(step(leaves["e"]).item(), rel=1e-12)
        for a, b in zip(leaves["j"], leaves["e"]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
            assert (a.grad is None) == (b.grad is None)
    assert jitted.traces == 3


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: jg.optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: jg.optim.Adam(ps, lr=0.05),
    ],
)
@pytest.mark.parametrize("change", ["append", "remove", "replace", "new list", "extend back"])
def test_a_parameter_list_changed_in_place_selects_another_plan(make, change):
    """Users change ``param_groups[k]["params"]`` directly, as in PyTorch (unfreezing a
    layer by appending its weight): replays must update the parameters listed now."""
    from jitgrad import nn

    models = [
        nn.Sequential(nn.Linear(3, 4, generator=0), nn.Tanh(), nn.Linear(4, 2, generator=1))
        for _ in range(2)
    ]
    opts = [make([m[0].weight, m[0].bias, m[2].bias]) for m in models]
    x = jg.tensor(np.random.default_rng(1).standard_normal((5, 3)))

    def step(model, opt):
        for p in model.parameters():  # (all of them, listed by the optimizer or not)
            p.grad = None
        (model(x) ** 2).sum().backward()
        opt.step()

    jitted = jg.jit(step)
    for i in range(8):
        if i == 3:
            for model, opt in zip(models, opts):
                params = opt.param_groups[0]["params"]
                if change == "append":
                    params.append(model[2].weight)
                elif change == "remove":
                    params.remove(model[0].weight)
                elif change == "replace":
                    params[2] = model[2].weight
                elif change == "new list":
                    opt.param_groups[0]["params"] = [model[2].weight, model[2].bias]
                else:
                    params.pop()
        if change == "extend back" and i == 5:  # the first plan's parameters again
            for model, opt in zip(models, opts):
                opt.param_groups[0]["params"] += [model[2].bias]
        step(models[0], opts[0])
        jitted(models[1], opts[1])
        for a, b in zip(models[0].parameters(), models[1].parameters()):
            np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
    assert jitted.traces == (3 if change == "extend back" else 2)  # (a new list: a new plan)


def test_a_jitted_zero_grad_clears_a_parameter_appended_after_the_trace():
    w, extra = jg.ones(2, requires_grad=True), jg.ones(2, requires_grad=True)
    opt = jg.optim.SGD([w], lr=0.1)
    jitted = jg.jit(lambda: opt.zero_grad())
    w.grad = jg.ones(2)
    jitted()
    opt.param_groups[0]["params"].append(extra)
    w.grad, extra.grad = jg.ones(2), jg.ones(2)
    jitted()
    assert w.grad is None and extra.grad is None


@pytest.mark.parametrize("move", ["share_memory_", "resize_", "set_"])
def test_memory_moved_under_a_closed_over_tensor_is_read_after_the_move(move):
    w = jg.arange(4.0)
    jitted = jg.jit(lambda x: x * w)
    x = jg.ones(4)
    for _ in range(2):
        jitted(x)
    if move == "share_memory_":
        w.storage().share_memory_()
    elif move == "resize_":
        w.storage().resize_(64)  # (grown: the bytes are copied to a new buffer)
    else:
        w.set_(jg.arange(10.0, 14.0))
    w[0] = 100.0
    for _ in range(2):
        np.testing.assert_array_equal(jitted(x).numpy(), (x * w).numpy())
    assert jitted.traces == 2


@pytest.mark.parametrize("change", ["assign", "load_state_dict", "submodule", "to"])
def test_a_module_whose_tensors_were_replaced_is_read_anew(change):
    model = jg.nn.Sequential(jg.nn.Linear(3, 2, generator=0), jg.nn.Tanh())
    jitted = jg.jit(jg.no_grad()(lambda x: model(x)))
    x = jg.ones((4, 3))
    for _ in range(2):
        jitted(x)
    other = jg.nn.Linear(3, 2, generator=1)
    if change == "assign":
        model[0].weight = other.weight
    elif change == "load_state_dict":
        model[0].load_state_dict(other.state_dict(), assign=True)
    elif change == "submodule":
        model[0] = other
    else:
        model.to(jg.float32)
    for _ in range(2):
        np.testing.assert_array_equal(jitted(x).numpy(), model(x).detach().numpy())


def test_returning_tensors_that_require_grad_without_backward_warns():
    w = jg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="without history"):
        jg.jit(lambda x: (x * w).sum())(jg.ones(2))

    def step(x):  # a training step returns its loss for logging: no warning
        w.grad = None
        loss = (x * w).sum()
        loss.backward()
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jg.jit(step)(jg.ones(2))


def test_debug_logs_every_trace_and_kernel_miss(monkeypatch, caplog):
    import logging

    monkeypatch.setattr(config, "debug", 2)
    caplog.set_level(logging.INFO, logger="jitgrad.jit")
    fused = jg.function(lambda x: jg.tanh(x) * 3 + x)  # a new body: a kernel miss
    step = jg.jit(lambda x: fused(x) * 2)
    step(jg.ones(3))
    step(jg.ones(3))
    text = caplog.text
    assert text.count("tracing <lambda> for a new signature: ") == 1 and "(3,)" in text
    assert "kernel " in text and " for " in text and "source of " in text
    assert "def serial(" in text


def test_reading_a_value_while_tracing_warns_at_the_line_that_reads_it():
    x = jg.tensor([1.0, 2.0])

    @jg.jit
    def step(t):
        s = (t * 2).sum()
        return s, s.item(), float(s), bool(s > 3)

    with pytest.warns(jg.jit.TracerWarning) as caught:
        step(x)
    assert [str(w.message).split(" read ")[0] for w in caught] == [
        "jg.jit: item()",
        "jg.jit: float()",
        "jg.jit: bool()",
    ]
    assert {w.filename for w in caught} == {__file__}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(x)  # a replay reads nothing: no warning
        assert (x * 2).sum().item() == 6.0  # nor eagerly


def test_the_count_of_running_traces_returns_to_zero():
    """Eager hot paths read the thread's tape only while some trace runs (config.tracing):
    the count must come back down, also when the traced function raises."""
    seen = []

    @jg.jit
    def step(x):
        seen.append(config.tracing)
        if x.shape[0] == 3:
            raise ValueError("a failing trace")
        return jg.tanh(x) * 2.0

    np.testing.assert_allclose(step(jg.ones(2)).numpy(), np.tanh(np.ones(2)) * 2.0)
    with pytest.raises(ValueError, match="a failing trace"):
        step(jg.ones(3))
    assert seen == [1, 1] and config.tracing == 0
    np.testing.assert_allclose((jg.tanh(jg.ones(2)) * 2.0).numpy(), np.tanh(np.ones(2)) * 2.0)


def test_the_tensors_signature_is_the_general_one_or_none():
    """Calls of tensors over storages of their own take a shortcut to their signature: it
    must be the general one, or a plan traced by one would not be found by the other."""
    from jitgrad.jit.trace import _signature, _tensors_signature

    x, w = jg.ones((3, 4)), jg.zeros(4, requires_grad=True)
    empty, half = jg.ones((0, 2)), jg.ones(5, dtype=jg.float16)
    for args in [(), (x,), (x, w), (x.T, w, empty, half), (x[1:], jg.tensor(2.0))]:
        assert _tensors_signature(args) == _signature(args, {})
    for args in [(x, x), (x, x.T), (x, 1.0), [x, w], (x.numpy(),)]:
        assert _tensors_signature(args) is None

    @jg.jit
    def f(a, b):
        return a * b

    f(x, w.detach())
    f(x, jg.zeros(4))  # (the shortcut's signature)
    assert f.traces == 1
    f(x, x)  # (the general path's)
    f(jg.ones((3, 4)), jg.zeros(4))
    assert f.traces == 2


def test_a_leaf_the_function_makes_itself_is_made_anew_by_each_replay():
    """``x.detach().requires_grad_()`` inside the step is the call's own leaf, with no
    gradient at each call: replays find their plan instead of tracing again."""

    @jg.jit
    def input_grad(x):
        x = x.detach().requires_grad_()
        (jg.sin(x) * x).sum().backward()
        return x.grad

    @jg.jit
    def leaf_and_grad(x):  # (a returned leaf: kept, its values right)
        x = x.detach().requires_grad_()
        (x * x).sum().backward()
        return x, x.grad

    for k in range(4):
        v = np.linspace(-1, 1, 5) + k
        expected = np.cos(v) * v + np.sin(v)
        np.testing.assert_allclose(input_grad(jg.tensor(v)).numpy(), expected, rtol=1e-12)
        leaf, grad = leaf_and_grad(jg.tensor(v))
        np.testing.assert_allclose(leaf.numpy(), v)
        np.testing.assert_allclose(grad.numpy(), 2 * v)
    assert input_grad.traces == 1
