"""The shared fixture that keeps the widget's DOT statements identical to dot.py's.

The live widget composes node, edge and cluster statements in the browser (widgets/src/
vocabulary.js) from node data and ``dot.vocabulary()``; Python's ``dot.py`` is the reference.
This module makes the cases - nodes of every kind and state, hostile names, odd numbers - with
the statement Python writes for each, into ``widgets/test/fixtures/vocabulary.json``, which the
JavaScript test replays. ``tests/test_vocabulary_fixture.py`` fails when the committed file is
stale; regenerate it with ``python tests/vocabulary_fixture.py``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from dyngraph import dot
from dyngraph.jupyter.view import node_data
from dyngraph.record import Node
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
    ((1.0, math.nan), "float32", (2,)),
    ((math.inf, -math.inf), "float32", (2,)),
    ((1, 2, 3), "int64", (3,)),
    ((True, False), "bool", (2,)),
    ((2,), "int", ()),
    ((0.5,), "float", ()),
]


def _cases() -> list[dict[str, Any]]:
    cases = []
    node_id = 1
    for kind in ("leaf", "parameter", "constant", "op"):
        for name in NAMES:
            for preview, dtype, shape in PREVIEWS[:4] if kind != "constant" else PREVIEWS[8:]:
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
                                    "summed": state["summed"]}
            shown = dataclasses.replace(shown, freed=state["freed"])
            js_state["freed"] = state["freed"]
        out.append({"node": node_data(node), "state": js_state,
                    "statement": dot.node_statement(shown)})
    return out


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
    values = [0.0, -0.0, 1.0, 1.5, -2.25, 0.1, 0.125, 3.14159, 123.456, 1234.5, 12345.6,
              99999.0, 1e-4, 1e-5, 1.2345e-5, 6.02e23, -1e16, 0.000123456, math.nan, math.inf,
              -math.inf, 2.0 / 3.0, 1e-300, 1.7976931348623157e308]
    numbers = []
    for precision in (3, 4):
        for value in values:
            numbers.append({"value": json_number(value), "precision": precision,
                            "text": format(value, f".{precision}g")})
    return {
        "note": "generated by tests/vocabulary_fixture.py from dyngraph/dot.py: do not edit",
        "vocabulary": dot.vocabulary(),
        "nodes": _cases(),
        "edges": edges,
        "clusters": clusters,
        "numbers": numbers,
    }


def render() -> str:
    return json.dumps(build(), ensure_ascii=True, indent=1, allow_nan=False) + "\n"


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(render(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
