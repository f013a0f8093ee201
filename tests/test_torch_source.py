"""dyngraph.torch: a PyTorch program's autograd graph as dyngraph's events (issue 16)."""

from __future__ import annotations

import gc
import json
import math
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import dyngraph as dg  # noqa: E402
import dyngraph.torch as dgt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def watched(fn):
    """The events ``fn`` emits with torch watched (as dg.record() and dg.watch() do)."""
    seen = []
    with dg.events.subscribe(seen.append), dgt.watching():
        fn()
    return seen


def kinds(events):
    return [e.kind for e in events]


def nodes(events):
    return [e for e in events if e.kind == "node_created"]


def ops(events):
    return [e.op for e in nodes(events)]


# ----------------------------------------------------------------------------- layering


def test_import_dyngraph_and_record_never_import_torch():
    code = textwrap.dedent("""
        import json, sys
        import dyngraph as dg
        with dg.record() as rec:
            x = dg.tensor([1.0, 2.0], requires_grad=True)
            (x * x).sum().backward()
        print(json.dumps({"torch": "torch" in sys.modules, "nodes": len(rec.nodes)}))
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == {"torch": False, "nodes": 3}


# ----------------------------------------------------------------------------- forward


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 4)
        self.fc2 = torch.nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)


def test_mlp_event_sequence_ops_scopes_names_and_lines():
    torch.manual_seed(0)
    model, x, target = MLP(), torch.randn(5, 3), torch.randn(5, 1)

    def step():
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()

    seen = watched(step)
    assert ops(seen) == [
        "parameter", "parameter", "TBackward0", "constant", "AddmmBackward0", "TanhBackward0",
        "parameter", "parameter", "TBackward0", "AddmmBackward0", "constant", "MseLossBackward0",
    ]
    made = nodes(seen)
    assert [e.id for e in made] == sorted(e.id for e in made)  # ids follow creation order
    by_op = {e.op: e for e in made}
    params = [(e.name, e.scope, e.shape) for e in made if e.op == "parameter"]
    assert params == [("bias", ("MLP", "fc1"), (4,)), ("weight", ("MLP", "fc1"), (4, 3)),
                      ("bias", ("MLP", "fc2"), (1,)), ("weight", ("MLP", "fc2"), (1, 4))]
    assert by_op["TanhBackward0"].scope == ("MLP",)
    assert by_op["TanhBackward0"].shape == (5, 4) and by_op["TanhBackward0"].dtype == "float32"
    assert by_op["TanhBackward0"].saved_bytes == 5 * 4 * 4  # tanh saves its result
    assert by_op["MseLossBackward0"].scope == ()
    # the learner's lines, not torch's: the model's forward and this test's step
    lines = {e.op: e.where.line for e in made if e.op != "parameter"}
    source = Path(__file__).read_text().splitlines()
    assert "self.fc1(x)" in source[lines["TanhBackward0"] - 1]
    assert "mse_loss" in source[lines["MseLossBackward0"] - 1]
    assert all(e.where.file == __file__ for e in made)
    # backward: started, one gradient per node in PyTorch's order, freed, finished
    back = seen[len(made):]
    assert kinds(back)[0] == "backward_started" and kinds(back)[-2:] == [
        "graph_freed", "backward_finished"]
    grads = [e.id for e in back if e.kind == "grad_computed"]
    assert grads[0] == by_op["MseLossBackward0"].id
    assert set(grads) == {e.id for e in made if e.requires_grad}
    freed = next(e for e in back if e.kind == "graph_freed")
    assert by_op["TanhBackward0"].id in freed.ids


def test_gradients_shown_equal_dot_grad():
    torch.manual_seed(0)
    model, x = MLP(), torch.randn(5, 3)
    with dg.record() as rec:
        model(x).pow(2).mean().backward()
    shown = {(n.name, n.scope): n for n in rec.nodes.values() if n.kind == "parameter"}
    for name, param in model.named_parameters():
        module, attr = name.split(".")
        node = shown[(attr, ("MLP", module))]
        expected = param.grad.reshape(-1)[:6].tolist()
        assert node.grad_preview == pytest.approx(expected, rel=1e-6)
        assert node.grad_norm == pytest.approx(param.grad.norm().item(), rel=1e-5)


def test_a_sparse_tensor_shows_the_numbers_it_stands_for():
    """A sparse leaf has no storage to read: its value and gradient previews are those of the
    dense tensor it stands for, not an error from inside the watcher."""
    indices, values = torch.tensor([[0, 1, 2], [2, 0, 1]]), torch.tensor([1.5, -2.0, 3.0])
    weight = torch.sparse_coo_tensor(indices, values, (3, 3), requires_grad=True,
                                     check_invariants=True)
    with dg.record() as rec:
        torch.sparse.mm(weight, torch.ones(3, 2)).pow(2).sum().backward()
    leaf = next(n for n in rec.nodes.values() if n.kind == "leaf" and n.shape == (3, 3))
    assert list(leaf.preview) == weight.detach().to_dense().reshape(-1)[:6].tolist()
    dense_grad = weight.grad.to_dense()
    assert list(leaf.grad_preview) == pytest.approx(dense_grad.reshape(-1)[:6].tolist())
    assert leaf.grad_norm == pytest.approx(dense_grad.norm().item())


def test_rnn_loop_parameters_once_and_gradients_summed():
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(2, 3)
    xs = torch.randn(4, 1, 2)

    def run():
        h = torch.zeros(1, 3)
        for x in xs:
            h = cell(x, h)
        h.sum().backward()

    seen = watched(run)
    made = nodes(seen)
    params = [e for e in made if e.op == "parameter"]
    assert sorted(e.name for e in params) == ["bias_hh", "bias_ih", "weight_hh", "weight_ih"]
    assert all(e.scope == ("RNNCell",) for e in params)
    assert ops(seen).count("TanhBackward0") == 4  # one per step
    grads = {e.id: e for e in seen if e.kind == "grad_computed"}
    assert all(grads[p.id].accumulated for p in params)  # used at every step: summed
    assert cell.weight_hh.grad.reshape(-1)[:6].tolist() == pytest.approx(
        grads[next(p.id for p in params if p.name == "weight_hh")].preview)


def test_a_leaf_used_once_per_graph_is_not_summed_in_the_next_graph():
    w = torch.ones(3, requires_grad=True)

    def step():
        w.grad = None
        (w * 2).sum().backward()

    for _ in range(2):  # the second graph must not inherit the first one's use of w
        grads = [e for e in watched(step) if e.kind == "grad_computed"]
        assert list(grads[-1].preview) == [2.0, 2.0, 2.0] and not grads[-1].accumulated
    (w * 2).sum().backward()  # .grad is not None now: this time the gradient is summed into it
    grads = [e for e in watched(lambda: (w * w).sum().backward()) if e.kind == "grad_computed"]
    assert grads[-1].accumulated  # used twice in one op (fan-in), and summed into .grad


def test_data_dependent_branch_shows_the_path_taken():
    def branch(sign):
        x = torch.full((3,), float(sign), requires_grad=True)
        with dg.record() as rec:
            y = x.exp() if x.sum() > 0 else -x
            (y * 2).sum().backward()
        return rec

    positive, negative = branch(1), branch(-1)
    # x.sum() of the condition joins the graph too (a branch nothing flows back through)
    assert [n.op for n in positive.nodes.values()] == [
        "leaf", "SumBackward0", "ExpBackward0", "MulBackward0", "SumBackward0"]
    assert [n.op for n in negative.nodes.values()] == [
        "leaf", "SumBackward0", "NegBackward0", "MulBackward0", "SumBackward0"]
    assert "ExpBackward0" in positive.diff(negative).to_dot()


# ----------------------------------------------------------------------------- errors


def test_second_backward_is_backward_failed():
    x = torch.ones(3, requires_grad=True)

    def twice():
        loss = (x.exp() * x).sum()
        loss.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()

    seen = watched(twice)
    failed = [e for e in seen if e.kind == "backward_failed"]
    assert len(failed) == 1 and "second time" in failed[0].error
    assert kinds(seen).count("backward_started") == 2
    assert kinds(seen)[-1] == "backward_failed"


def test_inplace_on_a_saved_tensor_bumps_its_version_and_fails_backward():
    x = torch.ones(3, requires_grad=True)

    def inplace():
        y = x.exp()
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

    seen = watched(inplace)
    made = nodes(seen)
    exp_id = next(e.id for e in made if e.op == "ExpBackward0")
    bumped = [e for e in seen if e.kind == "version_bumped"]
    assert [(e.id, e.version) for e in bumped] == [(exp_id, 1)]
    assert "inplace operation" in next(e for e in seen if e.kind == "backward_failed").error


def test_retain_graph_frees_nothing():
    x = torch.ones(3, requires_grad=True)

    def retained():
        (x.tanh()).sum().backward(retain_graph=True)

    seen = watched(retained)
    assert "graph_freed" not in kinds(seen)
    assert next(e for e in seen if e.kind == "backward_started").retain_graph is True


def test_backward_of_a_graph_built_before_watching():
    x = torch.ones(2, requires_grad=True)
    loss = (x * 3).sum()  # nobody listens yet
    seen = watched(loss.backward)
    assert kinds(seen)[:5] == ["node_created"] * 4 + ["backward_started"]
    # the 3, which the graph does not keep, is a constant of unknown value, Mul's argument 1
    # (NOTE [inputs the graph does not keep] in dyngraph/function.py)
    assert ops(seen) == ["leaf", "constant", "MulBackward0", "SumBackward0"]
    mul = nodes(seen)[2]
    assert mul.inputs == (nodes(seen)[0].id, nodes(seen)[1].id) and nodes(seen)[1].preview == ()
    assert all(e.where is None for e in nodes(seen)[1:])  # the lines that built it ran unseen
    assert [e.kind for e in seen].count("grad_computed") == 3


class Square(torch.autograd.Function):
    """A custom autograd.Function: one node to autograd, whatever runs inside it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_custom_function_is_one_opaque_node():
    x = torch.ones(3, requires_grad=True)
    seen = watched(lambda: Square.apply(x).sum().backward())
    assert ops(seen) == ["leaf", "SquareBackward", "SumBackward0"]


def test_ops_outside_autograd_make_no_node_and_show_as_data():
    w = torch.ones(3, requires_grad=True)

    def run():
        with torch.no_grad():
            scale = w * 2  # outside autograd: no node
        (w * scale).sum().backward()

    seen = watched(run)
    assert ops(seen) == ["leaf", "constant", "MulBackward0", "SumBackward0"]
    data = nodes(seen)[1]
    assert data.requires_grad is False and data.preview == (2.0, 2.0, 2.0)


def test_learner_names():
    x = dgt.name(torch.ones(2, requires_grad=True), "x")
    seen = watched(lambda: dgt.name(x * 2, "y").sum())
    assert [e.name for e in nodes(seen)] == ["x", None, None]  # named after the op ran
    seen = watched(lambda: (x * 2).sum())
    assert nodes(seen)[0].name == "x"


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 4)
        self.fc2 = torch.nn.Linear(4, 2)

    def forward(self, x):
        hidden = torch.tanh(self.fc1(x))
        return self.fc2(hidden)


