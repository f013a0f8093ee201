"""Saving and loading static graphs: JSON + an ``.npz`` of the captured tensors, validated
strictly, never pickle. (Tracing and replay are in trace.py, above this module: a graph's
steps are this module's records, ``Ref`` and ``_Op``; ``dg.load_static`` makes a StaticGraph
of the parts ``read_static`` returns. This is the file format, as recording_format.py and
recording_io.py are for a ``Recording``.)

``StaticGraph.save(path)`` writes the recorded ops as JSON and the captured tensors next to it as
``.npz``; ``dg.load_static(path)`` reads them back in a process that never saw the model's code.
A graph file is untrusted input, so the loader checks everything before trusting it: file sizes
before reading, JSON nesting before parsing, then every field, op, option (of the kind its op
states: NOTE [option types] in meta.py) and reference, each step's shape, dtype, memory and work
as its op states them (``Op.meta``: NOTE [sizes before running]), and the weights' .npy headers
before any array is allocated. Ops are looked up by name among dyngraph's own, never imported or
evaluated; what each op makes is the op's to say, and this module keeps no table of ops. What
``save`` writes, the same version's ``load_static`` reads (NOTE [symmetric limits]).
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import stat
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import backend, safe_json
from .meta import MAX_ELEMENTS, MAX_NDIM, Meta, count, dtype_of, is_int, is_number
from .tensor import Tensor

# ---------------------------------------------------------------------------- the records

# A static graph's steps as trace.py records them and this module writes and reads them: below
# trace.py, which imports them, so that the format and the tracer are no circle of imports.


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


class _Op(NamedTuple):
    """One recorded op: what ``StaticGraph`` replays."""

    cls: type
    args: tuple[Ref, ...]
    options: dict
    shape: tuple[int, ...]
    dtype: np.dtype


# ---------------------------------------------------------------------------- saving


def save_static(graph: Any, path: str | os.PathLike) -> Path:
    """``StaticGraph.save``: the graph as JSON at ``path`` (".json" added when it has no suffix)
    and its captured tensors as ``.npz`` beside it. Returns the JSON path."""
    json_path, npz_path = _paths(path)
    text = _dumps(_to_document(graph))
    _check_loadable(text)
    arrays = {
        f"captured_{j}": backend.to_numpy(value.array if isinstance(value, Tensor) else value)
        for j, value in enumerate(graph._captured)
    }
    json_path.write_text(text, encoding="utf-8")
    with open(npz_path, "wb") as file:
        np.savez(file, **arrays)
    return json_path


def _dumps(document: dict) -> str:
    """The document as JSON text, one input, captured entry, step or output a line: readable,
    and about a third of the size of an indented dump."""
    lines = []
    for key, value in document.items():
        if isinstance(value, list) and value:
            entries = ",\n  ".join(json.dumps(entry, ensure_ascii=False) for entry in value)
            lines.append(f" {json.dumps(key)}: [\n  {entries}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _check_loadable(text: str) -> None:
    """Refuse to write what load_static would refuse (NOTE [symmetric limits]): the same size,
    nesting and field checks, on the text about to be written."""
    try:
        size = len(text.encode("utf-8"))
        if size > MAX_JSON_BYTES:
            raise ValueError(f"the JSON would be {size} bytes, over the {MAX_JSON_BYTES}-byte "
                             "limit of load_static")
        _Validated(safe_json.parse(text, "dyngraph static graph", MAX_DEPTH), np)
    except ValueError as exc:
        raise ValueError(f"this graph cannot be saved, as load_static could not read it back: "
                         f"{exc}") from None


# ---------------------------------------------------------------------------- export: the format

FORMAT = "dyngraph-static-graph"
SCHEMA_VERSION = 1

# Limits checked on load (a graph file is data from somewhere else: check before trusting it).
# NOTE [symmetric limits] What save writes, load of the same version reads: the byte limit of
# the JSON file follows from the step limit (MAX_STEP_BYTES per step, a generous allowance: a
# step of a typical trace takes 60 to 200 bytes, written one step a line, and one with an index
# array more), plus room for the inputs, captured entries and outputs. save() checks the same
# limits before writing, so a graph it cannot hand back is refused there, with the reason.
MAX_STEPS = 100_000
MAX_STEP_BYTES = 512
MAX_JSON_BYTES = MAX_STEPS * MAX_STEP_BYTES + 16 * 1024 * 1024  # ~65 MB, checked before reading
MAX_WEIGHT_BYTES = 2 * 1024**3  # the .npz file, and the sum of its members once uncompressed
MAX_DEPTH = 32  # JSON nesting, checked before parsing
MAX_INPUTS = 256
MAX_CAPTURED = 10_000
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


def _to_document(graph: Any) -> dict:
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
    if backend.is_array(value):
        if value.dtype.kind not in "iub":
            raise ValueError(f"{path}: only integer or boolean index arrays can be saved")
        return {"array": backend.to_numpy(value).tolist(), "dtype": _dtype_name(value.dtype, path)}
    raise ValueError(f"{path}: a {type(value).__name__} cannot be saved in a static graph")


# ---------------------------------------------------------------------------- options

# Each option of a step is checked against the kind its op states for it (``Op.option_types``,
# NOTE [option types] in meta.py), at load, before any op sees it. "key" and "steps" (indexing)
# take every form an index may have: their decoding (the tagged values of NOTE [option
# encoding]) is their check, and what they select is bounded by the indexing ops' own meta.


def check_option(cls: type, name: str, value: Any, where: str) -> None:
    """Refuse an option value of another kind than its op states for it."""
    kind = cls.option_types.get(name)
    if kind is not None and not kind.check(value):
        raise ValueError(f"{where}: expected {kind.says}, got {value!r}"[:300])


# ---------------------------------------------------------------------------- sizes and memory

# NOTE [sizes before running] A graph file declares every step's output shape and dtype, but an
# op's real output follows from its inputs and options: a 1 KB file whose ``Repeat`` sizes or
# ``Expand`` shape disagree with its declarations could ask for terabytes at run time. So the
# loader asks each op what its step makes (``Op.meta``, NOTE [op meta] in meta.py: elements it
# may allocate, its exact shape where the op knows it, its dtype, its work) and, for a loaded
# graph:
#
# - at load, from the declared shapes and dtypes of each step's inputs: an exact shape or a
#   dtype that disagrees with the step's declaration is an error naming the step; so is a total
#   over MAX_RUN_BYTES, or work over MAX_STEP_WORK;
# - at run time (the inputs may have other sizes than the traced ones, a batch of 7 for a
#   trace of 2), the same statement from the real inputs before each step runs: the step is
#   refused when the values held so far plus its allocation pass MAX_RUN_BYTES, or its work
#   MAX_STEP_WORK; after it runs on inputs of the declared shapes and dtypes, what it made is
#   checked against the declarations (the backstop for ops that state no exact shape).
#
# Memory is not the only cost a file can ask for: a 359-byte ``Einsum`` of "ab,cd->" over two
# 3000 x 3000 inputs allocates a number but loops 3000**4 times (hours, deaf to Ctrl-C inside
# numpy): its work is what refuses it. And a step's numbers are counted at 8 bytes each at least
# (``_item_bytes``): its declared dtype is a claim of the file, and one declaring ``bool`` for
# what numpy makes in float64 would pass an 8 times smaller budget.

MAX_RUN_BYTES = 4 * 1024**3  # everything a loaded graph's replay holds at once
MAX_STEP_WORK = 2**36  # multiply-adds one step of a loaded graph may do (about a minute at most)


def _stated(op: _Op, shapes: list[tuple[int, ...]], dtypes: list[Any]) -> Meta:
    """What the step's op states it makes from inputs of these shapes and dtypes."""
    return op.cls.meta(shapes, dtypes, **op.options)


