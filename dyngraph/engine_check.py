"""Checking an engine a learner builds against dyngraph's own, event by event (the build-your-own
track, issue 32).

The learner's engine reports what it does through a ``dg.EventSource`` (spine/reporter.py).
The checker runs the same small programs on that engine and on dyngraph (float64 scalars),
records both event streams, and names the *first* difference in words a learner can act on,
with a picture that marks it:

>>> result = check_engine(Engine(value=Value, source=src), "backward")
>>> result
backward: not yet: your engine reported the gradient of `a` before `c` (Mul, line 4), which
uses `a`, had sent its share: `a`'s gradient is missing the path through `c`. ...

NOTE [what is compared] Nodes are matched by the order they were made (both engines run the
same program, so the k-th node is the same value), ops by name up to spelling (``Mul``,
``mul``, ``*``). Then, for each step of the track:
- ``forward``: the nodes, their ops, their inputs and their values; and, when the engine says
  how to ask a node for them (``Engine(local_grads=...)``), each op's local derivatives, which
  must be computed in backward from what the op saved (NOTE [saved, not copied]);
- ``backward``: the order of the gradients (a node's gradient is complete only after every
  node that uses it has sent its share: a topological order, each node once) and their
  values. A wrong value is explained when it matches a known mistake: one path's share only
  (overwriting instead of summing at fan-in), or the local derivatives without the upstream
  gradient (a missing chain-rule factor); otherwise the op whose local derivative sent it is
  named;
- ``free``: after ``backward()`` what backward saved is released (``graph_freed``), and a second
  ``backward()`` through the freed graph is *refused* (PyTorch's RuntimeError, "Trying to
  backward through the graph a second time"), not tripped over (a TypeError from reading what
  was freed is an accident, and says so);
- ``versions``: a value changed in place after an op saved it makes backward refuse (a
  RuntimeError, "modified by an inplace operation"), and one changed before any op saved it
  gives dyngraph's values and gradients; an error in the forward is not the refusal;
- ``no_grad``: nothing made inside ``no_grad()`` joins the graph or passes gradients back,
  and grad mode comes back as it was after the block, nested or raising;
- ``trace``: a tape replays the ops of the run it recorded, not the Python that chose them
  (``Engine(trace=..., replay=...)``, lesson 27);
- ``constants``: a number on either side of ``+ * -`` and ``-a`` give dyngraph's values and
  gradients, one op at a time (lesson 29: ``2 * a`` asks the Value's ``__rmul__``);
- ``train``: the learner's MLP (``Engine(mlp=...)``) trained by the learner's ``train`` with
  plain SGD gives, from the same weights, dyngraph's loss at every step and its final weights
  (NOTE [training from the same weights]).
The programs of the first six steps use only leaves made by the engine (no Python constants),
the ops ``+ * tanh`` (and ``add_`` for in-place), so a first engine can run all of them.

NOTE [saved, not copied] The track's engine saves for backward what PyTorch's ops save, the
values themselves (``Mul`` its two inputs), and computes the local derivatives from them in
backward. A value changed in place after the op saved it is then *read* by backward, and the
gradient is silently wrong: this is why the version counter of step ``versions`` exists. An
engine that keeps numbers computed in forward cannot see the change, and its counter would
guard nothing; the forward step says so when ``Mul``'s local derivatives do not follow a change
of its input.
"""

from __future__ import annotations

import linecache
import math
import operator
import os
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .graph import Node
from .record import Recording, record

STEPS = ("forward", "backward", "free", "versions", "no_grad", "trace", "constants", "train")


@dataclass
class Engine:
    """What the checker needs of a learner's engine: how to make a leaf from a number, the
    EventSource it reports through, and, for the steps that need them, how to ask an op's
    output for its local derivatives (``forward``), its ``no_grad`` (``no_grad``), and its
    ``trace(fn, *examples) -> (leaves, tape)`` and ``replay(leaves, tape, *new_inputs)``
    (``trace``), and its ``MLP(n_inputs, layer_sizes)`` and ``train(model, xs, ys, steps, lr)
    -> losses`` (``train``). The local-derivative check sets an input's ``.data`` after the
    forward (NOTE [saved, not copied]), so values that take part in it have a ``.data``."""

    value: Callable[[float], Any]
    source: Any  # the engine's dg.EventSource
    no_grad: Callable[[], Any] | None = None
    local_grads: Callable[[Any], Sequence[float]] | None = None
    trace: Callable[..., Any] | None = None
    replay: Callable[..., float] | None = None
    mlp: Callable[..., Any] | None = None
    train: Callable[..., Sequence[float]] | None = None

    def leaf(self, x: float) -> Any:
        return self.value(x)


@dataclass
class CheckResult:
    """The outcome of one step: ``status`` is "PASS", "not yet" or "not attempted yet";
    ``message`` says what differs; ``yours`` / ``reference`` are the recordings compared."""

    step: str
    status: str
    message: str = ""
    yours: Recording | None = None
    reference: Recording | None = None
    marked: set[int] = field(default_factory=set)  # ids of your nodes the message is about

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def __repr__(self) -> str:
        return f"{self.step}: {self.status}" + (f": {self.message}" if self.message else "")

    def to_dot(self) -> str:
        """Your engine's graph with the node the message is about marked (dashed vermillion)."""
        from .dot import to_dot

        if self.yours is None:
            return "digraph dyngraph {}"
        marks = {node_id: "only in A" for node_id in self.marked}
        return to_dot(self.yours, marks=marks, summarize_loops=False,
                      title=f"your engine ({self.step}): {self.status}")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from .graphviz_render import picture

        bundle = picture(self.to_dot(), repr(self)) if self.yours is not None else {}
        bundle["text/plain"] = repr(self)
        return bundle


# --------------------------------------------------------------------------- the programs


def reference_engine() -> Engine:
    """dyngraph itself in the Engine shape: leaves are float64 scalar tensors that require grad
    (what the learner's engine is compared with, and drawn beside in the lessons)."""
    import numpy as np

    from . import factories, grad_mode

    def value(x: float) -> Any:
        return factories.tensor(float(x), dtype=np.float64, requires_grad=True)

    return Engine(value=value, source=None, no_grad=grad_mode.no_grad)


