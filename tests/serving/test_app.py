"""ServingApp: readiness waits for a first version, and a failed start leaves nothing
running behind it."""

import os
import threading

import pytest
from conftest import Client, save_version

from jitgrad.serving.app import ServingApp


def jitgrad_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("jitgrad-")]


@pytest.mark.parametrize("layout", ["empty", "missing"])
def test_no_version_is_not_ready_and_start_times_out_naming_the_base_path(base, layout):
    if layout == "empty":
        os.makedirs(base)
    app = ServingApp("tiny", base, port=0, poll_seconds=0, ready_timeout=0.2)
    with pytest.raises(TimeoutError, match=f"model tiny: no versions.*under {base}"):
        app.start()
    app = ServingApp("tiny", base, port=0, poll_seconds=0).start(wait=False)
    client = Client(app.server.url)
    try:
        assert not app.manager.is_ready()
        status, body = client.get("/readyz")
        assert status == 503 and body == {"ready": False, "available_versions": {"tiny": []}}
        assert client.post("/v1/models/tiny:predict", {"instances": [[0.0] * 8]})[0] == 503
    finally:
        client.close()
        app.stop()


def test_a_failed_start_stops_the_source_the_loads_and_the_server(base):
    save_version(base, 1)
    os.truncate(os.path.join(base, "1", "weights.jg"), 10)  # broken: every load fails
    before = jitgrad_threads()
    app = ServingApp("tiny", base, port=0, poll_seconds=0.05)
    with pytest.raises(RuntimeError, match="cannot be served"):
        with app:
            pass
    assert jitgrad_threads() == before
    assert app.server is None  # nothing listened: the server starts once a version serves
