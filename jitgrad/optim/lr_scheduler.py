"""Learning-rate schedules in PyTorch's spelling: StepLR, MultiStepLR, ExponentialLR,
LinearLR, ConstantLR, PolynomialLR, LambdaLR, CosineAnnealingLR,
CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR, SequentialLR, ChainedScheduler and
ReduceLROnPlateau.

Call ``scheduler.step()`` once per epoch (OneCycleLR, CyclicLR: once per batch), after
``optimizer.step()``; ReduceLROnPlateau's ``step(metric)`` takes the monitored value. Each
epoch-driven schedule is a closed form of the epoch count and the groups' initial learning
rates, so it can be resumed from ``state_dict`` exactly; learning rates set by hand between
steps are overwritten at the next ``step()``.
"""

from __future__ import annotations

import bisect
import math
import types

from .optimizer import Optimizer


class LRScheduler:
    """Base class: sets each group's ``lr`` to ``get_lr()[k]`` at every ``step()``."""

    # Whether PyTorch's form of this schedule computes each rate from the group's current
    # one (ExponentialLR multiplies it by gamma), so that in a ChainedScheduler its change
    # composes with the others'; schedules computing their rates from their bases overwrite.
    _follows_current_rate = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for k, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{k}] "
                    "when resuming a scheduler (last_epoch != -1)"
                )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self) -> list[float]:
        return [self._lr(base, self.last_epoch) for base in self.base_lrs]

    # What ``step(epoch)`` takes: whole epochs (CosineAnnealingWarmRestarts: fractions too).
    _epoch = staticmethod(int)

    def _lr(self, base: float, epoch: int) -> float:
        """The closed form: the learning rate at ``epoch`` of a group starting at ``base``
        (affine in ``base``)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to ``epoch``, as SequentialLR does at a milestone)
        and set every group's learning rate."""
        self._adopt_new_groups()
        self.last_epoch = self.last_epoch + 1 if epoch is None else self._epoch(epoch)
        self._last_lr = [float(lr) for lr in self.get_lr()]
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=True):
            group["lr"] = lr

    def _adopt_new_groups(self) -> None:
        """Schedule groups added by ``add_param_group`` since the last step from their
        current rate, as PyTorch's recursive schedules do: their base is the one at which
        the closed form gives that rate now."""
        groups = self.optimizer.param_groups
        if len(groups) < len(self.base_lrs):
            raise ValueError(
                f"{type(self).__name__} schedules {len(self.base_lrs)} parameter groups, "
                f"but the optimizer now has {len(groups)}: groups cannot be removed"
            )
        for k in range(len(self.base_lrs), len(groups)):
            if type(self)._lr is LRScheduler._lr:  # a get_lr() of its own: no closed form
                raise ValueError(
                    f"{type(self).__name__} cannot schedule parameter group {k}, added after "
                    "it was created; add the group before creating the scheduler"
                )
            at0, at1 = self._lr(0.0, self.last_epoch), self._lr(1.0, self.last_epoch)
            if at1 == at0:
                raise ValueError(
                    f"{type(self).__name__} cannot schedule parameter group {k}, added at "
                    f"epoch {self.last_epoch}: every starting rate gives {at0} there; add "
                    "the group before creating the scheduler"
                )
            # A new list: a state_dict taken earlier may share the old one.
            self.base_lrs = [*self.base_lrs, (float(groups[k]["lr"]) - at0) / (at1 - at0)]

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the last ``step()``."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a schedule saved by ``state_dict``, and the optimizer's rates with it.

        Building this scheduler set every group to the schedule's first rate, over any
        rate a checkpoint loaded into the optimizer had restored: the rates of the restored
        epoch are put back, so the next epoch trains at them (PyTorch's schedules keep the
        loaded rates by computing each from the last)."""
        self.__dict__.update(state_dict)
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=False):
            group["lr"] = lr


class StepLR(LRScheduler):
    """lr = initial_lr · gamma ^ (epoch // step_size).

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    _follows_current_rate = True

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ):
        if int(step_size) <= 0:
            raise ValueError(f"step_size must be a positive integer, got {step_size}")
        self.step_size, self.gamma = int(step_size), float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        return base * self.gamma ** (epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min)·(1 + cos(π·epoch / T_max)) / 2 (SGDR without
    restarts; past T_max the cosine keeps going, as PyTorch's).

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(3):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); sched.step()
    >>> lrs
    [1.0, 0.5, 0.0]
    """

    _follows_current_rate = True

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,
        eta_min: float = 0.0,  # noqa: N803
        last_epoch: int = -1,
    ):
        if int(T_max) <= 0:
            raise ValueError(f"T_max must be a positive integer, got {T_max}")
        self.T_max, self.eta_min = int(T_max), float(eta_min)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        cosine = (1 + math.cos(math.pi * epoch / self.T_max)) / 2
        return self.eta_min + (base - self.eta_min) * cosine


class MultiStepLR(LRScheduler):
    """lr = initial_lr · gamma ^ (number of milestones ≤ epoch); a milestone listed twice
    counts twice, as in PyTorch.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [1.0, 0.5, 0.5, 0.25]
    """

    _follows_current_rate = True

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = sorted(int(m) for m in milestones)
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        return base * self.gamma ** bisect.bisect_right(self.milestones, epoch)


class ExponentialLR(LRScheduler):
    """lr = initial_lr · gamma ^ epoch."""

    _follows_current_rate = True

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = float(gamma)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        return base * self.gamma**epoch


class LinearLR(LRScheduler):
    """The factor of initial_lr goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs, and stays there.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    _follows_current_rate = True

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ):
        if not 0 < start_factor <= 1:
            raise ValueError(
                f"start_factor must be in (0, 1], got {start_factor} (the first epoch's "
                "rate is start_factor·lr)"
            )
        if not 0 <= end_factor <= 1:
            raise ValueError(f"end_factor must be in [0, 1], got {end_factor}")
        if int(total_iters) <= 0:
            raise ValueError(f"total_iters must be a positive integer, got {total_iters}")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = int(total_iters)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        done = min(epoch, self.total_iters) / self.total_iters
        return base * (self.start_factor + (self.end_factor - self.start_factor) * done)


