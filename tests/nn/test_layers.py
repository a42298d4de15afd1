"""Every layer's forward against a float64 numpy reference, and its gradients against
finite differences (gradcheck perturbs the layer's own parameters in place)."""

import math

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.autograd import gradcheck


def data(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def leaf(shape, seed=0, scale=1.0):
    return jg.tensor(data(shape, seed, scale), requires_grad=True)


def np_erf(x):
    return np.vectorize(math.erf)(x)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_log_softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


# -- activations: (layer, numpy reference) ---------------------------------------------------

ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np_erf(x / math.sqrt(2)))),
    (
        nn.GELU("tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    (nn.SiLU(), lambda x: x * np_sigmoid(x)),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), np_sigmoid),
    (nn.Softmax(dim=1), lambda x: np.exp(np_log_softmax(x, 1))),
    (nn.Softmax(dim=0), lambda x: np.exp(np_log_softmax(x, 0))),
    (nn.LogSoftmax(dim=1), lambda x: np_log_softmax(x, 1)),
    (nn.Identity(), lambda x: x),
    (nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
]


@pytest.mark.parametrize("layer, reference", ACTIVATIONS, ids=[repr(a) for a, _ in ACTIVATIONS])
def test_activation_forward_and_gradient(layer, reference):
    x = leaf((4, 5), seed=1)
    np.testing.assert_allclose(layer(x).numpy(), reference(x.numpy()), rtol=1e-12, atol=1e-12)
    # away from relu's kink at 0, where finite differences are meaningless
    assert gradcheck(
        layer, jg.tensor(data((3, 4), 2) + 0.05 * np.sign(data((3, 4), 2)), requires_grad=True)
    )


def test_activations_keep_float32():
    x = jg.asarray(data((2, 3)).astype(np.float32))
    for layer, _ in ACTIVATIONS:
        assert layer(x).dtype is jg.float32, layer


# -- Linear ----------------------------------------------------------------------------------


def test_linear_forward_against_numpy():
    fc = nn.Linear(5, 3, generator=0)
    x = data((4, 5))
    expected = x @ fc.weight.numpy().T + fc.bias.numpy()
    np.testing.assert_allclose(fc(jg.asarray(x)).numpy(), expected, rtol=1e-12)
    batched = data((2, 4, 5))
    expected = batched @ fc.weight.numpy().T + fc.bias.numpy()
    np.testing.assert_allclose(fc(jg.asarray(batched)).numpy(), expected, rtol=1e-12)
    no_bias = nn.Linear(5, 3, bias=False)
    assert no_bias.bias is None and list(no_bias.state_dict()) == ["weight"]
    np.testing.assert_allclose(no_bias(jg.asarray(x)).numpy(), x @ no_bias.weight.numpy().T)


def test_linear_gradcheck():
    fc = nn.Linear(4, 3, generator=0)
    assert gradcheck(lambda x, w, b: fc(x), leaf((2, 4)), fc.weight, fc.bias)


def test_linear_init_matches_pytorch_bounds_and_is_seeded():
    fc = nn.Linear(64, 128, generator=0)
    bound = 1 / math.sqrt(64)
    w, b = fc.weight.numpy(), fc.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.95 * bound  # uniform over the whole interval
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # U(-b, b) has std b/√3
    again = nn.Linear(64, 128, generator=0)
    np.testing.assert_array_equal(again.weight.numpy(), w)
    assert not np.array_equal(nn.Linear(64, 128, generator=1).weight.numpy(), w)
    f32 = nn.Linear(64, 128, dtype="float32", generator=0)
    assert f32.weight.dtype is jg.float32
    np.testing.assert_array_equal(f32.weight.numpy(), w.astype(np.float32))


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (0, 0), (2, 0, 3)])
@pytest.mark.parametrize(
    "fill", ["kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_"]
)
def test_fan_based_init_of_an_empty_tensor_is_a_no_op(fill, shape):
    """PyTorch's no-op with a warning; a fan of 0 used to divide by zero."""
    t = jg.empty(shape)
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        assert getattr(nn.init, fill)(t) is t


_GAINS = [
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "selu",
]


@pytest.mark.parametrize("param", [None, 0, 3, 0.2, -1.5, np.float64(0.3)])
@pytest.mark.parametrize("nonlinearity", _GAINS)
def test_calculate_gain_matches_pytorch(nonlinearity, param):
    torch = pytest.importorskip("torch")
    want = torch.nn.init.calculate_gain(nonlinearity, param)
    assert nn.init.calculate_gain(nonlinearity, param) == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize(
    ("nonlinearity", "param", "match"),
    [
        ("leaky_relu", True, "negative slope, a real number; got bool True"),
        ("leaky_relu", False, "got bool False"),
        ("leaky_relu", "0.2", "got str '0.2'"),
        ("leaky_relu", [0.2], "got list"),
        ("identity", None, "unsupported nonlinearity 'identity'.*knows linear, conv1d"),
        ("Relu", None, "unsupported nonlinearity 'Relu'"),
        ("gelu", None, "unsupported nonlinearity 'gelu'"),
        (None, None, "unsupported nonlinearity None"),
    ],
)
def test_calculate_gain_refuses_what_pytorch_refuses(nonlinearity, param, match):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError):
        torch.nn.init.calculate_gain(nonlinearity, param)
    with pytest.raises(ValueError, match=match):
        nn.init.calculate_gain(nonlinearity, param)


def test_linear_without_inputs_matches_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="no-op"):
        lin = nn.Linear(0, 3)
    with pytest.warns(UserWarning, match="no-op"):
        want = torch.nn.Linear(0, 3)(torch.ones((2, 0)))
    np.testing.assert_array_equal(lin(jg.ones((2, 0))).numpy(), want.detach().numpy())


def test_linear_shape_error_names_shapes():
    with pytest.raises(ValueError, match=r"Linear\(4, 3\) got input of shape \(2, 5\)"):
        nn.Linear(4, 3)(jg.ones((2, 5)))


# -- Embedding ---------------------------------------------------------------------------------


def test_embedding_forward_and_repeated_index_gradient():
    emb = nn.Embedding(6, 3, generator=0)
    idx = jg.tensor([[1, 4, 1], [5, 1, 0]])
    out = emb(idx)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[idx.numpy()])
    out.sum().backward()
    counts = np.bincount(idx.numpy().ravel(), minlength=6)[:, None] * np.ones((1, 3))
    np.testing.assert_array_equal(emb.weight.grad.numpy(), counts)
    assert gradcheck(lambda w: emb(idx), emb.weight)
    with pytest.raises(TypeError, match="integer indices"):
        emb(jg.ones(2))
    with pytest.raises(IndexError, match=r"index 6 is out of range for 6 embeddings"):
        emb(jg.tensor([6]))


@pytest.mark.parametrize("dtype", [jg.int8, jg.int32, jg.int64])
@pytest.mark.parametrize("bad", [-1, -6, -7, 6, 100])
def test_embedding_refuses_indices_outside_the_table(dtype, bad):
    emb = nn.Embedding(6, 3, generator=0)
    with pytest.raises(IndexError, match=rf"index {bad} is out of range for 6 embeddings"):
        emb(jg.tensor([[0, 5], [bad, 2]], dtype=dtype))
    assert emb(jg.tensor([[0, 5]], dtype=dtype)).shape == (1, 2, 3)
    assert emb(jg.zeros((0, 2), dtype=dtype)).shape == (0, 2, 3)


