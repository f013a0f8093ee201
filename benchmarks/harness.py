"""Timing helpers, the result record and the table printer shared by every workload.

Timing reads ``clock`` (``CLOCKS``: the process's CPU time by default, or wall time; NOTE
[clock]) and reports medians. The garbage collector is left in whatever state it is in:
collections triggered by a workload are part of its real cost. Whatever the timed function
returns is released only after the clock stops, so a workload can hand back a graph without its
teardown being counted (W4 relies on this).

PyTorch, where it imports, runs side by side with dyngraph and the numpy floor: the three are
timed in turn in one process, and torch gets as many threads as numpy's BLAS has
(``torch_threads_like_numpy``), so a matrix multiply gets the same cores in all three;
``benchmarks.run`` sets both to one thread (``blas_threads``, NOTE [threads]).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import glob
import os
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

import dyngraph as dg

# NOTE [clock]: every implementation runs on one thread (NOTE [threads]), so the CPU time of the
# process is the work it did. On a machine that other programs share, wall time also counts the
# moments the scheduler gave the core to someone else, at random, to whichever implementation
# was running; CPU time does not. Wall time is right for more threads than one (CPU time would
# add the threads' times up) and on an idle machine, where the two agree.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
clock: Callable[[], float] = CLOCKS["cpu"]


@contextlib.contextmanager
def using_clock(name: str) -> Iterator[None]:
    """Inside the block the harness times with ``CLOCKS[name]``."""
    global clock
    before, clock = clock, CLOCKS[name]
    try:
        yield
    finally:
        clock = before


def time_once(fn: Callable[[], object]) -> float:
    """Seconds taken by one call of ``fn``; its return value is released after the clock stops."""
    start = clock()
    result = fn()
    stop = clock()
    del result
    return stop - start


def median_seconds(fn: Callable[[], object], repeat: int = 20, warmup: int = 3) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` timed calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(time_once(fn) for _ in range(repeat))


def interleaved_median_seconds(
    fns: Sequence[Callable[[], object]], repeat: int = 20, warmup: int = 3
) -> list[float]:
    """Median seconds per call of each function in ``fns``, in the same order.

    The functions are timed in turn (one call of each, then again), so slow drift in the
    machine (another process, CPU clock changes) affects all of them alike and their ratios
    stay meaningful. The order rotates every round, so each function follows each of the
    others equally often: what one leaves in the CPU's caches is not charged to the same
    neighbour every time (torch's W2 step evicts numpy's code and data, and whichever runs
    next pays to bring them back: 0.1x of W2 when dyngraph always came right after torch).
    """
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for round_number in range(repeat):
        for k in range(len(fns)):
            i = (round_number + k) % len(fns)
            times[i].append(time_once(fns[i]))
    return [statistics.median(fn_times) for fn_times in times]


def paired_median_seconds(
    fn_a: Callable[[], object],
    fn_b: Callable[[], object],
    repeat: int = 20,
    warmup: int = 3,
) -> tuple[float, float]:
    """Median seconds per call of ``fn_a`` and of ``fn_b``, timed alternately."""
    t_a, t_b = interleaved_median_seconds([fn_a, fn_b], repeat=repeat, warmup=warmup)
    return t_a, t_b


# PyTorch, side by side


def import_torch() -> ModuleType | None:
    """The ``torch`` module, or None where it is not importable (the suite runs without it)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _openblas_thread_functions() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """OpenBLAS's ``get_num_threads`` and ``set_num_threads`` inside numpy, or None.

    numpy's wheels bundle OpenBLAS (``numpy.libs/libscipy_openblas*.so``) under prefixed names.
    Other builds (MKL, Accelerate, a system OpenBLAS) are not looked for: None.
    """
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*.so*")):
        library = ctypes.CDLL(path)  # already loaded by numpy: this only looks it up
        for prefix, suffix in (("scipy_", "64_"), ("", "64_"), ("scipy_", ""), ("", "")):
            get_name = f"{prefix}openblas_get_num_threads{suffix}"
            set_name = f"{prefix}openblas_set_num_threads{suffix}"
            if hasattr(library, get_name) and hasattr(library, set_name):
                get_threads, set_threads = getattr(library, get_name), getattr(library, set_name)
                get_threads.restype = ctypes.c_int
                set_threads.argtypes = [ctypes.c_int]
                return get_threads, set_threads
    return None


