"""The loss and gradient norm of each backward pass (NOTE [loss and gradient norm per pass] in
dyngraph/record.py): ``Recording.passes()``, what saved recordings keep of them, and what the live
view sends its training chart (NOTE [the training chart] in dyngraph/jupyter/view.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import events
from dyngraph.record import BackwardPass, PassFold, Recording
from dyngraph.recording_io import load_recording

try:
    import anywidget  # noqa: F401 - the live view needs the jupyter extra
except ImportError:
    anywidget = None
needs_jupyter = pytest.mark.skipif(anywidget is None, reason="the jupyter extra is missing "
                                   "(pip install -e .[jupyter])")


def _model():
    dg.manual_seed(0)
    return dg.nn.Sequential(dg.nn.Linear(3, 4), dg.nn.Tanh(), dg.nn.Linear(4, 1))


def _train(steps: int, model=None):
    """A learner's training loop; returns what the learner would print per step: the loss and
    the global norm of the parameters' gradients (as torch.nn.utils.clip_grad_norm_ says)."""
    model = model or _model()
    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    x, y = dg.randn(8, 3), dg.randn(8, 1)
    printed = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        norm = math.sqrt(sum(float((p.grad.numpy().astype(np.float64) ** 2).sum())
                             for p in model.parameters()))
        printed.append((loss.item(), norm))
        opt.step()
        opt.zero_grad()
    return printed


def test_each_pass_has_the_loss_and_the_global_gradient_norm():
    with dg.record() as rec:
        printed = _train(5)
    passes = rec.passes()
    assert [p.step for p in passes] == [1, 2, 3, 4, 5]
    for p, (loss, norm) in zip(passes, printed):
        assert p.loss == pytest.approx(loss, rel=1e-6)
        assert p.grad_norm == pytest.approx(norm, rel=1e-5)
        assert p.leaves == 4  # two weights, two biases
    assert passes[0].loss > passes[-1].loss  # it trains
    assert len({p.root for p in passes}) == 5  # a new loss node each step


def test_passes_are_kept_past_the_budget_of_the_graph():
    with dg.record(max_nodes=30) as rec:  # about one step's nodes
        printed = _train(6)
    assert rec.dropped_nodes > 0
    assert [p.loss for p in rec.passes()] == pytest.approx([loss for loss, _ in printed], rel=1e-6)


def test_a_root_that_is_not_one_number_has_no_loss_and_leaves_that_need_no_grad_do_not_count():
    x = dg.tensor([1.0, 2.0], requires_grad=True, name="x")
    c = dg.tensor([3.0, 4.0], name="c")  # a constant: no gradient
    with dg.record() as rec:
        y = x * c
        y.backward(dg.tensor([1.0, 1.0]))
    (p,) = rec.passes()
    assert p.loss is None
    assert p.grad_norm == pytest.approx(5.0)  # |(3, 4)|
    assert p.leaves == 1


def test_a_failed_pass_is_not_a_step():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.record() as rec:
        loss = (x * x).sum()
        loss.backward()
        with pytest.raises(RuntimeError):
            loss.backward()  # the buffers are freed
    (p,) = rec.passes()
    assert p.loss == pytest.approx(5.0) and p.grad_norm == pytest.approx(math.sqrt(4 + 16))


def test_a_leaf_reached_by_two_passes_counts_in_each_with_that_pass_gradient():
    w = dg.tensor([1.0], requires_grad=True)
    with dg.record() as rec:
        (w * 3.0).sum().backward()
        (w * 4.0).sum().backward()  # .grad holds 7 now; this pass gave 4
    assert [(p.loss, p.grad_norm) for p in rec.passes()] == [(3.0, 3.0), (4.0, 4.0)]


def test_the_fold_takes_events_as_any_engine_reports_them():
    fold = PassFold()
    leaf = events.NodeCreated(1, "parameter", (), (2,), "float32", "cpu", True, True, "w", (),
                              None, (1.0, 2.0))
    loss = events.NodeCreated(2, "Sum", (1,), (), "float32", "cpu", True, False, None, (), None,
                              (math.nan,))
    fold.fold([leaf, loss, events.BackwardStarted(2, False, False),
               events.GradComputed(2, (1.0,), 1.0, False),  # the root: not a leaf
               events.GradComputed(1, (1.0, 1.0), math.inf, False),
               events.BackwardFinished(2)])
    (p,) = fold.passes
    assert p.step == 1 and p.root == 2 and p.leaves == 1
    assert math.isnan(p.loss) and p.grad_norm == math.inf


