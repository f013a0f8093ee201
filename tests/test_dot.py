"""DOT generation: golden diagrams, determinism, options, the one visual vocabulary, collapsing,
the node budget, loop summaries, and static rendering (SVG, rich display, fallbacks, speed)."""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support import edges_of, label_lines, node_of, nodes_of, renumber, statements

import dyngraph as dg
import dyngraph.dot as dot_module
import dyngraph.graphviz_render as graphviz_render
from dyngraph.dot import (
    BLUE,
    GRAD_SCALE,
    GREEN,
    GREY,
    ORANGE,
    PALE_BLUE,
    SKY_BLUE,
    VERMILLION,
    format_bytes,
    format_elapsed,
    format_value,
    format_values,
    magnitude_level,
)
from dyngraph.record import Edge, Node, Recording

GOLDEN = Path(__file__).parent / "golden"
NO_DOT = "Graphviz's dot program is not installed (apt-get install graphviz)"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason=NO_DOT)
needs_graphviz = pytest.mark.skipif(
    graphviz_render.graphviz_command() is None,
    reason="no Graphviz: neither dot nor the pygraphviz wheel (pip install pygraphviz)",
)


class Weight(dg.Tensor):
    """A tensor subclass that announces itself as a parameter (as nn.Parameter does)."""

    __slots__ = ()
    is_parameter = True


# ----------------------------------------------------------------------------- reading DOT

def _golden(name: str) -> str:
    return (GOLDEN / name).read_text(encoding="utf-8")


def test_golden_forward_and_backward_of_a_small_graph():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        y = (x * 2).sum()
        y.backward()
    assert renumber(rec.to_dot()) == _golden("backward_small.dot")


def test_golden_scoped_forward_left_to_right_with_a_parameter():
    w = Weight(np.array([0.5, -1.0], dtype=np.float32), requires_grad=True)
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        with dg.scope("layer"):
            h = (x * w).tanh()
        h.sum()
    assert renumber(rec.to_dot(rankdir="LR")) == _golden("scoped_forward_lr.dot")


def _vocabulary_model() -> Recording:
    """A hand-made model with fixed ids showing the rarer marks: NaN, a gradcheck verdict, a
    device badge, per-op time, a float64 shape, a scope, and nodes that were not recorded."""
    rec = Recording()
    rec.nodes[1] = Node(1, "leaf", "leaf", "x", (2,), "float32", "cpu", True, (1.0, math.nan),
                        order=0, grad_preview=(0.5, 0.5), grad_norm=0.7071)
    rec.nodes[2] = Node(2, "op", "Exp", None, (2,), "float32", "cuda:0", True,
                        (2.718, math.nan), order=1, saved_bytes=8, elapsed=0.00012,
                        check="pass", grad_preview=(1.0, math.inf), grad_norm=math.inf)
    rec.nodes[3] = Node(3, "constant", "constant", None, (), "float", "cpu", False, (3.0,),
                        order=2, scope=("head",))
    rec.nodes[4] = Node(4, "op", "Mul", "loss", (2, 512), "float64", "cpu", True,
                        tuple(float(i) for i in range(6)), order=3, saved_bytes=2048,
                        scope=("head",), check="fail")
    rec.edges = [Edge(1, 2, 0), Edge(2, 4, 0), Edge(3, 4, 1)]
    rec.dropped_nodes = 7
    return rec


def test_golden_vocabulary_of_a_hand_made_model():
    assert _vocabulary_model().to_dot() == _golden("vocabulary.dot")


@needs_dot
@pytest.mark.parametrize("name", ["backward_small.dot", "scoped_forward_lr.dot",
                                  "vocabulary.dot"])
