"""Small helpers for the lessons' exercises: tell a learner how right (or wrong) they are.

Modelled on nn-zero-to-hero's ``cmp``: one line per check, exact / close / max difference, so a
learner sees *how far* off an answer is, not just that it is wrong.

>>> compare("dL/dx", my_grad, x.grad)
dL/dx        | exact: True  | close: True  | max diff: 0

Exercises use ``check_answer`` and ``hint``. An exercise cell starts with a placeholder (``...``, or
a function body that raises ``NotImplementedError``); its check cell prints one of three things:

>>> check_answer("03.1", "df/dx", my_df_dx, x.grad)
03.1 df/dx: not attempted yet (replace the ... above; a hint: lessons.hint("03.1"))
03.1 df/dx: PASS
03.1 df/dx: not yet: yours is 9, 3 too low; a hint: lessons.hint("03.1")

``hint("03.1")`` prints the first hint, ``hint("03.1", 2)`` the next; never the answer. The
solutions live in the lessons, in the exercise cells' metadata; ``tools/exercises.py`` writes the
solution version of the lessons (and the one ``make test`` runs, where every exercise is checked
as the learner opens it and then with its solution). Set ``DYNGRAPH_EXERCISES`` to ``learner`` or
``solution`` to make a check that does not say what that version expects raise AssertionError.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .extras import install_command
from .tensor import Tensor


def _array(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def compare(name: str, mine: Any, reference: Any, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Print whether ``mine`` equals ``reference`` exactly, approximately, and by how much;
    returns True when they are close."""
    a, b = _array(mine), _array(reference)
    if a.shape != b.shape:
        print(f"{name:12s} | shape mismatch: yours {a.shape}, expected {b.shape}")
        return False
    exact = bool(np.array_equal(a, b))
    close = bool(np.allclose(a, b, rtol=rtol, atol=atol))
    diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
    print(f"{name:12s} | exact: {exact!s:5} | close: {close!s:5} | max diff: {diff:.2g}")
    return close


def check(name: str, passed: bool, hint: str = "") -> bool:
    """Print PASS or FAIL (with a hint on failure) for a yes/no exercise."""
    print(f"{name}: PASS" if passed else f"{name}: FAIL{' - ' + hint if hint else ''}")
    return bool(passed)


def optional_torch() -> Any:
    """Return the ``torch`` module for a lesson's "Now in PyTorch" cells, or None after printing
    one line saying how to install it. Cells guard themselves with ``if torch:``.

    dyngraph never needs PyTorch; the lessons only compare with it where it is installed.
    """
    try:
        import torch
    except ImportError:
        print(f"PyTorch is not installed: {install_command('torch')} "
              "to run the 'Now in PyTorch' cells")
        return None
    return torch


# ----------------------------------------------------------------------------- exercises

NOT_ATTEMPTED = "not attempted yet"

