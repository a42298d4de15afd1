"""The servable of a jitgrad model: a thread-safe predictor over compiled plans.

``jg.jit`` replays a plan over buffers it allocated at trace time, so two threads replaying
one plan at once would write each other's activations. The predictor therefore owns a
small pool of *replicas*, each its own ``jg.jit`` of the same module (weights are shared
and only read), and a call checks one replica out for the replay and puts it back. One
replica is exactly a lock; more let that many requests replay at once (kernels are
compiled ``nogil`` and matmul goes to BLAS, which releases the GIL too). Per-thread plans
were the alternative, but the HTTP server makes a thread per connection, so they would
trace per connection and grow without bound.

Measured in-process (64 → 128 → 10 float32, 4 calling threads, 1 s each, the shared
2-core machine, one BLAS thread): batch 1: 20.4k calls/s with 1 replica, 21.1k with 2;
batch 64: 13.1k vs 14.3k; batch 1024: 2.39k vs 2.40k (its kernels already run on both
cores). A replay is ~30-100 µs, well under the ~1 ms of a loaded HTTP request, so the
lock is not the bottleneck; 2 replicas (the default) buy ~5-10% at mid-size batches for
one more set of plan buffers and one more (compile-free) trace per batch size at load.

Plans exist only for the warmed batch sizes (the manifest's ``warmup_batch_sizes``): a
request of another batch size runs the module eagerly under ``no_grad`` (same kernels,
more Python per op, no shared buffers, so no replica needed) instead of tracing a new plan
in a request thread: a client choosing batch sizes cannot grow the plan cache without
bound, and no request ever traces.

>>> import numpy as np, jitgrad as jg
>>> from jitgrad import nn
>>> from jitgrad.serving.signature import Signature
>>> net = nn.Sequential(nn.Linear(3, 2, generator=0)).eval()
>>> sig = Signature.from_manifest({"inputs": {"x": {"dtype": "float64", "shape": [-1, 3]}},
...                                "outputs": {"y": {"dtype": "float64", "shape": [-1, 2]}}})
>>> predict = Predictor(net, sig, warm_batch_sizes=[1])
>>> _ = predict.warm_up()
>>> predict({"x": [[1.0, 2.0, 3.0]]})["y"].shape
(1, 2)
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..autograd.grad_mode import no_grad
from ..creation import from_numpy
from ..jit import jit
from ..jit import stats as jit_stats
from ..tensor import TensorBase
from .signature import Signature

log = logging.getLogger("jitgrad.serving")


class Predictor:
    """``predictor({name: array-like}) -> {output name: np.ndarray}``, safe from many threads.

    ``replicas`` is how many requests of a warmed batch size may replay at once.
    """

    def __init__(
        self,
        module,
        signature: Signature,
        warm_batch_sizes: Sequence[int] = (1,),
        replicas: int = 2,
    ):
        if replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {replicas}")
        self.module = module
        self.signature = signature
        self.warm_batch_sizes = tuple(sorted({int(n) for n in warm_batch_sizes}))
        self._replicas = [
            # (a request must never wait for a compile: plans replay as they were warmed)
            jit(self._forward, max_traces=max(8, len(self.warm_batch_sizes)), compile_plans=False)
            for _ in range(replicas)
        ]
        self._idle: queue.SimpleQueue = queue.SimpleQueue()
        for replica in self._replicas:
            self._idle.put(replica)
        self._planned: frozenset[int] = frozenset()  # batch sizes every replica has a plan for
        self.warm_up_report: dict | None = None

    @property
    def warmed(self) -> bool:
        return self.warm_up_report is not None

    def _forward(self, *tensors):
        return self.module(*tensors)

    def warm_up(self) -> dict:
        """Trace every replica for every warm-up batch size and replay each plan once, then
        check the plans against eager execution.

        The replay matters: a trace runs eagerly, and the fused kernels of the plan are
        compiled (or loaded from the disk cache) on its first replay. After this no request
        of a warmed batch size compiles or traces anything.

        The check replays one plan per batch size on a *different* input than it was traced
        on and compares with the eager module. A plan that baked a trace-time value in
        (an operation the tracer records as a constant) would answer every request with
        the warm-up's result; if any differs, plans are disabled for this servable and
        every request runs eagerly (still correct, slower; the report says why).

        Returns seconds and the kernel counters it moved (``jg.jit.stats()`` deltas;
        process-wide, so only exact while nothing else compiles).
        """
        before, start = jit_stats(), time.perf_counter()
        rng = np.random.default_rng(0)
        mismatch = None
        if not self.warm_batch_sizes:  # no plans to warm, but the outputs are checked once
            with no_grad():
                arrays = [_sample(spec, 1, rng, 0) for spec in self.signature.inputs]
                self._check_outputs(self.module(*[from_numpy(a) for a in arrays]), 1)
        for batch in self.warm_batch_sizes:
            arrays = [_sample(spec, batch, rng, 0) for spec in self.signature.inputs]
            for replica in self._replicas:
                self._replay(replica, arrays)  # trace
                result = self._replay(replica, arrays)  # first replay: compiles the kernels
                self._check_outputs(result, batch)
            other = [_sample(spec, batch, rng, 1) for spec in self.signature.inputs]
            mismatch = mismatch or self._check_plan(self._replicas[0], other)
        after = jit_stats()
        self._planned = frozenset() if mismatch else frozenset(self.warm_batch_sizes)
        self.warm_up_report = {
            "seconds": time.perf_counter() - start,
            "batch_sizes": list(self.warm_batch_sizes),
            "replicas": len(self._replicas),
            "plans": f"disabled: {mismatch}" if mismatch else "enabled",
            **{k: after[k] - before[k] for k in ("generated", "compiled", "disk_hits")},
        }
        if mismatch:
            log.warning("serving without jg.jit plans: %s", mismatch)
        return self.warm_up_report

    def _check_outputs(self, result, batch: int) -> None:
        """Refuse a model whose outputs disagree with the signature (a hand-edited
        manifest): every request would fail, so the load fails instead."""
        for spec in self.signature.outputs:
            got = self._name_outputs(result)[spec.name].shape
            if got != (batch, *spec.sample_shape):
                raise ValueError(
                    f"output {spec.name!r}: the model gives shape {got} for a "
                    f"batch of {batch}, the signature declares "
                    f"{spec.describe()}"
                )

    def _check_plan(self, replica, arrays) -> str | None:
        try:
            with no_grad():
                result = self.module(*[from_numpy(a) for a in arrays])
        except Exception:  # an input the model refuses (integers 1 as indices of a table of
            return None  # one row): nothing to compare, and the model itself is not at fault
        expected = self._name_outputs(result)
        replayed = self._name_outputs(self._replay(replica, arrays))
        for name, want in expected.items():
            got = replayed[name]
            tolerance = 1e-6 if want.dtype.itemsize >= 8 else 1e-4
            if got.shape != want.shape or not np.allclose(
                got, want, rtol=tolerance, atol=tolerance, equal_nan=True
            ):
                return (
                    f"output {name!r} of the plan for batch {arrays[0].shape[0]} differs "
                    "from eager execution on an input it was not traced on"
                )
        return None

    @property
    def traces(self) -> int:
        """Traces taken by all replicas (constant after ``warm_up``: requests never trace)."""
        return sum(r.traces for r in self._replicas)

    def plan_bytes(self) -> int:
        """Bytes of memory the plans own (input buffers, intermediates, results); the
        weights they read, counted as the weights file's bytes, are not."""
        weights = {id(_root(t.untyped_storage().array)) for t in self.module.state_dict().values()}
        roots = {}
        for replica in self._replicas:
            for plan in replica.plans.values():
                for array in _arrays(plan):
                    array = _root(array)
                    if array.base is None and id(array) not in weights:  # (a mapped file's
                        roots[id(array)] = array.nbytes  # arrays own no memory either)
        return sum(roots.values())

    def __call__(self, inputs: Mapping) -> dict[str, np.ndarray]:
        arrays = self.signature.check(inputs)
        ordered = [arrays[name] for name in self.signature.input_names]
        batch = ordered[0].shape[0]
        if batch in self._planned:
            replica = self._idle.get()
            try:
                result = self._replay(replica, ordered)
            finally:
                self._idle.put(replica)
        else:
            with no_grad():
                result = self.module(*[from_numpy(a) for a in ordered])
        return self._name_outputs(result)

    def _replay(self, replica, arrays):
        with no_grad():
            return replica(*[from_numpy(a) for a in arrays])

    def _name_outputs(self, result) -> dict[str, np.ndarray]:
        names = self.signature.output_names
        if isinstance(result, TensorBase):
            values = [result]
        elif isinstance(result, Mapping):
            missing = [n for n in names if n not in result]
            if missing:
                raise ValueError(
                    f"the signature declares outputs {list(names)}, but the "
                    f"model returns {list(result)}"
                )
            values = [result[n] for n in names]
        else:
            values = list(result)
        if len(values) != len(names):
            raise ValueError(
                f"the signature declares {len(names)} outputs {list(names)}, but "
                f"the model returns {len(values)}"
            )
        return {n: np.asarray(v.numpy()) for n, v in zip(names, values, strict=True)}


def _sample(spec, batch: int, rng, which: int) -> np.ndarray:
    """A warm-up input: random floats, or integers ``which`` (0 and 1 are valid indices
    of almost any embedding)."""
    shape = (batch, *spec.sample_shape)
    dtype = np.dtype(spec.dtype)
    if dtype.kind in "iub":
        return np.full(shape, which, dtype)
    return np.ascontiguousarray(rng.random(shape), dtype=dtype)


def _root(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory, or the outermost numpy view of a buffer."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _arrays(plan):
    # A plan's buffers are the numpy arrays its recorded steps read and write: in the
    # arguments of each step, or held by the step itself (a kernel launch keeps its args).
    stack = [[b.numpy() for b, _ in plan.inputs]]
    for fn, args in plan.steps:
        stack += [args, getattr(fn, "args", ())]
    while stack:
        for item in stack.pop():
            if isinstance(item, np.ndarray):
                yield item
            elif isinstance(item, (list, tuple)):
                stack.append(item)
