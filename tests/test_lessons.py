"""The lessons' exercises: the checks' three answers, hints, and the learner / solution versions
that tools/exercises.py derives from the committed lessons (the learner's version)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import lessons

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("exercises", ROOT / "tools" / "exercises.py")
exercises = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exercises)

LESSONS = exercises.lessons()


@pytest.fixture(autouse=True)
def _no_mode(monkeypatch):
    monkeypatch.delenv("DYNGRAPH_EXERCISES", raising=False)


# ----------------------------------------------------------------------------- check_answer

def test_placeholder_is_not_attempted(capsys):
    assert not lessons.check_answer("03.1", "df/dx", ..., 12.0)
    assert capsys.readouterr().out.startswith("03.1 df/dx: not attempted yet")


def test_a_function_left_unwritten_is_not_attempted(capsys):
    def my_mean(x):
        raise NotImplementedError

    lessons.check_answer("04.2", "mean", lambda: my_mean(1), 1.0)
    assert "not attempted yet" in capsys.readouterr().out


@pytest.mark.parametrize("mine, expected", [
    (12, dg.tensor(12.0)), (np.array([1.0, 2.0]), [1.0, 2.0 + 1e-7]), (["Mul", "Sigmoid"],
     ["Mul", "Sigmoid"]), (True, True), (lambda: 3, 3)])
def test_right_answers_pass(capsys, mine, expected):
    assert lessons.check_answer("00.1", "x", mine, expected)
    assert capsys.readouterr().out == "00.1 x: PASS\n"


@pytest.mark.parametrize("mine, expected, says", [
    (9, 12.0, "yours is 9, 3 too low"),
    (15.5, 12.0, "3.5 too high"),
    (np.zeros(3), [0.0, 2.0, 0.0], "1 of 3 entries differ, the most at index (1,) (max diff 2)"),
    (np.zeros(2), np.zeros(3), "shape: yours (2,), expected (3,)"),
    (["Mul", "Add"], ["Mul", "Sigmoid"], "item 2 differs: yours is 'Add'"),
    (["Mul"], ["Mul", "Sigmoid"], "yours has 1 items, expected 2"),
    (lambda: 1 / 0, 1.0, "your code raised ZeroDivisionError"),
    ({"a", "b"}, {"b", "c", "d"}, "1 of yours should not be there, 2 missing"),
])
def test_wrong_answers_say_what_differs_and_by_how_much(capsys, mine, expected, says):
    assert not lessons.check_answer("03.1", "x", mine, expected)
    out = capsys.readouterr().out
    assert out.startswith("03.1 x: not yet: ") and says in out, out
    assert 'lessons.hint("03.1")' in out


def test_versions_raise_when_a_check_says_otherwise(monkeypatch, capsys):
    monkeypatch.setenv("DYNGRAPH_EXERCISES", "learner")
    lessons.check_answer("03.2", "k", ..., 6.0)                      # blank: as expected
    with pytest.raises(AssertionError, match="should say not attempted yet"):
        lessons.check_answer("03.2", "k", 6.0, 6.0)                  # an answer left in
    monkeypatch.setenv("DYNGRAPH_EXERCISES", "solution")
    lessons.check_answer("03.2", "k", 6.0, 6.0)
    for wrong in (..., 5.0):
        with pytest.raises(AssertionError, match="should say PASS"):
            lessons.check_answer("03.2", "k", wrong, 6.0)


def test_hints_are_revealed_one_at_a_time(capsys):
    lessons.hint("03.1")
    first = capsys.readouterr().out
    assert first.startswith("03.1 hint 1/2: ") and 'hint(\'03.1\', 2)' in first
    lessons.hint("03.1", 2)
    assert "hint 2/2" in capsys.readouterr().out
    lessons.hint("99.9")
    assert "no hints" in capsys.readouterr().out


# ----------------------------------------------------------------------------- the lessons

@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_has_exercises_with_hints_checks_and_solutions(path):
    nb = exercises.load(path)
    assert exercises.blocks(nb), f"{path.name} has no exercise"
    assert exercises.problems(nb, lessons.HINTS, path.stem) == []


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_committed_lessons_are_the_learners_version(path):
    nb = exercises.load(path)
    for _, i, _ in exercises.blocks(nb):
        cell = nb["cells"][i]
        assert not cell["outputs"]
        ast.parse(exercises.source(cell))
        ast.parse(exercises.solution_text(cell))


def test_hints_never_hold_an_answer():
    for path in LESSONS:
        nb = exercises.load(path)
        for ex, i, _ in exercises.blocks(nb):
            body = ast.parse(exercises.solution_text(nb["cells"][i])).body
            answers = [node.value for node in body if isinstance(node, ast.Assign)]
            for value in answers:
                text = ast.unparse(value)
                if len(text) > 3:      # a short literal like 12 may occur in prose by chance
                    assert all(text not in h for h in lessons.HINTS[ex]), (ex, text)


def test_ids_are_unique_and_every_hint_belongs_to_an_exercise():
    ids = [ex for path in LESSONS for ex, _, _ in exercises.blocks(exercises.load(path))]
    assert len(ids) == len(set(ids))
    assert set(lessons.HINTS) == set(ids)


def test_both_versions_run_each_exercise_blank_then_solved():
    nb = exercises.load(ROOT / "notebooks" / "03_backward.ipynb")
    both = exercises.combined(nb)
    code = [exercises.source(c) for c in both["cells"] if c["cell_type"] == "code"]
    modes = [c.split('"')[-2] for c in code if "DYNGRAPH_EXERCISES" in c]
    assert modes[0] == "learner" and modes[1::2] == ["solution"] * len(exercises.blocks(nb))
    assert len({c["id"] for c in both["cells"]}) == len(both["cells"])
    solved = exercises.solution(nb)
    for ex, i, _ in exercises.blocks(nb):
        assert exercises.source(solved["cells"][i]) == exercises.solution_text(nb["cells"][i])
        checks = [c for c in code if f'check_answer("{ex}"' in c]
        assert len(checks) >= 2                  # once per version


def test_problems_finds_an_answer_read_outside_its_exercise():
    nb = exercises.load(ROOT / "notebooks" / "03_backward.ipynb")
    nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                        "execution_count": None, "source": ["print(my_freed)"]})
    assert any("reads 'my_freed'" in p for p in exercises.problems(nb, lessons.HINTS, "03"))
