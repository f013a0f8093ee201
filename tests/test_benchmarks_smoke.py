"""Smoke tests for the benchmark suite in ``benchmarks/``.

Benchmarks measure; these tests only check. They run every workload at a tiny scale and make
sure each dyngraph workload computes the same numbers as its hand-written numpy floor (so the
floor is an honest floor: same math, not less work) and as its PyTorch version (so torch is
timed on the same work; skipped where torch is not importable). The numpy floors are also
checked against central finite differences in float64, so a wrong hand-written backward cannot
hide behind a matching wrong engine. The harness's timing is checked on a fake clock; no real
timing is asserted.
"""

from __future__ import annotations

import re
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


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="PyTorch is optional; its side of W1-W4 needs it")


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


# W6: PyTorch code watched


def test_w6_watched_programs_compute_what_bare_torch_does(torch) -> None:
    from benchmarks import w6_torch_watch as w6

    x, w, b = w6.chain_inputs(torch)
    bare_loss = w6.torch_chain(x, w, b, n_ops=31)
    bare_grads = [w.grad.clone(), b.grad.clone()]
    heard: list = []
    watched = w6.watching(lambda: w6.torch_chain(x, w, b, n_ops=31), lambda fn: fn)
    handle = dg.events.subscribe(heard.append)  # what with_recording_subscriber does
    try:
        assert watched() == bare_loss
    finally:
        handle.remove()
    assert all(torch.equal(g, ref) for g, ref in zip((w.grad, b.grad), bare_grads))
    kinds = [type(event).__name__ for event in heard]
    assert kinds.count("GradComputed") == 31 + 2  # every node and both leaves
    assert kinds[-1] == "BackwardFinished"


def test_w6_floor_hooks_every_node_once_and_emits_nothing(torch) -> None:
    from benchmarks import w6_torch_watch as w6

    x, w, b = w6.chain_inputs(torch)
    bare_loss = w6.torch_chain(x, w, b, n_ops=7)
    bare_grads = [w.grad.clone(), b.grad.clone()]
    called: list = []
    heard: list = []
    handle = dg.events.subscribe(heard.append)
    try:
        floored = w6.with_prehooks_only(lambda: w6.torch_chain(x, w, b, n_ops=7),
                                        prehook=lambda grads: called.append(grads[0].shape))
        assert floored() == bare_loss
    finally:
        handle.remove()
    assert all(torch.equal(g, ref) for g, ref in zip((w.grad, b.grad), bare_grads))
    # (h * w + b).tanh() twice, then sum: seven nodes, seven prehook calls, in backward order
    assert called == [torch.Size([])] + [torch.Size([16])] * 6
    assert heard == []  # no dyngraph.torch: nothing is emitted


def test_w6_least_events_are_the_watchers_own_for_the_ops(torch) -> None:
    """with_least_events, the bound W6 measures against, makes the same events as the watcher
    for the chain's ops: a node_created per op with the same op, shape and preview, and in
    backward the same gradients and edge contributions (it leaves the leaves' own out)."""
    from benchmarks import w6_torch_watch as w6

    x, w, b = w6.chain_inputs(torch)
    least = w6.with_least_events(lambda: w6.torch_chain(x, w, b, n_ops=7))
    assert least() == w6.torch_chain(x, w, b, n_ops=7)
    heard: list = []
    with dg.events.subscribe(heard.append), dg.record():
        w6.torch_chain(x, w, b, n_ops=7)

    def ops(events: list, kind: str, leaves: set) -> list:
        return [(e.op, e.shape, e.preview) for e in events
                if e.kind == kind and e.op not in leaves]

    leaves = {"leaf", "parameter", "constant"}
    assert ops(least.received, "node_created", leaves) == ops(heard, "node_created", leaves)
    grads = [e.preview for e in least.received if e.kind == "grad_computed"]
    watched_ids = {e.id for e in heard if e.kind == "node_created" and e.op not in leaves}
    assert grads == [e.preview for e in heard if e.kind == "grad_computed"
                     and e.id in watched_ids]
    edges = [e.preview for e in least.received if e.kind == "edge_grad" and e.input]
    assert len(edges) == 6 and edges == [e.preview for e in heard if e.kind == "edge_grad"
                                         and e.input in watched_ids]


# W7: real models watched


