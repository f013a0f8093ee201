"""The import graph of the dyngraph package, read from the source (ast, nothing is imported), and
its circles: the strongly connected components of more than one module.

Two graphs, because they mean different things: a *module-level* import runs when the module is
loaded (a circle there is an order the package must be loaded in), a *function-level* one runs
when the function is called (a circle there is two rooms that know each other). The layering
test (tests/test_layering.py) holds the rules; run this file to see the circles:

    PYTHONPATH=$PWD python tests/import_graph.py
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dyngraph"


def module_name(path: Path) -> str:
    """``dyngraph/nn/module.py`` -> ``dyngraph.nn.module``; a package's ``__init__.py`` -> the
    package's name."""
    parts = ["dyngraph", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _targets(node: ast.AST, importer: str) -> list[str]:
    """The dyngraph modules an import statement loads, each named once: ``from . import events``
    is dyngraph.events; ``from .tensor import Tensor`` is dyngraph.tensor; ``from . import
    no_grad`` (a name, not a module) is the package itself."""
    known = modules()
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return [name for name in names if name in known]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        package = importer.split(".") if _is_package(importer) else importer.split(".")[:-1]
        base = package[: len(package) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    if module not in known:
        return []
    found = []
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        found.append(submodule if submodule in known else module)
    return list(dict.fromkeys(found))


def imports(name: str) -> tuple[set[str], set[str]]:
    """(module-level, function-level) dyngraph modules that module ``name`` imports. Imports
    inside ``if``/``try`` at the top of the file count as module level; ``if TYPE_CHECKING:``
    blocks are not imports at all."""
    tree = ast.parse(modules()[name].read_text(encoding="utf-8"))
    top: set[str] = set()
    inner: set[str] = set()

    def visit(node: ast.AST, at_top: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            (top if at_top else inner).update(_targets(node, name))
            return
        deeper = at_top and not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, deeper)

    visit(tree, True)
    top.discard(name)
    inner.discard(name)
    return top, inner - top


def graph(level: str = "all") -> dict[str, set[str]]:
    """module -> the modules it imports: ``"module"`` (module-level only), ``"function"``
    (function-level only) or ``"all"``."""
    edges = {}
    for name in modules():
        top, inner = imports(name)
        edges[name] = {"module": top, "function": inner, "all": top | inner}[level]
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted, largest first
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def without(edges: dict[str, set[str]], dropped: set[str]) -> dict[str, set[str]]:
    """The graph without the modules in ``dropped`` (and the edges into them)."""
    return {name: targets - dropped for name, targets in edges.items() if name not in dropped}


def report(front_door: str = "dyngraph") -> str:
    """The circles of each graph, as text. The package's front door (``dyngraph/__init__.py``
    imports every public module, and a few functions import ``dyngraph`` to reach the public
    API) is left out of the search, or it would join everything into one circle."""
    lines = []
    for level in ("module", "function", "all"):
        found = circles(without(graph(level), {front_door}))
        lines.append(f"{level}-level imports: {len(found)} circle(s)")
        for component in found:
            lines.append(f"  {len(component)}: " + ", ".join(
                name.removeprefix("dyngraph.") for name in component))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(report() + "\n")
