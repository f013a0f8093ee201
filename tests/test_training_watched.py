"""Training, watched (issue 40, item 4): a training loop over a real model, recorded or live.

- repeated training steps roll up as one loop, whatever the body's size (dot.py NOTE [loops of
  any length]), the same in the static picture and the widget;
- a loop's label names the line of its `for`/`while` (events.py NOTE [loop lines]);
- a live view keeps the newest backward passes within its budget, the oldest dropped behind
  one note (jupyter/kept.py NOTE [the newest passes]); a recording keeps its first nodes
  (record.py NOTE [a recording keeps the first nodes]);
- a BatchNorm's running statistics are not drawn unless asked, and the drawing says so (dot.py
  NOTE [running statistics]).
"""

from __future__ import annotations

import inspect

import pytest

import dyngraph as dg
from dyngraph import dot
from dyngraph.record import Recording


def gpt_training(steps: int = 20, n_layer: int = 1, backward: bool = True, **record
                 ) -> Recording:
    """``steps`` nanoGPT training steps (forward, loss, backward, SGD step), recorded; without
    ``backward``, forward and loss alone."""
    torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e .[torch])")
    import real_models

    import dyngraph.torch  # noqa: F401  (dg.record() watches torch once it is imported)

    model, inputs, loss_fn = real_models.gpt_case(n_layer=n_layer)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    with dg.record(**record) as rec:
        for _ in range(steps):
            loss = loss_fn(model(*inputs))
            if backward:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return rec


# ----------------------------------------------------------------------------- one rolled step


def test_loop_spans_find_long_bodies_and_the_loops_inside_the_drawn_iterations():
    step = [0, *[1, 2, 3] * 50, 4]  # a training step: an RNN cell unrolled 50 times
    assert dot.loop_spans(step * 20) == [(0, 20, 152), (1, 50, 3), (19 * 152 + 1, 50, 3)]
    assert dot.loop_spans([9, *[5, 6] * 30, 7]) == [(1, 30, 2)]  # as the periods up to 64 did
    assert dot.loop_spans([3] * 1000) == [(0, 1000, 1)]
    assert dot.loop_spans([1, 2, 3] * 3) == []  # three are drawn as three
    thue_morse = [bin(i).count("1") % 2 for i in range(4096)]  # no three repeats back to back
    assert dot.loop_spans(thue_morse) == []


def test_twenty_training_steps_roll_up_as_one_step():
    rec = gpt_training(20, n_layer=4)
    ops = [n for n in rec.nodes.values() if n.kind == "op"]
    per_step = len(ops) // 20
    assert per_step > dot.MAX_TRIES  # longer than any period the old search tried
    drawn = dot.drawing(rec, collapse_over=10**6, max_nodes=10**6)
    loops = [box for box in drawn.boxes if box.kind == "loop"]
    assert len(loops) == 1, [box.label for box in loops]
    assert loops[0].label[0].startswith("\u00d718 iterations")
    drawn_ops = [box for box in drawn.boxes
                 if box.kind == "node" and rec.nodes[box.members[0]].kind == "op"]
    assert len(drawn_ops) == 2 * per_step  # the first step and the last, drawn


def test_the_widget_rolls_the_training_steps_up_as_the_static_picture_does():
    from test_static_pictures import _same_structure, needs_node

    for mark in needs_node:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    # forward only: the harness gives the widget no gradients to label
    drawn = _same_structure("20 steps", gpt_training(20, backward=False), 10**6, 10**6)
    assert [box.kind for box in drawn.boxes].count("loop") == 1


def test_a_training_loop_rolls_up_beside_the_map_of_the_model():
    """widgets/src/structure.js NOTE [a loop around the model]: past collapse_over, the steps
    roll up first and the map is drawn of the first and last steps; the loss, outside the
    modules, is drawn twice, not once per step."""
    from test_static_pictures import _same_structure, needs_node

    for mark in needs_node:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    rec = gpt_training(20, n_layer=2, backward=False)
    drawn = _same_structure("20 steps, mapped", rec, dot.COLLAPSE_OVER, 200)
    kinds = [box.kind for box in drawn.boxes]
    assert kinds.count("loop") == 1 and kinds.count("scope") >= 4, kinds
    losses = [box for box in drawn.boxes
              if box.kind == "node" and rec.nodes[box.members[0]].op == "NllLossBackward0"]
    assert len(losses) == 2  # the first step's and the last's
    # an RNN cell's loop stays inside the cell's box (the loop is not around the model)
    rnn = rnn_steps()
    [(_, _, outside)] = dot._repeated_iterations(
        sorted(rnn.nodes.values(), key=lambda n: n.order), rnn)
    assert not outside