def test_golden_files_are_valid_graphviz(name):
    done = subprocess.run(["dot", "-Tsvg"], input=_golden(name).encode(), capture_output=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr.decode()


def _laid_out(text: str) -> dict[str, tuple[float, float]]:
    """Where Graphviz puts each node's centre (points, y up), by its label's first line."""
    done = subprocess.run(["dot", "-Tjson"], input=text.encode(), capture_output=True,
                          timeout=30, check=True)
    return {o["label"].split("\\n")[0]: tuple(map(float, o["pos"].split(",")))
            for o in json.loads(done.stdout)["objects"] if "pos" in o}


@needs_dot
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_inputs_stand_in_the_order_the_code_wrote_them(rankdir):
    """NOTE [reading order]: micrograd's ``h = (x * w).relu(); y = h + x * x`` drew w before x
    (Graphviz's crossing minimisation is free to swap two leaves); each op's inputs now stand
    in argument order, left to right (top to bottom when laid out left to right)."""
    with dg.record() as rec:
        x = dg.tensor([2.0], requires_grad=True, name="x")
        w = dg.tensor([-3.0], requires_grad=True, name="w")
        h = (x * w).relu()
        (h + x * x).sum().backward()
    for detail in (True, False):
        at = _laid_out(rec.to_dot(rankdir=rankdir, detail=detail))
        if rankdir == "TB":
            assert at["x"][0] < at["w"][0], at
        else:
            assert at["x"][1] > at["w"][1], at  # y up: x above w


def test_an_input_read_by_many_boxes_does_not_pull_them():
    """NOTE [reading order]: the weights an RNN cell reads at every iteration (here by the first
    iteration, the rolled-up box and the last) get weight 0 on their edges; others keep it."""
    dg.manual_seed(0)
    cell = dg.nn.RNNCell(2, 3)
    with dg.record() as rec:
        h = dg.zeros(1, 3)
        for _ in range(6):
            h = cell(dg.randn(1, 2), h)
    text = rec.to_dot()
    shared = [line for line in text.splitlines() if 'weight="0"' in line]
    weights = {node.id for node in rec.nodes.values() if node.kind == "parameter"}
    assert len(weights) == 4
    assert {int(re.match(r"\s*n(\d+) ->", line).group(1)) for line in shared} == weights
    assert all(line.count("->") == 1 for line in shared)
    assert 'newrank="true"' in text and 'ordering="in"' in text


# ----------------------------------------------------------------------------- determinism


def _program(values):
    x = dg.tensor(values, requires_grad=True, name="x")
    w = Weight(np.full((2, 2), 0.5, dtype=np.float32), requires_grad=True)
    h = x
    for _ in range(6):
        with dg.scope("cell"):
            h = (h @ w).tanh() + x
    with dg.scope("head"):
        loss = (h * h).mean()
    loss.backward()


def test_the_same_code_gives_the_same_dot():
    dots = []
    for _ in range(2):
        with dg.record() as rec:
            _program([[1.0, -2.0]])
        dots.append(rec.to_dot())
        dots.append(rec.to_dot(collapse=True, rankdir="LR", values=False))
    assert dots[0] != dots[2]  # really two graphs, with other ids...
    assert renumber(dots[0]) == renumber(dots[2])  # ...drawn identically
    assert renumber(dots[1]) == renumber(dots[3])
    assert rec.to_dot() == dots[2]  # and drawing twice changes nothing


def test_node_names_are_n_and_the_stable_id():
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True, name="y")
        z = (x.exp() * 3.0).sum()
    dot = rec.to_dot()
    drawn = nodes_of(dot)
    assert set(drawn) == {f"n{i}" for i in rec.nodes}
    assert f"n{x.id}" in drawn and f"n{z.id}" in drawn
    # a later render of a grown graph keeps the names of the nodes already drawn
    with dg.record() as rec2:
        a = dg.tensor([1.0], requires_grad=True)
        b = a.exp()
        first = set(nodes_of(rec2.to_dot()))
        b.sin()
        second = set(nodes_of(rec2.to_dot()))
    assert first < second and first == {f"n{a.id}", f"n{b.id}"}


# ----------------------------------------------------------------------------- options


def _small():
    with dg.record() as rec:
        x = dg.tensor([1.5, 2.5], requires_grad=True, name="x")
        y = (x * x).sum()
        y.backward()
    return rec, x, y