# NOTE [hints] One entry per exercise, "LL.N" (lesson, exercise): hints in the order they are
# revealed, each a nudge towards the method, never the answer itself.
HINTS: dict[str, tuple[str, ...]] = {
    "00.1": (
        "The chain rule through two ops: Tanh's local derivative is 1 - tanh(u)² at its input"
        " u = x·w; Mul's, with respect to w, is x.",
        "Multiply the two local derivatives element by element, with numpy's np.tanh.",
    ),
    "00.2": (
        "One op node per operation the expression performs; leaves are not ops.",
        "Read the expression from the inside out: a product, a sum with a, an exponential, a "
        "sum over elements.",
    ),
    "01.1": (
        "Follow the graph from the leaves: first the Mul node a·b, then the Add node with c, "
        "then Tanh.",
        "a·b + c is a plain number here; math.tanh of it is f (dyngraph computes in float32, "
        "the check allows for that).",
    ),
    "01.2": (
        "A tensor is one node however many times it is used; each op adds one node.",
        "Every op has one incoming edge per input: count the inputs of Add, Sub and Mul.",
    ),
    "02.1": (
        "How many op nodes does one call of run(x, w) make? Look at its body.",
        "Nothing is reused between calls: each one builds its whole graph again.",
    ),
    "02.2": (
        "Count the tensors the ops save: Mul keeps both inputs, Tanh its output. Each is 5 "
        "float32 numbers of 4 bytes.",
        "After backward(), what did the graph_freed event release?",
    ),
    "03.1": (
        "df/dx: differentiate x² (power rule) and keep the other factor, y, as it is.",
        "df/dy: y appears twice, in x²·y and in + y; add the derivative along each path.",
    ),
    "03.2": (
        "Each backward() adds dm/dk into k.grad; what is dm/dk for m = 3k?",
        "Nothing resets k.grad between the two calls.",
    ),
    "03.3": (
        "An op is freed only if it saved tensors for its backward; read each op's docstring.",
        "Which local rule needs no value at all? It passes the gradient on unchanged.",
    ),
    "03.4": (
        "The newest op runs first: L's Add passes its upstream gradient, 1, times dz/dy = 1, "
        "to u.",
        "Then v = u * u, whose gradient is 3: each of its two edges carries 3 times the other"
        " input, u = 2.",
    ),
    "04.1": (
        "A trace writes down one step per op the function runs; Python arithmetic on plain "
        "numbers is not an op.",
        "Read the lambda from the inside out: how many ops does (t * 2 + 1).relu().sum() "
        "call?",
    ),
    "04.2": (
        "The trace froze x.shape[0] because it was a Python int; use an op that divides by "
        "the number of rows itself.",
        "dyngraph tensors have the same reductions as numpy arrays.",
    ),
    "05.1": (
        "Decide the branch first: is the sum of [0.5, -3.0] positive? Then the loop count: "
        "int of the largest absolute entry.",
        "graph_size counts x, the branch's op, one Mul per loop step and the final Sum; the "
        "condition ops and the constants are not counted.",
    ),
    "05.2": (
        "The replay does not look at the input's sign or size: it repeats exactly the ops of "
        "run A, traced on [1, 2].",
        "Run A was tanh, then two halvings, then a sum; apply them with numpy to [0.5, -3.0].",
    ),
    "05.3": (
        "An output is a node no other node uses. Which ops' results went only into Python (an"
        " if, a range) and never into h?",
        "Abs is used by Max, so only Max is a dead end of the loop count; do not forget the "
        "function's own result.",
    ),
    "06.1": (
        "The size grows by the same number of nodes per step: how many does one step add, "
        "judging from sizes[1] and sizes[2]?",
        "A length-12 sequence has 11 more steps than a length-1 sequence.",
    ),
    "06.2": (
        "Padded into one batch, every row is as long as the longest sequence.",
        "Computed steps are rows times the longest length; real steps are the sum of the "
        "lengths.",
    ),
    "06.3": (
        "Call count on one sequence at a time: seq[None, :] is a batch of one, of shape (1, "
        "length).",
        "count returns a tensor of one element; .item() gives the number. Collect ten of them"
        " in np.array.",
    ),
    "07.1": (
        "encode calls combine once per inner node of the tree, and never at a leaf.",
        "A binary tree with n leaves: each inner node joins two subtrees into one. How many "
        "joins turn n leaves into one root?",
    ),
    "07.2": (
        "Count three kinds of nodes: per leaf (the embedding lookup), per inner node (Cat, "
        "then the ops of Linear, then Tanh), and the parameters used.",
        "A Linear call records Permute (the transposed weight), MatMul and Add; the number of"
        " inner nodes is exercise 1's answer.",
    ),
    "07.3": (
        "Same shape as encode: a leaf returns its embedding, an inner node combines its "
        "children's results.",
        "Instead of cat and combine, add the two children's results with +.",
    ),
    "08.1": (
        "Which branch does p = 0.68 take? Backward only visits the parameters of the modules "
        "that ran.",
        "Names look like gate.weight, big.0.bias, small.weight: list those of the module that"
        " never ran.",
    ),
    "08.2": (
        "Use items.detach().numpy() and query.detach().numpy(); a matrix-vector product gives"
        " one score per item.",
        "Softmax: exponentiate the scores, then divide by their sum.",
    ),
    "08.3": (
        "Score all 5 padded rows against the query, then dg.where(mask, scores, -1e9) so "
        "padded rows get weight 0.",
        "Then softmax over axis 0 and average the padded items with those weights, as attend "
        "does.",
    ),
    "08.4": (
        "p = 0.41 sends input 4 to the small expert. Each Linear records three ops.",
        "After the expert: the line return self.small(x) * (1 - p) runs two more ops.",
    ),
    "09.1": (
        "The in-place h /= ... overwrote the output that Exp saved for its backward.",
        "Write the division so that it makes a new tensor and binds it to the name h.",
    ),
    "09.2": (
        "Backward starts at the output and reaches a tensor only after every tensor computed "
        "from it.",
        "register_hook(fn) calls fn(grad); a lambda that appends a name works. Freeze the "
        "loop variable with a default argument, as above.",
    ),
    "09.3": (
        "The derivative of sqrt(s) is 1 / (2 sqrt(s)): infinite at s = 0. Keep s away from 0.",
        "Add a tiny constant to the sum of squares before taking the square root.",
    ),
    "10.1": (
        "What does each op need in backward? Mul's gradient for a is grad * b, and for b is "
        "grad * a.",
        "Sum's backward only spreads the gradient over the input's shape. A float32 number is"
        " 4 bytes.",
    ),
    "10.2": (
        "backward() releases every saved array as it goes, unless told to keep them.",
        "With retain_graph=True nothing is released: the graph holds what it held after "
        "forward (exercise 1).",
    ),
    "10.3": (
        "Start from checkpointed_loss above and change the segment length.",
        "Each dg.checkpoint(run_layers, h, layers[start : start + 8]) call is one segment; "
        "two of them cover the 16 layers.",
    ),
    "11.1": (
        "Work on the whole (rows, 16) tensor at once: square every entry, add along each row,"
        " take the square root.",
        "sum takes an axis argument: axis=1 adds along each row.",
    ),
    "11.2": (
        "dg.trace(fn, *example_inputs) takes several example inputs after the function.",
        "The StaticGraph it returns is called like the function: graph(x, h).",
    ),
    "11.3": (
        "Per row the loop runs three ops: vectors[i] (an Index), the * weights, the .sum().",
        "Then dg.stack collects the 200 results in one more op.",
    ),
    "12.1": (
        "Three calls: dg.trace(model, example), graph.save(path) (it returns the path to "
        "load), dg.load_static(path).",
        "Save under os.path.join(tmp, some_name); the loaded graph is called like the model.",
    ),
    "12.2": (
        "document is the parsed JSON: a dict whose \"steps\" entry is a list of dicts.",
        "Each step dict has an \"op\" key; collect them in order with a list comprehension.",
    ),
    "12.3": (
        "Count three kinds: the input x, each Linear's weight and bias, and the ops.",
        "Each Linear records Permute, MatMul and Add; the Tanh sits between the two layers.",
    ),
    "13.1": (
        "Only the loop's length differs between the runs; count the nodes one iteration adds.",
        "One iteration: the row seq[t] (an Index node), then MatMul, Add and Tanh.",
    ),
    "13.2": (
        "register_hook(fn) on z calls fn(grad) when the gradient of z is ready; a lambda can "
        "store it in the dict.",
        "Register the hook before calling backward(); afterwards read captured[\"dz\"].",
    ),
    "14.1": (
        "A padded batch has as many row-steps as rows times the longest length; the real ones"
        " are the sum of the lengths.",
        "The share of padding is 1 minus real over padded.",
    ),
    "14.2": (
        "Each step: clear the gradient, compute the loss, backward, then let the optimizer "
        "step.",
        "optimizer.zero_grad() must run every step, before backward(): gradients accumulate.",
    ),
    "14.3": (
        "One RNNCell step records a Linear-like triple for the input and one for the state, "
        "then an Add and a Tanh.",
        "With a mask, each step also runs dg.where; the padded batch has as many steps as its"
        " longest sequence (20).",
    ),
    "15.1": (
        "backward returns grad_y times the local derivative dy/dx; the docstring states it, "
        "with s the saved sigmoid.",
        "x and s from ctx.saved_tensors are tensors: write the docstring's formula with "
        "them, then multiply by grad_y.",
    ),
    "15.2": (
        "Call backward() on the sum of Swish.apply(t); the gradient lands in the leaf's "
        ".grad.",
        "This uses your backward from exercise 1: solve that first.",
    ),
    "15.3": (
        "A recording holds leaves, constants (the 1 and the 2 are tensors too) and ops.",
        "The naive version runs Exp, Add, Log where the custom one runs one Softplus node.",
    ),
    "16.1": (
        "Run the model on X under dg.no_grad(): no graph is needed to evaluate.",
        "argmax over axis 1 of the logits is the predicted class; compare with y_np and take "
        "the mean.",
    ),
    "16.2": (
        "Copy the training loop above: forward, loss, zero_grad, backward, step, with Xm and "
        "ym.",
        "Adam with a learning rate around 0.05 and a few hundred steps is plenty; evaluate "
        "under dg.no_grad().",
    ),
    "16.3": (
        "Each Linear records a Permute of its weight, a MatMul and an Add; the relu runs in "
        "MLP.forward itself.",
        "Parameters: each Linear has a weight and a bias.",
    ),
    "17.1": (
        "Only use what both libraries spell the same: torch_like.tensor(values, "
        "requires_grad=True), *, .sum(), .backward(), .grad.",
        "Make the tensor, square it element by element, sum, call backward, return the "
        "tensor's grad.",
    ),
    "17.2": (
        "theirs = torch.nn.GRU(...) and mine = dg.nn.GRU(...) with the same arguments; then "
        "mine.load_state_dict(theirs.state_dict()).",
        "A GRU returns (output, last hidden state); call each on its own library's tensor "
        "made from inputs.",
    ),
    "17.3": (
        "dg.manual_seed and torch.manual_seed seed two different random generators.",
        "The program loaded START into both models: why would it need to?",
    ),
    "17.4": (
        "A Sequential's children have no attribute names, so each frame reads the child's "
        "position and its class, joined by \" · \".",
        "The model is Sequential(Linear(2, 16), Tanh(), Linear(16, 2)); positions count from "
        "0.",
    ),
    "18.1": (
        "PyTorch names a node after the backward function of the op that made it: the op's "
        "name, then Backward, then a variant number.",
        "Indexing one element with v[0] is a select in PyTorch's vocabulary.",
    ),
    "18.2": (
        "How many paths lead from the loss back to v?",
        "The accumulated flag is set when a node's gradient was summed from more than one "
        "path (lesson 03's fan-in).",
    ),
    "18.3": (
        "An in-place op bumps a version counter, and the timeline records that as its own "
        "step.",
        "The retain_graph section above printed the kinds of steps a backward adds; which one"
        " does a failing backward end with?",
    ),
}


