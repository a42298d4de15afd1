"""End to end: train a small model, serve it over loopback HTTP, save version 2 while
clients hammer :predict, and watch the swap: warmed before it serves, version 1 unloaded
only after its in-flight requests, no client error, no slow request."""

import os
import statistics
import threading
import time

import numpy as np
import pytest
from conftest import Client, predict_in_process

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn, optim
from jitgrad.io import save_model
from jitgrad.serving.app import ServingApp
from jitgrad.serving.state import State

pytest.importorskip("sklearn")
from sklearn.datasets import load_digits  # noqa: E402

T = 60
PREDICT = "/v1/models/digits:predict"
CLIENTS = 4
HAMMER_SECONDS = 2.0
# Latency bounds, from measurements on the shared 2-core machine (load average 5-7; 4
# client threads in this process beside the server's event loop and predict threads,
# single-row predicts over keep-alive loopback connections, version 2 loading and
# compiling 2 new kernels for ~0.7-1.3 s meanwhile; 3 runs):
#   steady state, one client:  p50 0.98-1.08 ms
#   hammer, 4 clients:         p50 7.7-8.3 ms (the clients and the server share one GIL),
#                              max 84-96 ms over 690-870 requests
#   first 5 requests on v2:    8-41 ms
#   without freeze_heap: a full garbage collection during v2's compilation stalls all
#   clients at once (~150 ms)
# COLD_REQUEST_BOUND applies to the first requests version 2 answers (the ones a missing
# warm-up would make cold, tracing and compiling in the request path: ~80-100 ms more).
# SLOW_REQUEST_BOUND applies to every request: generous, for a noisy neighbour. The
# deterministic check that no request compiled is the jg.jit.stats() comparison below.
COLD_REQUEST_BOUND = 0.060  # seconds
FIRST_ON_V2 = 20
SLOW_REQUEST_BOUND = 0.200  # seconds


def train(hidden_activation, seed: int, steps: int):
    digits = load_digits()
    x = (digits.data[:300] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[digits.target[:300]]
    rng = jg.random.default_rng(seed)
    model = nn.Sequential(
        nn.Linear(64, 16, dtype=jg.float32, generator=rng),
        hidden_activation,
        nn.Linear(16, 10, dtype=jg.float32, generator=rng),
    )
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xs, ys = jg.asarray(x), jg.asarray(y)
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(xs), ys).backward()
        opt.step()
    model.eval()
    accuracy = (predict_in_process(model, x).argmax(1) == digits.target[:300]).mean()
    return model, accuracy, x


