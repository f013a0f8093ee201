"""dyngraph.torch on the programs learners write: models, losses, training loops, autograd's
tools, and wrong code on purpose.

Each program runs twice from the same seed, bare and inside ``dg.record()``; watching must
change nothing (the same values, the same ``.grad``, the same exception with PyTorch's own
message) and the recording must tell the truth (every edge joins recorded nodes, each node's
inputs were told about before it, op names are the ``grad_fn`` names, a leaf's gradient shown
is its ``.grad``).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from test_torch_source import Square  # noqa: E402 - shared with it
from torch.utils.checkpoint import checkpoint  # noqa: E402

import dyngraph as dg  # noqa: E402
import dyngraph.torch as dgt  # noqa: E402

# ----------------------------------------------------------------------------- the harness


def run(program):
    """What ``program`` returns (tensors, in dicts, lists and tuples), or the exception it
    raised; from seed 0."""
    torch.manual_seed(0)
    try:
        return program()
    except Exception as error:  # noqa: BLE001 - the learner's error is the result here
        return error


def tensors_in(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensors_in(item)


def outline(value):
    """``value`` with each tensor replaced by a mark: what is compared besides the tensors."""
    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, (list, tuple)):
        return [outline(item) for item in value]
    if isinstance(value, dict):
        return {key: outline(item) for key, item in value.items()}
    return "nan" if value != value else value  # (nan equals nothing, not even itself)


def same_numbers(a, b):
    """torch.equal, with nan equal to nan and sparse tensors compared as the dense ones."""
    if a.layout is not torch.strided:
        a, b = a.to_dense(), b.to_dense()
    return torch.equal(a, b) or (a.is_floating_point() and b.is_floating_point() and
                                 torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))


def assert_same(bare, watched):
    """The same values and gradients, or the same exception with the same message."""
    if isinstance(bare, BaseException) or isinstance(watched, BaseException):
        assert (type(watched), str(watched)) == (type(bare), str(bare))
        return
    assert outline(watched) == outline(bare)  # counts, .item()s and the like
    bare_tensors, watched_tensors = list(tensors_in(bare)), list(tensors_in(watched))
    for a, b in zip(bare_tensors, watched_tensors):
        assert (a.dtype, a.shape, a.requires_grad) == (b.dtype, b.shape, b.requires_grad)
        assert same_numbers(a.detach(), b.detach())
        if a.is_leaf or a.retains_grad:
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                assert same_numbers(a.grad, b.grad)


def assert_truthful(recording, events, result):
    """Every edge joins recorded nodes, inputs are told about first, op names are PyTorch's,
    a leaf's last gradient shown (when not summed into an earlier one) is its .grad."""
    told: set = set()
    for event in events:
        if event.kind == "node_created":
            assert event.id not in told
            assert set(event.inputs) <= told, f"{event.op}'s inputs were not told about first"
            told.add(event.id)
        elif event.kind in ("grad_computed", "version_bumped"):
            assert event.id in told
        elif event.kind.startswith("backward_"):
            assert event.root in told
    for edge in recording.edges:
        assert edge.src in recording.nodes and edge.dst in recording.nodes
    if isinstance(result, BaseException):
        return
    for tensor in tensors_in(result):
        node = dgt._grad_fn(tensor)
        info = node.metadata.get(dgt._KEY) if node is not None else None
        if info is not None and info.id in recording.nodes:
            assert recording.nodes[info.id].op == dgt._op_name(node)
        leaf = dgt._leaves.get(tensor)
        grads = [e for e in events if e.kind == "grad_computed" and leaf and e.id == leaf.id]
        if tensor.is_leaf and grads and not grads[-1].accumulated and tensor.grad is not None:
            expected = tensor.grad.detach()
            if expected.is_complex():  # shown as its real and imaginary parts side by side
                expected = torch.view_as_real(expected)
            expected = expected.reshape(-1).double()
            assert grads[-1].preview == pytest.approx(expected[:len(grads[-1].preview)].tolist())
            assert math.isclose(grads[-1].norm, float(expected.norm()), rel_tol=1e-5)