def _item_bytes(dtype: Any) -> int:
    """The bytes a step's number is counted at: its declared dtype's, and 8 at least (the
    declared dtype is the file's claim: NOTE [sizes before running])."""
    return max(np.dtype(dtype).itemsize, 8)


def _work_refused(work: int, where: str) -> str | None:
    if work <= MAX_STEP_WORK:
        return None
    return (f"{where}: it would do about {work:.3g} multiply-adds, over the {MAX_STEP_WORK:.3g} "
            "a step of a loaded graph may do (static_io.MAX_STEP_WORK): the file asks for more "
            "work than a lesson's graph needs")


def _is_data(value: Any) -> bool:
    """Is a constant argument of a step numbers (a number, None, an array, or lists of them)?"""
    if value is None or isinstance(value, (bool, int, float, np.generic, np.ndarray)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_is_data(item) for item in value)
    return backend.is_array(value)


def check_declared_sizes(ops: list[_Op], inputs: list[tuple], captured: list[tuple]) -> None:
    """The load-time half of NOTE [sizes before running]: every step's statement from the
    declared shapes and dtypes, exact shapes and dtypes equal to the declared ones, the total
    within MAX_RUN_BYTES and each step's work within MAX_STEP_WORK."""
    total = sum(count(shape) * np.dtype(dtype).itemsize for shape, dtype in inputs)
    total += sum(count(spec[2]) * spec[3].itemsize for spec in captured)
    for k, op in enumerate(ops):
        where = f"$.steps[{k}] ({op.cls.__name__})"
        shapes, dtypes = zip(*[_declared(ref, ops, inputs, captured) for ref in op.args]) \
            if op.args else ((), ())
        shapes, dtypes = list(shapes), list(dtypes)
        _check_axes(op, shapes, f"$.steps[{k}].options")
        try:
            stated = _stated(op, shapes, dtypes)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise ValueError(f"{where}: its options do not fit its inputs' declared shapes "
                             f"{shapes}: {exc}") from None
        if stated.shape is not None and stated.shape != op.shape:
            raise ValueError(
                f"{where}.shape: the step makes shape {stated.shape} from inputs of shapes "
                f"{shapes} and its options, but declares {op.shape}"
            )
        if stated.dtype is not None and stated.dtype != op.dtype:
            raise ValueError(
                f"{where}.dtype: the step makes {stated.dtype} from inputs of dtypes "
                f"{_listed(dtypes)}, but declares {op.dtype}: the file is inconsistent"
            )
        itemsize = _item_bytes(op.dtype)
        total += count(op.shape) * itemsize
        if total + stated.elements * itemsize > MAX_RUN_BYTES:
            raise ValueError(
                f"{where}: running the graph up to this step needs "
                f"{total + stated.elements * itemsize} bytes, over the {MAX_RUN_BYTES}-byte "
                "memory budget of a loaded graph (static_io.MAX_RUN_BYTES)"
            )
        refused = _work_refused(stated.work, where)
        if refused is not None:
            raise ValueError(refused)