def hint(exercise: str, n: int = 1) -> None:
    """Print hint ``n`` (from 1) of an exercise, and how to ask for the next one."""
    hints = HINTS.get(exercise)
    if not hints:
        print(f"no hints for exercise {exercise!r}")
        return
    n = min(max(n, 1), len(hints))
    more = f"  (next: hint({exercise!r}, {n + 1}))" if n < len(hints) else "  (last hint)"
    print(f"{exercise} hint {n}/{len(hints)}: {hints[n - 1]}{more}")


def _difference(mine: Any, expected: Any, rtol: float, atol: float) -> str | None:
    """None when ``mine`` matches ``expected``, else what differs and by how much."""
    if isinstance(expected, (str, bool, type(None))) or isinstance(mine, (str, bool)):
        return None if mine == expected else f"yours is {mine!r}, which is not it"
    if isinstance(expected, (set, frozenset)):
        if not isinstance(mine, (set, frozenset)):
            return f"expected a set, yours is a {type(mine).__name__}"
        extra, missing = len(set(mine) - expected), len(expected - set(mine))
        return None if not extra and not missing else (
            f"{extra} of yours should not be there, {missing} missing")
    if isinstance(expected, (list, tuple)) and any(isinstance(e, str) for e in expected):
        mine = list(mine) if isinstance(mine, (list, tuple)) else mine
        if not isinstance(mine, list):
            return f"expected a list of {len(expected)} names, yours is a {type(mine).__name__}"
        for i, (m, e) in enumerate(zip(mine, expected)):
            if m != e:
                return f"item {i + 1} differs: yours is {m!r}"
        if len(mine) != len(expected):
            return f"yours has {len(mine)} items, expected {len(expected)}"
        return None
    try:
        a, b = _array(mine).astype(np.float64), _array(expected).astype(np.float64)
    except (TypeError, ValueError):
        return f"yours is a {type(mine).__name__}, expected a number or an array"
    if a.shape != b.shape:
        return f"shape: yours {a.shape}, expected {b.shape}"
    if np.allclose(a, b, rtol=rtol, atol=atol):
        return None
    if a.size == 1:
        gap = float(a.reshape(()) - b.reshape(()))
        side = "high" if gap > 0 else "low"
        return f"yours is {float(a.reshape(())):.6g}, {abs(gap):.3g} too {side}"
    wrong = ~np.isclose(a, b, rtol=rtol, atol=atol)
    worst = np.unravel_index(int(np.argmax(np.abs(a - b))), a.shape)
    return (f"{int(wrong.sum())} of {a.size} entries differ, the most at index "
            f"{tuple(int(i) for i in worst)} (max diff {float(np.max(np.abs(a - b))):.3g})")


