"""Rows for the drop-in corpus (``tests/dropin``): each ordinary numpy program that jitgrad
runs, timed whole with numpy and with jitgrad as its ``np``, and the corpus's total.
Informational: the programs are small, so these rows measure jitgrad's per-op overhead in
everyday code more than its kernels. A program in the corpus's table of known failures is
left out (the harness says why); the total says how many programs it covers."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

import jitgrad as jg

from . import _ROOT, Case, row

_spec = importlib.util.spec_from_file_location(
    "dropin_corpus", os.path.join(_ROOT, "tests", "dropin", "dropin_corpus.py")
)
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

RUNNING = [name for name in corpus.names() if name not in corpus.KNOWN_FAILURES]


def _case(names: list[str], size: str) -> Case:
    """Run ``names`` in turn on each side. The callables return None: the harness compares
    the programs' results, key by key, with numpy's."""
    programs = [corpus.load(name) for name in names]

    def on(module):
        def run_all():
            for program in programs:
                program.run(module)

        return run_all

    return Case(size, jitgrad=on(jg), numpy=on(np))


def _register(name: str) -> None:
    @row(f"corpus-{name}", note=f"tests/dropin/programs/{name}.py, run(np) whole")
    def _(ctx):
        return _case([name], "1 program")


for _name in RUNNING:
    _register(_name)


@row("corpus-total", note="every corpus program jitgrad runs, one after another")
def _(ctx):
    return _case(RUNNING, f"{len(RUNNING)} of {len(corpus.names())} programs")
