"""Honest budgets: every picture that shows fewer nodes than ran says how many it hid and how
many the recorder never kept, in words a learner reads (dot.py's notes, the widget's notice)."""

from __future__ import annotations

import re

import pytest
from support import label_lines, nodes_of

import dyngraph as dg


def run_20001_nodes(max_nodes=10_000):
    """A leaf and 10 000 x (a constant, a Mul): 20 001 nodes, recorded as ``max_nodes``."""
    x = dg.tensor([1.0], requires_grad=True, name="x")
    with dg.record(max_nodes=max_nodes) as rec:
        y = x
        for _ in range(10_000):
            y = y * 1.0
    return rec


@pytest.fixture(scope="module")
def big():
    return run_20001_nodes()


def test_a_run_recorded_in_part_says_how_many_nodes_the_recorder_never_kept(big):
    assert len(big.nodes) == 10_000 and big.dropped_nodes == 10_001
    lines = label_lines(nodes_of(big.to_dot())["dropped"])
    assert lines[0] == "10001 nodes not recorded"
    assert "they ran" in " ".join(lines) and "the first 10000 nodes" in " ".join(lines)
    assert "dg.record(max_nodes=...)" in " ".join(lines)  # and how to keep more


def test_a_picture_over_its_budget_says_how_many_it_hid_and_why(big):
    dot = big.to_dot(max_nodes=50, summarize_loops=False)
    lines = label_lines(nodes_of(dot)["hidden"])
    assert re.fullmatch(r"\d+ nodes hidden", lines[0])
    hidden = int(lines[0].split()[0])
    drawn = len([n for n in nodes_of(dot) if n.startswith("n")])
    assert drawn + hidden == len(big.nodes)  # every recorded node is drawn or counted
    assert lines[1] == "(the oldest: this picture draws at most 50 boxes)"
    assert "max_nodes=" not in " ".join(lines)  # words, not a parameter name
    assert "10001 nodes not recorded" in dot  # both counts on one picture


def test_the_page_of_a_recording_says_what_the_recorder_never_kept(big):
    pytest.importorskip("anywidget", reason="the jupyter extra is missing")
    from dyngraph.jupyter.view import GraphView, unpack

    view = GraphView.from_recording(big)
    snapshot = unpack(view.snapshot)
    assert snapshot["dropped"] == {"nodes": 10_001, "steps": 0, "passes": 0, "pass_nodes": 0,
                                   "max_nodes": 10_000}  # the widget's notice says it
    assert view.recording.dropped_nodes == 10_001
