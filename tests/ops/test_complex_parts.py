"""real, imag and conj against numpy: the parts of complex tensors are views sharing their
memory (values, dtypes, strides, writes both ways); real tensors follow numpy's rules (real
is the tensor, imag read-only zeros) and keep their gradients."""

import pickle

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg

COMPLEX = ["complex64", "complex128"]
REAL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def complex_arrays(dtype):
    parts = st.floats(-1e6, 1e6, width=32 if dtype == "complex64" else 64)
    return hnp.arrays(
        dtype,
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
        elements=st.builds(complex, parts, parts),
    )


def strided_views(a, data):
    """``a`` and a strided view of it (steps, reversed axes, a transpose), drawn."""
    index = tuple(
        data.draw(
            st.sampled_from(
                [slice(None), slice(None, None, 2), slice(None, None, -1), slice(1, None, -2)]
            )
        )
        for _ in range(a.ndim)
    )
    view = a[index]
    return view.T if data.draw(st.booleans()) else view


def same_layout(t, a):
    """The tensor's layout is the numpy array's: shape, byte strides, first element."""
    assert t.shape == a.shape
    if a.size:
        assert tuple(s * t.itemsize for s in t.stride()) == a.strides
        assert t.data_ptr() == a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", COMPLEX)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_parts_of_complex_tensors_are_numpys_views(dtype, data):
    z_array = data.draw(complex_arrays(dtype))
    a = strided_views(z_array, data)
    t = jg.from_numpy(a)
    for got, want in [
        (t.real, a.real),
        (t.imag, a.imag),
        (jg.real(t), np.real(a)),
        (jg.imag(t), np.imag(a)),
        (np.real(t), a.real),
        (np.imag(t), a.imag),
    ]:
        assert isinstance(got, jg.Tensor) and got.dtype.numpy == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
        same_layout(got, want)
        assert not got.requires_grad
    # writes through the parts land in the complex memory...
    t.real[...] = -1.5
    np.testing.assert_array_equal(a.real, -1.5)
    imag_before = a.imag.copy()
    t.imag *= 2
    t.imag += 1
    np.testing.assert_array_equal(a.imag, imag_before * 2 + 1)
    # ...and writes into the complex memory show in the parts
    z_array[...] = 3 + 4j
    np.testing.assert_array_equal(t.real.numpy(), np.full(a.shape, 3.0))
    np.testing.assert_array_equal(t.imag.numpy(), np.full(a.shape, 4.0))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_writes_through_parts_match_numpys(dtype):
    a = (np.arange(24).reshape(4, 6) + 1j * np.arange(24).reshape(4, 6)[::-1]).astype(dtype)
    t = jg.tensor(a)
    a_view, t_view = a[1::2, ::-2], t[1::2, ::-2]
    for part in ("real", "imag"):
        getattr(a_view, part)[0, 1] = 100
        getattr(t_view, part)[0, 1] = 100
    a_view.real *= 3
    t_view.real *= 3
    a_view.imag -= jg.arange(3).numpy()
    t_view.imag -= jg.arange(3)
    a_view.imag = 7
    t_view.imag = 7
    a.T.real = np.arange(4)
    t.T.real = jg.arange(4)
    assert t.dtype.numpy == a.dtype
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(ValueError, match="shape"):
        t.real = jg.zeros(5)


def test_parts_of_op_results_and_of_data_made_from_python():
    z = jg.tensor([1 + 2j, -3j]) * 2  # an op result holds only its elements' array at first
    r = z.real
    r[1] = 9.0
    assert z.tolist() == [2 + 4j, 9 - 6j]
    assert jg.real([1 + 2j, 3.0]).tolist() == [1.0, 3.0]
    assert jg.imag(1 - 5j).item() == -5.0
    empty = jg.zeros((0, 3), dtype=jg.complex64)[:, 1:]
    assert empty.imag.shape == (0, 2) and empty.imag.numpy().shape == (0, 2)


