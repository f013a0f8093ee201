"""The event spine: what the engine tells the outside world, and nothing about who listens.

Every node is created in one place (``Function.apply``, plus leaf creation in ``tensor.py``) and
every gradient is computed in one place (the engine in ``autograd.py``), so events are emitted
from exactly those spots. Widgets, recordings and plots subscribe here; the engine never imports
them (tinygrad's VIZ keeps its UI outside the core in the same way).

NOTE [event rules]
- Events are immutable records of plain data with a ``kind`` string. They carry *previews* (a few
  numbers) and never live arrays, so a subscriber keeps nothing of the graph alive.
- They are ``NamedTuple`` classes rather than frozen dataclasses: a frozen dataclass sets each
  field through ``object.__setattr__``, several times slower to build, and a node_created is
  built for every op while someone listens. They are built here and nowhere else, each by
  its constructor function (``node_created``, ``grad_computed``, ...: NOTE [one place per
  event]), whichever engine reports.
- Subscribers run synchronously, in subscription order, and are read-only. One that raises is
  warned about once and dropped; the computation goes on unchanged.
- A subscriber may itself compute with tensors: while events are being dispatched the engine
  does not emit (no re-entry).
- With nobody listening the cost is one attribute check per op: ``if state.active``, where
  ``state = this_thread.state`` is the calling thread's (``events.active`` reads the same).
- Listeners are per thread, as PyTorch's modes are (NOTE [listeners are per thread]): a
  subscriber is told about the events of the thread that subscribed it, ``dg.record()``
  records the thread that opened it, a view listens to the thread that attached it.
"""

from __future__ import annotations

import ast
import bisect
import dis
import functools
import itertools
import linecache
import math
import os
import re
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from .arrays import device_of, squared_norm, to_numpy
from .handle import RemovableHandle
from .thread_state import ThreadState, this_thread

PREVIEW_SIZE = 6  # how many numbers of a value or gradient an event carries

_ids = itertools.count(1)
new_node_id: Callable[[], int] = _ids.__next__  # stable ids for every engine's nodes, never id()

# --------------------------------------------------------------------------- event types


class SourceLine(NamedTuple):
    """The learner's line that created a node: file, line number, function, IPython cell, and
    the variable the line assigns its result to (NOTE [variable names])."""

    file: str
    line: int
    function: str
    cell: int | None = None  # IPython execution count when the line is in a notebook cell
    target: str | None = None  # "h" for the instruction that makes h in h = x * w, else None
    loop: int | None = None  # the line of the for/while repeating this line (NOTE [loop lines])


class NodeCreated(NamedTuple):
    """A tensor that takes part in a graph was created (an op's output, a leaf, a constant)."""

    kind = "node_created"
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
    where: SourceLine | None
    preview: tuple[float, ...]
    saved_bytes: int = 0  # bytes this op saved for backward
    recomputed: bool = False  # made again during backward by dg.checkpoint
    elapsed: float | None = None  # seconds the op's forward took, inside events.timing()


class BackwardStarted(NamedTuple):
    """``backward()`` (or ``autograd.grad``) begins at node ``root``; ``where`` is the
    learner's line that called it (None when no line of theirs did), the line the source
    panel shows during the pass."""

    kind = "backward_started"
    root: int
    retain_graph: bool
    create_graph: bool
    where: SourceLine | None = None


class GradComputed(NamedTuple):
    """The gradient of node ``id`` is complete (all contributions summed), in engine order."""

    kind = "grad_computed"
    id: int
    preview: tuple[float, ...]
    norm: float
    accumulated: bool  # summed from several paths (fan-in), or added onto an existing leaf .grad


class EdgeGrad(NamedTuple):
    """What one edge carried back: ``node``'s backward handed input ``input`` (its argument
    number ``position``) this contribution, upstream gradient times local derivative, already
    summed back to the input's shape (NOTE [edge gradients])."""

    kind = "edge_grad"
    node: int  # the node the gradient leaves (the op whose backward ran)
    input: int  # the input it reaches
    position: int
    preview: tuple[float, ...]
    reduced_from: tuple[int, ...] | None  # the shape before the un-broadcast sum, or None


