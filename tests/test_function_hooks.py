"""FunctionHook, the one observer protocol of Function.apply (function.py, NOTE [observers]).

The contract: an installed hook is told about every op, recorded in a graph or not, and about
every read of tensor data into Python; hooks nest (all are told, the outermost first); leaving
the ``with`` block uninstalls the hook, also when the block raises; a hook cannot be installed
twice. dg.trace, dg.checkpoint and dg.memory.memory_timeline are hooks themselves.
"""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import function


class Log(dg.FunctionHook):
    """Writes down what it is told, into a list it may share with other hooks."""

    def __init__(self, name: str = "log", entries: list | None = None) -> None:
        self.name = name
        self.entries = [] if entries is None else entries

    def forward_postprocess(self, cls, args, options, output):
        self.entries.append((self.name, cls.__name__, output.grad_fn is not None))

    def data_read(self, tensor, how):
        self.entries.append((self.name, "read", how))


def ops_seen(entries: list) -> list[str]:
    return [op for _, op, _ in entries if op != "read"]


@pytest.fixture(autouse=True)
def no_hook_is_left_installed():
    assert function.installed_hooks() == ()
    yield
    assert function.installed_hooks() == ()


# ----------------------------------------------------------------------------- every op


def test_every_op_is_seen_recorded_in_a_graph_or_not():
    w = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = dg.tensor([[1.0, -1.0]])
    with Log() as log:
        h = (x @ w).tanh()  # recorded: w requires grad
        c = x * 2  # not recorded: nothing requires grad
        with dg.no_grad():
            d = (x @ w).exp()  # not recorded: no_grad
    assert log.entries == [
        ("log", "MatMul", True),
        ("log", "Tanh", True),
        ("log", "Mul", False),
        ("log", "MatMul", False),
        ("log", "Exp", False),
    ]
    assert h.grad_fn is not None and c.grad_fn is None and d.grad_fn is None


def test_a_hook_is_given_the_op_its_arguments_options_and_output():
    calls = []

    class Keep(dg.FunctionHook):
        def forward_postprocess(self, cls, args, options, output):
            calls.append((cls, args, options, output))

    x = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    with Keep():
        y = x.sum(dim=0)
    [(cls, args, options, output)] = calls
    assert cls.__name__ == "Sum"
    assert args[0] is x
    assert options["axis"] == 0
    assert output is y


def test_nothing_is_told_outside_the_with_block():
    x = dg.tensor([1.0, 2.0])
    log = Log()
    with log:
        x.exp()
    x.exp()
    bool(x.sum() > 0)
    assert ops_seen(log.entries) == ["Exp"]


def test_a_hook_sees_a_checkpointed_segment_in_forward_and_again_in_backward():
    w = dg.tensor([[1.0, 0.5], [0.5, 1.0]], requires_grad=True)
    x = dg.tensor([[1.0, 2.0]], requires_grad=True)
    with Log() as log:
        y = dg.checkpoint(lambda h: (h @ w).tanh(), x)
        y.sum().backward()
    # forward runs the segment under no_grad (not recorded), then the Checkpoint node; backward
    # runs it again, recorded, to differentiate it
    assert log.entries == [
        ("log", "MatMul", False),
        ("log", "Tanh", False),
        ("log", "Checkpoint", True),
        ("log", "Sum", True),
        ("log", "MatMul", True),
        ("log", "Tanh", True),
    ]
    assert w.grad is not None


# ----------------------------------------------------------------------------- data reads


def test_data_reads_are_seen():
    x = dg.tensor([1.0, -2.0])
    with Log() as log:
        if x.sum() < 0:
            pass
        x[0].item()
        float(x[1])
        x.tolist()
    reads = [how for _, op, how in log.entries if op == "read"]
    assert reads == ["bool()", "item()", "item()", "tolist()"]


# ----------------------------------------------------------------------------- nesting


def test_nested_hooks_are_all_told_the_outermost_first():
    entries: list = []
    x = dg.tensor([1.0, 2.0])
    with Log("outer", entries):
        x.exp()
        with Log("inner", entries):
            y = x.neg()
            y.tolist()
        x.sin()
    assert entries == [
        ("outer", "Exp", False),
        ("outer", "Neg", False),
        ("inner", "Neg", False),
        ("outer", "read", "tolist()"),
        ("inner", "read", "tolist()"),
        ("outer", "Sin", False),
    ]


def test_the_registry_is_a_tuple_outermost_first_and_empty_again_after():
    outer, inner = Log("outer"), Log("inner")
    with outer:
        assert function.installed_hooks() == (outer,)
        with inner:
            assert function.installed_hooks() == (outer, inner)
        assert function.installed_hooks() == (outer,)
    assert function.installed_hooks() == ()


