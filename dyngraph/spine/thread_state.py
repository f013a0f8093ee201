"""What each thread has of its own: its modes, and who listens to it.

Grad mode belongs to the thread that set it, as in PyTorch, and so do anomaly mode (which
PyTorch keeps process-wide), the open ``dg.scope`` blocks, op timing, ``dg.checkpoint``'s
recomputation and the set of listeners (``dg.events.subscribe``, ``dg.record``, ``dg.watch``,
a ``GraphView``): a ``no_grad`` block in one thread changes nothing in another, and a
recording records the thread that opened it. A new thread starts with PyTorch's defaults:
grad enabled, anomaly mode off, no scope, nobody listening.

NOTE [modes are per thread] The engine reads these on every op (``Function.apply``) and every
node of backward, so they live together in one plain object per thread, a ``ThreadState``
(PyTorch's ``ThreadLocalState`` is the same idea), reached through one ``threading.local``:
``state = this_thread.state`` is one lookup, and each flag is then a slot read. (An attribute
of a ``threading.local`` costs a lookup of the thread's dictionary on every read, several
times the cost of a module attribute; the backward loop reads its thread's state once per
pass. Figures: benchmarks/README.md, "Measured choices".) Only a thread itself changes its
modes and adds listeners; a handle may be removed from any thread (a view collected
elsewhere): NOTE [listeners are per thread] in events.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class ThreadState:
    """The modes and listeners of one thread; ``this_thread.state`` is the calling thread's."""

    __slots__ = (
        "grad_enabled",  # grad mode: are ops recorded into a graph? (grad_mode.py)
        "anomaly",  # anomaly mode: remember forward lines, check gradients (anomaly.py)
        "scope",  # the names of the open dg.scope() blocks, outermost first (events.py)
        "calls",  # [module, recursive calls it made] per running nn.Module (nn/module.py)
        "timing",  # node_created events carry the op's forward time (events.timing())
        "recomputing",  # dg.checkpoint is recomputing a segment during backward
        "subscribers",  # key -> what emit() calls: this thread's listeners (events.py)
        "dispatch_order",  # (key, callable) per subscriber, rebuilt when they change
        "active",  # someone listens and no dispatch is in progress: read by the engine per op
        "dispatching",  # emit() is calling the subscribers: the engine does not re-enter
        "epoch",  # changed on every subscribe: which tensors these listeners were told about
        "followers",  # key -> (claims, listener): views that follow a graph they drew (events.py)
        "function_hooks",  # the FunctionHooks this thread entered, outermost first (function.py)
        "thread",  # the name of the thread, for repr
    )

    def __init__(self) -> None:
        self.grad_enabled = True
        self.anomaly = False
        self.scope: tuple[str, ...] = ()
        self.calls: list[list[Any]] = []
        self.timing = False
        self.recomputing = False
        self.subscribers: dict[int, Callable[[Any], Any]] = {}
        self.dispatch_order: tuple = ()
        self.active = False
        self.dispatching = False
        self.epoch = 0
        self.followers: dict[int, tuple[Callable[[Any], bool], Callable[[Any], Any]]] = {}
        self.function_hooks: tuple = ()
        self.thread = threading.current_thread().name

    def __repr__(self) -> str:
        return (
            f"<ThreadState of {self.thread!r}: grad_enabled={self.grad_enabled}, "
            f"anomaly={self.anomaly}, scope={self.scope}, {len(self.subscribers)} subscriber(s)>"
        )


class _ThisThread(threading.local):
    """``.state``: the calling thread's ThreadState, made fresh the first time a thread asks."""

    def __init__(self) -> None:
        self.state = ThreadState()


this_thread = _ThisThread()


def current() -> ThreadState:
    """The calling thread's ThreadState."""
    return this_thread.state
