"""ModuleDict, ParameterList and ParameterDict: PyTorch's state_dict keys and editing
methods, configs, and jitted steps over them."""

import numpy as np
import pytest
import torch

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import nn


def populate(model, lib):
    """The same containers in a jitgrad (``lib`` = jitgrad.nn) or torch (torch.nn) model."""
    zeros = jg.zeros if lib is nn else torch.zeros
    model.heads = lib.ModuleDict(
        {"cls": lib.Linear(4, 3), "seq": lib.Sequential(lib.Linear(4, 2), lib.ReLU())}
    )
    model.scales = lib.ParameterList([lib.Parameter(zeros(3)), zeros(2)])
    model.gains = lib.ParameterDict({"b": zeros(1), "a": lib.Parameter(zeros(4))})
    # PyTorch adds a plain dict's parameters in key order, and its modules in its own
    model.gains.update({"d": zeros(1), "c": zeros(1)})
    model.gains.update([("f", zeros(1)), ("e", zeros(1))])
    model.heads.update({"z": lib.Linear(1, 1), "y": lib.Linear(1, 1)})
    return model


def test_state_dict_keys_like_torch():
    model, tmodel = populate(nn.Module(), nn), populate(torch.nn.Module(), torch.nn)
    assert list(model.state_dict()) == list(tmodel.state_dict())
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in tmodel.named_parameters()]
    model.load_state_dict({k: jg.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    assert all(isinstance(p, nn.Parameter) for p in (*model.scales, *model.gains.values()))


def test_module_dict_edits_like_a_dict():
    heads = nn.ModuleDict([("a", nn.Linear(2, 2)), ("b", nn.ReLU())])
    assert list(heads) == ["a", "b"] and len(heads) == 2 and "a" in heads
    heads["c"] = nn.Tanh()
    heads.update({"a": nn.Identity(), "d": nn.Sigmoid()})
    assert list(heads.keys()) == ["a", "b", "c", "d"]  # a replaced key keeps its place
    assert isinstance(heads["a"], nn.Identity)
    assert isinstance(heads.pop("b"), nn.ReLU) and "b" not in heads
    del heads["c"]
    assert [type(m).__name__ for m in heads.values()] == ["Identity", "Sigmoid"]
    assert [k for k, _ in heads.items()] == ["a", "d"]
    heads.clear()
    assert len(heads) == 0 and list(heads.parameters()) == []


def test_module_dict_errors():
    heads = nn.ModuleDict({"a": nn.ReLU()})
    with pytest.raises(KeyError, match=r"ModuleDict has no module 'z' \(it has \['a'\]\)"):
        heads["z"]
    with pytest.raises(KeyError, match="no module 'z'"):
        del heads["z"]
    with pytest.raises(TypeError, match="submodule 'b' must be a Module, got int"):
        heads["b"] = 3
    with pytest.raises(KeyError, match="attribute 'keys' already exists"):
        heads["keys"] = nn.ReLU()  # would hide the method, as PyTorch refuses
    with pytest.raises(ValueError, match=r"element 0 is not a \(key, value\) pair"):
        nn.ModuleDict([("a", nn.ReLU(), 1)])
    with pytest.raises(NotImplementedError, match="index it by name"):
        heads(jg.ones(1))


def test_parameter_list_edits_like_a_list():
    params = nn.ParameterList([jg.ones(2)])
    assert isinstance(params[0], nn.Parameter) and params[0].requires_grad
    params.append(jg.zeros(3)).extend([jg.ones(1), nn.Parameter(jg.ones(4))])
    params += [jg.zeros(5)]
    assert [p.shape for p in params] == [(2,), (3,), (1,), (4,), (5,)]
    assert params[-1].shape == (5,) and [p.shape for p in params[1:3]] == [(3,), (1,)]
    kept = params[1]
    params[1] = jg.full(3, 7.0)
    assert params[1] is not kept and params[1].tolist() == [7.0] * 3
    assert list(params.state_dict()) == ["0", "1", "2", "3", "4"]
    with pytest.raises(IndexError, match="index 5 is out of range for ParameterList of length 5"):
        params[5]
    with pytest.raises(TypeError, match="holds tensors .made Parameters., got list"):
        params.append([1.0])
    with pytest.raises(TypeError, match="got str"):
        params.extend([jg.ones(1), "x"])
    assert len(params) == 5  # a refused extend adds nothing
    assert repr(nn.ParameterList([jg.ones((2, 3))])) == (
        "ParameterList(\n  (0): Parameter containing: [jitgrad.float64 of size 2x3]\n)"
    )


def test_parameter_dict_edits_like_a_dict():
    gains = nn.ParameterDict({"w": jg.ones(2)})
    gains["v"] = jg.zeros(3)
    gains.update([("u", jg.ones(1)), ("w", jg.zeros(2))])
    assert list(gains) == ["w", "v", "u"] and gains["w"].tolist() == [0.0, 0.0]
    assert all(isinstance(p, nn.Parameter) for p in gains.values())
    assert gains.pop("v").shape == (3,) and "v" not in gains
    del gains["u"]
    assert list(gains.state_dict()) == ["w"] and [k for k, _ in gains.items()] == ["w"]
    with pytest.raises(KeyError, match="ParameterDict has no parameter 'q'"):
        gains["q"]
    with pytest.raises(TypeError, match="got float"):
        gains["q"] = 1.0
    gains.clear()
    assert len(gains) == 0


def test_containers_rebuild_from_their_configs():
    model = nn.Sequential(
        nn.ModuleDict({"fc": nn.Linear(3, 2, dtype=jg.float32)}),
        nn.ParameterList([jg.ones((2, 3)), jg.ones(4, dtype=jg.float32)]),
        nn.ParameterDict({"g": jg.ones(2), "h": nn.Parameter(jg.ones(1), requires_grad=False)}),
    )
    rebuilt = nn.from_config(model.config())
    assert rebuilt.config() == model.config()
    assert {k: (v.shape, v.dtype) for k, v in rebuilt.state_dict().items()} == {
        k: (v.shape, v.dtype) for k, v in model.state_dict().items()
    }
    assert not rebuilt[2]["h"].requires_grad
    rebuilt.load_state_dict(model.state_dict())
    np.testing.assert_array_equal(rebuilt[1][0].numpy(), np.ones((2, 3)))


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleDict({"a": nn.Linear(3, 2, generator=0)})
        self.biases = nn.ParameterList([jg.full(2, 0.1)])
        self.gains = nn.ParameterDict({"a": jg.ones(2)})

    def forward(self, x):
        out = 0
        for name, expert in self.experts.items():
            out = out + expert(x) * self.gains[name]
        for b in self.biases:
            out = out + b
        return out


def test_a_jitted_step_over_containers_equals_eager_and_follows_edits():
    rng = np.random.default_rng(0)
    x, y = jg.tensor(rng.standard_normal((5, 3))), jg.tensor(rng.integers(0, 2, 5))
    models = [Experts(), Experts()]
    steps = []
    for model in models:
        opt = jg.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y, model=model, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        steps.append(step)
    eager, jitted = steps[0], jg.jit(steps[1])
    for _ in range(3):
        assert jitted(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    for model in models:  # new members: the plan must not replay the old loops
        model.biases.append(jg.full(2, -0.2))
        model.experts["b"] = nn.Linear(3, 2, generator=1)
        model.gains["b"] = jg.full(2, 0.5)
    assert jitted(x, y).item() == pytest.approx(eager(x, y).item(), rel=1e-12)
    assert jitted.traces == 2
    for a, b in zip(models[0].parameters(), models[1].parameters()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)
