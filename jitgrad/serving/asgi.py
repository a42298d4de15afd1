"""The REST front end as an ASGI application (Starlette), with the server's limits.

``create_app(manager, limits)`` answers every path of ``rest.py`` plus ``/healthz``
(live), ``/readyz`` (200 once every model has a version available, 503 before) and the
Prometheus metrics at ``/monitoring/prometheus/metrics`` and ``/metrics``. uvicorn parses
HTTP (keep-alive, header limits, malformed requests: its own 400); this module adds what
a model server needs on top, per worker process:

- a body larger than ``max_body_bytes`` is 413, refused from its Content-Length before
  it is read, or as soon as a body streamed without one passes the limit;
- at most ``max_in_flight`` inference requests at once: one more is 503 with
  ``Retry-After`` at once, never queued;
- ``request_timeout`` seconds per request from its arrival: a body still incomplete then
  is 408; inference work not done then is 504 (the worker thread finishes it, and its
  slot stays taken until it does, so timed-out work cannot pile up);
- the inference work (JSON decoding, the model, JSON encoding) runs on a pool of
  ``predict_threads`` threads, so the event loop keeps accepting and answering;
- jitgrad's eager buffer pool is held under ``pool_bytes`` (``config.pool_bytes``,
  process-wide, so only when given: the command line's workers always give it): requests
  of changing batch sizes leave at most that much in it.

An answer sent before its body was read (413, 408, 503) closes the connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from .._config import config
from . import rest
from .manager import Manager
from .metrics import Metrics

log = logging.getLogger("jitgrad.serving")

METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]
JSON = "application/json"


@dataclass(frozen=True)
class Limits:
    """The front end's limits (see the module docstring)."""

    max_body_bytes: int = 16 << 20
    max_in_flight: int = 256
    request_timeout: float = 30.0
    predict_threads: int = 4
    pool_bytes: int | None = None

    def __post_init__(self):
        for name in ("max_body_bytes", "max_in_flight", "predict_threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 < self.request_timeout < float("inf"):
            raise ValueError(f"request_timeout must be positive, got {self.request_timeout}")
        if self.pool_bytes is not None and self.pool_bytes < 0:
            raise ValueError(f"pool_bytes must not be negative, got {self.pool_bytes}")


class _Refused(Exception):
    """An answer given before the body was read: the connection closes after it."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Frontend:
    """The request handler behind ``create_app``: one per worker process."""

    def __init__(self, manager: Manager, limits: Limits, metrics: Metrics):
        self.manager, self.limits, self.metrics = manager, limits, metrics
        self.in_flight = 0  # touched on the event loop only
        self.executor = ThreadPoolExecutor(limits.predict_threads, "jitgrad-predict")
        if limits.pool_bytes is not None:
            config.pool_bytes = limits.pool_bytes

    async def handle(self, request: Request) -> Response:
        start = time.perf_counter()
        path = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1")
        try:
            endpoint = rest.parse(request.method, path.partition("?")[0])
        except rest.HTTPError as e:
            return self._json(e.status, {"error": str(e)}, close=_has_body(request))
        if endpoint.api == "healthz":
            return self._json(200, {"status": "live"})
        if endpoint.api == "readyz":
            ready = rest.ready(self.manager)
            return self._json(ready.status, ready.body)
        if endpoint.api == "metrics":
            data, kind = self.metrics.render(request.headers.get("accept", ""))
            return Response(data, media_type=kind)
        if not endpoint.inference:
            answer, data = rest.respond(self.manager, endpoint)
            self._observe(endpoint, answer, start)
            return Response(data, answer.status, media_type=JSON)
        answer, data, close = await self._infer(request, endpoint, start)
        self._observe(endpoint, answer, start)
        return self._respond(answer.status, data, close)

    async def _infer(self, request: Request, endpoint: rest.Endpoint, start: float):
        known = endpoint.name in self.manager.model_names()
        refused = rest.Answer(0, None, endpoint.name if known else "")
        if self.in_flight >= self.limits.max_in_flight:
            refused.status = 503
            message = f"{self.in_flight} requests are in flight, the limit of this worker"
            return refused, rest.encode({"error": message}), True
        self.in_flight += 1
        self.metrics.in_flight.inc()
        submitted = False
        try:
            body = await self._read_body(request, start + self.limits.request_timeout)
            work = asyncio.get_running_loop().run_in_executor(
                self.executor, rest.respond, self.manager, endpoint, body
            )
            submitted = True
            work.add_done_callback(self._finished)
            remaining = start + self.limits.request_timeout - time.perf_counter()
            # asyncio.wait leaves the work running past the deadline (its slot is freed
            # when it ends) and, unlike wait_for, makes no task per request.
            done, _ = await asyncio.wait({work}, timeout=max(remaining, 0))
            if not done:
                raise asyncio.TimeoutError
            answer, data = work.result()
            return answer, data, False
        except _Refused as e:
            refused.status = e.status
            return refused, rest.encode({"error": str(e)}), True
        except asyncio.TimeoutError:
            refused.status = 504
            message = f"the request took over {self.limits.request_timeout:g} s (--request_timeout)"
            log.warning("%s of model %s: %s", endpoint.api, endpoint.name, message)
            return refused, rest.encode({"error": message}), False
        finally:
            if not submitted:
                self._finished()

    def _finished(self, _work=None) -> None:
        self.in_flight -= 1
        self.metrics.in_flight.dec()

    async def _read_body(self, request: Request, deadline: float) -> bytes:
        limit = self.limits.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and int(declared) > limit:
            raise _Refused(
                413, f"the request body has {declared} bytes, over the limit of {limit} bytes"
            )
        chunks, size = [], 0

        async def read() -> None:
            nonlocal size
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _Refused(413, f"the request body is over the limit of {limit} bytes")
                chunks.append(chunk)

        try:
            await _within(read(), deadline - time.perf_counter())
        except asyncio.TimeoutError:
            raise _Refused(
                408,
                f"the request body was not complete within {self.limits.request_timeout:g} s "
                f"({size} bytes came)",
            ) from None
        except ClientDisconnect:
            raise _Refused(400, "the client closed the connection before its body ended") from None
        return b"".join(chunks)

    def _observe(self, endpoint: rest.Endpoint, answer: rest.Answer, start: float) -> None:
        self.metrics.observe_request(
            answer.model, answer.version, endpoint.api, answer.status, time.perf_counter() - start
        )

    def _json(self, status: int, body, close: bool = False) -> Response:
        return self._respond(status, rest.encode(body), close)

    @staticmethod
    def _respond(status: int, data: bytes, close: bool) -> Response:
        headers = {}
        if status == 503:
            headers["Retry-After"] = "1"
        if close:
            headers["Connection"] = "close"
        return Response(data, status, headers=headers, media_type=JSON)

    def close(self) -> None:
        self.executor.shutdown(wait=True)


async def _within(awaitable, seconds: float):
    """``await awaitable``, cancelled with TimeoutError after ``seconds``: in this task
    where asyncio.timeout exists (Python 3.11), in a task of its own before."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(max(seconds, 0)):
            return await awaitable
    return await asyncio.wait_for(awaitable, max(seconds, 0))


def _has_body(request: Request) -> bool:
    headers = request.headers
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


def create_app(
    manager: Manager, limits: Limits | None = None, metrics: Metrics | None = None
) -> Starlette:
    """The ASGI application serving ``manager``; ``app.state.frontend`` is its handler."""
    metrics = metrics or Metrics()
    manager.add_listener(metrics.observe_state, replay=True)
    frontend = Frontend(manager, limits or Limits(), metrics)
    app = Starlette(routes=[Route("/{path:path}", frontend.handle, methods=METHODS)])
    app.state.frontend = frontend
    return app


__all__ = ["Limits", "Frontend", "create_app"]
