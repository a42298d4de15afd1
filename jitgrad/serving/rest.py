"""TensorFlow Serving's REST API as plain functions: a request in, an answer out.

No web framework here: ``parse(method, path)`` names the endpoint a request is for and
``answer(manager, endpoint, body)`` gives its status and JSON body, so the API's
semantics are tested without a server. ``asgi.py`` puts them behind HTTP.

======  =============================================================  ========================
GET     ``/v1/models/{name}[/versions/{v} | /labels/{l}]``              version status
GET     ``/v1/models/{name}[/versions/{v} | /labels/{l}]/metadata``     signature_def
POST    ``/v1/models/{name}[/versions/{v} | /labels/{l}]:predict``      ``instances``/``inputs``
POST    ``/v1/models/{name}[/versions/{v} | /labels/{l}]:classify``     ``examples``
POST    ``/v1/models/{name}[/versions/{v} | /labels/{l}]:regress``      ``examples``
======  =============================================================  ========================

``:predict`` takes ``instances`` (row format: one entry per example; for a single-input
model an entry is the value or ``{name: value}``) or ``inputs`` (columnar: the batched
value or ``{name: batched value}``), never both, and answers ``{"predictions": [...]}``
or ``{"outputs": ...}`` to match. ``:classify`` and ``:regress`` take ``examples`` (a list
of ``{input name: value}``, with ``context`` holding features common to all) for models
whose signature supports them (``Signature.method_names``): ``{"results": [[[class,
score], ...], ...]}`` and ``{"results": [value, ...]}``. Without a version or label the
newest available version answers.

Errors are ``{"error": "..."}``: 400 for malformed JSON, an unknown signature name, and
names, shapes or dtypes that do not fit the signature (an index out of a model's range
too), 404 for an unknown model, version, label or path, 405 for a wrong method, 503 while
the model or version is known but not available, 500 if the model itself fails.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from urllib.parse import unquote

import orjson

from .loader import public_message
from .manager import Manager, ServableNotFound, ServableUnavailable
from .signature import CLASSIFY, PREDICT, REGRESS, TF_DTYPES, SignatureError
from .state import ServableState, State

log = logging.getLogger("jitgrad.serving")

SIGNATURE_NAME = "serving_default"
INFERENCE = ("predict", "classify", "regress")
# The signature names each inference API answers to (TF Serving's defaults).
SIGNATURE_NAMES = {
    "predict": ("", SIGNATURE_NAME),
    "classify": ("", SIGNATURE_NAME, "classification"),
    "regress": ("", SIGNATURE_NAME, "regression"),
}
METHOD_NAMES = {"predict": PREDICT, "classify": CLASSIFY, "regress": REGRESS}
_MODEL_PATH = re.compile(
    r"^/v1/models/(?P<name>[^/:]+)"
    r"(?:/versions/(?P<version>[^/:]+)|/labels/(?P<label>[^/:]+))?"
    r"(?P<tail>/metadata|:predict|:classify|:regress)?$"
)
_TAILS = {
    None: "status",
    "/metadata": "metadata",
    ":predict": "predict",
    ":classify": "classify",
    ":regress": "regress",
}
_PLAIN = {"/healthz": "healthz", "/readyz": "readyz", "/metrics": "metrics"}
_PLAIN["/monitoring/prometheus/metrics"] = "metrics"


class HTTPError(Exception):
    """An answer other than 200: status code and message (sent as ``{"error": message}``)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    """What a request asks for: ``api`` is ``healthz``, ``readyz``, ``metrics``,
    ``status``, ``metadata``, ``predict``, ``classify`` or ``regress``."""

    api: str
    name: str = ""
    version: int | None = None
    label: str | None = None

    @property
    def inference(self) -> bool:
        return self.api in INFERENCE


@dataclass
class Answer:
    """A status code, a JSON-able body, and the metric labels the request resolved to
    (a model the manager knows, a version it holds or held)."""

    status: int
    body: object
    model: str = ""
    version: str = ""


def parse(method: str, path: str) -> Endpoint:
    """The endpoint of ``method path``; HTTPError 404 (no such path), 405 (wrong
    method) or 400 (a version that is not a number)."""
    if path in _PLAIN:
        _require(method, "GET")
        return Endpoint(_PLAIN[path])
    match = _MODEL_PATH.match(path)
    if match is None:
        raise HTTPError(
            404,
            f"no such endpoint: {path[:200]} (see TensorFlow Serving's REST API: "
            "/v1/models/{name}[/versions/{v}|/labels/{l}][:predict|:classify|:regress"
            "|/metadata])",
        )
    api = _TAILS[match["tail"]]
    _require(method, "POST" if api in INFERENCE else "GET")
    label = None if match["label"] is None else unquote(match["label"])
    return Endpoint(api, unquote(match["name"]), _version(match["version"]), label)


def _require(method: str, allowed: str) -> None:
    if method != allowed:
        raise HTTPError(405, f"{method} is not allowed here; use {allowed}")


