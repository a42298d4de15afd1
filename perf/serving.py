"""Serving figures for the report: load and warm-up of the digits model (cold and warm
kernel cache), latency around a version swap, and throughput of single-row predicts from
a local load generator (loopback only, bounded in time)."""

from __future__ import annotations

import http.client
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def _train_and_save(base: Path, version: int, seed: int) -> None:
    from jitgrad.examples import digits
    from jitgrad.io import save_model

    result = digits.train(epochs=3, seed=seed)
    save_model(
        result.model,
        base / str(version),
        input_shape=(64,),
        input_dtype="float32",
        warmup_batch_sizes=(1, 64),
    )


def _predict(conn, path: str, row) -> float:
    body = json.dumps({"instances": [row]})
    start = time.perf_counter()
    conn.request("POST", path, body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"predict answered {response.status}")
    return time.perf_counter() - start


def _connect(url: str):
    host, port = url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def _load(app, path, row, threads: int, seconds: float) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client():
        conn, mine = _connect(app.server.url), []
        while time.perf_counter() < deadline:
            mine.append(_predict(conn, path, row))
        conn.close()
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=client) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return latencies


def _load_times(version_dir: Path, cache: Path) -> tuple[float, float]:
    """(load, warm-up) seconds of a ModelLoader with the kernel cache at ``cache`` and no
    kernel in this process's memory."""
    from jitgrad._config import config
    from jitgrad.jit.cache import stats
    from jitgrad.serving.loader import ModelLoader

    previous = config.cache_dir
    config.cache_dir = str(cache)
    stats.kernels.clear()
    try:
        loader = ModelLoader(version_dir)
        loader.load()
        times = (loader.load_seconds, loader.warmup_seconds)
        loader.unload()
    finally:
        config.cache_dir = previous
    return times


def serving_lines(threads: int = 4, seconds: float = 3.0) -> list[str]:
    from jitgrad.serving.app import ServingApp

    x = (np.arange(64) % 16 / 16.0).tolist()
    path = "/v1/models/digits:predict"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "digits"
        _train_and_save(base, 1, seed=0)
        cold = _load_times(base / "1", Path(tmp) / "kernels")
        warm = _load_times(base / "1", Path(tmp) / "kernels")
        app = ServingApp("digits", base, port=0, poll_seconds=None, freeze_heap=True).start()
        try:
            conn = _connect(app.server.url)
            steady = [_predict(conn, path, x) for _ in range(200)]
            under_load = _load(app, path, x, threads, seconds)
            _train_and_save(base, 2, seed=1)
            app.source.poll()
            app.manager.wait_until_available("digits", 2, timeout=120)
            after_swap = [_predict(conn, path, x) for _ in range(5)]
            conn.close()
        finally:
            app.stop()

    def ms(values, q):
        return np.percentile(values, q) * 1e3

    return [
        "## Serving the digits model (loopback, REST predict of one row)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| load / warm-up, cold kernel cache | {cold[0]:.2f} s / {cold[1]:.2f} s |",
        f"| load / warm-up, warm kernel cache | {warm[0]:.2f} s / {warm[1]:.2f} s |",
        f"| steady state, one client: p50 / p99 | {ms(steady, 50):.2f} / {ms(steady, 99):.2f} ms |",
        f"| {threads} clients for {seconds:g} s: requests/s | {len(under_load) / seconds:.0f} |",
        f"| {threads} clients: p50 / p99 | {ms(under_load, 50):.2f} / "
        f"{ms(under_load, 99):.2f} ms |",
        f"| first request after the swap to version 2 | {after_swap[0] * 1e3:.2f} ms |",
        f"| median of the first 5 after the swap | {statistics.median(after_swap) * 1e3:.2f} ms |",
        "",
    ]
