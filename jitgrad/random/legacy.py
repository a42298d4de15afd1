"""numpy's legacy ``RandomState`` API (``np.random.seed``, ``rand``, ``randn``...)
returning jitgrad tensors.

A ``RandomState`` wraps a ``numpy.random.RandomState`` (MT19937) and draws with it, so a
seed gives numpy's numbers: ``jg.random.seed(0); jg.random.rand(3)`` equals
``np.random.seed(0); np.random.rand(3)``.
"""

from __future__ import annotations

import numpy as np

from .._config import config
from ..recording import run
from ._draws import numpy_methods, plain, shuffle_in_place

# Drawn by numpy's method of the same name as it is (see _draws.draw).
RANDOM_STATE_DRAWS = (
    "beta",
    "binomial",
    "bytes",
    "chisquare",
    "choice",
    "dirichlet",
    "exponential",
    "f",
    "gamma",
    "geometric",
    "gumbel",
    "hypergeometric",
    "laplace",
    "logistic",
    "lognormal",
    "logseries",
    "multinomial",
    "multivariate_normal",
    "negative_binomial",
    "noncentral_chisquare",
    "noncentral_f",
    "normal",
    "pareto",
    "permutation",
    "poisson",
    "power",
    "rand",
    "randint",
    "randn",
    "random",
    "random_integers",
    "random_sample",
    "rayleigh",
    "standard_cauchy",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "standard_t",
    "tomaxint",
    "triangular",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
    "zipf",
)


@numpy_methods(np.random.RandomState, RANDOM_STATE_DRAWS)
class RandomState:
    """numpy's legacy ``RandomState`` (MT19937), returning jitgrad tensors.

    ``RandomState(seed)`` takes what numpy's takes (None, an int, an array of ints, a bit
    generator). Every method is numpy's: the same numbers for the same seed, numpy's
    scalar types for ``size=None`` (``rand()`` a Python float, ``randint(5)`` a Python
    int), tensors for arrays; tensors may be given wherever numpy takes arrays.

    >>> rs = RandomState(0)
    >>> rs.rand(2).tolist()
    [0.5488135039273248, 0.7151893663724195]
    >>> rs.randint(10, size=3).tolist()
    [3, 3, 7]
    """

    def __init__(self, seed=None):
        self._numpy = np.random.RandomState(plain(seed))
        if seed is not None and config.thread.tape is not None:
            # Made with a seed inside a traced jg.jit call: every replay starts it again
            # from that seed, as every eager call makes a new one (its draws repeat).
            run(self._numpy.set_state, self._numpy.get_state())

    def __repr__(self) -> str:
        return f"RandomState(MT19937) at 0x{id(self):X}"

    def seed(self, seed=None) -> None:
        """Reseed, as numpy's ``RandomState.seed`` (inside ``jg.jit``, every replay
        reseeds).

        >>> rs = RandomState(); rs.seed(0); rs.rand()
        0.5488135039273248
        """
        run(self._numpy.seed, plain(seed))

    def get_state(self, legacy: bool = True):
        """numpy's state tuple (``legacy=False``: its dict), for ``set_state``."""
        return self._numpy.get_state(legacy=legacy)

    def set_state(self, state) -> None:
        """Restore a state from ``get_state`` (jitgrad's or numpy's).

        >>> rs = RandomState(1); state = rs.get_state(); a = rs.randn()
        >>> rs.set_state(state); rs.randn() == a
        True
        """
        run(self._numpy.set_state, state)

    def shuffle(self, x) -> None:
        """Shuffle ``x`` in place along its first axis: a tensor (or a view of one) gets
        numpy's order for the same state.

        >>> import jitgrad as jg
        >>> x = jg.arange(5)
        >>> RandomState(0).shuffle(x); x.tolist()
        [2, 0, 1, 3, 4]
        """
        shuffle_in_place(self._numpy.shuffle, x)

    def _bit_generator(self) -> np.random.BitGenerator:
        return self._numpy._bit_generator


__all__ = ["RandomState"]