# NOTE [edge gradients] The chain rule, one edge at a time: an ``edge_grad`` per input of a node,
# in engine order, right after that node's ``grad_computed`` and before the input's own. The
# contributions into an input add up to its gradient (fan-in: ``b = a * a`` sends two), so a
# viewer can show "upstream x local = contribution" and "a + b = total". The event carries a
# preview and no norm: it is emitted once per edge while someone listens, which is about as often
# as node_created, and a norm would cost a pass over the array for a number nobody draws.


class BackwardFinished(NamedTuple):
    kind = "backward_finished"
    root: int


class BackwardFailed(NamedTuple):
    kind = "backward_failed"
    root: int
    error: str


class GraphFreed(NamedTuple):
    """Saved-for-backward buffers of these nodes were released (after backward)."""

    kind = "graph_freed"
    ids: tuple[int, ...]


class VersionBumped(NamedTuple):
    """An in-place op changed tensor ``id``; ``version`` is its new version counter."""

    kind = "version_bumped"
    id: int
    version: int


Event = (
    NodeCreated
    | BackwardStarted
    | GradComputed
    | EdgeGrad
    | BackwardFinished
    | BackwardFailed
    | GraphFreed
    | VersionBumped
)

# --------------------------------------------------------------------------- building events

# NOTE [one place per event] Every event is built by one of the functions below, in this module
# and nowhere else (tests/test_layering.py counts the calls): dyngraph's engine, dyngraph.torch,
# an EventSource and a Recording that replays itself describe a node, a gradient or a pass the
# same way, and a field added to an event is added here, once. They take the fields in the
# record's order (positional or by keyword) and give the record; emitting it is ``emit``'s job.
# The engine's paths that run once per op, node or edge while someone listens
# (``emit_op_created``, ``emit_grad_computed``, ``emit_edge_grad``, below) build their record
# in place, in this same module: one Python call less each time.


def node_created(id: int, op: str, inputs: tuple[int, ...], shape: tuple[int, ...], dtype: str,
                 device: str, requires_grad: bool, is_leaf: bool, name: str | None = None,
                 scope: tuple[str, ...] = (), where: SourceLine | None = None,
                 preview: tuple[float, ...] = (), saved_bytes: int = 0, recomputed: bool = False,
                 elapsed: float | None = None) -> NodeCreated:
    """The ``node_created`` of node ``id``: an op's output (``op`` names it, ``inputs`` are
    the ids of its inputs in argument order), or a leaf, parameter or constant (no inputs)."""
    return NodeCreated(id, op, inputs, shape, dtype, device, requires_grad, is_leaf, name, scope,
                       where, preview, saved_bytes, recomputed, elapsed)


def node_of_array(id: int, op: str, inputs: tuple[int, ...], array: Any, requires_grad: bool,
                  is_leaf: bool, name: str | None = None, scope: tuple[str, ...] = (),
                  where: SourceLine | None = None, saved_bytes: int = 0,
                  recomputed: bool = False, elapsed: float | None = None) -> NodeCreated:
    """``node_created`` of a node whose value is ``array`` (numpy or CuPy): its shape, dtype,
    device and a preview, never the array itself (NOTE [event rules])."""
    return NodeCreated(id, op, inputs, array.shape, dtype_name(array.dtype), device_of(array),
                       requires_grad, is_leaf, name, scope, where, preview(array), saved_bytes,
                       recomputed, elapsed)


def backward_started(root: int, retain_graph: bool, create_graph: bool = False,
                     where: SourceLine | None = None) -> BackwardStarted:
    return BackwardStarted(root, retain_graph, create_graph, where)


def grad_computed(id: int, preview: tuple[float, ...], norm: float,
                  accumulated: bool) -> GradComputed:
    return GradComputed(id, preview, norm, accumulated)


def edge_grad(node: int, input: int, position: int, preview: tuple[float, ...],
              reduced_from: tuple[int, ...] | None) -> EdgeGrad:
    return EdgeGrad(node, input, position, preview, reduced_from)


def backward_finished(root: int) -> BackwardFinished:
    return BackwardFinished(root)


def backward_failed(root: int, error: str) -> BackwardFailed:
    return BackwardFailed(root, error)


def graph_freed(ids: tuple[int, ...]) -> GraphFreed:
    return GraphFreed(ids)


def version_bumped(id: int, version: int) -> VersionBumped:
    return VersionBumped(id, version)


# --------------------------------------------------------------------------- subscribers