def test_passes_survive_saving_and_loading(tmp_path):
    with dg.record() as rec:
        _train(3)
    rec._passes.passes.append(BackwardPass(4, math.nan, None, 0, 99))  # a NaN loss, no leaf
    rec.save(tmp_path / "run.json")
    saved = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert saved["passes"][3] == ["NaN", None, 0, 99]
    loaded = load_recording(tmp_path / "run.json")
    assert loaded.passes()[:3] == rec.passes()[:3]
    last = loaded.passes()[3]
    assert math.isnan(last.loss) and last.grad_norm is None and last.step == 4


@pytest.mark.parametrize("bad, where", [
    ("nope", "$.passes: expected a list"),
    ([[1.0, 2.0, 3]], "$.passes[0]: expected [loss, grad_norm, leaves, root]"),
    ([["big", 2.0, 3, 4]], "$.passes[0][0]: expected a number"),
    ([[1.0, 2.0, -3, 4]], "$.passes[0][2]: expected a non-negative integer"),
])
def test_a_damaged_passes_field_is_refused_by_its_path(tmp_path, bad, where):
    with dg.record() as rec:
        _train(1)
    rec.save(tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    document["passes"] = bad
    (tmp_path / "bad.json").write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_recording(tmp_path / "bad.json")
    assert where in str(error.value)


def test_a_recording_saved_before_schema_5_has_no_passes(tmp_path):
    with dg.record() as rec:
        _train(2)
    rec.save(tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    document["schema_version"] = 4
    del document["passes"]
    (tmp_path / "old.json").write_text(json.dumps(document), encoding="utf-8")
    assert load_recording(tmp_path / "old.json").passes() == []


def test_a_recording_made_otherwise_has_no_passes():
    x = dg.tensor([1.0], requires_grad=True)
    assert Recording().passes() == []
    assert dg.draw((x * 2).sum()).recording.passes() == []


# ----------------------------------------------------------------------------- the live view


@needs_jupyter
def test_the_view_sends_each_pass_with_its_texts_once():
    from dyngraph.dot import format_value
    from dyngraph.jupyter.view import GraphView, pass_row, unpack

    view = GraphView(rate=1e9)  # every flush sends a delta
    view.attach()
    deltas = []
    view.observe(lambda change: deltas.append(unpack(change["new"])), names="delta")
    with dg.record() as rec:
        _train(4)
    view.detach()
    rows = [row for delta in deltas for row in delta.get("passes", [])]
    assert rows == [pass_row(p) for p in rec.passes()]  # each once, in order
    assert unpack(view.snapshot)["passes"] == rows
    step, loss, loss_text, norm, norm_text, leaves, root = rows[-1]
    assert root == rec.passes()[-1].root
    assert (step, leaves) == (4, 4)
    assert loss_text == format_value(loss) and norm_text == format_value(norm)
    assert view.recording.passes() == rec.passes()


@needs_jupyter
def test_the_view_keeps_every_pass_past_its_budget():
    from dyngraph.jupyter.view import GraphView, unpack

    view = GraphView(max_nodes=25).attach()
    printed = _train(6)
    view.detach()
    assert unpack(view.snapshot)["dropped"]["nodes"] > 0
    passes = unpack(view.snapshot)["passes"]
    assert [row[1] for row in passes] == pytest.approx([loss for loss, _ in printed], rel=1e-6)
    assert [row[3] for row in passes] == pytest.approx([norm for _, norm in printed], rel=1e-5)


@needs_jupyter
def test_a_page_of_a_recording_shows_its_own_passes():
    """A recording replays each node's last gradient only: the page's passes are the
    recording's, not a fold of the replay (which would give every step the last norm)."""
    from dyngraph.jupyter.view import GraphView, pass_row, unpack

    with dg.record() as rec:
        _train(3)
    norms = [p.grad_norm for p in rec.passes()]
    assert len(set(norms)) == 3
    view = GraphView.from_recording(rec)
    assert unpack(view.state()["snapshot"])["passes"] == [pass_row(p) for p in rec.passes()]


def test_torch_passes_are_the_loss_and_clip_grad_norm():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 3), torch.randn(32, 1)
    printed = []
    with dg.record() as rec:
        for _ in range(4):
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), math.inf)
            printed.append((loss.item(), norm.item()))
            opt.step()
            opt.zero_grad()
    passes = rec.passes()
    assert [p.loss for p in passes] == pytest.approx([loss for loss, _ in printed], rel=1e-6)
    assert [p.grad_norm for p in passes] == pytest.approx([n for _, n in printed], rel=1e-5)
    assert {p.leaves for p in passes} == {4}