# ----------------------------------------------------------------------------- the newest passes


def mlp_training(steps: int) -> dg.Tensor:
    """``steps`` training steps of a small MLP in dyngraph; the last loss."""
    dg.manual_seed(0)
    model = dg.nn.Sequential(dg.nn.Linear(3, 4), dg.nn.Tanh(), dg.nn.Linear(4, 2))
    optimizer = dg.optim.SGD(model.parameters(), lr=0.1)
    x, y = dg.randn(5, 3), dg.tensor([0, 1, 1, 0, 1])
    for _ in range(steps):
        loss = dg.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


def watched(steps: int, **options):
    """A GraphView of ``steps`` MLP training steps, and the deltas it sent (unpacked)."""
    pytest.importorskip("anywidget",
                        reason="the jupyter extra is missing (pip install -e .[jupyter])")
    from dyngraph.jupyter import GraphView
    from dyngraph.jupyter.view import unpack

    view = GraphView(**options)
    deltas = []
    view.observe(lambda change: deltas.append(unpack(change["new"])), names="delta")
    view.attach()
    view.last_loss = mlp_training(steps).id
    view.detach(follow=False)
    return view, deltas


def test_a_live_view_keeps_the_newest_passes_within_its_budget_and_says_what_it_dropped():
    with dg.record() as everything:
        mlp_training(20)
    per_step = (len(everything.nodes) - 4) // 20  # the parameters are made once
    view, deltas = watched(20, max_nodes=10 * per_step, rate=1e9)
    kept = view.recording
    assert len(kept.nodes) <= 10 * per_step
    finished = [step for step in kept.timeline if step[0] == "backward_finished"]
    assert 8 <= len(finished) < 20  # the newest passes, as many as fit
    assert kept.dropped_passes == 20 - len(finished)
    assert kept.dropped_pass_nodes == kept.dropped_passes * per_step
    assert kept.dropped_nodes == 0  # nothing new was refused
    # the newest: the last pass kept is the last that ran, whole (its parameters too)
    assert finished[-1][1] == view.last_loss
    assert all(e.src in kept.nodes for e in kept.edges)  # every input a kept node reads is kept
    assert sum(n.kind == "parameter" for n in kept.nodes.values()) == 4
    # the page was told to start over, with everything kept, and the note's numbers
    assert any(delta.get("reset") for delta in deltas)
    dropped = deltas[-1]["dropped"]
    assert dropped["passes"] == kept.dropped_passes and dropped["max_nodes"] == 10 * per_step
    assert "backward passes" in view.recording.to_dot() and "dg.watch(max_nodes=...)" in \
        view.recording.to_dot()
    # one step's structure: the kept steps roll up
    assert sum(box.kind == "loop" for box in
               dg.dot.drawing(kept, collapse_over=10**6, max_nodes=10**6).boxes) == 1


def test_a_view_within_its_budget_and_a_recording_are_as_before():
    view, deltas = watched(3, rate=1e9)
    assert not any(delta.get("reset") for delta in deltas)
    assert view.recording.dropped_passes == 0 and deltas[-1]["dropped"]["passes"] == 0
    # a forward bigger than the budget has no pass to drop: its newest nodes are not kept
    view, _ = watched(1, max_nodes=5)
    assert view.recording.dropped_passes == 0 and view.recording.dropped_nodes > 0
    # a recording keeps its first nodes (record.py NOTE [a recording keeps the first nodes])
    with dg.record(max_nodes=100) as rec:
        mlp_training(20)
    assert len(rec.nodes) == 100 and rec.dropped_nodes > 0 and rec.dropped_passes == 0
    with dg.record() as everything:
        mlp_training(20)
    first = sorted(everything.nodes.values(), key=lambda n: n.order)[:100]
    assert [n.op for n in first] == [n.op for n in rec.nodes.values()]  # the first ones


# ----------------------------------------------------------------------------- loop lines