# NOTE [listeners are per thread] Each thread's subscribers, dispatch order, ``active`` flag
# and epoch live in its ThreadState (thread_state.py): ``subscribe`` adds to the calling
# thread's, ``emit`` delivers to the calling thread's, so a recording opened in one thread
# never receives another thread's nodes, and a thread nobody listens to pays one slot read per
# op. Changes to a thread's subscribers are made under ``_lock`` (the dispatch order is rebuilt
# from the dict, and two rebuilds must not cross); ``emit`` takes no lock: it walks the tuple
# it finds. ``active`` and ``dispatching`` are written by their own thread, with one exception:
# a handle removed from another thread (a view collected there) may switch ``active`` off when
# no subscriber is left, never on, so it cannot let a dispatch re-enter or lose a subscriber
# (an ``emit`` finishing meanwhile may leave it on with nobody left: the thread's next ``emit``
# finds nobody and switches it off).
# ``epoch`` (which tensors the current listeners were told about, NOTE [graphs built before
# anyone listened] in function.py) takes a fresh number from one counter on every subscribe:
# a tensor marked in one thread's epoch is announced again when another thread's listeners
# meet it (their epochs differ), and the folds keep a node announced twice once.
_lock = threading.Lock()
_epochs = itertools.count(1)  # epoch numbers, unique across threads


def __getattr__(name: str) -> Any:
    """``events.active`` and ``events.epoch`` read the calling thread's (NOTE [listeners are
    per thread]); the engine reads ``this_thread.state`` itself."""
    if name == "active":
        return this_thread.state.active
    if name == "epoch":
        return this_thread.state.epoch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _SubscriberGone(Exception):
    """Raised by the stand-in of a weakly held bound method whose object was collected."""


def _refresh(state: ThreadState) -> None:
    """The subscribers of ``state``'s thread changed: rebuild its dispatch order and its
    ``active`` flag (NOTE [listeners are per thread])."""
    with _lock:
        state.dispatch_order = order = tuple(state.subscribers.items())
        if this_thread.state is state:
            state.active = bool(order) and not state.dispatching
        elif not order:
            state.active = False  # from another thread: only ever off


def _weakly(method: Any) -> Callable[[Event], Any]:
    """A stand-in for a bound method that does not keep its object alive."""
    ref = weakref.WeakMethod(method)

    def call(event: Event) -> Any:
        fn = ref()
        if fn is None:
            raise _SubscriberGone
        return fn(event)

    call.__qualname__ = repr(method)  # what a warning about it shows
    return call


def subscribe(fn: Callable[[Event], Any]) -> RemovableHandle:
    """Call ``fn(event)`` for every event of the calling thread from now on; returns a handle
    (``.remove()``, or use it as a context manager; it may be removed from any thread). Bound
    methods are held weakly: a subscriber object that is garbage collected unsubscribes itself.

    Listening is per thread, like PyTorch's modes: ``fn`` is told about the ops and backward
    passes run by the thread that subscribed it, not about another thread's (subscribe in each
    thread you want to watch).

    >>> with dg.events.subscribe(print):
    ...     y = dg.tensor([1.0], requires_grad=True) * 2
    """
    if not callable(fn):
        raise TypeError(f"subscribe() needs a callable taking one event, got {type(fn).__name__}")
    is_bound_method = hasattr(fn, "__self__") and hasattr(fn, "__func__")
    state = this_thread.state
    handle = RemovableHandle(state.subscribers, functools.partial(_refresh, state))
    with _lock:
        state.subscribers[handle.key] = _weakly(fn) if is_bound_method else fn
        state.epoch = next(_epochs)
    _refresh(state)
    return handle


# NOTE [a watched graph stays watched] A learner watches the forward pass in one cell and, as
# every PyTorch tutorial writes it, calls ``loss.backward()`` in the next, outside any watch
# block. Nobody listens then, so the engine would emit nothing and the view that drew the
# forward pass would never show its backward. A view that stops listening therefore *follows*
# the graph it drew: ``follow(claims, listener)`` registers it with the thread, costing nothing
# per op (it is not a subscriber). When a backward pass starts while nobody listens, the engine
# asks each follower whether it claims the pass's roots, and if none does, whether it claims a
# node behind them (a loss computed later from watched outputs) (``wake_followers``). Those
# that claim are subscribed for that pass alone, so they hear the graph announced, every
# gradient and the freeing, exactly as a watched backward. A follower is dropped once a pass it
# followed freed the graph (``rest_followers``), when its view listens again, or when its view
# is collected.