def test_values_grads_and_shapes_options():
    rec, x, y = _small()
    full = label_lines(node_of(rec.to_dot(), x.id))
    assert full == ["x", "(2,)", "[1.5, 2.5]", "grad (summed) [3, 5]"]
    assert label_lines(node_of(rec.to_dot(values=False), x.id)) == [
        "x", "(2,)", "grad (summed) [3, 5]"
    ]
    assert label_lines(node_of(rec.to_dot(grads=False), x.id)) == ["x", "(2,)", "[1.5, 2.5]"]
    assert label_lines(node_of(rec.to_dot(shapes=False), x.id)) == ["x", "[1.5, 2.5]",
                                                                     "grad (summed) [3, 5]"]
    bare = rec.to_dot(values=False, grads=False, shapes=False)
    assert label_lines(node_of(bare, x.id)) == ["x"]
    assert label_lines(node_of(bare, y.id)) == ["y", "Sum"]  # the variable over its op
    # without gradients, no edge carries the gradient overlay
    assert all("penwidth" not in attrs for attrs in edges_of(rec.to_dot(grads=False)).values())
    assert any("penwidth" in attrs for attrs in edges_of(rec.to_dot()).values())


def test_an_op_whose_output_was_never_seen_shows_no_shape():
    """dot.shape_known: no dtype and shape () is an output never seen (a node of PyTorch's
    found by walking back), not a scalar: no "()" line that would read as one."""
    from dyngraph.graph import OP, Node

    unseen = Node(1, OP, "TBackward0", None, (), "", "cpu", True, ())
    scalar = Node(2, OP, "SumBackward0", None, (), "float32", "cpu", True, (3.0,))
    assert not dot_module.shape_known(True, unseen.dtype, unseen.shape)
    assert dot_module.shape_known(True, scalar.dtype, scalar.shape)
    assert dot_module.shape_known(False, "", ())  # a leaf's shape is always known
    assert dot_module._label_lines(unseen, True, True, True, None) == ["TBackward0"]
    assert dot_module._label_lines(scalar, True, True, True, None) == ["SumBackward0", "()", "[3]"]


def test_rankdir_option():
    rec, _, _ = _small()
    graph_attrs = [attrs for names, attrs in statements(rec.to_dot()) if names == ["graph"]]
    assert graph_attrs[0]["rankdir"] == "TB"
    graph_attrs = [a for names, a in statements(rec.to_dot(rankdir="LR")) if names == ["graph"]]
    assert graph_attrs[0]["rankdir"] == "LR"


@pytest.mark.parametrize(
    "options",
    [{"rankdir": "sideways"}, {"rankdir": "lr; URL=x"}, {"max_nodes": 0}, {"max_nodes": -5},
     {"collapse": 3}],
)
def test_invalid_options_raise_value_error(options):
    rec, _, _ = _small()
    with pytest.raises(ValueError):
        rec.to_dot(**options)


# ----------------------------------------------------------------------------- vocabulary


def test_leaf_parameter_constant_op_and_output_are_drawn_apart():
    w = Weight(np.array([2.0], dtype=np.float32), requires_grad=True)
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True, name="x")
        y = x * w + 1.0
        const_id = next(n.id for n in rec.nodes.values() if n.kind == "constant")
        before = rec.to_dot()
        z = y.exp()
    after = rec.to_dot()
    nodes = nodes_of(after)
    leaf, param, const = nodes[f"n{x.id}"], nodes[f"n{w.id}"], nodes[f"n{const_id}"]
    op, out = nodes[f"n{y.id}"], nodes[f"n{z.id}"]
    assert (leaf["shape"], leaf["fillcolor"]) == ("box", SKY_BLUE) and "rounded" in leaf["style"]
    assert (param["shape"], param["fillcolor"], param["color"]) == ("box", PALE_BLUE, BLUE)
    assert "bold" in param["style"] and label_lines(param)[0] == "parameter"
    assert const["shape"] == "box" and "dashed" in const["style"] and const["color"] == GREY
    assert label_lines(const)[:2] == ["const", "[1]"]
    assert op["shape"] == "ellipse" and label_lines(op)[:2] == ["y", "Add"]
    # the output (nothing consumes it) has the double border; the others have none
    assert (out["peripheries"], out["color"]) == ("2", GREEN)
    assert all("peripheries" not in a for name, a in nodes.items() if name != f"n{z.id}")
    # before Exp consumed it, the Add was the output
    assert node_of(before, y.id)["peripheries"] == "2"


def test_saved_for_backward_then_freed():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        w = dg.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        loss = y.sum()
        saved = node_of(rec.to_dot(), y.id)
        loss.backward()
    freed = node_of(rec.to_dot(), y.id)
    assert saved["color"] == ORANGE and "saved 16 B" in label_lines(saved)
    assert "freed" not in label_lines(saved) and "dashed" not in saved["style"]
    assert "freed" in label_lines(freed) and "dashed" in freed["style"]
    assert not [line for line in label_lines(freed) if line.startswith("saved")]
    assert freed["color"] == GREY
    assert ("freed", (y.id,)) in rec.timeline


