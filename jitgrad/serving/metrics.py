"""Serving metrics in the Prometheus text format (version 0.0.4), no client library.

- ``jitgrad_serving_requests_total{model,version,api,code}``: requests answered, by HTTP
  status code; ``api`` is ``predict``, ``status`` or ``metadata``.
- ``jitgrad_serving_request_duration_seconds{model,version,api}``: a histogram of the time
  from a request's headers to its answer, body read and JSON included.
- ``jitgrad_serving_load_seconds{model,version}`` and ``..._warmup_seconds``: how long a
  version took to load (whole load, warm-up included) and, of that, to warm up.
- ``jitgrad_serving_version_state{model,version,state}``: 1 for each version's current state.

Model names only become label values once a source has aspired them (unknown names from
requests are counted under ``model=""``) and versions only once a request resolved to a
version the manager holds or held (others, and requests naming none, are counted under
``version=""``), so clients cannot grow the label sets.

>>> m = Metrics()
>>> m.observe_request("digits", "1", "predict", 200, 0.002)
>>> print(m.render().splitlines()[2])
jitgrad_serving_requests_total{model="digits",version="1",api="predict",code="200"} 1
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

from .state import ServableState

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Counters, histograms and gauges of one server; thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests: dict[tuple, int] = defaultdict(int)
        self._histograms: dict[tuple, list] = {}  # key -> [bucket counts, sum, count]
        self._load: dict[tuple, float] = {}
        self._warmup: dict[tuple, float] = {}
        self._states: dict[tuple, str] = {}

    def observe_request(
        self, model: str, version: str, api: str, code: int, seconds: float
    ) -> None:
        key = (model, version, api)
        with self._lock:
            self._requests[(*key, str(code))] += 1
            histogram = self._histograms.setdefault(key, [[0] * len(BUCKETS), 0.0, 0])
            index = bisect.bisect_left(BUCKETS, seconds)
            if index < len(BUCKETS):
                histogram[0][index] += 1
            histogram[1] += seconds
            histogram[2] += 1

    def observe_state(self, snapshot: ServableState) -> None:
        """A manager listener: records states and load/warm-up times."""
        key = (snapshot.id.name, str(snapshot.id.version))
        with self._lock:
            self._states[key] = snapshot.state.value
            if snapshot.load_seconds is not None:
                self._load[key] = snapshot.load_seconds
            if snapshot.warmup_seconds is not None:
                self._warmup[key] = snapshot.warmup_seconds

    def render(self) -> str:
        out: list[str] = []
        with self._lock:
            _header(
                out,
                "jitgrad_serving_requests_total",
                "counter",
                "HTTP requests answered, by model, version, API and status code",
            )
            for (model, version, api, code), n in sorted(self._requests.items()):
                out.append(
                    _line(
                        "jitgrad_serving_requests_total",
                        n,
                        model=model,
                        version=version,
                        api=api,
                        code=code,
                    )
                )
            name = "jitgrad_serving_request_duration_seconds"
            _header(out, name, "histogram", "Time from request headers to the answer")
            for (model, version, api), (counts, total, count) in sorted(self._histograms.items()):
                labels = {"model": model, "version": version, "api": api}
                cumulative = 0
                for bound, n in zip(BUCKETS, counts, strict=True):
                    cumulative += n
                    out.append(_line(name + "_bucket", cumulative, **labels, le=repr(bound)))
                out.append(_line(name + "_bucket", count, **labels, le="+Inf"))
                out.append(_line(name + "_sum", total, **labels))
                out.append(_line(name + "_count", count, **labels))
            for metric, values, text in (
                (
                    "jitgrad_serving_load_seconds",
                    self._load,
                    "Seconds to load a version, warm-up included",
                ),
                (
                    "jitgrad_serving_warmup_seconds",
                    self._warmup,
                    "Seconds to warm up a version (trace and compile its plans)",
                ),
            ):
                _header(out, metric, "gauge", text)
                for (model, version), seconds in sorted(values.items()):
                    out.append(_line(metric, seconds, model=model, version=version))
            _header(
                out,
                "jitgrad_serving_version_state",
                "gauge",
                "1 for the current state of each version",
            )
            for (model, version), state in sorted(self._states.items()):
                out.append(
                    _line(
                        "jitgrad_serving_version_state",
                        1,
                        model=model,
                        version=version,
                        state=state,
                    )
                )
        return "\n".join(out) + "\n"


def _header(out: list[str], name: str, kind: str, text: str) -> None:
    out.append(f"# HELP {name} {text}")
    out.append(f"# TYPE {name} {kind}")


def _line(name: str, value, **labels) -> str:
    inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
    number = repr(float(value)) if isinstance(value, float) else str(value)
    return f"{name}{{{inner}}} {number}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


__all__ = ["Metrics", "BUCKETS"]