@pytest.mark.parametrize("padding_idx", [4, -2])
def test_embedding_padding_row_starts_at_zero_and_gets_no_gradient_as_in_pytorch(padding_idx):
    torch = pytest.importorskip("torch")
    emb = nn.Embedding(6, 3, padding_idx=padding_idx, generator=0)
    assert emb.padding_idx == 4 and "padding_idx=4" in repr(emb)
    np.testing.assert_array_equal(emb.weight.numpy()[4], 0)
    with jg.no_grad():
        emb.weight[4] = 7.0  # a padding row set by hand is looked up as it is
    reference = torch.nn.Embedding(6, 3, padding_idx=padding_idx)
    reference.weight.data = torch.tensor(emb.weight.numpy())
    scale = np.arange(18.0).reshape(2, 3, 3)
    step = jg.jit(lambda idx: (emb(idx) * jg.tensor(scale)).sum().backward())
    for indices in ([[1, 4, 1], [5, 4, 0]], [[4, 4, 2], [3, 0, 4]]):  # replays follow each call
        emb.weight.grad = None
        step(jg.tensor(indices))
        reference.weight.grad = None
        (reference(torch.tensor(indices)) * torch.tensor(scale)).sum().backward()
        np.testing.assert_array_equal(emb.weight.grad.numpy(), reference.weight.grad.numpy())
    np.testing.assert_array_equal(emb(jg.tensor([4])).numpy(), [[7.0, 7.0, 7.0]])
    again = nn.Embedding.from_config(emb.get_config())
    assert again.padding_idx == 4 and again.weight.shape == (6, 3)


@pytest.mark.parametrize(
    "bad, error", [(6, ValueError), (-7, ValueError), (1.0, TypeError), (True, TypeError)]
)
def test_embedding_refuses_a_padding_index_outside_the_table(bad, error):
    with pytest.raises(error, match="padding_idx"):
        nn.Embedding(6, 3, padding_idx=bad)


def test_embedding_init_is_standard_normal():
    w = nn.Embedding(1000, 10, generator=0).weight.numpy()
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05


# -- Embedding's options against PyTorch -------------------------------------------------------

# (max_norm, norm_type, padding_idx, scale_grad_by_freq, sparse); shapes are drawn per case.
EMBEDDING_OPTIONS = [
    (1.0, 2.0, None, False, False),
    (0.7, 1.0, -1, True, False),
    (1.5, math.inf, 0, True, True),
    (0.0, 3.0, None, False, True),
    (None, 2.0, 2, True, False),
    (2.0, 0.5, None, True, False),
]


def _lookup_case(seed, dtype=np.float64):
    """A table whose rows' norms straddle 1 and indices (1 to 3 dimensions) that repeat
    some rows and pass others by (never the last), with an output gradient."""
    rng = np.random.default_rng(seed)
    n, dim = int(rng.integers(4, 9)), int(rng.integers(1, 5))
    table = (rng.standard_normal((n, dim)) * rng.uniform(0.2, 2.0, (n, 1))).astype(dtype)
    shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 4)))
    indices = rng.integers(0, n - 1, shape)
    indices.flat[:2] = indices.flat[-1]  # (a repeated index, whatever the draw)
    return table, indices, rng.standard_normal((*shape, dim)).astype(dtype)


def _torch_dense(grad):
    return (grad.to_dense() if grad.is_sparse else grad).numpy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(len(EMBEDDING_OPTIONS)))
def test_functional_embedding_options_like_torch(case, dtype):
    torch = pytest.importorskip("torch")
    max_norm, norm_type, padding_idx, by_freq, sparse = EMBEDDING_OPTIONS[case]
    table, indices, g = _lookup_case(case, dtype)
    w, tw = jg.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    version, torch_version = w._storage._version, tw._version
    options = (padding_idx, max_norm, norm_type, by_freq)
    y = nn.functional.embedding(jg.tensor(indices), w, *options, sparse)
    # PyTorch refuses a sparse gradient scaled by frequency; jitgrad's dense gradient is
    # then the one PyTorch gives without sparse.
    expected = torch.nn.functional.embedding(
        torch.tensor(indices), tw, *options, sparse and not by_freq
    )
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-6, "atol": 1e-6}
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), **tol)
    # The rows looked up, renormalised in place as PyTorch's are, one write counted.
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), **tol)
    assert w._storage._version - version == tw._version - torch_version == (max_norm is not None)
    assert (w.detach().numpy() != table).any() == (max_norm is not None)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(w.grad.numpy(), _torch_dense(tw.grad), **tol)


@pytest.mark.parametrize("case", range(len(EMBEDDING_OPTIONS)))
def test_embedding_layer_options_and_from_pretrained_like_torch(case):
    torch = pytest.importorskip("torch")
    max_norm, norm_type, padding_idx, by_freq, sparse = EMBEDDING_OPTIONS[case]
    table, indices, g = _lookup_case(10 + case)
    args = (padding_idx, max_norm, norm_type, by_freq, sparse)
    layer = nn.Embedding(*table.shape, *args, generator=0)
    torch_layer = torch.nn.Embedding(*table.shape, *args, dtype=torch.float64)
    assert repr(layer) == repr(torch_layer)
    rebuilt = nn.from_config(layer.config())
    assert rebuilt.config() == layer.config() and repr(rebuilt) == repr(layer)
    pretrained = nn.Embedding.from_pretrained(jg.tensor(table), False, *args)
    torch_pretrained = torch.nn.Embedding.from_pretrained(torch.tensor(table), False, *args)
    assert repr(pretrained) == repr(torch_pretrained)
    for ours, theirs in [(layer, torch_layer), (pretrained, torch_pretrained)]:
        with jg.no_grad():
            ours.weight.copy_(jg.tensor(table))
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(table))
        y, expected = ours(jg.tensor(indices)), theirs(torch.tensor(indices))
        np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
        y.backward(jg.tensor(g))
        if sparse and by_freq:  # (PyTorch refuses them together; see the functional test)
            continue
        expected.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.weight.grad.numpy(), _torch_dense(theirs.weight.grad))


def test_embedding_takes_its_weight_freezes_and_checks_the_device_as_pytorch():
    torch = pytest.importorskip("torch")
    table = jg.tensor(data((5, 3), 3))
    layer = nn.Embedding(5, 3, 1, None, 2.0, False, False, table, True, "cpu", jg.float32)
    reference = torch.nn.Embedding(5, 3, 1, _weight=torch.tensor(table.numpy()), _freeze=True)
    assert layer.weight.storage() is table.storage()  # the table itself, padding row kept
    assert layer.weight.dtype == jg.float64 and not layer.weight.requires_grad
    assert not reference.weight.requires_grad and repr(layer) == repr(reference)
    np.testing.assert_array_equal(layer.weight.numpy(), data((5, 3), 3))
    assert nn.Embedding(5, 3, _weight=table).weight.requires_grad
    assert nn.Embedding(5, 3, device=torch.device("cpu")).weight.shape == (5, 3)
    with pytest.raises(ValueError, match="CPU only; device 'cuda'"):
        nn.Embedding(5, 3, device="cuda")
    with pytest.raises(ValueError, match=r"_weight must have shape \(4, 3\)"):
        nn.Embedding(4, 3, _weight=table)
    # from_pretrained shares the matrix's memory, as PyTorch's does: max_norm renorms it.
    frozen = nn.Embedding.from_pretrained(table, max_norm=0.1)
    torch_table = torch.tensor(data((5, 3), 3))
    torch.nn.Embedding.from_pretrained(torch_table, max_norm=0.1)(torch.tensor([0, 1, 2]))
    frozen(jg.tensor([0, 1, 2]))
    np.testing.assert_allclose(table.numpy(), torch_table.numpy(), rtol=1e-6)
    assert not frozen.weight.requires_grad and not table.requires_grad
    assert frozen.weight.data_ptr() == table.data_ptr()


def test_embedding_gradient_scaled_by_frequency_by_hand():
    layer = nn.Embedding(4, 2, padding_idx=0, scale_grad_by_freq=True, generator=0)
    layer(jg.tensor([[1, 1, 3], [0, 1, 0]])).sum().backward()
    # Index 1 three times, 3 once, padding 0 twice: each row's gradient is the mean of
    # its contributions, and the padding row gets none.
    assert layer.weight.grad.tolist() == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    layer.weight.grad = None
    with jg.no_grad():
        assert layer(jg.tensor([1, 1])).shape == (2, 2)  # (no gradient: nothing to scale)
    double = jg.autograd.grad(layer(jg.tensor([2, 2])).sum(), layer.weight, create_graph=True)
    assert double[0].tolist() == [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]


