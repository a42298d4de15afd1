"""numpy's file formats through jitgrad: files interchangeable with numpy both ways."""

import io
import os

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.io import FormatError

DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
LAYOUTS = {
    "0-d": lambda b: b[1, 2, ...],
    "empty": lambda b: b[:0],
    "contiguous": lambda b: b,
    "transposed": lambda b: b.T,
    "strided": lambda b: b[::-2, 1::2],
}


def array_of(dtype, layout):
    base = (np.arange(24) * 7 % 11 - 3).reshape(4, 6).astype(dtype)
    if base.dtype.kind == "c":
        base = base + 1j * base[::-1]
    return LAYOUTS[layout](base)


def assert_same(tensor, array):
    assert isinstance(tensor, jg.Tensor)
    got = tensor.numpy()
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)


# -- .npy round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_npy_written_by_jitgrad_loads_in_numpy_and_back(tmp_path, dtype, layout):
    a = array_of(dtype, layout)
    jg.save(tmp_path / "t.npy", jg.from_numpy(a))
    from_numpy_load = np.load(tmp_path / "t.npy")
    assert from_numpy_load.dtype == a.dtype and from_numpy_load.shape == a.shape
    np.testing.assert_array_equal(from_numpy_load, a)
    np.save(tmp_path / "n.npy", a)
    assert_same(jg.load(tmp_path / "n.npy"), a)
    assert (tmp_path / "t.npy").read_bytes() == (tmp_path / "n.npy").read_bytes()


def test_save_takes_either_order_and_appends_npy_like_numpy(tmp_path):
    t = jg.arange(6.0).reshape(2, 3)
    jg.save(str(tmp_path / "numpy_order"), t)  # numpy's np.save(file, arr)
    jg.save(t, tmp_path / "jitgrad_order.npy")
    np.save(tmp_path / "reference", t.numpy())
    reference = (tmp_path / "reference.npy").read_bytes()
    assert (tmp_path / "numpy_order.npy").read_bytes() == reference
    assert (tmp_path / "jitgrad_order.npy").read_bytes() == reference
    assert sorted(os.listdir(tmp_path)) == ["jitgrad_order.npy", "numpy_order.npy", "reference.npy"]


def test_file_objects_are_numpy_files_both_ways():
    t = jg.arange(5, dtype="int16")[::2]
    out = io.BytesIO()
    jg.save(out, t)
    reference = io.BytesIO()
    np.save(reference, t.numpy())
    assert out.getvalue() == reference.getvalue()
    out.seek(0)
    assert_same(jg.load(out), t.numpy())


def test_numpy_save_accepts_tensors(tmp_path):
    np.save(tmp_path / "t.npy", jg.arange(4.0).T)
    assert_same(jg.load(tmp_path / "t.npy"), np.arange(4.0))


@pytest.mark.parametrize("order", ["numpy", "jitgrad"])
def test_jg_names_keep_jitgrad_format_in_either_order(tmp_path, order):
    base = jg.arange(6.0)
    state = {"a": base, "tail": base[3:]}
    path = tmp_path / "state.jg"
    jg.save(path, state) if order == "numpy" else jg.save(state, path)
    assert path.read_bytes().startswith(b"JITGRAD\0")
    out = jg.load(path)
    assert out["tail"].storage() is out["a"].storage()
    assert os.listdir(tmp_path) == ["state.jg"]


def test_other_names_given_second_keep_jitgrad_format(tmp_path):
    jg.save(jg.arange(3), tmp_path / "weights.bin")
    assert (tmp_path / "weights.bin").read_bytes().startswith(b"JITGRAD\0")


def test_load_reads_the_format_from_the_bytes_not_the_name(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3))
    os.rename(tmp_path / "a.npy", tmp_path / "a.weights")
    assert_same(jg.load(tmp_path / "a.weights"), np.arange(3))
    jg.save(jg.arange(2.0), tmp_path / "j.jg")
    os.rename(tmp_path / "j.jg", tmp_path / "j.npy")
    assert jg.load(tmp_path / "j.npy").tolist() == [0.0, 1.0]


