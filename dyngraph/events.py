"""The event spine: what the engine tells the outside world, and nothing about who listens.

Every node is created in one place (``Function.apply``, plus leaf creation in ``tensor.py``) and
every gradient is computed in one place (the engine in ``autograd.py``), so events are emitted
from exactly those spots. Widgets, recordings and plots subscribe here; the engine never imports
them (tinygrad's VIZ keeps its UI outside the core in the same way).

NOTE [event rules]
- Events are frozen dataclasses of plain data with a ``kind`` string. They carry *previews* (a few
  numbers) and never live arrays, so a subscriber keeps nothing of the graph alive.
- Subscribers run synchronously, in subscription order, and are read-only. One that raises is
  warned about once and dropped; the computation goes on unchanged.
- A subscriber may itself compute with tensors: while events are being dispatched the engine
  does not emit (no re-entry).
- With nobody listening the cost is one attribute check per op: ``if events.active``.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from . import backend
from .handle import RemovableHandle

PREVIEW_SIZE = 6  # how many numbers of a value or gradient an event carries

# --------------------------------------------------------------------------- event types


@dataclass(frozen=True, slots=True)
class Where:
    """The learner's line that created a node: file, line number, function, IPython cell."""

    file: str
    line: int
    function: str
    cell: int | None = None  # IPython execution count when the line is in a notebook cell


@dataclass(frozen=True, slots=True)
class NodeCreated:
    """A tensor that takes part in a graph was created (an op's output, a leaf, a constant)."""

    kind: ClassVar[str] = "node_created"
    id: int
    op: str  # "Mul", "Tanh", ... for op outputs; "leaf" or "constant" otherwise
    inputs: tuple[int, ...]  # ids of the op's inputs, in argument order
    shape: tuple[int, ...]
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    name: str | None
    scope: tuple[str, ...]
    where: Where | None
    preview: tuple[float, ...]
    saved_bytes: int = 0  # bytes this op saved for backward


@dataclass(frozen=True, slots=True)
class BackwardStarted:
    kind: ClassVar[str] = "backward_started"
    root: int
    retain_graph: bool
    create_graph: bool


@dataclass(frozen=True, slots=True)
class GradComputed:
    """The gradient of node ``id`` is complete (all contributions summed), in engine order."""

    kind: ClassVar[str] = "grad_computed"
    id: int
    preview: tuple[float, ...]
    norm: float
    accumulated: bool  # summed from several paths (fan-in), or added onto an existing leaf .grad


@dataclass(frozen=True, slots=True)
class BackwardFinished:
    kind: ClassVar[str] = "backward_finished"
    root: int


@dataclass(frozen=True, slots=True)
class BackwardFailed:
    kind: ClassVar[str] = "backward_failed"
    root: int
    error: str


@dataclass(frozen=True, slots=True)
class GraphFreed:
    """Saved-for-backward buffers of these nodes were released (after backward)."""

    kind: ClassVar[str] = "graph_freed"
    ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class VersionBumped:
    """An in-place op changed tensor ``id``; ``version`` is its new version counter."""

    kind: ClassVar[str] = "version_bumped"
    id: int
    version: int


Event = (
    NodeCreated
    | BackwardStarted
    | GradComputed
    | BackwardFinished
    | BackwardFailed
    | GraphFreed
    | VersionBumped
)

# --------------------------------------------------------------------------- subscribers

_subscribers: dict[int, Any] = {}  # key -> callable, or weakref.WeakMethod for bound methods
active = False  # someone listens and no dispatch is in progress: read by the engine per op
epoch = 0  # bumped on every subscribe, so already-existing tensors are announced again
_dispatching = False


def _refresh() -> None:
    global active
    active = bool(_subscribers) and not _dispatching


def subscribe(fn: Callable[[Event], Any]) -> RemovableHandle:
    """Call ``fn(event)`` for every event from now on; returns a handle (``.remove()``, or use it
    as a context manager). Bound methods are held weakly: a subscriber object that is garbage
    collected unsubscribes itself.

    >>> with dg.events.subscribe(print):
    ...     y = dg.tensor([1.0], requires_grad=True) * 2
    """
    global epoch
    if not callable(fn):
        raise TypeError(f"subscribe() needs a callable taking one event, got {type(fn).__name__}")
    entry = weakref.WeakMethod(fn) if hasattr(fn, "__self__") and hasattr(fn, "__func__") else fn
    handle = RemovableHandle(_subscribers, _refresh)
    _subscribers[handle.key] = entry
    epoch += 1
    _refresh()
    return handle


def emit(event: Event) -> None:
    """Deliver ``event`` to every subscriber, in order. Never raises."""
    global active, _dispatching
    if not active:
        return
    active, _dispatching = False, True  # a subscriber that creates tensors does not re-enter
    try:
        for key, entry in tuple(_subscribers.items()):
            fn = entry() if isinstance(entry, weakref.WeakMethod) else entry
            if fn is None:  # its object was garbage collected
                _subscribers.pop(key, None)
                continue
            try:
                fn(event)
            except Exception as exc:
                _subscribers.pop(key, None)
                warnings.warn(
                    f"dyngraph event subscriber {fn!r} raised {type(exc).__name__}: {exc}; "
                    "it has been unsubscribed and the computation continues unchanged",
                    RuntimeWarning,
                    stacklevel=2,
                )
    finally:
        _dispatching = False
        _refresh()


# --------------------------------------------------------------------------- scopes


_scope: list[str] = []


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Group the nodes created inside the block under ``name`` in diagrams (they nest).

    >>> with dg.scope("layer1"):
    ...     h = (x @ W1).relu()
    """
    _scope.append(str(name))
    try:
        yield
    finally:
        _scope.pop()


def current_scope() -> tuple[str, ...]:
    return tuple(_scope)


# --------------------------------------------------------------------------- previews, where

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def where_from_stack() -> Where | None:
    """The first frame outside the dyngraph package: the learner's line."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    history = frame.f_globals.get("_ih")  # IPython's input history: its length is the cell count
    cell = len(history) - 1 if isinstance(history, list) and history else None
    return Where(code.co_filename, frame.f_lineno, code.co_name, cell)


def preview(array: Any) -> tuple[float, ...]:
    """The first few numbers of ``array`` (row-major) as plain Python numbers."""
    flat = array.reshape(-1)[:PREVIEW_SIZE]
    return tuple(backend.to_numpy(flat).tolist())


def norm(array: Any) -> float:
    """The L2 norm as a Python float (inf or nan when the gradient has them)."""
    flat = array.reshape(-1)
    value = float(abs(flat @ flat.conj())) if flat.size else 0.0
    return math.sqrt(value)
