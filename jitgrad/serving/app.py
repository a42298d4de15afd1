"""One model served end to end: a file-system source feeding a manager behind the REST API.

``ServingApp`` is what each worker of ``python -m jitgrad.serving`` runs and what tests and
the demo start in-process. ``start()`` polls the base path once, waits (up to
``ready_timeout``) for the first version to be available, then serves (uvicorn on a
thread); ``stop()`` stops polling, closes the server (in-flight requests finish) and
unloads every version. A ``start()`` that fails (no version
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
import socket
import threading
import time

import uvicorn

from .asgi import Limits, create_app
from .loader import ModelLoader, ResourceAllocation
from .manager import Manager
from .policy import availability_preserving, resource_preserving
from .source import FileSystemSource, LatestVersions

log = logging.getLogger("jitgrad.serving")

POLICIES = {"availability": availability_preserving, "resource": resource_preserving}
BACKLOG = 2048  # connections the kernel queues before a worker accepts them


def listen(host: str, port: int, backlog: int = BACKLOG) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port=0``: a free one), inheritable, so
    worker processes can accept on it. Its protocol is named (IPPROTO_TCP), as asyncio
    looks for before it sets TCP_NODELAY on an accepted connection: without it an answer's
    headers and body, two writes, wait ~40 ms for the client's delayed ACK (Nagle)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def uvicorn_config(app, limits: Limits, log_level: str = "warning") -> uvicorn.Config:
    """How every jitgrad server runs uvicorn: h11 (pure Python, no compiled parser to
    build), no lifespan (the ServingApp's start and stop bracket the server), an idle
    keep-alive connection closed after 60 s."""
    return uvicorn.Config(
        app,
        http="h11",
        loop="asyncio",
        lifespan="off",
        log_config=None,
        log_level=log_level,
        access_log=False,
        backlog=BACKLOG,
        timeout_keep_alive=60,
        timeout_graceful_shutdown=limits.request_timeout,
    )


class BackgroundServer:
    """uvicorn serving an ASGI app on a thread of this process (tests, the demo)."""

    def __init__(self, app, limits: Limits, host: str = "127.0.0.1", port: int = 0):
        self.socket = listen(host, port)
        self.server = uvicorn.Server(uvicorn_config(app, limits))
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return self.socket.getsockname()[0]

    @property
    def port(self) -> int:
        return self.socket.getsockname()[1]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 30.0) -> BackgroundServer:
        self._thread = threading.Thread(
            target=self.server.run, args=([self.socket],), name="jitgrad-http", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the HTTP server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.server.should_exit = True
            self._thread.join()
            self._thread = None
        self.socket.close()


class ServingApp:
    """Serve model ``name`` from ``base_path`` on ``host:port`` (``port=0``: a free one).

    ``version_policy``: which versions the source aspires (default ``LatestVersions(1)``).
    ``labels`` maps label → version; each is set once its version is available.
    ``max_load_retries`` and ``load_retry_seconds``: how often and how soon a version whose
    load failed (a directory caught mid-copy) is tried again on a later poll
    (see ``Manager``). ``limits``: the front end's (``asgi.Limits``). ``verify_checksums``:
    hash every file of a version against its manifest before using it.
    ``history``: final states of versions kept for the status API, per model.

    ``start()`` serves on a thread of this process; ``start(serve=False)`` only loads,
    for a caller that runs ``self.asgi`` itself (the command line's uvicorn workers).
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
        limits: Limits | None = None,
        labels: dict[str, int] | None = None,
        ready_timeout: float = 120.0,
        freeze_heap: bool = False,
        max_load_retries: int = 5,
        load_retry_seconds: float = 5.0,
        verify_checksums: bool = True,
        history: int = 16,
    ):
        if policy not in POLICIES:
            raise ValueError(f"policy {policy!r}: choose one of {sorted(POLICIES)}")
        budget = None
        if ram_budget_bytes is not None:
            budget = ResourceAllocation(ram_bytes=ram_budget_bytes)
        self.name = name
        self.host, self.port = host, port
        self.ready_timeout = ready_timeout
        self.freeze_heap = freeze_heap
        self.limits = limits or Limits()
        self._frozen = False
        self.manager = Manager(
            POLICIES[policy],
            budget,
            load_threads,
            max_load_retries=max_load_retries,
            load_retry_seconds=load_retry_seconds,
            history=history,
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
            loader_factory=functools.partial(
                ModelLoader, replicas=replicas, verify_checksums=verify_checksums
            ),
        ).connect(self.manager)
        self.asgi = create_app(self.manager, self.limits)
        self.server: BackgroundServer | None = None

    def _apply_labels(self, snapshot) -> None:
        if snapshot.id.name != self.name or not self.manager.available_versions(self.name):
            return
        for label, version in self._pending_labels.items():
            if version in self.manager.available_versions(self.name):
                if self.manager.labels(self.name).get(label) != version:
                    self.manager.set_label(self.name, label, version)

    def start(self, wait: bool = True, serve: bool = True) -> ServingApp:
        try:
            self.source.start()
            if wait:
                self.wait_until_ready(self.ready_timeout)
            if self.freeze_heap:
                gc.collect()
                gc.freeze()
                self._frozen = True
            if serve:
                self.server = BackgroundServer(self.asgi, self.limits, self.host, self.port)
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
        if self.server is not None:
            self.server.stop()
        self.asgi.state.frontend.close()
        self.manager.shutdown()
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def __enter__(self) -> ServingApp:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["ServingApp", "BackgroundServer", "POLICIES", "listen", "uvicorn_config"]