def _listed(dtypes: list[Any]) -> str:
    """float64, int64 and 2: the dtypes of a step's inputs, and its numbers as they are."""
    names = [str(d) if isinstance(d, np.dtype) else repr(d) for d in dtypes]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _check_axes(op: _Op, shapes: list[tuple[int, ...]], where: str) -> None:
    """An axis option (one its op states ``is_axis``) names a dim of the op's first input:
    -ndim <= axis < ndim, as in PyTorch (a 0-d input has the axes -1 and 0)."""
    if not shapes:
        return
    ndim = max(len(shapes[0]), 1)
    for name, value in op.options.items():
        kind = op.cls.option_types.get(name)
        if kind is None or not kind.is_axis:
            continue
        for axis in value if isinstance(value, (tuple, list)) else [value]:
            if is_int(axis) and not -ndim <= axis < ndim:
                raise ValueError(
                    f"{where}.{name}: {axis} is out of range for an input of shape "
                    f"{shapes[0]} (expected -{ndim} to {ndim - 1})"
                )


def _declared(ref: Ref, ops: list[_Op], inputs: list[tuple], captured: list[tuple],
              ) -> tuple[tuple[int, ...], Any]:
    """The shape and dtype the file declares for a step's input (a constant: its value)."""
    if ref.kind == "input":
        return tuple(inputs[ref.index][0]), inputs[ref.index][1]
    if ref.kind == "step":
        return ops[ref.index].shape, ops[ref.index].dtype
    if ref.kind == "captured":
        return captured[ref.index][2], captured[ref.index][3]
    if isinstance(ref.value, (tuple, list)):
        return (), None
    return tuple(np.shape(ref.value)), dtype_of(ref.value)


