"""jg.save / jg.load: round trips, storage sharing, mmap, atomic writes and bad files."""

import json
import math
import os
import pathlib
import struct
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES
from jitgrad.io import FormatError
from jitgrad.io import format as fmt
from jitgrad.storage import UntypedStorage, storage_class

MMAP = pytest.mark.parametrize("mmap", [True, False], ids=["mmap", "read"])
OTHER_ORDER = "big" if sys.byteorder == "little" else "little"


# -- helpers -------------------------------------------------------------------------------


def sample(dtype, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "ui":
        info = np.iinfo(dtype.numpy)
        return rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype.numpy)
    values = rng.standard_normal(n) * 100
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(n)
    values = values.astype(dtype.numpy)
    special = [np.nan, np.inf, -0.0]  # bits must survive, not just values
    values[: min(n, 3)] = special[: min(n, 3)]
    return values


def bits(t) -> bytes:
    return np.ascontiguousarray(t.numpy()).tobytes()


def assert_same_tensor(loaded, original):
    assert isinstance(loaded, jg.Tensor)
    assert loaded.dtype is original.dtype
    assert loaded.shape == original.shape
    assert loaded.stride() == original.stride()
    assert loaded.storage_offset() == original.storage_offset()
    assert bits(loaded) == bits(original)
    # The same place within the root bytes as in the original.
    assert byte_position(loaded) == byte_position(original)


def byte_position(t) -> int:
    untyped = t.untyped_storage()
    if untyped.nbytes() == 0:
        return 0
    return untyped.data_ptr() - untyped._root().data_ptr()


def root_groups(tensors) -> list[list[int]]:
    """Indices of the tensors, grouped by the root storage under them."""
    groups: dict[int, list[int]] = {}
    for i, t in enumerate(tensors):
        groups.setdefault(id(t.untyped_storage()._root()), []).append(i)
    return sorted(groups.values())


def assert_plain_equal(a, b):
    """Equal with types, recursively; nan equals nan and -0.0 differs from 0.0."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert len(a) == len(b)
        for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True):
            assert_plain_equal(ka, kb)
            assert_plain_equal(va, vb)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_plain_equal(x, y)
    elif isinstance(a, float):
        assert struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    else:
        assert a == b


def split_file(path):
    """The header (as a dict) and the storages' bytes of a file."""
    raw = pathlib.Path(path).read_bytes()
    (length,) = struct.unpack("<Q", raw[8:16])
    header = json.loads(raw[16 : 16 + length])
    blobs = [raw[e["offset"] : e["offset"] + e["nbytes"]] for e in header["storages"]]
    return header, blobs


def write_file(path, header, blobs):
    """A file of ``header`` (offsets recomputed) and ``blobs``, as the writer lays it out."""
    prefix, offsets = fmt.layout_file(header, [len(b) for b in blobs])
    fmt.write_atomically(str(path), prefix, blobs, offsets)


def tensor_entry(**fields):
    entry = {
        "storage": 0,
        "storage_byte_offset": 0,
        "storage_nbytes": 0,
        "dtype": "float64",
        "offset": 0,
        "shape": [],
        "strides": [],
    }
    entry.update(fields)
    return {"tensor": entry}


# -- round trips ---------------------------------------------------------------------------


@MMAP
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips(tmp_path, dtype, mmap):
    base = jg.from_numpy(sample(dtype, 24).reshape(4, 6))
    view = base[1:, ::2].T  # strided, with an offset
    path = tmp_path / "t.jg"
    jg.save({"base": base, "view": view, "scalar": base[2, 3]}, path)
    out = jg.load(path, mmap=mmap)
    assert_same_tensor(out["base"], base)
    assert_same_tensor(out["view"], view)
    assert_same_tensor(out["scalar"], base[2, 3])
    assert out["view"].storage() is out["base"].storage()


