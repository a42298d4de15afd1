"""jg.nn.Module and Parameter: registration, traversal, state_dict, modes, dtype, config."""

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8, generator=0)
        self.norm = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3, generator=1)
        self.scale = 2.0  # a plain attribute

    def forward(self, x):
        return self.fc2(nn.functional.relu(self.norm(self.fc1(x)))) * self.scale


def test_parameter_is_a_leaf_sharing_storage():
    data = jg.zeros(3)
    p = nn.Parameter(data)
    assert p.requires_grad and p.is_leaf
    assert p.storage() is data.storage()
    assert type(p.T).__name__ == "Tensor" and type(p.clone()).__name__ == "Tensor"
    assert repr(p).startswith("Parameter containing:")
    assert not nn.Parameter(jg.ones(2), requires_grad=False).requires_grad


def test_registration_by_kind():
    m = MLP()
    assert list(m._parameters) == [] and list(m._modules) == ["fc1", "norm", "fc2"]
    assert m.scale == 2.0 and "scale" not in m._parameters
    names = [n for n, _ in m.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "norm.weight", "norm.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_buffers()] == [
        "norm.running_mean",
        "norm.running_var",
        "norm.num_batches_tracked",
    ]
    assert [type(c).__name__ for c in m.children()] == ["Linear", "BatchNorm1d", "Linear"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "norm", "fc2"]
    assert len(list(m.modules())) == 4
    assert len(list(m.parameters(recurse=False))) == 0


def test_reassigning_and_deleting():
    m = MLP()
    with pytest.raises(TypeError, match="MLP.fc1: it is a submodule"):
        m.fc1 = jg.zeros(2)
    m.fc1 = None
    assert "fc1" not in [n for n, _ in m.named_children()]
    m.extra = nn.Parameter(jg.ones(2))
    assert "extra" in dict(m.named_parameters())
    del m.extra
    assert "extra" not in dict(m.named_parameters())
    m.norm.running_mean = jg.ones(8)  # assigning to a buffer name keeps it a buffer
    assert m.state_dict()["norm.running_mean"].tolist() == [1.0] * 8


def test_shared_layer_trained_once_saved_under_each_name():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]  # PyTorch's
    seq.load_state_dict(seq.state_dict())


def test_shared_child_is_one_child_and_applied_once_like_torch():
    torch = pytest.importorskip("torch")
    lin, tlin = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    tseq = torch.nn.Sequential(tlin, torch.nn.ReLU(), tlin)
    assert [n for n, _ in seq.named_children()] == [n for n, _ in tseq.named_children()]
    assert len(list(seq.children())) == len(list(tseq.children())) == 2
    for dup in (True, False):
        assert [n for n, _ in seq.named_modules(remove_duplicate=dup)] == [
            n for n, _ in tseq.named_modules(remove_duplicate=dup)
        ]
    visited, tvisited = [], []
    seq.apply(lambda m: visited.append(type(m).__name__))
    tseq.apply(lambda m: tvisited.append(type(m).__name__))
    assert visited == tvisited == ["Linear", "ReLU", "Sequential"]
    # the architecture still lists every position
    assert len(nn.from_config(seq.config())) == 3


def test_missing_super_init_is_named():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(jg.ones(1))

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Bad()


def test_register_errors():
    m = nn.Module()
    with pytest.raises(TypeError, match="wrap it in nn.Parameter"):
        m.register_parameter("w", jg.ones(2))
    with pytest.raises(KeyError, match="'.'"):
        m.register_buffer("a.b", jg.ones(2))
    m.register_buffer("tmp", jg.ones(2), persistent=False)
    assert "tmp" in dict(m.named_buffers()) and "tmp" not in m.state_dict()


