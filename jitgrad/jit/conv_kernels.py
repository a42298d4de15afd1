"""Loop kernels of the convolutions and pooling (``ops/convolution.py``,
``ops/pooling.py``): im2col packing, col2im adding, padding and cutting the padding off,
and max pooling's forward and gradient, each one pass over C-contiguous arrays.

numpy does each of these as one strided pass per kernel tap; on the small images of a
CNN those passes are short and their per-call cost dominates. Here every window's taps
are read or written together, in one compiled loop nest. The windows' geometry is passed
as plain ints: one compiled kernel per dtype serves every geometry.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, error_model="numpy", nogil=True)
# Windows narrower than this many columns are packed a whole tap's block at a time.
_BLOCKS_BELOW = 16


def applies(*arrays, columns=None) -> bool:
    """Whether the kernels take these arrays: float32 or float64 alike, C-contiguous, and
    ``columns`` (if given) dense (its axes ordered by stride C-contiguous: a transposed
    view of a contiguous array) with its last axis contiguous, or window by window."""
    dtype = arrays[0].dtype
    if dtype != np.float32 and dtype != np.float64:
        return False
    if not all(a.dtype == dtype and a.flags.c_contiguous for a in arrays):
        return False
    if columns is None:
        return True
    last = columns.shape[-1] == 1 or columns.strides[-1] == columns.itemsize
    return columns.dtype == dtype and (last and _dense(columns) or _by_window(columns))


def _by_window(cols) -> bool:
    """Whether ``cols`` (N, C, KH, KW, OH, OW) lies window by window: (N, OH, OW, C, KH,
    KW) C-contiguous, each window's taps together."""
    return cols.transpose(0, 4, 5, 1, 2, 3).flags.c_contiguous


def _dense(a) -> bool:
    if a.flags.c_contiguous:
        return True
    return a.transpose(_by_stride(a)).flags.c_contiguous


def _by_stride(a) -> list[int]:
    return sorted(range(a.ndim), key=lambda k: -a.strides[k])


