"""Smoke tests for the benchmark suite in ``benchmarks/``.

Benchmarks measure; these tests only check. They run every workload at a tiny scale and make
sure each dyngraph workload computes the same numbers as its hand-written numpy floor (so the
floor is an honest floor: same math, not less work). The numpy floors are also checked against
central finite differences in float64, so a wrong hand-written backward cannot hide behind a
matching wrong engine. No timing is asserted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

# The benchmarks package lives at the repository root, next to tests/.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dyngraph as dg  # noqa: E402
from benchmarks import harness, run, w1_per_op, w2_mlp_step, w3_rnn, w4_graph_build  # noqa: E402

FLOAT32 = {"rtol": 1e-4, "atol": 1e-6}


def finite_difference_grad(
    loss: Callable[[], float], param: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """d loss / d param by central differences, perturbing ``param`` in place (float64)."""
    grad = np.zeros_like(param)
    for index in np.ndindex(param.shape):
        original = param[index]
        param[index] = original + eps
        up = loss()
        param[index] = original - eps
        down = loss()
        param[index] = original
        grad[index] = (up - down) / (2 * eps)
    return grad


# W1: per-op chain


def test_w1_chain_matches_numpy_floor() -> None:
    x, b, w = w1_per_op.make_inputs()
    dg_value, dg_grad = w1_per_op.dyngraph_chain(x, b, w, n_ops=30)
    np_value, np_grad = w1_per_op.numpy_chain(x, b, w, n_ops=30)
    np.testing.assert_allclose(dg_value, np_value, **FLOAT32)
    np.testing.assert_allclose(dg_grad, np_grad, **FLOAT32)


def test_w1_floor_gradient_matches_finite_differences() -> None:
    x, b, w = w1_per_op.make_inputs(dtype=np.float64)
    _, grad = w1_per_op.numpy_chain(x, b, w, n_ops=12)
    expected = finite_difference_grad(lambda: w1_per_op.numpy_chain(x, b, w, n_ops=12)[0], x)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-9)


# W2: MLP step

TINY_MLP = (20, 16, 5)


def test_w2_steps_match_numpy_floor() -> None:
    initial = w2_mlp_step.make_params(TINY_MLP)
    x, y = w2_mlp_step.make_batch(batch=8, sizes=TINY_MLP)
    dg_params = w2_mlp_step.to_tensors(initial)
    np_params = [p.copy() for p in initial]
    dg_x = dg.tensor(x)
    for _ in range(2):  # a second step checks that ``p.grad = None`` reset the gradients
        dg_loss = w2_mlp_step.dyngraph_step(dg_params, dg_x, y)
        np_loss = w2_mlp_step.numpy_step(np_params, x, y)
        np.testing.assert_allclose(dg_loss, np_loss, **FLOAT32)
        for dg_p, np_p in zip(dg_params, np_params, strict=True):
            assert dg_p.grad is None
            np.testing.assert_allclose(dg_p.detach().numpy(), np_p, **FLOAT32)
    assert not np.allclose(np_params[0], initial[0])  # the step did move the weights


def test_w2_floor_gradients_match_finite_differences() -> None:
    sizes = (6, 5, 3)
    params = w2_mlp_step.make_params(sizes, dtype=np.float64)
    params[1] += 0.1  # non-zero biases, so their gradients are exercised too
    x, y = w2_mlp_step.make_batch(batch=4, sizes=sizes, dtype=np.float64)
    _, grads = w2_mlp_step.numpy_forward_backward(params, x, y)
    for param, grad in zip(params, grads, strict=True):
        expected = finite_difference_grad(
            lambda: w2_mlp_step.numpy_forward_backward(params, x, y)[0], param
        )
        np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-8)


# W3: RNN with backpropagation through time


def tiny_rnn(dtype: npt.DTypeLike = np.float32) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    params = w3_rnn.make_params(n_in=4, n_hidden=6, dtype=dtype)
    sequences = w3_rnn.make_sequences(n_sequences=3, n_in=4, lengths=(2, 5), dtype=dtype)
    return params, sequences


def test_w3_epoch_matches_numpy_floor() -> None:
    params, sequences = tiny_rnn()
    dg_params = [dg.tensor(p.copy(), requires_grad=True) for p in params]
    dg_losses, dg_grads = w3_rnn.dyngraph_epoch(dg_params, w3_rnn.to_tensors(sequences))
    np_losses, np_grads = w3_rnn.numpy_epoch(params, sequences)
    np.testing.assert_allclose(dg_losses, np_losses, **FLOAT32)
    for dg_grad, np_grad in zip(dg_grads, np_grads, strict=True):
        np.testing.assert_allclose(dg_grad, np_grad, **FLOAT32)


def test_w3_floor_gradients_match_finite_differences() -> None:
    params, sequences = tiny_rnn(dtype=np.float64)
    _, grads = w3_rnn.numpy_epoch(params, sequences)

    def total_loss() -> float:  # gradients accumulate over sequences: d sum(losses)
        return sum(w3_rnn.numpy_epoch(params, sequences)[0])

    for param, grad in zip(params, grads, strict=True):
        expected = finite_difference_grad(total_loss, param)
        np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-8)


# W4: graph building


def test_w4_chain_matches_numpy_floor_and_measures() -> None:
    x, w, b = w4_graph_build.make_tensors()
    x_np, w_np, b_np = w4_graph_build.make_inputs()
    h = w4_graph_build.dyngraph_chain(x, w, b, 50)
    intermediates = w4_graph_build.numpy_chain(x_np, w_np, b_np, 50)
    assert len(intermediates) == 50
    np.testing.assert_allclose(h.detach().numpy(), intermediates[-1], **FLOAT32)

    assert (
        w4_graph_build.traced_bytes_alive(lambda: w4_graph_build.numpy_chain(x_np, w_np, b_np, 50))
        > 0
    )
    freed, left, note = w4_graph_build.freed_by_refcount(200)  # measured, not asserted
    assert isinstance(freed, bool) and isinstance(left, int) and isinstance(note, str)


# Recording subscribers (W1 and W3 again)


def test_recording_subscriber_sees_events_and_changes_nothing() -> None:
    x, b, w = w1_per_op.make_inputs()
    events: list[object] = []
    with dg.events.subscribe(events.append):
        value, grad = w1_per_op.dyngraph_chain(x, b, w, n_ops=9)
    assert events, "a recording subscriber should see the chain's events"
    np_value, np_grad = w1_per_op.numpy_chain(x, b, w, n_ops=9)
    np.testing.assert_allclose(value, np_value, **FLOAT32)
    np.testing.assert_allclose(grad, np_grad, **FLOAT32)

    params, sequences = tiny_rnn()
    dg_params = [dg.tensor(p.copy(), requires_grad=True) for p in params]
    recorded = harness.with_recording_subscriber(
        lambda: w3_rnn.dyngraph_epoch(dg_params, w3_rnn.to_tensors(sequences))
    )
    losses, grads = recorded()
    np_losses, np_grads = w3_rnn.numpy_epoch(params, sequences)
    np.testing.assert_allclose(losses, np_losses, **FLOAT32)
    for dg_grad, np_grad in zip(grads, np_grads, strict=True):
        np.testing.assert_allclose(dg_grad, np_grad, **FLOAT32)


# Harness and runner


def test_harness_times_and_formats() -> None:
    assert harness.median_seconds(lambda: sum(range(100)), repeat=3, warmup=1) >= 0
    a, b = harness.paired_median_seconds(lambda: None, lambda: None, repeat=3, warmup=1)
    assert a >= 0 and b >= 0
    passed = harness.check_value("fast", 1.0, 0.5, "us/op", 3.0)
    missed = harness.check_ratio("slow", 2.0, 1.0, "ms/step", 1.15)
    assert passed.passed and passed.ratio == 2.0
    assert not missed.passed
    table = harness.format_table([passed, missed])
    assert "MET" in table and "MISS" in table and "2.00x" in table


def test_runner_selects_workloads() -> None:
    assert run.selected_workloads(None) == list(run.WORKLOADS)
    assert run.selected_workloads(["w3e,W1"]) == ["W1", "W3E"]
    with pytest.raises(ValueError):
        run.selected_workloads(["W9"])


def test_runner_quick_runs_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for prefix in ("W1 per-op", "W1 + recording", "W2 MLP", "W3 RNN", "W3 + recording", "W4"):
        assert prefix in out
