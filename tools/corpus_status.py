"""``python -m tools.corpus_status``: run every drop-in corpus program (tests/dropin) with
numpy and with jitgrad, and say which give numpy's results and where each other one first
fails: the facts behind the corpus's table of known failures (``KNOWN_FAILURES`` in
tests/dropin/dropin_corpus.py), which this prints up to date at the end."""

from __future__ import annotations

import sys
import traceback
import warnings
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "dropin"))
from dropin_corpus import KNOWN_FAILURES, assert_same_result, names, run  # noqa: E402


def status(name: str, jitgrad) -> str:
    """The empty string when ``name`` gives numpy's results under jitgrad, else its first
    failure: the exception and the program's line that raised it, or the first result that
    differs."""
    expected = run(name, numpy)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = run(name, jitgrad)
    except Exception as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "programs" in f.filename]
        where = f" at line {frames[-1].lineno}: {frames[-1].line}" if frames else ""
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}{where}"
    if sorted(got) != sorted(expected):
        return f"results named {sorted(got)}, numpy's {sorted(expected)}"
    for key, value in expected.items():
        try:
            assert_same_result(key, got[key], value)
        except AssertionError as exc:
            return f"result differs: {str(exc).strip().splitlines()[0][:160]}"
    return ""


def main() -> int:
    import jitgrad

    print(f"jitgrad from {Path(jitgrad.__file__).parent}")
    failing = {}
    for name in names():
        why = status(name, jitgrad)
        print(f"{name:28} {'PASS' if not why else 'FAIL ' + why}")
        if why:
            failing[name] = KNOWN_FAILURES.get(name, why)
    print(f"\n{len(names()) - len(failing)} of {len(names())} programs give numpy's results.")
    print("KNOWN_FAILURES (an entry kept where the table has one; check that it still holds):")
    print("{\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in failing.items()) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
