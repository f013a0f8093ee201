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
        "Each element of loss depends on its own a and b only. Mul's local derivative with "
        "respect to a is b; Add passes the gradient on unchanged.",
        "a reaches loss along two paths, through Mul and straight into Add: add the two. "
        "backward() starts from dloss/dloss = 1: what would that be for a loss of two numbers?",
    ),
    "01.1": (
        "Follow the graph from the leaves: first the Mul node a·b, then the Add node with c, "
        "then Tanh.",
        "a·b + c is a plain number here; math.tanh of it is f (dyngraph computes in float32, "
        "the check allows for that).",
    ),
    "01.2": (
        "Compute a + b and a - c first; Mul's derivative with respect to one input is the "
        "other input.",
        "dg/da sums over both paths: through Add (times the Sub result) and through Sub (times"
        " the Add result). c reaches g only through Sub, which gives its second input -1.",
    ),
    "02.1": (
        "Nothing is reused between calls: each builds its whole graph again, holding what the "
        "lesson measured for one graph, and backward frees only the graph it walks.",
        "What did lesson 02 say PyTorch raises when a freed saved value is needed again? "
        "Count the op nodes of one call in run's body.",
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
        "The trace reads each captured tensor (scale) afresh at every replay, but t.shape[0] was "
        "the plain int 3 while it traced: that number is frozen in the graph.",
        "With scale = -1: the replay computes relu(-x + 3).sum(), the function relu(-x + 4).sum()"
        "; add up the positive terms for x = 1, 2, 3, 4.",
    ),
    "04.2": (
        "The trace froze x.shape[0] because it was a Python int; use an op that divides by "
        "the number of rows itself.",
        "dyngraph tensors have the same reductions as numpy arrays.",
    ),
    "05.1": (
        "Decide the branch first: is the sum of [2.5, -1.0] positive? Then the loop count: "
        "int() of the largest absolute entry (int truncates).",
        "The gradient is the branch's derivative times 0.5 per halving. exp is its own "
        "derivative, and a loop over range(0) runs no step.",
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
        "Every step after the first saves the same arrays, so the bytes grow by saved[2] - "
        "saved[1] per extra step; a length-12 sequence has 11 more steps than a length-1 one.",
        "backward() releases what each node saved as it passes (lesson 03's graph_freed).",
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
        "The loss is the sum of small(x) * (1 - p): a bias adds to each output once, and each "
        "output is then multiplied by (1 - p).",
        "For the gate: d loss / d p = -sum(small(x)); p = sigmoid(z) with dp/dz = p (1 - p); and"
        " dz / d gate.bias = 1.",
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
        "Each output is one dot product, v_i . w: what is its derivative with respect to the row "
        "v_i, and with respect to the other rows?",
        "The loop and the matmul compute the same numbers, so backward gives the same gradient:"
        " the weights, once per row (np.tile).",
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
        "What does dg.load_static check about an op? Re-read the cell that tampered with "
        "\"os.system\": it looks the name up among dyngraph's own ops.",
        "Relu is one of dyngraph's ops, with the same input and output shape as Tanh; but is "
        "relu(u) the same number as tanh(u)?",
    ),
    "13.1": (
        "Same code, same input: the two backward passes compute the same gradient for W.",
        "backward() adds into W.grad; nothing clears it between the two runs.",
    ),
    "13.2": (
        "register_hook(fn) on z calls fn(grad) when the gradient of z is ready; a lambda can "
        "store it in the dict: captured.update(dz=g).",
        "Register the hook before calling backward() on (z * w).sum(); the check reads "
        "captured[\"dz\"] and v.grad, which only that backward fills.",
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
        "Without the mask, a padded step still runs the cell: the input is the padding value, "
        "0, and the state moves on. Which rows have no padded steps at all?",
        "Count the sequences as long as the longest one, from lengths alone.",
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
        "Which of Exp, Add and Log need a value in backward? d exp(u)/du is exp(u) itself; "
        "d log(u)/du is 1/u; an Add needs no value. Each saved array is 1000 float32 numbers.",
        "Softplus saves what its forward passes to ctx.save_for_backward, and nothing else.",
    ),
    "16.1": (
        "Run the model on X under dg.no_grad(): no graph is needed to evaluate.",
        "argmax over axis 1 of the logits is the predicted class; compare with y_np and take "
        "the mean.",
    ),
    "16.2": (
        "Make moons_model a fresh MLP with 16 hidden units, then copy the training loop above:"
        " forward, loss, zero_grad, backward, step, with Xm and ym.",
        "Adam with a learning rate around 0.05 and a few hundred steps is plenty; the check "
        "measures moons_model's accuracy itself.",
    ),
    "16.3": (
        "With every weight and bias 0, what are the logits of any point? What is the softmax "
        "of three equal logits?",
        "Cross-entropy is -log of the true class's probability; the gradient of the mean loss"
        " for the out.bias is the mean over the points of softmax minus one-hot, and the "
        "three classes have 100 points each.",
    ),
    "21.1": (
        "With zero outgoing weights, how much do the new units add to the logits?",
        "A new unit's incoming weights get their gradient through its outgoing weights: "
        "multiply by zero.",
    ),
    "21.2": (
        "optimizer.state is a dict keyed by parameter objects; nothing removes the old keys.",
        "Adam's step creates a state entry for every parameter in param_groups that has none "
        "yet.",
    ),
    "21.3": (
        "The twins get the same gradient. Do they get the same update? Adam's update divides "
        "the running average of gradients by that of their squares.",
        "The old unit's moments are its history; the new unit's start at zero.",
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
        "Linear(in, out) turns the last axis from in to out and keeps the axes before it; "
        "an elementwise op like Tanh keeps the shape.",
        "Linear computes x @ weight.T + bias, with weight of shape (out, in): work out that "
        "product for one point x, which has no batch axis.",
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
        "Every tensor starts at version 0, and each in-place op on it adds 1. An op that saves "
        "a tensor for backward notes its version at that moment.",
        "Exp saved its output h as soon as it made it; how many in-place ops ran on h after "
        "that?",
    ),
    "20.1": (
        "Ask what a tensor is while the tool runs the program: real numbers (dg.trace, "
        "jit.trace), a Proxy with no value and no shape (fx), a fake tensor with a shape but no "
        "data (export), or bytecode being read (strict export, compile). jit.script runs "
        "nothing: it compiles the source.",
        "Real numbers never refuse, but reading one into Python warns; a symbol can be computed"
        " with (even .item()) but not decided on; compile breaks where export must raise.",
    ),
    "20.2": (
        "A trace replays the ops of the example [1, 2, 3]: which programs took a decision, or "
        "read a number, that differs for [-1, -2, -3, -4]?",
        "dg.trace reads x.shape[0] as the plain int 3; jit.trace records the size lookup as an "
        "op. A print is not an op: it does not change the value.",
    ),
    "20.3": (
        "jit.trace ran branches on [1, 2, 3]: which branch did the sum's sign pick, and is "
        "that branch re-decided at replay?",
        "torch.cond keeps both branches in the graph and decides at every call: what does "
        "branches return for a negative sum?",
    ),
    "19.1": (
        "y[1:] *= 2 writes into y's own memory: the first element keeps its value, the last "
        "two are doubled.",
        "y.sum() adds y's elements; how much does each element of y change when x's matching "
        "element grows by 1?",
    ),
    "19.2": (
        "A write through a view of a leaf that requires grad is refused at once, unless "
        "no_grad is on.",
        "Backward refuses only a value some op SAVED and that was changed later: which ops "
        "save their output, which their inputs? detach() shares the counter.",
    ),
    "19.3": (
        "Integer and slice indexing and reshape of a contiguous tensor give views; a list "
        "index gives a copy.",
        "Apply the writes in order to a 2x3 grid of zeros; each in-place op on base's memory "
        "bumps the one shared counter once.",
    ),
    "19.4": (
        "In PyTorch x.data has a counter of its own: the backward of Mul does not notice the "
        "change and uses the x it finds, now doubled.",
        "dyngraph's .data shares x's counter, like detach(): what does backward do with a "
        "saved value whose version moved?",
    ),
    # the build-your-own track (lessons 22-27): the learner's scalar engine, step by step
    "22.1": (
        "Forward first: Add's output is self.data + other.data, Mul's the product, tanh's "
        "math.tanh(self.data). saved is what backward will need: Mul the two inputs "
        "themselves, (self, other); tanh its input, (self,); Add nothing, ().",
        "local_grads, by self.op: Add gives (1.0, 1.0); Mul gives each input the *other* "
        "saved value's data, in the inputs' order; tanh gives 1 - t*t with t = "
        "math.tanh(x.data), x the saved input.",
    ),
    "23.1": (
        "topological_order: visit a value's inputs before appending the value itself, and "
        "remember what you have seen, so a value used twice is appended once.",
        "send_grads: each input gets its local derivative (from self.local_grads()) times "
        "self.grad, and a value used by two ops gets both shares: add them (+=).",
    ),
    "24.1": (
        "free_saved: what the ops saved is their .saved; set it to None and tell the source "
        "which values you freed, in one call.",
        "check_saved runs before local_grads() reads .saved: when it is None, raise a "
        "RuntimeError of your own that starts 'Trying to backward through the graph a second "
        "time' (an error from unpacking None says nothing of what happened).",
    ),
    "25.1": (
        "add_ changes self.data where it is, so the value's version goes up by one: report "
        "the new version with src.version_bumped.",
        "Each op wrote down the versions of what it saved (saved_versions). In check_saved, "
        "after lesson 24's check, compare each saved value's version now with the one "
        "written down, and raise a RuntimeError saying 'modified by an inplace operation'.",
    ),
    "26.1": (
        "no_grad: switch Value.grad_enabled off, yield, and switch it back to what it was in "
        "a finally: block, so an error inside cannot leave it off.",
        "_op: while grad is off, make a value with no inputs, nothing saved and an op name "
        "other than 'leaf', and report nothing; otherwise do what the engine so far did.",
    ),
    "27.1": (
        "A tape is the graph's values in topological order: leaves first, each op after "
        "its inputs. Replaying is a walk along it, and never calls fn again.",
        "Keep a dict from each value to its new number: the leaves get the new inputs, each "
        "op gets FORWARD[v.op] of its inputs' new numbers.",
    ),
    "28.1": (
        "g has one entry per weight: differentiate w0² · w1 by w0 (w1 is a constant then), and "
        "by w1 (w0² is the constant).",
        "H holds the derivatives of g's entries: row i is d g_i / d w. Multiplied by v = (1, 0) "
        "it keeps H's first column.",
    ),
    "28.2": (
        "An inference tensor is one allocated inside the block; w was made before it, so it is "
        "a normal tensor. Under no_grad, what does an in-place change of a leaf do?",
        "Mul saves both inputs for backward, and saving needs a version counter, which an "
        "inference tensor lacks. enable_grad switches grad mode on, but not inference mode off.",
    ),
    # lesson 29: the learner's engine trains an MLP
    "29.1": (
        "as_value: a number becomes a Value of its own (a leaf, made with Value(...)); a Value "
        "is returned as it is. Every other method is one line built from + and *.",
        "Python calls a.__rsub__(1) for 1 - a: `other` is the number, and it stands on the "
        "left. -a is a times -1; a - b is a plus the negation of b.",
    ),
    "29.2": (
        "The two backwards run through two graphs, and each adds its gradient to the same "
        "w.grad: add the two derivatives at w = 0.5.",
        "zero_grad: for each parameter, set its grad back to the number a fresh Value starts "
        "with (your backward adds to it, so not None).",
    ),
    "29.3": (
        "Neuron.__call__: start from the bias and add each weight times its input (sum() takes "
        "a start value), then tanh unless nonlin is False.",
        "A neuron's parameters are its weights and its bias, in one list; a layer's are its "
        "neurons' in order, an MLP's its layers' in order.",
    ),
    "29.4": (
        "Each step: zero_grad(model.parameters()), loss = mse(...), loss.backward(), then the "
        "update of every parameter; keep loss.data in a list.",
        "The gradient points up the loss: step against it, subtracting lr times p.grad from "
        "p.data. Zero the grads before the backward, not between backward and the update.",
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
    # NOTE [booleans are answers of their own type] 0 == False and 1 == True in Python, so a
    # yes/no question would accept 0, and a counting question would accept True: refuse both.
    truth_values = (bool, np.bool_)
    if isinstance(expected, truth_values) and not isinstance(mine, truth_values):
        return f"answer True or False, not {mine!r} (a {type(mine).__name__})"
    if isinstance(mine, truth_values) and not isinstance(expected, truth_values):
        return f"yours is {mine!r}, a yes/no answer where a value is expected"
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


class Verdict:
    """What a check returns: true on PASS, false otherwise. The check has printed its line, so
    in a notebook the verdict shows nothing more: a check as a cell's last line adds no
    ``Out: True`` under its PASS."""

    __slots__ = ("passed",)

    def __init__(self, passed: bool) -> None:
        self.passed = bool(passed)

    def __bool__(self) -> bool:
        return self.passed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (bool, Verdict)):
            return self.passed == bool(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.passed)

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed})"

    def _ipython_display_(self) -> None:
        """Nothing to add: the check printed its line (IPython then shows no Out[...])."""


