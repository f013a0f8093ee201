"""dg.diff: two runs of the same code on different inputs in one diagram. Nodes (and edges) that
exist in only one run are marked; common nodes are not; matching is by op, source line and
occurrence, never by id (ids differ between runs)."""

from __future__ import annotations

import pytest
from support import edges_of, nodes_of

import dyngraph as dg
import dyngraph.graphviz_render as graphviz_render
from dyngraph.dot import BLUE, VERMILLION
from dyngraph.graph_diff import GraphDiff

NO_GRAPHVIZ = "no Graphviz: neither dot nor the pygraphviz wheel (pip install pygraphviz)"

# ----------------------------------------------------------------------------- the code


def branchy(x):
    """An `if` that takes another branch on negative inputs."""
    if x.sum().item() > 0:
        h = x.exp()
    else:
        h = x.tanh()
    return (h * 3.0).sum()


def loopy(x, steps):
    """A loop that runs ``steps`` times."""
    h = x
    for _ in range(steps):
        h = h.sin()
    return h.sum()


def run(fn, values, *args):
    with dg.record() as rec:
        x = dg.tensor(values, requires_grad=True, name="x")
        fn(x, *args).backward()
    return rec


def ops(rec):
    return sorted(n.op for n in rec.nodes.values())


# ----------------------------------------------------------------------------- nodes


def test_an_if_taking_another_branch_marks_the_branch_nodes():
    a, b = run(branchy, [1.0, 2.0]), run(branchy, [-1.0, -2.0])
    assert not set(a.nodes) & set(b.nodes)  # two runs: no id in common
    diff = dg.diff(a, b)
    assert isinstance(diff, GraphDiff)
    assert (diff.only_in_a, diff.only_in_b) == (1, 1)
    assert repr(diff) == "<diff: 1 nodes only in A, 1 only in B>"
    marked = {diff.merged.nodes[i].op: mark for i, mark in diff.marks.items()}
    assert marked == {"Exp": "only in A", "Tanh": "only in B"}
    dot = diff.to_dot()
    nodes = nodes_of(dot)
    exp_name = next(f"n{i}" for i, n in diff.merged.nodes.items() if n.op == "Exp")
    tanh_name = next(f"n{i}" for i, n in diff.merged.nodes.items() if n.op == "Tanh")
    assert nodes[exp_name]["color"] == VERMILLION and "dashed" in nodes[exp_name]["style"]
    assert nodes[tanh_name]["color"] == BLUE and "bold" in nodes[tanh_name]["style"]
    assert "1 nodes only in A, 1 only in B" in dot  # the title says it too


def test_common_nodes_are_not_marked():
    a, b = run(branchy, [1.0, 2.0]), run(branchy, [-1.0, -2.0])
    diff = dg.diff(a, b)
    common = [i for i in diff.merged.nodes if i not in diff.marks]
    assert sorted(diff.merged.nodes[i].op for i in common) == ["Mul", "Sum", "Sum", "constant",
                                                               "leaf"]
    plain = nodes_of(a.to_dot())  # how run A alone draws them
    drawn = nodes_of(diff.to_dot())
    for node_id in common:
        assert drawn[f"n{node_id}"]["color"] == plain[f"n{node_id}"]["color"]
        assert drawn[f"n{node_id}"]["style"] == plain[f"n{node_id}"]["style"]
        assert "penwidth" not in drawn[f"n{node_id}"] or drawn[f"n{node_id}"][
            "penwidth"] == plain[f"n{node_id}"].get("penwidth")


def test_a_loop_running_longer_marks_the_extra_iterations():
    short, long = run(loopy, [0.5], 2), run(loopy, [0.5], 5)
    diff = dg.diff(short, long)
    assert (diff.only_in_a, diff.only_in_b) == (0, 3)
    assert repr(diff) == "<diff: 0 nodes only in A, 3 only in B>"
    assert sorted(diff.merged.nodes[i].op for i in diff.marks) == ["Sin", "Sin", "Sin"]
    assert set(diff.marks.values()) == {"only in B"}
    assert len(diff.merged.nodes) == len(long.nodes)
    reverse = dg.diff(long, short)
    assert (reverse.only_in_a, reverse.only_in_b) == (3, 0)
    dot = diff.to_dot()
    assert len([a for a in nodes_of(dot).values() if a.get("color") == BLUE]) == 3
    assert "iterations" not in dot  # the loop is drawn in full, so the extra steps show


