"""matvec, vecmat and einsum_path against numpy; gradients of matvec and vecmat."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck

RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("s1", "s2"),
    [((3, 4), (4,)), ((2, 3, 4), (4,)), ((3, 4), (2, 4)), ((1, 3, 4), (5, 1, 4)), ((0, 4), (4,))],
)
def test_matvec_and_vecmat_match_numpy(s1, s2):
    a, b = RNG.normal(size=s1), RNG.normal(size=s2)
    got, want = jg.matvec(jg.tensor(a), jg.tensor(b)), np.matvec(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    v_want = np.vecmat(b, np.swapaxes(a, -1, -2))
    v_got = jg.vecmat(jg.tensor(b), jg.tensor(np.swapaxes(a, -1, -2)))
    assert v_got.dtype == v_want.dtype and v_got.shape == v_want.shape
    np.testing.assert_allclose(v_got.numpy(), v_want, rtol=1e-12)


def test_dtypes_conjugation_and_errors():
    a = np.array([[1 + 2j, 3], [0, 1j]])
    v = np.array([1j, 2], np.complex64)
    np.testing.assert_allclose(jg.vecmat(jg.tensor(v), jg.tensor(a)).numpy(), np.vecmat(v, a))
    np.testing.assert_allclose(jg.matvec(jg.tensor(a), jg.tensor(v)).numpy(), np.matvec(a, v))
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = jg.matvec(jg.tensor(ints), jg.tensor([1.0, 2.0, 3.0], dtype=jg.float32))
    assert got.dtype == np.matvec(ints, np.ones(3, np.float32)).dtype
    for f in (jg.matvec, jg.vecmat):
        with pytest.raises(ValueError):
            f(jg.ones((2, 3)), jg.ones(2) if f is jg.matvec else jg.ones((2, 3)))
        with pytest.raises(ValueError):
            f(jg.ones(3), jg.ones(3))
    out = jg.zeros(2)
    assert jg.matvec(jg.ones((2, 3)), jg.ones(3), out=out) is out and out.tolist() == [3.0, 3.0]


def test_gradients():
    m = jg.tensor(RNG.normal(size=(2, 3, 4)), requires_grad=True)
    v = jg.tensor(RNG.normal(size=(4,)), requires_grad=True)
    w = jg.tensor(RNG.normal(size=(3,)), requires_grad=True)
    assert gradcheck(jg.matvec, m, v)
    assert gradcheck(jg.vecmat, w, m)


def test_einsum_path_is_numpys():
    ops = [RNG.normal(size=s) for s in [(2, 3), (3, 4), (4, 5)]]
    for optimize in ("greedy", "optimal", False):
        got = jg.einsum_path("ij,jk,kl->il", *map(jg.tensor, ops), optimize=optimize)
        want = np.einsum_path("ij,jk,kl->il", *ops, optimize=optimize)
        assert got == want