def test_a_renorm_counts_as_a_write_for_autograd_as_in_pytorch():
    w = leaf((4, 3), 5)
    saved = (w * w).sum()  # (saves w for its backward)
    nn.functional.embedding(jg.tensor([1]), w, max_norm=0.5)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        saved.backward()
    kept = (w * w).sum()
    nn.functional.embedding(jg.tensor([1]), w)  # no max_norm: no write
    kept.backward()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_norm": -1.0}, ValueError, "max_norm must be a non-negative number"),
        ({"max_norm": math.nan}, ValueError, "max_norm must be a non-negative number"),
        ({"max_norm": "1"}, TypeError, "max_norm must be a number or None, got '1'"),
        ({"max_norm": 1.0, "norm_type": "fro"}, TypeError, "norm_type must be a number"),
        ({"norm_type": None}, TypeError, "norm_type must be a number"),
        ({"max_norm": 1.0, "norm_type": math.nan}, ValueError, "norm_type must be a number"),
        ({"padding_idx": 5}, ValueError, "padding_idx 5 is out of range for 5 embeddings"),
    ],
)
def test_embedding_options_refused_with_the_reason(kwargs, error, match):
    w = jg.tensor(data((5, 2)))
    with pytest.raises(error, match=match):
        nn.functional.embedding(jg.tensor([0, 1]), w, **kwargs)
    with pytest.raises(error, match=match):
        nn.Embedding(5, 2, **kwargs)
    with pytest.raises(error, match=match.replace("5 embeddings", "")):
        nn.functional.embedding_bag(jg.tensor([[0, 1]]), w, **kwargs)
    np.testing.assert_array_equal(w.numpy(), data((5, 2)))  # nothing renormalised
    with pytest.raises(TypeError, match="max_norm needs a floating-point weight"):
        nn.functional.embedding(jg.tensor([0]), jg.tensor([[3, 4]]), max_norm=1.0)


# -- Dropout -----------------------------------------------------------------------------------


def test_dropout_train_eval_and_reproducibility():
    x = jg.ones((100, 10))
    a = nn.Dropout(0.3, generator=7)
    b = nn.Dropout(0.3, generator=7)
    first, second = a(x).numpy(), a(x).numpy()
    np.testing.assert_array_equal(first, b(x).numpy())  # same seed, same masks
    assert not np.array_equal(first, second)  # the generator advances
    assert set(np.unique(first)) <= {0.0, 1 / 0.7}
    assert abs((first == 0).mean() - 0.3) < 0.03
    a.eval()
    assert a(x) is x or np.array_equal(a(x).numpy(), x.numpy())
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        nn.Dropout(1.5)


