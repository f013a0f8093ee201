"""Every engine reports what each edge carried back (issue 36): PyTorch through dyngraph.torch,
micrograd through dyngraph.micrograd, and any engine through ``EventSource.edge_grad``, in the
order NOTE [edge gradients] (events.py) states, with the inputs and positions their
node_created named, and contributions that add up to each input's gradient."""

from __future__ import annotations

import importlib.util

import pytest
from engine_tiny import Value

import dyngraph as dg
from dyngraph import events

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH,
                                 reason="torch is not installed (pip install -e '.[torch]')")
needs_micrograd = pytest.mark.skipif(importlib.util.find_spec("micrograd") is None,
                                     reason="micrograd is not installed (pip install micrograd)")


def heard(program) -> list:
    """The events of ``program`` run under dg.record() (which watches torch and micrograd
    too, once imported)."""
    seen: list = []
    with events.subscribe(seen.append), dg.record():
        program()
    return seen


def check_edges(seen: list) -> dict:
    """Asserts NOTE [edge gradients] of a stream: each edge_grad comes after its node's
    grad_computed and before its input's; its input is the node's input number ``position`` as
    node_created named them; and where previews show whole gradients, the contributions into an
    input add up to its gradient. Returns {(node, input, position): preview}."""
    inputs = {e.id: e.inputs for e in seen if e.kind == "node_created"}
    computed: set[int] = set()
    into: dict[int, list] = {}
    edges = {}
    for e in seen:
        if e.kind == "backward_started":  # a new pass: gradients computed afresh
            computed.clear()
            into.clear()
        elif e.kind == "grad_computed":
            computed.add(e.id)
            sent = into.pop(e.id, [])
            if sent and len(e.preview) < events.PREVIEW_SIZE:  # the whole gradient is shown
                total = [sum(values) for values in zip(*sent)]
                assert total == pytest.approx(list(e.preview), rel=1e-6, abs=1e-7)
        elif e.kind == "edge_grad":
            assert e.node in computed, "an edge after its node's gradient"
            assert e.input not in computed, "an edge before its input's gradient"
            assert inputs[e.node][e.position] == e.input
            into.setdefault(e.input, []).append(e.preview)
            edges[(e.node, e.input, e.position)] = e.preview
    return edges


def named(seen: list) -> dict:
    return {e.name: e.id for e in seen if e.kind == "node_created" and e.name}


# ----------------------------------------------------------------------------- any engine


def test_an_engine_reports_its_edges_through_event_source():
    """The README's engine (tests/engine_tiny.py) reports each edge with src.edge_grad."""
    seen = heard(_program("readme"))  # c = a * b; d = c + a with a = 2, b = -3
    edges = check_edges(seen)
    ids = named(seen)
    assert edges[(ids["c"], ids["a"], 0)] == (-3.0,)  # upstream 1 x local b
    assert edges[(ids["c"], ids["b"], 1)] == (2.0,)
    assert edges[(ids["d"], ids["a"], 1)] == (1.0,)
    grads = {e.id: e for e in seen if e.kind == "grad_computed"}
    assert grads[ids["a"]].preview == (-2.0,) and grads[ids["a"]].accumulated


def test_edge_grad_is_silent_unwatched_and_takes_a_broadcast_shape():
    a, b = Value(1.0), Value(2.0)
    out = a * b
    from engine_tiny import src

    src.edge_grad(out, a, 0, 2.0)  # nobody listens: nothing, no error
    seen: list = []
    with events.subscribe(seen.append):
        src.edge_grad(out, a, 0, [[1.0, 2.0]], reduced_from=[3, 2])
    (edge,) = [e for e in seen if e.kind == "edge_grad"]
    assert edge.preview == (1.0, 2.0) and edge.reduced_from == (3, 2)
    assert edge.node == src.id_of(out) and edge.input == src.id_of(a) and edge.position == 0


# ----------------------------------------------------------------------------- micrograd


@needs_micrograd
def test_micrograd_reports_what_each_backward_closure_adds():
    from micrograd.engine import Value as MValue

    import dyngraph.micrograd  # noqa: F401 - registers micrograd as a source

    def program():
        a = MValue(2.0)
        b = MValue(3.0)
        c = a * b
        e = a * a
        f = (c + e).relu()
        f.backward()

    seen = heard(program)
    edges = check_edges(seen)
    ids = named(seen)
    assert edges[(ids["c"], ids["a"], 0)] == (3.0,) and edges[(ids["c"], ids["b"], 1)] == (2.0,)
    # a * a: one edge per argument, each what its own `+=` added
    assert edges[(ids["e"], ids["a"], 0)] == (2.0,) and edges[(ids["e"], ids["a"], 1)] == (2.0,)
    grads = {e.id: e.preview for e in seen if e.kind == "grad_computed"}
    assert grads[ids["a"]] == (7.0,)  # 3 + 2 + 2, as micrograd summed it
    assert "grad" not in vars(MValue) and "_backward" not in vars(MValue)  # unwrapped


