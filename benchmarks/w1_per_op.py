"""W1: per-op overhead.

A chain of 1000 tiny ops on a (1, 8) float32 array, cycling add / mul / tanh, then
``h.sum().backward()``. The arrays are so small that numpy's own work is negligible, so the
time per op is almost entirely the engine's bookkeeping: building a node on the way forward
and visiting it on the way back.

The same chain runs in PyTorch (where it imports) and in the numpy floor, alternately in the
same process. Floor: every op's forward as one numpy call, the backward as one multiply per
mul / tanh op (``grad *= w``, ``grad *= 1 - y^2``; add passes the gradient through).

Reported: microseconds per op (forward + backward time / 1000).
Target (issue 28): dyngraph <= 1.0x torch. Also reported: the same chain with a recording event
subscriber attached, and with a live GraphView, as ratios to the bare chain. Target: <= 2.0x.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import dyngraph as dg
from benchmarks.harness import (
    Result,
    attached_ratio,
    check_torch_ratio,
    scaled,
    side_by_side_median_seconds,
    with_live_view,
    with_recording_subscriber,
)

N_OPS = 1000
WIDTH = 8
TARGET_TORCH_RATIO = 1.0  # issue 28, for the readable engine alone (issue 19 had 0.6x)
TARGET_SUBSCRIBED_RATIO = 2.0


def make_inputs(
    seed: int = 0, dtype: npt.DTypeLike = np.float32
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The leaf ``x`` and the constants ``b`` and ``w``, each of shape (1, WIDTH)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, WIDTH)).astype(dtype)
    b = (0.1 * rng.standard_normal((1, WIDTH))).astype(dtype)
    w = rng.uniform(0.5, 1.5, (1, WIDTH)).astype(dtype)  # keeps h in tanh's sensitive range
    return x, b, w


def chain_backward(x_t, b_t, w_t, n_ops: int = N_OPS) -> tuple[float, np.ndarray]:
    """The chain on tensors of dyngraph or PyTorch (the same code runs on both), then
    ``h.sum().backward()``. Returns the sum and its gradient w.r.t. the leaf ``x_t``."""
    h = x_t
    for i in range(n_ops):
        if i % 3 == 0:
            h = h + b_t
        elif i % 3 == 1:
            h = h * w_t
        else:
            h = h.tanh()
    total = h.sum()
    total.backward()
    return total.item(), x_t.grad.numpy()


def dyngraph_chain(
    x: np.ndarray, b: np.ndarray, w: np.ndarray, n_ops: int = N_OPS
) -> tuple[float, np.ndarray]:
    """The chain in dyngraph. Returns ``h.sum()`` and the gradient of that sum w.r.t. ``x``."""
    x_t = dg.tensor(x, requires_grad=True)
    return chain_backward(x_t, dg.tensor(b), dg.tensor(w), n_ops)


def numpy_chain(
    x: np.ndarray, b: np.ndarray, w: np.ndarray, n_ops: int = N_OPS
) -> tuple[float, np.ndarray]:
    """The same chain in plain numpy with the backward pass written out by hand."""
    h = x
    tanh_outputs = []  # the only intermediates the backward pass needs
    for i in range(n_ops):
        if i % 3 == 0:
            h = h + b
        elif i % 3 == 1:
            h = h * w
        else:
            h = np.tanh(h)
            tanh_outputs.append(h)
    total = float(h.sum())

    grad = np.ones_like(h)  # d sum(h) / d h
    for i in reversed(range(n_ops)):
        if i % 3 == 0:
            pass  # d (h + b) / d h = 1: the gradient passes through unchanged
        elif i % 3 == 1:
            grad = grad * w  # d (h * w) / d h = w
        else:
            y = tanh_outputs.pop()
            grad = grad * (1 - y * y)  # d tanh: 1 - y^2
    return total, grad


def torch_chain(torch, x, b, w, n_ops: int = N_OPS) -> tuple[float, np.ndarray]:
    """The chain in PyTorch (``x``, ``b``, ``w`` are numpy arrays, made tensors here as
    dyngraph_chain does). Returns ``h.sum()`` and the gradient of that sum w.r.t. ``x``."""
    x_t = torch.tensor(x, requires_grad=True)
    return chain_backward(x_t, torch.from_numpy(b), torch.from_numpy(w), n_ops)


def run(quick: bool = False) -> list[Result]:
    """Time the bare chain against the numpy floor and PyTorch."""
    x, b, w = make_inputs()
    t_dg, t_np, t_torch = side_by_side_median_seconds(
        lambda: dyngraph_chain(x, b, w),
        lambda: numpy_chain(x, b, w),
        lambda torch: lambda: torch_chain(torch, x, b, w),
        repeat=5 if quick else 50,
    )
    us_per_op = 1e6 / N_OPS
    return [check_torch_ratio(
        f"W1 per-op, {N_OPS} ops fwd+bwd", t_dg * us_per_op, t_np * us_per_op,
        scaled(t_torch, us_per_op), "us/op", TARGET_TORCH_RATIO,
    )]


def run_subscribed(quick: bool = False) -> list[Result]:
    """Time the chain with a recording subscriber attached against the bare chain."""
    x, b, w = make_inputs()
    repeat = 5 if quick else 50

    def bare() -> object:
        return dyngraph_chain(x, b, w)

    return attached_ratio(
        "W1 + recording subscriber (floor: bare)", with_recording_subscriber(bare), bare,
        repeat, 1e6 / N_OPS, "us/op", TARGET_SUBSCRIBED_RATIO,
    )


def run_with_view(quick: bool = False) -> list[Result]:
    """Time the chain with a live GraphView attached (the widget's kernel-side cost) against
    the bare chain (see harness.with_live_view for what is timed)."""
    x, b, w = make_inputs()
    repeat = 5 if quick else 40

    def bare() -> object:
        return dyngraph_chain(x, b, w)

    viewed = with_live_view(bare, calls=repeat + 3)  # paired_median_seconds warms up 3 times
    return attached_ratio(
        "W1 + live GraphView (floor: bare)", viewed, bare,
        repeat, 1e6 / N_OPS, "us/op", TARGET_SUBSCRIBED_RATIO,
    )
