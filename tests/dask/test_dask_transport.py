"""jitgrad's Dask serializer: tensors round-trip through distributed's protocol as a
header and one raw frame over their own memory, never pickled."""

import numpy as np
import pytest
from distributed.protocol import deserialize, dumps, loads, serialize, to_serialize

import jitgrad as jg
import jitgrad.dask  # noqa: F401  (registers the serializer)
from jitgrad.dtypes import ALL_DTYPES
from jitgrad.strided import layout


def round_trip(t):
    header, frames = serialize(t, serializers=["dask"], on_error="raise")
    assert header["serializer"] == "dask"
    return deserialize(header, frames), header, frames


def values(dtype, shape):
    raw = np.random.default_rng(0).standard_normal(shape) * 10
    return jg.tensor(raw.astype(dtype.numpy) if dtype.kind != "c" else (raw + 1j * raw))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips(dtype):
    t = values(dtype, (3, 5)).astype(dtype)
    got, _, frames = round_trip(t)
    assert type(got) is jg.Tensor and got.dtype == dtype and got.shape == (3, 5)
    np.testing.assert_array_equal(got.numpy(), t.numpy())
    assert frames[0].nbytes == t.nbytes


def test_contiguous_frame_is_the_tensor_memory():
    t = jg.arange(24.0, dtype=jg.float32).reshape(4, 6)
    _, _, (frame,) = round_trip(t)
    assert isinstance(frame, memoryview)
    assert np.frombuffer(frame, np.uint8).ctypes.data == t.data_ptr()
    t[0, 0] = 100.0  # the frame is the tensor's memory, not a copy of it
    assert np.frombuffer(frame, np.float32)[0] == 100.0


VIEWS = {  # name -> (view, elements its frame holds)
    "rows": (lambda a: a[2:5], 24),
    "columns": (lambda a: a[:, 1:7], 46),
    "transpose": (lambda a: a.T, 48),
    "flipped": (lambda a: a.flip(0)[:, ::-1], 48),
    "every other": (lambda a: a[:, ::2], 47),
    "broadcast": (lambda a: a[1].expand(5, 8), 8),
    "scalar": (lambda a: a[2, 3, ...], 1),  # (a 0-d view; a[2, 3] is a copy)
    # 6 x 2 elements spread over 43, 2 x 2 over 29: compact copies.
    "narrow": (lambda a: a[:, 1:3], 12),
    "sparse": (lambda a: a[::3, ::4], 4),
    "empty": (lambda a: a[3:3], 0),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_send_only_the_bytes_they_cover(name):
    base = jg.arange(6 * 8, dtype=jg.int32).reshape(6, 8)
    view, elements = VIEWS[name]
    t = view(base)
    got, header, (frame,) = round_trip(t)
    np.testing.assert_array_equal(got.numpy(), t.numpy())
    assert got.shape == t.shape and frame.nbytes == 4 * elements
    if name not in ("narrow", "sparse", "empty"):  # the view's own bytes, its strides kept
        lowest, _ = layout.extent(t.shape, t.stride(), t.storage_offset())
        assert np.frombuffer(frame, np.uint8).ctypes.data == base.data_ptr() + 4 * lowest
        assert got.stride() == t.stride()


def test_received_tensors_are_writable_and_keep_requires_grad():
    t = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    header, frames = serialize(t, serializers=["dask"])
    got = deserialize(header, [bytes(frames[0])])  # a read-only frame: copied once
    assert got.requires_grad and got.is_leaf
    got.detach()[0] = 7.0
    assert got.tolist() == [7.0, 2.0, 3.0] and t.tolist() == [1.0, 2.0, 3.0]
    misaligned = bytearray(25)[1:]
    misaligned[:] = bytes(frames[0])
    assert deserialize(header, [memoryview(misaligned)]).tolist() == [1.0, 2.0, 3.0]


def test_a_message_carries_tensors_without_pickling_them(monkeypatch):
    from distributed.protocol import pickle as protocol_pickle

    pickled = []
    real = protocol_pickle.dumps

    def watch(obj, *args, **kwargs):
        pickled.append(type(obj))
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(protocol_pickle, "dumps", watch)
    t = jg.arange(1000.0)
    message = {"op": "data", "x": to_serialize(t), "y": to_serialize(t[10:20])}
    frames = dumps(message)
    assert jg.Tensor not in pickled
    got = loads(frames)
    np.testing.assert_array_equal(got["x"].numpy(), t.numpy())
    np.testing.assert_array_equal(got["y"].numpy(), np.arange(10.0, 20.0))
    assert sum(len(f) for f in frames) < (1000 + 10) * 8 + 1000  # the bytes, and small headers
