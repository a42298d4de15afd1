"""TensorFlow Serving's REST API: status, metadata, predict, classify and regress, and a
fitting error for every kind of bad request (none of which harms the next), through the
framework-free functions of ``rest.py`` and the ASGI app in this process."""

import json
import re
import threading

import numpy as np
import pytest
from conftest import AppClient, FakeLoader, predict_in_process, save_version

import jitgrad as jg
from jitgrad import nn
from jitgrad.io import save_model
from jitgrad.serving import rest
from jitgrad.serving.asgi import Limits, create_app
from jitgrad.serving.manager import Manager
from jitgrad.serving.signature import Signature
from jitgrad.serving.source import FileSystemSource
from jitgrad.serving.state import State

T = 30
LIMIT = 4096  # bytes: the server's body limit in these tests


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    model = save_version(root / "tiny", 1)
    ids = nn.Sequential(nn.Embedding(10, 2, generator=0), nn.Flatten())
    save_model(
        ids, root / "ids" / "1", input_shape=(3,), input_dtype="int64", warmup_batch_sizes=[1]
    )
    manager = Manager()
    for name in ("tiny", "ids"):
        FileSystemSource(root / name, poll_seconds=0, name=name).connect(manager).poll()
    manager.wait_until_ready(T)
    manager.set_label("tiny", "stable", 1)
    app = create_app(manager, Limits(max_body_bytes=LIMIT))
    yield app, model, ids, manager
    app.state.frontend.close()
    manager.shutdown(T)


@pytest.fixture
def client(served):
    c = AppClient(served[0])
    yield c
    c.close()


X = np.random.default_rng(0).random((3, 8), dtype=np.float32)


def test_status(client):
    status, body = client.get("/v1/models/tiny")
    assert status == 200
    ok = {"error_code": "OK", "error_message": ""}
    assert body == {"model_version_status": [{"version": "1", "state": "AVAILABLE", "status": ok}]}
    assert client.get("/v1/models/tiny/versions/1") == (200, body)
    assert client.get("/v1/models/tiny/labels/stable") == (200, body)


