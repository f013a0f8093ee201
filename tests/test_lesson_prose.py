"""Prose and pictures agree: where a lesson states how many nodes, edges or steps a graph has,
the number is the one the widget shows.

A lesson prints a view (``print(view)``: ``GraphView(nodes=6, edges=5, steps=20)``, the counts
the widget's timeline is made of) and the paragraph right after it says them in words. The lesson
is executed and each such paragraph is held to the printed counts.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen twenty")
NUMBERS = {word: n for n, word in enumerate(WORDS.split(" "))}
NUMBERS.update({f"twenty-{w}": 20 + n for w, n in list(NUMBERS.items())[1:10]})
NUMBERS.update({"thirty": 30, "forty": 40})
PRINTED = re.compile(r"GraphView\(nodes=(\d+), edges=(\d+), steps=(\d+)\)")
STATED = re.compile(r"\b(\d+|[a-z]+(?:-[a-z]+)?)\s+(nodes|edges|steps)\b", re.I)


def stated_counts(prose: str) -> dict[str, int]:
    """The counts a paragraph states: "five edges, and twenty steps" -> {edges: 5, steps: 20}
    (the first statement of each; "six nodes appearing" restates the nodes)."""
    counts: dict[str, int] = {}
    for number, what in STATED.findall(prose):
        value = int(number) if number.isdigit() else NUMBERS.get(number.lower())
        if value is not None:
            counts.setdefault(what.lower(), value)
    return counts


def test_stated_counts_reads_numbers_in_words():
    assert stated_counts("Six nodes (three leaves), five edges, and twenty steps: six nodes") == {
        "nodes": 6, "edges": 5, "steps": 20}


@pytest.mark.slow
@pytest.mark.parametrize("lesson", ["03_backward.ipynb"])
def test_the_counts_a_lesson_states_are_the_ones_its_view_shows(lesson, tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="executing a lesson needs nbformat")
    nbclient = pytest.importorskip("nbclient", reason="executing a lesson needs nbclient")
    notebook = nbformat.read(str(ROOT / "notebooks" / lesson), as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    checked = 0
    for cell, after in zip(notebook.cells, notebook.cells[1:]):
        printed = "".join(o.get("text", "") for o in cell.get("outputs", []))
        shown = PRINTED.search(printed)
        if cell.cell_type != "code" or not shown or after.cell_type != "markdown":
            continue
        actual = dict(zip(("nodes", "edges", "steps"), map(int, shown.groups())))
        stated = stated_counts(after.source)
        assert stated, f"{lesson}: the paragraph after {shown[0]} states no count"
        for what, value in stated.items():
            assert value == actual[what], (
                f"{lesson} says {value} {what} where the view shows {actual[what]} ({shown[0]})")
        checked += 1
    assert checked, f"{lesson} prints no view followed by a paragraph: nothing was checked"