@pytest.mark.parametrize("dtype", REAL)
def test_parts_of_real_tensors_follow_numpy(dtype):
    a = np.array([[0, 1, 2], [3, 4, 5]]).astype(dtype)
    x = jg.tensor(a)
    assert x.real is x and jg.real(x) is x  # numpy: a view of the same data
    assert np.real(x) is x
    imag = x.imag
    want = a.imag
    assert imag.dtype.numpy == want.dtype and imag.shape == want.shape
    np.testing.assert_array_equal(imag.numpy(), want)
    assert not want.flags.writeable and not imag.numpy().flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        imag[0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        imag.fill_(1)
    with pytest.raises(TypeError, match="no imaginary part to set"):
        x.imag = 1
    x.real = a[::-1].copy()  # numpy's setter: a write into the (real) tensor
    np.testing.assert_array_equal(x.numpy(), a[::-1])


@pytest.mark.parametrize("dtype", COMPLEX + REAL)
def test_conj_is_numpys(dtype):
    a = np.array([1 + 2j, -3 - 4j, 0, 1j]) if dtype in COMPLEX else np.array([0, 1, 1, 0])
    a = a.astype(dtype)
    x = jg.tensor(a)
    for got in (x.conj(), x.conjugate(), jg.conj(x), jg.conjugate(x), np.conj(x)):
        assert isinstance(got, jg.Tensor)
        np.testing.assert_array_equal(got.numpy(), np.conj(a))
        if dtype in COMPLEX:
            assert got.dtype.numpy == a.dtype and not np.shares_memory(got.numpy(), a)
        else:
            assert got is x  # its own conjugate (numpy's is an equal copy)
    strided = jg.tensor(a)[::-2]
    np.testing.assert_array_equal(strided.conj().numpy(), np.conj(a[::-2]))


def test_real_and_conj_of_real_tensors_keep_their_gradient():
    x = jg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = jg.tensor([2.0, 3.0, 4.0])
    (x.real * w + x.conj() * w + jg.real(x * x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2 * 2.0 + 2 * 1.0, 2 * 3.0 - 4.0, 2 * 4.0 + 6.0])
    assert not x.imag.requires_grad
    y = x * 2
    assert y.real is y and y.real.grad_fn is y.grad_fn


def test_writes_through_the_parts_of_a_complex_tensor_reach_its_gradient_as_in_torch():
    start = np.array([1 + 2j, 3 - 1j, -2 + 0.5j])
    grads = {}
    for m in (jg, torch):
        c = m.tensor(start, requires_grad=True)
        with pytest.raises(RuntimeError, match="view of a leaf"):
            c.real[0] = 5.0
        z = c * (2 - 1j)
        v = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        z.imag[1:] = v[1:] * 2
        z.real.mul_(3)
        (m.abs(z * (1 + 1j)).sum() + (z.real * v).sum()).backward()
        grads[m] = [(t.grad.resolve_conj() if m is torch else t.grad).numpy() for t in (c, v)]
    for got, expected in zip(grads[jg], grads[torch]):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_write_through_a_complex_tensor_or_its_parts_is_seen_by_autograd():
    """The parts and the complex tensor count writes together: a gradient that saved one
    of them is refused after a write through another, as after a write through itself."""
    writes = [
        lambda z: z.__setitem__(0, 100 + 0j),
        lambda z: z.real.__setitem__(1, 7.0),
        lambda z: z.imag.add_(1.0),
        lambda z: z.copy_(jg.zeros(2, dtype=z.dtype)),
    ]
    for write in writes:
        for part in ("real", "imag"):
            z = jg.tensor([1 + 2j, 3 - 4j])
            w = jg.tensor([1.0, 2.0], requires_grad=True)
            loss = (getattr(z, part) * w).sum()
            write(z)
            with pytest.raises(RuntimeError, match="modified by an in-place operation"):
                loss.backward()
    z = jg.tensor([1 + 2j, 3 - 4j])
    w = jg.tensor([1.0, 2.0], requires_grad=True)
    (z.real * w).sum().backward()  # no write between: the gradient is the real parts
    assert w.grad.tolist() == [1.0, 3.0]
    z, part = pickle.loads(pickle.dumps((z, z.imag)))  # the link survives a pickle
    loss = (part * w).sum()
    z[1] = 0j
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


def test_saved_and_loaded_parts_still_count_writes_with_their_complex_tensor(tmp_path):
    z = jg.tensor([1 + 2j, 3 - 4j])
    jg.save({"z": z, "real": z.real}, tmp_path / "parts.jg")
    loaded = jg.load(tmp_path / "parts.jg")
    loaded["real"][1] = 5.0  # still a view of the loaded complex tensor
    assert loaded["z"].tolist() == [1 + 2j, 5 - 4j]
    w = jg.tensor([1.0, 2.0], requires_grad=True)
    loss = (loaded["real"] * w).sum()
    loaded["z"][0] = 0j
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


@pytest.mark.parametrize(
    "values",
    [
        np.array([1j, -1.0, 2 + 2j, -3 - 0.5j]),
        np.array([1.0, -2.0, 0.0], dtype=np.float32),
        np.array([3, -1, 0]),
        np.array([1 + 1j, -1j], dtype=np.complex64),
    ],
)
@pytest.mark.parametrize("deg", [False, True])
def test_angle_matches_numpy(values, deg):
    got, expected = jg.angle(jg.tensor(values), deg=deg), np.angle(values, deg=deg)
    assert got.dtype.numpy == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("deg", [False, True])
def test_angle_of_complex_tensors_has_torchs_gradient(deg):
    z0 = np.array([1 + 2j, -3 + 0.5j, 0j, -2 - 1j, 2j])
    grads = []
    for m in (jg, torch):
        z = m.tensor(z0, requires_grad=True)
        if m is jg:
            a = jg.angle(z, deg=deg)
        else:
            a = torch.angle(z) * (180 / np.pi if deg else 1)
        (a * m.tensor(np.arange(5.0))).sum().backward()
        grads.append((z.grad.resolve_conj() if m is torch else z.grad).numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_sums_of_complex_tensors_have_torchs_gradient(reduction):
    z0 = np.array([[1 + 2j, -3 + 0.5j, 0j], [-2 - 1j, 2j, 0.5 + 0.5j]])
    w0 = np.array([0.5 - 1j, 2 + 0j, -1 + 3j])
    grads = []
    for m in (jg, torch):
        z = m.tensor(z0, requires_grad=True)
        axis = {"axis": 0} if m is jg else {"dim": 0}
        reduced = getattr(z * m.tensor(w0), reduction)(**axis)
        m.abs(reduced).sum().backward()
        grads.append((z.grad.resolve_conj() if m is torch else z.grad).numpy())
    np.testing.assert_allclose(*grads, rtol=1e-12)
