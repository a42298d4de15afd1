"""A replayed plan's runs of small calls as one compiled call (jit/compiled_plan.py): the
products, fills and kernels it runs give what the calls give one by one."""

import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.jit import cache, compiled_plan
from jitgrad.jit.compiled_plan import Run
from jitgrad.storage import kernels

needs_gemm = pytest.mark.skipif(
    not compiled_plan._GEMM, reason="numpy's OpenBLAS with 64-bit integers is not loaded"
)


def _operand(rng, rows, cols, dtype, transposed):
    """A (rows, cols) operand, stored transposed (a view of its transpose) or not."""
    if transposed:
        return rng.standard_normal((cols, rows)).astype(dtype).T
    return rng.standard_normal((rows, cols)).astype(dtype)


def _run_fused(calls):
    fused = compiled_plan.fuse(calls)
    for fn, args in fused:
        fn(*args)
    return fused


@needs_gemm
def test_products_of_every_layout_and_float_type_run_as_one_call():
    rng = np.random.default_rng(0)
    calls, expected = [], []
    for dtype in (np.float32, np.float64):
        for m, n, k in ((5, 3, 4), (1, 6, 2), (7, 1, 3)):
            for ta in (False, True):
                for tb in (False, True):
                    a = _operand(rng, m, k, dtype, ta)
                    b = _operand(rng, k, n, dtype, tb)
                    out = np.full((m, n), np.nan, dtype)
                    calls.append((np.matmul, (a, b, out)))
                    expected.append(a @ b)
    fused = _run_fused(calls)
    assert len(fused) == 1 and isinstance(fused[0][0], Run)
    for (_, (_, _, out)), want in zip(calls, expected):
        rtol = 1e-5 if out.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, want, rtol=rtol, atol=rtol)


@needs_gemm
def test_calls_it_cannot_express_stay_python_calls_in_their_place():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    first, last = np.empty((4, 4)), np.empty((4, 4))
    overlapping = rng.standard_normal((4, 4))  # a product into one of its operands
    strided = rng.standard_normal((4, 8))[:, ::2]  # no unit stride: not a BLAS operand
    order = []
    calls = [
        (np.matmul, (a, b, first)),
        (kernels.fill, (first.reshape(-1), 0, 4, np.float64(2.5))),
        (lambda: order.append(first.copy()), ()),
        (np.matmul, (a, overlapping, overlapping)),
        (np.matmul, (strided, b, last)),
    ]
    want_overlap, want_last = a @ overlapping, strided @ b
    fused = _run_fused(calls)
    assert [type(fn) for fn, _ in fused[:2]] == [Run, type(calls[2][0])]
    assert all(fn is np.matmul for fn, _ in fused[2:])
    want_first = a @ b
    want_first.reshape(-1)[:4] = 2.5
    np.testing.assert_allclose(order[0], want_first, rtol=1e-12)  # the run ran before it
    np.testing.assert_allclose(overlapping, want_overlap, rtol=1e-12)
    np.testing.assert_allclose(last, want_last, rtol=1e-12)


def test_a_single_call_is_left_as_it_is():
    a = np.zeros(4)
    calls = [(kernels.fill, (a, 0, 4, np.float64(1.0)))]
    assert compiled_plan.fuse(calls) == calls


def _mlp_training(monkeypatch, dtype, steps, compile_after, lr_at=None):
    """Losses and parameters of ``steps`` jitted SGD steps of a small MLP on fixed
    batches; the learning rate drops to 0 from step ``lr_at`` on."""
    jg.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5)).to(dtype)
    opt = jg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    @jg.jit
    def step(x, y):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(2)
    xs = rng.standard_normal((12, 8, 12))[:steps]  # the same batches for any step count
    ys = rng.integers(0, 5, (12, 8))[:steps]
    losses = []
    monkeypatch.setattr(jg.config, "compile_plan_after", compile_after)
    for i in range(steps):
        if i == lr_at:
            opt.param_groups[0]["lr"] = 0.0
            opt.param_groups[0]["momentum"] = 0.0
        losses.append(step(jg.asarray(xs[i].astype(dtype.numpy)), jg.asarray(ys[i])).item())
    return losses, [p.numpy().copy() for p in model.parameters()], step


