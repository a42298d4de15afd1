"""The Dask section of RESULTS.md: jitgrad on a local Dask cluster of worker processes of
one thread each (``jitgrad.dask``).

- The fused chain ``tanh(0.7x + 0.1) * sigmoid(x) + 0.5x²`` over a float32 Dask array of
  2^26 elements in 8 chunks on 2 workers: a ``jg.function`` by ``map_blocks`` over chunks
  that are tensors, against numpy's expression over numpy chunks. Inputs are persisted
  on the workers first; a round is computing the result and persisting it there (no
  transfer to the client), the median of the rounds.
- Data-parallel training of the digits MLP (``jitgrad.examples.digits``: 64 → 128 → ReLU
  → 10, float32, Adam) with ``jgd.DataParallel`` on 1 and 2 workers: training examples per
  second over steps of batch 1024, after warm-up steps.
- A worker joining that training (a ``dask worker`` process with an empty kernel cache
  directory of its own): its first steps with the kernel cache shared (``DataParallel``
  gives it the entries the others have) and with sharing turned off (it compiles).

``python -m perf.dask [--quick]`` prints the section alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np

from . import launch_env

CHAIN_ELEMENTS = 1 << 26
CHAIN_CHUNKS = 8
BATCH = 1024


def chain_numpy(x):
    return np.tanh(0.7 * x + 0.1) * (1 / (1 + np.exp(-x))) + 0.5 * x * x


def _chain_jitgrad():
    import jitgrad as jg

    @jg.function
    def chain(x):
        return jg.tanh(0.7 * x + 0.1) * jg.sigmoid(x) + 0.5 * x * x

    return chain


def digits_loss(model, x, y):
    from jitgrad import nn

    return nn.functional.cross_entropy(model(x), y)


@contextlib.contextmanager
def cluster(workers: int, cache_dir: str):
    """A client of a local cluster of ``workers`` processes of one thread, their kernel
    cache at ``cache_dir``."""
    from distributed import Client, LocalCluster

    env = {"JITGRAD_CACHE_DIR": cache_dir, "PYTHONPATH": launch_env()["PYTHONPATH"]}
    with (
        LocalCluster(
            n_workers=workers,
            processes=True,
            threads_per_worker=1,
            dashboard_address=":0",
            env=env,
        ) as local,
        Client(local) as client,
    ):
        yield client


def _rounds(call, rounds: int) -> list[float]:
    call()  # warm-up: compiles, and faults the workers' memory in
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def chain_times(client, elements: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per round of the chain on the workers: jitgrad's and numpy's chunks."""
    import dask.array as da
    from distributed import futures_of, wait

    import jitgrad as jg
    import jitgrad.dask as jgd

    jgd.setup(client)
    chunk = elements // CHAIN_CHUNKS
    x_np = da.random.default_rng(0).random(elements, chunks=chunk, dtype=np.float32)
    x_np = x_np.persist()
    x_jg = x_np.map_blocks(jg.from_numpy, meta=jg.empty(0, dtype=jg.float32)).persist()
    wait([x_np, x_jg])
    chain = _chain_jitgrad()
    sides = {
        "jitgrad": lambda name: x_jg.map_blocks(chain, meta=x_jg._meta, name=name),
        "numpy": lambda name: x_np.map_blocks(chain_numpy, name=name),
    }

    def persisted(side):
        def call():
            # A name of its own: a result of the same name still held would be reused.
            y = client.persist(sides[side](f"chain-{side}-{uuid.uuid4().hex}"))
            wait(futures_of(y))
            del y

        return call

    first = {side: sides[side](f"check-{side}")[:1000].compute() for side in sides}
    np.testing.assert_allclose(first["jitgrad"].numpy(), first["numpy"], rtol=1e-5, atol=1e-6)
    return {side: _rounds(persisted(side), rounds) for side in sides}


def _training(client, seed: int = 0):
    import jitgrad as jg
    import jitgrad.dask as jgd
    from jitgrad.examples import digits

    x, y, _, _ = digits.load_data(seed)
    model = digits.build_model(seed)
    dp = jgd.DataParallel(
        digits_loss, model, digits.make_optimizer("adam", model.parameters()), client
    )
    rng = np.random.default_rng(seed)

    def step():
        rows = rng.choice(len(x), BATCH, replace=False)
        return dp.step(jg.from_numpy(x[rows]), jg.from_numpy(y[rows]))

    return dp, step


def task_round_trip(client, rounds: int) -> list[float]:
    """Seconds from submitting an empty task to a worker to holding its result."""
    worker = sorted(client.nthreads())[0]
    return _rounds(lambda: client.submit(len, (), workers=[worker], pure=False).result(), rounds)


def examples_per_second(client, steps: int) -> float:
    dp, step = _training(client)
    for _ in range(3):  # trace, fuse and compile, replay
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = time.perf_counter() - t0
    dp.close()
    return steps * BATCH / seconds


