"""W2: one SGD step of a small MLP.

A 784-256-10 ReLU MLP with softmax cross-entropy (mean over the batch), batch 64, float32,
on seeded random data. One step is: forward, backward, then ``p -= lr * p.grad`` under
``dg.no_grad()`` and ``p.grad = None`` for every parameter. Here the matrix multiplies
dominate, so the engine should cost little on top of the numpy floor.

The same step runs in PyTorch (where it imports) and in the numpy floor, alternately in the same
process. Floor: the forward, a fused softmax cross-entropy backward (``softmax - one_hot``,
divided by the batch), and two matmuls per layer for the weight and input gradients, in one
function; the update ``p -= lr * g``.

Reported: milliseconds per step. Target (issue 19): dyngraph / numpy floor <= 1.10 (the floor
is the limit for an engine on numpy's BLAS; torch runs on its own BLAS, so it may beat it).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import dyngraph as dg
from benchmarks.harness import Result, check_ratio, scaled, side_by_side_median_seconds

SIZES = (784, 256, 10)
BATCH = 64
LR = 0.1
TARGET_RATIO = 1.10


def make_params(
    sizes: tuple[int, int, int] = SIZES, seed: int = 0, dtype: npt.DTypeLike = np.float32
) -> list[np.ndarray]:
    """``[W1, b1, W2, b2]`` with He-initialised weights and zero biases."""
    n_in, n_hidden, n_out = sizes
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((n_in, n_hidden)) * np.sqrt(2.0 / n_in)
    w2 = rng.standard_normal((n_hidden, n_out)) * np.sqrt(2.0 / n_hidden)
    params = [w1, np.zeros(n_hidden), w2, np.zeros(n_out)]
    return [p.astype(dtype) for p in params]


def make_batch(
    batch: int = BATCH,
    sizes: tuple[int, int, int] = SIZES,
    seed: int = 1,
    dtype: npt.DTypeLike = np.float32,
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs of shape (batch, n_in) and int64 class labels of shape (batch,)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    y = rng.integers(0, sizes[-1], size=batch, dtype=np.int64)
    return x, y


def to_tensors(arrays: list[np.ndarray]) -> list[dg.Tensor]:
    """Parameters as dyngraph leaves (copied, so numpy and dyngraph never share memory)."""
    return [dg.tensor(a.copy(), requires_grad=True) for a in arrays]


def sgd_step(library, params: list, x, y, lr: float = LR) -> float:
    """One SGD step with ``library`` (dyngraph or torch: the same code runs on both, through
    their shared names); updates ``params`` in place and returns the loss."""
    w1, b1, w2, b2 = params
    hidden = (x @ w1 + b1).relu()
    logits = hidden @ w2 + b2
    loss = library.nn.functional.cross_entropy(logits, y)
    loss.backward()
    with library.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return loss.item()


def dyngraph_step(params: list[dg.Tensor], x: dg.Tensor, y: np.ndarray, lr: float = LR) -> float:
    """One SGD step in dyngraph; updates ``params`` in place and returns the loss."""
    return sgd_step(dg, params, x, y, lr)


def numpy_forward_backward(
    params: list[np.ndarray], x: np.ndarray, y: np.ndarray
) -> tuple[float, list[np.ndarray]]:
    """Loss and gradients ``[dW1, db1, dW2, db2]`` in plain numpy, backward written by hand."""
    w1, b1, w2, b2 = params
    n = x.shape[0]
    rows = np.arange(n)

    # forward
    pre = x @ w1 + b1
    hidden = np.maximum(pre, 0)
    logits = hidden @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)  # for a stable softmax
    exp = np.exp(shifted)
    sum_exp = exp.sum(axis=1, keepdims=True)
    log_probs = shifted - np.log(sum_exp)
    loss = -log_probs[rows, y].mean()

    # backward
    d_logits = exp / sum_exp  # d cross-entropy / d logits: softmax - one_hot, / n for the mean
    d_logits[rows, y] -= 1
    d_logits /= n
    d_w2 = hidden.T @ d_logits  # d (h @ W2) / d W2 = h^T @ upstream
    d_b2 = d_logits.sum(axis=0)  # bias broadcast over the batch: sum over rows
    d_hidden = d_logits @ w2.T  # d (h @ W2) / d h = upstream @ W2^T
    d_pre = d_hidden * (pre > 0)  # d relu: 1 where the input was positive
    d_w1 = x.T @ d_pre
    d_b1 = d_pre.sum(axis=0)
    return float(loss), [d_w1, d_b1, d_w2, d_b2]


def numpy_step(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float = LR) -> float:
    """One SGD step in plain numpy; updates ``params`` in place and returns the loss."""
    loss, grads = numpy_forward_backward(params, x, y)
    for p, g in zip(params, grads, strict=True):
        p -= lr * g
    return loss


def torch_step(torch, params: list, x, y, lr: float = LR) -> float:
    """One SGD step in PyTorch; updates ``params`` in place and returns the loss."""
    return sgd_step(torch, params, x, y, lr)


def torch_tensors(torch, initial: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> tuple:
    """Parameters as PyTorch leaves (copied) and the batch as tensors."""
    params = [torch.tensor(a, requires_grad=True) for a in initial]
    return params, torch.from_numpy(x), torch.from_numpy(y)


def run(quick: bool = False) -> list[Result]:
    """Time one training step against the numpy floor and PyTorch."""
    initial = make_params()
    x, y = make_batch()
    dg_params, dg_x = to_tensors(initial), dg.tensor(x)
    np_params = [p.copy() for p in initial]

    def make_torch_step(torch):
        params, x_t, y_t = torch_tensors(torch, initial, x, y)
        return lambda: torch_step(torch, params, x_t, y_t)

    t_dg, t_np, t_torch = side_by_side_median_seconds(
        lambda: dyngraph_step(dg_params, dg_x, y),
        lambda: numpy_step(np_params, x, y),
        make_torch_step,
        repeat=5 if quick else 50,
    )
    name = f"W2 MLP SGD step {'-'.join(map(str, SIZES))}, batch {BATCH}"
    return [check_ratio(name, t_dg * 1e3, t_np * 1e3, "ms/step", TARGET_RATIO,
                        torch=scaled(t_torch, 1e3))]
