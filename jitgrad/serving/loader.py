"""The Loader contract (TensorFlow Serving's ``Loader``) and the jitgrad model loader.

A loader stands for one version of one servable. The manager asks it what it would cost
(``estimate_resources``), tells it to ``load``, hands its ``servable()`` to requests, and
finally tells it to ``unload``. Each method's docstring states the invariant it keeps; the
manager relies on exactly these and nothing more. ``check_loader_contract`` exercises
them on any loader (tests run it on a fake and on ``ModelLoader``).

>>> import os, tempfile, jitgrad as jg
>>> from jitgrad import nn
>>> path = os.path.join(tempfile.mkdtemp(), "net", "1")
>>> _ = jg.io.save_model(nn.Sequential(nn.Linear(4, 2, generator=0)), path,
...                      input_shape=(4,), warmup_batch_sizes=[1])
>>> loader = ModelLoader(path)              # cheap: holds the path
>>> loader.estimate_resources().ram_bytes > 0
True
>>> loader.load()                           # maps the weights, builds, warms the JIT
>>> loader.servable()({"x": [[1.0, 2.0, 3.0, 4.0]]})["output"].shape
(1, 2)
>>> loader.unload(); loader.servable() is None
True
"""

from __future__ import annotations

import abc
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ..io.format import PREFIX, header_length, parse_header
from ..io.model_dir import MANIFEST, WEIGHTS, load_model, read_manifest
from .predictor import Predictor
from .signature import Signature


@dataclass(frozen=True, order=True)
class ServableId:
    """A servable stream's name and one version of it."""

    name: str
    version: int

    def __str__(self) -> str:
        return f"{{name: {self.name}, version: {self.version}}}"


@dataclass(frozen=True)
class Metadata:
    """What the manager tells a loader about itself when it loads it."""

    servable_id: ServableId


class ResourceAllocation(Mapping):
    """Amounts of resources by name (``ram_bytes`` at least); a missing resource is 0.

    Immutable; ``+`` and ``-`` combine allocations and ``a <= b`` means ``a`` fits in ``b``
    for every resource.

    >>> a = ResourceAllocation(ram_bytes=100)
    >>> a + ResourceAllocation(ram_bytes=20) <= ResourceAllocation(ram_bytes=128)
    True
    """

    RAM = "ram_bytes"

    def __init__(self, amounts: Mapping[str, int] | None = None, /, **kwargs: int):
        merged = {**(amounts or {}), **kwargs}
        for name, amount in merged.items():
            if type(amount) is not int or amount < 0:
                raise ValueError(
                    f"resource {name!r}: amount must be a non-negative int, got {amount!r}"
                )
        self._amounts = {k: v for k, v in merged.items() if v}

    def __getitem__(self, name: str) -> int:
        return self._amounts.get(name, 0)

    def __iter__(self) -> Iterator[str]:
        return iter(self._amounts)

    def __len__(self) -> int:
        return len(self._amounts)

    @property
    def ram_bytes(self) -> int:
        return self[self.RAM]

    def __add__(self, other: Mapping) -> ResourceAllocation:
        names = set(self) | set(other)
        return ResourceAllocation({n: self[n] + other.get(n, 0) for n in names})

    def __sub__(self, other: Mapping) -> ResourceAllocation:
        names = set(self) | set(other)
        short = [n for n in names if other.get(n, 0) > self[n]]
        if short:
            raise ValueError(f"cannot release more than is allocated: {short}")
        return ResourceAllocation({n: self[n] - other.get(n, 0) for n in names})

    def __le__(self, other: Mapping) -> bool:
        return all(self[n] <= other.get(n, 0) for n in self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and {k: v for k, v in other.items() if v} == self._amounts

    __hash__ = None

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in sorted(self._amounts.items()))
        return f"ResourceAllocation({inner})"


