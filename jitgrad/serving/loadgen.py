"""A bounded load generator for a loopback server: many keep-alive clients on one event loop;
and ``ServerProcess``, ``python -m jitgrad.serving`` as a subprocess to aim it at.

``run_load(url, path, body, clients=200, requests=50)`` opens ``clients`` HTTP/1.1
connections and has each send ``requests`` POSTs of ``body`` one after another (or keep
sending until ``seconds`` have passed); it returns every request's latency and status.
One asyncio loop and raw streams, not a thread per client: 200 client threads would
take the cores the server is measured on. Only loopback addresses are accepted, and
every run is bounded in requests or time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field


@dataclass
class LoadResult:
    """Latencies (seconds) of answered requests, their status codes, and the failures
    (connection errors, timeouts) by description."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> int:
        return self.statuses.get(200, 0)

    @property
    def failed(self) -> int:
        return len(self.failures) + sum(n for code, n in self.statuses.items() if code != 200)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def loopback(url: str) -> tuple[str, int]:
    """(host, port) of ``url``; a ValueError for any address off this machine."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if host != "localhost" and not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the load generator only targets loopback addresses, got {host!r}")
    return host, parts.port or 80


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def _client(host, port, request, requests, deadline, timeout, result) -> None:
    reader = writer = None
    sent = 0
    while sent < requests and time.perf_counter() < deadline:
        sent += 1
        start = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port, limit=1 << 22), timeout
                )
            writer.write(request)
            status, _ = await asyncio.wait_for(_read_response(reader), timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as e:
            result.failures.append(f"{type(e).__name__}: {e}")
            if writer is not None:
                writer.close()
            reader = writer = None
            continue
        result.latencies.append(time.perf_counter() - start)
        result.statuses[status] = result.statuses.get(status, 0) + 1
    if writer is not None:
        writer.close()


def run_load(
    url: str,
    path: str,
    body: bytes,
    *,
    clients: int = 200,
    requests: int = 50,
    seconds: float | None = None,
    timeout: float = 30.0,
) -> LoadResult:
    """``clients`` connections each POST ``body`` to ``path`` up to ``requests`` times, or
    until ``seconds`` have passed when given (then ``requests`` is only a cap)."""
    host, port = loopback(url)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    result = LoadResult()

    async def main():
        deadline = time.perf_counter() + (seconds if seconds is not None else 1e9)
        await asyncio.gather(
            *(
                _client(host, port, request, requests, deadline, timeout, result)
                for _ in range(clients)
            )
        )

    start = time.perf_counter()
    asyncio.run(main())
    result.seconds = time.perf_counter() - start
    return result


class ServerProcess:
    """``python -m jitgrad.serving --model_name NAME --model_base_path BASE ARGS...`` on a
    free loopback port; ``url`` once it announced it serves. ``stop()`` sends SIGTERM
    and returns the exit code."""

    def __init__(self, name: str, base, *args: str, timeout: float = 300.0):
        command = [sys.executable, "-m", "jitgrad.serving", "--model_name", name]
        command += ["--model_base_path", os.fspath(base), "--host", "127.0.0.1", "--port", "0"]
        self.log = tempfile.TemporaryFile("w+")  # (a pipe nobody reads would fill and block)
        self.process = subprocess.Popen(
            [*command, *args], stdout=subprocess.PIPE, stderr=self.log, text=True
        )
        line = self.process.stdout.readline()  # (the server prints it once it serves)
        if " at " not in line:
            self.stop(timeout)
            raise RuntimeError(f"the server did not start: {self.stderr()[-2000:]}")
        self.url = line.rsplit(" at ", 1)[1].strip().split("/v1/")[0]

    @property
    def pids(self) -> list[int]:
        """The server's process and its workers'."""
        children = f"/proc/{self.process.pid}/task/{self.process.pid}/children"
        try:
            with open(children) as f:
                return [self.process.pid, *map(int, f.read().split())]
        except OSError:
            return [self.process.pid]

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def stop(self, timeout: float = 60.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def rss_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise ValueError(f"no VmRSS for process {pid}")


__all__ = ["LoadResult", "ServerProcess", "loopback", "rss_bytes", "run_load"]