def watched(program):
    """What ``program`` returns inside dg.record(), the recording and the events."""
    seen: list = []
    with dg.record() as recording, dg.events.subscribe(seen.append):
        result = run(program)
    assert not torch._C._is_torch_function_mode_enabled()  # the mode is gone after the block
    return result, recording, seen


def check(program):
    """Bare and watched alike, and the recording truthful. Returns the recording and the
    events."""
    bare = run(program)
    result, recording, seen = watched(program)
    assert_same(bare, result)
    assert_truthful(recording, seen, result)
    for tensor in tensors_in(result):
        dg.draw(tensor).to_dot()
    return recording, seen


def ops(recording):
    return [node.op for node in recording.nodes.values()]


# ----------------------------------------------------------------------------- findings


def test_embedding_with_padding_idx_made_while_watching():
    """nn.Embedding(padding_idx=0) zeroes its row with ``weight[0].fill_(0)`` under no_grad;
    reading the grad_fn of that view raises (NOTE [views changed under no_grad]), and the
    watcher did, so making the module inside dg.record() raised PyTorch's view error."""

    def program():
        embedding = nn.Embedding(5, 3, padding_idx=0)
        y = embedding(torch.tensor([0, 1, 0, 2]))
        (y * 2).sum().backward()
        return y, embedding.weight

    recording, _ = check(program)
    assert "EmbeddingBackward0" in ops(recording)


def test_views_changed_in_place_under_no_grad():
    def program():
        w = nn.Parameter(torch.randn(5, 3))
        h = torch.randn(3, requires_grad=True) * 2
        with torch.no_grad():
            row = w[0]
            row.fill_(0)
            row.add_(1)  # in place again: the watcher looks at its target's grad_fn
            h[0].zero_()
        (w * 3).sum().backward()
        (h * 3).sum().backward()
        return w, h

    check(program)

    def uses_it_with_grad():  # PyTorch's own error, not the watcher's
        h = torch.randn(3, requires_grad=True) * 1
        with torch.no_grad():
            view = h[0:2]
        view.mul_(2)

    check(uses_it_with_grad)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        uses_it_with_grad()


def test_torch_func_transforms():
    """Inside torch.func.grad, jacrev and vmap the tensors are functorch wrappers with no
    storage of their own: the watcher read their memory (data_ptr() for saved bytes, tolist()
    for previews) and raised; now such nodes show no values."""

    def program():
        x = torch.randn(3)
        w = torch.randn(3, requires_grad=True)
        g = torch.func.grad(lambda t: (t.sin() * 2).sum())(x)
        jacobian = torch.func.jacrev(lambda t: t.exp() * 2)(x)
        y = torch.func.vmap(lambda row: (row * w).sum())(torch.randn(4, 3))
        y.sum().backward()
        return g, jacobian, y, w

    recording, _ = check(program)
    assert {"SinBackward0", "ExpBackward0"} <= set(ops(recording))


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_meta_complex_and_nested_tensors(tmp_path):
    """B1-B4 (helper B's findings): a meta tensor has no numbers, a complex one's are not
    floats (its norm is sqrt(sum |z|^2), not that of the real parts), a strided nested tensor
    has no sizes and a jagged one a symbolic size; the watcher raised, warned, showed the
    wrong norm, or made a recording that could not be saved."""

    def program():
        m = torch.empty(3, device="meta", requires_grad=True)
        (m * 2).exp().sum().backward()
        z = torch.randn(30, 3, dtype=torch.complex128, requires_grad=True)
        (z.conj() * z).real.sum().backward()
        a, b = torch.randn(2, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)
        strided = (torch.nested.as_nested_tensor([a, b]) * 2).sin()
        torch.nested.to_padded_tensor(strided, 0.0).sum().backward()
        jagged = (torch.nested.as_nested_tensor([a, b], layout=torch.jagged) * 2).sin()
        jagged.values().sum().backward()
        return z, a, b

    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Casting complex values")  # the watcher's, not torch's
        recording, seen = check(program)
    leaves = [e for e in seen if e.kind == "node_created" and e.op == "leaf"]
    meta = next(e for e in leaves if e.device == "meta")
    assert meta.shape == (3,) and meta.preview == ()
    complex_leaf = next(e for e in leaves if e.dtype == "complex128")
    grad = next(e for e in seen if e.kind == "grad_computed" and e.id == complex_leaf.id)
    assert all(type(v) is float for v in grad.preview)
    nested = [e for e in seen if e.kind == "node_created" and e.op == "SinBackward0"]
    assert [e.shape for e in nested] == [(), ()]
    recording.save(tmp_path / "recording.json")
    dg.load_recording(tmp_path / "recording.json")