def follow(claims: Callable[[tuple[int, ...]], bool],
           listener: Callable[[Event], Any]) -> RemovableHandle:
    """Have ``listener`` told about each later backward pass of the calling thread whose root
    ids ``claims(ids)`` answers True for, though it is not subscribed (NOTE [a watched graph
    stays watched]). Returns a handle (``.remove()``)."""
    if not callable(claims) or not callable(listener):
        raise TypeError("follow() needs two callables: claims(root_ids) and listener(event)")
    state = this_thread.state
    handle = RemovableHandle(state.followers)
    with _lock:
        state.followers[handle.key] = (claims, listener)
    return handle


def wake_followers(root_ids: tuple[int, ...]) -> list[tuple[int, RemovableHandle]]:
    """A backward pass from ``root_ids`` starts while nobody listens (engines call this only
    then; ``root_ids`` may also be every node id of the graph behind the roots): subscribe, for
    this pass, each follower of the calling thread that claims one of them.
    Returns what ``rest_followers`` needs at the end of the pass. A follower whose ``claims``
    raises is dropped with a warning, as a subscriber that raises is."""
    state = this_thread.state
    woken = []
    for key, (claims, listener) in list(state.followers.items()):
        try:
            claimed = claims(root_ids)
        except Exception as exc:
            state.followers.pop(key, None)
            warnings.warn(f"dyngraph: a follower ({claims!r}) raised {type(exc).__name__}: "
                          f"{exc}; it no longer follows its graph", RuntimeWarning, stacklevel=3)
            continue
        if claimed:
            woken.append((key, subscribe(listener)))
    return woken


def rest_followers(woken: list[tuple[int, RemovableHandle]], freed: bool) -> None:
    """The pass that ``wake_followers`` woke them for ended: unsubscribe them, and when it freed
    the graph (no ``retain_graph``), stop them following: there is nothing left to replay."""
    state = this_thread.state
    for key, handle in woken:
        handle.remove()
        if freed:
            with _lock:
                state.followers.pop(key, None)


def emit(event: Event, state: ThreadState | None = None) -> None:
    """Deliver ``event`` to every subscriber of the calling thread, in order. Never raises.
    ``state``: deliver to that thread's subscribers instead (an event source whose callbacks
    run on a thread of their own, for the thread that started the work; dyngraph.torch)."""
    if state is None:
        state = this_thread.state
    if not state.active:
        return
    state.active = False  # a subscriber that creates tensors does not re-enter
    state.dispatching = True
    try:
        for key, fn in state.dispatch_order:
            try:
                fn(event)
            except Exception as exc:
                _drop(state, key, fn, exc)
    finally:
        with _lock:  # (a handle removed from another thread meanwhile must leave it off)
            state.dispatching = False
            state.active = bool(state.dispatch_order)


def emit_op_created(id: int, op: str, inputs: tuple[int, ...], array: Any, name: str | None,
                    scope: tuple[str, ...], where: SourceLine | None, saved_bytes: int,
                    elapsed: float | None) -> None:
    """Emit the ``node_created`` of an op's output (``Function.apply`` calls it per op while
    someone listens): its shape, dtype, device and a preview of ``array``, never the array."""
    state = this_thread.state
    emit(NodeCreated(
        id, op, inputs, array.shape, dtype_name(array.dtype), device_of(array), True, False,
        name, scope, where, preview(array), saved_bytes, state.recomputing, elapsed,
    ), state)  # node_of_array's record, built in place (NOTE [one place per event])


def emit_grad_computed(id: int, gradient: Any, accumulated: bool) -> None:
    """Emit the ``grad_computed`` of node ``id`` (the engine calls it per node while someone
    listens): the gradient as a preview and its norm, never the array."""
    values, norm = preview_and_norm(gradient)
    emit(GradComputed(id=id, preview=values, norm=norm, accumulated=accumulated))


def emit_edge_grad(node: int, input: int, position: int, contribution: Any,
                   reduced_from: tuple[int, ...] | None) -> None:
    """Emit the ``edge_grad`` of one edge (the engine calls it per edge while someone listens):
    the contribution as a preview, never the array (NOTE [edge gradients])."""
    emit(EdgeGrad(node=node, input=input, position=position, preview=preview(contribution),
                  reduced_from=reduced_from))


