"""Loss layers, each a thin Module over its function in ``jitgrad.nn.functional`` (class
and element weights are buffers, as in PyTorch).

>>> import jitgrad as jg
>>> loss = jg.nn.CrossEntropyLoss()
>>> round(loss(jg.zeros((2, 4)), jg.tensor([0, 3])).item(), 6)
1.386294
"""

from __future__ import annotations

from .. import creation
from ..autograd.tensor import as_tensor
from . import functional as F
from .module import Module

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction: str, allowed: tuple[str, ...] = _REDUCTIONS) -> str:
    if reduction not in allowed:
        raise ValueError(f"reduction must be one of {allowed}, got {reduction!r}")
    return reduction


def _listed(t):
    """A weight buffer in a config: its values and dtype (``from_config`` rebuilds it: a
    float32 weight left as a plain list came back float64, and so did a float32 loss)."""
    return None if t is None else {"values": t.tolist(), "dtype": t.dtype.name}


class _WeightedLoss(Module):
    """Rebuilds its weight buffers with their dtypes from a config."""

    _weights: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, args: dict) -> Module:
        args = dict(args)
        for name in cls._weights:
            spec = args.get(name)
            if isinstance(spec, dict):  # (configs saved before held plain lists)
                if set(spec) != {"values", "dtype"}:
                    raise ValueError(
                        f"a {name} in a config has the keys 'values' and 'dtype', "
                        f"got {sorted(spec)}"
                    )
                args[name] = creation.tensor(spec["values"], dtype=spec["dtype"])
        return cls(**args)


class _ReducedLoss(Module):
    """A loss whose only setting is ``reduction``, or with more (``_settings``: the
    constructor's other arguments, kept as attributes of those names)."""

    _settings: tuple[str, ...] = ()

    def get_config(self) -> dict:
        return {"reduction": self.reduction, **{k: getattr(self, k) for k in self._settings}}

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())


class MSELoss(_ReducedLoss):
    """Mean (or summed) squared error between input and target."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002  PyTorch's name
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(MSELoss):
    """Mean (or summed) absolute error between input and target."""

    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_ReducedLoss):
    """Squared error (halved, over ``beta``) below ``beta``, absolute error above."""

    _settings = ("beta",)

    def __init__(self, reduction: str = "mean", beta: float = 1.0):
        super().__init__()
        self.reduction, self.beta = _reduction(reduction), float(beta)
        if self.beta < 0:
            raise ValueError(f"SmoothL1Loss: beta must not be negative, got {beta}")

    def forward(self, input, target):  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_ReducedLoss):
    """Halved squared error below ``delta``, ``delta`` times the absolute error above."""

    _settings = ("delta",)

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__()
        self.reduction, self.delta = _reduction(reduction), float(delta)
        if not self.delta > 0:
            raise ValueError(f"HuberLoss: delta must be positive, got {delta}")

    def forward(self, input, target):  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_ReducedLoss):
    """The Kullback-Leibler divergence of the target from log-probabilities; see
    ``F.kl_div`` for ``log_target`` and ``reduction="batchmean"``."""

    _settings = ("log_target",)

    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction = _reduction(reduction, (*_REDUCTIONS, "batchmean"))
        self.log_target = bool(log_target)

    def forward(self, input, target):  # noqa: A002
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CosineEmbeddingLoss(_ReducedLoss):
    """1 - cos(x1, x2) for pairs labelled 1, max(0, cos(x1, x2) - ``margin``) for -1."""

    _settings = ("margin",)

    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = float(margin), _reduction(reduction)

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )


class MarginRankingLoss(_ReducedLoss):
    """``F.margin_ranking_loss``: max(0, -target·(x1 - x2) + ``margin``)."""

    _settings = ("margin",)

    def __init__(self, margin: float = 0.0, reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = float(margin), _reduction(reduction)

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_ReducedLoss):
    """``F.hinge_embedding_loss``: x for target 1, max(0, ``margin`` - x) for -1."""

    _settings = ("margin",)

    def __init__(self, margin: float = 1.0, reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = float(margin), _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_ReducedLoss):
    """``F.soft_margin_loss``: log(1 + exp(-target·x))."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """``F.multilabel_soft_margin_loss``: per sample, the mean binary cross-entropy of its
    classes' sigmoids against 0/1 targets."""

    _weights = ("weight",)

    def __init__(self, weight=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)
        self.register_buffer("weight", None if weight is None else as_tensor(weight))

    def forward(self, input, target):  # noqa: A002
        return F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)

    def get_config(self) -> dict:
        return {"weight": _listed(self.weight), "reduction": self.reduction}


