"""Checking an engine a learner builds against dyngraph's own, event by event (the build-your-own
track, issue 32).

The learner's engine reports what it does through a ``dg.EventSource`` (sources.py). The checker
runs the same small programs on that engine and on dyngraph (float64 scalars), records both
event streams, and names the *first* difference in words a learner can act on, with a picture
that marks it:

>>> result = check_engine(Engine(value=Value, source=src), "backward")
>>> result
backward: not yet: your engine reported the gradient of `a` before `c` (Mul, line 4), which
uses `a`, had sent its share: `a`'s gradient is missing the path through `c`. ...

NOTE [what is compared] Nodes are matched by the order they were made (both engines run the
same program, so the k-th node is the same value), ops by name up to spelling (``Mul``,
``mul``, ``*``). Then, for each step of the track:
- ``forward``: the nodes, their ops, their inputs and their values;
- ``backward``: the order of the gradients (a node's gradient is complete only after every
  node that uses it has sent its share: a topological order) and their values. A wrong value
  is explained when it matches a known mistake: one path's share only (overwriting instead of
  summing at fan-in), or the local derivatives without the upstream gradient (a missing
  chain-rule factor); otherwise the op whose local derivative sent it is named;
- ``free``: after ``backward()`` what backward saved is released (``graph_freed``), and a second
  ``backward()`` through the freed graph raises;
- ``versions``: a value changed in place after an op saved it makes backward raise, and one
  changed before any op saved it does not;
- ``no_grad``: nothing made inside ``no_grad()`` joins the graph.
The programs use only leaves made by the engine (no Python constants), the ops ``+ * tanh``
(and ``add_`` for in-place), so a first engine can run all of them.
"""

from __future__ import annotations

import linecache
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .graph import Node
from .record import Recording, record

STEPS = ("forward", "backward", "free", "versions", "no_grad")


@dataclass
class Engine:
    """What the checker needs of a learner's engine: how to make a leaf from a number, the
    EventSource it reports through, and (for the later steps) its ``no_grad``."""

    value: Callable[[float], Any]
    source: Any  # the engine's dg.EventSource
    no_grad: Callable[[], Any] | None = None

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
    d = a * a
    return d
