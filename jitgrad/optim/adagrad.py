"""Adagrad, with learning-rate decay (PyTorch's algorithm)."""

from __future__ import annotations

from ..creation import full_like
from .optimizer import CountedOptimizer, scalars


def adagrad_update(m, param, grad, state_sum, *, clr, eps, weight_decay, maximize: bool):
    """One Adagrad step for one parameter; returns (param, state_sum).

    With λ = weight_decay and ``clr`` = lr / (1 + (t - 1)·lr_decay) at step t::

        g = ±grad + λ·param
        s = s + g²
        param = param - clr·g / (√s + eps)

    Flag: ``maximize``.
    """
    g = -grad if maximize else grad
    g = g + weight_decay * param
    state_sum = state_sum + g * g
    return param - clr * (g / (m.sqrt(state_sum) + eps)), state_sum


class Adagrad(CountedOptimizer):
    """``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -2.0]))
    >>> opt = optim.Adagrad([p], lr=0.5)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first step moves every weight by lr
    [0.5, -1.5]
    """

    _formula = staticmethod(adagrad_update)
    _token_options = ("lr", "lr_decay", "weight_decay", "eps", "maximize")

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            eps=eps,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        self._check_numbers(group, ("lr_decay", "weight_decay", "initial_accumulator_value"))
        self._check_numbers(group, ("eps",))
        super()._check_group(group)
        for name in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            if group[name] < 0:
                raise ValueError(f"invalid {name} value: {group[name]}")

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] += 1
        lr, decay = float(group["lr"]), float(group["lr_decay"])
        return {"clr": lr / (1 + (state["step"] - 1) * decay)}

    def _tensors(self, group: dict, param, grad, state: dict):
        if "sum" not in state:
            state["sum"] = full_like(param.detach(), float(group["initial_accumulator_value"]))
        hyper = dict(scalars(group, ("eps", "weight_decay")), maximize=bool(group["maximize"]))
        return [param, grad, state["sum"]], [param, state["sum"]], hyper
