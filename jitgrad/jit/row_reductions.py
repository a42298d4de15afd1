"""The reductions of one row that row kernels call (``row_fusion``, ``rows``).

One module for every generated kernel: numba compiles (or loads) each once per process,
where helpers written into each kernel's source were compiled again with every kernel
(about 0.3 s each on a cold cache). LLVM still inlines them into their callers.
"""

from __future__ import annotations

import numpy as np
from numba import njit


# A float64 total in any order: the one float operation allowed to reassociate, so that
# LLVM vectorises the loop (strict order, even with eight running sums, ran 4x slower).
@njit(cache=True, error_model="numpy", nogil=True, fastmath={"reassoc", "nsz"})
def row_sum(v, n):
    total = 0.0
    for i in range(n):
        total += v[i]
    return total


# v's max (or min), NaN if it holds one: eight running values, a select each, which LLVM
# vectorises (a compare and branch per element ran 3x slower), then one pass looking for
# NaN. A function of its own that LLVM inlines: numba's own inlining of it (and of a
# select helper) took about 1 s of compile time per kernel using it.
@njit(cache=True, error_model="numpy", nogil=True)
def row_max(v, n):
    whole = n - n % 8
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = v[0]
    for i in range(0, whole, 8):
        r0 = v[i] if v[i] > r0 else r0
        r1 = v[i + 1] if v[i + 1] > r1 else r1
        r2 = v[i + 2] if v[i + 2] > r2 else r2
        r3 = v[i + 3] if v[i + 3] > r3 else r3
        r4 = v[i + 4] if v[i + 4] > r4 else r4
        r5 = v[i + 5] if v[i + 5] > r5 else r5
        r6 = v[i + 6] if v[i + 6] > r6 else r6
        r7 = v[i + 7] if v[i + 7] > r7 else r7
    r0 = r1 if r1 > r0 else r0
    r2 = r3 if r3 > r2 else r2
    r4 = r5 if r5 > r4 else r4
    r6 = r7 if r7 > r6 else r6
    r0 = r2 if r2 > r0 else r0
    r4 = r6 if r6 > r4 else r4
    acc = r4 if r4 > r0 else r0
    for i in range(whole, n):
        acc = v[i] if v[i] > acc else acc
    nan = False
    for i in range(n):
        nan |= v[i] != v[i]
    return np.nan if nan else acc


@njit(cache=True, error_model="numpy", nogil=True)
def row_min(v, n):
    whole = n - n % 8
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = v[0]
    for i in range(0, whole, 8):
        r0 = v[i] if v[i] < r0 else r0
        r1 = v[i + 1] if v[i + 1] < r1 else r1
        r2 = v[i + 2] if v[i + 2] < r2 else r2
        r3 = v[i + 3] if v[i + 3] < r3 else r3
        r4 = v[i + 4] if v[i + 4] < r4 else r4
        r5 = v[i + 5] if v[i + 5] < r5 else r5
        r6 = v[i + 6] if v[i + 6] < r6 else r6
        r7 = v[i + 7] if v[i + 7] < r7 else r7
    r0 = r1 if r1 < r0 else r0
    r2 = r3 if r3 < r2 else r2
    r4 = r5 if r5 < r4 else r4
    r6 = r7 if r7 < r6 else r6
    r0 = r2 if r2 < r0 else r0
    r4 = r6 if r6 < r4 else r4
    acc = r4 if r4 < r0 else r0
    for i in range(whole, n):
        acc = v[i] if v[i] < acc else acc
    nan = False
    for i in range(n):
        nan |= v[i] != v[i]
    return np.nan if nan else acc


@njit(cache=True, error_model="numpy", nogil=True)
def combine(parts, out):
    # The pieces' partial sums over the rows, added up in order (then rounded to out's type).
    for j in range(parts.shape[1]):
        total = 0.0
        for p in range(parts.shape[0]):
            total += parts[p, j]
        out[j] = total
