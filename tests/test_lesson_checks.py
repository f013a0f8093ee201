"""check_answer and yes/no questions: a True/False answer must be a bool, and a bool is no
answer to a question about a number (in Python 0 == False and 1 == True)."""

from __future__ import annotations

import numpy as np
import pytest

from dyngraph import lessons


@pytest.fixture(autouse=True)
def _no_mode(monkeypatch):
    monkeypatch.delenv("DYNGRAPH_EXERCISES", raising=False)


@pytest.mark.parametrize("mine", [0, 0.0, "False", None, np.int64(0)])
def test_a_yes_no_question_refuses_an_answer_that_is_not_a_bool(capsys, mine):
    assert not lessons.check_answer("17.3", "equal weights", mine, False)
    out = capsys.readouterr().out
    assert out.startswith("17.3 equal weights: not yet: answer True or False, not "), out
    assert 'lessons.hint("17.3")' in out


@pytest.mark.parametrize("mine", [1, 1.0])
def test_one_is_not_true(capsys, mine):
    assert not lessons.check_answer("18.2", "accumulated", mine, True)
    assert "answer True or False" in capsys.readouterr().out


@pytest.mark.parametrize("mine, expected", [(False, False), (True, True),
                                            (np.bool_(False), False), (True, np.bool_(True))])
def test_a_bool_answers_a_yes_no_question(capsys, mine, expected):
    assert lessons.check_answer("17.3", "equal weights", mine, expected)
    assert capsys.readouterr().out == "17.3 equal weights: PASS\n"


def test_a_wrong_bool_is_wrong(capsys):
    assert not lessons.check_answer("17.3", "equal weights", True, False)
    assert "yours is True, which is not it" in capsys.readouterr().out


@pytest.mark.parametrize("mine, expected", [(True, 1), (False, 0), (True, 1.0)])
def test_a_bool_is_no_answer_to_a_number(capsys, mine, expected):
    assert not lessons.check_answer("13.1", "ratio", mine, expected)
    assert "a yes/no answer where a value is expected" in capsys.readouterr().out


def test_the_solution_version_raises_on_an_int_for_a_bool(monkeypatch, capsys):
    monkeypatch.setenv("DYNGRAPH_EXERCISES", "solution")
    with pytest.raises(AssertionError, match="should say PASS"):
        lessons.check_answer("17.3", "equal weights", 0, False)


def test_a_check_as_a_cells_last_line_adds_no_out_under_its_line():
    """In a notebook, ``lessons.check_answer(...)`` as a cell's last line printed its PASS and
    then IPython echoed ``Out: True``; a Verdict displays nothing (its line is printed)."""
    pytest.importorskip("IPython", reason="IPython is not installed (the jupyter extra)")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("from dyngraph import lessons")
    result = shell.run_cell('lessons.check_answer("17.3", "equal weights", False, False)')
    assert result.result.passed is True
    assert bool(lessons.check_answer("17.3", "equal weights", True, False)) is False
    formatted, _metadata = shell.display_formatter.format(result.result)
    assert formatted == {}  # nothing for the output area: no Out[...]
