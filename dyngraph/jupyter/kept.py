"""What a live view keeps of the events it heard: the rows its budget allows, packed in batches
(wire.py), the source text their lines point at, and counts of what it left out.

Within ``max_nodes`` nodes and ``max_events`` rows, a view keeps what a Recording with the same
budget keeps (NOTE [the node budget] in dyngraph/record.py), except that past ``max_nodes`` it
lets go of its oldest backward passes for the newest (NOTE [the newest passes]).
"""

from __future__ import annotations

from typing import Any

from ..record import admitted, kept_stretches, shared_path, source_text
from .wire import (
    BACKWARD_WHERE,
    INPUTS,
    PASS_ENDS,
    WHERE,
    display_texts,
    join_texts,
    pack,
    split_texts,
    unpack_batch,
)


class KeptEvents:
    """The events a view keeps, as packed batches (``packed``) within its budget, with the
    source text of the lines that made their nodes (``sources``) and what did not fit."""

    def __init__(self, max_nodes: int, max_events: int, source: bool = True,
                 recorded_sources: dict[str, str] | None = None) -> None:
        self.max_nodes = max_nodes
        self.max_events = max_events
        self.source = source  # False: keep no source text at all
        # a replayed recording's own text, never a file it names (NOTE [own source text])
        self.recorded_sources = recorded_sources
        self.packed: list[bytes] = []  # every batch kept, packed: deltas and snapshots send them
        # per packed batch: (the backward pass it belongs to, its nodes, its rows), for
        # dropping the oldest passes (NOTE [the newest passes])
        self.batch_info: list[tuple[int, int, int]] = []
        self.passes_ended = 0  # backward passes ended so far (the pass now running is this one)
        self.node_ids: set[int] = set()  # the nodes kept
        self.kept_events = 0  # the rows kept
        self.dropped_nodes = 0  # nodes past the budget, never kept
        self.dropped_events = 0  # rows past the budget, never kept
        self.dropped_passes = 0  # the oldest passes let go (NOTE [the newest passes])
        self.dropped_pass_nodes = 0  # their nodes
        self.sources: dict[str, str] = {}  # shared file name -> the lines of it a page keeps
        self.kept_lines: dict[str, list] = {}  # shared file name -> its stretches kept
        self._wheres: dict[Any, tuple] = {}  # a SourceLine -> the same with its file as shared
        self._used: dict[str, tuple[str, set[int]]] = {}  # file -> (shared name, lines of nodes)

    def add(self, received: list) -> dict[str, str]:
        """Keep what the budget allows of ``received`` and pack it, a batch ending where a
        backward pass ends. Returns the source texts of files whose kept lines grew (all of
        their text, as ``sources`` now has it)."""
        before = len(self.node_ids)
        grown: set[str] = set()  # files with a line that made a node for the first time
        # the nodes of complete passes can make room (NOTE [the newest passes])
        droppable = sum(nodes for number, nodes, _ in self.batch_info
                        if number < self.passes_ended)
        rows, texts, _, room, dropped_nodes, dropped_events = keep_rows(
            received, self.node_ids, self._wheres, lambda where: self._share(where, grown),
            self.max_nodes - len(self.node_ids) + droppable, self.max_events - self.kept_events)
        self.kept_events = self.max_events - room
        self.dropped_nodes += dropped_nodes
        self.dropped_events += dropped_events
        if rows:
            self._pack(rows, texts, len(self.node_ids) - before)
            if len(self.node_ids) > self.max_nodes:
                self._drop_oldest_passes()
        return self._grown_sources(grown)

    def _pack(self, rows: list, texts: str, nodes: int) -> None:
        """Pack kept rows as batches, one per backward pass: each ends with its pass's end."""
        if not any(kind in PASS_ENDS for kind, _ in rows):
            self.packed.append(pack((rows, texts)))  # NOTE [display texts] in wire.py
            self.batch_info.append((self.passes_ended, nodes, len(rows)))
            return
        per_row = split_texts(rows, texts)
        start = 0
        for end, (kind, _) in enumerate(rows, 1):
            if kind not in PASS_ENDS and end < len(rows):
                continue
            chunk = rows[start:end]
            nodes = sum(kind == "node_created" for kind, _ in chunk)
            self.packed.append(pack((chunk, join_texts(per_row[start:end]))))
            self.batch_info.append((self.passes_ended, nodes, len(chunk)))
            self.passes_ended += kind in PASS_ENDS
            start = end

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
        over = len(self.node_ids) - self.max_nodes * 3 // 4
        nodes_by_pass: dict[int, int] = {}
        for number, nodes, _ in self.batch_info:
            nodes_by_pass[number] = nodes_by_pass.get(number, 0) + nodes
        # the passes held are numbered from self.dropped_passes (those before were dropped)
        dropped = self.dropped_passes  # drop the passes before this one: the oldest whose
        while over > 0 and dropped < self.passes_ended:  # nodes cover what is over
            over -= nodes_by_pass.get(dropped, 0)
            dropped += 1
        if dropped == self.dropped_passes:
            return
        cut = sum(1 for number, _, _ in self.batch_info if number < dropped)
        read = set()  # what the kept passes read
        for packed in self.packed[cut:]:
            for kind, fields in unpack_batch(packed)[0]:
                if kind == "node_created":
                    read.update(fields[INPUTS])
        carried, carried_texts = [], []
        gone_nodes = gone_rows = 0
        for packed in self.packed[:cut]:
            rows, texts = unpack_batch(packed)
            for row, row_texts in zip(rows, split_texts(rows, texts)):
                gone_rows += 1
                if row[0] != "node_created":
                    continue
                if row[1][0] in read:
                    carried.append(row)
                    carried_texts.append(row_texts)
                else:
                    self.node_ids.discard(row[1][0])  # in place: a view's follower holds this set
                    gone_nodes += 1
        self.packed[:cut] = [pack((carried, join_texts(carried_texts)))] if carried else []
        self.batch_info[:cut] = [(dropped, len(carried), len(carried))] if carried else []
        self.kept_events -= gone_rows - len(carried)
        self.dropped_passes = dropped
        self.dropped_pass_nodes += gone_nodes

    # ------------------------------------------------------------------ source text

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

    def _grown_sources(self, grown: set[str]) -> dict[str, str]:
        """The text kept of each file in ``grown``, now (also kept in ``sources``)."""
        sources = {}
        for file in grown if self.source else ():
            shared, used = self._used[file]
            self.sources[shared] = sources[shared] = text = self._source_text(file, used)
            lines = text.count("\n") + (not text.endswith("\n"))  # as the panel splits it
            self.kept_lines[shared] = kept_stretches(used, lines)
        return sources

    def _source_text(self, file: str, used: set[int]) -> str:
        """What the view shows of ``file`` (NOTE [own source text] in dyngraph/record.py): a
        replayed recording's own text, never a file it names; for a live view, the lines that
        made nodes as this process's linecache has them."""
        if self.recorded_sources is not None:
            return self.recorded_sources.get(file, "")
        return source_text(file, used)


