"""Write sample_state.json: a small recording in the folded form of the GraphView protocol
(../PROTOCOL.md: node data, edges and steps, as widgets/src/events.js folds the events), with
the vocabulary table and graph header of dyngraph.dot, for the dev harness and the widget's
tests.

    python widgets/dev/make_sample_state.py      # from the repository root

Nine nodes in nested scopes, a hostile tensor name, a backward pass, freed buffers and a failed
second backward called in the next cell. Hand-made (no engine run), so it stays fixed.
"""

from __future__ import annotations

import json
from pathlib import Path

from dyngraph.dot import format_bytes, format_value, graph_header, vocabulary
from dyngraph.record import Node

FILE = "/tmp/ipykernel_1/123.py"
CELL = 5
SOURCE = """x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
w = dg.Parameter([0.5, -1.0], name="<img src=x onerror=alert(1)>")
b = dg.Parameter([0.1, 0.1], name="b")
with dg.scope("layer1"):
    y = x * w + b
    with dg.scope("act"):
        h = y.exp()
s = h.sum()
loss = s * 2.0
loss.backward()
"""
LATER_FILE = "/tmp/ipykernel_1/124.py"  # the next cell: a second backward, after the first
LATER_CELL = 6
LATER_SOURCE = """print(loss)
loss.backward()  # a second time: the buffers are gone
"""
RULES = {
    "Mul": "z = x * y;  dz/dx = y,  dz/dy = x",
    "Add": "z = x + y;  dz/dx = 1,  dz/dy = 1",
    "Exp": "z = exp(x);  dz/dx = exp(x) = z",
    "Sum": "z = sum(x);  dz/dx = 1 (broadcast back to x's shape)",
}


def node(id_, kind, op, name, shape, preview, line, scope=(), saved=0):
    return Node(
        id=id_,
        kind=kind,
        op=op,
        name=name,
        shape=shape,
        dtype="float32",
        device="cpu",
        requires_grad=kind != "constant",
        preview=preview,
        scope=scope,
        where=(FILE, line, "<module>", CELL),
        order=id_,
        saved_bytes=saved,
    )


# id: the node as created
NODES = [
    node(1, "leaf", "leaf", "x", (2,), (1.0, 2.0), 1),
    node(2, "parameter", "parameter", "<img src=x onerror=alert(1)>", (2,), (0.5, -1.0), 2),
    node(3, "parameter", "parameter", "b", (2,), (0.1, 0.1), 3),
    node(4, "op", "Mul", None, (2,), (0.5, -2.0), 5, ("layer1",), saved=16),
    node(5, "op", "Add", None, (2,), (0.6, -1.9), 5, ("layer1",)),
    node(6, "op", "Exp", None, (2,), (1.822, 0.1496), 7, ("layer1", "act"), saved=8),
    node(7, "op", "Sum", None, (), (1.972,), 8),
    node(8, "constant", "constant", None, (), (2.0,), 9),
    node(9, "op", "Mul", None, (), (3.944,), 9, saved=8),
]
# id: its gradient (preview, norm, summed), in the order backward computes them
GRADS = {
    9: ((1.0,), 1.0, False),
    7: ((2.0,), 2.0, False),
    6: ((2.0, 2.0), 2.83, False),
    5: ((3.644, 0.2992), 3.66, False),
    4: ((3.644, 0.2992), 3.66, False),
    3: ((3.644, 0.2992), 3.66, False),
    2: ((3.644, 0.5984), 3.69, False),
    1: ((1.822, -0.2992), 1.85, False),
}
EDGES = [(1, 4, 0), (2, 4, 1), (4, 5, 0), (3, 5, 1), (5, 6, 0), (6, 7, 0), (7, 9, 0), (8, 9, 1)]
FREED = [4, 6, 9]


def node_data(n: Node) -> dict:
    """A NODE of the folded form (what widgets/src/events.js makes of a node_created), with
    the texts of its numbers as dot.py writes them (PROTOCOL.md, "Display texts")."""
    return {
        "id": n.id, "kind": n.kind, "op": n.op, "name": n.name, "shape": list(n.shape),
        "dtype": n.dtype, "device": n.device, "preview": list(n.preview),
        "previewText": [format_value(v) for v in n.preview],
        "scope": list(n.scope), "file": FILE, "line": n.where[1], "cell": CELL,
        "saved": n.saved_bytes,
        "savedText": format_bytes(n.saved_bytes) if n.saved_bytes else None,
        "recomputed": n.recomputed, "elapsed": n.elapsed, "elapsedText": None,
        "rule": RULES.get(n.op) if n.kind == "op" else None,
    }


def main() -> None:
    steps = [["node", n.id] for n in NODES]
    steps += [["backward_started", 9, {"file": FILE, "line": 10, "cell": CELL}]]
    steps += [
        ["grad", i, list(preview), norm, summed, [format_value(v) for v in preview],
         format_value(norm)]
        for i, (preview, norm, summed) in GRADS.items()
    ]
    steps += [["freed", FREED], ["backward_finished", 9],
              ["backward_started", 9, {"file": LATER_FILE, "line": 2, "cell": LATER_CELL}]]
    steps += [
        [
            "backward_failed",
            9,
            "RuntimeError: Trying to backward through the graph a second time (or directly "
            "access saved tensors after they have already been freed). Saved intermediate "
            "values of the graph are freed when you call .backward(). Specify "
            "retain_graph=True on the first backward() to keep them.",
        ]
    ]
    snapshot = {
        "seq": 1,
        "nodes": [node_data(n) for n in NODES],
        "edges": [list(e) for e in EDGES],
        "sources": {FILE: SOURCE, LATER_FILE: LATER_SOURCE},
        "kept_lines": {FILE: [[1, 10]], LATER_FILE: [[1, 2]]},
        "steps": steps,
        "dropped": {"nodes": 0, "steps": 0},
    }
    state = {
        "header": {"lines": graph_header("TB"), "vocabulary": vocabulary(), "rules": RULES},
        "snapshot": snapshot,
        "options": {
            "tween_max_nodes": 60,
            "max_nodes": 300,
            "title": "sample: y = x * w + b",
            "speed": 1.0,
        },
    }
    out = Path(__file__).with_name("sample_state.json")
    out.write_text(json.dumps(state, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