@pytest.mark.parametrize(
    "register, name",
    [
        ("register_buffer", "weight"),
        ("register_buffer", "fc"),
        ("register_buffer", "forward"),
        ("register_buffer", "training"),
        ("register_parameter", "running"),
        ("register_parameter", "fc"),
        ("register_parameter", "forward"),
        ("add_module", "weight"),
        ("add_module", "running"),
        ("add_module", "training"),
        ("add_module", "extra_repr"),
    ],
)
def test_a_name_taken_by_another_kind_or_the_class_is_refused(register, name):
    """PyTorch's rule: the module would use one tensor and state_dict() save another."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(jg.zeros(2))
            self.register_buffer("running", jg.zeros(2))
            self.fc = nn.Linear(1, 1)

    m = Net()
    value = {
        "register_buffer": jg.ones(2),
        "register_parameter": nn.Parameter(jg.ones(2)),
        "add_module": nn.ReLU(),
    }[register]
    before = m.state_dict()
    with pytest.raises(KeyError, match=f"attribute '{name}' already exists"):
        getattr(m, register)(name, value)
    assert m.state_dict().keys() == before.keys()
    assert (list(m._parameters), list(m._buffers), list(m._modules)) == (
        ["weight"],
        ["running"],
        ["fc"],
    )


def test_registering_again_in_the_same_registry_replaces():
    lin = nn.Linear(2, 2)
    lin.register_parameter("bias", nn.Parameter(jg.ones(2)))
    lin.register_buffer("stats", jg.zeros(1))
    lin.register_buffer("stats", jg.ones(1))
    lin.add_module("act", nn.ReLU())
    lin.add_module("act", nn.Tanh())
    assert lin.bias.tolist() == [1.0, 1.0] and lin.stats.tolist() == [1.0]
    assert type(lin.act).__name__ == "Tanh"


def test_assignment_follows_pytorch_across_kinds():
    torch = pytest.importorskip("torch")
    for lib, P, z in ((nn, nn.Parameter, jg.zeros), (torch.nn, torch.nn.Parameter, torch.zeros)):
        lin = lib.Linear(2, 2)
        with pytest.raises(KeyError, match="attribute 'forward' already exists"):
            lin.forward = P(z(1))  # a method would shadow the parameter
        assert "forward" not in lin._parameters
        with pytest.raises(TypeError, match="weight"):
            lin.weight = lib.ReLU()  # a parameter takes a Parameter or None
        assert "weight" in lin._parameters and "weight" not in lin._modules
        lin.register_buffer("b", z(1))
        lin.b = P(z(1))  # a buffer may become a parameter by assignment
        assert "b" in lin._parameters and "b" not in lin._buffers


def test_train_eval_propagate():
    m = MLP()
    assert all(x.training for x in m.modules())
    m.eval()
    assert not any(x.training for x in m.modules())
    m.train()
    assert m.norm.training


@pytest.mark.parametrize("mode", ["no", 1, None])
def test_train_mode_must_be_a_bool(mode):
    m = MLP().eval()
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(mode)
    assert not m.training and not m.fc1.training


def test_zero_grad():
    m = MLP()
    m(jg.ones((4, 4))).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_state_dict_shares_storage_and_is_detached():
    m = MLP()
    sd = m.state_dict()
    assert list(sd)[:2] == ["fc1.weight", "fc1.bias"]
    assert "norm.num_batches_tracked" in sd
    assert not sd["fc1.weight"].requires_grad
    assert sd["fc1.weight"].storage() is m.fc1.weight.storage()
    assert m.state_dict(keep_vars=True)["fc1.weight"] is m.fc1.weight


def test_state_dict_prefix_is_prepended_as_given_like_torch():
    torch = pytest.importorskip("torch")
    lin = nn.Linear(2, 2)
    net = nn.Sequential(lin, nn.ReLU(), lin, nn.BatchNorm1d(2))
    tlin = torch.nn.Linear(2, 2)
    tnet = torch.nn.Sequential(tlin, torch.nn.ReLU(), tlin, torch.nn.BatchNorm1d(2))
    for prefix in ("model.", "m", ""):
        assert list(net.state_dict(prefix=prefix)) == list(tnet.state_dict(prefix=prefix))
        assert list(lin.state_dict(prefix=prefix)) == list(tlin.state_dict(prefix=prefix))
    sd = net.state_dict(prefix="model.", keep_vars=True)
    assert sd["model.0.weight"] is lin.weight


def test_state_dict_round_trip_through_save_load(tmp_path):
    src, dst = MLP(), MLP()
    src(jg.ones((5, 4)))  # moves the running statistics
    path = tmp_path / "m.jg"
    jg.save(src.state_dict(), path)
    result = dst.load_state_dict(jg.load(path))
    assert result.missing_keys == [] and result.unexpected_keys == []
    for (k, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    assert dst.norm.num_batches_tracked.item() == 1
    x = jg.asarray(np.random.default_rng(0).standard_normal((3, 4)))
    src.eval(), dst.eval()
    np.testing.assert_array_equal(src(x).numpy(), dst(x).numpy())
    # copied, not adopted: the loaded parameters keep their own storage
    assert dst.fc1.weight.storage() is not src.fc1.weight.storage()


def test_load_state_dict_errors_name_keys():
    m = MLP()
    sd = dict(m.state_dict())
    before = m.fc1.weight.numpy().copy()
    del sd["fc2.bias"]
    sd["fc3.weight"] = jg.zeros((1,))
    sd["fc1.weight"] = jg.zeros((3, 3))
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    text = str(info.value)
    assert "Missing key(s) in state_dict: 'fc2.bias'" in text
    assert "Unexpected key(s) in state_dict: 'fc3.weight'" in text
    assert "size mismatch for 'fc1.weight'" in text and "(3, 3)" in text and "(8, 4)" in text
    np.testing.assert_array_equal(m.fc1.weight.numpy(), before)  # nothing was written


def test_load_state_dict_non_strict():
    m = MLP()
    sd = dict(m.state_dict())
    del sd["fc2.bias"]
    sd["other"] = jg.zeros(1)
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert missing == ["fc2.bias"] and unexpected == ["other"]
    sd["fc1.bias"] = jg.zeros(2)
    with pytest.raises(RuntimeError, match="size mismatch for 'fc1.bias'"):
        m.load_state_dict(sd, strict=False)
    with pytest.raises(RuntimeError, match="not a tensor"):
        m.load_state_dict({**m.state_dict(), "fc1.bias": [0.0] * 8})


def test_load_state_dict_casts_and_assign_adopts():
    m = nn.Linear(2, 2)  # float64 (the default dtype)
    src = nn.Linear(2, 2, dtype=jg.float32, generator=3)
    m.load_state_dict(src.state_dict())
    assert m.weight.dtype is jg.float64
    np.testing.assert_allclose(m.weight.numpy(), src.weight.numpy())
    m.load_state_dict(src.state_dict(), assign=True)
    assert m.weight.dtype is jg.float32 and m.weight.storage() is src.weight.storage()
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad


def test_load_state_dict_assign_checks_every_key_before_writing():
    m = MLP()
    before = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    sd = {k: jg.zeros_like(v) for k, v in m.state_dict().items()}
    sd["fc2.bias"] = jg.zeros(3, dtype=jg.int64)  # the last parameter: all others come first
    with pytest.raises(RuntimeError, match=r"int64 to parameter 'fc2.bias', which requires grad"):
        m.load_state_dict(sd, assign=True)
    for key, value in m.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key])
    assert m.fc1.weight.dtype is jg.float64
    m.fc2.bias.requires_grad_(False)  # as PyTorch: a frozen parameter may adopt any dtype
    m.load_state_dict(sd, assign=True)
    assert m.fc2.bias.dtype is jg.int64 and not m.fc1.weight.numpy().any()


@pytest.mark.parametrize("dtype", [jg.float32, jg.float64])
def test_to_dtype(dtype):
    m = MLP().to(dtype)
    assert all(p.dtype is dtype for p in m.parameters())
    assert m.norm.running_mean.dtype is dtype
    assert m.norm.num_batches_tracked.dtype is jg.int64  # integer buffers stay
    assert all(isinstance(p, nn.Parameter) for p in m.parameters())
    out = m(jg.ones((3, 4), dtype=dtype))
    assert out.dtype is dtype
    out.sum().backward()
    assert all(p.grad.dtype is dtype for p in m.parameters())
    with pytest.raises(TypeError, match="not floating"):
        m.to(jg.int32)


def test_to_dtype_keeps_tied_parameters_and_buffers_tied():
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)  # float64, so to(float32) really casts
    b.weight = a.weight
    a.register_buffer("shared", jg.zeros(3))
    b.register_buffer("shared", a.shared)
    m = nn.Sequential(a, b).to(jg.float32)
    assert a.weight is b.weight and a.weight.dtype is jg.float32
    assert a.shared is b.shared and a.shared.dtype is jg.float32
    assert len(list(m.parameters())) == 3 and len(list(m.buffers())) == 1


def test_to_dtype_casts_the_gradient_as_torch_does():
    torch = pytest.importorskip("torch")
    layer = nn.Linear(2, 2, dtype=jg.float64, generator=0)
    ref = torch.nn.Linear(2, 2, dtype=torch.float64)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(layer.weight.numpy()))
        ref.bias.copy_(torch.from_numpy(layer.bias.numpy()))
    x = np.array([[1.0, -2.0]])
    (layer(jg.tensor(x)) ** 2).sum().backward()
    (ref(torch.from_numpy(x)) ** 2).sum().backward()
    layer.to(jg.float32)
    ref.to(torch.float32)
    for p, q in [(layer.weight, ref.weight), (layer.bias, ref.bias)]:
        assert p.grad.dtype is jg.float32 and q.grad.dtype == torch.float32
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        assert p.grad.requires_grad is q.grad.requires_grad is False


def test_default_dtype_is_used(monkeypatch):
    jg.set_default_dtype("float32")
    try:
        assert nn.Linear(2, 2).weight.dtype is jg.float32
    finally:
        jg.set_default_dtype("float64")
    assert nn.Linear(2, 2).weight.dtype is jg.float64


def test_repr_reads_like_pytorch():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Dropout(0.1)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Dropout(p=0.1)\n"
        "  )\n"
        ")"
    )


def test_config_round_trip_of_every_layer():
    net = nn.Sequential(
        nn.Linear(4, 6, bias=False, dtype=jg.float32),
        nn.LeakyReLU(0.2),
        nn.GELU("tanh"),
        nn.SiLU(),
        nn.Tanh(),
        nn.Sigmoid(),
        nn.Softmax(dim=1),
        nn.LogSoftmax(dim=0),
        nn.Dropout(0.25),
        nn.LayerNorm(6, eps=1e-3),
        nn.BatchNorm1d(6, momentum=None),
        nn.Flatten(0, 1),
        nn.Identity(),
        nn.ModuleList([nn.ReLU()]),
        nn.Embedding(5, 2),
        nn.MSELoss(reduction="sum"),
        nn.CrossEntropyLoss(weight=[1.0, 2.0], label_smoothing=0.1),
        nn.BCEWithLogitsLoss(pos_weight=[3.0]),
    )
    cfg = net.config()
    import json

    rebuilt = nn.from_config(json.loads(json.dumps(cfg)))
    assert rebuilt.config() == cfg
    assert repr(rebuilt) == repr(net)
    assert rebuilt[0].weight.dtype is jg.float32
    assert rebuilt[16].weight.tolist() == [1.0, 2.0]
    assert list(rebuilt.state_dict()) == list(net.state_dict())


def test_config_of_named_sequential_and_custom_modules():
    seq = nn.Sequential({"encoder": nn.Linear(2, 2), "act": nn.ReLU()})
    assert list(seq.state_dict()) == ["encoder.weight", "encoder.bias"]
    assert list(nn.from_config(seq.config()).state_dict()) == ["encoder.weight", "encoder.bias"]
    assert nn.from_config(seq.config())[:1].config()["args"]["names"] == ["encoder"]
    with pytest.raises(NotImplementedError, match="get_config"):
        MLP().config()
    with pytest.raises(ValueError, match="unknown module type 'Conv9d'.*knows .*Linear"):
        nn.from_config({"type": "Conv9d", "args": {}})
    with pytest.raises(ValueError, match="import the module"):
        nn.from_config({"type": "nowhere.models:Net", "args": {}})
    with pytest.raises(ValueError, match="exactly the keys"):
        nn.from_config({"type": "ReLU"})
    with pytest.raises(ValueError, match="cannot build Linear"):
        nn.from_config({"type": "Linear", "args": {"in_features": 2}})


class Scaled(nn.Module):
    """A custom module that can be described: found by module path and name."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor

    def get_config(self):
        return {"factor": self.factor}


