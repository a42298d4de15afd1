"""The default generator and PyTorch's random creation functions (``jg.manual_seed``,
``jg.randn``, ``jg.rand``, ``jg.randint``, ``jg.randperm``).

Everything that draws without being given a generator (these functions, ``nn.init`` and
the layers' initialisation, ``nn.Dropout``) draws from one ``Generator``:
``manual_seed(n)`` restarts it, so a model built twice after the same seed has the same
weights. It starts from fresh entropy. numpy's legacy functions (``jg.random.seed``,
``jg.random.rand``) keep their own stream, as numpy's do.

>>> import jitgrad as jg
>>> _ = jg.manual_seed(0); a = jg.randn(3)
>>> _ = jg.manual_seed(0); b = jg.randn(3)
>>> a.tolist() == b.tolist()
True
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from .generator import Generator

_default = Generator(np.random.PCG64())
_initial_seed: int | None = None


def default_generator() -> Generator:
    """The generator used wherever none is given."""
    return _default


def manual_seed(seed: int) -> Generator:
    """Restart the default generator from ``seed`` (an int; PCG64 seeded as numpy's
    ``default_rng(seed)``), and return it."""
    global _initial_seed
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        raise TypeError(f"manual_seed takes an int, got {type(seed).__name__} {seed!r}")
    _initial_seed = operator.index(seed)
    _default.bit_generator.state = np.random.PCG64(_initial_seed).state
    return _default


def initial_seed() -> int | None:
    """The seed given to the last ``manual_seed`` (None before any)."""
    return _initial_seed


def resolve(generator) -> Generator:
    """``generator``, or the default generator for None."""
    if generator is None:
        return _default
    if isinstance(generator, Generator):
        return generator
    raise TypeError(
        f"generator must be a jg.random.Generator or None, got {type(generator).__name__}"
    )


def _size(size: tuple, keyword) -> tuple[int, ...]:
    """PyTorch's size spellings: ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(size=...)``."""
    if keyword is not None:
        if size:
            raise TypeError("give the size either positionally or as size=, not both")
        size = (keyword,)
    if len(size) == 1 and not hasattr(size[0], "__index__"):
        size = tuple(size[0])
    try:
        shape = tuple(operator.index(n) for n in size)
    except TypeError:
        raise TypeError(f"a size is a sequence of ints, got {size!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"a size cannot have a negative dimension, got {shape}")
    return shape


def _finish(t, requires_grad: bool):
    return t.requires_grad_(True) if requires_grad else t


def randn(*shape, size=None, generator=None, dtype=None, requires_grad: bool = False):
    """Draws from N(0, 1) of shape ``size``, in ``dtype`` (the default dtype for None).

    >>> import jitgrad as jg
    >>> jg.randn(2, 3).shape, jg.randn((4,), dtype=jg.float32).dtype
    ((2, 3), jitgrad.float32)
    """
    drawn = resolve(generator).standard_normal(_size(shape, size), dtype=dtype)
    return _finish(drawn, requires_grad)


def rand(*shape, size=None, generator=None, dtype=None, requires_grad: bool = False):
    """Uniform draws in [0, 1) of shape ``size``, in ``dtype`` (the default for None)."""
    drawn = resolve(generator).random(_size(shape, size), dtype=dtype)
    return _finish(drawn, requires_grad)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, requires_grad=False):
    """Integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``
    (``low``, ``high`` and ``size`` may be keywords), int64 unless ``dtype`` is given.

    >>> import jitgrad as jg
    >>> x = jg.randint(3, 7, (2, 2))
    >>> x.dtype, bool(((x >= 3) & (x < 7)).all())
    (jitgrad.int64, True)
    """
    if size is None and args and not hasattr(args[-1], "__index__"):
        *args, size = args
    if size is None:
        raise TypeError("randint() needs a size: randint(high, size) or randint(low, high, size)")
    if len(args) > 2 or (high is not None and len(args) == 2):
        raise TypeError(f"randint() takes low, high and size, got {len(args) + 1} positions")
    if high is None:
        if not args:
            raise TypeError("randint() needs high")
        high = args[-1]
        args = args[:-1]
    if low is None:
        low = args[0] if args else 0
    d = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    shape = _size((size,), None)
    values = resolve(generator).integers(int(low), int(high), size=shape)
    return _finish(values if d is dtypes.int64 else values.astype(d), requires_grad)


def randperm(n: int, *, generator=None, dtype=None, requires_grad: bool = False):
    """A random permutation of 0, ..., n - 1, int64 unless ``dtype`` is given.

    >>> import jitgrad as jg
    >>> sorted(jg.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"randperm: n must be non-negative, got {n}")
    d = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    values = resolve(generator).permutation(n)
    return _finish(values if d is dtypes.int64 else values.astype(d), requires_grad)


def _like(t, dtype):
    """(shape, dtype) of a tensor drawn like ``t``."""
    return tuple(t.shape), t.dtype if dtype is None else dtype


def randn_like(input, *, generator=None, dtype=None, requires_grad: bool = False):  # noqa: A002
    """``randn`` of ``input``'s shape and dtype (or ``dtype``)."""
    shape, dtype = _like(input, dtype)
    return randn(shape, generator=generator, dtype=dtype, requires_grad=requires_grad)


def rand_like(input, *, generator=None, dtype=None, requires_grad: bool = False):  # noqa: A002
    """``rand`` of ``input``'s shape and dtype (or ``dtype``)."""
    shape, dtype = _like(input, dtype)
    return rand(shape, generator=generator, dtype=dtype, requires_grad=requires_grad)


def randint_like(input, *args, low=None, high=None, generator=None, dtype=None):  # noqa: A002
    """``randint(low, high)`` of ``input``'s shape, in its dtype (or ``dtype``):
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``."""
    shape, dtype = _like(input, dtype)
    return randint(*args, shape, low=low, high=high, generator=generator, dtype=dtype)


__all__ = [
    "default_generator",
    "manual_seed",
    "initial_seed",
    "randn",
    "rand",
    "randint",
    "randperm",
    "randn_like",
    "rand_like",
    "randint_like",
]