def test_an_exception_inside_the_block_uninstalls_the_hooks():
    outer, inner = Log("outer"), Log("inner")
    with pytest.raises(KeyError), outer, inner:  # nested: inner is entered inside outer
        dg.tensor([1.0]).exp()
        raise KeyError("boom")
    assert function.installed_hooks() == ()
    with outer, inner:  # and both can be installed again
        dg.tensor([1.0]).exp()
    assert ops_seen(outer.entries) == ops_seen(inner.entries) == ["Exp", "Exp"]


def test_hooks_left_in_another_order_remove_only_themselves():
    first, second = Log("first"), Log("second")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert function.installed_hooks() == (second,)
    second.__exit__(None, None, None)


def test_a_hook_installed_twice_is_an_error():
    log = Log()
    with log:
        with pytest.raises(RuntimeError, match="Log is already installed.*second hook object"), log:
            pass
        assert function.installed_hooks() == (log,)  # the refused entry changed nothing
        dg.tensor([1.0]).exp()
    assert log.entries == [("log", "Exp", False)]  # told once per op, as ever


# ----------------------------------------------------------------------------- the engine's hooks


def test_a_user_hook_and_dg_trace_both_see_the_traced_run():
    w = dg.tensor([[1.0, 2.0], [3.0, 4.0]])
    with Log() as log:
        graph = dg.trace(lambda x: (x @ w).relu(), dg.tensor([[1.0, -1.0]]))
    assert [s.op for s in graph.steps] == ["MatMul", "Relu"]
    assert ops_seen(log.entries) == ["MatMul", "Relu"]


def test_a_hook_sees_the_ops_of_a_replay_that_needs_no_grad():
    w = dg.tensor([[1.0, 2.0], [3.0, 4.0]])  # nothing requires grad: replays take the fast path
    graph = dg.trace(lambda x: (x @ w).relu(), dg.tensor([[1.0, -1.0]]))
    with Log() as log:  # ... but not while a hook watches: it must see the ops
        y = graph(dg.tensor([[2.0, 1.0]]))
    assert log.entries == [("log", "MatMul", False), ("log", "Relu", False)]
    np.testing.assert_allclose(y.numpy(), [[5.0, 8.0]])


def test_an_enclosing_trace_and_memory_timeline_both_see_a_replays_ops():
    w = dg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    inner = dg.trace(lambda x: (x @ w).tanh(), dg.tensor([[1.0, -1.0]]))
    timelines = []

    def outer(x):
        timelines.append(dg.memory.memory_timeline(lambda: inner(x).sum()))
        return inner(x).exp()

    graph = dg.trace(outer, dg.tensor([[0.5, 0.5]]))
    # the memory timeline saw the replay's ops (and its own Sum) ...
    assert [(s.phase, s.op) for s in timelines[0] if s.phase == "forward"] == [
        ("forward", "MatMul"),
        ("forward", "Tanh"),
        ("forward", "Sum"),
    ]
    # ... and so did the enclosing trace, which keeps the steps its output depends on
    assert [s.op for s in graph.steps] == ["MatMul", "Tanh", "Exp"]
    x = dg.tensor([[2.0, -1.0]])
    expected = np.exp(np.tanh(x.numpy() @ w.detach().numpy()))
    np.testing.assert_allclose(graph(x).detach().numpy(), expected)


def test_checkpoint_inside_a_user_hook_still_finds_its_parameters():
    w = dg.tensor([[1.0, 0.5], [0.5, 1.0]], requires_grad=True)
    x = dg.tensor([[1.0, 2.0]])
    with Log():
        y = dg.checkpoint(lambda h: (h @ w).tanh(), x)
    y.sum().backward()
    expected = x.numpy().T @ (1 - np.tanh(x.numpy() @ w.detach().numpy()) ** 2)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6)


def test_the_docstring_example_counts_ops_as_a_learner_would():
    class CountOps(dg.FunctionHook):
        def __init__(self):
            self.counts = {}

        def forward_postprocess(self, cls, args, options, output):
            self.counts[cls.__name__] = self.counts.get(cls.__name__, 0) + 1

    x = dg.randn(2, 4)
    W = dg.randn(4, 3, requires_grad=True)
    with CountOps() as counter:
        for _ in range(3):
            (x @ W).tanh().sum()
    assert counter.counts == {"MatMul": 3, "Tanh": 3, "Sum": 3}


def test_a_hook_is_told_about_the_ops_of_its_own_thread_only():
    """Hooks are per thread, like grad mode and listeners (NOTE [modes are per thread]): a hook
    entered in one thread (dg.trace recording there) is not told about another thread's ops,
    and that thread sees no hook installed (issue 39: 5 of 5 runs had leaked before)."""
    import threading

    started, done = threading.Event(), threading.Event()
    seen_there: list = []

    def other_thread():
        started.wait(5)
        seen_there.append(function.installed_hooks())
        for _ in range(50):
            dg.ones(2).exp()  # ops of another thread
        done.set()

    worker = threading.Thread(target=other_thread)
    worker.start()
    with Log() as hook:
        started.set()
        done.wait(5)
        dg.ones(2).neg()
    worker.join()
    assert ops_seen(hook.entries) == ["Neg"]
    assert seen_there == [()]
