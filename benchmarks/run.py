"""Run the dyngraph benchmarks and print one table.

    python -m benchmarks.run              # everything, full repeats
    python -m benchmarks.run --quick      # few repeats, W4 only up to 1e4 nodes
    python -m benchmarks.run --only W1 W3E

Workloads: W1 (per-op overhead), W1E (W1 with a recording subscriber), W1V (W1 with a live
GraphView), W2 (MLP step), W3 (RNN), W3E (W3 with a recording subscriber), W3V (W3 with a live
GraphView), W4 (graph building), W5 (eager vs traced replay, dg.trace), W6 (PyTorch code watched
through dyngraph.torch, against bare torch; no rows without torch), W7 (real models watched:
ResNet-18, a nanoGPT, a recursive TreeNet, and the nanoGPT's training loop; no rows without
torch).
W1 to W4 run PyTorch side by side with dyngraph and the numpy floor where torch imports; the
table gives both ratios. numpy's BLAS and torch run with one thread unless --threads says
otherwise (harness.blas_threads says why), timed by the process's CPU time unless --clock wall.
A MISS is reported, not raised: the exit status is non-zero only if a workload crashed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import traceback
from collections.abc import Callable

import numpy as np

from benchmarks import (
    w1_per_op,
    w2_mlp_step,
    w3_rnn,
    w4_graph_build,
    w5_trace,
    w6_torch_watch,
    w7_real_models,
)
from benchmarks.harness import (
    CLOCKS,
    NO_TORCH,
    Result,
    blas_threads,
    format_table,
    import_torch,
    using_clock,
)

WORKLOADS: dict[str, Callable[[bool], list[Result]]] = {
    "W1": w1_per_op.run,
    "W1E": w1_per_op.run_subscribed,
    "W1V": w1_per_op.run_with_view,
    "W2": w2_mlp_step.run,
    "W3": w3_rnn.run,
    "W3E": w3_rnn.run_subscribed,
    "W3V": w3_rnn.run_with_view,
    "W4": w4_graph_build.run,
    "W5": w5_trace.run,
    "W6": w6_torch_watch.run,
    "W7": w7_real_models.run,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--quick", action="store_true", help="few repeats and small W4 sizes (smoke run)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="threads for numpy's BLAS and for torch, the same for both (default 1)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="what is timed: the process's CPU time (default; harness NOTE [clock] says why) "
        "or wall time",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        help=f"run only these workloads (any of {', '.join(WORKLOADS)}; commas also work)",
    )
    return parser.parse_args(argv)


def selected_workloads(only: list[str] | None) -> list[str]:
    """Workload ids to run, in table order; raises ValueError for an unknown id."""
    if not only:
        return list(WORKLOADS)
    wanted = {part.strip().upper() for item in only for part in item.split(",") if part.strip()}
    unknown = wanted - WORKLOADS.keys()
    if unknown:
        raise ValueError(f"unknown workload(s): {', '.join(sorted(unknown))}")
    return [name for name in WORKLOADS if name in wanted]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        names = selected_workloads(args.only)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2

    torch = import_torch()
    results: list[Result] = []
    failures: list[str] = []
    clock = "CPU time" if args.clock == "cpu" else "wall time"
    if args.clock == "cpu" and args.threads > 1:
        clock += " (summed over threads: --clock wall measures what parallel BLAS gains)"
    with blas_threads(args.threads) as threads, using_clock(args.clock):
        print(
            f"python {platform.python_version()}, numpy {np.__version__}, "
            f"torch {torch.__version__ if torch is not None else '- (' + NO_TORCH + ')'}, "
            f"{os.cpu_count()} cores, {threads}, timing {clock}, "
            f"{'quick' if args.quick else 'full'} run\n",
            flush=True,
        )
        for name in names:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            try:
                results.extend(WORKLOADS[name](args.quick))
            except Exception:  # report and carry on: one broken workload should not hide the rest
                failures.append(f"{name} failed:\n{traceback.format_exc()}")

    print(format_table(results), flush=True)
    for failure in failures:
        print(f"\n{failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
