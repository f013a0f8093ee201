"""GraphView: the live graph widget (the Python half; the browser half is widgets/src/).

A GraphView subscribes to the event spine and folds events into a Recording, like
``dg.record()``; in addition it sends every new node (as compact data), edge and timeline step to
the browser as *deltas* in synced traits (see widgets/PROTOCOL.md), together with the visual
vocabulary of ``dyngraph.dot`` as a table. The browser composes the DOT of the graph at any point
of the timeline from those - exactly as dot.py does (a shared fixture checks it) - so stepping
and scrubbing happen entirely in the page, even while the kernel is busy, and the kernel does
little more per op than record it.

Deltas are coalesced to at most ``rate`` per second and the final state is always delivered;
the recording is bounded, so a loop emitting 100 000 events neither freezes the tab nor trips
Jupyter's IOPub rate limits.
"""

from __future__ import annotations

import inspect
import json
import linecache
import time
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import dot, events, ops
from ..record import Edge, Node, Recording
from ..recording_io import json_number, json_values

STATIC = Path(__file__).parent / "static"
MAX_SOURCE_CHARS = 20_000  # source text sent per file (notebook cells are short)


def _bundle() -> Any:
    path = STATIC / "graphview.js"
    if path.exists():
        return path
    return (  # a working checkout always has the bundle; say how to make it if not
        "export default { render({ el }) { el.textContent = 'dyngraph: the widget bundle is "
        "missing (cd widgets && npm install && npm run build)'; } };"
    )


def _css() -> Any:
    path = STATIC / "graphview.css"
    return path if path.exists() else ""


