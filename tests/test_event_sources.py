"""Any engine as an event source (dyngraph/spine/reporter.py, issue 32): a 30-line engine written
against the public API (tests/engine_tiny.py) and micrograd (dyngraph.micrograd) are recorded,
named, drawn and diffed as dyngraph's own ops are."""

from __future__ import annotations

import gc
import importlib.util
import math
import re
import weakref

import pytest
from engine_tiny import Value, src

import dyngraph as dg
from dyngraph import events

HAS_MICROGRAD = importlib.util.find_spec("micrograd") is not None
needs_micrograd = pytest.mark.skipif(not HAS_MICROGRAD,
                                     reason="micrograd is not installed (pip install micrograd)")


def line_of(text: str) -> int:
    """The line of this file that contains ``text`` (where a node should point)."""
    with open(__file__, encoding="utf-8") as f:
        return next(n for n, line in enumerate(f, 1) if text in line and "line_of" not in line)


def tiny_program():
    a = Value(2.0)
    b = Value(-3.0)
    c = a * b  # tiny: c
    d = c + a
    e = d.tanh()
    e.backward()
    return a, b, e


def test_a_tiny_engine_is_recorded_with_names_lines_and_values():
    with dg.record() as rec:
        a, b, e = tiny_program()
    nodes = list(rec.nodes.values())
    assert [n.op for n in nodes] == ["leaf", "leaf", "Mul", "Add", "Tanh"]
    assert [n.name for n in nodes] == ["a", "b", "c", "d", "e"]
    assert nodes[2].where[1] == line_of("# tiny: c")  # the learner's line, not the engine's
    assert nodes[2].where[0].endswith("test_event_sources.py")
    assert nodes[2].preview == (-6.0,)
    edges = {(edge.src, edge.dst) for edge in rec.edges}
    assert (nodes[0].id, nodes[2].id) in edges and (nodes[1].id, nodes[2].id) in edges
    # the gradients the engine computed, as the events carried them
    t = math.tanh(-4.0)
    assert nodes[4].grad_preview == (1.0,)
    assert nodes[0].grad_preview[0] == pytest.approx(a.grad) == pytest.approx((1 - t * t) * -2.0)
    assert nodes[1].grad_preview[0] == pytest.approx(b.grad) == pytest.approx((1 - t * t) * 2.0)


def test_events_come_in_the_engines_order():
    seen: list = []
    with events.subscribe(seen.append), dg.record():
        tiny_program()
    kinds = [e.kind for e in seen]
    assert kinds[:5] == ["node_created"] * 5
    assert kinds[5] == "backward_started" and kinds[-1] == "backward_finished"
    ids = {e.id: e.op for e in seen if e.kind == "node_created"}
    order = [ids[e.id] for e in seen if e.kind == "grad_computed"]
    assert order == ["Tanh", "Add", "Mul", "leaf", "leaf"]  # reversed topological order
    # a is used by Mul and by Add: its gradient was summed (fan-in); b's was not
    names = {e.id: e.name for e in seen if e.kind == "node_created"}
    summed = {names[e.id]: e.accumulated for e in seen if e.kind == "grad_computed"}
    assert summed == {"e": False, "d": False, "c": False, "a": True, "b": False}


def test_nothing_is_reported_or_kept_while_nobody_listens():
    a, b, e = tiny_program()
    assert src.id_of(a) is None and src.id_of(e) is None
    ref = weakref.ref(a)
    del a, b, e
    gc.collect()
    assert ref() is None


def test_watching_keeps_nothing_alive():
    with dg.record():
        a, b, e = tiny_program()
        ref = weakref.ref(e)
        assert src.id_of(e) is not None
        del a, b, e
    gc.collect()
    assert ref() is None
    assert not src._ids  # the ids of collected objects are dropped with them


def test_a_backward_watched_after_its_forward_shows_the_graph_behind_the_root():
    a, b = Value(0.5), Value(4.0)
    y = (a * b).tanh()
    with dg.record() as rec:
        y.backward()
    ops = sorted(n.op for n in rec.nodes.values())
    assert ops == ["Mul", "Tanh", "leaf", "leaf"]
    tanh = next(n for n in rec.nodes.values() if n.op == "Tanh")
    assert tanh.grad_preview == (1.0,)


def test_two_runs_of_the_tiny_engine_diff_like_dyngraphs():
    def run(x: float):
        with dg.record() as rec:
            a = Value(x)
            y = a * a
            if x > 0:
                y = y.tanh()
            y.backward()
        return rec

    diff = dg.diff(run(1.0), run(-1.0))
    dot = diff.to_dot()
    assert "Tanh" in dot  # the branch taken in one run only is drawn as such


def test_dyngraph_and_an_engine_share_one_recording_with_distinct_ids():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 2).sum()
        a = Value(1.0)
        b = a * a
    ids = list(rec.nodes)
    assert len(ids) == len(set(ids)) == 6  # x, 2, Mul, Sum; a, Mul
    assert {rec.nodes[i].op for i in ids} >= {"Mul", "Sum", "leaf"}
    del y, b


