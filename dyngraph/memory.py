"""Instruments: how much memory a graph holds for backward, how big it is, how long its ops take.

``dg.memory`` answers the questions the memory lessons ask:

>>> loss = model(x).sum()
>>> dg.memory.saved_bytes(loss)      # bytes the graph behind loss keeps for backward
>>> dg.memory.saved_bytes()          # ... behind every live graph
>>> dg.memory.graph_size(loss)       # how many nodes a diagram of it would draw
>>> dg.memory.profile_ops(model, x)  # [("MatMul", 2.1e-05), ("Add", 3e-06), ...]
>>> dg.memory.memory_timeline(lambda: model(x).sum())   # bytes held after each op and step

They are instruments, not hot paths: they walk graphs, and ``saved_bytes()`` without arguments
scans every object the garbage collector tracks.

NOTE [counting bytes] A saved array is counted once, however many nodes saved it, and by the
memory it keeps alive: a view (a slice, a transpose, a broadcast) keeps its base array alive,
so the base is what is counted. Numbers and other non-arrays cost nothing here.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .function import Function, FunctionHook, nodes_behind
from .spine import events
from .spine.thread_state import this_thread
from .tensor import Tensor

# ---------------------------------------------------------------------------- walking graphs


def _nodes_of(tensors: Iterable[Tensor]) -> tuple[list[Function], list[Tensor]]:
    """The nodes and the leaves (that require grad) of the graphs behind ``tensors``, each once
    (the spine's one walk: a 100 000-step RNN is fine)."""
    roots: list[Any] = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensors, got {type(t).__name__}")
        if t.grad_fn is not None or t._requires_grad:
            roots.append(t.grad_fn if t.grad_fn is not None else t)
    found = nodes_behind(roots)
    nodes = [item for item in found if not isinstance(item, Tensor)]
    leaves = [item for item in found if isinstance(item, Tensor)]
    return nodes, leaves


def _owner(array: Any) -> Any:
    """The array that owns the memory a view looks at."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _bytes_held(nodes: Iterable[Function]) -> int:
    total = 0
    counted: set[int] = set()
    for node in nodes:
        arrays = node.saved_arrays
        if not arrays:  # None once backward released them, () when nothing was saved
            continue
        for array in arrays:
            owner = _owner(array)
            nbytes = getattr(owner, "nbytes", None)
            if nbytes is None or id(owner) in counted:
                continue
            counted.add(id(owner))
            total += nbytes
    return total


def saved_bytes(*tensors: Tensor) -> int:
    """Bytes of the arrays saved for backward: by the graphs behind ``tensors``, or, with no
    argument, by every live graph node. Released nodes (after backward) count nothing.

    >>> h = (x @ W).tanh()
    >>> dg.memory.saved_bytes(h)     # MatMul keeps x and W, Tanh its output
    """
    if tensors:
        nodes, _ = _nodes_of(tensors)
    else:
        # NOTE: issubclass(type(obj), ...), not isinstance: isinstance also reads obj.__class__,
        # which some objects of other libraries answer with a deprecation warning.
        nodes = [obj for obj in gc.get_objects() if issubclass(type(obj), Function)]
    return _bytes_held(nodes)


def graph_size(tensor: Tensor) -> int:
    """How many nodes the graph behind ``tensor`` has: its op nodes plus the leaves that
    require grad (what a diagram draws, constants aside). 0 for a tensor outside any graph.

    >>> dg.memory.graph_size((x @ W).tanh())    # x and W (leaves), MatMul, Tanh
    4
    """
    nodes, leaves = _nodes_of([tensor])
    return len(nodes) + len(leaves)


# ---------------------------------------------------------------------------- timing


def profile_ops(fn: Callable[..., Any], *args: Any) -> list[tuple[str, float]]:
    """Run ``fn(*args)`` and return ``(op name, seconds)`` for every op it recorded in a graph,
    in order (from ``node_created`` events inside ``dg.events.timing()``).

    >>> dg.memory.profile_ops(lambda x: (x @ W).tanh(), x)
    [('MatMul', 1.2e-05), ('Tanh', 4e-06)]
    """
    times: list[tuple[str, float]] = []

    def listen(event: Any) -> None:
        if event.kind == "node_created" and event.elapsed is not None:
            times.append((event.op, event.elapsed))

    with events.subscribe(listen), events.timing():
        fn(*args)
    return times


# ---------------------------------------------------------------------------- timeline


class Sample(NamedTuple):
    """Bytes held for backward at one moment of a training step."""

    phase: str  # "forward", "recompute" (dg.checkpoint in backward), "backward"
    op: str  # the op just created (forward, recompute) or whose gradient is being computed
    bytes: int


def memory_timeline(loss_fn: Callable[[], Tensor]) -> list[Sample]:
    """Run ``loss = loss_fn()`` then ``loss.backward()``, and sample the bytes held for backward
    after every op of forward (and of a checkpoint's recomputation) and at every backward step.

    Compare a model with and without ``dg.checkpoint`` (``dyngraph.plot.memory_timeline``
    draws the result):

    >>> plain = dg.memory.memory_timeline(lambda: mlp(x).sum())
    >>> saved = dg.memory.memory_timeline(lambda: dg.checkpoint(mlp, x).sum())
    >>> max(s.bytes for s in saved) < max(s.bytes for s in plain)
    True
    """
    with _Watcher() as watcher, events.subscribe(watcher.on_event):
        loss = loss_fn()
        watcher.phase = "backward"
        loss.backward()
        watcher.sample("end")
    return watcher.samples


class _Watcher(FunctionHook):
    """Told about every op (as a FunctionHook) and every backward step (as an event
    subscriber); keeps weak references to the nodes, so it keeps no graph alive."""

    def __init__(self) -> None:
        self.phase = "forward"
        self.nodes: list[weakref.ref] = []
        self.names: dict[int, str] = {}  # node id -> op name
        self.samples: list[Sample] = []

    def forward_postprocess(self, cls: type, args: tuple, options: dict, output: Tensor) -> None:
        node = output.grad_fn
        if node is None:  # not recorded in a graph (no_grad): holds nothing
            return
        self.nodes.append(weakref.ref(node))
        self.names[node.id] = cls.__name__
        self.sample(cls.__name__, "recompute" if this_thread.state.recomputing else self.phase)

    def on_event(self, event: Any) -> None:
        if event.kind == "grad_computed" and event.id in self.names:
            self.sample(self.names[event.id])

    def sample(self, op: str, phase: str | None = None) -> None:
        alive = [node for node in (ref() for ref in self.nodes) if node is not None]
        self.samples.append(Sample(phase or self.phase, op, _bytes_held(alive)))