def test_identical_runs_have_no_differences():
    diff = dg.diff(run(loopy, [0.5], 3), run(loopy, [0.9], 3))
    assert (diff.only_in_a, diff.only_in_b) == (0, 0) and diff.marks == {}
    assert repr(diff) == "<diff: 0 nodes only in A, 0 only in B>"


def test_matching_is_by_source_line_and_occurrence_not_by_id():
    def same_ops_other_lines(x, flip):
        if flip:
            h = x.exp()
            return h.exp().sum()
        h = x.exp()
        return h.exp().sum()

    a, b = run(same_ops_other_lines, [1.0], False), run(same_ops_other_lines, [1.0], True)
    assert ops(a) == ops(b)  # the same ops...
    diff = dg.diff(a, b)
    # ...made on other lines: every op is in one run only (the leaf x is common)
    assert (diff.only_in_a, diff.only_in_b) == (3, 3)
    # and the k-th Exp of a line matches the k-th Exp of that line in the other run
    short, long = run(loopy, [0.5], 2), run(loopy, [0.5], 4)
    diff = dg.diff(short, long)
    sins_b = sorted((n for n in long.nodes.values() if n.op == "Sin"), key=lambda n: n.order)
    assert not {n.id for n in sins_b[:2]} & set(diff.merged.nodes)  # matched, not copied
    copied = [diff.merged.nodes[i] for i in diff.marks]
    assert [n.preview for n in copied] == [n.preview for n in sins_b[2:]]


def test_recording_diff_method_is_dg_diff():
    a, b = run(branchy, [1.0]), run(branchy, [-1.0])
    assert repr(a.diff(b)) == repr(dg.diff(a, b))


# ----------------------------------------------------------------------------- edges


def test_edges_in_only_one_run_are_marked():
    a, b = run(branchy, [1.0, 2.0]), run(branchy, [-1.0, -2.0])
    diff = dg.diff(a, b)
    dot = diff.to_dot(grads=False)  # without the gradient overlay, common edges are plain
    edges = edges_of(dot)
    x = next(i for i, n in diff.merged.nodes.items() if n.op == "leaf")
    exp = next(i for i, n in diff.merged.nodes.items() if n.op == "Exp")
    tanh = next(i for i, n in diff.merged.nodes.items() if n.op == "Tanh")
    common = [e for e in edges if not {f"n{exp}", f"n{tanh}"} & set(e)]
    # plain, but for the weight of an input read by many ops (layout only: dot.py NOTE
    # [reading order])
    looks = {e: {k: v for k, v in attrs.items() if k != "weight"} for e, attrs in edges.items()}
    assert common and all(looks[e] == {} for e in common)
    assert edges[(f"n{x}", f"n{exp}")], "the edge only in A is drawn like a common one"
    assert edges[(f"n{x}", f"n{tanh}")], "the edge only in B is drawn like a common one"
    assert edges[(f"n{x}", f"n{exp}")] != edges[(f"n{x}", f"n{tanh}")]


def test_an_edge_between_common_nodes_that_only_one_run_has_is_marked():
    def rewire(x, late):
        a = x.exp()
        b = x.sin()
        return (a * (b if late else x)).sum()

    first, second = run(rewire, [0.5], False), run(rewire, [0.5], True)
    diff = dg.diff(first, second)
    assert (diff.only_in_a, diff.only_in_b) == (0, 0)  # the same nodes...
    edges = edges_of(diff.to_dot(grads=False))
    marked = [e for e, attrs in edges.items() if set(attrs) - {"weight"}]  # weight: layout only
    assert len(marked) == 2, f"...but x->Mul is only in A and Sin->Mul only in B: {edges}"


# ----------------------------------------------------------------------------- display