# NOTE [the programs are the learner's lines] The programs run as code of a file of their own,
# "track_programs.py" (in linecache, so tracebacks and the widget show its lines): frames of the
# dyngraph package are passed over when the engines look for the learner's line, and these must
# be found, so that nodes get their names (`c` in c = a * b) and messages can quote the line.
PROGRAM_FILE = "track_programs.py"
PROGRAM_SOURCE = """\
def chain(E):
    a = E.leaf(0.5)
    b = E.leaf(-1.5)
    c = a * b
    d = c + b
    e = d.tanh()
    return e


def fan_in(E):
    a = E.leaf(0.8)
    b = E.leaf(-0.3)
    c = a * b
    d = c + a
    e = c * d
    f = e.tanh()
    return f


def square(E):
    a = E.leaf(1.5)
    b = a * a
    c = b + a
    return c


def saved_then_changed(E):
    a = E.leaf(2.0)
    b = E.leaf(3.0)
    h = a * b
    y = h * h
    h.add_(E.leaf(1.0))
    return y


def saved_and_kept(E):
    a = E.leaf(2.0)
    b = E.leaf(3.0)
    h = a * b
    y = h * h
    return y


def changed_then_used(E):
    a = E.leaf(2.0)
    b = E.leaf(3.0)
    h = a * b
    h.add_(E.leaf(1.0))
    y = h * h
    return y


def inside_no_grad(E):
    a = E.leaf(2.0)
    b = E.leaf(3.0)
    with E.no_grad():
        c = a * b
    d = c * a
    return d


def nested_no_grad(E):
    a = E.leaf(2.0)
    with E.no_grad():
        with E.no_grad():
            b = a * a
        c = b * a
    d = a * a
    return d


def error_inside_no_grad(E):
    a = E.leaf(2.0)
    try:
        with E.no_grad():
            raise ValueError("an error inside the block")
    except ValueError:
        pass
    d = a * a
    return d


def f(x):
    return (x * x + x).tanh()


def g(x):
    return x * x if x.data > 0 else x + x


def mlp(p, x):
    # lesson 29's MLP(2, [4, 1]), op for op, on its 17 parameters p in micrograd's order
    hidden = [sum((w * xi for w, xi in zip(p[3 * n:3 * n + 2], x)), p[3 * n + 2]).tanh()
              for n in range(4)]
    out = sum((w * h for w, h in zip(p[12:16], hidden)), p[16])
    return out


def mse(p, xs, ys):
    # lesson 29's loss: the mean squared error of mlp on the points xs
    errors = [mlp(p, x) - y for x, y in zip(xs, ys)]
    loss = (1 / len(xs)) * sum(e * e for e in errors)
    return loss
"""


def _programs() -> dict[str, Callable[..., Any]]:
    linecache.cache[PROGRAM_FILE] = (len(PROGRAM_SOURCE), None,
                                     PROGRAM_SOURCE.splitlines(True), PROGRAM_FILE)
    namespace: dict[str, Any] = {}
    exec(compile(PROGRAM_SOURCE, PROGRAM_FILE, "exec"), namespace)  # our own text, above
    return {name: fn for name, fn in namespace.items() if callable(fn)}


PROGRAMS = _programs()
STEP_PROGRAMS = {"forward": ("chain", "fan_in"), "backward": ("chain", "fan_in", "square")}


# --------------------------------------------------------------------------- checking


def check_engine(engine: Engine, step: str) -> CheckResult:
    """Run step ``step`` of the track (one of STEPS) on ``engine`` and on dyngraph, and say
    how they differ (NOTE [what is compared])."""
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}: the steps are {', '.join(STEPS)}")
    if not isinstance(engine, Engine):
        raise TypeError("check_engine needs an Engine(value=YourValue, source=your_source), got "
                        f"{type(engine).__name__}")
    try:
        return _CHECKS[step](engine)
    except NotImplementedError:
        return CheckResult(step, "not attempted yet",
                           "fill in the parts of your engine that raise NotImplementedError")


@dataclass
class _Run:
    """One program recorded on one engine: what it returned, and what it raised where."""

    rec: Recording
    out: Any = None
    error: BaseException | None = None
    in_backward: bool = False  # the error came from backward(), not from the forward


def _run(program: Callable, engine: Engine, backward: bool) -> _Run:
    """Record ``program`` on ``engine`` (and its backward): the recording, and what it raised."""
    with record() as rec:
        run = _Run(rec)
        try:
            run.out = program(engine)
            if backward:
                run.in_backward = True
                run.out.backward()
        except NotImplementedError:
            raise
        except Exception as exc:  # the learner's engine may raise anything: report, not crash
            run.error = exc
    return run


def _check_programs(engine: Engine, step: str, backward: bool) -> CheckResult:
    reference = reference_engine()
    for name in STEP_PROGRAMS[step]:
        ref = _run(PROGRAMS[name], reference, backward)
        assert ref.error is None, ref.error  # dyngraph runs its own programs
        yours = _run(PROGRAMS[name], engine, backward)
        if yours.error is not None:
            return CheckResult(step, "not yet", f"your engine raised {_raised(yours.error)} in "
                               f"{name}", yours.rec, ref.rec)
        problem = _compare_forward(yours.rec, ref.rec)
        if problem is None and backward:
            problem = _compare_backward(yours.rec, ref.rec)
        if problem is not None:
            message, marked = problem
            return CheckResult(step, "not yet", message, yours.rec, ref.rec, marked)
    if step == "forward" and engine.local_grads is not None:
        message = _check_local_grads(engine)
        if message:
            return CheckResult(step, "not yet", message, yours.rec, ref.rec)
    return CheckResult(step, "PASS", "", yours.rec, ref.rec)


# NOTE [one op at a time] Each op's local derivatives are asked of one node made from two
# leaves that differ (0.5 and -1.5), so that a swap, a constant and the input-for-output
# mistake of tanh each give numbers of their own. dyngraph's are its gradients of that one op.
LOCAL_POINT = (0.5, -1.5)
ONE_OP = {"Add": (operator.add, "out = a + b"), "Mul": (operator.mul, "out = a * b"),
          "Tanh": (lambda x: x.tanh(), "out = a.tanh()")}