def test_dict_saved_to_an_npz_name_is_numpys_savez(tmp_path):
    jg.save({"w": jg.ones((2, 2)), "b": jg.zeros(2)}, tmp_path / "state.npz")
    with np.load(tmp_path / "state.npz") as npz:
        assert npz.files == ["w", "b"]
        np.testing.assert_array_equal(npz["w"], np.ones((2, 2)))


def test_failed_numpy_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(3))
    before = path.read_bytes()
    with pytest.raises(ValueError, match="allow_pickle"):
        jg.save(path, np.array([{}, 1], dtype=object), allow_pickle=False)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["a.npy"]


def test_pickled_objects_come_back_as_numpys_arrays(tmp_path):
    jg.save(tmp_path / "o.npy", {"lr": 0.1})
    with pytest.raises(ValueError, match="allow_pickle"):
        jg.load(tmp_path / "o.npy")
    loaded = jg.load(tmp_path / "o.npy", allow_pickle=True)
    assert type(loaded) is np.ndarray and loaded.item() == {"lr": 0.1}


def test_structured_arrays_come_back_as_numpys_arrays(tmp_path):
    records = np.array([(1, 2.0)], dtype=[("id", "i4"), ("x", "f8")])
    np.save(tmp_path / "r.npy", records)
    loaded = jg.load(tmp_path / "r.npy")
    assert type(loaded) is np.ndarray and loaded.dtype == records.dtype
    assert loaded["x"][0] == 2.0


def test_other_byte_order_loads_as_native_values(tmp_path):
    a = np.arange(5.0).astype(">f4")
    np.save(tmp_path / "be.npy", a)
    assert_same(jg.load(tmp_path / "be.npy"), a.astype("f4"))
    with pytest.raises(ValueError, match="other byte order"):
        jg.load(tmp_path / "be.npy", mmap_mode="r")


# -- .npz ----------------------------------------------------------------------------------


@pytest.mark.parametrize("save", [jg.savez, jg.savez_compressed])
def test_savez_names_like_numpy(tmp_path, save):
    a, b = jg.arange(4).reshape(2, 2).T, jg.ones(3, dtype="float32")
    save(tmp_path / "mine", a, b, bias=jg.zeros(2))
    with np.load(tmp_path / "mine.npz") as npz:
        assert sorted(npz.files) == ["arr_0", "arr_1", "bias"]
        np.testing.assert_array_equal(npz["arr_0"], a.numpy())
        assert npz["arr_1"].dtype == np.float32
        np.testing.assert_array_equal(npz["bias"], np.zeros(2))


def test_savez_compressed_compresses(tmp_path):
    jg.savez(tmp_path / "plain.npz", jg.zeros(10_000))
    jg.savez_compressed(tmp_path / "small.npz", jg.zeros(10_000))
    assert os.path.getsize(tmp_path / "small.npz") < os.path.getsize(tmp_path / "plain.npz") / 10


def test_npz_from_numpy_is_a_mapping_of_tensors_and_a_context_manager(tmp_path):
    arrays = {
        name: array_of(dtype, "transposed")
        for name, dtype in [("w", "float32"), ("ids", "int64"), ("z", "complex128")]
    }
    np.savez(tmp_path / "n.npz", np.arange(3), **arrays)
    with jg.load(tmp_path / "n.npz") as npz:
        assert isinstance(npz, jg.NpzFile)
        assert sorted(npz.files) == ["arr_0", "ids", "w", "z"]
        assert len(npz) == 4 and "w" in npz and "nope" not in npz
        for name, a in arrays.items():
            assert_same(npz[name], a)
        assert_same(npz.f.arr_0, np.arange(3))
        assert set(dict(npz)) == set(npz.files)
        with pytest.raises(KeyError):
            npz["nope"]
    with pytest.raises(ValueError, match="closed"):
        npz["w"]


# -- memory maps ---------------------------------------------------------------------------


