"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler``).

A scheduler changes ``group["lr"]`` of an optimizer's parameter groups; call its ``step()``
once per epoch, after the optimizer's::

    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    sched = dg.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    for epoch in range(100):
        train_one_epoch(model, opt)
        sched.step()                 # lr: 0.1 for epochs 0-29, 0.01 for 30-59, ...
    sched.get_last_lr()              # [0.0001]

NOTE [chained form] As in PyTorch, ``step()`` updates the current lr from itself (multiply by
gamma every ``step_size`` epochs) rather than recomputing ``base_lr * gamma ** (epoch //
step_size)``, so several schedulers can act on one optimizer and the floating-point values
are PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer


class LRScheduler:
    """Base class: remembers each group's ``initial_lr`` and counts epochs in
    ``last_epoch``; subclasses say what the lr of the current epoch is (``get_lr``)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()  # epoch 0: the initial lr (PyTorch steps once on construction, too)

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def get_last_lr(self) -> list[float]:
        """The lr of each parameter group, as set by the latest ``step()``."""
        return self._last_lr

    def step(self) -> None:
        """Move to the next epoch and set each group's lr for it."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs.

    >>> sched = dg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)   # lr 1.0
    >>> for _ in range(4): sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return lrs
        return [lr * self.gamma for lr in lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        return lrs if self.last_epoch == 0 else [lr * self.gamma for lr in lrs]


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch) (one function, or one per parameter group)."""

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        groups = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, list) else [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class CosineAnnealingLR(LRScheduler):
    """The lr follows half a cosine from the initial lr down to ``eta_min`` over ``T_max``
    epochs (then back up, and so on): eta_min + (base_lr - eta_min) (1 + cos(pi epoch /
    T_max)) / 2, reached in PyTorch's chained form (NOTE [chained form])."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, epoch, t_max = self.optimizer.param_groups, self.last_epoch, self.T_max
        if epoch == 0:
            return [group["lr"] for group in groups]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:  # at the bottom: the way back up begins
            return [group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * epoch / t_max))
                / (1 + math.cos(math.pi * (epoch - 1) / t_max))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each epoch of ``milestones`` (twice if listed twice)."""

    def __init__(self, optimizer: Optimizer, milestones: Any, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        times = self.milestones.count(self.last_epoch)
        return [group["lr"] * self.gamma ** times if times else group["lr"]
                for group in self.optimizer.param_groups]


class LinearLR(LRScheduler):
    """The lr scaled by a factor going in a line from ``start_factor`` to ``end_factor``
    over ``total_iters`` epochs (a warm-up), then left alone; PyTorch's chained form."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1]")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        groups, epoch = self.optimizer.param_groups, self.last_epoch
        if epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if epoch > self.total_iters:
            return [group["lr"] for group in groups]
        change = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + change / (self.total_iters * self.start_factor
                                               + (epoch - 1) * change)) for group in groups]


class ReduceLROnPlateau:
    """Multiply the lr by ``factor`` when the metric given to ``step(metric)`` has not
    improved (by ``threshold``, relative or absolute) for more than ``patience`` epochs;
    then wait ``cooldown`` epochs; never below ``min_lr``. PyTorch's rules and defaults."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0,
                 eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError("mode must be 'min' or 'max', threshold_mode 'rel' or 'abs'")
        self.optimizer = optimizer
        groups = optimizer.param_groups
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * len(
            groups)
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in groups]

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics: Any) -> None:
        """One epoch's metric (a validation loss, say): reduce the lr if it has stalled."""
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new_lr = max(float(group["lr"]) * self.factor, min_lr)
                if float(group["lr"]) - new_lr > self.eps:
                    group["lr"] = new_lr
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "OneCycleLR", "ReduceLROnPlateau", "StepLR"]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith and Topin; fast.ai's ``fit_one_cycle``), stepped once per
    batch: the lr climbs from max_lr / div_factor to ``max_lr`` over the first ``pct_start``
    of ``total_steps`` (or ``epochs * steps_per_epoch``), then anneals to
    initial_lr / final_div_factor; the momentum (SGD's ``momentum``, Adam's first beta) moves
    the opposite way, between ``max_momentum`` and ``base_momentum``. ``anneal_strategy``:
    "cos" or "linear"; ``three_phase=True`` comes back down to the initial lr before the
    final annealing. PyTorch's formulas, so the lrs are PyTorch's.

    >>> sched = dg.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=100)
    """

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr",
                            "base_momentum", "max_momentum"),
                           (total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                            "max_momentum")]
        else:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (total_steps - 1, "max_lr", "min_lr", "base_momentum",
                            "max_momentum")]
        groups = optimizer.param_groups
        for group, lr in zip(groups, _per_group(max_lr, groups, "max_lr")):
            if last_epoch == -1:
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group, high, low in zip(groups,
                                            _per_group(max_momentum, groups, "max_momentum"),
                                            _per_group(base_momentum, groups, "base_momentum")):
                    self._set_momentum(group, high)
                    group["max_momentum"], group["base_momentum"] = high, low
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "linear":
            return (end - start) * pct + start
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start = end
        return lrs


def _per_group(value: Any, groups: list[dict[str, Any]], name: str) -> list[Any]:
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


# A PyTorch name dyngraph does not have yet (NOTE [missing names], dyngraph/missing.py).
from ..missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