class GraphView(anywidget.AnyWidget):
    """A live diagram of the graphs your code builds, with playback of forward and backward.

    >>> view = GraphView()          # displays empty; or use dg.watch() / %%dyngraph
    >>> view.attach()               # listen to the event spine
    >>> loss = (x * w).sum(); loss.backward()
    >>> view.detach()
    """

    _esm = _bundle()
    _css = _css()

    header = traitlets.Dict().tag(sync=True)
    # NOTE: snapshot and delta are JSON encoded as UTF-8 *bytes*: ipywidgets sends bytes as a
    # binary buffer, as they are. (A dict trait would be walked element by element looking for
    # buffers, and a str would be escaped again inside the message's own JSON.)
    snapshot = traitlets.Bytes(b"{}").tag(sync=True)
    delta = traitlets.Bytes(b"{}").tag(sync=True)
    options = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        *,
        title: str = "",
        pace: float = 0.0,
        rate: float = 10.0,
        max_nodes: int = 2_000,
        max_events: int = 20_000,
        max_visible: int = 300,
        tween_max_nodes: int = 60,
        rankdir: str = "TB",
    ) -> None:
        super().__init__()
        if pace < 0 or rate <= 0:
            raise ValueError("pace must be >= 0 seconds and rate > 0 updates per second")
        self.recording = Recording(max_nodes=max_nodes, max_events=max_events)
        self.pace = float(pace)
        self.interval = 1.0 / rate
        self.header = {"lines": dot.graph_header(rankdir), "vocabulary": dot.vocabulary()}
        self.options = {"tween_max_nodes": tween_max_nodes, "max_nodes": max_visible,
                        "title": title, "speed": 1.0}
        self._seq = 0
        self._full = _empty_delta()  # everything sent so far, as one delta (the snapshot)
        self._pending = _empty_delta()
        self._last_flush = 0.0
        self._last_line: tuple | None = None
        self._handle: Any = None
        self.on_msg(self._on_message)

    # ------------------------------------------------------------------ listening

    def attach(self) -> GraphView:
        """Start listening to the event spine (held weakly: a dropped view stops listening)."""
        if self._handle is None:
            self._handle = events.subscribe(self._on_event)
        return self

    def detach(self) -> None:
        """Stop listening and deliver the final state."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        self.flush()

    def close(self) -> None:
        self.detach()
        super().close()

    def _on_event(self, event: Any) -> None:
        before = len(self.recording.timeline)
        dropped = self.recording.dropped_nodes
        self.recording(event)
        if (
            event.kind == "node_created"
            and self.recording.dropped_nodes == dropped  # not over the recording's budget
            and event.id in self.recording.nodes
        ):
            edges = self.recording.edges[len(self.recording.edges) - len(event.inputs):]
            self._add_node(self.recording.nodes[event.id], edges)
            self._pace(event.where)
        steps = self.recording.timeline
        if len(steps) > before:
            self._pending["steps"].extend(self._json_step(step) for step in steps[before:])
        if time.monotonic() - self._last_flush >= self.interval:
            self.flush()

    def _pace(self, where: Any) -> None:
        """With pace > 0, each new source line waits so a fast cell can be watched."""
        if not self.pace or where is None:
            return
        line = (where.file, where.line)
        if line != self._last_line:
            self._last_line = line
            self.flush()
            time.sleep(self.pace)

    # ------------------------------------------------------------------ building deltas

    def _add_node(self, node: Node, edges: list[Edge]) -> None:
        pending = self._pending
        file = node.where[0] if node.where is not None else None
        sent = self._full["sources"]
        if file is not None and file not in sent and file not in pending["sources"]:
            text = "".join(linecache.getlines(file))[:MAX_SOURCE_CHARS]
            if text:
                pending["sources"][file] = text
        pending["nodes"].append(node_data(node))
        nodes = self.recording.nodes
        pending["edges"].extend(
            [e.src, e.dst, e.position] for e in edges if e.src in nodes  # (inputs not recorded
        )  # when the recording was full are left out)

    def _json_step(self, step: tuple) -> list:
        """A timeline step as JSON data; a gradient step carries the gradient's preview."""
        if step[0] == "grad":
            node = self.recording.nodes[step[1]]
            return ["grad", node.id, json_values(node.grad_preview),
                    json_number(node.grad_norm), node.accumulated]
        return [step[0], *(list(x) if isinstance(x, tuple) else x for x in step[1:])]

    # ------------------------------------------------------------------ sending

    def flush(self) -> None:
        """Send what is pending as one delta (and fold it into the snapshot)."""
        pending = self._pending
        if not any(pending[key] for key in ("nodes", "edges", "steps")):
            self._last_flush = time.monotonic()
            return
        self._seq += 1
        pending["seq"] = self._seq
        pending["dropped"] = {"nodes": self.recording.dropped_nodes,
                              "steps": self.recording.dropped_events}
        _merge(self._full, pending)
        self._pending = _empty_delta()
        self.delta = _to_json(pending)
        self._last_flush = time.monotonic()

    def resync(self) -> None:
        """Set the snapshot to everything so far (what a late or out-of-step view starts from)."""
        self.flush()
        self.snapshot = _to_json(self._full)
        self.send_state("snapshot")  # also when unchanged: the view that asked must hear back

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "resync":
            self.resync()

    # ------------------------------------------------------------------ other front ends

    @classmethod
    def from_recording(cls, recording: Recording, **options: Any) -> GraphView:
        """A view that replays a recording (live or loaded with dg.load_recording)."""
        view = cls(**options)
        view.recording.nodes.update(recording.nodes)
        view.recording.edges = list(recording.edges)
        edges_into: dict[int, list[Edge]] = {}
        for edge in recording.edges:
            edges_into.setdefault(edge.dst, []).append(edge)
        for node in sorted(recording.nodes.values(), key=lambda n: n.order):
            view._add_node(node, edges_into.get(node.id, []))
        view.recording.timeline = list(recording.timeline)
        view._pending["steps"] = [view._json_step(step) for step in recording.timeline]
        view.resync()
        return view

    def state(self) -> dict[str, Any]:
        """Everything a standalone page needs (see save_html)."""
        self.flush()
        return {"header": self.header, "snapshot": self._full, "options": self.options}

    def save_html(self, path: Any) -> None:
        """One self-contained HTML file with the recording and the player (works offline)."""
        from .html import write_html

        write_html(self.state(), path, title=self.options.get("title") or "dyngraph")

    def __repr__(self) -> str:
        return (
            f"GraphView(nodes={len(self.recording.nodes)}, edges={len(self.recording.edges)}, "
            f"steps={len(self.recording.timeline)})"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget where widgets work; a static SVG (or DOT and a hint) everywhere else."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        fallback = dot.mimebundle(self.recording, repr(self))
        data = {**fallback, **data, "text/plain": fallback["text/plain"]}
        return data, metadata


def _to_json(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.encode("ascii")


def _empty_delta() -> dict[str, Any]:
    return {"nodes": [], "edges": [], "sources": {}, "steps": []}


def _merge(full: dict[str, Any], delta: dict[str, Any]) -> None:
    """Fold a delta into the snapshot."""
    for key in ("nodes", "edges", "steps"):
        full[key].extend(delta[key])
    full["sources"].update(delta["sources"])
    full["seq"] = delta["seq"]
    full["dropped"] = delta["dropped"]


def node_data(node: Node) -> dict[str, Any]:
    """What the browser needs to draw and inspect a node (see widgets/PROTOCOL.md)."""
    where = node.where
    return {
        "id": node.id, "kind": node.kind, "op": node.op, "name": node.name,
        "shape": list(node.shape), "dtype": node.dtype, "device": node.device,
        "preview": json_values(node.preview), "scope": list(node.scope),
        "file": where[0] if where else None, "line": where[1] if where else None,
        "cell": where[3] if where else None, "saved": node.saved_bytes,
        "recomputed": node.recomputed, "elapsed": node.elapsed,
        "rule": derivative_rule(node.op) if node.kind == "op" else None,
    }


_RULES: dict[str, str] = {}


def derivative_rule(op: str) -> str:
    """The first line of the op's docstring: its local derivative (``z = x * y;  dz/dx = y``)."""
    if op not in _RULES:
        cls = getattr(ops, op, None)
        doc = inspect.getdoc(cls) if isinstance(cls, type) else None
        _RULES[op] = doc.splitlines()[0] if doc else ""
    return _RULES[op]
