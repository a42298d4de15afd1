"""NAdam, Adam with Nesterov momentum and a momentum schedule (PyTorch's algorithm)."""

from __future__ import annotations

from .adam import check_adam_group
from .optimizer import CountedOptimizer, scalars


def nadam_update(
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
    bias_correction2,
    grad_step,
    avg_step,
    decoupled_weight_decay: bool,
    maximize: bool,
):
    """One NAdam step for one parameter; returns (param, exp_avg, exp_avg_sq).

    With λ = weight_decay, the momentum schedule μ_t = β1·(1 - ½·0.96^(t·ψ)) and its running
    product Π_t, the step's numbers are ``bias_correction2`` = 1 - β2^t, ``grad_step`` =
    lr·(1 - μ_t)/(1 - Π_t) and ``avg_step`` = lr·μ_{t+1}/(1 - Π_t·μ_{t+1})::

        g = ±grad
        param = param·(1 - lr·λ)   decoupled   |   g = g + λ·param
        m = m + (1 - β1)·(g - m)
        v = β2·v + (1 - β2)·g²
        d = √(v / bias_correction2) + eps
        param = param - grad_step·g/d - avg_step·m/d

    Flags: ``decoupled_weight_decay``, ``maximize``.
    """
    g = -grad if maximize else grad
    if decoupled_weight_decay:
        param = param * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * param
    exp_avg = exp_avg + (1 - beta1) * (g - exp_avg)
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * (g * g)
    denom = m.sqrt(exp_avg_sq / bias_correction2) + eps
    param = param - grad_step * (g / denom) - avg_step * (exp_avg / denom)
    return param, exp_avg, exp_avg_sq


class NAdam(CountedOptimizer):
    """``NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -2.0]))
    >>> opt = optim.NAdam([p], lr=0.1)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 4) for v in p.tolist()]
    [0.8944, -1.8944]
    """

    _formula = staticmethod(nadam_update)
    _token_options = (
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "momentum_decay",
        "decoupled_weight_decay",
        "maximize",
    )

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_adam_group(self, group)
        self._check_numbers(group, ("momentum_decay",))
        if group["momentum_decay"] < 0:
            raise ValueError(f"invalid momentum_decay value: {group['momentum_decay']}")

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] = step = state["step"] + 1
        lr, decay = float(group["lr"]), float(group["momentum_decay"])
        beta1, beta2 = map(float, group["betas"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        state["mu_product"] = mu_product = state.get("mu_product", 1.0) * mu
        return {
            "bias_correction2": 1 - beta2**step,
            "grad_step": lr * (1.0 - mu) / (1.0 - mu_product),
            "avg_step": lr * mu_next / (1.0 - mu_product * mu_next),
        }

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
