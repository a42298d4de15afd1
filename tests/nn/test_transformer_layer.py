"""nn.TransformerEncoderLayer and nn.TransformerEncoder against PyTorch with torch's weights
loaded (dropout 0), and a jitted training step against the eager one."""

import numpy as np
import pytest
from nn_torch_oracle import as_jg, close, copy_parameters

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

torch = pytest.importorskip("torch")

LAYER_CONFIGS = {
    "default": {},
    "gelu, norm_first": {"activation": "gelu", "norm_first": True},
    "batch_first, no bias": {"batch_first": True, "bias": False},
    "layer_norm_eps": {"layer_norm_eps": 1e-3, "activation": "relu"},
}


def _pair(config, d_model=8, nhead=2, ff=12):
    """A torch layer in training mode (PyTorch's slow path, the one with gradients) and a
    jitgrad layer holding its weights."""
    kwargs = {"dim_feedforward": ff, "dropout": 0.0, **config}
    reference = torch.nn.TransformerEncoderLayer(d_model, nhead, **kwargs, dtype=torch.float64)
    layer = nn.TransformerEncoderLayer(d_model, nhead, **kwargs)
    return reference, layer


def _masks(rng, kind, L, N):
    if kind is None:
        return {}
    padding = rng.random((N, L)) > 0.6
    padding[:, 0] = False
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    if kind == "causal":
        return {"mask": causal, "is_causal": True}
    return {
        "mask": torch.tensor(rng.random((L, L)) > 0.8),
        "src_key_padding_mask": torch.tensor(padding),
    }


def _compare(reference, module, x, masks, rng):
    """Forward values, and gradients of the input and every parameter, equal torch's."""
    out = reference(x, **masks)
    jx = as_jg(x, requires_grad=True)
    got = module(
        jx, **{k: as_jg(torch.as_tensor(v)) if k != "is_causal" else v for k, v in masks.items()}
    )
    close(got, out)
    g = rng.standard_normal(out.shape)
    (out * torch.tensor(g)).sum().backward()
    (got * jg.tensor(g)).sum().backward()
    close(jx.grad, x.grad)
    grads = dict(reference.named_parameters())
    assert [n for n, _ in module.named_parameters()] == list(grads)
    for name, p in module.named_parameters():
        close(p.grad, grads[name].grad)


@pytest.mark.parametrize("masks", [None, "causal", "padding"])
@pytest.mark.parametrize("config", LAYER_CONFIGS, ids=list(LAYER_CONFIGS))
def test_encoder_layer_with_torch_weights_matches_torch(config, masks):
    rng = np.random.default_rng(0)
    reference, layer = _pair(LAYER_CONFIGS[config])
    assert list(layer.state_dict()) == list(reference.state_dict())
    copy_parameters(layer, reference)
    L, N = 5, 3
    shape = (N, L, 8) if LAYER_CONFIGS[config].get("batch_first") else (L, N, 8)
    x = torch.tensor(rng.standard_normal(shape), requires_grad=True)
    m = _masks(rng, masks, L, N)
    m = {("src_mask" if k == "mask" else k): v for k, v in m.items()}
    _compare(reference, layer, x, m, rng)


def test_encoder_layer_takes_a_callable_activation():
    rng = np.random.default_rng(1)
    reference = torch.nn.TransformerEncoderLayer(
        8, 4, 16, dropout=0.0, activation=torch.nn.functional.silu, dtype=torch.float64
    )
    layer = nn.TransformerEncoderLayer(8, 4, 16, dropout=0.0, activation=F.silu)
    copy_parameters(layer, reference)
    x = torch.tensor(rng.standard_normal((4, 2, 8)), requires_grad=True)
    _compare(reference, layer, x, {}, rng)
    with pytest.raises(NotImplementedError, match="callable activation"):
        layer.config()