class ConstantLR(LRScheduler):
    """lr = initial_lr · ``factor`` for the first ``total_iters`` epochs, then initial_lr.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    _follows_current_rate = True

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ):
        if not 0 <= factor <= 1:
            raise ValueError(f"factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = float(factor), int(total_iters)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        return base * self.factor if epoch < self.total_iters else base


class PolynomialLR(LRScheduler):
    """lr = initial_lr · (1 - epoch / total_iters) ^ ``power``, 0 from ``total_iters`` on.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0]
    """

    _follows_current_rate = True

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ):
        if int(total_iters) <= 0:
            raise ValueError(f"total_iters must be a positive integer, got {total_iters}")
        self.total_iters, self.power = int(total_iters), float(power)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: int) -> float:
        return base * (1 - min(epoch, self.total_iters) / self.total_iters) ** self.power


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: a cosine from initial_lr down to ``eta_min`` over ``T_0`` epochs, then again
    from the top over ``T_0·T_mult``, ``T_0·T_mult²``... epochs. ``step(epoch)`` takes a
    fractional epoch too (``step(epoch + i / batches)`` within an epoch), as PyTorch's.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.5, 1.0]
    """

    @staticmethod
    def _epoch(epoch) -> float:
        if epoch < 0:
            raise ValueError(f"CosineAnnealingWarmRestarts: epoch {epoch} is negative")
        return float(epoch)

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ):
        if int(T_0) <= 0:
            raise ValueError(f"T_0 must be a positive integer, got {T_0}")
        if int(T_mult) < 1:
            raise ValueError(f"T_mult must be an integer of at least 1, got {T_mult}")
        self.T_0, self.T_mult, self.eta_min = int(T_0), int(T_mult), float(eta_min)
        super().__init__(optimizer, last_epoch)

    def _lr(self, base: float, epoch: float) -> float:
        if self.T_mult == 1:
            into, length = epoch % self.T_0, self.T_0
        else:  # cycle n starts at T_0·(T_mult^n - 1) / (T_mult - 1)
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            into = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            length = self.T_0 * self.T_mult**n
        return self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * into / length)) / 2


