"""Losses in PyTorch's functional spelling: ``F.cross_entropy(logits, labels)``,
``F.nll_loss``, ``F.mse_loss``, ``F.l1_loss``, the binary cross-entropies, ``F.kl_div``,
``F.smooth_l1_loss``, ``F.huber_loss``, the margin losses (``cosine_embedding``,
``margin_ranking``, ``hinge_embedding``, ``soft_margin``, ``multilabel_soft_margin``,
``triplet_margin``) and the Poisson and Gaussian likelihoods, each with ``reduction``
"mean", "sum" or "none".

Everything here is composed of differentiable ops, so gradients of any order come from
theirs; stability comes from the composition (a detached max shift, ``softplus``, a log
clamped at -100), not from hand-written backward passes.
"""

from __future__ import annotations

import numpy as np

from .. import backend
from .._config import config
from ..autograd.function import Function
from ..autograd.tensor import Tensor, as_tensor
from ..ops import reduce
from ..ops.elementwise import maximum, minimum, where
from ..ops.unary import abs as absolute
from ..ops.unary import exp, log, softplus
from ..recording import compute, run
from .activation_functions import log_softmax, softmax
from .norm_functions import pairwise_distance

_REDUCTIONS = ("mean", "sum", "none")


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


def _class_axis_and_weight(name: str, scores: Tensor, weight) -> tuple[int, Tensor | None]:
    """The class axis of (N, C, ...) or unbatched (C,) scores, and ``weight`` (C,) shaped
    to broadcast along it."""
    if scores.ndim == 0:
        raise ValueError(f"{name}: input must have a class dimension, got a 0-d tensor")
    axis = 1 if scores.ndim > 1 else 0
    n_classes = scores.shape[axis]
    if weight is None:
        return axis, None
    w = as_tensor(weight)
    if w.shape != (n_classes,):
        raise ValueError(
            f"{name}: weight of shape {w.shape} should have one entry per class, "
            f"shape ({n_classes},), for input of shape {scores.shape}"
        )
    return axis, w.reshape(tuple(n_classes if i == axis else 1 for i in range(scores.ndim)))


def _picked(logp: Tensor, labels: np.ndarray, w, axis: int, ignore_index: int):
    """Each label's weighted negative log-probability (0 for an ignored label), the one-hot
    mask of the labels and which labels count."""
    # Label-dependent arrays go through compute(): a jitted step rebuilds them per batch.
    hot = as_tensor(compute(_target_mask, labels, logp.shape[axis], axis, ignore_index))
    counted = compute(np.not_equal, labels, ignore_index)
    # The target's log-probability is selected, not multiplied by a one-hot: a masked
    # (-inf) logit of another class would make 0 * -inf = nan.
    chosen = where(hot, logp, 0)
    return -reduce.sum(chosen if w is None else w * chosen, axis), hot, counted


def _reduce_labelled(loss: Tensor, reduction: str, w, hot: Tensor, counted, dtype) -> Tensor:
    """``reduction`` of per-label losses; a weighted mean divides by the weights of the
    counted labels, as PyTorch."""
    if reduction != "mean":
        return _reduce(loss, reduction)
    if w is None:
        divisor = as_tensor(compute(np.count_nonzero, counted)).astype(dtype)
    else:
        divisor = reduce.sum(where(hot, w, 0))
    return _mean_over_counted(reduce.sum(loss), divisor, counted)


