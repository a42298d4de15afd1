"""How many threads BLAS spends on one matrix product.

OpenBLAS splits every product above about 2^18 multiply-adds across all its threads. On a
training step's small products (a 64×64 batch by a 64×128 weight) the split costs more than
it saves, and each half of the result lands in a different core's cache, where the
elementwise kernel after it has to fetch it from. On the 2-core machine the batch-64 digits
step took 48 µs with one BLAS thread against 57–61 µs with two (OpenBLAS's AVX-512
kernels), and with its AVX2 kernels 57 µs in every process against 51 or 77 µs by process.
So a jitted plan's products of at most ``config.blas_one_thread_up_to`` multiply-adds run
with OpenBLAS on one thread (``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later).

That setting is process-wide in the pthreads OpenBLAS numpy ships, despite its name: every
switch holds one lock, so that switches from several threads never interleave (which could
leave the process on one thread for good) and nest within one thread; each restores what
it found. A product another thread starts meanwhile also runs on one thread. With another
BLAS, or an older OpenBLAS, products run as numpy runs them.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from .. import threads
from .._config import config
from ..recording import _into


def _loaded_openblas_paths() -> list[str]:
    """Shared libraries named like OpenBLAS mapped into this process, numpy's own first."""
    try:
        with open("/proc/self/maps") as maps:  # address perms offset device inode [path]
            paths = {fields[5] for fields in map(str.split, maps) if len(fields) == 6}
    except OSError:
        return []  # not Linux: products run as numpy runs them
    found = [p for p in paths if "openblas" in os.path.basename(p).lower() and ".so" in p]
    numpy_libs = os.path.dirname(np.__file__) + ".libs"
    return sorted(found, key=lambda p: not p.startswith(numpy_libs))


def _thread_count_setter():
    """OpenBLAS's ``openblas_set_num_threads_local(n) -> previous``, or None."""
    for path in _loaded_openblas_paths():
        try:
            setter = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


set_blas_threads = _thread_count_setter()


class _OneThread:
    """``with one_thread:`` runs its block with BLAS on one thread, under the switch lock."""

    def __init__(self):
        self._lock = threading.RLock()
        self._restore: list[int] = []  # what each open switch found, innermost last

    def __enter__(self):
        self._lock.acquire()
        try:
            self._restore.append(set_blas_threads(1))
        except BaseException:
            self._lock.release()
            raise

    def __exit__(self, *exc):
        try:
            set_blas_threads(self._restore.pop())
        finally:
            self._lock.release()


one_thread = _OneThread()


def matmul_on_one_thread(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out)`` with BLAS on one thread."""
    with one_thread:
        np.matmul(a, b, out)


def split_product(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out)`` cut among jitgrad's threads, each running BLAS on the one
    thread it is switched to (``switched_once``). A stack of matrices is cut by its first
    axis, so that each thread gets whole matrices (cutting their rows doubled the calls
    into BLAS, each with its own fixed cost); a matrix, or a stack shorter than the
    threads, by the rows of ``a`` and ``out``."""
    count = threads.count()
    if out.ndim > 2 and out.shape[0] >= count:
        cuts = threads.bounds(out.shape[0], 1, count)

        def operand(x, lo, hi):  # (one broadcast along that axis stays whole)
            return x[lo:hi] if x.ndim == out.ndim and x.shape[0] > 1 else x

        def piece(k):
            lo, hi = cuts[k]
            np.matmul(operand(a, lo, hi), operand(b, lo, hi), out[lo:hi])

    else:
        cuts = threads.bounds(a.shape[-2], _ROW_ALIGN, count)

        def piece(k):
            lo, hi = cuts[k]
            np.matmul(a[..., lo:hi, :], b, out[..., lo:hi, :])

    threads.run(piece, len(cuts))


split_product.shares_threads = True

# Pieces of a product cut by its rows start on multiples of this many rows (whole cache
# lines of a float32 output row of 16 columns and more).
_ROW_ALIGN = 16


def _splits(fn, args) -> bool:
    """Whether a plan's product is worth cutting among jitgrad's threads: one above
    ``config.blas_split_from`` multiply-adds over a stack of matrices, or matrices with
    rows to share."""
    if fn is not np.matmul and fn is not matmul_on_one_thread:
        return False
    a, b, out = args
    if a.ndim < 2 or b.ndim < 2:
        return False
    stacked = out.ndim > 2 and out.shape[0] >= threads.count()
    if not stacked and a.shape[-2] < 2 * _ROW_ALIGN:
        return False
    return out.size * b.shape[-2] >= config.blas_split_from


def switched_once(calls: list) -> list | None:
    """``calls`` ((function, arguments) pairs, a jitted plan's) rewritten to run all inside
    one ``one_thread`` block, their small products as plain matmuls: one switch instead of
    one per product (each costs about 0.5 µs). That applies to a plan of two or more small
    products and no other call that may use BLAS (a large product, a recorded numpy
    computation), and to any plan with BLAS calls and launches shared among jitgrad's
    threads (``shares_threads``): OpenBLAS's threads spin on after a product and take the
    cores those launches wait for. None where it does not apply."""
    functions = [fn for fn, _ in calls]
    small = functions.count(matmul_on_one_thread)
    other_blas = np.matmul in functions or _into in functions
    shares = any(getattr(fn, "shares_threads", False) for fn in functions)
    if not ((small >= 2 and not other_blas) or (shares and (small or other_blas))):
        return None
    return [(_on_one_thread(fn, args, shares), args) for fn, args in calls]


def _on_one_thread(fn, args, shares: bool):
    """A plan's call ``fn`` as it runs inside ``switched_once``'s block: a large product
    beside launches sharing the threads cut among them, a small one a plain matmul."""
    if shares and _splits(fn, args):
        return split_product
    return np.matmul if fn is matmul_on_one_thread else fn


def matmul_for(a: np.ndarray, b: np.ndarray, out: np.ndarray):
    """The function that writes ``a @ b`` into ``out``: in a trace (a plan's product),
    ``matmul_on_one_thread`` for a small product; otherwise numpy's matmul, threaded as
    numpy threads it (an eager product has no kernels beside it, and two threads ran a
    64×64 float64 product in 8.1 µs against 9.9 on one)."""
    if set_blas_threads is None or config.thread.tape is None:
        return np.matmul
    multiply_adds = out.size * b.shape[-2 if b.ndim > 1 else 0]
    return matmul_on_one_thread if multiply_adds <= config.blas_one_thread_up_to else np.matmul
