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
import hashlib
import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ..io.format import PREFIX, header_length, parse_header
from ..io.model_dir import (
    ARCHITECTURE,
    MANIFEST,
    WEIGHTS,
    ModelDirectoryError,
    load_model,
    read_manifest,
)
from .predictor import Predictor
from .signature import Signature

log = logging.getLogger("jitgrad.serving")


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


class VersionLoadError(Exception):
    """A version that cannot be served; the message is for clients: it names the version
    and the reason, never a server path or a file's contents (the server log has the
    full detail). ``error_code`` is the canonical status (``INVALID_ARGUMENT``,
    ``NOT_FOUND``, ``DATA_LOSS`` for a checksum that does not match)."""

    def __init__(self, message: str, error_code: str = "INVALID_ARGUMENT"):
        super().__init__(message)
        self.error_code = error_code


class ModelLoader(Loader):
    """Loads a jitgrad model directory (``jg.io.save_model``) as a ``Predictor``.

    ``estimate_resources`` reads the manifest, the architecture and the weights' JSON
    header only, and builds nothing. With ``verify_checksums`` (the default) it first
    hashes every file against the manifest's sha256, so no byte of a damaged or altered
    file is used. It refuses an architecture that declares more parameters than the
    weights hold (a 4,000,000-wide Linear over a small weights file would allocate
    gigabytes before the weights were compared with it). The estimate is the larger of
    the files' bytes and the declared parameters' bytes, plus the plans' buffers: per
    replica and warm-up batch size ``b``, ``b`` × 8 bytes × (input and output elements of
    one sample plus ``buffer_factor`` × the leading size of every tensor in the weights,
    a bound on the widths of the activations a layer makes). After ``load`` it shrinks to
    the files plus the buffers the plans actually own (``Predictor.plan_bytes``) if that
    is smaller.

    ``load`` reads the weights into memory (not mapped: a file changed or truncated in
    place later would change a served version's answers or kill the server with SIGBUS),
    rebuilds the module in eval mode and warms it: every warm-up batch size of the
    manifest is traced and replayed on every replica, so its kernels are compiled or loaded
    from the disk cache before the version is published; ``load_seconds`` and
    ``warmup_seconds`` record the two phases.

    Every failure is a ``VersionLoadError`` whose message is safe to show clients.
    """

    def __init__(
        self, path, *, replicas: int = 2, buffer_factor: int = 4, verify_checksums: bool = True
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

    @property
    def version_name(self) -> str:
        return f"version {os.path.basename(os.path.normpath(self.path))}"

    def estimate_resources(self) -> ResourceAllocation:
        with self._lock:
            if self._estimate is None:
                self._estimate = self._refusing(self._estimate_from_files)
            return self._estimate

    def _refusing(self, step):
        """``step()``, its failure turned into a VersionLoadError fit for clients."""
        try:
            return step()
        except VersionLoadError:
            raise
        except Exception as e:
            log.warning("%s at %s cannot be served: %s", self.version_name, self.path, e)
            raise VersionLoadError(
                f"{self.version_name}: {public_message(e, self.path)}", _loader_code(e)
            ) from e

    def _estimate_from_files(self) -> ResourceAllocation:
        manifest = read_manifest(self.path)
        if self.verify_checksums:
            _verify_checksums(self.path, manifest, self.version_name)
        file_bytes = _file_bytes(self.path, manifest)
        signature = Signature.from_manifest(manifest["signature"])
        tensors = signature.inputs + signature.outputs
        shapes = _weight_shapes(self.path)
        held = sum(math.prod(shape) for shape in shapes)
        declared, declared_bytes = _declared_parameters(self.path)
        if declared > held:
            raise ModelDirectoryError(
                f"the architecture declares {declared} parameters but the weights hold {held}"
            )
        per_sample = sum(int(np.prod(s.sample_shape)) for s in tensors)
        widths = sum(shape[0] for shape in shapes if shape)
        per_sample += self.buffer_factor * widths
        batches = sum(int(b) for b in manifest.get("warmup_batch_sizes", [1]))
        weights = max(file_bytes, declared_bytes)
        return ResourceAllocation(ram_bytes=weights + self.replicas * batches * 8 * per_sample)

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
            estimate = self.estimate_resources()  # checksums verified, architecture sized
            predictor = self._refusing(self._build)
        except BaseException:
            with self._lock:
                self._state = "finished"
            raise
        measured = _file_bytes(self.path, self.manifest) + predictor.plan_bytes()
        with self._lock:
            if measured < estimate.ram_bytes:  # the estimate may shrink, never grow
                self._estimate = ResourceAllocation(estimate, ram_bytes=measured)
            self._predictor = predictor
            self._state = "loaded"

    def _build(self) -> Predictor:
        start = time.perf_counter()
        module, manifest = load_model(self.path, mmap=False)
        signature = Signature.from_manifest(manifest["signature"])
        predictor = Predictor(
            module, signature, manifest.get("warmup_batch_sizes", [1]), replicas=self.replicas
        )
        loaded = time.perf_counter()
        self.warmup_report = predictor.warm_up()
        self.load_seconds = loaded - start
        self.warmup_seconds = time.perf_counter() - loaded
        self.manifest = manifest
        return predictor

    def unload(self) -> None:
        with self._lock:
            self._predictor = None  # the module, its plans and the weights' mapping go with it
            self._state = "finished"

    def servable(self) -> Predictor | None:
        return self._predictor


_QUOTED_PATH = re.compile(r"""(['"])/[^'"]*\1""")
_BARE_PATH = re.compile(r"""(?<![\w.])/[^\s'",;:()]+""")
_BYTES = re.compile(r"""\bb(['"]).*?\1""")


def public_message(error: BaseException, path: str | None = None, limit: int = 300) -> str:
    """``error``'s message without server paths (the version directory's and any other)
    or quoted bytes, cut to ``limit`` characters: what a client may read."""
    text = str(error) or type(error).__name__
    if isinstance(error, OSError) and error.strerror:  # its file name is a path
        text = error.strerror
    if path is not None:
        for spelling in (repr(path), path):
            text = text.replace(spelling, "the version directory")
    text = _QUOTED_PATH.sub("<path>", text)
    text = _BARE_PATH.sub("<path>", text)
    text = _BYTES.sub("<bytes>", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _loader_code(error: BaseException) -> str:
    if isinstance(error, FileNotFoundError):
        return "NOT_FOUND"
    if isinstance(error, ValueError):
        return "INVALID_ARGUMENT"
    return "UNKNOWN"


def _verify_checksums(path: str, manifest: dict, version: str) -> None:
    for name, entry in manifest["files"].items():
        digest = hashlib.sha256()
        with open(os.path.join(path, name), "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        if digest.hexdigest() != entry.get("sha256"):
            raise VersionLoadError(
                f"{version}: {name} does not match the sha256 checksum in its manifest "
                "(the file is damaged or was altered after the model was saved)",
                "DATA_LOSS",
            )


# The parameters and buffers of jitgrad's layers, from their config() arguments: how the
# architecture is sized before anything is built. Layers not listed here declare none
# (a custom layer's weights are still counted from the weights file).
_PARAMETERS = {
    "Linear": lambda a: a["in_features"] * a["out_features"] + a["out_features"] * bool(a["bias"]),
    "Embedding": lambda a: a["num_embeddings"] * a["embedding_dim"],
    "LayerNorm": lambda a: (
        math.prod(a["normalized_shape"])
        * bool(a["elementwise_affine"])
        * (1 + bool(a.get("bias", True)))
    ),
    "BatchNorm1d": lambda a: (
        a["num_features"]
        * (bool(a["affine"]) * (1 + bool(a.get("bias", True))) + 2 * bool(a["track_running_stats"]))
    ),
}


def _declared_parameters(path: str) -> tuple[int, int]:
    """(elements, bytes) of the parameters the architecture's jitgrad layers declare."""
    with open(os.path.join(path, ARCHITECTURE), encoding="utf-8") as f:
        architecture = json.load(f)
    elements = nbytes = 0
    stack = [architecture.get("module") if isinstance(architecture, dict) else None]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            count = _PARAMETERS.get(node.get("type"))
            args = node.get("args")
            if count is not None and isinstance(args, dict):
                try:
                    n = int(count(args))
                    itemsize = np.dtype(args.get("dtype") or "float32").itemsize
                except (KeyError, TypeError, ValueError):
                    raise ModelDirectoryError(
                        f"the architecture's {node['type']} has malformed arguments"
                    ) from None
                elements, nbytes = elements + n, nbytes + n * itemsize
            stack.extend(node.values())
    return elements, nbytes


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
    "VersionLoadError",
    "public_message",
    "Metadata",
    "ResourceAllocation",
    "ServableId",
    "check_loader_contract",
]