@contextlib.contextmanager
def joining_worker(client, cache_dir: str):
    """A ``dask worker`` process of one thread, its kernel cache at ``cache_dir``, joined
    to ``client``'s cluster."""
    before = len(client.nthreads())
    env = {**launch_env(), "JITGRAD_CACHE_DIR": cache_dir}
    address = client.scheduler.address
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address]
    command += ["--nthreads", "1", "--no-nanny", "--no-dashboard"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        client.wait_for_workers(before + 1, timeout=60)
        while len(client.nthreads()) < before + 1:
            time.sleep(0.05)
        yield
    finally:
        process.kill()
        process.wait()
        while len(client.nthreads()) > before:
            time.sleep(0.05)


def joining_steps(client, base: str, steps: int = 3) -> dict[str, list[float]]:
    """Seconds of the first ``steps`` steps after a worker joins a training on one worker:
    with the kernel cache shared, and with sharing turned off; and a step before it
    joins."""
    from jitgrad.dask import parallel

    dp, step = _training(client)
    for _ in range(3):
        step()
    before = _rounds(step, 5)
    measured = {"one worker": before}
    shared = parallel.share_kernels
    for label, share in (("shared", shared), ("empty", lambda client: {})):
        parallel.share_kernels = share
        try:
            with joining_worker(client, tempfile.mkdtemp(dir=base)):
                times = []
                for _ in range(steps):
                    t0 = time.perf_counter()
                    step()
                    times.append(time.perf_counter() - t0)
                assert len(dp.workers) == 2
                measured[label] = times
        finally:
            parallel.share_kernels = shared
        step()  # back on one worker
    dp.close()
    return measured


def _ms(times) -> str:
    return f"{statistics.median(times) * 1e3:.1f} ms ({min(times) * 1e3:.1f})"


def dask_lines(quick: bool = False) -> list[str]:
    title = "## Dask: arrays of tensors and data-parallel training"
    try:
        import distributed  # noqa: F401
    except ImportError:
        return [title, "", "Not measured: needs `pip install 'jitgrad[dask]'`.", ""]
    elements = 1 << 20 if quick else CHAIN_ELEMENTS
    rounds, steps = (3, 10) if quick else (9, 60)
    with tempfile.TemporaryDirectory(prefix="jitgrad-perf-dask-") as base:
        with cluster(2, os.path.join(base, "two")) as client:
            chain = chain_times(client, elements, rounds)
            two = examples_per_second(client, steps)
            round_trip = task_round_trip(client, 30)
        with cluster(1, os.path.join(base, "one")) as client:
            one = examples_per_second(client, steps)
            joins = joining_steps(client, base)
    ratio = statistics.median(chain["numpy"]) / statistics.median(chain["jitgrad"])
    exponent = elements.bit_length() - 1
    return [
        title,
        "",
        "A local cluster of worker processes of one thread each (`jitgrad.dask`); medians, "
        "the fastest in brackets.",
        "",
        "| what | jitgrad | numpy | jitgrad's speed-up (medians) |",
        "|---|---:|---:|---:|",
        f"| `tanh(0.7x + 0.1) * sigmoid(x) + 0.5x²`, 2^{exponent} float32 in "
        f"{CHAIN_CHUNKS} chunks, 2 workers, {rounds} rounds | {_ms(chain['jitgrad'])} | "
        f"{_ms(chain['numpy'])} | {ratio:.2f}× |",
        "",
        "The chain is a `jg.function` run by `map_blocks` on chunks that are tensors, and "
        "numpy's expression on numpy chunks; each round computes the result and persists it "
        "on the workers.",
        "",
        f"Data-parallel training of the digits MLP (64 → 128 → ReLU → 10, Adam, batch "
        f"{BATCH}, `jgd.DataParallel`), {steps} steps after 3 warm-up steps:",
        "",
        "| workers | examples/s |",
        "|---|---:|",
        f"| 1 | {one:.0f} |",
        f"| 2 | {two:.0f} |",
        "",
        "A step waits for tasks that depend on each other (each worker's gradient; on two "
        "workers their sum; each worker's update), each a few milliseconds of compute on "
        "this model: an empty task's round trip from the client takes "
        f"{_ms(round_trip)}.",
        "",
        "A worker (a `dask worker` process, its kernel cache directory empty) joining that "
        "training on one worker: its first steps (the step it joins in receives a replica; "
        "`jg.jit` traces at the first and fuses at the second):",
        "",
        "| kernel cache of the new worker | step 1 | step 2 | step 3 |",
        "|---|---:|---:|---:|",
        *(
            f"| {label} | " + " | ".join(f"{t * 1e3:.0f} ms" for t in joins[key]) + " |"
            for key, label in (
                ("shared", "shared (`DataParallel` gives it the others' entries)"),
                ("empty", "empty (sharing off: it compiles)"),
            )
        ),
        "",
        f"One step on one worker before the joins: {_ms(joins['one worker'])}.",
        "",
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf.dask", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes and few steps")
    args = parser.parse_args(argv)
    print("\n".join(dask_lines(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
