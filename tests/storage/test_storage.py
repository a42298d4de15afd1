"""Storages against the Torch7 and PyTorch storage docs, and against numpy."""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.dtypes import ALL_DTYPES
from jitgrad.storage import storage_class

STORAGE_NAMES = [
    "BoolStorage",
    "ByteStorage",
    "CharStorage",
    "ShortStorage",
    "IntStorage",
    "LongStorage",
    "HalfStorage",
    "FloatStorage",
    "DoubleStorage",
    "ComplexFloatStorage",
    "ComplexDoubleStorage",
]


def sample_values(np_dtype, n=7):
    values = np.array([0, 1, -2, 3.5, -0.0, 100, 7], dtype=np.float64)[:n]
    if np.dtype(np_dtype).kind == "c":
        return (values + 1j * values[::-1]).astype(np_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values.astype(np_dtype)


# -- Torch7's Storage documentation ------------------------------------------------------


def test_torch7_table_constructor_and_repr():
    x = jg.IntStorage([1, 2, 3, 4])
    assert repr(x) == " 1\n 2\n 3\n 4\n[jitgrad.IntStorage of size 4]"


def test_torch7_view_at_offset_with_fill_pattern():
    x = jg.DoubleStorage(10)
    y = jg.DoubleStorage(x, 2, 5)  # Torch7's offset 3 (1-based) is 2 here
    x.fill_(0)
    y.fill_(1)
    assert x.tolist() == [0, 0, 1, 1, 1, 1, 1, 0, 0, 0]
    y[0] = 9
    assert x[2] == 9
    assert y.data_ptr() == x.data_ptr() + 2 * 8


def test_torch7_copy_between_types():
    x = jg.IntStorage(10).fill_(1)
    y = jg.DoubleStorage(10).copy_(x)
    assert y.tolist() == [1.0] * 10 and isinstance(y, jg.DoubleStorage)


def test_torch7_resize_then_copy():
    x = jg.DoubleStorage(10).fill_(1)
    y = jg.DoubleStorage().resize_(x.size()).copy_(x)
    assert y.tolist() == [1.0] * 10


def test_torch7_string():
    x = jg.CharStorage().string("blah blah")
    assert x.tolist() == [98, 108, 97, 104, 32, 98, 108, 97, 104]
    assert x.string() == "blah blah"
    assert repr(x).endswith("[jitgrad.CharStorage of size 9]")
    assert "\n  98\n 108\n" in "\n" + repr(x)


def test_torch7_hello_file_private_mapping_never_changes_the_file(tmp_path):
    path = tmp_path / "hello.txt"
    path.write_bytes(b"Hello World\n")
    x = jg.CharStorage.from_file(path)
    assert x.tolist() == [72, 101, 108, 108, 111, 32, 87, 111, 114, 108, 100, 10]
    assert x.string() == "Hello World\n"
    assert x.fill_(42).string() == "*" * 12
    assert path.read_bytes() == b"Hello World\n"
    assert x.filename == str(path) and not x.is_shared()


def test_torch7_hello_file_shared_mapping_writes_the_file(tmp_path):
    path = tmp_path / "hello.txt"
    path.write_bytes(b"Hello World\n")
    x = jg.CharStorage.from_file(path, shared=True)
    assert x.string() == "Hello World\n"
    x.fill_(42)
    assert path.read_bytes() == b"*" * 12
    assert x.is_shared()


def test_default_storage_follows_default_dtype():
    assert type(jg.Storage(3)) is jg.DoubleStorage
    jg.set_default_dtype(jg.float32)
    try:
        assert type(jg.Storage(3)) is jg.FloatStorage
        assert isinstance(jg.Storage([1, 2]), jg.Storage)
    finally:
        jg.set_default_dtype(jg.float64)


# -- PyTorch's storage documentation -----------------------------------------------------


def test_pytorch_untyped_storage_of_a_tensor():
    t = jg.ones(3, dtype=jg.float32)
    s0 = t.untyped_storage()
    assert s0.tolist() == [0, 0, 128, 63] * 3 and s0.nbytes() == 12
    s1 = s0.clone()
    s1.fill_(0)
    assert t.tolist() == [1.0, 1.0, 1.0]  # the clone does not touch t
    s0.fill_(0)
    assert t.tolist() == [0.0, 0.0, 0.0]


def test_pytorch_from_file_sizes_in_elements(tmp_path):
    path = tmp_path / "data.bin"
    s = jg.FloatStorage.from_file(path, shared=True, size=6)
    assert path.stat().st_size == 24
    s.copy_(jg.FloatStorage([1, 2, 3, 4, 5, 6]))
    del s
    assert np.fromfile(path, np.float32).tolist() == [1, 2, 3, 4, 5, 6]
    assert jg.FloatStorage.from_file(path).tolist() == [1, 2, 3, 4, 5, 6]
    assert jg.DoubleStorage.from_file(path).size() == 3
    assert jg.FloatStorage.from_file(path, size=2).tolist() == [1, 2]


@pytest.mark.parametrize("shared", [False, True])
def test_mapping_a_directory_is_an_error_naming_it(tmp_path, shared):
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        jg.FloatStorage.from_file(tmp_path, shared=shared)


# -- storage methods ---------------------------------------------------------------------


@pytest.mark.parametrize("name", STORAGE_NAMES)
def test_every_storage_class_exists_with_its_dtype(name):
    cls = getattr(jg, name)
    s = cls(5)
    assert len(s) == s.size() == 5
    assert s.nbytes() == 5 * s.element_size() == 5 * cls.dtype.itemsize
    assert s.array.dtype == cls.dtype.numpy
    assert repr(cls([])).endswith(f"[jitgrad.{name} of size 0]")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_sequence_fill_get_set_tolist(dtype):
    values = sample_values(dtype.numpy)
    s = storage_class(dtype)(values.tolist())
    np.testing.assert_array_equal(s.array, values)
    assert s.tolist() == values.tolist()
    assert s[-1] == values[-1] and s[0] == values[0]
    s[1] = values[2]
    assert s[1] == values[2]
    s.fill_(values[3])
    assert s.tolist() == [values[3].item()] * len(values)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_large_fills_of_a_range_match_numpy(dtype, monkeypatch):
    """Large fills run in parallel; a value that is one byte repeated (0, -1, any bool or
    byte) goes to memset, others to a store loop. Either way only the range is written."""
    from jitgrad._config import config

    monkeypatch.setattr(config, "parallel_threshold", 64)  # large: from 256 elements
    values = sample_values(dtype.numpy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minus_one = np.array(-1).astype(dtype.numpy)[()]  # all bytes 0xff for integers
    for value in (values[0], values[3], values[4], minus_one):
        n = 1000 + 7
        t = jg.tensor(np.resize(values, n))
        expected = t.numpy().copy()
        expected[3:-2] = value
        t[3:-2].fill_(value)
        np.testing.assert_array_equal(t.numpy(), expected)
        if dtype.is_floating_point:  # (-0.0 is no repeated byte: its sign survives)
            np.testing.assert_array_equal(np.signbit(t.numpy()), np.signbit(expected))


@pytest.mark.parametrize("src", ALL_DTYPES, ids=lambda d: d.name)
def test_copy_casts_like_numpy_for_every_pair(src):
    values = sample_values(src.numpy)
    a = storage_class(src)(values.tolist())
    for dst in ALL_DTYPES:
        b = storage_class(dst)(len(values)).copy_(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = values.astype(dst.numpy)
        np.testing.assert_array_equal(b.array, expected, err_msg=f"{src.name}->{dst.name}")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_byteswap_matches_numpy(dtype):
    values = sample_values(dtype.numpy)
    s = storage_class(dtype)(values.tolist())
    s.byteswap()
    np.testing.assert_array_equal(s.array.view(np.uint8), values.byteswap().view(np.uint8))
    s.byteswap()
    np.testing.assert_array_equal(s.array, values)


def test_casts_return_self_or_a_converted_copy():
    s = jg.DoubleStorage([1.5, -2.0, 0.0])
    assert s.double() is s
    assert isinstance(s.float(), jg.FloatStorage) and s.float().tolist() == [1.5, -2.0, 0.0]
    assert s.int().tolist() == [1, -2, 0]
    assert s.bool().tolist() == [True, True, False]
    assert s.half().tolist() == [1.5, -2.0, 0.0]
    assert s.byte().tolist() == [1, 254, 0]
    assert s.char().tolist() == [1, -2, 0]
    assert s.short().tolist() == s.long().tolist() == [1, -2, 0]


def test_clone_is_independent_and_untyped_shares():
    s = jg.FloatStorage([1, 2, 3])
    c = s.clone()
    c[0] = 10
    assert s[0] == 1
    u = s.untyped()
    assert u.nbytes() == 12 and u.data_ptr() == s.data_ptr()
    u.fill_(0)
    assert s.tolist() == [0, 0, 0]


def test_resize_keeps_prefix_and_refuses_views_and_mappings(tmp_path):
    s = jg.LongStorage([1, 2, 3])
    s.resize_(5)
    assert s.tolist()[:3] == [1, 2, 3] and s.size() == 5
    s.resize_(2)
    assert s.tolist() == [1, 2]
    view = jg.LongStorage(s, 1, 1)
    with pytest.raises(RuntimeError, match="view"):
        view.resize_(4)
    with pytest.raises(RuntimeError, match="views of it exist"):
        s.resize_(4)
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(8))
    with pytest.raises(RuntimeError, match="maps a file"):
        jg.LongStorage.from_file(path).resize_(3)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16, np.bool_])
