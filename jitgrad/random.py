"""Seeded random tensors, numpy's ``Generator`` API returning jitgrad tensors.

Values are drawn by numpy's PCG64 bit generator, so a seed gives the same numbers as
``np.random.default_rng(seed)`` would.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import dtypes
from .autograd.tensor import Tensor
from .creation import asarray, from_numpy
from .recording import compute


class Generator:
    """Random tensors from a seeded PCG64 generator.

    >>> rng = default_rng(0)
    >>> rng.integers(0, 10, size=3).tolist()
    [8, 6, 5]
    """

    def __init__(self, seed=None):
        self._rng = np.random.default_rng(seed)

    def _float(self, draw, size, dtype) -> Tensor:
        d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
        if not d.is_floating_point:
            raise TypeError(f"expected a floating dtype, got {d.name}")
        # Drawn through compute(): a jitted function draws fresh numbers on every call.
        return from_numpy(compute(lambda: np.asarray(draw(size), dtype=d.numpy)))

    def random(self, size=None, dtype=None) -> Tensor:
        """Uniform floats in [0, 1)."""
        return self._float(self._rng.random, size, dtype)

    def standard_normal(self, size=None, dtype=None) -> Tensor:
        return self._float(self._rng.standard_normal, size, dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None) -> Tensor:
        return self._float(lambda s: self._rng.normal(loc, scale, s), size, dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None) -> Tensor:
        return self._float(lambda s: self._rng.uniform(low, high, s), size, dtype)

    def integers(self, low, high=None, size=None, dtype=dtypes.int64, endpoint=False) -> Tensor:
        d = dtypes.as_dtype(dtype)
        if not d.is_integer:
            raise TypeError(f"integers() needs an integer dtype, got {d.name}")
        draw = partial(self._rng.integers, low, high, size, dtype=d.numpy, endpoint=endpoint)
        return from_numpy(compute(draw))

    def permutation(self, x) -> Tensor:
        """A shuffled ``arange(x)`` for an int, else a shuffled copy along the first axis."""
        if isinstance(x, (int, np.integer)):
            return from_numpy(compute(self._rng.permutation, x))
        return from_numpy(compute(self._rng.permutation, asarray(x).numpy()))


def default_rng(seed=None) -> Generator:
    return Generator(seed)
