"""The version policies as pure functions of snapshot tables (no threads, no manager).

A row is (versions as "version:state[*]" where * marks aspired, expected action)."""

import pytest

from jitgrad.serving.loader import ServableId
from jitgrad.serving.policy import Action, availability_preserving, resource_preserving
from jitgrad.serving.state import ServableState, State


def table(spec: str) -> list[ServableState]:
    states = []
    for item in spec.split():
        version, state = item.split(":")
        aspired = state.endswith("*")
        sid = ServableId("m", int(version))
        states.append(ServableState(sid, State(state.rstrip("*")), aspired))
    return states


def act(expected: str | None):
    if expected is None:
        return None
    kind, version = expected.split()
    return Action(kind, ServableId("m", int(version)))


AVAILABILITY = [
    ("1:start*", "load 1"),  # first version
    ("1:start* 2:start*", "load 2"),  # the newest first
    ("1:available 2:start*", "load 2"),  # load the new one before unloading the old
    ("1:available 2:loading*", None),  # the old one serves while the new one loads
    ("1:available 2:available*", "unload 1"),  # then the old one goes
    ("1:available 2:error*", None),  # the new one failed: the old one keeps serving
    ("1:available 2:available 3:loading*", "unload 1"),  # two unaspired: the lowest goes
    ("1:available", "unload 1"),  # nothing aspired: unload
    ("1:available 2:available", "unload 1"),
    ("1:unloading 2:available*", None),  # in progress
    ("1:available* 2:available*", None),  # both aspired (all versions)
    ("1:available* 2:start*", "load 2"),
    ("1:loading*", None),
    ("1:error*", None),  # never retried while aspired
    ("1:end 2:available*", None),
    ("", None),
]

RESOURCE = [
    ("1:start*", "load 1"),
    ("1:available 2:start*", "unload 1"),  # unload first...
    ("1:unloading 2:start*", None),  # ...wait until it is gone...
    ("1:end 2:start*", "load 2"),  # ...then load
    ("1:error 2:start*", "load 2"),
    ("1:loading 2:start*", None),  # an unaspired version still on its way in: wait
    ("1:available 2:available 3:start*", "unload 1"),
    ("1:available* 2:start*", "load 2"),  # the old one is still aspired (all versions)
    ("2:available* 3:start*", "load 3"),
    ("1:available* 2:available*", None),
    ("", None),
]


@pytest.mark.parametrize("spec, expected", AVAILABILITY)
def test_availability_preserving(spec, expected):
    assert availability_preserving(table(spec)) == act(expected)


@pytest.mark.parametrize("spec, expected", RESOURCE)
def test_resource_preserving(spec, expected):
    assert resource_preserving(table(spec)) == act(expected)


def _run(policy, spec: str) -> list[str]:
    """Apply a policy until it rests, completing each load/unload at once: the sequence of
    actions, and at every step the available versions."""
    states = {s.id.version: s for s in table(spec)}
    log = []
    for _ in range(20):
        action = policy(list(states.values()))
        if action is None:
            return log
        s = states[action.id.version]
        new = State.AVAILABLE if action.kind == "load" else State.END
        states[s.id.version] = ServableState(s.id, new, s.aspired)
        available = sorted(v for v, x in states.items() if x.state is State.AVAILABLE)
        log.append(f"{action.kind} {s.id.version} -> {available}")
    raise AssertionError("the policy never rests")


def test_a_swap_never_drops_to_zero_versions_under_availability_preserving():
    assert _run(availability_preserving, "1:available 2:start*") == [
        "load 2 -> [1, 2]",
        "unload 1 -> [2]",
    ]


def test_a_swap_never_holds_two_versions_under_resource_preserving():
    assert _run(resource_preserving, "1:available 2:start*") == ["unload 1 -> []", "load 2 -> [2]"]
