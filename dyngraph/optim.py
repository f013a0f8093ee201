"""Optimizers: turn gradients into parameter updates (PyTorch's ``torch.optim``).

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
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from . import factories, grad_mode
from .tensor import Tensor


class Optimizer:
    """Base class: keeps the parameters, a ``state`` dict per parameter, and ``zero_grad``.

    Subclasses define ``step()``, which updates every parameter whose ``.grad`` is not None.
    """

    def __init__(self, params: Iterable[Tensor], settings: tuple[str, ...]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params should be an iterable of Tensors (e.g. model.parameters() or [w, b]), "
                "but got a single Tensor: wrap it in a list"
            )
        self.params: list[Tensor] = list(params)
        if not self.params:
            raise ValueError(
                "optimizer got an empty parameter list: nothing to optimize (did the model "
                "register its parameters? A plain Python list of layers hides them; use "
                "dg.nn.ModuleList)"
            )
        seen: set[int] = set()
        for i, param in enumerate(self.params):
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
        self.settings = settings  # the names of the hyperparameters (attributes), for repr
        self.state: dict[Tensor, dict[str, Any]] = {}  # per parameter: buffers, step count

    def zero_grad(self) -> None:
        """Set every parameter's ``.grad`` to None (the next backward starts fresh)."""
        for param in self.params:
            param.grad = None

    def step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define step()")

    def __repr__(self) -> str:
        settings = "".join(f"\n    {name}: {getattr(self, name)}" for name in self.settings)
        return f"{type(self).__name__} ({len(self.params)} parameters){settings}\n"


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

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False,
                 dampening: float = 0.0) -> None:
        _non_negative(learning_rate=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("Nesterov momentum requires a momentum > 0 and zero dampening")
        super().__init__(params, ("lr", "momentum", "weight_decay", "nesterov", "dampening"))
        self.lr = lr
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.dampening = dampening

    @grad_mode.no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient, in place."""
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.weight_decay != 0.0:
                g = g + self.weight_decay * p
            if self.momentum != 0.0:
                state = self.state.setdefault(p, {})
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = Tensor(g.array.copy())
                else:
                    buf = state["momentum_buffer"]
                    buf *= self.momentum
                    buf += (1.0 - self.dampening) * g
                buf = state["momentum_buffer"]
                g = g + self.momentum * buf if self.nesterov else buf
            p -= self.lr * g


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015): a step per parameter scaled by running averages of the
    gradient and of its square. For each parameter p with gradient g, at step t = 1, 2, ...::

        g = g + weight_decay * p                      (L2 penalty, as in PyTorch's Adam)
        m = beta1 * m + (1 - beta1) * g               (first moment;  m = 0 at the start)
        v = beta2 * v + (1 - beta2) * g * g           (second moment; v = 0 at the start)
        m_hat = m / (1 - beta1 ** t)                  (bias corrections: m and v start at 0)
        v_hat = v / (1 - beta2 ** t)
        p = p - lr * m_hat / (sqrt(v_hat) + eps)

    >>> opt = dg.optim.Adam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0) -> None:
        _non_negative(learning_rate=lr, eps=eps, weight_decay=weight_decay)
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas: {betas} (each must be in [0, 1))")
        super().__init__(params, ("lr", "betas", "eps", "weight_decay"))
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.weight_decay = weight_decay

    @grad_mode.no_grad()
    def step(self) -> None:
        """Update every parameter that has a gradient, in place."""
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad
            if self.weight_decay != 0.0:
                g = g + self.weight_decay * p
            state = self.state.setdefault(p, {})
            if not state:
                state["step"] = 0
                state["exp_avg"] = factories.zeros_like(p)  # m, on p's device
                state["exp_avg_sq"] = factories.zeros_like(p)  # v
            state["step"] += 1
            t = state["step"]
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m *= beta1
            m += (1.0 - beta1) * g
            v *= beta2
            v += (1.0 - beta2) * (g * g)
            # NOTE: arranged as PyTorch does it (the bias corrections folded into a step size
            # and the denominator), so that rounding differs from PyTorch's as little as possible.
            step_size = self.lr / (1.0 - beta1**t)
            denominator = v.sqrt() / math.sqrt(1.0 - beta2**t) + self.eps
            p -= step_size * (m / denominator)


def _non_negative(**settings: float) -> None:
    """Refuse a negative hyperparameter, naming it."""
    for name, value in settings.items():
        if value < 0.0:
            raise ValueError(f"invalid {name.replace('_', ' ')}: {value} (it must be >= 0)")
