"""Serving metrics through prometheus_client (the Prometheus text format).

- ``jitgrad_serving_requests_total{model,version,api,code}``: requests answered, by HTTP
  status code; ``api`` is ``predict``, ``classify``, ``regress``, ``status`` or
  ``metadata``.
- ``jitgrad_serving_request_duration_seconds{model,version,api}``: a histogram of the time
  from a request's arrival to its answer, body read and JSON included.
- ``jitgrad_serving_in_flight_requests``: inference requests being worked on.
- ``jitgrad_serving_load_seconds{model,version}`` and ``..._warmup_seconds``: how long a
  version took to load (whole load, warm-up included) and, of that, to warm up.
- ``jitgrad_serving_version_state{model,version,state}``: 1 for each version's current
  state, 0 for the states it left.

Model names only become label values once a source has aspired them (unknown names from
requests are counted under ``model=""``) and versions only once a request resolved to a
version the manager holds or held (others under ``version=""``), so clients cannot grow
the label sets.

Several worker processes (``--workers``) share one view: their supervisor sets
``PROMETHEUS_MULTIPROC_DIR`` and every worker renders all workers' files
(prometheus_client's multiprocess mode); one process keeps its metrics in its own registry.

>>> m = Metrics()
>>> m.observe_request("digits", "1", "predict", 200, 0.002)
>>> [line for line in m.render()[0].decode().splitlines() if line.startswith("jitgrad_serving_requests_total")]
['jitgrad_serving_requests_total{api="predict",code="200",model="digits",version="1"} 1.0']
"""  # noqa: E501

from __future__ import annotations

import os
import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.exposition import choose_encoder

from .state import ServableState

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class Metrics:
    """The counters, histograms and gauges of one server process; thread-safe."""

    def __init__(self):
        self.registry = CollectorRegistry()
        reg = {"registry": self.registry}
        self.requests = Counter(
            "jitgrad_serving_requests",
            "HTTP requests answered, by model, version, API and status code",
            ["model", "version", "api", "code"],
            **reg,
        )
        self.duration = Histogram(
            "jitgrad_serving_request_duration_seconds",
            "Time from a request's arrival to its answer",
            ["model", "version", "api"],
            buckets=BUCKETS,
            **reg,
        )
        self.in_flight = Gauge(
            "jitgrad_serving_in_flight_requests",
            "Inference requests being worked on",
            multiprocess_mode="livesum",
            **reg,
        )
        self.load = Gauge(
            "jitgrad_serving_load_seconds",
            "Seconds to load a version, warm-up included",
            ["model", "version"],
            multiprocess_mode="max",
            **reg,
        )
        self.warmup = Gauge(
            "jitgrad_serving_warmup_seconds",
            "Seconds to warm up a version (trace and compile its plans)",
            ["model", "version"],
            multiprocess_mode="max",
            **reg,
        )
        self.state = Gauge(
            "jitgrad_serving_version_state",
            "1 for the current state of each version",
            ["model", "version", "state"],
            multiprocess_mode="livemax",
            **reg,
        )
        self._states: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def observe_request(
        self, model: str, version: str, api: str, code: int, seconds: float
    ) -> None:
        self.requests.labels(model, version, api, str(code)).inc()
        self.duration.labels(model, version, api).observe(seconds)

    def observe_state(self, snapshot: ServableState) -> None:
        """A manager listener: records states and load/warm-up times."""
        key = (snapshot.id.name, str(snapshot.id.version))
        with self._lock:
            previous = self._states.get(key)
            self._states[key] = snapshot.state.value
        if previous is not None and previous != snapshot.state.value:
            self.state.labels(*key, previous).set(0)
        self.state.labels(*key, snapshot.state.value).set(1)
        if snapshot.load_seconds is not None:
            self.load.labels(*key).set(snapshot.load_seconds)
        if snapshot.warmup_seconds is not None:
            self.warmup.labels(*key).set(snapshot.warmup_seconds)

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition's bytes and Content-Type, in the format the scraper's
        ``Accept`` header asks for (the text format 0.0.4 without one): every worker's
        metrics when several share a multiprocess directory, this process's otherwise."""
        encode, kind = choose_encoder(accept)
        registry = self.registry
        if os.environ.get(MULTIPROCESS_DIR):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
        return encode(registry), kind


__all__ = ["Metrics", "BUCKETS", "MULTIPROCESS_DIR"]
