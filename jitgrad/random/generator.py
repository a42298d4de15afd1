"""numpy's ``Generator`` API returning jitgrad tensors.

A ``Generator`` wraps a ``numpy.random.Generator`` and draws with it, so a seed gives the
same numbers as ``np.random.default_rng(seed)`` would (PCG64 by default).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from .._config import config
from ..creation import from_numpy
from ..recording import compute, run
from ._draws import draw, numpy_methods, plain, shuffle_in_place

# Drawn by numpy's method of the same name as it is (see _draws.draw); the methods
# written out below add jitgrad's dtypes or write into tensors.
GENERATOR_DRAWS = (
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
    "multivariate_hypergeometric",
    "multivariate_normal",
    "negative_binomial",
    "noncentral_chisquare",
    "noncentral_f",
    "pareto",
    "permutation",
    "permuted",
    "poisson",
    "power",
    "rayleigh",
    "standard_cauchy",
    "standard_exponential",
    "standard_gamma",
    "standard_t",
    "triangular",
    "vonmises",
    "wald",
    "weibull",
    "zipf",
)


def _native(kind: np.dtype):
    """The dtype numpy's ``random`` and ``standard_normal`` draw in for ``kind``: float32
    and float64 natively (their own streams), float16 through float32."""
    return kind if kind in (np.float32, np.float64) else np.float32


@numpy_methods(np.random.Generator, GENERATOR_DRAWS)
class Generator:
    """numpy's ``Generator`` over a bit generator, returning jitgrad tensors.

    ``Generator(bit_generator)`` as in numpy (``jg.random.PCG64(seed)``...); a
    ``numpy.random.Generator`` is wrapped and shares its state. Every method is numpy's
    (signature, numbers, scalar results for ``size=None``); jitgrad tensors may be given
    wherever numpy takes arrays (``p=``, ``a=``, ``mean=``, ``out=``).

    >>> rng = default_rng(0)
    >>> rng.integers(0, 10, size=3).tolist()
    [8, 6, 5]
    >>> rng.choice(5, 3, replace=False, p=rng.dirichlet([1.0] * 5)).tolist()
    [3, 4, 2]
    """

    def __init__(self, bit_generator):
        if isinstance(bit_generator, np.random.Generator):
            self._numpy = bit_generator
        else:
            self._numpy = np.random.Generator(bit_generator)

    def __repr__(self) -> str:
        return f"Generator({type(self.bit_generator).__name__})"

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        """numpy's bit generator this generator draws from (its state is numpy's)."""
        return self._numpy.bit_generator

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` independent generators, numpy's ``Generator.spawn``.

        >>> [g.integers(10) for g in default_rng(1).spawn(2)]
        [np.int64(0), np.int64(9)]
        """
        return [Generator(child) for child in self._numpy.spawn(n_children)]

    def _floats(self, name: str, args: tuple, size, dtype, out=None, bounds=None):
        """numpy's ``name(*args, size)`` in jitgrad's ``dtype`` (the default dtype for
        None). float64, and float32 where numpy draws it natively (``random``,
        ``standard_normal``), are numpy's own draws; other floating dtypes are drawn in
        float64 (float32 for ``random`` and ``standard_normal``) and cast, with ``bounds``
        (low, high) kept: a value just below ``high`` can round up to it when narrowed."""
        d = dtypes.get_default_dtype() if dtype is None else dtypes.as_dtype(dtype)
        if not d.is_floating_point:
            raise TypeError(f"expected a floating dtype, got {d.name}")
        method = getattr(self._numpy, name)
        typed = name in ("random", "standard_normal")  # numpy's methods taking dtype=
        if d.numpy == np.float64 or (typed and d.numpy == np.float32):
            kwargs = {"dtype": d.numpy, "out": out} if typed else {}
            return draw(method, *args, size, **kwargs)
        if out is not None:
            raise TypeError(f"{name}(out=) needs dtype float64 or float32, got {d.name}")
        kind = d.numpy
        args = tuple(plain(a) for a in args)

        def values():
            drawn = method(*args, size, dtype=_native(kind)) if typed else method(*args, size)
            v = np.asarray(drawn, dtype=kind)
            if bounds is not None:
                low, high = (np.asarray(b, dtype=kind) for b in bounds)
                below = np.nextafter(high, kind.type(-np.inf))
                v = np.where((v >= high) & (high > low), below, v).astype(kind, copy=False)
            return v

        # Drawn through compute(): a jitted function draws fresh numbers on every call.
        return from_numpy(compute(values))

    def random(self, size=None, dtype=None, out=None):
        """Uniform floats in [0, 1): float32 and float64 as numpy draws them in that dtype;
        ``out=`` a tensor is filled in place.

        >>> default_rng(0).random(2).tolist()
        [0.6369616873214543, 0.2697867137638703]
        """
        return self._floats("random", (), size, dtype, out, (0.0, 1.0))

    def standard_normal(self, size=None, dtype=None, out=None):
        """Draws from N(0, 1), numpy's float32 and float64 streams; ``out=`` as ``random``.

        >>> default_rng(0).standard_normal(2).tolist()
        [0.1257302210933933, -0.1321048632913019]
        """
        return self._floats("standard_normal", (), size, dtype, out)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=None):
        """Draws from N(loc, scale²); ``dtype`` (jitgrad's) casts numpy's float64 draws.

        >>> default_rng(0).normal(10.0, 2.0, size=2).tolist()
        [10.251460442186787, 9.735790273417397]
        """
        return self._floats("normal", (loc, scale), size, dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=None):
        """Uniform floats in [low, high), drawn in float64 as numpy's ``uniform``; a
        narrower ``dtype`` keeps them below ``high``.

        >>> default_rng(0).uniform(-1, 1, size=2).tolist()
        [0.2739233746429086, -0.4604265724722594]
        """
        return self._floats("uniform", (low, high), size, dtype, bounds=(low, high))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers in [low, high) (``endpoint=True``: [low, high]), numpy's draws; a
        numpy int64 scalar for ``size=None``.

        >>> default_rng(0).integers(5, size=4).tolist()
        [4, 3, 2, 1]
        """
        d = dtypes.as_dtype(dtype)
        if not (d.is_integer or d is dtypes.bool_):  # (numpy draws bools too)
            raise TypeError(f"integers() needs an integer or bool dtype, got {d.name}")
        return draw(self._numpy.integers, low, high, size, dtype=d.numpy, endpoint=endpoint)

    def shuffle(self, x, axis: int = 0) -> None:
        """Shuffle ``x`` in place along ``axis``: a tensor (or a view of one) gets numpy's
        order for the same state.

        >>> import jitgrad as jg
        >>> x = jg.arange(5)
        >>> default_rng(0).shuffle(x); x.tolist()
        [2, 4, 3, 0, 1]
        """
        shuffle_in_place(self._numpy.shuffle, x, axis)


def _restart(bit_generator, state: dict) -> None:
    bit_generator.state = state


def default_rng(seed=None) -> Generator:
    """A ``Generator`` over PCG64 seeded as numpy's ``default_rng(seed)``: the same numbers.
    A generator (jitgrad's or numpy's) or a bit generator is used as it is.

    >>> default_rng(42).random(2).tolist() == np.random.default_rng(42).random(2).tolist()
    True
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        return Generator(seed)
    rng = Generator(np.random.PCG64(plain(seed)))
    if seed is not None and config.thread.tape is not None:
        # Made with a seed inside a traced jg.jit call: every replay starts it again
        # from that seed, as every eager call makes a new one (its draws repeat).
        run(_restart, rng.bit_generator, rng.bit_generator.state)
    return rng


__all__ = ["Generator", "default_rng"]
