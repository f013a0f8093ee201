"""The shared fixture that keeps the widget's DOT statements identical to dot.py's.

The live widget composes node statements in the browser (widgets/src/vocabulary.js), cluster
headers (widgets/src/structure.js) and gradient edge styles (widgets/src/view/drawing.js) from
node data and ``dot.vocabulary()``; Python's ``dot.py`` is the reference.
This module makes the cases - nodes of every kind and state, hostile names, odd numbers - with
the statement Python writes for each, into ``widgets/test/fixtures/vocabulary.json``, which the
JavaScript test replays. The node data carries the texts of its numbers as the live view
sends them (``wire.display_texts``): the browser places them and formats no number itself. The
``fold`` case does the same for the browser's fold of the event spine (widgets/src/events.js):
a snapshot as GraphView packs it, and the nodes, edges and steps that ``Recording`` makes of the
same events, with their texts. ``tests/test_vocabulary_fixture.py`` fails when
the committed file is stale; regenerate it with ``python tests/vocabulary_fixture.py``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from dyngraph import dot, events
from dyngraph.jupyter.rules import derivative_rules
from dyngraph.jupyter.view import GraphView
from dyngraph.jupyter.wire import preview_texts
from dyngraph.record import Node, Recording, shared_path
from dyngraph.recording_io import json_number, json_values

FIXTURE = Path(__file__).resolve().parents[1] / "widgets" / "test" / "fixtures" / "vocabulary.json"

NAMES = [
    None, "x", "W1", "<script>alert(1)</script>", '" URL="javascript:alert(1)', "back\\",
    "\\N and \\G", "a & b &amp; c", "line one\nline two", "tab\there", "bell\x07", "del\x7f",
    "c1\x85", "lone \udcff surrogate", "non\ufffecharacter", "emoji \U0001f600 ok",
    "<<table><tr><td>x</td></tr></table>>", "m" * 130, "é" * 119 + "\U0001f600" * 3,
]
PREVIEWS = [
    ((), "float32", ()),
    ((1.0, 2.5), "float32", (2,)),
    ((0.1234567, -1e-05, 123456.0, 1e16, -2.5e-07, 99999.0), "float64", (2, 3)),
    ((0.0, -0.0, 1.0005, 3.14159, 0.0001234, 1234.5678), "float32", (3, 4)),
    # ties and near-ties of the fourth digit, and float32 values widened to Python floats
    ((0.125, 1.0625, 9.9995, 99995.0, float(np.float32(0.1)), float(np.float32(2.675))),
     "float32", (6,)),
    ((1.0, math.nan), "float32", (2,)),
    ((math.inf, -math.inf), "float32", (2,)),
    ((1, 2, 3), "int64", (3,)),
    ((True, False), "bool", (2,)),
    ((2,), "int", ()),
    ((0.5,), "float", ()),
    ((), "", ()),  # an op whose output was never seen: no shape shown (dot.shape_known)
]


def _cases() -> list[dict[str, Any]]:
    cases = []
    node_id = 1
    for kind in ("leaf", "parameter", "constant", "op"):
        for name in NAMES:
            for preview, dtype, shape in PREVIEWS[:5] if kind != "constant" else PREVIEWS[9:]:
                op = {"leaf": "leaf", "parameter": "parameter", "constant": "constant"}.get(
                    kind, "Mul" if name is None else (name or "Op")[:20]
                )
                node = Node(node_id, kind, op, name, shape, dtype, "cpu",
                            kind != "constant", preview, scope=("s",), where=("f.py", 3, "g", 2),
                            order=node_id, saved_bytes=(node_id * 37) % 5000 if kind == "op" else 0)
                cases.append(node)
                node_id += 1
    for preview, dtype, shape in PREVIEWS:
        cases.append(Node(node_id, "op", "Tanh", None, shape, dtype, "cuda:0", True, preview,
                          saved_bytes=2048 * 1024 + 7, recomputed=True, elapsed=0.000123456))
        node_id += 1
    states = [
        None,
        {"preview": (0.5, 0.25), "norm": 0.559, "summed": False, "freed": False},
        {"preview": (1.0, math.nan), "norm": math.nan, "summed": True, "freed": False},
        {"preview": (1e-7,), "norm": 1e-7, "summed": False, "freed": True},
        {"preview": (math.inf,), "norm": math.inf, "summed": True, "freed": True},
        {"preview": None, "norm": None, "summed": False, "freed": True},
    ]
    out = []
    for i, node in enumerate(cases):
        state = states[i % len(states)]
        shown = node
        js_state: dict[str, Any] = {"grad": None, "freed": False}
        if state is not None:
            if state["preview"] is not None:
                shown = dataclasses.replace(shown, grad_preview=state["preview"],
                                            grad_norm=state["norm"], accumulated=state["summed"])
                js_state["grad"] = {"preview": json_values(state["preview"]),
                                    "norm": json_number(state["norm"]),
                                    "summed": state["summed"],
                                    "previewText": list(preview_texts(state["preview"])),
                                    "normText": dot.format_value(state["norm"])}
            shown = dataclasses.replace(shown, freed=state["freed"])
            js_state["freed"] = state["freed"]
        out.append({"node": node_data(node), "state": js_state,
                    "statement": dot.node_statement(shown)})
        if i % 3 == 1:  # the widget's compact labels: previews cut to a few numbers
            out.append({"node": node_data(node), "state": js_state,
                        "limit": dot.COMPACT_VALUES,
                        "statement": dot.node_statement(shown, limit=dot.COMPACT_VALUES)})
    return out


def node_data(node: Node) -> dict[str, Any]:
    """A node as the browser holds it once folded (widgets/src/events.js; PROTOCOL.md)."""
    where = node.where
    return {
        "id": node.id, "kind": node.kind, "op": node.op, "name": node.name,
        "shape": list(node.shape), "dtype": node.dtype, "device": node.device,
        "preview": json_values(node.preview), "previewText": list(preview_texts(node.preview)),
        "scope": list(node.scope),
        "file": where[0] if where else None, "line": where[1] if where else None,
        "cell": where[3] if where else None,
        "loop": where[5] if where and len(where) > 5 else None, "saved": node.saved_bytes,
        "savedText": dot.format_bytes(node.saved_bytes) if node.saved_bytes else None,
        "recomputed": node.recomputed, "elapsed": node.elapsed,
        "elapsedText": None if node.elapsed is None else dot.format_elapsed(node.elapsed),
        "rule": derivative_rules().get(node.op, "") if node.kind == "op" else None,
    }


def fold_case() -> dict[str, Any]:
    """Hand-made events (fixed, so the file stays put) with what the browser must fold them
    into: announced-again nodes, inputs never announced, gradients of unknown nodes, NaN and
    Inf, a scope, a version bump, freed buffers, the line that called backward() (in a later
    cell), a backward with no line and a failed backward."""
    where = events.SourceLine("/tmp/ipykernel_1/7.py", 2, "<module>", 7)
    backward_line = events.SourceLine("/tmp/ipykernel_1/8.py", 1, "<module>", 8)
    nan, inf = math.nan, math.inf

    def node(id_, op, inputs, preview, name=None, scope=(), saved=0, shape=(2,)):
        return events.NodeCreated(id_, op, inputs, shape, "float32", "cpu", True, op == "leaf",
                                  name, scope, where, preview, saved, False, None)

    spine = [
        node(1, "leaf", (), (0.0, 1.0), name="<b>x</b>"),
        node(2, "constant", (), (2.0,), shape=()),
        node(3, "Log", (1,), (-inf, 0.0), scope=("layer",), saved=8),
        node(4, "Mul", (3, 1), (nan, 0.0), scope=("layer",), saved=16),
        node(1, "leaf", (), (0.0, 1.0), name="<b>x</b>"),  # announced again
        node(5, "Mul", (4, 2), (nan, 0.0)),
        node(6, "Sum", (5, 99), (nan,), shape=()),  # input 99 was never announced
        events.BackwardStarted(root=6, retain_graph=False, create_graph=False,
                               where=backward_line),
        events.GradComputed(6, (1.0,), 1.0, False),
        events.EdgeGrad(6, 5, 0, (1.0, nan), (3,)),
        events.EdgeGrad(6, 99, 1, (1.0,), None),  # to an input never announced
        events.GradComputed(5, (1.0, 1.0), math.sqrt(2.0), False),
        events.GradComputed(42, (1.0,), 1.0, False),  # a node never announced
        events.GradComputed(1, (inf, 1.0), inf, True),
        events.GraphFreed((3, 4, 77)),
        events.BackwardFinished(6),
        events.VersionBumped(1, 1),
        events.BackwardStarted(root=6, retain_graph=False, create_graph=False),  # no line
        events.BackwardFailed(6, "RuntimeError: Trying to backward through the graph twice"),
    ]
    view = GraphView()
    view._replay(spine)
    recording = Recording()
    for event in spine:
        recording(event)
    steps = []
    for kind, *rest in recording.timeline:
        if kind == "grad":
            grad = next(e for e in spine if e.kind == "grad_computed" and e.id == rest[0])
            steps.append(["grad", grad.id, json_values(grad.preview), json_number(grad.norm),
                          grad.accumulated, list(preview_texts(grad.preview)),
                          dot.format_value(grad.norm)])
        elif kind == "edge_grad":
            node, input_id, position, preview, reduced_from = rest
            steps.append([kind, node, input_id, position, json_values(preview),
                          None if reduced_from is None else list(reduced_from),
                          list(preview_texts(preview))])
        elif kind == "backward_started":  # the line as the browser holds it, file as shared
            root, line = rest
            steps.append([kind, root, None if line is None else {
                "file": shared_path(line[0]), "line": line[1], "cell": line[3],
                "loop": line[5]}])
        else:
            steps.append([kind, *(list(x) if isinstance(x, tuple) else x for x in rest)])
    return {
        "header": {"fields": view.header["fields"], "rules": view.header["rules"]},
        "snapshot": {"base64": base64.b64encode(view.snapshot).decode("ascii")},
        # files as the view names them (NOTE [safe to share] in record.py)
        "nodes": [{**node_data(n), "file": shared_path(n.where[0]) if n.where else None}
                  for n in recording.nodes.values()],
        "edges": [[e.src, e.dst, e.position] for e in recording.edges
                  if e.src in recording.nodes],
        "steps": steps,
    }


def build() -> dict[str, Any]:
    norms = [None, 0.0, 1e-9, 0.00099, 0.001, 0.0123, 0.5, 1.0, 9.99, 10.0, 1e6, math.inf,
             math.nan]
    edges = [
        {"src": 1, "dst": 2 + i, "norm": json_number(norm),
         "statement": dot.edge_statement("n1", f"n{2 + i}", norm)}
        for i, norm in enumerate(norms)
    ]
    clusters = [
        {"index": i, "name": name, "lines": dot.cluster_header(i, name)}
        for i, name in enumerate(n for n in NAMES if n is not None)
    ]
    return {
        "note": "generated by tests/vocabulary_fixture.py from dyngraph/dot.py: do not edit",
        "vocabulary": dot.vocabulary(),
        "nodes": _cases(),
        "edges": edges,
        "clusters": clusters,
        "fold": fold_case(),
    }


def render() -> str:
    return json.dumps(build(), ensure_ascii=True, indent=1, allow_nan=False) + "\n"


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(render(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