class TripletMarginLoss(_ReducedLoss):
    """``F.triplet_margin_loss``: max(d(a, p) - d(a, n) + ``margin``, 0)."""

    _settings = ("margin", "p", "eps", "swap")

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        reduction: str = "mean",
    ):
        super().__init__()
        self.margin, self.p, self.eps, self.swap = float(margin), float(p), float(eps), bool(swap)
        self.reduction = _reduction(reduction)

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            self.margin,
            self.p,
            self.eps,
            self.swap,
            reduction=self.reduction,
        )


class PoissonNLLLoss(_ReducedLoss):
    """``F.poisson_nll_loss``: the Poisson negative log-likelihood of target counts."""

    _settings = ("log_input", "full", "eps")

    def __init__(
        self, log_input: bool = True, full: bool = False, eps: float = 1e-8, reduction="mean"
    ):
        super().__init__()
        self.log_input, self.full, self.eps = bool(log_input), bool(full), float(eps)
        self.reduction = _reduction(reduction)

    def forward(self, log_input, target):
        return F.poisson_nll_loss(
            log_input, target, self.log_input, self.full, self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_ReducedLoss):
    """``F.gaussian_nll_loss``: the Gaussian negative log-likelihood with a variance."""

    _settings = ("full", "eps")

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__()
        self.full, self.eps, self.reduction = bool(full), float(eps), _reduction(reduction)

    def forward(self, input, target, var):  # noqa: A002
        reduction = self.reduction
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, reduction=reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits (N, C, ...) against integer labels or class probabilities;
    see ``F.cross_entropy`` for ``weight``, ``ignore_index`` and ``label_smoothing``."""

    _weights = ("weight",)

    def __init__(
        self,
        weight=None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ):
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.ignore_index = int(ignore_index)
        self.reduction = _reduction(reduction)
        self.label_smoothing = float(label_smoothing)

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )

    def get_config(self) -> dict:
        return {
            "weight": _listed(self.weight),
            "ignore_index": self.ignore_index,
            "reduction": self.reduction,
            "label_smoothing": self.label_smoothing,
        }

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of integer labels under log-probabilities (N, C, ...); see
    ``F.nll_loss`` for ``weight`` and ``ignore_index``."""

    _weights = ("weight",)

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.ignore_index = int(ignore_index)
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
        )

    def get_config(self) -> dict:
        return {
            "weight": _listed(self.weight),
            "ignore_index": self.ignore_index,
            "reduction": self.reduction,
        }

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] against targets, each log clamped
    at -100; ``weight`` scales each element's loss."""

    _weights = ("weight",)

    def __init__(self, weight=None, reduction: str = "mean"):
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)

    def get_config(self) -> dict:
        return {"weight": _listed(self.weight), "reduction": self.reduction}

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy of logits against targets in [0, 1], computed without
    overflow; ``pos_weight`` scales the positive term per class."""

    _weights = ("weight", "pos_weight")

    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None):
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.register_buffer("pos_weight", None if pos_weight is None else as_tensor(pos_weight))
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(
            input, target, weight=self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )

    def get_config(self) -> dict:
        return {
            "weight": _listed(self.weight),
            "reduction": self.reduction,
            "pos_weight": _listed(self.pos_weight),
        }

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


__all__ = [
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "KLDivLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "MarginRankingLoss",
    "HingeEmbeddingLoss",
    "SoftMarginLoss",
    "MultiLabelSoftMarginLoss",
    "TripletMarginLoss",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
]