@pytest.mark.parametrize("norm", [False, True])
def test_encoder_stack_with_torch_weights_matches_torch(norm):
    rng = np.random.default_rng(2)
    t_layer = torch.nn.TransformerEncoderLayer(
        8, 2, 12, dropout=0.0, batch_first=True, dtype=torch.float64
    )
    t_norm = torch.nn.LayerNorm(8, dtype=torch.float64) if norm else None
    reference = torch.nn.TransformerEncoder(t_layer, 3, norm=t_norm, enable_nested_tensor=False)
    layer = nn.TransformerEncoderLayer(8, 2, 12, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8) if norm else None)
    assert list(encoder.state_dict()) == list(reference.state_dict())
    # The copies are separate layers: loading one leaves the others.
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(torch.tensor(rng.standard_normal(p.shape)) * 0.1)
    copy_parameters(encoder, reference)
    x = torch.tensor(rng.standard_normal((3, 6, 8)), requires_grad=True)
    _compare(reference, encoder, x, _masks(rng, "padding", 6, 3), rng)
    rebuilt = nn.from_config(encoder.config())
    assert list(rebuilt.state_dict()) == list(encoder.state_dict())


def test_a_jitted_encoder_training_step_equals_the_eager_one():
    """Dropout included: both models draw their masks from one seed."""
    rng = np.random.default_rng(3)

    def model():
        layer = nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.1, activation="gelu", batch_first=True, generator=9
        )
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8))

    models = [model(), model()]
    optimizers = [jg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]

    def step(model, opt, x, padding, target):
        opt.zero_grad()
        loss = F.mse_loss(model(x, src_key_padding_mask=padding), target)
        loss.backward()
        opt.step()
        return loss

    jitted = jg.jit(step)
    for _ in range(3):
        x = jg.tensor(rng.standard_normal((2, 5, 8)))
        padding = jg.tensor(rng.random((2, 5)) > 0.7)
        target = jg.tensor(rng.standard_normal((2, 5, 8)))
        eager = step(models[0], optimizers[0], x, padding, target).item()
        assert jitted(models[1], optimizers[1], x, padding, target).item() == pytest.approx(
            eager, rel=1e-12
        )
    for (name, a), (_, b) in zip(models[0].state_dict().items(), models[1].state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)
    masks = [models[0].layers[i].dropout.generator for i in range(2)]
    assert masks[0] is masks[1]  # the copies draw on from one generator


def test_encoder_layer_refuses_bad_arguments():
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or a callable"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match=r"embed_dim \(8\) must be divisible by num_heads \(3\)"):
        nn.TransformerEncoderLayer(8, 3)
    with pytest.raises(TypeError, match="encoder_layer must be a Module"):
        nn.TransformerEncoder("layer", 2)
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match=r"src_key_padding_mask|key_padding_mask of shape"):
        layer(jg.ones((5, 3, 8)), src_key_padding_mask=jg.ones((3, 4), "bool"))


def test_encoder_in_eval_mode_matches_torch_s_inference_path():
    """Dropout is off in eval mode; torch answers through its fused inference path."""
    rng = np.random.default_rng(4)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 12, dropout=0.3, dtype=torch.float64)
    reference = torch.nn.TransformerEncoder(t_layer, 2, enable_nested_tensor=False).eval()
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 12, dropout=0.3), 2).eval()
    copy_parameters(encoder, reference)
    x = torch.tensor(rng.standard_normal((5, 3, 8)))
    with torch.no_grad():
        expected = reference(x)
    with jg.no_grad():
        close(encoder(as_jg(x)), expected, tol=1e-9)


def _positional(f):
    """(name, default) of each parameter after self that may be passed by position."""
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = list(inspect.signature(f).parameters.values())[1:]
    return [(p.name, p.default) for p in params if p.kind in kinds]


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (nn.MultiheadAttention.__init__, torch.nn.MultiheadAttention.__init__),
        (nn.MultiheadAttention.forward, torch.nn.MultiheadAttention.forward),
        (nn.TransformerEncoderLayer.__init__, torch.nn.TransformerEncoderLayer.__init__),
        (nn.TransformerEncoderLayer.forward, torch.nn.TransformerEncoderLayer.forward),
        (nn.TransformerEncoder.__init__, torch.nn.TransformerEncoder.__init__),
        (nn.TransformerEncoder.forward, torch.nn.TransformerEncoder.forward),
    ],
    ids=lambda f: f.__qualname__,
)
def test_signatures_are_pytorch_s(ours, theirs):
    expected = [
        (name, "relu" if name == "activation" else default)  # torch's default is F.relu
        for name, default in _positional(theirs)
        if name not in ("device", "dtype")  # jitgrad's dtype is keyword-only
    ]
    assert _positional(ours) == expected
