"""W5: eager execution vs the replay of a traced StaticGraph (``dg.trace``), for small-op models.

Two models whose ops are small, so that Python work per op dominates:

- a 16-32-32-4 tanh MLP on a batch of 8 (three Linear layers: 9 ops per call);
- one step of a tanh RNN cell ``h = tanh(x @ Wx + h @ Wh + b)``, input 32, hidden 64, batch 1.

Each is called under ``no_grad`` (inference), eagerly and through ``dg.trace(model, ...)``:
eager runs the Python code, the dunders and ``Function.apply`` (Tensor wrapping, grad-mode
checks) for every op; the replay calls each op's ``forward`` on raw arrays in a loop fixed at
trace time. Reported: microseconds per call, with eager as the floor (ratio = traced / eager).
Target: <= 0.7x.

A third row times a training step (forward + backward). There the replay must record a graph,
so it goes through ``Function.apply`` like eager code and saves only the Python of the model
itself: building nodes and running backward dominate, and tracing buys next to nothing.
Target: <= 1.2x (no worse than eager, within the noise of a busy machine).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import dyngraph as dg
from benchmarks.harness import Result, check_ratio, paired_median_seconds

MLP_SIZES = (16, 32, 32, 4)
MLP_BATCH = 8
RNN_IN, RNN_HIDDEN = 32, 64
TARGET_RATIO = 0.7
TARGET_TRAINING_RATIO = 1.2
CALLS = 200  # calls per timed repetition (one call is a few microseconds)


def make_mlp(seed: int = 0) -> tuple[list[dg.Tensor], Callable[..., dg.Tensor]]:
    """Parameters ``[W1, b1, W2, b2, W3, b3]`` (requiring grad) and ``mlp(x)``."""
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        w = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        b = (0.1 * rng.standard_normal(n_out)).astype(np.float32)
        params += [dg.tensor(w, requires_grad=True), dg.tensor(b, requires_grad=True)]
    w1, b1, w2, b2, w3, b3 = params

    def mlp(x: dg.Tensor) -> dg.Tensor:
        h = (x @ w1 + b1).tanh()
        h = (h @ w2 + b2).tanh()
        return h @ w3 + b3

    return params, mlp


def make_rnn_step(seed: int = 1) -> tuple[list[dg.Tensor], Callable[..., dg.Tensor]]:
    """Parameters ``[Wx, Wh, b]`` (requiring grad) and ``step(x, h) -> new h``."""
    rng = np.random.default_rng(seed)
    wx = (rng.standard_normal((RNN_IN, RNN_HIDDEN)) / np.sqrt(RNN_IN)).astype(np.float32)
    wh = (rng.standard_normal((RNN_HIDDEN, RNN_HIDDEN)) / np.sqrt(RNN_HIDDEN)).astype(np.float32)
    b = (0.1 * rng.standard_normal(RNN_HIDDEN)).astype(np.float32)
    params = [dg.tensor(p, requires_grad=True) for p in (wx, wh, b)]
    wx_t, wh_t, b_t = params

    def step(x: dg.Tensor, h: dg.Tensor) -> dg.Tensor:
        return (x @ wx_t + h @ wh_t + b_t).tanh()

    return params, step


def mlp_inputs(seed: int = 2) -> dg.Tensor:
    rng = np.random.default_rng(seed)
    return dg.tensor(rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32))


def rnn_inputs(seed: int = 3) -> tuple[dg.Tensor, dg.Tensor]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, RNN_IN)).astype(np.float32)
    h = np.tanh(rng.standard_normal((1, RNN_HIDDEN))).astype(np.float32)
    return dg.tensor(x), dg.tensor(h)


def repeated(fn: Callable[..., dg.Tensor], *args: dg.Tensor) -> Callable[[], object]:
    """``CALLS`` inference calls of ``fn(*args)`` under no_grad, as one timed unit."""

    def run() -> object:
        with dg.no_grad():
            for _ in range(CALLS):
                out = fn(*args)
        return out

    return run


def training_steps(
    fn: Callable[..., dg.Tensor], params: list[dg.Tensor], x: dg.Tensor
) -> Callable[[], object]:
    """``CALLS`` forward + backward passes of ``fn(x).sum()``, as one timed unit."""

    def run() -> object:
        for _ in range(CALLS):
            for p in params:
                p.grad = None
            fn(x).sum().backward()
        return None

    return run


def run(quick: bool = False) -> list[Result]:
    """Time eager against traced replay for the MLP and the RNN step."""
    repeat = 3 if quick else 20
    per_call = 1e6 / CALLS
    results = []

    mlp_params, mlp = make_mlp()
    x = mlp_inputs()
    traced_mlp = dg.trace(mlp, x)
    t_traced, t_eager = paired_median_seconds(
        repeated(traced_mlp, x), repeated(mlp, x), repeat=repeat
    )
    results.append(check_ratio(
        f"W5 traced MLP {'-'.join(map(str, MLP_SIZES))}, batch {MLP_BATCH} (floor: eager)",
        t_traced * per_call, t_eager * per_call, "us/call", TARGET_RATIO,
    ))

    _, step = make_rnn_step()
    xs, h = rnn_inputs()
    traced_step = dg.trace(step, xs, h)
    t_traced, t_eager = paired_median_seconds(
        repeated(traced_step, xs, h), repeated(step, xs, h), repeat=repeat
    )
    results.append(check_ratio(
        f"W5 traced RNN step {RNN_IN}->{RNN_HIDDEN}, batch 1 (floor: eager)",
        t_traced * per_call, t_eager * per_call, "us/call", TARGET_RATIO,
    ))

    t_traced, t_eager = paired_median_seconds(
        training_steps(traced_mlp, mlp_params, x),
        training_steps(mlp, mlp_params, x),
        repeat=max(3, repeat // 4),
    )
    results.append(check_ratio(
        "W5 traced MLP forward+backward (floor: eager)",
        t_traced * per_call, t_eager * per_call, "us/call", TARGET_TRAINING_RATIO,
    ))
    return results