"""


def _programs() -> dict[str, Callable[[Engine], Any]]:
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


def _run(program: Callable, engine: Engine, backward: bool) -> tuple[Recording, BaseException |
                                                                     None]:
    """Record ``program`` on ``engine`` (and its backward): the recording, and what it raised."""
    error = None
    with record() as rec:
        try:
            out = program(engine)
            if backward:
                out.backward()
        except NotImplementedError:
            raise
        except Exception as exc:  # the learner's engine may raise anything: report, not crash
            error = exc
    return rec, error


def _check_programs(engine: Engine, step: str, backward: bool) -> CheckResult:
    reference = reference_engine()
    for name in STEP_PROGRAMS[step]:
        program = PROGRAMS[name]
        ref, ref_error = _run(program, reference, backward)
        assert ref_error is None, ref_error  # dyngraph runs its own programs
        yours, error = _run(program, engine, backward)
        if error is not None:
            return CheckResult(step, "not yet", f"your engine raised {_error_text(error)} in "
                               f"{name}", yours, ref)
        problem = _compare_forward(yours, ref)
        if problem is None and backward:
            problem = _compare_backward(yours, ref)
        if problem is not None:
            message, marked = problem
            return CheckResult(step, "not yet", message, yours, ref, marked)
    return CheckResult(step, "PASS", "", yours, ref)


def _check_free(engine: Engine) -> CheckResult:
    reference = reference_engine()
    ref, _ = _run(PROGRAMS["chain"], reference, backward=True)
    yours, error = _run(PROGRAMS["chain"], engine, backward=True)
    if error is not None:
        return CheckResult("free", "not yet", f"your engine raised {_error_text(error)}", yours,
                           ref)
    ops = {node.id for node in yours.nodes.values() if node.kind != "leaf"}
    freed = {node.id for node in yours.nodes.values() if node.freed}
    if ops - freed:
        kept = [_describe(yours.nodes[i]) for i in sorted(ops - freed)]
        return CheckResult("free", "not yet",
                           f"after backward() your engine still keeps what backward saved for "
                           f"{', '.join(kept)}: drop it and report src.freed(...) for those "
                           "nodes, as dyngraph and PyTorch free the graph unless "
                           "retain_graph=True", yours, ref, ops - freed)
    out = PROGRAMS["chain"](engine)
    out.backward()
    try:
        out.backward()
    except NotImplementedError:
        raise
    except Exception:
        return CheckResult("free", "PASS", "", yours, ref)
    return CheckResult("free", "not yet",
                       "a second backward() through a freed graph ran without an error: it must "
                       "raise (PyTorch: 'Trying to backward through the graph a second time'), "
                       "or it would use values that are gone", yours, ref)


def _check_versions(engine: Engine) -> CheckResult:
    yours, error = _run(PROGRAMS["saved_then_changed"], engine, backward=True)
    if error is None:
        h = _first(yours, "Mul")
        return CheckResult(
            "versions", "not yet",
            "your engine ran backward through `y = h * h` after h.add_ changed h in place: "
            "dyngraph and PyTorch refuse it ('one of the variables needed for gradient "
            "computation has been modified by an inplace operation'), because their ops save h "
            "itself and would read the new value. (If your ops computed their local "
            "derivatives in forward, your gradient is still right; the check makes your engine "
            "refuse what PyTorch refuses.) Let each op keep the versions of its inputs, and "
            "compare them in backward", yours, None, {h.id} if h else set())
    yours, error = _run(PROGRAMS["changed_then_used"], engine, backward=True)
    if error is not None:
        return CheckResult(
            "versions", "not yet",
            f"your engine raised {_error_text(error)} although h was changed before any op "
            "saved it: compare the version an op saved with the version now, not with 0",
            yours)
    return CheckResult("versions", "PASS", "", yours)


def _check_no_grad(engine: Engine) -> CheckResult:
    if engine.no_grad is None:
        return CheckResult("no_grad", "not attempted yet",
                           "give Engine(no_grad=your_no_grad) your engine's no_grad")
    yours, error = _run(PROGRAMS["inside_no_grad"], engine, backward=False)
    if error is not None:
        return CheckResult("no_grad", "not yet", f"your engine raised {_error_text(error)}",
                           yours)
    ops = [node for node in yours.nodes.values() if node.kind != "leaf"]
    if len(ops) != 1:
        inside = ops[0] if ops else None
        return CheckResult(
            "no_grad", "not yet",
            "your engine recorded `c = a * b` made inside no_grad(): nothing made there should "
            "join the graph (no inputs kept, no node reported), and grad mode must come back on "
            "after the block", yours, None, {inside.id} if inside else set())
    return CheckResult("no_grad", "PASS", "", yours)


_CHECKS: dict[str, Callable[[Engine], CheckResult]] = {
    "forward": lambda engine: _check_programs(engine, "forward", backward=False),
    "backward": lambda engine: _check_programs(engine, "backward", backward=True),
    "free": _check_free,
    "versions": _check_versions,
    "no_grad": _check_no_grad,
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
    for node_id in _grad_order(yours):
        t = match.get(node_id)
        if t is None:
            continue
        waiting = [u for u in users[t.id] if u not in done and ref.nodes[u].grad_preview]
        if waiting:
            user = ref.nodes[waiting[0]]
            return (f"your engine reported the gradient of {_describe(t)} before {_describe(user)}"
                    f", which uses it, had sent its share: {_name(t)}'s gradient is missing the "
                    f"path through {_name(user)}. Go through the nodes in reverse topological "
                    "order: a node only after every node that uses it", {node_id})
        done.add(t.id)
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


def _first(rec: Recording, op: str) -> Node | None:
    return next((node for node in _ordered(rec) if op_key(node.op) == op_key(op)), None)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"

