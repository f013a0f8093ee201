"""Layering: the engine depends on numpy only. `import dyngraph` loads no notebook, plotting or
GPU package, and no engine module imports one (dyngraph/jupyter/ and dyngraph/plot.py, which sit
on top of the engine, are the exceptions; backend.py alone may load cupy, lazily). Floors are
one-way: no engine module imports the Jupyter layer, not even inside a function, bar the
package's front doors (NOTE [front doors] below). The event spine (dyngraph/spine/) sits at the
bottom and imports nothing above it; no import circle outside the engine core; each event type
is built in one module and a graph is walked by one function (issue 39)."""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import import_graph  # tests/import_graph.py: the package's imports, read from the source
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dyngraph"
FORBIDDEN = ("IPython", "ipywidgets", "anywidget", "matplotlib", "cupy", "cupyx")
NOTEBOOK_AND_PLOTTING = ("IPython", "ipywidgets", "anywidget", "matplotlib")
GPU = ("cupy", "cupyx")


def _run_python(code: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_dyngraph_loads_no_notebook_plotting_or_gpu_package():
    found = _run_python(
        f"""
        import json, sys
        import dyngraph
        forbidden = {FORBIDDEN!r}
        loaded = sorted(
            name for name in sys.modules
            if name.split(".")[0] in forbidden
        )
        print(json.dumps({{"file": dyngraph.__file__, "loaded": loaded}}))
        """
    )
    assert Path(found["file"]).resolve().is_relative_to(PACKAGE)  # the code under test
    assert found["loaded"] == []


def test_import_dyngraph_does_not_even_try_to_import_them():
    """Installed or not, no attempt is made: a finder records every import that is tried."""
    found = _run_python(
        f"""
        import json, sys
        forbidden = {FORBIDDEN!r}
        tried = []

        class Recorder:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in forbidden:
                    tried.append(name)
                return None  # let the normal finders carry on

        sys.meta_path.insert(0, Recorder())
        import dyngraph
        x = dyngraph.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        print(json.dumps({{"tried": sorted(set(tried))}}))
        """
    )
    assert found["tried"] == []


# ----------------------------------------------------------------------------- source scan


def _engine_modules() -> list[Path]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("jupyter/") or relative == "plot.py":
            continue
        modules.append(path)
    return modules


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests that scan it."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imports(path: Path):
    """(top-level module name, line, at module level?) for every import statement in a file."""
    tree = _tree(path)
    module_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        top = id(node) in module_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno, top


def _module_level_imports(path: Path):
    """Module-level imports also inside `if`/`try` blocks at the top of the file."""
    tree = _tree(path)
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            yield ("." * node.level) + module, node.lineno
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend(node.body)
            stack.extend(node.orelse)
            stack.extend(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                stack.extend(handler.body)


def test_the_scan_sees_the_engine():
    names = {p.relative_to(PACKAGE).as_posix() for p in _engine_modules()}
    assert {"tensor.py", "function.py", "autograd.py", "spine/events.py", "backend.py"} <= names


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_engine_module_imports_no_notebook_or_plotting_package(path):
    offending = [
        f"line {line}: {name}"
        for name, line, _ in _imports(path)
        if name.split(".")[0] in NOTEBOOK_AND_PLOTTING
    ]
    assert offending == []


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_only_backend_imports_cupy_and_only_lazily(path):
    cupy_imports = [
        (name, line, top) for name, line, top in _imports(path) if name.split(".")[0] in GPU
    ]
    if path.name == "backend.py" and path.parent == PACKAGE:
        assert all(not top for _, _, top in cupy_imports), "cupy imported at module level"
    else:
        assert cupy_imports == []


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_engine_module_does_not_import_plot_at_import_time(path):
    offending = []
    for name, line in _module_level_imports(path):
        parts = name.lstrip(".").split(".")
        if parts[-1] == "plot" or name in ("dyngraph.plot", ".plot"):
            offending.append(f"line {line}: {name}")
    assert offending == []


# ----------------------------------------------------------------------------- engine -> jupyter

JUPYTER = "dyngraph.jupyter"

# NOTE [front doors] The only functions of the package that import the Jupyter layer, and only
# when called: its front door, dyngraph/__init__.py, where the layers meet. dg.watch() and
# %load_ext dyngraph are the documented ways into it (DESIGN.md, public API); _load_player is
# how the engine reaches the browser player without naming it (NOTE [the player] in
# dyngraph/player.py). Everything else that needs the widget lives in dyngraph/jupyter/.
FRONT_DOORS = {
    ("__init__.py", "watch"),
    ("__init__.py", "load_ipython_extension"),
    ("__init__.py", "_load_player"),
}


def _package_of(path: Path) -> list[str]:
    """``dyngraph/nn/init.py`` -> ["dyngraph", "nn"]: what ``from . import x`` is relative to."""
    return ["dyngraph", *path.relative_to(PACKAGE).parent.parts]


def _imported_names(node: ast.AST, package: list[str]) -> list[str]:
    """The absolute module names an import statement may load (``from . import jupyter`` counts
    as ``dyngraph.jupyter``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package[: len(package) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    return [module] + [f"{module}.{alias.name}" for alias in node.names]


def _imports_under(tree: ast.Module, package: list[str], prefix: str) -> list[tuple[str, int, str]]:
    """(enclosing function, line, module) for every import of ``prefix`` or a module under it,
    at module level ("<module>") or inside functions and methods ("Class.method")."""
    found = []
    stack: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while stack:
        node, where = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = child.name if where == "<module>" else f"{where}.{child.name}"
            for name in _imported_names(child, package):
                if name == prefix or name.startswith(prefix + "."):
                    found.append((where, child.lineno, name))
                    break
            stack.append((child, inner))
    return sorted(found, key=lambda item: item[1])


def _jupyter_imports(tree: ast.Module, package: list[str]) -> list[tuple[str, int, str]]:
    """Every import of dyngraph.jupyter in a module (see _imports_under)."""
    return _imports_under(tree, package, JUPYTER)


def _jupyter_imports_in(path: Path) -> list[tuple[str, int, str]]:
    return _jupyter_imports(_tree(path), _package_of(path))


def test_the_jupyter_scan_sees_lazy_and_relative_imports():
    """The scan itself, on a module placed at dyngraph/nn/: every spelling of an import of the
    Jupyter layer is found and attributed to its function; other relative imports are not."""
    source = textwrap.dedent(
        """
        import dyngraph.jupyter.view
        class Model:
            def show(self):
                from ..jupyter import view
                from .. import jupyter
                from .tensor import Tensor
        def helper():
            from dyngraph import jupyter
        """
    )
    scanned = _jupyter_imports(ast.parse(source), ["dyngraph", "nn"])
    found = [(where, line) for where, line, _ in scanned]
    assert found == [("<module>", 2), ("Model.show", 5), ("Model.show", 6), ("helper", 9)]


@pytest.mark.parametrize("path", _engine_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_engine_module_does_not_import_the_jupyter_layer_even_lazily(path):
    relative = path.relative_to(PACKAGE).as_posix()
    offending = [
        f"line {line}: {name} (in {where})"
        for where, line, name in _jupyter_imports_in(path)
        if (relative, where) not in FRONT_DOORS
    ]
    assert offending == [], (
        f"{relative} imports the Jupyter layer: the engine must not depend on it (issue 14, "
        "one-way floors); move the code that needs the widget into dyngraph/jupyter/"
    )


def test_the_front_doors_are_where_the_list_says():
    """A front door that moved or went leaves the list, so the list cannot hide a new import."""
    found = {
        (path.relative_to(PACKAGE).as_posix(), where)
        for path in _engine_modules()
        for where, _, _ in _jupyter_imports_in(path)
    }
    assert found == FRONT_DOORS


# One engine (DESIGN.md, "One engine: what you read is what runs"): the modules a learner reads
# are the only definition of the engine, the event spine and the watchers. Nothing below them
# replaces their functions: no hand-written C twin, and no module that writes another dyngraph
# module's names from outside.
SOURCE_SUFFIXES = {".py", ".pyi", ".js", ".css", ".txt", ".typed"}


def test_the_package_is_the_readable_modules_and_nothing_compiled():
    found = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*")
                   if path.is_file() and "__pycache__" not in path.parts
                   and path.suffix not in SOURCE_SUFFIXES)
    assert found == [], f"not a readable module: {found}"


def _modules_imported_as(tree: ast.Module, package: list[str]) -> set[str]:
    """The local names under which a module imports dyngraph modules (``from . import events``,
    ``import dyngraph.torch as dgt``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _imported_names(node, package)[0]
            if module == "dyngraph" or module.startswith("dyngraph."):
                names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names
                         if alias.name.startswith("dyngraph"))
    return names


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_module_writes_another_modules_names(path):
    """``events.emit = ...`` or ``setattr(function, ...)`` in another module would put a second
    definition in place of the one a learner reads."""
    tree = _tree(path)
    modules = _modules_imported_as(tree, _package_of(path))
    written = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id in modules):
                written.append((node.lineno, f"{target.value.id}.{target.attr}"))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "setattr" and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id in modules):
            written.append((node.lineno, f"setattr({node.args[0].id}, ...)"))
    assert written == []