def test_train_serve_swap_under_load(tmp_path):
    base = str(tmp_path / "digits")
    v1, accuracy, x = train(nn.ReLU(), seed=0, steps=30)
    assert accuracy > 0.5  # it learned something (chance is 0.1)
    save_model(v1, os.path.join(base, "1"), input_shape=(64,), warmup_batch_sizes=(1, 8))

    # freeze_heap as the command-line server does (see app.py: without it a full garbage
    # collection during the new version's compilation stalls every request ~150 ms here)
    app = ServingApp("digits", base, port=0, poll_seconds=0, ready_timeout=T, freeze_heap=True)
    published = {}

    def on_state(s):  # runs at the moment a state is published
        if s.state is State.AVAILABLE:
            published[s.id.version] = jg.jit.stats()

    app.manager.add_listener(on_state)
    app.start()
    client = Client(app.server.url)
    stop, threads, in_flight = threading.Event(), [], None
    try:
        # predict over HTTP matches the in-process model
        status, body = client.post(PREDICT, {"instances": x[:8].tolist()})
        assert status == 200
        np.testing.assert_allclose(body["predictions"], predict_in_process(v1, x[:8]), rtol=1e-6)
        steady = []
        for i in range(50):
            t0 = time.perf_counter()
            status, _ = client.post(PREDICT, {"instances": x[i : i + 1].tolist()})
            assert status == 200
            steady.append(time.perf_counter() - t0)

        # version 2: another activation, so its plans need kernels version 1 never used
        v2, _, _ = train(nn.LeakyReLU(0.05), seed=1, steps=30)
        expected = {1: predict_in_process(v1, x[:64]), 2: predict_in_process(v2, x[:64])}

        results = [[] for _ in range(CLIENTS)]

        def hammer(k):
            c = Client(app.server.url)
            try:
                for n in range(10_000):
                    if stop.is_set():
                        break
                    i = (k * 17 + n) % 64
                    t0 = time.perf_counter()
                    status, body = c.post(PREDICT, {"instances": [x[i].tolist()]})
                    elapsed = time.perf_counter() - t0
                    version = None
                    if status == 200:
                        got = np.asarray(body["predictions"][0])
                        matches = [
                            v
                            for v, e in expected.items()
                            if np.allclose(got, e[i], rtol=1e-5, atol=1e-6)
                        ]
                        version = matches[0] if matches else "wrong"
                    results[k].append((t0, elapsed, status, version))
            finally:
                c.close()

        threads += [threading.Thread(target=hammer, args=(k,)) for k in range(CLIENTS)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(0.3)
        in_flight = app.manager.get_servable_handle("digits")  # a request still running on v1
        assert in_flight.id.version == 1
        save_model(v2, os.path.join(base, "2"), input_shape=(64,), warmup_batch_sizes=(1, 8))
        swap_at = time.perf_counter()
        assert app.source.poll() == [2]  # the manual trigger
        app.manager.wait_until_available("digits", 2, T)
        available_at = time.perf_counter()
        state = app.manager.wait_until_state("digits", 1, {State.UNLOADING}, T)
        # version 1 is unreachable, but the in-flight request still completes on it
        assert state.state is State.UNLOADING
        out = in_flight.servable({"x": x[:1]})["output"]
        np.testing.assert_allclose(out, expected[1][:1], rtol=1e-5, atol=1e-6)
        time.sleep(0.2)
        assert app.manager.version_states("digits")[1].state is State.UNLOADING  # still held
        in_flight.release()
        app.manager.wait_until_state("digits", 1, {State.END}, T)
        time.sleep(max(0.0, HAMMER_SECONDS - (time.perf_counter() - start)))
        stop.set()
        for t in threads:
            t.join(T)

        # version 2 was warm before it was published, and no request compiled or traced
        with app.manager.get_servable_handle("digits") as handle:
            predictor = handle.servable
            assert handle.id.version == 2 and predictor.warmed
            report = predictor.warm_up_report
            assert report["plans"] == "enabled" and predictor.traces == 2 * 2
        end = jg.jit.stats()
        at_publication = published[2]
        assert (end["generated"], end["compiled"]) == (
            at_publication["generated"],
            at_publication["compiled"],
        )
        assert published[2]["generated"] >= published[1]["generated"]

        rows = [r for per_client in results for r in per_client]
        errors = [r for r in rows if r[2] != 200 or r[3] == "wrong"]
        assert not errors, errors[:5]
        after_v2 = sorted((r for r in rows if r[3] == 2), key=lambda r: r[0])
        before = [r for r in rows if r[3] == 1]
        assert before and after_v2, "the hammer must see both versions"
        assert max(r[0] for r in before) < min(r[0] for r in after_v2) + 0.5  # a clean cut-over
        slowest = max(r[1] for r in rows)
        during = [r[1] for r in rows if swap_at <= r[0] <= available_at]
        numbers = (
            f"steady p50 {statistics.median(steady) * 1e3:.2f} ms; {len(rows)} hammer "
            f"requests, p50 {statistics.median(r[1] for r in rows) * 1e3:.2f} ms, max "
            f"{slowest * 1e3:.1f} ms; during the load of v2 ({available_at - swap_at:.2f} "
            f"s, warm-up {report['seconds'] * 1e3:.0f} ms, compiled {report['compiled']}): "
            f"{len(during)} requests, max {max(during, default=0) * 1e3:.1f} ms; first 5 "
            f"on v2: {[round(r[1] * 1e3, 2) for r in after_v2[:5]]} ms"
        )
        worst = sorted(rows, key=lambda r: -r[1])[:5]
        numbers += "; slowest (start - swap, ms): " + ", ".join(
            f"{(r[0] - swap_at) * 1e3:+.0f}: {r[1] * 1e3:.1f}" for r in worst
        )
        print(numbers)
        assert max(r[1] for r in after_v2[:FIRST_ON_V2]) < COLD_REQUEST_BOUND, numbers
        assert slowest < SLOW_REQUEST_BOUND, numbers
    finally:
        stop.set()
        for t in threads:
            t.join(T)
        if in_flight is not None:
            in_flight.release()
        client.close()
        app.stop()
    assert [s.state for s in app.manager.version_states("digits")] == [State.END, State.END]