def _check_local_grads(engine: Engine) -> str | None:
    """The first op whose local derivatives differ from dyngraph's, said as a learner can act
    on it; then whether Mul's follow a change of its input (NOTE [saved, not copied])."""
    reference = reference_engine()
    for op, (make, code) in ONE_OP.items():
        xs = LOCAL_POINT[:1] if op == "Tanh" else LOCAL_POINT
        ref_leaves = [reference.leaf(x) for x in xs]
        make(*ref_leaves).backward()
        want = tuple(float(leaf.grad.item()) for leaf in ref_leaves)
        try:
            out = make(*(engine.leaf(x) for x in xs))
            mine = tuple(float(local) for local in engine.local_grads(out))
        except NotImplementedError:
            raise
        except Exception as error:
            return (f"asking the local derivatives of {op} ({code}) raised "
                    f"{_raised(error)}: they are computed from what the op saved, so the op "
                    "must save every value they need")
        at = ", ".join(f"{name} = {x:g}" for name, x in zip("ab", xs))
        if len(mine) != len(want):
            return (f"the local derivatives of {op} ({code}) are {len(mine)} number(s) for its "
                    f"{len(want)} input(s): give one per input, in the inputs' order")
        if _close(mine, want):
            continue
        said = (f"the local derivatives of {op} ({code}) at {at} are {_numbers(mine)} where "
                f"dyngraph's are {_numbers(want)}")
        if len(want) == 2 and _close(mine, want[::-1]):
            return (f"{said}: they are swapped. Give them in the inputs' order: d out/d a "
                    "first, then d out/d b (for a product, each is the *other* input)")
        if op == "Tanh" and math.isclose(mine[0], 1 - xs[0] ** 2):
            return (f"{said}: yours is 1 - a², from the input. tanh's derivative is 1 - t², "
                    "where t = tanh(a) is the output")
        return f"{said}: check what your local derivatives of {op} compute"
    return _follows_saved(engine)


def _follows_saved(engine: Engine) -> str | None:
    """None when Mul's local derivatives are computed from the values it saved; else what
    shows they were kept as numbers from forward."""
    a, b = engine.leaf(LOCAL_POINT[0]), engine.leaf(LOCAL_POINT[1])
    out = a * b
    a.data = 4.0  # by hand, after the forward: what Mul saved is `a` itself, so it sees 4
    try:
        mine = float(engine.local_grads(out)[1])
    except Exception as error:  # saved numbers, read as values: also a sign of copies
        return (f"asking the local derivatives of Mul (out = a * b) raised {_raised(error)}: "
                "save the values themselves (saved=(self, other)), not their numbers")
    if math.isclose(mine, 4.0):
        return None
    return (f"your Mul's local derivatives were fixed in forward: after `a` changed from "
            f"{LOCAL_POINT[0]:g} to 4 (a.data = 4.0, after out = a * b), d out/d b was still "
            f"{mine:g}. Save the values themselves (saved=(self, other)) and compute the "
            "local derivatives from them when backward asks, as PyTorch's saved tensors do "
            "(lesson 25 shows what this changes)")


def _check_free(engine: Engine) -> CheckResult:
    reference = reference_engine()
    ref = _run(PROGRAMS["chain"], reference, backward=True)
    yours = _run(PROGRAMS["chain"], engine, backward=True)
    if yours.error is not None:
        return CheckResult("free", "not yet", f"the first backward() raised "
                           f"{_raised(yours.error)}. Refuse only a graph that a backward "
                           "already freed", yours.rec, ref.rec)
    ops = {node.id for node in yours.rec.nodes.values() if node.kind != "leaf"}
    freed = {node.id for node in yours.rec.nodes.values() if node.freed}
    if ops - freed:
        kept = [_describe(yours.rec.nodes[i]) for i in sorted(ops - freed)]
        return CheckResult("free", "not yet",
                           f"after backward() your engine still keeps what backward saved for "
                           f"{', '.join(kept)}: drop it and report src.freed(...) for those "
                           "nodes, as dyngraph and PyTorch free the graph unless "
                           "retain_graph=True", yours.rec, ref.rec, ops - freed)
    out = PROGRAMS["chain"](engine)
    out.backward()
    try:
        out.backward()
    except NotImplementedError:
        raise
    except Exception as error:
        refused = _refusal(error, "second time", "Refuse before an op reads what it saved: "
                           "when it is gone, raise a RuntimeError that starts as PyTorch's, "
                           "'Trying to backward through the graph a second time'")
        if refused is None:
            return CheckResult("free", "PASS", "", yours.rec, ref.rec)
        return CheckResult("free", "not yet", f"a second backward() {refused}", yours.rec,
                           ref.rec)
    return CheckResult("free", "not yet",
                       "a second backward() through a freed graph ran without an error: after "
                       "backward the ops' saved values must be gone (not only reported freed), "
                       "and the next backward must raise (PyTorch: 'Trying to backward through "
                       "the graph a second time') instead of reusing them", yours.rec, ref.rec)


def _refusal(error: BaseException, words: str, how: str) -> str | None:
    """None when ``error`` is the RuntimeError that says ``words``; else what it is instead,
    and ``how`` to refuse where it only tripped."""
    if isinstance(error, RuntimeError) and words in str(error):
        return None
    if words in str(error):
        return f"raised {_raised(error)}: refuse with a RuntimeError, as PyTorch does"
    if isinstance(error, RuntimeError):
        return (f"raised {_raised(error)}: say it in PyTorch's words ('{words}'), which tell "
                "a reader what happened")
    return f"raised {_raised(error)}: that is your engine tripping over what it reads, not a " \
        f"refusal. {how}"


