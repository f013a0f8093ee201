"""Where the time goes in dyngraph, on the workloads of the benchmark suite (W1 to W4).

    python -m benchmarks.profile_engine W1          # any of W1 W2 W3 W4 OPT; none: all of them
    python -m benchmarks.profile_engine W4 --top 25

Measures, it does not judge (the findings are in benchmarks/README.md, "Where the time goes").
For each workload it prints:

1. **Time and the cycle collector.** Median CPU time of one run (the harness's clock), with the
   garbage collector on (as the suite runs it) and off, interleaved, and how many collections of
   each generation one run triggers and how long they take (``gc.callbacks``).
2. **A cProfile breakdown** into the engine's parts - the op methods on Tensor, ``Function.apply``
   and inside it the ops' ``forward`` and ``wrap_output``, the backward pass and inside it the
   ops' ``backward`` and the un-broadcast (``sum_to_shape``), the in-place update, anything in
   ``dyngraph/spine/events.py`` (nobody listens here, so that should be nothing) - then the
   functions with the most time of their own. cProfile adds a cost per Python call, so its shares
   overstate the parts that make many small calls: read them next to the times of (1).
3. **Memory per node** while a forward graph is alive (the garbage collector off): objects the
   cycle collector tracks (``gc.get_objects()``), as the nodes are made and after a collection,
   and memory blocks (``sys.getallocatedblocks()``), per node, and which types they are.

``OPT`` times the optimizers' update on W2's parameters against the same update in numpy.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import dyngraph as dg
from benchmarks import harness, w1_per_op, w2_mlp_step, w3_rnn, w4_graph_build
from benchmarks.harness import blas_threads, time_once

W4_NODES = 10_000


@dataclass
class Workload:
    """A workload as the profiler sees it."""

    run: Callable[[], object]  # one timed run, as the benchmark times it
    build: Callable[[], object]  # its forward graph alone, returned alive (for memory)
    nodes: int  # graph nodes that ``build`` makes
    per: str  # what one run is made of, for the per-unit figures
    units: int  # how many of ``per`` one run does


def w1() -> Workload:
    x, b, w = w1_per_op.make_inputs()

    def build() -> object:
        h = dg.tensor(x, requires_grad=True)
        b_t, w_t = dg.tensor(b), dg.tensor(w)
        for i in range(w1_per_op.N_OPS):
            h = h + b_t if i % 3 == 0 else h * w_t if i % 3 == 1 else h.tanh()
        return h

    return Workload(lambda: w1_per_op.dyngraph_chain(x, b, w), build, w1_per_op.N_OPS,
                    "op", w1_per_op.N_OPS + 1)


def w2() -> Workload:
    initial = w2_mlp_step.make_params()
    x, y = w2_mlp_step.make_batch()
    params, x_t = w2_mlp_step.to_tensors(initial), dg.tensor(x)

    def build() -> object:
        w1_, b1, w2_, b2 = params
        logits = (x_t @ w1_ + b1).relu() @ w2_ + b2
        return dg.nn.functional.cross_entropy(logits, y)

    return Workload(lambda: w2_mlp_step.dyngraph_step(params, x_t, y), build,
                    count_nodes(build), "step", 1)


def w3() -> Workload:
    params, sequences, _, np_sequences = w3_rnn._setup()
    longest = max(sequences, key=len)
    wx, wh, b = params

    def build() -> object:
        h = dg.tensor(np.zeros((1, w3_rnn.N_HIDDEN), dtype=np.float32))
        for x in longest:
            h = (x @ wx + h @ wh + b).tanh()
        return (h * h).sum()

    n_steps = sum(len(steps) for steps in np_sequences)
    return Workload(lambda: w3_rnn.dyngraph_epoch(params, sequences), build,
                    count_nodes(build), "timestep", n_steps)


def w4() -> Workload:
    x, w, b = w4_graph_build.make_tensors()

    def build() -> object:
        return w4_graph_build.dyngraph_chain(x, w, b, W4_NODES)

    return Workload(build, build, W4_NODES, "node", W4_NODES)


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W4": w4}


def count_nodes(build: Callable[[], object]) -> int:
    """Graph nodes ``build`` makes: the node_created events it emits."""
    events: list[object] = []
    with dg.events.subscribe(events.append):
        build()
    return sum(type(e).__name__ == "NodeCreated" for e in events)


# ---------------------------------------------------------------------------- 1. time and gc


class CollectionLog:
    """Counts and times the cycle collector's runs through ``gc.callbacks``."""

    def __init__(self) -> None:
        self.counts = Counter()
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = harness.clock()
        else:
            self.seconds += harness.clock() - self._started
            self.counts[info["generation"]] += 1