def line_of(function, text: str) -> int:
    """The line number of the first line of ``function`` that holds ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_the_loop_table_maps_a_body_line_to_its_innermost_loop_in_the_same_function():
    table = dg.events.loop_table("""\
x = 1
for step in range(20):
    loss = f(x)
    while y:
        z = 2
    def g():
        return 3
    loss.backward()
else:
    w = 5
""")
    assert table == {3: 2, 4: 2, 5: 4, 6: 2, 8: 2}  # not 7 (g's own frame), nor the else
    assert dg.events.loop_table("for x in (:") == {}  # not Python: no loops


def test_a_training_loop_is_named_by_its_for_line_not_by_the_models_forward():
    rec = gpt_training(6)
    [loop] = [box for box in dot.drawing(rec, collapse_over=10**6, max_nodes=10**6).boxes
              if box.kind == "loop"]
    # the ops are in real_models.py; backward() is called in the body of this loop
    assert loop.label[0] == f"\u00d74 iterations, line {line_of(gpt_training, 'for _ in')}"


def rnn_steps(steps: int = 10) -> Recording:
    dg.manual_seed(0)
    cell = dg.nn.RNNCell(2, 3)
    xs = dg.randn(steps, 1, 2)
    with dg.record() as rec:
        h = dg.zeros(1, 3)
        for t in range(steps):
            h = cell(xs[t], h)
        h.sum().backward()  # outside the loop: the loop of the ops names it
    return rec


def test_a_loop_without_backward_in_it_is_named_by_its_ops_loop_and_the_widget_agrees():
    from test_static_pictures import _widget_structure, needs_node

    rec = rnn_steps()
    [loop] = [box for box in dot.drawing(rec).boxes if box.kind == "loop"]
    assert loop.label[0] == f"\u00d78 iterations, line {line_of(rnn_steps, 'for t in')}"
    for mark in needs_node:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    # the widget names the same lines (the backward passes travel in its steps)
    for recorded, budget in ((rec, 200), (gpt_training(6), 10**6)):
        python = [box.label[0] for box in dot.drawing(recorded, collapse_over=budget,
                                                       max_nodes=budget).boxes
                  if box.kind == "loop"]
        widget = _widget_structure(recorded, budget, budget)
        assert [box["lines"][0] for box in widget["boxes"] if box["kind"] == "loop"] == python


# ----------------------------------------------------------------------------- running statistics


def test_running_statistics_are_left_out_with_a_note_and_drawn_when_asked():
    from test_static_pictures import _same_structure, needs_node, real_model

    rec = real_model("resnet18")
    stats = [n for n in rec.nodes.values() if dot.is_running_stat(n)]
    assert len(stats) == 40 and {n.name for n in stats} == {"running_mean", "running_var"}
    flat = dict(collapse_over=10**6, max_nodes=10**6)
    hidden, drawn = dot.drawing(rec, **flat), dot.drawing(rec, running_stats=True, **flat)
    assert len(drawn.boxes) - len(hidden.boxes) == 40
    assert not {n.id for n in stats} & {m for box in hidden.boxes for m in box.members}
    assert "40 running statistics not drawn" in hidden.dot and "running_stats=True" in hidden.dot
    assert "not drawn" not in drawn.dot
    # other buffers are data a learner reads: an attention's causal mask stays
    gpt = real_model("gpt")
    masks = [n.id for n in gpt.nodes.values() if n.kind == "constant" and n.scope[-1:] == ("attn",)]
    assert masks and all(f"n{m}" in {box.name for box in dot.drawing(gpt, **flat).boxes}
                         for m in masks)
    # in the map, a module's box still holds them ("bn1 · 5 nodes"): nothing is left out there
    assert "not drawn" not in dot.to_dot(rec)
    for mark in needs_node:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    _same_structure("ResNet-18, flat", rec, 10**6, 10**6)  # the widget leaves the same out


def test_a_view_sends_its_running_stats_option():
    pytest.importorskip("anywidget",
                        reason="the jupyter extra is missing (pip install -e .[jupyter])")
    from dyngraph.jupyter import GraphView

    assert GraphView().options["running_stats"] is False
    assert GraphView(running_stats=True).options["running_stats"] is True
    assert dot.vocabulary()["running_stats"] == list(dot.RUNNING_STATS)