def test_metadata_has_the_signature_in_tf_form(client):
    status, body = client.get("/v1/models/tiny/metadata")
    assert status == 200 and body["model_spec"] == {
        "name": "tiny",
        "signature_name": "",
        "version": "1",
    }
    sig = body["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert sig["inputs"]["x"]["dtype"] == "DT_FLOAT"
    assert [d["size"] for d in sig["inputs"]["x"]["tensor_shape"]["dim"]] == ["-1", "8"]
    assert [d["size"] for d in sig["outputs"]["output"]["tensor_shape"]["dim"]] == ["-1", "3"]
    assert client.get("/v1/models/tiny/versions/1/metadata")[1] == body


@pytest.mark.parametrize(
    "path",
    [
        "/v1/models/tiny:predict",
        "/v1/models/tiny/versions/1:predict",
        "/v1/models/tiny/labels/stable:predict",
    ],
)
def test_predict_rows_and_columns_match_the_model(served, client, path):
    model = served[1]
    expected = predict_in_process(model, X)
    status, body = client.post(path, {"instances": X.tolist()})
    assert status == 200
    np.testing.assert_allclose(body["predictions"], expected, rtol=1e-6)
    status, body = client.post(path, {"inputs": X.tolist()})
    assert status == 200
    np.testing.assert_allclose(body["outputs"], expected, rtol=1e-6)
    status, body = client.post(
        path, {"instances": [{"x": row} for row in X.tolist()], "signature_name": "serving_default"}
    )
    np.testing.assert_allclose(body["predictions"], expected, rtol=1e-6)
    status, body = client.post(path, {"inputs": {"x": X[:1].tolist()}})
    np.testing.assert_allclose(body["outputs"], expected[:1], rtol=1e-6)


def test_an_integer_model_answers_every_index_right(served, client):
    # Exercises the predictor's plan check: jg.jit bakes tensor indices in at trace time
    # (see the report), so this model is served eagerly, and correctly.
    ids = served[2]
    idx = np.array([[1, 2, 3], [9, 0, 4]])
    status, body = client.post("/v1/models/ids:predict", {"instances": idx.tolist()})
    assert status == 200
    with jg.no_grad():
        expected = ids.eval()(jg.tensor(idx)).numpy()
    np.testing.assert_allclose(body["predictions"], expected, rtol=1e-12)
    status, body = client.post("/v1/models/ids:predict", {"instances": [[1, 2, 3]]})
    np.testing.assert_allclose(body["predictions"], expected[:1], rtol=1e-12)


P, IDS = "/v1/models/tiny:predict", "/v1/models/ids:predict"
ROW = {"instances": [[0] * 8]}
BAD = [
    # (method, path, body or raw bytes, status, message fragment)
    ("POST", "/v1/models/nope:predict", ROW, 404, "model nope"),
    ("GET", "/v1/models/nope", None, 404, "model nope"),
    ("GET", "/v1/models/nope/metadata", None, 404, "model nope"),
    ("POST", "/v1/models/tiny/versions/7:predict", ROW, 404, "Specific(tiny, 7)"),
    ("GET", "/v1/models/tiny/versions/7", None, 404, "version 7"),
    ("POST", "/v1/models/tiny/labels/canary:predict", ROW, 404, "label: canary"),
    ("GET", "/v1/models/tiny/labels/canary", None, 404, "label: canary"),
    ("GET", "/v2/whatever", None, 404, "no such endpoint"),
    ("POST", "/v1/models/tiny/versions/x1:predict", ROW, 400, "version must be"),
    ("POST", "/v1/models/tiny/versions/" + "9" * 5000 + ":predict", ROW, 404, "64-bit integers"),
    ("GET", "/v1/models/tiny/versions/" + "1" * 4301, None, 404, "64-bit integers"),
    ("POST", "/v1/models/tiny/versions/" + "0" * 4400 + "7:predict", ROW, 404, "Specific(tiny, 7)"),
    ("POST", P, b"{not json", 400, "malformed JSON"),
    ("POST", P, b"\xff\xfe", 400, "malformed JSON"),
    ("POST", P, b"[" * 3000 + b"]" * 1000, 400, "malformed JSON"),
    ("POST", P, [1, 2], 400, "must be a JSON object"),
    ("POST", P, {"instances": [[0] * 8], "inputs": [[0] * 8]}, 400, "both were given"),
    ("POST", P, {"examples": [[0] * 8]}, 400, "neither was given"),
    ("POST", P, {"instances": [[0] * 7]}, 400, "expected shape (batch, 8), got (1, 7)"),
    ("POST", P, {"instances": [0] * 8}, 400, "expected shape (batch, 8), got (8,)"),
    ("POST", P, {"inputs": [[[0] * 8]]}, 400, "got (1, 1, 8)"),
    ("POST", P, {"instances": [[0] * 8, [0] * 7]}, 400, "not a rectangular array"),
    ("POST", P, {"instances": []}, 400, "non-empty list"),
    ("POST", P, {"inputs": []}, 400, "got (0,)"),
    ("POST", P, {"instances": [["a"] * 8]}, 400, "expected dtype float32"),
    ("POST", P, {"instances": [[True] * 8]}, 400, "expected dtype float32"),
    ("POST", P, {"instances": [[None] * 8]}, 400, "rectangular array of numbers"),
    ("POST", IDS, {"instances": [[1.5, 2, 3]]}, 400, "expected dtype int64"),
    ("POST", IDS, {"instances": [[10**30, 2, 3]]}, 400, "expected dtype int64"),
    ("POST", IDS, {"instances": [[2**63, 2**63 + 3, 2**64 - 1]]}, 400, "do not fit dtype int64"),
    ("POST", IDS, {"instances": [[10, 2, 3]]}, 400, "index 10 is out of range"),
    ("POST", IDS, {"instances": [[1, -1, 3]]}, 400, "index -1 is out of range"),
    ("POST", P, {"instances": [[1e300] * 8]}, 400, "overflows dtype float32"),
    ("POST", P, {"instances": [{"y": [0] * 8}]}, 400, "exactly the inputs ['x']"),
    ("POST", P, {"instances": [{"x": [0] * 8}, [0] * 8]}, 400, "mixes objects"),
    ("POST", P, {"inputs": {"y": [[0] * 8]}}, 400, "input is 'x'"),
    ("POST", P, {"inputs": [[0] * 8], "signature_name": "other"}, 400, "'other' not found"),
    ("GET", P, None, 405, "use POST"),
    ("POST", "/v1/models/tiny", {}, 405, "use GET"),
    ("DELETE", "/healthz", None, 405, "use GET"),
]


@pytest.mark.parametrize(
    "method, path, body, status, fragment", BAD, ids=[f"{row[3]}-{k}" for k, row in enumerate(BAD)]
)
def test_bad_requests_get_a_fitting_error_and_harm_nothing(
    served, client, method, path, body, status, fragment
):
    got, text, response = client.request(method, path, body, raw=True)
    assert got == status, text
    assert response.headers["Content-Type"] == "application/json"
    assert fragment in json.loads(text)["error"]
    status, body = client.post("/v1/models/tiny:predict", {"instances": X[:1].tolist()})
    assert status == 200
    np.testing.assert_allclose(body["predictions"], predict_in_process(served[1], X[:1]), rtol=1e-6)


def test_the_functions_answer_without_a_framework(served):
    manager = served[3]
    endpoint = rest.parse("POST", "/v1/models/tiny/labels/stable:predict")
    assert endpoint == rest.Endpoint("predict", "tiny", None, "stable") and endpoint.inference
    answer, data = rest.respond(manager, endpoint, json.dumps({"inputs": X.tolist()}).encode())
    assert (answer.status, answer.model, answer.version) == (200, "tiny", "1")
    np.testing.assert_allclose(json.loads(data)["outputs"], predict_in_process(served[1], X))
    assert rest.parse("GET", "/monitoring/prometheus/metrics").api == "metrics"
    with pytest.raises(rest.HTTPError, match="use GET") as info:
        rest.parse("POST", "/v1/models/tiny/versions/1/metadata")
    assert info.value.status == 405
    assert rest.answer(manager, rest.parse("GET", "/v1/models/tiny/versions/9")).status == 404
    assert rest.ready(manager).status == 200


def test_classify_and_regress_follow_tf_servings_examples_format(served, client):
    expected = predict_in_process(served[1], X)
    examples = {"examples": [{"x": row} for row in X.tolist()]}
    status, body = client.post("/v1/models/tiny:classify", examples)
    assert status == 200 and len(body["results"]) == len(X)
    for row, want in zip(body["results"], expected):
        assert [label for label, _ in row] == ["0", "1", "2"]
        np.testing.assert_allclose([score for _, score in row], want, rtol=1e-6)
    # context: features every example shares
    status, body = client.post(
        "/v1/models/tiny/versions/1:classify",
        {"context": {"x": X[0].tolist()}, "examples": [{}, {}], "signature_name": "classification"},
    )
    assert status == 200 and len(body["results"]) == 2
    np.testing.assert_allclose([s for _, s in body["results"][1]], expected[0], rtol=1e-6)
    # three scores per example: not a regression signature
    status, body = client.post("/v1/models/tiny:regress", examples)
    assert status == 400 and "has no regress signature" in body["error"]
    meta = client.get("/v1/models/tiny/metadata")[1]["metadata"]["signature_def"]["signature_def"]
    assert meta["classification"]["method_name"] == "tensorflow/serving/classify"
    assert "regression" not in meta
    bad = client.post("/v1/models/tiny:classify", {"examples": [{"y": [0] * 8}]})
    assert bad[0] == 400 and "exactly the features ['x']" in bad[1]["error"]


def test_regress_answers_one_value_per_example(tmp_path):
    rng = jg.random.default_rng(0)
    model = nn.Sequential(nn.Linear(2, 1, dtype=jg.float32, generator=rng)).eval()
    save_model(model, tmp_path / "r" / "1", input_shape=(2,), warmup_batch_sizes=[1])
    manager = Manager()
    FileSystemSource(tmp_path / "r", poll_seconds=0, name="r").connect(manager).poll()
    manager.wait_until_ready(T)
    app = create_app(manager)
    client = AppClient(app)
    try:
        x = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
        status, body = client.post(
            "/v1/models/r:regress", {"examples": [{"x": r} for r in x.tolist()]}
        )
        assert status == 200
        np.testing.assert_allclose(body["results"], predict_in_process(model, x)[:, 0], rtol=1e-6)
        status, body = client.post("/v1/models/r:classify", {"examples": [{"x": [0, 0]}]})
        assert status == 400 and "has no classify signature" in body["error"]
    finally:
        client.close()
        app.state.frontend.close()
        manager.shutdown(T)


def test_a_failing_model_is_a_500_for_that_request_only(served, client, monkeypatch):
    with served[3].get_servable_handle("tiny") as handle:
        predictor = handle.servable

    def broken(inputs):
        raise FloatingPointError("the model broke")

    monkeypatch.setattr(type(predictor), "__call__", lambda self, inputs: broken(inputs))
    status, body = client.post("/v1/models/tiny:predict", {"instances": X[:1].tolist()})
    assert status == 500 and "FloatingPointError: the model broke" in body["error"]
    monkeypatch.undo()
    assert client.post("/v1/models/tiny:predict", {"instances": X[:1].tolist()})[0] == 200


@pytest.mark.parametrize("path", ["/metrics", "/monitoring/prometheus/metrics"])
def test_health_readiness_and_metrics(served, client, path):
    assert client.get("/healthz") == (200, {"status": "live"})
    ready = {"ready": True, "available_versions": {"ids": [1], "tiny": [1]}}
    assert client.get("/readyz") == (200, ready)
    client.post("/v1/models/tiny:predict", {"instances": X[:1].tolist()})
    client.post("/v1/models/tiny:predict", {"instances": [[0] * 7]})
    status, text, response = client.request("GET", path, raw=True)
    assert status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    lines = text.splitlines()

    def value(prefix):
        (line,) = [x for x in lines if x.startswith(prefix + " ")]
        return float(line.rsplit(" ", 1)[1])

    labels = 'api="predict",model="tiny",version="1"'
    assert (
        value('jitgrad_serving_requests_total{api="predict",code="200",model="tiny",version="1"}')
        >= 1
    )
    assert (
        value('jitgrad_serving_requests_total{api="predict",code="400",model="tiny",version="1"}')
        >= 1
    )
    assert value(f"jitgrad_serving_request_duration_seconds_count{{{labels}}}") >= 2
    inf = 'api="predict",le="+Inf",model="tiny",version="1"'
    assert value(f"jitgrad_serving_request_duration_seconds_bucket{{{inf}}}") >= 2
    assert value('jitgrad_serving_load_seconds{model="tiny",version="1"}') > 0
    assert value('jitgrad_serving_warmup_seconds{model="tiny",version="1"}') > 0
    assert value('jitgrad_serving_version_state{model="tiny",state="available",version="1"}') == 1
    states = [x for x in lines if x.startswith('jitgrad_serving_version_state{model="tiny"')]
    assert sum(float(x.rsplit(" ", 1)[1]) for x in states) == 1  # one current state
    assert value("jitgrad_serving_in_flight_requests") == 0
    assert not any('model="nope"' in x for x in lines)  # unknown names never become labels


def test_versions_and_names_clients_make_up_never_become_metric_labels(served, client):
    def predict(path):
        return client.post(path, {"instances": X[:1].tolist()})[0]

    for n in (7, 8, 99999999999999999999999):
        assert client.get(f"/v1/models/tiny/versions/{n}")[0] == 404
        assert client.get(f"/v1/models/tiny/versions/{n}/metadata")[0] == 404
        assert predict(f"/v1/models/tiny/versions/{n}:predict") == 404
        assert client.get(f"/v1/models/made-up-{n}/versions/{n}")[0] == 404
    assert client.get("/v1/models/tiny/labels/canary")[0] == 404
    assert predict("/v1/models/tiny/versions/1:predict") == 200
    assert client.get("/v1/models/tiny/labels/stable")[0] == 200
    text = client.request("GET", "/metrics", raw=True)[1]
    versions = set(re.findall(r'version="([^"]*)"', text))
    assert versions <= {"", "1"}, versions
    assert "made-up" not in text
    line = 'jitgrad_serving_requests_total{api="status",code="404",model="tiny",version=""} '
    assert any(x.startswith(line) for x in text.splitlines())  # counted, under no version


class _ComplexServable:
    """Answers every request with a complex output, which JSON cannot hold."""

    signature = Signature.from_manifest(
        {
            "inputs": {"x": {"dtype": "complex64", "shape": [-1, 1]}},
            "outputs": {"y": {"dtype": "complex64", "shape": [-1, 1]}},
        }
    )

    def __call__(self, inputs):
        return {"y": self.signature.check(inputs)["x"] * 1j}


def _serve_fake(name: str, loader) -> tuple[Manager, AppClient]:
    manager = Manager()
    manager.set_aspired_versions(name, {1: loader})
    return manager, AppClient(create_app(manager))


def test_an_answer_json_cannot_hold_is_a_500():
    loader = FakeLoader()
    loader.load = lambda: setattr(loader, "_servable", _ComplexServable())
    manager, client = _serve_fake("cplx", loader)
    manager.wait_until_available("cplx", 1, T)
    try:
        status, body = client.post("/v1/models/cplx:predict", {"instances": [[1.0]]})
        assert status == 500 and "cannot be sent as JSON" in body["error"]
        assert client.get("/v1/models/cplx")[0] == 200
    finally:
        client.close()
        manager.shutdown(T)


def test_not_ready_and_503_while_the_first_version_loads():
    gate = threading.Event()
    manager, client = _serve_fake("slow", FakeLoader(gate=gate))
    try:
        status, body = client.get("/readyz")
        assert status == 503 and body["ready"] is False
        status, text, response = client.request(
            "POST", "/v1/models/slow:predict", {"instances": [[1]]}, raw=True
        )
        assert status == 503 and "no available version" in json.loads(text)["error"]
        assert response.headers["Retry-After"] == "1"
        status, body = client.get("/v1/models/slow")
        assert body["model_version_status"][0]["state"] == "LOADING"
    finally:
        gate.set()
        client.close()
        manager.shutdown(T)


def test_a_failed_version_reports_end_with_its_error():
    manager, client = _serve_fake("m", FakeLoader(fail=FileNotFoundError("gone")))
    manager.wait_until_state("m", 1, {State.ERROR}, T)
    status, body = client.get("/v1/models/m")
    client.close()
    manager.shutdown(T)
    assert status == 200
    assert body["model_version_status"] == [
        {
            "version": "1",
            "state": "END",
            "status": {"error_code": "NOT_FOUND", "error_message": "FileNotFoundError: gone"},
        }
    ]


def test_the_module_docstring_lists_every_error_status_tested_here():
    for status in {row[3] for row in BAD} | {500, 503}:
        assert str(status) in rest.__doc__, status
