"""Shared pieces of the serving tests: tiny models saved as versions, fake loaders, and a
small HTTP client (loopback only)."""

import http.client
import json
import os
import socket
import threading
import urllib.parse

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import nn
from jitgrad.io import save_model
from jitgrad.serving.loader import Loader, ResourceAllocation


def tiny_model(seed: int = 0) -> nn.Sequential:
    rng = jg.random.default_rng(seed)
    return nn.Sequential(
        nn.Linear(8, 16, dtype=jg.float32, generator=rng),
        nn.ReLU(),
        nn.Linear(16, 3, dtype=jg.float32, generator=rng),
    ).eval()


def save_version(base, version: int, model=None, seed: int = 0, warmup=(1, 4)):
    model = tiny_model(seed) if model is None else model
    save_model(
        model,
        os.path.join(base, str(version)),
        input_shape=(8,),
        input_dtype="float32",
        warmup_batch_sizes=warmup,
    )
    return model


def predict_in_process(model, x: np.ndarray) -> np.ndarray:
    with jg.no_grad():
        return model(jg.from_numpy(np.ascontiguousarray(x, dtype=np.float32))).numpy()


@pytest.fixture
def base(tmp_path):
    return str(tmp_path / "tiny")


class FakeLoader(Loader):
    """A loader whose load can be held (``gate``), fail (``fail``) or be slow; it records
    calls. Its servable is ``lambda: value``."""

    def __init__(
        self,
        value=None,
        ram: int = 100,
        measured: int | None = None,
        gate: threading.Event | None = None,
        fail: Exception | None = None,
    ):
        self.value, self.ram, self.measured, self.gate, self.fail = value, ram, measured, gate, fail
        self.calls: list[str] = []
        self.loading = threading.Event()
        self._servable = None
        self._done = False

    def estimate_resources(self):
        if self.measured is not None and self._servable is not None:
            return ResourceAllocation(ram_bytes=min(self.ram, self.measured))
        return ResourceAllocation(ram_bytes=self.ram)

    def load(self):
        if self._done:
            raise RuntimeError("load after unload")
        self.calls.append("load")
        self.loading.set()
        if self.gate is not None:
            assert self.gate.wait(10), "test gate never opened"
        if self.fail is not None:
            self._done = True
            raise self.fail
        value = self.value
        self._servable = lambda: value

    def unload(self):
        self.calls.append("unload")
        self._servable = None
        self._done = True

    def servable(self):
        return self._servable


class _Connection(http.client.HTTPConnection):
    def connect(self):
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as urllib3 does


class Client:
    """A keep-alive HTTP/1.1 client for one loopback server."""

    def __init__(self, url: str, timeout: float = 30):
        parts = urllib.parse.urlsplit(url)
        assert parts.hostname == "127.0.0.1"
        self.conn = _Connection(parts.hostname, parts.port, timeout=timeout)
        self.conn.connect()

    def request(self, method: str, path: str, body=None, headers=None, raw: bool = False):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers=headers or {})
        response = self.conn.getresponse()
        payload = response.read()
        if response.getheader("Connection", "").lower() == "close":
            self.conn.close()
        if raw:
            return response.status, payload.decode(), response
        return response.status, json.loads(payload)

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body):
        return self.request("POST", path, body, {"Content-Type": "application/json"})

    def close(self):
        self.conn.close()


class AppClient:
    """The ``Client`` interface over an ASGI app in this process (Starlette's TestClient):
    no socket, the same answers."""

    def __init__(self, app):
        from starlette.testclient import TestClient

        self.client = TestClient(app, raise_server_exceptions=True)

    def request(self, method: str, path: str, body=None, headers=None, raw: bool = False):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        response = self.client.request(method, path, content=data, headers=headers or {})
        if raw:
            return response.status_code, response.text, response
        return response.status_code, response.json()

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body):
        return self.request("POST", path, body, {"Content-Type": "application/json"})

    def close(self):
        self.client.close()
