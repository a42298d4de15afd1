"""The manager with fake loaders: one-way states, publication order, the swap under both
policies, resource refusals as error states, handles delaying unload, labels, and loads
on their own executor."""

import threading

import pytest
from conftest import FakeLoader

from jitgrad.serving.loader import ResourceAllocation
from jitgrad.serving.manager import (
    Manager,
    ServableNotFound,
    ServableUnavailable,
    State,
    resource_preserving,
)

T = 10  # seconds any wait may take before the test fails


@pytest.fixture
def manager():
    m = Manager()
    yield m
    m.shutdown(timeout=T)


def record(manager):
    events = []
    manager.add_listener(lambda s: events.append((s.id.version, s.state.value)))
    return events


def test_states_move_one_way_through_the_whole_life(manager):
    events = record(manager)
    loader = FakeLoader("one")
    manager.set_aspired_versions("m", {1: loader})
    manager.wait_until_available("m", 1, T)
    manager.set_aspired_versions("m", {})
    manager.wait_until_state("m", 1, {State.END}, T)
    states = [s for v, s in events if v == 1]
    assert states == ["start", "loading", "available", "available", "unloading", "end"]
    # (available twice: the second publication is the version ceasing to be aspired)
    assert loader.calls == ["load", "unload"]
    assert manager.version_states("m")[0].state is State.END


def test_available_is_published_after_reachable_and_unloading_before_unreachable(manager):
    seen = []

    def listener(s):
        if s.state in (State.AVAILABLE, State.UNLOADING) and s.id.version == 1:
            try:
                with manager.get_servable_handle("m", 1) as h:
                    seen.append((s.state.value, h.servable()))
            except LookupError as e:
                seen.append((s.state.value, type(e).__name__))
        if s.state is State.END and s.id.version == 1:
            try:
                manager.get_servable_handle("m", 1)
            except ServableNotFound:
                seen.append(("end", "unreachable"))

    manager.add_listener(listener)
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    manager.set_aspired_versions("m", {})
    manager.wait_until_state("m", 1, {State.END}, T)
    assert seen[0] == ("available", "one") and ("unloading", "one") in seen
    assert seen[-1] == ("end", "unreachable")


def test_availability_preserving_swap_serves_the_old_version_until_the_new_one_is_up(manager):
    events = record(manager)
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    gate = threading.Event()
    two = FakeLoader("two", gate=gate)
    manager.set_aspired_versions("m", {2: two})
    assert two.loading.wait(T)
    with manager.get_servable_handle("m") as h:  # the load is held: version 1 still answers
        assert h.servable() == "one"
    gate.set()
    manager.wait_until_state("m", 1, {State.END}, T)
    with manager.get_servable_handle("m") as h:
        assert h.servable() == "two"
    order = [e for e in events if e[1] in ("available", "unloading")]
    assert order.index((2, "available")) < order.index((1, "unloading"))


def test_resource_preserving_swap_unloads_first():
    manager = Manager(policy=resource_preserving)
    events = record(manager)
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    manager.set_aspired_versions("m", {2: FakeLoader("two")})
    manager.wait_until_available("m", 2, T)
    assert events.index((1, "end")) < events.index((2, "loading"))
    manager.shutdown(T)


def test_a_refused_load_is_an_error_state_and_the_old_version_keeps_serving():
    manager = Manager(resources=ResourceAllocation(ram_bytes=150))
    manager.set_aspired_versions("m", {1: FakeLoader("one", ram=100)})
    manager.wait_until_available("m", 1, T)
    two = FakeLoader("two", ram=100)
    manager.set_aspired_versions("m", {2: two})  # does not raise: the refusal is a state
    state = manager.wait_until_state("m", 2, {State.ERROR}, T)
    assert state.error_code == "RESOURCE_EXHAUSTED" and "needs ram_bytes=100" in state.error
    assert two.calls == []  # never loaded
    with manager.get_servable_handle("m") as h:
        assert h.servable() == "one"
    assert manager.tracker.used.ram_bytes == 100 and manager.is_ready()
    manager.shutdown(T)
    assert manager.tracker.used.ram_bytes == 0


def test_a_measured_estimate_frees_budget_for_the_next_version():
    manager = Manager(resources=ResourceAllocation(ram_bytes=150))
    manager.set_aspired_versions("m", {1: FakeLoader("one", ram=100, measured=40)})
    manager.wait_until_available("m", 1, T)
    assert manager.tracker.used.ram_bytes == 40
    manager.set_aspired_versions("m", {2: FakeLoader("two", ram=100)})
    manager.wait_until_available("m", 2, T)  # 40 + 100 fits
    manager.shutdown(T)


