"""Modes and listeners are per thread (issue 28, item 5), as PyTorch's grad mode is: a no_grad
block, anomaly mode, a scope, op timing or a checkpoint's recomputation in one thread changes
nothing in another; a recording, a view or a subscriber hears only the thread that opened it.

The interleavings that used to break are forced with threading.Event (no sleeps): the other
thread is held inside its block while this one works. Where PyTorch has the same rule, the same
program runs on torch too and must agree.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import warnings

import numpy as np
import pytest
from conftest import import_torch

import dyngraph as dg
from dyngraph.spine import thread_state

WAIT = 30.0  # seconds any wait may take before the test gives up (a hang is a failure)


def run_in_threads(*targets):
    """Run each target in a thread of its own; re-raise the first exception one of them raised
    (with its traceback), and fail if one is still running after WAIT."""
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                errors.append(exc)
        return run

    threads = [threading.Thread(target=guarded(fn)) for fn in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "a thread of the test is stuck"
    if errors:
        raise errors[0]


def waited(event: threading.Event) -> None:
    assert event.wait(WAIT), "the other thread never got there"


@pytest.fixture
def switch_often():
    """Make the interpreter switch threads every few bytecodes, so that threads interleave
    inside ops, backward passes and subscriptions rather than between them."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


# ----------------------------------------------------------------------------- grad mode


def _graph_while_another_thread_is_in_no_grad(lib):
    """x.grad of loss = sum(2x) + 5 sum(x^2), the graph built while another thread sits inside
    ``no_grad``; also what each thread saw of grad mode."""
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        with lib.no_grad():
            seen["other, inside no_grad"] = lib.is_grad_enabled()
            inside.set()
            waited(done)

    def this():
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        waited(inside)
        seen["this, meanwhile"] = lib.is_grad_enabled()
        loss = (x * 2).sum() + (x * x).sum() * 5
        done.set()
        loss.backward()
        seen["grad"] = x.grad.numpy().tolist()

    run_in_threads(other, this)
    return seen


def test_no_grad_in_another_thread_does_not_cut_this_threads_graph():
    seen = _graph_while_another_thread_is_in_no_grad(dg)
    assert seen["other, inside no_grad"] is False
    assert seen["this, meanwhile"] is True
    assert seen["grad"] == [12.0, 22.0, 32.0]  # 2 + 10 x: both branches
    torch = import_torch()
    assert _graph_while_another_thread_is_in_no_grad(torch) == seen


def _grad_mode_of_a_new_thread(lib, enter):
    seen = {}

    def new_thread():
        seen["enabled"] = lib.is_grad_enabled()
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        (x * x).sum().backward()
        seen["grad"] = x.grad.numpy().tolist()

    with enter():
        seen["here"] = lib.is_grad_enabled()
        run_in_threads(new_thread)
        seen["here, after"] = lib.is_grad_enabled()
    return seen


@pytest.mark.parametrize("block", ["no_grad", "set_grad_enabled(False)"])
def test_a_new_thread_starts_with_grad_enabled_whatever_its_parent_is_in(block):
    def enter(lib):
        return lib.no_grad if block == "no_grad" else (lambda: lib.set_grad_enabled(False))

    seen = _grad_mode_of_a_new_thread(dg, enter(dg))
    assert seen == {"here": False, "enabled": True, "grad": [2.0, -4.0], "here, after": False}
    assert dg.is_grad_enabled()
    torch = import_torch()
    assert _grad_mode_of_a_new_thread(torch, enter(torch)) == seen


def test_grad_mode_decorators_switch_only_the_calling_thread():
    inside, done = threading.Event(), threading.Event()
    seen = {}

    @dg.no_grad()
    def hold():
        seen["decorated"] = dg.is_grad_enabled()
        inside.set()
        waited(done)

    def other():
        hold()
        dg.set_grad_enabled(False)  # called, not entered: switches this thread for good
        seen["other, after"] = dg.is_grad_enabled()

    def this():
        waited(inside)
        seen["this"] = dg.is_grad_enabled()
        y = dg.tensor([1.0], requires_grad=True) * 2
        seen["recorded"] = y.grad_fn is not None
        done.set()

    run_in_threads(other, this)
    assert seen == {"decorated": False, "this": True, "recorded": True, "other, after": False}
    assert dg.is_grad_enabled()


# ----------------------------------------------------------------------------- two trainings


