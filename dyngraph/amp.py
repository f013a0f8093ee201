"""Mixed precision's two names (PyTorch's ``torch.amp``): ``GradScaler`` and ``autocast``.

dyngraph computes every op in its inputs' own dtype, so there is no lower precision to switch
to. What learners' programs write still runs: nanoGPT's
``scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))`` followed by
``scaler.scale(loss).backward()``, ``scaler.unscale_(optimizer)``, ``scaler.step(optimizer)``
and ``scaler.update()``; ``autocast(..., enabled=False)``. An enabled ``GradScaler`` scales
the loss, unscales the gradients, skips a step whose gradients are not finite and moves its
scale as PyTorch's does; an enabled ``autocast`` is refused with what to write instead.
"""

from __future__ import annotations

from typing import Any

from . import backend, grad_mode
from .tensor import Tensor


class GradScaler:
    """Loss scaling (PyTorch's ``torch.amp.GradScaler``): ``scale(loss)`` multiplies the loss
    by the scale, so its gradients are scaled too; ``unscale_(optimizer)`` divides them back;
    ``step(optimizer)`` steps unless a gradient is inf or NaN; ``update()`` halves the scale
    after such a step (``backoff_factor``) and doubles it after ``growth_interval`` good ones.
    With ``enabled=False`` each call passes straight through (``step`` is ``optimizer.step``).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self.device = device
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._found_inf: dict[int, bool] = {}  # per optimizer unscaled since the last update

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """The loss (or a list or tuple of losses) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    @grad_mode.no_grad()
    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place (before clipping them)."""
        if not self._enabled:
            return
        if id(optimizer) in self._found_inf:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        inverse = 1.0 / self._scale
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(inverse)
                    xp = backend.get_array_module(p.grad.array)
                    found_inf = found_inf or not bool(xp.isfinite(p.grad.array).all())
        self._found_inf[id(optimizer)] = found_inf

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()``, unless a gradient is inf or NaN (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._found_inf:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Move the scale: ``backoff_factor`` times after a skipped step, ``growth_factor``
        times after ``growth_interval`` steps in a row that were taken."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._found_inf:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf = {}

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


class autocast:  # noqa: N801 (PyTorch's spelling)
    """``torch.autocast``: with ``enabled=False`` a context (and decorator) that changes
    nothing; enabled, refused: dyngraph has no lower precision to compute in."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if enabled:
            raise NotImplementedError(
                f"autocast({device_type!r}, dtype={dtype}): dyngraph computes every op in its "
                "inputs' own dtype and has no mixed precision; run in float32 with "
                "contextlib.nullcontext() (as nanoGPT does on the CPU) or autocast(..., "
                "enabled=False)"
            )

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Any) -> Any:
        return fn


__all__ = ["GradScaler", "autocast"]