@MMAP
def test_plain_values_and_containers_round_trip(tmp_path, mmap):
    t = jg.arange(3)
    obj = {
        "none": None,
        "bools": [True, False],
        "ints": (0, -1, 2**80, -(2**70)),
        "floats": [0.0, -0.0, 1.5, 1e300, 5e-324, math.nan, math.inf, -math.inf, 1.0],
        "text": ["", "é ünïcode ✓", "\ud800 lone surrogate", '{"tensor": 1}'],
        "keys": {
            2: "int",
            "1": "str",
            1.5: "float",
            True: "bool",
            None: "none",
            -0.0: "z",
            math.nan: "nan",
            float("nan"): "another nan",
            -math.inf: "-inf",
        },
        "nested": [(t, [t, {"deep": (t,)}]), [], (), {}],
        "tag lookalike": {"tensor": {"storage": 0}},
    }
    jg.save(obj, path := tmp_path / "p.jg")
    out = jg.load(path, mmap=mmap)
    assert_plain_equal(
        {k: v for k, v in out.items() if k != "nested"},
        {k: v for k, v in obj.items() if k != "nested"},
    )
    assert list(out) == list(obj)
    (first, inner), empty_list, empty_tuple, empty_dict = out["nested"]
    assert (empty_list, empty_tuple, empty_dict) == ([], (), {})
    assert type(inner) is list and type(inner[1]["deep"]) is tuple
    assert first.tolist() == [0, 1, 2] and inner[1]["deep"][0].storage() is first.storage()


def test_bare_tensor_and_bare_values(tmp_path):
    jg.save(jg.arange(4.0), tmp_path / "t.jg")
    assert jg.load(tmp_path / "t.jg").tolist() == [0.0, 1.0, 2.0, 3.0]
    jg.save("just text", str(tmp_path / "s.jg"))
    assert jg.load(str(tmp_path / "s.jg")) == "just text"


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(plain)
def test_any_plain_object_round_trips(obj):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.jg")
        jg.save(obj, path)
        assert_plain_equal(jg.load(path, mmap=False), obj)


@MMAP
def test_zero_size_tensors(tmp_path, mmap):
    a = jg.arange(6.0)
    obj = [jg.zeros((0, 3)), a[4:4], a.view(2, 3)[:, 3:], jg.empty(0, dtype="int8"), a]
    jg.save(obj, tmp_path / "z.jg")
    out = jg.load(tmp_path / "z.jg", mmap=mmap)
    for loaded, original in zip(out, obj, strict=True):
        assert_same_tensor(loaded, original)
    assert out[1].storage() is out[4].storage()
    assert root_groups(out) == root_groups(obj)


def test_file_layout(tmp_path):
    a, b = jg.arange(5, dtype="int8"), jg.arange(3.0)
    jg.save({"a": a, "b": b}, tmp_path / "f.jg")
    raw = (tmp_path / "f.jg").read_bytes()
    assert raw[:8] == fmt.MAGIC
    header, blobs = split_file(tmp_path / "f.jg")
    assert header["format_version"] == fmt.FORMAT_VERSION
    assert header["byte_order"] == sys.byteorder
    assert [e["dtype"] for e in header["storages"]] == ["int8", "float64"]
    assert all(e["offset"] % 64 == 0 for e in header["storages"])
    assert blobs == [bits(a), bits(b)]


# -- sharing -------------------------------------------------------------------------------


@MMAP
def test_views_of_one_tensor_load_over_one_storage(tmp_path, mmap):
    a = jg.arange(12.0)
    v = a.view(3, 4).T
    d = {"a": a, "v": v, "s": a[2:5]}
    jg.save(d, tmp_path / "d.jg")
    out = jg.load(tmp_path / "d.jg", mmap=mmap)
    assert out["a"].storage() is out["v"].storage() is out["s"].storage()
    assert len(split_file(tmp_path / "d.jg")[1]) == 1
    out["s"][0] = -1.0  # element 2 of a, which v shows at [2, 0]
    assert out["a"].tolist()[2] == -1.0 and out["v"].tolist()[2][0] == -1.0
    out["v"][1, 2] = 100.0  # element 9 of a
    assert out["a"].tolist()[9] == 100.0
    for k in d:
        assert out[k].stride() == d[k].stride() and out[k].storage_offset() == d[k].storage_offset()


