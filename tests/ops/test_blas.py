"""A jitted plan's small matrix products run BLAS on one thread, eager ones as numpy runs
them; results never depend on it, and the process-wide thread count is always restored,
from any number of threads."""

import threading
import time

import numpy as np
import pytest

import jitgrad as jg
from jitgrad._config import config
from jitgrad.ops import blas


class RecordingSetter:
    """Stands in for OpenBLAS's thread count (process-wide): records what it is asked to
    set, and whether it was ever set without the switch lock held."""

    def __init__(self, current: int = 2):
        self.current, self.calls, self.unlocked = current, [], 0

    def __call__(self, n: int) -> int:
        self.calls.append(n)
        self.unlocked += not blas.one_thread._lock._is_owned()
        previous = self.current
        time.sleep(0)  # let another thread in between the read and the write, if it can
        self.current = n
        return previous


@pytest.fixture
def setter(monkeypatch):
    fake = RecordingSetter()
    monkeypatch.setattr(blas, "set_blas_threads", fake)
    return fake


@pytest.fixture
def planned(monkeypatch):
    """Products decided as a trace records them into a plan (its tape is open)."""
    monkeypatch.setattr(config.thread, "tape", object())


def test_eager_products_run_as_numpy_runs_them(monkeypatch):
    monkeypatch.setattr(blas, "set_blas_threads", RecordingSetter())
    a, b = operands(64, 64, 128)
    assert blas.matmul_for(a, b, np.empty((64, 128), np.float32)) is np.matmul


def operands(m, k, n, dtype=np.float32):
    rng = np.random.default_rng(0)
    return rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)


def test_small_products_run_on_one_thread_and_restore_the_setting(setter, planned):
    a, b = operands(64, 64, 128)
    out = np.empty((64, 128), np.float32)
    fn = blas.matmul_for(a, b, out)
    assert fn is blas.matmul_on_one_thread
    fn(a, b, out)
    assert setter.calls == [1, 2] and setter.current == 2
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_large_products_keep_numpys_threads(setter, planned, monkeypatch):
    a, b = operands(64, 64, 128)
    out = np.empty((64, 128), np.float32)
    monkeypatch.setattr(config, "blas_one_thread_up_to", 64 * 64 * 128 - 1)
    assert blas.matmul_for(a, b, out) is np.matmul
    monkeypatch.setattr(config, "blas_one_thread_up_to", 64 * 64 * 128)
    assert blas.matmul_for(a, b, out) is blas.matmul_on_one_thread


def test_batched_and_vector_products_count_every_multiply_add(setter, planned, monkeypatch):
    a, b = np.ones((4, 8, 16)), np.ones((16, 32))
    monkeypatch.setattr(config, "blas_one_thread_up_to", 4 * 8 * 16 * 32 - 1)
    assert blas.matmul_for(a, b, np.empty((4, 8, 32))) is np.matmul
    v = np.ones(16)
    monkeypatch.setattr(config, "blas_one_thread_up_to", 4 * 8 * 16)
    assert blas.matmul_for(a, v, np.empty((4, 8))) is blas.matmul_on_one_thread


def test_the_setting_is_restored_when_the_product_fails(setter):
    a, b = operands(4, 5, 6)
    with pytest.raises(ValueError):
        blas.matmul_on_one_thread(a, b, np.empty((4, 7), np.float32))
    assert setter.calls == [1, 2] and setter.current == 2


def test_without_a_per_thread_setting_products_go_to_numpy(monkeypatch):
    monkeypatch.setattr(blas, "set_blas_threads", None)
    a, b = operands(4, 5, 6)
    assert blas.matmul_for(a, b, np.empty((4, 6), np.float32)) is np.matmul


@pytest.mark.skipif(blas.set_blas_threads is None, reason="numpy's OpenBLAS has no such setting")
def test_openblas_thread_count_is_left_as_it_was():
    before = blas.set_blas_threads(1)
    blas.set_blas_threads(before)
    a, b = operands(8, 8, 8)
    blas.matmul_on_one_thread(a, b, np.empty((8, 8), np.float32))
    after = blas.set_blas_threads(before)
    assert after == before


