"""Choose and run the copy kernel for a pair of strided layouts over flat arrays."""

from __future__ import annotations

import numba
import numpy as np

from .. import tiers
from .._config import config
from ..storage.convert import HALF
from . import kernels
from .layout import numel

_NO_DIMS = np.zeros(0, dtype=np.int64)


def copy_strided(
    src, src_half, s0: int, s_strides, dst, dst_half, d0: int, d_strides, shape
) -> None:
    """``dst[d0 + Σ i·ds] = src[s0 + Σ i·ss]`` for every index of ``shape``, casting.

    ``src`` and ``dst`` are kernel arrays (float16 as uint16 bits), ``src_half`` and
    ``dst_half`` their ``convert.HALF``/``NOT_HALF`` flags (a storage's ``half_flag``). The
    caller guarantees both layouts stay inside their arrays and that they do not overlap.
    """
    size = numel(shape)
    if not size:
        return
    if tiers.small(size) and (src.dtype.kind != "c" or dst.dtype.kind == "c"):
        _copy_by_numpy(src, src_half, s0, s_strides, dst, dst_half, d0, d_strides, shape)
        return
    dims = []
    for n, ds, ss in zip(shape, d_strides, s_strides, strict=True):
        if n == 0:
            return
        if n == 1:
            continue
        if ds < 0:  # walk the destination forwards: sequential writes, more merging
            d0 += (n - 1) * ds
            s0 += (n - 1) * ss
            ds, ss = -ds, -ss
        dims.append((ds, abs(ss), n, ss))
    dims.sort(reverse=True)  # by destination stride, then source stride: outermost first
    # Merge dimensions that are one run in both layouts. This is layout.coalesce for two
    # stride sets, inlined: the general function alone took 2.8 µs, where a whole small
    # contiguous copy now takes 1.7 µs.
    shape, d_strides, s_strides = [], [], []
    for ds, _, n, ss in dims:
        if shape and d_strides[-1] == ds * n and s_strides[-1] == ss * n:
            shape[-1] *= n
            d_strides[-1] = ds
            s_strides[-1] = ss
        else:
            shape.append(n)
            d_strides.append(ds)
            s_strides.append(ss)
    parallel = numel(shape) >= config.parallel_threshold

    inner = len(shape) - 1
    if inner > 0:
        row = min(range(inner), key=lambda k: abs(s_strides[k]))
        if abs(s_strides[inner]) > 1 and abs(s_strides[row]) < abs(s_strides[inner]):
            # The source runs along another dimension than the destination: a (batched)
            # transpose, staged through tiles so both sides move whole cache lines.
            rows, cols = shape[row], shape[inner]
            tile_r, tile_c = _tile_shape(rows, cols, src.itemsize)
            outer = [k for k in range(inner) if k != row]
            args = (
                src,
                src_half,
                s0,
                dst,
                dst_half,
                d0,
                *_outer(outer, shape, s_strides, d_strides),
                rows,
                s_strides[row],
                d_strides[row],
                cols,
                s_strides[inner],
                d_strides[inner],
                tile_r,
                tile_c,
            )
            if parallel:
                kernels.copy_tiles_parallel(*args, numba.get_num_threads())
            else:
                kernels.copy_tiles_serial(*args)
            return

    n, ss, ds = (shape[inner], s_strides[inner], d_strides[inner]) if shape else (1, 0, 0)
    args = (
        src,
        src_half,
        s0,
        dst,
        dst_half,
        d0,
        *_outer(range(inner), shape, s_strides, d_strides),
        n,
        ss,
        ds,
    )
    if parallel:
        kernels.copy_rows_parallel(*args, numba.get_num_threads())
    else:
        kernels.copy_rows_serial(*args)


def _copy_by_numpy(src, src_half, s0, s_strides, dst, dst_half, d0, d_strides, shape) -> None:
    """``copy_strided`` by numpy's casting copy (the numpy tier: small copies). A complex
    source into a real destination stays with the kernels, which drop the imaginary part
    without numpy's warning."""
    source = _strided_view(src, src_half, s0, s_strides, shape)
    target = _strided_view(dst, dst_half, d0, d_strides, shape)
    tiers.quietly(np.copyto, target, source, casting="unsafe")


def _strided_view(flat, half, offset: int, strides, shape) -> np.ndarray:
    """The elements of a flat kernel array at ``offset`` with element ``strides``."""
    if half is HALF:
        flat = flat.view(np.float16)
    itemsize = flat.itemsize
    return np.ndarray(
        shape, flat.dtype, flat, offset * itemsize, tuple(s * itemsize for s in strides)
    )


# A tile's side in bytes: 1 KiB runs on both memory sides. Transposing 4096x4096 into
# preallocated memory, 256-byte sides were 10-33% slower (1- to 16-byte items) and 512-byte
# ones up to 9%; the largest scratch buffer (256×272 float32, 272 KiB) stays in L2.
TILE_BYTES = 1024
TILE_MAX = 256


def _tile_shape(rows: int, cols: int, itemsize: int) -> tuple[int, int]:
    """Tile sides (source-run length, destination-run length) in elements."""
    side = max(16, min(TILE_MAX, TILE_BYTES // itemsize))
    pad = max(1, 64 // itemsize)  # the kernel pads buffer rows by a cache line
    budget = (side + pad) * side
    # A short side gives its share of the buffer to the other: permuting NCHW to NHWC with
    # C=3 then reads long source runs (16x3x512x512 float32 into preallocated memory,
    # serial: 10.4 ms against 12.3 ms with square tiles).
    tile_r = min(rows, side)
    tile_c = min(cols, max(side, budget // (tile_r + pad)))
    tile_r = min(rows, max(side, budget // tile_c - pad))
    return tile_r, tile_c


def _outer(dims, shape, s_strides, d_strides):
    if not dims:
        return _NO_DIMS, _NO_DIMS, _NO_DIMS
    return (
        np.array([shape[k] for k in dims], dtype=np.int64),
        np.array([s_strides[k] for k in dims], dtype=np.int64),
        np.array([d_strides[k] for k in dims], dtype=np.int64),
    )
