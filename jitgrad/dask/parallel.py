"""Data-parallel training on a Dask cluster: one replica of the model and its optimizer on
each worker, gradients averaged across workers, the same update applied everywhere.
"""

from __future__ import annotations

import hashlib
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

    Replicas live on the workers present at construction; ``state_dict()`` gives the
    trained state (``model.load_state_dict(dp.state_dict())``), ``close()`` drops them.
    """

    def __init__(self, loss_fn, model, optimizer, client, *, check_every: int = 10):
        from . import setup

        if check_every < 1:
            raise ValueError(f"check_every must be a positive number of steps, got {check_every}")
        self.client, self.check_every = client, check_every
        self.workers = sorted(client.nthreads())
        if not self.workers:
            raise RuntimeError("the Dask cluster has no workers to hold replicas")
        self.key = f"jitgrad-data-parallel-{uuid.uuid4().hex}"
        self.steps = 0
        setup(client)
        client.run(_install, self.key, model, optimizer, loss_fn, workers=self.workers)
        # The first worker's count of compiled kernels while it still compiles (None after).
        self._compiled = self._first_worker_compiled()

    def step(self, *batch) -> float:
        """One training step on ``batch`` (tensors of equal first dimension); the batch's
        mean loss before the update."""
        shards = _shards(batch, len(self.workers))
        gradients = self._on_workers(_gradients, [(self.key, *s) for s in shards], scatter=True)
        total = _tree_sum(self.client, gradients)
        rows = len(batch[0])
        applied = self._on_workers(_apply, [(self.key, total, rows)] * len(self.workers))
        losses = self.client.gather(applied)
        if self._compiled is not None:
            compiled = self._first_worker_compiled()
            self._compiled = None if compiled == self._compiled else compiled
        self.steps += 1
        if self.steps % self.check_every == 0:
            self.check()
        return losses[0]

    def _first_worker_compiled(self) -> int:
        first = self.workers[0]
        return self.client.run(_compiled, workers=[first])[first]

    def _on_workers(self, fn, args_per_worker, scatter: bool = False) -> list:
        """``fn(*args)`` as a task on each worker (the tensors after the key scattered to
        it first, with ``scatter``). Until a step in which the first worker compiles
        nothing (``jg.jit`` fuses a plan's kernels at its first replay, the second step),
        the first worker's task runs alone, then the kernels it compiled are shared, then
        the others' run and find them."""
        futures = []
        for w, args in zip(self.workers, args_per_worker):
            if scatter:
                shard = self.client.scatter(list(args[1:]), workers=[w], hash=False)
                args = (args[0], *shard)
            futures.append(
                self.client.submit(fn, *args, workers=[w], allow_other_workers=False, pure=False)
            )
            if self._compiled is not None and len(futures) == 1:
                wait(futures[0])
                share_kernels(self.client)
        return futures

    def check(self) -> None:
        """Raise ``RuntimeError`` unless every replica's parameters and buffers are the same
        bytes."""
        sums = self.client.run(_checksum, self.key, workers=self.workers)
        if len(set(sums.values())) > 1:
            shown = ", ".join(f"{w}: {s[:12]}" for w, s in sorted(sums.items()))
            raise RuntimeError(
                f"the model replicas differ after step {self.steps} (parameter checksums "
                f"{shown}): the workers no longer apply the same updates"
            )

    def state_dict(self) -> dict:
        """The trained model's state, from the first worker's replica."""
        first = self.workers[0]
        return self.client.run(_state_dict, self.key, workers=[first])[first]

    def close(self) -> None:
        """Drop the replicas from the workers."""
        self.client.run(_drop, self.key, workers=self.workers)


def _shards(batch, n: int) -> list[tuple]:
    if not batch or not all(isinstance(t, TensorBase) for t in batch):
        raise TypeError("step takes the batch as jitgrad tensors")
    rows = len(batch[0])
    if any(len(t) != rows for t in batch):
        raise ValueError(
            f"the batch's tensors differ in their first dimension: {[len(t) for t in batch]}"
        )
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
    def __init__(self, model, optimizer, loss_fn):
        self.model, self.optimizer = model, optimizer
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


def _gradients(key: str, *shard):
    """(the shard's gradient, its loss), both times its rows: a term of the batch's sum."""
    replica = _replicas[key]
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


def _apply(key: str, total, rows: int) -> float:
    replica = _replicas[key]
    flat, loss = total
    replica.apply(flat / rows)
    return loss / rows


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
