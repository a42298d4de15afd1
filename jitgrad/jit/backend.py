"""jitgrad's kernel ``Backend`` (``jitgrad/backend.py``): numba kernels generated from the
ops' formulas (``lowering``), the reductions' kernels (``reduction``), the fused
cross-entropy rows (``rows``), the convolutions' window loops (``conv_kernels``) and
the scatter-add of rows (``index_kernels``)."""

from __future__ import annotations

from . import conv_kernels, index_kernels, lowering, reduction, rows


class Kernels:
    """The ``Backend`` protocol, implemented by the jit layer's modules."""

    elementwise_forward = staticmethod(lowering.forward)
    elementwise_backward = staticmethod(lowering.backward)
    reduce = staticmethod(reduction.reduce)
    update = staticmethod(lowering.update)
    cross_entropy_applies = staticmethod(rows.applies)
    cross_entropy_forward = staticmethod(rows.cross_entropy_forward)
    cross_entropy_backward = staticmethod(rows.cross_entropy_backward)

    @staticmethod
    def row_scatter(out, index, values):
        return index_kernels.add_rows if index_kernels.applies(out, index, values) else None

    @staticmethod
    def window_loops(*arrays, columns=None):
        return conv_kernels if conv_kernels.applies(*arrays, columns=columns) else None


KERNELS = Kernels()
