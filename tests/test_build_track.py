"""The build-your-own track (lessons 22-27, issue 32): the engine the learner writes there, taken
from the lessons' own solutions, passes every step of dyngraph.engine_check; the same engine with
one typical mistake put in is named for that mistake; and the blank version is "not attempted
yet", never an error."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import dyngraph as dg
from dyngraph import lessons
from dyngraph.engine_check import STEPS, Engine, check_engine

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("exercises", ROOT / "tools" / "exercises.py")
exercises = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exercises)

# each lesson of the track with its exercise and the steps its engine has reached
TRACK = {
    "22_build_a_value": ("22.1", STEPS[:1]),
    "23_build_backward": ("23.1", STEPS[:2]),
    "24_build_freeing": ("24.1", STEPS[:3]),
    "25_build_versions": ("25.1", STEPS[:4]),
    "26_build_no_grad": ("26.1", STEPS[:5]),
}


def _lesson(name: str) -> dict:
    return exercises.load(ROOT / "notebooks" / f"{name}.ipynb")


def engine_cells(name: str, solved: bool = True) -> list[str]:
    """The code of a lesson up to its exercise cell: the setup, the engine so far and the
    exercise, with the solution filled in (or the learner's blank)."""
    nb = _lesson(name)
    exercise, cell_index, _ = exercises.blocks(nb)[0]
    assert exercise == TRACK[name][0]
    if solved:
        nb = exercises.solution(nb)
    return [exercises.source(cell) for cell in nb["cells"][:cell_index + 1]
            if cell["cell_type"] == "code"]


def build(cells: list[str]) -> tuple[Engine, dict]:
    """Run the lesson's cells as the notebook would; the learner's Engine and the namespace."""
    namespace: dict = {"__name__": "lesson"}
    for k, code in enumerate(cells):
        exec(compile(code, f"<lesson cell {k}>", "exec"), namespace)  # the lessons' own code
    engine = Engine(value=namespace["Value"], source=namespace["src"],
                    no_grad=namespace.get("no_grad"))
    return engine, namespace


def with_mistake(name: str, right: str, wrong: str) -> Engine:
    """The lesson's solution engine with one change in its exercise's solution: ``right``
    (which must be there exactly once) replaced by ``wrong``."""
    cells = engine_cells(name)
    assert cells[-1].count(right) == 1, f"{name}'s solution no longer has {right!r}"
    cells[-1] = cells[-1].replace(right, wrong)
    return build(cells)[0]


@pytest.mark.parametrize("name", TRACK)
def test_the_track_solution_engine_passes_each_step_it_has_reached(name):
    engine, _ = build(engine_cells(name))
    for step in TRACK[name][1]:
        result = check_engine(engine, step)
        assert result.passed, result


@pytest.mark.parametrize("name", TRACK)
def test_the_blank_engine_is_not_attempted_yet(name):
    engine, _ = build(engine_cells(name, solved=False))
    step = TRACK[name][1][-1]  # the step this lesson's exercise is about
    assert check_engine(engine, step).status == "not attempted yet"


def test_the_solution_engine_computes_the_gradients_pytorch_does():
    _, namespace = build(engine_cells("23_build_backward"))
    Value = namespace["Value"]
    a, b = Value(0.8), Value(-0.3)
    c = a * b
    f = (c * (c + a)).tanh()
    f.backward()
    # by hand: f = tanh(a²b² + a²b), df/da = (1 - f²)(2ab² + 2ab), df/db = (1 - f²)(2a²b + a²)
    u = (0.8 * -0.3) ** 2 + 0.8 ** 2 * -0.3
    outer = 1 - math.tanh(u) ** 2
    assert math.isclose(a.grad, outer * (2 * 0.8 * 0.09 + 2 * 0.8 * -0.3), rel_tol=1e-12)
    assert math.isclose(b.grad, outer * (2 * 0.64 * -0.3 + 0.64), rel_tol=1e-12)


# --------------------------------------------------------------------- the typical mistakes

def test_recursion_order_instead_of_topological_is_named():
    # each value put in the order before its inputs are visited: the recursion from the root
    engine = with_mistake("23_build_backward",
                          "            for i in v.inputs:\n                visit(i)\n"
                          "            order.append(v)\n",
                          "            order.insert(0, v)\n"
                          "            for i in v.inputs:\n                visit(i)\n")
    result = check_engine(engine, "backward")
    assert result.status == "not yet"
    assert "which uses it, had sent its share" in result.message
    assert "reverse topological order" in result.message and result.marked


def test_overwriting_instead_of_summing_at_fan_in_is_named():
    engine = with_mistake("23_build_backward", "i.grad += local * self.grad",
                          "i.grad = local * self.grad")
    result = check_engine(engine, "backward")
    assert result.status == "not yet"
    assert "is used by 2 ops" in result.message and "do not overwrite" in result.message


def test_a_missing_chain_rule_factor_is_named():
    engine = with_mistake("23_build_backward", "i.grad += local * self.grad", "i.grad += local")
    result = check_engine(engine, "backward")
    assert result.status == "not yet" and "local derivative alone" in result.message


def test_a_wrong_local_derivative_names_its_op():
    engine = with_mistake("22_build_a_value", "(1 - t * t,)", "(1 - t,)")
    assert check_engine(engine, "forward").passed  # the forward is still right
    cells = engine_cells("23_build_backward")  # lesson 23 starts from that Value
    engine_so_far = next(k for k, code in enumerate(cells) if "class Value" in code)
    assert cells[engine_so_far].count("(1 - t * t,)") == 1
    cells[engine_so_far] = cells[engine_so_far].replace("(1 - t * t,)", "(1 - t,)")
    result = check_engine(build(cells)[0], "backward")
    assert result.status == "not yet"
    assert "Check the local derivative that" in result.message and "Tanh" in result.message


def test_an_engine_that_never_frees_is_named():
    engine = with_mistake("24_build_freeing",
                          "    for v in ops:\n        v.local_grads = None\n    src.freed(ops)\n",
                          "    pass\n")
    result = check_engine(engine, "free")
    assert result.status == "not yet"
    assert "still keeps what backward saved" in result.message and result.marked


def test_a_version_check_that_never_fires_is_named():
    # add_ changes the value but forgets to count the change
    engine = with_mistake("25_build_versions", "    self.version += 1\n", "")
    result = check_engine(engine, "versions")
    assert result.status == "not yet"
    assert "modified by an inplace operation" in result.message


def test_without_the_check_the_track_engine_keeps_the_right_gradient():
    # lesson 25's prose: the track's ops compute local derivatives in forward, so h.add_ after
    # y = h * h cannot reach them; the gradient stays that of the forward that ran, (a*b)**2 at
    # a = 2, b = 3 (when the ops save inputs instead, issue 38 item 2, this becomes 42 and 28)
    engine = with_mistake("25_build_versions", "        if i.version != saved:\n",
                          "        if False:\n")
    a, b = engine.leaf(2.0), engine.leaf(3.0)
    h = a * b
    y = h * h
    h.add_(engine.leaf(1.0))
    y.backward()
    assert (a.grad, b.grad) == (36.0, 24.0) and h.data == 7.0
    result = check_engine(engine, "versions")
    assert result.status == "not yet" and "your gradient is still right" in result.message


def test_a_version_compared_with_zero_is_named():
    engine = with_mistake("25_build_versions", "if i.version != saved:", "if i.version != 0:")
    result = check_engine(engine, "versions")
    assert result.status == "not yet" and "not with 0" in result.message


def test_recording_inside_no_grad_is_named():
    engine = with_mistake("26_build_no_grad",
                          '    if not Value.grad_enabled:\n'
                          '        return type(self)(data, op="no_grad")\n', "")
    result = check_engine(engine, "no_grad")
    assert result.status == "not yet" and "inside no_grad()" in result.message


# --------------------------------------------------------------------- the tracer (lesson 27)

def test_the_tracer_replays_what_dg_trace_replays():
    nb = exercises.solution(_lesson("27_build_a_tracer"))
    _, cell_index, _ = exercises.blocks(nb)[0]
    namespace: dict = {"__name__": "lesson"}
    for cell in nb["cells"][:cell_index + 1]:
        if cell["cell_type"] == "code":
            exec(exercises.source(cell), namespace)  # the lesson's own code
    trace, replay, f = namespace["trace"], namespace["replay"], namespace["f"]
    graph = dg.trace(f, dg.tensor(0.5, dtype=dg.float64))
    leaves, tape = trace(f, 0.5)
    for new in (-1.2, 0.0, 2.5):
        expected = graph.run(dg.tensor(new, dtype=dg.float64)).item()
        assert math.isclose(replay(leaves, tape, new), expected, rel_tol=1e-12)
        assert math.isclose(expected, math.tanh(new * new + new), rel_tol=1e-12)


# --------------------------------------------------------------------- the lessons' check line

def test_check_engine_step_says_what_check_answer_says(monkeypatch, capsys):
    monkeypatch.delenv("DYNGRAPH_EXERCISES", raising=False)
    right = check_engine(build(engine_cells("23_build_backward"))[0], "backward")
    blank = check_engine(build(engine_cells("23_build_backward", solved=False))[0], "backward")
    wrong = check_engine(with_mistake("23_build_backward", "i.grad += local * self.grad",
                                      "i.grad = local * self.grad"), "backward")
    capsys.readouterr()  # what running the lesson's cells printed ("PyTorch is not installed")
    assert lessons.check_engine_step("23.1", right)
    assert capsys.readouterr().out == "23.1 backward: PASS\n"
    assert not lessons.check_engine_step("23.1", blank)
    out = capsys.readouterr().out
    assert out.startswith("23.1 backward: not attempted yet (") and 'hint("23.1")' in out
    assert not lessons.check_engine_step("23.1", wrong)
    out = capsys.readouterr().out
    assert out.startswith("23.1 backward: not yet: the gradient of") and 'hint("23.1")' in out
    # the versions that make test runs: each must say what it is expected to say
    monkeypatch.setenv("DYNGRAPH_EXERCISES", "solution")
    for result in (blank, wrong):
        with pytest.raises(AssertionError, match="should say PASS"):
            lessons.check_engine_step("23.1", result)
    monkeypatch.setenv("DYNGRAPH_EXERCISES", "learner")
    with pytest.raises(AssertionError, match="should say not attempted yet"):
        lessons.check_engine_step("23.1", right)


def test_method_of_adds_a_method_to_the_engine_so_far():
    class Number:
        def __init__(self, data):
            self.data = data

    @lessons.method_of(Number)
    def doubled(self):
        return self.data * 2

    assert Number(3).doubled() == 6 and doubled(Number(4)) == 8


def test_watch_beside_draws_both_engines_and_says_when_one_is_blank(capsys):
    _, namespace = build(engine_cells("23_build_backward"))
    fan_in = namespace["fan_in"]
    lessons.watch_beside(fan_in, build(engine_cells("23_build_backward"))[0], backward=True)
    out = capsys.readouterr().out  # outside a notebook dg.watch prints an outline
    assert out.count("f = Tanh(e") == 2 and "not attempted yet" not in out  # both engines
    lessons.watch_beside(fan_in, build(engine_cells("23_build_backward", solved=False))[0],
                         backward=True)
    out = capsys.readouterr().out
    assert "your engine: not attempted yet" in out and "dyngraph: not attempted" not in out
