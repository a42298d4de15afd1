"""One model served end to end: a file-system source feeding a manager behind the REST server.

``ServingApp`` is what ``python -m jitgrad.serving`` runs and what tests and the demo start
in-process. ``start()`` polls the base path once, waits (up to ``ready_timeout``) for the
first version to be available, then serves; ``stop()`` stops polling, closes the server
(in-flight requests finish) and unloads every version. A ``start()`` that fails (no version
in time, every version broken) stops what it started before it raises. The model is not
ready (``/readyz`` answers 503) while it has no available version, also when its base
path is empty or missing.

``freeze_heap`` (on in the command-line server) moves every object alive once the first
version serves into CPython's permanent generation (``gc.freeze()``). Why: numba's
compilation, which a new version's warm-up runs, allocates enough to trigger full
collections, and a full collection stops every thread while it walks the whole heap,
numba's and llvmlite's caches included (~200k objects here). Measured during a swap
under load on the 2-core machine: full-collection pauses of 100-210 ms stalled every
in-flight request at once (worst request 150-175 ms in 3 of 4 runs); with the heap frozen
the worst request was 17-26 ms. It is process-wide, so in-process users opt in;
``stop()`` unfreezes.

>>> import os, tempfile, jitgrad as jg
>>> from jitgrad import nn
>>> base = os.path.join(tempfile.mkdtemp(), "tiny")
>>> _ = jg.io.save_model(nn.Sequential(nn.Linear(2, 1, generator=0)), os.path.join(base, "1"),
...                      input_shape=(2,), warmup_batch_sizes=[1])
>>> with ServingApp("tiny", base, port=0, poll_seconds=0) as app:
...     app.manager.available_versions("tiny"), app.server.url.startswith("http://127.0.0.1:")
([1], True)
"""

from __future__ import annotations

import functools
import gc
import logging

from .http import DEFAULT_MAX_BODY_BYTES, ModelServer
from .loader import ModelLoader, ResourceAllocation
from .manager import Manager
from .policy import availability_preserving, resource_preserving
from .source import FileSystemSource, LatestVersions

log = logging.getLogger("jitgrad.serving")

POLICIES = {"availability": availability_preserving, "resource": resource_preserving}


class ServingApp:
    """Serve model ``name`` from ``base_path`` on ``host:port`` (``port=0``: a free one).

    ``version_policy``: which versions the source aspires (default ``LatestVersions(1)``).
    ``labels`` maps label → version; each is set once its version is available.
    ``max_load_retries`` and ``load_retry_seconds``: how often and how soon a version whose
    load failed (a directory caught mid-copy) is tried again on a later poll
    (see ``Manager``).
    """

    def __init__(
        self,
        name: str,
        base_path,
        *,
        host: str = "127.0.0.1",
        port: int = 8501,
        poll_seconds: float | None = 1.0,
        version_policy=None,
        policy: str = "availability",
        ram_budget_bytes: int | None = None,
        load_threads: int = 1,
        replicas: int = 2,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        labels: dict[str, int] | None = None,
        ready_timeout: float = 120.0,
        freeze_heap: bool = False,
        max_load_retries: int = 5,
        load_retry_seconds: float = 5.0,
    ):
        if policy not in POLICIES:
            raise ValueError(f"policy {policy!r}: choose one of {sorted(POLICIES)}")
        budget = None
        if ram_budget_bytes is not None:
            budget = ResourceAllocation(ram_bytes=ram_budget_bytes)
        self.name = name
        self.ready_timeout = ready_timeout
        self.freeze_heap = freeze_heap
        self._frozen = False
        self.manager = Manager(
            POLICIES[policy],
            budget,
            load_threads,
            max_load_retries=max_load_retries,
            load_retry_seconds=load_retry_seconds,
        )
        # Known before any version is: a base path that is missing emits nothing, and
        # the manager must still count this model as not ready.
        self.manager.set_aspired_versions(name, {})
        self._pending_labels = dict(labels or {})
        self.manager.add_listener(self._apply_labels)
        self.source = FileSystemSource(
            base_path,
            poll_seconds,
            version_policy or LatestVersions(1),
            name=name,
            loader_factory=functools.partial(ModelLoader, replicas=replicas),
        ).connect(self.manager)
        self.server = ModelServer(self.manager, host, port, max_body_bytes=max_body_bytes)

    def _apply_labels(self, snapshot) -> None:
        if snapshot.id.name != self.name or not self.manager.available_versions(self.name):
            return
        for label, version in self._pending_labels.items():
            if version in self.manager.available_versions(self.name):
                if self.manager.labels(self.name).get(label) != version:
                    self.manager.set_label(self.name, label, version)

    def start(self, wait: bool = True) -> ServingApp:
        try:
            self.source.start()
            if wait:
                self.wait_until_ready(self.ready_timeout)
            if self.freeze_heap:
                gc.collect()
                gc.freeze()
                self._frozen = True
            self.server.start()
        except BaseException:
            self.stop()  # the polling thread, loads and the bound socket would outlive us
            raise
        return self

    def wait_until_ready(self, timeout: float) -> None:
        """Block until a version of the model is available (see ``Manager.wait_until_ready``)."""
        try:
            self.manager.wait_until_ready(timeout)
        except TimeoutError as e:
            raise TimeoutError(
                f"{e} (versions of model {self.name} are directories named by "
                f"a number holding a manifest.json, under "
                f"{self.source.base_path})"
            ) from None

    def stop(self) -> None:
        self.source.stop()
        self.server.stop()
        self.manager.shutdown()
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def __enter__(self) -> ServingApp:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["ServingApp", "POLICIES"]