def test_dropout_gradient_uses_the_mask():
    drop = nn.Dropout(0.5, generator=0)
    x = jg.ones(8, requires_grad=True)
    y = drop(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


# -- LayerNorm ---------------------------------------------------------------------------------


def np_layer_norm(x, w, b, k, eps):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


@pytest.mark.parametrize("shape, normalized", [((3, 5), 5), ((2, 3, 4), (3, 4))])
def test_layer_norm_forward_and_gradcheck(shape, normalized):
    ln = nn.LayerNorm(normalized, eps=1e-5)
    with jg.no_grad():
        ln.weight.copy_(jg.asarray(data(ln.weight.shape, 3)))
        ln.bias.copy_(jg.asarray(data(ln.bias.shape, 4)))
    x = leaf(shape, 5)
    k = len(ln.normalized_shape)
    expected = np_layer_norm(x.numpy(), ln.weight.numpy(), ln.bias.numpy(), k, 1e-5)
    np.testing.assert_allclose(ln(x).numpy(), expected, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda x, w, b: ln(x), x, ln.weight, ln.bias)


def test_layer_norm_without_affine_and_shape_error():
    ln = nn.LayerNorm(4, elementwise_affine=False)
    assert list(ln.state_dict()) == []
    x = data((2, 4))
    np.testing.assert_allclose(
        ln(jg.asarray(x)).numpy(), np_layer_norm(x, 1, 0, 1, 1e-5), rtol=1e-10
    )
    with pytest.raises(ValueError, match=r"last 1 dimension\(s\) must be \(4,\)"):
        ln(jg.ones((2, 3)))


# -- BatchNorm1d -------------------------------------------------------------------------------


def np_batch_norm_train(x, w, b, eps):
    axes = (0,) if x.ndim == 2 else (0, 2)
    shape = (1, -1) + (() if x.ndim == 2 else (1,))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batch_norm_train_forward_running_stats_and_gradcheck(shape):
    bn = nn.BatchNorm1d(3, momentum=0.1)
    with jg.no_grad():
        bn.weight.copy_(jg.asarray(data(3, 1)))
        bn.bias.copy_(jg.asarray(data(3, 2)))
    x = leaf(shape, 3, scale=2.0)
    expected = np_batch_norm_train(x.numpy(), bn.weight.numpy(), bn.bias.numpy(), 1e-5)
    np.testing.assert_allclose(bn(x).numpy(), expected, rtol=1e-10, atol=1e-12)
    axes = (0,) if len(shape) == 2 else (0, 2)
    n = x.numel() // 3
    mean, var = x.numpy().mean(axis=axes), x.numpy().var(axis=axes) * n / (n - 1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * var, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1
    assert gradcheck(lambda x, w, b: bn(x), x, bn.weight, bn.bias)


def test_batch_norm_eval_uses_running_stats_and_gradcheck():
    bn = nn.BatchNorm1d(3)
    for seed in range(3):
        bn(jg.asarray(data((8, 3), seed, scale=3.0)))
    assert bn.num_batches_tracked.item() == 3
    bn.eval()
    rm, rv = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    x = leaf((4, 3), 9)
    expected = (x.numpy() - rm) / np.sqrt(rv + 1e-5)
    np.testing.assert_allclose(bn(x).numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(bn.running_mean.numpy(), rm)  # eval does not update
    assert bn.num_batches_tracked.item() == 3
    assert gradcheck(lambda x, w, b: bn(x), x, bn.weight, bn.bias)
    bn(jg.ones((1, 3)))  # one sample is fine in eval mode


def test_batch_norm_cumulative_average_and_no_tracking():
    bn = nn.BatchNorm1d(2, momentum=None)
    batches = [data((5, 2), s) for s in range(3)]
    for b in batches:
        bn(jg.asarray(b))
    mean_of_means = np.mean([b.mean(axis=0) for b in batches], axis=0)
    np.testing.assert_allclose(bn.running_mean.numpy(), mean_of_means, rtol=1e-12)
    free = nn.BatchNorm1d(2, track_running_stats=False, affine=False)
    assert list(free.state_dict()) == []
    free.eval()  # still batch statistics
    x = data((5, 2))
    np.testing.assert_allclose(
        free(jg.asarray(x)).numpy(), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-10
    )


def test_batch_norm_errors():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"more than 1 value per channel"):
        bn(jg.ones((1, 3)))
    with pytest.raises(ValueError, match=r"expects input of shape \(N, 3\)"):
        bn(jg.ones((4, 2)))
    # without running statistics, eval mode normalises by the batch's too (PyTorch refuses)
    free = nn.BatchNorm1d(3, track_running_stats=False).eval()
    for shape in ((1, 3), (1, 3, 1)):
        with pytest.raises(ValueError, match=r"more than 1 value per channel"):
            free(jg.ones(shape))
    free(jg.ones((1, 3, 2)))  # two values per channel


def test_batch_norm_float32():
    bn = nn.BatchNorm1d(3, dtype=jg.float32)
    y = bn(jg.asarray(data((4, 3)).astype(np.float32)))
    assert y.dtype is jg.float32 and bn.running_var.dtype is jg.float32


# -- containers --------------------------------------------------------------------------------


def test_sequential_chains_and_indexes():
    net = nn.Sequential(nn.Linear(3, 4, generator=0), nn.Tanh(), nn.Linear(4, 2, generator=1))
    x = data((5, 3))
    h = np.tanh(x @ net[0].weight.numpy().T + net[0].bias.numpy())
    expected = h @ net[2].weight.numpy().T + net[2].bias.numpy()
    np.testing.assert_allclose(net(jg.asarray(x)).numpy(), expected, rtol=1e-12)
    assert len(net) == 3 and isinstance(net[-1], nn.Linear)
    assert list(net[1:].state_dict()) == ["2.weight", "2.bias"]  # names are kept
    net.append(nn.ReLU())
    assert len(net) == 4
    with pytest.raises(IndexError, match="out of range"):
        net[7]
    assert gradcheck(lambda x, *ps: net(x), leaf((2, 3)), *net.parameters())


def test_module_list_registers_parameters():
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
    blocks.extend([nn.Linear(2, 1)])
    assert [n for n, _ in blocks.named_parameters()][-1] == "2.bias"
    blocks[0] = nn.Identity()
    assert len(list(blocks.parameters())) == 4
    with pytest.raises(NotImplementedError, match="iterate"):
        blocks(jg.ones(2))


def _layers(lib):
    """Three Linears of distinct shapes between activations, in jitgrad or torch."""
    n = lib.nn
    return [n.Linear(2, 3), n.ReLU(), n.Linear(3, 4), n.Tanh(), n.Linear(4, 2)]


def _layout(container):
    """What an edit must agree on: each child's name, type and weight shape, and the
    state_dict keys."""
    children = [
        (name, type(m).__name__, tuple(getattr(m, "weight", jg.ones(0)).shape))
        for name, m in container._modules.items()
    ]
    return children, list(container.state_dict())


# Edits applied alike to a jitgrad and a torch container of _layers(); each returns what
# PyTorch's returns (a module, a container) or None.
_SEQUENTIAL_EDITS = {
    "del first": lambda lib, s: s.__delitem__(0),
    "del last": lambda lib, s: s.__delitem__(-1),
    "del slice": lambda lib, s: s.__delitem__(slice(1, 4)),
    "del stepped slice": lambda lib, s: s.__delitem__(slice(None, None, 2)),
    "del empty slice": lambda lib, s: s.__delitem__(slice(3, 1)),
    "insert front": lambda lib, s: s.insert(0, lib.nn.Linear(5, 2)),
    "insert end": lambda lib, s: s.insert(5, lib.nn.Sigmoid()),
    "insert negative": lambda lib, s: s.insert(-2, lib.nn.Sigmoid()),
    "insert -len": lambda lib, s: s.insert(-5, lib.nn.Sigmoid()),
    "append": lambda lib, s: s.append(lib.nn.Linear(2, 6)),
    "extend list": lambda lib, s: s.extend([lib.nn.ReLU(), lib.nn.Linear(2, 7)]),
    "extend sequential": lambda lib, s: s.extend(lib.nn.Sequential(lib.nn.Linear(2, 7))),
    "pop middle": lambda lib, s: s.pop(2),
    "pop negative": lambda lib, s: s.pop(-1),
    "pop slice": lambda lib, s: s.pop(slice(0, 2)),
    "setitem": lambda lib, s: s.__setitem__(-1, lib.nn.Linear(4, 9)),
    "iadd": lambda lib, s: s.__iadd__(lib.nn.Sequential(lib.nn.Linear(2, 8))),
    "add": lambda lib, s: s + lib.nn.Sequential(lib.nn.Linear(2, 8)),
}


@pytest.mark.parametrize("edit", _SEQUENTIAL_EDITS)
def test_sequential_edits_follow_pytorch(edit):
    torch = pytest.importorskip("torch")
    net, tnet = nn.Sequential(*_layers(jg)), torch.nn.Sequential(*_layers(torch))
    out = _SEQUENTIAL_EDITS[edit](jg, net)
    tout = _SEQUENTIAL_EDITS[edit](torch, tnet)
    assert _layout(net) == _layout(tnet)
    assert type(out).__name__ == type(tout).__name__
    if isinstance(out, nn.Module):
        assert _layout(out) == _layout(tout)
        if tout is tnet:
            assert out is net
    assert len(list(net.parameters())) == len(list(tnet.parameters()))


def test_sequential_del_renumbers_named_layers_like_pytorch():
    torch = pytest.importorskip("torch")
    from collections import OrderedDict

    names = ("enc", "act", "dec")
    net = nn.Sequential(dict(zip(names, _layers(jg)[:3], strict=True)))
    tnet = torch.nn.Sequential(OrderedDict(zip(names, _layers(torch)[:3], strict=True)))
    del net[1]
    del tnet[1]
    assert _layout(net) == _layout(tnet)
    assert "names" not in net.config()["args"]  # positional again, as the keys say


# Positional edits where PyTorch's ModuleList agrees with a Python list (its insert also
# takes an index past the end or a negative one, and then leaves a gap or fails).
_MODULE_LIST_EDITS = {
    "del": lambda lib, m: m.__delitem__(1),
    "del slice": lambda lib, m: m.__delitem__(slice(-3, None)),
    "insert": lambda lib, m: m.insert(1, lib.nn.Linear(9, 9)),
    "insert at len": lambda lib, m: m.insert(5, lib.nn.Linear(9, 9)),
    "extend": lambda lib, m: m.extend([lib.nn.Linear(9, 1)]),
    "extend generator": lambda lib, m: m.extend(lib.nn.Linear(i, 1) for i in (5, 6)),
    "pop": lambda lib, m: m.pop(0),
    "pop slice": lambda lib, m: m.pop(slice(1, 3)),
    "iadd": lambda lib, m: m.__iadd__([lib.nn.Linear(9, 1)]),
    "add list": lambda lib, m: m + [lib.nn.Linear(9, 1)],
    "add sequential": lambda lib, m: m + lib.nn.Sequential(lib.nn.Linear(9, 1)),
}


@pytest.mark.parametrize("edit", _MODULE_LIST_EDITS)
def test_module_list_edits_follow_pytorch(edit):
    torch = pytest.importorskip("torch")
    blocks, tblocks = nn.ModuleList(_layers(jg)), torch.nn.ModuleList(_layers(torch))
    out = _MODULE_LIST_EDITS[edit](jg, blocks)
    tout = _MODULE_LIST_EDITS[edit](torch, tblocks)
    assert _layout(blocks) == _layout(tblocks)
    if isinstance(tout, torch.nn.Module):
        assert _layout(out) == _layout(tout)


def test_module_list_insert_takes_negative_indices_as_a_list_does():
    blocks = nn.ModuleList(_layers(jg))
    expected = list(blocks)
    new = nn.Sigmoid()
    blocks.insert(-1, new)
    expected.insert(-1, new)
    assert list(blocks) == expected and list(blocks._modules) == [str(i) for i in range(6)]


def test_extending_a_container_with_itself_doubles_it():
    for container in (nn.Sequential(*_layers(jg)), nn.ModuleList(_layers(jg))):
        layers = list(container)
        container += container
        assert list(container) == layers * 2


@pytest.mark.parametrize(
    ("edit", "error", "match"),
    [
        (lambda c: c.__delitem__(5), IndexError, "index 5 is out of range for .* length 5"),
        (lambda c: c.__delitem__(-6), IndexError, "index -6 is out of range"),
        (lambda c: c.pop(7), IndexError, "index 7 is out of range"),
        (lambda c: c.insert(6, nn.ReLU()), IndexError, r"insert index 6 .* \(from -5 to 5\)"),
        (lambda c: c.insert(-6, nn.ReLU()), IndexError, "insert index -6 is out of range"),
        (lambda c: c.insert(0, "relu"), TypeError, "insert takes a Module, got str"),
        (lambda c: c.insert(0, None), TypeError, "insert takes a Module, got NoneType"),
        (lambda c: c.insert(1.0, nn.ReLU()), TypeError, "integer"),
        (lambda c: c.__delitem__("0"), TypeError, "integer"),
        (lambda c: c.append(3), TypeError, "must be a Module, got int"),
        (lambda c: c.__setitem__(0, 3), TypeError, "must be a Module, got int"),
        (lambda c: c.extend(3), TypeError, "extend takes an iterable of Modules, got int"),
        (lambda c: c.extend(nn.ReLU()), TypeError, "iterable of Modules, got ReLU"),
        (lambda c: c.extend([nn.ReLU(), "x"]), TypeError, "got str at position 1"),
    ],
)
@pytest.mark.parametrize("kind", [nn.Sequential, nn.ModuleList])
def test_bad_container_edits_are_named_and_change_nothing(kind, edit, error, match):
    container = nn.Sequential(*_layers(jg)) if kind is nn.Sequential else nn.ModuleList(_layers(jg))
    before = _layout(container)
    with pytest.raises(error, match=match):
        edit(container)
    assert _layout(container) == before


@pytest.mark.parametrize("other", [[nn.ReLU()], nn.ModuleList([nn.ReLU()]), nn.ReLU(), 3])
def test_only_a_sequential_adds_to_a_sequential(other):
    net = nn.Sequential(*_layers(jg))
    with pytest.raises(TypeError, match="can only add a Sequential to a Sequential, got"):
        net + other
    with pytest.raises(TypeError, match="can only add a Sequential to a Sequential, got"):
        net += other
    assert len(net) == 5


def test_module_list_add_refuses_what_is_not_modules():
    with pytest.raises(TypeError, match=r"ModuleList.__add__ takes an iterable .* got int"):
        nn.ModuleList() + 3
    with pytest.raises(TypeError, match=r"ModuleList.__iadd__ takes Modules, got str"):
        blocks = nn.ModuleList()
        blocks += ["relu"]


def _edit_both(lib, net):
    """One of each edit, ending at Linear(2, 3) -> Tanh -> Linear(3, 5) -> ReLU -> Linear(5, 1)."""
    net.pop(1)  # Linear(2,3) Linear(3,4) Tanh Linear(4,2)
    del net[1:3]  # Linear(2,3) Linear(4,2)
    net.insert(1, lib.nn.Tanh())
    net[2] = lib.nn.Linear(3, 5)
    net.append(lib.nn.ReLU())
    net += lib.nn.Sequential(lib.nn.Linear(5, 1))
    return net


def test_an_edited_sequential_trains_like_torch_and_round_trips():
    torch = pytest.importorskip("torch")
    net = _edit_both(jg, nn.Sequential(*_layers(jg)))
    tnet = _edit_both(torch, torch.nn.Sequential(*_layers(torch))).double()
    assert (
        list(net.state_dict())
        == list(tnet.state_dict())
        == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    )
    tnet.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    x, y = data((8, 2)), data((8, 1), seed=1)
    opt = jg.optim.SGD(net.parameters(), lr=0.1)
    topt = torch.optim.SGD(tnet.parameters(), lr=0.1)
    for _ in range(3):
        loss = ((net(jg.asarray(x)) - jg.asarray(y)) ** 2).mean()
        tloss = ((tnet(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-6)
        for o, lo in ((opt, loss), (topt, tloss)):
            o.zero_grad()
            lo.backward()
            o.step()
    for k, v in tnet.state_dict().items():
        np.testing.assert_allclose(net.state_dict()[k].numpy(), v.numpy(), rtol=1e-6)
    rebuilt = nn.from_config(net.config())
    rebuilt.load_state_dict(net.state_dict())
    np.testing.assert_array_equal(rebuilt(jg.asarray(x)).numpy(), net(jg.asarray(x)).numpy())
    assert rebuilt.config() == net.config()


@pytest.mark.parametrize(
    "edit",
    [
        lambda net: net.__delitem__(1),
        lambda net: net.pop(1),
        lambda net: net.insert(1, nn.Sigmoid()),
        lambda net: net.append(nn.Sigmoid()),
        lambda net: net.extend([nn.Sigmoid()]),
        lambda net: net.__iadd__(nn.Sequential(nn.Linear(3, 2, generator=3))),
        lambda net: net.__setitem__(1, nn.Sigmoid()),
    ],
    ids=["del", "pop", "insert", "append", "extend", "iadd", "setitem"],
)
def test_a_step_jitted_before_an_edit_traces_again_after_it(edit):
    net = nn.Sequential(nn.Linear(2, 3, generator=0), nn.ReLU(), nn.Linear(3, 3, generator=1))
    forward = jg.jit(lambda x: net(x).detach())
    x = jg.asarray(data((4, 2)))
    forward(x)
    forward(x)
    assert forward.traces == 1
    edit(net)
    # (eager small ops run numpy's loops, the plan fused kernels: equal up to rounding)
    np.testing.assert_allclose(forward(x).numpy(), net(x).numpy(), rtol=1e-14)
    assert forward.traces == 2


def test_building_new_containers_leaves_jitted_plans_alone():
    net = nn.Sequential(nn.Linear(2, 3, generator=0), nn.ReLU())
    forward = jg.jit(lambda x: net(x).detach())
    x = jg.asarray(data((4, 2)))
    forward(x)
    nn.ModuleList([nn.ReLU(), None, nn.Tanh()]) + [nn.Sigmoid()]
    nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Tanh())
    forward(x)
    assert forward.traces == 1


def test_a_jitted_embedding_checks_the_indices_of_every_call():
    emb = jg.nn.Embedding(10, 2, generator=0)
    lookup = jg.jit(lambda i: emb(i).detach())
    lookup(jg.tensor([[1, 2]]))
    np.testing.assert_array_equal(
        lookup(jg.tensor([[3, 9]])).numpy(), emb(jg.tensor([[3, 9]])).numpy()
    )
    for bad in (-1, 10):
        with pytest.raises(IndexError, match=f"index {bad} is out of range for 10"):
            lookup(jg.tensor([[bad, 2]]))


def _embedding_training_step():
    """An embedding with max_norm (and scale_grad_by_freq) under a linear head, and one
    SGD step of it; most rows start above max_norm, and the steps push them out again."""
    emb = nn.Embedding(12, 4, 3, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True, generator=0)
    with jg.no_grad():
        emb.weight.mul_(3.0)
    head = nn.Linear(4, 1, generator=1)
    optimizer = jg.optim.SGD([*emb.parameters(), *head.parameters()], lr=0.5)

    def step(indices, target):
        optimizer.zero_grad()
        loss = ((head(emb(indices)).squeeze(-1) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return emb, step


def test_a_jitted_training_step_renorms_each_call_s_rows_as_the_eager_step():
    (eager_emb, eager_step), (emb, step) = _embedding_training_step(), _embedding_training_step()
    step = jg.jit(step)
    rng, renormed = np.random.default_rng(0), []
    for _ in range(4):
        indices = rng.integers(0, 12, (2, 5))
        target = jg.tensor(rng.standard_normal((2, 5)))
        norms = np.linalg.norm(eager_emb.weight.numpy(), 1.5, axis=1)
        renormed.append({int(i) for i in np.unique(indices) if norms[i] > 1.0})
        eager_loss = eager_step(jg.tensor(indices), target)
        loss = step(jg.tensor(indices), target)
        np.testing.assert_allclose(loss.item(), eager_loss.item(), rtol=1e-12)
        np.testing.assert_allclose(
            emb.weight.numpy(), eager_emb.weight.numpy(), rtol=1e-12, atol=1e-15
        )
    assert step.traces == 1
    assert all(renormed) and len({frozenset(r) for r in renormed}) == len(renormed)


def test_a_jitted_lookup_renorms_the_weight_passed_in_as_torch_does():
    torch = pytest.importorskip("torch")
    table = data((9, 3), 4) * 2
    w, tw = jg.tensor(table), torch.tensor(table)
    lookup = jg.jit(lambda i, w: nn.functional.embedding(i, w, max_norm=1.5).sum(0))
    rng = np.random.default_rng(4)
    for _ in range(3):
        indices = rng.integers(0, 9, 4)
        version = w._storage._version
        y = lookup(jg.tensor(indices), w)
        expected = torch.nn.functional.embedding(torch.tensor(indices), tw, max_norm=1.5)
        np.testing.assert_allclose(y.numpy(), expected.sum(0).numpy(), rtol=1e-12)
        np.testing.assert_allclose(w.numpy(), tw.numpy(), rtol=1e-12)
        assert w._storage._version > version
    assert lookup.traces == 1 and (w.numpy() != table).any()


@pytest.mark.parametrize("momentum", [None, 0.1])
def test_batchnorm_running_stats_under_jit_follow_eager(momentum):
    rng = np.random.default_rng(0)
    batches = [jg.tensor(rng.standard_normal((8, 3))) for _ in range(4)]
    runs = []
    for jitted in (False, True):
        norm = jg.nn.BatchNorm1d(3, momentum=momentum)
        step = jg.jit(lambda x, norm=norm: norm(x)) if jitted else norm
        with jg.no_grad():
            for x in batches:
                step(x)
        runs.append((norm.running_mean.numpy(), norm.running_var.numpy()))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-12)
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=1e-12)


@pytest.mark.parametrize(
    "name, args",
    [
        ("ReLU", ()),
        ("ReLU6", ()),
        ("LeakyReLU", (0.2,)),
        ("ELU", (0.5,)),
        ("SiLU", ()),
        ("Mish", ()),
        ("Hardswish", ()),
        ("Dropout", (0.0,)),
    ],
)
def test_inplace_activations_write_into_their_input_as_pytorch(name, args):
    torch = pytest.importorskip("torch")
    x = data((3, 4), seed=5)
    ours = getattr(nn, name)(*args, inplace=True)
    theirs = getattr(torch.nn, name)(*args, inplace=True)
    w, tw = jg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    hidden, thidden = w * 1.5, tw * 1.5
    assert ours(hidden) is hidden and theirs(thidden) is thidden
    np.testing.assert_allclose(hidden.detach().numpy(), thidden.detach().numpy(), rtol=1e-12)
    (hidden * hidden).sum().backward()
    (thidden * thidden).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    assert repr(ours).endswith("inplace=True)")
    assert repr(nn.from_config(ours.config())) == repr(ours)
    plain = jg.tensor(x)  # no gradient: a raw write
    assert ours(plain) is plain
    if name != "Dropout":  # (a dropout of p=0 returns its input, written or not)
        with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
            ours(jg.tensor(x, requires_grad=True))


def test_inplace_relu_in_a_jitted_training_step():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 2))
    reference = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    reference.load_state_dict(model.state_dict())
    x = jg.tensor(data((5, 4), seed=6))

    def step(net):
        net.zero_grad()
        loss = (net(x) ** 2).mean()
        loss.backward()
        return loss, net[0].weight.grad

    jitted = jg.jit(step)
    for _ in range(3):
        loss, grad = jitted(model)
    expected_loss, expected_grad = step(reference)
    np.testing.assert_allclose(loss.item(), expected_loss.item(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), expected_grad.numpy(), rtol=1e-12)


def test_functional_embedding_and_unflatten_match_pytorch():
    torch = pytest.importorskip("torch")
    table = data((5, 3), seed=7)
    indices = [[1, 4, 1], [0, 0, 2]]
    w, tw = jg.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    ours = nn.functional.embedding(jg.tensor(indices), w, padding_idx=1)
    theirs = torch.nn.functional.embedding(torch.tensor(indices), tw, padding_idx=1)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())
    with pytest.raises(IndexError, match="index 5 is out of range for 5 embeddings"):
        nn.functional.embedding(jg.tensor([5]), w)
    with pytest.raises(TypeError, match="integer indices"):
        nn.functional.embedding(jg.tensor([0.0]), w)
    layer = nn.Unflatten(1, (3, -1))
    x = data((2, 12), seed=8)
    np.testing.assert_array_equal(
        layer(jg.tensor(x)).numpy(), torch.nn.Unflatten(1, (3, -1))(torch.tensor(x)).numpy()
    )
    assert repr(nn.from_config(layer.config())) == repr(layer)
    assert repr(layer) == str(torch.nn.Unflatten(1, (3, -1)))


