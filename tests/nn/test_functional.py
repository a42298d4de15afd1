"""jitgrad.nn.functional against float64 numpy references and finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad.autograd import grad, gradcheck

DTYPES = [jg.float32, jg.float64]
TOL = {jg.float32: dict(rtol=1e-5, atol=1e-5), jg.float64: dict(rtol=1e-12, atol=1e-12)}


def data(shape, seed=0, dtype=np.float64, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def leaf(shape, seed=0, scale=1.0):
    return jg.tensor(data(shape, seed, scale=scale), requires_grad=True)


# -- float64 numpy references ----------------------------------------------------------------


def np_log_softmax(x, axis=-1):
    x = np.asarray(x, np.float64)
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def np_cross_entropy(
    logits, labels, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0
):
    """PyTorch's definition, one sample at a time."""
    axis = 1 if logits.ndim > 1 else 0
    logp = np.moveaxis(np_log_softmax(logits, axis), axis, -1)
    n_classes = logp.shape[-1]
    shape = np.shape(labels)
    logp, labels = logp.reshape(-1, n_classes), np.asarray(labels).reshape(-1)
    w = np.ones(n_classes) if weight is None else np.asarray(weight, np.float64)
    losses, weights = [], []
    for row, label in zip(logp, labels, strict=True):
        if label == ignore_index:
            losses.append(0.0)
            weights.append(0.0)
            continue
        nll = -w[label] * row[label]
        smooth = -(w * row).sum() / n_classes
        losses.append((1 - smoothing) * nll + smoothing * smooth)
        weights.append(w[label])
    losses = np.array(losses)
    if reduction == "none":
        return losses.reshape(shape)
    return losses.sum() / (np.sum(weights) if reduction == "mean" else 1.0)


def np_bce_with_logits(x, t, pos_weight=None):
    x, t = np.asarray(x, np.float64), np.asarray(t, np.float64)
    pw = 1.0 if pos_weight is None else np.asarray(pos_weight)
    log_sig = -np.logaddexp(0, -x)  # log σ(x)
    log_one_minus = -np.logaddexp(0, x)  # log(1 - σ(x))
    return -(pw * t * log_sig + (1 - t) * log_one_minus)


# -- softmax and log_softmax -----------------------------------------------------------------


@st.composite
def shape_and_axis(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    return shape, draw(st.integers(-len(shape), len(shape) - 1))


@settings(max_examples=40, deadline=None)
@given(case=shape_and_axis(), dtype=st.sampled_from(DTYPES), scale=st.sampled_from([1.0, 1e4]))
def test_softmax_and_log_softmax_match_numpy(case, dtype, scale):
    shape, axis = case
    a = data(shape, 1, dtype.numpy, scale)
    expected = np_log_softmax(a, axis)
    got_log = F.log_softmax(jg.from_numpy(a), axis)
    got = F.softmax(jg.from_numpy(a), dim=axis)
    assert got.dtype is dtype and got_log.dtype is dtype
    assert np.all(np.isfinite(got_log.numpy()))
    np.testing.assert_allclose(got_log.numpy(), expected, **TOL[dtype])
    np.testing.assert_allclose(got.numpy(), np.exp(expected), **TOL[dtype])


def test_softmax_dim_alias_and_rows_sum_to_one():
    x = jg.from_numpy(data((3, 4, 5)))
    for dim in (0, 1, 2, -1):
        s = F.softmax(x, dim=dim)
        np.testing.assert_allclose(s.numpy().sum(axis=dim), 1.0, rtol=1e-12)
        np.testing.assert_allclose(
            F.log_softmax(x, dim=dim).numpy(), np_log_softmax(x.numpy(), dim)
        )


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_gradcheck_on_views(fn, axis):
    base = leaf((4, 3), 2)
    wide = leaf((3, 8), 3)
    row = leaf((1, 4), 4)
    assert gradcheck(lambda b: fn(b.T, axis), base)  # transposed
    assert gradcheck(lambda w: fn(w[:, ::2], axis), wide)  # stepped
    assert gradcheck(lambda r: fn(r.expand(3, 4) * jg.arange(3.0).reshape(3, 1), axis), row)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_second_order(fn):
    x = leaf((2, 4), 5)
    w = jg.from_numpy(data((2, 4), 6))
    assert gradcheck(lambda x: grad((fn(x, 1) * w).sum(), [x], create_graph=True)[0], x)
    # the Hessian of the log-partition function is diag(p) - p p^T
    z = jg.tensor([0.3, -1.2, 2.0], requires_grad=True)
    (g,) = grad(-F.log_softmax(z, 0)[0], [z], create_graph=True)  # = softmax(z) - e0
    (h,) = grad(g[1], [z])
    p = np.exp(np_log_softmax(z.numpy()))
    np.testing.assert_allclose(h.numpy(), np.diag(p)[1] - p[1] * p, rtol=1e-12)


def test_softmax_of_huge_logits_has_finite_gradients():
    x = jg.tensor([[1e4, -1e4, 0.0], [3e4, 3e4, 3e4]], requires_grad=True)
    F.log_softmax(x, 1)[:, 0].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0, 0.0], [2 / 3, -1 / 3, -1 / 3]])