def time_with_and_without_gc(run: Callable[[], object], repeat: int) -> tuple[list, list]:
    """Seconds of each call of ``run`` with the collector on and off, timed in turn."""
    on, off = [], []
    for _ in range(repeat):
        on.append(time_once(run))
        gc.disable()
        try:
            off.append(time_once(run))
        finally:
            gc.enable()
    return on, off


def report_time(workload: Workload, repeat: int) -> None:
    run, units, per = workload.run, workload.units, workload.per
    run()  # warm up
    log = CollectionLog()
    gc.callbacks.append(log)
    try:
        with_gc, without_gc = time_with_and_without_gc(run, repeat)
    finally:
        gc.callbacks.remove(log)
    scale = 1e6 / units
    on, off = statistics.median(with_gc), statistics.median(without_gc)
    print(f"  CPU time, median of {repeat}: {on * scale:.3g} us/{per} with the collector on, "
          f"{off * scale:.3g} off ({on / off:.2f}x); means {statistics.mean(with_gc) * scale:.3g}"
          f" and {statistics.mean(without_gc) * scale:.3g}")
    collections = ", ".join(f"gen{g}: {n / repeat:.3g}" for g, n in sorted(log.counts.items()))
    print(f"  collections per run: {collections or 'none'}; "
          f"{log.seconds / repeat * scale:.3g} us/{per} inside them (a mean: compare the means)")


# ---------------------------------------------------------------------------- 2. cProfile


PARTS = (  # (label, file ending, function names or None for any, own time only?)
    ("Tensor op methods' own time (dispatch)", "dyngraph/tensor.py",
     {"__add__", "__radd__", "__mul__", "__rmul__", "__matmul__", "__sub__", "tanh", "relu",
      "sum", "__isub__"}, True),
    ("Function.apply (forward, whole)", "dyngraph/function.py", {"apply"}, False),
    ("  ops' forward", "dyngraph/ops/", {"forward"}, False),
    ("  _remember_saved_versions", "dyngraph/function.py", {"_remember_saved_versions"}, False),
    ("  wrap_output", "dyngraph/tensor.py", {"wrap_output"}, False),
    ("backward pass (BackwardPass.propagate)", "dyngraph/autograd.py", {"propagate"}, False),
    ("  ops' backward", "dyngraph/ops/", {"backward"}, False),
    ("  sum_to_shape (un-broadcast)", "dyngraph/autograd.py", {"sum_to_shape"}, False),
    ("  in_dtype (gradient casts)", "dyngraph/autograd.py", {"in_dtype"}, False),
    ("leaf .grad accumulation", "dyngraph/autograd.py", {"accumulate_into_leaves"}, False),
    ("in-place update (Tensor._inplace)", "dyngraph/tensor.py", {"_inplace"}, False),
    ("anything in events.py", "dyngraph/spine/events.py", None, False),
)


def part_seconds(
    stats: pstats.Stats, file_end: str, names: set[str] | None, own: bool
) -> tuple[float, int]:
    """Seconds (own, or with callees) and calls of the functions matching a part. cProfile's
    time with callees already leaves out recursive re-entries."""
    seconds, calls = 0.0, 0
    for (filename, _, name), (_, ncalls, own_time, cumulative, _) in stats.stats.items():
        if file_end in filename.replace("\\", "/") and (names is None or name in names):
            seconds += own_time if own else cumulative
            calls += ncalls
    return seconds, calls


def report_profile(workload: Workload, repeat: int, top: int) -> None:
    profiler = cProfile.Profile()
    log = CollectionLog()
    gc.callbacks.append(log)
    profiler.enable()
    try:
        for _ in range(repeat):
            workload.run()
    finally:
        profiler.disable()
        gc.callbacks.remove(log)
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    scale = 1e6 / (repeat * workload.units)
    print(f"  under cProfile: {total * scale:.3g} us/{workload.per}, of which "
          f"{100 * log.seconds / total:.1f}% in the cycle collector (counted by cProfile in "
          "whichever function allocated when it ran); parts overlap where indented:")
    for label, file_end, names, own in PARTS:
        seconds, calls = part_seconds(stats, file_end, names, own)
        if calls:
            print(f"    {label:44s} {100 * seconds / total:5.1f}%  {seconds * scale:8.3g} "
                  f"us/{workload.per}  {calls / repeat / workload.units:6.3g} calls/{workload.per}")
    print(f"  top {top} by own time:")
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    for (filename, line, name), (_, ncalls, own, cumulative, _) in rows:
        where = filename.split("dyngraph/")[-1] if "dyngraph/" in filename else filename
        where = f"{where}:{line}" if line else where
        print(f"    {100 * own / total:5.1f}%  {own * scale:7.3g} us/{workload.per} own, "
              f"{cumulative * scale:7.3g} with callees  "
              f"{ncalls / repeat / workload.units:6.3g} calls/{workload.per}  {name}  ({where})")


