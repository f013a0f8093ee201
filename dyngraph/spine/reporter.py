"""Any autograd engine as an event source: the small public API through which an engine that is
not dyngraph's - one a learner writes in a notebook, micrograd, PyTorch - tells the spine what
it does, so that ``dg.watch()``, ``dg.record()``, ``dg.diff`` and pages draw it as they draw
dyngraph's own.

An engine reports these facts, the ones of the event spine (events.py):

=====================================  ==================================================
``src.node(out, "Mul", (a, b))``       an op made ``out`` from ``a`` and ``b`` (leaves: no inputs)
``src.backward_started(root)``         backward begins at ``root``
``src.grad(v)``                        ``v``'s gradient is complete, in the engine's order
``src.edge_grad(out, a, 0, g)``        ``out``'s backward sent ``g`` to its input ``a`` (argument 0)
``src.backward_finished(root)``        backward ended (``error=`` when it failed)
``src.freed(nodes)``                   what backward saved for these nodes was released
``src.version_bumped(v, version)``     an in-place change of ``v``
=====================================  ==================================================

The ``EventSource`` keeps what an engine should not have to think about: a stable id for each of
its objects (from dyngraph's counter, never ``id()``; held weakly, so watching keeps nothing
alive), previews instead of live values, the learner's source line and the variable it assigns
(NOTE [variable names] in events.py), and silence when nobody listens (one attribute check).

NOTE [the engine's frames] The learner's line is the first frame outside dyngraph *and outside
the engine*: ``EventSource(..., engine=[Value])`` names the engine's code (classes, functions,
modules; a class stands for every function defined in it). As for dyngraph's own ops, a node
is named after the variable only when every engine frame on the way out hands the object back
as it is, so ``d = a - b`` names the ``Add`` that ``__sub__`` returns and not the ``Mul`` of
``-b`` inside it; a constructor (``__init__``) hands back the object it initialises, so
``a = Value(2.0)`` names the leaf ``a``.

>>> import dyngraph as dg
>>> class Number:
...     def __init__(self, data, inputs=(), op=""):
...         self.data, self.grad, self.inputs = data, 0.0, inputs
...         src.node(self, op or "leaf", inputs)
...     def __mul__(self, other):
...         return Number(self.data * other.data, (self, other), "Mul")
>>> src = dg.EventSource("numbers", engine=[Number], value_of=lambda n: n.data)
>>> with dg.record() as rec:
...     a, b = Number(2.0), Number(3.0)
...     c = a * b
>>> [node.op for node in rec.nodes.values()]
['leaf', 'leaf', 'Mul']

An engine that cannot be changed (micrograd, from PyPI) gets its calls from an adapter that
wraps it only while someone watches: ``while_watched`` (see dyngraph.micrograd).

NOTE [one reporter] Every engine reports the same facts through the same constructors
(events.py, NOTE [one place per event]). An EventSource is what an engine whose objects carry
no ids calls: it gives them ids and then calls those constructors. dyngraph's engine and
dyngraph.torch keep an id on each node already (a Function's, a grad_fn's metadata), so they
call the constructors themselves: ``Function.apply``'s per-op path stays flat. PyTorch is an
EventSource too, for its ``while_watched`` adapter (the front door registers it). The same
program in each engine is therefore the same report (tests/test_edges_of_every_engine.py).
"""

from __future__ import annotations

import math
import operator
import types
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from . import events
from .thread_state import this_thread
from .walk import walk_back

__all__ = ["EventSource", "watching_sources"]


