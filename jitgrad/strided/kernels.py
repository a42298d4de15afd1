"""Strided copy kernels: gather, scatter, broadcast and cast in one loop nest.

Every kernel reads ``src[s0 + Σ i·ss]`` and writes ``dst[d0 + Σ i·ds]`` over flat storage
arrays, so one body serves ``contiguous()``, ``copy_`` into a view, ``fill_`` of a view
(a source of stride 0) and casting copies (``cast`` picks the conversion at compile
time; the ``src_half`` and ``dst_half`` flags say which array holds float16 bits). The
dispatcher in ``copy.py`` first merges dimensions (as ``layout.coalesce`` does) and orders
them by the destination's strides, so the innermost loop writes sequentially.

Each kernel has a serial and a ``prange`` twin with distinct names: numba's disk cache
keys on the function, not on its flags, so one function must not be compiled both ways.
Both twins call the same worker function; the parallel one runs one worker per thread,
each on a contiguous share of the work, so per-worker set-up (a scratch buffer, an
odometer) happens once per thread rather than once per row or tile. The worker is a
called function, not inlined, so it compiles once for both twins: a dtype pair's four
kernels compiled in 2.2-2.6 s, 15-20% less than the six (flat, rows, tiles) they replaced,
and 30% less than with the worker inlined into each twin.

Indices are cast to unsigned before indexing. numba wraps negative indices around, and
unless LLVM can prove an index non-negative that select stops it from vectorising: a
contiguous float64 -> float32 copy ran 2.2x slower, a fill 6x slower, with signed
indices. Every index here is a valid storage position, hence non-negative.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..storage.convert import cast

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(inline="always", **_JIT)
def _u(i):
    return np.uint64(i)


@njit(inline="always", **_JIT)
def _i(w):
    # Both twins call a worker with the same argument types, so it compiles once: a
    # literal 0 or prange's unsigned index would each make another specialisation.
    return np.int64(w)


@njit(inline="always", **_JIT)
def _share(total, w, n_workers):
    """Worker ``w``'s half-open share ``[first, last)`` of ``total`` items."""
    return total * w // n_workers, total * (w + 1) // n_workers


@njit(**_JIT)
def _outer_offsets(o, outer_shape, outer_src, outer_dst, idx):
    """Offsets of outer index ``o`` (row-major over ``outer_shape``); fills ``idx``."""
    s = 0
    d = 0
    for k in range(outer_shape.size - 1, -1, -1):
        n = outer_shape[k]
        i = o % n
        o //= n
        idx[k] = i
        s += i * outer_src[k]
        d += i * outer_dst[k]
    return s, d


# -- rows: the source runs along the destination's fastest dimension (or needs no tiling) --