def test_a_wrapped_arrays_storage_shares_its_memory_and_never_resizes(dtype):
    a = np.arange(6).astype(dtype)
    t = jg.from_numpy(a)
    storage = t.storage()
    t[1] = 0
    a[2] = 0
    assert t.tolist() == a.tolist() and t.data_ptr() == a.ctypes.data
    for _ in range(2):  # before and after its untyped storage is asked for
        with pytest.raises(RuntimeError, match="wraps a numpy array"):
            storage.resize_(3)
        with pytest.raises(RuntimeError, match="owns its bytes"):
            storage.share_memory_()
        assert storage.nbytes() == a.nbytes and storage.untyped().data_ptr() == a.ctypes.data
    (t * 0 + 1).numpy()  # (a kernel or numpy call reads it after that)
    t += 1 if dtype is not np.bool_ else True
    assert t.tolist() == a.tolist() and a.tolist() != np.arange(6).astype(dtype).tolist()


def test_string_only_on_byte_storages_and_latin1():
    assert jg.ByteStorage().string(b"\x00\xffab").tolist() == [0, 255, 97, 98]
    assert jg.ByteStorage().string("\xe9").string() == "\xe9"
    assert not hasattr(jg.FloatStorage(1), "string")
    with pytest.raises(ValueError, match="U\\+00FF"):
        jg.CharStorage().string("snow \u2603")
    with pytest.raises(TypeError):
        jg.CharStorage().string(12)


