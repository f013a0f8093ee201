"""Variable names on nodes (NOTE [variable names] in dyngraph/spine/events.py): a node made by
``h = x * w`` is labelled ``h``; sub-expressions, tuple unpacking and returns keep the op name;
a leaf made while someone listens is named by its line and points at that line."""

from __future__ import annotations

import inspect

import pytest

import dyngraph as dg
import dyngraph.nn.functional as F
from dyngraph import events


def line() -> int:
    return inspect.currentframe().f_back.f_lineno


def names(rec) -> list[tuple[str, str | None]]:
    return [(n.op, n.name) for n in sorted(rec.nodes.values(), key=lambda n: n.order)
            if n.kind == "op"]


class Holder:
    pass


@pytest.fixture
def x():
    return dg.tensor([1.0, -2.0], requires_grad=True, name="x")


def test_a_plain_assignment_names_the_node(x):
    with dg.record() as rec:
        h = x * 2.0
    assert names(rec) == [("Mul", "h")]
    assert h.name is None  # the label carries the variable; the tensor's own name is untouched


def test_only_the_value_the_line_assigns_is_named_not_its_sub_expressions(x):
    with dg.record() as rec:
        h2 = (x * 3.0).tanh()
        total = h2.sum() + 1.0  # noqa: F841 (the name is what is tested)
    assert names(rec) == [("Mul", None), ("Tanh", "h2"), ("Sum", None), ("Add", "total")]


def test_augmented_assignment_names_the_new_node(x):
    with dg.record() as rec:
        h = x * 1.0
        h += x
    assert names(rec) == [("Mul", "h"), ("Add", "h")]


def test_attribute_targets_read_as_object_dot_attribute(x):
    m = Holder()
    with dg.record() as rec:
        m.out = x.exp()
    assert names(rec) == [("Exp", "m.out")]


def test_tuple_unpacking_return_and_call_arguments_give_no_name(x):
    def twice(t):
        return t * 2.0  # the learner's own function: the value is returned, not stored

    with dg.record() as rec:
        a, b = x * 2.0, x * 3.0
        print_me = [x.exp()]  # a list display, not a store of the op's value
        c = twice(x)
    assert names(rec) == [("Mul", None), ("Mul", None), ("Exp", None), ("Mul", None)]
    del a, b, print_me, c


def test_a_loop_names_every_iteration_from_one_cached_instruction(x):
    with dg.record() as rec:
        h = x
        for _ in range(4):
            h = h * 0.5
    assert names(rec) == [("Mul", "h")] * 4


def test_a_library_call_names_only_the_node_it_hands_back(x):
    target = dg.tensor([0.0, 1.0])
    with dg.record() as rec:
        loss = F.mse_loss(x, target)  # noqa: F841 (the name is what is tested)
    ops = names(rec)
    assert ops[-1][1] == "loss"
    assert all(name is None for _, name in ops[:-1])  # the Sub and Pow inside mse_loss


def test_a_leaf_made_while_watching_is_named_by_its_line_and_points_at_it():
    with dg.record() as rec:
        w = dg.randn(2, requires_grad=True); w_line = line()  # noqa: E702
        y = (w * 2.0).sum()
    leaf = rec.nodes[w.id]
    assert (leaf.kind, leaf.name) == ("leaf", "w")
    assert leaf.where[1] == w_line
    assert y.name is None


def test_a_name_given_by_the_learner_wins_over_the_variable():
    with dg.record() as rec:
        w = dg.ones(2, requires_grad=True, name="weights")
        (w * 2.0).sum()
    assert rec.nodes[w.id].name == "weights"


def test_the_target_lives_in_the_cached_where_and_nothing_is_named_without_listeners(x):
    h = x * 2.0  # nobody listens: no where is looked up, no name is made
    with dg.record() as rec:
        y = h.exp()
    assert rec.nodes[y.id].where[4] == "y"  # (file, line, function, cell, target)
    assert events.SourceLine._fields[4] == "target"


def test_only_the_outermost_op_of_a_library_function_takes_the_variable_name():
    """mse_loss runs several ops on the learner's line: each points at that line, and only the
    last, whose value is what the line assigns, is named after the variable."""
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    target = dg.tensor([0.0, 1.0])
    with dg.record() as rec:
        h = (x * 2.0).tanh()
        loss = F.mse_loss(h, target)  # noqa: F841 (the name is what is tested)
    ops = names(rec)
    assert ops[:2] == [("Mul", None), ("Tanh", "h")]
    assert ops[-1][1] == "loss" and all(name is None for _, name in ops[2:-1])
    inside, last = [n.where for n in sorted(rec.nodes.values(), key=lambda n: n.order)
                    if n.kind == "op"][-2:]
    assert inside[4] is None and last[4] == "loss"  # the same line, a target only on the last
    assert inside[:4] == last[:4]