FUNCTIONAL_EXTRAS = {
    "logsigmoid": (lambda F, x, y: F.logsigmoid(x * 30)),
    "softmin": (lambda F, x, y: F.softmin(x, dim=1)),
    "hardtanh": (lambda F, x, y: F.hardtanh(x, -0.5, 0.8)),
    "softsign": (lambda F, x, y: F.softsign(x)),
    "glu": (lambda F, x, y: F.glu(x, dim=1)),
    "prelu, one slope": (lambda F, x, y: F.prelu(x, y[0, :1] * 0 + 0.3)),
    "prelu, per channel": (lambda F, x, y: F.prelu(x, y[0])),
    "cosine_similarity": (lambda F, x, y: F.cosine_similarity(x, y)),
    "cosine_similarity, broadcast": (lambda F, x, y: F.cosine_similarity(x, y[:1], dim=1)),
    "cosine_similarity, a zero vector": (lambda F, x, y: F.cosine_similarity(x * 0, y, dim=0)),
    "pairwise_distance": (lambda F, x, y: F.pairwise_distance(x, y)),
    "pairwise_distance, p=1": (lambda F, x, y: F.pairwise_distance(x, y, p=1, keepdim=True)),
    "pairwise_distance, p=inf": (lambda F, x, y: F.pairwise_distance(x, y, p=math.inf)),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL_EXTRAS))
