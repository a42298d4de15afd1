"""The states of a servable version, and the one-way moves between them.

::

    start ──► loading ──► available ──► unloading ──► end
      │          │ │
      └──► end   │ └──► error   (the load failed, or the resource budget refused it)
                 └──► end     (no longer aspired when its turn on the load executor came:
                               its loader never ran)

``start``: the version is known (a source aspired it) and nothing is loaded; ``loading``:
its load is queued on the load executor or its loader is estimating, loading and warming
up; ``available``: requests reach it;
``unloading``: no new request reaches it and it is unloaded once the last handle is
released; ``end`` and ``error`` are final. A version that is aspired again after ``end``
starts over with a new loader (a loader is never loaded twice), and so does one in
``error`` when the manager retries it.

>>> State.START.can_move_to(State.LOADING), State.AVAILABLE.can_move_to(State.LOADING)
(True, False)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .loader import ServableId


class State(enum.Enum):
    START = "start"
    LOADING = "loading"
    AVAILABLE = "available"
    UNLOADING = "unloading"
    END = "end"
    ERROR = "error"

    @property
    def final(self) -> bool:
        return self in (State.END, State.ERROR)

    def can_move_to(self, other: State) -> bool:
        return other in TRANSITIONS[self]


TRANSITIONS: dict[State, frozenset[State]] = {
    State.START: frozenset({State.LOADING, State.END}),
    State.LOADING: frozenset({State.AVAILABLE, State.ERROR, State.END}),
    State.AVAILABLE: frozenset({State.UNLOADING}),
    State.UNLOADING: frozenset({State.END}),
    State.END: frozenset(),
    State.ERROR: frozenset(),
}


@dataclass(frozen=True)
class ServableState:
    """A snapshot of one version: what the policies decide on and the status API shows.

    ``error_code`` is a canonical status name (``RESOURCE_EXHAUSTED`` for a refused load,
    ``NOT_FOUND`` for missing files, ``INVALID_ARGUMENT`` for a malformed model,
    ``UNKNOWN`` otherwise); both error fields are empty unless the state is ``error``.
    """

    id: ServableId
    state: State
    aspired: bool
    error: str = ""
    error_code: str = ""
    load_seconds: float | None = None
    warmup_seconds: float | None = None


__all__ = ["State", "ServableState", "TRANSITIONS"]