def _data(seed):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal((4, 8)).astype(np.float32) * 0.5,
               rng.standard_normal(8).astype(np.float32) * 0.1,
               rng.standard_normal((8, 3)).astype(np.float32) * 0.5,
               rng.standard_normal(3).astype(np.float32) * 0.1]
    x = rng.standard_normal((16, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=16)
    return weights, x, labels


STEPS = 12


def _trainer(lib, seed, log, before_forward=None, after_forward=None, during_backward=None):
    """A 4-8-3 ReLU MLP trained by SGD for STEPS steps on data of its own; appends each step's
    loss to ``log``, then the final weights. The callbacks (given the step) let a test hold the
    thread before a forward, signal after one, or hold it inside its backward pass."""
    weights, x_np, labels_np = _data(seed)
    params = [lib.tensor(w, requires_grad=True) for w in weights]
    x, labels = lib.tensor(x_np), lib.tensor(labels_np)
    nn = dg.nn if lib is dg else lib.nn
    w1, b1, w2, b2 = params
    optimizer = lib.optim.SGD(params, lr=0.5)

    def train():
        for step in range(STEPS):
            optimizer.zero_grad()
            if before_forward is not None:
                before_forward(step)
            logits = (x @ w1 + b1).relu() @ w2 + b2
            if after_forward is not None:
                after_forward(step)
            if during_backward is not None:
                logits.register_hook(lambda g, step=step: during_backward(step))
            loss = nn.functional.cross_entropy(logits, labels)
            loss.backward()
            optimizer.step()
            log.append(loss.item())
        log.append([p.detach().numpy().copy() for p in params])

    return train


def _same(a, b):
    assert a[:-1] == b[:-1]  # the losses, exactly
    for p, q in zip(a[-1], b[-1]):
        np.testing.assert_array_equal(p, q)


def _sequential(lib):
    first, second = [], []
    _trainer(lib, 1, first)()
    _trainer(lib, 2, second)()
    return first, second


def _like_torch(runs):
    torch = import_torch()
    for mine, theirs in zip(runs, _sequential(torch)):
        np.testing.assert_allclose(mine[:-1], theirs[:-1], rtol=1e-5)
        for p, q in zip(mine[-1], theirs[-1]):
            np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("repeat", range(3))
def test_two_threads_training_separate_models_agree_with_sequential_runs(repeat):
    """At every step the second thread runs its whole forward pass while the first is held
    inside its backward pass (which runs with grad mode off in its own thread)."""
    expected = _sequential(dg)
    first, second = [], []
    in_backward, forward_done = threading.Event(), threading.Event()

    def hold_in_backward(step):
        in_backward.set()
        waited(forward_done)
        forward_done.clear()

    def wait_for_first(step):
        waited(in_backward)
        in_backward.clear()

    run_in_threads(
        _trainer(dg, 1, first, during_backward=hold_in_backward),
        _trainer(dg, 2, second, before_forward=wait_for_first,
                 after_forward=lambda step: forward_done.set()),
    )
    _same(first, expected[0])
    _same(second, expected[1])
    _like_torch((first, second))


@pytest.mark.parametrize("repeat", range(3))
def test_two_threads_training_freely_interleaved_agree_with_sequential_runs(repeat, switch_often):
    expected = _sequential(dg)
    first, second = [], []
    run_in_threads(_trainer(dg, 1, first), _trainer(dg, 2, second))
    _same(first, expected[0])
    _same(second, expected[1])
    _like_torch((first, second))


# ----------------------------------------------------------------------------- anomaly, scope


def test_anomaly_mode_and_scope_belong_to_the_thread_that_entered_them():
    """(PyTorch keeps its anomaly flag process-wide, torch.is_anomaly_enabled() is seen by every
    thread; dyngraph keeps it with the other modes, per thread, as DESIGN.md says.)"""
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        with dg.detect_anomaly(), dg.scope("other"), dg.record() as recording:
            x = dg.tensor([0.0], requires_grad=True)
            y = x.sqrt()
            inside.set()
            waited(done)
            with pytest.raises(RuntimeError, match="Sqrt"), np.errstate(all="ignore"):
                (y * 0).sum().backward()  # sqrt'(0) = inf: found here
        seen["other"] = (dg.is_anomaly_enabled(), dg.events.current_scope())
        seen["other nodes"] = {n.scope for n in recording.nodes.values() if n.kind == "op"}
        seen["other where"] = y.grad_fn.where is not None

    def this():
        waited(inside)
        seen["this"] = (dg.is_anomaly_enabled(), dg.events.current_scope())
        with dg.record() as recording:
            x = dg.tensor([0.0], requires_grad=True)
            y = x.sqrt()
            with np.errstate(all="ignore"):
                (y * 0).sum().backward()  # not in anomaly mode here: a nan gradient, no error
        seen["this nodes"] = {n.scope for n in recording.nodes.values() if n.kind == "op"}
        seen["this where"] = y.grad_fn.where is not None
        seen["this grad"] = np.isnan(x.grad.numpy()).tolist()
        done.set()

    run_in_threads(other, this)
    assert seen == {
        "this": (False, ()), "this nodes": {()}, "this where": False, "this grad": [True],
        "other": (False, ()), "other nodes": {("other",)}, "other where": True,
    }


def test_op_timing_and_checkpoint_recomputation_belong_to_their_thread():
    """One thread is held inside dg.checkpoint's recomputation during backward, under
    events.timing(); another thread's node_created events meanwhile are neither recomputed
    nor timed."""
    inside, done = threading.Event(), threading.Event()
    calls = []

    def segment(h):
        calls.append(1)
        out = (h * 2).tanh()
        if len(calls) == 2:  # run again by backward: hold it there
            inside.set()
            waited(done)
        return out

    logs = {"checkpointing": [], "meanwhile": []}

    def checkpointing():
        with dg.events.subscribe(logs["checkpointing"].append), dg.events.timing():
            h = dg.tensor([0.5, -1.0], requires_grad=True)
            dg.checkpoint(segment, h).sum().backward()

    def meanwhile():
        waited(inside)
        with dg.events.subscribe(logs["meanwhile"].append):
            x = dg.tensor([1.0, 2.0], requires_grad=True)
            (x * 3).sum()
        done.set()

    run_in_threads(checkpointing, meanwhile)
    made = {name: [e for e in log if e.kind == "node_created" and e.op not in ("leaf", "constant")]
            for name, log in logs.items()}
    assert [(e.op, e.recomputed, e.elapsed is not None) for e in made["meanwhile"]] == [
        ("Mul", False, False), ("Sum", False, False)]
    recomputed = [e.op for e in made["checkpointing"] if e.recomputed]
    assert recomputed == ["Mul", "Tanh"]
    assert all(e.elapsed is not None for e in made["checkpointing"])
    assert not thread_state.current().recomputing and not thread_state.current().timing


# ----------------------------------------------------------------------------- listeners


def test_a_recording_records_only_the_thread_that_opened_it():
    opened, other_done = threading.Event(), threading.Event()
    ids = {}

    def other():
        waited(opened)  # this thread's recording is open now
        with dg.record() as recording:
            w = dg.tensor([1.0, 2.0], requires_grad=True)
            y = (w * 3).sum()
            y.backward()
        ids["other"] = {w.id, y.id}
        ids["other recording"] = set(recording.nodes)
        other_done.set()

    def this():
        with dg.record() as recording:
            opened.set()
            waited(other_done)  # the other thread built and backpropagated its graph meanwhile
            x = dg.tensor([1.0, 2.0], requires_grad=True)
            z = (x * 2).sum()
            z.backward()
        ids["this"] = {x.id, z.id}
        ids["this recording"] = set(recording.nodes)
        ids["this steps"] = {step[1] for step in recording.timeline if step[0] in ("node", "grad")}

    run_in_threads(other, this)
    assert ids["this"] <= ids["this recording"] and ids["other"] <= ids["other recording"]
    assert not ids["this recording"] & ids["other recording"]
    assert ids["this steps"] <= ids["this recording"]


def test_a_torch_function_mode_is_per_thread_too():
    """PyTorch's own watcher of calls, a TorchFunctionMode (what dyngraph.torch records
    through), is seen only by the thread that entered it: the rule dg.record() follows."""
    torch = import_torch()
    from torch.overrides import TorchFunctionMode

    class Seen(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.calls.append(threading.get_ident())
            return func(*args, **(kwargs or {}))

    entered, other_done = threading.Event(), threading.Event()

    def other():
        waited(entered)
        torch.ones(2) * 3
        other_done.set()

    with Seen() as mode:
        run_in_threads(other, lambda: (entered.set(), waited(other_done)))
        torch.ones(2) * 2
    assert mode.calls and set(mode.calls) == {threading.get_ident()}


def test_a_tensor_told_about_in_one_thread_is_told_again_to_another_threads_listeners():
    """The epochs of two threads' listeners never coincide: a parameter this thread's recording
    was told about is new to a recording opened earlier in another thread."""
    w = dg.tensor([1.0, 2.0], requires_grad=True, name="w")
    other_open, used_here = threading.Event(), threading.Event()
    found = {}

    def other():
        with dg.record() as recording:  # subscribed first
            other_open.set()
            waited(used_here)
            (w * 3).sum()
        found["other"] = recording

    def this():
        waited(other_open)
        with dg.record() as recording:  # subscribed second: the newer epoch
            (w * 2).sum()
            used_here.set()
        found["this"] = recording

    run_in_threads(other, this)
    for recording in found.values():
        assert recording.nodes[w.id].name == "w"
        assert all(edge.src in recording.nodes for edge in recording.edges)


def test_subscribing_and_unsubscribing_from_many_threads_while_others_emit(switch_often):
    """Emitting threads keep a subscriber each and must hear all of their own events and none
    of another thread's; churning threads subscribe, compute, and remove handles, their own
    and each other's, all at once."""
    ops_per_emitter = 40
    errors = []
    handles = queue.Queue()

    def emitter():
        me = threading.get_ident()
        kinds = []

        def listen(event):
            if threading.get_ident() != me:
                errors.append(f"an event of thread {threading.get_ident()} reached {me}")
            kinds.append(event.kind)

        with dg.events.subscribe(listen):
            x = dg.tensor([1.0, 2.0], requires_grad=True)
            h = x
            for _ in range(ops_per_emitter):
                h = (h * 1.0).tanh()
            h.sum().backward()
        counts = {kind: kinds.count(kind) for kind in set(kinds)}
        # leaf, then per op a constant 1.0 and Mul, Tanh; then Sum; each op node's gradient
        assert counts["node_created"] == 1 + 3 * ops_per_emitter + 1
        assert counts["grad_computed"] == 2 * ops_per_emitter + 1 + 1
        assert counts["backward_finished"] == 1
        assert not dg.events.active

    def churner():
        for i in range(30):
            seen = []
            handle = dg.events.subscribe(seen.append)
            y = (dg.tensor([1.0], requires_grad=True) * 2).sum()
            if i % 2:
                handles.put(handle)  # removed by whichever churner comes next
            else:
                handle.remove()
            y.backward()
            assert seen  # heard its own ops while subscribed
            with contextlib.suppress(queue.Empty):
                handles.get_nowait().remove()  # maybe another thread's
        while True:
            try:
                handles.get_nowait().remove()
            except queue.Empty:
                break
        dg.tensor([1.0], requires_grad=True) * 2  # the next event finds nobody: off
        assert not dg.events.active
        assert not thread_state.current().subscribers

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_in_threads(*[emitter] * 3, *[churner] * 4)
    assert not errors
    assert not [w for w in caught if "subscriber" in str(w.message)]
    assert not dg.events.active


def test_a_handle_removed_from_another_thread_switches_its_owner_off():
    made, removed = threading.Event(), threading.Event()
    box = {}

    def owner():
        box["handle"] = dg.events.subscribe(lambda event: None)
        box["on"] = dg.events.active
        made.set()
        waited(removed)
        box["after"] = dg.events.active  # the last subscriber went: off at once
        box["left"] = dict(thread_state.current().subscribers)

    def remover():
        waited(made)
        box["here"] = dg.events.active
        box["handle"].remove()
        removed.set()

    run_in_threads(owner, remover)
    assert box == {"handle": box["handle"], "on": True, "here": False, "after": False, "left": {}}


def test_torch_hooks_run_on_a_thread_of_pytorch_report_to_the_thread_that_called_backward(
    monkeypatch,
):
    """PyTorch runs a CUDA graph's backward on a thread of its own per device; here the nodes'
    hooks are made to run on another thread, as they would there, and the recording must see
    the same gradients as when they run in the caller's thread."""
    torch = import_torch()
    import dyngraph.torch as dgt

    def program():
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with dg.record() as recording:
            ((x * 2).tanh() * x).sum().backward()
        return recording

    def grads(recording):
        return sorted((node.op, node.grad_preview) for node in recording.nodes.values())

    expected = grads(program())
    assert sum(1 for _, preview in expected if preview) >= 4
    op_ran, leaf_reached = dgt._Info.__call__, dgt._Info.reached  # an op's hook, a leaf's

    def op_on_another_thread(info, grad_inputs, grad_outputs):
        run_in_threads(lambda: op_ran(info, grad_inputs, grad_outputs))

    def leaf_on_another_thread(info, grad_outputs):
        run_in_threads(lambda: leaf_reached(info, grad_outputs))

    monkeypatch.setattr(dgt._Info, "__call__", op_on_another_thread)
    monkeypatch.setattr(dgt._Info, "reached", leaf_on_another_thread)
    assert grads(program()) == expected


def test_two_threads_watching_pytorch_at_once_each_record_their_own_ops_and_scopes():
    """NOTE [watching is per thread] in dyngraph/torch.py: a second thread watching meanwhile
    gets its own mode and module scopes (a process-wide depth count had left it unwatched), and
    the shared module hooks stay until the last thread stops watching."""
    torch = import_torch()
    from torch.nn.modules import module as torch_module

    import dyngraph.torch  # noqa: F401 - the watcher

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x).tanh()

    here_open, there_done = threading.Event(), threading.Event()
    found = {}

    def other():
        waited(here_open)
        with dg.record() as recording:
            Net()(torch.ones(1, 2)).sum()
        found["other"] = recording
        there_done.set()

    def this():
        with dg.record() as recording:
            here_open.set()
            waited(there_done)
            torch.ones(3, requires_grad=True).exp().sum()
            assert torch_module._global_forward_pre_hooks  # still installed for this thread
        found["this"] = recording

    run_in_threads(other, this)
    ops = {name: [n.op for n in rec.nodes.values() if n.kind == "op"]
           for name, rec in found.items()}
    assert ops["this"] == ["ExpBackward0", "SumBackward0"]
    assert "TanhBackward0" in ops["other"] and "ExpBackward0" not in ops["other"]
    scopes = {n.scope for n in found["other"].nodes.values() if n.op == "TanhBackward0"}
    assert scopes == {("Net",)}
    assert not torch_module._global_forward_pre_hooks  # removed by the last one out


def test_two_threads_in_watched_torch_backward_passes_at_once_each_free_their_own_nodes():
    """Issue 39 (the torch watcher's lists per thread): thread A's watched backward pauses
    half-way while thread B's watched backward is open; the nodes A runs then are A's, so each
    recording's graph_freed names its own graph's nodes, all of them (a process-wide stack of
    passes had put A's in B's)."""
    torch = import_torch()
    import dyngraph.torch  # noqa: F401 - the watcher

    a_waiting, b_in_pass, a_done = threading.Event(), threading.Event(), threading.Event()
    found = {}

    def run(name, pause):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with dg.record() as recording:
            h = (x * 2).tanh()
            h.register_hook(lambda grad: pause())  # runs inside the pass, before h's node
            (h * h).sum().backward()
        found[name] = recording

    def a_pause():
        a_waiting.set()
        waited(b_in_pass)

    def b_pause():
        b_in_pass.set()
        waited(a_done)

    def thread_a():
        run("a", a_pause)
        a_done.set()

    def thread_b():
        waited(a_waiting)
        run("b", b_pause)

    run_in_threads(thread_a, thread_b)
    for recording in found.values():
        freed = [step[1] for step in recording.timeline if step[0] == "freed"]
        saved = {i for i, n in recording.nodes.items() if n.saved_bytes}
        assert len(freed) == 1 and set(freed[0]) == saved, (freed, saved)


# ----------------------------------------------------------------------------- in-place writes


def _written_by_another_thread(lib):
    """Forward saves ``y`` (in ``y * y``); another thread then writes into ``y`` in place;
    this thread's backward. What it raises, or the gradient it gives."""
    y = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (y * y).sum()

    def writer():
        with lib.no_grad():
            y.add_(100.0)

    run_in_threads(writer)
    try:
        loss.backward()
    except RuntimeError as exc:
        return "raised" if "modified by an inplace operation" in str(exc) else str(exc)
    return y.grad.numpy().tolist()


def test_a_write_in_another_thread_into_what_forward_saved_is_caught_at_backward():
    """NOTE [one clock for every thread] in dyngraph/tensor.py: the fast path's clock must see
    writes made by every thread, or this backward would silently use the written numbers."""
    assert _written_by_another_thread(dg) == "raised"
    assert _written_by_another_thread(import_torch()) == "raised"
