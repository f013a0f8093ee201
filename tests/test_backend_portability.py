"""Catching numpy-only idioms in the ops without a GPU.

Every op in ``dyngraph/ops/`` is written once against the array module ``ctx.xp``: numpy for
numpy arrays, CuPy for CuPy arrays (``Function.apply`` picks it from the inputs' array type). A
numpy-only call would pass every CPU test and break only on a GPU, which CI may not have. Two
checks catch that on the CPU:

(a) **Static**: no module in ``dyngraph/ops/`` imports or names ``numpy``/``np`` (nor ``cupy``).
    Only ``backend.py`` chooses between numpy and CuPy. An AST walk, not a grep, so comments and
    docstrings that mention numpy are fine, and ``backend.np.exp`` is caught too.

(b) **Dynamic**: the op table (tests/op_table.py) runs forward and backward while ``ctx.xp`` is a
    recording stand-in for numpy; every name the ops look up on it (``xp.exp``, ``xp.where``,
    ``xp.add.at``, ...) is recorded and must be in ``CUPY_NAMES``, a literal allow-list of names
    documented in CuPy's API reference. This catches what (a) cannot: ``ctx.xp.<something numpy
    has and CuPy lacks>``.

How the stand-in is put in place (the least invasive way we found): ``ctx.xp`` is the ``xp`` slot
of ``Function``. The test replaces that one class attribute, for the duration of a test, with a
property that reads and writes the original slot and, on read, hands out the recording wrapper
instead of numpy. ``Function.apply`` itself is untouched (it keeps comparing array types with the
real numpy), nothing outside the ops sees the wrapper, and no global such as
``dyngraph.function.np`` is swapped (that would also catch apply's own ``np.ndarray`` checks, and
those are not the ops' business). The ops reach the backend in two other ways, and the ``backend``
name inside each ops module is replaced by a thin view of ``dyngraph.backend`` for them:
``backend.get_array_module(...)`` returns the recording wrapper too, and ``backend.scatter_add``
(which picks ``numpy.add.at`` or ``cupyx.scatter_add`` by testing ``xp is numpy``) gets the real
module back, since that choice is the backend's job and is covered by the GPU runs.

Why not ``array-api-strict``? It checks code against the strict Array API namespace, which has no
array methods such as ``x.sum(axis=...)``, ``x.reshape(...)`` or ``.T`` spelled the numpy way, and
rejects them by design. dyngraph's ops deliberately use that numpy/CuPy method API, because the
same backward formulas also run on dyngraph Tensors (which have the same methods) when
``backward(create_graph=True)`` records the backward pass. CuPy is the only other backend, so the
check is against CuPy's API, not the Array API standard.

What this does not see: methods called on arrays (``x.sum``, ``x.swapaxes``), which numpy and
CuPy share; and behavioural differences (CuPy returning 0-d arrays where numpy returns scalars).
Those need the GPU runs of test_ops.py (the ``backend`` fixture's ``cupy`` parameter).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from op_table import ALL_CASES, dg_inputs, ids

import dyngraph as dg
import dyngraph.ops
from dyngraph import backend
from dyngraph.function import Function

OPS_DIR = Path(dyngraph.ops.__file__).parent
OPS_FILES = sorted(OPS_DIR.glob("*.py"))

# ---------------------------------------------------------------------------- (a) static check

_ARRAY_MODULES = {"numpy", "cupy", "cupyx"}
_ARRAY_MODULE_NAMES = {"numpy", "np", "cupy", "cp", "cupyx"}


def array_module_uses(source: str, filename: str = "<source>") -> list[str]:
    """Every import of numpy/cupy and every use of the names np/numpy/cupy, as 'file:line: what'."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        what = None
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] in _ARRAY_MODULES]
            what = f"import {', '.join(names)}" if names else None
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and module.split(".")[0] in _ARRAY_MODULES:
                what = f"from {module} import ..."
            elif any(a.name in _ARRAY_MODULE_NAMES for a in node.names):
                what = f"from {'.' * node.level}{module} import {node.names[0].name}"
        elif isinstance(node, ast.Name) and node.id in _ARRAY_MODULE_NAMES:
            what = f"uses the name {node.id!r}"
        elif isinstance(node, ast.Attribute) and node.attr in _ARRAY_MODULE_NAMES:
            what = f"uses the attribute .{node.attr}"
        if what:
            found.append(f"{filename}:{node.lineno}: {what}")
    return found


