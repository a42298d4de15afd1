"""PyTorch's generators and random creation functions: ``jg.Generator``,
``jg.default_generator``, ``jg.manual_seed``, ``jg.seed``, ``jg.get_rng_state`` /
``jg.set_rng_state``, ``jg.randn``, ``jg.rand``, ``jg.randint``, ``jg.randperm``.

Everything that draws without being given a generator (these functions, ``nn.init`` and
the layers' initialisation, ``nn.Dropout``) draws from one ``Generator``,
``jg.default_generator``: ``manual_seed(n)`` restarts it, so a model built twice after the
same seed has the same weights. It starts from a seed drawn from fresh entropy. numpy's
legacy functions (``jg.random.seed``, ``jg.random.rand``) keep their own stream, as numpy's
do.

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
from ..creation import from_numpy
from ..device import CPU, check_device
from ..recording import compute, run
from ..tensor import TensorBase
from . import generator as numpy_generator

_SEEDS = range(-(2**63), 2**64)  # PyTorch's: a negative seed is taken modulo 2**64
_STATE_WORDS = 7  # PCG64's state and increment (two words each), its cached half-draw, seed


class Generator(numpy_generator.Generator):
    """PyTorch's ``torch.Generator``: a PCG64 stream that ``manual_seed(n)`` restarts (as
    numpy's ``default_rng(n)``), with ``seed()``, ``initial_seed()`` and
    ``get_state()`` / ``set_state()``. Give it as ``generator=`` to draw from it rather
    than from ``jg.default_generator``; being a ``jg.random.Generator``, it has numpy's
    drawing methods too. A new one starts from a seed drawn from fresh entropy.

    >>> import jitgrad as jg
    >>> g = jg.Generator().manual_seed(3)
    >>> first = jg.rand(2, generator=g)
    >>> jg.rand(2, generator=g.manual_seed(3)).tolist() == first.tolist()
    True
    """

    def __init__(self, device="cpu"):
        check_device(device)
        super().__init__(np.random.PCG64())
        self.seed()

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self._initial_seed})"

    @property
    def device(self):
        """The CPU, jitgrad's one device."""
        return CPU

    def manual_seed(self, seed: int) -> Generator:
        """Restart this generator from ``seed`` (an int in [-2**63, 2**64)); returns it."""
        if isinstance(seed, bool) or not hasattr(seed, "__index__"):
            raise TypeError(f"manual_seed takes an int, got {type(seed).__name__} {seed!r}")
        seed = operator.index(seed)
        if seed not in _SEEDS:
            raise ValueError(f"manual_seed: a seed lies in [-2**63, 2**64), got {seed}")
        # Recorded: a jitted function that seeds restarts the stream on every call.
        run(_restart, self, seed % 2**64)
        return self

    def seed(self) -> int:
        """Restart this generator from a seed drawn from fresh entropy; returns the seed."""
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last started from."""
        return self._initial_seed

    def get_state(self):
        """This generator's state (its seed too) as a uint8 tensor, for ``set_state``."""
        return from_numpy(compute(_state_bytes, self))

    def set_state(self, new_state) -> Generator:
        """Put back a state ``get_state`` gave: the draws that followed it come again."""
        if not isinstance(new_state, TensorBase) or new_state.dtype is not dtypes.uint8:
            got = new_state.dtype.name if isinstance(new_state, TensorBase) else None
            raise TypeError(
                "set_state takes the uint8 tensor get_state gives, got "
                f"{got or type(new_state).__name__}"
            )
        if new_state.shape != (_STATE_WORDS * 8,):
            raise ValueError(
                f"set_state: a generator's state has {_STATE_WORDS * 8} bytes, got shape "
                f"{new_state.shape}"
            )
        run(_load_state, self, new_state.numpy())
        return self


def _restart(generator: Generator, seed: int) -> None:
    generator.bit_generator.state = np.random.PCG64(seed).state
    generator._initial_seed = seed


def _state_bytes(generator: Generator) -> np.ndarray:
    state = generator.bit_generator.state
    words = [
        state["state"]["state"] % 2**64,
        state["state"]["state"] >> 64,
        state["state"]["inc"] % 2**64,
        state["state"]["inc"] >> 64,
        state["has_uint32"],
        state["uinteger"],
        generator._initial_seed,
    ]
    return np.array(words, dtype="<u8").view(np.uint8)


def _load_state(generator: Generator, state_bytes: np.ndarray) -> None:
    words = [int(w) for w in np.ascontiguousarray(state_bytes).view("<u8")]
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": words[0] | words[1] << 64, "inc": words[2] | words[3] << 64},
        "has_uint32": words[4],
        "uinteger": words[5],
    }
    generator._initial_seed = words[6]


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Restart the default generator from ``seed`` (an int; PCG64 seeded as numpy's
    ``default_rng(seed)``), and return it."""
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    """The seed the default generator was last started from."""
    return default_generator.initial_seed()


def seed() -> int:
    """Restart the default generator from a seed drawn from fresh entropy; returns it."""
    return default_generator.seed()


def get_rng_state():
    """The default generator's state, a uint8 tensor for ``set_rng_state``."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Put back a state ``get_rng_state`` gave: the draws that followed it come again."""
    default_generator.set_state(new_state)


def resolve(generator) -> numpy_generator.Generator:
    """``generator``, or the default generator for None."""
    if generator is None:
        return default_generator
    if isinstance(generator, numpy_generator.Generator):
        return generator
    raise TypeError(
        "generator must be a jg.Generator (or a jg.random.Generator) or None, got "
        f"{type(generator).__name__}"
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
    "Generator",
    "default_generator",
    "manual_seed",
    "initial_seed",
    "seed",
    "get_rng_state",
    "set_rng_state",
    "randn",
    "rand",
    "randint",
    "randperm",
    "randn_like",
    "rand_like",
    "randint_like",
]
