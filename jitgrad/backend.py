"""The seam between ops and the layer that runs their work in kernels.

Ops hold formulas and run small work on numpy themselves (``tiers.py``); what they may
ask of the kernel layer is the ``Backend`` protocol below, and nothing else. The jit layer
implements it (``jit/backend.py``) and installs it when imported; ``kernels()`` is the
installed backend while ``config.backend`` is "jit", else None (the numpy reference
evaluator then runs everything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ._config import config

if TYPE_CHECKING:  # (annotations only: tensors build on this module)
    from .autograd.tensor import Tensor


class Backend(Protocol):
    """What ops ask of the layer that runs them in kernels. Every method returns None when
    its kernel does not apply (the op then computes on numpy)."""

    def elementwise_forward(self, op, xs: tuple) -> Tensor | None:
        """The elementwise ``op``'s output over the tensors ``xs``, by its formula ``f``."""

    def elementwise_backward(self, op, xs: tuple, gy: Tensor) -> tuple | None:
        """The gradients of ``op``'s inputs ``xs`` (None where none is needed) given the
        output's gradient ``gy``, by its gradient rules, in one pass."""

    def reduce(
        self, kind: str, x: Tensor, axes: tuple, keepdims: bool, dtype=None
    ) -> Tensor | None:
        """``kind`` ("sum", "max", "min") of ``x`` over the sorted ``axes``, in ``dtype``
        (None: x's; a sum of integers or bools reads them as they are)."""

    def update(self, formula, tensors: list, outputs: list, hyper: dict, launches=None):
        """An optimizer's update ``formula`` written in place into ``outputs``; the launch,
        which repeats it."""

    def cross_entropy_applies(self, logits: Tensor, target: Tensor) -> bool:
        """Whether the fused cross-entropy kernels cover these operands."""

    def cross_entropy_forward(self, logits, target, ignore_index: int, reduction: str):
        """(loss, count of the labels counted, row statistics for the backward) of
        integer-label cross-entropy."""

    def cross_entropy_backward(
        self, logits, target, ignore_index: int, reduction: str, gy, count, stats
    ) -> Tensor:
        """The logits' gradient of integer-label cross-entropy, from the forward's count
        and row statistics."""

    def row_scatter(self, out, index, values):
        """``add_rows(out, index, values)``, adding ``values[i]`` into ``out[index[i]]`` in
        order (an embedding's gradient), when it takes these arrays, else None."""

    def window_loops(self, *arrays, columns=None):
        """The loops of convolutions and pooling over windows (``pack``, ``scatter``,
        ``pad``, ``crop``, ``max_windows``, ``max_spread``) when they take these arrays,
        else None."""


_installed: Backend | None = None


def install(backend: Backend) -> None:
    """Make ``backend`` the one that runs kernels (the jit layer does, on import)."""
    global _installed
    _installed = backend


def kernels() -> Backend | None:
    """The kernel backend while ``config.backend`` is "jit", else None."""
    return _installed if config.backend == "jit" else None
