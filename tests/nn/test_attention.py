"""F.scaled_dot_product_attention and nn.MultiheadAttention against PyTorch: values and
gradients on random shapes and masks, torch's weights loaded, eagerly and under jg.jit."""

import math

import numpy as np
import pytest
from nn_torch_oracle import as_jg, close, copy_parameters

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

torch = pytest.importorskip("torch")

TF = torch.nn.functional


def randn(rng, *shape):
    return torch.tensor(rng.standard_normal(shape), requires_grad=True)


# (query shape, key shape, value shape, mask kind, options): the mask kinds are made below.
SDPA_CASES = {
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {}),
    "3-d": ((3, 4, 5), (3, 6, 5), (3, 6, 2), None, {}),
    "broadcast batch": ((2, 3, 4, 5), (1, 3, 6, 5), (1, 3, 6, 7), None, {}),
    "bool mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "bool", {}),
    "bool mask, a row masked out": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "dead row", {}),
    "float mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "float", {}),
    "float mask with -inf": ((2, 4, 5), (2, 6, 5), (2, 6, 3), "float -inf", {}),
    "causal": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {"is_causal": True}),
    "causal, more queries": ((2, 6, 5), (2, 4, 5), (2, 4, 3), None, {"is_causal": True}),
    "scale": ((2, 4, 5), (2, 6, 5), (2, 6, 3), "bool", {"scale": 0.7}),
    "gqa": ((2, 6, 4, 5), (2, 2, 3, 5), (2, 2, 3, 4), None, {"enable_gqa": True}),
}


def _mask(kind, rng, L, S):
    if kind == "bool":
        return torch.tensor(rng.random((L, S)) > 0.4) | torch.eye(L, S, dtype=torch.bool)
    if kind == "dead row":
        keep = torch.tensor(rng.random((2, 1, L, S)) > 0.3)
        keep[0, 0, 1] = False
        return keep
    if kind == "float":
        return torch.tensor(rng.standard_normal((1, 3, L, S)), requires_grad=True)
    if kind == "float -inf":
        m = rng.standard_normal((L, S))
        m[rng.random((L, S)) > 0.6] = -np.inf
        m[0] = -np.inf
        return torch.tensor(m)
    return None


@pytest.mark.parametrize("case", SDPA_CASES, ids=list(SDPA_CASES))
def test_sdpa_values_and_gradients_match_pytorch(case):
    qs, ks, vs, kind, options = SDPA_CASES[case]
    rng = np.random.default_rng(len(case))
    q, k, v = randn(rng, *qs), randn(rng, *ks), randn(rng, *vs)
    mask = _mask(kind, rng, qs[-2], ks[-2])
    expected = TF.scaled_dot_product_attention(q, k, v, attn_mask=mask, **options)
    weight = rng.standard_normal(expected.shape)
    (expected * torch.tensor(weight)).sum().backward()

    jq, jk, jv = (as_jg(t, requires_grad=True) for t in (q, k, v))
    jmask = None if mask is None else as_jg(mask, requires_grad=mask.requires_grad)
    got = F.scaled_dot_product_attention(jq, jk, jv, attn_mask=jmask, **options)
    close(got, expected)
    (got * jg.tensor(weight)).sum().backward()
    for j, t in ((jq, q), (jk, k), (jv, v)) + (((jmask, mask),) if kind == "float" else ()):
        close(j.grad, t.grad)
    assert np.isfinite(jq.grad.numpy()).all()  # a masked-out row contributes zeros, not NaN


