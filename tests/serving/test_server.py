"""The front end over real loopback sockets (uvicorn on a thread of this process): every
kind of bad transfer gets its documented 4xx within the deadline, the limits on in-flight
work and time hold, and the server keeps answering."""

import json
import socket
import threading
import time

import pytest
from conftest import Client, FakeLoader, save_version

from jitgrad.serving.app import BackgroundServer, ServingApp
from jitgrad.serving.asgi import Limits, create_app
from jitgrad.serving.manager import Manager
from jitgrad.serving.signature import Signature

T = 30
DEADLINE = 1.0  # seconds: the request timeout of these servers
LIMIT = 4096  # bytes: their body limit
PREDICT = "/v1/models/tiny:predict"
BODY = json.dumps({"instances": [[0.5] * 8]}).encode()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    base = tmp_path_factory.mktemp("models") / "tiny"
    save_version(base, 1)
    limits = Limits(max_body_bytes=LIMIT, request_timeout=DEADLINE)
    with ServingApp("tiny", base, port=0, poll_seconds=0, limits=limits) as app:
        yield app


def _exchange(port: int, data: bytes) -> tuple[bytes, float]:
    """Send ``data`` on a new connection and read until the server closes it: the raw
    answer and the seconds it took."""
    start = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=T) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks), time.perf_counter() - start


def _head(path: str, length, extra: str = "") -> bytes:
    header = "" if length is None else f"Content-Length: {length}\r\n"
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Connection: close\r\n{header}{extra}\r\n"
    ).encode()


def _still_serves(app) -> None:
    client = Client(app.server.url)
    try:
        status, body = client.post(PREDICT, {"instances": [[0.5] * 8]})
        assert status == 200 and len(body["predictions"][0]) == 3
    finally:
        client.close()


BAD_TRANSFERS = {
    # name: (bytes sent, status, a fragment of the answer)
    "oversized, declared": (_head(PREDICT, 10**8), 413, b"over the limit of 4096"),
    "oversized, streamed": (
        _head(PREDICT, None, "Transfer-Encoding: chunked\r\n")
        + b"".join(b"1000\r\n" + b" " * 4096 + b"\r\n" for _ in range(3)),
        413,
        b"over the limit of 4096",
    ),
    "truncated body": (_head(PREDICT, len(BODY)) + BODY[:10], 408, b"not complete within 1 s"),
    "stalled before the body": (_head(PREDICT, len(BODY)), 408, b"10 bytes came"[0:0]),
    "malformed JSON": (_head(PREDICT, 9) + b"{not json", 400, b"malformed JSON"),
    "malformed Content-Length": (_head(PREDICT, "+9") + b"{not json", 400, b""),
    "two Content-Lengths": (
        _head(PREDICT, len(BODY), f"Content-Length: {len(BODY) + 5}\r\n") + BODY,
        400,
        b"",
    ),
    "not HTTP": (b"garbage\r\n\r\n", 400, b""),
    # Over h11's 16 KiB header limit, yet one loopback segment: the server has read it all
    # when it refuses, so it closes with a FIN, not a reset that could drop its answer.
    "headers without an end": (b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 20_000, 400, b""),
}


@pytest.mark.parametrize("name", BAD_TRANSFERS)
def test_bad_transfers_get_their_4xx_within_the_deadline(app, name):
    data, status, fragment = BAD_TRANSFERS[name]
    answer, seconds = _exchange(app.server.port, data)
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:200]
    assert fragment in answer
    assert seconds < DEADLINE + 2.0
    if status in (408, 413):
        assert b"connection: close" in answer.lower()
    _still_serves(app)


class _Slow:
    """A servable that takes ``seconds`` per call."""

    signature = Signature.from_manifest(
        {
            "inputs": {"x": {"dtype": "float32", "shape": [-1, 1]}},
            "outputs": {"y": {"dtype": "float32", "shape": [-1, 1]}},
        }
    )

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __call__(self, inputs):
        time.sleep(self.seconds)
        return {"y": self.signature.check(inputs)["x"]}


def _slow_server(seconds: float, limits: Limits):
    manager = Manager()
    loader = FakeLoader()
    loader.load = lambda: setattr(loader, "_servable", _Slow(seconds))
    manager.set_aspired_versions("slow", {1: loader})
    manager.wait_until_available("slow", 1, T)
    app = create_app(manager, limits)
    return manager, app, BackgroundServer(app, limits).start()


def _stop(manager, app, server) -> None:
    server.stop()
    app.state.frontend.close()
    manager.shutdown(T)


def test_work_past_the_deadline_is_504_and_its_slot_is_held_until_it_ends():
    manager, app, server = _slow_server(2.5, Limits(request_timeout=0.5, max_in_flight=1))
    client = Client(server.url)
    try:
        start = time.perf_counter()
        status, body = client.post("/v1/models/slow:predict", {"instances": [[1.0]]})
        assert status == 504 and "took over 0.5 s" in body["error"]
        assert time.perf_counter() - start < 1.5  # not the work's 2.5 s
        # the timed-out work still runs on its thread and holds the one slot
        status, _ = client.post("/v1/models/slow:predict", {"instances": [[1.0]]})
        assert status == 503
        time.sleep(2.5)
        assert client.post("/v1/models/slow:predict", {"instances": [[1.0]]})[0] == 504
    finally:
        client.close()
        _stop(manager, app, server)


def test_past_max_in_flight_is_503_with_retry_after_at_once():
    manager, app, server = _slow_server(2.0, Limits(max_in_flight=2, request_timeout=10))
    statuses = []

    def one():
        c = Client(server.url)
        statuses.append(c.post("/v1/models/slow:predict", {"instances": [[1.0]]})[0])
        c.close()

    try:
        busy = [threading.Thread(target=one) for _ in range(2)]
        for t in busy:
            t.start()
        time.sleep(0.2)
        client = Client(server.url)
        start = time.perf_counter()
        status, text, response = client.request(
            "POST", "/v1/models/slow:predict", json.dumps({"instances": [[1.0]]}).encode(), raw=True
        )
        assert status == 503 and time.perf_counter() - start < 1.0  # not queued behind 2 s
        assert response.getheader("Retry-After") == "1" and "in flight" in text
        assert client.get("/healthz")[0] == 200  # the event loop was never blocked
        for t in busy:
            t.join(T)
        assert statuses == [200, 200]
        c = Client(server.url)
        assert c.post("/v1/models/slow:predict", {"instances": [[2.0]]}) == (
            200,
            {"predictions": [[2.0]]},
        )
        c.close()
    finally:
        _stop(manager, app, server)
