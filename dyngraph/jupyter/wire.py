"""What a live view sends, as bytes: the events themselves, as ``[kind, fields]`` rows with
the display texts of their numbers (NOTE [display texts]), packed with MessagePack in batches
(widgets/PROTOCOL.md); and the way back, for Python readers (``unpack``, ``event_from_row``).

MessagePack (ormsgpack, in Rust), not JSON: events are tuples of numbers and short strings,
packed without a Python loop, and a float costs 9 bytes instead of a trip through ``repr``; NaN
and Inf need no special spelling.
"""

from __future__ import annotations

import typing
from typing import Any

import ormsgpack

from .. import dot
from ..record import BackwardPass
from ..spine import events

EVENT_TYPES = typing.get_args(events.Event)
EVENT_CLASSES = {cls.kind: cls for cls in EVENT_TYPES}
# where a row's fields hold what the readers of rows look at
WHERE = events.NodeCreated._fields.index("where")
INPUTS = events.NodeCreated._fields.index("inputs")
BACKWARD_WHERE = events.BackwardStarted._fields.index("where")  # the line that called backward()
# the rows that end a backward pass (NOTE [the newest passes] in kept.py)
PASS_ENDS = frozenset({events.BackwardFinished.kind, events.BackwardFailed.kind})


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


def fields_by_kind() -> dict[str, list[str]]:
    """Each event kind's field names, then those of the display texts of its numbers (NOTE
    [display texts]), and a ``where``'s: how the page names the values of a row
    (``header.fields``)."""
    return {**{cls.kind: [*cls._fields, *TEXT_FIELDS.get(cls.kind, ())] for cls in EVENT_TYPES},
            "where": list(events.SourceLine._fields)}


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


def pass_row(p: BackwardPass) -> list:
    """``[step, loss, loss text, grad norm, grad norm text, leaves, root]`` (None for an
    unknown value and its text): a backward pass as the page's training chart reads it (the
    root finds the pass in the timeline: the chart marks the one the graph is showing; NOTE
    [the training chart] in view.py)."""
    return [p.step, p.loss, None if p.loss is None else dot.format_value(p.loss),
            p.grad_norm, None if p.grad_norm is None else dot.format_value(p.grad_norm),
            p.leaves, p.root]


def preview_texts(preview: tuple) -> list[str]:
    """Each value of a preview as the diagrams write it: ``(0.125, nan, True)`` ->
    ``["0.125", "nan", "True"]``."""
    return dot.format_each(preview)


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


# --------------------------------------------------------------------------- packing


def pack(value: Any) -> bytes:
    """MessagePack bytes of plain data (tuples, NamedTuples included, become arrays)."""
    try:
        return ormsgpack.packb(value, default=_packable)
    except TypeError:  # an int beyond 64 bits
        return ormsgpack.packb(_plain(value))


def _packable(value: Any) -> Any:
    """What ormsgpack packs in place of a value it does not know (it calls this)."""
    if isinstance(value, tuple):  # a NamedTuple: an array, as any tuple
        return tuple(value)
    return _plain(value)


def unpack_batch(packed: bytes) -> tuple[list, str]:
    """A packed batch as ``(rows, texts)``, each row ``[kind, fields]`` with the event's own
    fields only (NOTE [display texts])."""
    rows, texts = ormsgpack.unpackb(packed)
    return rows, texts


def unpack(data: bytes) -> Any:
    """A delta or snapshot as plain data, its packed batches of events unpacked into one list
    of [kind, fields] rows, each row's display texts after its fields (for tests and readers;
    the browser decodes its own)."""
    if not data:
        return {}
    value = ormsgpack.unpackb(data)
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        value["events"] = [row for batch in value["events"]
                           for row in rows_with_texts(*unpack_batch(batch))]
    return value


def event_from_row(kind: str, fields: list) -> events.Event:
    """The event an unpacked [kind, fields] row was packed from (its own fields: the display
    texts after them are left out)."""
    cls = EVENT_CLASSES[kind]
    fields = [tuple(value) if type(value) is list else value
              for value in fields[:len(cls._fields)]]
    if kind == "node_created" and fields[WHERE] is not None:
        fields[WHERE] = events.SourceLine(*fields[WHERE])
    elif (kind == "backward_started" and len(fields) > BACKWARD_WHERE
          and fields[BACKWARD_WHERE] is not None):
        fields[BACKWARD_WHERE] = events.SourceLine(*fields[BACKWARD_WHERE])
    return cls(*fields)



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
