"""The resource tracker's admission: a load is admitted only if its estimate fits."""

import pytest

from jitgrad.serving.loader import ResourceAllocation as R
from jitgrad.serving.loader import ServableId
from jitgrad.serving.resources import ResourceExhausted, ResourceTracker


def sid(v):
    return ServableId("m", v)


@pytest.mark.parametrize(
    "budget, held, request_, admitted",
    [
        (100, [], 100, True),  # exactly fits
        (100, [], 101, False),
        (100, [60], 40, True),
        (100, [60], 41, False),
        (100, [30, 30], 40, True),
        (None, [10**12], 10**12, True),  # no budget: unlimited
        (100, [], 0, True),
    ],
)
def test_admission_table(budget, held, request_, admitted):
    tracker = ResourceTracker(None if budget is None else R(ram_bytes=budget))
    for k, amount in enumerate(held):
        tracker.reserve(sid(k), R(ram_bytes=amount))
    if admitted:
        tracker.reserve(sid(99), R(ram_bytes=request_))
        assert tracker.used.ram_bytes == sum(held) + request_
    else:
        with pytest.raises(ResourceExhausted, match=f"needs ram_bytes={request_}"):
            tracker.reserve(sid(99), R(ram_bytes=request_))
        assert tracker.reserved(sid(99)) is None and tracker.used.ram_bytes == sum(held)


def test_release_and_shrink_free_room():
    tracker = ResourceTracker(R(ram_bytes=100))
    tracker.reserve(sid(1), R(ram_bytes=80))
    with pytest.raises(ResourceExhausted, match=r"20 of the budget of 100 are free \(80 reser"):
        tracker.reserve(sid(2), R(ram_bytes=50))
    tracker.update(sid(1), R(ram_bytes=30))  # measured after load
    tracker.reserve(sid(2), R(ram_bytes=50))
    tracker.update(sid(1), R(ram_bytes=500))  # never grows
    assert tracker.reserved(sid(1)).ram_bytes == 30
    tracker.release(sid(1))
    tracker.reserve(sid(3), R(ram_bytes=50))
    assert tracker.used.ram_bytes == 100


def test_every_resource_must_fit():
    tracker = ResourceTracker(R(ram_bytes=100, gpu=1))
    tracker.reserve(sid(1), R(ram_bytes=10, gpu=1))
    with pytest.raises(ResourceExhausted, match="gpu=1"):
        tracker.reserve(sid(2), R(ram_bytes=10, gpu=1))
    with pytest.raises(ResourceExhausted, match="disk=1"):
        tracker.reserve(sid(3), R(disk=1))  # a resource the budget does not have
