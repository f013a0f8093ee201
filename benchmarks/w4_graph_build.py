"""W4: building large graphs (forward only, no backward).

A chain ``h = h * w`` / ``h = h + b`` (alternating) on (1, 8) float32, starting from a leaf
that requires grad, with 1e3, 1e4, 1e5 and 1e6 nodes. Measured per size:

* time per node to build the graph. Target (issue 19): dyngraph <= 1.0x torch.
* how that time grows with the graph: the time of one graph of n nodes over the time of the
  same n nodes built as graphs of 1e3 nodes, one after the other, timed in turn; with the cycle
  collector on (Python's default). Target (issue 40): <= 1.3x, about the same per node at any
  size. What grows it is the collector: every object it tracks that a graph keeps alive costs
  its share of each full collection, which walks every tracked object of the process (NOTE
  [what the collector walks] in dyngraph/function.py).
* memory per node while the graph is alive (tracemalloc: traced memory with the graph alive
  minus before, divided by the node count). Target: <= 400 bytes/node.
* whether reference counting alone frees the graph: with the garbage collector disabled,
  after ``del`` of the last tensor a weak reference to an early intermediate must be dead,
  nothing may be left for the cycle collector, and traced memory must be back near where it
  started.

The numpy floor is the same chain of plain numpy ops keeping every intermediate in a list.
PyTorch builds the same chain (where it imports), timed in turn with the other two. Its graph
lives in C++ (autograd nodes, saved variables), which tracemalloc does not see; its memory is
tracemalloc's count plus the growth of the C heap in use (glibc's ``mallinfo2``, on Linux only),
and "freed" for torch means the cycle collector finds nothing and both are back near where they
started (a weak reference would prove nothing: torch's graph holds no Python tensor here).

The growth depends on the process as much as on dyngraph: a full collection walks every object
the collector tracks, torch's included (about 171 000 once torch is imported, against some
26 000 without it). ``benchmarks.run`` imports torch, so the growth rows are measured twice:
in this process, torch imported where it is installed (their note says how many objects the
collector tracks), and, where torch is imported here, again in a fresh Python that never
imports it (``python -m benchmarks.w4_graph_build --growth``, dyngraph and the floor only;
rows "..., no torch in the process"). Same sizes, repeats and clock; nothing is done about the
cost (dyngraph leaves the learner's collector as it is: benchmarks/README.md, "Flat as graphs
grow").

Memory and freeing are measured up to 1e5 nodes (``WEIGHED_UP_TO``): per node they do not
change with size, and under tracemalloc the 1e6-node graphs of the three would add a minute.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import gc
import json
import os
import subprocess
import sys
import tracemalloc
import weakref
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

import dyngraph as dg
from benchmarks import harness
from benchmarks.harness import (
    CLOCKS,
    Result,
    check_torch_ratio,
    check_value,
    collect_all,
    import_torch,
    interleaved_median_seconds,
    torch_threads_like_numpy,
    using_clock,
)

SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000)
WEIGHED_UP_TO = 100_000  # memory and freeing: not at 1e6 (see above)
WIDTH = 8
TARGET_TORCH_RATIO = 1.0
TARGET_BYTES_PER_NODE = 400.0
TARGET_GROWTH = 1.3  # time per node at any size / time per node at the smallest
EARLY_NODES = 2  # the weak reference points at the graph after this many nodes


def make_inputs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The start ``x`` and the constants ``w`` and ``b``, each of shape (1, WIDTH)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, WIDTH)).astype(np.float32)
    # |w| < 1 and b != 0: h settles near b / (1 - w) instead of overflowing or vanishing
    w = rng.uniform(0.5, 0.9, (1, WIDTH)).astype(np.float32)
    b = (0.1 * rng.standard_normal((1, WIDTH))).astype(np.float32)
    return x, w, b


def make_tensors(seed: int = 0) -> tuple[dg.Tensor, dg.Tensor, dg.Tensor]:
    """The leaf ``x`` (requires grad) and the constants ``w`` and ``b`` as dyngraph tensors."""
    x, w, b = make_inputs(seed)
    return dg.tensor(x, requires_grad=True), dg.tensor(w), dg.tensor(b)


def dyngraph_chain(h: dg.Tensor, w: dg.Tensor, b: dg.Tensor, n_nodes: int) -> dg.Tensor:
    """Extend ``h`` by ``n_nodes`` alternating mul / add nodes; returns the last tensor."""
    for i in range(n_nodes):
        h = h * w if i % 2 == 0 else h + b
    return h


def numpy_chain(h: np.ndarray, w: np.ndarray, b: np.ndarray, n_nodes: int) -> list[np.ndarray]:
    """The same chain in numpy, keeping every intermediate alive in a list."""
    intermediates = []
    for i in range(n_nodes):
        h = h * w if i % 2 == 0 else h + b
        intermediates.append(h)
    return intermediates


def torch_chain(h, w, b, n_nodes: int):
    """The same chain in PyTorch (``h`` a leaf that requires grad); returns the last tensor."""
    for i in range(n_nodes):
        h = h * w if i % 2 == 0 else h + b
    return h


def torch_tensors(torch, seed: int = 0) -> tuple:
    """``x`` (requires grad), ``w`` and ``b`` as PyTorch tensors, the values of make_inputs."""
    x, w, b = make_inputs(seed)
    return torch.tensor(x, requires_grad=True), torch.from_numpy(w), torch.from_numpy(b)


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (malloc.h): the C heap's counters, all ``size_t``."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost",
    )]


@functools.cache
def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    """glibc's ``mallinfo2``, looked up once (a ctypes library object is a small reference
    cycle, which a look-up per call would leave for the cycle collector), or None."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except AttributeError:
        return None
    mallinfo2.restype = _MallInfo2
    return mallinfo2


