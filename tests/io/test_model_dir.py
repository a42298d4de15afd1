"""Model directories: save_model / load_model round trips, the manifest, and refusals."""

import json
import os

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.io import ModelDirectoryError, load_model, read_manifest, save_model


def mlp():
    rng = jg.random.default_rng(0)
    return nn.Sequential(
        nn.Linear(64, 16, dtype=jg.float32, generator=rng),
        nn.ReLU(),
        nn.BatchNorm1d(16, dtype=jg.float32),
        nn.Dropout(0.1),
        nn.Linear(16, 10, dtype=jg.float32, generator=rng),
    )


@pytest.fixture
def saved(tmp_path):
    model = mlp()
    model(jg.asarray(np.random.default_rng(0).random((8, 64), dtype=np.float32)))  # stats
    directory = tmp_path / "digits" / "1"
    manifest = save_model(model, directory, extra={"note": "test"})
    return model, directory, manifest


def test_round_trip_gives_the_same_model(saved):
    model, directory, _ = saved
    loaded, manifest = load_model(directory)
    assert repr(loaded) == repr(model)
    assert not loaded.training  # ready to serve
    for (k, a), b in zip(model.state_dict().items(), loaded.state_dict().values(), strict=True):
        assert a.dtype is b.dtype, k
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    x = jg.asarray(np.random.default_rng(1).random((5, 64), dtype=np.float32))
    model.eval()
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    assert manifest["extra"] == {"note": "test"}


def test_files_and_manifest_contents(saved):
    _, directory, manifest = saved
    assert sorted(os.listdir(directory)) == ["architecture.json", "manifest.json", "weights.jg"]
    on_disk = json.loads((directory / "manifest.json").read_text())
    assert on_disk == manifest
    assert manifest["format"] == "jitgrad-model" and manifest["format_version"] == 1
    for name in ("weights.jg", "architecture.json"):
        assert manifest["files"][name]["bytes"] == os.path.getsize(directory / name)
        assert len(manifest["files"][name]["sha256"]) == 64
    assert manifest["signature"] == {
        "inputs": {"x": {"dtype": "float32", "shape": [-1, 64]}},
        "outputs": {"output": {"dtype": "float32", "shape": [-1, 10]}},
    }
    assert manifest["warmup_batch_sizes"] == [1, 64]
    arch = json.loads((directory / "architecture.json").read_text())
    assert arch["module"]["type"] == "Sequential"
    assert jg.load(directory / "weights.jg").keys() == mlp().state_dict().keys()


def test_mmap_loads_weights_without_copying(saved):
    _, directory, _ = saved
    mapped, _ = load_model(directory, mmap=True)
    assert mapped[0].weight.untyped_storage().filename.endswith("weights.jg")  # adopted, mapped
    with jg.no_grad():
        mapped[0].weight.fill_(0.0)  # writable, and never reaches the file
    again, _ = load_model(directory, mmap=False)
    assert again[0].weight.numpy().any()


def test_missing_manifest_is_refused_by_name(saved, tmp_path):
    _, directory, _ = saved
    os.unlink(directory / "manifest.json")
    with pytest.raises(FileNotFoundError, match="has no manifest.json") as info:
        load_model(directory)
    assert str(directory) in str(info.value)
    with pytest.raises(FileNotFoundError, match="no such model directory"):
        load_model(tmp_path / "absent")


def test_size_mismatch_is_refused(saved):
    _, directory, _ = saved
    with open(directory / "weights.jg", "ab") as f:
        f.write(b"\0" * 8)
    with pytest.raises(ModelDirectoryError, match=r"weights.jg has \d+ bytes but the manifest"):
        load_model(directory)


def test_missing_file_and_checksums(saved):
    _, directory, _ = saved
    path = directory / "architecture.json"
    text = path.read_text()
    path.write_text(text.replace('"Sequential"', '"Sequentia1"'))  # same size, other bytes
    with pytest.raises(ModelDirectoryError, match="sha256"):
        load_model(directory, verify_checksums=True)
    with pytest.raises(ModelDirectoryError, match="unknown module type 'Sequentia1'"):
        load_model(directory)
    os.unlink(path)
    with pytest.raises(ModelDirectoryError, match="architecture.json is listed .* but missing"):
        read_manifest(directory)


