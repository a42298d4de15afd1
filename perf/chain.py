"""The elementwise chain, y = tanh(0.7x + 0.1)·sigmoid(x) + 0.5x², defined once: as one
``jg.function`` (``chain``) and as the plain Python function a user writes
(``chain_plain``), which ``jg.jit`` fuses. The rows time it in the runner's process
(``rows_compute``, ``rows_fusion``), the compile row in fresh ones (``startup``), which
import only this module and jitgrad."""

from __future__ import annotations

import numpy as np

import jitgrad as jg

A, B = 0.7, 0.1  # the constants every side of the chain rows uses


@jg.function
def chain(x, a, b):
    return jg.tanh(x * a + b) * jg.sigmoid(x) + 0.5 * x * x


def chain_plain(x):
    return jg.tanh(A * x + B) * jg.sigmoid(x) + 0.5 * x * x


def chain_numpy(x, a, b):
    return np.tanh(x * a + b) * (1 / (1 + np.exp(-x))) + 0.5 * x * x


def chain_numpy_grad(x, a, b):
    """d/dx sum(chain), derived by hand as a numpy user would."""
    t = np.tanh(x * a + b)
    s = 1 / (1 + np.exp(-x))
    return (1 - t * t) * a * s + t * s * (1 - s) + x
