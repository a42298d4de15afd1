"""A damaged kernel cache entry costs a warning and a compile, never a crash: each file of
an entry is damaged in turn (a flipped byte at its start, middle or end, or a truncation),
each in a copy of its own, and a fresh process that loads every copy in turn (forgetting its
kernels between them) must still compute the right values and leave each entry whole."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitgrad import config
from jitgrad.jit import cache

# One small kernel module, compiled quickly.
PROBE = """
from numba import njit


@njit(cache=True, error_model="numpy", nogil=True)
def serial(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * 3.0 + 1.0
"""

# The child loads the probe through the cache, then forgets it and loads it again: the
# second load reads the entry back from disk (new dispatchers, numba's files). Given cache
# directories as arguments, it does so in each in turn, each with its warnings of its own.
_CHILD = f"""
import json, sys, warnings
import numpy as np
from jitgrad import config
from jitgrad.jit import cache


def load_and_run():
    cache.stats.kernels.clear()
    kernel = cache.get(("integrity probe",), lambda: {PROBE!r})
    x, out = np.arange(5.0), np.zeros(5)
    kernel.run("serial", x, out)
    return out.tolist(), sum(kernel.module.serial.stats.cache_hits.values())


def report():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, hits_first = load_and_run()
        again, hits_again = load_and_run()
    return dict(
        values=[first, again],
        disk_hits=[hits_first, hits_again],
        warnings=[f"{{w.category.__name__}}: {{w.message}}" for w in caught],
    )


if len(sys.argv) == 1:
    print(json.dumps(report()))
for directory in sys.argv[1:]:
    config.cache_dir = directory
    print(json.dumps(report()))
"""

EXPECTED = [1.0, 4.0, 7.0, 10.0, 13.0]


def run_child(cache_dir):
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True)


def run_child_in_each(cache_dirs) -> list[dict]:
    """One child's reports, one for each of ``cache_dirs`` in turn."""
    argv = [sys.executable, "-c", _CHILD, *map(str, cache_dirs)]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def entry_files(cache_dir) -> dict[str, Path]:
    """The entry's files by kind: the module and its bytecode, numba's index and data."""
    kernels = cache_dir / "kernels"
    (module,) = kernels.glob("k_*.py")
    compiled = sorted((kernels / "__pycache__").iterdir())
    found = {"py": module}
    for kind in ("pyc", "nbi", "nbc"):
        (found[kind],) = [p for p in compiled if p.suffix == "." + kind]
    return found


@pytest.fixture(scope="module")
def good_entry(tmp_path_factory):
    """A cache directory holding the probe's one entry, compiled once for all cases."""
    cache_dir = tmp_path_factory.mktemp("good-entry")
    done = run_child(cache_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["disk_hits"] == [0, 1] and "damaged" not in done.stderr
    return cache_dir


def damage(path, where: str) -> None:
    data = bytearray(path.read_bytes())
    if where == "sealed garbage":  # a checksum that holds over bytes numba cannot load
        data = cache._seal(b"\x80\x05not what numba or marshal wrote")
    elif where == "truncated":
        del data[len(data) // 2 :]
    else:
        at = {"start": 0, "middle": len(data) // 2, "end": len(data) - 1}[where]
        data[at] ^= 0x5A
    path.write_bytes(bytes(data))


DAMAGES = [
    (kind, where)
    for kind in ("py", "pyc", "nbi", "nbc")
    for where in ("start", "middle", "end", "truncated", "sealed garbage")
    # Sealed garbage fails in marshal (bytecode) or in numba's load (index and data alike);
    # the module is not sealed.
    if where != "sealed garbage" or kind in ("pyc", "nbc")
]


@pytest.fixture(scope="module")
def damaged_entries(good_entry, tmp_path_factory):
    """For each of DAMAGES: a copy of the good entry damaged so, its files whole (as they
    were before the damage), and the child's report of loading it."""
    cases = {}
    for kind, where in DAMAGES:
        cache_dir = tmp_path_factory.mktemp(f"damaged-{kind}-{where.replace(' ', '-')}")
        shutil.copytree(good_entry, cache_dir, dirs_exist_ok=True)
        files = entry_files(cache_dir)
        whole = {k: p.read_bytes() for k, p in files.items()}
        damage(files[kind], where)
        cases[kind, where] = cache_dir, files, whole
    reports = run_child_in_each(cache_dir for cache_dir, _, _ in cases.values())
    assert len(reports) == len(cases)
    return {case: (*found, report) for (case, found), report in zip(cases.items(), reports)}


@pytest.mark.parametrize(("kind", "where"), DAMAGES)
def test_a_damaged_file_is_rebuilt_with_a_warning(damaged_entries, kind, where):
    cache_dir, files, whole, report = damaged_entries[kind, where]
    assert report["values"] == [EXPECTED, EXPECTED]
    # Compiled again after the warning; then read back from disk, with no other warning.
    assert report["disk_hits"] == [0, 1]
    entry = files["py"].stem
    (warning,) = [w for w in report["warnings"] if w.startswith("RuntimeWarning")]
    assert f"kernel cache entry {entry}" in warning and "damaged" in warning
    # The entry is whole again: the module as generated, every other file sealed.
    rebuilt = entry_files(cache_dir)
    assert rebuilt["py"].read_bytes() == whole["py"]
    for k in ("pyc", "nbi", "nbc"):
        cache._unseal(rebuilt[k].read_bytes(), rebuilt[k])


def test_concurrent_processes_never_read_each_others_partial_files(tmp_path):
    """Processes filling one empty cache at once each write a private file and rename it:
    none sees a half-written one (it would be reported damaged)."""
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(tmp_path))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for child in children:
        out, err = child.communicate()
        assert child.returncode == 0, err
        assert json.loads(out)["values"] == [EXPECTED, EXPECTED] and "damaged" not in err
    assert not list(tmp_path.rglob("*.tmp*"))  # no temporary file is left behind


def test_an_index_damaged_before_a_save_is_written_afresh(tmp_path, monkeypatch):
    """numba reads the index again to add an overload to it: damage found then is
    reported and the index rewritten, and the compiled function is kept."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(cache.stats, "kernels", {})
    kernel = cache.get(("integrity probe",), lambda: PROBE)
    x, out = np.arange(5.0), np.zeros(5)
    kernel.run("serial", x, out)
    files = entry_files(tmp_path)
    damage(files["nbi"], "middle")
    serial = kernel.module.serial
    (signature,) = serial.signatures
    with pytest.warns(RuntimeWarning, match=f"entry {files['py'].stem} .* is damaged"):
        serial._cache.save_overload(signature, serial.overloads[signature])
    for k in ("nbi", "nbc"):
        cache._unseal(files[k].read_bytes(), files[k])
    assert serial._cache.load_overload(signature, serial.targetctx) is not None


def test_functions_a_kernel_imports_keep_numbas_own_cache(tmp_path, monkeypatch):
    """Sealing belongs to the kernel's own functions: the converters every kernel imports
    are cached by numba in its own format, which other processes read as numba does."""
    from jitgrad.storage import convert

    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(cache.stats, "kernels", {})
    source = "from jitgrad.storage.convert import half_to_float\n" + PROBE
    kernel = cache.get(("integrity probe", "imports"), lambda: source)
    kernel.run("serial", np.arange(5.0), np.zeros(5))
    assert isinstance(kernel.module.serial._cache, cache._KernelFunctionCache)
    assert type(convert.half_to_float._cache) is not cache._KernelFunctionCache