def test_more_functional_activations_and_distances_match_pytorch(name):
    torch = pytest.importorskip("torch")
    x, y = data((3, 4), seed=9), data((3, 4), seed=10)
    ours_in = [jg.tensor(v, requires_grad=True) for v in (x, y)]
    theirs_in = [torch.tensor(v, requires_grad=True) for v in (x, y)]
    ours = FUNCTIONAL_EXTRAS[name](nn.functional, *ours_in)
    theirs = FUNCTIONAL_EXTRAS[name](torch.nn.functional, *theirs_in)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
    weights = data(tuple(theirs.shape), seed=11)
    (ours * jg.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for mine, other in zip(ours_in, theirs_in):
        if other.grad is not None:
            np.testing.assert_allclose(mine.grad.numpy(), other.grad.numpy(), atol=1e-12)


def test_more_activation_and_distance_layers_as_pytorch():
    torch = pytest.importorskip("torch")
    x = data((2, 4, 3), seed=12)
    layers = [
        (nn.Softmin(1), torch.nn.Softmin(1)),
        (nn.LogSigmoid(), torch.nn.LogSigmoid()),
        (nn.Softsign(), torch.nn.Softsign()),
        (nn.Hardtanh(-0.5, 0.5), torch.nn.Hardtanh(-0.5, 0.5)),
        (nn.GLU(1), torch.nn.GLU(1)),
        (nn.PReLU(4, init=0.1), torch.nn.PReLU(4, init=0.1, dtype=torch.float64)),
    ]
    for ours, theirs in layers:
        np.testing.assert_allclose(
            ours(jg.tensor(x)).detach().numpy(),
            theirs(torch.tensor(x)).detach().numpy(),
            rtol=1e-12,
        )
        assert repr(nn.from_config(ours.config())) == repr(ours)
    prelu = nn.PReLU(4)
    (prelu(jg.tensor(x)) ** 2).sum().backward()
    theirs = torch.nn.PReLU(4, dtype=torch.float64)
    (theirs(torch.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(prelu.weight.grad.numpy(), theirs.weight.grad.numpy())
    a, b = data((5, 3), seed=13), data((5, 3), seed=14)
    np.testing.assert_allclose(
        nn.CosineSimilarity()(jg.tensor(a), jg.tensor(b)).numpy(),
        torch.nn.CosineSimilarity()(torch.tensor(a), torch.tensor(b)).numpy(),
    )
    np.testing.assert_allclose(
        nn.PairwiseDistance(p=3, keepdim=True)(jg.tensor(a), jg.tensor(b)).numpy(),
        torch.nn.PairwiseDistance(p=3, keepdim=True)(torch.tensor(a), torch.tensor(b)).numpy(),
    )
    with pytest.raises(ValueError, match="odd"):
        nn.GLU(1)(jg.ones((2, 3)))
    with pytest.raises(ValueError, match="one per channel"):
        nn.functional.prelu(jg.ones((2, 3)), jg.ones(2))


def test_pixel_shuffles_upsample_and_channel_dropout_as_pytorch():
    torch = pytest.importorskip("torch")
    x = data((2, 8, 4, 6), seed=15)
    for ours, theirs in [
        (nn.PixelShuffle(2), torch.nn.PixelShuffle(2)),
        (nn.PixelUnshuffle(2), torch.nn.PixelUnshuffle(2)),
        (nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2)),
        (
            nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True),
            torch.nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True),
        ),
    ]:
        a, t = jg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        y, ty = ours(a), theirs(t)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
        weights = data(tuple(ty.shape), seed=16)
        (y * jg.tensor(weights)).sum().backward()
        (ty * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
        assert repr(nn.from_config(ours.config())) == repr(ours)
    with pytest.raises(ValueError, match="not a multiple of 3²"):
        nn.PixelShuffle(3)(jg.ones((1, 8, 2, 2)))
    for layer, shape, spatial in [
        (nn.Dropout2d(0.5, generator=0), (4, 6, 3, 3), 9),
        (nn.Dropout1d(0.5, generator=1), (6, 5), 5),
    ]:
        dropped = layer(jg.ones(shape)).numpy().reshape(-1, spatial)
        assert set(np.unique(dropped)) == {0.0, 2.0}  # both kinds of channel drawn
        assert (dropped == dropped[:, :1]).all()  # whole channels
        assert layer.eval()(jg.ones(shape)).numpy().min() == 1.0
    with pytest.raises(ValueError, match=r"dropout2d takes \(N, C, H, W\)"):
        nn.functional.dropout2d(jg.ones((2, 3)))


def test_trunc_normal_orthogonal_and_pretrained_embeddings():
    torch = pytest.importorskip("torch")
    w = nn.init.trunc_normal_(jg.empty(4000), std=0.02, a=-0.03, b=0.03, generator=0)
    t = torch.nn.init.trunc_normal_(torch.empty(200000), std=0.02, a=-0.03, b=0.03)
    assert -0.03 <= w.min().item() and w.max().item() <= 0.03
    assert abs(float(w.std()) - float(t.std())) < 0.0005  # the same distribution
    with pytest.raises(ValueError, match="holds"):
        nn.init.trunc_normal_(jg.empty(3), a=6.0, b=7.0)
    for shape in [(3, 5), (5, 3), (4, 2, 3)]:
        q = nn.init.orthogonal_(jg.empty(shape), gain=2.0, generator=1).numpy()
        flat = q.reshape(shape[0], -1)
        gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
        np.testing.assert_allclose(gram, 4 * np.eye(len(gram)), atol=1e-12)
    table = jg.arange(6.0).reshape(3, 2)
    frozen = nn.Embedding.from_pretrained(table)
    assert frozen(jg.tensor([2, 0])).tolist() == [[4.0, 5.0], [0.0, 1.0]]
    assert not frozen.weight.requires_grad and frozen.weight.storage() is table.storage()
    assert nn.Embedding.from_pretrained(table, freeze=False, padding_idx=0).weight.requires_grad


# -- Bilinear and EmbeddingBag against PyTorch ------------------------------------------------


def _torch_copy(layer, torch_layer):
    """``torch_layer`` in float64 holding ``layer``'s parameters."""
    import torch

    torch_layer = torch_layer.double()
    with torch.no_grad():
        for name, p in torch_layer.named_parameters():
            p.copy_(torch.tensor(getattr(layer, name).numpy()))
    return torch_layer


def _same_parameter_gradients(layer, torch_layer):
    for name, p in torch_layer.named_parameters():
        np.testing.assert_allclose(
            getattr(layer, name).grad.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize(
    "features, lead, bias",
    [((3, 4, 5), (2,), True), ((2, 1, 3), (2, 3), False), ((4, 2, 1), (), True)],
)
def test_bilinear_like_torch(features, lead, bias):
    torch = pytest.importorskip("torch")
    from nn_torch_oracle import assert_matches_torch

    layer = nn.Bilinear(*features, bias=bias, generator=1)
    torch_layer = _torch_copy(layer, torch.nn.Bilinear(*features, bias=bias))
    x1, x2 = data((*lead, features[0]), 2), data((*lead, features[1]), 3)
    assert_matches_torch(layer, torch_layer, x1, x2)
    _same_parameter_gradients(layer, torch_layer)
    assert repr(layer) == repr(torch_layer)
    assert list(layer.state_dict()) == list(torch_layer.state_dict())
    assert_matches_torch(
        nn.functional.bilinear,
        torch.nn.functional.bilinear,
        x1,
        x2,
        data((features[2], *features[:2]), 4),
    )
    rebuilt = nn.from_config(layer.config())
    assert rebuilt.config() == layer.config() and repr(rebuilt) == repr(layer)


def test_bilinear_init_matches_pytorch_bounds():
    layer = nn.Bilinear(16, 3, 40, generator=0)
    bound = 1 / math.sqrt(16)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    np.testing.assert_array_equal(nn.Bilinear(16, 3, 40, generator=0).weight.numpy(), w)


def test_bilinear_errors():
    layer = nn.Bilinear(3, 4, 5)
    with pytest.raises(ValueError, match=r"inputs of shapes \(2, 3\) and \(2, 5\) must be"):
        layer(jg.ones((2, 3)), jg.ones((2, 5)))
    with pytest.raises(ValueError, match="same leading dimensions"):
        layer(jg.ones((2, 3)), jg.ones((3, 4)))
    with pytest.raises(ValueError, match="weight must be 3-d"):
        nn.functional.bilinear(jg.ones((2, 3)), jg.ones((2, 4)), jg.ones((3, 4)))


BAGS = [  # (input, offsets), PyTorch's two layouts, with empty bags and repeated indices
    ([1, 2, 4, 5, 4, 2, 2, 0], [0, 2, 2, 5, 6]),
    ([3, 3, 0, 2], [0, 1]),
    ([[1, 2, 4], [5, 2, 2], [0, 0, 3]], None),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("bags, offsets", BAGS)
def test_embedding_bag_like_torch(mode, padding_idx, bags, offsets):
    torch = pytest.importorskip("torch")
    layer = nn.EmbeddingBag(6, 3, mode=mode, padding_idx=padding_idx, generator=2)
    torch_layer = _torch_copy(
        layer, torch.nn.EmbeddingBag(6, 3, mode=mode, padding_idx=padding_idx)
    )
    args = [jg.tensor(bags)] + ([] if offsets is None else [jg.tensor(offsets)])
    torch_args = [torch.tensor(bags)] + ([] if offsets is None else [torch.tensor(offsets)])
    y, expected = layer(*args), torch_layer(*torch_args)
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-15)
    g = data(y.shape, 5)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    _same_parameter_gradients(layer, torch_layer)
    assert repr(layer) == repr(torch_layer)
    rebuilt = nn.from_config(layer.config())
    assert rebuilt.config() == layer.config() and repr(rebuilt) == repr(layer)


def test_embedding_bag_weights_and_last_offset_like_torch():
    torch = pytest.importorskip("torch")
    table, weights = data((7, 4), 6), data(6, 7)
    indices, offsets = [1, 6, 3, 3, 0, 5], [0, 3, 3, 6]  # the last offset ends the input
    ours = jg.tensor(table, requires_grad=True), jg.tensor(weights, requires_grad=True)
    theirs = torch.tensor(table, requires_grad=True), torch.tensor(weights, requires_grad=True)
    y = nn.functional.embedding_bag(
        jg.tensor(indices),
        ours[0],
        jg.tensor(offsets),
        mode="sum",
        per_sample_weights=ours[1],
        include_last_offset=True,
    )
    expected = torch.nn.functional.embedding_bag(
        torch.tensor(indices),
        theirs[0],
        torch.tensor(offsets),
        mode="sum",
        per_sample_weights=theirs[1],
        include_last_offset=True,
    )
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), rtol=1e-12)
    (y * y).sum().backward()
    (expected * expected).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("bags, offsets", BAGS)
