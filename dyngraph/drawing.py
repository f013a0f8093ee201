"""``dg.draw(tensor)``: the diagram of the graph behind a tensor, walked back from its
``grad_fn`` with the spine's one walk (spine/walk.py), with no recording needed. It sits above
the engines it draws (dyngraph's and PyTorch's) and above the Recording it fills, so that the
Recording (record.py) knows no engine: it is a fold of events, whoever reported them.
"""

from __future__ import annotations

import sys
from typing import Any

from .record import Recording
from .spine import events


def _is_torch_tensor(value: Any) -> bool:
    """Is ``value`` a PyTorch tensor, or of a subclass of it (a learner's too)? Never imports
    torch: where torch is not imported, there is no torch tensor."""
    torch = sys.modules.get("torch")
    return isinstance(value, getattr(torch, "Tensor", ()))


def draw(tensor: Any, **options: Any) -> Any:
    """A diagram of the graph behind ``tensor``, built by walking back from its ``grad_fn``
    (no recording needed; values of intermediates are not known then, only their shapes)."""
    recording = from_tensor(tensor)
    recording._capture_sources()  # made in this process, now (NOTE [own source text])
    return _TensorDiagram(recording, options)


class _TensorDiagram:
    """What dg.draw returns: displays as the diagram; ``.to_dot()``, ``.to_svg()``."""

    def __init__(self, recording: Recording, options: dict[str, Any]) -> None:
        self.recording = recording
        self.options = options

    def to_dot(self) -> str:
        return self.recording.to_dot(**self.options)

    def to_svg(self, timeout: float = 10.0) -> str:
        """The diagram as SVG (see Recording.to_svg)."""
        return self.recording.to_svg(timeout=timeout, **self.options)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from .dot import mimebundle

        return mimebundle(self.recording, repr(self), **self.options)

    def __repr__(self) -> str:
        # NOTE: not Recording.summary(): that counts the backward passes of a timeline, and a
        # graph walked back from a tensor has none; the gradients it shows are the .grad its
        # leaves hold from passes run before (it said "0 backward passes" above them).
        model = self.recording
        text = f"<diagram: {len(model.nodes)} nodes, {len(model.edges)} edges, walked back " \
               "from the tensor"
        holding = sum(1 for node in model.nodes.values() if node.grad_preview is not None)
        if holding == 1:
            text += "; 1 leaf shows its .grad"
        elif holding:
            text += f"; {holding} leaves show their .grad"
        return text + ">"


def from_tensor(tensor: Any) -> Recording:
    """The model of the graph behind ``tensor``: the node_created events its engine tells a
    view that did not see the graph built (one iterative walk back from its grad_fn), folded
    into a Recording as a watching one folds them, with the gradients its leaves hold and the
    nodes whose saved tensors were freed, as they stand now."""
    if _is_torch_tensor(tensor):
        from .torch import from_tensor as from_torch_tensor

        return from_torch_tensor(tensor)
    from .function import graph_behind, graph_events
    from .tensor import Tensor

    found = graph_behind([tensor])  # Function nodes and leaf Tensors
    recording = Recording.of_graph(graph_events(found, [tensor]))
    for node_id, item in found.items():
        node = recording.nodes[node_id]
        if isinstance(item, Tensor):
            if item._grad is not None:
                node.grad_preview, node.grad_norm = events.preview_and_norm(item._grad.array)
        else:
            node.freed = item.saved_arrays is None
    return recording