# ---------------------------------------------------------------------------- 3. memory


def report_memory(workload: Workload) -> None:
    """gc-tracked objects and allocated blocks per node while a forward graph is alive: as the
    nodes are made, and after a collection, which stops tracking the tuples that hold only
    numbers or arrays (what stays tracked is what every full collection walks again)."""
    workload.build()  # warm up caches and free lists
    gc.collect()
    gc.disable()
    try:
        objects_before = Counter(type(o).__name__ for o in gc.get_objects())
        blocks_before = sys.getallocatedblocks()
        graph = workload.build()
        blocks = sys.getallocatedblocks() - blocks_before
        made = Counter(type(o).__name__ for o in gc.get_objects())
        made.subtract(objects_before)
        gc.collect()
        kept = Counter(type(o).__name__ for o in gc.get_objects())
        kept.subtract(objects_before)
        del graph
    finally:
        gc.enable()
    n = workload.nodes

    def per_node(objects: Counter) -> str:
        kinds = ", ".join(f"{name} {count / n:.2g}" for name, count in objects.most_common(6)
                          if count > 0)
        return f"{sum(objects.values()) / n:.3g} ({kinds})"

    print(f"  graph alive, {n} nodes: gc-tracked objects/node as made {per_node(made)}, after "
          f"a collection {per_node(kept)}; {blocks / n:.3g} allocated blocks/node")


# ---------------------------------------------------------------------------- optimizers


def report_optimizers(repeat: int) -> None:
    """Each optimizer's step on W2's four parameters against the same update in numpy."""
    initial = w2_mlp_step.make_params()
    grads = [np.full_like(p, 1e-3) for p in initial]
    params = w2_mlp_step.to_tensors(initial)

    def with_grads(step: Callable[[], None]) -> Callable[[], None]:
        def timed() -> None:
            for p, g in zip(params, grads, strict=True):
                p.grad = dg.tensor(g)
            step()
        return timed

    arrays = [p.copy() for p in initial]

    def numpy_sgd() -> None:
        for p, g in zip(arrays, grads, strict=True):
            p -= 0.1 * g

    def manual() -> None:  # what W2's dyngraph_step does
        with dg.no_grad():
            for p in params:
                p -= 0.1 * p.grad

    def just_grads() -> None:
        pass

    sgd = dg.optim.SGD(params, lr=0.1)
    momentum = dg.optim.SGD(params, lr=0.1, momentum=0.9)
    adam = dg.optim.Adam(params, lr=1e-3)
    cases = [("setting .grad only (subtracted below)", with_grads(just_grads)),
             ("manual p -= lr * p.grad (W2)", with_grads(manual)),
             ("SGD.step", with_grads(sgd.step)),
             ("SGD(momentum=0.9).step", with_grads(momentum.step)),
             ("Adam.step", with_grads(adam.step)),
             ("numpy p -= lr * g (floor)", numpy_sgd)]
    times: dict[str, list[float]] = {label: [] for label, _ in cases}
    for _ in range(repeat):
        for label, fn in cases:
            times[label].append(time_once(fn))
    setting = statistics.median(times[cases[0][0]])
    for label, _ in cases:
        median = statistics.median(times[label])
        extra = "" if label.startswith(("setting", "numpy")) else \
            f" ({(median - setting) * 1e6:.3g} us after setting .grad)"
        print(f"  {label:40s} {median * 1e6:8.3g} us{extra}")


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_engine",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", metavar="ID",
                        help="W1, W2, W3, W4 and/or OPT (default: all)")
    parser.add_argument("--top", type=int, default=12, help="functions listed by own time")
    parser.add_argument("--repeat", type=int, default=20, help="runs per measurement")
    args = parser.parse_args(argv)
    names = [name.upper() for name in args.workloads] or [*WORKLOADS, "OPT"]
    unknown = set(names) - {*WORKLOADS, "OPT"}
    if unknown:
        print(f"unknown workload(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    with blas_threads(1) as threads:
        print(f"{threads}; nobody listens to events; {len(gc.get_objects())} objects tracked by "
              "the cycle collector before the workloads (every full collection visits them)\n")
        for name in names:
            if name == "OPT":
                print("OPT: optimizer steps on W2's parameters (784x256, 256, 256x10, 10)")
                report_optimizers(args.repeat * 5)
                continue
            workload = WORKLOADS[name]()
            print(f"{name}: {workload.nodes} graph nodes per forward; "
                  f"figures per {workload.per} ({workload.units} per run)")
            report_time(workload, args.repeat)
            report_profile(workload, max(3, args.repeat // 4), args.top)
            report_memory(workload)
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
