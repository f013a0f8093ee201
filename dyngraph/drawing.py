"""``dg.draw(tensor)``: the diagram of the graph behind a tensor, walked back from its
``grad_fn`` with the spine's one walk (spine/walk.py), with no recording needed. It sits above
the engines it draws (dyngraph's and PyTorch's) and above the Recording it fills, so that the
Recording (record.py) knows no engine: it is a fold of events, whoever reported them.
"""

from __future__ import annotations

import sys
from typing import Any

from . import backend
from .graph import LEAF, OP, PARAMETER, Edge, Node
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
    """The model of the graph behind ``tensor`` (iterative walk from its grad_fn)."""
    if _is_torch_tensor(tensor):
        from .torch import from_tensor as from_torch_tensor

        return from_torch_tensor(tensor)
    from .function import nodes_behind
    from .tensor import Tensor

    recording = Recording()
    root = tensor.grad_fn if tensor.grad_fn is not None else tensor
    found = {item.id: item for item in nodes_behind([root])}  # Function nodes and leaf Tensors
    for node_id in sorted(found):  # creation order
        item = found[node_id]
        if isinstance(item, Tensor):
            data = item.array
            kind = PARAMETER if getattr(item, "is_parameter", False) else LEAF
            node = Node(node_id, kind, kind, item.name, tuple(data.shape),
                        events.dtype_name(data.dtype), item.device, item.requires_grad,
                        events.preview(data), order=len(recording.nodes))
            if item._grad is not None:
                node.grad_preview, node.grad_norm = events.preview_and_norm(item._grad.array)
        else:
            is_root = tensor.grad_fn is item
            value = events.preview(tensor.array) if is_root else ()
            saved = item.saved_arrays
            node = Node(node_id, OP, item.name, tensor.name if is_root else None,
                        tuple(item.shape), events.dtype_name(tensor.dtype) if is_root else "",
                        backend.device_of_module(item.xp), True, value, order=len(recording.nodes),
                        saved_bytes=sum(getattr(a, "nbytes", 0) for a in saved or ()),
                        freed=saved is None, where=tuple(item.where) if item.where else None)
            for position, parent in enumerate(item.parents):
                if parent is not None:
                    recording.edges.append(Edge(parent.id, node_id, position))
        recording.nodes[node_id] = node
    return recording