class LambdaLR(LRScheduler):
    """lr = initial_lr · lr_lambda(epoch); ``lr_lambda`` is one function, or a list with
    one per parameter group.

    ``state_dict`` keeps the attributes of callable objects given as ``lr_lambda`` and
    leaves functions and lambdas out (they do not pickle), as PyTorch's does.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5**epoch)
    >>> sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"expected {n} lr_lambdas (one per group), got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for k, fn in enumerate(self.lr_lambdas):
            if not callable(fn):
                raise TypeError(f"lr_lambda {k} is a {type(fn).__name__}, not a function")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [
            base * fn(self.last_epoch)
            for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)
        ]

    def state_dict(self) -> dict:
        state = super().state_dict()
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        super().load_state_dict(state)
        for fn, attributes in zip(self.lr_lambdas, saved, strict=True):
            if attributes is not None:
                fn.__dict__.update(attributes)


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


def _per_group(name: str, optimizer: Optimizer, value) -> list[float]:
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name} (one per group), got {len(value)}")
        return [float(v) for v in value]
    return [float(value)] * n


def _set_momentum(group: dict, value: float, use_beta1: bool) -> None:
    """Set a group's momentum: Adam's beta1, or SGD's ``momentum``."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _cycles_beta1(optimizer: Optimizer) -> bool:
    """Whether a momentum cycle moves Adam's beta1 (True) or SGD's ``momentum`` (False);
    refuses an optimizer that has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"cycle_momentum: {type(optimizer).__name__} has neither 'momentum' nor "
            "'betas'; pass cycle_momentum=False"
        )
    return "betas" in optimizer.defaults


def _start_momentum_cycle(
    optimizer: Optimizer, use_beta1: bool, max_momentums: list, base_momentums: list
) -> None:
    """Start every group at its top momentum and record both ends of its cycle."""
    for group, top, bottom in zip(
        optimizer.param_groups, max_momentums, base_momentums, strict=True
    ):
        _set_momentum(group, top, use_beta1)
        group["max_momentum"], group["base_momentum"] = top, bottom


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): the rate rises from max_lr/div_factor to
    ``max_lr`` over the first ``pct_start`` of ``total_steps``, then anneals down to
    initial_lr/final_div_factor (``anneal_strategy`` "cos" or "linear"); ``three_phase``
    comes back to the initial rate first, then anneals to the minimum. With
    ``cycle_momentum`` the momentum (SGD's ``momentum``, Adam's beta1) moves inversely
    between ``max_momentum`` and ``base_momentum``. Step it once per batch.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=0.1, momentum=0.9)
    >>> sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=4, pct_start=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); sched.step()
    >>> lrs
    [0.04, 1.0, 0.500002, 4e-06]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr,
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("define either total_steps or (epochs and steps_per_epoch)")
            if int(epochs) <= 0 or int(steps_per_epoch) <= 0:
                raise ValueError(
                    f"epochs and steps_per_epoch must be positive integers, got {epochs} "
                    f"and {steps_per_epoch}"
                )
            total_steps = int(epochs) * int(steps_per_epoch)
        elif int(total_steps) <= 0:
            raise ValueError(f"total_steps must be a positive integer, got {total_steps}")
        self.total_steps = int(total_steps)
        if not 0 <= pct_start <= 1:
            raise ValueError(f"pct_start must be a number in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        # (start, end) of each phase: group keys of the rates and momenta it goes between
        if three_phase:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if last_epoch == -1:
            for group, top in zip(
                optimizer.param_groups, _per_group("max_lr", optimizer, max_lr), strict=True
            ):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            self.use_beta1 = _cycles_beta1(optimizer)
            if last_epoch == -1:
                _start_momentum_cycle(
                    optimizer,
                    self.use_beta1,
                    _per_group("max_momentum", optimizer, max_momentum),
                    _per_group("base_momentum", optimizer, base_momentum),
                )
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR stepped {step} times, past its total_steps ({self.total_steps})"
            )
        anneal = _anneal_cos if self.anneal_strategy == "cos" else _anneal_linear
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for k, (end, lr_from, lr_to, momentum_from, momentum_to) in enumerate(self._phases):
                if step <= end or k == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        momentum = anneal(group[momentum_from], group[momentum_to], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start = end
        return lrs


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith): each cycle the rate climbs from ``base_lr`` to
    ``max_lr`` over ``step_size_up`` steps and back over ``step_size_down`` (default the
    same), its amplitude scaled by ``mode``: "triangular" (1), "triangular2" (halved each
    cycle) or "exp_range" (``gamma`` ** iterations); or by ``scale_fn`` of the cycle number
    or of the iterations (``scale_mode``). With ``cycle_momentum`` the momentum (SGD's
    ``momentum``, Adam's beta1) moves inversely between ``max_momentum`` and
    ``base_momentum``. Step it once per batch.

    ``state_dict`` keeps the attributes of a callable object given as ``scale_fn`` and
    leaves a function or lambda out, as PyTorch's does.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=0.1, momentum=0.9)
    >>> sched = optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); sched.step()
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr,
        max_lr,
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn=None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum=0.8,
        max_momentum=0.9,
        last_epoch: int = -1,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = up if step_size_down is None else float(step_size_down)
        if up <= 0 or down <= 0:
            raise ValueError(
                f"step_size_up and step_size_down must be positive, got {step_size_up} and "
                f"{step_size_down}"
            )
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if scale_fn is None:
            if mode not in ("triangular", "triangular2", "exp_range"):
                raise ValueError(
                    "mode must be 'triangular', 'triangular2' or 'exp_range' (or give "
                    f"scale_fn), got {mode!r}"
                )
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        elif not callable(scale_fn):
            raise TypeError(f"scale_fn is a {type(scale_fn).__name__}, not a function")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.mode, self.gamma, self.scale_mode = mode, float(gamma), scale_mode
        self._scale_fn_custom = scale_fn
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            self.use_beta1 = _cycles_beta1(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                _start_momentum_cycle(
                    optimizer, self.use_beta1, self.max_momentums, self.base_momentums
                )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base + (top - base) * height * scale
            for base, top in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            for group, bottom, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            ):
                _set_momentum(group, top - (top - bottom) * height * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        keep = fn is not None and not isinstance(fn, types.FunctionType)
        state["_scale_fn_custom"] = dict(fn.__dict__) if keep else None
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        attributes = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if attributes is not None:
            self._scale_fn_custom.__dict__.update(attributes)


def _check_schedulers(kind: str, optimizer: Optimizer, schedulers: list) -> None:
    """Refuse what ``kind`` (SequentialLR, ChainedScheduler) cannot step: no schedulers,
    ReduceLROnPlateau (its step takes a metric), or one driving another optimizer."""
    if not schedulers:
        raise ValueError(f"{kind} expects at least one scheduler")
    for k, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer") or isinstance(scheduler, ReduceLROnPlateau):
            raise TypeError(f"{kind}: scheduler {k} is not an epoch-driven schedule")
        if scheduler.optimizer is not optimizer:
            raise ValueError(f"{kind}: scheduler {k} drives another optimizer than the one given")


class _ComposedScheduler(LRScheduler):
    """A schedule made of ``_schedulers``, whose state_dict holds theirs."""

    _schedulers: list

    def state_dict(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state.pop("_schedulers"), strict=True):
            scheduler.load_state_dict(saved)
        self.__dict__.update(state)
        for group, lr in zip(self.optimizer.param_groups, self._last_lr, strict=False):
            group["lr"] = lr


class SequentialLR(_ComposedScheduler):
    """Run ``schedulers`` one after another, switching at each of the ``milestones``
    (epochs); each scheduler starts again from its epoch 0 when its turn comes.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> from jitgrad.optim import lr_scheduler as S
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> warmup = S.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = S.ExponentialLR(opt, gamma=0.5)
    >>> sched = S.SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers, milestones, last_epoch: int = -1):
        schedulers = list(schedulers)
        _check_schedulers("SequentialLR", optimizer, schedulers)
        milestones = [int(m) for m in milestones]
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"SequentialLR expects {len(schedulers) - 1} milestones for "
                f"{len(schedulers)} schedulers, got {len(milestones)}"
            )
        self.optimizer = optimizer
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        for group in optimizer.param_groups:  # undo the first step each scheduler took
            group["lr"] = group["initial_lr"]
        for scheduler in schedulers:
            scheduler.last_epoch -= 1
        schedulers[0].step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        k = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[k]
        if k > 0 and self._milestones[k - 1] == self.last_epoch:
            scheduler.step(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_ComposedScheduler):
    """Step all of ``schedulers`` at every ``step()``, each changing the rates the ones
    before it set: the changes of multiplicative schedules (StepLR, ExponentialLR,
    ConstantLR, LinearLR...) multiply, as in PyTorch, and a schedule that sets its rates
    from its bases (LambdaLR, OneCycleLR, CyclicLR) overwrites the ones before it.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> from jitgrad.optim import lr_scheduler as S
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> warmup = S.ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = S.ExponentialLR(opt, gamma=0.5)
    >>> sched = S.ChainedScheduler([warmup, decay])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); sched.step()
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None):
        schedulers = list(schedulers)
        if optimizer is None and schedulers:
            optimizer = schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self.optimizer = optimizer
        self._schedulers = schedulers
        # Each scheduler built set its own first rates over the others'; PyTorch's, built in
        # turn, each changed the rate the last one left: compose them in that order.
        for k, group in enumerate(optimizer.param_groups):
            lr = group["initial_lr"]
            for scheduler in schedulers:
                if scheduler._follows_current_rate:
                    lr = scheduler._lr(lr, scheduler.last_epoch)
                else:
                    lr = scheduler.get_last_lr()[k]
            group["lr"] = lr
        self._last_lr = [float(group["lr"]) for group in optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        for scheduler in self._schedulers:
            if scheduler._follows_current_rate:
                _step_from_current_rates(scheduler)
            else:
                scheduler.step()
        self._last_lr = [float(group["lr"]) for group in self.optimizer.param_groups]


def _step_from_current_rates(scheduler: LRScheduler) -> None:
    """Step ``scheduler`` from the rates its groups have now, as PyTorch's recursive form
    does: the closed form is affine in the base, so the base that gives the current rate at
    the last epoch gives this epoch's rate. Where the last epoch's form ignores the base
    (a cosine at its bottom, a polynomial past its end) the rate moves by as much as the
    scheduler's own rate does, as PyTorch's special cases there do."""
    groups = scheduler.optimizer.param_groups
    scheduler._adopt_new_groups()
    before = scheduler.last_epoch
    lines = [(scheduler._lr(0.0, before), scheduler._lr(1.0, before)) for _ in groups]
    own_before = [scheduler._lr(base, before) for base in scheduler.base_lrs]
    current = [float(group["lr"]) for group in groups]
    scheduler.step()
    rates = []
    for lr, (at0, at1), old, new in zip(
        current, lines, own_before, scheduler._last_lr, strict=True
    ):
        if at1 == at0:
            rates.append(lr + (new - old))
        else:
            rates.append(scheduler._lr((lr - at0) / (at1 - at0), scheduler.last_epoch))
    scheduler._last_lr = rates
    for group, lr in zip(groups, rates, strict=True):
        group["lr"] = lr


class ReduceLROnPlateau:
    """Multiply the learning rates by ``factor`` when a metric has stopped improving for
    ``patience`` epochs: ``step(metric)`` once per epoch.

    ``mode`` "min" (lower is better) or "max"; an improvement beats the best by more than
    ``threshold``, relative to it (``threshold_mode`` "rel") or absolutely ("abs"). After a
    reduction, ``cooldown`` epochs pass before bad epochs count again. Rates never go below
    ``min_lr`` (one number, or one per group), and a change smaller than ``eps`` is skipped.

    >>> import jitgrad as jg
    >>> from jitgrad import optim
    >>> opt = optim.SGD([jg.nn.Parameter(jg.zeros(1))], lr=1.0)
    >>> sched = optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> for loss in [3.0, 2.0, 2.0, 2.0, 1.0]:
    ...     sched.step(loss)
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr=0.0,
        eps: float = 1e-8,
    ):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError(f"factor must be below 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.optimizer = optimizer
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.mode, self.factor, self.patience = mode, float(factor), int(patience)
        self.threshold, self.threshold_mode = float(threshold), threshold_mode
        self.cooldown, self.eps = int(cooldown), float(eps)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [float(group["lr"]) for group in optimizer.param_groups]

    def is_better(self, current: float, best: float) -> bool:
        """Whether ``current`` improves on ``best`` by more than the threshold."""
        if self.threshold_mode == "rel":
            scale = 1 - self.threshold if self.mode == "min" else 1 + self.threshold
            return current < best * scale if self.mode == "min" else current > best * scale
        if self.mode == "min":
            return current < best - self.threshold
        return current > best + self.threshold

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics) -> None:
        """Record one epoch's ``metrics`` (a number or a 0-d tensor); reduce the rates if
        it is the ``patience``-th bad epoch in a row."""
        current = float(metrics)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
                old = float(group["lr"])
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [float(group["lr"]) for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates after the last ``step()``."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


__all__ = [
    "LRScheduler",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "LinearLR",
    "ConstantLR",
    "PolynomialLR",
    "LambdaLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "CyclicLR",
    "SequentialLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
]
