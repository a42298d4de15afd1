"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight
decay (PyTorch's algorithm)."""

from __future__ import annotations

from .optimizer import Optimizer, apply_update, scalars


def sgd_update(
    m,
    param,
    grad,
    momentum_buffer,
    *,
    lr,
    weight_decay,
    momentum,
    dampening,
    nesterov: bool,
    maximize: bool,
    first_step: bool,
):
    """One SGD step for one parameter; returns (param, momentum_buffer).

    With λ = weight_decay, μ = momentum, τ = dampening::

        g = ±grad + λ·param
        b = g                       on the first step (PyTorch's buffer starts as g)
        b = μ·b + (1 - τ)·g         afterwards
        d = g + μ·b  (nesterov)  or  b
        param = param - lr·d

    ``momentum_buffer`` is None when μ = 0 (no state, d = g). Flags: ``nesterov``,
    ``maximize``, ``first_step``.
    """
    g = -grad if maximize else grad
    g = g + weight_decay * param
    if momentum_buffer is None:
        return param - lr * g, None
    buf = g if first_step else momentum * momentum_buffer + (1 - dampening) * g
    direction = g + momentum * buf if nesterov else buf
    return param - lr * direction, buf


_NUMBERS = ("lr", "weight_decay", "momentum", "dampening")


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, 2.0]))
    >>> opt = optim.SGD([p], lr=0.1)
    >>> (p * p).sum().backward(); opt.step()
    >>> p.tolist()
    [0.8, 1.6]
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        self._check_numbers(group, _NUMBERS)
        super()._check_group(group)
        if group["momentum"] < 0:
            raise ValueError(f"invalid momentum value: {group['momentum']}")
        if group["weight_decay"] < 0:
            raise ValueError(f"invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    _token_options = (*_NUMBERS, "nesterov", "maximize")
    _token_state = "momentum_buffer"

    def _keeps_state(self, group: dict) -> bool:
        return group["momentum"] != 0  # (plain SGD's steps are all alike)

    def _update(self, group: dict, param, grad, state: dict):
        buf = None
        first = "momentum_buffer" not in state
        if group["momentum"] != 0:
            buf = self._zeros_state(state, "momentum_buffer", param)
        return apply_update(
            sgd_update,
            [param, grad, buf],
            [param, buf],
            self._launches,
            **scalars(group, _NUMBERS),
            nesterov=bool(group["nesterov"]),
            maximize=bool(group["maximize"]),
            first_step=first,
        )
