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
is ``lr`` (the first, ``min(1, 1 / |g|_1) * lr``), or, with ``line_search_fn="strong_wolfe"``,
the one a line search along d finds (:func:`_strong_wolfe`). PyTorch's rules, operation for
operation, in the parameters' dtype, so the trajectories agree with PyTorch's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from .. import backend, grad_mode
from ..tensor import Tensor
from .optimizer import Optimizer, _evaluate, _non_negative


class LBFGS(Optimizer):
    """L-BFGS with a fixed step (``line_search_fn=None``, PyTorch's default) or a strong Wolfe
    line search (``line_search_fn="strong_wolfe"``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _non_negative(learning_rate=lr)
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(
                f"LBFGS(line_search_fn={line_search_fn!r}): only 'strong_wolfe' is supported "
                "(or None, the default: a fixed step of lr)"
            )
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})
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

    def _evaluate_at(self, closure: Callable[[], Any], step_size: Any,
                     direction: Any) -> tuple[float, Any]:
        """The loss and flat gradient at x + step_size * direction, x the parameters now;
        the parameters are put back to x afterwards."""
        x = [p.detach().clone() for p in self._params]
        self._add_to_params(step_size, direction)
        loss = float(_evaluate(closure))
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    @grad_mode.no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` L-BFGS iterations; returns the loss ``closure()`` gave first."""
        group = self.param_groups[0]
        lr, history_size = group["lr"], group["history_size"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]

        # NOTE: the state is global; PyTorch keeps it under the first parameter, so do we
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = _evaluate(closure)  # with grad enabled, although step() runs without
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
            if group["line_search_fn"] == "strong_wolfe":
                loss, flat_grad, t, evals = _strong_wolfe(
                    functools.partial(self._evaluate_at, closure), t, d, loss, flat_grad, gtd,
                    max_ls=group["max_eval"] - current_evals)
                self._add_to_params(t, d)
                optimal = abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                evals, optimal = 0, False
                if n_iter != group["max_iter"]:  # the last step's loss is not needed
                    loss = float(_evaluate(closure))
                    flat_grad = self._flat_grad()
                    evals, optimal = 1, abs(flat_grad).max() <= tolerance_grad
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == group["max_iter"] or current_evals >= group["max_eval"] or optimal:
                break
            if abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


# ----------------------------------------------------------------------------- line search


def _strong_wolfe(
    evaluate: Callable[[Any, Any], tuple[float, Any]], t: Any, d: Any, f: float, g: Any,
    gtd: Any, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, Any, int]:
    """A step length t along the direction d that satisfies the strong Wolfe conditions,
    tried first at the t given, then at most ``max_ls`` more times (each try one call of
    ``evaluate(t, d)``: the loss and gradient at x + t d). With phi(t) the loss along d
    (phi(0) = f, phi'(0) = gtd = g . d < 0)::

        phi(t) <= f + c1 t gtd             (sufficient decrease, Armijo)
        |phi'(t)| <= -c2 gtd               (the slope has flattened: curvature)

    Two phases (Nocedal & Wright, Numerical Optimization, algorithms 3.5 and 3.6; PyTorch's
    port of torch7's lswolfe.lua, step for step): *bracket* grows t until the interval
    [t_prev, t] must contain such a point (the loss rose, or the slope turned uphill), each
    new t from a cubic fitted to both ends' values and slopes; *zoom* then shrinks the bracket
    around it, keeping a "low" end (the lower loss) and a "high" end. Returns the loss and
    gradient at the step found, the step, and the number of evaluations.
    """
    d_norm = abs(d).max()
    f_new, g_new = evaluate(t, d)
    evals = 1
    gtd_new = g_new.dot(d)

    # bracket: the ends (step, loss, gradient, slope) of an interval that holds a Wolfe point
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            # too little decrease, or the loss rose: a Wolfe point lies between t_prev and t
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:  # both conditions hold at t: done
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:  # the slope turned uphill: a minimum lies in between
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # still going down steeply: try further, between 1.01 t and 10 t
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                      bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # out of evaluations: zoom between 0 and the last t
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until its new point satisfies both conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # too small to matter
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0],
                           bracket[1], bracket_f[1], bracket_gtd[1])
        # NOTE: a t at (or within a tenth of the bracket of) an end makes little progress; the
        # second time in a row, or when it is at an end, move it a tenth of the bracket inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            # not a sufficient decrease, or no lower than the low end: t is the new high end
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True  # the strong Wolfe conditions hold at t
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                # the loss rises from t towards the high end: the minimum lies between t and
                # the old low end, which becomes the high end
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new  # t is the new low end
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _cubic_minimum(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                   bounds: tuple[Any, Any] | None = None) -> Any:
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 has its minimum,
    clamped to ``bounds`` (by default the interval between x1 and x2); the middle of the
    bounds when the cubic has no minimum (torch7's polyinterp.lua, as PyTorch's)::

        d1 = g1 + g2 - 3 (f1 - f2) / (x1 - x2);   d2 = sqrt(d1^2 - g1 g2)
        x = x2 - (x2 - x1) (g2 + d2 - d1) / (g2 - g1 + 2 d2)          (x1 <= x2)
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, low), high)
