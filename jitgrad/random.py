"""Seeded random tensors, numpy's ``Generator`` API returning jitgrad tensors.

Values are drawn by numpy's PCG64 bit generator, so a seed gives the same numbers as
``np.random.default_rng(seed)`` would.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import dtypes
from ._config import config
from .autograd.tensor import Tensor
from .creation import asarray, from_numpy
from .recording import compute, run


def _native(kind: np.dtype):
    """The dtype numpy's ``random`` and ``standard_normal`` draw in for ``kind``: float32
    and float64 natively (their own streams), float16 through float32."""
    return kind if kind in (np.float32, np.float64) else np.float32


class Generator:
    """Random tensors from a seeded PCG64 generator.

    >>> rng = default_rng(0)
    >>> rng.integers(0, 10, size=3).tolist()
    [8, 6, 5]
    """

    def __init__(self, seed=None):
        self._rng = np.random.default_rng(seed)
        if seed is not None and config.thread.tape is not None:
            # Made with a seed inside a traced jg.jit call: every replay starts it again
            # from that seed, as every eager call makes a new one (its draws repeat).
            run(_restart, self._rng.bit_generator, self._rng.bit_generator.state)

    def _float(self, draw, size, dtype, bounds=None) -> Tensor:
        """``draw(size, numpy dtype)`` as a tensor of ``dtype``. With ``bounds`` (low, high)
        the values stay below ``high``: one drawn in float64 just below it can round up to
        it in a narrower dtype."""
        d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
        if not d.is_floating_point:
            raise TypeError(f"expected a floating dtype, got {d.name}")
        kind = d.numpy

        def values():
            v = np.asarray(draw(size, kind), dtype=kind)
            if bounds is not None:
                low, high = (np.asarray(b, dtype=kind) for b in bounds)
                below = np.nextafter(high, kind.type(-np.inf))
                v = np.where((v >= high) & (high > low), below, v).astype(kind, copy=False)
            return v

        # Drawn through compute(): a jitted function draws fresh numbers on every call.
        return from_numpy(compute(values))

    def random(self, size=None, dtype=None) -> Tensor:
        """Uniform floats in [0, 1): float32 and float64 as numpy draws them in that dtype."""
        return self._float(lambda s, k: self._rng.random(s, dtype=_native(k)), size, dtype,
                           (0.0, 1.0))  # fmt: skip

    def standard_normal(self, size=None, dtype=None) -> Tensor:
        return self._float(lambda s, k: self._rng.standard_normal(s, dtype=_native(k)), size,
                           dtype)  # fmt: skip

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None) -> Tensor:
        return self._float(lambda s, k: self._rng.normal(loc, scale, s), size, dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None) -> Tensor:
        """Uniform floats in [low, high), drawn in float64 as numpy's ``uniform``."""
        return self._float(lambda s, k: self._rng.uniform(low, high, s), size, dtype,
                           (low, high))  # fmt: skip

    def integers(self, low, high=None, size=None, dtype=dtypes.int64, endpoint=False) -> Tensor:
        d = dtypes.as_dtype(dtype)
        if not (d.is_integer or d is dtypes.bool_):  # (numpy draws bools too)
            raise TypeError(f"integers() needs an integer or bool dtype, got {d.name}")
        draw = partial(self._rng.integers, low, high, size, dtype=d.numpy, endpoint=endpoint)
        return from_numpy(compute(draw))

    def permutation(self, x) -> Tensor:
        """A shuffled ``arange(x)`` for an int, else a shuffled copy along the first axis."""
        if isinstance(x, (int, np.integer)):
            return from_numpy(compute(self._rng.permutation, x))
        return from_numpy(compute(self._rng.permutation, asarray(x).numpy()))


def _restart(bit_generator, state: dict) -> None:
    bit_generator.state = state


def default_rng(seed=None) -> Generator:
    return Generator(seed)