def _check_versions(engine: Engine) -> CheckResult:
    yours = _run(PROGRAMS["saved_then_changed"], engine, backward=True)
    h = _named(yours.rec, "h")
    marked = {h.id} if h else set()
    if yours.error is not None and not yours.in_backward:
        return CheckResult("versions", "not yet", f"your engine raised {_raised(yours.error)} "
                           "before backward: the program must run up to backward (does your "
                           "engine have add_?)", yours.rec)
    if yours.error is None:
        right = _run(PROGRAMS["saved_and_kept"], reference_engine(), backward=True)
        got, want = _leaf_grads(yours.rec), _leaf_grads(right.rec)
        how = ("its Mul read the new h in backward, and the gradient is silently wrong"
               if not _close(got, want) else "right only because your ops kept numbers from "
               "forward, not the values (the forward step's check says how)")
        return CheckResult(
            "versions", "not yet",
            "your engine ran backward through `y = h * h` after h.add_ changed h in place, and "
            f"gave a.grad, b.grad = {_numbers(got)}; the y it computed (from h = 6) has "
            f"{_numbers(want)}: {how}. dyngraph and PyTorch refuse instead ('one of the "
            "variables needed for gradient computation has been modified by an inplace "
            "operation'). Let each op keep the versions of what it saved, and compare them in "
            "backward", yours.rec, None, marked)
    refused = _refusal(yours.error, "modified by an inplace operation", "Before an op "
                       "reads what it saved, compare the saved values' versions with the ones "
                       "it wrote down, and raise a RuntimeError that says a value was "
                       "'modified by an inplace operation'")
    if refused is not None:
        return CheckResult("versions", "not yet", f"backward through `y = h * h` after h.add_ "
                           f"{refused}", yours.rec, None, marked)
    if h is not None and h.version == 0:
        return CheckResult("versions", "not yet", "your engine did not report h's new version: "
                           "add_ must tell dyngraph, src.version_bumped(self, self.version)",
                           yours.rec, None, marked)
    ref = _run(PROGRAMS["changed_then_used"], reference_engine(), backward=True)
    yours = _run(PROGRAMS["changed_then_used"], engine, backward=True)
    if yours.error is not None:
        return CheckResult(
            "versions", "not yet",
            f"your engine raised {_raised(yours.error)} although h was changed before any op "
            "saved it: compare the version an op saved with the version now, not with 0",
            yours.rec, ref.rec)
    # NOTE: dyngraph draws h.add_ as a node of its own (PyTorch's rewritten history, lesson
    # 19), the track's engine as a version; so y's value and the leaves' gradients are compared
    y, ref_y = _named(yours.rec, "y"), _named(ref.rec, "y")
    value = y.preview[:1] if y else ()
    if not _close(value, ref_y.preview[:1]):
        return CheckResult("versions", "not yet", f"in changed_then_used, `y = h * h` after "
                           f"h.add_ is {_numbers(value) or 'missing'} where dyngraph's is "
                           f"{_numbers(ref_y.preview[:1])}: add_ must change h's value where "
                           "it is", yours.rec, ref.rec, {y.id} if y else set())
    got, want = _leaf_grads(yours.rec), _leaf_grads(ref.rec)
    if not _close(got, want):
        return CheckResult("versions", "not yet", f"in changed_then_used, a.grad, b.grad are "
                           f"{_numbers(got)} where dyngraph's are {_numbers(want)}: backward "
                           "must read h as it is now, changed before y = h * h saved it",
                           yours.rec, ref.rec)
    return CheckResult("versions", "PASS", "", yours.rec, ref.rec)


def _check_no_grad(engine: Engine) -> CheckResult:
    if engine.no_grad is None:
        return CheckResult("no_grad", "not attempted yet",
                           "give Engine(no_grad=your_no_grad) your engine's no_grad")
    ref = _run(PROGRAMS["inside_no_grad"], reference_engine(), backward=True)
    yours = _run(PROGRAMS["inside_no_grad"], engine, backward=True)
    if yours.error is not None:
        return CheckResult("no_grad", "not yet", f"your engine raised {_raised(yours.error)}",
                           yours.rec)
    ops = _ops(yours.rec)
    if any(node.name == "c" for node in ops):
        return CheckResult(
            "no_grad", "not yet",
            "your engine recorded `c = a * b` made inside no_grad(): nothing made there should "
            "join the graph (no inputs kept, no node reported)", yours.rec, ref.rec,
            {node.id for node in ops if node.name == "c"})
    if not ops:
        return CheckResult("no_grad", "not yet", "your engine did not record `d = c * a`, made "
                           "after the no_grad() block: grad mode must come back on after it",
                           yours.rec, ref.rec)
    got, want = _leaf_grads(yours.rec, "a"), _leaf_grads(ref.rec, "a")
    if not _close(got, want):
        return CheckResult(
            "no_grad", "not yet",
            f"backward of `d = c * a` gave a.grad = {_numbers(got)} where dyngraph's is "
            f"{_numbers(want)}: it went on through `c = a * b`, made inside no_grad(). A value "
            "made there must keep no inputs and save nothing, so that backward stops at it: "
            "to d, c is a constant", yours.rec, ref.rec)
    yours = _run(PROGRAMS["nested_no_grad"], engine, backward=False)
    if yours.error is None and [node.name for node in _ops(yours.rec)] != ["d"]:
        return CheckResult(
            "no_grad", "not yet",
            "in nested no_grad() blocks your engine recorded `c = b * a`, made inside the outer "
            "block after the inner one ended: at the end of a block, put grad mode back to "
            "what it was before the block, not to on", yours.rec, None,
            {node.id for node in _ops(yours.rec) if node.name == "c"})
    yours = _run(PROGRAMS["error_inside_no_grad"], engine, backward=False)
    if yours.error is None and not _ops(yours.rec):
        return CheckResult(
            "no_grad", "not yet",
            "after a no_grad() block that raised, your engine did not record `d = a * a`: grad "
            "mode stayed off. Switch it back in a finally: block, which runs on an error too",
            yours.rec)
    if yours.error is not None:
        return CheckResult("no_grad", "not yet", f"your engine raised {_raised(yours.error)}",
                           yours.rec)
    return CheckResult("no_grad", "PASS", "", yours.rec)


