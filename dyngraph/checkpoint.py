"""Checkpointing: keep a segment's inputs instead of its activations, recompute them in backward.

Backward needs values from forward: a ``Tanh`` keeps its output, a ``MatMul`` both operands.
For a deep network or a long RNN those saved activations are most of the memory a training step
holds. ``dg.checkpoint(fn, *args)`` trades compute for memory (Chen et al., 2016, "Training
Deep Nets with Sublinear Memory Cost"; ``torch.utils.checkpoint``):

- **forward** runs ``fn`` under ``no_grad()``: none of its intermediate values are kept. The
  result is wrapped in ONE graph node, ``Checkpoint``, which saves only the segment's inputs.
- **backward** reaches that node, runs ``fn`` again with grad enabled on fresh leaves holding the
  saved inputs (node_created events of this second run carry ``recomputed=True``), and
  backpropagates the incoming gradient through the recomputed graph, which is freed as it goes.

>>> block = lambda h: (h @ W1).relu() @ W2
>>> y = dg.checkpoint(block, x)          # one Checkpoint node instead of three
>>> y.sum().backward()                   # block runs again here; W1.grad, W2.grad as usual

NOTE [parameters] ``fn`` usually uses tensors it was not given: weights in a closure or a
module. Their gradients must reach them, and the node must exist even when no *argument*
requires grad (the zero initial state of an RNN). So the forward run watches the ops ``fn`` calls
(with a ``FunctionHook``, the observer protocol of ``Function.apply``) and the parameters it
finds, leaves that require grad, become extra inputs of the node: backward returns their
gradients like any op's, so the engine accumulates them (hooks, ``autograd.grad`` and
``backward(inputs=...)`` behave as without checkpointing), and an in-place change to one of
them before backward is caught by the usual version check.

Random numbers (dropout) are replayed: the generator's state is saved in forward and restored
for the recomputation, so both runs draw the same mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import factories, function, grad_mode
from .autograd import BackwardPass
from .function import Function, FunctionHook
from .grad_mode import enable_grad, no_grad
from .spine import events
from .spine.thread_state import this_thread
from .tensor import Tensor
from .trace import TraceRecorder

_TENSOR = object()  # marks, in a checkpoint's argument layout, where a Tensor argument goes


def checkpoint(fn: Callable[..., Tensor], *args: Any) -> Tensor:
    """``fn(*args)`` without keeping its intermediate values: they are recomputed in backward.

    ``fn`` returns one Tensor and must compute the same thing when called again (it is, once
    more, during backward). Gradients equal those of plain ``fn(*args)``.

    >>> def segment(h, xs):
    ...     for x in xs:
    ...         h = (x @ Wx + h @ Wh).tanh()
    ...     return h
    >>> h = dg.checkpoint(segment, h, xs[:10])
    """
    if not grad_mode.is_grad_enabled() or _tracing():
        # Nothing would be saved anyway (no_grad), or dg.trace is recording the ops themselves.
        return fn(*args)
    inputs = [a for a in args if isinstance(a, Tensor)]
    layout = tuple(_TENSOR if isinstance(a, Tensor) else a for a in args)
    rng_state = factories.generator().bit_generator.state
    with _ParameterFinder(inputs) as finder, no_grad():
        out = fn(*args)
    if not isinstance(out, Tensor):
        raise TypeError(
            f"dg.checkpoint: the function must return one Tensor, got {type(out).__name__}"
        )
    finder.check()
    return Checkpoint.apply(
        *inputs,
        *finder.parameters,
        fn=fn,
        layout=layout,
        n_inputs=len(inputs),
        rng_state=rng_state,
        output=out.array,
    )


class Checkpoint(Function):
    """z = fn(inputs), its activations not kept;  dz/dinputs: fn run again, then backpropagated

    Positional inputs: the Tensor arguments of the segment, then the parameters ``fn`` uses.
    """

    @staticmethod
    def forward(ctx, *arrays, fn, layout, n_inputs, rng_state, output):
        # ``checkpoint`` already ran fn under no_grad (it had to, to find the parameters fn uses
        # before this node's inputs were fixed); the node only keeps what is needed to run it
        # again: the inputs (and the parameters' own arrays, for the in-place check).
        ctx.fn, ctx.layout, ctx.n_inputs, ctx.rng_state = fn, layout, n_inputs, rng_state
        ctx.save_for_backward(*arrays)
        return output

    @staticmethod
    def backward(ctx, gz):
        if ctx.create_graph:
            raise RuntimeError(
                "dg.checkpoint does not support backward(create_graph=True): the recomputed "
                "segment is differentiated once, inside this node's backward"
            )
        saved = ctx.saved_tensors
        n = ctx.n_inputs
        needs = ctx.needs_input_grad
        leaves = [Tensor(a, requires_grad=need) for a, need in zip(saved[:n], needs[:n])]
        out = _recompute(ctx, leaves)
        wanted = [leaf for leaf in leaves if leaf._requires_grad]
        parameters = list(ctx.parents[n:])  # the parameter leaves themselves
        if not out._requires_grad:
            return (None,) * len(ctx.parents)
        grads = iter(_backpropagate(out, gz, wanted + parameters))
        input_grads = [next(grads) if leaf._requires_grad else None for leaf in leaves]
        return (*input_grads, *grads)


def _recompute(ctx: Checkpoint, leaves: list[Tensor]) -> Tensor:
    """Run the segment again, recording its graph, with the random numbers of the first run."""
    remaining = iter(leaves)
    args = [next(remaining) if a is _TENSOR else a for a in ctx.layout]
    generator = factories.generator().bit_generator
    state_now = generator.state
    generator.state = ctx.rng_state
    state = this_thread.state  # (backward runs the segment again in the thread that called it)
    was_recomputing = state.recomputing
    state.recomputing = True  # node_created events say recomputed=True
    try:
        with enable_grad():
            out = ctx.fn(*args)
    finally:
        state.recomputing = was_recomputing
        generator.state = state_now
    if not isinstance(out, Tensor):
        raise TypeError("dg.checkpoint: the function returned something else when run again")
    return out


def _backpropagate(out: Tensor, gz: Any, wanted: list[Tensor]) -> list[Any]:
    """Backpropagate ``gz`` from ``out`` through the recomputed graph; the gradients reaching
    the ``wanted`` leaves, returned rather than accumulated (the outer engine does that)."""
    task = BackwardPass([out], [gz], retain_graph=False, create_graph=False, capture=None)
    task.propagate()
    if this_thread.state.active and task.freed:
        events.emit(events.graph_freed(tuple(task.freed)))
    return [task.grads.get(leaf) for leaf in wanted]


def _tracing() -> bool:
    """Is dg.trace recording? (Its hook may be installed among others.)"""
    return any(isinstance(hook, TraceRecorder) for hook in function.installed_hooks())


class _ParameterFinder(FunctionHook):
    """Installed while a segment runs under no_grad: notes every tensor that requires grad and
    reaches an op without being an argument of the segment."""

    def __init__(self, inputs: list[Tensor]) -> None:
        self.inputs = {id(t) for t in inputs}
        self.seen: set[int] = set()
        self.parameters: list[Tensor] = []
        self.computed: list[Tensor] = []  # captured tensors that have a grad_fn: not supported

    def forward_postprocess(self, cls: type, args: tuple, options: dict, output: Tensor) -> None:
        for arg in args:
            if (
                isinstance(arg, Tensor)
                and arg._requires_grad
                and id(arg) not in self.inputs
                and id(arg) not in self.seen
            ):
                self.seen.add(id(arg))
                (self.parameters if arg.grad_fn is None else self.computed).append(arg)

    def check(self) -> None:
        if self.computed:
            shape = tuple(self.computed[0].shape)
            raise ValueError(
                f"dg.checkpoint: the function uses a tensor of shape {shape} that was computed "
                "outside it and requires grad; pass it as an argument, "
                "dg.checkpoint(fn, ..., that_tensor), so that its gradient can flow"
            )
