"""The processes of ``python -m jitgrad.serving``: a worker serves one listening socket
with uvicorn over its own ``ServingApp`` (manager, source, loaded versions); with
``--workers N`` a small supervisor runs N of them and replaces one that dies.

Workers are spawned, not forked: each imports jitgrad afresh, so no thread or lock state
of the parent's (numba's, the BLAS pool's) is copied into them half-held.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

import uvicorn

from .app import ServingApp, uvicorn_config
from .metrics import MULTIPROCESS_DIR

log = logging.getLogger("jitgrad.serving")


def _serving_app(args: argparse.Namespace) -> ServingApp:
    return ServingApp(
        args.model_name,
        args.model_base_path,
        poll_seconds=args.poll_seconds or None,
        version_policy=args.version_policy,
        policy=args.policy,
        ram_budget_bytes=args.ram_budget_bytes,
        replicas=args.replicas,
        limits=args.limits,
        labels=args.labels,
        freeze_heap=True,
        max_load_retries=args.max_num_load_retries,
        load_retry_seconds=args.load_retry_interval_seconds,
        verify_checksums=args.verify_checksums,
    )


def setup_logging(args: argparse.Namespace) -> None:
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s"
    )


def serve(args: argparse.Namespace, sock, report) -> int:
    """One worker: load the model, call ``report(None)`` (or ``report(error)`` and return
    1 if it cannot be served), then serve ``sock`` with uvicorn until SIGINT or SIGTERM."""
    # Until uvicorn takes them over (and after it gives them back, when it raises the
    # signal it caught again), SIGINT and SIGTERM end this worker cleanly.
    previous = {sig: signal.signal(sig, _exit) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        app = _serving_app(args)
        try:
            app.start(serve=False)
        except (RuntimeError, TimeoutError) as e:  # start() has stopped what it started
            log.error("%s", e)
            report(str(e))
            return 1
        server = uvicorn.Server(uvicorn_config(app.asgi, args.limits, args.log_level.lower()))
        report(None)
        try:
            server.run(sockets=[sock])
        finally:
            log.info("shutting down")
            app.stop()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _exit(*_) -> None:
    raise SystemExit(0)


def _worker(args: argparse.Namespace, sock, conn) -> None:
    setup_logging(args)
    sys.exit(serve(args, sock, conn.send))


class Supervisor:
    """``--workers N``: N worker processes (spawned: each imports jitgrad afresh) accept on
    one listening socket; a worker that dies is replaced; SIGINT or SIGTERM stops them
    all. Their metrics meet in a multiprocess directory of prometheus_client's."""

    def __init__(self, args: argparse.Namespace, sock):
        self.args, self.sock = args, sock
        self.context = multiprocessing.get_context("spawn")
        self.metrics_dir = tempfile.mkdtemp(prefix="jitgrad-metrics-")
        os.environ[MULTIPROCESS_DIR] = self.metrics_dir  # inherited by every worker
        self.workers: list = []
        # Each worker's end of its pipe stays open while it runs: a replacement reports
        # ready too, and a send to a closed pipe would end it.
        self.pipes: list = []

    def _spawn(self):
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=_worker, args=(self.args, self.sock, send), name="jitgrad-serving-worker"
        )
        process.start()
        send.close()
        return process, receive

    def start(self, timeout: float = 300.0) -> str | None:
        """Start every worker and wait until each has loaded the model: None, or the
        first worker's error."""
        started = [self._spawn() for _ in range(self.args.workers)]
        self.workers = [process for process, _ in started]
        self.pipes = [receive for _, receive in started]
        deadline = time.monotonic() + timeout
        for process, receive in started:
            if not receive.poll(max(0.0, deadline - time.monotonic())):
                return f"worker {process.pid} did not become ready in {timeout:g} s"
            try:
                error = receive.recv()
            except EOFError:
                return f"worker {process.pid} exited with code {process.exitcode}"
            if error is not None:
                return error
        return None

    def watch(self, stop: threading.Event) -> None:
        """Until ``stop`` is set, replace workers that die."""
        from prometheus_client import multiprocess

        while not stop.wait(0.5):
            for i, process in enumerate(self.workers):
                if not process.is_alive():
                    log.warning(
                        "worker %s exited with code %s; starting another",
                        process.pid,
                        process.exitcode,
                    )
                    multiprocess.mark_process_dead(process.pid)
                    self.pipes[i].close()
                    self.workers[i], self.pipes[i] = self._spawn()

    def stop(self, timeout: float = 60.0) -> None:
        for process in self.workers:
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in self.workers:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.warning("worker %s did not stop in %s s; killing it", process.pid, timeout)
                process.kill()
                process.join()
        for receive in self.pipes:
            receive.close()
        os.environ.pop(MULTIPROCESS_DIR, None)
        shutil.rmtree(self.metrics_dir, ignore_errors=True)


def announce(args: argparse.Namespace, sock) -> None:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    print(
        f"serving model {args.model_name} from {args.model_base_path} at "
        f"http://{host}:{port}/v1/models/{args.model_name}",
        flush=True,
    )


def supervise(args: argparse.Namespace, sock) -> int:
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    supervisor = Supervisor(args, sock)
    try:
        error = supervisor.start()
        if error is not None:
            logging.error("%s", error)
            return 1
        announce(args, sock)
        supervisor.watch(stop)
        logging.info("shutting down")
        return 0
    finally:
        supervisor.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["Supervisor", "announce", "serve", "setup_logging", "supervise"]
