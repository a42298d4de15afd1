"""Reductions of a tensor's data that record no graph: the JIT's kernel where it applies,
else numpy's. The layer under both the differentiable reductions (``reduce``) and
broadcasting's adjoint (``movement.sum_to``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .. import backend, tiers
from ..autograd.tensor import Tensor
from ..recording import compute
from ..strided import layout
from ..tensor import TensorBase
from . import numpy_tier
from .numpy_tier import tensor_over


def _reduced(kind: str, x, axes, keepdims: bool, numpy_reduce, dtype=None) -> Tensor:
    """A reduction in ``dtype`` (None: x's; ``numpy_reduce`` is numpy's in it) by numpy for
    small work (the numpy tier), else by the JIT's kernel where it applies, else by
    numpy. Each reads x as it is: numpy's reductions and the kernels widen as they read."""
    if tiers.small(layout.numel(x._shape)):
        return numpy_tier.reduce(kind, x, axes, keepdims, dtype)
    kernels = backend.kernels()
    if kernels is not None:
        out = kernels.reduce(kind, x, axes, keepdims, dtype)
        if out is not None:
            return out
    return tensor_over(compute(partial(numpy_reduce, axis=axes, keepdims=keepdims), x.numpy()))


def sum_to_data(g, shape) -> Tensor:
    """``g`` summed over its broadcast axes back to ``shape``, without recording a graph
    (``SumTo``'s forward; the kernels' backward uses it too)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    axes = layout.broadcast_axes(g.shape, shape)
    return TensorBase.reshape(_reduced("sum", g, axes, False, np.sum), shape)