def test_the_engine_reaches_the_player_through_the_front_door(monkeypatch):
    """NOTE [the player]: ``import dyngraph`` connects the loader without importing the
    Jupyter layer (test_import_dyngraph_does_not_even_try_to_import_them), and a player that
    was never connected is a clear ImportError, not an AttributeError deep in a display."""
    import dyngraph
    import dyngraph.player

    assert dyngraph.player._loader is dyngraph._load_player
    monkeypatch.setattr(dyngraph.player, "_loader", None)
    with pytest.raises(ImportError, match="not connected"):
        dyngraph.player.load()


# NOTE [graph floors] The graph model and what is made of it, bottom up: graph.py (nodes, edges,
# kinds) and recording_format.py (the file format and its writer, which reads a recording's
# attributes); record.py (the Recording folds events into that model); dot.py, recording_io.py
# (the loader, which makes Recordings) and graph_diff.py (draw it, load it, compare two). A
# drawing or a diff takes any Graph, so dot.py and graph_diff.py never import record.py; and no
# module-level import goes up a floor (the Recording's own rec.to_dot(), rec.diff() reach up
# when called, as public API; rec.save() reaches down, to the format).
GRAPH_FLOORS = {"graph": 0, "recording_format": 0, "record": 1, "dot": 2, "recording_io": 2,
                "graph_diff": 2}


