"""Serving figures for the report: load and warm-up of the digits model (cold and warm
kernel cache), and the REST front end under load: requests/s and p50/p99 latency of
``:predict`` at batch 1 and 64 from 200 concurrent keep-alive clients, against
``python -m jitgrad.serving --workers 1`` and ``--workers 2`` (loopback only, bounded in
time).

``python -m perf.serving [--seconds S] [--clients N] [--workers 1 2] [--batches 1 64]``
prints the table alone (``--seconds 2`` is a smoke run)."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

import numpy as np

NAME = "digits"


def _train_and_save(base: Path, version: int, seed: int, epochs: int = 3) -> None:
    from jitgrad.examples import digits
    from jitgrad.io import save_model

    result = digits.train(epochs=epochs, seed=seed)
    save_model(
        result.model,
        base / str(version),
        input_shape=(64,),
        input_dtype="float32",
        warmup_batch_sizes=(1, 64),
    )


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


def front_end_rows(
    base: Path, workers_list, batches, clients: int, seconds: float
) -> list[tuple[str, int, int, object]]:
    """(workers label, batch, clients, LoadResult) for each server and batch size."""
    from jitgrad.serving.loadgen import ServerProcess, run_load

    rows = []
    rng = np.random.default_rng(0)
    for workers in workers_list:
        args = ("--poll_seconds", "0", "--log_level", "WARNING")
        args += () if workers is None else ("--workers", str(workers))
        server = ServerProcess(NAME, base, *args)
        try:
            for batch in batches:
                rows_of = rng.random((batch, 64)).round(4).tolist()
                body = json.dumps({"instances": rows_of}).encode()
                path = f"/v1/models/{NAME}:predict"
                run_load(server.url, path, body, clients=clients, requests=2)  # connect, warm
                result = run_load(
                    server.url, path, body, clients=clients, requests=10**9, seconds=seconds
                )
                rows.append(("-" if workers is None else str(workers), batch, clients, result))
        finally:
            server.stop()
    return rows


def table(rows) -> list[str]:
    lines = [
        "| workers | batch | clients | requests/s | p50 | p99 | failed |",
        "|---|---|---|---|---|---|---|",
    ]
    for workers, batch, clients, r in rows:
        lines.append(
            f"| {workers} | {batch} | {clients} | {len(r.latencies) / r.seconds:.0f} | "
            f"{r.percentile(50) * 1e3:.1f} ms | {r.percentile(99) * 1e3:.1f} ms | {r.failed} |"
        )
    return lines


def serving_lines(clients: int = 200, seconds: float = 10.0) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / NAME
        _train_and_save(base, 1, seed=0)
        cold = _load_times(base / "1", Path(tmp) / "kernels")
        warm = _load_times(base / "1", Path(tmp) / "kernels")
        rows = front_end_rows(base, (1, 2), (1, 64), clients, seconds)
    return [
        "## Serving the digits model (loopback, REST :predict)",
        "",
        f"Load: {cold[0]:.2f} s (warm-up {cold[1]:.2f} s) with a cold kernel cache, "
        f"{warm[0]:.2f} s (warm-up {warm[1]:.2f} s) with a warm one. Front end: {clients} "
        f"keep-alive clients for {seconds:g} s per row.",
        "",
        *table(rows),
        "",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.serving", description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="per row (default 10)")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument(
        "--workers",
        nargs="+",
        default=["1", "2"],
        help="worker counts to measure; 'none' runs the server without --workers",
    )
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 64])
    parser.add_argument("--epochs", type=int, default=3, help="training epochs of the model")
    args = parser.parse_args(argv)
    workers = [None if w == "none" else int(w) for w in args.workers]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / NAME
        _train_and_save(base, 1, seed=0, epochs=args.epochs)
        rows = front_end_rows(base, workers, args.batches, args.clients, args.seconds)
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
