"""Activation functions in PyTorch's functional spelling: softmax and log_softmax along an
axis, and the elementwise activations that take arguments (softplus's ``beta``, elu's
``alpha``) or are compositions of jitgrad's elementwise ops (mish, hardswish).

The compositions fuse into one kernel with their neighbours; their gradients come from the
ops they are made of.
"""

from __future__ import annotations

from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce
from ..ops.elementwise import maximum, minimum, where
from ..ops.unary import clip, exp, expm1, isfinite, log, sigmoid, tanh
from ..ops.unary import softplus as _softplus
from ..strided import layout


def _axis(axis, dim, ndim: int) -> int:
    """One class axis from numpy's ``axis`` or PyTorch's ``dim`` (dim wins when given)."""
    return layout.normalize_dim(axis if dim is None else dim, ndim)


def softmax(x, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """exp(x) normalised to sum to 1 along ``axis`` (or ``dim``), without overflow.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.softmax(jg.tensor([0.0, 0.0, 1e4])).tolist()
    [0.0, 0.0, 1.0]
    """
    x = as_tensor(x)
    axis = _axis(axis, dim, x.ndim)
    e = exp(_shifted(x, axis))
    return e / reduce.sum(e, axis, keepdims=True)


def _shifted(x: Tensor, axis: int) -> Tensor:
    """x minus its max along ``axis``: softmax is invariant to the shift, so the shift
    needs no gradient, and exp of the result never overflows."""
    # No classes: nothing to shift, and max() of none is undefined. A 0-d tensor's dim 0
    # (PyTorch's spelling for its one element) indexes no shape entry.
    if x.ndim and x.shape[axis] == 0:
        return x
    shift = reduce.max(x.detach(), axis, keepdims=True)
    return x - where(isfinite(shift), shift, 0)


def log_softmax(x, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """log(softmax(x)), as ``z - log(sum(exp(z)))`` with ``z = x - max(x)``: finite and
    accurate for logits of any size.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.log_softmax(jg.tensor([1e4, 1e4])).tolist()
    [-0.6931471805599453, -0.6931471805599453]
    """
    x = as_tensor(x)
    axis = _axis(axis, dim, x.ndim)
    z = _shifted(x, axis)
    return z - log(reduce.sum(exp(z), axis, keepdims=True))


def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta·x)) / beta, computed without overflow; x itself where
    ``beta·x > threshold`` (PyTorch's linear region).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> round(F.softplus(jg.tensor([0.0]), beta=2.0).item(), 6)
    0.346574
    """
    x = as_tensor(input)
    scaled = x * beta if beta != 1 else x
    soft = _softplus(scaled) / beta if beta != 1 else _softplus(scaled)
    return where(scaled > threshold, x, soft)


def mish(input) -> Tensor:  # noqa: A002
    """x·tanh(softplus(x)).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> round(F.mish(jg.tensor([1.0])).item(), 6)
    0.865098
    """
    x = as_tensor(input)
    return x * tanh(_softplus(x))


def elu(input, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """x where x > 0, else alpha·(exp(x) - 1).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> [round(v, 6) for v in F.elu(jg.tensor([-1.0, 2.0])).tolist()]
    [-0.632121, 2.0]
    """
    x = as_tensor(input)
    # expm1 of min(x, 0): the branch not taken stays finite, so its zero gradient stays 0
    # (expm1's derivative at a large x would be inf, and 0·inf = nan).
    return where(x > 0, x, alpha * expm1(minimum(x, 0)))


def hardswish(input) -> Tensor:  # noqa: A002
    """x·relu6(x + 3) / 6: 0 below -3, x above 3.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.hardswish(jg.tensor([-4.0, 0.0, 1.5, 4.0])).tolist()
    [-0.0, 0.0, 1.125, 4.0]
    """
    x = as_tensor(input)
    return x * clip(x + 3, 0, 6) / 6


def relu6(input) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6)."""
    return minimum(maximum(as_tensor(input), 0), 6)


def logsigmoid(input) -> Tensor:  # noqa: A002
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    return -_softplus(-as_tensor(input))


def softmin(x, dim: int = -1) -> Tensor:
    """softmax(-x) along ``dim``: weights that favour the smallest entries."""
    return softmax(-as_tensor(x), dim=dim)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """x limited to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    return clip(as_tensor(input), min_val, max_val)


def softsign(input) -> Tensor:  # noqa: A002
    """x / (1 + |x|)."""
    x = as_tensor(input)
    return x / (1 + abs(x))


def glu(input, dim: int = -1) -> Tensor:  # noqa: A002
    """The gated linear unit: a·sigmoid(b), ``a`` and ``b`` the two halves of ``dim``."""
    x = as_tensor(input)
    dim = layout.normalize_dim(dim, x.ndim)
    if x.shape[dim] % 2:
        raise ValueError(f"glu halves dimension {dim}, whose length {x.shape[dim]} is odd")
    half = x.shape[dim] // 2
    return x.narrow(dim, 0, half) * sigmoid(x.narrow(dim, half, half))


def prelu(input, weight) -> Tensor:  # noqa: A002
    """max(x, 0) + weight·min(x, 0), one weight for all channels or one per channel
    (dimension 1)."""
    x, weight = as_tensor(input), as_tensor(weight)
    if weight.ndim != 1 or weight.shape[0] not in (1, x.shape[1] if x.ndim > 1 else 1):
        raise ValueError(
            f"prelu: weight of shape {weight.shape} must hold 1 or one per channel "
            f"(dimension 1) of input of shape {x.shape}"
        )
    if weight.shape[0] > 1:
        weight = weight.reshape((-1,) + (1,) * (x.ndim - 2))
    return maximum(x, 0) + weight * minimum(x, 0)


__all__ = [
    "softmax",
    "log_softmax",
    "softplus",
    "mish",
    "elu",
    "hardswish",
    "relu6",
    "logsigmoid",
    "softmin",
    "hardtanh",
    "softsign",
    "glu",
    "prelu",
]
