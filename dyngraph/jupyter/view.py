"""GraphView: the live graph widget (the Python half; the browser half is widgets/src/).

A GraphView listens to the event spine and sends *the events themselves* to the browser, in
batches, packed with MessagePack (see widgets/PROTOCOL.md), each with the texts ``dyngraph.dot``
writes of its numbers (NOTE [display texts]). The browser folds them into nodes, edges and a
timeline exactly as ``Recording`` does, composes the DOT of the graph at any point of the
timeline from the visual vocabulary of ``dyngraph.dot`` (sent once, as a table), and draws it -
so stepping and scrubbing happen entirely in the page, even while the kernel is busy.

NOTE [kernel-side cost] The view is attached while the learner's code runs, so what it does per
event is kept to appending the event to a list and counting down to the next read of the clock
(every event while events come slowly, every ``CLOCK_STRIDE`` while they come fast): that is
``collector``. Everything else happens once per batch: keeping what the budget allows, finding
source files not sent yet, and packing. A batch is packed every ``BATCH_EVENTS`` events and
sent at most ``rate`` times a second (and always at the end). Only the packed bytes are kept,
and the snapshot is made of those same bytes: events are NamedTuples, which the garbage
collector tracks, and a view holding every event made each collection walk them all.
MessagePack (ormsgpack, in Rust), not JSON: events are tuples of numbers and short strings,
packed without a Python loop, and a float costs 9 bytes instead of a trip through ``repr``; NaN
and Inf need no special spelling. The view's own ``recording`` (for ``repr`` and the static
fallback) is unpacked and folded only when someone asks for it.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import time
import typing
import weakref
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import ormsgpack
import traitlets

from .. import dot, ops
from ..function import Function
from ..record import BackwardPass, PassFold, Recording, kept_stretches, shared_path, source_text
from ..safe_json import valid_text
from ..spine import events

STATIC = Path(__file__).parent / "static"
BATCH_EVENTS = 128  # events held before they are packed, sent or not (see NOTE [kernel-side cost])
CLOCK_STRIDE = 16  # at most this many events between two reads of the clock
EVENT_TYPES = typing.get_args(events.Event)
EVENT_CLASSES = {cls.kind: cls for cls in EVENT_TYPES}


# NOTE [the bundle as text] _esm and _css are the files' text, not their paths: given a path,
# anywidget watches the file for hot reloading and ties every widget to a class-wide signal
# with a closure over it, so no GraphView would ever be freed, nor the events it keeps.


def _bundle() -> str:
    path = STATIC / "graphview.js"
    if path.exists():
        return path.read_text(encoding="utf-8")
    return (  # a working checkout always has the bundle; say how to make it if not
        "export default { render({ el }) { el.textContent = 'dyngraph: the widget bundle is "
        "missing (cd widgets && npm install && npm run build)'; } };\n"
    )


def _css() -> str:
    path = STATIC / "graphview.css"
    return path.read_text(encoding="utf-8") if path.exists() else ""


# NOTE [the front end once per notebook] A notebook saved with widget state keeps every model's
# state, ``_esm`` included: with the 880 KB bundle as each view's ``_esm``, every graph carried a
# copy of it (5.47 MB for three graphs). Instead the bundle is the state of one ``FrontEnd``
# model per kernel, and each view's ``_esm`` is the small loader below: it asks the widget
# manager for that model (by the id in the view's ``front_end`` trait), imports its code once
# per page, and renders with it. The view it renders sees the bundle's text as ``_esm``, as the
# layout worker expects (NOTE [layout worker] in widgets/src/renderer.js). Live, reopened with
# the state saved, or exported with it (nbconvert, build_site), the bundle is stored once.
# anywidget's own ways to share code do not fit: ``_esm`` as a URL needs a server or the
# network, and as a file path it would tie every view to a class-wide hot-reload signal.
LOADER = """\
// dyngraph: loads the graph view's front end, stored once per notebook (FrontEnd model).
const loaded = (globalThis.__dyngraphFrontEnds ??= new Map());
async function frontEnd(model) {
  const shared = await model.widget_manager.get_model(model.get("front_end"));
  const digest = shared.get("digest");
  if (!loaded.has(digest)) {
    const code = shared.get("code");
    const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
    loaded.set(digest, import(url).then((module) => ({ module, code }))
      .finally(() => URL.revokeObjectURL(url)));
  }
  return loaded.get(digest);
}
async function render({ model, el }) {
  const { module, code } = await frontEnd(model);
  const view = {
    get: (name) => (name === "_esm" ? code : model.get(name)),
    set: (...args) => model.set(...args),
    on: (...args) => model.on(...args),
    off: (...args) => model.off(...args),
    send: (...args) => model.send(...args),
    save_changes: () => model.save_changes(),
    widget_manager: model.widget_manager,
  };
  return module.default.render({ model: view, el });
}
export default { render };
"""


class FrontEnd(ipywidgets.Widget):
    """The widget's front end (the bundle's text), one model per kernel that every GraphView
    names: NOTE [the front end once per notebook]. A plain ipywidgets model: no view of its own."""

    code = traitlets.Unicode("").tag(sync=True)
    digest = traitlets.Unicode("").tag(sync=True)  # the bundle's hash: a page imports it once

    _shared: FrontEnd | None = None

    @classmethod
    def shared(cls) -> FrontEnd:
        """This kernel's FrontEnd, made on first use (again if it was closed)."""
        if cls._shared is None or cls._shared.comm is None:
            code = _bundle()
            cls._shared = cls(code=code, digest=hashlib.sha256(code.encode()).hexdigest())
        return cls._shared


