"""The Loader contract (on a fake and on ModelLoader), ResourceAllocation, and what
ModelLoader promises: estimate without loading, weights read into memory, a warm JIT, a
complete directory only."""

import json
import os

import numpy as np
import pytest
from conftest import FakeLoader, predict_in_process, save_version

import jitgrad as jg
import jitgrad.io.model_dir
import jitgrad.serving.loader
from jitgrad.io.model_dir import load_model
from jitgrad.serving.loader import (
    Metadata,
    ModelLoader,
    ResourceAllocation,
    ServableId,
    VersionLoadError,
    check_loader_contract,
)
from jitgrad.serving.predictor import Predictor
from jitgrad.serving.signature import Signature

# -- the contract, on fakes ------------------------------------------------------------------


def test_a_fake_loader_keeps_the_contract():
    loader = FakeLoader("v", ram=100, measured=40)
    check_loader_contract(loader, Metadata(ServableId("m", 1)))
    assert loader.calls == ["load", "unload"]


class GrowingEstimate(FakeLoader):
    def estimate_resources(self):
        ram = self.ram * (2 if self._servable is not None else 1)
        return ResourceAllocation(ram_bytes=ram)


class ServableAfterUnload(FakeLoader):
    def unload(self):
        self._done = True  # forgets to drop the servable


class Reloadable(FakeLoader):
    def unload(self):
        self._servable = None  # load() works again: not one-way


class EagerServable(FakeLoader):
    def __init__(self):
        super().__init__()
        self._servable = object()  # a servable before load


@pytest.mark.parametrize(
    "bad, broken",
    [
        (GrowingEstimate(), "the estimate grew during load"),
        (ServableAfterUnload(), "servable() must be None after unload"),
        (Reloadable(), "load after unload must raise RuntimeError"),
        (EagerServable(), "servable() must be None before load"),
    ],
)
def test_the_contract_check_names_each_broken_invariant(bad, broken):
    with pytest.raises(AssertionError, match=broken.replace("(", r"\(").replace(")", r"\)")):
        check_loader_contract(bad)


def test_resource_allocation_arithmetic_and_fit():
    a = ResourceAllocation(ram_bytes=100, gpu=1)
    b = ResourceAllocation({"ram_bytes": 20})
    assert (a + b).ram_bytes == 120 and (a + b)["gpu"] == 1 and a["disk"] == 0
    assert (a - b).ram_bytes == 80
    assert b <= a and not a <= b and not a <= ResourceAllocation(ram_bytes=1000)
    assert ResourceAllocation(ram_bytes=0) == ResourceAllocation()
    with pytest.raises(ValueError, match="cannot release more"):
        b - a
    with pytest.raises(ValueError, match="non-negative int"):
        ResourceAllocation(ram_bytes=-1)


# -- ModelLoader ----------------------------------------------------------------------------


def test_model_loader_keeps_the_contract(base):
    save_version(base, 1)
    check_loader_contract(ModelLoader(os.path.join(base, "1")), Metadata(ServableId("tiny", 1)))


def test_estimate_reads_no_weights_and_bounds_the_measured_figure(base, monkeypatch):
    save_version(base, 1)
    loader = ModelLoader(os.path.join(base, "1"))
    refuse = lambda *a, **k: pytest.fail("the estimate loaded the model")  # noqa: E731
    monkeypatch.setattr(jitgrad.io.model_dir, "load", refuse)
    monkeypatch.setattr(jitgrad.serving.loader, "load_model", refuse)
    estimate = loader.estimate_resources()
    directory = os.path.join(base, "1")
    files = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    assert estimate.ram_bytes > files  # files plus planned buffers
    monkeypatch.undo()
    loader.load()
    measured = loader.estimate_resources()
    assert files < measured.ram_bytes <= estimate.ram_bytes  # shrank to what the plans own
    assert measured.ram_bytes == files + loader.servable().plan_bytes()
    loader.unload()


