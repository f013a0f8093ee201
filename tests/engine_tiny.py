"""A 30-line autograd engine written against dyngraph's public event API (dg.EventSource): the
README's example, imported by tests/test_event_sources.py. Scalars, as micrograd's."""

import math

import dyngraph as dg


class Value:
    """A number that remembers the op that made it and the local derivatives of that op."""

    def __init__(self, data, inputs=(), op="leaf", local_grads=()):
        self.data, self.grad = data, 0.0
        self.inputs, self.op, self.local_grads = inputs, op, local_grads
        if not inputs:
            src.node(self, "leaf")  # a = Value(2.0) is drawn as the leaf "a"

    def __add__(self, other):
        return src.node(Value(self.data + other.data, (self, other), "Add", (1.0, 1.0)),
                        "Add", (self, other))

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), "Mul", (other.data, self.data))
        return src.node(out, "Mul", (self, other))

    def tanh(self):
        t = math.tanh(self.data)
        return src.node(Value(t, (self,), "Tanh", (1 - t * t,)), "Tanh", (self,))

    def backward(self):
        order, seen = [], set()

        def visit(v):  # topological order: every input before the values made from it
            if v not in seen:
                seen.add(v)
                for i in v.inputs:
                    visit(i)
                order.append(v)

        visit(self)
        src.backward_started(self)
        self.grad = 1.0
        for v in reversed(order):
            src.grad(v)  # complete: every value made from v has sent its share
            for position, (i, local) in enumerate(zip(v.inputs, v.local_grads)):
                i.grad += local * v.grad  # the chain rule, summed at fan-in
                src.edge_grad(v, i, position, local * v.grad)  # what this edge carried
        src.backward_finished(self)


src = dg.EventSource("tiny", engine=[Value], value_of=lambda v: v.data,
                     grad_of=lambda v: v.grad,
                     made_by=lambda v: (v.op, v.inputs) if v.inputs else None)