@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((3, 0, 2), 1), ((0,), 0), ((0, 3), 1)])
@pytest.mark.parametrize(
    "fn, module", [(F.softmax, jg.nn.Softmax), (F.log_softmax, jg.nn.LogSoftmax)]
)
def test_softmax_over_an_empty_axis_is_empty(shape, axis, fn, module):
    # torch.softmax and log_softmax give an empty result of the input's shape (no max of
    # an empty axis is needed to shift nothing)
    x = jg.zeros(shape, dtype=jg.float32, requires_grad=True)
    for y in (fn(x, dim=axis), module(axis)(x)):
        assert y.shape == shape and y.dtype is jg.float32
    fn(x, axis).sum().backward()
    assert x.grad.shape == shape


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("fn, value", [(F.softmax, 1.0), (F.log_softmax, 0.0)])
def test_softmax_of_a_0d_tensor_is_over_its_one_element(fn, value, dim):
    # torch.softmax(torch.tensor(3.0), 0) is 1 (log_softmax 0) with a zero gradient
    x = jg.tensor(3.0, requires_grad=True)
    y = fn(x, dim=dim)
    assert y.shape == () and y.item() == value
    y.backward()
    assert x.grad.item() == 0.0


# -- cross_entropy ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_cross_entropy_matches_numpy(dtype, reduction, scale):
    logits = data((6, 5), 1, dtype.numpy, scale)
    labels = np.array([0, 4, 2, 2, 1, 3])
    got = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(labels), reduction=reduction)
    expected = np_cross_entropy(logits, labels, reduction=reduction)
    assert got.dtype is dtype and np.all(np.isfinite(got.numpy()))
    tol = TOL[dtype] if scale == 1.0 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.numpy(), expected, **tol)


def test_cross_entropy_of_confident_logits_is_exact():
    logits = jg.tensor([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]], dtype=jg.float32)
    loss = F.cross_entropy(logits, jg.tensor([0, 1]), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0.0, np.log(2)], rtol=1e-6)
    wrong = F.cross_entropy(logits, jg.tensor([2, 0]), reduction="none")
    np.testing.assert_allclose(wrong.numpy(), [2e4, 1e4 + np.log(2)], rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(label_smoothing=0.1),
        dict(weight=[0.5, 2.0, 1.0, 0.1, 3.0]),
        dict(ignore_index=2),
        dict(weight=[0.5, 2.0, 1.0, 0.1, 3.0], label_smoothing=0.2, ignore_index=4),
        dict(ignore_index=1, reduction="sum"),
        dict(ignore_index=0, reduction="none"),
    ],
)
def test_cross_entropy_options_match_pytorch_definition(kwargs):
    logits, labels = data((6, 5), 2), np.array([0, 4, 2, 2, 1, 3])
    options = dict(kwargs)
    if "weight" in options:
        options["weight"] = jg.tensor(options["weight"])
    got = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(labels), **options)
    expected = np_cross_entropy(
        logits,
        labels,
        kwargs.get("weight"),
        kwargs.get("ignore_index", -100),
        kwargs.get("reduction", "mean"),
        kwargs.get("label_smoothing", 0.0),
    )
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_cross_entropy_spatial_and_unbatched():
    logits, labels = data((2, 4, 3, 2), 3), np.random.default_rng(0).integers(0, 4, (2, 3, 2))
    got = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(labels), reduction="none")
    flat = np.moveaxis(logits, 1, -1).reshape(-1, 4)
    expected = np_cross_entropy(flat, labels.reshape(-1), reduction="none").reshape(2, 3, 2)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    mean = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(labels))
    np.testing.assert_allclose(mean.item(), expected.mean(), rtol=1e-12)
    one = F.cross_entropy(jg.tensor([1.0, 2.0, 0.5]), jg.tensor(1))
    np.testing.assert_allclose(one.item(), -np_log_softmax([1.0, 2.0, 0.5])[1], rtol=1e-12)