def test_bad_uses_get_clear_errors():
    with pytest.raises(TypeError, match="needs a name"):
        dg.EventSource("")
    with pytest.raises(TypeError, match="engine= takes classes, functions and modules"):
        dg.EventSource("x", engine=[42])
    with pytest.raises(TypeError, match="value_of must be callable"):
        dg.EventSource("x", value_of=3)

    class Slotted:
        __slots__ = ("data",)

    source = dg.EventSource("slots")
    with dg.record(), pytest.raises(TypeError, match="add '__weakref__' to its __slots__"):
        source.node(Slotted(), "leaf")
    with dg.record(), pytest.raises(TypeError, match="op's name"):
        source.node(object.__new__(Value), "")


def test_values_that_are_not_numbers_are_shown_without_a_preview():
    class Box:
        pass

    source = dg.EventSource("boxes", value_of=lambda box: "not a number")
    with dg.record() as rec:
        source.node(Box(), "leaf")
    (node,) = rec.nodes.values()
    assert node.preview == () and node.shape == ()


def test_a_failed_backward_is_reported_with_its_error():
    seen: list = []
    a = Value(1.0)
    with events.subscribe(seen.append):
        src.backward_started(a)
        src.backward_finished(a, error=ValueError("no gradient"))
    assert seen[-1].kind == "backward_failed" and seen[-1].error == "ValueError: no gradient"


# --------------------------------------------------------------------------- micrograd


def micrograd_program():
    from micrograd.engine import Value as MValue

    a = MValue(2.0)
    b = MValue(-3.0)
    d = a - b  # micrograd: d
    c = (a * b).relu()
    e = d * c + a * d
    e.backward()
    return a, b, e


@needs_micrograd
def test_micrograd_is_watched_unchanged():
    from micrograd.engine import Value as MValue

    import dyngraph.micrograd as dm

    original = {name: vars(MValue).get(name) for name in ("__init__", "__mul__", "backward")}
    with dg.record() as rec:
        a, b, e = micrograd_program()
    # micrograd is back as it came from PyPI after the block
    assert {name: vars(MValue).get(name) for name in original} == original
    assert "_backward" not in vars(MValue)
    nodes = list(rec.nodes.values())
    named = {n.name: n for n in nodes if n.name}
    assert set(named) == {"a", "b", "d", "c", "e"}
    assert named["d"].op == "+" and named["d"].where[1] == line_of("# micrograd: d")
    assert named["c"].op == "ReLU"
    # the gradients micrograd computed, as the events carried them
    assert named["a"].grad_preview == (a.grad,) and named["b"].grad_preview == (b.grad,)
    # the same program run again unwatched gives the same numbers
    a2, b2, _ = micrograd_program()
    assert (a2.grad, b2.grad) == (a.grad, b.grad)
    assert dm.source.name == "micrograd"


@needs_micrograd
def test_micrograd_gradients_come_in_micrographs_own_order():
    from micrograd.engine import Value as MValue

    import dyngraph.micrograd  # noqa: F401 - registers micrograd as a source

    seen: list = []
    with events.subscribe(seen.append), dg.record():
        a, b, e = micrograd_program()
    made = {ev.id: ev for ev in seen if ev.kind == "node_created"}
    reported = [ev.id for ev in seen if ev.kind == "grad_computed"]
    # micrograd's own order: reversed(topo), topo built as its backward builds it
    topo, visited = [], set()

    def build(v):
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build(child)
            topo.append(v)

    build(e)
    assert len(reported) == len(topo) == len(made)
    values = [made[i].preview[0] for i in reported]
    assert values == [float(v.data) for v in reversed(topo)]
    assert isinstance(a, MValue)


@needs_micrograd
def test_a_micrograd_mlp_is_recorded_per_neuron():
    import random

    from micrograd.nn import MLP

    import dyngraph.micrograd  # noqa: F401

    random.seed(0)
    model = MLP(3, [4, 1])
    with dg.record() as rec:
        out = model([1.0, -2.0, 0.5])
        out.backward()
    import dyngraph.micrograd as dm

    params = model.parameters()
    assert len(rec.nodes) > len(params)
    for p in params:  # made before the block: found by walking back from the output
        node = rec.nodes[dm.source.id_of(p)]
        assert node.op == "leaf" and node.where is None
        assert node.preview == (p.data,) and node.grad_preview == (p.grad,)


@needs_micrograd
def test_nested_blocks_wrap_micrograd_once():
    from micrograd.engine import Value as MValue

    import dyngraph.micrograd as dm

    init = vars(MValue)["__init__"]
    with dg.record() as outer:
        with dg.record() as inner:
            MValue(1.0) * MValue(2.0)
        assert vars(MValue)["__init__"] is not init  # still watched by the outer block
    assert vars(MValue)["__init__"] is init and dm._depth == 0
    assert len(inner.nodes) == len(outer.nodes) == 3


