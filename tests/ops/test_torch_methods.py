"""PyTorch's tensor conveniences (jitgrad/ops/torch_methods.py) against PyTorch: values,
dtypes, gradients, the in-place forms, and scatters under jg.jit."""

import math

import numpy as np
import pytest

import jitgrad as jg

torch = pytest.importorskip("torch")
rng = np.random.default_rng(0)


def both(array, requires_grad=False):
    return (
        jg.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def check(ours, theirs, **tolerance):
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.").replace("bool", "bool")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tolerance)


@pytest.mark.parametrize("name", ["float", "double", "half", "long", "int", "bool"])
def test_dtype_shorthands(name):
    a, b = both(np.array([[1.5, -2.0], [0.0, 3.25]]))
    check(getattr(a, name)(), getattr(b, name)())
    same = a.double()
    assert same is a  # already float64: itself, as PyTorch's


def test_float_is_differentiable():
    a, b = both(np.array([1.0, 2.0]), requires_grad=True)
    (a.float() ** 2).sum().backward()
    (b.float() ** 2).sum().backward()
    check(a.grad, b.grad)


def test_to_dtype_device_and_tensor():
    x = jg.ones(3)
    assert x.to("cpu") is x and x.to(jg.Device("cpu")) is x and x.to(device="cpu") is x
    assert x.to(torch.device("cpu")) is x
    assert x.to(jg.int64).dtype is jg.int64 and x.to("float16").dtype is jg.float16
    assert x.to("cpu", jg.int8).dtype is jg.int8 and x.to(dtype=jg.float64).dtype is jg.float64
    assert x.to(jg.zeros(1, dtype=jg.int32)).dtype is jg.int32
    copied = x.to("cpu", copy=True)
    assert copied is not x and copied.tolist() == x.tolist()
    with pytest.raises(ValueError, match="CPU only"):
        x.to("cuda")
    with pytest.raises(TypeError, match="dtype twice"):
        x.to(jg.int32, dtype=jg.int64)


def test_t():
    a, b = both(rng.standard_normal((2, 3)))
    check(a.t(), b.t())
    v, w = both(rng.standard_normal(3))
    check(v.t(), w.t())
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        jg.zeros((2, 2, 2)).t()


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "gt", "le", "ge"])
def test_named_comparisons(name):
    a, b = both(np.array([1.0, 2.0, 3.0]))
    c, d = both(np.array([2.0, 2.0, 1.0]))
    check(getattr(a, name)(c), getattr(b, name)(d))
    check(getattr(a, name)(2.0), getattr(b, name)(2.0))


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"p": 1},
        {"p": math.inf},
        {"p": 3, "dim": 1},
        {"p": 2, "dim": (0, 2), "keepdim": True},
        {"p": "fro", "dim": (1, 2)},
        {"p": "nuc", "dim": (1, 2)},
        {"dim": -1, "keepdim": True},
    ],
)
def test_norm(kwargs):
    a, b = both(rng.standard_normal((2, 3, 4)), requires_grad=True)
    ours, theirs = a.norm(**kwargs), b.norm(**kwargs)
    check(ours, theirs, rtol=1e-10)
    ours.sum().backward()
    theirs.sum().backward()
    check(a.grad, b.grad, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_methods(name):
    a, b = both(rng.standard_normal((3, 4)), requires_grad=True)
    ours, theirs = getattr(a, name)(1), getattr(b, name)(1)
    check(ours, theirs, rtol=1e-12)
    (ours * jg.arange(4.0)).sum().backward()
    (theirs * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    check(a.grad, b.grad, rtol=1e-10, atol=1e-14)
    check(getattr(a, name)(0, dtype=jg.float32), getattr(b, name)(0, dtype=torch.float32))


def test_new_tensors():
    a, b = both(np.array([1, 2], dtype=np.int32))
    check(a.new_zeros(2, 3), b.new_zeros(2, 3))
    check(a.new_ones((2,)), b.new_ones((2,)))
    check(a.new_full((2, 2), 7), b.new_full((2, 2), 7))
    check(a.new_tensor([1.7, 2.0]), b.new_tensor([1.7, 2.0]))
    check(a.new_zeros(3, dtype=jg.float64), b.new_zeros(3, dtype=torch.float64))
    assert a.new_empty(4, 1).shape == (4, 1) and a.new_empty((2,)).dtype is jg.int32
    f = jg.ones(2)
    assert f.new_ones(2, requires_grad=True).requires_grad
    source = jg.tensor([1.0, 2.0], requires_grad=True)
    copied = f.new_tensor(source)
    assert not copied.requires_grad and copied.storage() is not source.storage()


def test_masked_fill():
    a, b = both(rng.standard_normal((3, 4)), requires_grad=True)
    ma, mb = both(rng.standard_normal(4) > 0)
    ours, theirs = a.masked_fill(ma, -1.5), b.masked_fill(mb, -1.5)
    check(ours, theirs)
    (ours * 3).sum().backward()
    (theirs * 3).sum().backward()
    check(a.grad, b.grad)
    ia, ib = both(np.arange(6).reshape(2, 3))
    check(ia.masked_fill(ia > 2, 9.7), ib.masked_fill(ib > 2, 9.7))  # cast to int64
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        a.masked_fill(jg.ones(4), 0.0)


def test_masked_fill_in_place_records_history():
    a, b = both(rng.standard_normal(5), requires_grad=True)
    ya, yb = a * 2, b * 2
    ma, mb = both(np.array([True, False, True, False, False]))
    assert ya.masked_fill_(ma, 0.0) is ya
    yb.masked_fill_(mb, 0.0)
    check(ya, yb)
    ya.sum().backward()
    yb.sum().backward()
    check(a.grad, b.grad)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        a.masked_fill_(ma, 0.0)


def _scatter_case(dim):
    x = rng.standard_normal((3, 4))
    index = (
        np.array([[2, 0, 1, 2], [0, 1, 2, 0]]) if dim == 0 else np.array([[3, 1], [0, 2], [1, 1]])
    )
    src = rng.standard_normal((3, 4))
    return x, index, src


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_and_scatter_add(dim):
    x, index, src = _scatter_case(dim % 2)
    ia, ib = jg.tensor(index), torch.tensor(index)
    # src larger than the index: its leading corner is read (torch has no gradient then)
    check(
        jg.tensor(x).scatter_add(dim, ia, jg.tensor(src)),
        torch.tensor(x).scatter_add(dim, ib, torch.tensor(src)),
    )
    src = src[tuple(slice(0, m) for m in index.shape)]
    xa, xb = both(x, requires_grad=True)
    sa, sb = both(src, requires_grad=True)
    if dim % 2 == 1:  # a repeated index: scatter's winner is unspecified, sums are not
        ours = xa.scatter_add(dim, ia, sa)
        theirs = xb.scatter_add(dim, ib, sb)
    else:
        check(xa.scatter(dim, ia, sa), xb.scatter(dim, ib, sb))
        check(xa.scatter(dim, ia, 2.5), xb.scatter(dim, ib, 2.5))
        ours = xa.scatter(dim, ia, sa) + xa.scatter_add(dim, ia, sa)
        theirs = xb.scatter(dim, ib, sb) + xb.scatter_add(dim, ib, sb)
    check(ours, theirs, rtol=1e-12)
    weight = rng.standard_normal(ours.shape)
    (ours * jg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    check(xa.grad, xb.grad, rtol=1e-12)
    check(sa.grad, sb.grad, rtol=1e-12)


def test_scatter_in_place_forms():
    x, index, src = _scatter_case(0)
    xa, xb = both(x)
    ia, ib = jg.tensor(index), torch.tensor(index)
    assert xa.scatter_(0, ia, jg.tensor(src)) is xa
    xb.scatter_(0, ib, torch.tensor(src))
    check(xa, xb)
    xa.scatter_(0, ia, 1.0)
    xb.scatter_(0, ib, 1.0)
    check(xa, xb)
    xa.scatter_add_(0, ia, jg.tensor(src))
    xb.scatter_add_(0, ib, torch.tensor(src))
    check(xa, xb, rtol=1e-12)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        xa.scatter_(0, jg.tensor([[3]]), 0.0)
    with pytest.raises(ValueError, match="same number of dimensions"):
        xa.scatter(0, jg.tensor([0]), 0.0)


@pytest.mark.parametrize("dim", [0, 1])
def test_index_add(dim):
    x = rng.standard_normal((3, 4))
    index = np.array([2, 0, 2]) if dim == 0 else np.array([1, 1, 3, 0, 1])
    source = rng.standard_normal((3, 4) if dim == 0 else (3, 5))
    xa, xb = both(x, requires_grad=True)
    sa, sb = both(source, requires_grad=True)
    ia, ib = jg.tensor(index), torch.tensor(index)
    ours, theirs = xa.index_add(dim, ia, sa, alpha=0.5), xb.index_add(dim, ib, sb, alpha=0.5)
    check(ours, theirs, rtol=1e-12)
    weight = rng.standard_normal(ours.shape)
    (ours * jg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    check(xa.grad, xb.grad)
    check(sa.grad, sb.grad, rtol=1e-12)
    ya, yb = both(x)
    assert ya.index_add_(dim, ia, jg.tensor(source)) is ya
    yb.index_add_(dim, ib, torch.tensor(source))
    check(ya, yb, rtol=1e-12)
    with pytest.raises(ValueError, match="does not match index"):
        ya.index_add(dim, ia, jg.ones((1, 1)))


def test_scatters_under_jit_use_each_calls_indices(monkeypatch):
    monkeypatch.setattr(jg.config, "numpy_tier_work", 0)

    def step(x, index, src, mask):
        y = x.scatter_add(1, index, src)
        y = y.index_add(0, index[:, 0], y * 2)
        return y.masked_fill(mask, 0.0).scatter(1, index, 1.0)

    jitted = jg.jit(step)
    for k in range(3):
        x = jg.tensor(rng.standard_normal((3, 4)))
        index = jg.tensor(rng.integers(0, 3, (3, 2)))
        src = jg.tensor(rng.standard_normal((3, 2)))
        mask = jg.tensor(rng.standard_normal(4) > 0)
        np.testing.assert_array_equal(
            jitted(x, index, src, mask).numpy(), step(x, index, src, mask).numpy(), err_msg=k
        )
    assert jitted.traces == 1
