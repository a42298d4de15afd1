"""The file-system source: watches ``base_path/<version>/`` and aspires versions.

Each poll lists the subdirectories of ``base_path`` named by a version number (``1``,
``17``; not ``01``: one directory per number) that are *ready* (they
hold ``manifest.json``, which ``save_model`` writes last and atomically: a directory being
copied or saved is invisible until it is complete), picks versions by the version policy
(the latest N, all, or specific ones) and calls the target, normally
``manager.set_aspired_versions``, with a fresh loader for each. The manager keeps the
loader of a version it already holds, so emitting every poll is cheap and self-healing.

A version directory that disappears drops out of the aspired set and is unloaded; one that
is broken (a manifest, but bad files) is aspired, fails to load and goes to ``error``
while the previous version keeps serving (availability-preserving policy); later polls
retry it a few times (``Manager``'s ``max_load_retries``), so a directory caught mid-copy
loads once the copy completes. If
``base_path`` itself cannot be listed, the poll emits nothing, so a passing file-system
problem does not unload a model.

``poll_seconds=0`` (or None) disables the polling thread: tests call ``poll()`` by hand.

>>> LatestVersions(2).select([1, 5, 3]), AllVersions().select([2, 1])
([5, 3], [2, 1])
>>> SpecificVersions([1, 9]).select([1, 2])
[1]
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..io.model_dir import MANIFEST
from .loader import Loader, ModelLoader

log = logging.getLogger("jitgrad.serving")

Target = Callable[[str, Mapping[int, Loader]], None]


@dataclass(frozen=True)
class LatestVersions:
    """The ``n`` highest versions (TF Serving's default, with n = 1)."""

    n: int = 1

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"latest versions: n must be at least 1, got {self.n}")

    def select(self, versions: Iterable[int]) -> list[int]:
        return sorted(versions, reverse=True)[: self.n]


@dataclass(frozen=True)
class AllVersions:
    """Every ready version."""

    def select(self, versions: Iterable[int]) -> list[int]:
        return sorted(versions, reverse=True)


@dataclass(frozen=True)
class SpecificVersions:
    """The listed versions that are ready."""

    versions: frozenset[int]

    def __init__(self, versions: Iterable[int]):
        object.__setattr__(self, "versions", frozenset(int(v) for v in versions))

    def select(self, versions: Iterable[int]) -> list[int]:
        return sorted((v for v in versions if v in self.versions), reverse=True)


def parse_version_policy(text: str):
    """``latest``, ``latest:N``, ``all`` or ``specific:1,2`` (the command-line spelling)."""
    kind, _, arg = text.partition(":")
    try:
        if kind == "latest":
            return LatestVersions(int(arg) if arg else 1)
        if kind == "all" and not arg:
            return AllVersions()
        if kind == "specific" and arg:
            return SpecificVersions(int(v) for v in arg.split(","))
    except ValueError as e:
        raise ValueError(f"version policy {text!r}: {e}") from None
    raise ValueError(
        f"version policy {text!r}: expected latest, latest:N, all or specific:V1,V2,..."
    )


class FileSystemSource:
    """Aspires the ready versions of ``base_path`` for servable ``name`` (default: the
    base path's last component)."""

    def __init__(
        self,
        base_path,
        poll_seconds: float | None = 1.0,
        version_policy=LatestVersions(1),
        *,
        name: str | None = None,
        loader_factory: Callable[[str], Loader] = ModelLoader,
    ):
        # A negative or NaN interval makes Event.wait return at once (the thread would
        # poll in a busy loop), and an infinite one overflows it.
        if poll_seconds is not None and not 0 <= poll_seconds < math.inf:
            raise ValueError(
                f"poll_seconds must be a finite number of seconds >= 0 (0 or "
                f"None: no polling thread), got {poll_seconds!r}"
            )
        self.base_path = os.fspath(base_path)
        self.name = name or os.path.basename(os.path.normpath(self.base_path))
        self.poll_seconds = poll_seconds
        self.version_policy = version_policy
        self.loader_factory = loader_factory
        self._target: Target | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._poll_lock = threading.Lock()

    def set_target(self, target: Target) -> None:
        """Where aspired versions go: ``target(name, {version: loader})``."""
        self._target = target

    def connect(self, manager) -> FileSystemSource:
        self.set_target(manager.set_aspired_versions)
        return self

    def ready_versions(self) -> list[int] | None:
        """The versions under ``base_path`` that hold a manifest, or None if the base path
        cannot be listed."""
        try:
            entries = list(os.scandir(self.base_path))
        except OSError as e:
            log.warning("cannot list the base path of model %s: %s", self.name, e)
            return None
        # Versions are int64, as TF Serving's: a longer number is not a version directory.
        return sorted(
            int(e.name)
            for e in entries
            if re.fullmatch(r"0|[1-9][0-9]*", e.name)
            and int(e.name) < 2**63
            and e.is_dir()
            and os.path.isfile(os.path.join(e.path, MANIFEST))
        )

    def poll(self) -> list[int] | None:
        """Scan once and emit the aspired versions to the target; returns them (None when
        the base path could not be listed and nothing was emitted)."""
        with self._poll_lock:
            ready = self.ready_versions()
            if ready is None:
                return None
            aspired = self.version_policy.select(ready)
            if not aspired:
                log.warning("no ready versions of model %s under %s", self.name, self.base_path)
            if self._target is not None:
                self._target(
                    self.name,
                    {v: self.loader_factory(os.path.join(self.base_path, str(v))) for v in aspired},
                )
            return aspired

    def start(self) -> FileSystemSource:
        """Poll once now, then every ``poll_seconds`` on a daemon thread (if enabled)."""
        self.poll()
        if self.poll_seconds and self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"jitgrad-source-{self.name}", daemon=True
            )
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            try:
                self.poll()
            except Exception:
                log.exception("polling %s failed", self.base_path)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


__all__ = [
    "FileSystemSource",
    "LatestVersions",
    "AllVersions",
    "SpecificVersions",
    "parse_version_policy",
]
