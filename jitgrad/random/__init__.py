"""numpy's ``random`` module, returning jitgrad tensors: the same numbers as numpy for
the same seed.

- ``default_rng(seed)`` gives a ``Generator`` (numpy's PCG64 stream).
- The legacy functions (``seed``, ``rand``, ``randn``, ``randint``, ``choice``,
  ``shuffle``, ``normal``...) draw from one process-wide ``RandomState`` (MT19937) as
  numpy's do. It is jitgrad's own, not numpy's global one: code using ``np.random`` and
  ``jg.random`` in one process does not disturb each other's streams, and
  ``jg.random.seed(0)`` makes ``jg.random`` repeat what ``np.random`` gives after
  ``np.random.seed(0)``.
- Array results are tensors of numpy's dtype and shape; ``size=None`` gives numpy's
  scalar (``rand()`` a Python float, ``randint(5)`` a Python int, ``choice`` of a
  Python-int range a Python int, ``Generator.integers(5)`` a numpy int64).
- The bit generators and ``SeedSequence`` are numpy's own classes.

>>> import jitgrad as jg
>>> jg.random.seed(0)
>>> jg.random.rand(3).tolist()
[0.5488135039273248, 0.7151893663724195, 0.6027633760716439]
>>> jg.random.randn()
-2.268328201180374
"""

from __future__ import annotations

from numpy.random import (
    MT19937,
    PCG64,
    PCG64DXSM,
    SFC64,
    BitGenerator,
    Philox,
    SeedSequence,
)

from .generator import Generator, default_rng
from .legacy import RandomState

# The legacy functions' one state, as numpy keeps one in numpy.random.mtrand: numpy's
# module functions are the bound methods of a module-level RandomState, and so are these.
_global = RandomState()


def get_bit_generator() -> BitGenerator:
    """The bit generator (MT19937) behind the legacy functions."""
    return _global._bit_generator()


def set_bit_generator(bitgen: BitGenerator) -> None:
    """Make the legacy functions draw from ``bitgen``, as numpy's ``set_bit_generator``."""
    _global._numpy = RandomState(bitgen)._numpy


seed = _global.seed
get_state = _global.get_state
set_state = _global.set_state
shuffle = _global.shuffle
beta = _global.beta
binomial = _global.binomial
bytes = _global.bytes  # noqa: A001 (numpy's name)
chisquare = _global.chisquare
choice = _global.choice
dirichlet = _global.dirichlet
exponential = _global.exponential
f = _global.f
gamma = _global.gamma
geometric = _global.geometric
gumbel = _global.gumbel
hypergeometric = _global.hypergeometric
laplace = _global.laplace
logistic = _global.logistic
lognormal = _global.lognormal
logseries = _global.logseries
multinomial = _global.multinomial
multivariate_normal = _global.multivariate_normal
negative_binomial = _global.negative_binomial
noncentral_chisquare = _global.noncentral_chisquare
noncentral_f = _global.noncentral_f
normal = _global.normal
pareto = _global.pareto
permutation = _global.permutation
poisson = _global.poisson
power = _global.power
rand = _global.rand
randint = _global.randint
randn = _global.randn
random = _global.random
random_integers = _global.random_integers
random_sample = _global.random_sample
ranf = _global.random_sample
sample = _global.random_sample
rayleigh = _global.rayleigh
standard_cauchy = _global.standard_cauchy
standard_exponential = _global.standard_exponential
standard_gamma = _global.standard_gamma
standard_normal = _global.standard_normal
standard_t = _global.standard_t
triangular = _global.triangular
uniform = _global.uniform
vonmises = _global.vonmises
wald = _global.wald
weibull = _global.weibull
zipf = _global.zipf

__all__ = [
    "BitGenerator",
    "Generator",
    "MT19937",
    "PCG64",
    "PCG64DXSM",
    "Philox",
    "RandomState",
    "SFC64",
    "SeedSequence",
    "default_rng",
    "get_bit_generator",
    "set_bit_generator",
    "seed",
    "get_state",
    "set_state",
    "shuffle",
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
    "ranf",
    "sample",
    "rayleigh",
    "standard_cauchy",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "standard_t",
    "triangular",
    "uniform",
    "vonmises",
    "wald",
    "weibull",
    "zipf",
]
