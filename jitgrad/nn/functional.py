"""Activations and losses in PyTorch's functional spelling: ``F.softmax(x, dim=1)``,
``F.cross_entropy(logits, labels)``.

Everything here is composed of differentiable ops, so gradients of any order come from
theirs; stability comes from the composition (a detached max shift, ``softplus``), not from
hand-written backward passes.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._config import config
from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce
from ..ops.convolution import conv1d, conv2d, conv_transpose2d, fold, unfold
from ..ops.elementwise import where
from ..ops.linalg import linear
from ..ops.pooling import adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from ..ops.unary import exp, gelu, isfinite, leaky_relu, log, relu, sigmoid, silu, softplus, tanh
from ..random import Generator, default_rng
from ..recording import compute
from ..strided import layout
from .attention import scaled_dot_product_attention

_REDUCTIONS = ("mean", "sum", "none")


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


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return reduce.mean(loss)
    if reduction == "sum":
        return reduce.sum(loss)
    return loss


def _check_reduction(reduction, name: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _same_shape(name: str, what: str, a: Tensor, b: Tensor) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"{name}: {what} of shape {b.shape} does not match the input's shape {a.shape}"
        )


def cross_entropy(
    logits,
    target,
    *,
    weight=None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The negative log-likelihood of ``target`` under ``softmax(logits)`` (PyTorch's).

    ``logits`` is (N, C), (N, C, d1, ...) or unbatched (C,); classes lie on axis 1 (axis 0
    when unbatched). ``target`` holds integer class labels of the logits' shape without the
    class axis (a label equal to ``ignore_index`` contributes nothing), or class
    probabilities of the logits' own shape. ``weight`` (C,) rescales classes; a weighted
    mean divides by the weights of the labels, as PyTorch. ``label_smoothing`` mixes the
    target with the uniform distribution over classes.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> round(F.cross_entropy(jg.zeros((2, 4)), jg.tensor([0, 3])).item(), 6)
    1.386294
    """
    name = "cross_entropy"
    _check_reduction(reduction, name)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing}")
    logits, target = as_tensor(logits), as_tensor(target)
    if logits.ndim == 0:
        raise ValueError(f"{name}: logits must have a class dimension, got a 0-d tensor")
    axis = 1 if logits.ndim > 1 else 0
    n_classes = logits.shape[axis]
    broadcast = tuple(n_classes if i == axis else 1 for i in range(logits.ndim))
    w = None
    if weight is not None:
        w = as_tensor(weight)
        if w.shape != (n_classes,):
            raise ValueError(
                f"{name}: weight of shape {w.shape} should have one entry per class, "
                f"shape ({n_classes},), for logits of shape {logits.shape}"
            )
        w = w.reshape(broadcast)
    if target.dtype.is_floating_point:  # class probabilities
        _same_shape(name, "probability target", logits, target)
        q = target
        if label_smoothing:
            q = q * (1 - label_smoothing) + label_smoothing / n_classes
        logp = log_softmax(logits, axis)
        loss = -reduce.sum(q * logp if w is None else q * w * logp, axis)
        return _reduce(loss, reduction)
    labels = _checked_labels(name, logits, target, axis, ignore_index)
    kernels = backend.kernels()
    if (
        w is None
        and not label_smoothing
        and kernels is not None
        and kernels.cross_entropy_applies(logits, target)
    ):
        return _SoftmaxCrossEntropy(ignore_index, reduction)(logits, target)
    logp = log_softmax(logits, axis)
    # Label-dependent arrays go through compute(): a jitted step rebuilds them per batch.
    hot = as_tensor(compute(_target_mask, labels, n_classes, axis, ignore_index))
    counted = compute(np.not_equal, labels, ignore_index)
    # The target's log-probability is selected, not multiplied by a one-hot: a masked
    # (-inf) logit of another class would make 0 * -inf = nan.
    chosen = where(hot, logp, 0)
    loss = -reduce.sum(chosen if w is None else w * chosen, axis)
    if label_smoothing:
        # PyTorch's smoothing term, -sum(w * logp) over every class: inf for a -inf logit,
        # as in PyTorch; an ignored label contributes nothing, whatever its logits.
        spread = -reduce.sum(logp if w is None else w * logp, axis)
        loss = (1 - label_smoothing) * loss + label_smoothing / n_classes * spread
        loss = where(as_tensor(counted), loss, 0)
    if reduction != "mean":
        return _reduce(loss, reduction)
    if w is None:
        divisor = as_tensor(compute(np.count_nonzero, counted)).astype(logp.dtype)
    else:
        divisor = reduce.sum(where(hot, w, 0))
    return _mean_over_counted(reduce.sum(loss), divisor, counted)


def _mean_over_counted(total: Tensor, divisor: Tensor, counted: np.ndarray) -> Tensor:
    """``total / divisor``; NaN when no label counts, as PyTorch's 0 / 0, but with a zero
    gradient then (as PyTorch's) rather than 0 * inf = nan, which would poison the
    parameters at the next optimizer step."""
    anything = as_tensor(compute(np.any, counted))
    return where(anything, total / where(anything, divisor, 1), np.nan)


