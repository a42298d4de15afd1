"""numpy's integer ufuncs without a kernel formula: ``gcd``, ``lcm`` and
``bitwise_count``, computed by numpy on the tensors' values (integers: no gradients).
They take numpy's ufunc keywords (``out=``, ``where=``, ``dtype=``, ``casting=``) and
methods as every jitgrad ufunc does.

>>> import jitgrad as jg
>>> jg.gcd(jg.tensor([12, 20]), 8).tolist(), jg.lcm.reduce(jg.tensor([4, 6, 10])).item()
([4, 4], 60)
"""

from __future__ import annotations

import numpy as np

from ..autograd.tensor import Tensor
from ..recording import compute
from ..tensor import TensorBase
from .numpy_tier import tensor_over
from .ufunc import ufunc


def _by_numpy(numpy_ufunc, *operands) -> Tensor:
    """numpy's ``numpy_ufunc`` of the operands' values (Python numbers stay weak)."""
    values = [
        TensorBase.numpy(x)
        if isinstance(x, TensorBase)
        else np.asarray(x)
        if isinstance(x, (list, tuple))
        else x
        for x in operands
    ]
    return tensor_over(compute(numpy_ufunc, *values))


@ufunc(nin=2)
def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2|, elementwise (integers), numpy's.

    >>> import jitgrad as jg
    >>> jg.gcd(jg.tensor([-12, 0, 7]), jg.tensor([18, 5, 0])).tolist()
    [6, 5, 7]
    """
    return _by_numpy(np.gcd, x1, x2)


@ufunc(nin=2)
def lcm(x1, x2):
    """The lowest common multiple of |x1| and |x2|, elementwise (integers), numpy's.

    >>> import jitgrad as jg
    >>> jg.lcm(jg.tensor([4, -6, 0]), 10).tolist()
    [20, 30, 0]
    """
    return _by_numpy(np.lcm, x1, x2)


@ufunc(nin=1)
def bitwise_count(x):
    """The number of 1 bits in |x|, as uint8 (numpy's ``bitwise_count``, integers).

    >>> import jitgrad as jg
    >>> jg.bitwise_count(jg.tensor([0, 7, -8, 255])).tolist()
    [0, 3, 1, 8]
    """
    return _by_numpy(np.bitwise_count, x)


__all__ = ["gcd", "lcm", "bitwise_count"]
