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
  (Also while an observer of every op is installed: an enclosing ``dg.trace``, say.)

In Jupyter a StaticGraph displays as a diagram (``graph.draw()``); ``graph.steps`` lists the
ops for any other renderer.

``graph.save(path)`` writes the graph as JSON (+ an ``.npz`` of the captured tensors) and
``dg.load_static(path)`` reads it back, validated, in a process that never saw the model's code.
"""

from __future__ import annotations

import inspect
import json
import linecache
import math
import os
import sys
import warnings
import zipfile
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import backend, events, factories, function, grad_mode, safe_json
from .ops.shape import ToDevice
from .tensor import Tensor, new_node_id, wrap_output

# NOTE: the module itself, where data_read_hook lives (``dyngraph.tensor`` is also the name of
# the factory function dg.tensor, which shadows the submodule as an attribute of the package).
tensor_module = sys.modules[Tensor.__module__]


class TracerWarning(UserWarning):
    """The traced function did something a trace cannot record (it read tensor data into
    Python, or made a tensor outside dyngraph's ops): the trace might not generalize."""


# ---------------------------------------------------------------------------- the recorded graph


class Ref(NamedTuple):
    """Where one positional input of a step comes from.

    kind   "input" (index: which traced input), "step" (index: which earlier step's output),
           "captured" (index: which captured tensor or array), or "constant" (value: a number)
    raw    True when the op was given the array itself (``t.array``), not the Tensor
    """

    kind: str
    index: int = 0
    value: Any = None
    raw: bool = False

    def label(self) -> str:
        if self.kind == "constant":
            return f"constant:{self.value!r}"
        return f"{self.kind}:{self.index}"


class Step(NamedTuple):
    """One op of a StaticGraph, as a diagram renderer reads it."""

    op: str  # the op's class name ("MatMul", "Tanh", ...)
    inputs: tuple[str, ...]  # "input:0", "step:3", "captured:1", "constant:2.0"
    shape: tuple[int, ...]  # the output shape in the traced run


class _Op(NamedTuple):
    """One recorded op: what ``StaticGraph`` replays."""

    cls: type
    args: tuple[Ref, ...]
    options: dict
    shape: tuple[int, ...]
    dtype: np.dtype


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
        data_reads: list[tuple[events.Where | None, str]] | None = None,
    ) -> None:
        self._ops = ops
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
        from .record import draw

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
        value = np.asarray(ref.value)
        return value.shape, value.dtype

    # ------------------------------------------------------------------ replay

    # NOTE [slots] Replay keeps every value in one flat list, laid out once here: the inputs,
    # then the captured tensors, then the constants, then one slot per step's output. Each step
    # knows the slot numbers of its arguments, so a replay is a loop over steps that reads and
    # writes list entries: no dictionary look-ups, no decisions.
    def _compile(self) -> None:
        n_inputs, n_captured = len(self._inputs), len(self._captured)
        constants = [ref.value for op in self._ops for ref in op.args if ref.kind == "constant"]
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
        self._output_slots = tuple(slot_of(ref) for ref in self._outputs)  # never constants
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
            function.tracer is not None
            or self._moves_devices
            or (grad_mode.enabled and self._wants_grad(inputs))
        ):
            # NOTE: an observer of every op (an enclosing dg.trace, a memory timeline) must see
            # this replay's ops too, so they go through Function.apply; so must a graph that
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
        xp = plan[0][1].xp if plan else np
        step = None
        try:
            for step in plan:
                call, ctx, getter, out_slot = step
                out = call(ctx, *getter(values))
                if type(out) is not array_type:
                    out = xp.asarray(out)  # numpy returns scalars for 0-d results
                values[out_slot] = out
        except Exception as exc:
            self._explain_replay_failure(plan.index(step), values, exc)
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
        try:
            explained = type(exc)(message)
        except Exception:  # an exception type that wants other arguments: keep the original
            return
        raise explained from exc

    def _run_recorded(self, inputs: tuple) -> tuple[Tensor, ...]:
        """Replay through ``Function.apply``: a graph is recorded, backward() works."""
        values = self._template.copy()
        for i, x in enumerate(inputs):
            values[i] = x if isinstance(x, Tensor) else Tensor(_array_of(x))
        values[len(inputs) : len(inputs) + len(self._captured)] = self._captured
        for cls, getter, raws, options, out_slot in self._plan:
            args = getter(values)
            if raws is not None:  # the op was given arrays (t.array), not Tensors
                args = [a.array if r and isinstance(a, Tensor) else a for a, r in zip(args, raws)]
            values[out_slot] = cls.apply(*args, **options)
        outputs = []
        for i in self._output_slots:
            value = values[i]
            outputs.append(value if isinstance(value, Tensor) else Tensor(value))
        return tuple(outputs)

    # ------------------------------------------------------------------ export

    def save(self, path: str | os.PathLike) -> Path:
        """Write the graph as JSON at ``path`` (".json" added when it has no suffix) and the
        captured tensors next to it as ``.npz`` (np.savez: no pickle). Returns the JSON path.

        >>> graph.save("mlp.json")             # mlp.json + mlp.npz
        >>> dg.load_static("mlp.json")(x)      # in any process, without the model's code
        """
        json_path, npz_path = _paths(path)
        document = _to_document(self)
        arrays = {
            f"captured_{j}": backend.to_numpy(value.array if isinstance(value, Tensor) else value)
            for j, value in enumerate(self._captured)
        }
        json_path.write_text(json.dumps(document, indent=1), encoding="utf-8")
        with open(npz_path, "wb") as file:
            np.savez(file, **arrays)
        return json_path


