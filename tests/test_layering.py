"""Layering: the engine depends on numpy only. `import dyngraph` loads no notebook, plotting or
GPU package, and no engine module imports one (dyngraph/jupyter/ and dyngraph/plot.py, which sit
on top of the engine, are the exceptions; backend.py alone may load cupy, lazily)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

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


def _imports(path: Path):
    """(top-level module name, line, at module level?) for every import statement in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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
    assert {"tensor.py", "function.py", "autograd.py", "events.py", "backend.py"} <= names


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
def test_engine_module_does_not_import_the_widget_layer_at_import_time(path):
    offending = []
    for name, line in _module_level_imports(path):
        parts = name.lstrip(".").split(".")
        if "jupyter" in parts or parts[-1] == "plot" or name in ("dyngraph.plot", ".plot"):
            offending.append(f"line {line}: {name}")
    assert offending == []
