"""``python -m jitgrad.serving``: serves over loopback, answers, and stops on SIGTERM."""

import json
import os
import signal
import subprocess
import sys
import urllib.request

import pytest
from conftest import save_version

from jitgrad.serving.__main__ import main, parse_args

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_command_line_server_serves_and_stops_cleanly(base):
    save_version(base, 1)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jitgrad.serving",
            "--model_name",
            "tiny",
            "--model_base_path",
            base,
            "--port",
            "0",
            "--poll_seconds",
            "0.2",
            "--label",
            "stable=1",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("serving model tiny from "), process.stderr.read()
        url = line.rsplit(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"instances": [[0.5] * 8]}).encode()
        request = urllib.request.Request(
            url.replace("/tiny", "/tiny/labels/stable:predict"), data=body
        )
        with urllib.request.urlopen(request, timeout=30) as r:
            assert len(json.load(r)["predictions"][0]) == 3
        with urllib.request.urlopen(url, timeout=30) as r:
            assert json.load(r)["model_version_status"][0]["state"] == "AVAILABLE"
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
    assert code == 0
    assert "shutting down" in process.stderr.read()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--label", "stable"], "expected LABEL=VERSION"),
        (["--model_version_policy", "newest"], "version policy 'newest'"),
        (["--policy", "fast"], "invalid choice"),
        (["--max_body_bytes", "0"], "--max_body_bytes must be at least 1"),
        (["--max_in_flight", "0"], "--max_in_flight must be at least 1"),
        (["--request_timeout", "0"], "--request_timeout must be positive"),
        (["--workers", "0"], "--workers must be positive"),
        (["--poll_seconds", "-1"], "--poll_seconds must be a finite number"),
        (["--poll_seconds", "nan"], "--poll_seconds must be a finite number"),
        (["--port", "70000"], "--port must be from 0 to 65535"),
        (["--port", "-1"], "--port must be from 0 to 65535"),
        (["--ram_budget_bytes", "-5"], "--ram_budget_bytes must not be negative"),
        (["--log_level", "chatty"], "--log_level 'chatty'"),
    ],
)
def test_bad_flags_are_refused(base, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        parse_args(["--model_name", "m", "--model_base_path", base, *args])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_a_model_that_cannot_load_exits_with_its_error(base, caplog):
    save_version(base, 1)
    os.truncate(os.path.join(base, "1", "weights.jg"), 10)
    code = main(
        ["--model_name", "tiny", "--model_base_path", base, "--port", "0", "--poll_seconds", "0"]
    )
    assert code == 1
    assert "cannot be served" in caplog.text and "weights.jg" in caplog.text


def test_limits_and_checksums_come_from_flags(base):
    args = parse_args(["--model_name", "m", "--model_base_path", base])
    assert args.verify_checksums and args.workers == 1
    assert (args.limits.max_in_flight, args.limits.pool_bytes) == (256, 256 << 20)
    args = parse_args(
        ["--model_name", "m", "--model_base_path", base, "--no_verify_checksums"]
        + ["--workers", "3", "--max_in_flight", "8", "--request_timeout", "2.5"]
    )
    assert not args.verify_checksums and args.workers == 3
    assert (args.limits.max_in_flight, args.limits.request_timeout) == (8, 2.5)
