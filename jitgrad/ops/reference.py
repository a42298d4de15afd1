"""The reference evaluator's math: numpy over arrays, under the names jitgrad's ops use.

Elementwise formulas (``ops/elementwise.py``) are written against a namespace ``m``. Given
this module they compute with numpy on arrays (the eager path, and later the oracle the JIT
is tested against); given ``jitgrad.ops.tensor_math`` the same formulas build a recorded
graph of tensors (``create_graph``). Its functions are the ``numpy`` column of
``primitives.PRIMITIVES``.
"""

from __future__ import annotations

import math

import numpy as np

from ..strided import layout as _layout  # private: this module is a formula namespace
from .primitives import PRIMITIVES as _PRIMITIVES

pi = math.pi

globals().update({p.name: p.numpy for p in _PRIMITIVES.values()})


def sum_to(g, shape):
    """Sum ``g`` over the axes that broadcasting added, back to ``shape``."""
    g = np.asarray(g)
    if g.shape == tuple(shape):
        return g
    return g.sum(axis=_layout.broadcast_axes(g.shape, shape), keepdims=True).reshape(shape)