def test_embedding_bag_max_norm_and_sparse_like_torch(mode, bags, offsets):
    torch = pytest.importorskip("torch")
    norm_type, sparse = {"sum": (2.0, True), "mean": (1.0, True), "max": (math.inf, False)}[mode]
    options = {"max_norm": 1.2, "norm_type": norm_type, "mode": mode, "sparse": sparse}
    layer = nn.EmbeddingBag(6, 3, **options, padding_idx=2, generator=2)
    torch_layer = _torch_copy(layer, torch.nn.EmbeddingBag(6, 3, **options, padding_idx=2))
    assert repr(layer) == repr(torch_layer)
    with jg.no_grad():
        layer.weight.mul_(2.0)  # (most rows' norms above max_norm)
    with torch.no_grad():
        torch_layer.weight.mul_(2.0)
    version = layer.weight._storage._version
    args = [jg.tensor(bags)] + ([] if offsets is None else [jg.tensor(offsets)])
    torch_args = [torch.tensor(bags)] + ([] if offsets is None else [torch.tensor(offsets)])
    y, expected = layer(*args), torch_layer(*torch_args)
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    # Every row the input holds renormalised in place (the padding row too), once.
    np.testing.assert_allclose(
        layer.weight.detach().numpy(), torch_layer.weight.detach().numpy(), rtol=1e-12
    )
    assert layer.weight._storage._version == version + 1
    g = data(y.shape, 5)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(
        layer.weight.grad.numpy(), _torch_dense(torch_layer.weight.grad), rtol=1e-12, atol=1e-15
    )


