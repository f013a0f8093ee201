"""W4: building large graphs (forward only, no backward).

A chain ``h = h * w`` / ``h = h + b`` (alternating) on (1, 8) float32, starting from a leaf
that requires grad, with 1e3, 1e4 and 1e5 nodes. Three things are measured per size:

* time per node to build the graph. Target (issue 19): dyngraph <= 1.0x torch.
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
"""

from __future__ import annotations

import ctypes
import functools
import gc
import tracemalloc
import weakref
from collections.abc import Callable
from dataclasses import replace

import numpy as np

import dyngraph as dg
from benchmarks.harness import (
    Result,
    check_torch_ratio,
    check_value,
    import_torch,
    scaled,
    side_by_side_median_seconds,
)

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
WIDTH = 8
TARGET_TORCH_RATIO = 1.0
TARGET_BYTES_PER_NODE = 400.0
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
    gc.collect()
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
    gc.collect()
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
    gc.collect()
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
    gc.collect()
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


def run(quick: bool = False) -> list[Result]:
    """Time, weigh and free graphs of each size, beside the numpy floor and PyTorch."""
    x_np, w_np, b_np = make_inputs()
    x, w, b = make_tensors()
    dyngraph_chain(x, w, b, 100)  # warm up, so one-time allocations are not counted below
    torch = import_torch()
    if torch is not None:
        x_t, w_t, b_t = torch_tensors(torch)
        torch_chain(x_t, w_t, b_t, 100)
    results = []
    for n in QUICK_SIZES if quick else SIZES:
        t_dg, t_np, t_torch = side_by_side_median_seconds(
            lambda n=n: dyngraph_chain(x, w, b, n),
            lambda n=n: numpy_chain(x_np, w_np, b_np, n),
            lambda torch, n=n: lambda: torch_chain(x_t, w_t, b_t, n),
            repeat=3 if quick else max(5, 100_000 // n),
            warmup=1,
        )
        label = f"n={n:.0e}".replace("e+0", "e")
        results.append(check_torch_ratio(
            f"W4 build, {label}", t_dg * 1e6 / n, t_np * 1e6 / n,
            scaled(t_torch, 1e6 / n), "us/node", TARGET_TORCH_RATIO,
        ))

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
