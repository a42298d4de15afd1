"""The serving leg of the demo: serve a saved model once, answer one request, stop.

``serve_once(model_base_path, name)`` starts the server on a free loopback port, sends
one ``:predict`` request with a real input over HTTP (a digit from scikit-learn's bundled
dataset when the model takes 64 float pixels, a deterministic random sample otherwise),
prints a summary of the answer and shuts everything down. It returns the response.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.request

import numpy as np

from .app import ServingApp
from .signature import TF_DTYPES


def _example(shape: list[int], dtype: str):
    """One real input for the signature, and what it is."""
    sample_shape = tuple(shape[1:])
    if sample_shape == (64,) and np.dtype(dtype).kind == "f":
        try:
            from sklearn.datasets import load_digits

            digits = load_digits()
            pixels = (digits.data[0] / 16.0).astype(dtype)
            return pixels, f"digit image 0 (label {digits.target[0]})"
        except ImportError:
            pass
    sample = np.random.default_rng(0).random(sample_shape).astype(dtype)
    return sample, f"a seeded random sample of shape {sample_shape}"


def serve_once(model_base_path, name: str, *, timeout: float = 120.0, out=print) -> dict:
    """Serve ``model_base_path`` as model ``name`` on 127.0.0.1 (a free port), predict one
    instance over HTTP, print a summary and shut down. Returns the decoded response."""
    start = time.perf_counter()
    with ServingApp(name, model_base_path, port=0, poll_seconds=0, ready_timeout=timeout) as app:
        ready = time.perf_counter() - start
        version = max(app.manager.available_versions(name))
        with urllib.request.urlopen(
            f"{app.server.url}/v1/models/{name}/metadata", timeout=timeout
        ) as r:
            metadata = json.load(r)["metadata"]
        signature = metadata["signature_def"]["signature_def"]["serving_default"]
        ((input_name, spec),) = signature["inputs"].items()
        shape = [int(d["size"]) for d in spec["tensor_shape"]["dim"]]
        dtype = {v: k for k, v in TF_DTYPES.items()}[spec["dtype"]]
        sample, what = _example(shape, dtype)
        body = json.dumps({"instances": [sample.tolist()]}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", app.server.port, timeout=timeout)
        connection.connect()
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as urllib3 does
        t0 = time.perf_counter()
        connection.request(
            "POST",
            f"/v1/models/{name}:predict",
            body=body,
            headers={"Content-Type": "application/json"},
        )
        reply = connection.getresponse()
        response = json.loads(reply.read())
        latency = time.perf_counter() - t0
        connection.close()
        if reply.status != 200:
            raise RuntimeError(f"predict failed with HTTP {reply.status}: {response}")
        (prediction,) = response["predictions"]
        values = np.asarray(prediction)
        out(f"served {name} version {version} at {app.server.url} (ready in {ready:.2f} s)")
        out(f"POST /v1/models/{name}:predict with {what}: {latency * 1e3:.1f} ms")
        if values.ndim == 1 and values.size > 1:
            out(
                f"  {values.size} outputs, argmax {int(values.argmax())} (score {values.max():.3f})"
            )
        else:
            out(f"  output {values.tolist()}")
    out("server stopped")
    return response


__all__ = ["serve_once"]
