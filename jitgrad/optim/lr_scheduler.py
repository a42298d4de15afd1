"""Learning-rate schedules: StepLR and CosineAnnealingLR.

Call ``scheduler.step()`` once per epoch, after ``optimizer.step()``. Each schedule is a
closed form of the epoch count and the groups' initial learning rates, so it can be
resumed from ``state_dict`` exactly; learning rates set by hand between steps are
overwritten at the next ``step()``.
"""

from __future__ import annotations

import math

from .optimizer import Optimizer


class LRScheduler:
    """Base class: sets each group's ``lr`` to ``get_lr()[k]`` at every ``step()``."""

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

    def _lr(self, base: float, epoch: int) -> float:
        """The closed form: the learning rate at ``epoch`` of a group starting at ``base``
        (affine in ``base``)."""
        raise NotImplementedError

    def step(self) -> None:
        self._adopt_new_groups()
        self.last_epoch += 1
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


__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]