def c_heap_bytes() -> int | None:
    """Bytes malloc has handed out and not had back (``uordblks``: in the heap, ``hblkhd``:
    mapped on their own), or None where the C library is not glibc 2.33 or later."""
    mallinfo2 = _mallinfo2()
    if mallinfo2 is None:
        return None
    info = mallinfo2()
    return info.uordblks + info.hblkhd


def torch_bytes_alive(build: Callable[[], object]) -> int | None:
    """Bytes held by the PyTorch graph ``build`` returns, while it is alive: tracemalloc's
    count (its Python objects) plus the C heap's growth (its autograd nodes and storages,
    which tracemalloc does not see); None without a way to read the C heap."""
    if c_heap_bytes() is None:
        return None
    collect_all()  # NOTE [settled before measuring] in harness.py
    tracemalloc.start()
    try:
        traced_before, heap_before = tracemalloc.get_traced_memory()[0], c_heap_bytes()
        kept = build()
        traced = tracemalloc.get_traced_memory()[0] - traced_before
        heap = c_heap_bytes() - heap_before
        del kept
    finally:
        tracemalloc.stop()
    return traced + heap


def torch_freed_by_refcount(torch, n_nodes: int) -> tuple[bool, int]:
    """Build a PyTorch chain with the collector off, drop it, and see whether it is gone:
    (freed, bytes of C heap and traced memory still held). Freed: nothing for the cycle
    collector and memory back within 1% (at least 16 KiB) of where it started."""
    x, w, b = torch_tensors(torch)
    collect_all()  # NOTE [settled before measuring] in harness.py
    gc_was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0] + (c_heap_bytes() or 0)
        h = torch_chain(x, w, b, n_nodes)
        alive = tracemalloc.get_traced_memory()[0] + (c_heap_bytes() or 0) - before
        del h
        in_cycles = gc.collect()
        left = tracemalloc.get_traced_memory()[0] + (c_heap_bytes() or 0) - before
    finally:
        tracemalloc.stop()
        if gc_was_enabled:
            gc.enable()
    return not in_cycles and left <= max(16 * 1024, alive // 100), left


def traced_bytes_alive(build: Callable[[], object]) -> int:
    """Bytes traced by tracemalloc for the object ``build`` returns, while it is alive."""
    collect_all()  # NOTE [settled before measuring] in harness.py
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        alive = tracemalloc.get_traced_memory()[0] - before
        del kept
    finally:
        tracemalloc.stop()
    return alive


def freed_by_refcount(n_nodes: int) -> tuple[bool, int, str]:
    """Build a dyngraph chain with the collector off, drop it, and see whether it is gone.

    Returns (freed, bytes still traced after the drop, a note on what failed). Freed means:
    a weak reference to an early intermediate died at ``del``; the cycle collector, run
    afterwards only to empty the interpreter's free lists (which keep some freed tuples,
    floats, ... for reuse), finds no unreachable objects; and traced memory is back within 1%
    (at least 16 KiB) of where it started.
    """
    x, w, b = make_tensors()
    collect_all()  # NOTE [settled before measuring] in harness.py
    gc_was_enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        h = dyngraph_chain(x, w, b, EARLY_NODES)
        early = weakref.ref(h)
        h = dyngraph_chain(h, w, b, n_nodes - EARLY_NODES)
        alive = tracemalloc.get_traced_memory()[0] - before
        del h
        early_dead = early() is None  # decided by reference counting alone
        in_cycles = gc.collect()  # objects only the cycle collector could free
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        if gc_was_enabled:
            gc.enable()
    back_to_baseline = left <= max(16 * 1024, alive // 100)
    problems = []
    if not early_dead:
        problems.append("early node still alive")
    if in_cycles:
        problems.append(f"{in_cycles} objects in reference cycles")
    if not back_to_baseline:
        problems.append("memory not returned")
    return early_dead and not in_cycles and back_to_baseline, left, "; ".join(problems)


def size_label(n: int) -> str:
    """1000 -> "1e3"."""
    return f"{n:.0e}".replace("e+0", "e")


def in_small_graphs(chain: Callable[[int], object], n: int, size: int) -> None:
    """Build ``n`` nodes as ``n // size`` chains of ``size`` nodes, each dropped before the next
    (the collector's state carries over from one to the next, as in a loop of small graphs)."""
    for _ in range(n // size):
        chain(size)


def time_in_turn(
    chains: dict[str, Callable[[int], object]], n: int, smallest: int, repeat: int
) -> dict[str, tuple[float, float]]:
    """Median seconds of each implementation's chain of ``n`` nodes and of the same ``n`` nodes
    in graphs of ``smallest`` nodes (``in_small_graphs``), all timed in turn: the growth of the
    time per node is read from one interleaved measurement, where a busy machine's drift falls
    on both alike (measured one size after the other, a load spike during the small size alone
    read as growth below 1x)."""
    fns = []
    for chain in chains.values():
        fns.append(functools.partial(chain, n))
        fns.append(functools.partial(in_small_graphs, chain, n, smallest))
    with contextlib.ExitStack() as stack:
        torch = import_torch() if "torch" in chains else None
        if torch is not None:
            stack.enter_context(torch_threads_like_numpy(torch))
        seconds = interleaved_median_seconds(fns, repeat=repeat, warmup=1)
    return {name: (seconds[2 * i], seconds[2 * i + 1]) for i, name in enumerate(chains)}


def repeats(n: int, quick: bool) -> int:
    """Timed rounds for graphs of ``n`` nodes."""
    return 3 if quick or n > 100_000 else max(5, 100_000 // n)


def tracked_objects() -> int:
    """How many objects the cycle collector tracks in this process (after a collection): what
    each full collection walks, a graph's objects apart."""
    collect_all()  # NOTE [settled before measuring] in harness.py
    return len(gc.get_objects())


def growth_note(tracked: int, torch_imported: bool, us_small: float, us_one: float,
                where: str = "") -> str:
    """The note of a growth row: what the process's full collections walk besides the graph,
    and dyngraph's time per node in graphs of the smallest size and in the one graph."""
    return (f"{'torch imported' if torch_imported else 'no torch'}{where}: "
            f"{tracked / 1000:.0f}k objects tracked; {us_small:.2f} -> {us_one:.2f} us/node")


def numpy_and_dyngraph_chains() -> dict[str, Callable[[int], object]]:
    """dyngraph's and the floor's chain of n nodes, warmed up."""
    x_np, w_np, b_np = make_inputs()
    x, w, b = make_tensors()
    dyngraph_chain(x, w, b, 100)  # warm up, so one-time allocations are not counted below
    return {  # each implementation's chain of n nodes
        "dyngraph": lambda n: dyngraph_chain(x, w, b, n),
        "floor": lambda n: numpy_chain(x_np, w_np, b_np, n),
    }


def growth_in_this_process(sizes: tuple[int, ...], quick: bool) -> dict:
    """dyngraph's and the floor's growth for each size above the smallest, measured here as
    ``run`` does, and what the process held: ``{"torch_imported", "tracked", "growth": {n:
    {name: growth}}, "us_per_node": {n: [dyngraph in small graphs, in one]}}`` (JSON's keys:
    n as a string)."""
    chains = numpy_and_dyngraph_chains()
    tracked = tracked_objects()
    growth, us_per_node = {}, {}
    for n in sizes[1:]:
        seconds = time_in_turn(chains, n, sizes[0], repeats(n, quick))
        growth[str(n)] = {name: t / t_small for name, (t, t_small) in seconds.items()}
        us_per_node[str(n)] = [seconds["dyngraph"][1] * 1e6 / n, seconds["dyngraph"][0] * 1e6 / n]
    return {"torch_imported": "torch" in sys.modules, "tracked": tracked, "growth": growth,
            "us_per_node": us_per_node}


def growth_without_torch(sizes: tuple[int, ...], quick: bool) -> dict:
    """``growth_in_this_process`` in a fresh Python that never imports torch (``python -m
    benchmarks.w4_graph_build --growth``), on the clock this process times with."""
    clock_name = next(name for name, fn in CLOCKS.items() if fn is harness.clock)
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "benchmarks.w4_graph_build", "--growth",
               "--clock", clock_name, *(["--quick"] if quick else []), *map(str, sizes)]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    measured = json.loads(done.stdout.splitlines()[-1])
    if measured["torch_imported"]:
        raise RuntimeError("the growth measured without torch had torch imported")
    return measured


def run(quick: bool = False) -> list[Result]:
    """Time, weigh and free graphs of each size, beside the numpy floor and PyTorch, and how the
    time per node grows from graphs of the smallest size to each larger one (here, and without
    torch in the process where torch is imported here)."""
    x_np, w_np, b_np = make_inputs()
    x, w, b = make_tensors()
    dyngraph_chain(x, w, b, 100)  # warm up, so one-time allocations are not counted below
    chains = {  # each implementation's chain of n nodes
        "dyngraph": lambda n: dyngraph_chain(x, w, b, n),
        "floor": lambda n: numpy_chain(x_np, w_np, b_np, n),
    }
    torch = import_torch()
    if torch is not None:
        x_t, w_t, b_t = torch_tensors(torch)
        torch_chain(x_t, w_t, b_t, 100)
        chains["torch"] = lambda n: torch_chain(x_t, w_t, b_t, n)
    sizes = QUICK_SIZES if quick else SIZES
    smallest = sizes[0]
    torch_here = "torch" in sys.modules
    tracked_here = tracked_objects()
    elsewhere = growth_without_torch(sizes, quick) if torch_here else None
    results = []
    for n in sizes:
        seconds = time_in_turn(chains, n, smallest, repeats(n, quick))
        us_per_node = {name: t * 1e6 / n for name, (t, _) in seconds.items()}
        growth = {name: t / t_small for name, (t, t_small) in seconds.items()}
        label = f"n={size_label(n)}"
        results.append(check_torch_ratio(
            f"W4 build, {label}", us_per_node["dyngraph"], us_per_node["floor"],
            us_per_node.get("torch"), "us/node", TARGET_TORCH_RATIO,
        ))
        if n > smallest:
            name = f"W4 growth, {label} / {n // smallest} x {size_label(smallest)}"
            results.append(Result(
                name, growth["dyngraph"], growth["floor"], "x", f"<= {TARGET_GROWTH:g}x",
                growth["dyngraph"] <= TARGET_GROWTH,
                growth_note(tracked_here, torch_here, seconds["dyngraph"][1] * 1e6 / n,
                            us_per_node["dyngraph"]),
                torch=growth.get("torch"),
            ))
            if elsewhere is not None:
                apart = elsewhere["growth"][str(n)]
                results.append(Result(
                    f"{name}, no torch in the process", apart["dyngraph"], apart["floor"], "x",
                    f"<= {TARGET_GROWTH:g}x", apart["dyngraph"] <= TARGET_GROWTH,
                    growth_note(elsewhere["tracked"], False, *elsewhere["us_per_node"][str(n)],
                                " (a fresh Python)"),
                ))
        if n > WEIGHED_UP_TO:
            continue

        dg_bytes = traced_bytes_alive(lambda n=n: dyngraph_chain(x, w, b, n))
        np_bytes = traced_bytes_alive(lambda n=n: numpy_chain(x_np, w_np, b_np, n))
        torch_bytes = None
        if torch is not None:
            torch_bytes = torch_bytes_alive(lambda n=n: torch_chain(x_t, w_t, b_t, n))
        memory = check_value(
            f"W4 memory, {label}", dg_bytes / n, np_bytes / n, "B/node", TARGET_BYTES_PER_NODE,
            torch=None if torch_bytes is None else torch_bytes / n,
        )
        if torch is not None and torch_bytes is None:
            memory = replace(memory, note="torch's C heap not readable here (glibc only)")
        results.append(memory)

        freed, left, note = freed_by_refcount(n)
        if torch is not None:
            torch_freed, torch_left = torch_freed_by_refcount(torch, n)
            torch_note = f"torch: {'freed' if torch_freed else 'NOT freed'}, {torch_left} B left"
            note = "; ".join(filter(None, [note, torch_note]))
        results.append(Result(f"W4 freed by refcount, {label}", left, None, "B left",
                              "~0 B, no cycles", freed, note))
    return results


def main(argv: list[str] | None = None) -> int:
    """``--growth [--quick] [--clock cpu|wall] SIZE...``: print ``growth_in_this_process`` as
    one line of JSON (what ``growth_without_torch`` runs in a fresh Python)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.w4_graph_build")
    parser.add_argument("--growth", action="store_true", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("sizes", nargs="+", type=int)
    args = parser.parse_args(argv)
    with using_clock(args.clock):
        measured = growth_in_this_process(tuple(args.sizes), args.quick)
    print(json.dumps(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
