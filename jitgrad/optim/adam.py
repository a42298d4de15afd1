"""Adam and AdamW (decoupled weight decay), with AMSGrad as an option (PyTorch's
algorithms)."""

from __future__ import annotations

from .optimizer import Optimizer, apply_update, scalars


def adam_update(
    m,
    param,
    grad,
    exp_avg,
    exp_avg_sq,
    max_exp_avg_sq,
    *,
    lr,
    beta1,
    beta2,
    eps,
    weight_decay,
    step,
    amsgrad: bool,
    decoupled_weight_decay: bool,
    maximize: bool,
):
    """One Adam/AdamW step for one parameter; returns
    (param, exp_avg, exp_avg_sq, max_exp_avg_sq).

    With t = ``step`` (counted from 1) and λ = weight_decay::

        g = ±grad
        param = param·(1 - lr·λ)      AdamW (decoupled)   |   g = g + λ·param   Adam
        m = β1·m + (1 - β1)·g
        v = β2·v + (1 - β2)·g²
        v̂ = max(v̂, v) (amsgrad)  or  v
        param = param - lr/(1 - β1^t) · m / (√v̂ / √(1 - β2^t) + eps)

    As in PyTorch's implementation, AMSGrad keeps the running maximum of the raw second
    moment and bias-corrects it afterwards. ``max_exp_avg_sq`` is None without amsgrad.
    Flags: ``amsgrad``, ``decoupled_weight_decay``, ``maximize``.
    """
    g = -grad if maximize else grad
    if decoupled_weight_decay:
        param = param * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * param
    exp_avg = beta1 * exp_avg + (1 - beta1) * g
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * (g * g)
    if amsgrad:
        max_exp_avg_sq = m.maximum(max_exp_avg_sq, exp_avg_sq)
        second = max_exp_avg_sq
    else:
        second = exp_avg_sq
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    denom = m.sqrt(second) / bias_correction2**0.5 + eps
    return param - (lr / bias_correction1) * exp_avg / denom, exp_avg, exp_avg_sq, max_exp_avg_sq


def check_adam_group(optimizer: Optimizer, group: dict) -> None:
    """Validate the options of the Adam family (lr, betas, eps, weight_decay)."""
    optimizer._check_numbers(group, ("lr", "eps", "weight_decay"))
    Optimizer._check_group(optimizer, group)
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    group["betas"] = betas = tuple(betas)
    optimizer._check_numbers({"betas[0]": betas[0], "betas[1]": betas[1]}, ("betas[0]", "betas[1]"))
    for k, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"invalid beta parameter at index {k}: {beta}")
    if group["eps"] < 0:
        raise ValueError(f"invalid epsilon value: {group['eps']}")
    if group["weight_decay"] < 0:
        raise ValueError(f"invalid weight_decay value: {group['weight_decay']}")


_GROUP_KEYS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize")


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    amsgrad=False, maximize=False)``; weight decay is L2 added to the gradient.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0, -1.0]))
    >>> opt = optim.Adam([p], lr=0.1)
    >>> (p * p).sum().backward(); opt.step()
    >>> [round(v, 6) for v in p.tolist()]  # the first step moves every weight by ~lr
    [0.9, -0.9]
    """

    decoupled = False

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ):
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_adam_group(self, group)

    _token_options = _GROUP_KEYS
    _token_state = "exp_avg"

    def _advance(self, work, launches) -> None:
        for (*_, state), launch in zip(work, launches):
            state["step"] += 1
            launch.set_number("step", state["step"])

    def _update(self, group: dict, param, grad, state: dict):
        state["step"] = state.get("step", 0) + 1
        exp_avg = self._zeros_state(state, "exp_avg", param)
        exp_avg_sq = self._zeros_state(state, "exp_avg_sq", param)
        amsgrad = bool(group["amsgrad"])
        max_sq = self._zeros_state(state, "max_exp_avg_sq", param) if amsgrad else None
        beta1, beta2 = group["betas"]
        return apply_update(
            adam_update,
            [param, grad, exp_avg, exp_avg_sq, max_sq],
            [param, exp_avg, exp_avg_sq, max_sq],
            self._launches,
            **scalars(group, ("lr", "eps", "weight_decay")),
            beta1=float(beta1),
            beta2=float(beta2),
            step=int(state["step"]),
            amsgrad=amsgrad,
            decoupled_weight_decay=self.decoupled,
            maximize=bool(group["maximize"]),
        )


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``param *= 1 - lr·λ``
    before the Adam step, instead of adding λ·param to the gradient. Default λ = 1e-2.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> p = jg.nn.Parameter(jg.tensor([1.0]))
    >>> opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    >>> p.grad = jg.tensor([0.0]); opt.step()
    >>> p.tolist()  # only the decay acts on a zero gradient
    [0.95]
    """

    decoupled = True

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
