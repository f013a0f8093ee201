"""dyngraph.torch on the programs learners write: models, losses, training loops, autograd's
tools, and wrong code on purpose.

Each program runs twice from the same seed, bare and inside ``dg.record()``; watching must
change nothing (the same values, the same ``.grad``, the same exception with PyTorch's own
message) and the recording must tell the truth (every edge joins recorded nodes, each node's
inputs were told about before it, op names are the ``grad_fn`` names, a leaf's gradient shown
is its ``.grad``). Where dyngraph's C layer is built, it must emit what the readable
definitions do on the same program.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

import torch.nn as nn  # noqa: E402

import dyngraph as dg  # noqa: E402
import dyngraph.torch as dgt  # noqa: E402
from dyngraph import _accelerated  # noqa: E402

# What the C layer replaces in dyngraph.torch (NOTE [speedups] in dyngraph/_accelerated.py).
ACCELERATED = ("_announce_output", "_grad_computed", "_preview", "_preview_and_norm",
               "_saved_bytes", "_EventMode")


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


def assert_same(bare, watched):
    """The same values and gradients, or the same exception with the same message."""
    if isinstance(bare, BaseException) or isinstance(watched, BaseException):
        assert (type(watched), str(watched)) == (type(bare), str(bare))
        return
    bare_tensors, watched_tensors = list(tensors_in(bare)), list(tensors_in(watched))
    assert len(bare_tensors) == len(watched_tensors)
    for a, b in zip(bare_tensors, watched_tensors):
        assert (a.dtype, a.shape, a.requires_grad) == (b.dtype, b.shape, b.requires_grad)
        assert torch.equal(a.detach(), b.detach())
        if a.is_leaf or a.retains_grad:
            assert (a.grad is None) == (b.grad is None)
            if a.grad is not None:
                assert torch.equal(a.grad, b.grad)


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


def replay(events):
    """The events as text, ids renumbered by first appearance, norms to 12 digits."""
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
        if e.kind == "grad_computed":
            e = e._replace(norm=float(f"{e.norm:.12g}"))
        rows.append(repr(e))
    return rows


def watched(program):
    """What ``program`` returns inside dg.record(), the recording and the events."""
    seen: list = []
    with dg.record() as recording, dg.events.subscribe(seen.append):
        result = run(program)
    assert not torch._C._is_torch_function_mode_enabled()  # the mode is gone after the block
    return result, recording, seen


def check(program, monkeypatch=None):
    """Bare and watched alike, the recording truthful, and (given ``monkeypatch``, with the C
    layer built) the C layer's events those of the readable definitions. Returns the
    recording and the events."""
    bare = run(program)
    result, recording, seen = watched(program)
    assert_same(bare, result)
    assert_truthful(recording, seen, result)
    for tensor in tensors_in(result):
        dg.draw(tensor).to_dot()
    if monkeypatch is not None and _accelerated.speedups is not None:
        for name in ACCELERATED:
            monkeypatch.setattr(dgt, name, _accelerated.readable(dgt, name))
        readable_result, _, readable_events = watched(program)
        assert_same(bare, readable_result)
        assert replay(seen) == replay(readable_events)
        monkeypatch.undo()
    return recording, seen


def ops(recording):
    return [node.op for node in recording.nodes.values()]


# ----------------------------------------------------------------------------- findings


def test_embedding_with_padding_idx_made_while_watching(monkeypatch):
    """nn.Embedding(padding_idx=0) zeroes its row with ``weight[0].fill_(0)`` under no_grad;
    reading the grad_fn of that view raises (NOTE [views changed under no_grad]), and the
    watcher did, so making the module inside dg.record() raised PyTorch's view error."""

    def program():
        embedding = nn.Embedding(5, 3, padding_idx=0)
        y = embedding(torch.tensor([0, 1, 0, 2]))
        (y * 2).sum().backward()
        return y, embedding.weight

    recording, _ = check(program, monkeypatch)
    assert "EmbeddingBackward0" in ops(recording)


def test_views_changed_in_place_under_no_grad(monkeypatch):
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

    check(program, monkeypatch)

    def uses_it_with_grad():  # PyTorch's own error, not the watcher's
        h = torch.randn(3, requires_grad=True) * 1
        with torch.no_grad():
            view = h[0:2]
        view.mul_(2)

    check(uses_it_with_grad)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        uses_it_with_grad()


def test_torch_func_transforms(monkeypatch):
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

    recording, _ = check(program, monkeypatch)
    assert {"SinBackward0", "ExpBackward0"} <= set(ops(recording))


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_meta_complex_and_nested_tensors(monkeypatch, tmp_path):
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
        recording, seen = check(program, monkeypatch)
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


def test_jit_trace_of_a_module_while_watching(monkeypatch):
    """torch.jit.trace records every read of a tensor into its TorchScript graph: the watcher's
    previews became ops of the trace, whose check then failed ("Graphs differed across
    invocations"; in C, 'an integer is required' from its sizes, tensors there). The mode now
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

    recording, _ = check(program, monkeypatch)
    assert "ReluBackward0" in ops(recording)


def test_assignment_into_a_tensor_is_shown_where_it_happens(monkeypatch):
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

    recording, seen = check(program, monkeypatch)
    copies = [e for e in seen if e.kind == "node_created" and e.op == "CopySlices"]
    assert [(e.shape, e.preview) for e in copies] == [((4,), (2.0, 10.0, 2.0, 2.0)),
                                                      ((3,), (2.0, 0.0, 0.0))]
    lines = [e.where.line for e in copies]
    source = Path(__file__).read_text().splitlines()
    assert "y[1] = 10.0" in source[lines[0] - 1] and "buffer[0] =" in source[lines[1] - 1]


def test_gradient_norms_of_big_and_half_precision_tensors(monkeypatch):
    """B9, B10 (helper B's findings): beyond the few numbers of a small tensor the readable
    definition summed the squares in the tensor's own dtype (numpy's dot): float32 drifted in
    the fifth digit from the C layer's float64 sum, float16 overflowed to inf with a numpy
    warning. Both now sum in float64; the norms are torch's own."""

    def program():
        a = torch.full((300, 40), 0.5, requires_grad=True)
        b = torch.ones(300, dtype=torch.float16, requires_grad=True)
        ((a * 3).exp().sum() + (b * 16).sum()).backward()
        return a, b

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow in dot
        _, seen = check(program, monkeypatch)
    norms = [e.norm for e in seen if e.kind == "grad_computed"]
    assert any(277.128 < norm < 277.129 for norm in norms)  # b's: sqrt(300) * 16, not inf
    expected = math.sqrt(300 * 40) * 3 * math.exp(1.5)
    assert any(math.isclose(norm, expected, rel_tol=1e-6) for norm in norms)