def test_nodes_are_named_after_the_variable_the_line_assigns():
    """NOTE [names of torch nodes]: as dyngraph names its own ops (NOTE [variable names]), the
    node whose value a line assigns is named, through modules and torch's functions too; the
    other nodes of the line are not."""
    torch.manual_seed(0)
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 0, 1, 1])
    seq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    mine = TwoLayers()
    w = torch.ones(2, requires_grad=True)

    def program():
        logits = seq(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        out = mine(x)
        h = out * w
        h += 1
        (loss + h.sum()).backward()

    made = nodes(watched(program))
    names = [(e.op, e.name) for e in made if e.kind == "node_created" and e.name
             and e.op not in ("parameter", "leaf", "constant")]
    assert names == [("AddmmBackward0", "logits"), ("NllLossBackward0", "loss"),
                     ("TanhBackward0", "hidden"), ("AddmmBackward0", "out"),
                     ("MulBackward0", "h"), ("AddBackward0", "h")]
    by_name = {e.name: e for e in made if e.name}
    seq_addmm = [e for e in made if e.op == "AddmmBackward0"][:2]
    assert seq_addmm[0].name is None and seq_addmm[1] is by_name["logits"]  # the last layer's
    assert [e.name for e in made if e.op == "LogSoftmaxBackward0"] == [None]


def test_data_needing_no_gradient_is_drawn_as_a_constant():
    """A tensor that needs no gradient (the batch, the targets, a buffer) is data: a constant,
    as the legend says ("a number or tensor needing no grad"); named if the learner named it."""
    x = dgt.name(torch.ones(2, 3), "x")
    w = torch.ones(3, requires_grad=True)
    with dg.record() as rec:
        (x * w).sum().backward()
    kinds = {node.op: (node.kind, node.name) for node in rec.nodes.values()
             if node.kind != "op"}
    assert kinds == {"constant": ("constant", "x"), "leaf": ("leaf", None)}


# ----------------------------------------------------------------------------- memory


def test_watching_keeps_nothing_alive():
    x = torch.ones(100, requires_grad=True)
    gc.disable()
    try:
        with dg.record() as rec:
            h = x.exp()  # saved by MulBackward0 below: alive while the graph is
            loss = (h * h).sum()
        node_info = dgt._known(loss.grad_fn)
        alive_h, alive_info = weakref.ref(h), weakref.ref(node_info)
        del h, loss, node_info
        assert alive_h() is None and alive_info() is None  # freed by reference counting alone
    finally:
        gc.enable()
    assert len(rec.nodes) == 4


def test_events_carry_previews_never_tensors():
    x = torch.ones(3, requires_grad=True)
    seen = watched(lambda: (x * 2).sum().backward())
    for event in seen:
        for value in event:
            assert not isinstance(value, torch.Tensor)
            if isinstance(value, tuple):
                assert not any(isinstance(v, torch.Tensor) for v in value)


# ----------------------------------------------------------------------------- tools


def test_draw_walks_grad_fn():
    x = torch.ones(3, requires_grad=True)
    loss = (x * 2).tanh().sum()
    before = dg.draw(loss).recording
    assert [n.op for n in before.nodes.values()] == [
        "leaf", "constant", "MulBackward0", "TanhBackward0", "SumBackward0"]
    assert not any(n.freed for n in before.nodes.values())
    loss.backward()
    after = dg.draw(loss).recording
    assert [n.freed for n in after.nodes.values() if n.op == "TanhBackward0"] == [True]
    assert list(after.nodes) == list(before.nodes)  # the same ids: the same diagram
    assert "TanhBackward0" in dg.draw(loss).to_dot()


def test_recording_saves_and_loads(tmp_path):
    x = torch.ones(3, requires_grad=True)
    with dg.record() as rec:
        (x * 2).sum().backward()
    rec.save(tmp_path / "torch.json")
    loaded = dg.load_recording(tmp_path / "torch.json")
    assert [n.op for n in loaded.nodes.values()] == ["leaf", "MulBackward0", "SumBackward0"]


def test_watch_view_shows_torch_code():
    pytest.importorskip("anywidget")
    from dyngraph.jupyter import GraphView

    x = torch.ones(3, requires_grad=True)
    view = GraphView()
    with dg.watch(view, display=False):
        (x * 2).sum().backward()
    recording = view.recording
    assert [n.op for n in recording.nodes.values()] == ["leaf", "MulBackward0", "SumBackward0"]
    assert recording.nodes[max(recording.nodes)].grad_preview == (1.0,)


# ----------------------------------------------------------------------------- speed-ups


def test_saved_bytes_count_saved_tensors_only_and_each_once():
    a = torch.ones(2, 3, requires_grad=True)
    b = torch.ones(3, 4, requires_grad=True)
    x = torch.ones(5, requires_grad=True)

    def run():
        a @ b  # saves both matrices, and their sizes and strides (numbers: not counted)
        x * x  # saves x twice
        x + 1  # saves no tensor

    by_op = {e.op: e for e in nodes(watched(run))}
    assert by_op["MmBackward0"].saved_bytes == (6 + 12) * 4
    assert by_op["MulBackward0"].saved_bytes == 5 * 4
    assert by_op["AddBackward0"].saved_bytes == 0


def test_graph_drawn_then_watched_shows_every_gradient():
    x = torch.ones(3, requires_grad=True)
    loss = (x * 2).tanh().sum()
    drawn = dg.draw(loss).recording  # registers no hook
    seen = watched(loss.backward)
    grads = [e.id for e in seen if e.kind == "grad_computed"]
    # the ids dg.draw gave, one gradient each (the 2, a constant, has none)
    assert sorted(grads) == sorted(i for i, n in drawn.nodes.items() if n.op != "constant")


def test_tensor_table_forgets_dead_tensors():
    table = dgt._ByIdentity()
    kept = torch.ones(1)
    table[kept] = "kept"
    other = torch.ones(1)
    assert table.get(kept) == "kept" and kept in table
    assert table.get(other) is None and other not in table
    for _ in range(5000):
        table[torch.ones(1)] = "gone"  # each dies at once
    assert len(table._items) < 2100 and table.get(kept) == "kept"


def test_data_inputs_in_lists_and_keywords_of_inplace_ops():
    w = torch.ones(2, requires_grad=True)
    c = torch.full((2,), 3.0)

    def run():
        y = torch.cat([w, c])  # a list argument: c is data
        z = y * 1
        z.add_(torch.ones(4), alpha=2)  # in place, with a keyword
        z.sum().backward()

    seen = watched(run)
    assert ops(seen)[:3] == ["leaf", "constant", "CatBackward0"]
    cat = next(e for e in nodes(seen) if e.op == "CatBackward0")
    assert len(cat.inputs) == 2
    assert "version_bumped" in kinds(seen)
    assert torch.equal(w.grad, torch.ones(2))


def _lesson_programs():
    """The models of lesson 18 and of these tests, and calls with aliased arguments, data on
    either side of a matmul, in place, keywords, a list argument (seeded: each call the same)."""
    torch.manual_seed(0)
    mlp, cell = MLP(), torch.nn.RNNCell(2, 3)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    W1, W2 = torch.randn(3, 5, requires_grad=True), torch.randn(5, 1, requires_grad=True)
    a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    data = torch.randn(3, 3)

    def run():
        torch.nn.functional.mse_loss(mlp(torch.randn(5, 3)), torch.randn(5, 1)).backward()
        h = torch.zeros(1, 3)
        for step in torch.randn(3, 1, 2):
            h = cell(step, h)
        h.sum().backward()
        loss = ((torch.tanh(x @ W1) @ W2 - y) ** 2).mean()
        loss.backward()
        (a * a).sum().backward()
        (a * b).sum().backward()
        (data @ a + a @ data).sum().backward()
        torch.cat([a, data[0]]).mul(2).sum().backward()
        z = torch.mul(a, other=b) + 0
        z.add_(1, alpha=2)
        z.sigmoid().relu().softmax(0).log().sum().backward()
        torch.nn.functional.dropout(a, 0.5).sum().backward()

    return run


def replay(events):
    """The events as text, ids renumbered by first appearance (each run takes fresh ones) and
    norms to 12 digits (two ways of summing the squares may differ in the last bit)."""
    ids: dict = {}

    def renumber(value):
        return ids.setdefault(value, len(ids))

    rows = []
    for e in events:
        if e.kind == "node_created":
            e = e._replace(id=renumber(e.id), inputs=tuple(renumber(i) for i in e.inputs))
        elif hasattr(e, "id"):
            e = e._replace(id=renumber(e.id))
        elif hasattr(e, "root"):
            e = e._replace(root=renumber(e.root))
        elif e.kind == "graph_freed":
            e = e._replace(ids=tuple(renumber(i) for i in e.ids))
        elif e.kind == "edge_grad":
            e = e._replace(node=renumber(e.node), input=renumber(e.input))
        if e.kind == "grad_computed":
            e = e._replace(norm=float(f"{e.norm:.12g}"))
        rows.append(repr(e))
    return rows


def test_fast_path_of_one_op_emits_what_the_general_walk_does(monkeypatch):
    """dyngraph.torch's _announce_op, the path of the commonest op (no walk: its inputs were
    told about), tells the subscribers exactly what _announce (the general walk back) does, on
    whole programs: both end in the one node_created of _emit_node."""
    fast = watched(_lesson_programs())  # fresh leaves each time, seeded alike
    announce_op = dgt._announce_op
    monkeypatch.setattr(dgt, "_announce_op", dgt._announce_walking)
    walked = watched(_lesson_programs())
    assert replay(fast) == replay(walked)
    assert len(fast) > 100
    monkeypatch.setattr(dgt, "_announce_op", announce_op)

    walks = []  # and the flat path is the one taken, once the inputs were told about
    walk = dgt._announce_walking
    monkeypatch.setattr(dgt, "_announce_walking", lambda *args: walks.append(1) or walk(*args))
    w = torch.ones(4, requires_grad=True)
    made = nodes(watched(lambda: (w * 2).tanh().exp().sum()))
    assert len(made) == 5 and len(walks) == 1  # only w * 2: w was not told about yet


def test_tensors_of_every_layout_are_previewed_as_their_numbers():
    """float64, whole numbers, views that are not one block, a 3-d tensor, nan in a gradient:
    each preview is the tensor's first numbers in row-major order."""
    torch.manual_seed(1)
    a = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(3, 4, 2, requires_grad=True)
    made = {}

    def run():
        made["t"] = a.t() * 1  # strided as the view it came from: not row-major
        made["flipped"] = torch.flip(b, [0]) * 2  # a 3-d tensor
        made["ints"] = b[:, 1] * torch.tensor([[1, 2]] * 3)  # whole numbers; a slice
        made["nan"] = b.sqrt() * 0  # nan where b is negative
        (made["t"].sum() + made["flipped"].sum() + made["ints"].sum()
         + made["nan"].sum()).backward()

    seen = watched(run)
    previews = [e.preview for e in nodes(seen)]
    for name, tensor in made.items():
        expected = tuple(tensor.detach().reshape(-1)[:6].tolist())
        assert any(len(p) == len(expected) and all(
            v == w or (v != v and w != w) for v, w in zip(p, expected)) for p in previews), name
    grads = [e for e in seen if e.kind == "grad_computed"]
    assert any(math.isnan(e.norm) for e in grads)  # the nan reaches the gradient's norm
    assert len(seen) > 30


def test_saved_bytes_of_products_aliased_or_not():
    a, b = torch.ones(3, requires_grad=True), torch.ones(5, 3, requires_grad=True)
    products = nodes(watched(lambda: (a * a, a * b, b * a)))
    assert [e.saved_bytes for e in products if e.op == "MulBackward0"] == [12, 72, 72]


def test_compiled_and_exported_code_is_what_it_is_unwatched():
    """NOTE [compiled code]: Dynamo compiles a watched frame as it would unwatched (one compiled
    region: one CompiledFunctionBackward node, no graph break, no warning about dyngraph), and
    torch.export traces a watched module without the event code meeting its fake tensors."""
    import warnings

    torch.manual_seed(0)
    layer_ = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4)

    def f(v):
        return torch.tanh(layer_(v)).sum()

    expected = f(x)
    expected.backward()
    expected_grad, layer_.weight.grad = layer_.weight.grad, None
    torch._dynamo.reset()
    compiled = torch.compile(f, backend="aot_eager")  # no C++ compiler needed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dg.record() as rec:
            loss = compiled(x)
            loss.backward()
        with dg.record():
            exported = torch.export.export(torch.nn.Sequential(layer_), (x,))
    assert [str(w.message) for w in caught if "dyngraph" in str(w.message)] == []
    assert torch.equal(loss, expected) and torch.allclose(layer_.weight.grad, expected_grad)
    assert [n.op for n in rec.nodes.values() if n.kind == "op"] == ["CompiledFunctionBackward"]
    assert torch.equal(exported.module()(x), layer_(x))