def test_cross_entropy_probability_targets():
    logits, probs = data((4, 3), 4), np.random.default_rng(1).dirichlet(np.ones(3), 4)
    got = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(probs), label_smoothing=0.3)
    q = probs * 0.7 + 0.1
    np.testing.assert_allclose(
        got.item(), -(q * np_log_softmax(logits, 1)).sum(1).mean(), rtol=1e-12
    )
    # one-hot probabilities give the same loss as the labels
    labels = np.array([2, 0, 1, 1])
    hot = F.cross_entropy(jg.from_numpy(logits), jg.from_numpy(np.eye(3)[labels]))
    np.testing.assert_allclose(hot.item(), F.cross_entropy(jg.from_numpy(logits), labels).item())


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(reduction="sum", label_smoothing=0.1),
        dict(weight=jg.tensor([1.0, 0.5, 2.0, 0.3]), ignore_index=0),
    ],
)
def test_cross_entropy_gradcheck(kwargs):
    labels = jg.tensor([3, 0, 2, 1, 0])
    base = leaf((4, 5), 5)
    assert gradcheck(lambda b: F.cross_entropy(b.T, labels, **kwargs), base)
    wide = leaf((5, 8), 6)
    assert gradcheck(lambda w: F.cross_entropy(w[:, ::2] * 100, labels, **kwargs), wide)
    spatial = leaf((2, 4, 3), 7)
    spatial_labels = jg.tensor([[0, 3, 1], [2, 2, 0]])
    assert gradcheck(lambda s: F.cross_entropy(s, spatial_labels, **kwargs), spatial)


