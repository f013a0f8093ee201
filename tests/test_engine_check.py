"""The build-your-own checker (dyngraph/engine_check.py, issue 32): a right engine passes every
step, and each typical wrong engine is named for what it does wrong."""

from __future__ import annotations

import contextlib
import math

import pytest

import dyngraph as dg
from dyngraph.engine_check import STEPS, Engine, check_engine, op_key


def make_engine(order="topological", fan_in="sum", chain=True, free=True, versions=True,
                no_grad=True, tanh_derivative=None):
    """A scalar engine in the track's shape, right by default; each keyword puts in one of the
    mistakes learners make."""
    grad_enabled = [True]

    class Value:
        def __init__(self, data, inputs=(), op="leaf", local=None):
            self.data, self.grad, self.version = data, 0.0, 0
            self.inputs, self.op, self.local = inputs, op, local
            self.saved_versions = tuple(i.version for i in inputs)
            if not inputs and op == "leaf":
                src.node(self, "leaf")

        def _op(self, data, inputs, op, local):
            if no_grad and not grad_enabled[0]:
                return Value(data, (), "detached")
            return src.node(Value(data, inputs, op, local), op, inputs)

        # NOTE: each op's local derivatives read the saved values when backward asks
        def __add__(self, other):
            return self._op(self.data + other.data, (self, other), "Add", lambda: (1.0, 1.0))

        def __mul__(self, other):
            return self._op(self.data * other.data, (self, other), "Mul",
                            lambda: (other.data, self.data))

        def tanh(self):
            local = tanh_derivative or (lambda: (1 - math.tanh(self.data) ** 2,))
            return self._op(math.tanh(self.data), (self,), "Tanh", local)

        def add_(self, other):
            self.data += other.data
            self.version += 1
            src.version_bumped(self, self.version)
            return self

        def _send(self):
            if self.local is None:
                raise RuntimeError("Trying to backward through the graph a second time")
            if versions:
                for i, saved in zip(self.inputs, self.saved_versions):
                    if i.version != saved:
                        raise RuntimeError("a value needed for gradient computation has been "
                                           "modified by an inplace operation")
            for i, local in zip(self.inputs, self.local()):
                share = local * self.grad if chain else local
                i.grad = i.grad + share if fan_in == "sum" else share

        def backward(self):
            src.backward_started(self)
            self.grad = 1.0
            done = []
            if order == "topological":
                topo, seen = [], set()

                def visit(v):
                    if v not in seen:
                        seen.add(v)
                        for i in v.inputs:
                            visit(i)
                        topo.append(v)

                visit(self)
                for v in reversed(topo):
                    src.grad(v)
                    if v.inputs:
                        v._send()
                        done.append(v)
            else:  # depth first from the root: a node may go before all its users have sent

                def descend(v):
                    src.grad(v)
                    if v.inputs:
                        v._send()
                        done.append(v)
                        for i in v.inputs:
                            descend(i)

                descend(self)
            if free:
                for v in done:
                    v.local = None
                src.freed(done)
            src.backward_finished(self)

    @contextlib.contextmanager
    def no_grad_mode():
        before, grad_enabled[0] = grad_enabled[0], False
        try:
            yield
        finally:
            grad_enabled[0] = before

    forward = {"Add": lambda x, y: x + y, "Mul": lambda x, y: x * y, "Tanh": math.tanh}

    def trace(fn, *examples):
        leaves, tape, seen = [Value(x) for x in examples], [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for i in v.inputs:
                    visit(i)
                tape.append(v)

        visit(fn(*leaves))
        return leaves, tape

    def replay(leaves, tape, *new_inputs):
        new = dict(zip(leaves, new_inputs))
        for v in tape:
            if v not in new:
                new[v] = forward[v.op](*(new[i] for i in v.inputs))
        return new[tape[-1]]

    src = dg.EventSource("learner", engine=[Value], value_of=lambda v: v.data,
                         grad_of=lambda v: v.grad)
    return Engine(value=Value, source=src, no_grad=no_grad_mode, trace=trace, replay=replay)


def test_a_right_engine_passes_every_step():
    engine = make_engine()
    for step in STEPS[:6]:  # lesson 29's constants and MLP: tests/test_build_track.py
        result = check_engine(engine, step)
        assert result.passed, result


def test_recursion_order_is_named():
    result = check_engine(make_engine(order="depth first"), "backward")
    assert not result.passed
    # a recursion from the root reaches `b` of the chain by two paths, and reports it twice
    assert "more than once" in result.message and "once per path" in result.message
    assert result.marked  # the picture marks the node reported twice
    assert "only in A" not in result.to_dot() or "penwidth" in result.to_dot()


def test_overwriting_at_fan_in_is_named():
    result = check_engine(make_engine(fan_in="overwrite"), "backward")
    assert not result.passed
    assert "do not overwrite" in result.message and "is used by 2 ops" in result.message


def test_a_missing_chain_rule_factor_is_named():
    result = check_engine(make_engine(chain=False), "backward")
    assert not result.passed
    assert "local derivative alone" in result.message


def test_a_wrong_local_derivative_names_the_op():
    result = check_engine(make_engine(tanh_derivative=lambda: (1.0,)), "backward")
    assert not result.passed
    assert "Check the local derivative that" in result.message and "Tanh" in result.message


def test_an_engine_that_never_frees_is_named():
    result = check_engine(make_engine(free=False), "free")
    assert not result.passed
    assert "still keeps what backward saved" in result.message
    assert result.passed is False and result.marked


def test_a_version_check_that_never_fires_is_named():
    result = check_engine(make_engine(versions=False), "versions")
    assert not result.passed
    assert "modified by an inplace operation" in result.message
    # the engine's Mul reads h in backward: the message says the gradient it gave, and why
    assert "42, 28" in result.message and "silently wrong" in result.message
    # and the right engine's check does fire, where dyngraph's does
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        a, b = dg.tensor(2.0, requires_grad=True), dg.tensor(3.0, requires_grad=True)
        h = a * b
        y = h * h
        h.add_(dg.tensor(1.0))
        y.backward()


def test_recording_inside_no_grad_is_named():
    result = check_engine(make_engine(no_grad=False), "no_grad")
    assert not result.passed and "inside no_grad()" in result.message


def test_a_wrong_forward_value_is_named():
    engine = make_engine()
    Value = engine.value
    original = Value.__add__
    Value.__add__ = lambda self, other: original(self, other) * other  # noqa: E731
    result = check_engine(engine, "forward")
    assert not result.passed
    assert "your engine reported" in result.message or "node your engine made" in result.message


def test_a_blank_engine_is_not_attempted_and_bad_calls_are_clear():
    class Blank:
        def __init__(self, data):
            raise NotImplementedError

    blank = Engine(value=Blank, source=dg.EventSource("blank"))
    assert check_engine(blank, "forward").status == "not attempted yet"
    with pytest.raises(ValueError, match="unknown step 'sideways'"):
        check_engine(blank, "sideways")
    with pytest.raises(TypeError, match="needs an Engine"):
        check_engine(object(), "forward")


def test_op_names_match_up_to_spelling():
    assert op_key("Mul") == op_key("*") == op_key("mul") == op_key("MulBackward0")
    assert op_key("**2") == op_key("Pow") and op_key("+") == op_key("Add")
