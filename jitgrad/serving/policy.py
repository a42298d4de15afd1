"""Version policies: what to do next for one servable stream, from a snapshot of its states.

A policy is a pure function: ``policy(snapshots) -> Action | None``, where ``snapshots``
are the ``ServableState`` of every version the manager holds for one name (aspired or
not). It returns at most one action; the manager applies it (``load`` moves a ``start``
version to ``loading``, ``unload`` an ``available`` one to ``unloading``) and asks again
until the answer is ``None``, and again whenever a state or the aspired set changes.
No threads, no clocks: the tables in ``tests/serving/test_policy.py`` are the spec.

Two policies, as in TensorFlow Serving:

- ``availability_preserving``: load a new version before unloading the old one, so a name
  with an aspired version never drops to zero available versions (costs the memory of
  both for the duration of the swap).
- ``resource_preserving``: unload first, then load, so at most one version's resources are
  held (requests to the name fail with "unavailable" during the swap).

>>> from jitgrad.serving.loader import ServableId
>>> from jitgrad.serving.state import ServableState, State
>>> old = ServableState(ServableId("m", 1), State.AVAILABLE, aspired=False)
>>> new = ServableState(ServableId("m", 2), State.START, aspired=True)
>>> availability_preserving([old, new])
Action(kind='load', id=ServableId(name='m', version=2))
>>> resource_preserving([old, new])
Action(kind='unload', id=ServableId(name='m', version=1))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .loader import ServableId
from .state import ServableState, State

LOAD, UNLOAD = "load", "unload"


@dataclass(frozen=True)
class Action:
    """Load or unload one version."""

    kind: str  # LOAD or UNLOAD
    id: ServableId


def availability_preserving(snapshots: Sequence[ServableState]) -> Action | None:
    """Unload an unaspired available version only once it is not the last thing serving;
    otherwise load the newest aspired version that has not started.

    An unaspired available version is unloaded (the lowest first) when no version is
    aspired, when an aspired version is available, or when more than one unaspired version
    is available. So the old version serves until its successor is available, and keeps
    serving if its successor fails to load.
    """
    has_aspired = any(s.aspired for s in snapshots)
    aspired_available = any(s.aspired and s.state is State.AVAILABLE for s in snapshots)
    unaspired_available = [s for s in snapshots if not s.aspired and s.state is State.AVAILABLE]
    if not has_aspired or aspired_available or len(unaspired_available) > 1:
        if unaspired_available:
            return Action(UNLOAD, min(s.id for s in unaspired_available))
    return _load_newest(snapshots)


def resource_preserving(snapshots: Sequence[ServableState]) -> Action | None:
    """Unload every unaspired available version first; load only when no unaspired
    version is still on its way out (loading, available or unloading), then the newest
    aspired version that has not started."""
    for s in sorted(snapshots, key=lambda s: s.id):
        if not s.aspired and s.state is State.AVAILABLE:
            return Action(UNLOAD, s.id)
    if any(not s.aspired and not s.state.final and s.state is not State.START for s in snapshots):
        return None
    return _load_newest(snapshots)


def _load_newest(snapshots: Sequence[ServableState]) -> Action | None:
    new = [s.id for s in snapshots if s.aspired and s.state is State.START]
    return Action(LOAD, max(new)) if new else None


__all__ = ["Action", "LOAD", "UNLOAD", "availability_preserving", "resource_preserving"]
