"""Shape ops with gradients: views stay views, gradients go back in place."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitgrad as jg
from jitgrad.autograd import gradcheck


def leaf(shape, seed=0):
    return jg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_differentiable_views_share_storage():
    x = leaf((2, 3, 4))
    for view in (
        x.reshape(6, 4),
        x.permute(2, 0, 1),
        x.T,
        x.mT,
        x[1:, ::-2],
        x.flip(1),
        x.diagonal(0, 1, 2),
        x.unsqueeze(0).squeeze(0),
        x.flatten(1),
        x.narrow(2, 1, 2),
        x.expand(5, 2, 3, 4),
        x.view(3, 8),
        x.swapaxes(0, 2),
    ):
        assert view.storage() is x.storage() and view.grad_fn is not None


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.reshape(4, 6) * jg.arange(6.0),
        lambda t: t.permute(2, 0, 1) * jg.arange(3.0),
        lambda t: t.transpose(0, 2).sum(0),
        lambda t: t[1, ::-1, 1:3] ** 2,
        lambda t: t[..., None, 0].expand(2, 3, 5) * jg.arange(5.0),
        lambda t: t.flip((0, 2)).cumsum(1),
        lambda t: t.diagonal(1, 1, 2) * 3,
        lambda t: jg.concatenate([t, t[:, :1] * 2], axis=1),
        lambda t: jg.stack([t[0], t[1] ** 2], axis=-1),
        lambda t: t.flatten().narrow(0, 3, 10).view(2, 5),
        lambda t: jg.squeeze(t[:, :1], 1) + t.unsqueeze(1)[:, 0, 0],
        lambda t: t.astype(jg.float64) * t.clone(),
        lambda t: t.contiguous() * t.T.contiguous().T,
    ],
)
def test_movement_gradcheck(fn):
    assert gradcheck(fn, leaf((2, 3, 4)))


def test_view_backward_under_create_graph():
    x = leaf((3, 3))

    def first(t):
        (g,) = jg.autograd.grad(
            (t[::2, 1:] ** 3).sum() + (t.T.reshape(9) ** 2).sum(), [t], create_graph=True
        )
        return g

    assert gradcheck(first, x)


def test_numpy_spellings():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = jg.from_numpy(a)
    np.testing.assert_array_equal(jg.reshape(t, (6, 4)).numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(jg.transpose(t).numpy(), a.T)
    np.testing.assert_array_equal(jg.transpose(t, (1, 0, 2)).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(
        jg.transpose(t, axes=(2, 0, 1)).numpy(), np.transpose(a, axes=(2, 0, 1))
    )
    with pytest.raises(ValueError, match="not a permutation"):  # numpy's axes: all of them
        jg.transpose(t, axes=(1, 0))
    np.testing.assert_array_equal(jg.expand_dims(t, 1).numpy(), np.expand_dims(a, 1))
    np.testing.assert_array_equal(jg.squeeze(jg.expand_dims(t, 0)).numpy(), a)
    np.testing.assert_array_equal(
        jg.broadcast_to(t[:, :1], (2, 3, 4)).numpy(), np.broadcast_to(a[:, :1], (2, 3, 4))
    )
    np.testing.assert_array_equal(jg.flip(t, 1).numpy(), np.flip(a, 1))
    np.testing.assert_array_equal(
        jg.concatenate([t, t], axis=-1).numpy(), np.concatenate([a, a], -1)
    )
    np.testing.assert_array_equal(jg.stack([t, t], axis=1).numpy(), np.stack([a, a], 1))
    np.testing.assert_array_equal(jg.diagonal(t, 0, 1, 2).numpy(), np.diagonal(a, 0, 1, 2))


def test_broadcast_to_takes_an_int_shape_as_numpy():
    # numpy's broadcast_to(a, 3) means (3,); tuple(3) failed inside jitgrad.
    for got in (
        jg.broadcast_to(jg.ones(1), 3),
        np.broadcast_to(jg.ones(1), 3),
        jg.ones(1).broadcast_to(3),
    ):
        assert isinstance(got, jg.Tensor)
        np.testing.assert_array_equal(got.numpy(), np.broadcast_to(np.ones(1), 3))
    x = jg.tensor([2.0], requires_grad=True)
    jg.broadcast_to(x, 4).sum().backward()
    assert x.grad.tolist() == [4.0]


def test_shape_errors_are_clear():
    t = jg.zeros((2, 3))
    with pytest.raises(ValueError, match="differ in another axis"):
        jg.concatenate([t, jg.zeros((3, 3))], axis=1)
    with pytest.raises(ValueError, match="equal shapes"):
        jg.stack([t, jg.zeros((3, 2))])
    with pytest.raises(ValueError, match="cannot reshape 6 elements"):
        t.reshape(4)
    with pytest.raises(ValueError, match="use reshape"):
        t.T.view(6)
    with pytest.raises(ValueError, match="not a permutation"):
        t.permute(1, 1)


@pytest.mark.parametrize("offset", [1.0, "1", None])
def test_diagonal_and_trace_refuse_an_offset_that_is_not_an_integer(offset):
    # As numpy's: a float offset once gave a tensor of float shape, broken to print or use.
    t = jg.arange(6.0).reshape(2, 3)
    with pytest.raises(TypeError, match="offset must be an integer"):
        jg.diagonal(t, offset)
    with pytest.raises(TypeError, match="offset must be an integer"):
        jg.trace(t, offset)
    assert jg.diagonal(t, np.int64(1)).tolist() == [1.0, 5.0]


def test_cast_gradient_comes_back_in_the_input_dtype():
    x = jg.tensor([1.0, 2.0], dtype=jg.float32, requires_grad=True)
    (x.astype(jg.float64) * 3).sum().backward()
    assert x.grad.dtype is jg.float32 and x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("axis", [0, -1, (0, 2), (-1, 1), (0, 1, 2)])
def test_expand_dims_takes_numpy_axes(axis):
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        jg.expand_dims(jg.tensor(x), axis).numpy(), np.expand_dims(x, axis)
    )


def test_expand_dims_refuses_repeated_or_out_of_range_axes():
    x = jg.ones((2, 3))
    with pytest.raises(ValueError, match="repeated axis"):
        jg.expand_dims(x, (1, 1))
    with pytest.raises(IndexError, match="out of range"):
        jg.expand_dims(x, (0, 5))


def test_concatenate_without_an_axis_joins_flattened_tensors():
    a, b = np.arange(4.0).reshape(2, 2), np.arange(3.0)
    x = jg.tensor(a, requires_grad=True)
    out = jg.concatenate([x, jg.tensor(b)], axis=None)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a, b], axis=None))
    (out * jg.arange(7.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(4.0).reshape(2, 2))


def test_recorded_assignment_drops_the_values_extra_leading_ones_as_torch():
    torch = pytest.importorskip("torch")
    w0 = np.array([[[0.5, -1.0, 2.0]]])
    x = jg.arange(6.0).reshape(2, 3).requires_grad_()
    w = jg.tensor(w0, requires_grad=True)
    y = x * 1.0
    y[1:] = w * w
    (y * y).sum().backward()
    xt = torch.arange(6.0, dtype=torch.float64).reshape(2, 3).requires_grad_()
    wt = torch.tensor(w0, requires_grad=True)
    yt = xt * 1.0
    yt[1:] = wt * wt
    (yt * yt).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(w.grad.numpy(), wt.grad.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())

    def assigned(w):
        y = x.detach() * 1.0
        y[0] = w
        return y

    assert gradcheck(assigned, jg.tensor(w0, requires_grad=True))


@pytest.mark.parametrize("join", ["concatenate", "stack"])
def test_joined_mixed_dtype_gradients_have_each_input_dtype_as_pytorch(join):
    torch = pytest.importorskip("torch")
    torch_join = torch.cat if join == "concatenate" else torch.stack
    results = []
    for lib, fn in ((jg, getattr(jg, join)), (torch, torch_join)):
        a = lib.ones(3, dtype=lib.float16, requires_grad=True)
        b = lib.ones(3, dtype=lib.float32, requires_grad=True)
        (fn([a, b]) * 2).sum().backward()
        names = [str(t.grad.dtype).rsplit(".", 1)[-1] for t in (a, b)]
        results.append([*names, a.grad.tolist(), b.grad.tolist()])
    assert results[0] == results[1] == ["float16", "float32", [2.0] * 3, [2.0] * 3]


@settings(deadline=None, max_examples=25)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_unbind_and_iteration_gradients_match_pytorch(shape, data):
    torch = pytest.importorskip("torch")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    skipped = data.draw(st.integers(0, shape[axis] - 1))  # (its gradient is zeros)
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    a, t = jg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    parts = [jg.unbind(a * 1, axis), torch.unbind(t * 1, axis)]
    for lib_parts in parts:
        assert len(lib_parts) == shape[axis]
        total = sum((p * (k + 1.5)).sin().sum() for k, p in enumerate(lib_parts) if k != skipped)
        if not isinstance(total, int):
            total.backward()
    if a.grad is not None or t.grad is not None:
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    for mine, theirs in zip(*parts, strict=True):
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
    rows = leaf(shape, seed=3)
    (sum(r * (k + 1) for k, r in enumerate(rows)) ** 2).sum().backward()  # iterating
    expected = 2 * sum(r * (k + 1) for k, r in enumerate(rows.detach().numpy()))
    factors = np.arange(1, shape[0] + 1).reshape((-1,) + (1,) * (len(shape) - 1))
    np.testing.assert_allclose(rows.grad.numpy(), expected * factors, rtol=1e-12)


def test_unbind_gives_views_and_follows_in_place_writes():
    x = leaf((3, 2, 2))
    base = x * 1
    q, k, v = base  # views of base
    assert all(p.storage() is base.storage() for p in (q, k, v))
    q.mul_(2)  # written through: base[0] doubles
    (base.sum() + k.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0, 0], [2, 2, 1])
    x = leaf((3, 2))
    base = x * 1
    q, _, _ = jg.unbind(base)
    base.mul_(3)  # q reads the written base, and its gradient follows
    q.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[3, 3], [0, 0], [0, 0]])
    plain = jg.arange(6.0).reshape(2, 3)
    column = plain.unbind(dim=1)[2]  # no grad: plain views
    column += 10
    assert plain.tolist() == [[0, 1, 12], [3, 4, 15]]
    with pytest.raises(ValueError, match="unbind needs a tensor with at least one dimension"):
        jg.unbind(jg.tensor(1.0))


def test_unbind_backward_stacks_under_jit():
    """A jitted step's gradient through q, k, v = t fills no zero tensor per slice."""
    w = jg.tensor(np.random.default_rng(4).standard_normal((3, 8, 5)), requires_grad=True)

    def step(w):
        w.grad = None
        q, k, v = w * 2
        (q * k + v).sum().backward()
        return w.grad

    jitted = jg.jit(step)
    for _ in range(3):
        got = jitted(w).numpy()
    x = w.detach().numpy()
    np.testing.assert_allclose(got, 2 * np.stack([2 * x[1], 2 * x[0], np.ones_like(x[2])]))
    steps = next(iter(jitted.plans.values())).steps
    filled = [args[2] - args[1] for fn, args in steps if getattr(fn, "__name__", "") == "fill"]
    assert max(filled) == 1  # (the seed of the loss's backward)


def test_a_jitted_concatenate_joins_straight_into_its_result():
    """Replayed, a concatenation writes its result once: no copy of a joined temporary."""
    step = jg.jit(lambda a, b: jg.concatenate([a * 2, b], axis=1))
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, y = rng.standard_normal((3, 2)), rng.standard_normal((3, 4)).astype(np.float32)
        got = step(jg.asarray(x), jg.asarray(y))
        assert got.dtype == jg.float64
        np.testing.assert_array_equal(got.numpy(), np.concatenate([x * 2, y], axis=1))
    names = [getattr(fn, "__name__", "") for fn, _ in next(iter(step.plans.values())).steps]
    assert "_into" not in names
