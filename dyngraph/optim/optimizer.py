"""Optimizers: turn gradients into parameter updates (PyTorch's ``torch.optim``).

``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adadelta``, ``Adagrad``, ``NAdam``, ``RAdam``,
``Adamax``, ``Rprop`` and ``ASGD``; learning-rate schedules are in ``lr_scheduler``.

The training loop is always the same four lines::

    opt = dg.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()        # forget the previous step's gradients
        loss.backward()        # fill p.grad for every parameter p
        opt.step()             # p <- p - (something computed from p.grad)

NOTE [in place] ``step`` changes each parameter's array in place under ``dg.no_grad()``: the
Parameter objects, and the arrays inside them, stay the same, so the model (and anything else
holding them) sees the new values, and the update itself is not recorded in any graph. Each
update bumps the parameter's version counter, like every in-place operation.

The update rules are PyTorch's, written out step by step, so that a dyngraph model and a PyTorch
model trained from the same weights on the same data take the same steps.

NOTE [closure] Every ``step`` takes an optional ``closure``, as PyTorch's: a function that zeroes
the gradients, computes the loss, calls ``backward()`` and returns the loss. ``step(closure)``
calls it first (with grad enabled: the update itself runs under ``no_grad``, the loss needs a
graph) and returns what it returned, so a loop written for LBFGS, which needs the closure to
evaluate the loss several times in one step, runs unchanged with any optimizer.

NOTE [scalar state] PyTorch keeps the numbers of an optimizer's state that change each step
(NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``) in 0-d tensors of the default dtype,
float32, even for float64 parameters; the rounding to float32 shows in the seventh digit of a
trajectory, so dyngraph keeps them as PyTorch does, as 0-d tensors. (The step counts are
Python ints here: whole numbers are exact in float32 up to 2 ** 24.)

NOTE [param groups] As in PyTorch, the hyperparameters live in ``opt.param_groups``: a list of
dicts, each with its ``"params"`` and its own ``"lr"``, ``"momentum"``, ... Passing a list of
dicts makes several groups (``[{"params": body.parameters()}, {"params": head.parameters(),
"lr": 1e-2}]``: what a group leaves out comes from the constructor's arguments). A learning-rate
scheduler, or a learner, changes ``group["lr"]`` between steps.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import factories, grad_mode
from ..tensor import Tensor


class Optimizer:
    """Base class: keeps the parameter groups, a ``state`` dict per parameter, and
    ``zero_grad``. Subclasses define ``step()``, which updates every parameter whose ``.grad``
    is not None using its group's hyperparameters.
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params should be an iterable of Tensors (e.g. model.parameters() or [w, b]), "
                "but got a single Tensor: wrap it in a list"
            )
        self.defaults = defaults
        # per parameter: buffers, step count. A defaultdict, as PyTorch's: optimizer.state[p]
        # for a parameter not stepped yet is an empty dict (and an entry from then on)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        params = list(params)
        if not params:
            raise ValueError(
                "optimizer got an empty parameter list: nothing to optimize (did the model "
                "register its parameters? A plain Python list of layers hides them; use "
                "dg.nn.ModuleList)"
            )
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with "params" and any hyperparameters)."""
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        if not params:
            raise ValueError(
                "optimizer got an empty parameter list: nothing to optimize (did the model "
                "register its parameters? A plain Python list of layers hides them; use "
                "dg.nn.ModuleList)"
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, param in enumerate(params):
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but parameter {i} is a "
                    f"{type(param).__name__}"
                )
            if not param.is_leaf:
                raise ValueError(
                    f"can't optimize a non-leaf Tensor (parameter {i} was computed by "
                    f"{param.grad_fn.name}): optimize the leaves it was computed from, or "
                    "make it a leaf with .detach().requires_grad_()"
                )
            if id(param) in seen:
                raise ValueError(f"parameter {i} appears more than once in the parameter list")
            seen.add(id(param))
        self.param_groups.append({**self.defaults, **group, "params": params})

    @property
    def params(self) -> list[Tensor]:
        """Every parameter, group after group."""
        return [p for group in self.param_groups for p in group["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient: ``.grad = None`` (the default, as in PyTorch),
        or with ``set_to_none=False`` zeros, in place (the same gradient tensors)."""
        for param in self.params:
            if set_to_none or param.grad is None:
                param.grad = None
            elif param.grad.requires_grad:  # a gradient with a graph (create_graph=True)
                param.grad = Tensor(param.grad.array * 0)
            else:
                param.grad.zero_()  # in place, as in PyTorch: the same tensor, now zeros

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout, to save with the model (issue 37, item 3): ``{"state": {i:
        the i-th parameter's buffers}, "param_groups": [hyperparameters with "params": [i,
        ...]]}``, parameters numbered group after group; the buffers are this optimizer's own
        (no copies), as in PyTorch."""
        index = {id(p): i for i, p in enumerate(self.params)}
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [index[id(p)] for p in g["params"]]} for g in self.param_groups]
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take over a saved ``state_dict()``: the hyperparameters of each group and, copied,
        each parameter's buffers (matched by number, as PyTorch matches them)."""
        import copy

        saved = copy.deepcopy(state_dict)
        groups = saved["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        params = self.params
        self.state.clear()
        for i, buffers in saved["state"].items():
            self.state[params[int(i)]] = buffers
        for mine, theirs in zip(self.param_groups, groups):
            mine.update({k: v for k, v in theirs.items() if k != "params"})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; with a ``closure``, first
        re-evaluate the loss by calling it, and return that loss (NOTE [closure])."""
        raise NotImplementedError(f"{type(self).__name__} must define step()")

    def _with_grads(self) -> Iterator[tuple[dict[str, Any], Tensor, Tensor]]:
        """(group, parameter, gradient) for every parameter that has a gradient; with
        ``maximize`` (PyTorch's option) the gradient's negative, so the step climbs."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield group, p, -p.grad if group.get("maximize") else p.grad

    def __repr__(self) -> str:
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i} ({len(group['params'])} parameters)"
            for name in sorted(k for k in group if k != "params"):
                text += f"\n    {name}: {group[name]}"
        return text + "\n)"


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, weight decay and Nesterov momentum.

    For each parameter p with gradient g (PyTorch's rule)::

        g = g + weight_decay * p                      (weight decay: an L2 penalty)
        b = g                      at the first step  (momentum buffer)
        b = momentum * b + (1 - dampening) * g        afterwards
        g = g + momentum * b   if nesterov   else   g = b
        p = p - lr * g

    >>> opt = dg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False, *, maximize: bool = False) -> None:
        _non_negative(learning_rate=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            momentum = group["momentum"]
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            if momentum != 0.0:
                state = self.state.setdefault(p, {})
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = Tensor(g.array.copy())
                else:
                    buf = state["momentum_buffer"]
                    buf *= momentum
                    if group["dampening"] != 0.0:
                        buf += (1.0 - group["dampening"]) * g
                    else:  # (1 - 0) * g is g: one pass over the gradient fewer
                        buf += g
                buf = state["momentum_buffer"]
                g = g + momentum * buf if group["nesterov"] else buf
            p -= group["lr"] * g
        return loss


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015): a step per parameter scaled by running averages of the
    gradient and of its square. For each parameter p with gradient g, at step t = 1, 2, ...::

        g = g + weight_decay * p                      (L2 penalty, as in PyTorch's Adam)
        m = beta1 * m + (1 - beta1) * g               (first moment;  m = 0 at the start)
        v = beta2 * v + (1 - beta2) * g * g           (second moment; v = 0 at the start)
        m_hat = m / (1 - beta1 ** t)                  (bias corrections: m and v start at 0)
        v_hat = v / (1 - beta2 ** t)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)

    ``amsgrad=True`` divides by the largest v_hat seen so far instead;
    ``decoupled_weight_decay=True`` is AdamW's weight decay (applied to p, not through g).

    >>> opt = dg.optim.Adam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize,
                                  "decoupled_weight_decay": decoupled_weight_decay})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            beta1, beta2 = group["betas"]
            lr, weight_decay = group["lr"], group["weight_decay"]
            if weight_decay != 0.0:
                if group.get("decoupled_weight_decay"):
                    p *= 1.0 - lr * weight_decay
                else:
                    g = g + weight_decay * p
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = factories.zeros_like(p)  # m, on p's device
                state["exp_avg_sq"] = factories.zeros_like(p)  # v
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = factories.zeros_like(p)
            state["step"] += 1
            t = state["step"]
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m *= beta1
            m += (1.0 - beta1) * g
            v *= beta2
            v += (1.0 - beta2) * (g * g)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = v.maximum(state["max_exp_avg_sq"])
                v = state["max_exp_avg_sq"]
            # NOTE: arranged as PyTorch does it (the bias corrections folded into a step size
            # and the denominator), so that rounding differs from PyTorch's as little as possible.
            step_size = lr / (1.0 - beta1**t)
            denominator = v.sqrt() / math.sqrt(1.0 - beta2**t) + group["eps"]
            p -= step_size * (m / denominator)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019): instead of adding
    weight_decay * p to the gradient, each step first shrinks the parameter,
    ``p = p * (1 - lr * weight_decay)``, then takes Adam's step. Default weight_decay 0.01.

    >>> opt = dg.optim.AdamW(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e): divide the gradient by a running root mean square of
    recent gradients. For each parameter p with gradient g (PyTorch's rule)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g           (v = 0 at the start)
        avg = sqrt(v) + eps       (centered: sqrt(v - mean(g)^2) + eps, mean(g) also running)
        b = momentum * b + g / avg;  p = p - lr * b   if momentum > 0
        p = p - lr * g / avg                          otherwise

    >>> opt = dg.optim.RMSprop(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, *, maximize: bool = False) -> None:
        _non_negative(learning_rate=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                      momentum=momentum)
        super().__init__(params, {"lr": lr, "alpha": alpha, "eps": eps,
                                  "weight_decay": weight_decay, "momentum": momentum,
                                  "centered": centered, "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            alpha = group["alpha"]
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["square_avg"] = factories.zeros_like(p)
                if group["momentum"] > 0.0:
                    state["momentum_buffer"] = factories.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = factories.zeros_like(p)
            state["step"] += 1
            square_avg = state["square_avg"]
            square_avg *= alpha
            square_avg += (1.0 - alpha) * (g * g)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg += (1.0 - alpha) * (g - grad_avg)  # a lerp towards g, as in PyTorch
                avg = (square_avg - grad_avg * grad_avg).sqrt() + group["eps"]
            else:
                avg = square_avg.sqrt() + group["eps"]
            if group["momentum"] > 0.0:
                buf = state["momentum_buffer"]
                buf *= group["momentum"]
                buf += g / avg
                p -= group["lr"] * buf
            else:
                p -= group["lr"] * (g / avg)
        return loss


class Adadelta(Optimizer):
    """Adadelta (Zeiler 2012): steps scaled by the ratio of two running root mean squares,
    of recent updates and of recent gradients, so ``lr`` (1.0 by default) needs little
    tuning. For each parameter p with gradient g (PyTorch's rule)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g                     (v = 0 and u = 0 at the start)
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    >>> opt = dg.optim.Adadelta(model.parameters())
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0, *,
                 maximize: bool = False) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            rho, eps = group["rho"], group["eps"]
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["square_avg"] = factories.zeros_like(p)
                state["acc_delta"] = factories.zeros_like(p)
            state["step"] += 1
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg *= rho
            square_avg += (1.0 - rho) * (g * g)
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * g
            acc_delta *= rho
            acc_delta += (1.0 - rho) * (delta * delta)
            p -= group["lr"] * delta
        return loss


class Adagrad(Optimizer):
    """Adagrad (Duchi et al. 2011): each entry's step divided by the root of the sum of its
    squared gradients so far. For each parameter p with gradient g, at step t = 1, 2, ...::

        g = g + weight_decay * p
        s = s + g * g                                  (s = initial_accumulator_value at first)
        p = p - lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, maximize: bool = False) -> None:
        _non_negative(learning_rate=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                      initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "eps": eps, "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["sum"] = factories.full_like(p, group["initial_accumulator_value"])
            state["step"] += 1
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
            state["sum"] += g * g
            p -= clr * (g / (state["sum"].sqrt() + group["eps"]))
        return loss


class NAdam(Optimizer):
    """NAdam (Dozat 2016): Adam with Nesterov momentum, the step taken from where the momentum
    is about to carry the parameter. With a momentum coefficient that warms up,
    mu_t = beta1 (1 - 0.5 * 0.96 ** (t * momentum_decay)), for each parameter p with gradient g
    at step t = 1, 2, ... (PyTorch's rule)::

        g = g + weight_decay * p                 (decoupled_weight_decay: p = p (1 - lr wd))
        m = beta1 * m + (1 - beta1) * g          (first moment;  m = 0 at the start)
        v = beta2 * v + (1 - beta2) * g * g      (second moment; v = 0 at the start)
        P = mu_1 mu_2 ... mu_t                   (state "mu_product")
        denom = sqrt(v / (1 - beta2 ** t)) + eps
        p = p - lr (1 - mu_t) / (1 - P) * g / denom
              - lr mu_{t+1} / (1 - P mu_{t+1}) * m / denom

    >>> opt = dg.optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay,
                      momentum_decay=momentum_decay)
        _check_betas(betas)
        _torch_run_flags("NAdam", foreach=foreach, capturable=capturable,
                         differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            beta1, beta2 = group["betas"]
            lr, weight_decay = group["lr"], group["weight_decay"]
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["mu_product"] = _scalar_state(1.0)
                state["exp_avg"] = factories.zeros_like(p)
                state["exp_avg_sq"] = factories.zeros_like(p)
            state["step"] += 1
            t = state["step"]
            if weight_decay != 0.0:
                if group["decoupled_weight_decay"]:
                    p *= 1.0 - lr * weight_decay
                else:
                    g = g + weight_decay * p
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
            state["mu_product"] *= mu
            mu_product = state["mu_product"].item()
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m += (1.0 - beta1) * (g - m)  # a lerp towards g, as in PyTorch
            v *= beta2
            v += (1.0 - beta2) * (g * g)
            denominator = (v / (1.0 - beta2**t)).sqrt() + group["eps"]
            p -= lr * (1.0 - mu) / (1.0 - mu_product) * (g / denominator)
            p -= lr * mu_next / (1.0 - mu_product * mu_next) * (m / denominator)
        return loss


class RAdam(Optimizer):
    """RAdam (Liu et al. 2020): Adam whose adaptive step is switched on only once the variance
    of its second-moment estimate is bounded, and then scaled by a rectification term r_t.
    With rho_inf = 2 / (1 - beta2) - 1 and rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t), for
    each parameter p with gradient g at step t = 1, 2, ... (PyTorch's rule)::

        g = g + weight_decay * p                 (decoupled_weight_decay: p = p (1 - lr wd))
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** t)
        if rho_t > 5:   (the adaptive step)
            r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            p = p - lr * m_hat * sqrt(1 - beta2 ** t) / (sqrt(v) + eps) * r_t
        else:           (the first steps: SGD with momentum)
            p = p - lr * m_hat

    >>> opt = dg.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        _torch_run_flags("RAdam", foreach=foreach, capturable=capturable,
                         differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            beta1, beta2 = group["betas"]
            lr, weight_decay = group["lr"], group["weight_decay"]
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = factories.zeros_like(p)
                state["exp_avg_sq"] = factories.zeros_like(p)
            state["step"] += 1
            t = state["step"]
            if weight_decay != 0.0:
                if group["decoupled_weight_decay"]:
                    p *= 1.0 - lr * weight_decay
                else:
                    g = g + weight_decay * p
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m += (1.0 - beta1) * (g - m)  # a lerp towards g, as in PyTorch
            v *= beta2
            v += (1.0 - beta2) * (g * g)
            bias_correction2 = 1.0 - beta2**t
            m_hat = m / (1.0 - beta1**t)
            rho_inf = 2.0 / (1.0 - beta2) - 1.0
            rho_t = rho_inf - 2.0 * t * beta2**t / bias_correction2
            if rho_t > 5.0:
                rectification = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                adaptive = math.sqrt(bias_correction2) / (v.sqrt() + group["eps"])
                p -= m_hat * lr * adaptive * rectification
            else:
                p -= m_hat * lr
        return loss


class Adamax(Optimizer):
    """Adamax (Kingma & Ba 2015, section 7): Adam with the infinity norm in place of the root
    mean square, u = max(beta2 u, |g|). For each parameter p with gradient g at step t = 1,
    2, ... (PyTorch's rule, eps inside the max)::

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g               (m = 0 and u = 0 at the start)
        u = max(beta2 * u, |g| + eps)                 (state "exp_inf")
        p = p - lr / (1 - beta1 ** t) * m / u

    >>> opt = dg.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay)
        _check_betas(betas)
        _torch_run_flags("Adamax", foreach=foreach, capturable=capturable,
                         differentiable=differentiable)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            beta1, beta2 = group["betas"]
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = factories.zeros_like(p)
                state["exp_inf"] = factories.zeros_like(p)
            state["step"] += 1
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            m = state["exp_avg"]
            m += (1.0 - beta1) * (g - m)  # a lerp towards g, as in PyTorch
            u = state["exp_inf"]
            u.copy_((u * beta2).maximum(g.abs() + group["eps"]))
            p -= group["lr"] / (1.0 - beta1 ** state["step"]) * (m / u)
        return loss


class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun 1993): each entry moves by its own step size in the direction
    opposite to its gradient's sign; the gradient's magnitude is not used. The step size grows
    by etas[1] while the gradient keeps its sign, shrinks by etas[0] when it flips, and stays
    within step_sizes. For each parameter p with gradient g (PyTorch's rule)::

        s = sign(g * g_prev)                          (g_prev = 0 and size = lr at the start)
        size = clamp(size * (etas[1] if s > 0, etas[0] if s < 0, 1 if s = 0), *step_sizes)
        g = 0 where s < 0                             (after a flip, wait a step)
        p = p - sign(g) * size;   g_prev = g

    >>> opt = dg.optim.Rprop(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _non_negative(learning_rate=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"invalid etas: {etas} (they must be 0 < etas[0] < 1 < etas[1]: "
                             "a step shrinks after a sign change and grows otherwise)")
        _torch_run_flags("Rprop", foreach=foreach, capturable=capturable,
                         differentiable=differentiable)
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            shrink, grow = group["etas"]
            smallest, largest = group["step_sizes"]
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["prev"] = factories.zeros_like(p)
                state["step_size"] = factories.full_like(p, group["lr"])
            state["step"] += 1
            same_sign = (g * state["prev"]).sign()
            factor = factories.full_like(p, 1.0).where(same_sign == 0, grow)
            factor = factor.where(same_sign >= 0, shrink)
            size = state["step_size"]
            size.copy_((size * factor).clamp(smallest, largest))
            g = g.where(same_sign >= 0, 0.0)
            p -= g.sign() * size
            state["prev"].copy_(g)
        return loss


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky 1992): SGD with a decaying step size eta_t, which also
    keeps ``ax``, the running average of the parameters from step t0 on (the average is the
    estimate to use; the parameters themselves take plain SGD steps). For each parameter p with
    gradient g at step t = 1, 2, ... (PyTorch's rule)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g           (eta = lr and mu = 1 at the start)
        ax = ax + mu * (p - ax)                       (ax = p while mu = 1)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    >>> opt = dg.optim.ASGD(model.parameters(), lr=1e-2)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0.0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _non_negative(learning_rate=lr, weight_decay=weight_decay)
        _torch_run_flags("ASGD", foreach=foreach, capturable=capturable,
                         differentiable=differentiable)
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "maximize": maximize})

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, in place (NOTE [closure])."""
        loss = _evaluate(closure)
        for group, p, g in self._with_grads():
            lr, lambd = group["lr"], group["lambd"]
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["eta"] = _scalar_state(lr)
                state["mu"] = _scalar_state(1.0)
                state["ax"] = factories.zeros_like(p)
            state["step"] += 1
            t, eta, mu = state["step"], state["eta"].item(), state["mu"].item()
            if group["weight_decay"] != 0.0:
                g = g + group["weight_decay"] * p
            p *= 1.0 - lambd * eta
            p -= eta * g
            if mu != 1.0:
                state["ax"] += (p - state["ax"]) * mu
            else:
                state["ax"].copy_(p)
            state["eta"] = _scalar_state(lr / (1.0 + lambd * lr * t) ** group["alpha"])
            state["mu"] = _scalar_state(1.0 / max(1.0, t - group["t0"]))
        return loss


def _scalar_state(value: float) -> Tensor:
    """A number of an optimizer's state as PyTorch keeps it (NOTE [scalar state])."""
    return factories.tensor(value)


def _evaluate(closure: Callable[[], Any] | None) -> Any:
    """The loss ``closure()`` re-evaluates, with grad enabled (NOTE [closure]); None without."""
    if closure is None:
        return None
    with grad_mode.enable_grad():
        return closure()


def _check_betas(betas: tuple[float, float]) -> None:
    """Refuse decay rates of moving averages outside [0, 1)."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"invalid beta parameter at index {i}: {beta} (betas must be in "
                             "[0, 1): the share of the old average each step keeps)")


def _torch_run_flags(optimizer: str, **flags: Any) -> None:
    """PyTorch's ``foreach``, ``capturable`` and ``differentiable`` choose how torch runs the
    same update (on lists of tensors at once, inside CUDA graphs, recorded by autograd), not
    what it computes. dyngraph runs it one way, parameter after parameter outside any graph.
    ``foreach`` (any value) only batches the same arithmetic, and torch runs it on the CPU, so
    it is taken and ignored; ``capturable=True`` and ``differentiable=True`` are refused (torch
    refuses them too for a CPU leaf parameter)."""
    accepted = {"foreach": (None, False, True), "capturable": (False,),
                "differentiable": (False,)}
    for name, value in flags.items():
        if value not in accepted[name]:
            raise ValueError(
                f"{optimizer}({name}={value!r}) is not supported: dyngraph updates each "
                "parameter in place outside any graph (no CUDA graphs to capture, no "
                f"differentiating through the step); leave {name} out")


def _non_negative(**settings: float) -> None:
    """Refuse a negative hyperparameter, naming it."""
    for name, value in settings.items():
        if value < 0.0:
            raise ValueError(f"invalid {name.replace('_', ' ')}: {value} (it must be >= 0)")