def numpy_blas_threads() -> int | None:
    """How many threads numpy's BLAS uses for a matrix multiply, or None if unknown."""
    functions = _openblas_thread_functions()
    return None if functions is None else int(functions[0]())


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[str]:
    """Inside the block numpy's BLAS (where it can be set) and torch (where it imports) use
    ``threads`` threads; both restored afterwards. Yields a line saying what was set.

    NOTE [threads]: the suite compares engines, not thread pools, so every implementation gets
    the same cores. Its default is one thread: on a small machine that other programs share,
    a BLAS or OpenMP pool of as many threads as cores spins waiting for cores it does not get
    (W2's numpy step measured 0.7 ms single-threaded and 60 ms with two threads on 2 busy
    cores), and two pools timed in turn in one process steal each other's cores.
    """
    openblas = _openblas_thread_functions()
    torch = import_torch()
    numpy_before = None if openblas is None else openblas[0]()
    torch_before = None if torch is None else torch.get_num_threads()
    if openblas is not None:
        openblas[1](threads)
    if torch is not None:
        torch.set_num_threads(threads)
    numpy_now = numpy_blas_threads()
    try:
        yield (f"BLAS threads: numpy {'?' if numpy_now is None else numpy_now}"
               f"{'' if openblas is not None else ' (not OpenBLAS: left as configured)'}, "
               f"torch {torch.get_num_threads() if torch is not None else '-'}")
    finally:
        if openblas is not None:
            openblas[1](numpy_before)
        if torch is not None:
            torch.set_num_threads(torch_before)


@contextlib.contextmanager
def torch_threads_like_numpy(torch: ModuleType) -> Iterator[int]:
    """Inside the block torch's intra-op threads equal numpy's BLAS threads (all cores when
    numpy's cannot be read, as OpenBLAS does by default); restored afterwards. Yields the
    count. A workload run on its own (not through ``benchmarks.run``) stays fair this way."""
    before = torch.get_num_threads()
    threads = numpy_blas_threads() or os.cpu_count() or 1
    torch.set_num_threads(threads)
    try:
        yield threads
    finally:
        torch.set_num_threads(before)


def side_by_side_median_seconds(
    dyngraph_fn: Callable[[], object],
    floor_fn: Callable[[], object],
    make_torch_fn: Callable[[ModuleType], Callable[[], object]],
    repeat: int = 20,
    warmup: int = 3,
) -> tuple[float, float, float | None]:
    """Median seconds per call of dyngraph, the numpy floor and PyTorch, timed in turn.

    ``make_torch_fn(torch)`` gives torch's version (it is handed the module so that a workload
    never imports torch itself); torch's time is None where torch is not importable. Torch runs
    with numpy's BLAS thread count (``torch_threads_like_numpy``).
    """
    torch = import_torch()
    if torch is None:
        t_dg, t_floor = interleaved_median_seconds([dyngraph_fn, floor_fn], repeat, warmup)
        return t_dg, t_floor, None
    with torch_threads_like_numpy(torch):
        fns = [dyngraph_fn, floor_fn, make_torch_fn(torch)]
        t_dg, t_floor, t_torch = interleaved_median_seconds(fns, repeat, warmup)
    return t_dg, t_floor, t_torch