def _drop(state: ThreadState, key: int, fn: Any, exc: Exception,
          stacklevel: int = 3) -> None:
    """Unsubscribe a subscriber that raised (with a warning) or whose object is gone.
    ``stacklevel``: the warning names the line that made the event (emit's caller)."""
    state.subscribers.pop(key, None)
    _refresh(state)
    if not isinstance(exc, _SubscriberGone):
        warnings.warn(
            f"dyngraph event subscriber {fn!r} raised {type(exc).__name__}: {exc}; "
            "it has been unsubscribed and the computation continues unchanged",
            RuntimeWarning,
            stacklevel=stacklevel,
        )


@contextmanager
def timing() -> Iterator[None]:
    """Inside the block, node_created events carry ``elapsed``: the op's forward time in
    seconds (two clock reads per op, only while someone listens). For the calling thread."""
    state = this_thread.state
    outer = state.timing
    state.timing = True
    try:
        yield
    finally:
        state.timing = outer


# --------------------------------------------------------------------------- scopes


@contextmanager
def scope(name: str) -> Iterator[None]:
    """Group the nodes created inside the block under ``name`` in diagrams (they nest). Like
    grad mode, a scope belongs to the thread that opened it.

    >>> with dg.scope("layer1"):
    ...     h = (x @ W1).relu()
    """
    state = this_thread.state
    outer = state.scope
    state.scope = (*outer, str(name))
    try:
        yield
    finally:
        state.scope = outer


_CALL_LABEL = re.compile("^call [0-9]+ \u00b7 ")


def is_call_label(name: str) -> bool:
    """Is ``name`` the scope of a recursive call (``call_label``)?"""
    return _CALL_LABEL.match(name) is not None


def call_label(number: int, class_name: str) -> str:
    """The scope of a module called again while its forward runs (a recursion, nn/module.py
    NOTE [scopes]): the ``number``-th such call made by the running call, "call 1 · TreeNet",
    "call 2 · TreeNet". Each call is a scope of its own, so the drawings can show the tree of
    calls; the same name for every call would merge the two halves of a parse tree into one
    scope. dyngraph's modules and dyngraph.torch's watcher name calls by this rule."""
    return f"call {number} \u00b7 {class_name}"


def current_scope() -> tuple[str, ...]:
    """The names of the calling thread's open ``dg.scope()`` blocks, outermost first."""
    return this_thread.state.scope


# --------------------------------------------------------------------------- previews, where

# the dyngraph package: this file is dyngraph/spine/events.py
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_is_internal_file: dict[str, bool] = {}  # filename -> passed over when looking for the learner?


def is_internal_file(filename: str) -> bool:
    """Is ``filename`` passed over when looking for the learner's line: a file of the dyngraph
    package, or one that ``mark_internal_file`` named?"""
    internal = _is_internal_file.get(filename)
    if internal is None:
        internal = _is_internal_file[filename] = filename.startswith(_PACKAGE_DIR)
    return internal


def mark_internal_file(filename: str) -> None:
    """Pass over ``filename`` too when looking for the learner's line: a file of another
    engine, met on the way out (dyngraph.torch marks PyTorch's files so)."""
    _is_internal_file[filename] = True


def shared_path(file: str) -> str:
    """How a shared recording or page names a source file: ``lessons/run.py`` for a file under
    the working directory, ``run.py`` for one elsewhere; ``<stdin>``-style names unchanged
    (NOTE [safe to share] in record.py). Here, beside ``where``, so that every room that names
    the learner's file (recordings, pages, anomaly mode's messages) names it this way."""
    if not file or file.startswith("<"):
        return file
    if os.path.isabs(file):
        try:
            relative = os.path.relpath(file)
        except ValueError:  # another drive (Windows)
            relative = os.pardir
        file = os.path.basename(file) if relative.startswith(os.pardir) else relative
    elif os.pardir in file.replace("\\", "/").split("/"):
        file = os.path.basename(file)
    file = file.replace(os.sep, "/")
    # NOTE: pages send source text keyed by file name, and the browser's MessagePack decoder
    # refuses the key "__proto__" outright (it would set an object's prototype): same file.
    return "./__proto__" if file == "__proto__" else file


# (id of a code object, instruction offset) -> (that code object, its SourceLine). Keyed by id(code)
# because hashing a code object rehashes its constants on every call; the entry keeps the code
# object alive, so its id cannot be reused by another while the entry exists.
_where_cache: dict[tuple[int, int], tuple[Any, SourceLine]] = {}