def check_answer(exercise: str, name: str, mine: Any, expected: Any,
                 rtol: float = 1e-4, atol: float = 1e-6) -> Verdict:
    """Check one answer of exercise ``exercise`` and print one line: not attempted yet, PASS, or
    what differs and by how much. ``mine`` may be a function of no arguments that computes the
    answer from the learner's code (it is called here, so a placeholder that raises
    ``NotImplementedError`` counts as not attempted). Returns a Verdict, true on PASS.

    >>> check_answer("03.2", "k.grad", my_k_grad, k.grad)
    03.2 k.grad: PASS
    """
    status, detail = _grade(mine, expected, rtol, atol)
    ask = f'a hint: lessons.hint("{exercise}")'
    line = {"blank": f"{NOT_ATTEMPTED} (replace the ... above; {ask})",
            "pass": "PASS",
            "wrong": f"not yet: {detail}; {ask}"}[status]
    print(f"{exercise} {name}: {line}")
    _expect_version(exercise, name, status)
    return Verdict(status == "pass")


def _expect_version(exercise: str, name: str, status: str) -> None:
    """Under DYNGRAPH_EXERCISES=learner / solution, raise when a check does not say what that
    version of the lessons expects (blank / pass)."""
    mode = os.environ.get("DYNGRAPH_EXERCISES", "")
    wanted = {"learner": "blank", "solution": "pass"}.get(mode)
    if wanted is not None and status != wanted:
        raise AssertionError(f"exercise {exercise} ({name}): the {mode} version should say "
                             f"{NOT_ATTEMPTED if wanted == 'blank' else 'PASS'}")


