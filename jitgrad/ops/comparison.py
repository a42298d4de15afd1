"""Whole-array comparisons: numpy's isclose (its formula, by numpy itself), allclose,
array_equal and array_equiv. isclose gives a bool tensor; the others a Python bool, as
numpy's."""

from __future__ import annotations

from functools import partial

import numpy as np

from ..autograd.tensor import Tensor
from ..recording import compute, read_value
from ..tensor import TensorBase
from .numpy_tier import tensor_over


def _values(x):
    """A tensor's values (shared), or any array-like or scalar as numpy takes it."""
    return x.numpy() if isinstance(x, TensorBase) else x


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal infinities close too; nans
    only with ``equal_nan``): numpy's isclose, not symmetric in a and b.

    >>> import jitgrad as jg
    >>> jg.isclose(jg.tensor([1.0, 1e-9, float("nan")]), [1.0 + 1e-6, 0.0, float("nan")]).tolist()
    [True, True, False]
    """
    close = partial(np.isclose, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return tensor_over(compute(close, _values(a), _values(b)))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds everywhere.

    >>> import jitgrad as jg
    >>> jg.allclose(jg.tensor([1.0, 2.0]), jg.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    read_value("allclose")
    return bool(np.allclose(_values(a), _values(b), rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False) -> bool:
    """Whether the two have the same shape and elements (nans equal with ``equal_nan``).

    >>> import jitgrad as jg
    >>> jg.array_equal(jg.tensor([1, 2]), [1, 2]), jg.array_equal(jg.tensor([1, 2]), [[1, 2]])
    (True, False)
    """
    read_value("array_equal")
    return bool(np.array_equal(_values(a1), _values(a2), equal_nan=equal_nan))


def array_equiv(a1, a2) -> bool:
    """Whether the two are equal once broadcast to one shape.

    >>> import jitgrad as jg
    >>> jg.array_equiv(jg.tensor([1, 2]), [[1, 2], [1, 2]])
    True
    """
    read_value("array_equiv")
    return bool(np.array_equiv(_values(a1), _values(a2)))


__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]
