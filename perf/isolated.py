"""PyTorch and JAX timed in processes of their own, row by row with the runner.

Importing torch loads its OpenMP runtime and importing jax starts XLA's thread pools. In
the process that times jitgrad and numpy, on two cores, either moves their times by up to
2×: numba's OpenMP threads and numpy's OpenBLAS threads then compete with them. So neither
is ever imported there. ``start()`` spawns one child per library (``python -m
perf.isolated torch``), which imports its library before jitgrad (see
``comparators.load``) and waits. Each row's process (``perf.__main__``) times jitgrad and
numpy, then asks each child in turn to time its side of the same row
(``Comparator.measure``) while it and the other child wait idle: a comparator is timed
seconds after numpy on the same row, not minutes, so that dividing numpy's median by its
median stays fair on a machine whose speed drifts.

A child builds the row with the row's own function from a Context whose generator starts
at the same seed (``Context.seeded``), so its data equal the runner's; the runner checks
that (``Result.built``: the size and where the generator ended). The child calls numpy's
side once, untimed, to check its own side's result against, and times its side with the
runner's ``measure``. Messages are one JSON object per line: requests on the child's stdin,
answers on the stdout it was started with, which it keeps for them alone (whatever the
libraries print goes to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator

from . import ROWS, Context, comparators, launch_env, register_rows
from .runner import COMPARATORS, Result, measure


class Comparator:
    """The runner's handle on one library's process."""

    def __init__(self, library: str, quick: bool):
        self.library = library
        self.installed = True
        self.about = f"{library} (its process exited before it was ready)"
        self.gone = ""  # why the process can no longer answer (empty while it can)
        command = [sys.executable, "-m", "perf.isolated", library] + ["--quick"] * quick
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=launch_env(), text=True
        )

    def ready(self) -> None:
        """Wait for the child to have imported its library (or found it missing)."""
        hello = self._receive()
        if hello is not None:
            self.installed, self.about = hello["installed"], hello["about"]

    def measure(self, result: Result, repeats: int, wait: float) -> None:
        """Time this library's side of ``result``'s row in the child; add it to ``result``
        (its time, spread and others' load, or why it was not timed)."""
        side = self.library
        if not self.installed or result.error:
            return
        answer = None
        if not self.gone:
            request = {"row": result.row.name, "repeats": repeats, "wait": wait}
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
            except OSError:  # the child has exited: _receive says how
                pass
            answer = self._receive()
        if answer is None:
            result.failed[side] = self.gone
        elif answer["error"]:
            result.failed[side] = f"its process: {answer['error']}"
        elif answer["built"] != result.built:
            result.failed[side] = f"its process built {answer['built']}, this one {result.built}"
        elif answer["failed"]:
            result.failed[side] = answer["failed"]
        elif answer["time"] is not None:
            result.times[side] = answer["time"]
            result.spread[side] = tuple(answer["spread"])
            result.loads[side] = answer["others"]

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            try:
                self.process.stdin.close()  # end of requests: the child exits
            except OSError:
                pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _receive(self) -> dict | None:
        line = self.process.stdout.readline() if not self.gone else ""
        if line:
            return json.loads(line)
        if not self.gone:
            code = self.process.wait()
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            self.gone = f"its process {how} (its error went to stderr)"
        return None


@contextlib.contextmanager
def start(quick: bool) -> Iterator[list[Comparator]]:
    """``with start(quick) as children:`` one ready Comparator per library in
    COMPARATORS, closed at the end. The children import their libraries at the same time,
    before anything is timed."""
    children: list[Comparator] = []
    try:
        for library in COMPARATORS:
            children.append(Comparator(library, quick))
        for comparator in children:
            comparator.ready()
        yield children
    finally:
        for comparator in children:
            comparator.close()


# -- the child --------------------------------------------------------------------------------


def _answer(result: Result, side: str) -> dict:
    timed = side in result.times
    return {
        "row": result.row.name,
        "error": result.error,
        "built": result.built,
        "failed": result.failed.get(side, ""),
        "time": result.times[side] if timed else None,
        "spread": result.spread[side] if timed else None,
        "others": result.others,
    }


def serve(library: str, quick: bool) -> None:
    """The child's loop: import ``library``, say so, then measure each requested row."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # prints of the libraries and the rows go to stderr

    def send(message: dict) -> None:
        answers.write(json.dumps(message) + "\n")

    module = comparators.load(library)
    if module is None:
        send({"installed": False, "about": f"{library} not installed"})
        return
    about = comparators.about(library, module)  # (before jitgrad changes the environment)
    # The rows import jitgrad: only after the library (see comparators.load).
    register_rows()

    send({"installed": True, "about": about})
    for line in sys.stdin:
        request = json.loads(line)
        ctx = Context(quick=quick, **{library: module})
        result = measure(
            ROWS[request["row"]], ctx, request["repeats"], wait=request["wait"], sides=(library,)
        )
        send(_answer(result, library))
        del result  # its case's data, before the next row builds its own


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m perf.isolated", description=__doc__)
    parser.add_argument("library", choices=COMPARATORS)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    serve(args.library, args.quick)
