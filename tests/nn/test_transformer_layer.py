"""nn.TransformerEncoderLayer, nn.TransformerDecoderLayer and their stacks against PyTorch
with torch's weights loaded (dropout 0), and jitted training steps against the eager
ones."""

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


def _compare(reference, module, x, masks, rng, memory=None):
    """Forward values, and gradients of the inputs (``x``, and ``memory`` for a decoder)
    and every parameter, equal torch's."""
    inputs = (x,) if memory is None else (x, memory)
    out = reference(*inputs, **masks)
    ours = [as_jg(t, requires_grad=True) for t in inputs]
    got = module(
        *ours,
        **{
            k: v if k.endswith("is_causal") else as_jg(torch.as_tensor(v)) for k, v in masks.items()
        },
    )
    close(got, out)
    g = rng.standard_normal(out.shape)
    (out * torch.tensor(g)).sum().backward()
    (got * jg.tensor(g)).sum().backward()
    for mine, theirs in zip(ours, inputs):
        close(mine.grad, theirs.grad)
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


# -- the decoder ----------------------------------------------------------------------------


def _decoder_masks(rng, kind, T, S, N):
    """tgt and memory masks of ``kind``; key 0 is never masked, so no query sees none."""
    if kind is None:
        return {}
    if kind == "causal":
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
        return {"tgt_mask": causal, "tgt_is_causal": True}
    masks = {
        "tgt_mask": rng.random((T, T)) > 0.7,
        "memory_mask": rng.random((T, S)) > 0.7,
        "tgt_key_padding_mask": rng.random((N, T)) > 0.6,
        "memory_key_padding_mask": rng.random((N, S)) > 0.6,
    }
    for m in masks.values():
        m[:, 0] = False
    return {k: torch.tensor(v) for k, v in masks.items()}


@pytest.mark.parametrize("masks", [None, "causal", "padding"])
@pytest.mark.parametrize("config", LAYER_CONFIGS, ids=list(LAYER_CONFIGS))
def test_decoder_layer_with_torch_weights_matches_torch(config, masks):
    rng = np.random.default_rng(5)
    kwargs = {"dim_feedforward": 12, "dropout": 0.0, **LAYER_CONFIGS[config]}
    reference = torch.nn.TransformerDecoderLayer(8, 2, **kwargs, dtype=torch.float64)
    layer = nn.TransformerDecoderLayer(8, 2, **kwargs)
    assert list(layer.state_dict()) == list(reference.state_dict())
    copy_parameters(layer, reference)
    T, S, N = 4, 6, 3
    batch_first = kwargs.get("batch_first")
    x = torch.tensor(rng.standard_normal((N, T, 8) if batch_first else (T, N, 8)))
    memory = torch.tensor(rng.standard_normal((N, S, 8) if batch_first else (S, N, 8)))
    x.requires_grad_(), memory.requires_grad_()
    _compare(reference, layer, x, _decoder_masks(rng, masks, T, S, N), rng, memory)
    rebuilt = nn.from_config(layer.config())
    assert rebuilt.config() == layer.config()
    assert list(rebuilt.state_dict()) == list(layer.state_dict())


@pytest.mark.parametrize("norm", [False, True])
def test_decoder_stack_with_torch_weights_matches_torch(norm):
    rng = np.random.default_rng(6)
    t_layer = torch.nn.TransformerDecoderLayer(
        8, 4, 12, dropout=0.0, activation="gelu", norm_first=True, dtype=torch.float64
    )
    t_norm = torch.nn.LayerNorm(8, dtype=torch.float64) if norm else None
    reference = torch.nn.TransformerDecoder(t_layer, 2, norm=t_norm)
    layer = nn.TransformerDecoderLayer(8, 4, 12, dropout=0.0, activation="gelu", norm_first=True)
    decoder = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(8) if norm else None)
    assert list(decoder.state_dict()) == list(reference.state_dict())
    assert decoder.layers[0].multihead_attn.in_proj_weight is not (
        decoder.layers[1].multihead_attn.in_proj_weight
    )
    with torch.no_grad():
        for p in reference.parameters():
            p.add_(torch.tensor(rng.standard_normal(p.shape)) * 0.1)
    copy_parameters(decoder, reference)
    x = torch.tensor(rng.standard_normal((5, 2, 8)), requires_grad=True)
    memory = torch.tensor(rng.standard_normal((3, 2, 8)), requires_grad=True)
    _compare(reference, decoder, x, _decoder_masks(rng, "padding", 5, 3, 2), rng, memory)
    rebuilt = nn.from_config(decoder.config())
    assert list(rebuilt.state_dict()) == list(decoder.state_dict())
    assert rebuilt.config() == decoder.config()


def test_a_jitted_encoder_decoder_training_step_equals_the_eager_one():
    """Dropout included: both models draw their masks from one seed."""
    rng = np.random.default_rng(7)

    def model():
        encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, generator=3), 1
        )
        decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=True, generator=4),
            2,
            norm=nn.LayerNorm(8),
        )
        return nn.ModuleList([encoder, decoder])

    models = [model(), model()]
    optimizers = [jg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]
    causal = jg.tensor(np.triu(np.ones((4, 4), bool), 1))

    def step(model, opt, src, tgt, padding, target):
        opt.zero_grad()
        memory = model[0](src, src_key_padding_mask=padding)
        out = model[1](
            tgt, memory, tgt_mask=causal, memory_key_padding_mask=padding, tgt_is_causal=True
        )
        loss = F.mse_loss(out, target)
        loss.backward()
        opt.step()
        return loss

    jitted = jg.jit(step)
    for _ in range(3):
        src, tgt = (
            jg.tensor(rng.standard_normal((2, 5, 8))),
            jg.tensor(rng.standard_normal((2, 4, 8))),
        )
        padding = jg.tensor(rng.random((2, 5)) > 0.7)
        target = jg.tensor(rng.standard_normal((2, 4, 8)))
        eager = step(models[0], optimizers[0], src, tgt, padding, target).item()
        assert jitted(models[1], optimizers[1], src, tgt, padding, target).item() == pytest.approx(
            eager, rel=1e-12
        )
    for (name, a), (_, b) in zip(models[0].state_dict().items(), models[1].state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


def test_decoder_refuses_bad_arguments():
    with pytest.raises(ValueError, match="TransformerDecoderLayer: activation should be"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")
    with pytest.raises(TypeError, match="TransformerDecoder: decoder_layer must be a Module"):
        nn.TransformerDecoder("layer", 2)
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match=r"key of shape \(6, 3, 4\) must have 8 features"):
        layer(jg.ones((5, 3, 8)), jg.ones((6, 3, 4)))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(5, 5\) must be \(5, 6\)"):
        layer(jg.ones((5, 3, 8)), jg.ones((6, 3, 8)), memory_mask=jg.zeros((5, 5)))
    with pytest.raises(ValueError, match="must all be 3-d .* or 2-d"):
        layer(jg.ones((5, 3, 8)), jg.ones((6, 8)))


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
        (nn.TransformerDecoderLayer.__init__, torch.nn.TransformerDecoderLayer.__init__),
        (nn.TransformerDecoderLayer.forward, torch.nn.TransformerDecoderLayer.forward),
        (nn.TransformerDecoder.__init__, torch.nn.TransformerDecoder.__init__),
        (nn.TransformerDecoder.forward, torch.nn.TransformerDecoder.forward),
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