def _check_trace(engine: Engine) -> CheckResult:
    import numpy as np

    from . import factories
    from .trace import trace as dyngraph_trace

    if engine.trace is None or engine.replay is None:
        return CheckResult("trace", "not attempted yet",
                           "give Engine(trace=your_trace, replay=your_replay) your tracer")

    def dyngraph_replays(fn: Callable, example: float, new: float) -> float:
        def scalar(x: float) -> Any:
            return factories.tensor(x, dtype=np.float64)

        with warnings.catch_warnings():  # g's `if` on data: the point of the check, not news
            warnings.simplefilter("ignore")
            return float(dyngraph_trace(fn, scalar(example)).run(scalar(new)).item())

    def yours_replays(fn: Callable, example: float, new: float) -> float:
        return float(engine.replay(*engine.trace(fn, example), new))

    f, g = PROGRAMS["f"], PROGRAMS["g"]
    try:
        for example, new in ((0.5, 0.5), (0.5, -1.2)):
            want, got = dyngraph_replays(f, example, new), yours_replays(f, example, new)
            if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
                traced = math.isclose(got, math.tanh(example ** 2 + example))
                kept = (" (f at the traced input, what the trace computed: the leaves must take "
                        "the new inputs, and each op compute from its inputs' new numbers)"
                        if example != new and traced else "")
                return CheckResult("trace", "not yet",
                                   f"traced at {example:g}, your replay at {new:g} gave "
                                   f"{got:.6g} where dyngraph's replay gives {want:.6g}{kept}: "
                                   "walk the tape in order, each op from its inputs' new "
                                   "numbers, and return the number of its last value")
        want, got = dyngraph_replays(g, 3.0, -2.0), yours_replays(g, 3.0, -2.0)
    except NotImplementedError:
        raise
    except Exception as error:
        return CheckResult("trace", "not yet", f"your tracer raised {_raised(error)}")
    if not math.isclose(got, want):
        rerun = math.isclose(got, -4.0)
        why = ("that is g run again at -2 (x + x): your replay ran the Python, which chose the "
               "other branch. A replay walks the ops the traced run recorded (x * x at 3), "
               "without calling the function" if rerun else "check that replay follows the tape")
        return CheckResult("trace", "not yet",
                           f"g (an `if` on the data) traced at 3, replayed at -2, gave {got:g} "
                           f"where dyngraph's and PyTorch's tracers give {want:g}: {why}")
    return CheckResult("trace", "PASS", "")


# NOTE [a number on either side] `a + 1` calls a.__add__(1); `1 + a` first asks int.__add__,
# which knows no Value and says NotImplemented, and then a.__radd__(1), with the number as
# `other`: so `2 * a` breaks in an engine that has only __mul__ (a TypeError, "unsupported
# operand type(s)"), and a __rsub__ that computes self - other gives a - 1 for 1 - a. Each op is
# checked alone, at a = 1.5 (b = 0.25 where two values meet), its value and its gradients.
CONSTANT_POINT = (1.5, 0.25)
CONSTANT_OPS = {  # the code as the learner reads it: (the op, the method Python calls)
    "a + 1": (lambda a, b: a + 1, "__add__"),
    "1 + a": (lambda a, b: 1 + a, "__radd__"),
    "a * 2": (lambda a, b: a * 2, "__mul__"),
    "2 * a": (lambda a, b: 2 * a, "__rmul__"),
    "-a": (lambda a, b: -a, "__neg__"),
    "a - b": (lambda a, b: a - b, "__sub__"),
    "a - 1": (lambda a, b: a - 1, "__sub__"),
    "1 - a": (lambda a, b: 1 - a, "__rsub__"),
}


def _one_constant_op(engine: Engine, make: Callable) -> tuple[Recording, float, tuple]:
    """``make(a, b)`` and its backward on ``engine``: the recording, the value, (a.grad,
    b.grad)."""
    with record() as rec:
        a, b = (engine.leaf(x) for x in CONSTANT_POINT)
        out = make(a, b)
        out.backward()
    return rec, _number(getattr(out, "data", out)), (_number(a.grad), _number(b.grad))


def _number(x: Any) -> float:
    """A float from a learner's number or a dyngraph tensor (0.0 for a grad that is None)."""
    return 0.0 if x is None else float(x.item() if hasattr(x, "item") else x)


def _check_constants(engine: Engine) -> CheckResult:
    reference = reference_engine()
    at = f"a = {CONSTANT_POINT[0]:g}"
    for code, (make, method) in CONSTANT_OPS.items():
        ref, want, want_grads = _one_constant_op(reference, make)
        try:
            yours, got, got_grads = _one_constant_op(engine, make)
        except NotImplementedError:
            raise
        except Exception as error:
            return CheckResult("constants", "not yet",
                               f"`{code}` raised {_raised(error)}: {_operand_advice(error)}")
        names = "a, b" if "b" in code else "a"
        kept = names.count(",") + 1  # the gradients of the values the code uses
        got_grads, want_grads = got_grads[:kept], want_grads[:kept]
        if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            swapped = method == "__rsub__" and math.isclose(got, -want)
            why = (f"Python calls a.{method}(number) for {code}, the number as `other` and on "
                   "the left: compute other - self" if swapped else f"check your {method}")
            return CheckResult("constants", "not yet",
                               f"`{code}` at {at} is {got:g} where dyngraph's is {want:g}: "
                               f"{why}", yours, ref)
        if not _close(got_grads, want_grads):
            said = (f"`{code}` at {at} is right ({got:g}), but backward gives {names}.grad = "
                    f"{_numbers(got_grads)} where dyngraph's is {_numbers(want_grads)}")
            if got_grads[0] == 0:
                return CheckResult("constants", "not yet",
                                   f"{said}: no gradient reached `a`. Make the result with ops "
                                   "of your engine from `a` (a * -1, a + (-b)), not as a new "
                                   "Value of a number, which backward cannot go through",
                                   yours, ref)
            return CheckResult("constants", "not yet", f"{said}: check your {method}", yours,
                               ref)
    return CheckResult("constants", "PASS", "", yours, ref)


def _operand_advice(error: BaseException) -> str:
    """What to do when an operand raised ``error``: a number next to a Value (NOTE [a number on
    either side]), or a .grad left None by a zero_grad."""
    said = str(error)
    if "'NoneType'" in said:
        return ("a .grad of None: your backward adds to .grad (+=), so zero_grad must set it "
                "to 0.0 (PyTorch's sets None, and its engine then starts from the first share)")
    if isinstance(error, TypeError) and "unsupported operand" in said:
        symbol = said.split("for ")[-1].split(":")[0].strip()
        method = {"+": "__radd__", "*": "__rmul__", "-": "__rsub__"}.get(symbol, "")
        if "'Value'" in said.split(" and ")[-1] or method:
            return (f"with a number on the left of {symbol}, Python asks your Value's {method} "
                    f"(the number knows no Value): write it, to compute other {symbol} self")
        return "check that your Value has the method Python asks for"
    if "has no attribute 'data'" in said:
        return ("a number has no .data: wrap it as a constant Value (as_value) before the op "
                "reads it")
    return "check the method Python calls for it"