def _graph_floor_imports(module: str) -> list[tuple[str, int, str]]:
    """(where, line, module of the floors) for each import of a floor module by ``module``."""
    path = PACKAGE / f"{module}.py"
    found = []
    for where, line, name in _imports_under(_tree(path), _package_of(path), "dyngraph"):
        parts = name.split(".")
        if len(parts) > 1 and parts[1] in GRAPH_FLOORS and parts[1] != module:
            found.append((where, line, parts[1]))
    return found


def test_the_graph_model_imports_no_other_module_of_dyngraph():
    path = PACKAGE / "graph.py"
    own = [name for _, _, name in _imports_under(_tree(path), _package_of(path), "dyngraph")]
    assert own == []


@pytest.mark.parametrize("module", ["dot", "graph_diff"])
def test_drawings_and_diffs_take_any_graph_and_never_import_the_recording(module):
    assert [(where, line) for where, line, imported in _graph_floor_imports(module)
            if imported == "record"] == []


@pytest.mark.parametrize("module", sorted(GRAPH_FLOORS))
def test_no_module_level_import_goes_up_a_graph_floor(module):
    upward = [f"line {line}: {imported}" for where, line, imported in _graph_floor_imports(module)
              if where == "<module>" and GRAPH_FLOORS[imported] > GRAPH_FLOORS[module]]
    assert upward == []


# ----------------------------------------------------------------------------- the spine

# NOTE [the spine at the bottom] DESIGN.md, "Events: the spine": every engine reports through the
# spine (dyngraph/spine/), which sits at the bottom of the house. It imports nothing of dyngraph
# outside its own folder, at module level or inside a function, so any engine - dyngraph's, the
# torch watcher, micrograd's adapter, a learner's - can stand on it without a circle.

SPINE = "dyngraph.spine"


def _in_spine(module: str) -> bool:
    return module == SPINE or module.startswith(SPINE + ".")


def test_the_graph_of_imports_sees_the_spine_and_its_imports():
    spine = [name for name in import_graph.modules() if _in_spine(name)]
    assert {"dyngraph.spine.events", "dyngraph.spine.reporter", "dyngraph.spine.walk"} <= set(spine)
    top, _ = import_graph.imports("dyngraph.spine.reporter")
    assert "dyngraph.spine.events" in top  # the scan reads relative imports inside the folder


@pytest.mark.parametrize("module", sorted(name for name in import_graph.modules()
                                          if _in_spine(name)))
def test_the_spine_imports_nothing_above_it(module):
    top, inner = import_graph.imports(module)
    above = sorted(name for name in top | inner if not _in_spine(name))
    assert above == [], f"{module} imports {above}: the spine stands on nothing of dyngraph"


# ----------------------------------------------------------------------------- circles

# NOTE [the engine core] The one circle of imports allowed: the engine itself. A Tensor's
# methods call the ops, each op is a Function whose apply makes Tensors, backward runs the ops'
# backward, gradcheck calls backward and autograd offers it, a Tensor's factory methods
# (new_full, normal_) call the factories, which make Tensors. Anything else that imports in a
# circle is two rooms that know each other: put what both need below them (as the spine is).
# The set is named in full and must be exactly the circle there is, so it can only shrink.
ENGINE_CORE = frozenset({
    "dyngraph.tensor", "dyngraph.function", "dyngraph.autograd", "dyngraph.gradcheck",
    "dyngraph.factories", "dyngraph.ops.differentiable",
    "dyngraph.ops.arc_and_round", "dyngraph.ops.elementwise", "dyngraph.ops.index",
    "dyngraph.ops.linalg", "dyngraph.ops.matmul", "dyngraph.ops.pointwise", "dyngraph.ops.reduce",
    "dyngraph.ops.shape", "dyngraph.ops.stats",
    # what each op states of its output (Op.meta): it reads the default float dtype, which
    # set_default_dtype changes in tensor.py, and the ops import it
    "dyngraph.meta",
})