class _SoftmaxCrossEntropy(Function):
    """Cross-entropy of (N, C) logits with integer labels as one forward and one backward
    kernel (``jit/rows.py``); the composite form above is the reference."""

    def __init__(self, ignore_index: int, reduction: str):
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, logits, target):
        self._logits = logits.contiguous()
        loss, self._count = backend.kernels().cross_entropy_forward(
            self._logits, target, self.ignore_index, self.reduction
        )
        return loss

    def backward(self, gy):
        logits, target = self.inputs
        if config.thread.grad_enabled:  # create_graph: the same gradient from recorded ops
            mask = compute(_target_mask, target.numpy(), logits.shape[1], 1, self.ignore_index)
            hot = as_tensor(mask).astype(logits.dtype)
            counted = reduce.sum(hot, 1, keepdims=True)  # 0 on ignored rows
            if self.reduction == "none":
                scale = gy.reshape(-1, 1)
            elif self.reduction == "mean":
                scale = gy * as_tensor(
                    compute(_reciprocal_or_zero, self._count.numpy(), logits.dtype.numpy)
                )
            else:
                scale = gy
            return (softmax(logits, 1) * counted - hot) * scale, None
        dz = backend.kernels().cross_entropy_backward(
            self._logits, target, self.ignore_index, self.reduction, gy, self._count
        )
        return dz, None


def _checked_labels(name, logits, target, axis, ignore_index) -> np.ndarray:
    """The integer labels as a numpy array, after checking shape and range."""
    expected = logits.shape[:axis] + logits.shape[axis + 1 :]
    if target.shape != expected:
        raise ValueError(
            f"{name}: target of shape {target.shape} does not match logits of shape "
            f"{logits.shape}: class labels need shape {expected} (the logits' shape "
            f"without the class axis {axis})"
        )
    if not target.dtype.is_integer:
        raise TypeError(
            f"{name}: target must hold integer class labels or float probabilities, "
            f"got {target.dtype.name}"
        )
    labels, n_classes = target.numpy(), logits.shape[axis]
    valid = labels != ignore_index
    bad = valid & ((labels < 0) | (labels >= n_classes))
    if bad.any():
        allowed = (
            f"labels lie in [0, {n_classes - 1}]"
            if n_classes
            else f"the class axis {axis} is empty, so every label must be"
        )
        raise IndexError(
            f"{name}: target label {int(labels[bad].flat[0])} is out of range for "
            f"{n_classes} classes ({allowed} or equal ignore_index={ignore_index})"
        )
    return labels


def _target_mask(labels, n_classes, axis, ignore_index):
    """True at each label's class, with the class axis at ``axis``; all False for a label
    equal to ``ignore_index``."""
    hot = (labels[..., None] == np.arange(n_classes)) & (labels != ignore_index)[..., None]
    return np.moveaxis(hot, -1, axis)


def _reciprocal_or_zero(count, dtype):
    """1 / count, or 0 for no counted labels: their gradient is 0, as PyTorch's."""
    count = count.reshape(())
    return np.asarray(1 / count if count else 0, dtype=dtype)


def mse_loss(input, target, *, reduction: str = "mean") -> Tensor:  # noqa: A002  PyTorch's name
    """Mean (or summed) squared error; ``input`` and ``target`` must have one shape.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.mse_loss(jg.tensor([1.0, 2.0]), jg.tensor([1.0, 4.0])).item()
    2.0
    """
    _check_reduction(reduction, "mse_loss")
    input, target = as_tensor(input), as_tensor(target)
    _same_shape("mse_loss", "target", input, target)
    diff = input - target
    return _reduce(diff * diff, reduction)


def binary_cross_entropy_with_logits(
    logits, target, *, weight=None, reduction: str = "mean", pos_weight=None
) -> Tensor:
    """-[t·log σ(x) + (1 - t)·log(1 - σ(x))], written with softplus so that no logit
    overflows. ``pos_weight`` scales the positive term (broadcast along the last axis, one
    entry per class); ``weight`` scales each element's loss.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(jg.tensor([1e4, -1e4]), jg.tensor([1.0, 0.0])).item()
    0.0
    """
    name = "binary_cross_entropy_with_logits"
    _check_reduction(reduction, name)
    logits, target = as_tensor(logits), as_tensor(target)
    _same_shape(name, "target", logits, target)
    # -log σ(x) = softplus(-x) and -log(1 - σ(x)) = x + softplus(-x).
    positive = softplus(-logits)
    if pos_weight is not None:
        positive = positive * (1 + (as_tensor(pos_weight) - 1) * target)
    loss = (1 - target) * logits + positive
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def dropout(x, p: float = 0.5, training: bool = True, generator=None) -> Tensor:
    """Zero each element with probability ``p`` and scale the kept ones by 1 / (1 - p), so
    the expectation is unchanged; the identity when not training. ``generator`` is a
    ``jg.random.Generator`` (or an int seed) for reproducible masks.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.dropout(jg.ones(6), 0.5, generator=jg.random.default_rng(0)).tolist()
    [2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    x = as_tensor(x)
    if not training or p == 0:
        return x
    if generator is None or hasattr(generator, "__index__"):
        generator = default_rng(generator)
    elif not isinstance(generator, Generator):
        raise TypeError(
            "dropout: generator must be a jg.random.Generator or an int seed, "
            f"got {type(generator).__name__}"
        )
    dtype = x.dtype.numpy if x.dtype.is_floating_point else np.float64
    if p == 1:
        mask = np.zeros(x.shape, dtype)
    else:
        draws = generator.random(x.shape).numpy()
        mask = compute(lambda r: ((r >= p) / (1 - p)).astype(dtype), draws)
    return x * as_tensor(mask)


__all__ = [
    "linear",
    "softmax",
    "log_softmax",
    "cross_entropy",
    "mse_loss",
    "binary_cross_entropy_with_logits",
    "dropout",
    "scaled_dot_product_attention",
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "leaky_relu",
    "softplus",
    "conv1d",
    "conv2d",
    "conv_transpose2d",
    "unfold",
    "fold",
    "max_pool1d",
    "max_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
]