@njit(**_JIT)
def _rows_worker(
    src, src_half, s0, dst, dst_half, d0, outer_shape, outer_src, outer_dst, n, ss, ds, w, n_workers
):
    # Work is split by element, not by row, so a few long rows (or one flat run) still
    # spread over every thread.
    n_outer = 1
    for k in range(outer_shape.size):
        n_outer *= outer_shape[k]
    e, last = _share(n_outer * n, w, n_workers)
    if e >= last:
        return
    # An odometer over the outer dims: decomposing each row's index by div/mod made
    # 3-element rows 3.6x slower (64x64x64x3 float32, serial: 2.2 ms against 0.6 ms).
    idx = np.empty(outer_shape.size, np.int64)
    s, d = _outer_offsets(e // n, outer_shape, outer_src, outer_dst, idx)
    i = e % n
    while True:
        # The run loop is written out here, not called: a call per row, or numba's
        # inline="always" (which increfs both arrays per row), made a copy made of
        # 3-element rows 7x slower (64x64x64x3 float32: 5.9 ms against 0.8 ms).
        count = min(n - i, last - e)
        s_i = s0 + s + i * ss
        d_i = d0 + d + i * ds
        if ss == 1 and ds == 1:
            for j in range(count):
                cast(dst, _u(d_i + j), src[_u(s_i + j)], dst_half, src_half)
        elif ss == 0:  # a broadcast source: one load, then a store loop that vectorises
            x = src[_u(s_i)]
            for j in range(count):
                cast(dst, _u(d_i + j * ds), x, dst_half, src_half)
        else:
            for j in range(count):
                x = src[_u(s_i + j * ss)]
                cast(dst, _u(d_i + j * ds), x, dst_half, src_half)
        e += count
        if e >= last:
            return
        i = 0
        k = outer_shape.size - 1
        while k >= 0:
            idx[k] += 1
            s += outer_src[k]
            d += outer_dst[k]
            if idx[k] < outer_shape[k]:
                break
            s -= outer_shape[k] * outer_src[k]
            d -= outer_shape[k] * outer_dst[k]
            idx[k] = 0
            k -= 1


@njit(**_JIT)
def copy_rows_serial(
    src, src_half, s0, dst, dst_half, d0, outer_shape, outer_src, outer_dst, n, ss, ds
):
    _rows_worker(
        src,
        src_half,
        s0,
        dst,
        dst_half,
        d0,
        outer_shape,
        outer_src,
        outer_dst,
        n,
        ss,
        ds,
        _i(0),
        _i(1),
    )


@njit(parallel=True, **_JIT)
def copy_rows_parallel(
    src, src_half, s0, dst, dst_half, d0, outer_shape, outer_src, outer_dst, n, ss, ds, n_workers
):
    for w in prange(n_workers):
        _rows_worker(
            src,
            src_half,
            s0,
            dst,
            dst_half,
            d0,
            outer_shape,
            outer_src,
            outer_dst,
            n,
            ss,
            ds,
            _i(w),
            n_workers,
        )


# -- tiles: a (batched) transpose, the source runs along another dimension -----------------


@njit(**_JIT)
def _tiles_worker(
    src,
    src_half,
    s0,
    dst,
    dst_half,
    d0,
    outer_shape,
    outer_src,
    outer_dst,
    rows,
    s_row,
    d_row,
    cols,
    s_col,
    d_col,
    tile_r,
    tile_c,
    w,
    n_workers,
):
    # ``rows`` is the dimension the source runs along, ``cols`` the destination's. A tile
    # is staged through a scratch buffer: read source runs of ``tile_r`` into its rows,
    # then write destination runs of ``tile_c`` gathering down its columns. Both memory
    # sides move whole cache lines in long runs, and the strided access stays in L1/L2.
    # Copying each tile straight from source to destination was about 4x slower
    # (4096x4096 into preallocated memory, two threads: float32 19-21 ms against 4.4 ms,
    # float64 23-25 ms against 6.5 ms): with power-of-two row strides a tile's source lines
    # all map to the same cache sets and are evicted before their neighbours are read.
    row_tiles = (rows + tile_r - 1) // tile_r
    col_tiles = (cols + tile_c - 1) // tile_c
    per_outer = row_tiles * col_tiles
    n_outer = 1
    for k in range(outer_shape.size):
        n_outer *= outer_shape[k]
    first, last = _share(n_outer * per_outer, w, n_workers)
    if first >= last:
        return
    # Padding buffer rows by one cache line keeps the column gathers from landing in one
    # cache set (unpadded power-of-two rows made the same transposes 1.6-1.9x slower).
    stride = tile_r + max(1, 64 // src.itemsize)
    buf = np.empty(tile_c * stride, src.dtype)
    idx = np.empty(outer_shape.size, np.int64)
    for task in range(first, last):
        s, d = _outer_offsets(task // per_outer, outer_shape, outer_src, outer_dst, idx)
        t = task % per_outer
        r0 = (t // col_tiles) * tile_r
        c0 = (t % col_tiles) * tile_c
        nr = min(tile_r, rows - r0)
        nc = min(tile_c, cols - c0)
        s += s0 + r0 * s_row + c0 * s_col
        d += d0 + r0 * d_row + c0 * d_col
        for c in range(nc):
            s_c = s + c * s_col
            b = c * stride
            for r in range(nr):
                buf[_u(b + r)] = src[_u(s_c + r * s_row)]
        for r in range(nr):
            d_r = d + r * d_row
            for c in range(nc):
                x = buf[_u(c * stride + r)]
                cast(dst, _u(d_r + c * d_col), x, dst_half, src_half)


@njit(**_JIT)
def copy_tiles_serial(
    src,
    src_half,
    s0,
    dst,
    dst_half,
    d0,
    outer_shape,
    outer_src,
    outer_dst,
    rows,
    s_row,
    d_row,
    cols,
    s_col,
    d_col,
    tile_r,
    tile_c,
):
    _tiles_worker(
        src,
        src_half,
        s0,
        dst,
        dst_half,
        d0,
        outer_shape,
        outer_src,
        outer_dst,
        rows,
        s_row,
        d_row,
        cols,
        s_col,
        d_col,
        tile_r,
        tile_c,
        _i(0),
        _i(1),
    )


@njit(parallel=True, **_JIT)
def copy_tiles_parallel(
    src,
    src_half,
    s0,
    dst,
    dst_half,
    d0,
    outer_shape,
    outer_src,
    outer_dst,
    rows,
    s_row,
    d_row,
    cols,
    s_col,
    d_col,
    tile_r,
    tile_c,
    n_workers,
):
    # n_workers comes from the caller: numba.get_num_threads() inside a kernel makes it
    # uncacheable (a ctypes global).
    for w in prange(n_workers):
        _tiles_worker(
            src,
            src_half,
            s0,
            dst,
            dst_half,
            d0,
            outer_shape,
            outer_src,
            outer_dst,
            rows,
            s_row,
            d_row,
            cols,
            s_col,
            d_col,
            tile_r,
            tile_c,
            _i(w),
            n_workers,
        )
