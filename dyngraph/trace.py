"""Tracing: run a dynamic function once, keep the ops it ran, and replay them as a static graph.

Define-by-run builds a new graph on every call: Python decides, line by line, which ops run.
That is what makes ``if`` and ``for`` on data so natural, and it costs Python work per op per
call. Tracing is the other side of the trade-off (``torch.jit.trace``): run the function once on
example inputs, write down the ops it ran, and from then on replay that list without running the
Python code again::

    >>> W = dg.randn(4, 3, requires_grad=True, name="W")
    >>> graph = dg.trace(lambda x: (x @ W).tanh().sum(axis=1), dg.randn(2, 4))
    >>> graph
    StaticGraph(3 ops, inputs=[(2, 4) float32], outputs=[(2,) float32])
    >>> y = graph(dg.randn(2, 4))          # replayed: no Python control flow, no graph

What the trace remembers for each op: its class, its options (axis=..., shape=...), and where
each positional input comes from (a ``Ref``): a traced input, an earlier step's output, a
*captured* tensor (a model weight the function closed over; its current value is read at each
replay), or a constant (a Python number or a constant array).

NOTE [the pitfall] Python control flow is *not* recorded, only its outcome. When the traced
function decides something from tensor data (``if x.sum() > 0:``, ``t.item()``), the trace keeps
the branch that this one run took and replays it whatever the input: ``dg.trace`` warns with a
``TracerWarning`` naming the line, as PyTorch's tracer does, and the lessons show the silently
followed branch. Shapes read in Python (``x.shape[0]``) are baked in the same way.

Replay has two paths:

- **fast**: nothing requires grad (or grad mode is off). Each op's ``forward`` is called directly
  on raw arrays, in the recorded order, with one reusable ``ctx`` per step and argument slots
  decided once at trace time: no Tensor wrapping, no graph, no events.
- **with grad**: an input or a captured weight requires grad. The ops are replayed through
  ``Function.apply``, so a graph is recorded and ``backward()`` works as after eager execution.
  (Also while a FunctionHook is installed, an observer of every op such as an enclosing
  ``dg.trace``: it must see the replay's ops.)

In Jupyter a StaticGraph displays as a diagram (``graph.draw()``); ``graph.steps`` lists the
ops for any other renderer.

``graph.save(path)`` writes the graph as JSON (+ an ``.npz`` of the captured tensors) and
``dg.load_static(path)`` reads it back, validated, in a process that never saw the model's code
(the file format and its validating loader are in static_io.py).
"""

from __future__ import annotations

import linecache
import os
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import backend, factories, function, grad_mode
from .function import FunctionHook, forward_on_tensors
from .ops.shape import ToDevice
from .spine import events
from .static_io import Ref, _Op, read_static, save_static
from .tensor import Tensor, new_node_id, wrap_output


class MemoryBudgetError(MemoryError):
    """A loaded graph's step was refused before it ran: its sizes would pass the graph's
    memory budget (NOTE [sizes before running] in static_io.py)."""


class InconsistentGraphError(ValueError):
    """A loaded graph's step made another shape than its file declares, from inputs of the
    declared shapes: the file does not describe the ops it names."""


class TracerWarning(UserWarning):
    """The traced function did something a trace cannot record (it read tensor data into
    Python, or made a tensor outside dyngraph's ops): the trace might not generalize."""


# ---------------------------------------------------------------------------- the recorded graph


class Step(NamedTuple):
    """One op of a StaticGraph, as a diagram renderer reads it."""

    op: str  # the op's class name ("MatMul", "Tanh", ...)
    inputs: tuple[str, ...]  # "input:0", "step:3", "captured:1", "constant:2.0"
    shape: tuple[int, ...]  # the output shape in the traced run


