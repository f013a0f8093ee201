"""Saving and loading static graphs: JSON + an ``.npz`` of the captured tensors, validated
strictly, never pickle. (Tracing and replay are in trace.py; this is the file format, as
recording_io.py is for a ``Recording``.)

``StaticGraph.save(path)`` writes the recorded ops as JSON and the captured tensors next to it as
``.npz``; ``dg.load_static(path)`` reads them back in a process that never saw the model's code.
A graph file is untrusted input, so the loader checks everything before trusting it: file sizes
before reading, JSON nesting before parsing, then every field, op, option and reference. Ops are
looked up by name among dyngraph's own, never imported or evaluated.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from . import backend, safe_json
from .tensor import Tensor
from .trace import Ref, StaticGraph, _Op

# ---------------------------------------------------------------------------- saving


def save_static(graph: StaticGraph, path: str | os.PathLike) -> Path:
    """``StaticGraph.save``: the graph as JSON at ``path`` (".json" added when it has no suffix)
    and its captured tensors as ``.npz`` beside it. Returns the JSON path."""
    json_path, npz_path = _paths(path)
    document = _to_document(graph)
    arrays = {
        f"captured_{j}": backend.to_numpy(value.array if isinstance(value, Tensor) else value)
        for j, value in enumerate(graph._captured)
    }
    json_path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    with open(npz_path, "wb") as file:
        np.savez(file, **arrays)
    return json_path


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
    if backend.is_array(value):
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