# NOTE [training from the same weights] The learner's MLP (2 inputs, a hidden layer of 4 tanh
# neurons, 1 linear output, as micrograd's MLP(2, [4, 1])) is made with its own random weights;
# the checker reads them from ``parameters()`` (micrograd's order: layer by layer, each neuron's
# weights then its bias), gives the same numbers to dyngraph (float64 scalars running the
# program ``mlp`` above, op for op the lesson's) and trains both with plain SGD on the same four
# points. Equal to float rounding: the loss at every step and the final weights. A difference is
# explained when dyngraph, trained with one typical mistake put in, gives the learner's losses.
TRAIN_XS = ((2.0, 3.0), (3.0, -1.0), (0.5, 1.0), (1.0, 1.0))
TRAIN_YS = (1.0, -1.0, -1.0, 1.0)
TRAIN_STEPS = 10
TRAIN_LR = 0.1
MLP_SIZES = (2, [4, 1])
MLP_PARAMETERS = 4 * (2 + 1) + 1 * (4 + 1)  # each neuron: a weight per input, and a bias
MLP_BIASES = (2, 5, 8, 11, 16)  # where the biases are in micrograd's order


def reference_train(weights: Sequence[float], xs: Sequence = TRAIN_XS,
                    ys: Sequence[float] = TRAIN_YS, steps: int = TRAIN_STEPS,
                    lr: float = TRAIN_LR, *, zero_grad: bool = True, direction: float = -1.0,
                    update_biases: bool = True) -> tuple[list[float], list[float]]:
    """dyngraph trains lesson 29's MLP from ``weights`` (its 17 parameters in micrograd's order)
    with plain SGD: (the loss at each step, before its update; the final weights). The keywords
    put in a typical mistake: ``zero_grad=False`` lets the gradients add up across steps,
    ``direction=+1.0`` steps up the gradient, ``update_biases=False`` leaves the biases as
    they were (a bias left out of the forward gets no gradient)."""
    import numpy as np

    from . import factories, grad_mode

    params = [factories.tensor(float(w), dtype=np.float64, requires_grad=True)
              for w in weights]
    losses = []
    for _ in range(steps):
        if zero_grad:
            for p in params:
                p.grad = None
        loss = PROGRAMS["mse"](params, xs, ys)
        loss.backward()
        with grad_mode.no_grad():
            for k, p in enumerate(params):
                if update_biases or k not in MLP_BIASES:
                    p += direction * lr * p.grad
        losses.append(float(loss.item()))
    return losses, [float(p.item()) for p in params]


def reference_output(weights: Sequence[float], x: Sequence[float]) -> float:
    """dyngraph's output of lesson 29's MLP with ``weights`` (micrograd's order) at ``x``."""
    import numpy as np

    from . import factories

    params = [factories.tensor(float(w), dtype=np.float64) for w in weights]
    return float(PROGRAMS["mlp"](params, x).item())


def _check_train(engine: Engine) -> CheckResult:
    if engine.mlp is None or engine.train is None:
        return CheckResult("train", "not attempted yet",
                           "give Engine(mlp=MLP, train=train) your MLP class and your train")
    try:
        model = engine.mlp(*MLP_SIZES)
        params = list(model.parameters())
    except NotImplementedError:
        raise
    except Exception as error:
        return CheckResult("train", "not yet", f"MLP(2, [4, 1]).parameters() raised "
                           f"{_raised(error)}")
    problem = _parameters_problem(params)
    if problem:
        return CheckResult("train", "not yet", problem)
    weights = [float(p.data) for p in params]
    want, want_final = reference_train(weights)
    try:
        losses = [float(getattr(loss, "data", loss))
                  for loss in engine.train(model, [list(x) for x in TRAIN_XS], list(TRAIN_YS),
                                           TRAIN_STEPS, TRAIN_LR)]
    except NotImplementedError:
        raise
    except Exception as error:
        return CheckResult("train", "not yet", f"train raised {_raised(error)}"
                           f"{': ' + _operand_advice(error) if _operand_error(error) else ''}")
    if len(losses) != TRAIN_STEPS:
        return CheckResult("train", "not yet", f"train returned {len(losses)} losses for "
                           f"{TRAIN_STEPS} steps: one per step, the loss before its update")
    message = _losses_problem(weights, losses, want)
    if message:
        return CheckResult("train", "not yet", message)
    final = [float(p.data) for p in params]
    if not _close(final, want_final):
        k = next(i for i, (m, t) in enumerate(zip(final, want_final))
                 if not math.isclose(m, t, rel_tol=1e-9, abs_tol=1e-12))
        return CheckResult("train", "not yet",
                           f"your losses are dyngraph's, but after {TRAIN_STEPS} steps parameter "
                           f"{k} is {final[k]:.6g} where dyngraph's is {want_final[k]:.6g}: "
                           "the last step's update is missing or differs (update every "
                           "parameter, every step, after its backward)")
    return CheckResult("train", "PASS", "")


def _operand_error(error: BaseException) -> bool:
    """Is ``error`` one that _operand_advice explains?"""
    said = str(error)
    return any(words in said for words in ("unsupported operand", "has no attribute 'data'",
                                           "'NoneType'"))


def _parameters_problem(params: list) -> str | None:
    """What is wrong with the list of an MLP(2, [4, 1])'s parameters, or None."""
    if any(not hasattr(p, "data") for p in params):
        return ("parameters() must list your Values (each with its .data and .grad), got "
                f"{', '.join(sorted({type(p).__name__ for p in params}))}")
    if len({id(p) for p in params}) != len(params):
        return "parameters() lists a Value more than once: list each parameter once"
    if len(params) == MLP_PARAMETERS:
        return None
    said = (f"MLP(2, [4, 1]).parameters() lists {len(params)} values where the MLP has "
            f"{MLP_PARAMETERS}: 4 hidden neurons with 2 weights and a bias each, and the output "
            "neuron with 4 weights and a bias")
    if len(params) == MLP_PARAMETERS - 5:
        return (f"{said}. The 5 biases are missing, so SGD never updates them: a Neuron's "
                "parameters are its weights *and* its bias")
    return f"{said}. List each neuron's weights, then its bias, layer by layer"