def where_from_stack(depth: int = 1, named: bool = False,
                     engine: Callable[[Any], bool] | None = None) -> SourceLine | None:
    """The first frame outside the dyngraph package: the learner's line. The search starts
    ``depth`` frames up (1: the caller), so a caller can pass over frames known to be ours.
    ``named`` (an op's output): the SourceLine keeps its ``target`` only when every dyngraph
    frame on the way out hands the value back as it is (NOTE [variable names]). ``engine``:
    is this code object another engine's (reporter.py, NOTE [the engine's frames])? Its frames
    are passed over as dyngraph's are."""
    frame = sys._getframe(depth)
    handed_back = True
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        internal = _is_internal_file.get(filename)
        if internal is None:
            internal = _is_internal_file[filename] = filename.startswith(_PACKAGE_DIR)
        if not internal and (engine is None or not engine(code)):
            break
        if named and handed_back:
            # an engine's constructor hands back the object it initialises (reporter.py)
            handed_back = (_hands_back(code, frame.f_lasti)
                           or (engine is not None and code.co_name == "__init__"))
        frame = frame.f_back
    if frame is None:
        return None
    # A loop runs the same instruction many times: remember its SourceLine.
    key = (id(code), frame.f_lasti)
    cached = _where_cache.get(key)
    if cached is not None and cached[0] is code:
        where = cached[1]
    else:
        if len(_where_cache) > 10_000:
            _where_cache.clear()
        where = _new_where(frame)
        _where_cache[key] = (code, where)
    return where if handed_back else _unnamed(where)


def _new_where(frame: Any) -> SourceLine:
    """The SourceLine of a frame of the learner's code."""
    code = frame.f_code
    line = frame.f_lineno
    return SourceLine(code.co_filename, line, code.co_name,
                      _ipython_cell(frame, code.co_filename), _target(code, frame.f_lasti),
                      enclosing_loop(code.co_filename, line))


# NOTE [loop lines] A rolled-up loop is labelled with the line of the loop statement that
# repeats it: "×18 iterations, line 3" names the `for step in range(20):` the learner wrote,
# the line they would point at, not the first op of the body (which, in a training loop, is a
# line of the model's forward in another file). The ops know only their own line, so each
# SourceLine carries the line of the innermost `for`/`while` whose body holds its line, in the
# same function (a `def` inside a loop starts a frame of its own), read from the file's syntax
# tree: once per file and per instruction (SourceLine is cached per instruction), nothing per
# op. The text is linecache's, which holds notebook cells too. Which op's loop names the loop:
# - a training step: its ops are mostly in the model's forward, where no loop repeats them,
#   but the learner calls backward() in the body of their loop, so the loop of the backward
#   pass rooted in the loop's first iteration (its loss) names it;
# - else the loop of the first op of the iteration that has one: an RNN cell called in a loop
#   of the cell (its ops' line is the call, since torch's and dyngraph's frames are passed
#   over), a loop written out in a cell;
# - else (a forward-only loop over a model defined in another file: no line of the learner's
#   loop is in any op) the first op's line, as before. Knowing it would take the whole stack
#   per op, the cost this note avoids.
# dot.py `_loop_line` and structure.js `loopLine` apply that rule.
_loop_tables: dict[str, tuple[list[str], dict[int, int]]] = {}  # file -> (its lines, the table)


def enclosing_loop(filename: str, line: int) -> int | None:
    """The line of the innermost ``for``/``while`` statement whose body holds ``line`` in the
    same function of ``filename`` (as linecache has it), or None (NOTE [loop lines])."""
    lines = linecache.getlines(filename)
    cached = _loop_tables.get(filename)
    if cached is None or cached[0] is not lines:  # a new text (a file edited, a cell rerun)
        if len(_loop_tables) > 1_000:
            _loop_tables.clear()
        cached = _loop_tables[filename] = (lines, loop_table("".join(lines)))
    return cached[1].get(line)