def test_mmap_r_plus_writes_through_both_ways(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, np.arange(12.0).reshape(3, 4))
    t = jg.load(path, mmap_mode="r+")
    t[0, 0] = 99.0
    assert np.load(path)[0, 0] == 99.0
    other = np.load(path, mmap_mode="r+")
    other[2, 3] = -5.0
    assert t[2, 3].item() == -5.0


def test_mmap_r_is_read_only_and_c_is_private(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, np.arange(4, dtype="int32"))
    with pytest.raises(ValueError, match="read-only"):
        jg.load(path, mmap_mode="r")[0] = 1
    for private in (jg.load(path, mmap_mode="c"), jg.load(path, mmap=True)):
        private[0] = 7
        assert private[0].item() == 7
    assert np.load(path)[0] == 0


def test_jitgrad_files_map_copy_on_write_only(tmp_path):
    jg.save(jg.arange(3.0), tmp_path / "j.jg")
    t = jg.load(tmp_path / "j.jg", mmap_mode="r")
    assert t.untyped_storage().filename == str(tmp_path / "j.jg")
    with pytest.raises(ValueError, match="copy-on-write"):
        jg.load(tmp_path / "j.jg", mmap_mode="r+")


# -- text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"fmt": "%d", "delimiter": ","},
        {"fmt": "%.3f", "header": "a b c", "footer": "end"},
        {"fmt": "%g", "delimiter": "\t", "newline": ";\n", "comments": "// ", "header": "h"},
    ],
)
def test_savetxt_writes_numpys_text(tmp_path, kwargs):
    t = jg.arange(12.0).reshape(4, 3)[::2]
    jg.savetxt(tmp_path / "mine.txt", t, **kwargs)
    np.savetxt(tmp_path / "numpy.txt", t.numpy(), **kwargs)
    assert (tmp_path / "mine.txt").read_bytes() == (tmp_path / "numpy.txt").read_bytes()


TEXT = "# id x y\n1,2.5,3\n2,4.5,5\n\n3,6.5,7 # note\n"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"delimiter": ","},
        {"delimiter": ",", "dtype": jg.float32, "usecols": (1, 2)},
        {"delimiter": ",", "dtype": "int32", "usecols": 0, "ndmin": 2},
        {"delimiter": ",", "skiprows": 2, "max_rows": 1},
        {"delimiter": ",", "unpack": True},
    ],
)
def test_loadtxt_is_numpys(tmp_path, kwargs):
    (tmp_path / "d.csv").write_text(TEXT)
    dtype = kwargs.get("dtype", float)
    numpy_kwargs = {**kwargs, "dtype": dtype.numpy if isinstance(dtype, jg.DType) else dtype}
    expected = np.loadtxt(tmp_path / "d.csv", **numpy_kwargs)
    assert_same(jg.loadtxt(tmp_path / "d.csv", **kwargs), expected)


def test_loadtxt_unpacks_into_columns():
    x, y = jg.loadtxt(io.StringIO("1 2\n3 4\n"), unpack=True)
    assert x.tolist() == [1.0, 3.0] and y.tolist() == [2.0, 4.0]


def test_genfromtxt_is_numpys(tmp_path):
    text = "a,b,c\n1,,3\n4,5,\n"
    (tmp_path / "g.csv").write_text(text)
    kwargs = {"delimiter": ",", "skip_header": 1, "filling_values": -1}
    assert_same(
        jg.genfromtxt(tmp_path / "g.csv", **kwargs), np.genfromtxt(tmp_path / "g.csv", **kwargs)
    )
    named = jg.genfromtxt(tmp_path / "g.csv", delimiter=",", names=True)
    assert type(named) is np.ndarray and named.dtype.names == ("a", "b", "c")
    masked = jg.genfromtxt(tmp_path / "g.csv", delimiter=",", skip_header=1, usemask=True)
    assert isinstance(masked, np.ma.MaskedArray) and masked.mask.tolist()[0] == [0, 1, 0]