class RunBudget:
    """The run-time half of NOTE [sizes before running], given to a loaded StaticGraph: before
    each step, its allocation from the real inputs plus what the replay holds so far must stay
    within ``limit`` bytes."""

    def __init__(self, ops: list[_Op], input_shapes: list[tuple[int, ...]], n_captured: int,
                 limit: int | None = None, input_dtypes: list[Any] | None = None) -> None:
        self.ops = ops
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes  # as declared; None: the dtypes made are not checked
        self.n_values = len(input_shapes) + n_captured  # the values a replay starts from
        self.limit = MAX_RUN_BYTES if limit is None else limit
        self.held = 0
        self.as_traced = False  # do this run's inputs have the declared shapes?
        self.dtypes_as_traced = False  # ... and the declared dtypes?
        self.passed: set[tuple] = set()  # signatures of the values of runs that passed

    # A step's sizes follow from the shapes and dtypes of the values a replay starts from, so a
    # run that passed every check clears later runs from the same shapes: those replay at full
    # speed (the checks cost a few microseconds a step).
    def signature(self, values: list) -> tuple:
        return tuple((_shape_of(v), str(getattr(v, "dtype", type(v))))
                     for v in values[: self.n_values])

    def has_passed(self, values: list) -> bool:
        return self.signature(values) in self.passed

    def passed_with(self, values: list) -> None:
        self.passed.add(self.signature(values))

    def start(self, values: list) -> None:
        """A replay begins with these values (inputs first, captured, constants) in hand."""
        self.held = sum(_nbytes(v) for v in values if v is not None)
        self.as_traced = all(_shape_of(value) == shape
                             for value, shape in zip(values, self.input_shapes))
        self.dtypes_as_traced = self.input_dtypes is not None and all(
            _dtype_of(value) == dtype for value, dtype in zip(values, self.input_dtypes))

    def before_step(self, k: int, args: Sequence) -> None:
        op = self.ops[k]
        shapes = [_shape_of(a) for a in args]
        try:
            stated = _stated(op, shapes, [dtype_of(a) for a in args])
        except (ValueError, TypeError, KeyError, IndexError):
            return  # the op itself will explain why these inputs do not fit
        refused = _work_refused(stated.work, f"inputs of shapes {shapes}")
        if refused is not None:
            raise MemoryError(refused)
        need = stated.elements * _item_bytes(op.dtype)
        if self.held + need > self.limit:
            raise MemoryError(
                f"it would allocate about {need} bytes for inputs of shapes {shapes} while "
                f"{self.held} bytes are held, over the {self.limit}-byte memory budget of a "
                "loaded graph (dyngraph.static_io.MAX_RUN_BYTES)"
            )

    def after_step(self, k: int, out: Any) -> None:
        """Step k made ``out``: on inputs of the declared shapes, it has the declared shape."""
        self.held += _nbytes(out)
        if self.as_traced and _shape_of(out) != self.ops[k].shape:
            raise ValueError(
                f"it made shape {_shape_of(out)} from inputs of the declared shapes, but the "
                f"graph file declares {self.ops[k].shape}: the file is inconsistent"
            )
        made = _dtype_of(out)
        if self.as_traced and self.dtypes_as_traced and made is not None \
                and made != self.ops[k].dtype:
            raise ValueError(
                f"it made {made} from inputs of the declared shapes and dtypes, but the graph "
                f"file declares {self.ops[k].dtype}: the file is inconsistent"
            )


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(value.shape) if hasattr(value, "shape") else tuple(np.shape(value))


def _dtype_of(value: Any) -> np.dtype | None:
    value = value.array if isinstance(value, Tensor) else value
    dtype = getattr(value, "dtype", None)
    return np.dtype(dtype) if dtype is not None else None


