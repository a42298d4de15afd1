"""Pickling and deep-copying storages: shared bytes travel by reference, the rest by value."""

import copy
import gc
import os
import pickle
import subprocess
import sys

import pytest

import jitgrad as jg


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


def segment_exists(name: str) -> bool:
    return os.path.exists(f"/dev/shm/{name}")


# -- shared memory -----------------------------------------------------------------------


def test_an_unpickled_shared_storage_attaches_to_the_segment():
    s = jg.FloatStorage.new_shared(4).fill_(1)
    loaded = roundtrip(s)
    assert loaded.is_shared() and loaded.shared_name == s.shared_name
    loaded.fill_(7)
    assert s.tolist() == [7.0] * 4
    # The unpickled storage only attached: releasing it leaves the segment to its creator.
    del loaded
    gc.collect()
    assert jg.FloatStorage.from_shared(s.shared_name).tolist() == [7.0] * 4


def test_a_view_of_a_shared_storage_pickles_by_reference_too():
    s = jg.IntStorage.new_shared(6).fill_(0)
    view = roundtrip(jg.IntStorage(s, 2, 3))
    assert view.is_shared() and view.shared_name == s.shared_name
    view[0] = 5
    assert s.tolist() == [0, 0, 5, 0, 0, 0]


def test_a_process_unpickling_a_shared_storage_writes_to_it_and_leaves_it_alone():
    s = jg.FloatStorage.new_shared(4).fill_(1)
    code = (
        "import pickle, sys, jitgrad as jg\n"
        "s = pickle.load(sys.stdin.buffer)\n"
        "print(s.is_shared(), s.shared_name)\n"
        "s.fill_(9)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(s), capture_output=True, check=True
    )
    assert out.stdout.decode().split() == ["True", s.shared_name]
    assert out.stderr == b""  # no resource-tracker complaint about a leaked segment
    assert s.tolist() == [9.0] * 4
    assert segment_exists(s.shared_name)
    assert jg.FloatStorage.from_shared(s.shared_name).tolist() == [9.0] * 4


def test_a_tensor_on_shared_memory_passed_to_a_spawned_process_shares_it():
    # In a process of its own, so its stderr shows what the resource tracker (shared with
    # spawned children) says, and its segment goes when it exits.
    code = (
        "import multiprocessing as mp, os, jitgrad as jg\n"
        "if __name__ == '__main__':\n"
        "    t = jg.Tensor(jg.FloatStorage.new_shared(3).fill_(0), (3,))\n"
        "    p = mp.get_context('spawn').Process(target=jg.Tensor.fill_, args=(t[1:], 4.0))\n"
        "    p.start(); p.join()\n"
        "    print(p.exitcode, t.tolist(), t.storage().shared_name)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.startswith("0 [0.0, 4.0, 4.0] "), out.stdout
    assert out.stderr == ""
    assert not segment_exists(out.stdout.split()[-1])  # its creator unlinked it


def test_deepcopy_of_a_shared_storage_is_a_private_copy():
    s = jg.FloatStorage.new_shared(2).fill_(5)
    c = copy.deepcopy(s)
    assert not c.is_shared() and c.shared_name is None
    c.fill_(3)
    assert s.tolist() == [5.0, 5.0]
    del c
    gc.collect()
    assert jg.FloatStorage.from_shared(s.shared_name).tolist() == [5.0, 5.0]


# -- files -------------------------------------------------------------------------------


def test_a_shared_file_map_pickles_as_its_file_and_maps_it_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = jg.FloatStorage.from_file("f.bin", shared=True, size=4).fill_(0)
    blob = pickle.dumps(s)
    monkeypatch.chdir("/")  # the pickled path does not depend on the working directory
    loaded = pickle.loads(blob)
    assert loaded.is_shared() and loaded.filename == str(tmp_path / "f.bin")
    loaded.fill_(2)
    assert s.tolist() == [2.0] * 4
    (tmp_path / "f.bin").unlink()
    with pytest.raises(FileNotFoundError, match="f.bin"):
        pickle.loads(blob)
    (tmp_path / "f.bin").write_bytes(b"1234")
    with pytest.raises(ValueError, match="holds 4 bytes.*had 16"):
        pickle.loads(blob)


def test_deepcopy_of_a_shared_file_map_is_a_private_copy(tmp_path):
    s = jg.FloatStorage.from_file(tmp_path / "f.bin", shared=True, size=2).fill_(1)
    c = copy.deepcopy(s)
    assert not c.is_shared() and c.filename is None
    c.fill_(3)
    assert s.tolist() == [1.0, 1.0]
    assert (tmp_path / "f.bin").read_bytes() == s.array.tobytes()


def test_a_private_file_map_pickles_by_value(tmp_path):
    path = tmp_path / "hello.txt"
    path.write_bytes(b"Hello")
    loaded = roundtrip(jg.CharStorage.from_file(path, shared=False))
    assert loaded.string() == "Hello" and not loaded.is_shared() and loaded.filename is None
    loaded.fill_(42)
    assert path.read_bytes() == b"Hello"


def test_a_plain_storage_pickles_by_value():
    s = jg.DoubleStorage([1, 2, 3])
    loaded = roundtrip(s)
    loaded.fill_(0)
    assert s.tolist() == [1.0, 2.0, 3.0] and not loaded.is_shared()
    assert loaded.resize_(5).size() == 5  # it owns its bytes


# -- storage views -----------------------------------------------------------------------


def test_a_storage_view_and_its_base_pickle_once_a_view_exists():
    x = jg.DoubleStorage(10).fill_(0)
    y = jg.DoubleStorage(x, 2, 5).fill_(1)
    assert roundtrip(y).tolist() == [1.0] * 5
    assert roundtrip(x).tolist() == [0.0, 0.0] + [1.0] * 5 + [0.0] * 3
    assert roundtrip(jg.Tensor(x, (10,))).sum().item() == 5


@pytest.mark.parametrize("clone", [roundtrip, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_a_base_and_its_view_copied_together_still_share(clone):
    x = jg.DoubleStorage(10).fill_(0)
    y = jg.DoubleStorage(x, 2, 5)
    x2, y2 = clone((x, y))
    y2.fill_(4)
    assert x2.tolist() == [0.0, 0.0] + [4.0] * 5 + [0.0] * 3
    assert x.tolist() == [0.0] * 10
    assert y2.untyped()._base is x2.untyped()
    with pytest.raises(RuntimeError, match="storage views of it exist"):
        x2.resize_(20)  # the copy knows its view, as the original does