@pytest.mark.parametrize("case", ["bool mask, a row masked out", "causal", "gqa"])
def test_sdpa_gradients_under_jit_equal_eager(case):
    qs, ks, vs, kind, options = SDPA_CASES[case]
    rng = np.random.default_rng(1)
    leaves = [jg.tensor(rng.standard_normal(s), requires_grad=True) for s in (qs, ks, vs)]
    weight = jg.tensor(rng.standard_normal((*qs[:-1], vs[-1])))

    def step(mask):
        out = F.scaled_dot_product_attention(*leaves, attn_mask=mask, **options)
        loss = (out * weight).sum()
        loss.backward()
        return loss

    jitted = jg.jit(step)
    for seed in range(3):  # the mask changes between calls: the replay follows it
        mask = _mask(kind, np.random.default_rng(seed), qs[-2], ks[-2])
        mask = None if mask is None else as_jg(mask)
        results = []
        for run in (step, jitted):
            for t in leaves:
                t.grad = None
            loss = run(mask)
            results.append([loss.numpy()] + [t.grad.numpy() for t in leaves])
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_sdpa_dropout():
    rng = np.random.default_rng(0)
    q, k, v = (jg.tensor(rng.standard_normal((2, 4, 3))) for _ in range(3))
    everything = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    np.testing.assert_array_equal(everything.numpy(), 0)  # every weight dropped, as torch
    plain = F.scaled_dot_product_attention(q, k, v).numpy()
    halves = [F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy() for _ in range(2)]
    assert not np.allclose(halves[0], plain) and not np.allclose(halves[0], halves[1])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=jg.ones((3, 4), "bool")),
            ValueError,
            r"attn_mask of shape \(3, 4\) does not broadcast .*\(2, 4, 4\)",
        ),
        (
            lambda q: F.scaled_dot_product_attention(q, q, q, attn_mask=jg.ones((4, 4), "int64")),
            TypeError,
            "attn_mask must be a bool or floating tensor, got int64",
        ),
        (
            lambda q: F.scaled_dot_product_attention(
                q, q, q, attn_mask=jg.ones((4, 4), "bool"), is_causal=True
            ),
            ValueError,
            "not both",
        ),
        (
            lambda q: F.scaled_dot_product_attention(q, q[..., :2], q),
            ValueError,
            "one embedding size",
        ),
        (
            lambda q: F.scaled_dot_product_attention(q, q, q[:, :3]),
            ValueError,
            "one sequence length",
        ),
        (
            lambda q: F.scaled_dot_product_attention(
                jg.ones((2, 3, 4, 5)), jg.ones((2, 2, 4, 5)), jg.ones((2, 2, 4, 5)), enable_gqa=True
            ),
            ValueError,
            "3 heads to be a multiple of key's and value's 2",
        ),
        (
            lambda q: F.scaled_dot_product_attention(q, q, q, dropout_p=1.5),
            ValueError,
            r"dropout_p must be in \[0, 1\]",
        ),
    ],
)
def test_sdpa_refuses_bad_input_naming_the_problem(call, error, match):
    with pytest.raises(error, match=match):
        call(jg.ones((2, 4, 5)))


# -- MultiheadAttention -----------------------------------------------------------------------


MHA_CONFIGS = {
    "default": {},
    "batch_first": {"batch_first": True},
    "kdim, vdim": {"kdim": 3, "vdim": 5},
    "bias_kv, zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
    "no bias": {"bias": False},
    "everything": {
        "batch_first": True,
        "kdim": 3,
        "vdim": 5,
        "add_bias_kv": True,
        "add_zero_attn": True,
    },
}


def _mha_inputs(rng, config, L=4, S=5, N=3, E=8):
    kdim, vdim = config.get("kdim", E), config.get("vdim", E)
    shapes = [(L, N, E), (S, N, kdim), (S, N, vdim)]
    if config.get("batch_first"):
        shapes = [(s[1], s[0], s[2]) for s in shapes]
    return [randn(rng, *s) for s in shapes]


def _mha_masks(rng, kind, L=4, S=5, N=3, H=2):
    padding = torch.tensor(rng.random((N, S)) > 0.7)
    padding[:, 0] = False
    if kind == "bool":
        return {"key_padding_mask": padding, "attn_mask": torch.tensor(rng.random((L, S)) > 0.8)}
    if kind == "float":
        return {
            "key_padding_mask": torch.tensor(np.where(padding.numpy(), -np.inf, 0.0)),
            "attn_mask": torch.tensor(rng.standard_normal((N * H, L, S))),
        }
    if kind == "3-d bool":
        return {"attn_mask": torch.tensor(rng.random((N * H, L, S)) > 0.8)}
    return {}


