"""Strided copy kernels: gather, scatter, broadcast and cast in one loop nest.

Every kernel reads ``src[s0 + Σ i·ss]`` and writes ``dst[d0 + Σ i·ds]`` over flat storage
arrays, so one body serves ``contiguous()``, ``copy_`` into a view, ``fill_`` of a view
(a source of stride 0) and casting copies (``store`` picks the conversion at compile
time). The dispatcher in ``copy.py`` first merges dimensions (``layout.coalesce``) and
orders them by the destination's strides, so the innermost loop writes sequentially.

Each kernel has a serial and a ``prange`` twin with distinct names: numba's disk cache
keys on the function, not on its flags, so one function must not be compiled both ways.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..storage.convert import store

_JIT = dict(cache=True, error_model="numpy", nogil=True)

# Side of a square tile for transposing copies: 64×64 float32 source lines (16 KiB) plus
# the destination tile stay in L1 while every loaded cache line is used in full.
TILE = 64


@njit(**_JIT)
def _outer_offsets(o, outer_shape, outer_src, outer_dst):
    # prange indices are unsigned; uint64 mixed with int64 arithmetic would give float64.
    o = np.int64(o)
    s = 0
    d = 0
    for k in range(outer_shape.size - 1, -1, -1):
        n = outer_shape[k]
        i = o % n
        o //= n
        s += i * outer_src[k]
        d += i * outer_dst[k]
    return s, d


@njit(**_JIT)
def _copy_run(src, s, ss, dst, d, ds, n):
    if ss == 1 and ds == 1:
        for i in range(n):
            store(dst, d + i, src[s + i])
    else:
        for i in range(n):
            store(dst, d + i * ds, src[s + i * ss])


@njit(**_JIT)
def copy_flat_serial(src, s0, ss, dst, d0, ds, n):
    _copy_run(src, s0, ss, dst, d0, ds, n)


@njit(parallel=True, **_JIT)
def copy_flat_parallel(src, s0, ss, dst, d0, ds, n, chunk):
    for c in prange((n + chunk - 1) // chunk):
        start = np.int64(c) * chunk
        _copy_run(src, s0 + start * ss, ss, dst, d0 + start * ds, ds, min(chunk, n - start))


@njit(**_JIT)
def _rows_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst, n, ss, ds, o):
    s, d = _outer_offsets(o, outer_shape, outer_src, outer_dst)
    _copy_run(src, s0 + s, ss, dst, d0 + d, ds, n)


@njit(**_JIT)
def copy_rows_serial(src, s0, dst, d0, outer_shape, outer_src, outer_dst, n, ss, ds):
    n_outer = 1
    for k in range(outer_shape.size):
        n_outer *= outer_shape[k]
    for o in range(n_outer):
        _rows_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst, n, ss, ds, o)


@njit(parallel=True, **_JIT)
def copy_rows_parallel(src, s0, dst, d0, outer_shape, outer_src, outer_dst, n, ss, ds):
    n_outer = 1
    for k in range(outer_shape.size):
        n_outer *= outer_shape[k]
    for o in prange(n_outer):
        _rows_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst, n, ss, ds, o)


@njit(**_JIT)
def _tile_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst,
               rows, s_row, d_row, cols, s_col, d_col, task):  # fmt: skip
    task = np.int64(task)
    row_tiles = (rows + TILE - 1) // TILE
    s, d = _outer_offsets(task // row_tiles, outer_shape, outer_src, outer_dst)
    r0 = (task % row_tiles) * TILE
    r1 = min(r0 + TILE, rows)
    for c0 in range(0, cols, TILE):
        c1 = min(c0 + TILE, cols)
        for r in range(r0, r1):
            s_r = s0 + s + r * s_row
            d_r = d0 + d + r * d_row
            for c in range(c0, c1):
                store(dst, d_r + c * d_col, src[s_r + c * s_col])


@njit(**_JIT)
def copy_tiles_serial(src, s0, dst, d0, outer_shape, outer_src, outer_dst,
                      rows, s_row, d_row, cols, s_col, d_col):  # fmt: skip
    n_tasks = (rows + TILE - 1) // TILE
    for k in range(outer_shape.size):
        n_tasks *= outer_shape[k]
    for task in range(n_tasks):
        _tile_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst,
                   rows, s_row, d_row, cols, s_col, d_col, task)  # fmt: skip


@njit(parallel=True, **_JIT)
def copy_tiles_parallel(src, s0, dst, d0, outer_shape, outer_src, outer_dst,
                        rows, s_row, d_row, cols, s_col, d_col):  # fmt: skip
    n_tasks = (rows + TILE - 1) // TILE
    for k in range(outer_shape.size):
        n_tasks *= outer_shape[k]
    for task in prange(n_tasks):
        _tile_task(src, s0, dst, d0, outer_shape, outer_src, outer_dst,
                   rows, s_row, d_row, cols, s_col, d_col, task)  # fmt: skip