def test_jit_trace_of_a_module_while_watching():
    """torch.jit.trace records every read of a tensor into its TorchScript graph: the watcher's
    previews became ops of the trace, whose check then failed ("Graphs differed across
    invocations", or 'an integer is required' where sizes had become tensors). The mode now
    steps aside while tracing (NOTE [compiled code]); the traced module's graph is found by
    backward's walk back."""

    def program():
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch.jit.trace is deprecated)
            traced = torch.jit.trace(model, torch.randn(1, 3))
        y = traced(torch.randn(4, 3))
        y.sum().backward()
        return y, model[0].weight, model[0].bias

    recording, _ = check(program)
    assert "ReluBackward0" in ops(recording)


def test_assignment_into_a_tensor_is_shown_where_it_happens():
    """B7, B8 (helper B's findings): ``y[1] = 10.0`` returns nothing, so its CopySlices node
    was found only by the next op's walk back: at that op's line, with no value; and it was
    named ``torch::autograd::CopySlices`` (``name()``'s C++ name) where ``print(y.grad_fn)``
    says ``CopySlices``."""

    def program():
        x = torch.ones(4, requires_grad=True)
        y = x * 2
        y[1] = 10.0
        buffer = torch.zeros(3)
        buffer[0] = x[1] * 2  # data that joins the graph by the assignment
        (y.sum() + buffer.sum()).backward()
        return x, y, buffer

    recording, seen = check(program)
    copies = [e for e in seen if e.kind == "node_created" and e.op == "CopySlices"]
    assert [(e.shape, e.preview) for e in copies] == [((4,), (2.0, 10.0, 2.0, 2.0)),
                                                      ((3,), (2.0, 0.0, 0.0))]
    lines = [e.where.line for e in copies]
    source = Path(__file__).read_text().splitlines()
    assert "y[1] = 10.0" in source[lines[0] - 1] and "buffer[0] =" in source[lines[1] - 1]


def test_gradient_norms_of_big_and_half_precision_tensors():
    """B9, B10 (helper B's findings): beyond the few numbers of a small tensor the watcher
    summed the squares in the tensor's own dtype (numpy's dot): float32 drifted in the fifth
    digit, float16 overflowed to inf with a numpy warning. Both now sum in float64; the norms
    are torch's own."""

    def program():
        a = torch.full((300, 40), 0.5, requires_grad=True)
        b = torch.ones(300, dtype=torch.float16, requires_grad=True)
        ((a * 3).exp().sum() + (b * 16).sum()).backward()
        return a, b

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow in dot
        _, seen = check(program)
    norms = [e.norm for e in seen if e.kind == "grad_computed"]
    assert any(277.128 < norm < 277.129 for norm in norms)  # b's: sqrt(300) * 16, not inf
    expected = math.sqrt(300 * 40) * 3 * math.exp(1.5)
    assert any(math.isclose(norm, expected, rel_tol=1e-6) for norm in norms)


# ----------------------------------------------------------------------------- families that work


def conv_net():
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8, 3))
    loss = F.cross_entropy(model(torch.randn(2, 1, 4, 4)), torch.tensor([0, 2]))
    loss.backward()
    return loss, list(model.parameters())