class EventSource:
    """One engine's reporter to the event spine (see the module docstring).

    ``name``: what the engine is called in messages. ``engine``: its classes, functions and
    modules, whose frames are passed over to find the learner's line. ``value_of(obj)`` /
    ``grad_of(obj)``: the value and the gradient of one of its objects (a number or an array),
    used when a call gives none. ``made_by(obj)``: ``(op, inputs)`` of an object the engine
    never reported (made before anyone watched), or None for a leaf: with it, a backward
    watched after its forward still shows the graph behind the root. ``while_watched()``: a
    context manager entered by every ``dg.watch()`` / ``dg.record()`` block of the thread (an
    adapter that wraps an engine only while someone watches); a source that has one is
    registered under its ``name``, and a new source of the same name replaces it (a notebook
    cell run twice).
    """

    def __init__(self, name: str, engine: Iterable[Any] = (),
                 value_of: Callable[[Any], Any] | None = None,
                 grad_of: Callable[[Any], Any] | None = None,
                 made_by: Callable[[Any], tuple[str, Iterable[Any]] | None] | None = None,
                 while_watched: Callable[[], Any] | None = None) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"EventSource needs a name (a non-empty str), got {name!r}")
        for what, fn in (("value_of", value_of), ("grad_of", grad_of), ("made_by", made_by),
                         ("while_watched", while_watched)):
            if fn is not None and not callable(fn):
                raise TypeError(f"EventSource({name!r}): {what} must be callable, got "
                                f"{type(fn).__name__}")
        self.name = name
        self.value_of = value_of
        self.grad_of = grad_of
        self.made_by = made_by
        self.while_watched = while_watched
        self._code, self._files = _engine_code(name, engine)
        self._ids: dict[int, tuple[weakref.ref, int]] = {}  # id(obj) -> (a weak ref to it, node id)
        self._uses: dict[int, int] = {}  # node id -> how many inputs of reported ops it was
        if while_watched is not None:
            _registered[name] = self

    def __repr__(self) -> str:
        return f"EventSource({self.name!r})"

    # ------------------------------------------------------------------ what is watched

    @property
    def listening(self) -> bool:
        """Does anyone listen to the calling thread? (Nothing needs to be reported if not.)"""
        return this_thread.state.active

    def id_of(self, obj: Any) -> int | None:
        """The node id given to ``obj``, or None if it was never reported."""
        entry = self._ids.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else None

    # ------------------------------------------------------------------ the four facts

    def node(self, obj: Any, op: str, inputs: Iterable[Any] = (), *, value: Any = None,
             name: str | None = None) -> Any:
        """``obj`` was made by ``op`` from ``inputs`` (in argument order); no inputs: a leaf.
        Inputs never reported are reported first, as leaves. Returns ``obj``, so an op can end
        with ``return src.node(out, "Mul", (self, other))``."""
        if not this_thread.state.active:
            return obj
        if not isinstance(op, str) or not op:
            raise TypeError(f"{self.name}: node() needs the op's name as a non-empty str, "
                            f"got {op!r}")
        inputs = tuple(inputs)
        input_ids = tuple(self._announced(item) for item in inputs)
        known = self.id_of(obj)
        if known is not None:
            return obj  # reported already (an op that returns one of its inputs)
        where = events.where_from_stack(2, named=True, engine=self._is_engine_code)
        if name is None and where is not None:
            name = where.target  # NOTE [variable names]: c in c = a * b
        self._emit_node(obj, op, input_ids, value, name, where)
        return obj

    def backward_started(self, root: Any, retain_graph: bool = False) -> None:
        """Backward begins at ``root`` (reported as a leaf first if it never was)."""
        if this_thread.state.active:
            where = events.where_from_stack(2, engine=self._is_engine_code)  # the learner's
            events.emit(events.backward_started(  # backward() line, past the engine's frames
                root=self._announced(root), retain_graph=bool(retain_graph), create_graph=False,
                where=where))

    def grad(self, obj: Any, gradient: Any = None, accumulated: bool | None = None) -> None:
        """``obj``'s gradient is complete (``gradient``, or ``grad_of(obj)``), in the order the
        engine computes it. ``accumulated``: it was summed from several paths (fan-in) or onto
        a gradient kept from before; by default, whether more than one op used ``obj``."""
        if not this_thread.state.active:
            return
        if gradient is None and self.grad_of is not None:
            gradient = self.grad_of(obj)
        values, norm = _preview_and_norm(gradient)
        node_id = self._announced(obj)
        if accumulated is None:
            accumulated = self._uses.get(node_id, 0) > 1
        events.emit(events.grad_computed(node_id, values, norm, bool(accumulated)))

    def edge_grad(self, obj: Any, to: Any, position: int, contribution: Any,
                  reduced_from: tuple[int, ...] | None = None) -> None:
        """What one edge carried back: ``obj``'s backward sent ``contribution`` (upstream
        gradient times local derivative, a number or an array) to ``to``, its input number
        ``position`` as ``node()`` was told them. Report it after ``grad(obj)`` and before
        ``grad(to)``; the contributions into an input add up to its gradient (NOTE [edge
        gradients] in events.py). ``reduced_from``: the shape the contribution had before the
        engine summed it back to ``to``'s shape (a broadcast), if it did. An engine that
        reports none of these still shows each node's total: the chain-rule panel then says
        that the engine does not report edges.

        >>> def _backward():                          # out = a * b
        ...     a.grad += b.data * out.grad
        ...     src.edge_grad(out, a, 0, b.data * out.grad)
        """
        if not this_thread.state.active:
            return
        array = _as_array(contribution)
        events.emit(events.edge_grad(
            node=self._announced(obj), input=self._announced(to),
            position=self._whole(position, "position"),
            preview=events.preview(array) if array is not None else (),
            reduced_from=None if reduced_from is None else tuple(int(n) for n in reduced_from),
        ))

    def backward_finished(self, root: Any, error: BaseException | str | None = None) -> None:
        """Backward ended at ``root``; ``error``: the exception (or its text) it failed with."""
        if not this_thread.state.active:
            return
        root_id = self._announced(root)
        if error is None:
            events.emit(events.backward_finished(root_id))
        else:
            text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
            events.emit(events.backward_failed(root_id, text))

    def freed(self, objs: Iterable[Any]) -> None:
        """What backward saved for these nodes was released."""
        if this_thread.state.active:
            ids = tuple(i for i in (self.id_of(obj) for obj in objs) if i is not None)
            if ids:
                events.emit(events.graph_freed(ids))

    def version_bumped(self, obj: Any, version: int) -> None:
        """``obj`` was changed in place; ``version`` is its version counter now."""
        if this_thread.state.active:
            node_id = self.id_of(obj)
            if node_id is not None:
                events.emit(events.version_bumped(node_id, self._whole(version, "version")))

    # ------------------------------------------------------------------ inside

    def _announced(self, obj: Any) -> int:
        """``obj``'s node id, reporting it first if it is new to the spine: with what
        ``made_by`` says made it (and, before it, what made its inputs), else as a leaf. The
        spine's one walk (walk.py): a chain of ten thousand ops is announced as well."""
        known = self.id_of(obj)
        if known is not None:
            return known
        made: dict[int, tuple[str, tuple] | None] = {}  # id() -> what made_by said, asked once

        def inputs_of(item: Any) -> tuple:
            made[id(item)] = found = self._made(item)
            return () if found is None else found[1]

        for item in walk_back([obj], inputs_of, known=lambda item: self.id_of(item) is not None):
            if made[id(item)] is None:
                self._emit_node(item, "leaf", (), None, None, None)
                continue
            op, inputs = made[id(item)]
            input_ids = tuple(i for i in map(self.id_of, inputs) if i is not None)
            self._emit_node(item, op, input_ids, None, None, None)
        return self.id_of(obj)

    def _made(self, obj: Any) -> tuple[str, tuple] | None:
        """``made_by(obj)`` as ``(op, inputs)``, or None for a leaf; a clear error naming the
        source and what it returned for anything else (NOTE [a source that misbehaves])."""
        if self.made_by is None:
            return None
        made = self.made_by(obj)
        if made is None:
            return None
        if (type(made) in (tuple, list) and len(made) == 2 and isinstance(made[0], str)
                and made[0] and not isinstance(made[1], (str, bytes))):
            try:
                return made[0], tuple(made[1])
            except TypeError:
                pass
        raise TypeError(f"{self.name}: made_by() must return (op, inputs), the op's name and "
                        f"the objects it was made from, or None for a leaf; for a "
                        f"{type(obj).__name__} it returned {_shown_value(made)}")

    def _emit_node(self, obj: Any, op: str, input_ids: tuple[int, ...], value: Any,
                   name: str | None, where: events.SourceLine | None) -> int:
        node_id = self._new_id(obj)
        for input_id in input_ids:
            self._uses[input_id] = self._uses.get(input_id, 0) + 1
        if value is None and self.value_of is not None:
            value = self.value_of(obj)
        array = _as_array(value)
        scope = events.current_scope()
        if array is None:  # no value known: the node alone
            events.emit(events.node_created(node_id, op, input_ids, (), "", "cpu", True,
                                            not input_ids, name, scope, where))
        else:
            events.emit(events.node_of_array(node_id, op, input_ids, array, True, not input_ids,
                                             name, scope, where))
        return node_id

    def _new_id(self, obj: Any) -> int:
        key = id(obj)
        try:
            ref = weakref.ref(obj, lambda _, key=key: self._forget(key))
        except TypeError:
            raise TypeError(
                f"{self.name}: dyngraph refers to an engine's objects weakly (watching keeps "
                f"nothing alive), and a {type(obj).__name__} cannot be: add '__weakref__' to "
                "its __slots__") from None
        node_id = events.new_node_id()
        self._ids[key] = (ref, node_id)
        return node_id

    def _forget(self, key: int) -> None:
        """An object of the engine was collected: its id and use count go with it."""
        entry = self._ids.pop(key, None)
        if entry is not None:
            self._uses.pop(entry[1], None)

    def _whole(self, value: Any, what: str) -> int:
        """``value`` as an int (a counter, a position), or a clear error naming the source."""
        try:
            return operator.index(value)
        except TypeError:
            raise TypeError(f"{self.name}: the {what} must be a whole number (an int), got "
                            f"{_shown_value(value)}") from None

    def _is_engine_code(self, code: types.CodeType) -> bool:
        return code in self._code or code.co_filename in self._files