def test_a_failed_load_is_an_error_state_with_its_message(manager):
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    manager.set_aspired_versions("m", {2: FakeLoader(fail=ValueError("bad weights"))})
    state = manager.wait_until_state("m", 2, {State.ERROR}, T)
    assert state.error == "ValueError: bad weights" and state.error_code == "INVALID_ARGUMENT"
    with pytest.raises(ServableNotFound, match="error: ValueError: bad weights"):
        manager.get_servable_handle("m", 2)
    with manager.get_servable_handle("m") as h:
        assert h.servable() == "one"
    # re-aspiring it within load_retry_seconds of the failure does not retry it
    manager.set_aspired_versions("m", {2: FakeLoader("two")})
    assert manager.version_states("m")[0].state is State.ERROR


def test_a_failed_version_aspired_again_is_retried_with_the_new_loader_a_bounded_number_of_times():
    manager = Manager(max_load_retries=2, load_retry_seconds=0)
    broken = [FakeLoader(fail=ValueError(f"half copied {k}")) for k in range(3)]
    for attempt, loader in enumerate(broken):
        manager.set_aspired_versions("m", {1: loader})
        state = manager.wait_until_state("m", 1, {State.ERROR}, T)
        assert state.error == f"ValueError: half copied {attempt}"
        assert loader.calls == ["load"]
    late = FakeLoader("one")
    manager.set_aspired_versions("m", {1: late})  # two retries spent: stays in error
    assert manager.version_states("m")[0].state is State.ERROR and late.calls == []
    manager.set_aspired_versions("m", {})  # dropped and aspired again: a fresh count
    manager.set_aspired_versions("m", {1: late})
    manager.wait_until_available("m", 1, T)
    with manager.get_servable_handle("m") as h:
        assert h.servable() == "one"
    manager.shutdown(T)


def test_a_failed_version_is_retried_once_the_copy_completes():
    manager = Manager(load_retry_seconds=0)
    manager.set_aspired_versions("m", {1: FakeLoader(fail=ValueError("weights.jg missing"))})
    manager.wait_until_state("m", 1, {State.ERROR}, T)
    manager.set_aspired_versions("m", {1: FakeLoader("one")})  # the next poll
    manager.wait_until_available("m", 1, T)
    assert manager.is_ready()
    manager.shutdown(T)


def test_handles_delay_unload_until_released(manager):
    one = FakeLoader("one")
    manager.set_aspired_versions("m", {1: one})
    manager.wait_until_available("m", 1, T)
    handle = manager.get_servable_handle("m", 1)
    second = manager.get_servable_handle("m", 1)
    manager.set_aspired_versions("m", {2: FakeLoader("two")})
    manager.wait_until_state("m", 1, {State.UNLOADING}, T)
    manager.wait_until_available("m", 2, T)
    with pytest.raises(ServableUnavailable, match="unloading"):
        manager.get_servable_handle("m", 1)  # no new handles...
    assert handle.servable() == "one" and one.calls == ["load"]  # ...but held ones still work
    handle.release()
    handle.release()  # idempotent
    assert manager.version_states("m")[1].state is State.UNLOADING  # one handle left
    second.release()
    manager.wait_until_state("m", 1, {State.END}, T)
    assert one.calls == ["load", "unload"]


def test_a_version_aspired_again_while_it_unloads_starts_over_with_the_new_loader(manager):
    one = FakeLoader("one")
    manager.set_aspired_versions("m", {1: one})
    manager.wait_until_available("m", 1, T)
    handle = manager.get_servable_handle("m", 1)
    manager.set_aspired_versions("m", {})
    assert manager.version_states("m")[0].state is State.UNLOADING  # held by the handle
    again = FakeLoader("one again")
    manager.set_aspired_versions("m", {1: again})
    handle.release()
    manager.wait_until_available("m", 1, T)
    assert one.calls == ["load", "unload"] and again.calls == ["load"]
    with manager.get_servable_handle("m", 1) as h:
        assert h.servable() == "one again"


def test_a_version_aspired_again_then_dropped_while_it_unloads_stays_unloaded(manager):
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    handle = manager.get_servable_handle("m", 1)
    manager.set_aspired_versions("m", {})
    again = FakeLoader("one again")
    manager.set_aspired_versions("m", {1: again})
    manager.set_aspired_versions("m", {})
    handle.release()
    manager.wait_until_state("m", 1, {State.END}, T)
    assert again.calls == [] and manager.available_versions("m") == []


def test_loads_run_on_the_load_executor_not_the_caller(manager):
    gate = threading.Event()
    names = []

    class Where(FakeLoader):
        def load(self):
            names.append(threading.current_thread().name)
            super().load()

    manager.set_aspired_versions("m", {1: Where("one", gate=gate)})  # returns while loading
    assert manager.version_states("m")[0].state is State.LOADING
    with pytest.raises(ServableUnavailable, match="no available version"):
        manager.get_servable_handle("m")
    gate.set()
    manager.wait_until_available("m", 1, T)
    assert names == [names[0]] and names[0].startswith("jitgrad-load")