@MMAP
def test_requires_grad_is_kept_and_loads_as_leaves(tmp_path, mmap):
    w = jg.arange(6.0).requires_grad_()
    h = (w * 2).reshape(2, 3)  # not a leaf: it loads as one, as torch.save's tensors do
    jg.save({"w": w, "h": h, "ids": jg.arange(3), "plain": jg.ones(2)}, tmp_path / "g.jg")
    out = jg.load(tmp_path / "g.jg", mmap=mmap)
    assert out["w"].requires_grad and out["h"].requires_grad
    assert not out["ids"].requires_grad and not out["plain"].requires_grad
    assert out["w"].grad_fn is None and out["h"].grad_fn is None
    (out["w"] * out["h"].reshape(6)).sum().backward()
    assert out["w"].grad.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert out["h"].grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@MMAP
@pytest.mark.parametrize("given", ["both", "first", "second"])
def test_a_tied_weight_loaded_by_assignment_stays_one_parameter(tmp_path, mmap, given):
    """A state dict names a tied weight under each of its keys; adopted (zero-copy), it
    must still be one parameter: one gradient from every use, one optimizer entry."""

    def tied(seed):
        model = jg.nn.Sequential(
            jg.nn.Embedding(5, 3, generator=seed), jg.nn.Linear(3, 5, generator=seed)
        )
        model[1].weight = model[0].weight
        return model

    saved, model = tied(0), tied(1)
    state = saved.state_dict()
    if given != "both":  # (a partial state dict: the other key keeps no stale weight)
        del state["1.weight" if given == "first" else "0.weight"]
    jg.save(state, tmp_path / "tied.jg")
    model.load_state_dict(jg.load(tmp_path / "tied.jg", mmap=mmap), strict=False, assign=True)
    assert model[0].weight is model[1].weight
    np.testing.assert_array_equal(model[0].weight.numpy(), saved[0].weight.numpy())
    assert len(list(model.parameters())) == 2


def test_requires_grad_on_an_integer_tensor_is_a_format_error(tmp_path):
    jg.save({"ids": jg.arange(3)}, tmp_path / "i.jg")
    header, blobs = split_file(tmp_path / "i.jg")
    header["object"]["dict"][0][1]["tensor"]["requires_grad"] = True
    write_file(tmp_path / "i.jg", header, blobs)
    with pytest.raises(FormatError, match="requires_grad True"):
        jg.load(tmp_path / "i.jg")


@MMAP
def test_separate_storages_stay_separate(tmp_path, mmap):
    a, b = jg.arange(4.0), jg.arange(4.0)
    jg.save([a, b, a], tmp_path / "s.jg")
    x, y, z = jg.load(tmp_path / "s.jg", mmap=mmap)
    assert (
        x.storage() is z.storage()
        and x.untyped_storage()._root() is not y.untyped_storage()._root()
    )
    x[0] = 9.0
    assert y.tolist()[0] == 0.0 and z.tolist()[0] == 9.0