def norms_and_dropout_in_train_and_eval():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5), nn.LayerNorm(4))
    bn2d = nn.BatchNorm2d(2)
    x = torch.randn(5, 3)
    y = model(x)
    (y.pow(2).sum() + bn2d(torch.randn(3, 2, 2, 2)).sum()).backward()
    model.eval()
    z = model(x)
    z.sum().backward()
    return y, z, list(model.parameters()), model[1].running_mean.clone(), bn2d.running_var



def embedding_and_recurrent_modules():
    embedding = nn.Embedding(10, 4)
    lstm, gru = nn.LSTM(4, 3, batch_first=True), nn.GRU(3, 2, bidirectional=True)
    out, (h, c) = lstm(embedding(torch.tensor([[1, 2, 3], [4, 4, 9]])))
    out2, h2 = gru(out.transpose(0, 1))
    cell, state = nn.LSTMCell(2, 3), (torch.zeros(1, 3), torch.zeros(1, 3))
    for step in torch.randn(2, 1, 2):
        state = cell(step, state)
    (out2.sum() + h.pow(2).sum() + c.mean() + h2.sum() + state[0].sum()).backward()
    return out, h, c, out2, [*embedding.parameters(), *lstm.parameters(), *gru.parameters()]


def attention():
    attention = nn.MultiheadAttention(4, 2, batch_first=True)
    x = torch.randn(2, 3, 4)
    mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), 1)
    out, weights = attention(x, x, x, attn_mask=mask)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True)
    (out.sum() + layer(out).pow(2).mean()).backward()
    return out, weights, list(attention.parameters())


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 2)})
        self.shared = nn.Linear(3, 3)

    def forward(self, x):
        x = self.shared(self.shared(x))  # one module called twice: its weights are shared
        for layer in self.layers:
            x = torch.relu(layer(x))
        return self.heads["a"](x), self.heads["b"](x)


def nested_modules_shared_and_frozen_weights():
    model = Block()
    model.layers[0].weight.requires_grad_(False)
    a, b = model(torch.randn(2, 3))
    (a.sum() + b.sum()).backward()
    model.layers[0].weight.requires_grad_(True)
    model.heads.requires_grad_(False)
    a, b = model(torch.randn(2, 3))
    (a.sum() + b.sum()).backward()
    return a, b, list(model.parameters())


def losses():
    logits = torch.randn(4, 3, requires_grad=True)
    t = torch.tensor([0, 2, 1, 2])
    parts = [F.cross_entropy(logits, t), F.cross_entropy(logits, t, label_smoothing=0.1),
             nn.MSELoss()(logits, torch.zeros(4, 3)),
             nn.NLLLoss()(F.log_softmax(logits, dim=1), t),
             nn.BCEWithLogitsLoss()(logits, torch.rand(4, 3)),
             F.cross_entropy(logits, t, reduction="none").mean()]
    sum(parts).backward()
    return logits, parts


def training_loop(optimizer):
    def program():
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        opt = optimizer(model.parameters(), lr=0.1)
        schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        seen = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            seen.append(nn.utils.clip_grad_norm_(model.parameters(), 0.5))
            opt.step()  # in place under no_grad
            schedule.step()
            seen.append(loss)
        # NOTE: clipping changes .grad in place after backward: the gradient shown is the one
        # backward computed (their norm is what clip_grad_norm_ returns), so the parameters
        # are compared bare and watched as values here, not as leaves whose .grad is shown
        return seen, [p.detach() for p in model.parameters()], [p.grad for p in model.parameters()]

    return program


def tutorial_epochs():
    """A tutorial's loop: a DataLoader, train and eval epochs, accuracy counted with .item()."""
    data = torch.utils.data.TensorDataset(torch.randn(16, 1, 6, 6), torch.randint(0, 3, (16,)))
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Dropout(0.25),
                          nn.Linear(32, 3), nn.LogSoftmax(dim=1))
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    seen = []
    for _ in range(2):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            opt.step()
            seen.append(loss.item())
        model.eval()
        with torch.no_grad():
            seen.append(sum((model(x).argmax(1) == y).sum().item() for x, y in loader))
    return seen, list(model.parameters())