def _array_of(x: Any) -> Any:
    """An input's array: a Tensor's data, an array as it is, numbers and lists as dg.tensor
    makes them (Python floats become float32)."""
    if isinstance(x, Tensor):
        return x.array
    if isinstance(x, np.ndarray) or hasattr(x, "__array_namespace__"):
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


def _keep_nothing(*arrays: Any) -> None:
    """save_for_backward of a fast replay's ctx: there will be no backward."""


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
    """
    for i, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"dg.trace needs Tensors as example inputs; input {i} is {type(x).__name__} "
                "(wrap it with dg.tensor(...))"
            )
    recorder = _Recorder(example_inputs, function.tracer, tensor_module.data_read_hook)
    function.tracer = recorder
    tensor_module.data_read_hook = recorder.data_read
    try:
        result = fn(*example_inputs)
    finally:
        function.tracer = recorder.outer
        tensor_module.data_read_hook = recorder.outer_hook
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


class _Recorder:
    """Installed as ``function.tracer`` while a function is traced: told about every op."""

    records_a_trace = True  # dg.checkpoint runs its function inline while this is installed

    def __init__(self, inputs: Sequence[Tensor], outer: Any = None, outer_hook: Any = None):
        # Observers installed before us (an enclosing trace, a memory timeline) are still told.
        self.outer = outer
        self.outer_hook = outer_hook
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
        self.data_reads: list[tuple[events.Where | None, str]] = []
        self.warned: set = set()

    def _remember(self, tensor: Tensor, ref: Ref) -> None:
        self.sources[tensor.id] = ref
        self.versions[tensor.id] = tensor.version
        self.by_data.setdefault(id(tensor.array), ref)
        self.keep.append(tensor.array)

    def record(self, cls: type, args: tuple, options: dict, tensor: Tensor) -> None:
        if self.outer is not None:
            self.outer.record(cls, args, options, tensor)
        refs = tuple(self.ref_of(arg) for arg in args)
        self.ops.append(_Op(cls, refs, dict(options), tuple(tensor.shape), tensor.dtype))
        self._remember(tensor, Ref("step", len(self.ops) - 1))

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
        if isinstance(arg, np.ndarray) or hasattr(arg, "__array_namespace__"):
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
        """``tensor.data_read_hook``: the traced function read tensor data into Python."""
        if self.outer_hook is not None:
            self.outer_hook(tensor, how)
        where = events.where_from_stack()
        self.data_reads.append((where, how))
        self.warn(
            f"the traced function read a tensor's value into Python with {_HOW.get(how, how)}. "
            "The trace might not generalize to other inputs: control flow decided by data is "
            "not recorded, and the replay follows the path this run took whatever the input",
            where,
        )

    def warn(self, message: str, where: events.Where | None = None) -> None:
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


# ---------------------------------------------------------------------------- export: the format

FORMAT = "dyngraph-static-graph"
SCHEMA_VERSION = 1

# Limits checked on load (a graph file is data from somewhere else: check before trusting it).
MAX_JSON_BYTES = 16 * 1024 * 1024  # the JSON file, checked before it is read
MAX_WEIGHT_BYTES = 2 * 1024**3  # the .npz file, and the sum of its members once uncompressed
MAX_DEPTH = 32  # JSON nesting, checked before parsing
MAX_STEPS = 100_000
MAX_INPUTS = 256
MAX_CAPTURED = 10_000
MAX_NDIM = 32
MAX_ELEMENTS = 2**31  # per shape
MAX_INDEX_ELEMENTS = 1_000_000  # integer index arrays written inside the JSON
MAX_STRING = 64

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64")

_CAPTURED_FIELDS = ("kind", "name", "shape", "dtype")
_TOP_FIELDS = ("format", "schema_version", "inputs", "captured", "steps", "outputs",
               "single_output")


def _op_registry() -> dict[str, type]:
    """The only op classes a saved graph may name: dyngraph's own ops, by class name."""
    from . import ops

    return {name: getattr(ops, name) for name in ops.__all__}


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    json_path = Path(path)
    if not json_path.suffix:
        json_path = json_path.with_suffix(".json")
    return json_path, json_path.with_suffix(".npz")


