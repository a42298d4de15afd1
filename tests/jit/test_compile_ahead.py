"""A plan's first replay compiles its kernels beside a forked child compiling them from
the last one back: the replay loads what the child finished, and results are the
replay's own."""

import os
import signal
import time
import types

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config
from jitgrad.jit import cache, compile_ahead

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2,
    reason="compiling ahead needs os.fork and two cores",
)

# Functions that no other test compiles: kernels of their own, separated by reductions
# over the first axis (which no row kernel fuses), eight kernels or more in a plan.
_PARTS = [jg.cbrt, jg.expm1, jg.log1p, jg.arctan, jg.sinh, jg.rad2deg, jg.square, jg.cosh]


def _step(x):
    total = x
    for k, f in enumerate(_PARTS):
        total = f(total * (0.3 + 0.01 * k)).mean(axis=0, keepdims=True) + x
    return total


def _numpy(x):
    total = x
    for k, name in enumerate(
        ["cbrt", "expm1", "log1p", "arctan", "sinh", "rad2deg", "square", "cosh"]
    ):
        total = getattr(np, name)(total * (0.3 + 0.01 * k)).mean(axis=0, keepdims=True) + x
    return total


def test_the_first_replay_loads_kernels_a_child_compiled_from_the_end(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))  # (kernels nobody compiled)
    monkeypatch.setattr(config, "compile_ahead", True)
    children = []
    fork = compile_ahead._fork
    monkeypatch.setattr(
        compile_ahead, "_fork", lambda steps: children.append(fork(steps)) or children[-1]
    )  # (its claims, which name the child)
    x = np.random.default_rng(0).standard_normal((6, 5)) * 0.1
    step = jg.jit(_step)
    traced = step(jg.asarray(x)).numpy().copy()
    plan = next(iter(step.plans.values()))
    assert compile_ahead._worth_it(plan.steps)
    loaded = cache.stats.disk_hits
    replayed = step(jg.asarray(x)).numpy()
    assert cache.stats.disk_hits > loaded  # the child got to some kernels first
    np.testing.assert_allclose(replayed, _numpy(x), rtol=1e-12)
    np.testing.assert_allclose(traced, replayed, rtol=1e-12)
    assert len(children) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0].child, os.WNOHANG)  # and it is gone, reaped
    assert cache.claims is None


def test_without_compiling_ahead_nothing_forks(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(config, "compile_ahead", False)

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    x = np.random.default_rng(1).standard_normal((6, 5)) * 0.1
    step = jg.jit(lambda v: _step(v) * 2)
    for _ in range(3):
        np.testing.assert_allclose(step(jg.asarray(x)).numpy(), 2 * _numpy(x), rtol=1e-12)


def test_a_plan_of_compiled_kernels_forks_nothing():
    x = jg.asarray(np.ones((6, 5)))
    step = jg.jit(lambda v: jg.exp(v) + 1)
    for _ in range(3):
        step(x)
    assert not compile_ahead._worth_it(next(iter(step.plans.values())).steps)


def test_a_plan_run_once_leaves_no_kernel_pending():
    """A replayed plan compiled every kernel it calls: a warm start finds them all on disk
    and forks no child (a row kernel without sums over its rows has no combine to run)."""
    from jitgrad.jit.row_fusion import RowLaunch

    x = jg.asarray(np.random.default_rng(2).standard_normal((64, 48)))
    step = jg.jit(lambda v: jg.nn.functional.softmax(v * 1.5, dim=1) + 1)
    for _ in range(2):
        step(x)
    steps = next(iter(step.plans.values())).steps
    assert any(isinstance(fn, RowLaunch) for fn, _ in steps)
    calls = [call for fn, _ in steps for call in compile_ahead._calls_of(fn)]
    assert calls and not any(compile_ahead._pending(call) for call in calls)


def _child(work) -> int:
    """A forked child that runs ``work()`` and exits."""
    pid = os.fork()
    if pid == 0:
        try:
            work()
        finally:
            os._exit(0)
    return pid


def test_the_replay_waits_for_a_kernel_the_child_is_compiling_then_loads_it():
    first, second = object(), object()  # (claims know functions by identity)
    claims = compile_ahead._Claims([first, second])

    def child():
        claims.child = None  # (as the child sees it)
        assert claims.take(first)
        time.sleep(0.2)
        claims.done(first)
        time.sleep(5)  # still running while the replay loads

    claims.child = _child(child)
    time.sleep(0.05)
    start = time.perf_counter()
    assert not claims.take(first)  # compiled by the child: the replay loads it
    assert time.perf_counter() - start > 0.05
    assert claims.take(second)  # nobody's yet: the replay's own
    assert claims.child_runs()
    os.kill(claims.child, signal.SIGKILL)
    os.waitpid(claims.child, 0)


def test_a_claim_a_killed_child_left_is_the_replays():
    first = object()
    claims = compile_ahead._Claims([first])
    claims.states[0] = compile_ahead._CHILD
    claims.child = _child(lambda: None)  # ends at once, its claim still taken
    assert claims.take(first)
    assert not claims.child_runs()


def test_the_child_leaves_a_kernel_the_replay_took(monkeypatch):
    function = types.SimpleNamespace(py_func=_step)  # (a dispatcher, as claims see it)
    other = object()
    claims = compile_ahead._Claims([function, other])
    claims.states[0] = compile_ahead._REPLAY
    monkeypatch.setattr(cache, "claims", claims)  # the child's view: no child of its own
    with pytest.raises(cache.Taken, match="_step"):
        cache._compile(function, ())
    assert claims.take(other) and claims.states[1] == compile_ahead._CHILD
