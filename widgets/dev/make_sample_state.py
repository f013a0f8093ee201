"""Write sample_state.json: a small recording in the GraphView protocol (../PROTOCOL.md), with
DOT statements made by dyngraph.dot (the one visual vocabulary), for the dev harness and tests.

    python widgets/dev/make_sample_state.py      # from the repository root

Nine nodes in nested scopes, a hostile tensor name, a backward pass, freed buffers and a failed
second backward. Hand-made (no engine run), so it stays fixed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from dyngraph.dot import (
    GREY,
    LIGHT_GREY,
    OUTPUT_ATTRIBUTES,
    attributes,
    cluster_header,
    edge_statement,
    graph_header,
    node_statement,
)
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
loss.backward()  # a second time: the buffers are gone
"""
RULES = {
    "Mul": "z = x * y;  dz/dx = y,  dz/dy = x",
    "Add": "z = x + y;  dz/dx = 1,  dz/dy = 1",
    "Exp": "z = exp(x);  dz/dx = exp(x) = z",
    "Sum": "z = sum(x);  dz/dx = 1 (broadcast back to x's shape)",
}


def node(id_, kind, op, name, shape, preview, line, scope=(), saved=0, grad=None, norm=None):
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
        grad_preview=grad,
        grad_norm=norm,
    )


# id: (node as created, its gradient (preview, norm) or None)
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
GRADS = {
    9: ((1.0,), 1.0),
    7: ((2.0,), 2.0),
    6: ((2.0, 2.0), 2.83),
    5: ((3.644, 0.2992), 3.66),
    4: ((3.644, 0.2992), 3.66),
    3: ((3.644, 0.2992), 3.66),
    2: ((3.644, 0.5984), 3.69),
    1: ((1.822, -0.2992), 1.85),
}
EDGES = [(1, 4, 0), (2, 4, 1), (4, 5, 0), (3, 5, 1), (5, 6, 0), (6, 7, 0), (7, 9, 0), (8, 9, 1)]
FREED = [4, 6, 9]
LINES = SOURCE.splitlines()


def statements(n: Node) -> dict:
    grad = GRADS.get(n.id)
    with_grad = replace(n, grad_preview=grad[0], grad_norm=grad[1]) if grad else None
    freed = replace(with_grad or n, freed=True) if n.id in FREED else None
    return {
        "forward": node_statement(n),
        "grad": node_statement(with_grad) if with_grad else None,
        "freed": node_statement(freed) if freed else None,
    }


def info(n: Node) -> dict:
    line = n.where[1]
    grad = GRADS.get(n.id)
    return {
        "title": n.op if n.kind == "op" else n.kind,
        "name": n.name,
        "shape": list(n.shape),
        "dtype": n.dtype,
        "device": n.device,
        "value": "[" + ", ".join(f"{v:.4g}" for v in n.preview) + "]",
        "grad": ("[" + ", ".join(f"{v:.4g}" for v in grad[0]) + "]") if grad else None,
        "saved": f"{n.saved_bytes} B" if n.saved_bytes else None,
        "where": f"cell [{CELL}], line {line}: {LINES[line - 1].strip()}",
        "rule": RULES.get(n.op),
    }


def main() -> None:
    nodes = [
        {
            "id": n.id,
            "kind": n.kind,
            "op": n.op,
            "scope": list(n.scope),
            "file": FILE,
            "line": n.where[1],
            "cell": CELL,
            "dot": statements(n),
            "info": info(n),
        }
        for n in NODES
    ]
    norms = {i: g[1] for i, g in GRADS.items()}
    edges = [
        {
            "src": s,
            "dst": d,
            "pos": p,
            "dot": {
                "plain": edge_statement(f"n{s}", f"n{d}"),
                "grad": edge_statement(f"n{s}", f"n{d}", norms[s]) if s in norms else None,
            },
        }
        for s, d, p in EDGES
    ]
    backward = [9, 7, 6, 5, 4, 3, 2, 1]
    steps = [["node", n.id] for n in NODES]
    steps += [["backward_started", 9]] + [["grad", i] for i in backward]
    steps += [["freed", FREED], ["backward_finished", 9], ["backward_started", 9]]
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
        "nodes": nodes,
        "edges": edges,
        "updates": [],
        "clusters": {"layer1": cluster_header(0, "layer1"), "layer1/act": cluster_header(1, "act")},
        "sources": {FILE: SOURCE},
        "steps": steps,
        "dropped": {"nodes": 0, "steps": 0},
    }
    state = {
        "header": {
            "lines": graph_header("TB"),
            "output_attrs": OUTPUT_ATTRIBUTES,
            "hidden_attrs": attributes(
                shape="note", style="filled", fillcolor=LIGHT_GREY, color=GREY
            ),
        },
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
