"""The manager: moves servable versions through their states and hands out handles.

A source calls ``set_aspired_versions(name, {version: loader})``; each call replaces the
previous set for that name. The manager keeps one *harness* per version it holds (its
loader, state, reference count) and, whenever something changes, asks the version policy
(``policy.py``) what to do next for that name and does it:

- *load*: the version moves to ``loading`` and a task on the **load executor** (a thread
  pool of its own, never a request thread) asks the loader for its estimate, reserves it
  with the resource tracker (a refusal puts the version in ``error`` with a
  ``RESOURCE_EXHAUSTED`` status; nothing is raised into a background thread), loads and
  warms it. Only then does the version become reachable, and only after that is
  ``available`` published (to the status API and listeners).
- *unload*: ``unloading`` is published, then the version stops being reachable (no new
  handle reaches it, labels on it are dropped); when the last handle to it is released
  the unload runs on the load executor, the reservation is released and it ends.

A version aspired again while it unloads gets a new harness with the new loader once the
old one has ended (a loader is never loaded twice). A version whose load failed stays in
``error`` until a later ``set_aspired_versions`` call aspires it again with a fresh loader
(a source's next poll) at least ``load_retry_seconds`` after the failure: that call
starts it over, up to ``max_load_retries`` times (TF Serving's ``max_num_load_retries`` and
``load_retry_interval``). Retries ride on the source's calls because loaders are
single-use: the manager has no loader of its own to try again with, and needs no timer.
Dropping the version from the aspired set and aspiring it later starts its count afresh.

``get_servable_handle`` gives a reference-counted handle to an available version (the
newest, a specific one, or the one a label points at); hold it for the length of a
request. States, policies and the tracker are in ``state.py``, ``policy.py`` and
``resources.py`` and are re-exported here.

>>> from jitgrad.serving.loader import Loader, ResourceAllocation
>>> class Constant(Loader):
...     def __init__(self, value): self.value, self._servable = value, None
...     def estimate_resources(self): return ResourceAllocation(ram_bytes=8)
...     def load(self): self._servable = lambda: self.value
...     def unload(self): self._servable = None
...     def servable(self): return self._servable
>>> manager = Manager()
>>> manager.set_aspired_versions("answer", {1: Constant(42)})
>>> manager.wait_until_available("answer", 1, timeout=10)
>>> with manager.get_servable_handle("answer") as handle:
...     handle.id.version, handle.servable()
(1, 42)
>>> manager.shutdown()
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor

from ..io.model_dir import ModelDirectoryError
from .loader import Loader, Metadata, ResourceAllocation, ServableId, public_message
from .policy import LOAD, UNLOAD, Action, availability_preserving, resource_preserving
from .resources import ResourceExhausted, ResourceTracker
from .state import ServableState, State

log = logging.getLogger("jitgrad.serving")


class ServableNotFound(LookupError):
    """No such model, version or label (HTTP 404)."""


class ServableUnavailable(LookupError):
    """The model or version is known but not available now: loading, unloading, or no
    version of it has loaded yet (HTTP 503)."""


class ServableHandle:
    """A counted reference to one available version; the version is not unloaded while a
    handle to it is held. Use it as a context manager, or call ``release()`` once."""

    def __init__(self, manager: Manager, harness: _Harness):
        self._manager, self._harness = manager, harness
        self.id: ServableId = harness.id
        self.servable = harness.loader.servable()
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.servable = None
            self._manager._release(self._harness)

    def __enter__(self) -> ServableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class _Harness:
    """One version held by the manager: its loader, state and handles."""

    def __init__(self, servable_id: ServableId, loader: Loader):
        self.id, self.loader = servable_id, loader
        self.state = State.START
        self.aspired = True
        self.error = self.error_code = ""
        self.handles = 0
        self.unload_submitted = False
        self.load_seconds: float | None = None
        self.warmup_seconds: float | None = None
        self.failed_at: float | None = None  # time.monotonic() of the failed load
        self.retries = 0  # earlier failed loads of this version

    def move(self, state: State) -> None:
        if not self.state.can_move_to(state):
            raise AssertionError(f"{self.id}: illegal move {self.state.value} -> {state.value}")
        self.state = state

    def snapshot(self) -> ServableState:
        return ServableState(
            self.id,
            self.state,
            self.aspired,
            self.error,
            self.error_code,
            self.load_seconds,
            self.warmup_seconds,
        )


Policy = Callable[[list[ServableState]], "Action | None"]


class Manager:
    """Versions of named servables under a version policy and a resource budget.

    ``policy``: ``availability_preserving`` (default) or ``resource_preserving`` (or any
    pure function of snapshots). ``resources``: the budget (``None``: unlimited).
    ``load_threads``: size of the load executor. ``max_load_retries`` and
    ``load_retry_seconds``: how often and how soon a failed version may be started over
    when it is aspired again (see the module docstring). ``history``: how many versions
    that ended (or failed and are no longer held) the status API keeps per name, the
    newest; older ones are forgotten, so a model swapped every second for days holds a
    bounded history.

    A failed version's error is what clients may read: the loader's message without
    server paths (``loader.public_message``); the log has the full detail.
    """

    def __init__(
        self,
        policy: Policy = availability_preserving,
        resources: ResourceAllocation | None = None,
        load_threads: int = 1,
        *,
        max_load_retries: int = 5,
        load_retry_seconds: float = 5.0,
        history: int = 16,
    ):
        if history < 1:
            raise ValueError(f"history must keep at least 1 version, got {history}")
        if max_load_retries < 0 or load_retry_seconds < 0:
            raise ValueError(
                f"max_load_retries ({max_load_retries}) and load_retry_seconds "
                f"({load_retry_seconds}) must not be negative"
            )
        self.policy = policy
        self.history = history
        self.max_load_retries = max_load_retries
        self.load_retry_seconds = load_retry_seconds
        self.tracker = ResourceTracker(resources)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._harnesses: dict[ServableId, _Harness] = {}
        self._reachable: dict[str, dict[int, _Harness]] = {}
        self._aspired: dict[str, frozenset[int]] = {}
        # Loaders of versions aspired again while their previous harness unloads.
        self._pending: dict[ServableId, Loader] = {}
        self._history: dict[ServableId, ServableState] = {}  # the last state of each version
        self._labels: dict[str, dict[str, int]] = {}
        self._listeners: list[Callable[[ServableState], None]] = []
        self._executor = ThreadPoolExecutor(load_threads, thread_name_prefix="jitgrad-load")
        self._closed = False

    # -- sources ------------------------------------------------------------------------

    def set_aspired_versions(
        self, name: str, versions: Mapping[int, Loader] | Iterable[tuple[int, Loader]]
    ) -> None:
        """Make ``versions`` (version → loader) the aspired versions of ``name``, replacing
        the previous set. A version already held keeps its harness (the new loader is
        dropped unused), except one that is unloading (the new loader starts once the
        unload ends) or failed (the new loader retries it, as the module docstring says);
        a version held but no longer aspired is unloaded as the policy decides, or dropped
        at once if it never started loading."""
        versions = dict(versions.items() if isinstance(versions, Mapping) else versions)
        with self._lock:
            if self._closed:
                raise RuntimeError("the manager is shut down")
            self._aspired[name] = frozenset(int(v) for v in versions)
            now = time.monotonic()
            for version, loader in versions.items():
                sid = ServableId(name, int(version))
                held = self._harnesses.get(sid)
                if held is None:
                    self._add_harness(sid, loader)
                elif held.state is State.UNLOADING:
                    self._pending[sid] = loader
                elif held.state is State.ERROR and self._may_retry(held, now):
                    log.info(
                        "retrying %s (retry %d of %d)", sid, held.retries + 1, self.max_load_retries
                    )
                    self._add_harness(sid, loader).retries = held.retries + 1
            for sid in [i for i in self._pending if i.name == name]:
                if sid.version not in self._aspired[name]:
                    del self._pending[sid]
            for harness in self._held(name):
                # An unloading harness stays unaspired: it ends, and a pending loader
                # for its version (if any) starts over after it.
                aspired = (
                    harness.id.version in self._aspired[name]
                    and harness.state is not State.UNLOADING
                )
                if harness.aspired != aspired:
                    harness.aspired = aspired
                    self._publish(harness)
                if not aspired and harness.state.final:
                    del self._harnesses[harness.id]  # forget failures no longer asked for
                elif not aspired and harness.state is State.START:
                    harness.move(State.END)  # never loaded: nothing to unload
                    del self._harnesses[harness.id]
                    self._publish(harness)
            self._reconcile(name)

    # -- requests -----------------------------------------------------------------------

    def get_servable_handle(
        self, name: str, version: int | None = None, label: str | None = None
    ) -> ServableHandle:
        """A handle to the newest available version of ``name``, or to ``version``, or to
        the version ``label`` points at. Raises ServableNotFound (no such model, version
        or label) or ServableUnavailable (known, but not available now)."""
        with self._lock:
            if name not in self._aspired:
                raise ServableNotFound(f"Could not find any versions of model {name}")
            reachable = self._reachable.get(name, {})
            if label is not None:
                if version is not None:
                    raise ValueError("give a version or a label, not both")
                if label not in self._labels.get(name, {}):
                    raise ServableNotFound(
                        f"Unrecognized servable version label: {label} (model {name})"
                    )
                version = self._labels[name][label]
            if version is None:
                if not reachable:
                    raise ServableUnavailable(
                        f"Model {name} has no available version yet ({self._describe(name)})"
                    )
                harness = reachable[max(reachable)]
            else:
                harness = reachable.get(int(version))
                if harness is None:
                    last = self._history.get(ServableId(name, int(version)))
                    if last is None or last.state in (State.END, State.ERROR):
                        reason = (
                            ""
                            if last is None
                            else f" (it is {last.state.value}"
                            + (f": {last.error})" if last.error else ")")
                        )
                        raise ServableNotFound(
                            f"Servable not found for request: Specific({name}, {version}){reason}"
                        )
                    raise ServableUnavailable(
                        f"Version {version} of model {name} is {last.state.value}, not available"
                    )
            harness.handles += 1
            return ServableHandle(self, harness)

    def _release(self, harness: _Harness) -> None:
        with self._lock:
            harness.handles -= 1
            if harness.handles == 0 and harness.state is State.UNLOADING:
                self._submit_unload(harness)

    # -- labels -------------------------------------------------------------------------

    def set_label(self, name: str, label: str, version: int) -> None:
        """Point ``label`` (``stable``, ``canary``, …) at an available version of ``name``;
        refused (ValueError) for a version that is not available. A label is dropped when
        its version stops being available."""
        with self._lock:
            if int(version) not in self._reachable.get(name, {}):
                raise ValueError(
                    f"cannot point label {label!r} at version {version} of "
                    f"model {name}: it is not available "
                    f"({self._describe(name)})"
                )
            self._labels.setdefault(name, {})[label] = int(version)

    def labels(self, name: str) -> dict[str, int]:
        with self._lock:
            return dict(self._labels.get(name, {}))

    # -- status -------------------------------------------------------------------------

    def model_names(self) -> list[str]:
        with self._lock:
            return sorted(self._aspired)

    def version_states(self, name: str) -> list[ServableState]:
        """The last state of every version of ``name`` the manager has seen, newest first.
        Raises ServableNotFound for a name no source has aspired."""
        with self._lock:
            if name not in self._aspired:
                raise ServableNotFound(f"Could not find any versions of model {name}")
            return sorted(
                (s for i, s in self._history.items() if i.name == name), key=lambda s: -s.id.version
            )

    def available_versions(self, name: str) -> list[int]:
        with self._lock:
            return sorted(self._reachable.get(name, {}))

    def is_ready(self) -> bool:
        """Every name a source has aspired (an empty set of versions included) has at
        least one available version."""
        with self._lock:
            return all(self._reachable.get(n) for n in self._aspired)

    def add_listener(self, listener: Callable[[ServableState], None], replay: bool = False) -> None:
        """Call ``listener(snapshot)`` on every state change, in order, under the manager's
        lock: it must be quick and must not wait for other threads. ``replay`` first calls
        it with the last state of every version seen so far."""
        with self._lock:
            if replay:
                for snapshot in sorted(self._history.values(), key=lambda s: s.id):
                    listener(snapshot)
            self._listeners.append(listener)

    def wait_until_available(self, name: str, version: int, timeout: float) -> None:
        """Block until ``version`` of ``name`` is available; raise TimeoutError, or
        RuntimeError if it failed or ended."""
        self._wait(ServableId(name, int(version)), {State.AVAILABLE}, timeout)

    def wait_until_state(
        self, name: str, version: int, states: Iterable[State], timeout: float
    ) -> ServableState:
        """Block until ``version`` of ``name`` is in one of ``states``; its snapshot."""
        return self._wait(ServableId(name, int(version)), set(states), timeout, strict=False)

    def _wait(self, sid: ServableId, states: set, timeout: float, strict: bool = True):
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                last = self._history.get(sid)
                if last is not None and last.state in states:
                    return last
                if strict and last is not None and last.state.final:
                    raise RuntimeError(
                        f"{sid} is {last.state.value}" + (f": {last.error}" if last.error else "")
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    state = "unknown" if last is None else last.state.value
                    raise TimeoutError(f"{sid} is still {state} after {timeout} s")
                self._changed.wait(remaining)

    def wait_until_ready(self, timeout: float) -> None:
        """Block until ``is_ready()``. Raises RuntimeError when a name cannot become ready
        (every version aspired for it failed and nothing is loading), TimeoutError after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self.is_ready():
                for name, aspired in self._aspired.items():
                    held = self._held(name)
                    if (
                        aspired
                        and not self._reachable.get(name)
                        and held
                        and all(h.state is State.ERROR for h in held)
                    ):
                        raise RuntimeError(
                            f"model {name} cannot be served: "
                            + "; ".join(f"version {h.id.version}: {h.error}" for h in held)
                        )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"not ready after {timeout} s: "
                        + "; ".join(f"model {n}: {self._describe(n)}" for n in self._aspired)
                    )
                self._changed.wait(remaining)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Unload every version (waiting up to ``timeout`` for handles to be released) and
        stop the load executor."""
        with self._lock:
            if self._closed:
                return
            for name in list(self._aspired):
                self.set_aspired_versions(name, {})
            self._closed = True
            deadline = time.monotonic() + timeout
            while any(not h.state.final for h in self._harnesses.values()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.warning(
                        "shutdown: versions still held after %s s: %s",
                        timeout,
                        [str(h.id) for h in self._harnesses.values()],
                    )
                    break
                self._changed.wait(remaining)
        self._executor.shutdown(wait=True)

    # -- internals (all under the lock) --------------------------------------------------

    def _add_harness(self, sid: ServableId, loader: Loader) -> _Harness:
        harness = self._harnesses[sid] = _Harness(sid, loader)
        self._publish(harness)
        return harness

    def _may_retry(self, harness: _Harness, now: float) -> bool:
        return (
            harness.retries < self.max_load_retries
            and now - harness.failed_at >= self.load_retry_seconds
        )

    def _held(self, name: str) -> list[_Harness]:
        return [h for i, h in self._harnesses.items() if i.name == name]

    def _describe(self, name: str) -> str:
        held = self._held(name)
        return (
            ", ".join(
                f"version {h.id.version} {h.state.value}" for h in sorted(held, key=lambda h: h.id)
            )
            or "no versions"
        )

    def _publish(self, harness: _Harness) -> None:
        snapshot = harness.snapshot()
        self._history[harness.id] = snapshot
        if snapshot.state.final:
            self._trim_history(harness.id.name)
        for listener in self._listeners:
            try:
                listener(snapshot)
            except Exception:
                log.exception("serving listener failed on %s", harness.id)
        self._changed.notify_all()

    def _trim_history(self, name: str) -> None:
        done = sorted(
            sid
            for sid, s in self._history.items()
            if sid.name == name and s.state.final and sid not in self._harnesses
        )
        for sid in done[: max(0, len(done) - self.history)]:
            del self._history[sid]

    def _reconcile(self, name: str) -> None:
        for _ in range(4 * len(self._held(name)) + 1):  # every action moves a state forward
            action = self.policy([h.snapshot() for h in self._held(name)])
            if action is None:
                return
            harness = self._harnesses.get(action.id)
            if action.kind == LOAD and harness is not None and harness.state is State.START:
                harness.move(State.LOADING)
                self._publish(harness)
                self._executor.submit(self._load, harness)
            elif action.kind == UNLOAD and harness is not None and harness.state is State.AVAILABLE:
                self._start_unload(harness)
            else:
                log.error(
                    "version policy %s proposed %s, which does not fit %s; ignored",
                    getattr(self.policy, "__name__", self.policy),
                    action,
                    None if harness is None else harness.state.value,
                )
                return

    def _load(self, harness: _Harness) -> None:
        sid, loader = harness.id, harness.loader
        with self._lock:
            if not harness.aspired:  # dropped while queued: cancel before the loader runs
                harness.move(State.END)
                self._harnesses.pop(sid, None)
                self._publish(harness)
                self._reconcile(sid.name)
                return
        try:
            estimate = loader.estimate_resources()
            with self._lock:
                self.tracker.reserve(sid, estimate)
            start = time.perf_counter()
            loader.load_with_metadata(Metadata(sid))
            load_seconds = time.perf_counter() - start
        except BaseException as e:
            with self._lock:
                self.tracker.release(sid)
                harness.error, harness.error_code = _public_error(e), _error_code(e)
                harness.failed_at = time.monotonic()
                harness.move(State.ERROR)
                if not harness.aspired:
                    self._harnesses.pop(sid, None)
                self._publish(harness)
                log.warning("loading %s failed: %s: %s", sid, type(e).__name__, e)
                self._reconcile(sid.name)
            if not isinstance(e, Exception):
                raise
            return
        with self._lock:
            self.tracker.update(sid, loader.estimate_resources())
            harness.load_seconds = load_seconds
            harness.warmup_seconds = getattr(loader, "warmup_seconds", None)
            self._reachable.setdefault(sid.name, {})[sid.version] = harness  # reachable first,
            harness.move(State.AVAILABLE)
            self._publish(harness)  # then published
            log.info("%s is available (loaded and warmed in %.3f s)", sid, load_seconds)
            self._reconcile(sid.name)

    def _start_unload(self, harness: _Harness) -> None:
        harness.move(State.UNLOADING)
        self._publish(harness)  # published first, then no longer reachable
        self._reachable.get(harness.id.name, {}).pop(harness.id.version, None)
        labels = self._labels.get(harness.id.name, {})
        for label in [k for k, v in labels.items() if v == harness.id.version]:
            del labels[label]
        if harness.handles == 0:
            self._submit_unload(harness)

    def _submit_unload(self, harness: _Harness) -> None:
        if not harness.unload_submitted:
            harness.unload_submitted = True
            try:
                self._executor.submit(self._unload, harness)
            except RuntimeError:  # the executor is shut down (a handle outlived shutdown)
                self._unload(harness)

    def _unload(self, harness: _Harness) -> None:
        try:
            harness.loader.unload()
        except Exception:
            log.exception("unloading %s failed; its resources are released anyway", harness.id)
        with self._lock:
            self.tracker.release(harness.id)
            harness.move(State.END)
            self._harnesses.pop(harness.id, None)
            self._publish(harness)
            log.info("%s is unloaded", harness.id)
            loader = self._pending.pop(harness.id, None)
            if loader is not None:  # aspired again while it unloaded: start over
                self._add_harness(harness.id, loader)
            self._reconcile(harness.id.name)


def _public_error(e: BaseException) -> str:
    if hasattr(e, "error_code"):  # a loader's own message for clients
        return public_message(e)
    return f"{type(e).__name__}: {public_message(e)}"


def _error_code(e: BaseException) -> str:
    if isinstance(getattr(e, "error_code", None), str):
        return e.error_code
    if isinstance(e, ResourceExhausted):
        return "RESOURCE_EXHAUSTED"
    if isinstance(e, FileNotFoundError):
        return "NOT_FOUND"
    if isinstance(e, (ModelDirectoryError, ValueError)):
        return "INVALID_ARGUMENT"
    return "UNKNOWN"


__all__ = [
    "Manager",
    "ServableHandle",
    "ServableNotFound",
    "ServableUnavailable",
    "State",
    "ServableState",
    "Action",
    "availability_preserving",
    "resource_preserving",
    "ResourceTracker",
    "ResourceExhausted",
]
