"""The graph model: what every drawing, file and diff of a graph is made of.

Nodes (tensors, constants, op outputs, each of one kind) and the edges between them, as plain
data with no arrays. The ``Recording`` (record.py) folds the engine's events into this model;
dot.py draws it, recording_io.py writes and reads it, graph_diff.py compares two of it, the
torch source (torch.py) builds it from PyTorch's ``grad_fn`` graph. This module is the floor they
all stand on: it imports none of them (tests/test_layering.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

# The kinds of node a diagram distinguishes (see dot.py for how each is drawn).
LEAF, PARAMETER, CONSTANT, OP = "leaf", "parameter", "constant", "op"


@dataclass
class Node:
    """One node of the model: a leaf, a parameter, a constant, or the output of an op."""

    id: int
    kind: str  # LEAF, PARAMETER, CONSTANT or OP
    op: str  # the op's name ("Mul") for OP nodes; the kind otherwise
    name: str | None
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    preview: tuple  # the first few values
    scope: tuple[str, ...] = ()
    where: tuple | None = None  # the line that made it: events.SourceLine's fields
    order: int = 0  # creation order within the recording
    saved_bytes: int = 0  # bytes the op saved for backward
    grad_preview: tuple | None = None
    grad_norm: float | None = None
    accumulated: bool = False  # its gradient summed several contributions
    freed: bool = False  # its saved buffers were released by backward
    recomputed: bool = False  # made again in backward by dg.checkpoint
    elapsed: float | None = None  # seconds its forward took (inside dg.events.timing())
    version: int = 0  # in-place modifications seen
    check: str | None = None  # a gradcheck verdict: "pass" or "fail"
    shape_in_b: tuple | None = None  # dg.diff: its shape in run B, where that differs from A's

    @property
    def anomaly(self) -> str | None:
        """'nan' or 'inf' when the value or the gradient preview has one, else None."""
        for values in (self.preview, self.grad_preview or ()):
            for v in values:
                if isinstance(v, float) and not math.isfinite(v):
                    return "nan" if math.isnan(v) else "inf"
        return None


class Edge(NamedTuple):
    """``src`` is input number ``position`` of ``dst`` (immutable, and cheap to make)."""

    src: int
    dst: int
    position: int


@dataclass
class Graph:
    """A graph model: its nodes by id (in creation order) and its edges. A ``Recording`` is one,
    folded from events; a diff's merge of two runs (graph_diff.py) is one built directly."""

    nodes: dict[int, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    dropped_nodes: int = 0  # nodes that ran but were not kept (a recording's budget)
    # a live view's oldest backward passes let go for its newest, and their nodes
    # (jupyter/kept.py NOTE [the newest passes]); a recording drops none
    dropped_passes: int = 0
    dropped_pass_nodes: int = 0