def _circles() -> list[frozenset[str]]:
    """The circles of the package's imports (module and function level together), the front
    door (dyngraph/__init__.py, which imports everything public) left out."""
    edges = import_graph.without(import_graph.graph("all"), {"dyngraph"})
    return [frozenset(circle) for circle in import_graph.circles(edges)]


def test_the_circle_finder_finds_a_circle_and_nothing_else():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_graph.circles(edges) == [["a", "b", "c"]]


def test_no_import_circle_outside_the_engine_core():
    found = _circles()
    assert ENGINE_CORE in found, "the engine core changed: name the modules it has now"
    assert [sorted(circle) for circle in found if circle != ENGINE_CORE] == []


# ----------------------------------------------------------------------------- one place each

# NOTE [one place per event] in spine/events.py: each event type is built in one module, the
# spine's; every engine and every replay calls its constructors.
EVENT_TYPES = ("NodeCreated", "BackwardStarted", "GradComputed", "EdgeGrad", "BackwardFinished",
               "BackwardFailed", "GraphFreed", "VersionBumped")


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _modules_calling(names: set[str]) -> dict[str, set[str]]:
    """name -> the package's modules (paths under dyngraph/) with a call of that name."""
    found: dict[str, set[str]] = {name: set() for name in names}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and _called_name(node) in names:
                found[_called_name(node)].add(path.relative_to(PACKAGE).as_posix())
    return found


def test_every_event_type_is_built_in_one_module_the_spines():
    built = _modules_calling(set(EVENT_TYPES))
    assert built == {name: {"spine/events.py"} for name in EVENT_TYPES}


def test_every_event_type_has_its_constructor_and_engines_use_them():
    from dyngraph.spine import events

    constructors = {"node_created", "node_of_array", "backward_started", "grad_computed",
                    "edge_grad", "backward_finished", "backward_failed", "graph_freed",
                    "version_bumped"}
    assert all(callable(getattr(events, name)) for name in constructors)
    users = set().union(*_modules_calling(constructors).values())
    # dyngraph's engine, its backward, the torch watcher, the reporter, a replayed recording
    assert {"function.py", "autograd.py", "torch.py", "spine/reporter.py", "record.py"} <= users


# The walks of a graph by hand: a loop that pops a stack and follows a node's inputs
# (dyngraph's ``parents``, torch's ``next_functions``, micrograd's ``_prev``, an EventSource's
# ``made_by``). There is one, spine/walk.py's ``walk_back``, which follows ``inputs_of``; every
# other module asks it. (The backward pass's own loop, autograd.BackwardPass.propagate, runs
# the chain rule in the engine's order from a heap: it is the engine, not a walk of the graph.)
INPUTS = {"parents", "next_functions", "_prev", "made_by", "_made", "inputs_of"}


def _hand_walks(tree: ast.Module) -> list[int]:
    """Lines of the ``while`` loops in a module that pop a stack and follow a node's inputs."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.While):
            continue
        inner = list(ast.walk(node))
        pops = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                   and n.func.attr == "pop" and not n.args for n in inner)  # stack.pop()
        follows = any((isinstance(n, ast.Attribute) and n.attr in INPUTS)
                      or (isinstance(n, ast.Name) and n.id in INPUTS) for n in inner)
        if pops and follows:
            lines.append(node.lineno)
    return lines


def test_the_walk_detector_sees_a_hand_written_walk_and_not_the_engines_heap():
    source = textwrap.dedent(
        """
        def behind(root):
            stack, seen = [root], set()
            while stack:
                node = stack.pop()
                seen.add(node)
                stack.extend(node.parents)

        def propagate(pending, grads):
            while pending:
                node = heapq.heappop(pending)
                g = grads.pop(node)
                for parent in node.parents:
                    pass
        """
    )
    assert _hand_walks(ast.parse(source)) == [4]


def test_one_walk_of_a_graph():
    walks = {path.relative_to(PACKAGE).as_posix(): _hand_walks(_tree(path))
             for path in sorted(PACKAGE.rglob("*.py"))}
    assert {path: lines for path, lines in walks.items() if lines} == {
        "spine/walk.py": walks["spine/walk.py"]}
    assert len(walks["spine/walk.py"]) == 1
    defined = [path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
               for node in ast.walk(_tree(path))
               if isinstance(node, ast.FunctionDef) and node.name == "walk_back"]
    assert defined == ["spine/walk.py"]
