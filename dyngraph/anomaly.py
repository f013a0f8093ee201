"""Anomaly mode: find the forward line whose backward produced a NaN or an infinity.

Inside ``with dg.detect_anomaly():`` every node remembers the learner's line that created it,
and the engine checks each gradient an op's backward returns; the first non-finite one raises
a RuntimeError naming the op and that line. The mode belongs to the thread that entered it,
like grad mode (PyTorch keeps this one process-wide): ``this_thread.state.anomaly``, NOTE
[modes are per thread] in spine/thread_state.py.
"""

from __future__ import annotations

import linecache
from typing import Any

from . import backend
from .spine.events import shared_path
from .spine.thread_state import this_thread


def is_anomaly_enabled() -> bool:
    """Is anomaly mode on in this thread (inside ``dg.detect_anomaly()``)?"""
    return this_thread.state.anomaly


class detect_anomaly:
    """Context manager: raise at the op whose backward produced NaN/Inf, naming its line.

    >>> with dg.detect_anomaly():
    ...     loss = (x.sqrt() * 0).sum()   # sqrt'(0) = inf
    ...     loss.backward()               # RuntimeError: ... Sqrt ... created at <file>:<line>
    """

    def __enter__(self) -> detect_anomaly:
        state = this_thread.state
        self.prev = state.anomaly
        state.anomaly = True
        return self

    def __exit__(self, *exc: object) -> None:
        this_thread.state.anomaly = self.prev


def check_gradients(node: Any, grads: tuple) -> None:
    """Raise when one of the gradients an op's backward returned is not finite: arrays, or
    Tensors (a backward recorded for ``create_graph``), whose ``.array`` is read. (By that
    attribute, not by importing Tensor: anomaly mode sits beside the engine, not inside it.)"""
    for i, g in enumerate(grads):
        if g is None:
            continue
        data = getattr(g, "array", g)
        xp = backend.get_array_module(data)
        if bool(xp.isfinite(data).all()):
            continue
        kind = "nan" if bool(xp.isnan(data).any()) else "inf"
        raise RuntimeError(
            f"Function '{node.name}Backward' returned {kind} values in its {i}th output "
            f"(the gradient for input {i} of {node.name}). {_describe_origin(node)}"
        )


def _describe_origin(node: Any) -> str:
    where = node.where
    if where is None:
        return "(the forward line is unknown: the op was created outside detect_anomaly())"
    # The line is read while the learner's own program runs, from their own file; the message
    # names the file as recordings and pages do (NOTE [safe to share] in record.py), since a
    # recording keeps it as the text of a failed backward.
    text = linecache.getline(where.file, where.line).strip()
    shown = f": {text}" if text else ""
    place = f"cell [{where.cell}]" if where.cell is not None else shared_path(where.file)
    return (
        f"The forward op {node.name} was created at {place}, line {where.line}, in "
        f"{where.function}{shown}"
    )
