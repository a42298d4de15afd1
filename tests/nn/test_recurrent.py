"""nn.LSTM, nn.GRU and their cells against PyTorch with torch's weights loaded: outputs,
final states and gradients, eagerly and in a jitted training step."""

import math

import numpy as np
import pytest
from nn_torch_oracle import as_jg, close, copy_parameters

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn

torch = pytest.importorskip("torch")

CONFIGS = {
    "one layer": {},
    "two layers, bidirectional": {"num_layers": 2, "bidirectional": True},
    "batch_first, no bias": {"batch_first": True, "bias": False},
    "three layers, batch_first, bidirectional": {
        "num_layers": 3,
        "batch_first": True,
        "bidirectional": True,
    },
}


def _states(kind, h, c):
    return (h, c) if kind == "LSTM" else h


@pytest.mark.parametrize("given_state", [False, True])
@pytest.mark.parametrize("config", CONFIGS, ids=list(CONFIGS))
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layer_with_torch_weights_matches_torch(kind, config, given_state):
    kwargs = CONFIGS[config]
    rng = np.random.default_rng(len(config))
    reference = getattr(torch.nn, kind)(3, 4, **kwargs, dtype=torch.float64)
    layer = getattr(nn, kind)(3, 4, **kwargs)
    assert list(layer.state_dict()) == list(reference.state_dict())
    copy_parameters(layer, reference)
    L, N = 6, 2
    x = torch.tensor(
        rng.standard_normal((N, L, 3) if kwargs.get("batch_first") else (L, N, 3)),
        requires_grad=True,
    )
    rows = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    h0 = torch.tensor(rng.standard_normal((rows, N, 4)), requires_grad=True)
    c0 = torch.tensor(rng.standard_normal((rows, N, 4)), requires_grad=True)
    jx, jh0, jc0 = (as_jg(t, requires_grad=True) for t in (x, h0, c0))
    if given_state:
        out, state = reference(x, _states(kind, h0, c0))
        j_out, j_state = layer(jx, _states(kind, jh0, jc0))
    else:
        out, state = reference(x)
        j_out, j_state = layer(jx)
    close(j_out, out)
    states = state if kind == "LSTM" else (state,)
    j_states = j_state if kind == "LSTM" else (j_state,)
    for a, b in zip(j_states, states):
        close(a, b)
    weights = [rng.standard_normal(t.shape) for t in (out, *states)]
    sum((t * torch.tensor(w)).sum() for t, w in zip((out, *states), weights)).backward()
    sum((t * jg.tensor(w)).sum() for t, w in zip((j_out, *j_states), weights)).backward()
    close(jx.grad, x.grad)
    if given_state:
        close(jh0.grad, h0.grad)
        if kind == "LSTM":
            close(jc0.grad, c0.grad)
    grads = dict(reference.named_parameters())
    for name, p in layer.named_parameters():
        close(p.grad, grads[name].grad)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_unbatched_input_matches_torch(kind):
    rng = np.random.default_rng(0)
    reference = getattr(torch.nn, kind)(3, 5, num_layers=2, dtype=torch.float64)
    layer = getattr(nn, kind)(3, 5, num_layers=2)
    copy_parameters(layer, reference)
    x = torch.tensor(rng.standard_normal((4, 3)))
    h0, c0 = (torch.tensor(rng.standard_normal((2, 5))) for _ in range(2))
    out, state = reference(x, _states(kind, h0, c0))
    j_out, j_state = layer(as_jg(x), _states(kind, as_jg(h0), as_jg(c0)))
    assert j_out.shape == (4, 5)
    close(j_out, out)
    for a, b in zip(
        j_state if kind == "LSTM" else (j_state,), state if kind == "LSTM" else (state,)
    ):
        assert a.shape == (2, 5)
        close(a, b)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_init_is_uniform_over_plus_minus_one_over_root_hidden_and_seeded(kind):
    layer = getattr(nn, kind)(6, 25, num_layers=2, bidirectional=True, generator=3)
    reference = getattr(torch.nn, kind)(6, 25, num_layers=2, bidirectional=True)
    for (name, p), (t_name, t) in zip(layer.named_parameters(), reference.named_parameters()):
        assert name == t_name and p.shape == tuple(t.shape)
        values = p.numpy()
        assert np.abs(values).max() <= 1 / math.sqrt(25)
        assert np.abs(values).max() > 0.8 / math.sqrt(25)
    again = getattr(nn, kind)(6, 25, num_layers=2, bidirectional=True, generator=3)
    for (name, a), (_, b) in zip(layer.state_dict().items(), again.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    rebuilt = nn.from_config(layer.config())
    assert list(rebuilt.state_dict()) == list(layer.state_dict())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell"])
def test_cells_with_torch_weights_match_torch(kind, bias):
    rng = np.random.default_rng(5)
    reference = getattr(torch.nn, kind)(3, 4, bias=bias, dtype=torch.float64)
    cell = getattr(nn, kind)(3, 4, bias=bias)
    assert list(cell.state_dict()) == list(reference.state_dict())
    copy_parameters(cell, reference)
    x = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    h, c = (torch.tensor(rng.standard_normal((2, 4)), requires_grad=True) for _ in range(2))
    jx, jh, jc = (as_jg(t, requires_grad=True) for t in (x, h, c))
    lstm = kind == "LSTMCell"
    out = reference(x, (h, c) if lstm else h)
    got = cell(jx, (jh, jc) if lstm else jh)
    outs, gots = (out, got) if lstm else ((out,), (got,))
    for a, b in zip(gots, outs):
        close(a, b)
    weights = [rng.standard_normal((2, 4)) for _ in outs]
    sum((t * torch.tensor(w)).sum() for t, w in zip(outs, weights)).backward()
    sum((t * jg.tensor(w)).sum() for t, w in zip(gots, weights)).backward()
    for a, b in ((jx, x), (jh, h)) + (((jc, c),) if lstm else ()):
        close(a.grad, b.grad)
    grads = dict(reference.named_parameters())
    for name, p in cell.named_parameters():
        close(p.grad, grads[name].grad)
    unbatched = cell(as_jg(x[0]))  # no state: zeros, as torch
    expected = reference(x[0])
    for a, b in zip(*((unbatched, expected) if lstm else ((unbatched,), (expected,)))):
        close(a, b)
    rebuilt = nn.from_config(cell.config())
    assert list(rebuilt.state_dict()) == list(cell.state_dict())


def test_a_jitted_recurrent_training_step_equals_the_eager_one():
    """Dropout between the layers included: both models draw their masks from one seed.
    (One direction, one kind: the fused kernels of a wider step take long to compile.)"""
    rng = np.random.default_rng(4)
    models = [nn.LSTM(3, 4, num_layers=2, dropout=0.3, generator=8) for _ in range(2)]
    optimizers = [jg.optim.Adam(m.parameters(), lr=1e-2) for m in models]

    def step(model, opt, x, target):
        opt.zero_grad()
        out, _ = model(x)
        loss = F.mse_loss(out, target)
        loss.backward()
        opt.step()
        return loss

    jitted = jg.jit(step)
    for _ in range(3):
        x = jg.tensor(rng.standard_normal((5, 2, 3)))
        target = jg.tensor(rng.standard_normal((5, 2, 4)))
        eager = step(models[0], optimizers[0], x, target).item()
        assert jitted(models[1], optimizers[1], x, target).item() == pytest.approx(eager, rel=1e-12)
    for (name, a), (_, b) in zip(models[0].state_dict().items(), models[1].state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: nn.LSTM(3, 4)(jg.ones((5, 2, 2))), r"input of shape \(5, 2, 2\) must be"),
        (lambda: nn.GRU(3, 4)(jg.ones((5, 2, 3)), jg.ones((2, 2, 4))), r"must be \(1, 2, 4\)"),
        (lambda: nn.LSTM(3, 4)(jg.ones((5, 2, 3)), jg.ones((1, 2, 4))), "pair"),
        (lambda: nn.LSTM(3, 4)(jg.ones((0, 2, 3))), "no time steps"),
        (lambda: nn.LSTM(3, 0), "hidden_size must be a positive integer"),
        (lambda: nn.GRU(3, 4, dropout=1.5), r"dropout must be in \[0, 1\]"),
        (lambda: nn.LSTMCell(3, 4)(jg.ones((2, 3)), (jg.ones((2, 5)),) * 2), r"\(2, 4\)"),
    ],
)
def test_bad_input_is_refused_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_float32_layers_match_torch(kind):
    rng = np.random.default_rng(9)
    reference = getattr(torch.nn, kind)(3, 4, num_layers=2)
    layer = getattr(nn, kind)(3, 4, num_layers=2, dtype=jg.float32)
    copy_parameters(layer, reference)
    x = torch.tensor(rng.standard_normal((5, 2, 3)), dtype=torch.float32)
    out, _ = reference(x)
    j_out, _ = layer(as_jg(x))
    assert j_out.dtype == jg.float32
    close(j_out, out, tol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "LSTMCell", "GRUCell"])
def test_arguments_and_defaults_are_pytorch_s(kind):
    import inspect

    ours = getattr(nn, kind)
    reference = getattr(torch.nn, kind)(3, 4)
    for name, p in inspect.signature(ours.__init__).parameters.items():
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty:
            assert getattr(reference, name) == p.default, name
    forward = list(inspect.signature(ours(3, 4).forward).parameters)
    assert (
        forward
        == list(inspect.signature(reference.forward).parameters)
        == [
            "input",
            "hx",
        ]
    )