@pytest.mark.parametrize("masks", [None, "bool", "float", "3-d bool"])
@pytest.mark.parametrize("config", MHA_CONFIGS, ids=list(MHA_CONFIGS))
def test_multihead_attention_with_torch_weights_matches_torch(config, masks):
    kwargs = MHA_CONFIGS[config]
    rng = np.random.default_rng(7)
    reference = torch.nn.MultiheadAttention(8, 2, **kwargs, dtype=torch.float64)
    mha = nn.MultiheadAttention(8, 2, **kwargs)
    assert list(mha.state_dict()) == list(reference.state_dict())
    copy_parameters(mha, reference)
    inputs = _mha_inputs(rng, kwargs)
    mask_args = _mha_masks(rng, masks)
    for need_weights, average in ((True, True), (True, False), (False, True)):
        options = {"need_weights": need_weights, "average_attn_weights": average}
        out, weights = reference(*inputs, **mask_args, **options)
        j_inputs = [as_jg(t, requires_grad=True) for t in inputs]
        j_masks = {name: as_jg(m) for name, m in mask_args.items()}
        j_out, j_weights = mha(*j_inputs, **j_masks, **options)
        close(j_out, out)
        if need_weights:
            close(j_weights, weights)
        else:
            assert j_weights is None
        g = rng.standard_normal(out.shape)
        reference.zero_grad()
        mha.zero_grad()
        (out * torch.tensor(g)).sum().backward()
        (j_out * jg.tensor(g)).sum().backward()
        for j, t in zip(j_inputs, inputs):
            close(j.grad, t.grad)
            t.grad = None
        grads = dict(reference.named_parameters())
        for name, p in mha.named_parameters():
            close(p.grad, grads[name].grad)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_unbatched_and_causal_match_torch(batch_first):
    rng = np.random.default_rng(3)
    reference = torch.nn.MultiheadAttention(
        6, 3, batch_first=batch_first, add_zero_attn=True, dtype=torch.float64
    )
    mha = nn.MultiheadAttention(6, 3, batch_first=batch_first, add_zero_attn=True)
    copy_parameters(mha, reference)
    x = randn(rng, 5, 6)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    padding = torch.tensor([False, False, False, True, True])
    for masks in (
        {},
        {"attn_mask": causal, "is_causal": True},
        {"key_padding_mask": padding, "attn_mask": torch.rand(3, 5, 5) > 0.5},
    ):
        out, weights = reference(x, x, x, **masks)
        j_out, j_weights = mha(*(as_jg(x),) * 3, **{k: _plain(v) for k, v in masks.items()})
        assert j_out.shape == (5, 6) and j_weights.shape == (5, 5 + 1)
        close(j_out, out)
        close(j_weights, weights)


def _plain(value):
    return as_jg(value) if torch.is_tensor(value) else value


def test_multihead_attention_init_is_pytorch_s_and_seeded():
    mha = nn.MultiheadAttention(16, 4, add_bias_kv=True, generator=5)
    bound = math.sqrt(6 / (16 + 48))  # xavier_uniform over (3E, E)
    w = mha.in_proj_weight.numpy()
    assert w.shape == (48, 16) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    np.testing.assert_array_equal(mha.in_proj_bias.numpy(), 0)
    np.testing.assert_array_equal(mha.out_proj.bias.numpy(), 0)
    assert np.abs(mha.out_proj.weight.numpy()).max() <= 1 / 4  # Linear's U(±1/√E)
    assert mha.bias_k.shape == mha.bias_v.shape == (1, 1, 16)
    again = nn.MultiheadAttention(16, 4, add_bias_kv=True, generator=5)
    for (name, a), (_, b) in zip(mha.state_dict().items(), again.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    separate = nn.MultiheadAttention(16, 4, kdim=3, vdim=5, bias=False)
    assert [n for n, _ in separate.named_parameters()] == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "out_proj.weight",
    ]
    assert separate.in_proj_weight is None and separate.in_proj_bias is None
    rebuilt = nn.from_config(separate.config())
    assert list(rebuilt.state_dict()) == list(separate.state_dict())


def test_multihead_attention_dropout_is_seeded_and_off_in_eval():
    rng = np.random.default_rng(0)
    x = jg.tensor(rng.standard_normal((4, 2, 8)))
    a, b = (nn.MultiheadAttention(8, 2, dropout=0.5, generator=1) for _ in range(2))
    np.testing.assert_array_equal(a(x, x, x)[0].numpy(), b(x, x, x)[0].numpy())
    first, second = a(x, x, x)[1].numpy(), a(x, x, x)[1].numpy()
    assert not np.array_equal(first, second)  # the generator draws on
    a.eval()
    reference = torch.nn.MultiheadAttention(8, 2, dropout=0.5, dtype=torch.float64).eval()
    copy_parameters(a, reference)
    t = torch.tensor(x.numpy())
    close(a(x, x, x)[0], reference(t, t, t)[0])


