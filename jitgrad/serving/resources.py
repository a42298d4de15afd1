"""The resource tracker: admits a load only if its estimate fits what is left of the budget.

Every admitted version holds a reservation of its loader's estimate from admission until
it is unloaded (or its load fails). Because an estimate is an upper bound that never
grows, the sum of reservations bounds what the servables can use; ``update`` lets a
reservation shrink to a loader's lower, measured figure after its load.

The tracker is plain bookkeeping with no lock of its own: the manager calls it under its
lock.

>>> from jitgrad.serving.loader import ResourceAllocation as R, ServableId
>>> tracker = ResourceTracker(R(ram_bytes=100))
>>> tracker.reserve(ServableId("m", 1), R(ram_bytes=60))
>>> try:  # doctest: +NORMALIZE_WHITESPACE
...     tracker.reserve(ServableId("m", 2), R(ram_bytes=60))
... except ResourceExhausted as e:
...     print(e)
cannot load {name: m, version: 2}: it needs ram_bytes=60 but 40 of the budget of 100 are
free (60 reserved by {name: m, version: 1})
"""

from __future__ import annotations

from .loader import ResourceAllocation, ServableId


class ResourceExhausted(RuntimeError):
    """A load refused because its estimate does not fit the free budget."""


class ResourceTracker:
    """Reservations of resources by servable id, against a total (``None``: unlimited)."""

    def __init__(self, total: ResourceAllocation | None = None):
        self.total = total
        self._reserved: dict[ServableId, ResourceAllocation] = {}

    @property
    def used(self) -> ResourceAllocation:
        used = ResourceAllocation()
        for amount in self._reserved.values():
            used = used + amount
        return used

    def reserved(self, servable_id: ServableId) -> ResourceAllocation | None:
        return self._reserved.get(servable_id)

    def reserve(self, servable_id: ServableId, estimate: ResourceAllocation) -> None:
        """Reserve ``estimate`` for ``servable_id`` or raise ResourceExhausted naming what
        does not fit (and who holds the rest)."""
        if servable_id in self._reserved:
            raise ValueError(f"{servable_id} already holds a reservation")
        if self.total is not None:
            used = self.used
            short = [n for n in estimate if used[n] + estimate[n] > self.total[n]]
            if short:
                holders = ", ".join(
                    f"{a[short[0]]} reserved by {i}"
                    for i, a in sorted(self._reserved.items())
                    if a[short[0]]
                )
                needs = ", ".join(f"{n}={estimate[n]}" for n in short)
                free = ", ".join(f"{self.total[n] - used[n]}" for n in short)
                raise ResourceExhausted(
                    f"cannot load {servable_id}: it needs {needs} but {free} of the budget of "
                    f"{', '.join(str(self.total[n]) for n in short)} are free"
                    + (f" ({holders})" if holders else "")
                )
        self._reserved[servable_id] = estimate

    def update(self, servable_id: ServableId, estimate: ResourceAllocation) -> None:
        """Shrink a reservation to a loader's newer estimate (never grows it)."""
        current = self._reserved[servable_id]
        self._reserved[servable_id] = ResourceAllocation(
            {n: min(current[n], estimate[n]) for n in current}
        )

    def release(self, servable_id: ServableId) -> None:
        self._reserved.pop(servable_id, None)


__all__ = ["ResourceExhausted", "ResourceTracker"]