@needs_gemm
@pytest.mark.parametrize("dtype", [jg.float32, jg.float64])
def test_a_training_step_compiled_after_a_few_replays_trains_as_it_did(monkeypatch, dtype):
    expected_losses, expected_params, _ = _mlp_training(monkeypatch, dtype, 12, 0)
    losses, params, step = _mlp_training(monkeypatch, dtype, 12, 3)
    calls = [fn for plan in step.plans.values() for fn, _ in plan._calls]
    assert any(isinstance(fn, Run) for fn in calls)
    assert "compiled run(s) of" in step.explain()
    tolerance = 1e-5 if dtype == jg.float32 else 1e-12
    np.testing.assert_allclose(losses, expected_losses, rtol=tolerance)
    for got, want in zip(params, expected_params):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@needs_gemm
def test_the_optimizer_reads_its_options_at_every_step_of_a_compiled_plan(monkeypatch):
    _, frozen, _ = _mlp_training(monkeypatch, jg.float32, 10, 3, lr_at=6)
    _, at_six, _ = _mlp_training(monkeypatch, jg.float32, 6, 3)
    for got, want in zip(frozen, at_six):
        np.testing.assert_array_equal(got, want)


def test_a_plan_over_a_callers_large_input_is_not_compiled(monkeypatch):
    monkeypatch.setattr(jg.config, "compile_plan_after", 2)
    f = jg.jit(lambda x: (x * 2 + 1).sum())
    # each passed by reference: the plan's buffer points at it for the call
    values = [f(jg.full(1 << 17, float(i))).item() for i in range(5)]
    (plan,) = f.plans.values()
    assert not any(isinstance(fn, Run) for fn, _ in plan._calls)
    assert values == [(2.0 * i + 1) * (1 << 17) for i in range(5)]


def test_a_function_jitted_with_compile_plans_false_keeps_its_python_calls(monkeypatch):
    monkeypatch.setattr(jg.config, "compile_plan_after", 2)
    w, v = jg.tensor(np.arange(12.0).reshape(3, 4)), jg.tensor(np.ones((4, 2)))
    kept = jg.jit(lambda x: jg.tanh(x @ w) @ v * 2 + 1, compile_plans=False)
    compiled = jg.jit(lambda x: jg.tanh(x @ w) @ v * 2 + 1)
    x = jg.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    for _ in range(5):
        np.testing.assert_allclose(kept(x).numpy(), compiled(x).numpy(), rtol=1e-12)
    (plan,) = kept.plans.values()
    assert not any(isinstance(fn, Run) for fn, _ in plan._calls)
    (plan,) = compiled.plans.values()
    assert any(isinstance(fn, Run) for fn, _ in plan._calls) == bool(compiled_plan._GEMM)
    assert kept.compile_plans is False and compiled.compile_plans is True


@needs_gemm
def test_a_run_numba_fails_to_compile_runs_its_calls_and_warns(monkeypatch):
    def fail(self, variant, args):
        raise RuntimeError("no compiler today")

    monkeypatch.setattr(cache.Kernel, "compile", fail)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    outs = [np.empty((3, 3)), np.empty((3, 3))]
    calls = [(np.matmul, (a, b, outs[0])), (np.matmul, (b, a, outs[1]))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused = _run_fused(calls)
        for fn, args in fused:  # a second time: no second warning
            fn(*args)
    assert len(fused) == 1
    assert [str(w.message) for w in caught] == [
        "jg.jit: a plan's calls run uncompiled: no compiler today"
    ]
    np.testing.assert_allclose(outs[0], a @ b, rtol=1e-12)
    np.testing.assert_allclose(outs[1], b @ a, rtol=1e-12)
