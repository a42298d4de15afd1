"""Flat storage kernels: fill, casting copy and byte swap.

Half storages reach these kernels as uint16 views (see ``convert``): fills write bits as
they are, and copies take each side's ``HALF``/``NOT_HALF`` flag, from which ``cast`` applies
numpy's casting rules at compile time, so one kernel body serves every dtype pair.
"""

from __future__ import annotations

import ctypes

import numpy as np
from numba import njit

from .. import threads, tiers
from .._config import config
from .convert import cast

_JIT = dict(cache=True, error_model="numpy", nogil=True)

# Indices are cast to unsigned: numba wraps negative indices around, and that select keeps
# LLVM from vectorising a loop whose start it cannot prove non-negative (a fill from
# ``start`` ran 6x slower, a float64 -> float32 copy 2.2x).


@njit(inline="always", **_JIT)
def _fill_range(a, start, stop, value):
    for i in range(start, stop):
        a[np.uint64(i)] = value


@njit(inline="always", **_JIT)
def _copy_range(src, src_half, src_start, dst, dst_half, dst_start, first, last):
    for i in range(first, last):
        cast(dst, np.uint64(dst_start + i), src[np.uint64(src_start + i)], dst_half, src_half)


@njit(**_JIT)
def _fill(a, start, stop, value):
    _fill_range(a, start, stop, value)


def _set_bytes(a, start: int, stop: int, byte: int) -> None:
    """Every byte of ``a[start:stop]`` (a contiguous array, a storage's) set to ``byte`` by
    libc's memset, which releases the GIL and needs no kernel loaded."""
    itemsize = a.itemsize
    ctypes.memset(a.ctypes.data + start * itemsize, byte, (stop - start) * itemsize)


@njit(**_JIT)
def _copy(src, src_half, src_start, dst, dst_half, dst_start, first, last):
    _copy_range(src, src_half, src_start, dst, dst_half, dst_start, first, last)


@njit(**_JIT)
def _byteswap(data, width):
    # Works on raw bytes so one kernel serves every item width (complex swaps each half).
    half = width // 2
    for item in range(data.size // width):
        base = item * width
        for j in range(half):
            lo = base + j
            hi = base + width - 1 - j
            data[lo], data[hi] = data[hi], data[lo]


def fill(a, start: int, stop: int, value) -> None:
    """Set ``a[start:stop] = value``; ``value`` is already of ``a``'s kernel dtype.

    A large fill whose value is one byte repeated (zeros above all, and every value of a
    one-byte dtype) goes to memset, which writes a range larger than the cache without
    first reading each line it writes, as stores in a loop do: a 64 MiB zero fill took
    0.8 ms instead of 1.85 here, and memset is as fast or faster at every size from 1 MiB.
    Other values take a store loop (non-temporal stores were no faster at any size).
    """
    n = stop - start
    if tiers.small(n):  # numpy's fill: no kernel to load for small work
        a[start:stop] = value
        return
    byte = _repeated_byte(value)
    if byte >= 0:
        _in_pieces(n, a.itemsize, lambda lo, hi: _set_bytes(a, start + lo, start + hi, byte))
    else:
        _in_pieces(n, a.itemsize, lambda lo, hi: _fill(a, start + lo, start + hi, value))


def _repeated_byte(value) -> int:
    """The byte ``value``'s every byte is, or -1."""
    raw = np.asarray(value).tobytes()
    return raw[0] if raw.count(raw[:1]) == len(raw) else -1


def copy(src, src_half, src_start: int, dst, dst_half, dst_start: int, n: int) -> None:
    """``dst[dst_start:+n] = src[src_start:+n]`` with numpy's casting; ``src_half`` and
    ``dst_half`` are the arrays' ``convert.HALF``/``NOT_HALF`` flags."""
    if tiers.small(n) and src.dtype == dst.dtype and src_half == dst_half:
        # numpy's copy: no kernel to load for small work (equal flags: one representation)
        dst[dst_start : dst_start + n] = src[src_start : src_start + n]
        return

    def piece(lo, hi):
        _copy(src, src_half, src_start, dst, dst_half, dst_start, lo, hi)

    _in_pieces(n, dst.itemsize, piece)


def _in_pieces(n: int, itemsize: int, kernel) -> None:
    """``kernel(lo, hi)`` over ``[0, n)``: at once below the light kernels' parallel size,
    above it in pieces on jitgrad's threads (``threads.run``), so that a worker whose CPU
    wakes late does not hold the launch up by a whole half, as numba's fixed share per
    thread did. Timed between other calls, as a program makes them: a 64 MiB float32 fill
    took 1.9-2.0 ms in pieces against 2.1 in halves (numpy's 1.9), a float64 -> float32
    copy of 2^24 elements 1.7 ms against 2.0-2.1 (numpy's 2.4)."""
    if n < config.light_threshold:
        kernel(0, n)
        return
    # Inner cuts on whole 64-byte cache lines, so that no two threads write one line.
    cuts = threads.bounds(n, max(1, 64 // itemsize), threads.pieces(n, config.light_threshold))
    threads.run(lambda k: kernel(*cuts[k]), len(cuts))


def byteswap(data, width: int) -> None:
    """Reverse the byte order of every ``width``-byte item of the uint8 array ``data``."""
    if width > 1:
        _byteswap(data, width)