class StaticGraph:
    """The ops of one traced run, replayed in a fixed order: ``graph(x)`` or ``graph.run(x)``.

    Made by ``dg.trace`` or ``dg.load_static``; see the module docstring.

    >>> graph = dg.trace(lambda x: (x * 2).exp(), dg.randn(3))
    >>> graph.steps
    [Step(op='Mul', inputs=('input:0', 'constant:2'), shape=(3,)), Step(op='Exp', ...)]
    """

    def __init__(
        self,
        ops: list[_Op],
        inputs: list[tuple[tuple[int, ...], np.dtype]],
        captured: list[Any],
        outputs: list[Ref],
        single_output: bool,
        data_reads: list[tuple[events.SourceLine | None, str]] | None = None,
        budget: Any = None,
    ) -> None:
        self._ops = ops
        # a loaded graph's memory budget (static_io.RunBudget): its sizes are checked before
        # each step runs (NOTE [sizes before running] in static_io.py); None for a traced one
        self._budget = budget
        self._inputs = inputs  # (shape, dtype) of each traced input
        self._captured = captured  # Tensors (weights, read at each replay) or constant arrays
        self._outputs = outputs
        self._single_output = single_output
        self.data_reads = data_reads or []  # (line, how) where the traced run read tensor data
        self._compile()

    # ------------------------------------------------------------------ what readers see

    @property
    def steps(self) -> list[Step]:
        """The recorded ops in replay order: (op name, input refs, output shape)."""
        return [
            Step(op.cls.__name__, tuple(ref.label() for ref in op.args), op.shape)
            for op in self._ops
        ]

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        return [shape for shape, _ in self._inputs]

    @property
    def output_shapes(self) -> list[tuple[int, ...]]:
        return [self._spec_of(ref)[0] for ref in self._outputs]

    @property
    def captured(self) -> list[Any]:
        """The captured tensors (weights) and constant arrays, in the order refs number them."""
        return list(self._captured)

    def __len__(self) -> int:
        return len(self._ops)

    def __repr__(self) -> str:
        def shown(specs: list[tuple[tuple[int, ...], Any]]) -> str:
            return "[" + ", ".join(f"{tuple(s)} {np.dtype(d)}" for s, d in specs) + "]"

        outputs = [self._spec_of(ref) for ref in self._outputs]
        return (
            f"StaticGraph({len(self._ops)} ops, inputs={shown(self._inputs)}, "
            f"outputs={shown(outputs)})"
        )

    def draw(self, **options: Any) -> Any:
        """A diagram of the recorded ops, in dyngraph's one visual vocabulary: ``dg.draw`` of a
        replay on placeholder inputs (zeros of the traced shapes), so only shapes are meaningful.
        Options go to ``dg.draw``. In Jupyter a StaticGraph displays as this diagram."""
        from .drawing import draw

        placeholders = [
            Tensor(np.zeros(shape, dtype), requires_grad=np.dtype(dtype).kind == "f")
            for shape, dtype in self._inputs
        ]
        with grad_mode.enable_grad():
            outputs = self._run_recorded(tuple(placeholders))
        return draw(outputs[0], **options)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = dict(self.draw()._repr_mimebundle_(include, exclude))
        bundle["text/plain"] = repr(self)
        return bundle

    def _spec_of(self, ref: Ref) -> tuple[tuple[int, ...], Any]:
        if ref.kind == "input":
            return self._inputs[ref.index]
        if ref.kind == "step":
            op = self._ops[ref.index]
            return op.shape, op.dtype
        if ref.kind == "captured":
            value = self._captured[ref.index]
            return tuple(value.shape), value.dtype
        value = factories.tensor(ref.value).array  # as _compile holds an output constant
        return value.shape, value.dtype

    # ------------------------------------------------------------------ replay

    # NOTE [slots] Replay keeps every value in one flat list, laid out once here: the inputs,
    # then the captured tensors, then the constants, then one slot per step's output. Each step
    # knows the slot numbers of its arguments, so a replay is a loop over steps that reads and
    # writes list entries: no dictionary look-ups, no decisions.
    def _compile(self) -> None:
        n_inputs, n_captured = len(self._inputs), len(self._captured)
        constants = [ref.value for op in self._ops for ref in op.args if ref.kind == "constant"]
        # an output may be a constant too (a loaded graph whose output does not depend on its
        # inputs): its slot comes after the steps' constants, holding it as an array
        constants += [factories.tensor(ref.value).array for ref in self._outputs
                      if ref.kind == "constant"]
        first_constant = n_inputs + n_captured
        first_step = first_constant + len(constants)
        constant_slots = iter(range(first_constant, first_step))

        def slot_of(ref: Ref) -> int:
            if ref.kind == "input":
                return ref.index
            if ref.kind == "captured":
                return n_inputs + ref.index
            if ref.kind == "step":
                return first_step + ref.index
            return next(constant_slots)  # each constant argument has its own slot, in order

        self._plan = []  # per step: (op class, argument getter, raw flags or None, options,
        # output slot); getter(values) gives the step's arguments, in order
        for k, op in enumerate(self._ops):
            raws = tuple(ref.raw for ref in op.args) if any(r.raw for r in op.args) else None
            getter = _arguments_getter(tuple(slot_of(ref) for ref in op.args))
            self._plan.append((op.cls, getter, raws, op.options, first_step + k))
        self._template = [None] * first_constant + constants + [None] * len(self._ops)
        self._output_slots = tuple(slot_of(ref) for ref in self._outputs)
        self._fast_plans: dict[type, list] = {}  # array type -> steps with their reusable ctx
        self._moves_devices = any(op.cls is ToDevice for op in self._ops)

    def run(self, *inputs: Any) -> Tensor | tuple[Tensor, ...]:
        """Replay the recorded ops on new inputs (Tensors or arrays, as many as were traced).

        Follows the traced path whatever the inputs are: no Python code of the traced function
        runs. When an input or a captured weight requires grad (and grad mode is on), the replay
        records a graph, so ``backward()`` works.
        """
        if len(inputs) != len(self._inputs):
            raise TypeError(
                f"this StaticGraph was traced with {len(self._inputs)} input(s), got {len(inputs)}"
            )
        if (
            function.installed_hooks()
            or self._moves_devices
            or (grad_mode.is_grad_enabled() and self._wants_grad(inputs))
        ):
            # NOTE: an installed FunctionHook (an enclosing dg.trace, a memory timeline) must
            # see this replay's ops too, so they go through Function.apply; so must a graph that
            # moves values between devices (apply picks each op's array module).
            outputs = self._run_recorded(inputs)
        else:
            outputs = self._run_fast([_array_of(x) for x in inputs])
        return outputs[0] if self._single_output else outputs

    __call__ = run

    def _wants_grad(self, inputs: tuple) -> bool:
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                return True
        return any(isinstance(v, Tensor) and v._requires_grad for v in self._captured)

    def _fast_plan(self, array_type: type) -> list:
        """The steps with one reusable ctx each, for arrays of ``array_type``."""
        plan = self._fast_plans.get(array_type)
        if plan is None:
            xp = backend.xp_of(array_type)
            plan = []
            for cls, getter, _, options, out_slot in self._plan:
                ctx = cls()
                ctx.xp = xp
                ctx.parents = (None,) * len(getter(self._template))  # no gradient on this path
                ctx.needs_input_grad = (False,) * len(ctx.parents)
                ctx.saved_arrays = ()
                ctx.save_for_backward = _keep_nothing  # and nothing is kept for backward
                if cls.takes_tensors:  # a custom op sees Tensors (NOTE [custom ops])
                    call = partial(_custom_forward_on_arrays, cls, options)
                else:
                    call = partial(cls.forward, **options) if options else cls.forward
                plan.append((call, ctx, getter, out_slot))
            self._fast_plans[array_type] = plan
        return plan

    def _run_fast(self, arrays: list[Any]) -> tuple[Tensor, ...]:
        """Call each op's forward on raw arrays: no Tensors, no graph, no events."""
        array_type = type(arrays[0]) if arrays else np.ndarray
        plan = self._fast_plans.get(array_type) or self._fast_plan(array_type)
        values = self._template.copy()
        n = len(arrays)
        values[:n] = arrays
        values[n : n + len(self._captured)] = [
            value.array if isinstance(value, Tensor) else value for value in self._captured
        ]
        try:
            if self._budget is None or self._budget.has_passed(values):
                replay_steps(plan, values, array_type)
            else:
                replay_steps_within(self, plan, values, array_type)
                self._budget.passed_with(values)
        except (MemoryBudgetError, InconsistentGraphError):
            raise  # it names the step already
        except Exception as exc:
            failed = next(k for k, step in enumerate(plan) if values[step[3]] is None)
            self._explain_replay_failure(failed, values, exc)
            raise
        return tuple([wrap_output(values[i], None) for i in self._output_slots])

    def _explain_replay_failure(self, k: int, values: list, exc: Exception) -> None:
        n = len(self._inputs)
        for value in values[n : n + len(self._captured)]:
            if backend.device_of(value) != backend.device_of(values[0]):
                raise RuntimeError(
                    f"this StaticGraph's captured tensors are on {backend.device_of(value)} but "
                    f"its inputs are on {backend.device_of(values[0])}: move the inputs, or load "
                    "the graph with dg.load_static(path, device=...)"
                ) from exc
        op = self._ops[k]
        message = (
            f"replaying step {k} ({op.cls.__name__}, traced with output shape {op.shape}) "
            f"failed: {exc}"
        )
        # a built-in op's own slip (ZeroDivisionError, KeyError, ...) on inputs it was not
        # traced with becomes a RuntimeError, as Function.apply reports it on the other path
        built_in = op.cls.__module__.startswith("dyngraph.")
        kept = isinstance(exc, _KEPT_REPLAY_ERRORS) or not built_in
        error_type = type(exc) if kept else RuntimeError
        try:
            explained = error_type(message)
        except Exception:  # an exception type that wants other arguments: keep the original
            return
        raise explained from exc

    def _run_recorded(self, inputs: tuple) -> tuple[Tensor, ...]:
        """Replay through ``Function.apply``: a graph is recorded, backward() works."""
        values = self._template.copy()
        for i, x in enumerate(inputs):
            values[i] = x if isinstance(x, Tensor) else Tensor(_array_of(x))
        values[len(inputs) : len(inputs) + len(self._captured)] = self._captured
        if self._budget is not None:
            self._budget.start(values)
        for k, (cls, getter, raws, options, out_slot) in enumerate(self._plan):
            args = getter(values)
            if raws is not None:  # the op was given arrays (t.array), not Tensors
                args = [a.array if r and isinstance(a, Tensor) else a for a, r in zip(args, raws)]
            if self._budget is None:
                values[out_slot] = cls.apply(*args, **options)
            else:
                self._check_budget(k, args)
                values[out_slot] = self._check_output(k, cls.apply(*args, **options))
        outputs = []
        for i in self._output_slots:
            value = values[i]
            outputs.append(value if isinstance(value, Tensor) else Tensor(value))
        return tuple(outputs)

    def _check_budget(self, k: int, args: Sequence) -> None:
        """A loaded graph's step k may run on these arguments within its memory budget."""
        try:
            self._budget.before_step(k, args)
        except MemoryError as exc:
            op = self._ops[k]
            raise MemoryBudgetError(
                f"replaying step {k} ({op.cls.__name__}, traced with output shape {op.shape}) "
                f"was refused: {exc}"
            ) from None

    def _check_output(self, k: int, out: Any) -> Any:
        """A loaded graph's step k made ``out``: counted in the budget, its shape checked."""
        try:
            self._budget.after_step(k, out)
        except ValueError as exc:
            op = self._ops[k]
            raise InconsistentGraphError(
                f"replaying step {k} ({op.cls.__name__}) stopped: {exc}"
            ) from None
        return out

    # ------------------------------------------------------------------ export

    def save(self, path: str | os.PathLike) -> Path:
        """Write the graph as JSON at ``path`` (".json" added when it has no suffix) and the
        captured tensors next to it as ``.npz`` (np.savez: no pickle). Returns the JSON path.

        >>> graph.save("mlp.json")             # mlp.json + mlp.npz
        >>> dg.load_static("mlp.json")(x)      # in any process, without the model's code
        """
        return save_static(self, path)