@pytest.mark.parametrize("up_to", [0, 1 << 40])
def test_matmul_and_its_jitted_replay_equal_numpy_on_either_path(up_to, monkeypatch):
    monkeypatch.setattr(config, "blas_one_thread_up_to", up_to)
    a, b = operands(64, 64, 128, np.float64)
    step = jg.jit(lambda x, y: x @ y)
    for scale in (1.0, 2.0):
        x, y = jg.asarray(a * scale), jg.asarray(b)
        np.testing.assert_allclose(step(x, y).numpy(), (a * scale) @ b, rtol=1e-12)
        np.testing.assert_allclose((x @ y).numpy(), (a * scale) @ b, rtol=1e-12)


def test_switched_once_needs_two_small_products_and_nothing_else_that_uses_blas():
    from jitgrad.recording import _into

    small, kernel = blas.matmul_on_one_thread, object()
    assert blas.switched_once([(small, 1), (kernel, 2)]) is None
    assert blas.switched_once([(small, 1), (small, 2), (np.matmul, 3)]) is None
    assert blas.switched_once([(small, 1), (small, 2), (_into, 3)]) is None
    assert blas.switched_once([(small, 1), (kernel, 2), (small, 3)]) == [
        (np.matmul, 1),
        (kernel, 2),
        (np.matmul, 3),
    ]


def test_a_plan_with_launches_shared_among_threads_keeps_every_product_on_one_thread():
    from jitgrad.recording import _into

    class Shared:  # a launch that jitgrad's threads share (lowering._Split)
        shares_threads = True

    small, shared = blas.matmul_on_one_thread, Shared()
    a, b = operands(64, 64, 128)
    product = (a, b, np.empty((64, 128), np.float32))
    assert blas.switched_once([(shared, 1), (small, product)]) == [
        (shared, 1),
        (np.matmul, product),
    ]
    assert blas.switched_once([(np.matmul, product), (shared, 2)]) == [
        (np.matmul, product),
        (shared, 2),
    ]
    assert blas.switched_once([(_into, 1), (shared, 2)]) == [(_into, 1), (shared, 2)]
    assert blas.switched_once([(shared, 1), (shared, 2)]) is None  # (no BLAS to switch)
    assert blas.switched_once([(np.matmul, 1), (object(), 2)]) is None


def test_a_replay_of_small_products_switches_blas_once(setter):
    a, b, c = (operands(16, 16, 16, np.float64)[0] for _ in range(3))
    step = jg.jit(lambda x, y, z: jg.relu(x @ y) @ z)
    expected = np.maximum(a @ b, 0) @ c
    for call in range(3):
        setter.calls.clear()
        got = step(jg.asarray(a), jg.asarray(b), jg.asarray(c * (call + 1)))
        np.testing.assert_allclose(got.numpy(), expected * (call + 1), rtol=1e-12)
        # the trace and the first replay switch around each product, later replays once
        assert setter.calls == ([1, 2, 1, 2] if call < 2 else [1, 2])
    assert setter.current == 2


def test_switches_from_many_threads_never_interleave_and_restore_the_count(setter):
    a, b = operands(8, 8, 8)

    def work():
        out = np.empty((8, 8), np.float32)
        for _ in range(200):
            blas.matmul_on_one_thread(a, b, out)
            with blas.one_thread:  # a replay's switch, with a product nested inside
                blas.matmul_on_one_thread(a, b, out)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert setter.unlocked == 0 and len(setter.calls) == 4 * 200 * 6
    assert setter.current == 2  # interleaved, a restore could leave 1 for good