class Loader(abc.ABC):
    """One version of a servable: estimate, load, serve, unload, in that order, once.

    The caller (the manager) guarantees that ``load``/``load_with_metadata`` and ``unload``
    never run concurrently with each other and that ``unload`` follows only a load that
    returned. ``estimate_resources`` and ``servable`` may be called from any thread at
    any time. Construction is cheap (a path, a few numbers): all expensive work is in
    ``load``, so a source can make loaders for every version it sees.
    """

    @abc.abstractmethod
    def estimate_resources(self) -> ResourceAllocation:
        """An upper bound of the resources the servable will use once loaded.

        Invariants: computed without loading (the manager admits or refuses the load on
        it); never grows over the loader's life: every later call returns at most what an
        earlier one did (it may shrink after ``load`` to the measured figure). Raises if the
        version cannot be sized (the manager records that as the version's load error).
        """

    @abc.abstractmethod
    def load(self) -> None:
        """Acquire everything the servable needs and make ``servable()`` return it.

        Invariants: called at most once; when it returns, the servable is complete and
        safe to call from many threads; when it raises, it has released what it took and
        the loader is finished (``unload`` will not be called).
        """

    def load_with_metadata(self, metadata: Metadata) -> None:
        """``load``, told which servable id it is loading (for logs and metrics).

        Invariant: the same as ``load``'s; the default ignores the metadata.
        """
        self.load()

    @abc.abstractmethod
    def unload(self) -> None:
        """Release everything ``load`` acquired.

        Invariants: one-way: after it, ``servable()`` is None and ``load`` is never
        called again (jitgrad's loaders raise RuntimeError if it is). The caller
        guarantees no request still holds the servable.
        """

    @abc.abstractmethod
    def servable(self):
        """The loaded servable between a successful ``load`` and ``unload``; ``None``
        before and after. The object returned is safe to call from many threads."""


def check_loader_contract(loader: Loader, metadata: Metadata | None = None) -> None:
    """Drive ``loader`` through its whole life and assert every invariant of ``Loader``.

    The loader must be fresh and loadable; it ends unloaded. Raises AssertionError naming
    the broken invariant.
    """
    assert loader.servable() is None, "servable() must be None before load"
    first = loader.estimate_resources()
    assert isinstance(first, ResourceAllocation), "the estimate must be a ResourceAllocation"
    assert loader.estimate_resources() <= first, "the estimate grew before load"
    if metadata is None:
        loader.load()
    else:
        loader.load_with_metadata(metadata)
    assert loader.servable() is not None, "servable() must not be None after a successful load"
    assert loader.estimate_resources() <= first, "the estimate grew during load"
    loader.unload()
    assert loader.servable() is None, "servable() must be None after unload"
    assert loader.estimate_resources() <= first, "the estimate grew after unload"
    try:
        loader.load()
    except RuntimeError:
        pass
    else:
        raise AssertionError("load after unload must raise RuntimeError (unload is one-way)")
    assert loader.servable() is None, "a refused second load must leave servable() None"