def nll_loss(
    input,  # noqa: A002  PyTorch's name
    target,
    weight=None,
    *,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood of integer ``target`` labels under log-probabilities
    ``input`` (PyTorch's): ``input`` is (N, C), (N, C, d1, ...) or unbatched (C,), with
    classes on axis 1 (axis 0 when unbatched); ``target`` has its shape without the class
    axis. A label equal to ``ignore_index`` contributes nothing; ``weight`` (C,) rescales
    classes, and a weighted mean divides by the weights of the labels.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.nll_loss(jg.tensor([[-1.0, -2.0], [-3.0, -4.0]]), jg.tensor([1, 0])).item()
    2.5
    """
    name = "nll_loss"
    _check_reduction(reduction, name)
    logp, target = as_tensor(input), as_tensor(target)
    axis, w = _class_axis_and_weight(name, logp, weight)
    labels = _checked_labels(name, logp, target, axis, ignore_index)
    loss, hot, counted = _picked(logp, labels, w, axis, ignore_index)
    return _reduce_labelled(loss, reduction, w, hot, counted, logp.dtype)


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
    axis, w = _class_axis_and_weight(name, logits, weight)
    n_classes = logits.shape[axis]
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
    loss, hot, counted = _picked(logp, labels, w, axis, ignore_index)
    if label_smoothing:
        # PyTorch's smoothing term, -sum(w * logp) over every class: inf for a -inf logit,
        # as in PyTorch; an ignored label contributes nothing, whatever its logits.
        spread = -reduce.sum(logp if w is None else w * logp, axis)
        loss = (1 - label_smoothing) * loss + label_smoothing / n_classes * spread
        loss = where(as_tensor(counted), loss, 0)
    return _reduce_labelled(loss, reduction, w, hot, counted, logp.dtype)


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
        loss, self._count, self._stats = backend.kernels().cross_entropy_forward(
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
            self._logits, target, self.ignore_index, self.reduction, gy, self._count, self._stats
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


def l1_loss(input, target, *, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean (or summed) absolute error; ``input`` and ``target`` must have one shape.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.l1_loss(jg.tensor([1.0, 2.0]), jg.tensor([1.0, 5.0])).item()
    1.5
    """
    x, t = _pair("l1_loss", input, target, reduction)
    return _reduce(absolute(x - t), reduction)


def _pair(name: str, input, target, reduction: str) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``input`` and ``target`` as tensors of one shape, after checking ``reduction``."""
    _check_reduction(reduction, name)
    x, t = as_tensor(input), as_tensor(target)
    _same_shape(name, "target", x, t)
    return x, t


def smooth_l1_loss(input, target, *, reduction: str = "mean", beta: float = 1.0) -> Tensor:  # noqa: A002
    """0.5·d² / beta where the absolute error d < ``beta``, else d - 0.5·beta (the L1 loss
    for ``beta=0``).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.smooth_l1_loss(jg.tensor([0.5, 3.0]), jg.zeros(2), reduction="none").tolist()
    [0.125, 2.5]
    """
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must not be negative, got {beta}")
    x, t = _pair("smooth_l1_loss", input, target, reduction)
    d = absolute(x - t)
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(where(d < beta, 0.5 / beta * d * d, d - 0.5 * beta), reduction)


def huber_loss(input, target, *, reduction: str = "mean", delta: float = 1.0) -> Tensor:  # noqa: A002
    """0.5·d² where the absolute error d < ``delta``, else delta·(d - 0.5·delta).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.huber_loss(jg.tensor([0.5, 3.0]), jg.zeros(2), reduction="none", delta=2.0).tolist()
    [0.125, 4.0]
    """
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    x, t = _pair("huber_loss", input, target, reduction)
    d = absolute(x - t)
    return _reduce(where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def binary_cross_entropy(
    input,  # noqa: A002
    target,
    weight=None,
    *,
    reduction: str = "mean",
) -> Tensor:
    """-[t·log(p) + (1 - t)·log(1 - p)] of probabilities ``input`` in [0, 1], each log
    clamped at -100 as PyTorch's (a certain wrong answer costs 100, not inf); ``weight``
    scales each element's loss (broadcasting).

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> F.binary_cross_entropy(jg.tensor([0.0, 1.0]), jg.tensor([1.0, 1.0])).item()
    50.0
    """
    name = "binary_cross_entropy"
    p, t = _pair(name, input, target, reduction)
    # In compute(): a jitted step checks every call's probabilities.
    compute(_checked_probabilities, p.numpy())
    loss = -(t * _clamped_log(p) + (1 - t) * _clamped_log(1 - p))
    if weight is not None:
        loss = loss * as_tensor(weight)
    return _reduce(loss, reduction)


def _checked_probabilities(p: np.ndarray) -> np.ndarray:
    inside = (p >= 0) & (p <= 1)
    if not inside.all():
        bad = p[~inside].flat[0]
        raise ValueError(
            f"binary_cross_entropy: every element of input must be a probability in [0, 1], "
            f"got {bad}"
        )
    return np.empty(0, bool)


def _clamped_log(p: Tensor) -> Tensor:
    """max(log(p), -100), with a zero gradient where p = 0 (the log is taken at 1 there:
    its infinite derivative would make the clamp's zero gradient nan)."""
    positive = p > 0
    return where(positive, maximum(log(where(positive, p, 1)), -100), -100)


def kl_div(
    input,  # noqa: A002
    target,
    *,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence t·(log t - x) of a target distribution from
    log-probabilities ``input`` (0 where t = 0); ``log_target``: the target is given as
    log-probabilities too. ``reduction="batchmean"`` divides the sum by the batch size
    (the divergence per sample); "mean" divides by the number of elements, as PyTorch.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> x = jg.log(jg.tensor([[0.5, 0.5]]))
    >>> round(F.kl_div(x, jg.tensor([[0.25, 0.75]]), reduction="batchmean").item(), 6)
    0.130812
    """
    name = "kl_div"
    if reduction != "batchmean":
        _check_reduction(reduction, name)
    x, t = _pair(name, input, target, "sum")
    if log_target:
        loss = exp(t) * (t - x)
    else:
        # t·log(t) at t = 0 is 0, with log taken at 1 there: log(0)'s infinite derivative
        # would make its zero gradient nan.
        zero = t == 0
        loss = where(zero, 0, t * log(where(zero, 1, t))) - t * x
    if reduction == "batchmean":
        total = reduce.sum(loss)
        return total / x.shape[0] if x.ndim else total
    return _reduce(loss, reduction)


def cosine_embedding_loss(
    input1,
    input2,
    target,
    margin: float = 0.0,
    *,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(x1, x2) where ``target`` is 1, max(0, cos(x1, x2) - margin) where it is -1
    (0 for any other target), for (N, D) inputs with (N,) targets or (D,) with 0-d.

    >>> import jitgrad as jg
    >>> import jitgrad.nn.functional as F
    >>> x1, x2 = jg.tensor([[1.0, 0.0], [1.0, 1.0]]), jg.tensor([[0.0, 1.0], [2.0, 0.0]])
    >>> loss = F.cosine_embedding_loss(x1, x2, jg.tensor([1, -1]), margin=0.5, reduction="none")
    >>> [round(v, 4) for v in loss.tolist()]
    [1.0, 0.2071]
    """
    name = "cosine_embedding_loss"
    _check_reduction(reduction, name)
    x1, x2, y = as_tensor(input1), as_tensor(input2), as_tensor(target)
    if x1.ndim not in (1, 2) or x1.shape != x2.shape:
        raise ValueError(
            f"{name}: input1 and input2 must have one shape, (N, D) or (D,), got {x1.shape} "
            f"and {x2.shape}"
        )
    if y.shape != x1.shape[:-1]:
        raise ValueError(
            f"{name}: target of shape {y.shape} should have shape {x1.shape[:-1]} for "
            f"inputs of shape {x1.shape} (one label per pair)"
        )
    # PyTorch's form: eps added to each squared magnitude, so zero vectors give cos 0.
    eps = 1e-12
    dot = reduce.sum(x1 * x2, -1)
    squares = (reduce.sum(x1 * x1, -1) + eps) * (reduce.sum(x2 * x2, -1) + eps)
    cos = dot / squares**0.5
    loss = where(y == 1, 1 - cos, 0) + where(y == -1, maximum(cos - margin, 0), 0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, *, reduction="mean"):
    """max(0, -target·(x1 - x2) + margin): ``target`` 1 asks x1 to rank above x2, -1
    below."""
    _check_reduction(reduction, "margin_ranking_loss")
    x1, x2, y = as_tensor(input1), as_tensor(input2), as_tensor(target)
    return _reduce(maximum(-y * (x1 - x2) + margin, 0), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, *, reduction="mean"):  # noqa: A002
    """x where ``target`` is 1, max(0, margin - x) where it is -1."""
    _check_reduction(reduction, "hinge_embedding_loss")
    x, y = as_tensor(input), as_tensor(target)
    loss = where(y != -1, x, 0) + where(y != 1, maximum(margin - x, 0), 0)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, *, reduction="mean"):  # noqa: A002
    """log(1 + exp(-target·x)), for targets ±1."""
    _check_reduction(reduction, "soft_margin_loss")
    return _reduce(softplus(-as_tensor(target) * as_tensor(input)), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, *, reduction="mean"):  # noqa: A002
    """Per sample, the mean over classes of the binary cross-entropy of sigmoid(x)
    against 0/1 ``target`` (each class weighted by ``weight``)."""
    _check_reduction(reduction, "multilabel_soft_margin_loss")
    x, y = as_tensor(input), as_tensor(target)
    loss = y * softplus(-x) + (1 - y) * softplus(x)
    if weight is not None:
        loss = loss * as_tensor(weight)
    return _reduce(reduce.mean(loss, -1), reduction)


def triplet_margin_loss(
    anchor,
    positive,
    negative,
    margin: float = 1.0,
    p: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    *,
    reduction="mean",
):
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0), d the ``p``-norm
    distance of ``F.pairwise_distance``; ``swap`` takes the nearer of the negative's
    distances to the anchor and to the positive."""
    _check_reduction(reduction, "triplet_margin_loss")
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = minimum(far, pairwise_distance(positive, negative, p, eps))
    return _reduce(maximum(near - far + margin, 0), reduction)


def poisson_nll_loss(
    input,  # noqa: A002
    target,
    log_input: bool = True,
    full: bool = False,
    eps: float = 1e-8,
    *,
    reduction="mean",
):
    """The negative log-likelihood of ``target`` counts under Poisson rates: exp(x) -
    target·x for log rates (``log_input``), else x - target·log(x + eps); ``full`` adds
    Stirling's approximation of log(target!) where target > 1."""
    _check_reduction(reduction, "poisson_nll_loss")
    x, y = as_tensor(input), as_tensor(target)
    loss = exp(x) - y * x if log_input else x - y * log(x + eps)
    if full:
        counts = where(y > 1, y, 1)  # (the logs' arguments where the term applies)
        stirling = y * log(counts) - y + 0.5 * log(2 * np.pi * counts)
        loss = loss + where(y > 1, stirling, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input,  # noqa: A002
    target,
    var,
    full: bool = False,
    eps: float = 1e-6,
    *,
    reduction="mean",
):
    """½(log var + (x - target)² / var) (+ ½ log 2π with ``full``): the negative
    log-likelihood of ``target`` under N(x, var). ``var`` may lack the last dimension or
    have it of size 1; it is held at ``eps`` or above without changing its gradient, as
    PyTorch does."""
    _check_reduction(reduction, "gaussian_nll_loss")
    x, y, v = as_tensor(input), as_tensor(target), as_tensor(var)
    if v.shape != x.shape and v.shape == x.shape[:-1]:
        v = v.reshape(*v.shape, 1)
    run(_check_variance, v.numpy())  # (recorded: a jitted step checks every call's)
    held = v.detach()
    v = v + (maximum(held, eps) - held)  # (the clamp's value, the identity's gradient)
    loss = 0.5 * (log(v) + (x - y) ** 2 / v)
    if full:
        loss = loss + 0.5 * np.log(2 * np.pi)
    return _reduce(loss, reduction)


def _check_variance(v: np.ndarray) -> None:
    if (v < 0).any():
        raise ValueError("gaussian_nll_loss: var has negative entries")


__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "cross_entropy",
    "nll_loss",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "cosine_embedding_loss",
]