def test_without_micrograd_the_import_says_which_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "micrograd", None)
    monkeypatch.delitem(sys.modules, "dyngraph.micrograd", raising=False)
    from dyngraph.extras import install_command

    with pytest.raises(ImportError, match=re.escape(install_command("micrograd"))):
        importlib.import_module("dyngraph.micrograd")


def test_the_examples_in_the_docstrings_run():
    import doctest

    import dyngraph.spine.reporter

    modules = [dyngraph.spine.reporter]
    if HAS_MICROGRAD:
        import dyngraph.micrograd

        modules.append(dyngraph.micrograd)
    for module in modules:
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_the_readme_engine_is_this_one_and_is_watched():
    """The README's 30-line engine is tests/engine_tiny.py, word for word, and its usage block
    runs under dg.record()."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Your own engine, watched"):]
    blocks = section.split("```python\n")
    engine, usage = blocks[1].split("```")[0], blocks[2].split("```")[0]
    here = (root / "tests" / "engine_tiny.py").read_text(encoding="utf-8")
    assert engine == here[here.index("import math"):]
    assert len(engine.splitlines()) <= 50
    namespace: dict = {}
    exec(compile(engine, "engine.py", "exec"), namespace)
    program = usage.replace("with dg.watch():", "with dg.record() as rec:", 1)
    exec(compile(program, "usage.py", "exec"), namespace)
    rec = namespace["rec"]
    assert [n.op for n in rec.nodes.values()] == ["leaf", "leaf", "Mul", "Add", "Tanh"]
    assert [n.name for n in rec.nodes.values()] == ["a", "b", None, None, "c"]
    assert all(n.grad_preview for n in rec.nodes.values())


# ------------------------------------------------------------------ a source that misbehaves


class _Box:
    """An object of a made-up engine (weakly referable, as EventSource requires)."""

    def __init__(self, value: float) -> None:
        self.value = value


@pytest.mark.parametrize("while_watched, said", [
    (lambda: 42, "returned 42, not a context manager"),
    (lambda: 1 / 0, "raised ZeroDivisionError"),
])
def test_a_broken_while_watched_is_dropped_with_a_warning_and_others_are_still_watched(
        while_watched, said):
    """NOTE [a source that misbehaves]: the broken adapter is named and unregistered; dyngraph's
    own ops and a sound engine are recorded in the same block, and in the next one."""
    broken = dg.EventSource("broken-adapter", while_watched=while_watched)
    warned = pytest.warns(RuntimeWarning, match=f"'broken-adapter' is not watched: its .*{said}")
    with warned, dg.record() as rec:
        y = dg.tensor([1.0, 2.0], requires_grad=True) * 2
        c = Value(2.0) * Value(3.0)
    assert [n.op for n in rec.nodes.values()].count("Mul") == 2, "both engines recorded"
    with dg.record() as again:  # dropped: no second warning, watching as usual
        y = y * 3
    assert [n.op for n in again.nodes.values()][-1] == "Mul" and c.data == 6.0
    assert broken.name not in dg.spine.reporter._registered


def test_an_adapter_whose_exit_raises_warns_and_the_learners_error_passes_unchanged():
    from contextlib import contextmanager

    @contextmanager
    def fails_on_exit():
        yield
        raise RuntimeError("adapter bug")

    dg.EventSource("exit-bug", while_watched=fails_on_exit)
    warned = pytest.warns(RuntimeWarning, match="'exit-bug' is not watched: leaving .*adapter bug")
    with warned, dg.record():
        pass
    dg.EventSource("exit-bug-2", while_watched=fails_on_exit)
    with pytest.raises(KeyError, match="the learner's"), dg.record():  # not the adapter's
        raise KeyError("the learner's")
    dg.spine.reporter._registered.pop("exit-bug-2", None)


@pytest.mark.parametrize("made", ["Mul", ("Mul",), ("Mul", 3), (7, ()), ("Mul", "ab")])
def test_made_by_returning_something_else_than_op_and_inputs_is_named(made):
    source = dg.EventSource("odd-made-by", made_by=lambda obj: made)
    refused = pytest.raises(TypeError, match=r"odd-made-by: made_by\(\) must return "
                                             r"\(op, inputs\).* for a _Box it returned")
    with dg.record(), refused:
        source.backward_started(_Box(1.0))


@pytest.mark.parametrize("call", ["version", "position"])
def test_a_version_or_position_that_is_not_a_whole_number_is_named(call):
    source = dg.EventSource("odd-numbers")
    a, b = _Box(1.0), _Box(2.0)
    with dg.record():
        source.node(b, "Neg", (a,))
        with pytest.raises(TypeError, match=f"odd-numbers: the {call} must be a whole number"):
            if call == "version":
                source.version_bumped(a, "2")
            else:
                source.edge_grad(b, a, 0.5, 1.0)