def _nbytes(value: Any) -> int:
    value = value.array if isinstance(value, Tensor) else value
    return int(getattr(value, "nbytes", 0))


# ---------------------------------------------------------------------------- export: loading


class StaticParts(NamedTuple):
    """What a StaticGraph is made of, read from a file (a loaded graph read no data in a traced
    run, so it has no ``data_reads``)."""

    ops: list[_Op]
    inputs: list[tuple[tuple[int, ...], np.dtype]]
    captured: list[Any]
    outputs: list[Ref]
    single_output: bool
    budget: RunBudget


def read_static(path: str | os.PathLike, device: str = "cpu") -> StaticParts:
    """The parts of the graph at ``path``, every one checked (``dg.load_static``, in trace.py,
    makes the StaticGraph of them; its docstring says what is checked)."""
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
    budget = RunBudget(spec.ops, [shape for shape, _ in spec.inputs], len(captured),
                       input_dtypes=[dtype for _, dtype in spec.inputs])
    return StaticParts(spec.ops, spec.inputs, captured, spec.outputs, spec.single_output, budget)


class _Validated:
    """A parsed JSON document, checked field by field and turned into the graph's parts."""

    def __init__(self, document: Any, xp: Any) -> None:
        self.xp = xp
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError(
                f"not a dyngraph static graph: the JSON has no \"format\": \"{FORMAT}\" field"
            )
        version = document.get("schema_version")
        if not self._is_int(version) or version < 1:
            raise ValueError(f"$.schema_version: expected a positive integer, got {version!r}")
        if version > SCHEMA_VERSION:  # before the fields: a newer schema may add some
            raise ValueError(
                f"this graph was written by a newer dyngraph (schema {version}, this one reads "
                f"up to {SCHEMA_VERSION}): upgrade dyngraph to load it"
            )
        self._fields(document, "$", _TOP_FIELDS, _TOP_FIELDS)
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
        for i, ref in enumerate(self.outputs):
            if ref.kind == "constant" and not is_number(ref.value):
                raise ValueError(f"$.outputs[{i}].constant: an output constant must be a "
                                 f"number, got {ref.value!r}"[:300])
        self.single_output = document["single_output"]
        if not isinstance(self.single_output, bool) or (self.single_output and len(outputs) != 1):
            raise ValueError("$.single_output: must be true (with one output) or false")
        check_declared_sizes(self.ops, self.inputs, self.captured_specs)

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
        for i, ref in enumerate(refs):
            if ref.kind == "constant" and not _is_data(ref.value):
                # (an op given a string would fail inside numpy with no step named)
                raise ValueError(f"{where}.args[{i}].constant: an op's constant argument is a "
                                 f"number or an array of numbers, got {ref.value!r}"[:300])
        options = entry["options"]
        if not isinstance(options, dict):
            raise ValueError(f"{where}.options: expected an object")
        accepted = _keyword_options(cls)
        given_as_inputs = _positional_names(cls)[: len(refs)]
        decoded = {}
        for option, value in options.items():
            if option not in accepted:
                raise ValueError(f"{where}.options.{option}: {name} takes no such option")
            if option in given_as_inputs:
                raise ValueError(f"{where}.options.{option}: {name} already gets {option} as "
                                 "one of its args")
            decoded[option] = self._decode(value, f"{where}.options.{option}")
            check_option(cls, option, decoded[option], f"{where}.options.{option}")
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
            try:
                with np.errstate(all="raise"):
                    return dtype.type(scalar)
            except (OverflowError, ValueError, FloatingPointError) as exc:
                raise ValueError(f"{where}.scalar: {scalar!r} is not a {dtype} ({exc})") from None
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


@functools.cache  # per op class: inspect is slow
def _positional_names(cls: type) -> tuple[str, ...]:
    """The names of an op's positional inputs, in order (a ``*args`` input ends the list)."""
    names = []
    for p in list(inspect.signature(cls.forward).parameters.values())[1:]:
        if p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        names.append(p.name)
    return tuple(names)


@functools.cache  # per op class: inspect is slow
def _keyword_options(cls: type) -> frozenset[str]:
    """The names an op's forward accepts as keyword options (everything after ``ctx``)."""
    parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in keyword)


