"""TensorFlow Serving's REST API over a manager, so existing TF Serving clients work.

======  ===========================================================  ==========================
GET     ``/v1/models/{name}[/versions/{v} | /labels/{l}]``            version status
GET     ``/v1/models/{name}[/versions/{v} | /labels/{l}]/metadata``   signature (signature_def)
POST    ``/v1/models/{name}[/versions/{v} | /labels/{l}]:predict``    ``instances`` or ``inputs``
GET     ``/healthz``, ``/readyz``, ``/metrics``                       live, ready, Prometheus
======  ===========================================================  ==========================

A predict body carries ``instances`` (row format: a list with one entry per example; for
a single-input model an entry is the value or ``{name: value}``) or ``inputs`` (columnar:
the batched value or ``{name: batched value}``), never both; the answer is
``{"predictions": [...]}`` (one entry per example) or ``{"outputs": ...}`` (batched),
mirroring the request. Without a version or label the newest available version answers.

Errors are ``{"error": "..."}`` with: 400 for malformed JSON, both or neither of
``instances``/``inputs``, wrong names, shapes or dtypes, and for a malformed or repeated
Content-Length (the connection then closes: where the body ends is unknown); 404 for an
unknown model, version, label or path; 405 for a wrong method (501 for one the server
does not know); 411 without a Content-Length; 413 for a body over ``max_body_bytes``
(refused from its header, before it is read); 503 while a model or version is known but
not available (loading, or unloading); 400 too for an index out of a model's range (an
embedding lookup); 500 if the model itself fails. A request's failure is confined to it:
the handler catches everything.

Why the standard library's ``ThreadingHTTPServer``: no dependency to install or pin, and
one thread per connection suits this backend, whose kernels and BLAS calls release the
GIL, so two requests do overlap on two cores; with keep-alive (HTTP/1.1) a client pays the
thread once per connection. It serves the loads this project is measured at (a few client
threads, single-row predicts at ~1 ms) without an event loop. An ASGI stack would bring
HTTP/2, backpressure and a worker model for thousands of connections: not needed here.
The server binds 127.0.0.1 unless given another host.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from .manager import Manager, ServableNotFound, ServableUnavailable
from .metrics import Metrics
from .signature import TF_DTYPES, SignatureError
from .state import ServableState, State

log = logging.getLogger("jitgrad.serving")

DEFAULT_MAX_BODY_BYTES = 16 << 20
SIGNATURE_NAME = "serving_default"
_MODEL_PATH = re.compile(
    r"^/v1/models/(?P<name>[^/:]+)"
    r"(?:/versions/(?P<version>[^/:]+)|/labels/(?P<label>[^/:]+))?"
    r"(?P<tail>/metadata|:predict)?$"
)


class HTTPError(Exception):
    """An answer other than 200: status code and message (sent as ``{"error": message}``)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class ModelServer:
    """The REST front end of ``manager``: ``start()`` serves on a background thread,
    ``stop()`` shuts down (in-flight requests finish, idle keep-alive connections close).

    ``port=0`` picks a free port (see ``.port`` / ``.url`` after construction).
    """

    def __init__(
        self,
        manager: Manager,
        host: str = "127.0.0.1",
        port: int = 8501,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        metrics: Metrics | None = None,
    ):
        self.manager = manager
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics or Metrics()
        manager.add_listener(self.metrics.observe_state, replay=True)
        server_class = _IPv6Server if ":" in host else _Server
        self._httpd = server_class((host, port), _Handler)
        self._httpd.app = self
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return self._httpd.server_address[0]

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> ModelServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="jitgrad-http",
            daemon=True,
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.1)

    def stop(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()
        self._httpd.close_connections(timeout)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stuck client never blocks shutdown; stop() closes connections
    app: ModelServer

    def __init__(self, *args, **kwargs):
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request_thread(self, request, client_address):
        with self._connections_lock:
            self._connections[request] = threading.current_thread()
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections.pop(request, None)

    def close_connections(self, timeout: float) -> None:
        """End every keep-alive connection: reading stops (a handler waiting for the next
        request sees the end of the stream), an answer being written still goes out."""
        with self._connections_lock:
            connections = list(self._connections.items())
        for sock, _ in connections:
            try:
                sock.shutdown(socket.SHUT_RD)
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        for _, thread in connections:
            thread.join(max(0.0, deadline - time.monotonic()))


class _IPv6Server(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one thread per connection, not per request
    server_version = "jitgrad-serving/0.1"
    timeout = 60  # seconds an idle connection may hold its thread
    server: _Server

    def setup(self) -> None:
        super().setup()
        # Headers and body leave in two writes; with Nagle's algorithm the second would
        # wait for the client's delayed ACK of the first (~40 ms on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None):
        # The base class answers unparsable requests (bad request line, headers too long,
        # unknown method) with an HTML page; clients here expect {"error": ...}.
        self.close_connection = True
        self._send(code, _encode({"error": message or HTTPStatus(code).phrase}))

    def log_message(self, format, *args) -> None:  # noqa: A002 (the base class's name)
        log.debug("%s %s", self.address_string(), format % args)

    # -- dispatch -------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        start = time.perf_counter()
        app = self.server.app
        self._labels = ("", "", "other")  # model, version, api (for metrics)
        self._body_done = False
        try:
            self._length = self._content_length()
            status, body = self._route(app, method)
            # Encoded here, not when sent: an answer JSON cannot hold (a complex output)
            # must be this request's 500, not an exception that drops the connection.
            payload = _encode(body)
        except HTTPError as e:
            status, payload = e.status, _encode({"error": str(e)})
        except Exception as e:  # a bug or a failing model: this request only
            log.exception("request %s %s failed", method, self.path)
            status, payload = 500, _encode({"error": f"internal error: {type(e).__name__}: {e}"})
        if not self._body_done:  # answered before reading it: skip it, or end the connection
            self._discard_body()
        self._send(status, payload)
        model, version, api = self._labels
        if api != "other":
            app.metrics.observe_request(model, version, api, status, time.perf_counter() - start)

    def _route(self, app: ModelServer, method: str):
        path = urlsplit(self.path).path
        if path in ("/healthz", "/readyz", "/metrics"):
            self._require(method, "GET")
            if path == "/healthz":
                return 200, {"status": "live"}
            if path == "/metrics":
                return 200, app.metrics.render()
            models = {n: app.manager.available_versions(n) for n in app.manager.model_names()}
            ready = app.manager.is_ready()
            return (200 if ready else 503), {"ready": ready, "available_versions": models}
        match = _MODEL_PATH.match(path)
        if match is None:
            raise HTTPError(
                404,
                f"no such endpoint: {path} (see TensorFlow Serving's REST "
                "API: /v1/models/{name}[/versions/{v}|/labels/{l}]"
                "[:predict|/metadata])",
            )
        name = unquote(match["name"])
        label = None if match["label"] is None else unquote(match["label"])
        version = None
        if match["version"] is not None:
            text = match["version"]
            if not re.fullmatch(r"[0-9]+", text):
                raise HTTPError(
                    400, f"version must be a non-negative integer, got {unquote(text)!r}"
                )
            # Versions are int64 (the source serves no other), so a longer number names
            # none; its digits are counted, not converted: int() refuses a string of
            # over 4300 digits with a ValueError of its own.
            digits = text.lstrip("0") or "0"
            if len(digits) > 19:
                raise HTTPError(
                    404,
                    f"Could not find version {digits[:20]}... of model "
                    f"{name}: versions are 64-bit integers",
                )
            version = int(digits)
        known = name in app.manager.model_names()
        tail = match["tail"]
        api = {None: "status", "/metadata": "metadata", ":predict": "predict"}[tail]
        # Label values come only from what the manager serves, never from the path as
        # given: a version is recorded once it resolved to one the manager knows.
        self._labels = (name if known else "", "", api)
        if tail == ":predict":
            self._require(method, "POST")
            return self._predict(app, name, version, label)
        self._require(method, "GET")
        if tail is None:
            body = _status(app.manager, name, version, label)
            if version is not None or label is not None:
                self._labels = (name, body["model_version_status"][0]["version"], api)
            return 200, body
        return self._metadata(app, name, version, label)

    def _require(self, method: str, allowed: str) -> None:
        if method != allowed:
            raise HTTPError(405, f"{method} is not allowed here; use {allowed}")

    # -- endpoints ------------------------------------------------------------------------

    def _predict(self, app: ModelServer, name: str, version, label):
        request = self._read_json(app.max_body_bytes)
        if not isinstance(request, dict):
            raise HTTPError(400, f"the request must be a JSON object, got {type(request).__name__}")
        signature_name = request.get("signature_name", SIGNATURE_NAME)
        if signature_name not in ("", SIGNATURE_NAME):
            raise HTTPError(
                400,
                f"Serving signature name: {signature_name!r} not found; this "
                f"model has only {SIGNATURE_NAME!r}",
            )
        row = "instances" in request
        if row == ("inputs" in request):
            raise HTTPError(
                400,
                "give exactly one of 'instances' (row format) or 'inputs' "
                "(columnar format); " + ("both were" if row else "neither was") + " given",
            )
        with _handle(app.manager, name, version, label) as handle:
            self._labels = (name, str(handle.id.version), "predict")
            signature = handle.servable.signature
            names = signature.input_names
            if row:
                inputs = _from_rows(request["instances"], names)
            else:
                inputs = _from_columns(request["inputs"], names)
            try:
                outputs = handle.servable(inputs)
            except (SignatureError, IndexError) as e:
                # An IndexError out of a model comes from indices the request gave (an
                # embedding lookup): TF Serving's INVALID_ARGUMENT, not a server failure.
                raise HTTPError(400, str(e)) from None
        if row:
            if len(outputs) == 1:
                (value,) = outputs.values()
                return 200, {"predictions": value.tolist()}
            batch = len(next(iter(outputs.values())))
            return 200, {
                "predictions": [
                    {k: v[i].tolist() for k, v in outputs.items()} for i in range(batch)
                ]
            }
        if len(outputs) == 1:
            return 200, {"outputs": next(iter(outputs.values())).tolist()}
        return 200, {"outputs": {k: v.tolist() for k, v in outputs.items()}}

    def _metadata(self, app: ModelServer, name: str, version, label):
        with _handle(app.manager, name, version, label) as handle:
            self._labels = (name, str(handle.id.version), "metadata")
            signature = handle.servable.signature
            resolved = handle.id.version

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

        return 200, {
            "model_spec": {"name": name, "signature_name": "", "version": str(resolved)},
            "metadata": {
                "signature_def": {
                    "signature_def": {
                        SIGNATURE_NAME: {
                            "inputs": tensors(signature.inputs),
                            "outputs": tensors(signature.outputs),
                            "method_name": "tensorflow/serving/predict",
                        }
                    }
                }
            },
        }

    # -- bodies ---------------------------------------------------------------------------

    def _content_length(self) -> int | None:
        """The body's length, None without a Content-Length. Where the body ends is
        unknown when the header is malformed or repeated: the answer is 400 and the
        connection closes (RFC 9112, 6.3), since reading on would take part of the body as
        the next request (or, with two lengths, disagree with a proxy about where the next
        request starts: request smuggling)."""
        values = self.headers.get_all("Content-Length") or []
        if len(values) > 1 or (values and not re.fullmatch(r"[0-9]+", values[0])):
            self.close_connection = True
            self._body_done = True  # nothing to skip: the connection ends
            if len(values) > 1:
                raise HTTPError(
                    400,
                    f"bad Content-Length: {len(values)} Content-Length "
                    f"headers ({', '.join(map(repr, values))})",
                )
            raise HTTPError(400, f"bad Content-Length {values[0]!r}")
        return int(values[0]) if values else None

    def _read_json(self, limit: int):
        self._body_done = True  # from here on, every path reads the body or closes
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self.close_connection = True
            raise HTTPError(411, "a Content-Length is required (chunked bodies are not accepted)")
        length = self._length
        if length is None:
            self.close_connection = True
            raise HTTPError(411, "a Content-Length is required")
        if length > limit:
            self.close_connection = True  # the body stays unread: this connection is done
            raise HTTPError(
                413,
                f"the request body has {length} bytes, over the limit of "
                f"{limit} (--max_body_bytes)",
            )
        body = self.rfile.read(length)
        if len(body) < length:
            self.close_connection = True
            raise HTTPError(400, f"the request body ended after {len(body)} of {length} bytes")
        try:
            return json.loads(body)
        except (ValueError, RecursionError) as e:
            raise HTTPError(400, f"malformed JSON: {e}") from None

    def _discard_body(self) -> None:
        length = self._length or 0
        chunked = self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity")
        if chunked or length > self.server.app.max_body_bytes:
            self.close_connection = True
        elif length:
            self.rfile.read(length)

    def _send(self, status: int, payload: tuple[bytes, str]) -> None:
        data, kind = payload
        try:
            self.send_response(status, HTTPStatus(status).phrase)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            if status == 503:
                self.send_header("Retry-After", "1")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away; nothing to tell it
            self.close_connection = True


def _encode(body) -> tuple[bytes, str]:
    """An answer's bytes and Content-Type: text (the metrics page) or JSON."""
    if isinstance(body, str):
        return body.encode(), "text/plain; version=0.0.4; charset=utf-8"
    return (json.dumps(body) + "\n").encode(), "application/json"


class _handle:
    """``with _handle(manager, ...) as h``: a servable handle, lookup errors as HTTP errors."""

    def __init__(self, manager: Manager, name: str, version, label):
        try:
            self.handle = manager.get_servable_handle(name, version, label)
        except ServableNotFound as e:
            raise HTTPError(404, str(e)) from None
        except ServableUnavailable as e:
            raise HTTPError(503, str(e)) from None

    def __enter__(self):
        return self.handle

    def __exit__(self, *exc) -> None:
        self.handle.release()


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


def _status(manager: Manager, name: str, version, label) -> dict:
    try:
        states = manager.version_states(name)
        if label is not None:
            labels = manager.labels(name)
            if label not in labels:
                raise ServableNotFound(
                    f"Unrecognized servable version label: {label} (model {name})"
                )
            version = labels[label]
    except ServableNotFound as e:
        raise HTTPError(404, str(e)) from None
    if version is not None:
        states = [s for s in states if s.id.version == version]
        if not states:
            raise HTTPError(404, f"Could not find version {version} of model {name}")
    return {"model_version_status": [_version_status(s) for s in states]}


def _version_status(s: ServableState) -> dict:
    # TF Serving has no error state: a failed version is END with a non-OK status.
    state = "END" if s.state is State.ERROR else s.state.value.upper()
    return {
        "version": str(s.id.version),
        "state": state,
        "status": {"error_code": s.error_code or "OK", "error_message": s.error},
    }


__all__ = ["ModelServer", "HTTPError", "DEFAULT_MAX_BODY_BYTES"]
