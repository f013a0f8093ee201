"""A watched graph stays watched until it is freed: forward under ``dg.watch()`` in one cell, a
plain ``loss.backward()`` in the next plays in the same view (NOTE [a watched graph stays
watched] in dyngraph/spine/events.py)."""

from __future__ import annotations

import threading
import warnings

import pytest

import dyngraph as dg
from dyngraph import events
from dyngraph.spine.thread_state import this_thread

pytest.importorskip("anywidget", reason="the live view needs the jupyter extra (anywidget)")

from dyngraph.jupyter.view import GraphView, unpack  # noqa: E402


@pytest.fixture(autouse=True)
def no_followers_left():
    """Each test starts with no follower in this thread (views of earlier tests may live on
    until the collector runs)."""
    this_thread.state.followers.clear()
    yield
    this_thread.state.followers.clear()


def kinds(view):
    return [kind for kind, _fields in unpack(view.snapshot).get("events", [])]


def forward_watched():
    view = GraphView()
    x = dg.tensor([1.0, -2.0], requires_grad=True, name="x")
    w = dg.tensor([0.5, 3.0], requires_grad=True, name="w")
    with dg.watch(view, display=False):
        loss = (x * w).tanh().sum()
    return view, x, w, loss


def test_a_plain_backward_after_the_block_plays_in_the_view():
    view, x, w, loss = forward_watched()
    before = kinds(view)
    assert "backward_started" not in before
    loss.backward()  # outside any watch block, as a tutorial writes it
    after = kinds(view)[len(before):]
    assert after[0] == "backward_started" and after[-1] == "backward_finished"
    grads = {fields[0] for kind, fields in unpack(view.snapshot)["events"]
             if kind == "grad_computed"}
    ids = {fields[0] for kind, fields in unpack(view.snapshot)["events"]
           if kind == "node_created"}
    assert x.id in grads and w.id in grads and loss.id in grads
    assert grads <= ids  # gradients of the nodes it drew, nothing new
    assert "edge_grad" in after and "graph_freed" in after
    # the gradients are the engine's own: following changes nothing
    assert x.grad.tolist() == pytest.approx(
        (w.detach() * (1 - (x.detach() * w.detach()).tanh() ** 2)).tolist())


def test_the_nodes_of_the_last_events_are_followed_too():
    view = GraphView(rate=1e-3)  # nothing sent before the block ends
    x = dg.tensor([1.0, -2.0], requires_grad=True, name="x")
    with dg.watch(view, display=False):
        view._due[0] = float("inf")  # as in a kernel: no flush due while the block runs
        loss = (x * x).sum()
    loss.backward()
    assert "backward_started" in kinds(view)


def test_the_follower_ends_when_the_graph_is_freed():
    view, _x, _w, loss = forward_watched()
    assert len(this_thread.state.followers) == 1
    loss.backward()
    assert this_thread.state.followers == {}
    n = len(kinds(view))
    y = (_x * 2).sum()
    y.backward()  # another graph, later: not this view's
    assert len(kinds(view)) == n


def test_retain_graph_keeps_following_and_each_pass_plays():
    view, _x, _w, loss = forward_watched()
    loss.backward(retain_graph=True)
    assert len(this_thread.state.followers) == 1
    loss.backward()
    assert kinds(view).count("backward_started") == 2
    assert this_thread.state.followers == {}


def test_autograd_grad_plays_too():
    view, x, _w, loss = forward_watched()
    (gx,) = dg.autograd.grad(loss, [x])
    assert "backward_started" in kinds(view)
    assert gx.shape == x.shape


def test_a_loss_computed_later_from_the_watched_graph_plays_in_the_view():
    view, x, _w, out = forward_watched()
    loss = (out * 3).sum()  # the next cell builds the loss from the watched output, unwatched
    loss.backward()
    rows = unpack(view.snapshot)["events"]
    kinds_ = [kind for kind, _fields in rows]
    assert "backward_started" in kinds_ and kinds_[-1] == "backward_finished"
    announced = {fields[0] for kind, fields in rows if kind == "node_created"}
    assert loss.id in announced  # the part built later is shown too
    grads = {fields[0] for kind, fields in rows if kind == "grad_computed"}
    assert {x.id, loss.id} <= grads
    assert this_thread.state.followers == {}


def test_a_graph_the_view_never_drew_is_not_claimed():
    view, _x, _w, _loss = forward_watched()
    a = dg.tensor([1.0], requires_grad=True)
    (a * 3).sum().backward()
    assert "backward_started" not in kinds(view)
    assert len(this_thread.state.followers) == 1  # still waiting for its own graph


def test_listening_again_or_closing_stops_following():
    view, _x, _w, loss = forward_watched()
    view.attach()
    assert this_thread.state.followers == {}
    view.detach()
    assert len(this_thread.state.followers) == 1
    view.close()
    assert this_thread.state.followers == {}
    loss.backward()  # nobody follows: nothing emitted, nothing fails


def test_following_is_per_thread():
    view, _x, _w, loss = forward_watched()
    n = len(kinds(view))
    thread = threading.Thread(target=loss.backward)
    thread.start()
    thread.join()
    assert len(kinds(view)) == n  # another thread's backward is not this thread's view's


def test_a_follower_that_raises_is_dropped_with_a_warning():
    def claims(_ids):
        raise ValueError("broken")

    handle = events.follow(claims, print)
    a = dg.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (a * 2).sum().backward()
    assert a.grad.tolist() == [2.0]
    assert any("no longer follows" in str(w.message) for w in caught)
    assert handle.key not in this_thread.state.followers


def test_follow_refuses_what_is_not_callable():
    with pytest.raises(TypeError, match="two callables"):
        events.follow(None, print)


def test_a_view_whose_events_were_all_still_batched_follows_its_graph():
    """The nodes a view keeps are known once their batch is packed; a view detached before any
    batch of the block was packed (events come fast, the next flush not due) follows them too:
    it decides to follow after the last flush. (In a kernel, displaying the view flushed it
    just before the block, so a short cell's events all waited for detach.)"""
    view = GraphView(rate=0.001)  # the next flush is not due for 1000 s
    view.flush()  # (what displaying it does: the clock starts now)
    x = dg.tensor([1.0, -2.0], requires_grad=True, name="x")
    with dg.watch(view, display=False):
        loss = (x * 3).sum()
    assert len(this_thread.state.followers) == 1
    loss.backward()
    assert "backward_finished" in kinds(view)


def test_the_page_is_told_when_the_block_ends():
    """An empty view that ended says how to see a graph built before it (widgets/src/view/panels.js
    NOTHING_WATCHED): the page reads ``watching`` in the options."""
    view = GraphView()
    with dg.watch(view, display=False):
        assert view.options["watching"] is True
    assert view.options["watching"] is False