def _to_document(graph: StaticGraph) -> dict:
    registry = _op_registry()
    steps = []
    for k, op in enumerate(graph._ops):
        if registry.get(op.cls.__name__) is not op.cls:
            raise ValueError(
                f"step {k} is {op.cls.__module__}.{op.cls.__name__}, which is not one of "
                "dyngraph's built-in ops: a saved graph can only name those (a custom "
                "dg.autograd.Function cannot be loaded without its code)"
            )
        steps.append({
            "op": op.cls.__name__,
            "args": [_encode_ref(ref, f"$.steps[{k}].args[{i}]") for i, ref in enumerate(op.args)],
            "options": {
                name: _encode(value, f"$.steps[{k}].options.{name}")
                for name, value in op.options.items()
            },
            "shape": list(op.shape),
            "dtype": _dtype_name(op.dtype, f"$.steps[{k}].dtype"),
        })
    captured = []
    for j, value in enumerate(graph._captured):
        is_tensor = isinstance(value, Tensor)
        captured.append({
            "kind": "tensor" if is_tensor else "array",
            "name": value.name if is_tensor else None,
            "shape": list(value.shape),
            "dtype": _dtype_name(value.dtype, f"$.captured[{j}].dtype"),
        })
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "inputs": [
            {"shape": list(shape), "dtype": _dtype_name(dtype, f"$.inputs[{i}].dtype")}
            for i, (shape, dtype) in enumerate(graph._inputs)
        ],
        "captured": captured,
        "steps": steps,
        "outputs": [_encode_ref(ref, f"$.outputs[{i}]") for i, ref in enumerate(graph._outputs)],
        "single_output": graph._single_output,
    }


def _dtype_name(dtype: Any, path: str) -> str:
    name = np.dtype(dtype).name
    if name not in DTYPES:
        raise ValueError(f"{path}: dtype {name} cannot be saved (one of {', '.join(DTYPES)})")
    return name


def _encode_ref(ref: Ref, path: str) -> dict:
    if ref.kind == "constant":
        return {"constant": _encode(ref.value, path)}
    encoded: dict[str, Any] = {ref.kind: ref.index}
    if ref.raw:
        encoded["raw"] = True
    return encoded


# NOTE [option encoding] JSON has numbers, strings, lists, true/false/null and objects. Every
# other value an op may receive is written as an object with exactly one tag, so that reading it
# back is a lookup, never an evaluation: {"tuple": [...]}, {"slice": [start, stop, step]},
# {"ellipsis": true}, {"array": [...], "dtype": "int64"} (integer or boolean index arrays),
# {"dtype": "float32"}, {"scalar": 2.0, "dtype": "float64"} (a numpy scalar: its dtype matters
# to numpy's type promotion), {"float": "inf"} (JSON has no inf or nan).


