"""Flat storage kernels: fill, casting copy and byte swap.

Half storages reach these kernels as uint16 views (see ``convert``); ``store`` applies
numpy's casting rules at compile time, so one kernel body serves every dtype pair.
"""

from __future__ import annotations

from numba import njit, prange

from .._config import config
from .convert import store

_JIT = dict(cache=True, error_model="numpy", nogil=True)


@njit(**_JIT)
def _fill_serial(a, start, stop, value):
    for i in range(start, stop):
        a[i] = value


@njit(parallel=True, **_JIT)
def _fill_parallel(a, start, stop, value):
    for i in prange(start, stop):
        a[i] = value


@njit(**_JIT)
def _copy_serial(src, src_start, dst, dst_start, n):
    for i in range(n):
        store(dst, dst_start + i, src[src_start + i])


@njit(parallel=True, **_JIT)
def _copy_parallel(src, src_start, dst, dst_start, n):
    for i in prange(n):
        store(dst, dst_start + i, src[src_start + i])


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
    """Set ``a[start:stop] = value``; ``value`` is already of ``a``'s kernel dtype."""
    kernel = _fill_parallel if stop - start >= config.parallel_threshold else _fill_serial
    kernel(a, start, stop, value)


def copy(src, src_start: int, dst, dst_start: int, n: int) -> None:
    """``dst[dst_start:+n] = src[src_start:+n]`` with numpy's casting."""
    kernel = _copy_parallel if n >= config.parallel_threshold else _copy_serial
    kernel(src, src_start, dst, dst_start, n)


def byteswap(data, width: int) -> None:
    """Reverse the byte order of every ``width``-byte item of the uint8 array ``data``."""
    if width > 1:
        _byteswap(data, width)
