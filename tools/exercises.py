"""The lessons' exercises: one source, three versions.

# NOTE [one source of truth] The committed lessons are the learner's version: what `make lab` and
# Binder open must be blank. Each exercise cell holds the placeholder the learner sees and carries
# its solution in its metadata (shown by a teacher with `show`, written out with `solution`):

    "metadata": {"tags": ["exercise"], "dyngraph": {"exercise": "03.1", "solution": [lines]}}

An exercise's check cells are the code cells after it up to the last one that calls
`check_answer("03.1", ...)` (or, in the build-your-own track, `check_engine_step("22.1", ...)`).
Hints are in `dyngraph.lessons.HINTS`, keyed by the same id.

    python tools/exercises.py list              # per lesson: its exercises and what they check
    python tools/exercises.py show 03.1         # the solution of one exercise
    python tools/exercises.py solution OUT      # the lessons with the solutions filled in
    python tools/exercises.py both OUT          # what `make test` runs, see combined()
"""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "notebooks"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(nb: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")


def source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def exercise_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("dyngraph", {}).get("exercise")


def blocks(nb: dict) -> list[tuple[str, int, int]]:
    """(exercise id, index of its exercise cell, index of its last check cell), in order."""
    cells, found = nb["cells"], []
    for i, cell in enumerate(cells):
        ex = exercise_id(cell)
        if ex is None:
            continue
        calls = (f'check_answer("{ex}"', f'check_engine_step("{ex}"')
        end = next((j for j in range(i + 1, len(cells))
                    if exercise_id(cells[j]) is not None), len(cells))
        checks = [j for j in range(i + 1, end) if cells[j]["cell_type"] == "code"
                  and any(call in source(cells[j]) for call in calls)]
        found.append((ex, i, checks[-1] if checks else i))
    return found


def solution_text(cell: dict) -> str:
    text = cell["metadata"]["dyngraph"].get("solution", "")
    return text if isinstance(text, str) else "".join(text)


def solution_cell(cell: dict) -> dict:
    out = copy.deepcopy(cell)
    out["source"] = lines(solution_text(cell))
    return out


def solution(nb: dict) -> dict:
    """The lesson with every exercise cell's placeholder replaced by its solution."""
    out = copy.deepcopy(nb)
    out["cells"] = [solution_cell(c) if exercise_id(c) else c for c in nb["cells"]]
    return out


def _mode_cell(mode: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": lines(f'import os\n\nos.environ["DYNGRAPH_EXERCISES"] = "{mode}"')}


def combined(nb: dict) -> dict:
    """Both versions in one run, so the lesson executes once: every cell of the learner's
    version in order, each exercise checked as the learner opens it ("not attempted yet"), then
    its solution cell and its check cells again (PASS). The cells after an exercise see the
    solution's values; `problems` makes sure none of them reads an exercise's answers."""
    out = copy.deepcopy(nb)
    cells, new = nb["cells"], [_mode_cell("learner")]
    starts = {i: j for _, i, j in blocks(nb)}
    i = 0
    while i < len(cells):
        if i not in starts:
            new.append(cells[i])
            i += 1
            continue
        j = starts[i]
        new += cells[i:j + 1]
        new += [_mode_cell("solution"), solution_cell(cells[i]), *cells[i + 1:j + 1]]
        new.append(_mode_cell("learner"))
        i = j + 1
    out["cells"] = [copy.deepcopy(cell) for cell in new]  # each its own copy: ids differ
    for k, cell in enumerate(out["cells"]):  # cell ids must stay unique
        cell["id"] = f"{cell.get('id', 'mode')}-{k}"
    return out


def _bound_names(code: str) -> set[str]:
    names = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in getattr(node, "targets", []) + [getattr(node, "target", None)]:
            for leaf in ast.walk(target) if target is not None else ():
                if isinstance(leaf, ast.Name):
                    names.add(leaf.id)
    return names


def problems(nb: dict, hints: dict[str, tuple[str, ...]], lesson: str) -> list[str]:
    """What is wrong with a lesson's exercises (empty when all is well)."""
    found, cells = [], nb["cells"]
    spans = blocks(nb)
    for ex, i, j in spans:
        cell = cells[i]
        where = f"{lesson} exercise {ex}"
        if not re.fullmatch(rf"{lesson[:2]}\.\d+", ex):
            found.append(f"{where}: the id should be {lesson[:2]}.N")
        if j == i:
            found.append(f'{where}: no check cell calls check_answer("{ex}", ...)')
        if not hints.get(ex):
            found.append(f"{where}: no hint in dyngraph.lessons.HINTS")
        if "exercise" not in cell["metadata"].get("tags", []):
            found.append(f"{where}: the cell is not tagged 'exercise'")
        placeholder, answer = source(cell), solution_text(cell)
        if "..." not in placeholder and "NotImplementedError" not in placeholder:
            found.append(f"{where}: the placeholder has no ... or NotImplementedError")
        if not answer.strip() or answer.strip() == placeholder.strip():
            found.append(f"{where}: the solution is missing or equals the placeholder")
        # the learner's version runs with the placeholder: nothing outside an exercise's own
        # cells may read what its answer defines
        bound = _bound_names(answer) | _bound_names(placeholder)
        inside = {k for _, a, b in spans for k in range(a, b + 1)}
        for k in range(j + 1, len(cells)):
            if k in inside or cells[k]["cell_type"] != "code":
                continue
            used = {n.id for n in ast.walk(ast.parse(_python(source(cells[k]))))
                    if isinstance(n, ast.Name)}
            for name in sorted(bound & used):
                found.append(f"{where}: cell {k} reads {name!r}, which the exercise defines")
    return found


def _python(code: str) -> str:
    """Cell source without IPython magics, so that `ast` can read it."""
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in code.splitlines())


def lessons() -> list[Path]:
    return sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str]) -> int:
    command, *rest = argv or ["list"]
    if command in ("solution", "both"):
        out = Path(rest[0])
        make = solution if command == "solution" else combined
        for stale in out.glob("*.ipynb"):
            stale.unlink()
        for path in lessons():
            write(make(load(path)), out / path.name)
        print(f"wrote {len(lessons())} lessons ({command} version) to {out}")
    elif command == "show":
        for path in lessons():
            for cell in load(path)["cells"]:
                if exercise_id(cell) == rest[0]:
                    print(solution_text(cell))
                    return 0
        print(f"no exercise {rest[0]!r}")
        return 1
    elif command == "list":
        for path in lessons():
            nb = load(path)
            print(f"{path.stem}: {len(blocks(nb))} exercises")
            for ex, i, _ in blocks(nb):
                first = source(nb["cells"][i]).splitlines()[0]
                print(f"  {ex}  {first}")
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