# --------------------------------------------------------------------------- helpers


def _engine_code(name: str, engine: Iterable[Any]) -> tuple[frozenset, frozenset[str]]:
    """The code objects (and the files, for modules) of an engine's classes, functions and
    modules, nested functions included (NOTE [the engine's frames])."""
    codes: set[types.CodeType] = set()
    files: set[str] = set()

    def add_code(code: types.CodeType) -> None:
        if code not in codes:
            codes.add(code)
            for const in code.co_consts:
                if isinstance(const, types.CodeType):
                    add_code(const)

    def add(item: Any) -> None:
        if isinstance(item, types.ModuleType):
            if getattr(item, "__file__", None):
                files.add(item.__file__)
        elif isinstance(item, type):
            for member in vars(item).values():
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    for accessor in (member.fget, member.fset, member.fdel):
                        if accessor is not None:
                            add(accessor)
                elif isinstance(member, (types.FunctionType, type)):
                    add(member)
        elif isinstance(item, types.FunctionType):
            add_code(item.__code__)
        elif isinstance(item, types.MethodType):
            add(item.__func__)
        else:
            raise TypeError(f"EventSource({name!r}): engine= takes classes, functions and "
                            f"modules, got {type(item).__name__}")

    if isinstance(engine, (type, types.ModuleType, types.FunctionType)):
        engine = [engine]
    for item in engine:
        add(item)
    return frozenset(codes), frozenset(files)


