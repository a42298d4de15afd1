"""RMSprop, with momentum and the centered variant (PyTorch's algorithm)."""

from __future__ import annotations

from .optimizer import CountedOptimizer, scalars


def rmsprop_update(
    m,
    param,
    grad,
    square_avg,
    grad_avg,
    momentum_buffer,
    *,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    maximize: bool,
):
    """One RMSprop step for one parameter; returns
    (param, square_avg, grad_avg, momentum_buffer).

    With λ = weight_decay, μ = momentum::

        g = ±grad + λ·param
        v = α·v + (1 - α)·g²
        ḡ = ḡ + (1 - α)·(g - ḡ)                   centered
        d = √(v - ḡ²) + eps  (centered)  or  √v + eps
        b = μ·b + g/d;  param = param - lr·b        with momentum
        param = param - lr·g/d                      without

    ``grad_avg`` is None unless centered, ``momentum_buffer`` None unless μ > 0. Flag:
    ``maximize``.
    """
    g = -grad if maximize else grad
    g = g + weight_decay * param
    square_avg = alpha * square_avg + (1 - alpha) * (g * g)
    if grad_avg is not None:
        grad_avg = grad_avg + (1 - alpha) * (g - grad_avg)
        avg = m.sqrt(square_avg - grad_avg * grad_avg) + eps
    else:
        avg = m.sqrt(square_avg) + eps
    if momentum_buffer is None:
        return param - lr * (g / avg), square_avg, grad_avg, None
    momentum_buffer = momentum * momentum_buffer + g / avg
    return param - lr * momentum_buffer, square_avg, grad_avg, momentum_buffer


_NUMBERS = ("lr", "alpha", "eps", "weight_decay", "momentum")


class RMSprop(CountedOptimizer):
    """``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, maximize=False)``.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -1.0]))
    >>> opt = optim.RMSprop([p], lr=0.01, alpha=0.75)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first step divides by √(1 - α)·|g|
    [0.98, -0.98]
    """

    _formula = staticmethod(rmsprop_update)
    _token_options = (*_NUMBERS, "centered", "maximize")

    def __init__(
        self,
        params,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        self._check_numbers(group, _NUMBERS)
        super()._check_group(group)
        for name in ("eps", "momentum", "weight_decay", "alpha"):
            if group[name] < 0:
                raise ValueError(f"invalid {name} value: {group[name]}")

    def _count(self, group: dict, state: dict) -> dict:
        state["step"] += 1
        return {}

    def _tensors(self, group: dict, param, grad, state: dict):
        square_avg = self._zeros_state(state, "square_avg", param)
        grad_avg = self._zeros_state(state, "grad_avg", param) if group["centered"] else None
        buf = None
        if group["momentum"] > 0:
            buf = self._zeros_state(state, "momentum_buffer", param)
        tensors = [param, grad, square_avg, grad_avg, buf]
        hyper = dict(scalars(group, _NUMBERS), maximize=bool(group["maximize"]))
        return tensors, [param, square_avg, grad_avg, buf], hyper