# ----------------------------------------------------------------------------- PyTorch


@needs_torch
def test_pytorch_reports_each_edge_in_engine_order():
    import torch

    def program():
        a = torch.tensor([2.0, 3.0], requires_grad=True)
        b = torch.tensor([4.0, 5.0], requires_grad=True)
        c = a * b
        d = c + a
        d.sum().backward()

    seen = heard(program)
    edges = check_edges(seen)
    made = [e for e in seen if e.kind == "node_created"]
    a, b = made[0].id, made[1].id
    ids = named(seen)
    assert edges[(ids["c"], a, 0)] == (4.0, 5.0)  # upstream [1, 1] x b
    assert edges[(ids["c"], b, 1)] == (2.0, 3.0)
    assert edges[(ids["d"], ids["c"], 0)] == (1.0, 1.0)
    assert edges[(ids["d"], a, 1)] == (1.0, 1.0)
    grads = {e.id: e for e in seen if e.kind == "grad_computed"}
    assert grads[a].preview == (5.0, 6.0) and grads[a].accumulated


@needs_torch
def test_pytorch_edges_of_a_square_data_first_and_a_broadcast():
    import torch

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    data = torch.tensor([10.0, 20.0, 30.0])
    rows = torch.ones(2, 3)

    def program():
        s = x * x  # two edges into x
        t = data - s  # data takes position 0: s is input 1
        u = rows * t  # t broadcast over 2 rows: its gradient summed back
        u.sum().backward()

    seen = heard(program)
    edges = check_edges(seen)
    ids = named(seen)
    xid = next(e.id for e in seen if e.kind == "node_created" and e.op == "leaf")
    assert edges[(ids["s"], xid, 0)] == edges[(ids["s"], xid, 1)] == (-2.0, -4.0, -6.0)
    assert (ids["t"], ids["s"], 1) in edges
    assert not [key for key in edges if key[0] == ids["t"] and key[2] == 0]  # no grad to data
    made = {e.id: e for e in seen if e.kind == "node_created"}
    assert made[ids["t"]].inputs[1] == ids["s"] and made[made[ids["t"]].inputs[0]].op == "constant"
    broadcast = next(e for e in seen if e.kind == "edge_grad" and e.node == ids["u"])
    assert broadcast.input == ids["t"] and broadcast.reduced_from == (2, 3)
    assert broadcast.preview == (2.0, 2.0, 2.0)


@needs_torch
def test_pytorch_edges_of_whole_programs_match_their_nodes():
    """On the lesson programs of the fast-path test (modules, RNN cells, lists, keywords,
    in-place ops): every edge names its node's inputs as node_created did, in order."""
    from test_torch_source import _lesson_programs

    seen = heard(_lesson_programs())
    edges = check_edges(seen)
    assert len(edges) > 50


# ----------------------------------------------------------------------------- described afterwards
# A graph built while nobody watched is described when its backward is watched, and by dg.draw:
# the same node_created events either way (NOTE [inputs the graph does not keep] in
# dyngraph/function.py), so the chain rule's positions and the drawing agree with the pass.


def _data_and_weight(engine: str):
    """Data ``x`` = [1, 2] (no gradient) and a weight ``w`` = [3, 4] in dyngraph or PyTorch."""
    if engine == "dyngraph":
        return dg.tensor([1.0, 2.0]), dg.tensor([3.0, 4.0], requires_grad=True)
    import torch

    return torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0], requires_grad=True)


def _data_first(engine: str):
    """``loss = (x * w).sum()`` with data ``x`` as Mul's argument 0, built unwatched;
    returns (loss, w)."""
    x, w = _data_and_weight(engine)
    return (x * w).sum(), w


ENGINES = ["dyngraph", pytest.param("torch", marks=needs_torch)]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unwatched_forward_keeps_each_argument_in_its_place(engine):
    loss, w = _data_first(engine)
    drawn = dg.draw(loss).recording
    seen = heard(loss.backward)
    edges = check_edges(seen)  # each edge_grad's position is its input's place in node_created
    created = {e.id: e for e in seen if e.kind == "node_created"}
    mul = next(e for e in created.values() if e.op.startswith("Mul"))
    unknown, w_id = mul.inputs
    assert created[unknown].op == "constant" and created[unknown].preview == ()  # x, not kept
    assert created[w_id].preview == (3.0, 4.0)
    assert edges[(mul.id, w_id, 1)] == (1.0, 2.0)  # dz/dw = x, along argument 1
    # dg.draw folded the same description: the same nodes, ids and edges as the pass announced
    assert {i: n.op for i, n in drawn.nodes.items()} == {i: e.op for i, e in created.items()}
    assert sorted((e.src, e.dst, e.position) for e in drawn.edges) == sorted(
        (i, e.id, p) for e in created.values() for p, i in enumerate(e.inputs))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_graph_described_twice_is_the_same_graph(engine):
    loss, _ = _data_first(engine)
    first, second = dg.draw(loss).recording, dg.draw(loss).recording
    assert list(first.nodes) == list(second.nodes) and first.edges == second.edges
    with dg.record() as rec:
        loss.backward(retain_graph=True)
    with dg.record() as again:  # a new block: the graph is announced afresh, the same
        loss.backward()
    assert list(again.nodes) == list(rec.nodes) == list(first.nodes)