def _read_weights(path: Path, specs: list[tuple]) -> list[np.ndarray]:
    """The captured arrays from a plain .npz, checked against the JSON's declarations: the file
    is a regular file within its limit, its members are exactly the declared ones, and each
    member's header (shape, dtype) matches its declaration and its stored size *before* its
    array is allocated (a header claiming shape (2**40,) is refused, not allocated). Never
    unpickles: an object array is refused from its header."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the weights file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path} is not a regular file: not the weights of a dyngraph static "
                         "graph")
    if info.st_size > MAX_WEIGHT_BYTES:
        raise ValueError(
            f"{path} is {info.st_size} bytes, over the {MAX_WEIGHT_BYTES}-byte limit"
        )
    expected = [f"captured_{j}.npy" for j in range(len(specs))]
    try:
        with zipfile.ZipFile(path) as archive:
            members = {member.filename: member for member in archive.infolist()}
            if sorted(members) != sorted(expected) or len(members) != len(archive.infolist()):
                raise ValueError(
                    f"{path} is not a dyngraph static graph: it holds "
                    f"{sorted(members)[:20]}, the graph expects {sorted(expected)[:20]}"
                )
            unpacked = sum(member.file_size for member in members.values())
            if unpacked > MAX_WEIGHT_BYTES:
                raise ValueError(
                    f"{path} unpacks to {unpacked} bytes, over the {MAX_WEIGHT_BYTES} limit"
                )
            return [_read_member(path, archive, members[name], j, spec)
                    for j, (name, spec) in enumerate(zip(expected, specs))]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, RuntimeError,
            NotImplementedError, zlib.error) as exc:
        raise ValueError(f"{path} is not a dyngraph static graph: not a readable .npz "
                         f"({exc})") from None


def _read_member(path: Path, archive: zipfile.ZipFile, member: zipfile.ZipInfo, j: int,
                 spec: tuple) -> np.ndarray:
    """One .npy member: its header checked, then its data read straight into a new array."""
    _, _, shape, dtype = spec
    where = f"$.captured[{j}]"
    if member.compress_type != zipfile.ZIP_STORED:
        # (unpacking goes through buffers of its own: twice the memory a member declares, and
        # zlib's own errors; dg.save_static writes members as they are, as np.savez does)
        raise ValueError(
            f"{path}: its member {member.filename} is compressed, and a dyngraph static graph's "
            "weights are not (np.savez, not np.savez_compressed): save the graph again with "
            "StaticGraph.save, or write the weights with np.savez"
        )
    with archive.open(member) as file:
        try:
            version = np.lib.format.read_magic(file)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f"npy format version {version} is not supported")
            stored_shape, fortran_order, stored_dtype = read_header(file)
        except ValueError as exc:
            raise ValueError(f"{path}: its member {member.filename} is not a plain .npy "
                             f"array: {exc}") from None
        if stored_dtype.hasobject:
            raise ValueError(
                f"{path}: its member {member.filename} is not a dyngraph static graph's: it "
                "holds Python objects (reading them would need allow_pickle, which dyngraph "
                "never uses)"
            )
        if stored_shape != shape or stored_dtype != dtype:
            raise ValueError(
                f"{where}: the graph declares shape {shape} {dtype} but the weights file "
                f"holds {stored_shape} {stored_dtype}"
            )
        data_bytes = math.prod(shape) * dtype.itemsize
        if member.file_size != file.tell() + data_bytes:
            raise ValueError(
                f"{where}: the weights member {member.filename} stores {member.file_size} "
                f"bytes, but a {shape} {dtype} array takes {data_bytes} after its header"
            )
        flat = np.empty(math.prod(shape), dtype=dtype)
        buffer = memoryview(flat.view(np.uint8))
        filled = 0
        while filled < data_bytes:
            got = file.readinto(buffer[filled:])
            if not got:
                raise ValueError(f"{where}: the weights member {member.filename} ends early")
            filled += got
    return flat.reshape(shape, order="F" if fortran_order else "C")
