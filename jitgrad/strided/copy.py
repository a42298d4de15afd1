"""Choose and run the copy kernel for a pair of strided layouts over flat arrays."""

from __future__ import annotations

import numba
import numpy as np

from .._config import config
from . import kernels
from .layout import coalesce, numel

_NO_DIMS = np.zeros(0, dtype=np.int64)


def copy_strided(src, s0: int, s_strides, dst, d0: int, d_strides, shape) -> None:
    """``dst[d0 + Σ i·ds] = src[s0 + Σ i·ss]`` for every index of ``shape``, casting.

    ``src`` and ``dst`` are kernel arrays (float16 as uint16 bits). The caller guarantees
    both layouts stay inside their arrays and that they do not overlap.
    """
    dims = []
    for n, ds, ss in zip(shape, d_strides, s_strides):
        if n == 0:
            return
        if n == 1:
            continue
        if ds < 0:  # walk the destination forwards: sequential writes, more merging
            d0 += (n - 1) * ds
            s0 += (n - 1) * ss
            ds, ss = -ds, -ss
        dims.append((n, ds, ss))
    dims.sort(key=lambda dim: (dim[1], abs(dim[2])), reverse=True)
    shape, d_strides, s_strides = coalesce(
        [n for n, _, _ in dims], [ds for _, ds, _ in dims], [ss for _, _, ss in dims]
    )
    parallel = numel(shape) >= config.parallel_threshold

    if len(shape) <= 1:
        n, ss, ds = (shape[0], s_strides[0], d_strides[0]) if shape else (1, 0, 0)
        if parallel:
            chunk = -(-n // (4 * numba.get_num_threads()))
            kernels.copy_flat_parallel(src, s0, ss, dst, d0, ds, n, chunk)
        else:
            kernels.copy_flat_serial(src, s0, ss, dst, d0, ds, n)
        return

    inner = len(shape) - 1
    row = min(range(inner), key=lambda k: abs(s_strides[k]))
    if abs(s_strides[inner]) > 1 and abs(s_strides[row]) < abs(s_strides[inner]):
        # The source runs along another dimension than the destination: a (batched)
        # transpose. Tiles keep both sides' cache lines in use.
        outer = [k for k in range(inner) if k != row]
        kernel = kernels.copy_tiles_parallel if parallel else kernels.copy_tiles_serial
        kernel(src, s0, dst, d0, *_outer(outer, shape, s_strides, d_strides),
               shape[row], s_strides[row], d_strides[row],
               shape[inner], s_strides[inner], d_strides[inner])  # fmt: skip
        return

    kernel = kernels.copy_rows_parallel if parallel else kernels.copy_rows_serial
    kernel(src, s0, dst, d0, *_outer(range(inner), shape, s_strides, d_strides),
           shape[inner], s_strides[inner], d_strides[inner])  # fmt: skip


def _outer(dims, shape, s_strides, d_strides):
    if not dims:
        return _NO_DIMS, _NO_DIMS, _NO_DIMS
    return (
        np.array([shape[k] for k in dims], dtype=np.int64),
        np.array([s_strides[k] for k in dims], dtype=np.int64),
        np.array([d_strides[k] for k in dims], dtype=np.int64),
    )