def test_w7_watched_models_compute_what_bare_torch_does(torch) -> None:
    """A watched pass (and a watched training loop) of the real models gives bare torch's loss
    and gradients, and the watcher heard every node: W7 times the same work both ways."""
    import copy

    from benchmarks import real_models
    from benchmarks import w7_real_models as w7

    model, inputs, loss_fn = real_models.treenet_case()
    bare_loss = w7.forward_backward(model, inputs, loss_fn)()
    bare_grads = [p.grad.clone() for p in model.parameters()]
    heard: list = []
    watched = w7.watching(w7.forward_backward(model, inputs, loss_fn), lambda fn: fn)
    with dg.events.subscribe(heard.append):  # what with_recording_subscriber does
        assert watched() == bare_loss
    assert all(torch.equal(p.grad, ref) for p, ref in zip(model.parameters(), bare_grads))
    kinds = [type(event).__name__ for event in heard]
    assert kinds.count("NodeCreated") > 10 and kinds[-1] == "BackwardFinished"

    model, inputs, loss_fn = real_models.gpt_case(n_layer=1)
    twin = copy.deepcopy(model)
    bare = w7.training_loop(model, inputs, loss_fn, steps=2)
    watched = w7.watching(w7.training_loop(twin, inputs, loss_fn, steps=2), lambda fn: fn)
    with dg.events.subscribe(heard.append):
        assert watched() == bare()  # AdamW moved both alike
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), twin.parameters()))
    assert all(p.grad is None for p in twin.parameters())  # zero_grad ran, watched too


def test_w7_without_torch_has_no_rows(monkeypatch) -> None:
    from benchmarks import w7_real_models as w7

    monkeypatch.setattr(w7, "import_torch", lambda: None)
    assert w7.run(quick=True) == []


@pytest.mark.slow  # the three models and a training loop, watched and bare: several seconds
def test_w7_quick_gives_a_row_per_model_and_way_of_watching(torch) -> None:
    from benchmarks import w7_real_models as w7

    threads_before = torch.get_num_threads()
    rows = w7.run(quick=True)
    assert torch.get_num_threads() == threads_before  # one thread inside, restored
    try:
        from dyngraph.jupyter import GraphView  # noqa: F401
        ways = (" + recording (floor: bare torch)", " + live GraphView (floor: bare torch)")
    except ImportError:  # no jupyter extra: no view rows, as in W6
        ways = (" + recording (floor: bare torch)",)
    passes = [f"W7 {title} forward+backward{way}" for title in w7.MODELS.values() for way in ways]
    training = f"W7 nanoGPT 4 blocks, {w7.QUICK_TRAINING_STEPS} training steps (AdamW)"
    expected = passes + [f"{training}{way}" for way in ways[1:]]
    expected.append(f"{training}, mode + a prehook per node only (floor: bare torch)")
    assert [row.name for row in rows] == expected
    for row in rows:
        assert row.value > 0 and row.floor is not None and row.floor > 0 and row.torch is None
        assert row.unit == ("ms/step" if "training" in row.name else "ms/pass")
        if "prehook" in row.name:
            assert row.target == "-" and row.passed is None and row.note
        else:
            limit = w7.TARGET_TRAINING if "training" in row.name else w7.TARGET_RATIO
            assert row.target == f"<= {limit:g}x"
            assert row.passed == (row.value / row.floor <= limit)  # a MISS is reported
    table = harness.format_table(rows)
    assert len(table.splitlines()) == len(rows) + 2
    assert re.search(r"<= 2\.5x +(MET|MISS)", table)


# W4 growth without torch in the process


def test_w4_growth_without_torch_is_measured_in_a_fresh_python() -> None:
    measured = w4_graph_build.growth_without_torch((500, 1000), quick=True)
    assert measured["torch_imported"] is False
    assert 0 < measured["tracked"] < 100_000  # torch alone would add about 145 000
    assert set(measured["growth"]) == {"1000"}
    assert set(measured["growth"]["1000"]) == {"dyngraph", "floor"}
    assert all(value > 0 for value in measured["growth"]["1000"].values())
    small, one = measured["us_per_node"]["1000"]
    assert small > 0 and one > 0


# W1: per-op chain


def test_w1_chain_matches_numpy_floor() -> None:
    x, b, w = w1_per_op.make_inputs()
    dg_value, dg_grad = w1_per_op.dyngraph_chain(x, b, w, n_ops=30)
    np_value, np_grad = w1_per_op.numpy_chain(x, b, w, n_ops=30)
    np.testing.assert_allclose(dg_value, np_value, **FLOAT32)
    np.testing.assert_allclose(dg_grad, np_grad, **FLOAT32)


def test_w1_torch_chain_matches_numpy_floor(torch) -> None:
    x, b, w = w1_per_op.make_inputs()
    torch_value, torch_grad = w1_per_op.torch_chain(torch, x, b, w, n_ops=30)
    np_value, np_grad = w1_per_op.numpy_chain(x, b, w, n_ops=30)
    np.testing.assert_allclose(torch_value, np_value, **FLOAT32)
    np.testing.assert_allclose(torch_grad, np_grad, **FLOAT32)


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


