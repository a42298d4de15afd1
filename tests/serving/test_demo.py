"""serve_once: the demo's serving leg starts, answers one request and stops."""

import threading

from conftest import predict_in_process, save_version

from jitgrad.serving.demo import _example, serve_once


def test_serve_once_answers_one_request_and_shuts_down(base):
    model = save_version(base, 1)
    lines = []
    threads_before = threading.active_count()
    response = serve_once(base, "tiny", out=lines.append)
    sample, _ = _example([-1, 8], "float32")
    expected = predict_in_process(model, sample[None])
    assert abs(response["predictions"][0][0] - float(expected[0][0])) < 1e-6
    assert lines[0].startswith("served tiny version 1 at http://127.0.0.1:")
    assert "POST /v1/models/tiny:predict" in lines[1] and lines[-1] == "server stopped"
    assert threading.active_count() <= threads_before  # nothing left running