def collect_all(most: int = 100) -> None:
    """Run the cycle collector until a collection finds nothing (at most ``most`` times).

    NOTE [settled before measuring] One ``gc.collect()`` may leave garbage for the next: what a
    collection frees can release more (objects with finalizers in a cycle - generators among
    them - are finalized in one collection and their referents found in the next). After the
    static-picture tests, eight collections in a row each found 20-30 objects of a micrograd
    graph. A measurement that starts after one collection and counts what a later one finds
    ("freed by refcount": nothing in cycles) then counted that garbage as its own."""
    gc.collect()
    for _ in range(most):
        if not gc.collect():
            return


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
    warmup: int = 3,
) -> list[Result]:
    """The cost of ``bare`` with something attached (a subscriber, a live view) as a ratio to
    ``bare`` alone, timed alternately after ``warmup`` calls of each; no result when
    ``attached`` is None (not installed). ``per_second`` turns seconds per call into ``unit``
    (1e6 / ops: microseconds per op)."""
    if attached is None:
        return []
    t_attached, t_bare = paired_median_seconds(attached, bare, repeat=repeat, warmup=warmup)
    return [check_ratio(name, t_attached * per_second, t_bare * per_second, unit, target)]


@dataclass(frozen=True)
class Result:
    """One line of the results table.

    ``floor`` is the same quantity for the hand-written numpy version (or, for the subscriber
    overhead rows, for dyngraph without a subscriber); ``torch`` is the same quantity for
    PyTorch (None where it was not run). ``passed`` is None when the target cannot be judged
    (a target against torch where torch is not importable).
    """

    name: str
    value: float
    floor: float | None
    unit: str
    target: str
    passed: bool | None
    note: str = ""
    torch: float | None = None

    @property
    def ratio(self) -> float | None:
        """dyngraph / floor."""
        if not self.floor:
            return None
        return self.value / self.floor

    @property
    def torch_ratio(self) -> float | None:
        """dyngraph / torch."""
        if not self.torch:
            return None
        return self.value / self.torch


NO_TORCH = "torch not importable"


def check_value(
    name: str, value: float, floor: float | None, unit: str, limit: float,
    torch: float | None = None,
) -> Result:
    """A result whose target is an absolute limit on the dyngraph value."""
    return Result(name, value, floor, unit, f"<= {limit:g} {unit}", value <= limit, torch=torch)


def check_ratio(
    name: str, value: float, floor: float, unit: str, limit: float, torch: float | None = None
) -> Result:
    """A result whose target is a limit on the ratio value / floor."""
    return Result(name, value, floor, unit, f"<= {limit:g}x", value / floor <= limit, torch=torch)


def scaled(seconds: float | None, per_second: float) -> float | None:
    """``seconds`` in a table unit (``per_second`` = 1e6 / ops gives microseconds per op)."""
    return None if seconds is None else seconds * per_second


def check_torch_ratio(
    name: str, value: float, floor: float | None, torch: float | None, unit: str, limit: float
) -> Result:
    """A result whose target is a limit on the ratio value / torch; not judged without torch."""
    target = f"<= {limit:g}x torch"
    if torch is None:
        return Result(name, value, floor, unit, target, None, NO_TORCH)
    return Result(name, value, floor, unit, target, value / torch <= limit, torch=torch)


def _number(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0 or abs(x) >= 1000 or x == int(x):
        return f"{x:.0f}"
    return f"{x:.4g}" if abs(x) >= 100 else f"{x:.3g}"  # 400.4 B/node is over 400


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


STATUS = {True: "MET", False: "MISS", None: "n/a"}


def format_table(results: Iterable[Result]) -> str:
    """The results as a fixed-width text table: each value, its floor and torch's, both
    ratios (dyngraph / floor, dyngraph / torch), the target and MET, MISS or n/a."""
    header = ("workload", "dyngraph", "floor", "torch", "unit", "dg/floor", "dg/torch",
              "target", "status", "note")
    rows = [header]
    for r in results:
        rows.append((r.name, _number(r.value), _number(r.floor), _number(r.torch), r.unit,
                     _ratio(r.ratio), _ratio(r.torch_ratio), r.target, STATUS[r.passed], r.note))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {1, 2, 3, 5, 6}  # numeric columns are right-aligned
    lines = []
    for row in rows:
        cells = []
        for i, (cell, width) in enumerate(zip(row, widths, strict=True)):
            cells.append(cell.rjust(width) if i in right else cell.ljust(width))
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