@MMAP
def test_several_dtypes_over_the_same_bytes(tmp_path, mmap):
    root = UntypedStorage(64).fill_(0)
    f64 = jg.Tensor(storage_class("float64").from_untyped(root), (8,))
    i32 = jg.Tensor(storage_class("int32").from_untyped(root), (4, 4), (1, 4), 0)
    # A typed storage cut from bytes [2, 34) of the root: unaligned for its dtype.
    i16 = jg.Tensor(storage_class("int16").from_untyped(root.view_bytes(2, 34)), (3,), (5,), 1)
    u8 = jg.Tensor(storage_class("uint8").from_untyped(root.view_bytes(3, 4)), (1,))
    f64.numpy()[:] = np.arange(8.0)
    objs = [f64, i32, i16, u8]
    jg.save(objs, tmp_path / "m.jg")
    out = jg.load(tmp_path / "m.jg", mmap=mmap)
    for loaded, original in zip(out, objs, strict=True):
        assert_same_tensor(loaded, original)
    assert root_groups(out) == [[0, 1, 2, 3]]
    assert out[1].numpy()[1, 0] == 0  # the high half of 0.0
    out[2][0] = -2  # int16 element at bytes 4..5, inside f64[0] and i32[1, 0]
    expected = np.frombuffer(np.int16(-2).tobytes() + b"\0\0", np.int32)[0]
    assert out[1].numpy()[1, 0] == expected and out[0].numpy()[0] != 0.0


@MMAP
def test_mmap_tensors_are_writable_and_the_file_never_changes(tmp_path, mmap):
    jg.save({"w": jg.arange(1000.0).view(10, 100)}, tmp_path / "w.jg")
    before = (tmp_path / "w.jg").read_bytes()
    w = jg.load(tmp_path / "w.jg", mmap=mmap)["w"]
    assert (w.untyped_storage().filename is not None) == mmap
    w.fill_(7.0)
    w[3, 4] = -1.0
    assert w.numpy()[3, 4] == -1.0 and w.numpy()[0, 0] == 7.0
    assert (tmp_path / "w.jg").read_bytes() == before
    assert jg.load(tmp_path / "w.jg", mmap=mmap)["w"].numpy()[0, 0] == 0.0


@st.composite
def views_of_bases(draw):
    """A few base tensors and random views of them: slices, transposes, expands, flips."""
    bases = []
    for i in range(draw(st.integers(1, 3))):
        dtype = draw(st.sampled_from(ALL_DTYPES))
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
        bases.append(jg.from_numpy(sample(dtype, math.prod(shape), seed=i).reshape(shape)))
    views = list(bases)
    for _ in range(draw(st.integers(0, 6))):
        t = draw(st.sampled_from(views))
        op = draw(st.sampled_from(["slice", "transpose", "expand", "flip", "index"]))
        if op == "slice" and t.ndim:
            d = draw(st.integers(0, t.ndim - 1))
            start = draw(st.integers(0, t.shape[d]))
            step = draw(st.sampled_from([1, 2, -1, 3]))
            key = [slice(None)] * t.ndim
            key[d] = slice(start, None, step)
            t = t[tuple(key)]
        elif op == "transpose":
            t = t.permute(draw(st.permutations(range(t.ndim))))
        elif op == "expand":
            d = draw(st.integers(0, t.ndim))
            t = t.unsqueeze(d)
            sizes = [-1] * t.ndim
            sizes[d] = draw(st.integers(0, 3))
            t = t.expand(*sizes)
        elif op == "flip":
            t = t.flip()
        elif op == "index" and t.ndim and t.shape[0]:
            t = t[draw(st.integers(0, t.shape[0] - 1))]
        views.append(t)
    return draw(st.permutations(views))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(views_of_bases(), st.booleans())
def test_random_views_round_trip_with_sharing(views, mmap):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "v.jg")
        jg.save({"views": views, "n": len(views)}, path)
        out = jg.load(path, mmap=mmap)["views"]
    assert len(out) == len(views)
    for loaded, original in zip(out, views, strict=True):
        assert_same_tensor(loaded, original)
    assert root_groups(out) == root_groups(views)


# -- byte order ----------------------------------------------------------------------------


