"""The one walk of a graph: every node behind some roots, each once, the inputs of a node before
the node (a post-order, so also an order in which each node can be told about after its inputs).

Every engine's graph is walked by this function; what differs between engines is only how a
node's inputs are found (``inputs_of``: a dyngraph ``Function``'s ``parents``, a torch node's
``next_functions``, an ``EventSource``'s ``made_by``), what makes two items the same node
(``key``), and which nodes were told about already (``known``). Iterative, with a stack: a chain
of a hundred thousand ops is walked as well as a short one, and a cycle (an engine's ``made_by``
that loops) ends, as each node is visited once.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any


def walk_back(roots: Iterable[Any], inputs_of: Callable[[Any], Iterable[Any]],
              key: Callable[[Any], Hashable] = id,
              known: Callable[[Any], bool] | None = None) -> list[Any]:
    """The nodes behind ``roots`` (the roots included), each once, inputs first.

    ``inputs_of(item)``: the items ``item`` was made from, in argument order (none for a leaf).
    ``key(item)``: what identifies a node (``id`` by default: the same object is the same node).
    ``known(item)``: True for a node already told about: it is left out, and so is what lies
    behind it, unless another path reaches that."""
    order: list[Any] = []
    seen: set[Hashable] = set()
    stack: list[tuple[Any, bool]] = [(root, False) for root in reversed(list(roots))]
    while stack:
        item, inputs_done = stack.pop()
        if inputs_done:
            order.append(item)
            continue
        item_key = key(item)
        if item_key in seen:
            continue
        seen.add(item_key)
        if known is not None and known(item):
            continue
        stack.append((item, True))
        stack.extend((parent, False) for parent in reversed(list(inputs_of(item))))
    return order
