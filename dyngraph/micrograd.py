"""micrograd as a third event source: a program written with micrograd's ``Value`` drawn live.

``import dyngraph.micrograd`` (micrograd from PyPI: ``pip install "dyngraph[micrograd]"``) and
every ``dg.watch()`` / ``dg.record()`` block draws micrograd's graph as it draws dyngraph's own:
a node per ``Value`` as each line runs (with the learner's line and variable name), and in
``v.backward()`` each node's gradient in micrograd's own order, ``reversed(topo)``. The program
is not changed, and outside a watched block micrograd runs exactly as it came from PyPI.

>>> import dyngraph as dg, dyngraph.micrograd
>>> from micrograd.engine import Value
>>> with dg.record() as rec:
...     a = Value(2.0)
...     b = Value(-3.0)
...     c = (a * b).relu()
...     c.backward()
>>> [node.op for node in rec.nodes.values()]
['leaf', 'leaf', '*', 'ReLU']

NOTE [how micrograd is watched] micrograd has no hooks, so for the length of a watched block
(``EventSource.while_watched``, spine/reporter.py) this module wraps four things of ``Value``
and puts them back afterwards:
- ``__init__``: a new leaf is reported (``a = Value(2.0)`` names it ``a``); an op's output is
  not yet, but its inputs are kept in argument order (micrograd keeps them in a set).
- each op method (``__add__``, ``__mul__``, ``relu``, ...): the output is reported as it is
  handed back, with micrograd's op name (``+``, ``*``, ``**2``, ``ReLU``, as its own
  ``draw_dot`` writes them), so ``d = a - b`` names the ``+`` that ``__sub__`` returns and not
  the ``*`` of ``-b`` inside it (NOTE [the engine's frames]).
- ``_backward``, through a descriptor on the class: micrograd's ``backward()`` calls
  ``v._backward()`` once per node in reverse topological order, when ``v.grad`` is complete,
  so reporting ``v``'s gradient there reports it in micrograd's order without re-implementing
  that order; and ``backward()`` itself, for ``backward_started`` and ``backward_finished``.
- ``grad``, through a descriptor too: a node's ``_backward`` adds what it sends each child into
  the child's ``.grad`` (``self.grad += other.data * out.grad``), one statement per argument,
  in argument order. Each such change made while a node's ``_backward`` runs is that edge's
  contribution (the new ``.grad`` minus the old), reported as an edge gradient
  (``EventSource.edge_grad``) at the first argument position of that child not yet reported:
  ``a * a`` sends ``a`` two, one per position. Nothing about micrograd's rules is written here;
  the difference may differ from the added term in its last bit (a float sum).
micrograd keeps what backward needs (its closures) for as long as the ``Value`` lives, so no
``graph_freed`` is reported: the drawing does not show a freeing micrograd does not do.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .extras import needs
from .spine import events
from .spine.reporter import EventSource

with needs("micrograd", "dyngraph.micrograd"):
    from micrograd import engine as _engine
    from micrograd import nn as _nn

Value = _engine.Value

# The methods of Value that return a new Value (micrograd 0.1.0's, and any a later one adds).
OP_METHODS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__pow__", "__neg__", "relu", "tanh", "exp")

# an op's output -> its inputs, in argument order (micrograd keeps them in a set)
_inputs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _made_by(value: Any) -> tuple[str, tuple] | None:
    """micrograd's op and the inputs of a Value never reported (made before watching)."""
    if not value._op:
        return None
    return value._op, _inputs.get(value, tuple(value._prev))


source = EventSource("micrograd", engine=[_engine, _nn], value_of=lambda v: v.data,
                     grad_of=lambda v: v.grad, made_by=_made_by,
                     while_watched=lambda: watching())