class GraphView(anywidget.AnyWidget):
    """A live diagram of the graphs your code builds, with playback of forward and backward.

    >>> view = GraphView()          # displays empty; or use dg.watch() / %%dyngraph
    >>> view.attach()               # listen to the event spine
    >>> loss = (x * w).sum(); loss.backward()
    >>> view.detach()
    """

    _esm = LOADER  # the bundle itself is FrontEnd's (NOTE [the front end once per notebook])
    _css = _css()
    front_end = traitlets.Unicode("").tag(sync=True)  # the model id of the kernel's FrontEnd

    header = traitlets.Dict().tag(sync=True)
    # NOTE: snapshot and delta are MessagePack bytes: ipywidgets sends bytes as a binary buffer,
    # as they are (a dict trait would be walked element by element looking for buffers).
    snapshot = traitlets.Bytes(b"").tag(sync=True)
    delta = traitlets.Bytes(b"").tag(sync=True)
    options = traitlets.Dict().tag(sync=True)
    # the mark of this view's picture output: the live view hides it (NOTE [a picture beside
    # the widget])
    picture_id = traitlets.Unicode("").tag(sync=True)

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
        collapse_over: int = dot.COLLAPSE_OVER,
        source: bool = True,
        replay: bool = True,
        running_stats: bool = False,
    ) -> None:
        super().__init__(front_end=FrontEnd.shared().model_id)
        if pace < 0 or rate <= 0:
            raise ValueError("pace must be >= 0 seconds and rate > 0 updates per second")
        if max_nodes < 1 or max_events < 1:
            raise ValueError("max_nodes and max_events must be positive")
        self.pace = float(pace)
        self.interval = 1.0 / rate
        self.max_nodes = max_nodes
        self.max_events = max_events
        self.header = {
            "lines": dot.graph_header(rankdir, compact=True),  # the widget's geometry
            "vocabulary": dot.vocabulary(),
            # each kind's fields, then the display texts of its numbers (NOTE [display texts])
            "fields": {**{cls.kind: [*cls._fields, *TEXT_FIELDS.get(cls.kind, ())]
                          for cls in EVENT_TYPES},
                       "where": list(events.SourceLine._fields)},
            "rules": derivative_rules(),
        }
        self.options = {"tween_max_nodes": tween_max_nodes, "max_nodes": max_visible,
                        "collapse_over": collapse_over, "title": title, "speed": 1.0,
                        # steps the page missed are played at reading pace (NOTE [replay] in
                        # widgets/src/view.js); False: it opens at the end
                        "replay": bool(replay),
                        # draw a BatchNorm's running statistics (dot.py NOTE [running statistics])
                        "running_stats": bool(running_stats)}
        self._seq = 0
        self._snapshot_seq = -1  # the seq the snapshot trait was made at (NOTE [state at rest])
        self._batch: list = []  # events received since the last flush
        self._due = [0.0]  # when the next flush is due (time.monotonic()); shared with the listener
        self._packed: list[bytes] = []  # every batch, packed: the snapshot is made of them
        # per packed batch: (the backward pass it belongs to, its nodes, its rows), for
        # dropping the oldest passes (NOTE [the newest passes])
        self._batch_info: list[tuple[int, int, int]] = []
        self._passes_ended = 0  # backward passes ended so far (the pass now running is this one)
        self._dropped_passes = 0  # the oldest passes dropped (NOTE [the newest passes])
        self._dropped_pass_nodes = 0  # their nodes
        self._reset = False  # the next delta starts the page over (it holds every batch)
        self._sent = 0  # how many of them deltas have carried
        self._unsent_sources: dict[str, str] = {}  # source texts found but not sent yet
        self._node_ids: set[int] = set()  # the nodes kept
        self._sources: dict[str, str] = {}  # shared file name -> the lines of it a page keeps
        self._kept_lines: dict[str, list] = {}  # shared file name -> its stretches kept
        self.source = source  # False: send no source text at all
        # a SourceLine -> the same with its file as pages name it
        self._wheres: dict[Any, tuple] = {}
        self._used: dict[str, tuple[str, set[int]]] = {}  # file -> (shared name, lines of nodes)
        self._recorded_sources: dict[str, str] | None = None  # a replayed recording's own text
        self._kept_events = 0
        self._dropped_nodes = 0
        self._dropped_events = 0
        self._recording = Recording(max_nodes=max_nodes, max_events=max_events)
        # each backward pass's loss and gradient norm, folded from every event received, before
        # the budget (NOTE [the training chart]); a replayed recording brings its own
        self._passes = PassFold()
        self._fold_passes = True
        self._passes_sent = 0  # how many of them deltas have carried
        self._folded = 0  # how many of _packed the recording has seen
        self._last_line: tuple | None = None
        self._handle: Any = None
        self._follower: Any = None  # following the graph after detach (NOTE [a watched graph ...])
        self._displays: list = []  # where this view was displayed (NOTE [a picture beside ...])
        self._picture_seq = -1  # the seq their picture shows
        self.picture_id = self.model_id
        self.on_msg(self._on_message)

    # ------------------------------------------------------------------ listening

    def attach(self) -> GraphView:
        """Start listening to the event spine of the calling thread (listening is per thread;
        a dropped view stops listening, wherever it is collected)."""
        self._unfollow()
        if self._handle is None:
            self._handle = events.subscribe(_listener(self))
            weakref.finalize(self, self._handle.remove)
            self._set_watching(True)
        return self

    def _set_watching(self, watching: bool) -> None:
        """Tell the page whether a watch block is open (an empty view that ended says how to
        see a graph built before it)."""
        if self.options.get("watching") is not watching:
            self.options = {**self.options, "watching": watching}

    def detach(self, follow: bool = True) -> None:
        """Stop listening and deliver the final state: the last delta, and the whole state in
        ``snapshot`` (NOTE [state at rest]). With ``follow`` (the default), a later backward
        pass over the graph this view drew, in any later cell of this thread, still plays here
        (NOTE [a watched graph stays watched] in dyngraph/events.py)."""
        listened = self._handle is not None
        if listened:
            self._handle.remove()
            self._handle = None
            self._set_watching(False)
        # NOTE: flushed first: the nodes received since the last batch are kept (_node_ids)
        # only when packed, and a small block's nodes all come between two flushes
        self.flush()
        if listened and follow and self._node_ids:
            self._follow()
        self._rest()
        self._show_final_picture()

    def close(self) -> None:
        self._unfollow()
        self.detach(follow=False)
        super().close()

    def _follow(self) -> None:
        """Follow the graph drawn so far: a backward pass from one of its nodes, run while
        nobody listens, is heard here and delivered as at the end of a watch block."""
        view_ref = weakref.ref(self)
        node_ids = self._node_ids  # the same set: nodes kept later are claimed too
        collect = _listener(self)

        def claims(root_ids: tuple[int, ...]) -> bool:
            return view_ref() is not None and any(root in node_ids for root in root_ids)

        def listener(event: Any) -> None:
            collect(event)
            if event.kind == "backward_finished" or event.kind == "backward_failed":
                view = view_ref()
                if view is not None:
                    view.flush()
                    view._rest()
                    view._show_final_picture()

        self._follower = events.follow(claims, listener)
        weakref.finalize(self, self._follower.remove)

    def _unfollow(self) -> None:
        if self._follower is not None:
            self._follower.remove()
            self._follower = None

    def _pace(self, event: Any) -> None:
        """With pace > 0, each new source line waits so a fast cell can be watched."""
        where = event.where
        if where is None:
            return
        line = (where.file, where.line)
        if line != self._last_line:
            self._last_line = line
            self.flush()
            time.sleep(self.pace)

    # ------------------------------------------------------------------ batches

    def flush(self) -> None:
        """Send the events received since the last flush as one delta."""
        self._due[0] = time.monotonic() + self.interval
        self._pack_batch()
        batches = self._packed[self._sent:]
        sources = self._unsent_sources
        passes = self._passes.passes[self._passes_sent:]
        if not batches and not sources and not passes and not self._reset:
            return
        if self._reset:  # the page starts over from everything kept (NOTE [the newest passes])
            batches, sources = self._packed, self._sources
            passes = self._passes.passes  # the chart keeps every pass (NOTE [the training chart])
        self._sent = len(self._packed)
        self._passes_sent = len(self._passes.passes)
        self._unsent_sources = {}
        self._seq += 1
        self.delta = self._pack_delta(batches, sources, passes, reset=self._reset)
        self._reset = False

    def _pack_batch(self) -> None:
        """Keep what the budget allows of the events received so far and pack them (they are
        sent with the next delta), a batch ending where a backward pass ends."""
        received = self._batch[:]
        self._batch.clear()
        if self._fold_passes:
            self._passes.fold(received)
        before = len(self._node_ids)
        (rows, texts), sources = self._keep(received)
        self._unsent_sources.update(sources)
        if not rows:
            return
        if not any(kind in PASS_ENDS for kind, _ in rows):
            self._packed.append(pack((rows, texts)))  # NOTE [display texts]
            self._batch_info.append((self._passes_ended, len(self._node_ids) - before, len(rows)))
        else:  # one batch per pass: each ends with its pass's end
            per_row = split_texts(rows, texts)
            start = 0
            for end, (kind, _) in enumerate(rows, 1):
                if kind not in PASS_ENDS and end < len(rows):
                    continue
                chunk = rows[start:end]
                nodes = sum(kind == "node_created" for kind, _ in chunk)
                self._packed.append(pack((chunk, join_texts(per_row[start:end]))))
                self._batch_info.append((self._passes_ended, nodes, len(chunk)))
                self._passes_ended += kind in PASS_ENDS
                start = end
        if len(self._node_ids) > self.max_nodes:
            self._drop_oldest_passes()

    # NOTE [the newest passes] A live view of a training loop is watched for its newest steps:
    # the learner wants to see what the model does now, and the shape of one step. So past
    # max_nodes, the view drops its oldest backward passes whole (each pass: its forward, its
    # backward, up to its backward_finished), as many as bring it down to three quarters of the
    # budget, and keeps what the kept passes still read of them (the parameters, the data):
    # their node_created rows move to the front. The page then starts over from what is kept
    # (a delta with "reset"), and says how many passes and nodes were dropped (view.js notes),
    # and how to keep more. Three quarters, not just under the budget: a drop unpacks what is
    # kept and the page starts over, which at every pass of a 4-block transformer cost 7% of
    # the watched run; so it happens every few passes instead (under 3%). A cell with
    # no backward pass, or one pass bigger than the budget, has nothing to drop: its newest
    # nodes are not kept, as before ("not recorded"). The first view of a cell within the
    # budget is unchanged. dg.record() keeps its documented rule, the first max_nodes nodes
    # (record.py NOTE [a recording keeps the first nodes]).
    def _drop_oldest_passes(self) -> None:
        """Drop the oldest complete backward passes until the nodes kept fit three quarters of
        max_nodes (or no complete pass is left), keeping the nodes the remaining passes read."""
        over = len(self._node_ids) - self.max_nodes * 3 // 4
        nodes_by_pass: dict[int, int] = {}
        for number, nodes, _ in self._batch_info:
            nodes_by_pass[number] = nodes_by_pass.get(number, 0) + nodes
        # the passes held are numbered from self._dropped_passes (those before were dropped)
        dropped = self._dropped_passes  # drop the passes before this one: the oldest whose
        while over > 0 and dropped < self._passes_ended:  # nodes cover what is over
            over -= nodes_by_pass.get(dropped, 0)
            dropped += 1
        if dropped == self._dropped_passes:
            return
        cut = sum(1 for number, _, _ in self._batch_info if number < dropped)
        read = set()  # what the kept passes read
        for packed in self._packed[cut:]:
            for kind, fields in ormsgpack.unpackb(packed)[0]:
                if kind == "node_created":
                    read.update(fields[_INPUTS])
        carried, carried_texts = [], []
        gone_nodes = gone_rows = 0
        for packed in self._packed[:cut]:
            rows, texts = ormsgpack.unpackb(packed)
            for row, row_texts in zip(rows, split_texts(rows, texts)):
                gone_rows += 1
                if row[0] != "node_created":
                    continue
                if row[1][0] in read:
                    carried.append(row)
                    carried_texts.append(row_texts)
                else:
                    self._node_ids.discard(row[1][0])  # in place: the follower holds this set
                    gone_nodes += 1
        self._packed[:cut] = [pack((carried, join_texts(carried_texts)))] if carried else []
        self._batch_info[:cut] = [(dropped, len(carried), len(carried))] if carried else []
        self._kept_events -= gone_rows - len(carried)
        self._dropped_passes = dropped
        self._dropped_pass_nodes += gone_nodes
        self._sent = len(self._packed)  # all of it goes again, with the next delta
        self._reset = True
        self._recording = Recording(max_nodes=self.max_nodes, max_events=self.max_events)
        self._folded = 0

    def _keep(self, received: list) -> tuple[tuple[list, str], dict[str, str]]:
        """What the budget allows of a batch, as (kind, fields) rows and their display texts
        (``keep_rows``), and the source text of the files its nodes point at that were not sent
        before."""
        grown: set[str] = set()  # files with a line that made a node for the first time
        # the nodes of complete passes can make room (NOTE [the newest passes])
        droppable = sum(nodes for number, nodes, _ in self._batch_info
                        if number < self._passes_ended)
        kept, texts, node_room, room, dropped_nodes, dropped_events = keep_rows(
            received, self._node_ids, self._wheres, lambda where: self._share(where, grown),
            self.max_nodes - len(self._node_ids) + droppable, self.max_events - self._kept_events,
            _WHERE)
        self._kept_events = self.max_events - room
        self._dropped_nodes += dropped_nodes
        self._dropped_events += dropped_events
        sources = {}
        for file in grown if self.source else ():
            shared, used = self._used[file]
            self._sources[shared] = sources[shared] = text = self._source_text(file, used)
            lines = text.count("\n") + (not text.endswith("\n"))  # as the panel splits it
            self._kept_lines[shared] = kept_stretches(used, lines)
        return (kept, texts), sources

    def _source_text(self, file: str, used: set[int]) -> str:
        """What the view shows of ``file`` (NOTE [own source text] in dyngraph/record.py): a
        replayed recording's own text, never a file it names; for a live view, the lines that
        made nodes as this process's linecache has them."""
        if self._recorded_sources is not None:
            return self._recorded_sources.get(file, "")
        return source_text(file, used)

    def _share(self, where: Any, grown: set[str]) -> tuple:
        """``where`` with its file named as pages name it; notes its line as one that made a
        node (in ``grown`` when that line is new)."""
        file = where.file
        if file not in self._used:
            self._used[file] = (shared_path(file), set())
        shared, used = self._used[file]
        if where.line not in used:
            used.add(where.line)
            grown.add(file)
        return (shared, *where[1:])

    def _pack_delta(self, batches: list[bytes], sources: dict[str, str],
                    passes: list[BackwardPass], reset: bool = False) -> bytes:
        sent = {file: text for file, text in sources.items() if text}  # not empty ones
        delta = {
            "seq": self._seq,
            "events": batches,
            "sources": sent,
            # the lines of each text that were kept: the panel shows one "…" row for the others
            "kept_lines": {file: self._kept_lines[file] for file in sent},
            # not kept at all (over the budget), and the oldest passes let go (NOTE [the
            # newest passes])
            "dropped": {"nodes": self._dropped_nodes, "steps": self._dropped_events,
                        "passes": self._dropped_passes, "pass_nodes": self._dropped_pass_nodes,
                        "max_nodes": self.max_nodes},
            "passes": [pass_row(p) for p in passes],  # NOTE [the training chart]
        }
        if reset:  # the page forgets what it has and starts from these batches
            delta["reset"] = True
        return pack_delta(delta)

    def resync(self) -> None:
        """Set the snapshot to everything so far (what a late or out-of-step view starts from)."""
        self.flush()
        self._rest()
        self.send_state("snapshot")  # also when unchanged: the view that asked must hear back

    # NOTE [state at rest] While code runs, only deltas are sent (the snapshot would repeat
    # every batch at every update). Once the view stops changing (the end of a watch block, of
    # a replay), the snapshot holds the whole state, with the seq of the last delta, which a
    # view on screen recognises as the state it has: a notebook saved then keeps the graph in
    # its widget state, and shows and plays it with no kernel; a view displayed again needs no
    # round trip. The snapshot is made of the batches already packed (a copy of bytes).
    def _rest(self) -> None:
        """Make the snapshot the whole state so far, unless it is already."""
        if self._snapshot_seq != self._seq or not self.snapshot:
            self.snapshot = self._pack_delta(self._packed, self._sources, self._passes.passes)
            self._snapshot_seq = self._seq

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "resync":
            self.resync()

    # ------------------------------------------------------------------ the model, on demand

    @property
    def recording(self) -> Recording:
        """What the view has kept, as the Recording ``dg.record()`` would build (folded now)."""
        self.flush()
        recording = self._recording
        for packed in self._packed[self._folded:]:
            rows, _texts = ormsgpack.unpackb(packed)  # an event's own fields are in its row
            for kind, fields in rows:
                recording(event_from_row(kind, fields))
        self._folded = len(self._packed)
        recording.dropped_nodes = self._dropped_nodes
        recording.dropped_events = self._dropped_events
        recording.dropped_passes = self._dropped_passes
        recording.dropped_pass_nodes = self._dropped_pass_nodes
        recording.sources.update(  # its own text (NOTE [own source text])
            (file, text) for file, text in self._sources.items() if text)
        # every pass the view heard, also those whose nodes the budget left out
        recording._passes.passes = list(self._passes.passes)
        return recording

    @classmethod
    def from_recording(cls, recording: Recording, **options: Any) -> GraphView:
        """A view that replays a recording (live or loaded with dg.load_recording)."""
        options.setdefault("max_nodes", max(len(recording.nodes), 1))
        options.setdefault("max_events", len(recording.nodes) + len(recording.timeline) + 1)
        view = cls(**options)
        # What the recorder never kept is said on the page too (its notice under the graph).
        view._dropped_nodes = recording.dropped_nodes
        view._dropped_events = recording.dropped_events
        view._recorded_sources = {  # never a file it names; text a page can encode, by
            valid_text(file): valid_text(text)  # the names its events give (Recording.events)
            for file, text in recording.sources.items()}
        # its own passes: the events it replays hold each node's last gradient only
        view._passes.passes = recording.passes()
        view._fold_passes = False
        view._replay(recording.events())
        return view

    def _replay(self, spine: Any) -> None:
        """Keep these events as if they had arrived live, and make them the snapshot."""
        self._batch.extend(spine)
        self.resync()

    def state(self) -> dict[str, Any]:
        """Everything a standalone page needs (see save_html): the snapshot as MessagePack."""
        self.resync()
        return {"header": self.header, "snapshot": self.snapshot, "options": self.options}

    def save_html(self, path: Any) -> None:
        """One self-contained HTML file with the recording and the player (works offline)."""
        from .html import write_html

        write_html(self.state(), path, title=self.options.get("title") or "dyngraph")

    def __repr__(self) -> str:
        recording = self.recording
        return (
            f"GraphView(nodes={len(recording.nodes)}, edges={len(recording.edges)}, "
            f"steps={len(recording.timeline)})"
        )

    # NOTE [a picture beside the widget] A notebook keeps each output as it was shown. Where the
    # widget's model is not in the saved file (saved with JupyterLab's default settings, or by
    # nbconvert --execute), an output holding the widget's view shows, in JupyterLab, "Error
    # displaying widget: model not found": for a trusted notebook (one saved on this machine)
    # @jupyter-widgets/jupyterlab-manager 8 renders the view alone, with no fallback to the
    # output's other mimetypes. So displaying a view makes two outputs, one after the other: the
    # widget's view, then a picture of the graph (text/html: an <img> of the SVG, which the
    # sanitizer of an untrusted notebook keeps where it drops inline <svg>; and image/svg+xml),
    # given the final state when a watch block ends. Each output hides the other by CSS:
    #   - the live view (or one restored from saved widget state) adds a rule that hides the
    #     output marked with its ``picture_id`` (hidePicture in widgets/src/view.js);
    #   - the picture's own <style> hides the output just before it when that holds no live
    #     view: the error above, or the text nbconvert's HTML shows for a view without state.
    # An untrusted notebook drops the <style>: it shows the view's one line of text, then the
    # picture. A bundle asked for directly (``_repr_mimebundle_``: other ways of displaying)
    # carries the widget's view and the picture together, for front ends that fall back.
    PICTURE_STYLE = (
        "<style>/* dyngraph: a graph's view that did not come back (no widget state) is hidden;"
        " its picture below shows the graph */ .jp-OutputArea-child:not(:has(.dg-root))"
        ":has(+ .jp-OutputArea-child [data-dyngraph-picture]) { display: none; }</style>"
    )

    NO_WIDGET_HERE = "dyngraph graph view (the widget is not shown here; its picture follows)"

    def _picture(self) -> dict[str, str]:
        """The picture output's bundle: the graph as it stands, marked with ``picture_id``
        (NOTE [a picture beside the widget]). Without Graphviz, the DOT text and a hint."""
        # browser=False: the widget itself is the picture drawn in the browser
        bundle = dot.mimebundle(self.recording, repr(self), browser=False,
                                running_stats=self.options["running_stats"])
        body = bundle.get("text/html") or f"<pre>{html.escape(bundle['text/plain'])}</pre>"
        # (picture_id is synced: the page could have set it to anything, so it is escaped)
        marked = (f'<div class="dg-picture" '
                  f'data-dyngraph-picture="{html.escape(self.picture_id, quote=True)}">'
                  f"{self.PICTURE_STYLE}{body}</div>")
        return {**bundle, "text/html": marked}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget where widgets work; a picture of its final state (or DOT and a hint)
        everywhere else: NOTE [a picture beside the widget]."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        fallback = dot.mimebundle(self.recording, repr(self), browser=False,
                                  running_stats=self.options["running_stats"])
        data = {**fallback, **data, "text/plain": fallback["text/plain"]}
        return data, metadata

    def _ipython_display_(self) -> None:
        """Display the view, then its picture, keeping a handle on the picture's output so that
        ``detach`` can give it the final state (NOTE [a picture beside the widget])."""
        from IPython.display import display

        bundle = super()._repr_mimebundle_()
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        # shown only where the widget is not (an untrusted notebook, a terminal): the counts of
        # repr(self) would be those of the start, before the block ran
        display({**data, "text/plain": self.NO_WIDGET_HERE}, metadata=metadata, raw=True)
        self._displays.append(display(self._picture(), raw=True, display_id=True))
        self._picture_seq = self._seq

    def _show_final_picture(self) -> None:
        """Give every picture output of this view the graph as it stands now."""
        if not self._displays or self._picture_seq == self._seq:
            return  # nowhere to show it, or shown already
        self._picture_seq = self._seq
        picture = self._picture()
        for handle in self._displays:
            handle.update(picture, raw=True)


