"""The command-line server under load, over loopback: 200 concurrent clients against two
workers, versions swapped every second under load, a worker killed and replaced, and
memory over requests of changing batch sizes. Bounded in requests and seconds."""

import json
import os
import re
import signal
import threading
import time
import urllib.request

import numpy as np
import pytest
from conftest import save_version

import jitgrad as jg
from jitgrad import nn
from jitgrad.serving.loadgen import ServerProcess, rss_bytes, run_load

PREDICT = "/v1/models/tiny:predict"
POOL = 32 << 20  # --pool_bytes of the memory test
# The memory bound: resident memory after the requests is at most what it was after one
# request of the largest batch, plus the buffer pool's cap, plus 32 MiB of heap slack.
BOUND = POOL + (32 << 20)
ROW = json.dumps({"instances": [[0.5] * 8]}).encode()


def _metrics(url: str) -> str:
    with urllib.request.urlopen(url + "/monitoring/prometheus/metrics", timeout=30) as r:
        return r.read().decode()


def _answered(url: str) -> float:
    """The predict requests version 1 answered with 200, summed over the workers."""
    labels = r'api="predict",code="200",model="tiny",version="1"'
    found = re.search(r"jitgrad_serving_requests_total\{" + labels + r"\} (\S+)", _metrics(url))
    return float(found[1]) if found else 0.0


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    """One server of two workers, for the tests that load it and that kill a worker."""
    base = tmp_path_factory.mktemp("two-workers") / "tiny"
    save_version(base, 1)
    with ServerProcess("tiny", base, "--workers", "2", "--poll_seconds", "0") as server:
        yield server
        assert server.stop() == 0


def test_200_clients_against_two_workers_lose_no_request(two_workers):
    server = two_workers
    before = _answered(server.url)
    result = run_load(server.url, PREDICT, ROW, clients=200, requests=50, timeout=60)
    assert result.failures == [] and result.statuses == {200: 200 * 50}, (
        result.statuses,
        result.failures[:5],
    )
    assert _answered(server.url) - before == 200 * 50  # both workers' counts, summed
    print(
        f"{len(result.latencies) / result.seconds:.0f} requests/s, p99 "
        f"{result.percentile(99) * 1e3:.0f} ms"
    )


def test_a_version_swap_every_second_under_load_loses_no_request(base):
    save_version(base, 1, seed=1)
    args = ("--workers", "2", "--poll_seconds", "0.2", "--max_num_load_retries", "0")
    with ServerProcess("tiny", base, *args) as server:
        swaps = 4
        done = threading.Event()

        def swap():
            for version in range(2, 2 + swaps):
                time.sleep(1.0)
                save_version(base, version, seed=version)
            time.sleep(1.0)
            done.set()

        swapper = threading.Thread(target=swap)
        swapper.start()
        results = []
        while not done.is_set():
            results.append(
                run_load(
                    server.url, PREDICT, ROW, clients=20, requests=10**6, seconds=0.5, timeout=30
                )
            )
        swapper.join()
        text = _metrics(server.url)
        assert server.stop() == 0
    statuses = {}
    for r in results:
        assert r.failures == [], r.failures[:5]
        for code, n in r.statuses.items():
            statuses[code] = statuses.get(code, 0) + n
    assert set(statuses) == {200} and statuses[200] > 100, statuses
    served = {
        int(v) for v in re.findall(r'api="predict",code="200",model="tiny",version="(\d+)"', text)
    }
    assert served >= {1, 1 + swaps} and len(served) >= 3, served


def test_memory_stays_bounded_over_requests_of_changing_batch_sizes(tmp_path):
    base = tmp_path / "tiny"
    rng = jg.random.default_rng(0)
    wide = nn.Sequential(
        nn.Linear(8, 512, dtype=jg.float32, generator=rng),
        nn.ReLU(),
        nn.Linear(512, 3, dtype=jg.float32, generator=rng),
    ).eval()
    save_version(base, 1, model=wide)
    sizes = np.random.default_rng(0).integers(1, 5000, size=150)
    sizes[::10] = 5000
    bodies = {
        n: json.dumps({"inputs": np.full((n, 8), 0.25).tolist()}).encode()
        for n in {*sizes.tolist(), 1, 4999}
    }
    args = ("--poll_seconds", "0", "--pool_bytes", str(POOL), "--max_body_bytes", str(1 << 22))
    with ServerProcess("tiny", base, *args) as server:
        (pid,) = server.pids
        for n in (5000, 4999, 1):  # warm: the largest answers once, its buffers allocated
            assert run_load(server.url, PREDICT, bodies[n], clients=1, requests=1).ok == 1
        before = rss_bytes(pid)
        peak = before
        for n in sizes.tolist():
            r = run_load(server.url, PREDICT, bodies[n], clients=1, requests=1)
            assert r.ok == 1, (n, r.statuses, r.failures)
            peak = max(peak, rss_bytes(pid))
        after = rss_bytes(pid)
        assert server.stop() == 0
    print(f"RSS before {before >> 20} MiB, peak {peak >> 20} MiB, after {after >> 20} MiB")
    assert after - before < BOUND, (before, after)


def _workers(server: ServerProcess) -> list[int]:
    found = []
    for pid in server.pids[1:]:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"spawn_main" in f.read():
                found.append(pid)
    return found


def test_a_worker_that_dies_is_replaced_and_no_request_fails(two_workers):
    server = two_workers
    first = _workers(server)
    assert len(first) == 2
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + 120
    while len(set(_workers(server)) - {first[0]}) < 2:
        assert time.monotonic() < deadline, "the worker was not replaced"
        result = run_load(server.url, PREDICT, ROW, clients=4, requests=5)
        assert result.failures == [] and result.statuses == {200: 20}
        time.sleep(0.2)
    replaced = set(_workers(server))
    result = run_load(server.url, PREDICT, ROW, clients=20, requests=20)
    assert result.failures == [] and result.statuses == {200: 400}
    time.sleep(1.5)  # (the supervisor looks every 0.5 s)
    assert set(_workers(server)) == replaced  # the replacement stays up
    assert server.stderr().count("starting another") == 1