class _ReportsGradient:
    """``Value._backward`` while watched: the stored closure, preceded by the report that the
    Value's gradient is complete (NOTE [how micrograd is watched])."""

    def __get__(self, value: Any, owner: Any = None) -> Any:
        if value is None:
            return self
        step = value.__dict__["_backward"]
        if not source.listening:
            return step

        def backward_step() -> None:
            source.grad(value)
            _running.append(_Step(value))
            try:
                step()
            finally:
                _running.pop()

        return backward_step

    def __set__(self, value: Any, step: Any) -> None:
        value.__dict__["_backward"] = step


class _Step:
    """A node's ``_backward`` while it runs: the node, its inputs in argument order, and the
    positions among them that an edge gradient was reported for."""

    __slots__ = ("node", "inputs", "reported")

    def __init__(self, node: Any) -> None:
        self.node = node
        self.inputs = _inputs.get(node, tuple(node._prev))
        self.reported: set[int] = set()

    def sent(self, child: Any, contribution: Any) -> None:
        """``child.grad`` grew by ``contribution``: report it at its first position not yet
        reported (a Value that is no input of the node, which micrograd never changes, is
        not reported)."""
        for position, value in enumerate(self.inputs):
            if value is child and position not in self.reported:
                self.reported.add(position)
                source.edge_grad(self.node, child, position, contribution)
                return


_running: list[_Step] = []  # the _backward running (one at a time; a list for safety)


class _ReportsContributions:
    """``Value.grad`` while watched: stored where micrograd stores it (the instance's dict);
    a change made while a node's ``_backward`` runs is what that edge carried (NOTE [how
    micrograd is watched])."""

    def __get__(self, value: Any, owner: Any = None) -> Any:
        if value is None:
            return self
        return value.__dict__["grad"]

    def __set__(self, value: Any, grad: Any) -> None:
        if _running and source.listening:
            _running[-1].sent(value, grad - value.__dict__.get("grad", 0))
        value.__dict__["grad"] = grad


def _wrap_init(init: Any) -> Any:
    def __init__(self: Any, data: Any, _children: tuple = (), _op: str = "") -> None:
        init(self, data, _children, _op)
        if _children:
            _inputs[self] = tuple(_children)
        else:
            source.node(self, "leaf")

    return __init__


def _wrap_op(method: Any) -> Any:
    @events.passes_result_back  # d = a - b names the + that __sub__ hands back
    def op(self: Any, *args: Any) -> Any:
        out = method(self, *args)
        if isinstance(out, Value) and out._op:
            return source.node(out, out._op, _inputs.get(out, tuple(out._prev)))
        return out

    op.__name__ = method.__name__
    return op


def _wrap_backward(backward: Any) -> Any:
    def backward_reported(self: Any) -> None:
        source.backward_started(self)
        try:
            backward(self)
        except BaseException as error:
            source.backward_finished(self, error=error)
            raise
        source.backward_finished(self)

    return backward_reported


_depth = 0  # nested watch()/record() blocks wrap once
_originals: dict[str, Any] = {}


@contextmanager
def watching() -> Iterator[None]:
    """Inside the block micrograd's Value reports to dyngraph's event spine (dg.watch() and
    dg.record() open it themselves once this module is imported)."""
    global _depth
    _depth += 1
    if _depth == 1:
        _wrap()
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _unwrap()


def _wrap() -> None:
    names = ["__init__", "backward", "_backward", "grad",
             *(name for name in OP_METHODS if name in vars(Value))]
    _originals.update({name: vars(Value).get(name) for name in names})
    Value.__init__ = _wrap_init(_originals["__init__"])
    Value.backward = _wrap_backward(_originals["backward"])
    Value._backward = _ReportsGradient()
    Value.grad = _ReportsContributions()
    for name in OP_METHODS:
        if _originals.get(name) is not None:
            setattr(Value, name, _wrap_op(_originals[name]))


def _unwrap() -> None:
    for name, original in _originals.items():
        if original is None:
            delattr(Value, name)
        else:
            setattr(Value, name, original)
    _originals.clear()