@MMAP
def test_file_of_the_other_byte_order_is_swapped_on_load(tmp_path, mmap):
    order = ">" if OTHER_ORDER == "big" else "<"
    f32 = np.array([1.5, -2.0, np.inf, 3.25], dtype=np.float32)
    c64 = np.array([1 + 2j, -3.5j], dtype=np.complex64)
    f16 = np.array([0.5, 65504.0, -1.0], dtype=np.float16)
    flags = np.array([True, False, True])
    i64 = np.array([1, -2, 2**40], dtype=np.int64)
    blobs = [a.astype(a.dtype.newbyteorder(order)).tobytes() for a in (f32, c64, f16, flags, i64)]
    header = {
        "format_version": 1,
        "byte_order": OTHER_ORDER,
        "alignment": 64,
        "storages": [
            {"dtype": d, "nbytes": len(b), "offset": 0}
            for d, b in zip(
                ["float32", "complex64", "float16", "bool", "int64"], blobs, strict=True
            )
        ],
        "object": {
            "dict": [
                [
                    "f32",
                    tensor_entry(
                        storage=0, storage_nbytes=16, dtype="float32", shape=[2, 2], strides=[1, 2]
                    ),
                ],
                [
                    "c64",
                    tensor_entry(
                        storage=1, storage_nbytes=16, dtype="complex64", shape=[2], strides=[1]
                    ),
                ],
                [
                    "f16",
                    tensor_entry(
                        storage=2, storage_nbytes=6, dtype="float16", shape=[3], strides=[1]
                    ),
                ],
                [
                    "bool",
                    tensor_entry(storage=3, storage_nbytes=3, dtype="bool", shape=[3], strides=[1]),
                ],
                [
                    "i64",
                    tensor_entry(
                        storage=4, storage_nbytes=24, dtype="int64", shape=[2], strides=[2]
                    ),
                ],
                [
                    "i64 tail",
                    tensor_entry(
                        storage=4,
                        storage_byte_offset=8,
                        storage_nbytes=16,
                        dtype="int64",
                        offset=1,
                        shape=[],
                        strides=[],
                    ),
                ],
            ]
        },
    }
    write_file(tmp_path / "o.jg", header, blobs)
    out = jg.load(tmp_path / "o.jg", mmap=mmap)
    assert out["f32"].numpy().tolist() == f32.reshape(2, 2, order="F").tolist()
    assert out["c64"].numpy().tolist() == c64.tolist()
    assert out["f16"].numpy().tolist() == f16.tolist()
    assert out["bool"].numpy().tolist() == flags.tolist()
    assert out["i64"].tolist() == [1, 2**40] and out["i64 tail"].item() == 2**40
    assert out["i64"].untyped_storage()._root() is out["i64 tail"].untyped_storage()._root()


def test_other_byte_order_with_conflicting_word_sizes_is_refused(tmp_path):
    header = {
        "format_version": 1,
        "byte_order": OTHER_ORDER,
        "alignment": 64,
        "storages": [{"dtype": "int32", "nbytes": 8, "offset": 0}],
        "object": {
            "list": [
                tensor_entry(storage_nbytes=8, dtype="int32", shape=[2], strides=[1]),
                tensor_entry(storage_nbytes=8, dtype="int16", shape=[4], strides=[1]),
            ]
        },
    }
    write_file(tmp_path / "c.jg", header, [bytes(range(8))])
    with pytest.raises(FormatError, match="byte order"):
        jg.load(tmp_path / "c.jg")


# -- bad input when saving -----------------------------------------------------------------


@pytest.mark.parametrize(
    "obj, where, type_name",
    [
        (np.zeros(3), "obj", "ndarray"),
        ({"a": [1, {2}]}, "obj['a'][1]", "set"),
        ({"w": (jg.arange(2), object())}, "obj['w'][1]", "object"),
        ([jg.FloatStorage(3)], "obj[0]", "FloatStorage"),
        ({"x": np.float64(1.0)}, "obj['x']", "float64"),
        ({"c": 1j}, "obj['c']", "complex"),
        ({(1, 2): 3}, "obj", "tuple"),
        ({"k": {b"bytes": 1}}, "obj['k']", "bytes"),
    ],
)
def test_unsupported_objects_raise_and_write_nothing(tmp_path, obj, where, type_name):
    path = tmp_path / "x.jg"
    path.write_bytes(b"old contents")
    with pytest.raises(TypeError, match=type_name) as info:
        jg.save(obj, path)
    assert where in str(info.value)
    assert path.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["x.jg"]