def test_the_plans_bytes_leave_out_the_weights_wherever_they_live(base):
    save_version(base, 1)
    directory = os.path.join(base, "1")
    measured = []
    for mmap in (True, False):  # weights mapped from the file, or read into memory
        module, manifest = load_model(directory, mmap=mmap)
        predictor = Predictor(module, Signature.from_manifest(manifest["signature"]), [1, 4])
        predictor.warm_up()
        measured.append(predictor.plan_bytes())
    assert measured[0] == measured[1] > 0


def test_load_reads_the_weights_and_predicts_like_the_model(base):
    model = save_version(base, 1)
    save_version(base, 2, seed=1)  # other weights, the same architecture
    loader = ModelLoader(os.path.join(base, "1"))
    loader.load()
    predictor = loader.servable()
    assert predictor.module[0].weight.untyped_storage().filename is None  # in memory
    # An administrator copying another version's weights over the file in place (cp
    # truncates and rewrites it) reaches a mapped model, never a loaded one.
    with open(os.path.join(base, "1", "weights.jg"), "r+b") as f:
        f.write(open(os.path.join(base, "2", "weights.jg"), "rb").read())
    x = np.random.default_rng(0).random((4, 8), dtype=np.float32)
    for batch in (1, 4, 3):  # warmed plans (1, 4) and the eager path (3)
        out = predictor({"x": x[:batch]})
        np.testing.assert_allclose(out["output"], predict_in_process(model, x[:batch]), rtol=1e-6)
    loader.unload()


def test_load_warms_every_batch_size_so_requests_compile_and_trace_nothing(base):
    save_version(base, 1, warmup=(1, 4))
    loader = ModelLoader(os.path.join(base, "1"), replicas=2)
    loader.load()
    report = loader.warmup_report
    assert report["batch_sizes"] == [1, 4] and report["replicas"] == 2
    assert loader.load_seconds > 0 and loader.warmup_seconds > 0
    predictor = loader.servable()
    traces, before = predictor.traces, jg.jit.stats()
    x = np.ones((4, 8), np.float32)
    for batch in (1, 4, 1, 4):
        predictor({"x": x[:batch]})
    after = jg.jit.stats()
    assert predictor.traces == traces == 2 * 2  # replicas x batch sizes, all at load
    assert (after["generated"], after["compiled"], after["disk_hits"]) == (
        before["generated"],
        before["compiled"],
        before["disk_hits"],
    )
    loader.unload()


def test_a_second_load_of_the_same_model_compiles_nothing(base):
    save_version(base, 1)
    first = ModelLoader(os.path.join(base, "1"))
    first.load()
    second = ModelLoader(os.path.join(base, "1"))
    second.load()
    assert second.warmup_report["compiled"] == 0  # kernels cached by structure
    first.unload()
    second.unload()


def test_a_directory_without_manifest_is_not_loaded(base):
    save_version(base, 1)
    os.unlink(os.path.join(base, "1", "manifest.json"))
    loader = ModelLoader(os.path.join(base, "1"))
    with pytest.raises(VersionLoadError, match="version 1: has no manifest.json"):
        loader.estimate_resources()
    with pytest.raises(VersionLoadError, match="version 1: has no manifest.json"):
        loader.load()
    assert loader.servable() is None
    with pytest.raises(RuntimeError, match="load\\(\\) may be called once"):
        loader.load()  # a failed load finishes the loader too