_KEPT_REPLAY_ERRORS = (IndexError, TypeError, ValueError, NotImplementedError, OverflowError,
                       RuntimeError, MemoryError)


def _array_of(x: Any) -> Any:
    """An input's array: a Tensor's data, an array as it is, numbers and lists as dg.tensor
    makes them (Python floats become float32)."""
    if isinstance(x, Tensor):
        return x.array
    if backend.is_array(x):
        return x
    return factories.tensor(x).array


def _arguments_getter(slots: tuple[int, ...]) -> Callable[[list], Sequence]:
    """A function of the value list giving a step's arguments: ``itemgetter(3, 0)`` gives the
    tuple (values[3], values[0]); for one argument a slice keeps the result a sequence."""
    if len(slots) == 1:
        return itemgetter(slice(slots[0], slots[0] + 1))
    if not slots:
        return itemgetter(slice(0, 0))
    return itemgetter(*slots)


def replay_steps(plan: list, values: list, array_type: type) -> None:
    """The loop of a fast replay: each step's forward on its arguments, read from ``values``,
    and its output written into its own slot there. An error propagates as it is; the steps
    that ran before it have filled their slots (the others are still None)."""
    xp = plan[0][1].xp if plan else np
    for call, ctx, getter, out_slot in plan:
        out = call(ctx, *getter(values))
        if type(out) is not array_type:
            out = xp.asarray(out)  # numpy returns scalars for 0-d results
        values[out_slot] = out