def _each_index_times(rng, n, times, length):
    """``length`` indices in [0, n), each index that occurs occurring ``times`` times."""
    return rng.permutation(np.repeat(rng.choice(n, length // times, replace=False), times))


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("times", [1, 2, 3])
def test_embedding_bag_scale_grad_by_freq_like_torch(mode, times):
    # PyTorch's CPU kernel divides some rows by another index's count when counts differ
    # (see the test by hand below); with every index held equally often it is right.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(times)
    indices = _each_index_times(rng, 12, times, 12)
    starts = np.concatenate([[0], np.sort(rng.integers(0, 12, 3))])
    table, weights = data((12, 3), times), data(12, 7 + times)
    ours = jg.tensor(table, requires_grad=True), jg.tensor(weights)
    theirs = torch.tensor(table, requires_grad=True), torch.tensor(weights)
    # (With include_last_offset, the offsets end the input: PyTorch's CPU kernels differ
    # among modes and dtypes on indices after the last offset.)
    for last, offsets in [(False, starts), (True, np.append(starts, 12))]:
        kwargs = {"mode": mode, "scale_grad_by_freq": True, "include_last_offset": last}
        y = nn.functional.embedding_bag(
            jg.tensor(indices),
            ours[0],
            jg.tensor(offsets),
            per_sample_weights=ours[1] if mode == "sum" else None,
            **kwargs,
        )
        expected = torch.nn.functional.embedding_bag(
            torch.tensor(indices),
            theirs[0],
            torch.tensor(offsets),
            per_sample_weights=theirs[1] if mode == "sum" else None,
            **kwargs,
        )
        np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
        g = data(y.shape, 3)
        y.backward(jg.tensor(g))
        expected.backward(torch.tensor(g))
        np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_bag_scale_grad_by_freq_with_mixed_counts_as_torch_lookups(mode, padding_idx):
    # Bags of a (B, N) input are sums or means of F.embedding's rows over the
    # non-padding positions: PyTorch's lookup with scale_grad_by_freq is the reference.
    torch = pytest.importorskip("torch")
    table, indices = data((6, 4), 8), np.random.default_rng(8).integers(0, 6, (5, 4))
    indices[:2, :2] = 1  # (the padding index, and counts that differ)
    layer = nn.EmbeddingBag(
        6, 4, scale_grad_by_freq=True, mode=mode, padding_idx=padding_idx, _weight=table
    )
    tw = torch.tensor(table, requires_grad=True)
    rows = torch.nn.functional.embedding(
        torch.tensor(indices), tw, padding_idx, scale_grad_by_freq=True
    )
    taken = torch.tensor(indices != (-1 if padding_idx is None else padding_idx))[..., None]
    expected = (rows * taken).sum(1)
    if mode == "mean":
        expected = expected / taken.sum(1).clamp(min=1)
    y = layer(jg.tensor(indices))
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    g = data(y.shape, 9)
    y.backward(jg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(layer.weight.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def test_embedding_bag_scale_grad_by_freq_by_hand():
    # Index 1 twice and 3 once: each row's gradient is the mean of its contributions.
    # (PyTorch 2.13's CPU kernel gives row 3 a half: it divides by index 1's count.)
    weight = jg.ones((4, 3), requires_grad=True)
    y = nn.functional.embedding_bag(
        jg.tensor([1, 1, 3]), weight, jg.tensor([0]), mode="sum", scale_grad_by_freq=True
    )
    y.sum().backward()
    assert weight.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_embedding_bag_from_pretrained_like_torch():
    torch = pytest.importorskip("torch")
    table = data((6, 3), 11) * 2
    args = (False, 1.0, 2.0, True, "mean", True, True, 0)  # freeze ... padding_idx
    bag = nn.EmbeddingBag.from_pretrained(jg.tensor(table), *args)
    reference = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), *args)
    assert repr(bag) == repr(reference) and bag.weight.requires_grad
    assert bag.include_last_offset and bag.padding_idx == 0 and bag.sparse
    indices, offsets = [2, 0, 5, 5, 3, 1], [0, 2, 5, 6]  # the last offset ends the input
    y = bag(jg.tensor(indices), jg.tensor(offsets))
    expected = reference(torch.tensor(indices), torch.tensor(offsets))
    np.testing.assert_allclose(y.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(bag.weight.detach().numpy(), reference.weight.detach().numpy())
    y.sum().backward()  # (PyTorch's sparse gradient refuses scale_grad_by_freq)
    frozen = nn.EmbeddingBag.from_pretrained(jg.tensor(table), mode="max")
    assert not frozen.weight.requires_grad
    assert frozen(jg.tensor([[1, 2]])).tolist() == [list(table[[1, 2]].max(0))]
    with pytest.raises(ValueError, match="embeddings must be a matrix"):
        nn.EmbeddingBag.from_pretrained(jg.ones(3))


def test_a_jitted_embedding_bag_reads_every_call_s_bags():
    layer = nn.EmbeddingBag(8, 3, mode="max", generator=0)
    step = jg.jit(lambda i, o: layer(i, o).detach())
    rng = np.random.default_rng(4)
    for _ in range(3):
        indices = jg.tensor(rng.integers(0, 8, 9))
        offsets = jg.tensor(np.concatenate([[0], np.sort(rng.integers(0, 10, 3))]))
        np.testing.assert_array_equal(
            step(indices, offsets).numpy(), layer(indices, offsets).numpy()
        )
    with pytest.raises(ValueError, match="offsets must be non-decreasing"):
        step(jg.tensor(rng.integers(0, 8, 9)), jg.tensor([0, 5, 2, 9]))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda b: b(jg.tensor([[[1]]])), ValueError, "input must be 1-d .* or 2-d"),
        (lambda b: b(jg.tensor([1, 2])), ValueError, "1-d input needs offsets"),
        (lambda b: b(jg.tensor([[1, 2]]), jg.tensor([0])), ValueError, "offsets must be None"),
        (lambda b: b(jg.tensor([1, 2]), jg.tensor([1])), ValueError, r"offsets\[0\] must be 0"),
        (lambda b: b(jg.tensor([1, 9]), jg.tensor([0])), IndexError, "index 9 is out of range"),
        (
            lambda b: b(jg.tensor([1, 2]), jg.tensor([0]), jg.ones(2)),
            ValueError,
            "per_sample_weights is only supported for mode='sum'",
        ),
        (lambda b: nn.EmbeddingBag(4, 2, mode="min"), ValueError, "mode must be"),
        (lambda b: nn.EmbeddingBag(4, 2, max_norm=-1.0), ValueError, "max_norm must be a non"),
        (
            lambda b: nn.EmbeddingBag(4, 2, mode="max", scale_grad_by_freq=True),
            ValueError,
            "mode 'max' does not support scale_grad_by_freq",
        ),
        (
            lambda b: nn.functional.embedding_bag(
                jg.tensor([[1]]), b.weight, mode="max", sparse=True
            ),
            ValueError,
            "mode 'max' does not support sparse",
        ),
    ],
)
def test_embedding_bag_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(nn.EmbeddingBag(4, 2))
