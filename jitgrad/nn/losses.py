"""Loss layers: MSELoss, CrossEntropyLoss and BCEWithLogitsLoss, each a thin Module over
its function in ``jitgrad.nn.functional`` (class weights are buffers, as in PyTorch).

>>> import jitgrad as jg
>>> loss = jg.nn.CrossEntropyLoss()
>>> round(loss(jg.zeros((2, 4)), jg.tensor([0, 3])).item(), 6)
1.386294
"""

from __future__ import annotations

from ..autograd.tensor import as_tensor
from . import functional as F
from .module import Module

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


def _listed(t):
    return None if t is None else t.tolist()


class MSELoss(Module):
    """Mean (or summed) squared error between input and target."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002  PyTorch's name
        return F.mse_loss(input, target, reduction=self.reduction)

    def get_config(self) -> dict:
        return {"reduction": self.reduction}

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(Module):
    """Cross-entropy of logits (N, C, ...) against integer labels or class probabilities;
    see ``F.cross_entropy`` for ``weight``, ``ignore_index`` and ``label_smoothing``."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):  # fmt: skip
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.ignore_index = int(ignore_index)
        self.reduction = _reduction(reduction)
        self.label_smoothing = float(label_smoothing)

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(
            input, target, weight=self.weight, ignore_index=self.ignore_index,
            reduction=self.reduction, label_smoothing=self.label_smoothing,
        )  # fmt: skip

    def get_config(self) -> dict:
        return {"weight": _listed(self.weight), "ignore_index": self.ignore_index,
                "reduction": self.reduction, "label_smoothing": self.label_smoothing}  # fmt: skip

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class BCEWithLogitsLoss(Module):
    """Binary cross-entropy of logits against targets in [0, 1], computed without
    overflow; ``pos_weight`` scales the positive term per class."""

    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None):
        super().__init__()
        self.register_buffer("weight", None if weight is None else as_tensor(weight))
        self.register_buffer("pos_weight", None if pos_weight is None else as_tensor(pos_weight))
        self.reduction = _reduction(reduction)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)  # fmt: skip

    def get_config(self) -> dict:
        return {"weight": _listed(self.weight), "reduction": self.reduction,
                "pos_weight": _listed(self.pos_weight)}  # fmt: skip

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


__all__ = ["MSELoss", "CrossEntropyLoss", "BCEWithLogitsLoss"]
