"""Data-parallel training on a Dask cluster: one replica of the model and its optimizer on
each worker, gradients averaged across workers, the same update applied everywhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import threading
import uuid

from distributed import wait

from .. import creation
from ..autograd.grad_mode import no_grad
from ..dtypes import result_type
from ..jit import cache, jit
from ..ops import movement
from ..tensor import TensorBase
from .kernels import share_kernels

# Worker-resident replicas of this process, by DataParallel key.
_replicas: dict = {}


class DataParallel:
    """Train ``model`` with ``optimizer`` on the workers of ``client``'s cluster.

    ``loss_fn(model, *batch)`` returns the mean loss of a batch. Each ``step(*batch)``
    cuts the batch along its first dimension into one shard per worker; every worker runs
    ``loss_fn`` and ``backward()`` on its shard, traced once by ``jg.jit``; the gradients,
    weighted by shard size, are summed by a tree of tasks through the scheduler into the
    gradient of the whole batch's mean loss; every worker applies that same gradient with
    its optimizer (also under ``jg.jit``). So K steps equal K steps of ``loss_fn`` on the
    whole batches in one process, up to the order of floating-point sums. Every
    ``check_every`` steps the replicas' parameters are compared by checksum, and a
    mismatch raises ``RuntimeError``. A parameter the loss does not reach is updated with a
    zero gradient (its optimizer sees a gradient on every step).

    Replicas follow the cluster's workers: each step starts on the workers present, and a
    worker lost before or during a step (its process killed, its nanny restarting it) is
    dropped, its step's tasks cancelled, and the step run again on the others. A worker
    with no replica, or one behind the others, receives a copy of the most advanced
    surviving replica (model and optimizer state, as of the last step all replicas
    applied), so the training continues exactly where it was. ``state_dict()`` gives the
    trained state (``model.load_state_dict(dp.state_dict())``), ``close()`` drops the
    replicas.
    """

    def __init__(self, loss_fn, model, optimizer, client, *, check_every: int = 10):
        from . import setup

        if check_every < 1:
            raise ValueError(f"check_every must be a positive number of steps, got {check_every}")
        self.client, self.check_every, self.loss_fn = client, check_every, loss_fn
        self.workers = _live_workers(client)
        self.key = f"jitgrad-data-parallel-{uuid.uuid4().hex}"
        self.steps, self.closed = 0, False
        setup(client)
        client.run(_install, self.key, model, optimizer, loss_fn, workers=self.workers)
        # The first worker's count of compiled kernels while it still compiles (None after).
        self._compiled = self._first_worker_compiled()

    def step(self, *batch) -> float:
        """One training step on ``batch`` (tensors of equal first dimension); the batch's
        mean loss before the update."""
        _check_batch(batch)
        retry = False
        while True:
            steps, loss = self._follow_workers(compare=retry)
            if steps > self.steps:  # applied by a replica before another was lost
                break
            try:
                loss = self._step_on_workers(batch)
                break
            except _ReplicaLost:
                retry = True
        self.steps += 1
        if self.steps % self.check_every == 0:
            self.check()
        return loss

    def _step_on_workers(self, batch) -> float:
        futures = []
        try:
            shards = _shards(batch, len(self.workers))
            gradients = self._on_workers(
                _gradients, [(self.key, self.steps, *s) for s in shards], futures, scatter=True
            )
            total = _tree_sum(self.client, gradients)
            futures.append(total)
            step = self.steps + 1
            applied = self._on_workers(
                _apply, [(self.key, total, len(batch[0]), step)] * len(self.workers), futures
            )
            losses = self._gather(applied)
            if self._compiled is not None:
                compiled = self._first_worker_compiled()
                self._compiled = None if compiled == self._compiled else compiled
        except _ReplicaLost:
            self.client.cancel(futures)
            raise
        return losses[0]

    def _follow_workers(self, compare: bool = False) -> tuple[int, float | None]:
        """Match the replicas to the cluster's workers: drop the lost, and copy the most
        advanced replica (by steps applied) to every worker without one or not at its
        step (looked for only when the workers changed, or with ``compare``). Its (steps,
        the loss of its last step)."""
        if self.closed:
            raise RuntimeError("this DataParallel is closed: its replicas were dropped")
        live = _live_workers(self.client)
        if live == self.workers and not compare:
            return self.steps, None
        progress = self.client.run(_progress, self.key, workers=live, on_error="return")
        held = {w: p for w, p in progress.items() if isinstance(p, tuple)}
        if not held:
            raise RuntimeError(
                f"every replica of the model was lost with its worker after step {self.steps}"
            )
        source = max(held, key=lambda w: held[w][0])
        steps, loss = held[source]
        behind = [w for w in live if held.get(w, (None,))[0] != steps]
        if behind:
            share_kernels(self.client)
            snapshot = self.client.run(_snapshot, self.key, workers=[source])[source]
            self.client.run(_install_snapshot, self.key, snapshot, self.loss_fn, workers=behind)
        self.workers = live
        return steps, loss

    def _lost(self) -> bool:
        return not set(self.workers) <= set(self.client.nthreads())

    @contextlib.contextmanager
    def _noticing_lost_workers(self):
        """Turn an error from the cluster into ``_ReplicaLost`` when a replica's worker is
        gone."""
        try:
            yield
        except _ReplicaLost:
            raise
        except Exception as exc:
            if self._lost():
                raise _ReplicaLost from exc
            raise

    def _gather(self, futures: list) -> list:
        """The futures' results; ``_ReplicaLost`` as soon as a replica's worker is gone
        (its tasks, pinned to it, would wait for it forever)."""
        with self._noticing_lost_workers():
            while True:
                try:
                    wait(futures, timeout=_POLL_SECONDS)
                except TimeoutError:
                    if self._lost():
                        raise _ReplicaLost from None
                    continue
                return self.client.gather(futures)

    def _first_worker_compiled(self) -> int:
        first = self.workers[0]
        with self._noticing_lost_workers():
            return self.client.run(_compiled, workers=[first])[first]

    def _on_workers(self, fn, args_per_worker, submitted: list, scatter: bool = False) -> list:
        """``fn(*args)`` as a task on each worker (the tensors after the key and the step
        scattered to it first, with ``scatter``), each future also appended to
        ``submitted``. Until a step in which the first worker compiles nothing (``jg.jit``
        fuses a plan's kernels at its first replay, the second step), the first worker's
        task runs alone, then the kernels it compiled are shared, then the others' run and
        find them."""
        futures = []
        for w, args in zip(self.workers, args_per_worker):
            if scatter:
                try:
                    shard = self.client.scatter(list(args[1:]), workers=[w], hash=False)
                except Exception as exc:
                    if self._lost():
                        raise _ReplicaLost from exc
                    raise
                submitted.extend(shard)
                args = (args[0], *shard)
            futures.append(
                self.client.submit(fn, *args, workers=[w], allow_other_workers=False, pure=False)
            )
            submitted.append(futures[-1])
            if self._compiled is not None and len(futures) == 1:
                self._gather(futures)
                share_kernels(self.client)
        return futures

    def check(self) -> None:
        """Raise ``RuntimeError`` unless every replica's parameters and buffers are the same
        bytes (replicas first placed on workers that joined, and dropped with workers lost)."""
        self._follow_workers()
        sums = self.client.run(_checksum, self.key, workers=self.workers)
        if len(set(sums.values())) > 1:
            shown = ", ".join(f"{w}: {s[:12]}" for w, s in sorted(sums.items()))
            raise RuntimeError(
                f"the model replicas differ after step {self.steps} (parameter checksums "
                f"{shown}): the workers no longer apply the same updates"
            )

    def state_dict(self) -> dict:
        """The trained model's state, from the first worker's replica."""
        self._follow_workers()
        first = self.workers[0]
        return self.client.run(_state_dict, self.key, workers=[first])[first]

    def close(self) -> None:
        """Drop the replicas from the workers."""
        self.closed = True
        self.client.run(_drop, self.key, workers=_live_workers(self.client), on_error="ignore")


# How often a step waiting for its tasks looks for lost workers, in seconds.
_POLL_SECONDS = 0.2


class _ReplicaLost(Exception):
    """A worker holding a replica left the cluster during a step, or a replica is not at
    the step the others are (a task of an abandoned step ran on it)."""


def _live_workers(client) -> list[str]:
    workers = sorted(client.nthreads())
    if not workers:
        raise RuntimeError("the Dask cluster has no workers to hold replicas")
    return workers


def _check_batch(batch) -> None:
    if not batch or not all(isinstance(t, TensorBase) for t in batch):
        raise TypeError("step takes the batch as jitgrad tensors")
    rows = len(batch[0])
    if any(len(t) != rows for t in batch):
        raise ValueError(
            f"the batch's tensors differ in their first dimension: {[len(t) for t in batch]}"
        )


def _shards(batch, n: int) -> list[tuple]:
    rows = len(batch[0])
    if rows < n:
        raise ValueError(f"a batch of {rows} rows cannot be shared among {n} workers")
    bounds = [rows * i // n for i in range(n + 1)]
    return [tuple(t[lo:hi] for t in batch) for lo, hi in zip(bounds, bounds[1:])]


def _tree_sum(client, futures: list):
    """The sum of the futures' results, pairwise in tasks (a tree of depth log2 of the
    workers): the partial sums move between workers, never through the client."""
    while len(futures) > 1:
        pairs = zip(futures[::2], futures[1::2])
        summed = [client.submit(_add, a, b, pure=False) for a, b in pairs]
        futures = summed + futures[len(futures) // 2 * 2 :]
    return futures[0]


# -- what runs on the workers ----------------------------------------------------------


class _Replica:
    def __init__(self, model, optimizer, loss_fn, steps: int = 0, loss: float | None = None):
        self.model, self.optimizer = model, optimizer
        # Steps applied and the last one's loss; the lock keeps a copy from reading a step
        # half applied.
        self.steps, self.loss, self.lock = steps, loss, threading.Lock()
        self.parameters = [p for g in optimizer.param_groups for p in g["params"]]
        self.dtype = result_type(*self.parameters)

        @jit
        def gradients(*batch):
            optimizer.zero_grad()
            loss = loss_fn(model, *batch)
            loss.backward()
            return loss

        @jit
        def apply(flat):
            start = 0
            for p in self.parameters:
                p.grad = flat[start : start + p.numel()].reshape(p.shape).astype(p.dtype)
                start += p.numel()
            optimizer.step()

        self.gradients, self.apply = gradients, apply


def _install(key: str, model, optimizer, loss_fn) -> None:
    _replicas[key] = _Replica(model, optimizer, loss_fn)


def _progress(key: str) -> tuple[int, float | None] | None:
    """(steps applied, the last one's loss) of this worker's replica; None without one."""
    replica = _replicas.get(key)
    if replica is None:
        return None
    with replica.lock:
        return replica.steps, replica.loss


def _snapshot(key: str) -> bytes:
    """The replica's model, optimizer, steps and last loss, pickled together (the
    optimizer's parameters stay the model's)."""
    replica = _replicas[key]
    with replica.lock:
        state = (replica.model, replica.optimizer, replica.steps, replica.loss)
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)


def _install_snapshot(key: str, snapshot: bytes, loss_fn) -> None:
    model, optimizer, steps, loss = pickle.loads(snapshot)
    _replicas[key] = _Replica(model, optimizer, loss_fn, steps, loss)


def _gradients(key: str, steps: int, *shard):
    """(the shard's gradient, its loss), both times its rows: a term of the batch's sum,
    from a replica that has applied ``steps`` steps."""
    replica = _replicas[key]
    with replica.lock:
        if replica.steps != steps:
            raise _ReplicaLost(f"the replica has applied {replica.steps} steps, not {steps}")
        loss = replica.gradients(*shard)
    rows = len(shard[0])
    with no_grad():
        flat = movement.concatenate(
            [
                (p.grad if p.grad is not None else creation.zeros_like(p)).reshape(-1)
                for p in replica.parameters
            ]
        )
        # The tensor first: distributed sends a tuple item by item (the tensor through
        # jitgrad's serializer) only when its first item has a serializer of its own.
        return (flat.astype(replica.dtype) * rows, float(loss) * rows)


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def _apply(key: str, total, rows: int, step: int) -> float:
    """Apply step ``step``'s gradient once (a replica already past it keeps its state)."""
    replica = _replicas[key]
    flat, loss = total
    with replica.lock:
        if replica.steps == step - 1:
            replica.apply(flat / rows)
            replica.steps, replica.loss = step, loss / rows
        return replica.loss


def _compiled() -> int:
    return cache.stats.compiled


def _checksum(key: str) -> str:
    digest = hashlib.sha256()
    for name, t in _replicas[key].model.state_dict().items():
        digest.update(name.encode())
        digest.update(t.contiguous().numpy().tobytes())
    return digest.hexdigest()


def _state_dict(key: str) -> dict:
    return {k: v.detach().clone() for k, v in _replicas[key].model.state_dict().items()}


def _drop(key: str) -> None:
    _replicas.pop(key, None)