def loop_table(text: str) -> dict[int, int]:
    """Line -> the line of the innermost loop whose body holds it, for Python source ``text``
    (empty when it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    table: dict[int, int] = {}
    # breadth first: a statement is seen after those that hold it, so the innermost wins
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            for line in range(node.body[0].lineno, node.body[-1].end_lineno + 1):
                table[line] = node.lineno
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in range(node.body[0].lineno, node.body[-1].end_lineno + 1):
                table.pop(line, None)  # a frame of its own
    return table


# NOTE [variable names] A node made by ``h = x * w`` is labelled ``h``: the name the learner's
# line assigns the value to, read from the bytecode. The instruction running in the learner's
# frame (``f_lasti``: the multiply, or the call) is followed by the one that stores its result:
# STORE_NAME / STORE_FAST / STORE_GLOBAL / STORE_DEREF h give ``h`` (``h += x`` too: the
# in-place op is followed by the store of h), LOAD self; STORE_ATTR h gives ``self.h``; anything
# else - an operand of a bigger expression, a call argument, tuple unpacking, a return - gives
# no name. That is per instruction, so it lives in the cached SourceLine and costs nothing in a
# loop.
# One instruction can make several nodes (``loss = F.cross_entropy(z, y)``, ``h = layer(x)``):
# only the node whose value the instruction itself produces is named, the one that every frame
# of dyngraph between the op and the learner hands straight back: ``where_from_stack(named=True)``
# checks that on its way out of the package and drops the target of the others.
_STORES = {"STORE_NAME", "STORE_FAST", "STORE_GLOBAL", "STORE_DEREF"}
_LOADS = {"LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_GLOBAL",
          "LOAD_DEREF"}
_SKIPPED = {"EXTENDED_ARG", "CACHE", "NOP"}
_RETURNS = {"RETURN_VALUE"}
_instructions: dict[int, tuple[Any, list, list[int]]] = {}  # id(code) -> (code, its
# instructions without EXTENDED_ARG / CACHE / NOP, their offsets)


def _following(code: Any, lasti: int) -> tuple[list, int]:
    """The instructions of ``code`` and the index of the one after the instruction at ``lasti``.
    NOTE: on 3.11 and 3.12 ``f_lasti`` can point into an instruction's inline cache (a CALL's,
    while the callee runs), so the instruction is the last one starting at or before it."""
    entry = _instructions.get(id(code))
    if entry is None or entry[0] is not code:
        if len(_instructions) > 1_000:
            _instructions.clear()
        kept = [i for i in dis.get_instructions(code) if i.opname not in _SKIPPED]
        entry = _instructions[id(code)] = (code, kept, [i.offset for i in kept])
    return entry[1], bisect.bisect_right(entry[2], lasti)


def _target(code: Any, lasti: int) -> str | None:
    """The variable (or ``obj.attribute``) the instruction at ``lasti`` stores its value in."""
    try:
        instructions, k = _following(code, lasti)
    except Exception:  # bytecode this Python's dis cannot read: no name, never an error
        return None
    if k >= len(instructions):
        return None
    first = instructions[k]
    if first.opname in _STORES:  # but a, b = x * 2, w * 2 stores twice in a row: no name
        if k + 1 < len(instructions) and instructions[k + 1].opname.startswith("STORE_"):
            return None
        return str(first.argval)
    if first.opname == "STORE_FAST_LOAD_FAST":  # 3.13: h = ...; then a load of the next line
        return str(first.argval[0])
    if first.opname in _LOADS:  # obj.attr = value: the value is computed first, then obj
        parts = [str(first.argval)]
        for instruction in instructions[k + 1:]:
            if instruction.opname == "LOAD_ATTR":
                parts.append(str(instruction.argval))
            elif instruction.opname == "STORE_ATTR":
                return ".".join([*parts, str(instruction.argval)])
            else:
                return None
    return None


# (code, offset) -> does that instruction return the value it just got? Only dyngraph's own code
# objects and an engine's (reporter.py) are keys (the walk stops at the learner's frame).
_hands_back_cache: dict[tuple[Any, int], bool] = {}
_BECOMES_SELF = "_inplace"  # Tensor._inplace: the op's result becomes the tensor it returns
# id(a SourceLine) -> (it, it without target)
_unnamed_cache: dict[int, tuple[SourceLine, SourceLine]] = {}


def _hands_back(code: Any, lasti: int) -> bool:
    """Does this frame of dyngraph's return, as it is, the value of the call it is making?"""
    key = (code, lasti)
    known = _hands_back_cache.get(key)
    if known is None:
        known = _hands_back_cache[key] = _returns_value(code, lasti)
    return known


def _unnamed(where: SourceLine) -> SourceLine:
    """The same line without a target: the node is a part of what the line assigns."""
    if where.target is None:
        return where
    cached = _unnamed_cache.get(id(where))
    if cached is None or cached[0] is not where:
        if len(_unnamed_cache) > 10_000:
            _unnamed_cache.clear()
        cached = _unnamed_cache[id(where)] = (where, where._replace(target=None))
    return cached[1]