def test_cross_entropy_gradient_is_softmax_minus_one_hot():
    x = leaf((3, 4), 8, scale=1e4)
    labels = np.array([1, 3, 0])
    F.cross_entropy(x, labels, reduction="sum").backward()
    expected = np.exp(np_log_softmax(x.numpy(), 1)) - np.eye(4)[labels]
    assert np.all(np.isfinite(x.grad.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_of_non_finite_logits_as_pytorch(dtype):
    torch = pytest.importorskip("torch")
    nan, inf = float("nan"), float("inf")
    logits = np.array(
        [
            [0.5, nan, 1.0, -2.0],
            [nan, 0.1, 0.2, 0.3],
            [0.1, 0.2, 0.3, nan],
            [-inf, 0.5, 1.0, 0.0],
            [inf, 0.5, 1.0, 0.0],
            [0.3, -0.2, 2.0, 1.5],
        ],
        dtype=dtype.numpy,
    )
    labels = np.array([0, 2, 1, 1, 2, 3])
    x = jg.tensor(logits, requires_grad=True)
    loss = F.cross_entropy(x, jg.from_numpy(labels), reduction="none")
    loss.sum().backward()
    t = torch.tensor(logits, requires_grad=True)
    want = torch.nn.functional.cross_entropy(t, torch.from_numpy(labels), reduction="none")
    want.sum().backward()
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("shape", [(300, 70), (37, 1000), (3, 70000)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_cross_entropy_of_wide_rows_in_blocks_and_pieces_as_pytorch(shape, reduction, dtype):
    # rows wide enough for the per-row exponentials, over several blocks of rows and, at
    # this size, pieces shared among threads; a NaN and an infinity in some rows
    torch = pytest.importorskip("torch")
    n, c = shape
    logits = data(shape, 21, dtype.numpy, scale=4.0)
    logits[0, c // 2] = np.nan
    logits[-1, 3] = np.inf
    labels = np.random.default_rng(22).integers(0, c, n)
    labels[n // 2] = -100
    x = jg.tensor(logits, requires_grad=True)

    @jg.jit
    def step(x, y):
        loss = F.cross_entropy(x, y, reduction=reduction)
        (loss.sum() if reduction == "none" else loss).backward()
        return loss

    for _ in range(2):  # the trace, then a replay
        x.grad = None
        loss = step(x, jg.from_numpy(labels))
    t = torch.tensor(logits, requires_grad=True)
    want = torch.nn.functional.cross_entropy(t, torch.from_numpy(labels), reduction=reduction)
    (want.sum() if reduction == "none" else want).backward()
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **TOL[dtype])


def test_a_jitted_cross_entropy_step_passes_logits_and_gradient_by_reference():
    from jitgrad._config import config

    n, c = 64, config.parallel_threshold // 32  # large enough to pass by reference
    rng = np.random.default_rng(5)
    labels = jg.from_numpy(rng.integers(0, c, n))

    @jg.jit
    def step(x, y):
        x.grad = None
        F.cross_entropy(x, y).backward()
        return x.grad

    grads = []
    for k in range(3):
        logits = data((n, c), 30 + k, np.float32)
        x = jg.tensor(logits, requires_grad=True)
        grads.append(step(x, labels))
        expected = np.exp(np_log_softmax(logits, 1)) - np.eye(c, dtype=np.float32)[labels.numpy()]
        np.testing.assert_allclose(grads[-1].numpy(), expected / n, rtol=1e-5, atol=1e-8)
    plan = next(iter(step.plans.values()))
    logits_slots = plan._inputs[0][2]
    assert logits_slots is not None  # the kernels read the caller's logits
    assert len({id(g._storage) for g in grads}) == 3  # each call's gradient is its own


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fused_cross_entropy_equals_the_composite_form(reduction, ignore_index, dtype):
    from jitgrad._config import config

    logits = data((7, 5), 9, dtype.numpy, scale=3.0)
    labels = jg.tensor([2, 0, 4, 2, 1, 3, 0])
    weights = jg.tensor(data((7,), 10) if reduction == "none" else 1.5, dtype=dtype)
    results = {}
    for backend in ("jit", "reference"):  # the reference runs the composite form
        previous, config.backend = config.backend, backend
        try:
            x = jg.tensor(logits, requires_grad=True)
            loss = F.cross_entropy(x, labels, ignore_index=ignore_index, reduction=reduction)
            (loss * weights).sum().backward()
            results[backend] = loss.numpy(), x.grad.numpy()
        finally:
            config.backend = previous
    for got, expected in zip(results["jit"], results["reference"]):
        np.testing.assert_allclose(got, expected, **TOL[dtype])


def test_fused_cross_entropy_second_order_and_all_ignored():
    x = leaf((3, 4), 11)
    labels = jg.tensor([1, 3, 0])
    (g,) = grad(F.cross_entropy(x, labels), [x], create_graph=True)
    (gg,) = grad((g * g).sum(), [x])
    p = np.exp(np_log_softmax(x.numpy(), 1))
    np.testing.assert_allclose(g.numpy(), (p - np.eye(4)[[1, 3, 0]]) / 3, atol=1e-12)
    assert gradcheck(lambda t: grad(F.cross_entropy(t, labels), [t], create_graph=True)[0], x)
    assert np.all(np.isfinite(gg.numpy()))
    ignored = F.cross_entropy(jg.zeros((2, 3)), jg.tensor([-100, -100]))
    assert np.isnan(ignored.item())  # 0/0, as PyTorch


MASKED = [[0.0, -np.inf, 1.0, 2.0], [0.5, 1.0, -np.inf, -np.inf]]


@pytest.mark.parametrize("backend", ["jit", "reference"])
@pytest.mark.parametrize(
    "logits, labels, kwargs",
    [
        (MASKED[0], 0, {}),
        (MASKED, [3, -100], dict(weight=[1.0, 2.0, 0.5, 3.0])),
        (MASKED, [0, 1], dict(reduction="sum", label_smoothing=0.2)),
        (MASKED, [-100, 1], dict(label_smoothing=0.2)),
        (MASKED, [2, 0], {}),
        (np.transpose([MASKED, MASKED], (1, 2, 0)), [[3, 0], [1, -100]], {}),
    ],
)
def test_cross_entropy_with_masked_logits_matches_torch(backend, logits, labels, kwargs):
    torch = pytest.importorskip("torch")
    from jitgrad._config import config

    previous, config.backend = config.backend, backend
    try:
        x = jg.tensor(logits, requires_grad=True)
        weight = kwargs.get("weight")
        options = dict(kwargs, weight=None if weight is None else jg.tensor(weight))
        loss = F.cross_entropy(x, jg.tensor(labels), **options)
        loss.backward()
    finally:
        config.backend = previous
    tx = torch.tensor(np.asarray(logits), requires_grad=True)
    options = dict(kwargs, weight=None if weight is None else torch.tensor(weight, dtype=tx.dtype))
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(labels), **options)
    want.backward()
    # -inf logits of other classes cost nothing; smoothing over them is inf, as PyTorch's
    np.testing.assert_allclose(loss.numpy(), want.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_cross_entropy_float16_with_a_masked_logit():
    loss = F.cross_entropy(jg.tensor(MASKED, dtype=jg.float16), jg.tensor([0, 1]))
    logp = np_log_softmax(MASKED)
    assert loss.dtype is jg.float16
    np.testing.assert_allclose(loss.item(), -(logp[0, 0] + logp[1, 1]) / 2, rtol=1e-3)


@pytest.mark.parametrize(
    "kwargs", [dict(weight=jg.tensor([1.0, 2.0, 0.5, 3.0])), dict(reduction="sum")]
)
def test_cross_entropy_gradcheck_beside_a_masked_logit(kwargs):
    mask = np.array([[0.0, -np.inf, 0.0, 0.0], [0.0, 0.0, -np.inf, 0.0]])
    x, labels = leaf((2, 4), 12), jg.tensor([3, -100])
    assert gradcheck(lambda t: F.cross_entropy(t + mask, labels, **kwargs), x)


@pytest.mark.parametrize(
    "logits, labels, kwargs",
    [
        ((2, 3), (2,), dict(weight=jg.tensor([1.0, 2.0, 3.0]))),
        ((2, 3), (2,), dict(label_smoothing=0.1)),
        ((3,), (), {}),
        ((2, 3, 2), (2, 2), {}),
        ((2, 3), (2,), dict(create_graph=True)),
    ],
)
def test_cross_entropy_mean_over_no_labels_is_nan_with_zero_gradient(logits, labels, kwargs):
    """PyTorch's 0 / 0 loss, but a gradient of exactly 0: an optimizer step stays finite."""
    kwargs = dict(kwargs)
    create_graph = kwargs.pop("create_graph", False)
    x = leaf(logits, 13)
    labels = jg.full(labels, -100)
    (g,) = grad(F.cross_entropy(x, labels, **kwargs), [x], create_graph=create_graph)
    assert np.isnan(F.cross_entropy(x, labels, **kwargs).item())
    np.testing.assert_array_equal(g.numpy(), np.zeros(logits))
    if create_graph:  # through the fused op's recorded backward
        (gg,) = grad((g * g).sum() + g.sum(), [x])
        np.testing.assert_array_equal(gg.numpy(), np.zeros(logits))


def test_labels_out_of_range_are_caught_inside_a_jitted_step():
    logits = jg.zeros((2, 3), requires_grad=True)
    step = jg.jit(lambda y: F.cross_entropy(logits, y).backward())
    step(jg.tensor([0, 2]))
    with pytest.raises(IndexError, match="out of range"):
        step(jg.tensor([0, 3]))  # a replay: the Python checks do not run again


def test_cross_entropy_errors():
    logits = jg.zeros((3, 4))
    with pytest.raises(IndexError, match="label 4 .* 4 classes"):
        F.cross_entropy(logits, jg.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match="label -1 .* 4 classes"):
        F.cross_entropy(logits, jg.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"\(2,\).*\(3, 4\)"):
        F.cross_entropy(logits, jg.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"\(3, 3\).*\(3, 4\)"):
        F.cross_entropy(logits, jg.zeros((3, 3)))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, jg.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(logits, jg.tensor([0, 1, 2]), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"weight of shape \(3,\)"):
        F.cross_entropy(logits, jg.tensor([0, 1, 2]), weight=jg.ones(3))
    with pytest.raises(TypeError, match="integer class labels"):
        F.cross_entropy(logits, jg.tensor([True, False, True]))


def test_cross_entropy_with_no_classes_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [
        (np.zeros((0, 0)), np.zeros(0, np.int64)),
        (np.zeros((2, 0)), np.zeros((2, 0))),
        (np.zeros((0, 0)), np.zeros((0, 0))),
    ]
    for logits, target in cases:
        for reduction in ("sum", "none", "mean"):
            if reduction == "mean" and target.shape == (2, 0):
                continue  # torch divides by numel / classes = 0 / 0; below
            got = F.cross_entropy(jg.tensor(logits), jg.tensor(target), reduction=reduction)
            want = torch.nn.functional.cross_entropy(
                torch.from_numpy(logits), torch.from_numpy(target), reduction=reduction
            )
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    # two samples, each with loss 0 (a sum over no classes): their mean is 0
    assert F.cross_entropy(jg.zeros((2, 0)), jg.zeros((2, 0))).item() == 0.0
    with pytest.raises(IndexError, match="label 0 .* 0 classes .* axis 1 is empty"):
        F.cross_entropy(jg.zeros((2, 0)), jg.tensor([0, 0]))


# -- mse_loss and binary_cross_entropy_with_logits ---------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(dtype, reduction):
    a, b = data((3, 4), 1, dtype.numpy), data((3, 4), 2, dtype.numpy)
    got = F.mse_loss(jg.from_numpy(a), jg.from_numpy(b), reduction=reduction)
    sq = (a.astype(np.float64) - b) ** 2
    expected = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    assert got.dtype is dtype
    np.testing.assert_allclose(got.numpy(), expected, **TOL[dtype])
    x, y = leaf((4, 3), 3), leaf((3, 4), 4)
    assert gradcheck(lambda x, y: F.mse_loss(x.T, y, reduction=reduction), x, y)
    with pytest.raises(ValueError, match=r"\(3, 1\).*\(3,\)"):
        F.mse_loss(jg.ones(3), jg.ones((3, 1)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_numpy(dtype, reduction):
    x = data((4, 3), 1, dtype.numpy, scale=3.0)
    t = np.random.default_rng(2).uniform(size=(4, 3)).astype(dtype.numpy)
    pw = np.array([1.0, 2.5, 0.5], dtype.numpy)
    w = np.array([[2.0], [1.0], [0.5], [1.0]], dtype.numpy)
    for kwargs, ref in [
        (dict(), np_bce_with_logits(x, t)),
        (dict(pos_weight=jg.from_numpy(pw)), np_bce_with_logits(x, t, pw)),
        (dict(weight=jg.from_numpy(w)), w * np_bce_with_logits(x, t)),
    ]:
        got = F.binary_cross_entropy_with_logits(
            jg.from_numpy(x), jg.from_numpy(t), reduction=reduction, **kwargs
        )
        expected = {"mean": ref.mean(), "sum": ref.sum(), "none": ref}[reduction]
        assert got.dtype is dtype
        np.testing.assert_allclose(got.numpy(), expected, rtol=TOL[dtype]["rtol"] * 10, atol=1e-5)


def test_bce_with_logits_is_stable_and_gradchecks():
    x = jg.tensor([1e4, -1e4, 1e4, -1e4, 0.0], dtype=jg.float32, requires_grad=True)
    t = jg.tensor([1.0, 0.0, 0.0, 1.0, 0.5], dtype=jg.float32)
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    np.testing.assert_allclose(loss.numpy(), [0.0, 0.0, 1e4, 1e4, np.log(2)], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 1.0, -1.0, 0.0], atol=1e-7)
    logits, pos = leaf((3, 4), 5, scale=3.0), leaf((3,), 6)
    target = jg.tensor(np.random.default_rng(0).uniform(size=(4, 3)))
    assert gradcheck(
        lambda z, p: F.binary_cross_entropy_with_logits(z.T, target, pos_weight=p * p + 0.5),
        logits,
        pos,
    )
    with pytest.raises(ValueError, match=r"\(3,\).*\(3, 1\)"):
        F.binary_cross_entropy_with_logits(jg.ones((3, 1)), jg.ones(3))


# -- dropout ---------------------------------------------------------------------------------


def test_dropout_is_reproducible_with_a_seed():
    x = jg.ones((50, 40))
    a = F.dropout(x, 0.3, generator=jg.random.default_rng(7))
    b = F.dropout(x, 0.3, generator=jg.random.default_rng(7))
    c = F.dropout(x, 0.3, generator=jg.random.default_rng(8))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    np.testing.assert_array_equal(F.dropout(x, 0.3, generator=7).numpy(), a.numpy())
    rng = jg.random.default_rng(7)  # one generator advances between calls
    assert not np.array_equal(
        F.dropout(x, 0.3, generator=rng).numpy(), F.dropout(x, 0.3, generator=rng).numpy()
    )


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dropout_keep_rate_and_scale(p, dtype):
    x = jg.ones(200_000, dtype=dtype)
    y = F.dropout(x, p, generator=jg.random.default_rng(0)).numpy()
    assert y.dtype == dtype.numpy
    kept = y != 0
    assert abs(kept.mean() - (1 - p)) < 0.005  # ~5 standard deviations at n = 2e5
    np.testing.assert_allclose(y[kept], 1 / (1 - p), rtol=1e-6)
    assert abs(y.mean() - 1.0) < 0.03


def test_dropout_gradient_is_mask_times_scale():
    x = leaf((30, 20), 1)
    y = F.dropout(x, 0.4, generator=jg.random.default_rng(3))
    y.sum().backward()
    mask = y.numpy() / x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-12)
    assert set(np.round(np.unique(mask), 12)) == {0.0, round(1 / 0.6, 12)}
    assert gradcheck(lambda t: F.dropout(t.T, 0.4, generator=jg.random.default_rng(3)), x)


def test_dropout_edge_cases():
    x = leaf((4, 5), 2)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    y = F.dropout(x, 1.0)
    assert np.all(y.numpy() == 0)
    y.sum().backward()
    assert np.all(x.grad.numpy() == 0)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            F.dropout(x, p)
    with pytest.raises(TypeError, match="Generator"):
        F.dropout(x, 0.5, generator=np.random.default_rng(0))


def test_activations_are_the_ops():
    for name in ("relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu"):
        assert getattr(F, name) is getattr(jg, name)
    # F.softplus is PyTorch's: the op below its threshold, x itself above
    x = jg.tensor([-30.0, 0.5, 15.0])
    np.testing.assert_array_equal(F.softplus(x).numpy(), jg.softplus(x).numpy())
    assert F.softplus(jg.tensor([30.0])).item() == 30.0
    x = jg.tensor([-2.0, 0.5])
    np.testing.assert_allclose(F.leaky_relu(x, 0.1).numpy(), [-0.2, 0.5])
    import jitgrad.nn

    assert jitgrad.nn.functional is F


@pytest.mark.parametrize(
    "seeded",
    [lambda: 3, lambda: jg.random.default_rng(3)],
    ids=["int seed", "generator made in the call"],
)
def test_dropout_with_a_seed_gives_one_mask_eager_and_jitted(seeded):
    x = jg.ones(32)

    def drop(x):
        return F.dropout(x, 0.5, generator=seeded()) + jg.random.default_rng(4).random(32)

    eager = [drop(x).numpy() for _ in range(2)]
    jitted = jg.jit(drop)
    masks = eager + [jitted(x).numpy() for _ in range(3)]
    assert all(np.array_equal(m, masks[0]) for m in masks)
    fresh = jg.jit(lambda x: F.dropout(x, 0.5))  # no seed: a new mask every call
    assert len({tuple(fresh(x).tolist()) for _ in range(3)}) == 3
    kept = jg.random.default_rng(5)  # made outside: each call draws on, eager and jitted
    drawing = jg.jit(lambda x: F.dropout(x, 0.5, generator=kept))
    masks = [drawing(x) for _ in range(3)]
    assert len({tuple(m.tolist()) for m in masks}) == 3
