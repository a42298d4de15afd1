"""numba's start-up without the SciPy import jitgrad never uses, and without the target
refresh a cached function does not need.

At its first compile or cache load numba imports ``numba.np.arraymath``, whose module body
calls ``numba.np.linalg.ensure_blas()`` (``import scipy.linalg.cython_blas``) only to learn
whether ``np.cov`` and ``np.corrcoef`` in njit code may call BLAS. Where SciPy is installed
that import is 0.2 s of every process's start (SciPy's array-API layer walks numpy's lazy
submodules), a third of a warm start, and jitgrad's kernels never call BLAS through numba.
So jitgrad imports arraymath first, with that probe answered by finding SciPy's BLAS
extension on disk instead of importing it: the same answer, for ``np.cov`` the same code.
numba's ``ensure_blas`` is back in place before anything is compiled, so njit code that
calls BLAS imports and checks SciPy exactly as before.

Before each load from its disk cache numba refreshes its target: the first refresh imports
and installs every lowering and typing registry numba has (typed containers, random,
polynomials, ...), 0.3 s of a warm start that compiles nothing. A cached function is
machine code that needs only the runtime's symbols, so jitgrad's own functions and
kernels load after ``rtsys.initialize`` alone; the first compile refreshes the target as
numba always does, and every other function loads as numba loads it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _scipy_blas_installed() -> None:
    """``ensure_blas``'s answer without the import: an ImportError when SciPy has no BLAS."""
    spec = importlib.util.find_spec("scipy")  # the top-level package: imports nothing
    for package in (spec.submodule_search_locations or []) if spec else []:
        linalg = os.path.join(package, "linalg")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if os.path.isfile(os.path.join(linalg, "cython_blas" + suffix)):
                return
    raise ImportError("scipy 0.16+ is required for linear algebra")


def import_arraymath() -> None:
    """Import ``numba.np.arraymath`` with the on-disk BLAS probe, unless it or SciPy's
    ``linalg`` is imported already (then numba's own probe costs nothing more)."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    from numba.np import linalg

    ensure_blas = getattr(linalg, "ensure_blas", None)
    if ensure_blas is None:  # a numba without this probe: nothing to spare
        return
    linalg.ensure_blas = _scipy_blas_installed
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = ensure_blas
    arraymath.ensure_blas = ensure_blas  # its import bound the probe under that name


def load_cached_without_refresh() -> None:
    """Let jitgrad's cached functions load without the target's refresh."""
    from numba.core import caching
    from numba.core.runtime import rtsys

    numba_load = caching.Cache.load_overload
    if not hasattr(caching.Cache, "_load_overload"):  # a numba laid out otherwise: as it is
        return

    def load_overload(self, sig, target_context):
        if not getattr(self._py_func, "__module__", "").startswith(_OWN_MODULES):
            return numba_load(self, sig, target_context)
        rtsys.initialize(target_context)  # the symbols of the runtime the code calls
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    caching.Cache.load_overload = load_overload


# jitgrad's package and its generated kernel modules (``jit.cache``)
_OWN_MODULES = ("jitgrad.", "jitgrad_kernels.")

import_arraymath()
load_cached_without_refresh()
