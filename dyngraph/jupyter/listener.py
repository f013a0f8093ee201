"""How a live view listens: the subscriber it puts on the event spine, and when it packs and
sends what it heard.

NOTE [kernel-side cost] The view is attached while the learner's code runs, so what it does per
event is kept to appending the event to a list and counting down to the next read of the clock
(every event while events come slowly, every ``CLOCK_STRIDE`` while they come fast): that is
``collector``. Everything else happens once per batch: keeping what the budget allows, finding
source files not sent yet, and packing (kept.py). A batch is packed every ``BATCH_EVENTS``
events and sent at most ``rate`` times a second (and always at the end). Only the packed bytes
are kept, and the snapshot is made of those same bytes: events are NamedTuples, which the
garbage collector tracks, and a view holding every event made each collection walk them all.
The view's own ``recording`` (for ``repr`` and the static fallback) is unpacked and folded only
when someone asks for it.
"""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .view import GraphView

BATCH_EVENTS = 128  # events held before they are packed, sent or not (see NOTE [kernel-side cost])
CLOCK_STRIDE = 16  # at most this many events between two reads of the clock


def subscriber(view: GraphView) -> Any:
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