def _version(text: str | None) -> int | None:
    if text is None:
        return None
    if not re.fullmatch(r"[0-9]+", text):
        raise HTTPError(400, f"version must be a non-negative integer, got {unquote(text)[:50]!r}")
    # Versions are int64 (the source serves no other), so a longer number names none; its
    # digits are counted, not converted: int() refuses a string of over 4300 digits.
    digits = text.lstrip("0") or "0"
    if len(digits) > 19:
        raise HTTPError(
            404, f"Could not find version {digits[:20]}...: versions are 64-bit integers"
        )
    return int(digits)


def ready(manager: Manager) -> Answer:
    """``/readyz``: 200 once every model has an available version, 503 before."""
    models = {n: manager.available_versions(n) for n in manager.model_names()}
    is_ready = manager.is_ready()
    return Answer(200 if is_ready else 503, {"ready": is_ready, "available_versions": models})


def answer(manager: Manager, endpoint: Endpoint, body: bytes | None = None) -> Answer:
    """The answer to ``endpoint`` (status, metadata or inference, with the request body
    for the last). Never raises for a bad request or a failing model: those are
    answers too."""
    known = endpoint.name in manager.model_names()
    result = Answer(500, None, endpoint.name if known else "")
    try:
        if endpoint.inference:
            _infer(manager, endpoint, body or b"", result)
        elif endpoint.api == "status":
            _status(manager, endpoint, result)
        elif endpoint.api == "metadata":
            _metadata(manager, endpoint, result)
        else:
            raise HTTPError(404, f"no model endpoint {endpoint.api!r}")
    except HTTPError as e:
        result.status, result.body = e.status, {"error": str(e)}
    except Exception as e:  # a bug or a failing model: this request only (details in the log)
        log.exception("%s of model %s failed", endpoint.api, endpoint.name)
        message = f"internal error: {type(e).__name__}: {public_message(e)}"
        result.status, result.body = 500, {"error": message}
    return result


def respond(manager: Manager, endpoint: Endpoint, body: bytes | None = None):
    """``(answer, its JSON bytes)``: an answer JSON cannot hold (a complex output) is
    this request's 500."""
    result = answer(manager, endpoint, body)
    try:
        return result, encode(result.body)
    except (TypeError, orjson.JSONEncodeError) as e:
        log.exception("%s of model %s: the answer is not JSON", endpoint.api, endpoint.name)
        result.status = 500
        result.body = {"error": f"internal error: the answer cannot be sent as JSON: {e}"}
        return result, encode(result.body)


def encode(body) -> bytes:
    """JSON bytes of an answer's body; numpy arrays and scalars as their values."""
    return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE)


def decode(body: bytes) -> dict:
    try:
        request = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise HTTPError(400, f"malformed JSON: {e}") from None
    if not isinstance(request, dict):
        raise HTTPError(400, f"the request must be a JSON object, got {type(request).__name__}")
    return request


class _handle:
    """``with _handle(manager, endpoint) as h``: a servable handle; lookup errors as
    HTTP errors."""

    def __init__(self, manager: Manager, endpoint: Endpoint):
        try:
            self.handle = manager.get_servable_handle(
                endpoint.name, endpoint.version, endpoint.label
            )
        except ServableNotFound as e:
            raise HTTPError(404, str(e)) from None
        except ServableUnavailable as e:
            raise HTTPError(503, str(e)) from None

    def __enter__(self):
        return self.handle

    def __exit__(self, *exc) -> None:
        self.handle.release()


def _infer(manager: Manager, endpoint: Endpoint, body: bytes, result: Answer) -> None:
    request = decode(body)
    api = endpoint.api
    signature_name = request.get("signature_name", "")
    if signature_name not in SIGNATURE_NAMES[api]:
        raise HTTPError(
            400,
            f"Serving signature name: {signature_name!r} not found for :{api} (use "
            f"{SIGNATURE_NAME!r})",
        )
    if api == "predict":
        row = "instances" in request
        if row == ("inputs" in request):
            raise HTTPError(
                400,
                "give exactly one of 'instances' (row format) or 'inputs' "
                "(columnar format); " + ("both were" if row else "neither was") + " given",
            )
    with _handle(manager, endpoint) as handle:
        result.version = str(handle.id.version)
        signature = handle.servable.signature
        if METHOD_NAMES[api] not in signature.method_names:
            raise HTTPError(
                400,
                f"version {handle.id.version} of model {endpoint.name} has no {api} "
                f"signature (its outputs: {signature.describe_outputs()})",
            )
        names = signature.input_names
        if api != "predict":
            inputs = _from_examples(request, names)
        elif row:
            inputs = _from_rows(request["instances"], names)
        else:
            inputs = _from_columns(request["inputs"], names)
        try:
            outputs = handle.servable(inputs)
        except (SignatureError, IndexError) as e:
            # An IndexError out of a model comes from indices the request gave (an
            # embedding lookup): TF Serving's INVALID_ARGUMENT, not a server failure.
            raise HTTPError(400, str(e)) from None
    result.status = 200
    if api == "classify":
        (scores,) = outputs.values()
        classes = [str(k) for k in range(scores.shape[1])]
        result.body = {"results": [list(zip(classes, row.tolist())) for row in scores]}
    elif api == "regress":
        (values,) = outputs.values()
        result.body = {"results": values.reshape(len(values)).tolist()}
    elif row and len(outputs) == 1:
        result.body = {"predictions": next(iter(outputs.values()))}
    elif row:
        batch = len(next(iter(outputs.values())))
        result.body = {"predictions": [{k: v[i] for k, v in outputs.items()} for i in range(batch)]}
    elif len(outputs) == 1:
        result.body = {"outputs": next(iter(outputs.values()))}
    else:
        result.body = {"outputs": outputs}


