"""Recording: the graph model (graph.py) folded from the engine's events, as diagrams and the
live widget draw it.

A ``Recording`` subscribes to the event spine and folds events into plain data: nodes (tensors,
constants, op outputs) with their values, gradients and bytes saved for backward; ordered edges;
and the timeline of everything that happened, forward and backward, including the graph being
freed. It holds no arrays (events carry previews), so recording never keeps a graph alive, and
it is bounded: past ``max_nodes`` nodes or ``max_events`` timeline steps, new ones are counted as
dropped instead of stored (NOTE [a recording keeps the first nodes]).

>>> with dg.record() as rec:
...     loss = (x * w).sum()
...     loss.backward()
>>> rec            # a diagram in Jupyter; rec.to_dot() is the DOT source
"""

from __future__ import annotations

import linecache
import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from . import player
from .graph import CONSTANT, LEAF, OP, PARAMETER, Edge, Graph, Node  # noqa: F401 - re-exported
from .recording_format import MAX_SOURCE_CHARS
from .safe_json import valid_text
from .spine import events
from .spine.events import shared_path  # noqa: F401 - re-exported
from .spine.reporter import watching_sources

DEFAULT_MAX_NODES = 10_000
DEFAULT_MAX_EVENTS = 200_000

# NOTE [a recording keeps the first nodes] Past max_nodes, a recording keeps the nodes it has
# and counts the new ones as dropped, where a live view of a training loop drops its oldest
# passes for its newest (jupyter/kept.py NOTE [the newest passes]). The two serve different
# readers. A view is watched now: what matters is the step running, and the shape of a step.
# A recording is read afterwards - saved, diffed, checked, asserted on in a lesson - and its
# documented promise is that what it holds is exactly what ran from the start of the block
# (the first nodes, their timeline, every number), with what did not fit said in one place.
# Dropping its start would change which nodes dg.diff compares and which graph a saved file
# holds, silently, as a run grows; a learner who wants the end of a long run records that part
# (dg.record() around the last steps) or raises max_nodes.

# NOTE [the node budget] A fold of the spine that holds at most max_nodes nodes and max_events
# steps (a Recording; a live view, jupyter/kept.py) keeps events by one rule: a node is kept the
# first time it is announced (a new subscriber makes the engine announce existing tensors
# again), while fewer than max_nodes are kept, and past them it is counted as dropped; what
# happens to a node (its gradient, a new version, a gradient along an edge) is kept only when
# the node (both ends of the edge) is; each step kept takes one of max_events, and past them it
# is counted as dropped. ``admitted`` is the part of the rule that the nodes decide. One
# difference: a recording keeps a node whose step does not fit (the graph has it, the timeline
# does not), where a view, whose page learns of a node only from its row, does not.


def admitted(event: Any, kept: Any) -> bool:
    """Whether a fold that holds the nodes ``kept`` (ids) takes ``event`` as far as its nodes
    go (NOTE [the node budget]): a node it does not hold yet; an event that happens to nodes,
    when it holds them all; any other event."""
    kind = event.kind
    if kind == "node_created":
        return event.id not in kept
    if kind == "grad_computed" or kind == "version_bumped":
        return event.id in kept
    if kind == "edge_grad":
        return event.node in kept and event.input in kept
    return True


SOURCE_CONTEXT = 2  # lines kept around each line that made a node, in recordings and pages