def test_the_ops_package_has_modules_to_check():
    names = {p.name for p in OPS_FILES}
    assert {"elementwise.py", "reduce.py", "shape.py", "matmul.py"} <= names


@pytest.mark.parametrize("path", OPS_FILES, ids=[p.name for p in OPS_FILES])
def test_ops_module_does_not_name_numpy(path):
    uses = array_module_uses(path.read_text(), f"dyngraph/ops/{path.name}")
    assert not uses, (
        "ops are written against ctx.xp (numpy or CuPy); only dyngraph/backend.py may import "
        "or name numpy/cupy:\n" + "\n".join(uses)
    )


@pytest.mark.parametrize(
    "source",
    [
        "import numpy as np",
        "import numpy.linalg",
        "from numpy import exp",
        "from cupyx import scatter_add",
        "from ..backend import np",
        "def f(x):\n    return np.exp(x)\n",
        "def f(x):\n    return backend.np.exp(x)\n",
    ],
    ids=["import-as", "import-submodule", "from-import", "cupyx", "re-export", "name", "attr"],
)
def test_static_check_catches_numpy(source):
    assert array_module_uses(source)


def test_static_check_accepts_xp_and_prose_about_numpy():
    source = '"""Works like numpy.exp."""\n\ndef f(ctx, x):\n    return ctx.xp.exp(x)  # numpy\n'
    assert array_module_uses(source) == []


# ---------------------------------------------------------------------------- (b) dynamic check

# Names the ops may use on ``xp``. Each is a function, constant or dtype documented in CuPy's
# API reference (https://docs.cupy.dev/en/stable/reference/, "Comparison Table"), i.e. CuPy
# provides it with numpy's meaning. Dotted names are attributes of those (ufunc methods such as
# ``add.at`` are NOT listed: scatter goes through backend.scatter_add / cupyx.scatter_add).
CUPY_NAMES = frozenset({
    # creation
    "array", "asarray", "ascontiguousarray", "arange", "linspace", "eye", "identity", "copy",
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    # dtypes, types and constants
    "ndarray", "dtype", "finfo", "iinfo", "bool_", "int8", "uint8", "int32", "int64",
    "float16", "float32", "float64", "newaxis", "inf", "nan", "pi", "e",
    # elementwise arithmetic and math (ufuncs)
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "negative", "power", "abs",
    "absolute", "sign", "reciprocal", "square", "sqrt", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "logaddexp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
    "arccos", "arctan", "arctan2", "floor", "ceil", "rint", "around", "maximum", "minimum",
    "fmax", "fmin", "clip", "where", "isfinite", "isinf", "isnan", "nan_to_num",
    # comparisons and logic
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
    "logical_or", "logical_not", "all", "any",
    # reductions
    "sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin",
    "cumsum", "cumprod",
    # sorting and triangles
    "sort", "argsort", "tril", "triu",
    # shapes and joining
    "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
    "broadcast_to", "broadcast_arrays", "concatenate", "stack", "split", "tile", "repeat",
    "flip", "take", "take_along_axis",
    # linear algebra
    "matmul", "dot", "tensordot", "einsum", "outer",
    "linalg", "linalg.det", "linalg.inv",  # cupy.linalg: batched det and inv
})


class RecordingModule:
    """Stands in for an array module: forwards every attribute to it and records the name.

    Submodules and ufuncs come back wrapped too, so ``xp.add.at`` records ``add.at`` and
    ``xp.linalg.norm`` records ``linalg.norm``; calling a wrapped ufunc calls the real one.
    """

    def __init__(self, target: Any, seen: set[str], prefix: str = "") -> None:
        self._target, self._seen, self._prefix = target, seen, prefix

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        full = self._prefix + name
        self._seen.add(full)
        if isinstance(value, (ModuleType, np.ufunc)):
            return RecordingModule(value, self._seen, full + ".")
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<recording {self._target!r}>"


def _unwrap(xp: Any) -> Any:
    return xp._target if isinstance(xp, RecordingModule) else xp