def _from_rows(instances, names: tuple[str, ...]) -> dict:
    if not isinstance(instances, list) or not instances:
        raise HTTPError(400, "'instances' must be a non-empty list, one entry per example")
    named = [isinstance(i, dict) for i in instances]
    if any(named) and not all(named):
        raise HTTPError(400, "'instances' mixes objects and plain values; use one form")
    if all(named):
        keys = [sorted(i) for i in instances]
        if any(k != sorted(names) for k in keys):
            raise HTTPError(
                400,
                f"every instance must name exactly the inputs {list(names)}; "
                f"got {next(k for k in keys if k != sorted(names))}",
            )
        return {n: [i[n] for i in instances] for n in names}
    if len(names) != 1:
        raise HTTPError(
            400,
            f"this model takes inputs {list(names)}: each instance must be an object naming them",
        )
    return {names[0]: instances}


def _from_columns(inputs, names: tuple[str, ...]) -> dict:
    if isinstance(inputs, dict):
        if len(names) == 1 and names[0] not in inputs:
            raise HTTPError(
                400, f"'inputs' names {sorted(inputs)}, but this model's input is {names[0]!r}"
            )
        return inputs
    if len(names) != 1:
        raise HTTPError(
            400, f"this model takes inputs {list(names)}: 'inputs' must be an object naming them"
        )
    return {names[0]: inputs}


def _from_examples(request: dict, names: tuple[str, ...]) -> dict:
    examples, context = request.get("examples"), request.get("context", {})
    if not isinstance(examples, list) or not examples:
        raise HTTPError(400, "'examples' must be a non-empty list of objects, one per example")
    if not isinstance(context, dict) or not all(isinstance(e, dict) for e in examples):
        raise HTTPError(400, "'examples' entries and 'context' must be objects naming features")
    merged = [{**context, **e} for e in examples]
    for example in merged:
        if sorted(example) != sorted(names):
            raise HTTPError(
                400,
                f"every example (with the context) must name exactly the features "
                f"{list(names)}; got {sorted(example)}",
            )
    return {n: [e[n] for e in merged] for n in names}


def _status(manager: Manager, endpoint: Endpoint, result: Answer) -> None:
    name, version = endpoint.name, endpoint.version
    try:
        states = manager.version_states(name)
        if endpoint.label is not None:
            labels = manager.labels(name)
            if endpoint.label not in labels:
                raise ServableNotFound(
                    f"Unrecognized servable version label: {endpoint.label} (model {name})"
                )
            version = labels[endpoint.label]
    except ServableNotFound as e:
        raise HTTPError(404, str(e)) from None
    if version is not None:
        states = [s for s in states if s.id.version == version]
        if not states:
            raise HTTPError(404, f"Could not find version {version} of model {name}")
        result.version = str(version)
    result.status = 200
    result.body = {"model_version_status": [_version_status(s) for s in states]}


def _version_status(s: ServableState) -> dict:
    # TF Serving has no error state: a failed version is END with a non-OK status.
    state = "END" if s.state is State.ERROR else s.state.value.upper()
    return {
        "version": str(s.id.version),
        "state": state,
        "status": {"error_code": s.error_code or "OK", "error_message": s.error},
    }


def _metadata(manager: Manager, endpoint: Endpoint, result: Answer) -> None:
    with _handle(manager, endpoint) as handle:
        signature = handle.servable.signature
        result.version = str(handle.id.version)

    def tensors(specs):
        return {
            s.name: {
                "dtype": TF_DTYPES.get(s.dtype, s.dtype),
                "tensor_shape": {
                    "dim": [{"size": str(n), "name": ""} for n in s.shape],
                    "unknown_rank": False,
                },
                "name": s.name,
            }
            for s in specs
        }

    inputs, outputs = tensors(signature.inputs), tensors(signature.outputs)
    defs = {SIGNATURE_NAME: {"inputs": inputs, "outputs": outputs, "method_name": PREDICT}}
    for api, name in (("classify", "classification"), ("regress", "regression")):
        if METHOD_NAMES[api] in signature.method_names:
            defs[name] = {"inputs": inputs, "outputs": outputs, "method_name": METHOD_NAMES[api]}
    result.status = 200
    result.body = {
        "model_spec": {"name": endpoint.name, "signature_name": "", "version": result.version},
        "metadata": {"signature_def": {"signature_def": defs}},
    }


__all__ = [
    "Answer",
    "Endpoint",
    "HTTPError",
    "INFERENCE",
    "SIGNATURE_NAME",
    "answer",
    "decode",
    "encode",
    "parse",
    "ready",
    "respond",
]
