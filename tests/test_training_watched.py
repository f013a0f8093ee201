"""Training, watched (issue 40, item 4): a training loop over a real model, recorded or live.

- repeated training steps roll up as one loop, whatever the body's size (dot.py NOTE [loops of
  any length]), the same in the static picture and the widget;
"""

from __future__ import annotations

import pytest

import dyngraph as dg
from dyngraph import dot
from dyngraph.record import Recording

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")


def gpt_training(steps: int = 20, n_layer: int = 1, backward: bool = True, **record
                 ) -> Recording:
    """``steps`` nanoGPT training steps (forward, loss, backward, SGD step), recorded; without
    ``backward``, forward and loss alone."""
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