def _listener(view: GraphView) -> Any:
    """The subscriber of an attached view: per event it appends, and every few events it reads
    the clock (see NOTE [kernel-side cost]). It holds its view weakly (a finalizer unsubscribes
    a dropped view)."""
    due = view._due
    batch = view._batch
    monotonic = time.monotonic
    view_ref = weakref.ref(view)
    fast = view.interval / 4  # a stride of events that took less than this came fast
    stride = 1  # events between two reads of the clock
    read_at = monotonic()

    def tick() -> int:
        """Every ``stride`` events: flush when due, else pack a full batch. Returns the next
        stride. Reading the clock was a third of the listener's cost: while events come fast,
        the stride doubles up to CLOCK_STRIDE; once they slow down, it is back to every event."""
        nonlocal stride, read_at
        now = monotonic()
        stride = min(2 * stride, CLOCK_STRIDE) if now - read_at < fast else 1
        read_at = now
        if now >= due[0]:
            view = view_ref()
            if view is not None:
                view.flush()
        elif len(batch) >= BATCH_EVENTS:
            view = view_ref()
            if view is not None:
                view._pack_batch()
        return stride

    collect = collector(batch, tick)
    if view.pace <= 0:
        return collect

    def paced(event: Any) -> None:  # with pace > 0, each new source line waits
        collect(event)
        if event.kind == "node_created":
            view = view_ref()
            if view is not None:
                view._pace(event)

    return paced


def keep_rows(received: list, node_ids: set[int], wheres: dict, share: Any, node_room: int,
              room: int, where_index: int) -> tuple[list, str, int, int, int, int]:
    """The live view's filter, once per event: the rows ``(kind, fields as a plain tuple)`` that
    the budget allows of ``received``, and the display texts of their numbers as one string
    (NOTE [display texts]). A node announced again (a new subscriber makes the engine announce
    existing tensors again) is kept once; gradients, versions and edges of nodes not kept are
    left out, as Recording leaves them out; a node's ``where`` (field ``where_index``) and a
    backward pass's (the line that called ``backward()``) become the file as pages name it:
    ``share(where)`` the first time, then from ``wheres``.

    ``node_ids`` (the nodes kept) and ``wheres`` are updated. Returns the rows, their texts, the
    room left for nodes and for events, and how many nodes and events did not fit."""
    kept = []
    keep = kept.append
    texts: list[str] = []
    dropped_nodes = dropped_events = 0
    for event in received:
        kind = event.kind
        # A plain tuple packs without a call back into Python. event[:] makes it: slicing
        # copies the items at once, where tuple(event) iterates over a tuple subclass.
        fields = event[:]
        if kind == "node_created":
            if event.id in node_ids:
                continue
            if node_room <= 0:
                dropped_nodes += 1
                continue
            node_room -= 1
            node_ids.add(event.id)
            where = event.where
            if where is not None:  # named as pages name it (NOTE [safe to share], record.py)
                shared = wheres.get(where)
                if shared is None:
                    shared = wheres[where] = share(where)
                fields = (*fields[:where_index], shared, *fields[where_index + 1:])
        elif ((kind == "grad_computed" or kind == "version_bumped") and event.id not in node_ids
              or kind == "edge_grad" and (event.node not in node_ids
                                          or event.input not in node_ids)):
            continue
        elif kind == "backward_started" and event.where is not None and room > 0:
            shared = wheres.get(event.where)
            if shared is None:
                shared = wheres[event.where] = share(event.where)
            fields = (*fields[:_BACKWARD_WHERE], shared, *fields[_BACKWARD_WHERE + 1:])
        if room <= 0:
            dropped_events += 1
            continue
        room -= 1
        keep((kind, fields))
        texts += display_texts(event)
    return kept, "\n".join(texts), node_room, room, dropped_nodes, dropped_events


# NOTE [display texts] Python is the one place that turns numbers into text (NOTE [one place for
# numbers] in dot.py). A row keeps every field as the engine's event has it - the browser uses
# the numbers themselves to decide (a NaN marks an anomaly, a norm picks an edge's colour), and
# event_from_row rebuilds the exact event - and the texts dot.py makes of the numbers travel
# beside the rows: a batch is packed as [rows, texts], ``texts`` being one string, the texts of
# its rows in row order, joined by newlines (a number's text never holds one; an absent text,
# nothing saved or not timed, is ""). Each row of a kind in TEXT_FIELDS has there a text per
# preview value, then one per further name. One string per batch rather than a string per
# number: a string object per number (about 25 per watched op) had made keep_rows and pack cost
# several times what the rest of a row does (benchmarks/README.md, W1V). The readers put each
# row's texts back after its fields, under the names TEXT_FIELDS gives (header.fields):
# ``unpack`` here, ``decodeTrait`` in the browser, which shows them and never formats a number,
# so a label in the page reads as the same label drawn by dot.py.
TEXT_FIELDS = {
    "node_created": ("preview_text", "saved_text", "elapsed_text"),
    "grad_computed": ("preview_text", "norm_text"),
    "edge_grad": ("preview_text",),
}
# where each of those kinds keeps its preview, whose length says how many texts it has
_PREVIEW = {kind: EVENT_CLASSES[kind]._fields.index("preview") for kind in TEXT_FIELDS}


def display_texts(event: Any) -> list[str]:
    """The texts of ``event``'s numbers, in the order ``TEXT_FIELDS[event.kind]`` names them
    (none for the other kinds): each preview value as ``dot.format_value`` writes it, then the
    saved bytes ("" when nothing was saved) and the forward time ("" when not timed), or the
    norm."""
    kind = event.kind
    if kind not in TEXT_FIELDS:
        return []
    texts = preview_texts(event.preview)
    if kind == "node_created":
        texts.append(dot.format_bytes(event.saved_bytes) if event.saved_bytes else "")
        texts.append("" if event.elapsed is None else dot.format_elapsed(event.elapsed))
    elif kind == "grad_computed":
        texts.append(dot.format_value(event.norm))
    return texts


# NOTE [the training chart] A view of a training loop shows, beside the graph, the loss and
# gradient norm of each backward pass (NOTE [loss and gradient norm per pass] in record.py;
# widgets/src/training.js draws them). They are folded here, from every event the view
# receives, before the budget: the graph may keep only some steps, the chart keeps them all.
# Once per batch, not per event (NOTE [kernel-side cost]). Each delta carries the passes
# finished since the one before, the snapshot all of them, each as ``pass_row`` writes it:
# the numbers to plot and their texts, written by dot.py (the browser writes no number).


