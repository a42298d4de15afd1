"""The file-system source: version policies, ready directories only, disappearing and
broken versions."""

import os
import shutil

import pytest
from conftest import save_version

from jitgrad.serving.manager import Manager, State
from jitgrad.serving.source import (
    AllVersions,
    FileSystemSource,
    LatestVersions,
    SpecificVersions,
    parse_version_policy,
)

T = 30


def fake_dirs(base, versions, complete=True):
    for v in versions:
        os.makedirs(os.path.join(base, str(v)), exist_ok=True)
        if complete:
            open(os.path.join(base, str(v), "manifest.json"), "w").close()


def emitted(base, policy):
    calls = []
    source = FileSystemSource(
        base, poll_seconds=0, version_policy=policy, name="m", loader_factory=lambda path: path
    )
    source.set_target(lambda name, versions: calls.append((name, versions)))
    source.poll()
    ((name, versions),) = calls
    assert name == "m"
    return versions


@pytest.mark.parametrize(
    "policy, expected",
    [
        (LatestVersions(), [7]),
        (LatestVersions(2), [7, 3]),
        (AllVersions(), [7, 3, 2]),
        (SpecificVersions([2, 5]), [2]),
        (parse_version_policy("latest:2"), [7, 3]),
        (parse_version_policy("specific:3,7"), [7, 3]),
    ],
)
def test_version_policies_pick_from_ready_versions(base, policy, expected):
    fake_dirs(base, [2, 3, 7])
    fake_dirs(base, [9], complete=False)  # half-written: no manifest
    os.makedirs(os.path.join(base, "tmp-8"))  # not a version
    os.makedirs(os.path.join(base, "010"))  # not a canonical version number
    open(os.path.join(base, "11"), "w").close()  # a file, not a directory
    fake_dirs(base, [2**63, 10**20])  # beyond int64, TF Serving's version type
    versions = emitted(base, policy)
    assert list(versions) == expected
    assert all(versions[v] == os.path.join(base, str(v)) for v in expected)


def test_bad_policy_spellings_are_refused():
    for text in ("latest:0", "newest", "specific:", "all:2", "specific:a"):
        with pytest.raises(ValueError, match="version policy"):
            parse_version_policy(text)


@pytest.mark.parametrize("seconds", [-1, -0.5, float("nan"), float("inf")])
def test_a_poll_interval_the_thread_cannot_wait_is_refused(base, seconds):
    # a negative or NaN wait returns at once (a busy polling loop); an infinite one overflows
    with pytest.raises(ValueError, match="poll_seconds must be a finite number"):
        FileSystemSource(base, poll_seconds=seconds)
    for fine in (None, 0, 0.01):
        FileSystemSource(base, poll_seconds=fine)


def test_a_missing_base_path_emits_nothing(tmp_path):
    source = FileSystemSource(tmp_path / "absent", poll_seconds=0)
    source.set_target(lambda *a: pytest.fail("emitted for a missing base path"))
    assert source.poll() is None


def test_half_written_ignored_new_version_loaded_vanished_version_unloaded(base):
    manager = Manager()
    source = FileSystemSource(base, poll_seconds=0, name="tiny").connect(manager)
    save_version(base, 1)
    fake_dirs(base, [2], complete=False)  # a version being copied in: no manifest yet
    assert source.poll() == [1]
    manager.wait_until_available("tiny", 1, T)
    save_version(base, 3, seed=3)
    assert source.poll() == [3]
    manager.wait_until_available("tiny", 3, T)
    manager.wait_until_state("tiny", 1, {State.END}, T)
    shutil.rmtree(os.path.join(base, "3"))  # the newest disappears: 1 is the latest again
    assert source.poll() == [1]
    manager.wait_until_available("tiny", 1, T)
    manager.wait_until_state("tiny", 3, {State.END}, T)
    assert [s.id.version for s in manager.version_states("tiny")] == [3, 1]
    manager.shutdown(T)


def test_a_broken_version_errors_while_the_previous_keeps_serving(base):
    manager = Manager()
    source = FileSystemSource(base, poll_seconds=0, name="tiny").connect(manager)
    save_version(base, 1)
    source.poll()
    manager.wait_until_available("tiny", 1, T)
    save_version(base, 2, seed=2)
    with open(os.path.join(base, "2", "weights.jg"), "r+b") as f:
        f.write(b"garbage!")  # same size, corrupt magic
    source.poll()
    state = manager.wait_until_state("tiny", 2, {State.ERROR}, T)
    assert state.error.startswith("version 2: weights.jg does not match the sha256 checksum")
    assert state.error_code == "DATA_LOSS" and base not in state.error
    source.poll()  # polled again within load_retry_seconds: not retried, still in error
    assert manager.version_states("tiny")[0].state is State.ERROR
    with manager.get_servable_handle("tiny") as handle:
        assert handle.id.version == 1
    assert manager.is_ready()
    manager.shutdown(T)


def test_a_directory_caught_mid_copy_loads_on_a_later_poll_once_the_copy_completes(base):
    manager = Manager(load_retry_seconds=0)
    source = FileSystemSource(base, poll_seconds=0, name="tiny").connect(manager)
    save_version(base, 1)
    weights = os.path.join(base, "1", "weights.jg")
    os.rename(weights, weights + ".copying")  # the manifest arrived first
    source.poll()
    state = manager.wait_until_state("tiny", 1, {State.ERROR}, T)
    assert "weights.jg is listed in the manifest but missing" in state.error
    assert base not in state.error  # clients read it: no server path
    os.rename(weights + ".copying", weights)
    source.poll()
    manager.wait_until_available("tiny", 1, T)
    assert manager.is_ready()
    manager.shutdown(T)


def test_polling_thread_picks_up_new_versions(base):
    manager = Manager()
    save_version(base, 1)
    source = FileSystemSource(base, poll_seconds=0.05, name="tiny").connect(manager).start()
    try:
        manager.wait_until_available("tiny", 1, T)
        save_version(base, 2, seed=2)
        manager.wait_until_available("tiny", 2, T)
    finally:
        source.stop()
        manager.shutdown(T)