def keep_rows(received: list, node_ids: set[int], wheres: dict, share: Any, node_room: int,
              room: int) -> tuple[list, str, int, int, int, int]:
    """The live view's filter, once per event: the rows ``(kind, fields as a plain tuple)`` that
    the budget allows of ``received`` (``admitted``: NOTE [the node budget] in record.py), and
    the display texts of their numbers as one string (NOTE [display texts] in wire.py). A
    node's ``where`` and a backward pass's (the line that called ``backward()``) become the file
    as pages name it: ``share(where)`` the first time, then from ``wheres``.

    ``node_ids`` (the nodes kept) and ``wheres`` are updated. Returns the rows, their texts, the
    room left for nodes and for events, and how many nodes and events did not fit."""
    kept = []
    keep = kept.append
    texts: list[str] = []
    dropped_nodes = dropped_events = 0
    for event in received:
        if not admitted(event, node_ids):
            continue
        kind = event.kind
        # A plain tuple packs without a call back into Python. event[:] makes it: slicing
        # copies the items at once, where tuple(event) iterates over a tuple subclass.
        fields = event[:]
        if kind == "node_created":
            if node_room <= 0:
                dropped_nodes += 1
                continue
            if room <= 0:  # NOTE: a node is kept only with its row: the page has no other
                dropped_events += 1
                continue
            node_room -= 1
            node_ids.add(event.id)
            where = event.where
            if where is not None:  # named as pages name it (NOTE [safe to share], record.py)
                shared = wheres.get(where)
                if shared is None:
                    shared = wheres[where] = share(where)
                fields = (*fields[:WHERE], shared, *fields[WHERE + 1:])
        elif kind == "backward_started" and event.where is not None and room > 0:
            shared = wheres.get(event.where)
            if shared is None:
                shared = wheres[event.where] = share(event.where)
            fields = (*fields[:BACKWARD_WHERE], shared, *fields[BACKWARD_WHERE + 1:])
        if room <= 0:
            dropped_events += 1
            continue
        room -= 1
        keep((kind, fields))
        texts += display_texts(event)
    return kept, "\n".join(texts), node_room, room, dropped_nodes, dropped_events