def test_a_container_holding_itself_is_refused(tmp_path):
    loop = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="contains itself"):
        jg.save(loop, tmp_path / "l.jg")
    assert os.listdir(tmp_path) == []


def test_bad_path_types():
    with pytest.raises(TypeError, match="path"):
        jg.save(jg.arange(2), 3)
    with pytest.raises(TypeError, match="path"):
        jg.load(None)


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_a_crash_while_writing_leaves_the_old_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "ckpt.jg"
    jg.save({"v": jg.arange(3.0)}, path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(fmt.os, failing, boom)
    with pytest.raises(OSError, match="disk on fire"):
        jg.save({"v": jg.arange(100.0)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.jg"]
    assert jg.load(path)["v"].tolist() == [0.0, 1.0, 2.0]


def test_save_replaces_an_existing_file(tmp_path):
    path = tmp_path / "r.jg"
    jg.save(jg.arange(3), path)
    jg.save(jg.arange(5), str(path))
    assert jg.load(path).tolist() == [0, 1, 2, 3, 4]
    assert os.listdir(tmp_path) == ["r.jg"]


# -- bad files when loading ----------------------------------------------------------------


@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "good.jg"
    jg.save({"a": jg.arange(10.0), "b": jg.arange(7, dtype="int16")[1:]}, path)
    return path


@MMAP
def test_missing_file(tmp_path, mmap):
    with pytest.raises(FileNotFoundError, match="nope.jg"):
        jg.load(tmp_path / "nope.jg", mmap=mmap)


@MMAP
@pytest.mark.parametrize("cut", [0, 3, 8, 12, 16, 40, "header", "data", -1])
def test_truncated_files(good_file, mmap, cut):
    raw = good_file.read_bytes()
    header_end = 16 + struct.unpack("<Q", raw[8:16])[0]
    keep = {"header": header_end - 1, "data": header_end + 40, -1: len(raw) - 1}.get(cut, cut)
    good_file.write_bytes(raw[:keep])
    with pytest.raises(FormatError, match="truncated") as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


@MMAP
def test_flipped_magic(good_file, mmap):
    raw = bytearray(good_file.read_bytes())
    raw[0] ^= 0xFF
    good_file.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="not a jitgrad file") as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


def test_not_a_jitgrad_file_at_all(tmp_path):
    (tmp_path / "model.pkl").write_bytes(b"\x80\x04\x95 pickle bytes")
    with pytest.raises(FormatError, match="not a jitgrad file"):
        jg.load(tmp_path / "model.pkl")


@MMAP
@pytest.mark.parametrize("version", [2, 0, "1", None])
def test_unknown_format_version(good_file, mmap, version):
    header, blobs = split_file(good_file)
    header["format_version"] = version
    write_file(good_file, header, blobs)
    with pytest.raises(FormatError, match="version") as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


@MMAP
@pytest.mark.parametrize("damage", ["brace", "utf8", "not an object", "no object"])
def test_corrupted_json(good_file, mmap, damage):
    raw = bytearray(good_file.read_bytes())
    if damage == "brace":
        raw[16] = ord("[")
    elif damage == "utf8":
        raw[20] = 0xFF
    elif damage == "not an object":
        length = struct.unpack("<Q", raw[8:16])[0]
        raw[16 : 16 + length] = b"[1, 2]".ljust(length)
    else:
        header, blobs = split_file(good_file)
        del header["object"]
        write_file(good_file, header, blobs)
        raw = bytearray(good_file.read_bytes())
    good_file.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="corrupt header") as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


TENSOR_DAMAGE = {
    "storage index": ("storage", 5, "out of bounds"),
    "negative storage": ("storage", -1, "out of bounds"),
    "shape too big": ("shape", [11], "out of bounds"),
    "negative stride": ("strides", [-1], "out of bounds"),
    "offset": ("offset", 10, "out of bounds"),
    "negative offset": ("offset", -1, "out of bounds"),
    "byte range": ("storage_byte_offset", 8, "out of bounds"),
    "ragged bytes": ("storage_nbytes", 79, "out of bounds"),
    "huge": ("shape", [2**64], "out of bounds"),
    "dtype": ("dtype", "float128", "unknown dtype"),
    "dtype type": ("dtype", 7, "unknown dtype"),
    "strides length": ("strides", [1, 1], "corrupt header"),
    "shape type": ("shape", "10", "corrupt header"),
    "float shape": ("shape", [10.0], "corrupt header"),
    "bool offset": ("offset", True, "corrupt header"),
    "missing key": ("strides", None, "corrupt header"),
    "unknown key": ("grad", 1, "corrupt header"),
    "requires_grad type": ("requires_grad", 1, "corrupt header"),
    "requires_grad false spelled out": ("requires_grad", "false", "corrupt header"),
}


@MMAP
@pytest.mark.parametrize("case", TENSOR_DAMAGE)
def test_bad_tensor_entries(good_file, mmap, case):
    key, value, message = TENSOR_DAMAGE[case]
    header, blobs = split_file(good_file)
    entry = header["object"]["dict"][0][1]["tensor"]  # "a": 10 float64 over storage 0
    assert entry["shape"] == [10]
    if value is None:
        del entry[key]
    else:
        entry[key] = value
    write_file(good_file, header, blobs)
    with pytest.raises(FormatError, match=message) as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


STORAGE_DAMAGE = {
    "past the end": ("nbytes", 10**6, "truncated"),
    "negative size": ("nbytes", -8, "out of bounds"),
    "unknown dtype": ("dtype", "quaternion", "unknown dtype"),
    "missing key": ("dtype", None, "corrupt header"),
    "inside the header": ("offset", 16, "out of bounds"),
    "overlap": ("offset", "overlap", "overlap"),
}


@MMAP
@pytest.mark.parametrize("case", STORAGE_DAMAGE)
def test_bad_storage_entries(good_file, mmap, case):
    key, value, message = STORAGE_DAMAGE[case]
    header, blobs = split_file(good_file)
    entries = header["storages"]
    if key != "offset":
        if value is None:
            del entries[0][key]
        else:
            entries[0][key] = value
        write_file(good_file, header, blobs)
    else:  # patch the header in place, so that the storages stay where they are
        if value == "overlap":
            entries[1]["offset"] = entries[0]["offset"] + 64  # inside storage 0's 80 bytes
        else:
            entries[0]["offset"] = value
        raw = good_file.read_bytes()
        length = struct.unpack("<Q", raw[8:16])[0]
        text = json.dumps(header, separators=(",", ":")).encode()
        assert len(text) <= length
        good_file.write_bytes(raw[:16] + text.ljust(length) + raw[16 + length :])
    with pytest.raises(FormatError, match=message) as info:
        jg.load(good_file, mmap=mmap)
    assert str(good_file) in str(info.value)


@pytest.mark.parametrize(
    "obj",
    [
        {"set": [1, 2]},
        {"float": "1.5"},
        {"dict": [[{"list": [1]}, 2]]},
        {"dict": [[1, 2, 3]]},
        {"list": {"a": 1}},
        {"list": [1], "tuple": [2]},
        {"tensor": [1, 2]},
        [1, 2],
    ],
)
def test_bad_object_tags(good_file, obj):
    header, blobs = split_file(good_file)
    header["object"] = {"list": [header["object"], obj]}
    write_file(good_file, header, blobs)
    with pytest.raises(FormatError, match="corrupt header|tensor"):
        jg.load(good_file)


@pytest.mark.parametrize("depth", [500, 100_000])
def test_deeply_nested_header_is_an_error_not_a_crash(tmp_path, depth):
    deep = '{"list":[' * depth + "]}" * depth
    body = (
        '{"format_version":1,"byte_order":"little","storages":[],"object":{"list":['
        + deep
        + ',{"set":1}]}}'
    ).encode()
    (tmp_path / "deep.jg").write_bytes(fmt.MAGIC + struct.pack("<Q", len(body)) + body)
    with pytest.raises(FormatError, match="corrupt header"):
        jg.load(tmp_path / "deep.jg")


def test_saving_over_the_file_a_tensor_maps(tmp_path):
    path = tmp_path / "m.jg"
    jg.save({"w": jg.arange(4.0)}, path)
    state = jg.load(path, mmap=True)
    state["w"][0] = 10.0
    jg.save(state, path)  # the old mapping keeps the old file alive: no torn reads
    assert state["w"].tolist() == [10.0, 1.0, 2.0, 3.0]
    assert jg.load(path)["w"].tolist() == [10.0, 1.0, 2.0, 3.0]


def test_a_tensor_outside_its_resized_storage_is_refused(tmp_path):
    t = jg.arange(10.0)
    t._storage.untyped()._under_tensors = False  # what resize_ would refuse: a way past it
    t._storage.resize_(2)
    with pytest.raises(ValueError, match=r"obj\['t'\].*outside a storage of size 2"):
        jg.save({"t": t}, tmp_path / "r.jg")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("module", ["jitgrad.io", "jitgrad.io.serialize"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted and not result.failed


def test_more_elements_than_int64_indices_is_a_format_error(good_file):
    header, blobs = split_file(good_file)
    entry = header["object"]["dict"][0][1]["tensor"]
    entry["shape"], entry["strides"] = [2**40, 2**40], [0, 0]  # in bounds, 2^80 elements
    write_file(good_file, header, blobs)
    with pytest.raises(FormatError, match="more than"):
        jg.load(good_file)


def test_load_reads_into_memory_unless_asked_to_map(tmp_path):
    path = tmp_path / "w.jg"
    jg.save({"w": jg.zeros(1024)}, path)
    loaded, mapped = jg.load(path), jg.load(path, mmap=True)
    other = tmp_path / "other.jg"
    jg.save({"w": jg.ones(1024)}, other)
    with open(path, "r+b") as f:  # overwritten in place, as `cp other.jg w.jg` does
        f.write(other.read_bytes())
    assert loaded["w"].tolist()[:3] == [0.0, 0.0, 0.0]
    assert mapped["w"].tolist()[:3] == [1.0, 1.0, 1.0]  # the documented cost of mapping


def test_saving_keeps_the_files_mode_and_writes_through_a_link(tmp_path):
    path = tmp_path / "private.jg"
    jg.save(jg.ones(2), path)
    path.chmod(0o600)
    jg.save(jg.zeros(2), path)
    assert path.stat().st_mode & 0o777 == 0o600
    link = tmp_path / "latest.jg"
    link.symlink_to(path)
    jg.save(jg.arange(3.0), link)
    assert link.is_symlink() and jg.load(path).tolist() == [0.0, 1.0, 2.0]
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["latest.jg", "private.jg"]


def test_unwritable_paths_raise_naming_the_path_asked_for(tmp_path):
    t = jg.arange(3.0)
    missing = tmp_path / "no-such-dir" / "x.jg"
    with pytest.raises(FileNotFoundError) as info:
        jg.save(t, missing)
    assert info.value.filename == str(missing) and ".tmp" not in str(info.value)
    with pytest.raises(IsADirectoryError) as info:
        jg.save(t, tmp_path)
    assert info.value.filename == str(tmp_path) and ".tmp" not in str(info.value)
    with pytest.raises(FileNotFoundError, match="empty path"):
        jg.save(t, "")
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind
