"""GraphView: the live graph widget (the Python half; the browser half is widgets/src/).

A GraphView listens to the event spine (listener.py) and sends *the events themselves* to the
browser, in batches, packed with MessagePack (wire.py, widgets/PROTOCOL.md), each with the texts
``dyngraph.dot`` writes of its numbers (NOTE [display texts]), as many as its budget keeps
(kept.py). The browser folds them into nodes, edges and a timeline exactly as ``Recording``
does, composes the DOT of the graph at any point of the timeline from the visual vocabulary of
``dyngraph.dot`` (sent once, as a table), and draws it - so stepping and scrubbing happen
entirely in the page, even while the kernel is busy. This module is the widget: its traits,
listening and following, the deltas and the snapshot it sends, and the picture beside it.
"""

from __future__ import annotations

import html
import time
import weakref
from typing import Any

import anywidget
import traitlets

from .. import dot
from ..record import BackwardPass, PassFold, Recording
from ..safe_json import valid_text
from ..spine import events
from .front_end import LOADER, FrontEnd, style_sheet
from .html import write_html
from .kept import KeptEvents
from .listener import subscriber
from .rules import derivative_rules
from .wire import (
    event_from_row,
    fields_by_kind,
    pack,
    pass_row,
    unpack,  # noqa: F401 - re-exported: the Python reader that PROTOCOL.md names
    unpack_batch,
)


class GraphView(anywidget.AnyWidget):
    """A live diagram of the graphs your code builds, with playback of forward and backward.

    >>> view = GraphView()          # displays empty; or use dg.watch() / %%dyngraph
    >>> view.attach()               # listen to the event spine
    >>> loss = (x * w).sum(); loss.backward()
    >>> view.detach()
    """

    _esm = LOADER  # the bundle itself is FrontEnd's (NOTE [the front end once per notebook])
    _css = style_sheet()
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
            "fields": fields_by_kind(),
            "rules": derivative_rules(),
        }
        self.options = {"tween_max_nodes": tween_max_nodes, "max_nodes": max_visible,
                        "collapse_over": collapse_over, "title": title, "speed": 1.0,
                        # steps the page missed are played at reading pace (NOTE [replay] in
                        # widgets/src/view/playback.js); False: it opens at the end
                        "replay": bool(replay),
                        # draw a BatchNorm's running statistics (dot.py NOTE [running statistics])
                        "running_stats": bool(running_stats)}
        self._seq = 0
        self._snapshot_seq = -1  # the seq the snapshot trait was made at (NOTE [state at rest])
        self._batch: list = []  # events received since the last flush
        self._due = [0.0]  # when the next flush is due (time.monotonic()); shared with the listener
        self._kept = KeptEvents(max_nodes, max_events, source)  # what the budget keeps, packed
        self._reset = False  # the next delta starts the page over (it holds every batch)
        self._sent = 0  # how many of the packed batches deltas have carried
        self._unsent_sources: dict[str, str] = {}  # source texts found but not sent yet
        self._recording = Recording(max_nodes=max_nodes, max_events=max_events)
        # each backward pass's loss and gradient norm, folded from every event received, before
        # the budget (NOTE [the training chart]); a replayed recording brings its own
        self._passes = PassFold()
        self._fold_passes = True
        self._passes_sent = 0  # how many of them deltas have carried
        self._folded = 0  # how many of the packed batches the recording has seen
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
            self._handle = events.subscribe(subscriber(self))
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
        # NOTE: flushed first: the nodes received since the last batch are kept (node_ids)
        # only when packed, and a small block's nodes all come between two flushes
        self.flush()
        if listened and follow and self._kept.node_ids:
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
        node_ids = self._kept.node_ids  # the same set: nodes kept later are claimed too
        collect = subscriber(self)

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
        kept = self._kept
        batches = kept.packed[self._sent:]
        sources = self._unsent_sources
        passes = self._passes.passes[self._passes_sent:]
        if not batches and not sources and not passes and not self._reset:
            return
        if self._reset:  # the page starts over from everything kept (NOTE [the newest passes])
            batches, sources = kept.packed, kept.sources
            passes = self._passes.passes  # the chart keeps every pass (NOTE [the training chart])
        self._sent = len(kept.packed)
        self._passes_sent = len(self._passes.passes)
        self._unsent_sources = {}
        self._seq += 1
        self.delta = self._pack_delta(batches, sources, passes, reset=self._reset)
        self._reset = False

    # NOTE [the training chart] A view of a training loop shows, beside the graph, the loss and
    # gradient norm of each backward pass (NOTE [loss and gradient norm per pass] in record.py;
    # widgets/src/training.js draws them). They are folded here, from every event the view
    # receives, before the budget: the graph may keep only some steps, the chart keeps them all.
    # Once per batch, not per event (NOTE [kernel-side cost]). Each delta carries the passes
    # finished since the one before, the snapshot all of them, each as ``pass_row`` writes it:
    # the numbers to plot and their texts, written by dot.py (the browser writes no number).
    def _pack_batch(self) -> None:
        """Keep what the budget allows of the events received so far and pack them (they are
        sent with the next delta); fold their backward passes for the chart."""
        received = self._batch[:]
        self._batch.clear()
        if self._fold_passes:
            self._passes.fold(received)
        dropped = self._kept.dropped_passes
        self._unsent_sources.update(self._kept.add(received))
        if self._kept.dropped_passes != dropped:  # the oldest passes were let go: the page
            self._reset = True  # starts over from what is kept (NOTE [the newest passes])
            self._recording = Recording(max_nodes=self.max_nodes, max_events=self.max_events)
            self._folded = 0

    def _pack_delta(self, batches: list[bytes], sources: dict[str, str],
                    passes: list[BackwardPass], reset: bool = False) -> bytes:
        kept = self._kept
        sent = {file: text for file, text in sources.items() if text}  # not empty ones
        delta = {
            "seq": self._seq,
            "events": batches,
            "sources": sent,
            # the lines of each text that were kept: the panel shows one "…" row for the others
            "kept_lines": {file: kept.kept_lines[file] for file in sent},
            # not kept at all (over the budget), and the oldest passes let go (NOTE [the
            # newest passes])
            "dropped": {"nodes": kept.dropped_nodes, "steps": kept.dropped_events,
                        "passes": kept.dropped_passes, "pass_nodes": kept.dropped_pass_nodes,
                        "max_nodes": self.max_nodes},
            "passes": [pass_row(p) for p in passes],  # NOTE [the training chart]
        }
        if reset:  # the page forgets what it has and starts from these batches
            delta["reset"] = True
        return pack(delta)

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
            self.snapshot = self._pack_delta(self._kept.packed, self._kept.sources,
                                             self._passes.passes)
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
        kept = self._kept
        for packed in kept.packed[self._folded:]:
            rows, _texts = unpack_batch(packed)  # an event's own fields are in its row
            for kind, fields in rows:
                recording(event_from_row(kind, fields))
        self._folded = len(kept.packed)
        recording.dropped_nodes = kept.dropped_nodes
        recording.dropped_events = kept.dropped_events
        recording.dropped_passes = kept.dropped_passes
        recording.dropped_pass_nodes = kept.dropped_pass_nodes
        recording.sources.update(  # its own text (NOTE [own source text])
            (file, text) for file, text in kept.sources.items() if text)
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
        view._kept.dropped_nodes = recording.dropped_nodes
        view._kept.dropped_events = recording.dropped_events
        view._kept.recorded_sources = {  # never a file it names; text a page can encode, by
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
