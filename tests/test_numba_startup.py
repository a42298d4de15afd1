"""jitgrad's start-up of numba: no SciPy import, numba's BLAS use as it was, and cached
functions loaded without the target's refresh."""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from jitgrad import _numba_startup

_CHILD = """
import sys
import numpy as np
import jitgrad as jg
assert np.array_equal((jg.arange(4.0) * 2).numpy(), np.arange(4.0) * 2)
print("scipy.linalg" in sys.modules)

from numba import njit
from numba.np import arraymath, linalg
print(arraymath._HAVE_BLAS)
print(linalg.ensure_blas.__module__, arraymath.ensure_blas is linalg.ensure_blas)

rng = np.random.default_rng(0)
a, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
dot = njit(lambda p, q: np.dot(p, q))
print(np.allclose(dot(a, b), a @ b), "scipy.linalg.cython_blas" in sys.modules)
print(np.allclose(njit(lambda m: np.cov(m))(a), np.cov(a)))
"""


def test_jitgrad_runs_kernels_without_importing_scipy_and_numba_blas_still_works():
    if importlib.util.find_spec("scipy") is None:
        pytest.skip("SciPy is not installed: numba's probe costs nothing")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    scipy_imported, have_blas, restored, dot, cov = out[:5]
    assert scipy_imported == "False"
    assert have_blas == "True"  # the answer numba's own import of SciPy gives
    assert restored == "numba.np.linalg True"
    assert dot == "True True"  # njit's np.dot imported SciPy's BLAS through numba's check
    assert cov == "True"


def test_the_probe_looks_for_scipys_blas_extension(tmp_path, monkeypatch):
    linalg = tmp_path / "scipy" / "linalg"
    linalg.mkdir(parents=True)
    spec = importlib.machinery.ModuleSpec("scipy", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path / "scipy")]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    with pytest.raises(ImportError, match="scipy"):
        _numba_startup._scipy_blas_installed()
    (linalg / ("cython_blas" + importlib.machinery.EXTENSION_SUFFIXES[0])).touch()
    _numba_startup._scipy_blas_installed()

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="scipy"):
        _numba_startup._scipy_blas_installed()


_WITHOUT_THE_PROBE = """
import sys
from numba.np import linalg
probe = linalg.ensure_blas
del linalg.ensure_blas  # as in a numba that does not probe SciPy this way
import jitgrad as jg
assert "numba.np.arraymath" not in sys.modules  # jitgrad stood aside
linalg.ensure_blas = probe  # (numba's own arraymath needs it, to run a kernel below)
assert (jg.arange(3.0) * 2).tolist() == [0.0, 2.0, 4.0]
"""


def test_a_numba_without_the_probe_starts_as_it_is():
    subprocess.run([sys.executable, "-c", _WITHOUT_THE_PROBE], check=True)


_LOAD_OR_COMPILE = """
import json
import numpy as np
import jitgrad as jg
from numba.core import base

refreshes = []
refresh = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: (refreshes.append(1), refresh(self))[1]

x = jg.arange(1 << 19, dtype=jg.float32)  # beyond the numpy tier
y = jg.tanh(x * 1e-4 + 0.5)  # a kernel: compiled, or loaded from the cache
assert np.allclose(y.numpy(), np.tanh(np.arange(1 << 19, dtype=np.float32) * 1e-4 + 0.5))
stats = jg.jit.stats()
loaded_refreshes = len(refreshes)

from numba import njit  # a new function compiles as numba compiles: registries installed

def lookup(key):
    table = {1: 2.5, 3: 4.5}  # a typed dict: numba's registries, not the runtime alone
    return table[key]

print(json.dumps([stats["compiled"], stats["disk_hits"], loaded_refreshes, njit(lookup)(3)]))
"""


def test_a_cached_kernel_loads_without_refreshing_numba_and_later_compiles_refresh(tmp_path):
    env = {
        **os.environ,
        "JITGRAD_CACHE_DIR": str(tmp_path),
        "JITGRAD_COMPILE_AFTER_CALLS": "1",
    }

    def child():
        out = subprocess.run(
            [sys.executable, "-c", _LOAD_OR_COMPILE], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.splitlines()[-1])

    compiled, _, _, found = child()
    assert compiled >= 1 and found == 4.5
    compiled, disk_hits, refreshes, found = child()
    assert (compiled, refreshes, found) == (0, 0, 4.5)
    assert disk_hits >= 1