def test_bad_manifests(saved):
    _, directory, manifest = saved
    path = directory / "manifest.json"
    path.write_text("{not json")
    with pytest.raises(ModelDirectoryError, match="not valid JSON"):
        load_model(directory)
    path.write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(ModelDirectoryError, match="version 99 is not supported"):
        load_model(directory)
    files = {**manifest["files"], "../escape": {"bytes": 1}}
    path.write_text(json.dumps({**manifest, "files": files}))
    with pytest.raises(ModelDirectoryError, match="not a plain file name"):
        load_model(directory)


def _without_signature(m):
    del m["signature"]


def _set(field, value):
    def mutate(m):
        *keys, last = field.split(".")
        target = m
        for k in keys:
            target = target[k]
        target[last] = value

    return mutate


@pytest.mark.parametrize(
    "mutate, message",
    [
        (_without_signature, "no 'signature' object"),
        (_set("signature", [1]), "no 'signature' object"),
        (_set("signature.inputs", {}), "'signature.inputs' must map at least one tensor"),
        (_set("signature.outputs", None), "'signature.outputs' must map at least one tensor"),
        (_set("signature.inputs.x.dtype", "foo"), "'signature.inputs.x' has dtype 'foo'"),
        (_set("signature.inputs.x.dtype", None), "'signature.inputs.x' has dtype None"),
        (_set("signature.outputs.output.dtype", "object"), "'signature.outputs.output' has dtype"),
        (_set("signature.inputs.x.shape", "ab"), "'signature.inputs.x' has shape 'ab'"),
        (_set("signature.inputs.x.shape", [64]), r"has shape \[64\]: expected .* -1 \(the batch\)"),
        (_set("signature.inputs.x.shape", [-1, 6.4]), "has shape"),
        (_set("warmup_batch_sizes", None), "'warmup_batch_sizes' must be a list .* got None"),
        (
            _set("warmup_batch_sizes", [10**12]),
            "'warmup_batch_sizes' must be a list of batch sizes "
            "from 1 to 65536, got \\[1000000000000\\]",
        ),
        (_set("warmup_batch_sizes", [0]), "'warmup_batch_sizes'"),
        (_set("warmup_batch_sizes", [True]), "'warmup_batch_sizes'"),
    ],
)
def test_a_malformed_signature_or_warm_up_is_refused_naming_the_field(saved, mutate, message):
    _, directory, manifest = saved
    mutate(manifest)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelDirectoryError, match=message):
        read_manifest(directory)


def test_warm_up_batch_sizes_past_the_limit_are_not_saved(tmp_path):
    with pytest.raises(ValueError, match="from 1 to 65536"):
        save_model(mlp(), tmp_path / "m" / "1", warmup_batch_sizes=[1, 1 << 17])
    assert not (tmp_path / "m" / "1" / "manifest.json").exists()


def test_existing_directory_needs_overwrite(saved):
    model, directory, first = saved
    with pytest.raises(FileExistsError, match="already holds a saved model"):
        save_model(model, directory)
    with jg.no_grad():
        model[0].bias.fill_(1.0)
    save_model(model, directory, overwrite=True, warmup_batch_sizes=(1, 8, 32))
    loaded, manifest = load_model(directory)
    assert loaded[0].bias.tolist() == [1.0] * 16 and manifest["warmup_batch_sizes"] == [1, 8, 32]


def test_save_failures_leave_no_manifest(tmp_path):
    class Opaque(nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="get_config"):
        save_model(Opaque(), tmp_path / "m")
    assert not (tmp_path / "m").exists()  # refused before anything was written
    with pytest.raises(TypeError):
        save_model(mlp(), tmp_path / "m2", extra={"bad": object()})
    assert not (tmp_path / "m2").exists()


def test_training_mode_is_restored_after_measuring_outputs(tmp_path):
    model = mlp()
    save_model(model, tmp_path / "m")
    assert model.training
    assert model[2].num_batches_tracked.item() == 0  # the probe ran in eval mode


@pytest.mark.parametrize("top", [True, False])
def test_saving_keeps_each_module_s_own_mode_and_loading_gives_eval(tmp_path, top):
    model = mlp().train(top)
    model[2].train(not top)  # a frozen BatchNorm in a model that trains, or the reverse
    modes = [m.training for m in model.modules()]
    save_model(model, tmp_path / "m")
    assert [m.training for m in model.modules()] == modes
    assert model[2].num_batches_tracked.item() == 0  # the probe ran in eval mode
    loaded, _ = load_model(tmp_path / "m")  # modes are not saved: served in eval mode
    assert not any(m.training for m in loaded.modules())


