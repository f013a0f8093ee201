"""W3: a tanh RNN trained one sequence at a time (backpropagation through time).

The cell is ``h = tanh(x_t @ Wx + h @ Wh + b)`` with input size 32 and hidden size 64, run
over 32 seeded sequences of lengths 5..50 with batch size 1. After each sequence the loss
``(h * h).sum()`` of the final hidden state is backpropagated; gradients accumulate in
Wx, Wh and b across the sequences. The shapes are small, so this mixes real numpy work with
many graph nodes, and the graph has a different shape for every sequence.

The same epoch runs in PyTorch (where it imports) and in the numpy floor, alternately in the
same process. Floor: the forward keeps every hidden state; the backward walks the steps back
computing only ``d_pre = d_h * (1 - h^2)`` and ``d_h = d_pre @ Wh^T`` per step, and the weight
gradients once per sequence from the stacked steps (``dWx += X^T @ D``, ``dWh += H^T @ D``,
``db += D.sum(0)``), three matmuls per sequence instead of two per step.

Reported: microseconds per timestep. Target (issue 19): dyngraph <= 0.6x torch. Also reported:
the same with a recording event subscriber attached (W3E), and with a live GraphView attached
(W3V), as ratios to the bare run. Target: <= 2.0x.
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

N_IN = 32
N_HIDDEN = 64
N_SEQUENCES = 32
MIN_LEN, MAX_LEN = 5, 50
TARGET_TORCH_RATIO = 0.6
TARGET_SUBSCRIBED_RATIO = 2.0


def make_params(
    n_in: int = N_IN, n_hidden: int = N_HIDDEN, seed: int = 0, dtype: npt.DTypeLike = np.float32
) -> list[np.ndarray]:
    """``[Wx, Wh, b]``, weights scaled by 1 / sqrt(fan_in)."""
    rng = np.random.default_rng(seed)
    wx = rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)
    wh = rng.standard_normal((n_hidden, n_hidden)) / np.sqrt(n_hidden)
    b = 0.1 * rng.standard_normal(n_hidden)
    return [p.astype(dtype) for p in (wx, wh, b)]


def make_sequences(
    n_sequences: int = N_SEQUENCES,
    n_in: int = N_IN,
    lengths: tuple[int, int] = (MIN_LEN, MAX_LEN),
    seed: int = 1,
    dtype: npt.DTypeLike = np.float32,
) -> list[list[np.ndarray]]:
    """Sequences of random length; each is a list of (1, n_in) inputs, one per timestep."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(lengths[0], lengths[1] + 1, size=n_sequences)
    sequences = []
    for length in sizes:
        steps = rng.standard_normal((length, 1, n_in)).astype(dtype)
        sequences.append(list(steps))
    return sequences


def to_tensors(sequences: list[list[np.ndarray]]) -> list[list[dg.Tensor]]:
    """The inputs as constant dyngraph tensors (done once, like a data loader would)."""
    return [[dg.tensor(x) for x in steps] for steps in sequences]


def dyngraph_epoch(
    params: list[dg.Tensor], sequences: list[list[dg.Tensor]]
) -> tuple[list[float], list[np.ndarray]]:
    """Run every sequence forward and backward in dyngraph.

    Returns the loss of each sequence and the gradients of ``[Wx, Wh, b]`` accumulated over
    all of them (the gradients are reset first).
    """
    h0 = dg.tensor(np.zeros((1, params[1].shape[0]), dtype=np.float32))
    return epoch_backward(params, sequences, h0)


def epoch_backward(params: list, sequences: list, h0) -> tuple[list[float], list[np.ndarray]]:
    """Every sequence forward from the state ``h0`` and backward, on tensors of dyngraph or
    PyTorch (the same code runs on both). Returns the losses and the summed gradients."""
    wx, wh, b = params
    for p in params:
        p.grad = None
    losses = []
    for steps in sequences:
        h = h0
        for x in steps:
            h = (x @ wx + h @ wh + b).tanh()
        loss = (h * h).sum()
        loss.backward()
        losses.append(loss.item())
    return losses, [p.grad.numpy() for p in params]