def pass_row(p: BackwardPass) -> list:
    """``[step, loss, loss text, grad norm, grad norm text, leaves, root]`` (None for an
    unknown value and its text): a backward pass as the page's training chart reads it (the
    root finds the pass in the timeline: the chart marks the one the graph is showing)."""
    return [p.step, p.loss, None if p.loss is None else dot.format_value(p.loss),
            p.grad_norm, None if p.grad_norm is None else dot.format_value(p.grad_norm),
            p.leaves, p.root]


def preview_texts(preview: tuple) -> list[str]:
    """Each value of a preview as the diagrams write it: ``(0.125, nan, True)`` ->
    ``["0.125", "nan", "True"]``."""
    return [dot.format_value(value) for value in preview]


def split_texts(rows: list, texts: str) -> list[list[str]]:
    """The display texts of a batch ``[rows, texts]``, one list per row (NOTE [display
    texts]): what ``join_texts`` joins back."""
    stream = texts.split("\n")
    out = []
    at = 0
    for kind, fields in rows:
        names = TEXT_FIELDS.get(kind)
        count = len(fields[_PREVIEW[kind]]) + len(names) - 1 if names else 0
        out.append(stream[at:at + count])
        at += count
    return out


def join_texts(per_row: list[list[str]]) -> str:
    """The display texts of some rows, as one string (NOTE [display texts])."""
    return "\n".join(text for texts in per_row for text in texts)


def rows_with_texts(rows: list, texts: str) -> list:
    """The rows of a batch ``[rows, texts]``, unpacked, each followed again by its display
    texts (NOTE [display texts]): a list of its preview's texts, then one text for each
    further name in ``TEXT_FIELDS[kind]`` (None for ""). What the browser's fold reads."""
    stream = iter(texts.split("\n"))
    for kind, fields in rows:
        names = TEXT_FIELDS.get(kind)
        if names:
            fields.append([next(stream) for _ in fields[_PREVIEW[kind]]])
            fields.extend(next(stream) or None for _ in names[1:])
    return rows


def collector(into: list, tick: Any) -> Any:
    """A subscriber that appends each event to ``into`` and calls ``tick()`` every n-th event,
    n being what tick() returned last (1 at first). The view's listener: its per-event cost is
    this, the rest happens every few events."""
    append = into.append
    countdown = 1

    def listen(event: Any) -> None:
        nonlocal countdown
        append(event)
        countdown -= 1
        if countdown <= 0:
            countdown = 1  # should tick() raise
            countdown = max(tick(), 1)

    return listen


# --------------------------------------------------------------------------- packing


def pack(value: Any) -> bytes:
    """MessagePack bytes of plain data (tuples, NamedTuples included, become arrays)."""
    try:
        return ormsgpack.packb(value, default=_packable)
    except TypeError:  # an int beyond 64 bits
        return ormsgpack.packb(_plain(value))


def pack_delta(delta: dict[str, Any]) -> bytes:
    """``pack(delta)``, the same bytes, made with one copy of the packed batches under
    "events" (NOTE [big deltas])."""
    pieces = [bytes([0x80 + len(delta)])]  # a map of up to 15 entries: 0x80 + their number
    for key, value in delta.items():
        pieces.append(pack(key))
        if key == "events":
            pieces.append(_array_header(len(value)))
            for batch in value:
                pieces.append(_bytes_header(len(batch)))
                pieces.append(batch)  # as it is: the one copy is the join
        else:
            pieces.append(pack(value))
    return b"".join(pieces)