class ModelLoader(Loader):
    """Loads a jitgrad model directory (``jg.io.save_model``) as a ``Predictor``.

    ``estimate_resources``: the bytes of the directory's files plus the plans' buffers:
    per replica and warm-up batch size ``b``, ``b`` × 8 bytes × (input and output elements
    of one sample plus ``buffer_factor`` × the leading size of every tensor in the weights,
    a bound on the widths of the activations a layer makes). Read from the manifest and the
    weights' JSON header only. After ``load`` it shrinks to the files plus the buffers the
    plans actually own (``Predictor.plan_bytes``) if that is smaller.

    ``load`` reads the weights into memory (not mapped: a file changed or truncated in
    place later would change a served version's answers or kill the server with SIGBUS),
    rebuilds the module in eval mode and warms it: every warm-up batch size of the
    manifest is traced and replayed on every replica, so its kernels are compiled or loaded
    from the disk cache before the version is published; ``load_seconds`` and
    ``warmup_seconds`` record the two phases.
    """

    def __init__(
        self, path, *, replicas: int = 2, buffer_factor: int = 4, verify_checksums: bool = False
    ):
        self.path = os.fspath(path)
        self.replicas = replicas
        self.buffer_factor = buffer_factor
        self.verify_checksums = verify_checksums
        self.servable_id: ServableId | None = None
        self.load_seconds: float | None = None
        self.warmup_seconds: float | None = None
        self.warmup_report: dict | None = None
        self.manifest: dict | None = None
        self._estimate: ResourceAllocation | None = None
        self._predictor: Predictor | None = None
        self._state = "new"  # new -> loading -> loaded -> finished
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ModelLoader({self.path!r})"

    def estimate_resources(self) -> ResourceAllocation:
        with self._lock:
            if self._estimate is None:
                self._estimate = self._estimate_from_files()
            return self._estimate

    def _estimate_from_files(self) -> ResourceAllocation:
        manifest = read_manifest(self.path)
        file_bytes = _file_bytes(self.path, manifest)
        signature = Signature.from_manifest(manifest["signature"])
        tensors = signature.inputs + signature.outputs
        per_sample = sum(int(np.prod(s.sample_shape)) for s in tensors)
        widths = sum(shape[0] for shape in _weight_shapes(self.path) if shape)
        per_sample += self.buffer_factor * widths
        batches = sum(int(b) for b in manifest.get("warmup_batch_sizes", [1]))
        return ResourceAllocation(ram_bytes=file_bytes + self.replicas * batches * 8 * per_sample)

    def load_with_metadata(self, metadata: Metadata) -> None:
        self.servable_id = metadata.servable_id
        self.load()

    def load(self) -> None:
        with self._lock:
            if self._state != "new":
                raise RuntimeError(
                    f"{self!r}: load() may be called once, on a fresh loader "
                    f"(this one is {self._state})"
                )
            self._state = "loading"
        try:
            estimate = self.estimate_resources()
            start = time.perf_counter()
            module, manifest = load_model(
                self.path, mmap=False, verify_checksums=self.verify_checksums
            )
            signature = Signature.from_manifest(manifest["signature"])
            predictor = Predictor(
                module, signature, manifest.get("warmup_batch_sizes", [1]), replicas=self.replicas
            )
            loaded = time.perf_counter()
            self.warmup_report = predictor.warm_up()
            self.load_seconds = loaded - start
            self.warmup_seconds = time.perf_counter() - loaded
            measured = _file_bytes(self.path, manifest) + predictor.plan_bytes()
        except BaseException:
            with self._lock:
                self._state = "finished"
            raise
        with self._lock:
            if measured < estimate.ram_bytes:  # the estimate may shrink, never grow
                self._estimate = ResourceAllocation(estimate, ram_bytes=measured)
            self.manifest = manifest
            self._predictor = predictor
            self._state = "loaded"

    def unload(self) -> None:
        with self._lock:
            self._predictor = None  # the module, its plans and the weights' mapping go with it
            self._state = "finished"

    def servable(self) -> Predictor | None:
        return self._predictor


def _file_bytes(path: str, manifest: dict) -> int:
    listed = sum(int(e["bytes"]) for e in manifest["files"].values())
    return listed + os.path.getsize(os.path.join(path, MANIFEST))


def _weight_shapes(path: str) -> list[list[int]]:
    """The shapes of the tensors in the weights file, from its JSON header alone."""
    weights = os.path.join(path, WEIGHTS)
    size = os.path.getsize(weights)
    with open(weights, "rb") as f:
        length = header_length(weights, f.read(PREFIX.size), size)
        header = parse_header(weights, f.read(length), size)
    shapes, stack = [], [header["object"]]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "tensor" in node and isinstance(node["tensor"], dict):
                shapes.append([int(n) for n in node["tensor"].get("shape", [])])
            else:
                stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return shapes


__all__ = [
    "Loader",
    "ModelLoader",
    "Metadata",
    "ResourceAllocation",
    "ServableId",
    "check_loader_contract",
]