def numpy_epoch(
    params: list[np.ndarray], sequences: list[list[np.ndarray]]
) -> tuple[list[float], list[np.ndarray]]:
    """The same in plain numpy, with backpropagation through time written out by hand.

    The weights are the same at every step, so their gradients are sums over the steps; they
    are accumulated once per sequence, from all its steps stacked, not once per step.
    """
    wx, wh, b = params
    grads = [np.zeros_like(p) for p in params]
    d_wx, d_wh, d_b = grads
    h0 = np.zeros((1, wh.shape[0]), dtype=wh.dtype)
    losses = []
    for steps in sequences:
        # forward, keeping every hidden state: hs[t] is the state before step t
        hs = [h0]
        for x in steps:
            hs.append(np.tanh(x @ wx + hs[-1] @ wh + b))
        h = hs[-1]
        losses.append(float((h * h).sum()))

        # backward through time: only the gradient w.r.t. each pre-activation, step by step
        d_pres = [None] * len(steps)
        d_h = 2 * h  # d sum(h * h) / d h
        for t in reversed(range(len(steps))):
            d_pres[t] = d_h * (1 - hs[t + 1] * hs[t + 1])  # d tanh: 1 - y^2
            d_h = d_pres[t] @ wh.T  # d (h @ Wh) / d h = upstream @ Wh^T

        # weight gradients, summed over the steps: one matmul each for the whole sequence
        inputs = np.concatenate(steps)  # (T, n_in): row t is x_t
        states = np.concatenate(hs[:-1])  # (T, n_hidden): row t is the state before step t
        d_pre = np.concatenate(d_pres)  # (T, n_hidden)
        d_wx += inputs.T @ d_pre  # d (x @ Wx) / d Wx = x^T @ upstream, summed over t
        d_wh += states.T @ d_pre  # d (h @ Wh) / d Wh = h^T @ upstream, summed over t
        d_b += d_pre.sum(axis=0)  # the bias is added at every step (and every batch row)
    return losses, grads


def torch_epoch(params: list, sequences: list) -> tuple[list[float], list[np.ndarray]]:
    """The same in PyTorch (``params`` are torch leaves, the sequences torch tensors: see
    torch_inputs)."""
    wh = params[1]
    return epoch_backward(params, sequences, wh.new_zeros((1, wh.shape[0])))


def torch_inputs(
    torch, params: list[np.ndarray], sequences: list[list[np.ndarray]]
) -> tuple[list, list]:
    """Parameters as PyTorch leaves (copied) and the sequences as tensors."""
    torch_params = [torch.tensor(p, requires_grad=True) for p in params]
    torch_sequences = [[torch.from_numpy(np.ascontiguousarray(x)) for x in steps]
                       for steps in sequences]
    return torch_params, torch_sequences


def _setup() -> tuple[list[dg.Tensor], list[list[dg.Tensor]], list[np.ndarray], list]:
    params = make_params()
    sequences = make_sequences()
    dg_params = [dg.tensor(p.copy(), requires_grad=True) for p in params]
    return dg_params, to_tensors(sequences), params, sequences


def run(quick: bool = False) -> list[Result]:
    """Time an epoch over all sequences against the numpy floor and PyTorch."""
    dg_params, dg_sequences, np_params, np_sequences = _setup()
    n_steps = sum(len(steps) for steps in np_sequences)

    def make_torch_epoch(torch):
        params, sequences = torch_inputs(torch, np_params, np_sequences)
        return lambda: torch_epoch(params, sequences)

    t_dg, t_np, t_torch = side_by_side_median_seconds(
        lambda: dyngraph_epoch(dg_params, dg_sequences),
        lambda: numpy_epoch(np_params, np_sequences),
        make_torch_epoch,
        repeat=3 if quick else 20,
    )
    us_per_step = 1e6 / n_steps
    return [check_torch_ratio(
        f"W3 RNN BPTT {N_IN}->{N_HIDDEN}, {N_SEQUENCES} seqs, batch 1", t_dg * us_per_step,
        t_np * us_per_step, scaled(t_torch, us_per_step), "us/step", TARGET_TORCH_RATIO,
    )]


def run_subscribed(quick: bool = False) -> list[Result]:
    """Time the epoch with a recording subscriber attached against the bare epoch."""
    dg_params, dg_sequences, _, np_sequences = _setup()
    n_steps = sum(len(steps) for steps in np_sequences)
    repeat = 3 if quick else 20

    def bare() -> object:
        return dyngraph_epoch(dg_params, dg_sequences)

    return attached_ratio(
        "W3 + recording subscriber (floor: bare)", with_recording_subscriber(bare), bare,
        repeat, 1e6 / n_steps, "us/step", TARGET_SUBSCRIBED_RATIO,
    )


def run_with_view(quick: bool = False) -> list[Result]:
    """Time the epoch with a live GraphView attached against the bare epoch: the widget's
    kernel-side cost on a lesson-sized model (see harness.with_live_view for what is timed)."""
    dg_params, dg_sequences, _, np_sequences = _setup()
    n_steps = sum(len(steps) for steps in np_sequences)
    repeat = 3 if quick else 20

    def bare() -> object:
        return dyngraph_epoch(dg_params, dg_sequences)

    viewed = with_live_view(bare, calls=repeat + 3)  # paired_median_seconds warms up 3 times
    return attached_ratio(
        "W3 + live GraphView (floor: bare)", viewed, bare,
        repeat, 1e6 / n_steps, "us/step", TARGET_SUBSCRIBED_RATIO,
    )