# ----------------------------------------------------------------------------- build your own

def check_engine_step(exercise: str, result: Any) -> Verdict:
    """Print one step's CheckResult (dyngraph.engine_check.check_engine) of the learner's engine
    in check_answer's format; returns a Verdict, true on PASS.

    >>> check_engine_step("23.1", check_engine(engine, "backward"))
    23.1 backward: PASS
    """
    status = {"PASS": "pass", NOT_ATTEMPTED: "blank"}.get(result.status, "wrong")
    ask = f'a hint: lessons.hint("{exercise}")'
    line = {"blank": f"{NOT_ATTEMPTED} ({result.message}; {ask})",
            "pass": "PASS",
            "wrong": f"not yet: {result.message}; {ask}"}[status]
    print(f"{exercise} {result.step}: {line}")
    _expect_version(exercise, result.step, status)
    return Verdict(status == "pass")


def watch_beside(program: Any, engine: Any, backward: bool = False) -> None:
    """Draw ``program`` (a function of an Engine, as in dyngraph.engine_check) run on the
    learner's ``engine`` and then on dyngraph's, each in a live ``dg.watch()`` of its own, so
    the two graphs are seen one beside the other. A part of the engine that is not written yet
    (NotImplementedError) is said in one line instead."""
    from . import watch
    from .engine_check import reference_engine

    for title, each in (("your engine", engine), ("dyngraph", reference_engine())):
        with watch(title=f"{title}: {program.__name__}", pace=0.1):
            try:
                out = program(each)
                if backward:
                    out.backward()
            except NotImplementedError:
                print(f"{title}: {NOT_ATTEMPTED} (a part of it raises NotImplementedError)")


def method_of(cls: type) -> Any:
    """A decorator that adds the function below it to ``cls`` as a method, so that a lesson's
    exercise can add one method to the engine built so far::

        @method_of(Value)
        def backward(self): ...
    """
    def add(function: Any) -> Any:
        setattr(cls, function.__name__, function)
        return function

    return add