def _losses_problem(weights: list[float], losses: list[float], want: list[float]) -> str | None:
    """None when ``losses`` are dyngraph's; else the first step that differs, explained when a
    typical mistake gives the same losses (NOTE [training from the same weights])."""
    first = next((k for k, (m, t) in enumerate(zip(losses, want))
                  if not math.isclose(m, t, rel_tol=1e-9, abs_tol=1e-12)), None)
    if first is None:
        return None
    said = (f"your loss at step {first} is {losses[first]:.6g} where dyngraph's, from the same "
            f"weights, is {want[first]:.6g}")
    if first == 0:
        return (f"{said}, before any update: check your MLP's forward (the hidden layer "
                "tanh(b + w·x), the output b + w·h without tanh) and that parameters() lists "
                "each neuron's weights, then its bias")
    steps = ", ".join(f"{x:.4g}" for x in losses)
    if all(math.isclose(x, losses[0]) for x in losses):
        return (f"{said}: your loss never changed ({steps}), so neither did the weights. "
                "Update each p.data by -lr * p.grad after backward, and zero the grads before "
                "the next backward, not between backward and the update")
    if _close(losses, reference_train(weights, zero_grad=False)[0]):
        return (f"{said}: your losses ({steps}) are those of a run that never zeroes the "
                "gradients. Each backward adds (+=) to .grad, as PyTorch's does: without "
                "zero_grad every step goes along the sum of all the gradients so far. Call "
                "zero_grad(model.parameters()) at the start of each step")
    if _close(losses, reference_train(weights, direction=+1.0)[0]):
        return (f"{said}: your losses ({steps}) are those of an update with the wrong sign, "
                "up the gradient, where the loss grows. Step against it: p.data -= lr * p.grad")
    if _close(losses, reference_train(weights, update_biases=False)[0]):
        return (f"{said}: your losses ({steps}) are those of a net whose biases never change. "
                "A bias left out of the forward gets no gradient: start each neuron's sum "
                "from its bias, b + w·x")
    return f"{said}: check your training step (zero_grad, forward, backward, update)"


_CHECKS: dict[str, Callable[[Engine], CheckResult]] = {
    "forward": lambda engine: _check_programs(engine, "forward", backward=False),
    "backward": lambda engine: _check_programs(engine, "backward", backward=True),
    "free": _check_free,
    "versions": _check_versions,
    "no_grad": _check_no_grad,
    "trace": _check_trace,
    "constants": _check_constants,
    "train": _check_train,
}


# --------------------------------------------------------------------------- comparing

_OP_SPELLINGS = {"+": "add", "*": "mul", "-": "sub", "/": "div", "**": "pow", "tanh": "tanh",
                 "relu": "relu", "exp": "exp", "neg": "neg"}


def op_key(op: str) -> str:
    """An op's name up to spelling: ``Mul``, ``mul``, ``*`` and ``MulBackward0`` are one."""
    name = op.strip().lower()
    if name.startswith("**"):
        return "pow"
    name = name.removesuffix("backward0").removesuffix("backward")
    return _OP_SPELLINGS.get(name, name)


def _ordered(rec: Recording) -> list[Node]:
    return sorted(rec.nodes.values(), key=lambda node: node.order)


def _inputs(rec: Recording) -> dict[int, list[int]]:
    inputs: dict[int, list[tuple[int, int]]] = {i: [] for i in rec.nodes}
    for edge in rec.edges:
        inputs[edge.dst].append((edge.position, edge.src))
    return {i: [src for _, src in sorted(pairs)] for i, pairs in inputs.items()}


def _compare_forward(yours: Recording, ref: Recording) -> tuple[str, set[int]] | None:
    mine, theirs = _ordered(yours), _ordered(ref)
    for k, (m, t) in enumerate(zip(mine, theirs)):
        if op_key(m.op) != op_key(t.op):
            return (f"the {_ordinal(k + 1)} node your engine made is {m.op!r} where dyngraph made "
                    f"{_describe(t)}: report each value as it is made, leaves too", {m.id})
    if len(mine) != len(theirs):
        if len(mine) < len(theirs):
            missing = theirs[len(mine)]
            return (f"your engine reported {len(mine)} nodes where dyngraph made {len(theirs)}: "
                    f"{_describe(missing)} is missing", set())
        return (f"your engine reported {len(mine)} nodes where dyngraph made {len(theirs)}: "
                f"{_describe(mine[len(theirs)])} is extra", {mine[len(theirs)].id})
    position = {m.id: k for k, m in enumerate(mine)}
    ref_position = {t.id: k for k, t in enumerate(theirs)}
    mine_inputs, ref_inputs = _inputs(yours), _inputs(ref)
    for m, t in zip(mine, theirs):
        got = [position.get(i) for i in mine_inputs[m.id]]
        want = [ref_position.get(i) for i in ref_inputs[t.id]]
        if got != want:
            names = ", ".join(_describe(theirs[i]) for i in want)
            have = ", ".join(_describe(mine[i]) for i in got if i is not None) or "none"
            return (f"{_describe(t)} should have the inputs {names} (in that order); yours has "
                    f"{len(got)} input(s): {have}", {m.id})
        difference = _differs(m.preview, t.preview)
        if difference:
            return (f"the value of {_describe(t)} is {difference}: check the forward of "
                    f"{t.op}", {m.id})
    return None