@pytest.mark.parametrize(
    "outputs, message",
    [
        (
            {
                "output": {"dtype": "float32", "shape": [-1, 3]},
                "extra": {"dtype": "float32", "shape": [-1, 5]},
            },
            r"declares 2 outputs \['output', 'extra'\], but the model returns 1",
        ),
        (
            {"output": {"dtype": "float32", "shape": [-1, 5]}},
            r"output 'output': the model gives shape \(1, 3\) for a batch of 1, the signature "
            r"declares \(batch, 5\)",
        ),
    ],
)
def test_a_signature_the_model_does_not_produce_fails_the_load(base, outputs, message):
    save_version(base, 1)
    path = os.path.join(base, "1", "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    manifest["signature"]["outputs"] = outputs
    with open(path, "w") as f:
        json.dump(manifest, f)
    loader = ModelLoader(os.path.join(base, "1"))
    with pytest.raises(VersionLoadError, match=message):
        loader.load()  # refused at warm-up, not by every request
    assert loader.servable() is None


# -- loading safety ---------------------------------------------------------------------------


def _rewrite_listed(directory: str, name: str, data: bytes) -> None:
    """Replace file ``name`` and its manifest entry, as a consistent (if hostile) save would."""
    import hashlib

    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)
    path = os.path.join(directory, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    with open(path, "w") as f:
        json.dump(manifest, f)


def test_flipped_weight_bytes_are_refused_by_their_checksum(base):
    save_version(base, 1)
    directory = os.path.join(base, "1")
    weights = os.path.join(directory, "weights.jg")
    size = os.path.getsize(weights)
    with open(weights, "r+b") as f:  # one byte of the last weight's payload: still a valid file
        f.seek(size - 2)
        byte = f.read(1)
        f.seek(size - 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    loader = ModelLoader(directory)
    with pytest.raises(VersionLoadError, match="weights.jg does not match the sha256") as info:
        loader.load()
    assert info.value.error_code == "DATA_LOSS" and base not in str(info.value)
    assert loader.servable() is None
    unchecked = ModelLoader(directory, verify_checksums=False)
    unchecked.load()  # the same bytes load when not verified: the checksum refused them
    unchecked.unload()


def test_a_huge_declared_architecture_is_refused_before_anything_is_allocated(base):
    import tracemalloc

    save_version(base, 1)
    directory = os.path.join(base, "1")
    with open(os.path.join(directory, "architecture.json")) as f:
        architecture = json.load(f)
    first, _, second = architecture["module"]["args"]["layers"]
    first["args"]["out_features"] = second["args"]["in_features"] = 4_000_000
    _rewrite_listed(directory, "architecture.json", json.dumps(architecture).encode())
    loader = ModelLoader(directory)
    tracemalloc.start()
    try:
        with pytest.raises(VersionLoadError, match="declares 48000003 parameters") as info:
            loader.load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.error_code == "INVALID_ARGUMENT"
    assert peak < 4 << 20, peak  # built, the two layers would hold 192 MB of float32


def test_an_architecture_with_tied_weights_is_sized_right_and_loads(base):
    from jitgrad import nn
    from jitgrad.io import save_model

    embedding, head = nn.Embedding(10, 4, generator=0), nn.Linear(4, 10, generator=1)
    head.weight = embedding.weight  # one tensor, two state-dict keys
    save_model(
        nn.Sequential(embedding, head),
        os.path.join(base, "1"),
        input_shape=(3,),
        input_dtype="int64",
        warmup_batch_sizes=[1],
    )
    loader = ModelLoader(os.path.join(base, "1"))
    loader.load()
    assert loader.servable()({"x": [[1, 2, 3]]})["output"].shape == (1, 3, 10)
    loader.unload()


def test_the_estimate_counts_declared_parameters_against_the_budget(base):
    from jitgrad.serving.manager import Manager
    from jitgrad.serving.state import State

    save_version(base, 1)
    small = ModelLoader(os.path.join(base, "1")).estimate_resources().ram_bytes
    manager = Manager(resources=ResourceAllocation(ram_bytes=small - 1))
    manager.set_aspired_versions("tiny", {1: ModelLoader(os.path.join(base, "1"))})
    state = manager.wait_until_state("tiny", 1, {State.ERROR}, 30)
    assert state.error_code == "RESOURCE_EXHAUSTED" and f"needs ram_bytes={small}" in state.error
    manager.shutdown(30)


def test_client_visible_errors_hold_no_server_path(base):
    from jitgrad.serving.loader import public_message

    save_version(base, 1)
    os.truncate(os.path.join(base, "1", "weights.jg"), 10)
    loader = ModelLoader(os.path.join(base, "1"), verify_checksums=False)
    with pytest.raises(VersionLoadError) as info:
        loader.load()
    message = str(info.value)
    assert message.startswith("version 1: ") and "/" not in message, message
    error = ValueError(f"'{base}/1/x.json': bad bytes b'\\x00secret' near /etc/passwd")
    assert public_message(error) == "<path>: bad bytes <bytes> near <path>"
