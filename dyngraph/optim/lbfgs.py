"""L-BFGS (PyTorch's ``torch.optim.LBFGS``): a quasi-Newton method that calls back into the
model. ``step(closure)`` evaluates the loss and its gradient by calling ``closure()`` (which
zeroes the gradients, computes the loss, calls ``backward()`` and returns the loss) as many
times as it needs, up to ``max_iter`` iterations per step::

    optimizer = dg.optim.LBFGS(model.parameters(), lr=0.8)
    def closure():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)

Each iteration moves every parameter, seen as one flat vector x, along d = -H g: g the
gradient, H an estimate of the inverse Hessian built from the last ``history_size`` pairs
(s = the step taken, y = the change in gradient) by the two-loop recursion. The step length
is ``lr`` (the first, ``min(1, 1 / |g|_1) * lr``); PyTorch's rule, operation for operation,
in the parameters' dtype, so the trajectories agree with PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import backend, grad_mode
from ..tensor import Tensor
from .optimizer import Optimizer, _non_negative


class LBFGS(Optimizer):
    """L-BFGS with a fixed step (``line_search_fn=None``, PyTorch's default)."""

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _non_negative(learning_rate=lr)
        if line_search_fn is not None:
            raise NotImplementedError(
                f"LBFGS(line_search_fn={line_search_fn!r}): dyngraph's LBFGS has PyTorch's "
                "default fixed step only (line_search_fn=None); the strong Wolfe line search "
                "is not there yet"
            )
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size, "line_search_fn": None})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> Any:
        """Every parameter's gradient (zeros for none) as one flat array."""
        xp = backend.get_array_module(self._params[0].array)
        return xp.concatenate([xp.zeros(p.array.size, p.array.dtype) if p.grad is None
                               else p.grad.array.reshape(-1) for p in self._params])

    def _add_to_params(self, step_size: Any, direction: Any) -> None:
        """x += step_size * direction, parameter by parameter, in place."""
        offset = 0
        for p in self._params:
            n = p.array.size
            p.add_(Tensor(direction[offset:offset + n].reshape(p.shape)), alpha=step_size)
            offset += n

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` L-BFGS iterations; returns the loss ``closure()`` gave first."""
        group = self.param_groups[0]
        lr, history_size = group["lr"], group["history_size"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]

        def evaluate() -> Any:
            with grad_mode.enable_grad():  # the closure builds a graph even inside step()
                return closure()

        # NOTE: the state is global; PyTorch keeps it under the first parameter, so do we
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < group["max_iter"]:
            n_iter += 1
            state["n_iter"] += 1
            # the direction d = -H g
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # the two-loop recursion's coefficients, kept in the state as PyTorch's (so
                # a checkpoint holds the same keys)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            # the step length, and the step
            t = min(1.0, 1.0 / abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # no more descent along d
                break
            self._add_to_params(t, d)
            evals = 0
            if n_iter != group["max_iter"]:
                loss = float(evaluate())
                flat_grad = self._flat_grad()
                evals = 1
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == group["max_iter"] or current_evals >= group["max_eval"]:
                break
            if evals and abs(flat_grad).max() <= tolerance_grad:
                break
            if abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