# NOTE [safe to share] A recording, a page or a saved notebook goes to other people: it names a
# source file relative to the working directory (a bare file name when the file is elsewhere),
# never by its absolute path, which tells the learner's home directory; and it keeps the lines
# that made nodes, with SOURCE_CONTEXT lines around them, never the whole file (the rest of a
# script may hold anything). Other lines are kept as empty lines, so line numbers still hold;
# what a viewer shows of them is one "…" row per skipped stretch (``kept_stretches`` says which
# lines were kept). The line that called ``backward()`` counts as a line that made a node: the
# source panel shows it during the backward pass (``BackwardStarted.where``).
#
# NOTE [own source text] A recording carries the source text it shows (``Recording.sources``),
# read from this process's linecache once, when the recording is made (at the end of the
# ``dg.record()`` block, by ``dg.draw``; a live view's ``recording`` carries the text the view
# sent): the text of the lines that made its nodes or called ``backward()``
# (``Recording.source_lines``), as ``source_text`` keeps it. Nothing that
# renders a recording (pages, the notebook display, DOT, the outline) ever opens a file a
# recording names: a loaded recording names files chosen by whoever wrote it (``/etc/passwd``,
# ``/dev/zero``, a FIFO), and the viewer's disk is not theirs to read. A loaded recording shows
# the text it carries, checked against MAX_SOURCE_CHARS, or none (files written before schema 3
# carry none).


def kept_stretches(used: Any, length: int,
                   context: int = SOURCE_CONTEXT) -> list[tuple[int, int]]:
    """The lines a shared source keeps of a file of ``length`` lines, as stretches ``(first,
    last)`` (1-based, inclusive, in order, apart by at least one skipped line): each ``used``
    line with ``context`` lines around it (NOTE [safe to share])."""
    stretches: list[tuple[int, int]] = []
    for line in sorted(set(used)):
        first, last = max(line - context, 1), min(line + context, length)
        if first > last:
            continue
        if stretches and first <= stretches[-1][1] + 1:  # touches the stretch before it
            stretches[-1] = (stretches[-1][0], max(stretches[-1][1], last))
        else:
            stretches.append((first, last))
    return stretches


def shared_source(lines: list[str], used: Any, context: int = SOURCE_CONTEXT) -> str:
    """The text of a source file as a recording or page keeps it: the ``used`` line numbers
    (1-based) with ``context`` lines around each; every other line empty, and nothing after
    the last line kept (NOTE [safe to share])."""
    keep = set()
    for first, last in kept_stretches(used, len(lines), context):
        keep.update(range(first, last + 1))
    last = max(keep, default=0)
    return "".join(
        (lines[i - 1] if lines[i - 1].endswith("\n") else lines[i - 1] + "\n") if i in keep
        else "\n"
        for i in range(1, last + 1)
    )


def source_text(file: str, used: Any) -> str:
    """What a recording or a live view keeps of a source file of *this process* (NOTE [own
    source text]): ``shared_source`` of its lines in linecache, at most MAX_SOURCE_CHARS
    characters. Never called with a file named inside a loaded recording.
    NOTE: as a traceback does, the file is read again when it changed on disk since linecache
    read it (``models.py`` written again and reloaded); a notebook cell's text never changes."""
    linecache.checkcache(file)
    return shared_source(linecache.getlines(file), used)[:MAX_SOURCE_CHARS]


# NOTE [loss and gradient norm per pass] A learner watching a training loop wants the loss and
# the size of the gradient over the steps at hand, beside the graph of one step. Both are read
# off each backward pass's events, with one definition for the recording (``passes()``) and the
# live view's chart (GraphView sends these very records, with their texts):
#
# - the *loss* is the value of the pass's root (``BackwardStarted.root``) when the root holds
#   a single number (its ``node_created`` preview: shape ``()`` or all ones); None otherwise
#   (``y.backward(gradient=...)`` from a tensor), or when the root was never announced;
# - the *gradient norm* is the global norm of this pass's gradients of the leaves it reached
#   (parameters and leaf tensors: ``node_created`` op "parameter" or "leaf"), what
#   ``torch.nn.utils.clip_grad_norm_`` measures: the square root of the sum of each leaf's
#   squared ``grad_computed`` norm, the last one a leaf got in the pass (a leaf's grad_computed is
#   this pass's gradient, not what ``.grad`` holds from earlier passes). None when the pass
#   reached no leaf. ``leaves`` says how many it is over.
#
# Only passes that finished count (one that failed gave no gradient to step with); passes run
# inside another one (a hook calling backward) count on their own. The fold keeps the values of
# the newest single-number nodes (the candidates for a root) and the ids of the leaves, and it
# sees every event before any budget, so the chart covers every step even where the graph keeps
# only some of them.