def test_diff_display_without_any_graphviz_is_the_dot_and_a_hint(monkeypatch):
    diff = dg.diff(run(branchy, [1.0]), run(branchy, [-1.0]))
    monkeypatch.setattr(graphviz_render.shutil, "which", lambda name: None)
    monkeypatch.setattr(graphviz_render, "_wheel_available", lambda: False)
    bundle = diff._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "digraph" in bundle["text/plain"] and "live widget" in bundle["text/plain"]


@pytest.mark.skipif(graphviz_render.graphviz_command() is None, reason=NO_GRAPHVIZ)
def test_diff_renders_as_svg():
    diff = dg.diff(run(branchy, [1.0]), run(branchy, [-1.0]))
    svg = diff.to_svg()
    assert "<svg" in svg
    assert "<svg" in diff._repr_mimebundle_()["image/svg+xml"]


def two_layers(x, skip):
    """A layer, then (unless ``skip``) a second one fed by the first: the edge into the sum
    comes from a different node in each run."""
    h = x.tanh()
    if not skip:
        h = h.exp()
    return h.sum()


def test_a_node_of_both_runs_shows_both_shapes_where_they_differ():
    a = run(loopy, [1.0, 2.0], 1)
    b = run(loopy, [1.0, 2.0, 3.0, 4.0], 1)
    drawn = GraphDiff(a, b).to_dot()
    assert "A (2,) \u2192 B (4,)" in drawn  # one node, two runs, both shapes
    assert "(4,)" not in drawn.replace("B (4,)", "")  # never run B's shape alone beside A's


def test_the_legend_explains_an_edge_of_one_run_even_when_every_node_is_in_both():
    a = run(two_layers, [1.0, 2.0], True)
    b = run(two_layers, [1.0, 2.0], False)
    change = GraphDiff(a, b)
    assert change.only_in_a == 0 and "only in A" in change.edge_marks.values()
    assert "only in A" in change.drawing().styles


# ----------------------------------------------------------------------------- at every level


def test_two_parse_trees_differ_by_their_calls_and_the_boxes_holding_them_say_so():
    """A recursive TreeNet over two bracketings of the same six words (issue 40): nodes are
    matched by op, line, scope and occurrence, so a phrase of one tree is not taken for another
    phrase of the other (matched by occurrence alone, every node had a twin and only the
    edges differed), and in the map each call's box holding nodes of one run only says how
    many, in that run's mark ("differs inside" holding both)."""
    pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")
    import real_models
    from test_static_pictures import real_model

    a = real_model("treenet", tree=real_models.TREE_A)
    b = real_model("treenet", tree=real_models.TREE_B)
    diff = dg.diff(a, b)
    assert diff.only_in_a > 0 and diff.only_in_b > 0, diff
    assert dg.diff(a, real_model("treenet", tree=real_models.TREE_A)).only_in_a == 0
    drawn = diff.drawing(collapse_over=20)  # a map of the calls
    marked = {box.label[0]: (box.label[-1], box.mark["color"]) for box in drawn.boxes
              if box.kind == "scope" and box.mark}
    # call 1.1 is the word 1 in A, the phrase (1, 2) in B; (1, 2) is in both, as call 1 of A
    # and call 1.1 of B: a phrase is matched by where it is in the tree, not by its words
    # (a word's call holds its index and its embedding: two nodes)
    assert marked["call 1.1"] == ("2 only in A \u00b7 4 only in B", "#CC79A7")
    assert marked["call 2.2.1"] == ("2 only in A", VERMILLION)  # the word 4, under (4, (1, 5))
    assert marked["call 1.1.1"] == ("2 only in B", BLUE)  # the word 1, under (1, 2)
    assert "call 1" not in marked and "call 2" not in marked  # a phrase of two halves in both
    assert {"only in A", "only in B", "differs"} <= set(drawn.styles)
    assert "differs inside" in [entry["name"] for entry in dg.dot.legend(drawn.styles)]
    assert f"{diff.only_in_a} nodes only in A, {diff.only_in_b} only in B" in drawn.dot
