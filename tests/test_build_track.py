"""The build-your-own track (lessons 22-27 and 29, issue 32): the engine the learner writes
there, taken from the lessons' own solutions, passes every step of dyngraph.engine_check; the
same engine with one typical mistake put in is named for that mistake; and the blank version is
"not attempted yet", never an error."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import dyngraph as dg
from dyngraph import lessons
from dyngraph.engine_check import STEPS, TRAIN_XS, TRAIN_YS, Engine, check_engine

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
    "27_build_a_tracer": ("27.1", STEPS[:6]),
    # lesson 29 builds on 26's engine (no tracer), in four exercises; 29.4 is the last
    "29_build_train": ("29.4", STEPS[:5] + ("constants", "train")),
}


def _lesson(name: str) -> dict:
    return exercises.load(ROOT / "notebooks" / f"{name}.ipynb")


def engine_cells(name: str, solved: bool = True) -> list[str]:
    """The code of a lesson up to its (last) exercise cell: the setup, the engine so far and
    the exercises, with the solutions filled in (or the learner's blanks). The check cells of
    an earlier exercise are left out: they check, and build nothing the engine needs."""
    nb = _lesson(name)
    spans = exercises.blocks(nb)
    cell_index = next(i for exercise, i, _ in spans if exercise == TRACK[name][0])
    checks = {k for _, i, j in spans for k in range(i + 1, j + 1)}
    if solved:
        nb = exercises.solution(nb)
    return [exercises.source(cell) for k, cell in enumerate(nb["cells"][:cell_index + 1])
            if cell["cell_type"] == "code" and k not in checks]


def build(cells: list[str]) -> tuple[Engine, dict]:
    """Run the lesson's cells as the notebook would; the learner's Engine and the namespace."""
    namespace: dict = {"__name__": "lesson"}
    for k, code in enumerate(cells):
        exec(compile(code, f"<lesson cell {k}>", "exec"), namespace)  # the lessons' own code
    Value = namespace["Value"]
    engine = Engine(value=Value, source=namespace["src"], no_grad=namespace.get("no_grad"),
                    local_grads=Value.local_grads, trace=namespace.get("trace"),
                    replay=namespace.get("replay"), mlp=namespace.get("MLP"),
                    train=namespace.get("train"))
    return engine, namespace


def with_mistakes(name: str, *changes: tuple[str, str]) -> Engine:
    """The lesson's solution engine with its exercises' solutions changed: each ``right``
    (which must be there exactly once, in the exercises' cells) replaced by its ``wrong``."""
    cells = engine_cells(name)
    solutions = _solution_texts(name)
    exercise_cells = [k for k, code in enumerate(cells) if code in solutions]
    for right, wrong in changes:
        assert sum(cells[k].count(right) for k in exercise_cells) == 1, (
            f"{name}'s solutions no longer have {right!r} exactly once")
        k = next(k for k in exercise_cells if right in cells[k])
        cells[k] = cells[k].replace(right, wrong)
    return build(cells)[0]


def _solution_texts(name: str) -> list[str]:
    nb = _lesson(name)
    return [exercises.solution_text(nb["cells"][i]) for _, i, _ in exercises.blocks(nb)]


def with_mistake(name: str, right: str, wrong: str) -> Engine:
    """The lesson's solution engine with one change in its exercise's solution."""
    return with_mistakes(name, (right, wrong))


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

# NOTE [derived wrong engines] Each typical mistake is the step's own solution with one change
# (two where the mistake needs both halves, as saving copies does). The checker must name it:
# the words below are the ones a learner acts on, and the right engine passes (above).
MISTAKES = {
    # 22: the forward, what it saves, the local derivatives
    "Mul's local derivatives swapped": (
        "22_build_a_value", "forward",
        [("return (y.data, x.data)", "return (x.data, y.data)")],
        ["local derivatives of Mul", "they are swapped", "in the inputs' order"]),
    "a wrong Add": (
        "22_build_a_value", "forward", [("return (1.0, 1.0)", "return (1.0, 0.0)")],
        ["local derivatives of Add (out = a + b) at a = 0.5, b = -1.5 are 1, 0 where "
         "dyngraph's are 1, 1"]),
    "one local derivative for two inputs": (
        "22_build_a_value", "forward", [("return (1.0, 1.0)", "return (1.0,)")],
        ["1 number(s) for its 2 input(s)", "one per input"]),
    "tanh's derivative from the input": (
        "22_build_a_value", "forward", [("(1 - t * t,)", "(1 - x.data * x.data,)")],
        ["local derivatives of Tanh", "1 - a², from the input", "t = tanh(a) is the output"]),
    "tanh's derivative without the square": (
        "22_build_a_value", "forward", [("(1 - t * t,)", "(1 - t,)")],
        ["local derivatives of Tanh (out = a.tanh()) at a = 0.5 are 0.537883 where dyngraph's "
         "are 0.786448"]),
    "Mul keeping numbers from forward": (
        "22_build_a_value", "forward",
        [('"Mul", (self, other))', '"Mul", (self.data, other.data))'),
         ("return (y.data, x.data)", "return (y, x)")],
        ["fixed in forward", "still 0.5", "saved=(self, other)"]),
    "Mul saving one input": (
        "22_build_a_value", "forward", [('"Mul", (self, other))', '"Mul", (self,))')],
        ["asking the local derivatives of Mul (out = a * b) raised ValueError",
         "must save every value they need"]),
    "a wrong Add forward": (
        "22_build_a_value", "forward", [("self.data + other.data", "self.data - other.data")],
        ["the value of `d` (Add in d = c + b) is", "check the forward of Add"]),
    # 23: the order and the chain rule
    "the recursion's order instead of a topological one": (
        "23_build_backward", "backward",
        [("            for i in v.inputs:\n                visit(i)\n"
          "            order.append(v)\n",
          "            order.insert(0, v)\n"
          "            for i in v.inputs:\n                visit(i)\n")],
        ["which uses it, had sent its share", "reverse topological order"]),
    "a value listed once per path": (
        "23_build_backward", "backward", [("if v not in seen:", "if True:")],
        ["more than once", "once per path", "remember the values you have seen"]),
    "overwriting at fan-in": (
        "23_build_backward", "backward",
        [("i.grad += local * self.grad", "i.grad = local * self.grad")],
        ["is used by 2 ops", "do not overwrite"]),
    "a missing chain-rule factor": (
        "23_build_backward", "backward", [("i.grad += local * self.grad", "i.grad += local")],
        ["local derivative alone", "gradient arriving from above"]),
    # 24: freeing and refusing
    "never freeing": (
        "24_build_freeing", "free",
        [("    for v in ops:\n        v.saved = None\n    src.freed(ops)\n", "    pass\n")],
        ["still keeps what backward saved", "src.freed"]),
    "reporting freed but keeping the values": (
        "24_build_freeing", "free", [("v.saved = None", "pass")],
        ["ran without an error", "not only reported freed"]),
    "a check_saved that does nothing": (
        "24_build_freeing", "free", [("if self.saved is None:", "if False:")],
        ["a second backward() raised TypeError", "tripping over what it reads, not a refusal",
         "'Trying to backward through the graph a second time'"]),
    "refusing with the wrong kind of error": (
        "24_build_freeing", "free",
        [("raise RuntimeError(f\"Trying", "raise ValueError(f\"Trying")],
        ["raised ValueError: Trying", "refuse with a RuntimeError, as PyTorch does"]),
    "refusing every backward": (
        "24_build_freeing", "free", [("if self.saved is None:", "if True:")],
        ["the first backward() raised RuntimeError",
         "Refuse only a graph that a backward already freed"]),
    # 25: versions
    "add_ that does not count": (
        "25_build_versions", "versions", [("    self.version += 1\n", "")],
        ["gave a.grad, b.grad = 42, 28", "has 36, 24", "read the new h in backward",
         "silently wrong", "modified by an inplace operation"]),
    "comparing with version 0": (
        "25_build_versions", "versions", [("if v.version != seen:", "if v.version != 0:")],
        ["changed before any op saved it", "not with 0"]),
    "no add_": (
        "25_build_versions", "versions",
        [("@method_of(Value)\ndef add_", "def add_")],
        ["raised AttributeError", "before backward", "does your engine have add_?"]),
    "add_ that does not change the value": (
        "25_build_versions", "versions", [("    self.data += other.data\n", "")],
        ["`y = h * h` after h.add_ is 36 where dyngraph's is 49",
         "add_ must change h's value"]),
    "add_ that does not report": (
        "25_build_versions", "versions", [("    src.version_bumped(self, self.version)\n", "")],
        ["did not report h's new version", "src.version_bumped"]),
    "a version refusal of the wrong kind": (
        "25_build_versions", "versions",
        [('raise RuntimeError(f"one of the values', 'raise ValueError(f"one of the values')],
        ["raised ValueError", "refuse with a RuntimeError"]),
    "the version check without lesson 24's": (
        "25_build_versions", "free", [("    if self.saved is None:\n", "    if False:\n")],
        ["a second backward() raised TypeError", "not a refusal", "Refuse before"]),
    # 26: grad mode
    "recording inside no_grad": (
        "26_build_no_grad", "no_grad",
        [('    if not Value.grad_enabled:\n        return type(self)(data, op="no_grad")\n', "")],
        ["recorded `c = a * b` made inside no_grad()"]),
    "a no_grad result that keeps its inputs": (
        "26_build_no_grad", "no_grad",
        [('return type(self)(data, op="no_grad")', "return type(self)(data, inputs, op, saved)")],
        ["a.grad = 12 where dyngraph's is 6", "went on through `c = a * b`",
         "keep no inputs and save nothing"]),
    "grad mode left off after an error": (
        "26_build_no_grad", "no_grad",
        [("    try:\n        yield\n    finally:\n        Value.grad_enabled = before\n",
          "    yield\n    Value.grad_enabled = before\n")],
        ["after a no_grad() block that raised", "finally:"]),
    "grad mode turned on, not restored": (
        "26_build_no_grad", "no_grad",
        [("Value.grad_enabled = before\n", "Value.grad_enabled = True\n")],
        ["nested no_grad()", "back to what it was before the block, not to on"]),
    "grad mode never back on": (
        "26_build_no_grad", "no_grad", [("Value.grad_enabled = before\n", "pass\n")],
        ["did not record `d = c * a`", "grad mode must come back on"]),
    # 27: the tracer
    "a replay that runs the Python again": (
        "27_build_a_tracer", "trace",
        [("    tape = fn(*leaves).topological_order()       # each value after its inputs\n"
          "    return leaves, tape\n", "    return leaves, fn\n"),
         ("    new = dict(zip(leaves, new_inputs))\n",
          "    return tape(*(Value(x) for x in new_inputs)).data\n")],
        ["gave -4 where dyngraph's and PyTorch's tracers give 4", "ran the Python",
         "without calling the function"]),
    "a replay that keeps the traced numbers": (
        "27_build_a_tracer", "trace",
        [("new[v] = FORWARD[v.op](*(new[i] for i in v.inputs))", "new[v] = v.data")],
        ["your replay at -1.2 gave 0.635149", "f at the traced input",
         "each op compute from its inputs' new numbers"]),
    "a replay that returns the first value": (
        "27_build_a_tracer", "trace", [("return new[tape[-1]]", "return new[tape[0]]")],
        ["traced at 0.5, your replay at 0.5 gave 0.5", "return the number of its last value"]),
    # 29: a number on either side, zero_grad, the MLP, the loop
    "2 * a without __rmul__": (
        "29_build_train", "constants", [("@method_of(Value)\ndef __rmul__", "def __rmul__")],
        ["`2 * a` raised TypeError: unsupported operand type(s) for *: 'int' and 'Value'",
         "Python asks your Value's __rmul__"]),
    "a mean without __rmul__": (
        "29_build_train", "train", [("@method_of(Value)\ndef __rmul__", "def __rmul__")],
        ["train raised TypeError: unsupported operand type(s) for *: 'float' and 'Value'",
         "your Value's __rmul__"]),
    "__rsub__ that computes self - other": (
        "29_build_train", "constants", [("return (-self) + other", "return self + (-other)")],
        ["`1 - a` at a = 1.5 is 0.5 where dyngraph's is -0.5",
         "a.__rsub__(number) for 1 - a", "compute other - self"]),
    "-a as a new Value": (
        "29_build_train", "constants", [("return self * -1", "return Value(-self.data)")],
        ["`-a` at a = 1.5 is right (-1.5), but backward gives a.grad = 0 where dyngraph's is -1",
         "not as a new Value of a number"]),
    "a number not wrapped": (
        "29_build_train", "constants", [("return Value(float(x))", "return x")],
        ["`a + 1` raised AttributeError", "wrap it as a constant Value (as_value)"]),
    "zero_grad forgotten": (
        "29_build_train", "train", [("        zero_grad(model.parameters())\n", "")],
        ["your loss at step 2 is", "a run that never zeroes the gradients",
         "Call zero_grad(model.parameters()) at the start of each step"]),
    "a zero_grad that does nothing": (
        "29_build_train", "train", [("        p.grad = 0.0\n", "        pass\n")],
        ["a run that never zeroes the gradients"]),
    "a zero_grad that sets None": (
        "29_build_train", "train", [("p.grad = 0.0", "p.grad = None")],
        ["train raised TypeError", "'NoneType'", "zero_grad must set it to 0.0"]),
    "zero_grad between backward and the update": (
        "29_build_train", "train",
        [("        zero_grad(model.parameters())\n        loss = mse(model, xs, ys)\n"
          "        loss.backward()\n",
          "        loss = mse(model, xs, ys)\n        loss.backward()\n"
          "        zero_grad(model.parameters())\n")],
        ["your loss never changed", "not between backward and the update"]),
    "the update with the wrong sign": (
        "29_build_train", "train", [("p.data -= lr * p.grad", "p.data += lr * p.grad")],
        ["your loss at step 1 is", "an update with the wrong sign",
         "Step against it: p.data -= lr * p.grad"]),
    "parameters() without the biases": (
        "29_build_train", "train", [("return self.w + [self.b]", "return self.w")],
        ["lists 12 values where the MLP has 17", "The 5 biases are missing"]),
    "tanh at the output too": (
        "29_build_train", "train",
        [("return act.tanh() if self.nonlin else act", "return act.tanh()")],
        ["your loss at step 0 is", "before any update", "the output b + w·h without tanh"]),
    "a neuron without its bias": (
        "29_build_train", "train",
        [("sum((wi * xi for wi, xi in zip(self.w, x)), self.b)",
          "sum(wi * xi for wi, xi in zip(self.w, x))")],
        ["your loss at step 1 is", "a net whose biases never change",
         "start each neuron's sum from its bias"]),
}


@pytest.mark.parametrize("mistake", MISTAKES)
def test_each_derived_wrong_engine_is_named_by_its_step(mistake):
    lesson, step, changes, words = MISTAKES[mistake]
    result = check_engine(with_mistakes(lesson, *changes), step)
    assert result.status == "not yet", result
    for said in words:
        assert said in result.message, (said, result.message)


def test_lesson_29_blank_is_not_attempted_at_each_of_its_steps_and_trains_on_the_checkers_data():
    engine, namespace = build(engine_cells("29_build_train", solved=False))
    for step in ("constants", "train"):
        assert check_engine(engine, step).status == "not attempted yet"
    assert namespace["xs"] == [list(x) for x in TRAIN_XS] and namespace["ys"] == list(TRAIN_YS)


def test_the_recursion_order_marks_the_node_reported_too_early():
    _, step, changes, _ = MISTAKES["the recursion's order instead of a topological one"]
    result = check_engine(with_mistakes("23_build_backward", *changes), step)
    (node,) = result.marked  # drawn dashed vermillion in the picture under the message
    assert any(line.startswith(f"  n{node} [") and "dashed" in line
               for line in result.to_dot().splitlines())


def test_a_wrong_local_derivative_of_the_engine_so_far_is_named_in_backward():
    # lesson 23 starts from lesson 22's Value: a mistake left there is named by 23's step too
    cells = engine_cells("23_build_backward")
    engine_so_far = next(k for k, code in enumerate(cells) if "class Value" in code)
    assert cells[engine_so_far].count("(1 - t * t,)") == 1
    cells[engine_so_far] = cells[engine_so_far].replace("(1 - t * t,)", "(1 - t,)")
    result = check_engine(build(cells)[0], "backward")
    assert result.status == "not yet"
    assert "Check the local derivative that" in result.message and "Tanh" in result.message


def test_without_the_check_the_track_engine_computes_the_wrong_gradient_pytorch_does():
    # lesson 25: the ops save h itself and compute the local derivatives in backward, so
    # h.add_ after y = h * h is read by backward: 42 and 28 where y = (a*b)**2 at a = 2,
    # b = 3 has 36 and 24; PyTorch with its counter bypassed (.data) gives the same
    engine = with_mistake("25_build_versions", "        if v.version != seen:\n",
                          "        if False:\n")
    a, b = engine.leaf(2.0), engine.leaf(3.0)
    h = a * b
    y = h * h
    h.add_(engine.leaf(1.0))
    y.backward()
    assert (a.grad, b.grad) == (42.0, 28.0) and h.data == 7.0
    torch = pytest.importorskip("torch")
    a_t, b_t = (torch.tensor(x, requires_grad=True, dtype=torch.float64) for x in (2.0, 3.0))
    h_t = a_t * b_t
    y_t = h_t * h_t
    h_t.data.add_(1.0)
    y_t.backward()
    assert (a_t.grad.item(), b_t.grad.item()) == (42.0, 28.0)
    result = check_engine(engine, "versions")
    assert result.status == "not yet" and "gave a.grad, b.grad = 42, 28" in result.message


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
