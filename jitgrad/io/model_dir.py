"""A model directory: what training writes and the serving layer loads.

One directory holds one version of a model::

    <base>/<name>/<version>/
        weights.jg          the state dict, written by ``jg.save`` (mmap-able, no pickle)
        architecture.json   {"format_version": 1, "module": module.config(), "tied": [...]}
        manifest.json       written LAST, atomically: its presence means "complete"

``"tied"`` lists the groups of state-dict keys that name one parameter or buffer (a
weight shared by an embedding and an output layer: ``[["0.weight", "2.weight"]]``), since
``config()`` describes layers, not which tensors they share: ``load_model`` ties them again.
Directories written before it existed have none, and load the ties their architecture makes.

``manifest.json``::

    {
      "format": "jitgrad-model",
      "format_version": 1,
      "jitgrad_version": "0.1.0",
      "created": "2024-01-01T00:00:00+00:00",
      "files": {"weights.jg": {"bytes": 37160, "sha256": "..."},
                "architecture.json": {"bytes": 412, "sha256": "..."}},
      "signature": {
        "inputs":  {"x": {"dtype": "float32", "shape": [-1, 64]}},
        "outputs": {"output": {"dtype": "float32", "shape": [-1, 10]}}
      },
      "warmup_batch_sizes": [1, 64],
      "extra": {...}            # whatever the caller passed (JSON-able), or {}
    }

``-1`` in a shape is the batch dimension. The output signature is measured, not declared:
``save_model`` runs the module once on a zero batch in eval mode. Warm-up batch sizes are
1 to ``MAX_WARMUP_BATCH``: a server allocates buffers for each when it loads the model.

Every file is written under a temporary name, fsynced and renamed into place, and the
manifest only after the others are durable, so a reader that finds a manifest finds the
files it lists, at the sizes it lists. ``load_model`` refuses a directory without a
manifest and checks every listed size before reading anything (checksums on request).
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import os

from ..autograd.grad_mode import no_grad
from ..creation import zeros
from ..dtypes import as_dtype
from ..nn import Parameter, from_config
from ..tensor import TensorBase
from .format import write_atomically
from .serialize import load, save

MODEL_FORMAT = "jitgrad-model"
MODEL_FORMAT_VERSION = 1
MANIFEST, WEIGHTS, ARCHITECTURE = "manifest.json", "weights.jg", "architecture.json"
MAX_WARMUP_BATCH = 1 << 16


class ModelDirectoryError(ValueError):
    """A model directory whose files disagree with its manifest, or a malformed one; the
    message names the directory (or file) and the problem."""


def save_model(
    module,
    directory,
    *,
    input_name: str = "x",
    input_shape=(64,),
    input_dtype="float32",
    warmup_batch_sizes=(1, 64),
    extra=None,
    output_name: str = "output",
    overwrite: bool = False,
) -> dict:
    """Write ``module`` to ``directory`` (created if needed) as weights, architecture and,
    last, the manifest; returns the manifest.

    ``input_shape`` is one sample's shape (the batch dimension is added as -1).
    An existing model directory is refused unless ``overwrite``; overwriting removes its
    manifest first, so no reader ever sees a manifest over half-written files.
    Every module keeps its train/eval mode (the outputs are measured in eval mode, and
    each module's own mode is put back), but modes are not saved: see ``load_model``.

    >>> import os, tempfile, jitgrad as jg
    >>> from jitgrad import nn
    >>> net = nn.Sequential(nn.Linear(4, 3, generator=0), nn.ReLU())
    >>> path = os.path.join(tempfile.mkdtemp(), "net", "1")
    >>> manifest = jg.io.save_model(net, path, input_shape=(4,), input_dtype="float64")
    >>> manifest["signature"]["outputs"]
    {'output': {'dtype': 'float64', 'shape': [-1, 3]}}
    >>> model, _ = jg.io.load_model(path)
    >>> bool((model(jg.ones((2, 4))) == net(jg.ones((2, 4)))).all())
    True
    """
    directory = os.fspath(directory)
    architecture = {
        "format_version": MODEL_FORMAT_VERSION,
        "module": module.config(),
        "tied": _tied_keys(module),
    }
    arch_bytes = (json.dumps(architecture, indent=1, allow_nan=False) + "\n").encode()
    input_shape = tuple(int(n) for n in input_shape)
    dtype = as_dtype(input_dtype)
    signature = {
        "inputs": {input_name: {"dtype": dtype.name, "shape": [-1, *input_shape]}},
        "outputs": _output_signature(module, input_shape, dtype, output_name),
    }
    warmup = [int(n) for n in warmup_batch_sizes]
    if any(not 1 <= n <= MAX_WARMUP_BATCH for n in warmup):
        raise ValueError(f"warm-up batch sizes must be from 1 to {MAX_WARMUP_BATCH}, got {warmup}")
    extra = {} if extra is None else extra
    json.dumps(extra, allow_nan=False)  # fail before writing anything

    os.makedirs(directory, exist_ok=True)
    manifest_path = os.path.join(directory, MANIFEST)
    if os.path.exists(manifest_path):
        if not overwrite:
            raise FileExistsError(
                errno.EEXIST,
                "already holds a saved model (a manifest.json); save a new version to a new "
                "directory, or pass overwrite=True",
                directory,
            )
        os.unlink(manifest_path)  # the directory reads "incomplete" while it is rewritten
    save(module.state_dict(), os.path.join(directory, WEIGHTS))
    write_atomically(os.path.join(directory, ARCHITECTURE), arch_bytes, [], [])
    manifest = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "jitgrad_version": _version(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "files": {
            name: _describe(os.path.join(directory, name)) for name in (WEIGHTS, ARCHITECTURE)
        },
        "signature": signature,
        "warmup_batch_sizes": warmup,
        "extra": extra,
    }
    text = json.dumps(manifest, indent=1, allow_nan=False) + "\n"
    write_atomically(manifest_path, text.encode(), [], [])
    return manifest


def _tied_keys(module) -> list[list[str]]:
    """The groups of state-dict keys that name one tensor object, in state-dict order."""
    keys: dict[int, list[str]] = {}
    for key, t in module.state_dict(keep_vars=True).items():
        keys.setdefault(id(t), []).append(key)
    return [group for group in keys.values() if len(group) > 1]


def _tie(module, tied, arch_path: str) -> None:
    """Make each group of keys in ``tied`` name one tensor of ``module`` again: the first
    key's parameter (or buffer) takes the place of the others'."""
    if not isinstance(tied, list) or any(
        not isinstance(group, list)
        or len(group) < 2
        or any(not isinstance(key, str) for key in group)
        for group in tied
    ):
        raise ModelDirectoryError(
            f"{arch_path!r}: 'tied' must be a list of groups of two or "
            f"more state-dict keys, got {tied!r}"
        )
    modules = dict(module.named_modules(remove_duplicate=False))
    tensors = module.state_dict(keep_vars=True)
    for group in tied:
        for key in group:
            if key not in tensors:
                raise ModelDirectoryError(
                    f"{arch_path!r}: tied key {key!r} names no parameter or buffer of the module"
                )
        if len({isinstance(tensors[key], Parameter) for key in group}) > 1:
            raise ModelDirectoryError(
                f"{arch_path!r}: tied keys {group} name parameters and buffers together"
            )
        shared = tensors[group[0]]
        for key in group[1:]:
            path, _, name = key.rpartition(".")
            setattr(modules[path], name, shared)


def _output_signature(module, input_shape, dtype, output_name: str) -> dict:
    # Measured in eval mode (BatchNorm must not fold a zero batch into its statistics);
    # then each module gets its own mode back: module.train(mode) would give every
    # submodule the top one's, undoing a submodule kept in eval mode (a frozen BatchNorm).
    modes = [(m, m.training) for m in module.modules()]
    module.eval()
    try:
        with no_grad():
            out = module(zeros((1, *input_shape), dtype))
    finally:
        for m, mode in modes:
            m.training = mode
    if isinstance(out, dict):
        items = list(out.items())
    elif isinstance(out, (tuple, list)):
        items = [(f"{output_name}_{k}", o) for k, o in enumerate(out)]
    else:
        items = [(output_name, out)]
    signature = {}
    for name, t in items:
        if not isinstance(t, TensorBase) or t.ndim == 0:
            raise TypeError(
                f"the module's output {name!r} must be a batched tensor, got "
                f"{type(t).__name__} of shape {getattr(t, 'shape', None)}"
            )
        signature[str(name)] = {"dtype": t.dtype.name, "shape": [-1, *t.shape[1:]]}
    return signature


def _describe(path: str) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {"bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def _version() -> str:
    from .. import __version__

    return __version__


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:  # (nested too deeply)
        raise ModelDirectoryError(f"{path!r}: not valid JSON ({e})") from None


def read_manifest(directory) -> dict:
    """The checked manifest of a model directory: the format is known and every listed
    file exists with the listed size. Raises FileNotFoundError for a directory without a
    manifest, ModelDirectoryError for anything else wrong."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, "no such model directory", directory)
    path = os.path.join(directory, MANIFEST)
    if not os.path.exists(path):
        raise FileNotFoundError(
            errno.ENOENT,
            "has no manifest.json, so it is not a complete jitgrad model directory "
            "(save_model writes the manifest last: the save is in progress or was "
            "interrupted)",
            directory,
        )
    manifest = _read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != MODEL_FORMAT:
        raise ModelDirectoryError(
            f"{path!r}: not a jitgrad model manifest (no 'format': {MODEL_FORMAT!r})"
        )
    version = manifest.get("format_version")
    if version != MODEL_FORMAT_VERSION:
        raise ModelDirectoryError(
            f"{path!r}: model format version {version!r} is not supported (this jitgrad "
            f"reads {MODEL_FORMAT_VERSION})"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or WEIGHTS not in files or ARCHITECTURE not in files:
        raise ModelDirectoryError(
            f"{path!r}: the manifest must list {WEIGHTS} and {ARCHITECTURE} under 'files'"
        )
    for name, entry in files.items():
        if not isinstance(name, str) or os.path.basename(name) != name or name in ("", ".", ".."):
            raise ModelDirectoryError(f"{path!r}: file name {name!r} is not a plain file name")
        expected = entry.get("bytes") if isinstance(entry, dict) else None
        if type(expected) is not int:
            raise ModelDirectoryError(f"{path!r}: file {name!r} has no integer 'bytes'")
        file_path = os.path.join(directory, name)
        if not os.path.isfile(file_path):
            raise ModelDirectoryError(
                f"{directory!r}: {name} is listed in the manifest but missing"
            )
        actual = os.path.getsize(file_path)
        if actual != expected:
            raise ModelDirectoryError(
                f"{directory!r}: {name} has {actual} bytes but the manifest says {expected}: "
                "the file was modified or replaced after the model was saved"
            )
    _check_signature(path, manifest.get("signature"))
    warmup = manifest.get("warmup_batch_sizes", [1])
    if not isinstance(warmup, list) or any(
        type(n) is not int or not 1 <= n <= MAX_WARMUP_BATCH for n in warmup
    ):
        raise ModelDirectoryError(
            f"{path!r}: 'warmup_batch_sizes' must be a list of batch "
            f"sizes from 1 to {MAX_WARMUP_BATCH}, got "
            f"{warmup!r}"
        )
    return manifest


def _check_signature(path: str, signature) -> None:
    if not isinstance(signature, dict):
        raise ModelDirectoryError(
            f"{path!r}: the manifest has no 'signature' object (its inputs and outputs)"
        )
    for part in ("inputs", "outputs"):
        entries = signature.get(part)
        if not isinstance(entries, dict) or not entries:
            raise ModelDirectoryError(
                f"{path!r}: 'signature.{part}' must map at least one "
                "tensor name to its dtype and shape, got "
                f"{entries!r}"
            )
        for name, spec in entries.items():
            field = f"'signature.{part}.{name}'"
            dtype = spec.get("dtype") if isinstance(spec, dict) else None
            try:
                if not isinstance(dtype, str):
                    raise TypeError("not a dtype name")
                as_dtype(dtype)
            except TypeError as e:
                raise ModelDirectoryError(f"{path!r}: {field} has dtype {dtype!r}: {e}") from None
            shape = spec.get("shape")
            if (
                not isinstance(shape, list)
                or not shape
                or shape[0] != -1
                or any(type(n) is not int or n < 0 for n in shape[1:])
            ):
                raise ModelDirectoryError(
                    f"{path!r}: {field} has shape {shape!r}: expected a "
                    "list of integers, -1 (the batch) first, then "
                    "non-negative sizes"
                )


def load_model(directory, mmap: bool = False, *, verify_checksums: bool = False):
    """Load a model directory written by ``save_model``: ``(module, manifest)``.

    The module is rebuilt from ``architecture.json`` (its layer types must be known to
    jitgrad, or imported by the caller), with the tensors that were one parameter (or
    buffer) of the saved module one again (``"tied"``), takes the weights (read into
    memory, or with ``mmap=True`` mapped copy-on-write, with ``jg.load``'s caveat) and is
    put in eval mode, every module of it, ready to serve. Train/eval modes are not saved
    (nor are they in a PyTorch state dict, and ``config()`` describes layers, not how they
    were last used), so a model saved with some modules in eval mode and others training
    loads with all of them in eval mode: to train it further, call ``train()`` and then
    ``eval()`` on the modules to keep frozen, as when it was first trained.
    ``verify_checksums`` also hashes every file against the manifest.
    """
    directory = os.fspath(directory)
    manifest = read_manifest(directory)
    if verify_checksums:
        for name, entry in manifest["files"].items():
            actual = _describe(os.path.join(directory, name))["sha256"]
            if actual != entry.get("sha256"):
                raise ModelDirectoryError(
                    f"{directory!r}: {name} does not match the manifest's sha256 checksum"
                )
    arch_path = os.path.join(directory, ARCHITECTURE)
    architecture = _read_json(arch_path)
    if not isinstance(architecture, dict) or "module" not in architecture:
        raise ModelDirectoryError(f"{arch_path!r}: no 'module' description")
    try:
        module = from_config(architecture["module"])
    except ValueError as e:
        raise ModelDirectoryError(f"{arch_path!r}: {e}") from e
    except RecursionError:
        raise ModelDirectoryError(f"{arch_path!r}: the module is nested too deeply") from None
    _tie(module, architecture.get("tied", []), arch_path)
    state = load(os.path.join(directory, WEIGHTS), mmap=mmap)
    if not isinstance(state, dict):
        raise ModelDirectoryError(f"{directory!r}: {WEIGHTS} does not hold a state dict")
    try:  # (assigned, a tied tensor stays one: one gradient from every use)
        module.load_state_dict(state, strict=True, assign=True)
    except RuntimeError as e:
        raise ModelDirectoryError(
            f"{directory!r}: the weights do not fit the architecture: {e}"
        ) from e
    module.eval()
    return module, manifest


__all__ = [
    "save_model",
    "load_model",
    "read_manifest",
    "ModelDirectoryError",
    "MODEL_FORMAT_VERSION",
    "MAX_WARMUP_BATCH",
]
