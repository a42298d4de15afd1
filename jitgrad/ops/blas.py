"""How many threads BLAS spends on one matrix product.

OpenBLAS splits every product above 2^18 multiply-adds across all its threads. On a
training step's small products (a 64×64 batch by a 64×128 weight) the split costs more than
it saves, and each half of the result lands in a different core's cache, where the
elementwise kernel after it has to fetch it from: on the 2-core machine the batch-64 digits
step took 51 µs in some processes and 77 µs in others with two BLAS threads, and 57 µs in
every process with one. Products of at most ``config.blas_one_thread_up_to`` multiply-adds
therefore run on the calling thread alone, through OpenBLAS's per-thread setting
(``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later), which leaves every other
thread's BLAS, and this thread's next large product, as they were. With another BLAS, or an
older OpenBLAS, products run as numpy runs them.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from .._config import config
from ..recording import _into


def _loaded_openblas_paths() -> list[str]:
    """Shared libraries named like OpenBLAS mapped into this process, numpy's own first."""
    try:
        with open("/proc/self/maps") as maps:  # address perms offset device inode [path]
            paths = {fields[5] for fields in map(str.split, maps) if len(fields) == 6}
    except OSError:
        return []  # not Linux: no per-thread setting, products run as numpy runs them
    found = [p for p in paths if "openblas" in os.path.basename(p).lower() and ".so" in p]
    numpy_libs = os.path.dirname(np.__file__) + ".libs"
    return sorted(found, key=lambda p: not p.startswith(numpy_libs))


def _thread_local_setter():
    """OpenBLAS's ``openblas_set_num_threads_local(n) -> previous``, or None."""
    for path in _loaded_openblas_paths():
        try:
            setter = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


set_threads_here = _thread_local_setter()


def matmul_on_this_thread(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out)`` with BLAS on the calling thread only."""
    previous = set_threads_here(1)
    try:
        np.matmul(a, b, out)
    finally:
        set_threads_here(previous)


def switched_once(calls: list) -> list | None:
    """``calls`` ((function, arguments) pairs, a jitted plan's) rewritten to run with BLAS
    on this thread throughout, their small products as plain matmuls: one switch around
    them all instead of one around each (0.2 µs apiece). None when that does not apply:
    fewer than two small products, or any other call that may use BLAS (a large product,
    a recorded numpy computation)."""
    functions = [fn for fn, _ in calls]
    if functions.count(matmul_on_this_thread) < 2 or np.matmul in functions or _into in functions:
        return None
    return [(np.matmul if fn is matmul_on_this_thread else fn, args) for fn, args in calls]


def matmul_for(a: np.ndarray, b: np.ndarray, out: np.ndarray):
    """The function that writes ``a @ b`` into ``out``: ``matmul_on_this_thread`` for a
    small product, numpy's matmul otherwise."""
    if set_threads_here is None:
        return np.matmul
    multiply_adds = out.size * b.shape[-2 if b.ndim > 1 else 0]
    return matmul_on_this_thread if multiply_adds <= config.blas_one_thread_up_to else np.matmul