def gradient_penalty_and_retained_graph():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(5, 3, requires_grad=True)
    out = model(x)
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    loss = out.mean() + (g.norm(2, dim=1) - 1).pow(2).mean()
    loss.backward(retain_graph=True)
    loss.backward()
    return g, loss, x, list(model.parameters())


def checkpoints():
    linear = nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    y = checkpoint(lambda t: torch.tanh(linear(t)).exp(), x, use_reentrant=False)
    y.sum().backward()
    return y, x, list(linear.parameters())


def reentrant_checkpoint():
    linear = nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    y = checkpoint(lambda t: torch.tanh(linear(t)).exp(), x, use_reentrant=True)
    y.sum().backward()
    # NOTE [honest limits]: the backward pass it runs inside backward is not seen, nor the
    # parameters' gradients it makes: they are compared bare and watched as values only
    return y, x, [p.grad for p in linear.parameters()]


class AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x.add_(1)

    @staticmethod
    def backward(ctx, g):
        return g


class Sort(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, index = x.sort()
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(index)
        return values, index

    @staticmethod
    def backward(ctx, g, _):
        (index,) = ctx.saved_tensors
        return torch.zeros_like(g).index_copy(0, index, g)


def custom_functions():
    x = torch.randn(4, requires_grad=True)
    h = AddOneInPlace.apply(x * 2)
    values, index = Sort.apply(h)
    (Square.apply(values) * torch.arange(4.0)).sum().backward()
    return x, values, index


def no_grad_and_inference_mode_inside():
    model = nn.Linear(3, 1)
    model.eval()
    with torch.no_grad():
        y = model(torch.randn(2, 3))
    with torch.inference_mode():
        z = model(torch.randn(2, 3))
        data = torch.randn(2, 3) * 2
    loss = model(data).sum()
    loss.backward()
    return y, z, loss, list(model.parameters())


def backward_twice():
    x = torch.randn(3, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def backward_of_a_vector():
    (torch.randn(3, requires_grad=True) * 2).backward()


def in_place_on_a_saved_tensor():
    x = torch.randn(3, requires_grad=True)
    h = x.exp()
    h.add_(1)
    h.sum().backward()


def wrong_target_class():
    F.cross_entropy(torch.randn(4, 3, requires_grad=True), torch.tensor([0, 3, 1, 2]))


PROGRAMS = [conv_net, norms_and_dropout_in_train_and_eval, embedding_and_recurrent_modules,
            attention, nested_modules_shared_and_frozen_weights, losses,
            training_loop(torch.optim.SGD), training_loop(torch.optim.Adam), tutorial_epochs,
            gradient_penalty_and_retained_graph, checkpoints, reentrant_checkpoint,
            custom_functions,
            no_grad_and_inference_mode_inside, backward_twice, backward_of_a_vector,
            in_place_on_a_saved_tensor, wrong_target_class]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__qualname__.split(".")[0])
def test_learner_programs_run_as_unwatched_and_are_told_truthfully(program):
    check(program)


def test_errors_in_backward_are_on_the_timeline_with_torchs_text():
    for program in (backward_twice, in_place_on_a_saved_tensor):
        recording, _ = check(program)
        failed = [step for step in recording.timeline if step[0] == "backward_failed"]
        assert len(failed) == 1
        assert failed[0][2] == f"RuntimeError: {run(program)}"


# ----------------------------------------------------------------------------- watching itself


class Interrupted(nn.Module):
    """A model whose inner module's forward raises ``error`` after one op."""

    def __init__(self, error):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(2, 2), _Raise(error))

    def forward(self, x):
        return self.inner(x)


class _Raise(nn.Module):
    def __init__(self, error):
        super().__init__()
        self.error = error

    def forward(self, x):
        raise self.error


