"""The perf runner runs and writes its report (smoke only: timings are never asserted)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_writes_the_report(tmp_path):
    out = tmp_path / "RESULTS.md"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "perf",
            "--quick",
            "--repeat",
            "1",
            "--output",
            str(out),
            "--rows",
            "fill-f32",  # a row with no jax side
            "transpose-small-f32",  # a row every side times
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    text = out.read_text()
    assert "| fill-f32 |" in text and "| transpose-small-f32 |" in text
    assert "## Machine" in text and "ERROR" not in text
    for side in ("torch", "jax"):  # their columns are there, installed or not
        assert f"| {side} | {side} vs numpy |" in text
        if importlib.util.find_spec(side) is None:
            assert "not installed" in text
        else:  # timed in its own process, row by row with jitgrad and numpy
            line = next(s for s in text.splitlines() if s.startswith("| transpose-small-f32 |"))
            assert "not timed" not in line