class BackwardPass(NamedTuple):
    """One finished backward pass: what a training loop's chart shows per step."""

    step: int  # 1, 2, ...: its number among the finished passes
    loss: float | None  # the root's value, when the root is a single number
    grad_norm: float | None  # the global norm of this pass's gradients of the leaves
    leaves: int  # how many leaves (parameters, leaf tensors) received a gradient in the pass
    root: int  # the root's node id


LEAF_OPS = frozenset({LEAF, PARAMETER})  # node_created ops whose gradient the norm is over
_PASS_KINDS = frozenset({"backward_started", "backward_finished", "backward_failed"})
SCALARS_KEPT = 4096  # the newest single-number nodes whose values the fold keeps (root candidates)


@dataclass
class PassFold:
    """The fold of NOTE [loss and gradient norm per pass]: give it every event (``__call__``, or
    ``fold`` for a batch), read the finished passes from ``passes``. Plain data, as a
    recording is."""

    passes: list[BackwardPass] = field(default_factory=list)
    _leaves: set[int] = field(default_factory=set)
    _scalars: dict[int, float] = field(default_factory=dict)  # id -> value, newest SCALARS_KEPT
    _open: list[tuple[int, dict[int, float]]] = field(default_factory=list)  # running passes:
    # (root, leaf id -> the norm of its gradient in the pass)

    def __call__(self, event: Any) -> None:
        kind = event.kind
        if kind == "grad_computed":
            if self._open and event.id in self._leaves:
                self._open[-1][1][event.id] = event.norm
        elif kind == "node_created":
            self.node(event)
        elif kind == "backward_started":
            self._open.append((event.root, {}))
        elif kind == "backward_finished":
            if self._open:
                self._finish(*self._open.pop())
        elif kind == "backward_failed" and self._open:
            self._open.pop()

    def fold(self, received: Any) -> None:
        """Fold a batch of events, in order: ``__call__`` on each, with the two kinds most
        events are (an op's node, a node's gradient) tested first, without a call per event
        (the live view folds every event it receives: NOTE [kernel-side cost] in
        jupyter/listener.py)."""
        leaves = self._leaves
        for event in received:
            kind = event.kind
            if kind == "node_created":
                if event.op in LEAF_OPS or len(event.preview) == 1:
                    self.node(event)
            elif kind == "grad_computed":
                if self._open and event.id in leaves:
                    self._open[-1][1][event.id] = event.norm
            elif kind in _PASS_KINDS:
                self(event)

    def node(self, event: Any) -> None:
        """A node_created: a leaf is remembered as one, a single number by its value."""
        if event.op in LEAF_OPS:
            self._leaves.add(event.id)
        preview = event.preview
        if len(preview) == 1 and all(n == 1 for n in event.shape):
            value = preview[0]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                scalars = self._scalars
                scalars[event.id] = float(value)
                if len(scalars) > SCALARS_KEPT:
                    del scalars[next(iter(scalars))]  # the oldest (dicts keep insertion order)

    def _finish(self, root: int, norms: dict[int, float]) -> None:
        grad_norm = math.sqrt(sum(n * n for n in norms.values())) if norms else None
        self.passes.append(BackwardPass(len(self.passes) + 1, self._scalars.get(root),
                                        grad_norm, len(norms), root))