def nothing_left_behind():
    assert not torch._C._is_torch_function_mode_enabled()
    assert torch.overrides._get_current_function_mode_stack() == []
    here = dgt._here
    assert (here.depth, here.stack, here.path, here.held, here.passes, dgt._callers) == (
        0, [], [], [], [], [])
    assert dgt._shared == []  # the module hooks and the warnings redirect are gone too


@pytest.mark.parametrize("error", [ValueError("wrong shape"), KeyboardInterrupt()],
                         ids=["ValueError", "KeyboardInterrupt"])
def test_a_watched_cell_that_raises_midway_leaves_nothing_behind(error, tmp_path, capsys):
    pytest.importorskip("anywidget", reason="the live view needs the jupyter extra")
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(type(error)), dg.watch(display=False) as view:
        loss = (w * 2).sum()
        Interrupted(error)(torch.randn(1, 2))
    nothing_left_behind()
    with dg.watch(view, display=False):  # the view goes on: the next cell's backward
        loss.backward()
    nothing_left_behind()
    view.save_html(tmp_path / "view.html")
    with pytest.raises(type(error)), dg.watch():  # the text outline of a script, likewise
        Interrupted(error)(torch.randn(1, 2))
    nothing_left_behind()
    with dg.record() as recording:  # and a module's forward later is scoped afresh
        nn.Linear(2, 1)(torch.randn(1, 2))
    assert {node.scope for node in recording.nodes.values()} == {("Linear",), ()}


def test_a_recording_inside_a_watched_cell():
    pytest.importorskip("anywidget", reason="the live view needs the jupyter extra")
    a = torch.ones(2, requires_grad=True)
    with dg.watch(display=False) as view:
        b = a * 3
        with dg.record() as recording:
            c = (b * 4).sum()
            c.backward()
        d = (a * 5).sum()  # still watched after the inner block
        d.backward()
    nothing_left_behind()
    assert ops(recording) == ["leaf", "MulBackward0", "MulBackward0", "SumBackward0"]
    assert torch.equal(a.grad, torch.full((2,), 17.0))
    watched_ops = ops(view.recording)  # the view saw all of it, after the inner block too
    assert watched_ops.count("MulBackward0") == 3 and watched_ops.count("SumBackward0") == 2


def test_a_modules_buffers_are_named_like_its_parameters():
    """BatchNorm's running statistics are data its op reads: they are drawn with their names
    and the module's scope, as its weight and bias are, not as anonymous data (constants)."""
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    with dg.record() as recording:
        model(torch.randn(4, 2)).sum().backward()
    named = {(node.name, node.scope) for node in recording.nodes.values()
             if node.op == "constant"}
    scope = ("Sequential", "1 \u00b7 BatchNorm1d")  # a bare position gets its class (issue 29)
    assert {("running_mean", scope), ("running_var", scope)} <= named


def test_data_passed_by_keyword_is_an_input():
    """B15 (helper B's finding): a data tensor passed by keyword (``torch.add(w, other=d)``)
    was dropped from the node's inputs; it is a data leaf as when passed by position."""
    w, d = torch.ones(3, requires_grad=True), torch.full((3,), 5.0)

    def program():
        (torch.add(w, d) + torch.add(w, other=d) + w.mul(other=d)).sum().backward()
        return w

    recording, seen = check(program)
    made = [e for e in seen if e.kind == "node_created" and e.op in ("AddBackward0",
                                                                    "MulBackward0")]
    assert [len(e.inputs) for e in made[:3]] == [2, 2, 2]


def test_a_node_of_several_outputs_shows_all_the_gradient_it_received():
    """B16 (helper B's finding): a node's gradient was its first output's only, and none at
    all when that output was unused (``a, b = x.split(...)`` with only ``b`` used)."""

    def program():
        x = torch.arange(6.0, requires_grad=True)
        a, b = torch.split(x, [2, 4])
        (b * 3).sum().backward()
        p, q, r = x.unbind()[:3]
        (p * 1 + q * 2 + r * 3).backward()
        return x

    _, seen = check(program)
    made = {e.id: e.op for e in seen if e.kind == "node_created"}
    grads = {made[e.id]: (e.preview, e.norm) for e in seen if e.kind == "grad_computed"}
    assert grads["SplitWithSizesBackward0"] == ((3.0, 3.0, 3.0, 3.0), 6.0)
    assert grads["UnbindBackward0"][0] == (1.0, 2.0, 3.0)  # the three used outputs, in order


