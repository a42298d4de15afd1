"""``python -m jitgrad.serving``: serve a model directory over TensorFlow Serving's REST API.

    python -m jitgrad.serving --model_name digits --model_base_path ./models/digits --port 8501

New versions saved under the base path (``<base>/<version>/``, complete once their
``manifest.json`` exists) are picked up every ``--poll_seconds``, loaded and warmed on a
background thread and swapped in without a restart. uvicorn serves the ASGI application
(``asgi.py``); ``--workers N`` runs N processes over one listening socket, each with its
own manager and source. SIGINT or SIGTERM shut down cleanly.
"""

from __future__ import annotations

import argparse
import logging

from .app import POLICIES, listen
from .asgi import Limits
from .source import parse_version_policy
from .workers import announce, serve, setup_logging, supervise

log = logging.getLogger("jitgrad.serving")
DEFAULTS = Limits(pool_bytes=256 << 20)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m jitgrad.serving",
        description="Serve the versions of a jitgrad model directory over TensorFlow "
        "Serving's REST API (/v1/models/NAME[:predict|/metadata]).",
    )
    parser.add_argument("--model_name", required=True, help="the name clients use in URLs")
    parser.add_argument(
        "--model_base_path",
        required=True,
        help="directory holding one subdirectory per version (1/, 2/, ...)",
    )
    parser.add_argument(
        "--port", type=int, default=8501, help="HTTP port (default: 8501; 0 picks a free one)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to bind (default: "
        "127.0.0.1, this machine only; 0.0.0.0 opts into every "
        "interface)",
    )
    parser.add_argument(
        "--poll_seconds",
        type=float,
        default=1.0,
        help="seconds between scans of the base path for versions (default: 1; 0 scans once)",
    )
    parser.add_argument(
        "--max_body_bytes",
        type=int,
        default=DEFAULTS.max_body_bytes,
        help=f"largest request body accepted, in bytes (default: {DEFAULTS.max_body_bytes})",
    )
    parser.add_argument(
        "--model_version_policy",
        default="latest:1",
        help="versions to serve: latest, latest:N, all or specific:V1,V2 (default: latest:1)",
    )
    parser.add_argument(
        "--policy",
        choices=sorted(POLICIES),
        default="availability",
        help="version transitions: availability (load the new version before "
        "unloading the old; default) or resource (unload first)",
    )
    parser.add_argument(
        "--ram_budget_bytes",
        type=int,
        default=None,
        help="refuse loads whose estimate does not fit this budget (default: unlimited)",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        default=2,
        help="requests of a warmed batch size that may run at once per version (default: 2)",
    )
    parser.add_argument(
        "--max_num_load_retries",
        type=int,
        default=5,
        help="times a version whose load failed is tried again on later polls (default: 5)",
    )
    parser.add_argument(
        "--load_retry_interval_seconds",
        type=float,
        default=5.0,
        help="seconds after a failed load before it is tried again (default: 5)",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="LABEL=VERSION",
        help="point a version label (stable, canary) at a version once it is available; repeatable",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes, each with its own manager and source over the same base "
        "path, sharing the port (default: 1)",
    )
    parser.add_argument(
        "--max_in_flight",
        type=int,
        default=DEFAULTS.max_in_flight,
        help="inference requests a worker works on at once; one more is 503 with "
        f"Retry-After (default: {DEFAULTS.max_in_flight})",
    )
    parser.add_argument(
        "--request_timeout",
        type=float,
        default=DEFAULTS.request_timeout,
        help="seconds from a request's arrival: a body still incomplete then is 408, "
        f"inference not done then is 504 (default: {DEFAULTS.request_timeout:g})",
    )
    parser.add_argument(
        "--predict_threads",
        type=int,
        default=DEFAULTS.predict_threads,
        help=f"threads per worker that run inference (default: {DEFAULTS.predict_threads})",
    )
    parser.add_argument(
        "--pool_bytes",
        type=int,
        default=DEFAULTS.pool_bytes,
        help="bytes of freed buffers jitgrad keeps for reuse per worker "
        f"(default: {DEFAULTS.pool_bytes})",
    )
    parser.add_argument(
        "--no_verify_checksums",
        dest="verify_checksums",
        action="store_false",
        help="skip hashing every file of a version against its manifest's sha256",
    )
    parser.add_argument("--log_level", default="INFO", help="logging level (default: INFO)")
    args = parser.parse_args(argv)
    try:
        args.version_policy = parse_version_policy(args.model_version_policy)
        args.labels = {}
        for item in args.label:
            label, sep, version = item.partition("=")
            if not sep or not label or not version.isdigit():
                raise ValueError(f"--label {item!r}: expected LABEL=VERSION, e.g. stable=1")
            args.labels[label] = int(version)
    except ValueError as e:
        parser.error(str(e))
    if args.replicas <= 0 or args.workers <= 0:
        parser.error("--replicas and --workers must be positive")
    try:
        args.limits = Limits(
            args.max_body_bytes,
            args.max_in_flight,
            args.request_timeout,
            args.predict_threads,
            args.pool_bytes,
        )
    except ValueError as e:  # its message starts with the field's name, the flag's
        parser.error(f"--{e}")
    # Checked here, not left to the socket, the budget or logging: each would end the
    # server with a traceback instead of a usage error.
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be from 0 to 65535, got {args.port}")
    if args.ram_budget_bytes is not None and args.ram_budget_bytes < 0:
        parser.error(f"--ram_budget_bytes must not be negative, got {args.ram_budget_bytes}")
    if args.log_level.upper() not in logging.getLevelNamesMapping():
        parser.error(
            f"--log_level {args.log_level!r}: expected one of DEBUG, INFO, WARNING, "
            "ERROR or CRITICAL"
        )
    if not 0 <= args.poll_seconds < float("inf"):
        parser.error(
            f"--poll_seconds must be a finite number of seconds >= 0, got {args.poll_seconds}"
        )
    if args.max_num_load_retries < 0 or args.load_retry_interval_seconds < 0:
        parser.error(
            "--max_num_load_retries and --load_retry_interval_seconds must not be negative"
        )
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    setup_logging(args)
    try:
        sock = listen(args.host, args.port)
    except OSError as e:  # the port is taken, the host is not this machine's
        logging.error("cannot listen on %s:%s: %s", args.host, args.port, e.strerror or e)
        return 1
    try:
        if args.workers == 1:
            return serve(args, sock, lambda error: error is None and announce(args, sock))
        return supervise(args, sock)
    finally:
        sock.close()


if __name__ == "__main__":
    raise SystemExit(main())