# ----------------------------------------------------------------------------- one report
# Issue 39: every engine reports through the spine's one set of event constructors (dyngraph's
# engine and dyngraph.torch directly, with the ids they keep on their nodes; micrograd and the
# README's engine through dg.EventSource, which gives their objects ids). The same program in
# each is therefore the same report: the same graph, the same edges carrying the same numbers,
# the same gradients, in the order NOTE [edge gradients] states.


def _program(engine: str):
    """``c = a * b; d = c + a; d.backward()`` with a = 2, b = -3 in ``engine``."""
    if engine == "dyngraph":
        def leaf(v):
            return dg.tensor(v, requires_grad=True)
    elif engine == "torch":
        import torch

        def leaf(v):
            return torch.tensor(v, requires_grad=True)
    elif engine == "micrograd":
        from micrograd.engine import Value as MValue

        import dyngraph.micrograd  # noqa: F401 - registers micrograd as a source
        leaf = MValue
    else:
        leaf = Value  # the README's engine (tests/engine_tiny.py)

    def program():
        a = leaf(2.0)
        b = leaf(-3.0)
        c = a * b
        d = c + a
        d.backward()

    return program


def _report(seen: list) -> tuple:
    """A stream up to its engine's spelling: the ops with their inputs (by rank), the edges with
    what they carried, each node's gradient, and the order of the gradients."""
    from dyngraph.engine_check import op_key

    created = [e for e in seen if e.kind == "node_created"]
    rank = {e.id: r for r, e in enumerate(created)}
    graph = [(op_key(e.op) if e.inputs else "leaf", tuple(rank[i] for i in e.inputs))
             for e in created]
    edges = sorted((rank[e.node], rank[e.input], e.position, tuple(e.preview))
                   for e in seen if e.kind == "edge_grad")
    grads = {rank[e.id]: tuple(e.preview) for e in seen if e.kind == "grad_computed"}
    order = [rank[e.id] for e in seen if e.kind == "grad_computed"]
    ends = [e.kind for e in seen if e.kind in ("backward_started", "backward_finished")]
    return graph, edges, grads, order, ends


@pytest.mark.parametrize("engine", [
    "dyngraph", pytest.param("torch", marks=needs_torch),
    pytest.param("micrograd", marks=needs_micrograd), "readme"])
def test_every_engine_gives_the_same_report_of_the_same_program(engine):
    seen = heard(_program(engine))
    check_edges(seen)
    graph, edges, grads, order, ends = _report(seen)
    assert graph == [("leaf", ()), ("leaf", ()), ("mul", (0, 1)), ("add", (2, 0))]
    assert edges == [(2, 0, 0, (-3.0,)), (2, 1, 1, (2.0,)), (3, 0, 1, (1.0,)), (3, 2, 0, (1.0,))]
    assert grads == {3: (1.0,), 2: (1.0,), 1: (2.0,), 0: (-2.0,)}
    assert order[:2] == [3, 2] and set(order[2:]) == {0, 1}  # from the root, inputs after
    assert ends == ["backward_started", "backward_finished"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_graph_watched_being_built_is_described_again_as_it_was(engine):
    """A block opened inside another announces afresh what was made before it: the node made
    in the outer block is described with the very inputs it was made with (its data and
    constants under the ids the outer block was given), so the outer recording gains no
    node without edges and the inner one the same graph."""
    x, w = _data_and_weight(engine)
    with dg.record() as outer:
        h = (x * w) * 2.0
        with dg.record() as inner:
            (h * h).sum().backward()
    for rec in (outer, inner):
        used = {e.src for e in rec.edges} | {e.dst for e in rec.edges}
        assert set(rec.nodes) == used, "a node without edges"
    edges = {(e.src, e.dst, e.position) for e in outer.edges}
    assert {(e.src, e.dst, e.position) for e in inner.edges} <= edges
    mul = min(i for i, n in inner.nodes.items() if n.op.startswith("Mul"))
    assert [e.position for e in inner.edges if e.dst == mul and e.src == next(
        i for i, n in outer.nodes.items() if n.preview == (3.0, 4.0))] == [1]