def replay_steps_within(graph: StaticGraph, plan: list, values: list, array_type: type) -> None:
    """``replay_steps`` for a loaded graph: each step's sizes are checked against the graph's
    memory budget (a static_io.RunBudget) before the step runs, and its output's shape after."""
    xp = plan[0][1].xp if plan else np
    graph._budget.start(values)
    for k, (call, ctx, getter, out_slot) in enumerate(plan):
        args = getter(values)
        graph._check_budget(k, args)
        out = call(ctx, *args)
        if type(out) is not array_type:
            out = xp.asarray(out)
        values[out_slot] = graph._check_output(k, out)


def _keep_nothing(*arrays: Any) -> None:
    """save_for_backward of a fast replay's ctx: there will be no backward."""


def _custom_forward_on_arrays(cls: type, options: dict, ctx: Any, *arrays: Any) -> Any:
    """A fast replay's step for a custom op, whose forward takes Tensors: wrap, run, unwrap."""
    args = [Tensor(a) if backend.is_array(a) else a for a in arrays]
    return forward_on_tensors(cls, ctx, args, options)


# ---------------------------------------------------------------------------- tracing


def trace(fn: Callable[..., Any], *example_inputs: Tensor) -> StaticGraph:
    """Run ``fn(*example_inputs)`` once and record the ops it ran as a ``StaticGraph``.

    ``fn`` takes Tensors and returns a Tensor or a tuple of Tensors. Tensors it uses without
    receiving them (model weights) are *captured*: a replay reads their current value. Warns
    with ``dg.TracerWarning`` when ``fn`` reads tensor data into Python (``bool(t)``,
    ``t.item()``, ``if t > 0:``): control flow decided by data is not recorded.

    >>> W = dg.randn(4, 3, name="W")
    >>> graph = dg.trace(lambda x: (x @ W).relu(), dg.randn(2, 4))
    >>> graph(dg.randn(2, 4)).shape
    (2, 3)

    NOTE [two traces] ``torch.trace(x)`` is the sum of a matrix's diagonal, and learners' code
    calls it. A Tensor is never a function to trace, so ``dg.trace`` given one is that sum.
    """
    if isinstance(fn, Tensor):
        if example_inputs:
            raise TypeError("dg.trace(x) of a Tensor is the sum of its diagonal (torch.trace) "
                            "and takes nothing more; to trace a function: "
                            "dg.trace(fn, *example_inputs)")
        return fn.trace()
    for i, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"dg.trace needs Tensors as example inputs; input {i} is {type(x).__name__} "
                "(wrap it with dg.tensor(...))"
            )
    with TraceRecorder(example_inputs) as recorder:
        result = fn(*example_inputs)
    single = isinstance(result, Tensor)
    outputs = [result] if single else result
    if not isinstance(outputs, (tuple, list)) or not all(isinstance(t, Tensor) for t in outputs):
        raise TypeError(
            f"the traced function must return a Tensor or a tuple of Tensors, got "
            f"{type(result).__name__}"
        )
    output_refs = [recorder.ref_of(t) for t in outputs]
    ops, output_refs = _without_unused_steps(recorder.ops, output_refs)
    inputs = [(tuple(x.shape), x.dtype) for x in example_inputs]
    return StaticGraph(ops, inputs, recorder.captured, output_refs, single, recorder.data_reads)