def _warning_places(watch: bool) -> list:
    """Where Python placed the warnings PyTorch raised from a program, bare or watched."""
    import warnings

    x = torch.ones(3, requires_grad=True)

    def program():
        y = x * 2
        y.grad  # noqa: B018 - a UserWarning: .grad of a tensor that is not a leaf
        torch.nn.functional.softmax(x)  # a UserWarning from torch's Python: no dim given
        z = x * 3
        z.grad  # noqa: B018 - the same warning from another line
        torch.nn.functional.softmax(z)  # and another line

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # once per place, as Python shows warnings
        if watch:
            with dg.record():
                program()
        else:
            program()
    return [(Path(w.filename).name, w.lineno, str(w.message)[:30]) for w in caught]


def test_torch_warnings_are_placed_at_the_learners_lines():
    """NOTE [the mode's entry]: a warning is shown where it is shown unwatched, not at a line
    of dyngraph's (where Python's once-per-place filter would also hide its repeats)."""
    bare = _warning_places(watch=False)
    assert len(bare) == 4 and {file for file, _, _ in bare} == {Path(__file__).name}
    assert _warning_places(watch=True) == bare


def test_warnings_inside_the_block_reach_the_learners_own_catching_and_filters():
    """NOTE [the mode's entry], for code that handles warnings itself inside the watched block:
    ``catch_warnings(record=True)`` (pytest.warns) records them at the learner's line, an
    "error" filter turns one into the exception it is unwatched, and the block leaves the
    warnings module as it found it."""
    import warnings

    x = torch.ones(3, requires_grad=True)
    filters, show = list(warnings.filters), warnings._showwarnmsg
    with dg.record():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x * 2
            line = sys._getframe().f_lineno + 1
            torch.nn.functional.softmax(y)  # a UserWarning from torch's Python: no dim given
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning, match="dim"):
                torch.nn.functional.softmax(y)
    assert [(Path(w.filename).name, w.lineno) for w in caught] == [(Path(__file__).name, line)]
    assert warnings.filters == filters and warnings._showwarnmsg is show