def passes_result_back(function: Callable) -> Callable:
    """Mark a wrapper (an engine adapter's, dyngraph.micrograd) that stores the result of the
    call it makes, reports it and returns it as it is: it hands the value back
    (NOTE [variable names]), although its bytecode does not return the call's value at once."""
    _PASSES_RESULT_BACK.add(function.__code__)
    return function


_PASSES_RESULT_BACK: set[Any] = set()  # code objects marked by passes_result_back


def _returns_value(code: Any, lasti: int) -> bool:
    if code.co_name == _BECOMES_SELF or code in _PASSES_RESULT_BACK:
        return True
    try:
        instructions, k = _following(code, lasti)
    except Exception:
        return False
    return k < len(instructions) and instructions[k].opname in _RETURNS


def _ipython_cell(frame: Any, filename: str) -> int | None:
    """The number of the notebook cell whose code this is (IPython's In[n]), or None. Uses the
    ``get_ipython`` IPython puts in the user's namespace: dyngraph never imports IPython."""
    get_ipython = frame.f_globals.get("get_ipython")
    if not callable(get_ipython):
        return None
    try:
        return get_ipython().compile._filename_map.get(filename)
    except Exception:  # not IPython after all, or another version: no cell number
        return None


# Up to these sizes, numbers are read in pure Python: cheaper than numpy's per-call cost, but a
# float object per element, so only for small arrays (the crossovers, measured).
SMALL_PREVIEW = 16  # preview(): every number, then the first few
SMALL_NORM = 32  # preview_and_norm(): every number, for math.hypot


def preview(array: Any) -> tuple[float, ...]:
    """The first few numbers of ``array`` (row-major) as plain Python numbers."""
    if type(array) is np.ndarray:
        if array.size <= SMALL_PREVIEW:  # the common case in lessons, made cheap
            return tuple(array.ravel().tolist()[:PREVIEW_SIZE])
        if array.flags.c_contiguous:
            return tuple(array.ravel()[:PREVIEW_SIZE].tolist())  # ravel: a view, no copy
        return tuple(array.flat[:PREVIEW_SIZE].tolist())  # no copy of a transposed array
    first = array.ravel()[:PREVIEW_SIZE]
    if type(first) is not np.ndarray:
        first = to_numpy(first)  # from the GPU: a copy of just these few numbers
    return tuple(first.tolist())


def preview_and_norm(array: Any) -> tuple[tuple[float, ...], float]:
    """The preview and the L2 norm of a gradient: nan when the gradient has a nan, else inf
    when it has an inf."""
    if type(array) is np.ndarray:
        if array.size <= SMALL_NORM:
            values = array.ravel().tolist()
            norm = math.hypot(*values)
            if norm == math.inf and any(v != v for v in values):  # hypot lets inf beat nan
                norm = math.nan
            return tuple(values[:PREVIEW_SIZE]), norm
        if array.flags.c_contiguous:
            flat = array.ravel()  # a view: no copy
            norm = math.sqrt(float(flat.dot(flat)))
            return tuple(flat[:PREVIEW_SIZE].tolist()), _unless_out_of_range(norm, flat)
        norm = float(np.linalg.norm(array))  # dot would copy it first
        return preview(array), _unless_out_of_range(norm, array)
    return preview(array), math.sqrt(squared_norm(array))


def _unless_out_of_range(norm: float, array: np.ndarray) -> float:
    """``norm``, a sum of squares in the array's own dtype, unless the squares overflowed to
    inf (a float32 gradient of 1e20, a float16 one of 300) or underflowed to 0: then the norm
    of the array divided by its largest magnitude, in float64, times that magnitude."""
    if 0.0 < norm < math.inf or norm != norm:  # in range, or nan: as it is
        return norm
    largest = float(np.abs(array).max())
    if largest == 0.0 or largest == math.inf:  # all zeros, or a true inf
        return largest
    scaled = array.astype(np.float64).ravel() / largest
    return largest * math.sqrt(float(scaled.dot(scaled)))


_dtype_names: dict[Any, str] = {}


def dtype_name(dtype: Any) -> str:
    """'float32' for a dtype (cached: numpy computes dtype names in Python, slowly)."""
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype)
    return name
