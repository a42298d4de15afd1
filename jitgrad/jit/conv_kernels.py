"""Loop kernels of the convolutions and max pooling (``ops/convolution.py``,
``ops/pooling.py``): im2col packing, col2im adding, and max pooling's forward and
gradient, each one pass over C-contiguous arrays.

numpy does each of these as one strided pass per kernel tap; on the small images of a
CNN those passes are short and their per-call cost dominates. Here every window's taps
are read or written together, in one compiled loop nest. The windows' geometry is passed
as plain ints: one compiled kernel per dtype serves every geometry.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, error_model="numpy", nogil=True)


def applies(*arrays) -> bool:
    """Whether the kernels take these arrays: C-contiguous float32 or float64 alike."""
    dtype = arrays[0].dtype
    if dtype != np.float32 and dtype != np.float64:
        return False
    return all(a.dtype == dtype and a.flags.c_contiguous for a in arrays)


def pack(padded, cols, stride, dilation) -> None:
    """im2col: ``cols`` (C, KH, KW, N, OH, OW) = the windows of ``padded`` (N, C, H, W)."""
    _pack(padded.reshape(-1), cols.reshape(-1), *padded.shape, *cols.shape, *stride, *dilation)


def scatter(cols, padded, stride, dilation) -> None:
    """col2im: add ``cols`` (C, KH, KW, N, OH, OW) into ``padded`` (N, C, H, W) at the
    windows they came from."""
    _scatter(cols.reshape(-1), padded.reshape(-1), *padded.shape, *cols.shape, *stride, *dilation)


# Flat arrays and unsigned indices: numba wraps negative indices around, and the select
# that costs stops LLVM from vectorising the copies (2x slower packing).


@njit(**_JIT)
def _pack(padded, cols, n, channels, h, w, _c, kh, kw, _n, oh, ow, sh, sw, dh, dw):
    o = np.uint64(0)
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                for s in range(n):
                    for y in range(oh):
                        row = np.uint64(((s * channels + c) * h + i * dh + y * sh) * w + j * dw)
                        for x in range(ow):
                            cols[o] = padded[row + np.uint64(x * sw)]
                            o += np.uint64(1)


@njit(**_JIT)
def _scatter(cols, padded, n, channels, h, w, _c, kh, kw, _n, oh, ow, sh, sw, dh, dw):
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                for s in range(n):
                    o = np.uint64((((c * kh + i) * kw + j) * n + s) * oh * ow)
                    for y in range(oh):
                        row = np.uint64(((s * channels + c) * h + i * dh + y * sh) * w + j * dw)
                        for x in range(ow):
                            padded[row + np.uint64(x * sw)] += cols[o]
                            o += np.uint64(1)


@njit(**_JIT)
def max_windows(padded, out, winner, kh, kw, sh, sw, dh, dw):
    """``out`` (N, C, OH, OW) = each window's maximum in ``padded`` (N, C, H, W) and
    ``winner`` its tap: a value greater than the maximum so far or a NaN takes over
    (PyTorch's scan: the first of equal maxima, the last NaN)."""
    n, channels, oh, ow = out.shape
    for s in range(n):
        for c in range(channels):
            for y in range(oh):
                for x in range(ow):
                    best = padded[s, c, y * sh, x * sw]
                    won = 0
                    for i in range(kh):
                        for j in range(kw):
                            v = padded[s, c, y * sh + i * dh, x * sw + j * dw]
                            if v > best or v != v:
                                best = v
                                won = i * kw + j
                    out[s, c, y, x] = best
                    winner[s, c, y, x] = won


@njit(**_JIT)
def max_spread(gy, winner, padded, kh, kw, sh, sw, dh, dw, add):
    """Each window's gradient ``gy`` (N, C, OH, OW) times the mask of each of its taps
    (1 at the ``winner``, 0 elsewhere), written (``add`` False: the windows never share an
    element) or added into ``padded`` (N, C, H, W). A multiplication rather than a
    selection, as the numpy path does, so a NaN or infinite gradient reaches its window."""
    n, channels, oh, ow = gy.shape
    for s in range(n):
        for c in range(channels):
            for y in range(oh):
                for x in range(ow):
                    g = gy[s, c, y, x]
                    won = winner[s, c, y, x]
                    for i in range(kh):
                        for j in range(kw):
                            v = g if i * kw + j == won else g * 0.0
                            row, column = y * sh + i * dh, x * sw + j * dw
                            if add:
                                padded[s, c, row, column] += v
                            else:
                                padded[s, c, row, column] = v