def test_long_repr_is_abbreviated():
    r = repr(jg.LongStorage(list(range(100))))
    assert " 0\n" in r and " 99\n" in r and "...\n" in r and " 50\n" not in r
    assert r.endswith("[jitgrad.LongStorage of size 100]")


def test_retain_and_free_reference_count_is_thread_safe():
    s = jg.FloatStorage(4).fill_(1)

    def churn():
        for _ in range(1000):
            s.retain()
            s.free()

    threads = [threading.Thread(target=churn) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.untyped().refcount() == 1 and s.tolist() == [1, 1, 1, 1]
    s.retain()
    s.free()
    s.free()
    with pytest.raises(RuntimeError, match="freed"):
        s.tolist()
    with pytest.raises(RuntimeError, match="freed"):
        s.free()


def test_free_of_a_tensor_storage_raises_instead_of_reading_freed_memory():
    t = jg.zeros(4)
    t.storage().free()
    with pytest.raises(RuntimeError, match="freed"):
        t.contiguous().tolist()


# -- shared memory -----------------------------------------------------------------------


def test_shared_memory_is_attachable_from_another_process():
    s = jg.IntStorage.new_shared(4).fill_(0)
    assert s.is_shared() and s.shared_name
    code = (
        "import jitgrad as jg, sys\n"
        "t = jg.IntStorage.from_shared(sys.argv[1])\n"
        "t[2] = 7\n"
        "print(t.size())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, s.shared_name], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "4"
    assert s.tolist() == [0, 0, 7, 0]
    # The attaching process exiting must not have unlinked the segment.
    assert jg.IntStorage.from_shared(s.shared_name, size=4).tolist() == [0, 0, 7, 0]


def test_attaching_in_the_creating_process_leaves_the_segment_tracked():
    code = (
        "import jitgrad as jg\n"
        "m = jg.FloatStorage.new_shared(4)\n"
        "n = jg.FloatStorage.from_shared(m.shared_name)\n"
        "n[0] = 3.0\n"
        "assert m[0] == 3.0\n"
        "print(m.shared_name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Traceback" not in out.stderr and "KeyError" not in out.stderr, out.stderr
    assert not os.path.exists("/dev/shm/" + out.stdout.strip().lstrip("/"))  # unlinked


def test_a_process_exiting_while_its_arrays_view_shared_memory_is_quiet():
    code = (
        "import jitgrad as jg\n"
        "t = jg.arange(4.0)\n"
        "t.storage().share_memory_()\n"
        "view = t.numpy()  # still exporting the mapping at exit\n"
        "print(t.storage().shared_name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr == ""
    assert not os.path.exists("/dev/shm/" + out.stdout.strip().lstrip("/"))  # unlinked


def test_share_memory_moves_bytes_and_keeps_values():
    s = jg.DoubleStorage([1, 2, 3])
    assert not s.is_shared()
    assert s.share_memory_() is s
    assert s.is_shared() and s.tolist() == [1, 2, 3]
    other = jg.DoubleStorage.from_shared(s.shared_name)
    other[0] = 5
    assert s[0] == 5
    with pytest.raises(RuntimeError, match="owns its bytes"):
        jg.from_numpy(np.zeros(3)).storage().share_memory_()


def test_attach_to_missing_segment_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="no_such_jitgrad_segment"):
        jg.FloatStorage.from_shared("no_such_jitgrad_segment")


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: jg.FloatStorage(-1), ValueError, "non-negative"),
        (lambda: jg.FloatStorage(2.5), TypeError, "size, a sequence or a storage"),
        (lambda: jg.FloatStorage("abc"), TypeError, "str"),
        (lambda: jg.FloatStorage([[1, 2], [3, 4]]), ValueError, "one-dimensional"),
        (lambda: jg.ByteStorage([300]), OverflowError, "300"),
        (lambda: jg.FloatStorage([1j]), TypeError, "complex"),
        (lambda: jg.FloatStorage(jg.DoubleStorage(3), 0, 1), TypeError, "same type"),
        (lambda: jg.FloatStorage(jg.FloatStorage(3), 2, 2), ValueError, "out of bounds"),
        (lambda: jg.FloatStorage(jg.FloatStorage(3), -1), ValueError, "non-negative"),
        (lambda: jg.FloatStorage(3)[3], IndexError, "out of range"),
        (lambda: jg.FloatStorage(3)[-4], IndexError, "out of range"),
        (lambda: jg.FloatStorage(3)[1.0], TypeError, "integers"),
        (lambda: jg.FloatStorage(3).copy_(jg.FloatStorage(4)), ValueError, "equal size"),
        (lambda: jg.FloatStorage(3).copy_([1, 2, 3]), TypeError, "storage"),
        (lambda: jg.ByteStorage(3).fill_(256), OverflowError, "256"),
        (lambda: jg.FloatStorage(3).resize_(-2), ValueError, "non-negative"),
        (lambda: jg.FloatStorage.from_file("/nonexistent/dir/x.bin"), FileNotFoundError, "x.bin"),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_private_mapping_of_a_short_file_is_an_error(tmp_path):
    path = tmp_path / "short.bin"
    path.write_bytes(bytes(10))
    with pytest.raises(ValueError, match="short.bin.*10 bytes"):
        jg.FloatStorage.from_file(path, size=3)
    assert path.stat().st_size == 10


def test_byte_views_are_bounds_checked_and_pin_their_base():
    u = jg.UntypedStorage(10)
    for start, stop in [(5, 100), (-3, 10), (8, 2)]:
        with pytest.raises(ValueError, match="outside a storage of 10 bytes"):
            u.view_bytes(start, stop)
    view = u.view_bytes(2, 6)
    with pytest.raises(RuntimeError, match="views of it exist"):
        u.share_memory_()
    assert view.nbytes() == 4


def test_large_freed_buffers_are_reused_unless_a_view_lives():
    from jitgrad.storage.buffers import pool

    n = (pool.MIN_BYTES // 4) * 2
    a = jg.empty(n, dtype=jg.float32)
    address = a.data_ptr()
    del a
    b = jg.empty(n, dtype=jg.float32)
    assert b.data_ptr() == address  # the pages are already faulted in
    view = b.numpy()
    del b
    c = jg.empty(n, dtype=jg.float32)
    assert c.data_ptr() != address  # a numpy view still uses that memory
    view[:] = 1.0
    c.fill_(2.0)
    assert (view == 1.0).all()  # writing c did not touch the view's memory
    jg.empty_cache()
    assert pool.held == 0


@pytest.mark.parametrize("dst, src", [(1, 0), (0, 1)], ids=["forward", "backward"])
def test_copy_between_overlapping_views_of_one_storage(dst, src):
    values = np.arange(10.0)
    s = jg.DoubleStorage(values.tolist())
    jg.DoubleStorage(s, dst, 9).copy_(jg.DoubleStorage(s, src, 9))
    values[dst : dst + 9] = values[src : src + 9].copy()  # numpy's x[1:] = x[:-1]
    assert s.tolist() == values.tolist()


def _byteswap(s):
    # an untyped storage is told the element type whose bytes to reverse
    return s.byteswap(jg.int16) if isinstance(s, jg.UntypedStorage) else s.byteswap()


STORAGE_WRITES = {
    "fill_": lambda s: s.fill_(1),
    "setitem": lambda s: s.__setitem__(0, 1),
    "copy_": lambda s: s.copy_(s.clone()),
    "byteswap": _byteswap,
    "string": lambda s: s.string("abcd"),
}


@pytest.mark.parametrize(
    "write, kind",
    [
        (w, k)
        for w in sorted(STORAGE_WRITES)
        for k in ("typed", "untyped", "view")
        if (w, k) != ("string", "untyped")
    ],  # (string() is a typed byte storage's)
)
def test_writes_to_a_read_only_storage_raise_one_clear_error(write, kind):
    a = np.arange(4, dtype=np.uint8)
    a.flags.writeable = False
    storage, name = jg.from_numpy(a).storage(), "ByteStorage"
    if kind == "untyped":
        storage, name = storage.untyped(), "UntypedStorage"
    elif kind == "view":
        storage = jg.ByteStorage(storage, 1, 2)
    with pytest.raises(ValueError, match=f"{name} is read-only"):
        STORAGE_WRITES[write](storage)
    assert a.tolist() == [0, 1, 2, 3]