def test_what_made_an_argument_unseen_has_its_value_but_no_line():
    """B19 (helper B's finding), NOTE [made before]: a custom Function's output, or a tensor
    built before watching, was announced at the line of the op that first used it, with no
    value; it was made before that op, so it has the value of the argument and no line."""

    def program():
        x = torch.ones(3, requires_grad=True)
        y = Square.apply(x)
        z = y + 1
        z.sum().backward()
        return x, z

    _, seen = check(program)
    square = next(e for e in seen if e.kind == "node_created" and e.op == "SquareBackward")
    add = next(e for e in seen if e.kind == "node_created" and e.op == "AddBackward0")
    assert (square.shape, square.preview, square.where) == ((3,), (1.0, 1.0, 1.0), None)
    assert add.where is not None and add.inputs == (square.id,)


@pytest.mark.parametrize("value", [[1, 2], 5, nn.Linear(2, 2)], ids=["list", "int", "module"])
def test_naming_something_that_is_not_a_tensor_says_what_to_do(value):
    """B14 (helper B's finding): dgt.name of a list raised "cannot create weak reference to
    'list' object", and of a module was accepted and shown nowhere."""
    with pytest.raises(TypeError, match=r"dgt.name names a torch tensor, not a \w+: "
                                        r"dgt.name\(tensor, 'x'\)"):
        dgt.name(value, "x")


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # torch.func.jvp's own
def test_forward_ad_zero_gradients_and_lazily_negated_views():
    """B21, B22 (helper B's findings): forward AD's zero tensors have sizes but no memory
    (tolist() raised; reading them from their address crashed); a view PyTorch negates lazily
    (``z.conj().imag``) holds the numbers before negation, and reading its memory showed them
    with the wrong sign."""

    def program():
        x = torch.ones(3, requires_grad=True)
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(x, torch.ones(3))
            primal, tangent = torch.autograd.forward_ad.unpack_dual((dual * 2).exp())
            (primal.sum() + tangent.sum()).backward()
        out, tangent = torch.func.jvp(lambda t: (t * 2).exp(), (x,), (torch.ones(3),))
        (out.sum() + tangent.sum()).backward()
        z = torch.tensor([1 + 2j], requires_grad=True)
        y = z.conj().imag  # -2.0
        (y * 3).sum().backward()
        return x, z, y

    _, seen = check(program)
    select = next(e for e in seen if e.kind == "node_created" and e.op == "SelectBackward0")
    assert select.preview == (-2.0,)


def test_data_inputs_are_in_the_order_of_the_arguments():
    """B12 (helper B's finding): data arguments came after the inputs needing a gradient, so
    ``d - a`` was drawn as SubBackward0(a, d); PyTorch keeps an empty slot for each of them
    (None in next_functions), where it now goes when the arguments line up with the slots."""
    a, d = torch.ones(2, requires_grad=True), torch.full((2,), 5.0)
    w, x = torch.ones(2, 3, requires_grad=True), torch.ones(4, 2)

    def program():
        outputs = torch.cat([d, a]), d - a, x @ w, torch.div(d, a)
        sum(out.sum() for out in outputs).backward()
        return a, w

    recording, seen = check(program)
    names = {id_: name for name, t in (("a", a), ("d", d), ("w", w), ("x", x))
             for id_ in [dgt._leaves.get(t).id]}
    inputs = {e.op: [names[i] for i in e.inputs] for e in seen if e.kind == "node_created"
              and e.op in ("CatBackward0", "SubBackward0", "MmBackward0", "DivBackward0")}
    assert inputs == {"CatBackward0": ["d", "a"], "SubBackward0": ["d", "a"],
                      "MmBackward0": ["x", "w"], "DivBackward0": ["d", "a"]}
