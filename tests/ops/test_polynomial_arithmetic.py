"""polyadd, polysub, polymul, polydiv and poly1d against numpy; their gradients."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck

PAIRS = [
    ([1.0, 2.0], [9.0, 5.0, 4.0]),
    ([3.0, 5.0, 2.0], [2.0, 1.0]),
    ([1, 2, 3], [4, 5]),
    ([0.0, 0.0, 1.0, 2.0], [1.0]),
    ([2.0], [4.0]),
    ([1.0, -3.0, 2.0], [1.0, -1.0]),
    ([5.0], [1.0, 2.0, 3.0]),
    (np.array([1, 2], np.float32), np.array([3.0])),
]


def check(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
        return
    if isinstance(want, np.poly1d):
        assert isinstance(got, jg.poly1d), type(got)
        got, want = got.coeffs, want.coeffs
    want = np.asarray(want)
    assert isinstance(got, jg.Tensor)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul", "polydiv"])
def test_matches_numpy(name, a, b):
    ours, theirs = getattr(jg, name), getattr(np, name)
    check(ours(jg.tensor(a), jg.tensor(b)), theirs(np.asarray(a), np.asarray(b)))
    check(ours(a, jg.poly1d(b)), theirs(a, np.poly1d(b)))


def test_gradients():
    a = jg.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
    b = jg.tensor([2.0, 1.0], requires_grad=True)
    for f in (
        jg.polyadd,
        jg.polysub,
        jg.polymul,
        lambda a, b: jg.polydiv(a, b)[0],
        lambda a, b: jg.polydiv(a, b)[1],
    ):
        assert gradcheck(f, a, b)


def test_poly1d_matches_numpy():
    c = [1.0, -3.0, 2.0]
    p, q = jg.poly1d(c), np.poly1d(c)
    assert repr(p) == repr(q) and str(p) == str(q) and len(p) == len(q) == p.order == 2
    assert str(jg.poly1d(c, variable="z")) == str(np.poly1d(c, variable="z"))
    check(p.coeffs, q.coeffs)
    assert p.c is p.coef is p.coefficients is p.coeffs and p.o == 2 and p.variable == "x"
    np.testing.assert_allclose(sorted(p.roots.tolist()), sorted(q.roots.tolist()))
    check(jg.poly1d([1.0, 2.0], r=True), np.poly1d([1.0, 2.0], r=True))
    check(jg.poly1d([0, 0, 1, 2]), np.poly1d([0, 0, 1, 2]))
    check(jg.poly1d([0.0, 0.0]), np.poly1d([0.0, 0.0]))
    check(p(jg.tensor([0.5, 2.0])), q(np.array([0.5, 2.0])))
    check(p(jg.poly1d([1.0, 1.0])), q(np.poly1d([1.0, 1.0])))
    check(p.deriv(), q.deriv())
    check(p.deriv(2), q.deriv(2))
    check(p.integ(), q.integ())
    check(p.integ(2, k=[1.0, 2.0]), q.integ(2, k=[1.0, 2.0]))
    check(jg.polyder(p), np.polyder(q))
    check(jg.polyint(p), np.polyint(q))
    check(jg.polyval(p, jg.tensor([1.5])), np.polyval(q, np.array([1.5])))
    assert np.asarray(p).tolist() == c and list(map(float, p)) == c


def test_poly1d_arithmetic_matches_numpy():
    p, q = jg.poly1d([1.0, -3.0, 2.0]), np.poly1d([1.0, -3.0, 2.0])
    r, s = jg.poly1d([2.0, 1.0]), np.poly1d([2.0, 1.0])
    for got, want in [
        (-p, -q),
        (+p, +q),
        (p * r, q * s),
        (p * 2.0, q * 2.0),
        (2.0 * p, 2.0 * q),
        (p + r, q + s),
        (p + 1.0, q + 1.0),
        (1.0 + p, 1.0 + q),
        (p - r, q - s),
        (1.0 - p, 1.0 - q),
        (p**3, q**3),
        (p**0, q**0),
        (p / 2.0, q / 2.0),
        (p / r, q / s),
        ([1.0, 0.0, 0.0, 0.0] / r, [1.0, 0.0, 0.0, 0.0] / s),
        (p * [1.0, 1.0], q * [1.0, 1.0]),
    ]:
        check(got, want)
    assert p == jg.poly1d([1.0, -3.0, 2.0]) and p != r and not (p != jg.poly1d(q.coeffs))
    with pytest.raises(ValueError):
        p**-1
    with pytest.raises(ValueError):
        jg.poly1d([[1.0, 2.0]])


def test_poly1d_items():
    p, q = jg.poly1d([1.0, -3.0, 2.0]), np.poly1d([1.0, -3.0, 2.0])
    for power in (0, 1, 2, 5, -1):
        assert float(p[power]) == q[power]
    p[4], q[4] = 7.0, 7.0
    check(p, q)
    p[0], q[0] = -1.0, -1.0
    check(p, q)
    with pytest.raises(ValueError, match="negative powers"):
        p[-1] = 1.0


def test_poly1d_is_differentiable_in_its_coefficients():
    c = jg.tensor([1.0, -3.0, 2.0], requires_grad=True)
    x = jg.tensor([0.5, 1.5], requires_grad=True)
    assert gradcheck(lambda c, x: jg.poly1d(c)(x), c, x)
    assert gradcheck(lambda c: (jg.poly1d(c) ** 2).integ().deriv(2).coeffs, c)