@dataclass
class Recording(Graph):
    """A bounded, array-free model of the graphs built (and backpropagated) while recording: the
    graph (nodes, edges, nodes dropped past the budget) and the timeline of what happened."""

    max_nodes: int = DEFAULT_MAX_NODES
    max_events: int = DEFAULT_MAX_EVENTS
    timeline: list[tuple] = field(default_factory=list)  # (kind, ...) steps, see _STEP_KINDS
    dropped_events: int = 0
    # file (as the nodes' ``where`` name it) -> the text kept of it (NOTE [own source text])
    sources: dict[str, str] = field(default_factory=dict)
    _live: bool = field(default=False, repr=False, compare=False)  # inside its dg.record() block
    # each backward pass's loss and gradient norm (NOTE [loss and gradient norm per pass])
    _passes: PassFold = field(default_factory=PassFold, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_nodes < 1 or self.max_events < 1:
            raise ValueError("max_nodes and max_events must be positive")

    # ------------------------------------------------------------------ folding events

    def __call__(self, event: Any) -> None:
        """The subscriber: fold one event into the model."""
        kind = event.kind
        # every pass is folded, also past the budget (NOTE [loss and gradient norm per pass])
        if kind == "node_created":
            self._passes.node(event)
        elif kind == "grad_computed":
            self._passes(event)
        if not admitted(event, self.nodes):  # NOTE [the node budget]
            return
        if kind == "node_created":
            self._add_node(event)
        elif kind == "grad_computed":
            node = self.nodes[event.id]
            node.grad_preview, node.grad_norm = event.preview, event.norm
            node.accumulated = event.accumulated
            self._step(("grad", event.id))
        elif kind == "edge_grad":  # kept in the step itself: an input may receive several
            self._step(("edge_grad", event.node, event.input, event.position,
                        tuple(event.preview), event.reduced_from))
        elif kind == "graph_freed":
            ids = tuple(i for i in event.ids if i in self.nodes)
            for i in ids:
                self.nodes[i].freed = True
            self._step(("freed", ids))
        elif kind == "version_bumped":
            self.nodes[event.id].version = event.version
            self._step(("version", event.id, event.version))
        elif kind == "backward_started":  # with the line that called backward(), or None
            self._passes(event)
            where = event.where
            self._step(("backward_started", event.root,
                        tuple(where) if where is not None else None))
        elif kind == "backward_finished":
            self._passes(event)
            self._step(("backward_finished", event.root))
        elif kind == "backward_failed":
            self._passes(event)
            self._step(("backward_failed", event.root, self._shared_paths_in(event.error)))

    def _shared_paths_in(self, text: str) -> str:
        """``text`` (an error message) with each source file of the recording named as the
        recording names it (``shared_path``): no absolute path in anything shared."""
        for file in {where[0] for where in self.source_lines()}:
            if os.path.isabs(file) and file in text:
                text = text.replace(file, shared_path(file))
        return text

    def _capture_sources(self) -> None:
        """Keep the source text of the lines that made nodes or called backward(), read now
        from this process's linecache (NOTE [own source text]): only for a recording made in
        this process."""
        used: dict[str, set[int]] = {}
        for where in self.source_lines():
            used.setdefault(where[0], set()).add(where[1])
        for file, lines in used.items():
            text = source_text(file, lines)
            if text:
                self.sources[file] = text

    @classmethod
    def of_graph(cls, node_events: Iterable[events.NodeCreated]) -> Recording:
        """The model of a graph drawn from a tensor (dg.draw): its node_created events, inputs
        first, folded as a watching recording folds them, all of them (a drawing has no node
        budget) and with no timeline (nothing happened while anyone watched)."""
        recording = cls()
        for event in node_events:
            if event.id not in recording.nodes:
                recording._fold_node(event)
        return recording

    def _add_node(self, event: events.NodeCreated) -> None:
        if len(self.nodes) >= self.max_nodes:
            self.dropped_nodes += 1
            return
        self._fold_node(event)
        self._step(("node", event.id))

    def _fold_node(self, event: events.NodeCreated) -> None:
        """The node and the edges into it that ``event`` describes."""
        kind = {"leaf": LEAF, "parameter": PARAMETER, "constant": CONSTANT}.get(event.op, OP)
        where = tuple(event.where) if event.where is not None else None
        self.nodes[event.id] = Node(
            id=event.id, kind=kind, op=event.op, name=event.name, shape=tuple(event.shape),
            dtype=event.dtype, device=event.device, requires_grad=event.requires_grad,
            preview=tuple(event.preview), scope=tuple(event.scope), where=where,
            order=len(self.nodes), saved_bytes=event.saved_bytes, recomputed=event.recomputed,
            elapsed=event.elapsed,
        )
        for position, src in enumerate(event.inputs):
            self.edges.append(Edge(src, event.id, position))

    def _step(self, step: tuple) -> None:
        if len(self.timeline) >= self.max_events:
            self.dropped_events += 1
        else:
            self.timeline.append(step)

    # ------------------------------------------------------------------ reading the model

    def source_lines(self) -> Iterator[tuple]:
        """The ``where`` of every line the recording points at: the lines that made its nodes,
        then those that called ``backward()`` (NOTE [safe to share])."""
        for node in self.nodes.values():
            if node.where is not None:
                yield node.where
        for step in self.timeline:
            if step[0] == "backward_started" and step[2] is not None:
                yield step[2]

    def events(self) -> Iterator[events.Event]:
        """Events that, folded into an empty Recording, rebuild this one (what a GraphView of a
        saved recording replays). A recording keeps only the last gradient of each node, so
        every ``grad`` step replays that one."""
        inputs: dict[int, list[int]] = {}
        for edge in sorted(self.edges, key=lambda e: e.position):
            inputs.setdefault(edge.dst, []).append(edge.src)
        announced = {step[1] for step in self.timeline if step[0] == "node"}
        for node in sorted(self.nodes.values(), key=lambda n: n.order):
            if node.id not in announced:  # drawn from a tensor (dg.draw): no timeline
                yield self._node_event(node, inputs)
        for kind, *rest in self.timeline:
            if kind == "node":
                yield self._node_event(self.nodes[rest[0]], inputs)
            elif kind == "grad":
                node = self.nodes[rest[0]]
                yield events.grad_computed(node.id, node.grad_preview or (),
                                          node.grad_norm or 0.0, node.accumulated)
            elif kind == "edge_grad":
                yield events.edge_grad(*rest)
            elif kind == "freed":
                yield events.graph_freed(tuple(rest[0]))
            elif kind == "version":
                yield events.version_bumped(rest[0], rest[1])
            elif kind == "backward_started":
                yield events.backward_started(root=rest[0], retain_graph=False,
                                             create_graph=False, where=self._source_line(rest[1]))
            elif kind == "backward_finished":
                yield events.backward_finished(rest[0])
            elif kind == "backward_failed":
                yield events.backward_failed(rest[0], valid_text(rest[1]))

    @staticmethod
    def _source_line(where: tuple | None) -> events.SourceLine | None:
        """A ``where`` kept in a node or a step, as the SourceLine of an event. NOTE: a loaded
        name may hold a lone surrogate, which a page cannot encode (valid_text)."""
        if where is None:
            return None
        return events.SourceLine(
            *(valid_text(part) if isinstance(part, str) else part for part in where))

    @classmethod
    def _node_event(cls, node: Node, inputs: dict[int, list[int]]) -> events.NodeCreated:
        where = cls._source_line(node.where)
        return events.node_created(
            node.id, valid_text(node.op), tuple(inputs.get(node.id, ())), node.shape,
            valid_text(node.dtype), valid_text(node.device), node.requires_grad,
            node.kind != OP, None if node.name is None else valid_text(node.name),
            tuple(valid_text(part) for part in node.scope), where, node.preview,
            node.saved_bytes, node.recomputed, node.elapsed,
        )

    def passes(self) -> list[BackwardPass]:
        """Each finished backward pass, in order: its loss and the global norm of the gradients
        it gave the leaves (NOTE [loss and gradient norm per pass]). Every pass is here, also
        past the recording's budget; a recording saved before schema 5 has none.

        >>> with dg.record() as rec:
        ...     for step in range(3):
        ...         loss = ((model(x) - y) ** 2).mean()
        ...         loss.backward(); opt.step(); opt.zero_grad()
        >>> losses = [p.loss for p in rec.passes()]        # one per step
        >>> norms = [p.grad_norm for p in rec.passes()]
        """
        return list(self._passes.passes)

    def mark(self, node_id: int, check: str) -> None:
        """Record a gradcheck verdict ('pass' or 'fail') on a node, for the diagram."""
        if check not in ("pass", "fail"):
            raise ValueError("check must be 'pass' or 'fail'")
        self.nodes[node_id].check = check

    def summary(self) -> str:
        """One line: how many nodes, edges, backward passes; what was dropped."""
        passes = sum(1 for step in self.timeline if step[0] == "backward_started")
        text = f"{len(self.nodes)} nodes, {len(self.edges)} edges, {passes} backward pass"
        text += "" if passes == 1 else "es"
        if self.dropped_nodes:
            text += f"; {self.dropped_nodes} nodes not recorded (max_nodes={self.max_nodes})"
        if self.dropped_events:
            text += f"; {self.dropped_events} timeline steps not recorded"
        return text

    def __repr__(self) -> str:
        return f"<Recording: {self.summary()}>"

    # ------------------------------------------------------------------ drawing and saving

    def to_dot(self, **options: Any) -> str:
        """The DOT source of the diagram (options: see dyngraph.dot.to_dot)."""
        from .dot import to_dot

        return to_dot(self, **options)

    def to_svg(self, timeout: float = 10.0, **options: Any) -> str:
        """The diagram as SVG, laid out by the system's Graphviz ``dot`` or else the pygraphviz
        wheel (``GraphvizMissing`` says what to install where neither is)."""
        from .graphviz_render import render_svg

        return render_svg(self.to_dot(**options), timeout=timeout)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from .dot import mimebundle

        if self._live:  # shown inside its own dg.record() block
            self._capture_sources()
        return mimebundle(self, repr(self))

    def save(self, path: Any, source: bool = True) -> None:
        """Write the recording as versioned JSON (see dyngraph/recording_format.py), with the
        source lines that made nodes (a few lines around each; ``source=False``: none) and
        file names relative to the working directory (NOTE [safe to share])."""
        from .recording_format import save_recording

        if self._live:  # saved inside its own dg.record() block
            self._capture_sources()
        save_recording(self, path, source=source)

    def to_html(self, path: Any, title: str = "dyngraph", source: bool = True) -> None:
        """One self-contained HTML file with this recording and the player (works offline,
        for slides and course pages). The page keeps the source lines that made nodes, with a
        few lines around them, and relative file names; ``source=False``: no source text.
        The text is the recording's own (NOTE [own source text]): no file is read."""
        if self._live:  # written inside its own dg.record() block
            self._capture_sources()
        player.load().write_page(self, path, title=title, source=source)  # NOTE [the player]

    def diff(self, other: Recording) -> Any:
        """One diagram of two runs of the same code, marking what exists in only one."""
        from .graph_diff import GraphDiff  # (graph_diff.py imports this module)

        return GraphDiff(self, other)


@contextmanager
def record(max_nodes: int = DEFAULT_MAX_NODES, max_events: int = DEFAULT_MAX_EVENTS) -> Iterator[
    Recording
]:
    """Record every graph built (and backpropagated) inside the block by this thread (another
    thread's ops are not recorded: listening is per thread, as PyTorch's modes are).

    >>> with dg.record() as rec:
    ...     y = (x * 2).sum()
    """
    recording = Recording(max_nodes=max_nodes, max_events=max_events)
    recording._live = True
    try:
        with events.subscribe(recording), watching_sources():
            yield recording
    finally:
        recording._live = False
        recording._capture_sources()  # NOTE [own source text]