def _encode(value: Any, path: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, f"{path}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, slice):
        parts = [value.start, value.stop, value.step]
        return {"slice": [_encode(v, f"{path}.slice") for v in parts]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return {"dtype": _dtype_name(value, path)}
    if isinstance(value, np.generic):
        item = value.item()
        if isinstance(item, float) and not math.isfinite(item):
            item = repr(item)
        return {"scalar": item, "dtype": _dtype_name(value.dtype, path)}
    if isinstance(value, np.ndarray) or hasattr(value, "__array_namespace__"):
        if value.dtype.kind not in "iub":
            raise ValueError(f"{path}: only integer or boolean index arrays can be saved")
        return {"array": backend.to_numpy(value).tolist(), "dtype": _dtype_name(value.dtype, path)}
    raise ValueError(f"{path}: a {type(value).__name__} cannot be saved in a static graph")


# ---------------------------------------------------------------------------- export: loading


def load_static(path: str | os.PathLike, device: str = "cpu") -> StaticGraph:
    """Read a graph written by ``StaticGraph.save``: no code of the model is needed, and none is
    imported or run (ops are looked up by name among dyngraph's own).

    Everything is checked before it is trusted: file sizes before reading, JSON nesting before
    parsing, every field, op, option and reference, shapes against limits, and the weights file
    must be a plain ``.npz`` (no pickle, no object arrays). Errors are ValueErrors naming the
    JSON path of the bad entry.

    >>> graph = dg.load_static("mlp.json")                  # or device="cuda"
    >>> graph(dg.randn(8, 4))
    """
    device = backend.normalize_device(device)
    xp = backend.module_for(device)
    json_path, npz_path = _paths(path)
    document = safe_json.read(json_path, "dyngraph static graph", MAX_JSON_BYTES, MAX_DEPTH)
    spec = _Validated(document, xp)
    arrays = _read_weights(npz_path, spec.captured_specs)
    captured: list[Any] = []
    for (kind, name, _, _), array in zip(spec.captured_specs, arrays):
        array = xp.asarray(backend.to_device(array, device))
        captured.append(Tensor(array, name=name) if kind == "tensor" else array)
    return StaticGraph(spec.ops, spec.inputs, captured, spec.outputs, spec.single_output)


class _Validated:
    """A parsed JSON document, checked field by field and turned into the graph's parts."""

    def __init__(self, document: Any, xp: Any) -> None:
        self.xp = xp
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError(
                f"not a dyngraph static graph: the JSON has no \"format\": \"{FORMAT}\" field"
            )
        self._fields(document, "$", _TOP_FIELDS, _TOP_FIELDS)
        if document["schema_version"] != SCHEMA_VERSION:
            raise ValueError(
                f"$.schema_version: {document['schema_version']!r} is not supported (this "
                f"dyngraph reads version {SCHEMA_VERSION})"
            )
        self.inputs = []
        for i, entry in enumerate(self._list(document, "inputs", MAX_INPUTS)):
            where = f"$.inputs[{i}]"
            self._fields(entry, where, ("shape", "dtype"), ("shape", "dtype"))
            self.inputs.append((self._shape(entry, where), self._dtype(entry, where)))
        self.captured_specs = []
        for j, entry in enumerate(self._list(document, "captured", MAX_CAPTURED)):
            where = f"$.captured[{j}]"
            self._fields(entry, where, _CAPTURED_FIELDS, ("kind", "shape", "dtype"))
            kind, name = entry["kind"], entry.get("name")
            if kind not in ("tensor", "array"):
                raise ValueError(f"{where}.kind: must be \"tensor\" or \"array\", got {kind!r}")
            if name is not None and not self._is_short_string(name):
                raise ValueError(f"{where}.name: must be null or a string of at most {MAX_STRING}")
            self.captured_specs.append(
                (kind, name, self._shape(entry, where), self._dtype(entry, where))
            )
        registry = _op_registry()
        self.ops: list[_Op] = []
        for k, entry in enumerate(self._list(document, "steps", MAX_STEPS)):
            self.ops.append(self._step(entry, k, registry))
        outputs = self._list(document, "outputs", MAX_INPUTS)
        if not outputs:
            raise ValueError("$.outputs: a static graph needs at least one output")
        self.outputs = [
            self._ref(ref, f"$.outputs[{i}]", len(self.ops)) for i, ref in enumerate(outputs)
        ]
        self.single_output = document["single_output"]
        if not isinstance(self.single_output, bool) or (self.single_output and len(outputs) != 1):
            raise ValueError("$.single_output: must be true (with one output) or false")

    # --------------------------------------------------------------- pieces

    @staticmethod
    def _fields(entry: Any, where: str, allowed: tuple, required: tuple) -> None:
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected an object, got {type(entry).__name__}")
        for name in entry:
            if name not in allowed:
                raise ValueError(f"{where}.{name}: unknown field")
        for name in required:
            if name not in entry:
                raise ValueError(f"{where}.{name}: missing")

    @staticmethod
    def _list(document: dict, name: str, limit: int) -> list:
        value = document[name]
        if not isinstance(value, list):
            raise ValueError(f"$.{name}: expected a list, got {type(value).__name__}")
        if len(value) > limit:
            raise ValueError(f"$.{name}: {len(value)} entries, over the limit of {limit}")
        return value

    @staticmethod
    def _is_short_string(value: Any) -> bool:
        return isinstance(value, str) and len(value) <= MAX_STRING

    @staticmethod
    def _is_int(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def _shape(self, entry: dict, where: str) -> tuple[int, ...]:
        shape = entry.get("shape")
        if not isinstance(shape, list) or len(shape) > MAX_NDIM:
            raise ValueError(f"{where}.shape: expected a list of at most {MAX_NDIM} sizes")
        total = 1
        for n in shape:
            if not self._is_int(n) or n < 0 or n > MAX_ELEMENTS:
                raise ValueError(f"{where}.shape: {n!r} is not a valid size")
            total *= n
        if total > MAX_ELEMENTS:
            raise ValueError(
                f"{where}.shape: {tuple(shape)} has {total} elements, over the limit of "
                f"{MAX_ELEMENTS}"
            )
        return tuple(shape)

    def _dtype(self, entry: dict, where: str) -> np.dtype:
        name = entry.get("dtype")
        if name not in DTYPES:
            raise ValueError(f"{where}.dtype: {name!r} is not one of {', '.join(DTYPES)}")
        return np.dtype(name)

    def _step(self, entry: Any, k: int, registry: dict[str, type]) -> _Op:
        where = f"$.steps[{k}]"
        self._fields(entry, where, ("op", "args", "options", "shape", "dtype"),
                     ("op", "args", "options", "shape", "dtype"))
        name = entry["op"]
        cls = registry.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"{where}.op: {name!r} is not one of dyngraph's ops")
        args = entry["args"]
        if not isinstance(args, list) or len(args) > MAX_INPUTS:
            raise ValueError(f"{where}.args: expected a list of at most {MAX_INPUTS} inputs")
        refs = tuple(self._ref(ref, f"{where}.args[{i}]", k) for i, ref in enumerate(args))
        options = entry["options"]
        if not isinstance(options, dict):
            raise ValueError(f"{where}.options: expected an object")
        accepted = _keyword_options(cls)
        decoded = {}
        for option, value in options.items():
            if option not in accepted:
                raise ValueError(f"{where}.options.{option}: {name} takes no such option")
            decoded[option] = self._decode(value, f"{where}.options.{option}")
        return _Op(cls, refs, decoded, self._shape(entry, where), self._dtype(entry, where))

    def _ref(self, ref: Any, where: str, n_steps: int) -> Ref:
        if not isinstance(ref, dict) or not ref:
            raise ValueError(f"{where}: expected a reference such as {{\"step\": 0}}")
        raw = ref.get("raw", False)
        if not isinstance(raw, bool):
            raise ValueError(f"{where}.raw: must be true or false")
        kinds = [key for key in ref if key != "raw"]
        if len(kinds) != 1 or kinds[0] not in ("input", "step", "captured", "constant"):
            unknown = next((key for key in kinds if key not in ("input", "step", "captured",
                                                                "constant")), None)
            if unknown is not None:
                raise ValueError(f"{where}.{unknown}: unknown field")
            raise ValueError(f"{where}: a reference names exactly one of input, step, captured, "
                             "constant")
        kind = kinds[0]
        if kind == "constant":
            return Ref("constant", value=self._decode(ref["constant"], f"{where}.constant"))
        index = ref[kind]
        limit = {"input": len(self.inputs), "captured": len(self.captured_specs),
                 "step": n_steps}[kind]
        if not self._is_int(index) or not 0 <= index < limit:
            what = "an earlier step" if kind == "step" else f"one of the {limit} {kind} entries"
            raise ValueError(f"{where}.{kind}: {index!r} does not refer to {what}")
        return Ref(kind, index, raw=raw)

    def _decode(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            if len(value) > MAX_STRING:
                raise ValueError(f"{where}: string longer than {MAX_STRING} characters")
            return value
        if isinstance(value, list):
            return [self._decode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if not isinstance(value, dict):
            raise ValueError(f"{where}: cannot read a {type(value).__name__}")
        tags = tuple(sorted(value))
        if tags == ("tuple",) and isinstance(value["tuple"], list):
            items = value["tuple"]
            return tuple(self._decode(v, f"{where}.tuple[{i}]") for i, v in enumerate(items))
        if tags == ("slice",) and isinstance(value["slice"], list) and len(value["slice"]) == 3:
            parts = value["slice"]
            if not all(p is None or self._is_int(p) for p in parts):
                raise ValueError(f"{where}.slice: start, stop and step must be integers or null")
            return slice(*parts)
        if tags == ("ellipsis",) and value["ellipsis"] is True:
            return Ellipsis
        if tags == ("dtype",):
            return self._dtype(value, where)
        if tags == ("float",) and value["float"] in ("inf", "-inf", "nan"):
            return float(value["float"])
        if tags == ("dtype", "scalar"):
            dtype = self._dtype(value, where)
            scalar = value["scalar"]
            if isinstance(scalar, str) and scalar in ("inf", "-inf", "nan"):
                scalar = float(scalar)
            if not isinstance(scalar, (bool, int, float)):
                raise ValueError(f"{where}.scalar: expected a number")
            return dtype.type(scalar)
        if tags == ("array", "dtype"):
            dtype = self._dtype(value, where)
            if dtype.kind not in "iub":
                raise ValueError(f"{where}.dtype: index arrays are integer or boolean")
            return self._index_array(value["array"], dtype, where)
        field = next((tag for tag in tags if tag not in _TAGS), tags[0] if tags else "")
        raise ValueError(f"{where}.{field}: not a value a static graph can hold")

    def _index_array(self, nested: Any, dtype: np.dtype, where: str) -> Any:
        count = 0
        stack = [(nested, 0)]
        while stack:  # check the nested lists hold only numbers, without recursion
            item, depth = stack.pop()
            if isinstance(item, list):
                if depth > MAX_NDIM:
                    raise ValueError(f"{where}.array: nested deeper than {MAX_NDIM}")
                stack.extend((v, depth + 1) for v in item)
            elif isinstance(item, (bool, int)):
                count += 1
                if count > MAX_INDEX_ELEMENTS:
                    raise ValueError(
                        f"{where}.array: more than {MAX_INDEX_ELEMENTS} elements"
                    )
            else:
                raise ValueError(f"{where}.array: index arrays hold integers, got {item!r}")
        try:
            array = np.array(nested, dtype=dtype)
        except (ValueError, OverflowError) as exc:
            raise ValueError(f"{where}.array: {exc}") from None
        return self.xp.asarray(array)


_TAGS = ("tuple", "slice", "ellipsis", "dtype", "float", "scalar", "array")


def _keyword_options(cls: type) -> set[str]:
    """The names an op's forward accepts as keyword options (everything after ``ctx``)."""
    parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in parameters if p.kind in keyword}


def _read_weights(path: Path, specs: list[tuple]) -> list[np.ndarray]:
    """The captured arrays from a plain .npz, checked against the JSON's declarations."""
    size = os.path.getsize(path)
    if size > MAX_WEIGHT_BYTES:
        raise ValueError(f"{path} is {size} bytes, over the {MAX_WEIGHT_BYTES}-byte limit")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not a dyngraph static graph: the weights must be a .npz file")
    expected = [f"captured_{j}" for j in range(len(specs))]
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        names = sorted(info.filename for info in members)
        unpacked = sum(info.file_size for info in members)
    if names != sorted(f"{name}.npy" for name in expected):
        raise ValueError(
            f"{path} is not a dyngraph static graph: it holds {names}, the graph expects "
            f"{sorted(f'{name}.npy' for name in expected)}"
        )
    if unpacked > MAX_WEIGHT_BYTES:
        raise ValueError(f"{path} unpacks to {unpacked} bytes, over the {MAX_WEIGHT_BYTES} limit")
    arrays = []
    try:
        with np.load(path, allow_pickle=False) as npz:
            for j, (name, (_, _, shape, dtype)) in enumerate(zip(expected, specs)):
                array = npz[name]
                if array.shape != shape or array.dtype != dtype:
                    raise ValueError(
                        f"$.captured[{j}]: the graph declares shape {shape} {dtype} but the "
                        f"weights file holds {array.shape} {array.dtype}"
                    )
                arrays.append(array)
    except ValueError as exc:
        if str(exc).startswith("$."):
            raise
        raise ValueError(f"{path} is not a dyngraph static graph: {exc}") from None
    return arrays