def test_labels_point_only_at_available_versions(manager):
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    manager.set_label("m", "stable", 1)
    with pytest.raises(ValueError, match="not available"):
        manager.set_label("m", "canary", 2)
    gate = threading.Event()
    manager.set_aspired_versions("m", {1: FakeLoader(), 2: FakeLoader("two", gate=gate)})
    with pytest.raises(ValueError, match="not available"):
        manager.set_label("m", "canary", 2)  # loading
    gate.set()
    manager.wait_until_available("m", 2, T)
    manager.set_label("m", "canary", 2)
    with manager.get_servable_handle("m", label="stable") as h:
        assert h.servable() == "one"
    with manager.get_servable_handle("m", label="canary") as h:
        assert h.servable() == "two"
    manager.set_aspired_versions("m", {2: FakeLoader()})
    manager.wait_until_state("m", 1, {State.END}, T)
    assert manager.labels("m") == {"canary": 2}  # stable went with its version
    with pytest.raises(ServableNotFound, match="label: stable"):
        manager.get_servable_handle("m", label="stable")


def test_unknown_names_and_versions(manager):
    with pytest.raises(ServableNotFound, match="model nope"):
        manager.get_servable_handle("nope")
    with pytest.raises(ServableNotFound, match="model nope"):
        manager.version_states("nope")
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    with pytest.raises(ServableNotFound, match=r"Specific\(m, 7\)"):
        manager.get_servable_handle("m", 7)


def test_each_call_replaces_the_aspired_set_and_dropped_versions_never_load(manager):
    gate = threading.Event()
    manager.set_aspired_versions("m", {1: FakeLoader("one", gate=gate)})
    two, three = FakeLoader("two"), FakeLoader("three")
    manager.set_aspired_versions("m", {1: FakeLoader(), 2: two, 3: three})
    # version 1 holds the only load thread: 3 and 2 are queued (loading) behind it
    manager.set_aspired_versions("m", {1: FakeLoader()})
    gate.set()
    manager.wait_until_available("m", 1, T)
    for v in (2, 3):
        manager.wait_until_state("m", v, {State.END}, T)
    assert two.calls == three.calls == []  # cancelled before their loaders ran


def test_a_version_dropped_before_it_starts_ends_at_once():
    manager = Manager(policy=resource_preserving)
    manager.set_aspired_versions("m", {1: FakeLoader("one")})
    manager.wait_until_available("m", 1, T)
    handle = manager.get_servable_handle("m")
    two = FakeLoader("two")
    manager.set_aspired_versions("m", {2: two})  # waits in start for 1 to unload
    assert [s.state for s in manager.version_states("m")] == [State.START, State.UNLOADING]
    manager.set_aspired_versions("m", {3: FakeLoader("three")})
    assert manager.version_states("m")[1].state is State.END and two.calls == []
    handle.release()
    manager.wait_until_available("m", 3, T)
    manager.shutdown(T)


def test_shutdown_unloads_everything():
    manager = Manager()
    loaders = {v: FakeLoader(v) for v in (1, 2)}
    manager.set_aspired_versions("m", loaders)
    manager.wait_until_available("m", 1, T)
    manager.wait_until_available("m", 2, T)
    manager.shutdown(T)
    assert all(lo.calls == ["load", "unload"] for lo in loaders.values())
    with pytest.raises(RuntimeError, match="shut down"):
        manager.set_aspired_versions("m", {})


def test_a_name_aspired_with_no_versions_is_not_ready(manager):
    manager.set_aspired_versions("m", {})  # an empty base path
    assert not manager.is_ready()
    with pytest.raises(TimeoutError, match="model m: no versions"):
        manager.wait_until_ready(0.1)


def test_the_status_history_keeps_the_newest_ended_versions():
    manager = Manager(history=3)
    for version in range(1, 9):
        manager.set_aspired_versions("m", {version: FakeLoader(version)})
        manager.wait_until_available("m", version, T)
    manager.set_aspired_versions("m", {9: FakeLoader(fail=ValueError("bad"))})
    manager.wait_until_state("m", 9, {State.ERROR}, T)
    manager.set_aspired_versions("m", {})  # version 9 is dropped, version 8 unloads
    manager.wait_until_state("m", 8, {State.END}, T)
    states = manager.version_states("m")
    assert [s.id.version for s in states] == [9, 8, 7]
    assert states[0].state is State.ERROR and states[0].error == "ValueError: bad"
    manager.shutdown(T)