def test_w2_torch_steps_match_numpy_floor(torch) -> None:
    initial = w2_mlp_step.make_params(TINY_MLP)
    x, y = w2_mlp_step.make_batch(batch=8, sizes=TINY_MLP)
    torch_params, x_t, y_t = w2_mlp_step.torch_tensors(torch, initial, x, y)
    np_params = [p.copy() for p in initial]
    for _ in range(2):
        torch_loss = w2_mlp_step.torch_step(torch, torch_params, x_t, y_t)
        np_loss = w2_mlp_step.numpy_step(np_params, x, y)
        np.testing.assert_allclose(torch_loss, np_loss, **FLOAT32)
        for torch_p, np_p in zip(torch_params, np_params, strict=True):
            assert torch_p.grad is None
            np.testing.assert_allclose(torch_p.detach().numpy(), np_p, **FLOAT32)
    assert not np.allclose(np_params[0], initial[0])


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


def test_w3_torch_epoch_matches_numpy_floor(torch) -> None:
    params, sequences = tiny_rnn()
    torch_params, torch_sequences = w3_rnn.torch_inputs(torch, params, sequences)
    for _ in range(2):  # a second epoch checks that the gradients were reset, not accumulated
        torch_losses, torch_grads = w3_rnn.torch_epoch(torch_params, torch_sequences)
    np_losses, np_grads = w3_rnn.numpy_epoch(params, sequences)
    np.testing.assert_allclose(torch_losses, np_losses, **FLOAT32)
    for torch_grad, np_grad in zip(torch_grads, np_grads, strict=True):
        np.testing.assert_allclose(torch_grad, np_grad, **FLOAT32)


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

    # 50 intermediates of 8 float32 each hold at least 50 * 32 bytes of data
    numpy_bytes = w4_graph_build.traced_bytes_alive(
        lambda: w4_graph_build.numpy_chain(x_np, w_np, b_np, 50)
    )
    assert numpy_bytes >= 50 * 8 * 4
    freed, left, note = w4_graph_build.freed_by_refcount(200)
    assert freed, f"a dyngraph graph should be freed by reference counting alone: {note}"


def test_w4_torch_chain_matches_numpy_floor_and_is_weighed(torch) -> None:
    x, w, b = w4_graph_build.torch_tensors(torch)
    x_np, w_np, b_np = w4_graph_build.make_inputs()
    h = w4_graph_build.torch_chain(x, w, b, 50)
    np.testing.assert_allclose(
        h.detach().numpy(), w4_graph_build.numpy_chain(x_np, w_np, b_np, 50)[-1], **FLOAT32
    )
    if w4_graph_build.c_heap_bytes() is None:
        pytest.skip("torch's C heap is read through glibc's mallinfo2, not available here")
    # torch keeps an autograd node per op in C++: invisible to tracemalloc, seen in the C heap
    graph_bytes = w4_graph_build.torch_bytes_alive(
        lambda: w4_graph_build.torch_chain(x, w, b, 1000)
    )
    assert graph_bytes > 1000 * 64
    freed, left = w4_graph_build.torch_freed_by_refcount(torch, 1000)
    assert freed, f"{left} bytes left"


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


