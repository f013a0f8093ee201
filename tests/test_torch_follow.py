"""A watched PyTorch graph stays watched until freed (issue 36): forward under dg.watch() in one
cell, a plain ``loss.backward()`` in the next plays in the same view, as for dyngraph's own
engine (tests/test_follow.py; NOTE [a watched graph stays watched, in PyTorch] in
dyngraph/torch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import dyngraph as dg  # noqa: E402
import dyngraph.torch as dgt  # noqa: E402
from dyngraph import events  # noqa: E402
from dyngraph.spine.thread_state import this_thread  # noqa: E402


@pytest.fixture(autouse=True)
def no_followers_left():
    this_thread.state.followers.clear()
    yield
    this_thread.state.followers.clear()


def watched_forward():
    """a * b + a, summed, built while a recording listened: its node ids and its loss."""
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0], requires_grad=True)
    with dg.record() as rec:
        c = a * b
        d = c + a
        loss = d.sum()
    return set(rec.nodes), loss, a, b


def follower(ids: set) -> tuple[list, object]:
    """A follower of the graph of ``ids`` (as a view that drew it follows it), and what it
    hears."""
    heard: list = []
    handle = events.follow(lambda roots: any(root in ids for root in roots), heard.append)
    return heard, handle


def test_a_plain_backward_after_the_block_is_heard_whole():
    ids, loss, a, b = watched_forward()
    heard, _ = follower(ids)
    loss.backward()  # outside any watch block: no mode, only the nodes' hooks
    kinds = [e.kind for e in heard]
    assert kinds[0] == "backward_started" and kinds[-2:] == ["graph_freed", "backward_finished"]
    started = heard[0]
    assert started.root in ids and not started.retain_graph and not started.create_graph
    # the line that ran it: the source panel highlights it during the pass
    assert started.where is not None and started.where.file == __file__
    assert "loss.backward()" in Path(__file__).read_text().splitlines()[started.where.line - 1]
    grads = {e.id: e.preview for e in heard if e.kind == "grad_computed"}
    assert set(grads) == ids  # every node it drew
    leaves = [e for e in heard if e.kind == "grad_computed" and e.preview == (5.0, 6.0)]
    assert leaves and a.grad.tolist() == [5.0, 6.0] and b.grad.tolist() == [2.0, 3.0]
    assert len([e for e in heard if e.kind == "edge_grad"]) == 5
    freed = next(e for e in heard if e.kind == "graph_freed")
    assert set(freed.ids) <= ids and freed.ids  # the Mul saved a and b
    assert this_thread.state.followers == {}  # the graph is freed: nothing left to follow
    assert not this_thread.state.active and not this_thread.state.subscribers


def test_retain_graph_keeps_following_and_frees_nothing():
    ids, loss, _a, _b = watched_forward()
    heard, _ = follower(ids)
    loss.backward(retain_graph=True)
    assert heard[0].retain_graph and "graph_freed" not in [e.kind for e in heard]
    assert len(this_thread.state.followers) == 1
    loss.backward()
    assert [e.kind for e in heard].count("backward_started") == 2
    assert [e.kind for e in heard].count("graph_freed") == 1
    assert this_thread.state.followers == {}


def test_autograd_grad_with_create_graph_is_heard_too():
    ids, loss, a, _b = watched_forward()
    heard, _ = follower(ids)
    (ga,) = torch.autograd.grad(loss, a, create_graph=True)
    assert ga.tolist() == [5.0, 6.0]
    assert heard[0].kind == "backward_started" and heard[0].create_graph
    assert heard[0].retain_graph  # create_graph keeps the graph, as PyTorch does
    assert heard[-1].kind == "backward_finished"


def test_a_failing_backward_is_heard_as_failed_and_leaves_nobody_subscribed():
    x = torch.ones(3, requires_grad=True)
    with dg.record() as rec:
        h = x.exp()
        s = h.sum()
    heard, _ = follower(set(rec.nodes))
    h.add_(1)  # changes what ExpBackward0 saved
    with pytest.raises(RuntimeError, match="inplace operation"):
        s.backward()
    assert [e.kind for e in heard][0] == "backward_started"
    assert heard[-1].kind == "backward_failed" and "error" in heard[-1].error
    assert not this_thread.state.active and not this_thread.state.subscribers
    assert len(this_thread.state.followers) == 1  # nothing was freed: it still follows


def test_a_graph_nobody_follows_is_not_heard_and_costs_no_subscription():
    ids, _loss, a, _b = watched_forward()
    heard, _ = follower(ids)
    with dg.record():
        other = (a * 3).sum()  # another graph, drawn by another recording
    other.backward()
    assert heard == [] and not this_thread.state.subscribers
    assert len(this_thread.state.followers) == 1


def test_unwatched_code_gets_no_hook():
    """No follower, no watch: PyTorch runs as it came, with nothing of dyngraph on its nodes."""
    a = torch.ones(2, requires_grad=True)
    y = (a * 2).sum()
    assert dict(y.grad_fn.metadata) == {}
    y.backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_a_loss_computed_in_the_later_cell_plays_from_the_graph_drawn():
    """The forward drawn up to ``h``, the loss made in the cell that calls backward: the pass
    enters the drawn graph at h, which is its root as far as the view knows."""
    x = torch.tensor([1.0, -1.0], requires_grad=True)
    with dg.record() as rec:
        h = torch.tanh(x * 2)
    heard, _ = follower(set(rec.nodes))
    loss = (h ** 2).sum()  # unwatched
    loss.backward()
    ids = {node.id: node.name for node in rec.nodes.values()}
    assert heard[0].kind == "backward_started" and ids[heard[0].root] == "h"
    assert heard[-1].kind == "backward_finished"


def test_the_next_training_step_unwatched_does_not_wake_the_view_of_the_first():
    w = torch.tensor([0.5, -0.5], requires_grad=True)
    with dg.record() as rec:
        first = (w * 3).sum()  # step 1, watched: its graph is kept alive by `first`
    heard, _ = follower(set(rec.nodes))
    second = (w * 4).sum()  # step 2, unwatched, through the same leaf
    second.backward()
    assert heard == [] and len(this_thread.state.followers) == 1
    first.backward()
    assert heard[0].kind == "backward_started" and heard[-1].kind == "backward_finished"


def test_a_view_plays_a_later_backward_with_its_edges():
    pytest.importorskip("anywidget", reason="the live view needs the jupyter extra (anywidget)")
    from dyngraph.jupyter.view import GraphView, unpack

    view = GraphView()
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    with dg.watch(view, display=False):
        loss = (a * a).sum()
    before = len(unpack(view.snapshot)["events"])
    loss.backward()  # a later cell
    after = [kind for kind, _ in unpack(view.snapshot)["events"][before:]]
    assert after[0] == "backward_started" and after[-1] == "backward_finished"
    assert after.count("edge_grad") == 3 and "graph_freed" in after
    assert dgt._here.passes == [] and dgt._callers == [] and dgt._here.held == []
