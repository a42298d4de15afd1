"""iscomplex, isreal, iscomplexobj, isrealobj, real_if_close and sort_complex vs numpy."""

import numpy as np
import pytest

import jitgrad as jg

VALUES = [
    np.array([1 + 1j, 1 + 0j, 4.5, 3, 2, 2j]),
    np.array([1.0, 0.0]),
    np.array([3, 1], np.int8),
    np.array([[1j, 2]], np.complex64),
    np.array(2.5),
    np.array(1 + 1e-20j),
]


@pytest.mark.parametrize("a", VALUES)
def test_elementwise_questions_match_numpy(a):
    for name in ("iscomplex", "isreal"):
        got, want = getattr(jg, name)(jg.tensor(a)), np.asarray(getattr(np, name)(a))
        assert isinstance(got, jg.Tensor) and got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)
    assert jg.iscomplex(a.tolist()).tolist() == np.iscomplex(a.tolist()).tolist()


@pytest.mark.parametrize(
    "x", [*VALUES, [1, 2], [1j], 1.5, 1j, "s", jg.complex64, jg.float32, np.complex64]
)
def test_object_questions_match_numpy(x):
    value = jg.tensor(x) if isinstance(x, np.ndarray) else x
    want = np.iscomplexobj(x.numpy if isinstance(x, jg.dtype) else x)
    assert jg.iscomplexobj(value) is want
    assert jg.isrealobj(value) is (not want)


@pytest.mark.parametrize(
    ("a", "tol"),
    [
        (np.array([2.1 + 4e-14j, 5.2 + 3e-15j]), 1000),
        (np.array([2.1 + 4e-13j, 5.2 + 3e-15j]), 1000),
        (np.array([2.1 + 4e-14j]), 100),
        (np.array([1 + 1e-7j], np.complex64), 100),
        (np.array([1 + 1e-6j]), 1e-5),
        (np.array([1.5, 2.5]), 100),
        (np.array([1, 2]), 100),
    ],
)
def test_real_if_close_matches_numpy(a, tol):
    got, want = jg.real_if_close(jg.tensor(a), tol=tol), np.real_if_close(a, tol=tol)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_real_if_close_keeps_gradient_and_views():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    assert jg.real_if_close(x) is x
    z = jg.tensor([1 + 0j, 2 + 0j])
    assert jg.shares_memory(jg.real_if_close(z), z)


@pytest.mark.parametrize(
    "dtype",
    [
        "int8",
        "uint8",
        "int16",
        "int32",
        "int64",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "bool",
    ],
)
def test_sort_complex_matches_numpy(dtype):
    a = np.array([5, 3, 6, 2, 1, 0]).astype(dtype)
    if dtype.startswith("complex"):
        a = a + np.array([1, -1, 0, 2, 1, -3]) * 1j
        a = a.astype(dtype)
    got, want = jg.sort_complex(jg.tensor(a)), np.sort_complex(a)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
