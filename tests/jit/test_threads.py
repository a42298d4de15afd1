"""Parallel launches (jitgrad.jit.threads): the serial kernel over pieces of its outer loop,
taken by threads as they come, computes exactly what one serial call computes, for every
layout."""

import contextlib
import os
import signal
import sys
import threading
import time
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad import threads
from jitgrad._config import LIGHT_KERNEL_FACTOR, config
from jitgrad.storage import kernels as storage_kernels
from jitgrad.storage.convert import NOT_HALF


@given(extent=st.integers(1, 10**6), align=st.sampled_from([1, 64]), parts=st.integers(1, 16))
def test_bounds_cut_the_range_into_aligned_balanced_pieces(extent, align, parts):
    pieces = threads.bounds(extent, align, parts)
    assert pieces[0][0] == 0 and pieces[-1][1] == extent
    assert all(lo < hi for lo, hi in pieces)
    assert all(a[1] == b[0] and a[1] % align == 0 for a, b in zip(pieces, pieces[1:]))
    assert len(pieces) == min(parts, max(1, extent // align))
    assert max(hi - lo for lo, hi in pieces) <= -(-extent // len(pieces)) + align


@pytest.mark.parametrize("numel, want", [(1000, 2), (1999, 2), (3000, 3), (100_000, 16)])
def test_a_launch_gets_a_piece_per_threshold_of_elements_up_to_a_cap(numel, want):
    with mock.patch.object(threads, "count", lambda: 2):
        assert threads.pieces(numel, 1000) == want


def test_run_does_every_piece_once_this_thread_among_the_takers():
    seen = []
    threads.run(lambda k: seen.append((k, threading.get_ident())), 40)
    assert sorted(k for k, _ in seen) == list(range(40))
    assert threading.get_ident() in {ident for _, ident in seen}


def test_a_late_worker_leaves_its_pieces_to_the_launching_thread(monkeypatch):
    """A worker that wakes late (an idle virtual CPU) only takes what is left when it
    comes: the launching thread does not wait for it before going on."""
    start = threads._Worker.start

    def start_late(worker, job):
        start(worker, lambda: (time.sleep(0.2), job()))

    monkeypatch.setattr(threads._Worker, "start", start_late)
    monkeypatch.setattr(threads, "count", lambda: 2)
    here = threading.get_ident()
    takers = []
    threads.run(lambda k: (time.sleep(0.001), takers.append(threading.get_ident())), 20)
    assert takers.count(here) == 20


def test_run_raises_a_pieces_error_once_every_piece_is_done():
    done = []

    def work(k):
        if k == 1:
            raise ValueError("piece 1 failed")
        time.sleep(0.02)
        done.append(k)

    with pytest.raises(ValueError, match="piece 1 failed"):
        threads.run(work, 3)
    assert sorted(done) == [0, 2]
    threads.run(lambda k: done.append(k + 5), 2)  # the pool still works
    assert sorted(done) == [0, 2, 5, 6]


def test_a_worker_holds_nothing_of_a_finished_launch():
    """An idle worker keeps no reference to the arrays of its last piece, so a pooled
    output buffer is free for the next launch as soon as the caller drops it."""
    data = np.ones(10)
    refs = sys.getrefcount(data)
    threads.run(lambda k, a=data: a.sum(), 4)  # (each piece's arguments hold the array)
    assert sys.getrefcount(data) == refs


@contextlib.contextmanager
def split_everything():
    """Every launch parallel, over three shares (more than this machine's cores); yields
    the number of shares of each parallel launch."""
    shares, run = [], threads.run

    def counted(task, n, serial=False):
        shares.append(n)
        run(task, n, serial)

    with (
        mock.patch.object(config, "parallel_threshold", 1),
        mock.patch.object(threads, "count", lambda: 3),
        mock.patch.object(threads, "pieces", lambda numel, threshold: 3),
        mock.patch.object(threads, "run", counted),
    ):
        yield shares


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 2000), dtype=st.sampled_from(["float32", "float64"]))
def test_flat_launches_split_into_shares_match_numpy(n, dtype):
    rng = np.random.default_rng(n)
    x, y = rng.uniform(-3, 3, n).astype(dtype), rng.uniform(-3, 3, n).astype(dtype)
    d = 0.5 * (1 - np.tanh(x * y) ** 2)
    tol = 1e-5 if dtype == "float32" else 1e-12
    with split_everything() as shares:
        for _ in range(2):  # the second time the compiled kernels run in shares
            a, b = jg.tensor(x, requires_grad=True), jg.tensor(y, requires_grad=True)
            out = jg.tanh(a * b) * 0.5 + b  # a broadcast constant among the operands
            out.sum().backward()  # one backward kernel writing two gradients
            np.testing.assert_allclose(out.numpy(), np.tanh(x * y) * 0.5 + y, rtol=tol, atol=tol)
            np.testing.assert_allclose(a.grad.numpy(), d * y, rtol=tol, atol=tol)
            np.testing.assert_allclose(b.grad.numpy(), d * x + 1, rtol=tol, atol=tol)
    assert max(shares) == min(3, max(1, n // 64))


@settings(max_examples=25, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 9), st.integers(1, 12), st.integers(1, 7)),
    steps=st.tuples(st.sampled_from([1, -1, 2]), st.sampled_from([1, -2])),
)
def test_strided_launches_split_into_shares_match_numpy(shape, steps):
    rng = np.random.default_rng(sum(shape))
    x, row = rng.standard_normal(shape), rng.standard_normal((shape[1], 1))
    want = np.exp(x[:: steps[0], :, :: steps[1]]) * row
    with split_everything() as shares:
        for _ in range(2):  # the second call runs the compiled kernel in shares
            got = jg.exp(jg.tensor(x)[:: steps[0], :, :: steps[1]]) * jg.tensor(row)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    rows = want.shape[0]
    if rows > 1 and shape[1] > 1:  # row's strides keep the outer loop over the rows
        assert shares[-1] == min(3, rows)  # the product, the last launch


def test_in_place_updates_split_into_shares():
    with split_everything() as shares:
        start = np.linspace(-1, 1, 1000, dtype=np.float32)
        p = jg.nn.Parameter(jg.tensor(start.copy()))
        optimizer = jg.optim.SGD([p], lr=0.5)
        for _ in range(2):  # the second step runs the compiled update in shares
            p.grad = jg.tensor(np.ones(1000, np.float32))
            optimizer.step()
        np.testing.assert_allclose(p.numpy(), start - 1.0, rtol=1e-6)
    assert 3 in shares


def test_a_new_threshold_applies_to_calls_already_remembered():
    x = jg.tensor(np.ones(5000))
    with split_everything() as shares:
        for _ in range(2):  # (the first call of a kernel compiles it, over it all)
            jg.exp(x)
        assert shares[-1] == 3
        split = len(shares)
        with mock.patch.object(config, "parallel_threshold", 10**9):
            jg.exp(x)
        assert len(shares) == split  # serial
        jg.exp(x)
        assert len(shares) == split + 1  # in shares again


def test_kernels_that_only_move_memory_go_parallel_at_a_larger_size():
    x = jg.tensor(np.ones(3000, dtype=np.float32))
    with split_everything() as shares, mock.patch.object(config, "parallel_threshold", 1000):
        for _ in range(2):  # (a kernel's first call compiles it, over it all)
            jg.exp(x)  # transcendental math: in shares from 1000 elements
            before = len(shares)
            x + 1  # arithmetic: from LIGHT_KERNEL_FACTOR * 1000
            assert len(shares) == before
        assert shares
        config.parallel_threshold = 3000 // LIGHT_KERNEL_FACTOR
        x + 1
        assert len(shares) == before + 1


@pytest.mark.parametrize("n, parallel", [(2999, False), (3000, True)])
def test_fills_and_copies_go_parallel_at_the_light_kernels_size(monkeypatch, n, parallel):
    monkeypatch.setattr(config, "parallel_threshold", 3000 // LIGHT_KERNEL_FACTOR)
    launches = []
    real = threads.run
    monkeypatch.setattr(threads, "run", lambda task, k: launches.append(k) or real(task, k))
    a, b = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
    storage_kernels.fill(a, 0, n, np.float32(2))
    np.testing.assert_array_equal(a, 2)
    storage_kernels.copy(b, NOT_HALF, 0, a, NOT_HALF, 0, n)
    np.testing.assert_array_equal(a, b)
    assert launches == ([threads.count()] * 2 if parallel else [])


@pytest.mark.parametrize("value", [0.0, 2.5])  # memset, and stores
def test_pieced_fills_and_copies_cover_every_element_once(monkeypatch, value):
    monkeypatch.setattr(config, "parallel_threshold", 1000 // LIGHT_KERNEL_FACTOR)
    n = 100_003  # in many pieces, cut on cache lines, with an odd tail
    a = np.full(n + 40, -1.0, np.float32)
    storage_kernels.fill(a, 17, 17 + n, np.float32(value))
    np.testing.assert_array_equal(a[17 : 17 + n], value)
    assert (a[:17] == -1).all() and (a[17 + n :] == -1).all()
    src = np.arange(n + 9, dtype=np.float64)
    out = np.zeros(n + 5, np.float32)
    storage_kernels.copy(src, NOT_HALF, 9, out, NOT_HALF, 3, n)
    np.testing.assert_array_equal(out[3 : 3 + n], src[9:].astype(np.float32))
    assert (out[:3] == 0).all() and (out[3 + n :] == 0).all()


def test_parallel_launches_from_several_user_threads(monkeypatch):
    monkeypatch.setattr(config, "parallel_threshold", 1)
    x = jg.tensor(np.random.default_rng(0).standard_normal(40_000).astype(np.float32))
    want = (jg.tanh(x) * 2).numpy()
    results, errors = [], []

    def work():
        try:
            results.extend((jg.tanh(x) * 2).numpy() for _ in range(20))
        except Exception as error:  # reported below
            errors.append(error)

    users = [threading.Thread(target=work) for _ in range(4)]
    for user in users:
        user.start()
    for user in users:
        user.join()
    assert not errors and len(results) == 80
    assert all(np.array_equal(r, want) for r in results)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_workers_of_its_own():
    with split_everything():
        x = jg.tensor(np.random.default_rng(1).standard_normal(5000))
        want = jg.exp(x).numpy()
        jg.exp(x)  # the pool's workers exist in this process now
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report, never return into pytest
            try:
                signal.alarm(60)
                os.write(write, b"1" if np.array_equal(jg.exp(x).numpy(), want) else b"0")
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        assert os.read(read, 1) == b"1"
        os.close(read)


def test_watching_a_counter_sees_another_threads_write():
    counts = np.zeros(2, np.int64)
    assert not threads._watch(counts, 1, 1, 10)  # nobody writes it: gives up
    assert threads._watch(counts, 0, 0, 1)

    def write_soon():
        time.sleep(0.01)
        counts[1] = 7

    writer = threading.Thread(target=write_soon)
    writer.start()
    # (10^7 turns is seconds: only the write ends the wait this soon)
    started = time.perf_counter()
    assert threads._watch(counts, 1, 7, 10**7)
    assert time.perf_counter() - started < 1
    writer.join()


@pytest.mark.parametrize("turns", [0, threads.SPIN_TURNS])
def test_launches_in_a_row_hand_over_with_or_without_watching(monkeypatch, turns):
    monkeypatch.setattr(threads, "SPIN_TURNS", turns)
    monkeypatch.setattr(threads, "count", lambda: 2)
    for n in range(2, 40):
        seen = []
        threads.run(seen.append, n)
        assert sorted(seen) == list(range(n))


def test_replayed_parallel_launches_follow_their_repointed_arrays():
    """A parallel launch works out its pieces' arguments once for the arrays it is given;
    a replay whose input buffer is repointed at the caller's new tensor (or given an
    offset view of one) computes on it, in flat, strided and row kernels alike."""
    rng = np.random.default_rng(7)

    def f(x, y):
        return jg.exp(x) * 2 + y.T, jg.nn.functional.softmax(x * 3, dim=-1)

    with split_everything() as shares:
        jitted = jg.jit(f)
        for k in range(4):
            x = rng.standard_normal((40, 30))
            y = rng.standard_normal((31, 40))[k % 2 :][:30]  # an offset view half the time
            a, b = jitted(jg.asarray(x), jg.asarray(y))
            e = np.exp(3 * x - (3 * x).max(-1, keepdims=True))
            np.testing.assert_allclose(a.numpy(), np.exp(x) * 2 + y.T, rtol=1e-12)
            np.testing.assert_allclose(b.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-12)
    assert shares and jitted.traces == 1
