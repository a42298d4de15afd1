"""PyTorch's tensor conveniences (jitgrad/ops/torch_methods.py) against PyTorch: values,
dtypes, gradients, the in-place forms, and scatters under jg.jit."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize("dim", [None, 1])
@pytest.mark.parametrize("p", [0.5, 1, 1.5, 2, 3, math.inf])
@pytest.mark.parametrize("norm", ["method", "jg.norm", "vector_norm"])
def test_norm_gradient_at_zero_entries_and_an_all_zero_row(norm, p, dim):
    values = np.array([[0.0, 1.5, -2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1.0, -3.0, 0.5, 0.0]])
    a, b = both(values, requires_grad=True)
    ours = {
        "method": lambda: a.norm(p, dim),
        "jg.norm": lambda: jg.norm(a, p, dim),
        "vector_norm": lambda: jg.linalg.vector_norm(a, ord=p, axis=dim),
    }[norm]()
    theirs = b.norm(p, dim)
    check(ours, theirs, rtol=1e-12)
    # a generator of its own: the shared one's stream feeds the tests after this one
    weight = np.random.default_rng(1).standard_normal(ours.shape)
    (ours * jg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    assert not np.isnan(a.grad.numpy()).any()
    check(a.grad, b.grad, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_methods(name):
    a, b = both(rng.standard_normal((3, 4)), requires_grad=True)
    ours, theirs = getattr(a, name)(1), getattr(b, name)(1)
    check(ours, theirs, rtol=1e-12)
    (ours * jg.arange(4.0)).sum().backward()
    (theirs * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    check(a.grad, b.grad, rtol=1e-10, atol=1e-14)
    float32 = getattr(a, name)(0, dtype=jg.float32), getattr(b, name)(0, dtype=torch.float32)
    check(*float32, rtol=1e-6)  # (float32 rounding: the two libraries order sums apart)


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


SCATTER_REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _scatter_reduce_case(seed):
    """Random shapes and a dim, an index with repeats along it (longer than self there),
    and values: normal for even seeds, small integers for odd ones (ties for amax/amin,
    single and repeated zeros for prod)."""
    local = np.random.default_rng(seed)
    ndim = int(local.integers(1, 4))
    shape = tuple(int(n) for n in local.integers(1, 5, ndim))
    dim = int(local.integers(-ndim, ndim))
    index_shape = tuple(
        n + 2 if d == dim % ndim else int(local.integers(1, n + 1)) for d, n in enumerate(shape)
    )
    index = local.integers(0, shape[dim], index_shape)
    if seed % 2:
        x, src = (local.integers(-2, 3, s).astype(float) for s in (shape, index_shape))
    else:
        x, src = local.standard_normal(shape), local.standard_normal(index_shape)
    return x, dim, index, src, local.standard_normal(shape)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
@pytest.mark.parametrize("seed", range(6))
def test_scatter_reduce_values_and_gradients_match_pytorch(seed, reduce, include_self):
    x, dim, index, src, weight = _scatter_reduce_case(seed)
    xa, xb = both(x, requires_grad=True)
    sa, sb = both(src, requires_grad=True)
    ia, ib = jg.tensor(index), torch.tensor(index)
    ours = xa.scatter_reduce(dim, ia, sa, reduce, include_self=include_self)
    theirs = xb.scatter_reduce(dim, ib, sb, reduce, include_self=include_self)
    check(ours, theirs, rtol=1e-12)
    (ours * jg.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    check(xa.grad, xb.grad, rtol=1e-10, atol=1e-12)
    check(sa.grad, sb.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
def test_scatter_reduce_forms_integers_and_a_larger_src(reduce):
    x, dim, index, src, _ = _scatter_reduce_case(5)
    ia, ib = jg.tensor(index), torch.tensor(index)
    expected = torch.tensor(x).scatter_reduce(dim, ib, torch.tensor(src), reduce)
    check(jg.scatter_reduce(jg.tensor(x), dim, ia, jg.tensor(src), reduce), expected)
    xa, xb = both(x)
    assert xa.scatter_reduce_(dim, ia, jg.tensor(src), reduce, include_self=False) is xa
    xb.scatter_reduce_(dim, ib, torch.tensor(src), reduce, include_self=False)
    check(xa, xb, rtol=1e-12)
    for include_self in (True, False):  # integers: PyTorch floors a mean
        ours = jg.tensor(x.astype(np.int64)).scatter_reduce(
            dim, ia, jg.tensor(src.astype(np.int64)), reduce, include_self=include_self
        )
        theirs = torch.tensor(x.astype(np.int64)).scatter_reduce(
            dim, ib, torch.tensor(src.astype(np.int64)), reduce, include_self=include_self
        )
        check(ours, theirs)
    larger = np.concatenate([src, src], axis=dim)  # its leading corner is read
    check(
        jg.tensor(x).scatter_reduce(dim, ia, jg.tensor(larger), reduce),
        torch.tensor(x).scatter_reduce(dim, ib, torch.tensor(larger), reduce),
        rtol=1e-12,
    )


def test_scatter_reduce_refuses_an_unknown_reduction():
    x = jg.zeros(3)
    with pytest.raises(ValueError, match="reduce must be one of 'sum', .* got 'max'"):
        x.scatter_reduce(0, jg.tensor([0]), jg.ones(1), "max")
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        x.scatter_reduce(0, jg.tensor([3]), jg.ones(1), "sum")


def test_scatter_reduce_under_jit_uses_each_calls_indices(monkeypatch):
    monkeypatch.setattr(jg.config, "numpy_tier_work", 0)
    local = np.random.default_rng(2)
    w = jg.tensor(local.standard_normal((3, 4)), requires_grad=True)
    v = jg.tensor(local.standard_normal((3, 5)), requires_grad=True)

    def step(x, index, src):
        w.grad = v.grad = None
        y = (x * w).scatter_reduce(1, index, src * v, "amax", include_self=False)
        y = y.scatter_reduce(1, index, src * v, "mean").scatter_reduce(1, index, src, "prod")
        (y * y).sum().backward()
        return y, w.grad, v.grad

    jitted = jg.jit(step)
    for k in range(3):
        x = jg.tensor(local.standard_normal((3, 4)))
        index = jg.tensor(local.integers(0, 4, (3, 5)))
        src = jg.tensor(local.standard_normal((3, 5)))
        for got, expected in zip(jitted(x, index, src), step(x, index, src), strict=True):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, err_msg=k)
    assert jitted.traces == 1


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


# -- shapes, selections and the rest of the everyday methods ---------------------------------


def _lib(x):
    return jg if isinstance(x, jg.Tensor) else torch


EVERYDAY = {
    "chunk": lambda x: x.chunk(3, dim=-1),
    "chunk, fewer pieces": lambda x: x.chunk(4, dim=1),
    "chunk function": lambda x: _lib(x).chunk(x, 3, 0),
    "split by size": lambda x: x.split(4, dim=1),
    "split by sizes": lambda x: x.split([1, 2, 3], dim=1),
    "tensor_split": lambda x: x.tensor_split(4, dim=1),
    "tensor_split at indices": lambda x: _lib(x).tensor_split(x, [1, 4], dim=1),
    "expand_as": lambda x: x[:1].expand_as(x),
    "view_as": lambda x: x.view_as(x.T.contiguous()),
    "reshape_as": lambda x: x.reshape_as(x.T),
    "unflatten": lambda x: x.unflatten(1, (2, -1)),
    "movedim": lambda x: x.unflatten(1, (2, 3)).movedim(0, 2),
    "swapdims": lambda x: x.swapdims(0, 1),
    "index_select": lambda x: x.index_select(1, _lib(x).tensor([0, 5, 2, 2])),
    "masked_select": lambda x: x.masked_select(x > 0.2),
    "masked_select, broadcast mask": lambda x: x.masked_select(x[0] > 0),
    "roll": lambda x: x.roll(2, 1),
    "roll flattened": lambda x: x.roll(3),
    "roll along several": lambda x: x.roll((1, -2), (0, 1)),
    "tril": lambda x: x.tril(),
    "triu": lambda x: x.triu(-1),
    "repeat_interleave": lambda x: x.repeat_interleave(2, dim=0),
    "repeat_interleave flattened": lambda x: x.repeat_interleave(2),
    "amax": lambda x: x.amax(dim=1),
    "amax of all": lambda x: x.amax(),
    "amin": lambda x: x.amin(dim=0, keepdim=True),
    "topk": lambda x: x.topk(3, dim=1).values,
    "topk smallest": lambda x: x.topk(2, dim=0, largest=False),
    "lerp": lambda x: x.lerp(x * 2 + 1, 0.3),
    "lerp function": lambda x: _lib(x).lerp(x, x.flip(0), 0.75),
    "rsqrt": lambda x: (x.abs() + 0.5).rsqrt(),
    "bmm": lambda x: _lib(x).bmm(x.reshape(2, 2, 6), x.reshape(2, 6, 2)),
    "addmm": lambda x: _lib(x).addmm(x[0, :2], x[:, :3].T, x[:, 4:], beta=0.5, alpha=2),
}


@pytest.mark.parametrize("name", list(EVERYDAY))
def test_everyday_methods_and_their_gradients_match_pytorch(name):
    values = rng.standard_normal((4, 6))
    a, t = both(values, requires_grad=True)
    ours, theirs = EVERYDAY[name](a), EVERYDAY[name](t)
    ours = list(ours) if isinstance(ours, (list, tuple)) else [ours]
    theirs = list(theirs) if isinstance(theirs, (list, tuple)) else [theirs]
    assert len(ours) == len(theirs)
    for mine, other in zip(ours, theirs):
        check(mine, other, rtol=1e-12)
    weights = [rng.standard_normal(tuple(o.shape)) for o in theirs]
    floating = [(m, o, w) for m, o, w in zip(ours, theirs, weights) if o.dtype.is_floating_point]
    sum((m * jg.tensor(w)).sum() for m, _, w in floating).backward()
    sum((o * torch.tensor(w)).sum() for _, o, w in floating).backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@settings(deadline=None, max_examples=40)
@given(n=st.integers(0, 9), pieces=st.integers(1, 5), size=st.integers(1, 4))
def test_chunks_and_splits_cut_as_pytorch(n, pieces, size):
    a, t = jg.arange(n), torch.arange(n)
    for ours, theirs in (
        (jg.chunk(a, pieces), torch.chunk(t, pieces)),
        (a.split(size), t.split(size)),
        (a.tensor_split(pieces), t.tensor_split(pieces)),
    ):
        assert [p.tolist() for p in ours] == [p.tolist() for p in theirs]
    pieces_of = [p for p in a.split(size) if p.numel()]
    assert all(p.storage() is a.storage() for p in pieces_of)  # views


def test_everyday_methods_refuse_bad_arguments_clearly():
    x = jg.ones((2, 3))
    for call, error, message in [
        (lambda: jg.chunk(jg.tensor(1.0), 2), ValueError, "at least one dimension"),
        (lambda: x.chunk(0), ValueError, "chunks must be positive"),
        (lambda: x.split(0, dim=1), ValueError, "split_size must be positive"),
        (lambda: x.split([1, 1], dim=1), ValueError, "do not add up"),
        (lambda: jg.bmm(x, x.T), ValueError, "3-d"),
        (lambda: jg.bmm(jg.ones((2, 2, 3)), jg.ones((3, 3, 2))), ValueError, "do not multiply"),
        (lambda: x.topk(4), ValueError, "out of range"),
        (lambda: x.index_select(1, jg.tensor([3])), IndexError, "out of bounds"),
        (lambda: x.index_select(1, jg.tensor([[0]])), ValueError, "1-d"),
        (lambda: x.masked_select(jg.ones(3)), TypeError, "bool"),
    ]:
        with pytest.raises(error, match=message):
            call()


def test_in_place_forms_and_random_fills():
    c = jg.arange(12.0).reshape(3, 4)
    c.clamp_(2, 9).tril_()
    assert c.tolist() == [[2, 0, 0, 0], [4, 5, 0, 0], [8, 9, 9, 0]]
    w = jg.ones(3, requires_grad=True)
    h = w * 2
    h.rsqrt_()  # recorded: the gradient goes through
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), -0.5 * 2 * 2.0**-1.5 * np.ones(3))
    x = jg.zeros((200,), dtype=jg.float32)
    assert x.uniform_(-1, 2) is x and -1 <= x.min().item() and x.max().item() <= 2
    assert abs(x.normal_(5, 0.1).mean().item() - 5) < 0.1 and x.dtype is jg.float32
    first, second = (
        jg.zeros(4).uniform_(generator=jg.random.default_rng(7)).tolist() for _ in range(2)
    )
    assert first == second
    w = jg.ones(3, requires_grad=True)
    drawn = w * 1
    drawn.normal_()  # no gradient flows back through drawn values
    (drawn * 2).sum().backward()
    assert w.grad.tolist() == [0, 0, 0]


def test_everyday_selections_under_jit():
    x = jg.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    index = jg.tensor([4, 0, 0])

    def step(x, index):
        x.grad = None
        q, k, v = x.split(2, dim=1)
        picked = x.index_select(0, index).topk(2, dim=1).values
        (q * k + v).sum().backward()
        return picked, x.grad

    jitted = jg.jit(step)
    for _ in range(3):
        picked, grad = jitted(x, index)
    values = x.detach().numpy()
    np.testing.assert_array_equal(picked.numpy(), -np.sort(-values[[4, 0, 0]], axis=1)[:, :2])
    expected = np.concatenate([values[:, 2:4], values[:, 0:2], np.ones((5, 2))], axis=1)
    np.testing.assert_allclose(grad.numpy(), expected)
    with pytest.raises(IndexError, match="out of bounds"):
        jitted(x, jg.tensor([5, 0, 0]))


def test_device_methods_name_the_one_device():
    x = jg.ones(3)
    assert x.cpu() is x and x.is_cuda is False
    with pytest.raises(ValueError, match="CPU only; device 'cuda' is not available"):
        x.cuda()


def test_random_like_draws_take_the_shape_and_dtype_as_pytorch():
    x = jg.ones((2, 3), dtype=jg.float32)
    for ours, theirs in [
        (jg.randn_like(x), torch.randn_like(torch.ones((2, 3)))),
        (jg.rand_like(x, dtype=jg.float64), torch.rand_like(torch.ones(2, 3), dtype=torch.float64)),
        (jg.randint_like(x, 5), torch.randint_like(torch.ones((2, 3)), 5)),
        (jg.randint_like(x.int(), 2, 5), torch.randint_like(torch.ones((2, 3)).int(), 2, 5)),
    ]:
        assert ours.shape == tuple(theirs.shape)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    drawn = jg.randint_like(x, 2, 5)
    assert ((drawn >= 2) & (drawn < 5)).all() and (drawn == drawn.round()).all()
    u = jg.rand_like(x, generator=jg.random.default_rng(1))
    assert u.tolist() == jg.rand_like(x, generator=jg.random.default_rng(1)).tolist()
    assert jg.randn_like(x, requires_grad=True).requires_grad


def test_inference_mode_records_nothing_as_no_grad():
    w = jg.ones(2, requires_grad=True)
    with jg.inference_mode():
        assert not (w * 2).requires_grad
    with jg.inference_mode(False):
        assert (w * 2).requires_grad

    @jg.inference_mode
    def bare():
        return (w * 2).requires_grad

    @jg.inference_mode()
    def called():
        return (w * 2).requires_grad

    assert not bare() and not called() and jg.autograd.is_grad_enabled()


def test_pytorch_module_functions_match_pytorch():
    values = rng.standard_normal((3, 4))
    a, t = both(values)
    pairs = [
        (jg.clamp(a, -0.2, 0.5), torch.clamp(t, -0.2, 0.5)),
        (jg.softmax(a, 1), torch.softmax(t, 1)),
        (jg.topk(a, 2, dim=1).values, torch.topk(t, 2, dim=1).values),
        (jg.index_select(a, 0, jg.tensor([2, 0])), torch.index_select(t, 0, torch.tensor([2, 0]))),
        (jg.masked_select(a, a > 0.5), torch.masked_select(t, t > 0.5)),
        (jg.norm(a), torch.norm(t)),
        (jg.norm(a, 1, dim=1), torch.norm(t, 1, dim=1)),
        (jg.dist(a, a * 2, 3), torch.dist(t, t * 2, 3)),
        (jg.mm(a, a.T), torch.mm(t, t.T)),
        (jg.mv(a, a[0]), torch.mv(t, t[0])),
        (
            jg.baddbmm(a[0, :3], a[None, :, :3], a[None, :3, :3], beta=0.5, alpha=2),
            torch.baddbmm(t[0, :3], t[None, :, :3], t[None, :3, :3], beta=0.5, alpha=2),
        ),
    ]
    for ours, theirs in pairs:
        check(ours, theirs, rtol=1e-12)
    assert jg.numel(a) == torch.numel(t) == 12
    assert jg.is_tensor(a) and not jg.is_tensor(values)
    shared = jg.as_tensor(values)
    assert (
        np.shares_memory(shared.numpy(), values)
        and jg.as_tensor(values, jg.float32).dtype is jg.float32
    )
    with pytest.raises(ValueError, match="two matrices"):
        jg.mm(a, a[0])
    with pytest.raises(ValueError, match="a matrix and a vector"):
        jg.mv(a, a)


# -- cdist ---------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, 0.0, math.inf])
@pytest.mark.parametrize(
    ("shape1", "shape2"), [((5, 3), (4, 3)), ((2, 3, 4), (1, 5, 4)), ((2, 1, 3, 2), (4, 6, 2))]
)
def test_cdist_and_its_gradients_match_pytorch(p, shape1, shape2):
    first, second = rng.standard_normal(shape1), rng.standard_normal(shape2)
    corner1, corner2 = (0,) * (len(shape1) - 2), (0,) * (len(shape2) - 2)  # first batch
    second[(*corner2, 0)] = first[(*corner1, 0)]  # coinciding rows: PyTorch's gradient is 0
    second[(*corner2, 1, 0)] = first[(*corner1, 1, 0)]  # and an equal entry
    a, ta = both(first, requires_grad=True)
    b, tb = both(second, requires_grad=True)
    ours, theirs = jg.cdist(a, b, p), torch.cdist(ta, tb, p)
    check(ours, theirs, rtol=1e-12, atol=1e-14)
    weights = rng.standard_normal(tuple(theirs.shape))
    (ours * jg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cdist_traces_and_refuses_bad_arguments():
    step = jg.jit(lambda x, y: jg.cdist(x, y, 1.5))
    for _ in range(2):
        x, y = jg.tensor(rng.standard_normal((3, 2))), jg.tensor(rng.standard_normal((4, 2)))
        np.testing.assert_allclose(step(x, y).numpy(), jg.cdist(x, y, 1.5).numpy(), rtol=1e-12)
    x = jg.ones((3, 2))
    with pytest.raises(ValueError, match="non-negative p"):
        jg.cdist(x, x, -1.0)
    with pytest.raises(ValueError, match="same length"):
        jg.cdist(x, jg.ones((3, 4)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        jg.cdist(jg.ones(3), x)