def _as_array(value: Any) -> np.ndarray | None:
    """A value as an array for its shape, dtype and preview; None when there is none to show."""
    if value is None:
        return None
    try:
        array = np.asarray(value)
    except Exception:  # not a number or an array (an engine's own type): no preview
        return None
    return array if array.dtype.kind in "biuf" else None


def _preview_and_norm(gradient: Any) -> tuple[tuple[float, ...], float]:
    array = _as_array(gradient)
    if array is None:
        return (), math.nan
    return events.preview_and_norm(array)


# --------------------------------------------------------------------------- while watched

_registered: dict[str, EventSource] = {}  # by name, the sources with a while_watched adapter


@contextmanager
def watching_sources() -> Iterator[None]:
    """What every ``dg.watch()`` / ``dg.record()`` block enters: each registered source's
    ``while_watched()``, in the order they were registered (PyTorch's first: the package's
    front door registers it, NOTE [PyTorch as a source] in dyngraph/__init__.py).

    NOTE [a source that misbehaves] One engine's adapter must not break watching for the
    others, dyngraph's own included: a ``while_watched`` that raises, or returns something that
    is not a context manager, is warned about (naming the source and what it returned) and
    unregistered, and the block goes on without it; one whose exit raises is warned about too,
    after the others have exited. The learner's own exception, raised inside the block, passes
    through unchanged."""
    with ExitStack() as stack:
        for source in list(_registered.values()):
            stack.push(_entered(source))
        yield


def _entered(source: EventSource) -> Callable[..., bool]:
    """Enter ``source.while_watched()``; returns what leaves it (an exit for ExitStack.push).
    A source that cannot be entered is dropped with a warning and leaves nothing to exit
    (NOTE [a source that misbehaves])."""
    try:
        adapter = source.while_watched()
    except Exception as exc:
        return _dropped(source, f"its while_watched() raised {type(exc).__name__}: {exc}")
    if not (hasattr(adapter, "__enter__") and hasattr(adapter, "__exit__")):
        return _dropped(source, f"its while_watched() returned {_shown_value(adapter)}, not a "
                        "context manager (decorate it with @contextlib.contextmanager, or "
                        "return an object with __enter__ and __exit__)")
    try:
        adapter.__enter__()
    except Exception as exc:
        return _dropped(source, f"entering its while_watched() raised {type(exc).__name__}: "
                        f"{exc}")

    def leave(*exc_info: Any) -> bool:
        try:
            adapter.__exit__(*exc_info)
        except Exception as exc:
            if exc is not exc_info[1]:  # its own error, not the learner's passing through
                _dropped(source, f"leaving its while_watched() raised {type(exc).__name__}: "
                         f"{exc}")
        return False  # the learner's exception, if any, goes on

    return leave


def _dropped(source: EventSource, what: str) -> Callable[..., bool]:
    """Unregister ``source`` with a warning saying ``what`` it did; nothing to exit."""
    _drop_source(source, what)
    return lambda *exc_info: False


def _drop_source(source: EventSource, what: str) -> None:
    if _registered.get(source.name) is source:
        del _registered[source.name]
    warnings.warn(f"dyngraph: the event source {source.name!r} is not watched: {what}. Other "
                  "engines are watched as before; fix it and create the EventSource again.",
                  RuntimeWarning, stacklevel=2)


def _shown_value(value: Any) -> str:
    """A value as a message names it: its type, and its repr cut short."""
    text = repr(value)
    return f"{text[:60]}..." if len(text) > 60 else text
