"""Adadelta (PyTorch's algorithm)."""

from __future__ import annotations

from .optimizer import CountedOptimizer, scalars


def adadelta_update(
    m, param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay, maximize: bool
):
    """One Adadelta step for one parameter; returns (param, square_avg, acc_delta).

    With λ = weight_decay, ρ = rho::

        g = ±grad + λ·param
        v = ρ·v + (1 - ρ)·g²
        δ = √(u + eps) / √(v + eps) · g
        u = ρ·u + (1 - ρ)·δ²
        param = param - lr·δ

    Flag: ``maximize``.
    """
    g = -grad if maximize else grad
    g = g + weight_decay * param
    square_avg = rho * square_avg + (1 - rho) * (g * g)
    delta = m.sqrt(acc_delta + eps) / m.sqrt(square_avg + eps) * g
    acc_delta = rho * acc_delta + (1 - rho) * (delta * delta)
    return param - lr * delta, square_avg, acc_delta


_NUMBERS = ("lr", "rho", "eps", "weight_decay")


class Adadelta(CountedOptimizer):
    """``Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -1.0]))
    >>> opt = optim.Adadelta([p])
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first step is √eps / √((1 - ρ)·g²) · g
    [0.996838, -0.996838]
    """

    _formula = staticmethod(adadelta_update)
    _token_options = (*_NUMBERS, "maximize")

    def __init__(
        self,
        params,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        self._check_numbers(group, _NUMBERS)
        super()._check_group(group)
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"invalid rho value: {group['rho']}")
        if group["eps"] < 0:
            raise ValueError(f"invalid epsilon value: {group['eps']}")
        if group["weight_decay"] < 0:
            raise ValueError(f"invalid weight_decay value: {group['weight_decay']}")

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] += 1
        return {}

    def _tensors(self, group: dict, param, grad, state: dict):
        square_avg = self._zeros_state(state, "square_avg", param)
        acc_delta = self._zeros_state(state, "acc_delta", param)
        hyper = dict(scalars(group, _NUMBERS), maximize=bool(group["maximize"]))
        return [param, grad, square_avg, acc_delta], [param, square_avg, acc_delta], hyper