# -- raw bytes -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int16", "float64", "complex64"])
def test_tofile_and_fromfile_match_numpy(tmp_path, dtype):
    a = array_of(dtype, "strided")
    jg.from_numpy(a).tofile(tmp_path / "mine.bin")
    a.tofile(tmp_path / "numpy.bin")
    assert (tmp_path / "mine.bin").read_bytes() == (tmp_path / "numpy.bin").read_bytes()
    assert_same(jg.fromfile(tmp_path / "mine.bin", dtype=dtype), a.ravel())
    part = jg.fromfile(tmp_path / "mine.bin", jg.dtypes.as_dtype(dtype), 2, offset=a.itemsize)
    assert_same(part, a.ravel()[1:3])


def test_tofile_text_mode(tmp_path):
    jg.arange(4).tofile(tmp_path / "t.txt", sep=",", format="%d")
    assert (tmp_path / "t.txt").read_text() == "0,1,2,3"
    assert_same(jg.fromfile(tmp_path / "t.txt", dtype="int64", sep=","), np.arange(4))


def test_frombuffer_shares_the_buffer():
    raw = bytearray(16)
    t = jg.frombuffer(raw, dtype=jg.int32, count=2, offset=4)
    raw[4] = 9
    assert t.tolist() == [9, 0]
    t[1] = 258
    assert raw[8:10] == b"\x02\x01"


def test_frombuffer_of_read_only_bytes_is_read_only():
    t = jg.frombuffer(b"\x01\x00\x02\x00", dtype="int16")
    assert t.tolist() == [1, 2]
    with pytest.raises(ValueError, match="read-only"):
        t[0] = 3


def test_frombuffer_of_a_tensor_is_a_view_of_it():
    base = jg.arange(4.0)
    raw = jg.frombuffer(base, dtype="uint8")
    assert raw.shape == (32,) and raw.data_ptr() == base.data_ptr()


def test_fromiter():
    assert_same(jg.fromiter(range(4), dtype=jg.float32), np.arange(4, dtype="float32"))
    assert_same(jg.fromiter((i for i in range(10)), "int8", count=3), np.arange(3, dtype="int8"))


# -- bad input -----------------------------------------------------------------------------


def test_dtypes_jitgrad_lacks_are_named(tmp_path):
    np.save(tmp_path / "q.npy", np.arange(3, dtype=np.longdouble))
    with pytest.raises(TypeError, match="q.npy.*float128"):
        jg.load(tmp_path / "q.npy")
    np.savez(tmp_path / "z.npz", wide=np.arange(3, dtype=np.longdouble))
    with pytest.raises(TypeError, match="'wide'.*float128"), jg.load(tmp_path / "z.npz") as npz:
        npz["wide"]
    with pytest.raises(TypeError, match="loadtxt.*float128"):
        jg.loadtxt(io.StringIO("1 2"), dtype=np.longdouble)
    with pytest.raises(TypeError, match="datetime64"):
        jg.frombuffer(bytes(8), dtype="datetime64[s]")


def test_pickles_need_allow_pickle(tmp_path):
    import pickle

    (tmp_path / "p.pkl").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(FormatError, match="allow_pickle=True"):
        jg.load(tmp_path / "p.pkl")
    assert jg.load(tmp_path / "p.pkl", allow_pickle=True) == [1, 2]


def test_jitgrad_file_from_a_file_object_is_refused(tmp_path):
    jg.save(jg.arange(2), tmp_path / "j.jg")
    with open(tmp_path / "j.jg", "rb") as f, pytest.raises(TypeError, match="from its path"):
        jg.load(f)


def test_bad_buffer_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="multiple of element size"):
        jg.frombuffer(b"abc", dtype="int16")
    with pytest.raises(FileNotFoundError, match="nope.npy"):
        jg.load(tmp_path / "nope.npy")


def test_strings_come_back_as_numpys_array_and_npz_names_follow_numpy(tmp_path):
    words = jg.loadtxt(io.StringIO("a b\nc d\n"), dtype=str)
    assert type(words) is np.ndarray and words.tolist() == [["a", "b"], ["c", "d"]]
    jg.save(tmp_path / "x.npz", jg.arange(2))  # numpy's order: np.save appends .npy
    assert os.listdir(tmp_path) == ["x.npz.npy"]