_HOW = {
    "bool()": "bool(t): an `if`/`while` on a tensor, or a comparison used as a condition",
    "item()": "t.item() (or float(t) / int(t))",
    "tolist()": "t.tolist()",
}


class TraceRecorder(FunctionHook):
    """The FunctionHook installed while a function is traced: writes down every op the function
    runs, and warns when it reads tensor data into Python. (dg.checkpoint, seeing one installed,
    runs its segment inline, so that the trace records the segment's ops.)"""

    def __init__(self, inputs: Sequence[Tensor]):
        self.first_id = new_node_id()  # tensors with a larger id were made during the trace
        self.sources: dict[int, Ref] = {}  # tensor id -> where its value comes from
        self.versions: dict[int, int] = {}  # tensor id -> its version when first seen
        self.by_data: dict[int, Ref] = {}  # id(array) of a traced value -> its ref
        self.keep: list[Any] = []  # the arrays in by_data, kept alive so that ids stay unique
        for i, x in enumerate(inputs):
            if x.id not in self.sources:
                self._remember(x, Ref("input", i))
        self.ops: list[_Op] = []
        self.captured: list[Any] = []
        self.captured_index: dict[int, int] = {}  # id() of a captured Tensor or array -> index
        self.data_reads: list[tuple[events.SourceLine | None, str]] = []
        self.warned: set = set()

    def _remember(self, tensor: Tensor, ref: Ref) -> None:
        self.sources[tensor.id] = ref
        self.versions[tensor.id] = tensor.version
        self.by_data.setdefault(id(tensor.array), ref)
        self.keep.append(tensor.array)

    def forward_postprocess(self, cls: type, args: tuple, options: dict, output: Tensor) -> None:
        refs = tuple(self.ref_of(arg) for arg in args)
        self.ops.append(_Op(cls, refs, dict(options), tuple(output.shape), output.dtype))
        self._remember(output, Ref("step", len(self.ops) - 1))

    def ref_of(self, arg: Any) -> Ref:
        """Where a positional input of an op comes from."""
        if isinstance(arg, Tensor):
            ref = self.sources.get(arg.id)
            if ref is not None:
                if arg.version != self.versions[arg.id]:
                    self.warn(
                        "a tensor was changed in place by an operation the trace could not "
                        "record (an in-place op under no_grad, or on a tensor outside the "
                        "graph); the replay will use the value it had before"
                    )
                    self.versions[arg.id] = arg.version
                return ref
            if arg.id > self.first_id:
                self.warn(
                    "a tensor made inside the traced function by something other than an op "
                    "(dg.tensor, a comparison, .detach(), ...) is recorded as a constant: the "
                    "replay uses its current value whatever the inputs"
                )
            return self._capture(arg)
        if backend.is_array(arg):
            ref = self.by_data.get(id(arg))
            if ref is not None:  # the array of a traced value, given to the op as it is
                return ref._replace(raw=True)
            if arg.dtype == np.bool_:
                self.warn(
                    "a boolean mask computed outside dyngraph's ops (a comparison such as "
                    "x > 0) is recorded as a constant: the replay uses this mask whatever the "
                    "inputs"
                )
            return self._capture(arg)
        return Ref("constant", value=arg)

    def _capture(self, value: Any) -> Ref:
        index = self.captured_index.get(id(value))
        if index is None:
            index = self.captured_index[id(value)] = len(self.captured)
            self.captured.append(value)
        return Ref("captured", index)

    def data_read(self, tensor: Tensor, how: str) -> None:
        """The traced function read tensor data into Python."""
        where = events.where_from_stack()
        self.data_reads.append((where, how))
        self.warn(
            f"the traced function read a tensor's value into Python with {_HOW.get(how, how)}. "
            "The trace might not generalize to other inputs: control flow decided by data is "
            "not recorded, and the replay follows the path this run took whatever the input",
            where,
        )

    def warn(self, message: str, where: events.SourceLine | None = None) -> None:
        if where is None:
            where = events.where_from_stack()
        key = (message, where)
        if key in self.warned:
            return
        self.warned.add(key)
        if where is None:
            warnings.warn(message, TracerWarning, stacklevel=3)
            return
        code = linecache.getline(where.file, where.line).strip()
        shown = f"line {where.line}: {code}" if code else f"line {where.line}"
        warnings.warn_explicit(
            f"{message} (at {where.file}, {shown})",
            TracerWarning,
            where.file,
            where.line,
        )


