"""Timing helpers, the result record and the table printer shared by every workload.

Timing uses ``time.perf_counter`` and reports medians. The garbage collector is left in
whatever state it is in: collections triggered by a workload are part of its real cost.
Whatever the timed function returns is released only after the clock stops, so a workload
can hand back a graph without its teardown being counted (W4 relies on this).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import dyngraph as dg


def time_once(fn: Callable[[], object]) -> float:
    """Seconds taken by one call of ``fn``; its return value is released after the clock stops."""
    start = time.perf_counter()
    result = fn()
    stop = time.perf_counter()
    del result
    return stop - start


def median_seconds(fn: Callable[[], object], repeat: int = 20, warmup: int = 3) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` timed calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(time_once(fn) for _ in range(repeat))


def paired_median_seconds(
    fn_a: Callable[[], object],
    fn_b: Callable[[], object],
    repeat: int = 20,
    warmup: int = 3,
) -> tuple[float, float]:
    """Median seconds per call of ``fn_a`` and of ``fn_b``.

    The two are timed alternately, so slow drift in the machine (another process, CPU clock
    changes) affects both alike and their ratio stays meaningful.
    """
    for _ in range(warmup):
        fn_a()
        fn_b()
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(time_once(fn_a))
        times_b.append(time_once(fn_b))
    return statistics.median(times_a), statistics.median(times_b)


def with_recording_subscriber(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` wrapped so that every dyngraph event it emits is appended to a list.

    Dropping the recorded events is part of the cost of recording them, so it happens inside
    the wrapped (timed) call.
    """

    def recorded() -> object:
        events: list[object] = []
        handle = dg.events.subscribe(events.append)
        try:
            result = fn()
        finally:
            handle.remove()
        del events
        return result

    return recorded


def with_live_view(fn: Callable[[], object], calls: int) -> Callable[[], object] | None:
    """``fn`` wrapped so that a live GraphView (dyngraph.jupyter) is attached while it runs,
    or None when the jupyter extra is not installed. Timed: attaching, ``fn``, and closing
    (which packs and sends the final batch). Not timed: constructing the widget (about 0.5 ms
    of ipywidgets set-up, once per view, not per op), done here for ``calls`` calls. The views
    record everything (no budget), so nothing is skipped."""
    try:
        from dyngraph.jupyter import GraphView
    except ImportError:
        return None
    views = [GraphView(max_nodes=10**6, max_events=10**7) for _ in range(calls)]

    def viewed() -> object:
        view = views.pop().attach()
        try:
            return fn()
        finally:
            view.close()

    return viewed


def attached_ratio(
    name: str,
    attached: Callable[[], object] | None,
    bare: Callable[[], object],
    repeat: int,
    per_second: float,
    unit: str,
    target: float,
) -> list[Result]:
    """The cost of ``bare`` with something attached (a subscriber, a live view) as a ratio to
    ``bare`` alone, timed alternately; no result when ``attached`` is None (not installed).
    ``per_second`` turns seconds per call into ``unit`` (1e6 / ops: microseconds per op)."""
    if attached is None:
        return []
    t_attached, t_bare = paired_median_seconds(attached, bare, repeat=repeat)
    return [check_ratio(name, t_attached * per_second, t_bare * per_second, unit, target)]


@dataclass(frozen=True)
class Result:
    """One line of the results table.

    ``floor`` is the same quantity for the hand-written numpy version (or, for the subscriber
    overhead rows, for dyngraph without a subscriber); ``ratio`` is value / floor.
    """

    name: str
    value: float
    floor: float | None
    unit: str
    target: str
    passed: bool
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if not self.floor:
            return None
        return self.value / self.floor


def check_value(name: str, value: float, floor: float | None, unit: str, limit: float) -> Result:
    """A result whose target is an absolute limit on the dyngraph value."""
    return Result(name, value, floor, unit, f"<= {limit:g} {unit}", value <= limit)


def check_ratio(name: str, value: float, floor: float, unit: str, limit: float) -> Result:
    """A result whose target is a limit on the ratio value / floor."""
    return Result(name, value, floor, unit, f"<= {limit:g}x", value / floor <= limit)


def _number(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0 or abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


def format_table(results: Iterable[Result]) -> str:
    """The results as a fixed-width text table."""
    header = ("workload", "dyngraph", "floor", "unit", "ratio", "target", "status", "note")
    rows = [header]
    for r in results:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}x"
        status = "PASS" if r.passed else "MISS"
        row = (r.name, _number(r.value), _number(r.floor), r.unit, ratio, r.target, status, r.note)
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {1, 2, 4}  # numeric columns are right-aligned
    lines = []
    for row in rows:
        cells = []
        for i, (cell, width) in enumerate(zip(row, widths, strict=True)):
            cells.append(cell.rjust(width) if i in right else cell.ljust(width))
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