@pytest.mark.parametrize(
    ("norm", "level"),
    [(0.0, 0), (1e-6, 0), (5e-4, 0), (1e-3, 0), (0.02, 1), (0.5, 2), (1.0, 3), (9.9, 3),
     (10.0, 4), (1e6, 4), (math.inf, 4), (math.nan, 4)],
)
def test_gradient_magnitude_levels_are_absolute_decades(norm, level):
    assert magnitude_level(norm) == level


def test_gradient_overlay_colours_edges_by_absolute_magnitude():
    def model(norms):
        rec = Recording()
        rec.nodes[100] = Node(100, "op", "Add", None, (), "float32", "cpu", True, (0.0,),
                              order=len(norms))
        for i, norm in enumerate(norms):
            rec.nodes[i + 1] = Node(i + 1, "leaf", "leaf", f"x{i}", (), "float32", "cpu", True,
                                    (1.0,), order=i, grad_preview=(norm,), grad_norm=norm)
            rec.edges.append(Edge(i + 1, 100, i))
        return edges_of(rec.to_dot())

    norms = [5e-4, 0.05, 0.5, 5.0, 500.0]
    edges = model(norms)
    colours = [edges[(f"n{i + 1}", "n100")]["color"] for i in range(len(norms))]
    assert colours == list(GRAD_SCALE)
    widths = [float(edges[(f"n{i + 1}", "n100")]["penwidth"]) for i in range(len(norms))]
    assert widths == sorted(widths) and len(set(widths)) == len(widths)
    # absolute: the 0.5 gradient looks the same next to a huge one or alone
    assert model([0.5])[("n1", "n100")]["color"] == GRAD_SCALE[2]
    assert model([0.5, 1e9])[("n1", "n100")]["color"] == GRAD_SCALE[2]