def _without_unused_steps(ops: list[_Op], outputs: list[Ref]) -> tuple[list[_Op], list[Ref]]:
    """Drop the steps no output depends on (such as a sum read only by ``.item()``)."""
    used = [False] * len(ops)
    for ref in outputs:
        if ref.kind == "step":
            used[ref.index] = True
    for k in range(len(ops) - 1, -1, -1):  # newest first: consumers come after producers
        if used[k]:
            for ref in ops[k].args:
                if ref.kind == "step":
                    used[ref.index] = True
    new_index = {}
    kept = []
    for k, op in enumerate(ops):
        if used[k]:
            new_index[k] = len(kept)
            kept.append(op)

    def renumber(ref: Ref) -> Ref:
        return ref._replace(index=new_index[ref.index]) if ref.kind == "step" else ref

    kept = [op._replace(args=tuple(renumber(r) for r in op.args)) for op in kept]
    return kept, [renumber(r) for r in outputs]


def load_static(path: str | os.PathLike, device: str = "cpu") -> StaticGraph:
    """Read a graph written by ``StaticGraph.save``: no code of the model is needed, and none is
    imported or run (ops are looked up by name among dyngraph's own).

    Everything is checked before it is trusted: file sizes before reading, JSON nesting before
    parsing, every field, op, option and reference, shapes against limits, and the weights file
    must be a plain ``.npz`` (no pickle, no object arrays), each member's header matching its
    declaration. Errors are ValueErrors naming the JSON path of the bad entry. A file from a
    newer dyngraph is named as such. The graph keeps a memory budget (``MAX_RUN_BYTES``): each
    step's sizes are checked before it runs (a ``MemoryError`` naming the step when over).

    >>> graph = dg.load_static("mlp.json")                  # or device="cuda"
    >>> graph(dg.randn(8, 4))
    """
    parts = read_static(path, device)
    return StaticGraph(parts.ops, parts.inputs, parts.captured, parts.outputs,
                       parts.single_output, budget=parts.budget)