def _flat(a):
    """A dense array's memory as a flat array, and its strides in elements."""
    flat = a.reshape(-1) if a.flags.c_contiguous else a.transpose(_by_stride(a)).reshape(-1)
    return flat, [s // a.itemsize for s in a.strides]


def pack(image, cols, stride, dilation, before, after) -> None:
    """im2col: ``cols`` (N, C, KH, KW, OH, OW), a dense view with its rows (OW)
    contiguous or lying window by window, = the windows of ``image`` (N, C, H, W,
    C-contiguous) padded with zeros, ``before`` = (top, left) and ``after`` = (bottom,
    right)."""
    _move(image, cols, stride, dilation, before, after, False)


def scatter(cols, image, stride, dilation, before, after) -> None:
    """col2im: add ``cols`` (N, C, KH, KW, OH, OW), as ``pack`` takes them, into
    ``image`` (N, C, H, W) at the windows they came from; taps in the padding drop out."""
    _move(image, cols, stride, dilation, before, after, True)


def _move(image, cols, stride, dilation, before, after, add) -> None:
    fn, args = move_call(image, cols, stride, dilation, before, after, add)
    fn(*args)


def move_call(image, cols, stride, dilation, before, after, add) -> tuple:
    """``pack`` (``add``: ``scatter``) as the call of its loop kernel, (function,
    arguments), which a convolution's chunk works out once and runs again. The loops take
    the image's shape (N, C, H, W), the windows (KH, KW, OH, OW, SH, SW, DH, DW, top,
    left, bottom, right) and, by tap, the columns' strides (N, C, KH, KW, OH)."""
    window = (*cols.shape[2:], *stride, *dilation, *before, *after)
    if _by_window(cols):
        windows = cols.transpose(0, 4, 5, 1, 2, 3).reshape(-1)
        return _by_windows, (image.reshape(-1), windows, image.shape, window, add)
    flat, strides = _flat(cols)
    by_taps = _scatter_taps if add else _pack_taps
    return by_taps, (image.reshape(-1), flat, image.shape, tuple(strides[:5]), window)


# Flat arrays and unsigned indices: numba wraps negative indices around, and the select
# that costs stops LLVM from vectorising the copies (2x slower packing).
#
# A padded image is read and written one plane at a time through a padded copy of that
# plane, which stays in L1: the taps' rows then run whole, with no bounds to test, and no
# padded copy of the whole image is made (its fresh pages cost more than the copying).


@njit(**_JIT)
def _first_taps(oh, ow, row_step, sw):
    """Where each window's first tap lies in a (padded) plane, for windows of short rows
    gathered a whole tap's block at a time."""
    offsets = np.empty(oh * ow, np.uint64)
    for y in range(oh):
        for x in range(ow):
            offsets[y * ow + x] = y * row_step + x * sw
    return offsets


@njit(**_JIT)
def _plane_in(image, at, h, w, plane, pw, top, left, add):
    """Copy the image's plane starting at ``at`` into ``plane``'s interior, or (``add``)
    add that interior into the image's plane."""
    for y in range(h):
        inner = np.uint64((top + y) * pw + left)
        row = np.uint64(at + y * w)
        for x in range(w):
            if add:
                image[row + np.uint64(x)] += plane[inner + np.uint64(x)]
            else:
                plane[inner + np.uint64(x)] = image[row + np.uint64(x)]


@njit(**_JIT)
def _plane_setup(h, w, oh, ow, sy, sh, sw, top, left, bottom, right, dtype):
    """What ``_pack_taps`` and ``_scatter_taps`` need of the geometry: whether it pads,
    the padded row length, a padded plane's buffer, whether a tap's windows go as one
    block, and their corners."""
    padded = top > 0 or left > 0 or bottom > 0 or right > 0
    pw = w + left + right
    plane = np.zeros((h + top + bottom) * pw if padded else 0, dtype)
    return padded, pw, plane, ow < _BLOCKS_BELOW and sy == ow, _first_taps(oh, ow, sh * pw, sw)


# Columns by tap (each tap's rows of windows contiguous): a plane's tap at a time, a whole
# OH x OW block through a table of the windows' corners when its rows are short and lie
# together. Packing and adding back are two kernels: with the flag inside one, LLVM kept
# its test in the loops over large images (30% slower packing).


@njit(**_JIT)
def _pack_taps(image, cols, shape, strides, window):
    n, channels, h, w = shape
    sn, sc, si, sj, sy = strides
    kh, kw, oh, ow, sh, sw, dh, dw, top, left, bottom, right = window
    setup = _plane_setup(h, w, oh, ow, sy, sh, sw, top, left, bottom, right, image.dtype)
    padded, pw, plane, blocks, offsets = setup
    for s in range(n):
        for c in range(channels):
            taps, start = image, (s * channels + c) * h * w
            if padded:
                _plane_in(image, start, h, w, plane, pw, top, left, False)
                taps, start = plane, 0
            for i in range(kh):
                for j in range(kw):
                    at = np.uint64(s * sn + c * sc + i * si + j * sj)
                    tap = np.uint64(start + i * dh * pw + j * dw)
                    if blocks:
                        for q in range(offsets.size):
                            cols[at + np.uint64(q)] = taps[tap + offsets[q]]
                        continue
                    for y in range(oh):
                        o = at + np.uint64(y * sy)
                        row = tap + np.uint64(y * sh * pw)
                        for x in range(ow):
                            cols[o + np.uint64(x)] = taps[row + np.uint64(x * sw)]


@njit(**_JIT)
def _scatter_taps(image, cols, shape, strides, window):
    n, channels, h, w = shape
    sn, sc, si, sj, sy = strides
    kh, kw, oh, ow, sh, sw, dh, dw, top, left, bottom, right = window
    setup = _plane_setup(h, w, oh, ow, sy, sh, sw, top, left, bottom, right, image.dtype)
    padded, pw, plane, blocks, offsets = setup
    for s in range(n):
        for c in range(channels):
            image_at = (s * channels + c) * h * w
            taps, start = image, image_at
            if padded:
                plane[:] = 0
                taps, start = plane, 0
            for i in range(kh):
                for j in range(kw):
                    at = np.uint64(s * sn + c * sc + i * si + j * sj)
                    tap = np.uint64(start + i * dh * pw + j * dw)
                    if blocks:
                        for q in range(offsets.size):
                            taps[tap + offsets[q]] += cols[at + np.uint64(q)]
                        continue
                    for y in range(oh):
                        o = at + np.uint64(y * sy)
                        row = tap + np.uint64(y * sh * pw)
                        for x in range(ow):
                            taps[row + np.uint64(x * sw)] += cols[o + np.uint64(x)]
            if padded:
                _plane_in(image, image_at, h, w, plane, pw, top, left, True)


@njit(**_JIT)
def _tap_table(channels, kh, kw, plane, pw, dh, dw):
    taps = np.empty(channels * kh * kw, np.uint64)
    for c in range(channels):
        for i in range(kh):
            for j in range(kw):
                taps[(c * kh + i) * kw + j] = c * plane + i * dh * pw + j * dw
    return taps


@njit(**_JIT)
def _by_windows(image, cols, shape, window, add):
    """Columns window by window (each window's C x KH x KW taps together): a sample's
    planes at a time, every window's taps through one table of where they lie from its
    corner."""
    n, channels, h, w = shape
    kh, kw, oh, ow, sh, sw, dh, dw, top, left, bottom, right = window
    padded = top > 0 or left > 0 or bottom > 0 or right > 0
    pw = w + left + right
    plane = (h + top + bottom) * pw if padded else h * w
    buffer = np.zeros(channels * plane if padded else 0, image.dtype)
    table = _tap_table(channels, kh, kw, plane, pw, dh, dw)
    size = table.size
    for s in range(n):
        taps, start = image, np.uint64(s * channels * h * w)
        if padded:
            if add:
                buffer[:] = 0
            else:
                for c in range(channels):
                    at = (s * channels + c) * h * w
                    _plane_in(image, at, h, w, buffer[c * plane :], pw, top, left, False)
            taps, start = buffer, np.uint64(0)
        for y in range(oh):
            for x in range(ow):
                corner = start + np.uint64(y * sh * pw + x * sw)
                o = np.uint64(((s * oh + y) * ow + x) * size)
                for t in range(size):
                    if add:
                        taps[corner + table[t]] += cols[o + np.uint64(t)]
                    else:
                        cols[o + np.uint64(t)] = taps[corner + table[t]]
        if padded and add:
            for c in range(channels):
                at = (s * channels + c) * h * w
                _plane_in(image, at, h, w, buffer[c * plane :], pw, top, left, True)


def pad(image, padded, before, fill) -> None:
    """``padded`` (..., PH, PW) = ``image`` (..., H, W) with its first row and column at
    ``before`` and ``fill`` around it: all of ``padded`` filled, then the image's rows
    copied in (the rows of a CNN's small images are too short for a loop per row and
    border to pay: 2-4x slower)."""
    padded.fill(fill)
    _copy_rows(image, padded, *_rows(image, padded, before), to_padded=True)


def crop(padded, image, before) -> None:
    """``image`` (..., H, W) = the part of ``padded`` (..., PH, PW) that starts at
    ``before``."""
    _copy_rows(image, padded, *_rows(image, padded, before), to_padded=False)


def _rows(image, padded, before) -> tuple:
    """(planes, H, W, PH, PW, top, left): the geometry ``_copy_rows`` takes."""
    h, w = image.shape[-2:]
    return (image.size // (h * w) if h * w else 0, h, w, *padded.shape[-2:], *before)


@njit(**_JIT)
def _copy_rows(image, padded, planes, h, w, ph, pw, top, left, to_padded):
    image, padded = image.reshape(-1), padded.reshape(-1)
    for plane in range(planes):
        for y in range(h):
            at = np.uint64((plane * ph + top + y) * pw + left)
            row = np.uint64((plane * h + y) * w)
            if to_padded:
                for x in range(w):
                    padded[at + np.uint64(x)] = image[row + np.uint64(x)]
            else:
                for x in range(w):
                    image[row + np.uint64(x)] = padded[at + np.uint64(x)]


def swap_leading(source, target, bias=None) -> None:
    """``target`` (B, A, L) = ``source`` (A, B, L) with its two leading axes swapped, plus
    ``bias`` (A,) along A if given: the products' rows of a batch of windows into the
    windows' (N, C, ...) layout and back, one contiguous run of L at a time."""
    fn, args = swap_leading_call(source, target, bias)
    fn(*args)


def swap_leading_call(source, target, bias=None) -> tuple:
    """``swap_leading`` as the call of its loop kernel, (function, arguments)."""
    a, b, length = source.shape
    add = bias is not None
    flat = source.reshape(-1)
    return _swap_leading, (flat, target.reshape(-1), a, b, length, bias if add else flat[:1], add)


@njit(**_JIT)
def _swap_leading(source, target, a, b, length, bias, add):
    for i in range(a):
        for j in range(b):
            at = np.uint64((i * b + j) * length)
            to = np.uint64((j * a + i) * length)
            if add:
                shift = bias[i]
                for k in range(length):
                    target[to + np.uint64(k)] = source[at + np.uint64(k)] + shift
            else:
                for k in range(length):
                    target[to + np.uint64(k)] = source[at + np.uint64(k)]


def swap_last(source, target, bias=None) -> None:
    """``target`` (B, Q, P) = ``source`` (B, P, Q) with its last two axes swapped, plus
    ``bias`` (Q,) along Q if given: a product's rows by window (N, L, C) into the
    windows' (N, C, L) layout, and back."""
    fn, args = swap_last_call(source, target, bias)
    fn(*args)


def swap_last_call(source, target, bias=None) -> tuple:
    """``swap_last`` as the call of its loop kernel, (function, arguments)."""
    batch, p, q = source.shape
    add = bias is not None
    flat = source.reshape(-1)
    return _swap_last, (flat, target.reshape(-1), batch, p, q, bias if add else flat[:1], add)


@njit(**_JIT)
def _swap_last(source, target, batch, p, q, bias, add):
    for b in range(batch):
        start = np.uint64(b * p * q)
        for j in range(q):
            shift = bias[j] if add else source[0] * 0
            row = start + np.uint64(j * p)
            for i in range(p):
                value = source[start + np.uint64(i * q + j)]
                target[row + np.uint64(i)] = value + shift if add else value


def channel_sums(g):
    """``g`` (N, C, L) summed over N and L: (C,). The samples add up element by element in
    float64 (a loop LLVM vectorises, where one running sum would not), then each
    channel's L sums."""
    n, c, length = g.shape
    return _channel_sums(g.reshape(-1), n, c * length, length)


@njit(**_JIT)
def _channel_sums(g, n, block, length):
    sums = np.zeros(block, np.float64)
    for s in range(n):
        at = np.uint64(s * block)
        for i in range(block):
            sums[i] += g[at + np.uint64(i)]
    out = np.empty(block // length, g.dtype)
    for k in range(out.size):
        out[k] = sums[k * length : (k + 1) * length].sum()
    return out


def max_windows(padded, out, winner, kernel, stride, dilation) -> None:
    """``out`` (N, C, OH, OW) = each window's maximum in ``padded`` (N, C, H, W) and
    ``winner`` its tap: a value greater than the maximum so far or a NaN takes over
    (PyTorch's scan: the first of equal maxima, the last NaN)."""
    flat = (padded.reshape(-1), out.reshape(-1), winner.reshape(-1))
    n, channels, h, w = padded.shape
    oh, ow = out.shape[2:]
    if _pairs(kernel, stride, dilation, winner, w, ow):
        _max_pairs(*flat, n * channels, h, oh, ow)
    elif kernel == (2, 2) and dilation == (1, 1):  # the common pool, its taps unrolled
        _max_windows_2x2(*flat, *padded.shape, oh, ow, *stride)
    else:
        _max_windows(*flat, *padded.shape, oh, ow, *kernel, *stride, *dilation)


def max_spread(gy, winner, padded, kernel, stride, dilation, add: bool) -> None:
    """Each window's gradient ``gy`` (N, C, OH, OW) times the mask of each of its taps
    (1 at the ``winner``, 0 elsewhere), written (``add`` False: the windows never share an
    element) or added into ``padded`` (N, C, H, W). A multiplication rather than a
    selection, as the numpy path does, so a NaN or infinite gradient reaches its window."""
    flat = (gy.reshape(-1), winner.reshape(-1), padded.reshape(-1))
    n, channels, h, w = padded.shape
    oh, ow = gy.shape[2:]
    pairs = _pairs(kernel, stride, dilation, winner, w, ow)
    pairs = pairs and (ow >= _SPREAD_PAIRS_FROM or ow <= _FLAT_PAIRS_UP_TO)
    if pairs and h == 2 * oh:  # (tiling: written)
        _spread_pairs(*flat, n * channels, oh, ow)
    elif kernel == (2, 2) and dilation == (1, 1) and not add:  # the common pool, unrolled
        _max_spread_2x2(*flat, *padded.shape, oh, ow, *stride)
    else:
        _max_spread(*flat, *padded.shape, oh, ow, *kernel, *stride, *dilation, add)


def _pairs(kernel, stride, dilation, winner, w, ow) -> bool:
    """Whether the pair kernels take these windows: 2x2 of stride 2 over rows they tile,
    and the winners in int8 (as pooling keeps them). The gradient's rows of more than
    ``_FLAT_PAIRS_UP_TO`` windows and fewer than ``_SPREAD_PAIRS_FROM`` leave its loops
    too short to pay."""
    tiled = kernel == (2, 2) and stride == (2, 2) and dilation == (1, 1) and w == 2 * ow
    return tiled and winner.dtype == np.int8


@njit(**_JIT)
def _max_windows(padded, out, winner, n, channels, h, w, oh, ow, kh, kw, sh, sw, dh, dw):
    o = np.uint64(0)
    for plane in range(n * channels):
        for y in range(oh):
            for x in range(ow):
                corner = np.uint64((plane * h + y * sh) * w + x * sw)
                best = padded[corner]
                won = 0
                for i in range(kh):
                    for j in range(kw):
                        v = padded[corner + np.uint64(i * dh * w + j * dw)]
                        if v > best or v != v:
                            best = v
                            won = i * kw + j
                out[o] = best
                winner[o] = won
                o += np.uint64(1)


@njit(**_JIT)
def _max_windows_2x2(padded, out, winner, n, channels, h, w, oh, ow, sh, sw):
    o = np.uint64(0)
    right, below = np.uint64(1), np.uint64(w)
    for plane in range(n * channels):
        for y in range(oh):
            top = np.uint64((plane * h + y * sh) * w)
            for x in range(ow):
                corner = top + np.uint64(x * sw)
                best = padded[corner]
                won = 0
                v = padded[corner + right]
                if v > best or v != v:
                    best, won = v, 1
                v = padded[corner + below]
                if v > best or v != v:
                    best, won = v, 2
                v = padded[corner + below + right]
                if v > best or v != v:
                    best, won = v, 3
                out[o] = best
                winner[o] = won
                o += np.uint64(1)


@njit(**_JIT)
def _max_spread(gy, winner, padded, n, channels, h, w, oh, ow, kh, kw, sh, sw, dh, dw, add):
    o = np.uint64(0)
    for plane in range(n * channels):
        for y in range(oh):
            for x in range(ow):
                corner = np.uint64((plane * h + y * sh) * w + x * sw)
                g = gy[o]
                won = winner[o]
                o += np.uint64(1)
                for i in range(kh):
                    for j in range(kw):
                        v = g if i * kw + j == won else g * 0.0
                        at = corner + np.uint64(i * dh * w + j * dw)
                        if add:
                            padded[at] += v
                        else:
                            padded[at] = v


@njit(**_JIT)
def _max_spread_2x2(gy, winner, padded, n, channels, h, w, oh, ow, sh, sw):
    # Each tap gets g times 1 or 0 (a product, as _max_spread's), written: no loop over taps.
    o = np.uint64(0)
    right, below = np.uint64(1), np.uint64(w)
    for plane in range(n * channels):
        for y in range(oh):
            top = np.uint64((plane * h + y * sh) * w)
            for x in range(ow):
                corner = top + np.uint64(x * sw)
                g = gy[o]
                won = winner[o]
                o += np.uint64(1)
                padded[corner] = g * (won == 0)
                padded[corner + right] = g * (won == 1)
                padded[corner + below] = g * (won == 2)
                padded[corner + below + right] = g * (won == 3)


# 2x2 windows of stride 2 over rows of exactly 2 * OW elements (the common pool): the
# neighbours along the rows pair up in one flat loop that LLVM vectorises, then the two
# rows' pairs of each window meet. Blocks of planes bound the pairs' scratch. Rows of at
# most _FLAT_PAIRS_UP_TO windows meet in one flat loop over the windows (window o's top
# pair is 2o - o % OW), where a loop per row would run once or twice.
_PAIRS_BLOCK = 1 << 14
_SPREAD_PAIRS_FROM = 4
_FLAT_PAIRS_UP_TO = 2


@njit(**_JIT)
def _max_pairs(padded, out, winner, planes, h, oh, ow):
    """``_max_windows`` of those windows. Pairing along the rows first, then the rows,
    picks as the scan does: of equal maxima the first (left, then top), of NaNs the last."""
    block = max(1, _PAIRS_BLOCK // (h * ow))
    pair = np.empty(block * h * ow, padded.dtype)
    right = np.empty(block * h * ow, np.int8)
    two = np.uint64(2)
    last = ow - 1  # (OW is 1 or 2 where the windows meet in one flat loop)
    for first in range(0, planes, block):
        count = min(block, planes - first)
        start = np.uint64(first * h * 2 * ow)
        for k in range(count * h * ow):
            a = padded[start + two * np.uint64(k)]
            b = padded[start + two * np.uint64(k) + np.uint64(1)]
            later = b > a or b != b
            pair[k] = b if later else a
            right[k] = 1 if later else 0
        if ow <= _FLAT_PAIRS_UP_TO and h == 2 * oh:
            at = np.uint64(first * oh * ow)
            for o in range(count * oh * ow):
                top = np.uint64(2 * o - (o & last))
                below = top + np.uint64(ow)
                a = pair[top]
                b = pair[below]
                later = b > a or b != b
                out[at + np.uint64(o)] = b if later else a
                winner[at + np.uint64(o)] = 2 + right[below] if later else right[top]
            continue
        for p in range(count):
            for y in range(oh):
                top = np.uint64((p * h + 2 * y) * ow)
                below = top + np.uint64(ow)
                o = np.uint64(((first + p) * oh + y) * ow)
                for x in range(ow):
                    a = pair[top + np.uint64(x)]
                    b = pair[below + np.uint64(x)]
                    later = b > a or b != b
                    out[o + np.uint64(x)] = b if later else a
                    winner[o + np.uint64(x)] = (
                        2 + right[below + np.uint64(x)] if later else right[top + np.uint64(x)]
                    )


@njit(**_JIT)
def _spread_pairs(gy, winner, padded, planes, oh, ow):
    """``_max_spread`` of those windows tiling the image (H = 2 * OH): each row's pairs
    get the window's gradient times "the winner is in this row", and their left or right
    element it times "... in this column": products, as ``_max_spread``'s."""
    block = max(1, _PAIRS_BLOCK // (2 * oh * ow))
    pair = np.empty(block * 2 * oh * ow, gy.dtype)
    right = np.empty(block * 2 * oh * ow, np.int8)
    two = np.uint64(2)
    last = ow - 1  # (OW is 1 or 2 where the windows are taken in one flat loop)
    for first in range(0, planes, block):
        count = min(block, planes - first)
        if ow <= _FLAT_PAIRS_UP_TO:
            at = np.uint64(first * oh * ow)
            for o in range(count * oh * ow):
                top = np.uint64(2 * o - (o & last))
                below = top + np.uint64(ow)
                g = gy[at + np.uint64(o)]
                won = winner[at + np.uint64(o)]
                pair[top] = g * (won < 2)
                pair[below] = g * (won >= 2)
                right[top] = won & 1
                right[below] = won & 1
        else:
            for p in range(count):
                for y in range(oh):
                    top = np.uint64((p * 2 * oh + 2 * y) * ow)
                    below = top + np.uint64(ow)
                    o = np.uint64(((first + p) * oh + y) * ow)
                    for x in range(ow):
                        g = gy[o + np.uint64(x)]
                        won = winner[o + np.uint64(x)]
                        pair[top + np.uint64(x)] = g * (won < 2)
                        pair[below + np.uint64(x)] = g * (won >= 2)
                        right[top + np.uint64(x)] = won & 1
                        right[below + np.uint64(x)] = won & 1
        start = np.uint64(first * 2 * oh * 2 * ow)
        for k in range(count * 2 * oh * ow):
            g = pair[k]
            r = right[k]
            padded[start + two * np.uint64(k)] = g * (r == 0)
            padded[start + two * np.uint64(k) + np.uint64(1)] = g * (r == 1)