# NOTE [big deltas] A delta or snapshot holds every batch packed since the last one: a few
# hundred kilobytes at the end of a watched cell, megabytes for a long one. ormsgpack writes its
# output into a buffer that it grows as it goes and then copies into the result, which past
# about half a megabyte costs tens of times what one copy does (benchmarks/README.md, W1V).
# pack_delta writes the small parts with ormsgpack and joins everything once, with the
# MessagePack headers written out (the format: github.com/msgpack/msgpack/blob/master/spec.md);
# tests/test_widget_state.py checks that the bytes are pack's.


def _array_header(n: int) -> bytes:
    """MessagePack's header of an array of n items: 0x90 + n below 16, else 0xdc and n in two
    bytes, else 0xdd and n in four (big-endian); the items follow it."""
    if n < 16:
        return bytes([0x90 + n])
    return b"\xdc" + n.to_bytes(2, "big") if n < 2**16 else b"\xdd" + n.to_bytes(4, "big")


def _bytes_header(n: int) -> bytes:
    """MessagePack's header of n bytes (bin 8, 16 or 32: 0xc4, 0xc5 or 0xc6 and n in one, two
    or four bytes); the bytes follow it."""
    if n < 2**8:
        return b"\xc4" + bytes([n])
    return b"\xc5" + n.to_bytes(2, "big") if n < 2**16 else b"\xc6" + n.to_bytes(4, "big")


def _packable(value: Any) -> Any:
    """What ormsgpack packs in place of a value it does not know (it calls this)."""
    if isinstance(value, tuple):  # a NamedTuple: an array, as any tuple
        return tuple(value)
    return _plain(value)


def unpack(data: bytes) -> Any:
    """A delta or snapshot as plain data, its packed batches of events unpacked into one list
    of [kind, fields] rows, each row's display texts after its fields (for tests and readers;
    the browser decodes its own)."""
    if not data:
        return {}
    value = ormsgpack.unpackb(data)
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        value["events"] = [row for batch in value["events"]
                           for row in rows_with_texts(*ormsgpack.unpackb(batch))]
    return value


def event_from_row(kind: str, fields: list) -> events.Event:
    """The event an unpacked [kind, fields] row was packed from (its own fields: the display
    texts after them are left out)."""
    cls = EVENT_CLASSES[kind]
    fields = [tuple(value) if type(value) is list else value
              for value in fields[:len(cls._fields)]]
    if kind == "node_created" and fields[_WHERE] is not None:
        fields[_WHERE] = events.SourceLine(*fields[_WHERE])
    elif (kind == "backward_started" and len(fields) > _BACKWARD_WHERE
          and fields[_BACKWARD_WHERE] is not None):
        fields[_BACKWARD_WHERE] = events.SourceLine(*fields[_BACKWARD_WHERE])
    return cls(*fields)


_WHERE = events.NodeCreated._fields.index("where")
_INPUTS = events.NodeCreated._fields.index("inputs")
# the rows that end a backward pass (NOTE [the newest passes])
PASS_ENDS = frozenset({events.BackwardFinished.kind, events.BackwardFailed.kind})
_BACKWARD_WHERE = events.BackwardStarted._fields.index("where")


def _plain(value: Any) -> Any:
    """``value`` with what MessagePack cannot hold made so: huge ints as floats, others as text."""
    if isinstance(value, bool) or value is None or type(value) in (str, float, bytes):
        return value
    if isinstance(value, float):  # numpy.float64: ormsgpack packs a float, not a subclass
        return float(value)
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else float(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    item = getattr(value, "item", None)  # a numpy scalar
    return _plain(item()) if callable(item) else str(value)


# --------------------------------------------------------------------------- derivative rules

_RULES: dict[str, str] = {}

# PyTorch's grad_fn names whose stem is not a dyngraph op's name (dyngraph/torch.py shows a
# node as PyTorch names it, NOTE [op names] there): the dyngraph op with the same derivative.
_TORCH_STEMS = {"Mm": "MatMul", "Bmm": "MatMul", "T": "Permute", "Transpose": "Permute",
                "View": "Reshape", "UnsafeView": "Reshape", "Squeeze": "Reshape",
                "Unsqueeze": "Reshape", "NllLoss": "NLLLoss"}


def derivative_rules() -> dict[str, str]:
    """Each built-in op's local derivative: the first paragraph of its docstring, its lines
    joined (``Mul``: ``z = x * y;  dz/dx = y,  dz/dy = x``), shown by the inspector and the
    chain-rule panel (one part per input: ``dz/dbase = ...;  dz/dsrc = ...``); also under the
    names PyTorch gives the same op's backward node (``MulBackward0``, ``CumsumBackward0``),
    for graphs watched in PyTorch."""
    if not _RULES:
        for name, cls in vars(ops).items():
            if isinstance(cls, type) and issubclass(cls, Function):
                doc = inspect.getdoc(cls)
                if doc:  # NOTE: a rule wraps over lines; its first line alone cut parts off
                    paragraph = doc.split("\n\n", 1)[0]
                    _RULES[name] = " ".join(line.strip() for line in paragraph.splitlines())
        stems = {name: name for name in _RULES}
        stems.update({name[0] + name[1:].lower(): name for name in _RULES})  # Cumsum, Topk
        stems.update(_TORCH_STEMS)
        for stem, name in stems.items():
            for overload in ("0", "1"):  # PowBackward0 (a scalar power), PowBackward1 (a tensor)
                _RULES.setdefault(f"{stem}Backward{overload}", _RULES[name])
    return _RULES