def test_custom_module_config():
    cfg = Scaled(3.0).config()
    assert cfg["type"].endswith(":Scaled")
    assert nn.from_config(cfg).factor == 3.0


def test_reassigning_a_parameter_keeps_its_place():
    layer = jg.nn.Linear(2, 3)
    layer.weight = jg.nn.Parameter(jg.ones((3, 2)))
    assert list(layer.state_dict()) == ["weight", "bias"]
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    norm = jg.nn.BatchNorm1d(2)
    norm.running_mean = jg.ones(2)
    assert list(norm.state_dict())[:3] == ["weight", "bias", "running_mean"]


def _hooked_run(lib, values):
    """A three-layer model run with a hook recording a shape, a pre-hook zeroing the last
    layer's input and a hook doubling the activation's output, then without them."""
    layers = lib.nn if lib is not jg else nn
    model = layers.Sequential(layers.Linear(3, 4), layers.ReLU(), layers.Linear(4, 2))
    seen = []
    handles = [
        model[0].register_forward_hook(lambda m, args, out: seen.append(tuple(out.shape))),
        model[2].register_forward_pre_hook(lambda m, args: (args[0] * 0,)),
        model[1].register_forward_hook(lambda m, args, out: out * 2),
    ]
    zeroed = model(lib.tensor(values)).detach().numpy()
    for handle in handles:
        handle.remove()
    model(lib.tensor(values))
    return seen, np.allclose(zeroed, model[2].bias.detach().numpy())


def test_forward_hooks_see_and_replace_arguments_and_outputs_as_pytorch():
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    assert _hooked_run(jg, values) == _hooked_run(torch, values) == ([(5, 4)], True)


def test_a_jitted_call_follows_hooks_added_and_removed():
    layer = nn.Linear(3, 2, generator=0)
    x = jg.ones((4, 3))
    step = jg.jit(lambda x: layer(x).detach())
    plain = step(x).numpy().copy()
    step(x)
    handle = layer.register_forward_hook(lambda m, args, out: out * 0)
    assert np.abs(step(x).numpy()).max() == 0
    handle.remove()
    np.testing.assert_array_equal(step(x).numpy(), plain)
    with pytest.raises(TypeError, match="callable"):
        layer.register_forward_hook(3)


def test_device_and_precision_shorthands_and_submodules():
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 2)))
    assert model.cpu() is model and model.get_submodule("1.1") is model[1][1]
    assert model.get_submodule("") is model
    with pytest.raises(AttributeError, match="no submodule '2'"):
        model.get_submodule("1.2")
    with pytest.raises(ValueError, match="CPU only"):
        model.cuda()
    assert model.half()[0].weight.dtype is jg.float16
