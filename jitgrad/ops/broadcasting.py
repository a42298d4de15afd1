"""numpy's broadcasting helpers: the shape several operands broadcast to, and views of
tensors broadcast against each other (differentiable: each is ``broadcast_to``, whose
gradient sums back over the repeated axes)."""

from __future__ import annotations

from ..autograd.tensor import Tensor, as_tensor
from ..strided import layout
from .reduce import broadcast_to

__all__ = ["broadcast_arrays", "broadcast_shapes"]


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` (ints or sequences of ints) broadcast to.

    >>> import jitgrad as jg
    >>> jg.broadcast_shapes((2, 1), (3,), 1)
    (2, 3)
    """
    return layout.broadcast_shapes(*(layout.as_shape(s) for s in shapes))


def broadcast_arrays(*arrays) -> tuple[Tensor, ...]:
    """Views of ``arrays`` broadcast to their common shape (no copy), as numpy 2's
    tuple.

    >>> import jitgrad as jg
    >>> a, b = jg.broadcast_arrays(jg.arange(3), jg.zeros((2, 1)))
    >>> a.shape, b.shape, a.stride()
    ((2, 3), (2, 3), (0, 1))
    """
    tensors = [as_tensor(a) for a in arrays]
    shape = layout.broadcast_shapes(*(t.shape for t in tensors))
    return tuple(broadcast_to(t, shape) for t in tensors)