class TiedLM(nn.Module):
    """An embedding and an output layer that share one weight, tied by the constructor."""

    def __init__(self, vocab=10, dim=4):
        super().__init__()
        self.vocab, self.dim = vocab, dim
        self.emb = nn.Embedding(vocab, dim, generator=0)
        self.out = nn.Linear(dim, vocab, bias=False, generator=1)
        self.out.weight = self.emb.weight

    def forward(self, indices):
        return self.out(self.emb(indices))

    def get_config(self):
        return {"vocab": self.vocab, "dim": self.dim}


def tied_model(tied_by):
    if tied_by == "constructor":
        return TiedLM()
    # tied after construction: the architecture alone does not say so
    model = nn.Sequential(nn.Embedding(10, 4, generator=0), nn.Linear(4, 10, generator=1))
    model[1].weight = model[0].weight
    return model


def train(model, steps=3):
    """A few SGD steps with momentum; the losses."""
    rng = np.random.default_rng(0)
    opt = jg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    losses = []
    for _ in range(steps):
        indices, targets = (jg.tensor(rng.integers(0, 10, 6)) for _ in range(2))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(indices), targets)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("tied_by", ["constructor", "assignment"])
def test_tied_weights_load_as_one_parameter_and_train_as_one(tmp_path, tied_by, mmap):
    model = tied_model(tied_by)
    save_model(model, tmp_path / "m", input_shape=(), input_dtype="int64")
    loaded, _ = load_model(tmp_path / "m", mmap=mmap)
    first, second = (loaded.emb, loaded.out) if tied_by == "constructor" else loaded
    assert first.weight is second.weight
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]
    # One gradient from both uses, one optimizer entry: trained as the original trains.
    assert train(loaded) == pytest.approx(train(model), rel=1e-12)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(loaded.state_dict()[key].numpy(), value.numpy(), rtol=1e-12)
    assert first.weight is second.weight


def test_a_malformed_tie_is_refused_naming_it(tmp_path):
    save_model(tied_model("assignment"), tmp_path / "m", input_shape=(), input_dtype="int64")
    path = tmp_path / "m" / "architecture.json"
    arch = json.loads(path.read_text())
    assert arch["tied"] == [["0.weight", "1.weight"]]
    for tied, message in (
        (["0.weight"], "must be a list of groups"),
        ([["0.weight", "2.weight"]], "tied key '2.weight' names no"),
    ):
        path.write_text(json.dumps({**arch, "tied": tied}))
        manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
        manifest["files"]["architecture.json"]["bytes"] = path.stat().st_size
        (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
        with pytest.raises(ModelDirectoryError, match=message):
            load_model(tmp_path / "m")


@pytest.mark.parametrize("kind", [3, ["Linear"], None])
def test_an_architecture_naming_no_type_is_refused_naming_it(saved, kind):
    _, directory, _ = saved
    path = directory / "architecture.json"
    arch = json.loads(path.read_text())
    arch["module"]["args"]["layers"][1]["type"] = kind
    path.write_text(json.dumps(arch))
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["files"]["architecture.json"]["bytes"] = path.stat().st_size
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelDirectoryError, match=r"architecture.json.*'type' is a class name"):
        load_model(directory)


@pytest.mark.parametrize("name", ["manifest.json", "architecture.json", "module"])
def test_json_nested_too_deeply_is_refused_not_a_recursion_error(saved, name):
    _, directory, _ = saved
    if name == "module":  # valid JSON, but more Sequentials in each other than Python can build
        n, inner = 300, json.dumps({"type": "ReLU", "args": {}})
        nested = '{"type": "Sequential", "args": {"layers": [' * n + inner + "]}}" * n
        text, name, message = f'{{"module": {nested}}}', "architecture.json", "nested too deeply"
    else:
        text, message = "[" * 100_000 + "]" * 100_000, "not valid JSON"
    (directory / name).write_text(text)
    if name != "manifest.json":
        manifest = json.loads((directory / "manifest.json").read_text())
        manifest["files"][name]["bytes"] = len(text)
        (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelDirectoryError, match=f"{name}.*{message}"):
        load_model(directory)
