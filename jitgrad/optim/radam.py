"""RAdam, Adam with a rectified adaptive learning rate (PyTorch's algorithm)."""

from __future__ import annotations

import math

from .adam import check_adam_group
from .optimizer import CountedOptimizer, scalars


def radam_update(
    m,
    param,
    grad,
    exp_avg,
    exp_avg_sq,
    *,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    avg_step,
    adaptive_scale,
    decoupled_weight_decay: bool,
    maximize: bool,
):
    """One RAdam step for one parameter; returns (param, exp_avg, exp_avg_sq).

    With λ = weight_decay, the step's numbers are ``avg_step`` = lr/(1 - β1^t) and
    ``adaptive_scale`` = r_t·√(1 - β2^t), where r_t is the rectification term while the
    variance is tractable (ρ_t > 5), else 0 (plain momentum, no adaptive rate)::

        g = ±grad
        param = param·(1 - lr·λ)   decoupled   |   g = g + λ·param
        m = m + (1 - β1)·(g - m)
        v = β2·v + (1 - β2)·g²
        param = param - avg_step·m · adaptive_scale/(√v + eps)   (ρ_t > 5)
        param = param - avg_step·m                                 (otherwise)

    Flags: ``decoupled_weight_decay``, ``maximize``.
    """
    g = -grad if maximize else grad
    if decoupled_weight_decay:
        param = param * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * param
    exp_avg = exp_avg + (1 - beta1) * (g - exp_avg)
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * (g * g)
    momentum_step = exp_avg * avg_step
    adaptive = momentum_step * (adaptive_scale / (m.sqrt(exp_avg_sq) + eps))
    return param - m.where(adaptive_scale > 0, adaptive, momentum_step), exp_avg, exp_avg_sq


class RAdam(CountedOptimizer):
    """``RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -2.0]))
    >>> opt = optim.RAdam([p], lr=0.1)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first steps are plain momentum: lr·g
    [0.8, -1.6]
    """

    _formula = staticmethod(radam_update)
    _token_options = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "decoupled_weight_decay",
        "maximize",
    )

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_adam_group(self, group)

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] = step = state["step"] + 1
        beta1, beta2 = map(float, group["betas"])
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
        scale = 0.0
        if rho_t > 5.0:
            rect = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            scale = math.sqrt(rect) * math.sqrt(bias_correction2)
        return {"avg_step": float(group["lr"]) / (1 - beta1**step), "adaptive_scale": scale}

    def _tensors(self, group: dict, param, grad, state: dict):
        exp_avg = self._zeros_state(state, "exp_avg", param)
        exp_avg_sq = self._zeros_state(state, "exp_avg_sq", param)
        beta1, beta2 = map(float, group["betas"])
        hyper = dict(
            scalars(group, ("lr", "eps", "weight_decay")),
            beta1=beta1,
            beta2=beta2,
            decoupled_weight_decay=bool(group["decoupled_weight_decay"]),
            maximize=bool(group["maximize"]),
        )
        return [param, grad, exp_avg, exp_avg_sq], [param, exp_avg, exp_avg_sq], hyper
