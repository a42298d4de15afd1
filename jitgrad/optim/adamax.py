"""Adamax, Adam over the infinity norm (PyTorch's algorithm)."""

from __future__ import annotations

from .adam import check_adam_group
from .optimizer import CountedOptimizer, scalars


def adamax_update(
    m, param, grad, exp_avg, exp_inf, *, clr, beta1, beta2, eps, weight_decay, maximize: bool
):
    """One Adamax step for one parameter; returns (param, exp_avg, exp_inf).

    With λ = weight_decay and ``clr`` = lr / (1 - β1^t) at step t::

        g = ±grad + λ·param
        m = m + (1 - β1)·(g - m)
        u = max(β2·u, |g| + eps)
        param = param - clr·m/u

    Flag: ``maximize``.
    """
    g = -grad if maximize else grad
    g = g + weight_decay * param
    exp_avg = exp_avg + (1 - beta1) * (g - exp_avg)
    exp_inf = m.maximum(beta2 * exp_inf, m.abs(g) + eps)
    return param - clr * (exp_avg / exp_inf), exp_avg, exp_inf


class Adamax(CountedOptimizer):
    """``Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -2.0]))
    >>> opt = optim.Adamax([p], lr=0.5)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first step moves every weight by ~lr
    [0.5, -1.5]
    """

    _formula = staticmethod(adamax_update)
    _token_options = ("lr", "betas", "eps", "weight_decay", "maximize")

    def __init__(
        self,
        params,
        lr: float = 2e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_adam_group(self, group)

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] += 1
        beta1 = float(group["betas"][0])
        return {"clr": float(group["lr"]) / (1 - beta1 ** state["step"])}

    def _tensors(self, group: dict, param, grad, state: dict):
        exp_avg = self._zeros_state(state, "exp_avg", param)
        exp_inf = self._zeros_state(state, "exp_inf", param)
        beta1, beta2 = map(float, group["betas"])
        hyper = dict(
            scalars(group, ("eps", "weight_decay")),
            beta1=beta1,
            beta2=beta2,
            maximize=bool(group["maximize"]),
        )
        return [param, grad, exp_avg, exp_inf], [param, exp_avg, exp_inf], hyper