def test_gradient_overlay_of_a_live_backward():
    with dg.record() as rec:
        x = dg.tensor([3.0, 4.0], requires_grad=True)  # grad of (x * 0.01).sum(): norm 0.0141
        loss = (x * 0.01).sum()
        loss.backward()
    mul = next(n for n in rec.nodes.values() if n.op == "Mul")
    edge = edges_of(rec.to_dot())[(f"n{x.id}", f"n{mul.id}")]
    assert edge["color"] == GRAD_SCALE[magnitude_level(rec.nodes[x.id].grad_norm)]
    assert edge["color"] == GRAD_SCALE[1]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomalies_are_filled_vermillion_with_a_word():
    with dg.record() as rec:
        x = dg.tensor([math.nan, 1.0], requires_grad=True)
        y = x * 2
        z = dg.tensor([0.0, 1.0], requires_grad=True).log()
        fine = dg.tensor([1.0], requires_grad=True).exp()
    nodes = nodes_of(rec.to_dot())
    assert nodes[f"n{y.id}"]["fillcolor"] == VERMILLION and "NaN" in label_lines(
        nodes[f"n{y.id}"])
    assert nodes[f"n{z.id}"]["fillcolor"] == VERMILLION and "Inf" in label_lines(
        nodes[f"n{z.id}"])
    assert nodes[f"n{fine.id}"]["fillcolor"] != VERMILLION
    assert not {"NaN", "Inf"} & set(label_lines(nodes[f"n{fine.id}"]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_nan_gradient_is_an_anomaly_too():
    with dg.record() as rec:
        x = dg.tensor([0.0, 1.0], requires_grad=True)
        y = x.sqrt() * 0.0  # d sqrt(x) / dx at 0 is inf; times 0: NaN
        y.sum().backward()
    leaf = node_of(rec.to_dot(), x.id)
    assert leaf["fillcolor"] == VERMILLION and "NaN" in label_lines(leaf)


def test_gradcheck_verdicts_are_shown():
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True)
        y = x.exp()
        z = y.sin()
    rec.mark(y.id, "pass")
    rec.mark(z.id, "fail")
    nodes = nodes_of(rec.to_dot())
    assert "gradcheck ok" in label_lines(nodes[f"n{y.id}"])
    assert "gradcheck FAILED" in label_lines(nodes[f"n{z.id}"])
    assert not [ln for ln in label_lines(nodes[f"n{x.id}"]) if ln.startswith("gradcheck")]


def test_device_badge_only_off_the_cpu():
    rec = _vocabulary_model()
    nodes = nodes_of(rec.to_dot())
    assert label_lines(nodes["n2"])[-2:] == ["cuda:0", "0.12 ms"]
    assert not [ln for ln in label_lines(nodes["n1"]) if ln.startswith(("cpu", "cuda"))]


@pytest.mark.gpu
@pytest.mark.skipif(not dg.cuda.is_available(), reason="CuPy with a CUDA GPU is not available")
def test_device_badge_of_a_live_gpu_tensor():
    with dg.record() as rec:
        x = dg.tensor([1.0], requires_grad=True, device="cuda")
        y = x.exp()
    assert [ln for ln in label_lines(node_of(rec.to_dot(), y.id)) if ln.startswith("cuda")]


def test_per_op_time_only_when_timed():
    with dg.record() as rec:
        x = dg.tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
        with dg.events.timing():
            timed = x.exp()
        untimed = x.sin()
    assert rec.nodes[timed.id].elapsed is not None and rec.nodes[timed.id].elapsed > 0
    assert rec.nodes[untimed.id].elapsed is None
    nodes = nodes_of(rec.to_dot())
    shown = [ln for ln in label_lines(nodes[f"n{timed.id}"]) if ln.endswith(" ms")]
    assert len(shown) == 1
    assert float(shown[0][:-3]) == pytest.approx(rec.nodes[timed.id].elapsed * 1e3, rel=1e-2)
    assert not [ln for ln in label_lines(nodes[f"n{untimed.id}"]) if ln.endswith(" ms")]


# ----------------------------------------------------------------------------- collapsing


def _scoped():
    with dg.record() as rec:
        x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
        with dg.scope("encoder"):
            h = x * 3.0
            h = h + 1.0  # with their two constants: 4 nodes in encoder
        with dg.scope("decoder"), dg.scope("inner"):
            h = h.tanh()
        out = h.sum()
    return rec, x, out


def test_scopes_are_clusters_when_not_collapsed():
    rec, _, _ = _scoped()
    dot = rec.to_dot()
    labels = [a["label"] for names, a in statements(dot) if names == ["graph"] and "label" in a]
    assert sorted(labels) == ["decoder", "encoder", "inner"]
    assert len([n for n in nodes_of(dot) if n.startswith("n")]) == len(rec.nodes)


def test_collapse_true_draws_each_top_level_scope_as_one_box():
    rec, x, out = _scoped()
    dot = rec.to_dot(collapse=True)
    nodes = nodes_of(dot)
    boxes = {label_lines(a)[0]: (name, label_lines(a)) for name, a in nodes.items()
             if not name.startswith("n")}
    assert set(boxes) == {"encoder", "decoder"}
    assert boxes["encoder"][1][1] == "4 nodes" and boxes["decoder"][1][1] == "1 node"
    assert set(n for n in nodes if n.startswith("n")) == {f"n{x.id}", f"n{out.id}"}
    edges = edges_of(dot)
    enc, dec = boxes["encoder"][0], boxes["decoder"][0]
    assert set(edges) == {(f"n{x.id}", enc), (enc, dec), (dec, f"n{out.id}")}
    assert "cluster" not in dot


def test_collapse_by_name_collapses_just_that_scope():
    rec, x, out = _scoped()
    dot = rec.to_dot(collapse="encoder")
    nodes = nodes_of(dot)
    groups = [label_lines(a)[0] for name, a in nodes.items() if not name.startswith("n")]
    assert groups == ["encoder"]
    tanh = next(n for n in rec.nodes.values() if n.op == "Tanh")
    assert f"n{tanh.id}" in nodes  # decoder stays drawn, in its clusters
    assert "inner" in [a.get("label") for names, a in statements(dot) if names == ["graph"]]
    assert len(nodes_of(rec.to_dot(collapse=("encoder", "decoder")))) == 4


# ----------------------------------------------------------------------------- the budget

_GROUP_COUNT = re.compile(r"(\d+) nodes?\b")  # a group box's count: its last "N nodes"
_HIDDEN = re.compile(r"^(\d+) nodes? hidden$")


def _account(dot: str) -> tuple[int, int, int, int]:
    """(boxes drawn, model nodes drawn one by one, nodes in group boxes, nodes hidden)."""
    nodes = {name: a for name, a in nodes_of(dot).items() if name != "dropped"}
    single = sum(1 for name in nodes if re.fullmatch(r"n\d+", name))
    grouped = hidden = 0
    for name, attrs in nodes.items():
        if re.fullmatch(r"n\d+", name):
            continue
        lines = label_lines(attrs)
        match = _HIDDEN.match(lines[0])
        if match:
            hidden += int(match.group(1))
        else:
            grouped += int(_GROUP_COUNT.findall(" ".join(lines))[-1])
    return len(nodes), single, grouped, hidden


def _chain(n: int) -> Recording:
    with dg.record() as rec:
        h = dg.tensor([0.5], requires_grad=True)
        for _ in range(n - 1):
            h = h.sin()
    return rec


def _many_scopes(n: int) -> Recording:
    with dg.record() as rec:
        h = dg.tensor([0.5], requires_grad=True)
        for i in range(n - 1):
            with dg.scope(f"step{i}"):
                h = h.sin()
    return rec


@pytest.mark.parametrize("max_nodes", [1, 2, 3, 10, 50, 99])
@pytest.mark.parametrize("build", [_chain, _many_scopes])
def test_the_node_budget_is_kept_and_every_node_is_accounted_for(build, max_nodes):
    rec = build(100)
    dot = rec.to_dot(max_nodes=max_nodes, summarize_loops=False)
    boxes, single, grouped, hidden = _account(dot)
    assert boxes <= max_nodes, f"{boxes} boxes drawn for max_nodes={max_nodes}"
    assert single + grouped + hidden == len(rec.nodes) == 100
    if hidden:
        assert f"{hidden} nodes hidden" in dot
    else:
        assert "nodes hidden" not in dot


def test_the_hidden_note_counts_exactly_and_keeps_the_newest():
    rec = _chain(100)
    dot = rec.to_dot(max_nodes=10, summarize_loops=False)
    nodes = nodes_of(dot)
    shown = sorted(int(name[1:]) for name in nodes if re.fullmatch(r"n\d+", name))
    assert len(shown) == 9
    assert shown == sorted(rec.nodes)[-9:]  # the newest: nearest the loss
    assert label_lines(nodes["hidden"])[0] == "91 nodes hidden"
    assert rec.to_dot(max_nodes=100, summarize_loops=False).count("nodes hidden") == 0


# ----------------------------------------------------------------------------- loops


def _unrolled(iterations: int, constant: bool = False) -> tuple[Recording, list[list[int]]]:
    with dg.record() as rec:
        h = dg.tensor([0.5, 0.25], requires_grad=True, name="h0")
        w = dg.tensor([0.9, 1.1], requires_grad=True, name="w")
        per_iteration = []
        for _ in range(iterations):
            before = set(rec.nodes)
            h = (h * (0.9 if constant else w)).tanh()
            per_iteration.append(sorted(set(rec.nodes) - before))
        h.sum()
    return rec, per_iteration


def test_repeated_loop_iterations_are_summarised():
    rec, iterations = _unrolled(10)
    dot = rec.to_dot()
    nodes = nodes_of(dot)
    summaries = [a for name, a in nodes.items() if "iterations" in a["label"]]
    assert len(summaries) == 1
    lines = label_lines(summaries[0])
    # the widget's words (widgets/src/structure.js loopLines): the 8 iterations between the
    # first and the last, the line they ran on, and how many nodes the box holds
    assert re.fullmatch("\u00d78 iterations, line \\d+", lines[0])
    assert lines[1] == f"{sum(len(it) for it in iterations[1:-1])} nodes"
    for node_id in iterations[0] + iterations[-1]:
        assert f"n{node_id}" in nodes  # first and last iteration stay visible
    for middle in iterations[1:-1]:
        assert not [i for i in middle if f"n{i}" in nodes]
    # the summary is wired in between
    summary = next(name for name, a in nodes.items() if "iterations" in a["label"])
    edges = edges_of(dot)
    assert (f"n{iterations[0][-1]}", summary) in edges
    assert (summary, f"n{iterations[-1][0]}") in edges


def test_constants_of_summarised_iterations_go_into_the_summary():
    rec, iterations = _unrolled(10, constant=True)  # each iteration makes its own constant
    nodes = nodes_of(rec.to_dot())
    assert any("\u00d78 iterations" in a["label"] for a in nodes.values())
    for node_id in iterations[0] + iterations[-1]:
        assert f"n{node_id}" in nodes
    left_out = [rec.nodes[i].op for it in iterations[1:-1] for i in it if f"n{i}" in nodes]
    assert not left_out, f"nodes of the summarised iterations still drawn: {left_out}"


def test_loop_summaries_can_be_turned_off():
    rec, _ = _unrolled(10)
    dot = rec.to_dot(summarize_loops=False)
    assert "iterations" not in dot
    assert set(nodes_of(dot)) == {f"n{i}" for i in rec.nodes}


# ----------------------------------------------------------------------------- rendering


@needs_graphviz
def test_to_svg_returns_svg():
    rec, x, _ = _small()
    svg = rec.to_svg()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    assert f"<title>n{x.id}</title>" in svg


@needs_graphviz
def test_rich_display_is_svg_where_dot_exists():
    rec, _, _ = _small()
    bundle = rec._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]
    assert bundle["text/plain"] == repr(rec)
    bundle = dg.draw(dg.tensor([1.0], requires_grad=True).exp())._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_without_any_graphviz_display_is_the_dot_source_and_a_one_line_hint(
        monkeypatch, no_jupyter_extra):
    rec, _, _ = _small()
    monkeypatch.setattr(graphviz_render.shutil, "which", lambda name: None)
    monkeypatch.setattr(graphviz_render, "_wheel_available", lambda: False)
    bundle = rec._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    text = bundle["text/plain"]
    assert rec.to_dot() in text
    hints = [line for line in text.splitlines() if "Graphviz" in line]
    assert len(hints) == 1 and "live widget" in hints[0]
    assert "Traceback" not in text
    with pytest.raises(RuntimeError, match="Graphviz"):
        rec.to_svg()
    drawn = dg.draw(dg.tensor([1.0], requires_grad=True).exp())._repr_mimebundle_()
    assert "live widget" in drawn["text/plain"] and "digraph" in drawn["text/plain"]