def _grade(mine: Any, expected: Any, rtol: float, atol: float) -> tuple[str, str]:
    """("blank" | "pass" | "wrong", what differs) for one answer."""
    if callable(mine) and not isinstance(mine, Tensor):
        try:
            mine = mine()
        except NotImplementedError:
            return "blank", ""
        except Exception as err:  # the learner's code failed: say how
            return "wrong", f"your code raised {type(err).__name__}: {err}"
    if mine is ...:
        return "blank", ""
    detail = _difference(mine, expected, rtol, atol)
    return ("pass", "") if detail is None else ("wrong", detail)


def check_answer(exercise: str, name: str, mine: Any, expected: Any,
                 rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Check one answer of exercise ``exercise`` and print one line: not attempted yet, PASS, or
    what differs and by how much. ``mine`` may be a function of no arguments that computes the
    answer from the learner's code (it is called here, so a placeholder that raises
    ``NotImplementedError`` counts as not attempted). Returns True on PASS.

    >>> check_answer("03.2", "k.grad", my_k_grad, k.grad)
    03.2 k.grad: PASS
    """
    status, detail = _grade(mine, expected, rtol, atol)
    ask = f'a hint: lessons.hint("{exercise}")'
    line = {"blank": f"{NOT_ATTEMPTED} (replace the ... above; {ask})",
            "pass": "PASS",
            "wrong": f"not yet: {detail}; {ask}"}[status]
    print(f"{exercise} {name}: {line}")
    mode = os.environ.get("DYNGRAPH_EXERCISES", "")
    wanted = {"learner": "blank", "solution": "pass"}.get(mode)
    if wanted is not None and status != wanted:
        raise AssertionError(f"exercise {exercise} ({name}): the {mode} version should say "
                             f"{NOT_ATTEMPTED if wanted == 'blank' else 'PASS'}")
    return status == "pass"