class BackendSeenByOps:
    """``dyngraph.backend`` as the ops modules see it during the dynamic check."""

    def __init__(self, wrap: Any) -> None:
        self._wrap = wrap

    def __getattr__(self, name: str) -> Any:
        value = getattr(backend, name)
        if name in ("get_array_module", "xp_of", "module_for"):
            return lambda *args, **kwargs: self._wrap(value(*args, **kwargs))
        if name == "scatter_add":
            return lambda xp, *args, **kwargs: value(_unwrap(xp), *args, **kwargs)
        return value


@pytest.fixture
def recorded_xp_names(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """While the test runs, ops get a recording numpy as ``ctx.xp``; returns the recorded names."""
    seen: set[str] = set()

    def wrap(xp: Any) -> Any:
        return RecordingModule(xp, seen) if xp is np else xp

    slot = Function.__dict__.get("xp")
    if not hasattr(slot, "__get__") or not hasattr(slot, "__set__"):
        pytest.fail(
            "Function.xp is no longer a slot/descriptor; update recorded_xp_names to wrap "
            f"ctx.xp where it is now stored (found {slot!r})"
        )

    def read(node: Function) -> Any:
        return wrap(slot.__get__(node, type(node)))

    def write(node: Function, value: Any) -> None:
        slot.__set__(node, value)

    monkeypatch.setattr(Function, "xp", property(read, write))
    for info in pkgutil.iter_modules(dyngraph.ops.__path__):
        module = importlib.import_module(f"dyngraph.ops.{info.name}")
        if getattr(module, "backend", None) is backend:
            monkeypatch.setattr(module, "backend", BackendSeenByOps(wrap))
    return seen


def _run_forward_and_backward(case) -> dg.Tensor:
    inputs = dg_inputs(case, case.arrays(), "cpu", np.float64)
    out = case.dg(*inputs)
    out.backward(np.ones(out.shape))
    return out


@pytest.mark.parametrize("case", ALL_CASES, ids=ids(ALL_CASES))
def test_ops_use_only_array_functions_cupy_provides(case, recorded_xp_names):
    _run_forward_and_backward(case)
    unknown = sorted(recorded_xp_names - CUPY_NAMES)
    assert not unknown, (
        f"{case.id} used xp.{', xp.'.join(unknown)}, which is not in the CuPy allow-list: use a "
        "function CuPy also provides (or a backend.py helper), or add the name to CUPY_NAMES "
        "after checking CuPy's API reference"
    )


@pytest.mark.parametrize(
    "case_id, names",
    [("exp", {"exp"}), ("log", {"log"}), ("sin", {"sin", "cos"}), ("cos", {"cos", "sin"}),
     ("sqrt", {"sqrt"}), ("tanh", {"tanh"})],
)
def test_recording_sees_forward_and_backward_calls(case_id, names, recorded_xp_names):
    # The check above is only as good as the wrapper: these ops cannot be written without
    # calling xp (sin's backward needs xp.cos), so their names must show up.
    (case,) = [c for c in ALL_CASES if c.id == case_id]
    _run_forward_and_backward(case)
    assert names <= recorded_xp_names


def test_results_are_unchanged_under_the_recording_wrapper(recorded_xp_names):
    # Index backward goes through the scatter_add path with the wrapper unwrapped.
    (case,) = [c for c in ALL_CASES if c.id == "index-int-array-repeats"]
    x = dg_inputs(case, case.arrays())[0]
    x[[0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [2.0, 0.0, 1.0])
    assert "zeros" in recorded_xp_names


def test_a_name_outside_the_allow_list_is_reported(recorded_xp_names):
    # A custom op that reaches for a ufunc method (numpy's add.at; CuPy code uses
    # cupyx.scatter_add): the wrapper records the dotted name and the allow-list rejects it.
    class CountInto(Function):
        @staticmethod
        def forward(ctx, x):
            counts = ctx.xp.zeros(3)
            ctx.xp.add.at(counts, x.astype(int) % 3, 1.0)
            return counts

    CountInto.apply(dg.tensor([0.0, 1.0, 1.0]))
    assert "add.at" in recorded_xp_names
    assert recorded_xp_names - CUPY_NAMES == {"add.at"}