def test_a_graphviz_timeout_is_a_clear_error(monkeypatch):
    rec, _, _ = _small()
    monkeypatch.setattr(graphviz_render.shutil, "which", lambda name: "/usr/bin/dot")

    def too_slow(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], kwargs.get("timeout"))

    monkeypatch.setattr(graphviz_render.subprocess, "run", too_slow)
    with pytest.raises(RuntimeError, match="max_nodes"):
        rec.to_svg(timeout=0.5)
    bundle = rec._repr_mimebundle_()  # display does not raise either
    assert "max_nodes" in bundle["text/plain"] and "image/svg+xml" not in bundle


def _handmade_chain(n: int) -> Recording:
    """A chain of ``n`` nodes with no source lines (so no loop summary can shorten it)."""
    rec = Recording()
    for i in range(1, n + 1):
        rec.nodes[i] = Node(i, "op" if i > 1 else "leaf", "Sin" if i > 1 else "leaf", None, (1,),
                            "float32", "cpu", True, (0.5,), order=i - 1)
        if i > 1:
            rec.edges.append(Edge(i - 1, i, 0))
    return rec


def test_rendering_has_a_timeout_and_never_gets_more_nodes_than_the_budget(monkeypatch):
    rec = _handmade_chain(1000)
    assert _account(rec.to_dot(max_nodes=5000))[0] == 1000  # no budget: all 1000 drawn
    calls = []

    def fake_dot(args, **kwargs):
        calls.append(kwargs)
        return subprocess.CompletedProcess(args, 0, b"<svg></svg>", b"")

    monkeypatch.setattr(graphviz_render.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(graphviz_render.subprocess, "run", fake_dot)
    rec._repr_mimebundle_()
    rec.to_svg()
    x = dg.tensor([0.5], requires_grad=True)
    h = x
    for _ in range(999):
        h = h.sin()
    dg.draw(h)._repr_mimebundle_()
    assert len(calls) == 3
    for kwargs in calls:
        assert kwargs["timeout"] and kwargs["timeout"] <= 60
        boxes, _, _, _ = _account(kwargs["input"].decode())
        assert boxes <= dot_module.DEFAULT_MAX_NODES


@functools.cache  # the recordings are only read: two tests share the 10 000-node one
def _mlp_recording(target: int) -> Recording:
    """A training-like recording of about ``target`` nodes: scoped layers, a loss, backward."""
    rng = np.random.default_rng(0)
    with dg.record() as rec:
        x = dg.tensor(rng.standard_normal((4, 8)).astype(np.float32), name="x")
        w1 = Weight(rng.standard_normal((8, 8)).astype(np.float32) * 0.1, requires_grad=True)
        w2 = Weight(rng.standard_normal((8, 1)).astype(np.float32) * 0.1, requires_grad=True)
        while len(rec.nodes) < target:
            with dg.scope("layer1"):
                h = (x @ w1).relu()
            with dg.scope("layer2"):
                out = h @ w2
            with dg.scope("loss"):
                loss = (out * out).mean()
            loss.backward()
    return rec


# NOTE: what keeps a big recording quick to draw is checked here as behaviour (what Graphviz is
# handed does not grow with the recording); how long drawing takes is a benchmark's to measure.


@needs_graphviz
@pytest.mark.parametrize("size", [50, 500, 10_000])
def test_the_default_view_accounts_for_every_node_and_graphviz_draws_each_box(size):
    rec = _mlp_recording(size)
    assert size <= len(rec.nodes) < size + 10
    dot = rec.to_dot()
    _, single, grouped, hidden = _account(dot)
    assert single + grouped + hidden == len(rec.nodes)  # drawn, rolled up, or counted as hidden
    svg = rec.to_svg()
    assert svg.count('class="node"') == len(nodes_of(dot))  # with any "not recorded" note


def test_a_long_training_run_is_drawn_as_a_picture_the_size_of_a_few_steps():
    few_steps = _account(_mlp_recording(50).to_dot())[0]  # under the node budget
    many_steps = _account(_mlp_recording(10_000).to_dot())[0]
    # 200 times the nodes, the same picture, not one cut at the budget: repeated iterations roll
    # up into one box (plus one partial iteration and the "nodes not recorded" note)
    assert many_steps <= few_steps + 3


@needs_graphviz
def test_a_10000_node_chain_is_drawn_within_the_budget():
    rec = _chain(10_000)
    svg = rec.to_svg(summarize_loops=False)  # no loop summary: the budget alone
    assert svg.count('class="node"') == dot_module.DEFAULT_MAX_NODES
    _, single, _, hidden = _account(rec.to_dot(summarize_loops=False))
    assert single + hidden == 10_000


def test_numbers_are_written_as_python_formats_them_half_to_even():
    """dot.py's formatters are the only place numbers become text (the live view sends their
    texts to the page): floats with four significant digits, rounded half to even on the exact
    binary value, exponent form outside 1e-4 .. 1e4; ints and bools as str writes them."""
    assert [format_value(v) for v in (0.125, 0.0125, 2.5, 12345.0, 1e-05, 0.0001, -0.0)] == [
        "0.125", "0.0125", "2.5", "1.234e+04", "1e-05", "0.0001", "-0"]
    # exact ties go to the even digit; 9.9995 is a little below its decimal in binary
    assert [format_value(v) for v in (1.0625, 10.625, 10.875, 9.9995)] == [
        "1.062", "10.62", "10.88", "9.999"]
    assert [format_value(v) for v in (math.nan, math.inf, -math.inf)] == ["nan", "inf", "-inf"]
    assert [format_value(v) for v in (3, 2**70, True, np.float64(0.1))] == [
        "3", "1180591620717411303424", "True", "0.1"]
    assert format_values((1.0, 2.5, 3), total=4) == "[1, 2.5, 3, ...]"
    assert [format_bytes(n) for n in (0, 1023, 1024, 1280, 1536, 3 * 2**20, 5 * 2**40)] == [
        "0 B", "1023 B", "1.0 KB", "1.2 KB", "1.5 KB", "3.0 MB", "5120.0 GB"]
    assert [format_elapsed(s) for s in (0.000123456, 0.0125, 2.0)] == [
        "0.123 ms", "12.5 ms", "2e+03 ms"]