def test_dynamo_imported_after_dyngraph_torch_compiles_as_unwatched():
    """NOTE [compiled code], also when Dynamo is first imported after dyngraph.torch
    (torch.compile in a later cell): one compiled region, no warning about dyngraph."""
    code = textwrap.dedent("""
        import json, sys, warnings
        import torch
        import dyngraph as dg, dyngraph.torch
        loaded = "torch._dynamo" in sys.modules
        layer = torch.nn.Linear(2, 2)
        compiled = torch.compile(lambda v: torch.tanh(layer(v)).sum(), backend="aot_eager")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with dg.record() as rec:
                compiled(torch.ones(1, 2)).backward()
        print(json.dumps({"loaded first": loaded,
                          "ops": [n.op for n in rec.nodes.values() if n.kind == "op"],
                          "warnings": [str(w.message)[:60] for w in caught]}))
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    facts = json.loads(out.stdout.splitlines()[-1])
    assert facts["loaded first"] is False
    assert facts["ops"] == ["CompiledFunctionBackward"] and facts["warnings"] == []


def test_each_module_instance_is_its_own_scope_named_as_pytorch_names_it():
    """Two LSTMCells in a ModuleList are two scopes, "rnn.0 · LSTMCell" and "rnn.1 · LSTMCell"
    (named_modules' names, the class after a bare position); a Sequential's children read
    "0 · Linear" as dyngraph's own modules do (issue 29)."""

    class Stacked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.ModuleList([torch.nn.LSTMCell(2, 3), torch.nn.LSTMCell(3, 3)])
            self.head = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Tanh())

        def forward(self, x):
            h, _ = self.rnn[0](x)
            h, _ = self.rnn[1](h)
            return self.head(h)

    model = Stacked()
    scopes = {e.scope for e in nodes(watched(lambda: model(torch.randn(1, 2)).sum()))}
    assert scopes >= {("Stacked", "rnn.0 \u00b7 LSTMCell"), ("Stacked", "rnn.1 \u00b7 LSTMCell"),
                      ("Stacked", "head", "0 \u00b7 Linear"), ("Stacked", "head", "1 \u00b7 Tanh")}
    assert not any(scope and scope[-1] in ("0", "1", "LSTMCell") for scope in scopes), scopes


def test_each_call_of_a_recursion_is_a_scope_of_its_own():
    """A TreeNet calling itself on the halves of a parse tree: the running call's first call
    is "call 1 · TreeNet", its second "call 2 · TreeNet", as dyngraph's own modules name them,
    so the tree of calls is in the scopes (issue 40)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from real_models import treenet_case

    model, (tree,), _ = treenet_case(((1, 2), 3))
    scopes = {e.scope for e in nodes(watched(lambda: model(tree).sum())) if e.op != "leaf"}
    call = "call {} \u00b7 TreeNet".format
    assert scopes >= {("TreeNet",), ("TreeNet", "combine"), ("TreeNet", call(1)),
                      ("TreeNet", call(1), "combine"), ("TreeNet", call(1), call(1), "embed"),
                      ("TreeNet", call(1), call(2), "embed"), ("TreeNet", call(2), "embed")}, scopes
    assert not any(scope[-2:] == ("TreeNet", "TreeNet") for scope in scopes), scopes