class FakeClock:
    """A stand-in for ``time.perf_counter``: time moves only when a fake workload says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def workload(self, durations: list[float], calls: list[str], name: str):
        """A function that takes the next of ``durations`` seconds and logs its call."""
        remaining = iter(durations)

        def fn() -> None:
            calls.append(name)
            self.now += next(remaining)

        return fn


def test_interleaved_median_is_the_median_of_each_workload_timed_in_rotating_turn(
    monkeypatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(harness, "clock", clock)
    calls: list[str] = []
    # one warm-up call each (not counted: 100 s), then three timed calls each
    a = clock.workload([100.0, 3.0, 1.0, 2.0], calls, "a")
    b = clock.workload([100.0, 10.0, 50.0, 20.0], calls, "b")
    c = clock.workload([100.0, 0.5, 0.5, 9.0], calls, "c")
    assert harness.interleaved_median_seconds([a, b, c], repeat=3, warmup=1) == [2.0, 20.0, 0.5]
    # warm-up in order, then in turn, the order rotating each round: each follows each other
    assert calls == ["a", "b", "c"] + ["a", "b", "c"] + ["b", "c", "a"] + ["c", "a", "b"]

    calls.clear()
    d = clock.workload([7.0, 4.0, 6.0, 5.0, 100.0], calls, "d")
    assert harness.median_seconds(d, repeat=4, warmup=1) == 5.5  # (5 + 6) / 2, not the 7


def test_time_once_stops_the_clock_before_the_result_is_freed(monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(harness, "clock", clock)

    class ExpensiveToFree:
        def __del__(self) -> None:
            clock.now += 60.0

    def build() -> ExpensiveToFree:
        clock.now += 2.0
        return ExpensiveToFree()

    assert harness.time_once(build) == 2.0
    assert clock.now == 62.0  # the teardown did happen, after the clock stopped


def test_the_clock_is_the_process_cpu_time_unless_asked_for_wall_time() -> None:
    assert harness.clock is harness.CLOCKS["cpu"] is harness.time.process_time
    with harness.using_clock("wall"):
        assert harness.clock is harness.time.perf_counter
    assert harness.clock is harness.time.process_time


def test_side_by_side_without_torch_times_two_and_says_so(monkeypatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(harness, "clock", clock)
    monkeypatch.setattr(harness, "import_torch", lambda: None)
    calls: list[str] = []
    dyngraph = clock.workload([1.0] * 4, calls, "dyngraph")
    floor = clock.workload([0.25] * 4, calls, "floor")
    t_dg, t_floor, t_torch = harness.side_by_side_median_seconds(
        dyngraph, floor, lambda torch: pytest.fail("no torch to make a function of"),
        repeat=3, warmup=1,
    )
    assert (t_dg, t_floor, t_torch) == (1.0, 0.25, None)
    result = harness.check_torch_ratio("W1", 1.0, 0.25, t_torch, "us/op", 0.6)
    assert result.passed is None and result.note == harness.NO_TORCH
    assert result.ratio == 4.0 and result.torch_ratio is None
    row = harness.format_table([result]).splitlines()[-1]
    assert "n/a" in row and "4.00x" in row and harness.NO_TORCH in row


def test_results_judge_their_targets_and_the_table_shows_both_ratios() -> None:
    met = harness.check_torch_ratio("fast", 3.0, 1.0, 6.0, "us/op", 0.6)
    missed = harness.check_torch_ratio("slow", 6.0, 1.0, 5.0, "us/op", 0.6)
    over_floor = harness.check_ratio("step", 1.2, 1.0, "ms/step", 1.1, torch=0.6)
    absolute = harness.check_value("memory", 390.0, 170.0, "B/node", 400.0, torch=640.0)
    assert met.passed and met.ratio == 3.0 and met.torch_ratio == 0.5
    assert not missed.passed and missed.torch_ratio == 1.2
    assert not over_floor.passed and over_floor.torch_ratio == 2.0
    assert absolute.passed
    lines = harness.format_table([met, missed, over_floor, absolute]).splitlines()
    assert lines[0].split()[:7] == ["workload", "dyngraph", "floor", "torch", "unit", "dg/floor",
                                    "dg/torch"]
    assert lines[2].split()[-1] == "MET" and "0.50x" in lines[2] and "3.00x" in lines[2]
    assert lines[3].split()[-1] == "MISS" and "1.20x" in lines[3]
    assert lines[4].split()[-1] == "MISS" and "2.00x" in lines[4]


def test_blas_threads_sets_both_libraries_and_restores_them(torch) -> None:
    if harness.numpy_blas_threads() is None:
        pytest.skip("numpy's BLAS is not the OpenBLAS bundled in numpy's wheels: not settable")
    numpy_before, torch_before = harness.numpy_blas_threads(), torch.get_num_threads()
    wanted = 2 if numpy_before == 1 else 1
    with harness.blas_threads(wanted) as line:
        assert harness.numpy_blas_threads() == wanted == torch.get_num_threads()
        assert line == f"BLAS threads: numpy {wanted}, torch {wanted}"
        with harness.torch_threads_like_numpy(torch) as threads:  # a workload run on its own
            assert threads == wanted == torch.get_num_threads()
    assert harness.numpy_blas_threads() == numpy_before
    assert torch.get_num_threads() == torch_before


def test_runner_selects_workloads() -> None:
    assert run.selected_workloads(None) == list(run.WORKLOADS)
    assert run.selected_workloads(["w3e,W1"]) == ["W1", "W3E"]
    with pytest.raises(ValueError):
        run.selected_workloads(["W9"])


@pytest.mark.slow  # every workload, quick: several seconds (not in make quick)
def test_runner_quick_runs_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert run.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "BLAS threads: numpy" in out.splitlines()[0] and "timing CPU time" in out
    for prefix in ("W1 per-op", "W1 + recording", "W2 MLP", "W3 RNN", "W3 + recording", "W4"):
        assert prefix in out
    if harness.import_torch() is not None:  # torch's rows, and W4's growth without it
        for prefix in ("W6 torch chain", "W7 ResNet-18", "W7 nanoGPT 4 blocks, 3 training steps",
                       "W4 growth, n=1e4 / 10 x 1e3, no torch in the process"):
            assert prefix in out
    rows = [line for line in out.splitlines() if line.startswith(("W1 per-op", "W2", "W3 RNN"))]
    assert len(rows) == 3
    assert all(re.search(r" (MET|MISS|n/a)( |$)", line) for line in rows)
