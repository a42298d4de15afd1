"""The notebooks run top to bottom, and the committed ones carry a full run's outputs.

Each notebook is executed in a temporary copy, in a fresh kernel started from this
interpreter (the repository's venv), with ``JITGRAD_NOTEBOOK_FAST=1`` (the notebooks shrink
their sizes, epochs and loads) and this checkout of jitgrad first on the path. Any error in
any cell fails the test.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = [
    "01_storage_and_strides",
    "02_autograd_step_by_step",
    "03_fusion_and_the_memory_floor",
    "04_jit_warmed_training",
    "05_serving_versions",
]
KERNEL = "jitgrad-notebook-test"
CELL_TIMEOUT = 300  # seconds; a fast run of a whole notebook takes well under a minute
MAX_NOTEBOOK_BYTES = 1 << 20

# Appended to each executed copy: which interpreter and which jitgrad the kernel ran.
PROBE = "import sys, jitgrad\nprint(sys.executable)\nprint(jitgrad.__file__)"


def test_the_five_notebooks_are_there():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


def _outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield from cell.get("outputs", [])


def _errors(nb) -> list[str]:
    found = []
    for out in _outputs(nb):
        if out.output_type == "error":
            found.append(f"{out.ename}: {out.evalue}")
        elif out.output_type == "stream" and out.name == "stderr" and "Traceback" in out.text:
            found.append(out.text[-500:])
    return found


def _text(nb) -> str:
    parts = []
    for out in _outputs(nb):
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_fast_mode(path, tmp_path, monkeypatch):
    work = tmp_path / path.name
    shutil.copy(path, work)
    nb = nbformat.read(work, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))

    # The kernel inherits this environment: fast mode, this checkout first on the path,
    # and the suite's kernel cache (tests/conftest.py).
    monkeypatch.setenv("JITGRAD_NOTEBOOK_FAST", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # A kernel spec of its own naming this interpreter (a user's "python3" spec may point
    # elsewhere), found first through JUPYTER_PATH; the kernel talks over Unix sockets in
    # the temporary directory, not TCP.
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "jitgrad tests",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    km = KernelManager(kernel_name=KERNEL, transport="ipc", ip=str(tmp_path / "kernel"))
    client = NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    assert not _errors(nb)
    executable, module = nb.cells[-1].outputs[0].text.split()
    assert Path(executable) == Path(sys.executable)
    assert Path(module).resolve() == (ROOT / "jitgrad" / "__init__.py").resolve()
    assert "fast mode: True" in _text(nb)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_has_outputs_of_a_full_run(path):
    assert path.stat().st_size < MAX_NOTEBOOK_BYTES, f"{path.name} is over 1 MiB"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert None not in counts, f"{path.name}: a code cell was never run"
    assert counts == sorted(counts) and len(set(counts)) == len(counts), (
        f"{path.name}: cells were not run once each, top to bottom: {counts}"
    )
    assert not _errors(nb), f"{path.name} carries error outputs"
    assert "fast mode: False" in _text(nb), f"{path.name}: outputs are not from a full run"
    images = [o for o in _outputs(nb) if "data" in o and "image/png" in o.data]
    assert images, f"{path.name} shows no plot"