def test_a_plan_sharing_threads_cuts_its_large_products_among_them(monkeypatch):
    class Shared:
        shares_threads = True

    shared, (a, b) = Shared(), operands(64, 64, 128)
    product = (a, b, np.empty((64, 128), np.float32))
    monkeypatch.setattr(config, "blas_split_from", 64 * 64 * 128)
    assert blas.switched_once([(shared, 1), (np.matmul, product)])[1][0] is blas.split_product
    assert (
        blas.switched_once([(shared, 1), (blas.matmul_on_one_thread, product)])[1][0]
        is blas.split_product
    )
    monkeypatch.setattr(config, "blas_split_from", 64 * 64 * 128 + 1)
    assert blas.switched_once([(shared, 1), (np.matmul, product)])[1][0] is np.matmul
    # too few rows to share, or a plan whose kernels run on one thread: left whole
    monkeypatch.setattr(config, "blas_split_from", 1)
    thin = operands(16, 64, 128)
    thin_product = (*thin, np.empty((16, 128), np.float32))
    assert blas.switched_once([(shared, 1), (np.matmul, thin_product)])[1][0] is np.matmul
    # a stack of thin matrices, one for each thread at least, is shared by its matrices
    n = blas.threads.count()
    stack = (np.stack([thin[0]] * n), thin[1], np.empty((n, 16, 128), np.float32))
    assert blas.switched_once([(shared, 1), (np.matmul, stack)])[1][0] is blas.split_product
    assert (
        blas.switched_once([(blas.matmul_on_one_thread, product)] * 2) == [(np.matmul, product)] * 2
    )


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((37, 5), (5, 9)),
        ((100, 64), (64, 3)),
        ((3, 50, 8), (8, 7)),
        ((2, 3, 40, 6), (3, 6, 5)),
        # stacks cut by their first axis, broadcast operands left whole
        ((7, 4, 16), (7, 16, 9)),
        ((1, 3, 8, 6), (5, 3, 6, 4)),
        ((5, 8, 6), (1, 6, 4)),
        ((8, 6), (5, 6, 4)),
    ],
)
@pytest.mark.parametrize("count", [2, 3])
def test_split_products_equal_numpys(monkeypatch, a_shape, b_shape, count):
    monkeypatch.setattr(blas.threads, "count", lambda: count)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    out = np.empty(
        np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, 1))[:-1] + b.shape[-1:]
    )
    with blas.one_thread:
        blas.split_product(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)


def test_a_jitted_step_shares_its_large_product_and_equals_numpy(monkeypatch):
    monkeypatch.setattr(config, "blas_split_from", 1)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((256, 64)), rng.standard_normal((64, 600))
    big = config.parallel_threshold * 8  # a kernel shared among threads beside the product
    step = jg.jit(lambda x, y, z: (jg.tanh(x @ y), jg.exp(z)))
    z = rng.standard_normal(big)
    for scale in (1.0, 2.0, 3.0):
        y, e = step(jg.asarray(a * scale), jg.asarray(b), jg.asarray(z))
        np.testing.assert_allclose(y.numpy(), np.tanh((a * scale) @ b), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(e.numpy(), np.exp(z), rtol=1e-12)
    plan = next(iter(step.plans.values()))
    assert blas.split_product in [fn for fn, _ in plan._calls]


@pytest.mark.parametrize("transposed", [False, True])
def test_a_stack_times_a_matrix_is_one_product_where_its_rows_allow(transposed):
    rng = np.random.default_rng(3)
    stack = rng.standard_normal((6, 4, 5, 3))
    w = rng.standard_normal((7, 3))
    # transposed, the stack's rows are not evenly spaced: one product per matrix
    axes = (1, 0, 2, 3) if transposed else (0, 1, 2, 3)
    step = jg.jit(lambda x, w: x.permute(*axes) @ w.T)
    for scale in (1.0, 2.0):
        got = step(jg.asarray(stack * scale), jg.asarray(w))
        expected = (stack * scale).transpose(axes) @ w.T
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    plan = next(iter(step.plans.values()))
    ((left, _, _),) = [
        args for fn, args in plan.steps if fn in (np.matmul, blas.matmul_on_one_thread)
    ]
    assert left.ndim == (4 if transposed else 2)
