"""dg.diff: two runs of the same code in one diagram, with what exists in only one run marked.

Nodes are matched by where they were made, never by id: the k-th node that an op made on a line
in a scope in run A is the k-th node that op made on that line in that scope in run B
(``match_keys``). What is left over is drawn in the marks of the visual vocabulary (dot.py):
"only in A" dashed vermillion, "only in B" bold blue; at every level: a box of the map (dot.py
NOTE [map]) holding nodes of one run only says how many, in that run's mark ("differs inside"
when it holds both).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from .dot import Drawing, drawing, legend
from .graph import Edge, Graph, Node
from .graphviz_render import picture, render_svg


def match_keys(model: Graph) -> dict[int, tuple]:
    """A key per node that is the same in two runs of the same code: (kind, op, file, line,
    scope, occurrence) - the k-th node made by that op on that line in that scope - never the
    id. The scope tells the calls of a recursion apart (nn/module.py NOTE [scopes]): over two
    parse trees, the k-th Cat of the code is a different phrase in each run, and the Cat of
    call 1.2 is the same phrase only where both trees have that call."""
    seen: Counter = Counter()
    keys = {}
    for node in sorted(model.nodes.values(), key=lambda n: n.order):
        where = node.where or ("", 0)
        base = (node.kind, node.op, node.name, where[0], where[1], tuple(node.scope))
        keys[node.id] = (*base, seen[base])
        seen[base] += 1
    return keys


class GraphDiff:
    """Two runs of the same code in one diagram: nodes and edges that exist in only one run
    are marked ("only in A" dashed vermillion, "only in B" bold blue). A node of both runs shows run
    A's values, and both shapes where they differ ("A (4, 4) -> B (4, 8)").

    >>> dg.diff(rec_short, rec_long)
    """

    def __init__(self, a: Graph, b: Graph) -> None:
        self.a, self.b = a, b
        keys_a, keys_b = match_keys(a), match_keys(b)
        by_key_b = {key: node_id for node_id, key in keys_b.items()}
        only_a = {i for i, key in keys_a.items() if key not in by_key_b}
        common = set(keys_a.values()) & set(keys_b.values())
        self.merged = Graph()
        self.marks: dict[int, str] = {}
        new_id: dict[tuple, int] = {}
        for node in sorted(a.nodes.values(), key=lambda n: n.order):
            new_id[keys_a[node.id]] = node.id
            self.merged.nodes[node.id] = node
            if node.id in only_a:
                self.marks[node.id] = "only in A"
                continue
            twin = b.nodes[by_key_b[keys_a[node.id]]]
            if tuple(twin.shape) != tuple(node.shape):  # drawn "A (4, 4) -> B (4, 8)", not mixed
                self.merged.nodes[node.id] = dataclasses.replace(node, shape_in_b=twin.shape)
        next_id = max(list(a.nodes) + list(b.nodes) + [0]) + 1
        for node in sorted(b.nodes.values(), key=lambda n: n.order):
            key = keys_b[node.id]
            if key in common:
                continue
            copy = Node(**{**node.__dict__, "id": next_id, "order": len(self.merged.nodes)})
            new_id[key] = next_id
            self.merged.nodes[next_id] = copy
            self.marks[next_id] = "only in B"
            next_id += 1
        runs = []
        for model, keys in ((a, keys_a), (b, keys_b)):
            runs.append({
                (new_id[keys[e.src]], new_id[keys[e.dst]], e.position)
                for e in model.edges if e.src in keys and e.dst in keys
            })
        edges_a, edges_b = runs
        self.merged.edges = [Edge(*e) for e in sorted(edges_a | edges_b)]
        self.edge_marks: dict[tuple[int, int], str] = {}
        for src, dst, _ in edges_a - edges_b:
            self.edge_marks[(src, dst)] = "only in A"
        for src, dst, _ in edges_b - edges_a:
            self.edge_marks[(src, dst)] = "only in B"
        self.only_in_a = sum(1 for m in self.marks.values() if m == "only in A")
        self.only_in_b = sum(1 for m in self.marks.values() if m == "only in B")

    def drawing(self, **options: Any) -> Drawing:
        """The diagram with what it is made of (options: see dyngraph.dot.to_dot; loops are
        not rolled up unless asked, so every node of either run can be seen)."""
        options.setdefault("summarize_loops", False)
        title = f"A and B: {self.only_in_a} nodes only in A, {self.only_in_b} only in B"
        return drawing(self.merged, marks=self.marks, edge_marks=self.edge_marks, title=title,
                       **options)

    def to_dot(self, **options: Any) -> str:
        """The DOT source of the diagram (options: see dyngraph.dot.to_dot)."""
        return self.drawing(**options).dot

    def to_svg(self, timeout: float = 10.0, **options: Any) -> str:
        """The diagram as SVG (see graphviz_render.render_svg)."""
        return render_svg(self.to_dot(**options), timeout=timeout)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # NOTE: no browser fallback: the widget's player cannot show the "only in" marks
        drawn = self.drawing()
        return picture(drawn.dot, repr(self), legend=legend(drawn.styles))

    def __repr__(self) -> str:
        return f"<diff: {self.only_in_a} nodes only in A, {self.only_in_b} only in B>"


def diff(a: Any, b: Any = None, *args: Any, **kwargs: Any) -> Any:
    """One diagram of two runs of the same code on different inputs (see GraphDiff).

    NOTE [two diffs] ``torch.diff(x, n=1, dim=-1, prepend=None, append=None)`` is the
    differences of a tensor's neighbours, and code from PyTorch tutorials calls it. Two graphs
    are never a Tensor, so ``dg.diff`` given a Tensor is that one (functions.diff)."""
    from .functions import diff as tensor_diff
    from .tensor import Tensor

    if isinstance(a, Tensor):
        return tensor_diff(a, *(() if b is None else (b,)), *args, **kwargs)
    if args or kwargs or b is None:
        raise TypeError("dg.diff(graph_a, graph_b) compares two graphs (dg.draw / record results);"
                        " for torch.diff, the differences of neighbours, pass a Tensor first")
    return GraphDiff(a, b)