def _compare_backward(yours: Recording, ref: Recording) -> tuple[str, set[int]] | None:
    mine, theirs = _ordered(yours), _ordered(ref)
    match = {m.id: t for m, t in zip(mine, theirs)}
    by_ref = {t.id: m for m, t in zip(mine, theirs)}
    users: dict[int, list[int]] = {t.id: [] for t in theirs}
    for edge in ref.edges:
        users[edge.src].append(edge.dst)
    # the order: each node's gradient after every node that uses it
    done: set[int] = set()
    order = _grad_order(yours)
    for node_id in order:
        t = match.get(node_id)
        if t is None:
            continue
        waiting = [u for u in users[t.id] if u not in done and ref.nodes[u].grad_preview]
        if waiting:
            user = ref.nodes[waiting[0]]
            again = (", and more than once: your backward visits it once per path, where "
                     "the list must hold each value once (remember the values you have seen)"
                     if order.count(node_id) > 1 else "")
            return (f"your engine reported the gradient of {_describe(t)} before {_describe(user)}"
                    f", which uses it, had sent its share: {_name(t)}'s gradient is missing the "
                    f"path through {_name(user)}. Go through the nodes in reverse topological "
                    f"order: a node only after every node that uses it{again}", {node_id})
        done.add(t.id)
    # each node once: a value reached by two paths is still one value
    twice = next((node_id for k, node_id in enumerate(order) if node_id in order[:k]), None)
    if twice is not None and twice in match:
        t = match[twice]
        return (f"your engine reported the gradient of {_describe(t)} more than once: it is "
                "reached by more than one path, and your backward visits it once per path. "
                "Walk one list of the values in reverse topological order, each value once "
                "(remember the values you have seen)", {twice})
    missing = [t for t in theirs if t.grad_preview and not by_ref[t.id].grad_preview]
    if missing:
        t = missing[0]
        return (f"your engine never reported the gradient of {_describe(t)}: call "
                "src.grad(v) for every value backward reaches", {by_ref[t.id].id})
    # the values, in the reference's backward order: the first wrong one is explained
    for node_id in _grad_order(ref):
        t = ref.nodes[node_id]
        m = by_ref[t.id]
        difference = _differs(m.grad_preview, t.grad_preview)
        if difference:
            return (f"the gradient of {_describe(t)} is {difference}. "
                    f"{_explain(m, t, ref, users)}", {m.id})
    return None


def _explain(m: Node, t: Node, ref: Recording, users: dict[int, list[int]]) -> str:
    """Why a gradient is wrong, when it matches a known mistake."""
    mine = m.grad_preview[0]
    shares = [(user, share) for user, share in _shares(ref, t.id)]
    if len(shares) > 1:
        for user, share in shares:
            if math.isclose(mine, share, rel_tol=1e-6, abs_tol=1e-9):
                others = ", ".join(_name(ref.nodes[u]) for u, _ in shares if u != user)
                return (f"{_name(t)} is used by {len(shares)} ops, and yours is the share of "
                        f"{_name(ref.nodes[user])} alone: add (+=) the shares of {others} too, "
                        "do not overwrite")
    locals_only = 0.0
    for user, share in shares:
        upstream = ref.nodes[user].grad_preview[0] if ref.nodes[user].grad_preview else 0.0
        if upstream == 0:
            break
        locals_only += share / upstream
    else:
        if shares and math.isclose(mine, locals_only, rel_tol=1e-6, abs_tol=1e-9):
            return ("Yours is the local derivative alone: the chain rule multiplies it by the "
                    "gradient arriving from above (out.grad)")
    if shares:
        names = " and ".join(f"{_describe(ref.nodes[u])}" for u, _ in shares)
        return f"Check the local derivative that {names} sends to {_name(t)}"
    return ""


def _shares(ref: Recording, node_id: int) -> list[tuple[int, float]]:
    """What each op that uses ``node_id`` sent it in dyngraph's backward (edge_grad events):
    ``(op id, share)``; an op that uses it twice sends one summed share."""
    sent: dict[int, float] = {}
    for step in ref.timeline:
        if step[0] == "edge_grad" and step[2] == node_id and step[4]:
            sent[step[1]] = sent.get(step[1], 0.0) + step[4][0]
    return list(sent.items())


def _grad_order(rec: Recording) -> list[int]:
    """The node ids in the order their gradients were reported."""
    return [step[1] for step in rec.timeline if step[0] == "grad"]


def _differs(mine: tuple, theirs: tuple) -> str | None:
    if not theirs:
        return None
    if not mine:
        return f"missing (dyngraph's is {theirs[0]:.6g})"
    a, b = float(mine[0]), float(theirs[0])
    if math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
        return None
    return f"{a:.6g} where dyngraph's is {b:.6g}"


def _name(node: Node) -> str:
    return f"`{node.name}`" if node.name else f"the {node.op}"


def _describe(node: Node) -> str:
    """`c` (Mul in c = a * b): a node as the learner knows it, by name and line."""
    code = linecache.getline(node.where[0], node.where[1]).strip() if node.where else ""
    where = f" in {code}" if code else ""
    if node.name:
        return f"`{node.name}` ({node.op}{where})" if node.kind != "leaf" else f"`{node.name}`"
    return f"the {node.op}{where}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _named(rec: Recording, name: str) -> Node | None:
    return next((node for node in _ordered(rec) if node.name == name), None)


def _ops(rec: Recording) -> list[Node]:
    return [node for node in _ordered(rec) if node.kind != "leaf"]


def _leaf_grads(rec: Recording, names: str = "ab") -> tuple[float, ...]:
    """The gradients of the leaves named ``a``, ``b``, ... (0 where none was reported)."""
    leaves = [_named(rec, name) for name in names]
    return tuple(float(leaf.grad_preview[0]) if leaf and leaf.grad_preview else 0.0
                 for leaf in leaves)


def _close(mine: Sequence[float], theirs: Sequence[float]) -> bool:
    return len(mine) == len(theirs) and all(
        math.isclose(m, t, rel_tol=1e-9, abs_tol=1e-12) for m, t in zip(mine, theirs))


def _numbers(xs: Sequence[float]) -> str:
    return ", ".join(f"{x:.6g}" for x in xs)


def _raised(error: BaseException) -> str:
    """What an engine raised, and the line it raised at: the learner's own, or the program's
    (NOTE [the programs are the learner's lines])."""
    package = os.path.dirname(__file__)
    frames = traceback.extract_tb(error.__traceback__)
    line = next((frame.line for frame in reversed(frames)
                 if frame.line and not frame.filename.startswith(package)), None)
    at = f" at `{line.strip()}`" if line else ""
    return f"{type(error).__name__}: {error}{at}"