def test_a_jitted_multihead_attention_training_step_equals_the_eager_one():
    rng = np.random.default_rng(2)
    models = [
        nn.MultiheadAttention(8, 2, dropout=0.2, batch_first=True, add_bias_kv=True, generator=4)
        for _ in range(2)
    ]
    optimizers = [jg.optim.Adam(m.parameters(), lr=1e-2) for m in models]

    def step(model, opt, x, padding, target):
        opt.zero_grad()
        out, _ = model(x, x, x, key_padding_mask=padding, need_weights=False)
        loss = F.mse_loss(out, target)
        loss.backward()
        opt.step()
        return loss

    jitted = jg.jit(step)
    for _ in range(3):
        x = jg.tensor(rng.standard_normal((3, 5, 8)))
        padding = jg.tensor(rng.random((3, 5)) > 0.7)
        target = jg.tensor(rng.standard_normal((3, 5, 8)))
        losses = [
            run(m, o, x, padding, target).item()
            for run, m, o in zip((step, jitted), models, optimizers)
        ]
        assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    for (name, a), (_, b) in zip(models[0].state_dict().items(), models[1].state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize(
    "build, error, match",
    [
        (
            lambda: nn.MultiheadAttention(10, 3),
            ValueError,
            r"embed_dim \(10\) must be divisible by num_heads \(3\)",
        ),
        (lambda: nn.MultiheadAttention(8, 0), ValueError, "must be positive"),
        (lambda: nn.MultiheadAttention(8, 2, dropout=2.0), ValueError, "dropout"),
    ],
)
def test_multihead_attention_refuses_bad_arguments(build, error, match):
    with pytest.raises(error, match=match):
        build()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"attn_mask": jg.ones((4, 4), "bool")}, r"attn_mask of shape \(4, 4\) must be \(4, 5\)"),
        ({"attn_mask": jg.ones((3, 4, 5), "bool")}, r"\(6, 4, 5\) \(batch·num_heads"),
        ({"key_padding_mask": jg.ones((2, 5), "bool")}, r"key_padding_mask of shape \(2, 5\)"),
        ({"attn_mask": jg.ones((4, 5), "int64")}, "attn_mask must be a bool or floating"),
        ({"is_causal": True}, "pass attn_mask as well"),
    ],
)
def test_multihead_attention_refuses_bad_masks_naming_them(kwargs, match):
    mha = nn.MultiheadAttention(8, 2)
    q, kv = jg.ones((4, 3, 8)), jg.ones((5, 3, 8))
    with pytest.raises((ValueError, TypeError), match=match):
        mha(q, kv, kv, **kwargs)


def test_multihead_attention_refuses_inputs_of_the_wrong_shape():
    mha = nn.MultiheadAttention(8, 2, kdim=4)
    with pytest.raises(ValueError, match=r"key of shape \(5, 3, 8\) must have 4 features"):
        mha(jg.ones((4, 3, 8)), jg.ones((5, 3, 8)), jg.ones((5, 3, 8)))
    with pytest.raises(ValueError, match="all be 3-d"):
        mha(jg.ones((4, 3, 8)), jg.ones((5, 4)), jg.ones((5, 8)))
    with pytest.raises(ValueError, match="the same batch"):
        mha(jg.ones((4, 3, 8)), jg.ones((5, 2, 4)), jg.ones((5, 2, 8)))


def test_multihead_attention_in_float32_matches_torch():
    rng = np.random.default_rng(6)
    reference = torch.nn.MultiheadAttention(8, 4, batch_first=True)
    mha = nn.MultiheadAttention(8, 4, batch_first=True, dtype=jg.float32)
    copy_parameters(mha, reference)
    x = torch.tensor(rng.standard_normal((2, 5, 8)), dtype=torch.float32)
    padding = torch.tensor(rng.random((2, 5)) > 0.7)
    out, weights = reference(x, x, x, key_padding_mask=padding)
    j_out, j_weights = mha(*(as_jg(x),) * 3, key_padding_mask=as_jg(padding))
    assert j_out.dtype == j_weights.dtype == jg.float32
    close(j_out, out, tol=1e-5)
    close(j_weights, weights, tol=1e-5)


def test_sdpa_signature_is_the_one_pytorch_documents():
    import inspect

    documented = TF.scaled_dot_product_attention.__doc__.split(" -> ")[0]
    documented = " ".join(documented.split()).replace("( ", "(")
    ours = inspect.signature(F.scaled_dot_product_attention)
    plain = [p.replace(annotation=inspect.Parameter.empty) for p in ours.parameters.values()]
    bare = ours.replace(parameters=plain, return_annotation=inspect.Signature.empty)
    assert "scaled_dot_product_attention" + str(bare) == documented
