"""dg.nn: modules and parameters.

Gradients of every layer are checked twice: against finite differences in float64
(``dg.gradcheck``, with the parameters among the checked inputs) and against PyTorch, whose
weights are copied in with ``load_state_dict`` (which also proves that the weight layout and the
gate order match). Then the bookkeeping: registration order, state dicts, saving without pickle,
repr, train / eval, and the scopes that calling a module opens.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import nn
from dyngraph.spine.thread_state import this_thread

FLOAT64 = {"rtol": 1e-7, "atol": 1e-10}


class MLP(nn.Module):
    def __init__(self, hidden: int = 16) -> None:
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, 3)

    def forward(self, x: dg.Tensor) -> dg.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def _float64(shape: tuple[int, ...], seed: int, requires_grad: bool = True) -> dg.Tensor:
    array = np.random.default_rng(seed).standard_normal(shape)
    return dg.tensor(array, dtype=dg.float64, requires_grad=requires_grad)


# ---------------------------------------------------------------------------- gradcheck


def test_linear_gradients_match_finite_differences():
    fc = nn.Linear(3, 4, dtype=dg.float64)
    x = _float64((2, 3), seed=0)
    assert dg.gradcheck(lambda x, *params: fc(x), (x, *fc.parameters()))


def test_linear_without_bias_gradients_match_finite_differences():
    fc = nn.Linear(3, 2, bias=False, dtype=dg.float64)
    assert [name for name, _ in fc.named_parameters()] == ["weight"]
    x = _float64((4, 3), seed=1)
    assert dg.gradcheck(lambda x, w: fc(x), (x, fc.weight))


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_cell_gradients_match_finite_differences(nonlinearity):
    cell = nn.RNNCell(3, 2, nonlinearity=nonlinearity, dtype=dg.float64)
    x, h = _float64((2, 3), seed=2), _float64((2, 2), seed=3)
    assert dg.gradcheck(lambda x, h, *params: cell(x, h), (x, h, *cell.parameters()))


def test_gru_cell_gradients_match_finite_differences():
    cell = nn.GRUCell(3, 2, dtype=dg.float64)
    x, h = _float64((2, 3), seed=4), _float64((2, 2), seed=5)
    assert dg.gradcheck(lambda x, h, *params: cell(x, h), (x, h, *cell.parameters()))


def test_lstm_cell_gradients_match_finite_differences():
    cell = nn.LSTMCell(3, 2, dtype=dg.float64)
    x, h, c = _float64((2, 3), seed=6), _float64((2, 2), seed=7), _float64((2, 2), seed=8)
    assert dg.gradcheck(lambda x, h, c, *params: cell(x, (h, c)), (x, h, c, *cell.parameters()))


def test_embedding_gradients_match_finite_differences_with_repeated_indices():
    emb = nn.Embedding(5, 3, dtype=dg.float64)
    indices = np.array([[0, 2], [2, 4]])
    assert dg.gradcheck(lambda w: emb(indices) * emb(indices), (emb.weight,))
    (emb(indices).sum()).backward()
    counts = np.bincount(indices.ravel(), minlength=5)[:, None] * np.ones((1, 3))
    np.testing.assert_array_equal(emb.weight.grad.numpy(), counts)  # repeats add up


def test_a_broken_cell_fails_gradcheck():
    """The checks above can fail: a cell whose forward uses a frozen copy of a weight has
    a wrong gradient for it, and gradcheck says so."""

    class Broken(nn.RNNCell):
        def forward(self, x, h=None):
            x = self._batched(x)
            h = self._state(h, x)
            frozen = self.weight_hh.detach()  # the gradient through W_hh is lost
            return (x @ self.weight_ih.T + self.bias_ih + h @ frozen.T + self.bias_hh).tanh()

    cell = Broken(3, 2, dtype=dg.float64)
    x, h = _float64((2, 3), seed=2), _float64((2, 2), seed=3)
    with pytest.raises(dg.GradcheckError):
        dg.gradcheck(lambda x, h, *params: cell(x, h), (x, h, *cell.parameters()))


# ---------------------------------------------------------------------------- PyTorch


def _compare_with_torch(torch, mine, theirs, dg_inputs, torch_inputs, call_dg, call_torch):
    """Load theirs' weights into mine, run both, compare outputs and every gradient."""
    mine.load_state_dict(theirs.state_dict())
    outs = call_dg(mine, dg_inputs)
    expected = call_torch(theirs, torch_inputs)
    upstream = [np.random.default_rng(20 + i).standard_normal(o.shape) for i, o in
                enumerate(outs)]
    loss = sum(((o * u).sum() for o, u in zip(outs, upstream)), dg.tensor(0.0, dtype=dg.float64))
    torch_loss = sum((e * torch.from_numpy(u)).sum() for e, u in zip(expected, upstream))
    loss.backward()
    torch_loss.backward()
    for out, exp in zip(outs, expected):
        np.testing.assert_allclose(out.detach().numpy(), exp.detach().numpy(), **FLOAT64)
    torch_params = dict(theirs.named_parameters())
    assert [name for name, _ in mine.named_parameters()] == list(torch_params)
    for name, param in mine.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), torch_params[name].grad.numpy(),
                                   **FLOAT64, err_msg=f"gradient of {name}")
    for position, (x, tx) in enumerate(zip(dg_inputs, torch_inputs)):
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **FLOAT64,
                                   err_msg=f"gradient of input {position}")


def _both(torch, *shapes):
    arrays = [np.random.default_rng(30 + i).standard_normal(s) for i, s in enumerate(shapes)]
    dg_inputs = [dg.tensor(a, dtype=dg.float64, requires_grad=True) for a in arrays]
    torch_inputs = [torch.from_numpy(a).requires_grad_(True) for a in arrays]
    return dg_inputs, torch_inputs


@pytest.mark.torch
def test_linear_matches_torch(torch):
    theirs = torch.nn.Linear(3, 4, dtype=torch.float64)
    dg_in, torch_in = _both(torch, (5, 3))
    _compare_with_torch(torch, nn.Linear(3, 4, dtype=dg.float64), theirs, dg_in, torch_in,
                        lambda m, i: [m(*i)], lambda m, i: [m(*i)])


@pytest.mark.torch
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_cell_matches_torch(torch, nonlinearity):
    theirs = torch.nn.RNNCell(3, 4, nonlinearity=nonlinearity, dtype=torch.float64)
    mine = nn.RNNCell(3, 4, nonlinearity=nonlinearity, dtype=dg.float64)
    dg_in, torch_in = _both(torch, (2, 3), (2, 4))
    _compare_with_torch(torch, mine, theirs, dg_in, torch_in,
                        lambda m, i: [m(*i)], lambda m, i: [m(*i)])


@pytest.mark.torch
def test_gru_cell_matches_torch(torch):
    theirs = torch.nn.GRUCell(3, 4, dtype=torch.float64)
    dg_in, torch_in = _both(torch, (2, 3), (2, 4))
    _compare_with_torch(torch, nn.GRUCell(3, 4, dtype=dg.float64), theirs, dg_in, torch_in,
                        lambda m, i: [m(*i)], lambda m, i: [m(*i)])


@pytest.mark.torch
def test_lstm_cell_matches_torch(torch):
    theirs = torch.nn.LSTMCell(3, 4, dtype=torch.float64)
    dg_in, torch_in = _both(torch, (2, 3), (2, 4), (2, 4))
    _compare_with_torch(
        torch, nn.LSTMCell(3, 4, dtype=dg.float64), theirs, dg_in, torch_in,
        lambda m, i: list(m(i[0], (i[1], i[2]))), lambda m, i: list(m(i[0], (i[1], i[2]))),
    )


@pytest.mark.torch
def test_unbatched_cell_input_matches_torch(torch):
    theirs = torch.nn.GRUCell(3, 4, dtype=torch.float64)
    mine = nn.GRUCell(3, 4, dtype=dg.float64)
    mine.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal(3)
    out = mine(dg.tensor(x, dtype=dg.float64))
    assert out.shape == (4,)
    np.testing.assert_allclose(out.detach().numpy(), theirs(torch.from_numpy(x)).detach().numpy(),
                               **FLOAT64)


@pytest.mark.torch
def test_embedding_matches_torch(torch):
    theirs = torch.nn.Embedding(6, 3, dtype=torch.float64)
    mine = nn.Embedding(6, 3, dtype=dg.float64)
    mine.load_state_dict(theirs.state_dict())
    indices = np.array([[1, 5, 1], [0, 2, 1]])
    out, expected = mine(indices), theirs(torch.from_numpy(indices))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **FLOAT64)
    upstream = np.random.default_rng(1).standard_normal(out.shape)
    (out * upstream).sum().backward()
    (expected * torch.from_numpy(upstream)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), **FLOAT64)


@pytest.mark.torch
def test_parameter_order_and_state_dict_keys_match_torch(torch):
    class TorchMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(2, 16)
            self.act = torch.nn.ReLU()
            self.fc2 = torch.nn.Linear(16, 3)

    mine, theirs = MLP(), TorchMLP()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    expected = theirs.fc2(theirs.act(theirs.fc1(torch.from_numpy(x)))).detach().numpy()
    np.testing.assert_allclose(mine(dg.tensor(x)).detach().numpy(), expected, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- initialisation


def test_default_initialisation_follows_pytorch_and_the_seed():
    dg.manual_seed(0)
    fc = nn.Linear(25, 40)
    bound = 1 / 5  # 1 / sqrt(in_features)
    for param in (fc.weight, fc.bias):
        values = param.detach().numpy()
        assert values.dtype == np.float32
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound  # uniform over the whole range
    assert fc.weight.shape == (40, 25) and fc.bias.shape == (40,)

    cell = nn.LSTMCell(3, 16)
    assert cell.weight_ih.shape == (64, 3) and cell.weight_hh.shape == (64, 16)
    assert max(np.abs(p.detach().numpy()).max() for p in cell.parameters()) <= 1 / 4

    emb = nn.Embedding(200, 50).weight.detach().numpy()
    assert abs(emb.mean()) < 0.05 and abs(emb.std() - 1) < 0.05

    dg.manual_seed(0)
    again = nn.Linear(25, 40)
    np.testing.assert_array_equal(again.weight.detach().numpy(), fc.weight.detach().numpy())


def test_parameter_is_a_leaf_tensor_that_requires_grad():
    w = nn.Parameter(dg.zeros(2, 3))
    assert isinstance(w, dg.Tensor)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    assert nn.Parameter([1.0, 2.0]).dtype == np.float32
    frozen = nn.Parameter(dg.ones(2), requires_grad=False)
    assert not frozen.requires_grad
    assert repr(w).startswith("Parameter containing:\ntensor([[0., 0., 0.],")
    assert "requires_grad=True" in repr(w)
    y = w * 2  # ops give plain tensors, not Parameters
    assert type(y) is dg.Tensor
    w.anything = 1  # a learner's own attribute, as PyTorch allows (fast.ai: p.grad_avg = ...)
    assert w.anything == 1 and not hasattr(nn.Parameter(dg.zeros(1)), "anything")


# ---------------------------------------------------------------------------- the module tree


def test_named_parameters_in_registration_order_own_parameters_first():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
            self.scale = nn.Parameter(dg.ones(1))

        def forward(self, x):
            return self.body(x) * self.scale

    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias"]
    assert [p for p in net.parameters()] == [p for _, p in net.named_parameters()]
    assert [name for name, _ in net.named_modules()] == ["", "body", "body.0", "body.1",
                                                          "body.2"]
    assert list(net.children()) == [net.body]
    assert [type(m).__name__ for m in net.modules()] == [
        "Net", "Sequential", "Linear", "Tanh", "Linear"
    ]
    assert net.scale.name == "scale"  # registered parameters are named for diagrams


def test_a_shared_parameter_is_listed_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(4, 4)
            self.decoder = nn.Linear(4, 4)
            self.decoder.weight = self.encoder.weight

    names = [name for name, _ in Tied().named_parameters()]
    assert names == ["encoder.weight", "encoder.bias", "decoder.bias"]


def test_assigning_a_tensor_over_a_parameter_is_an_error_and_none_unregisters():
    fc = nn.Linear(2, 3)
    with pytest.raises(TypeError, match="'weight', which is a registered dg.nn.Parameter"):
        fc.weight = fc.weight * 2
    fc.bias = None
    assert [name for name, _ in fc.named_parameters()] == ["weight"]
    assert "bias=False" in repr(fc)
    fc.note = "plain attributes are not registered"
    assert len(list(fc.parameters())) == 1


def test_forgetting_super_init_is_explained():
    class Forgetful(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Forgetful()


def test_a_module_without_forward_says_so():
    with pytest.raises(NotImplementedError, match="has no forward"):
        nn.Module()(dg.ones(1))


def test_sequential_and_module_list():
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(model) == 3 and isinstance(model[1], nn.ReLU)
    x = dg.randn(4, 2)
    expected = model[2](model[1](model[0](x))).detach().numpy()
    np.testing.assert_allclose(model(x).detach().numpy(), expected)
    assert [name for name, _ in model[:2].named_children()] == ["0", "1"]

    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(list(layers.parameters())) == 6
    assert [name for name, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]


def test_to_float64_keeps_the_parameter_objects():
    model = MLP()
    before = list(model.parameters())
    model.double()
    assert list(model.parameters()) == before
    assert all(p.dtype == np.float64 for p in model.parameters())
    assert model(dg.ones(1, 2, dtype=dg.float64)).dtype == np.float64


def test_zero_grad_sets_gradients_to_none():
    model = MLP()
    model(dg.randn(4, 2)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_cells_check_their_input_and_state_shapes():
    cell = nn.GRUCell(3, 4)
    with pytest.raises(ValueError, match=r"expects input of shape \(batch, 3\)"):
        cell(dg.randn(2, 5))
    with pytest.raises(ValueError, match=r"expects a state of shape \(2, 4\)"):
        cell(dg.randn(2, 3), dg.randn(2, 5))
    h, c = nn.LSTMCell(3, 4)(dg.randn(2, 3))  # the state defaults to zeros
    assert h.shape == c.shape == (2, 4)


# ---------------------------------------------------------------------------- state dicts


def test_state_dict_entries_are_the_models_tensors_detached():
    # As in PyTorch (issue 37): a reference to the model's memory, not a snapshot
    model = MLP()
    state = model.state_dict()
    assert list(state) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(type(v) is dg.Tensor and not v.requires_grad for v in state.values())
    assert state["fc1.weight"].size() == (16, 2) and state["fc1.weight"].size(0) == 16
    state["fc1.bias"][:] = 123.0  # an in-place change of an entry is one of the model
    assert np.all(model.fc1.bias.detach().numpy() == 123.0)
    with dg.no_grad():
        model.fc2.weight.mul_(0.0)  # and the other way round
    assert not state["fc2.weight"].numpy().any()
    snapshot = {k: v.clone() for k, v in model.state_dict().items()}  # a copy keeps its values
    with dg.no_grad():
        model.fc2.bias.add_(1.0)
    assert not np.array_equal(snapshot["fc2.bias"].numpy(), model.fc2.bias.detach().numpy())


def test_load_state_dict_copies_in_place():
    dg.manual_seed(1)
    source = MLP()
    dg.manual_seed(2)
    target = MLP()
    params_before = list(target.parameters())
    arrays_before = [p.array for p in params_before]
    result = target.load_state_dict(source.state_dict())
    assert result == ([], [])
    assert list(target.parameters()) == params_before  # same Parameter objects ...
    assert [p.array for p in target.parameters()] == arrays_before  # ... and the same arrays
    x = dg.randn(5, 2)
    np.testing.assert_array_equal(target(x).detach().numpy(), source(x).detach().numpy())
    assert target.fc1.weight.version == 1  # an in-place change, like any other


def test_load_state_dict_reports_missing_unexpected_and_mismatched_keys():
    model = MLP()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = dict(before)
    del state["fc2.bias"]
    state["fc3.weight"] = np.zeros(1)
    state["fc1.weight"] = np.zeros((2, 16))
    state["fc2.weight"] = np.ones((3, 16))
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    assert "Error(s) in loading state_dict for MLP" in message
    assert 'Missing key(s) in state_dict: "fc2.bias"' in message  # PyTorch's words and quotes
    assert 'Unexpected key(s) in state_dict: "fc3.weight"' in message
    assert "size mismatch for fc1.weight: copying a param with shape (2, 16)" in message
    # as in PyTorch, what matched was copied before the error was raised
    np.testing.assert_array_equal(model.fc2.weight.detach().numpy(), np.ones((3, 16)))
    np.testing.assert_array_equal(model.fc1.weight.detach().numpy(), before["fc1.weight"])

    del state["fc1.weight"]
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["fc1.weight", "fc2.bias"]
    assert result.unexpected_keys == ["fc3.weight"]

    state = dict(before)
    state["fc1.weight"] = np.zeros((2, 16))
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict(state, strict=False)  # a wrong shape is always an error


def test_save_and_load_round_trip(tmp_path):
    dg.manual_seed(3)
    model = MLP()
    path = tmp_path / "model.npz"
    model.save(path)
    with np.load(path, allow_pickle=False) as archive:  # plain arrays, readable without us
        assert archive.files == list(model.state_dict())
    dg.manual_seed(4)
    fresh = MLP()
    assert fresh.load(path) is fresh
    for (name, a), b in zip(model.state_dict().items(), fresh.state_dict().values()):
        np.testing.assert_array_equal(a, b, err_msg=name)


UNPICKLED: list[str] = []


def _record_unpickling(what: str) -> None:
    UNPICKLED.append(what)


class _Payload:
    """Unpickling it runs code (here, harmlessly, ``_record_unpickling``): it must never happen."""

    def __reduce__(self):
        return (_record_unpickling, ("unpickled!",))


def test_the_payload_would_run_if_unpickled():
    """So that the two tests below, which check that it does not run, can fail."""
    pickle.loads(pickle.dumps(_Payload()))
    assert UNPICKLED.pop() == "unpickled!"


def test_load_refuses_an_object_array_without_unpickling_it(tmp_path):
    path = tmp_path / "evil.npz"
    state = MLP().state_dict()
    state["fc1.bias"] = np.array([_Payload()], dtype=object)
    np.savez(path, **state)  # numpy pickles object arrays when asked to save them
    with pytest.raises(ValueError, match="refusing to load .*pickled Python objects"):
        MLP().load(path)
    assert UNPICKLED == []


def test_load_refuses_a_pickle_file(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps({"fc1.weight": _Payload()}))
    with pytest.raises(ValueError, match="refusing to load"):
        MLP().load(path)
    assert UNPICKLED == []


# ---------------------------------------------------------------------------- repr


def test_repr_is_nested_like_pytorch():
    expected = (
        "MLP(\n"
        "  (fc1): Linear(in_features=2, out_features=16, bias=True)\n"
        "  (act): ReLU()\n"
        "  (fc2): Linear(in_features=16, out_features=3, bias=True)\n"
        ")"
    )
    assert repr(MLP()) == expected
    nested = nn.Sequential(nn.Sequential(nn.Embedding(10, 4), nn.Dropout(0.2)),
                           nn.LSTMCell(4, 8), nn.RNNCell(2, 3, bias=False, nonlinearity="relu"))
    assert repr(nested) == (
        "Sequential(\n"
        "  (0): Sequential(\n"
        "    (0): Embedding(10, 4)\n"
        "    (1): Dropout(p=0.2)\n"
        "  )\n"
        "  (1): LSTMCell(4, 8)\n"
        "  (2): RNNCell(2, 3, bias=False, nonlinearity=relu)\n"
        ")"
    )


# ---------------------------------------------------------------------------- train / eval


def test_train_and_eval_reach_every_module():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_dropout_drops_and_scales_in_training_and_is_the_identity_in_eval():
    drop = nn.Dropout(0.25)
    x = dg.ones(100, 100)
    dg.manual_seed(0)
    y = drop(x).numpy()
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8  # about 1 - p survive ...
    np.testing.assert_allclose(y[kept], 1 / 0.75)  # ... scaled by 1 / (1 - p)
    dg.manual_seed(0)
    np.testing.assert_array_equal(drop(x).numpy(), y)  # seeded
    drop.eval()
    assert drop(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# ---------------------------------------------------------------------------- scopes


def _scopes_by_op(run):
    events = []
    with dg.events.subscribe(events.append):
        run()
    return [(e.op, e.scope) for e in events if e.kind == "node_created"]


def test_calling_a_module_opens_a_scope_named_after_it():
    model = MLP()
    x = dg.randn(4, 2)
    nodes = _scopes_by_op(lambda: model(x).sum())
    ops = [(op, scope) for op, scope in nodes if op not in ("leaf", "parameter", "constant")]
    assert ops == [
        ("Permute", ("MLP", "fc1")), ("MatMul", ("MLP", "fc1")), ("Add", ("MLP", "fc1")),
        ("Relu", ("MLP", "act")),
        ("Permute", ("MLP", "fc2")), ("MatMul", ("MLP", "fc2")), ("Add", ("MLP", "fc2")),
        ("Sum", ()),  # outside the model
    ]
    assert dg.events.current_scope() == ()  # closed again


def test_parameters_are_announced_in_their_module_scope_with_their_names():
    model = MLP()
    events = []
    with dg.events.subscribe(events.append):
        model(dg.randn(4, 2))
    ids = {model.fc1.weight.id: "fc1", model.fc1.bias.id: "fc1", model.fc2.weight.id: "fc2"}
    announced = [e for e in events if e.kind == "node_created" and e.id in ids]
    assert [(e.name, e.scope, e.is_leaf) for e in announced] == [
        ("weight", ("MLP", "fc1"), True), ("bias", ("MLP", "fc1"), True),
        ("weight", ("MLP", "fc2"), True),
    ]


def test_sequential_children_are_scoped_by_position_and_class_and_scopes_nest():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2), nn.Tanh())

        def forward(self, x):
            return self.body(x)

    net = Net()
    nodes = _scopes_by_op(lambda: net(dg.randn(1, 2)))
    scopes = {scope for op, scope in nodes if op not in ("leaf", "parameter", "constant")}
    # a bare position is not a name a learner can read: the class goes with it
    assert scopes == {("Net", "body", "0 \u00b7 Linear"), ("Net", "body", "1 \u00b7 Tanh")}
    top = _scopes_by_op(lambda: nn.Tanh()(dg.randn(2, requires_grad=True)))
    assert ("Tanh", ("Tanh",)) in top  # a module without a parent: its class name


def test_children_of_a_module_list_are_scoped_under_its_name():
    """A ModuleList has no forward: its owner calls the children, which are named as PyTorch's
    named_modules names them ("rnn.0 · Linear"), one scope per instance (issue 29)."""

    class Stacked(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
            self.late = nn.ModuleList()
            self.late.append(nn.Tanh())  # added after the list was registered

        def forward(self, x):
            return self.late[0](self.rnn[1](self.rnn[0](x)))

    nodes = _scopes_by_op(lambda: Stacked()(dg.randn(1, 2)))
    scopes = {scope for op, scope in nodes if op not in ("leaf", "parameter", "constant")}
    assert scopes == {("Stacked", "rnn.0 \u00b7 Linear"), ("Stacked", "rnn.1 \u00b7 Linear"),
                      ("Stacked", "late.0 \u00b7 Tanh")}


def test_each_call_of_a_recursion_is_a_scope_of_its_own():
    """A module calling itself on the halves of a tree: the running call's first call is
    "call 1 · Tree", its second "call 2 · Tree", so the two halves are two scopes and the scopes
    nest as the calls do (NOTE [scopes]; issue 40)."""

    class Tree(nn.Module):
        def __init__(self):
            super().__init__()
            self.combine = nn.Linear(4, 2)

        def forward(self, tree):
            if not isinstance(tree, tuple):
                return dg.tensor([[float(tree), 1.0]])
            return self.combine(dg.cat([self(tree[0]), self(tree[1])], axis=1)).tanh()

    model = Tree()  # made before listening: its parameters are announced where they are read
    nodes = _scopes_by_op(lambda: model(((1, 2), 3)))
    scopes = {scope for op, scope in nodes if op not in ("leaf", "parameter", "constant")}
    call = "call {} \u00b7 Tree".format
    assert scopes == {("Tree",), ("Tree", "combine"), ("Tree", call(1)),
                      ("Tree", call(1), "combine")}, scopes
    # its weights belong to the module, not to the call that read them first
    assert {scope for op, scope in nodes if op == "parameter"} == {("Tree", "combine")}
    assert dg.events.current_scope() == () and this_thread.state.calls == []


def test_a_scope_is_closed_even_when_forward_raises():
    with pytest.raises(ValueError):
        nn.GRUCell(3, 4)(dg.randn(2, 7))
    assert dg.events.current_scope() == ()


# ---------------------------------------------------------------------------- backends


def test_modules_run_on_every_backend(backend):
    dg.manual_seed(5)
    cell = nn.LSTMCell(3, 4)
    fc = nn.Linear(4, 2)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)

    def run(device):
        cell.to(device)
        fc.to(device)
        cell.zero_grad()
        fc.zero_grad()
        h, c = cell(dg.tensor(x, device=device))
        out = fc(h)
        out.sum().backward()
        grads = [p.grad.numpy() for p in (*cell.parameters(), *fc.parameters())]
        return out.detach().numpy(), grads

    cpu_out, cpu_grads = run("cpu")
    out, grads = run(backend.device)
    assert all(p.device == backend.device for p in cell.parameters())
    np.testing.assert_allclose(out, cpu_out, rtol=1e-5, atol=1e-6)
    for g, expected in zip(grads, cpu_grads):
        np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)


def test_two_layers_used_side_by_side_are_two_boxes_named_by_their_variables():
    """NOTE [scopes]: dyngraph's own layers made on a line that names them are scoped by that
    name and their class (lesson 07's combine and classify, issue 29); parents still name
    their children, and containers and the learner's own models keep their class name."""
    combine = nn.Linear(4, 2)
    classify = nn.Linear(2, 1)
    body = nn.Sequential(nn.Linear(2, 2))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)

    model = Model()
    x = dg.tensor(np.ones((1, 4), dtype=np.float32))
    with dg.record() as rec:
        model(body(classify(combine(x)).tanh() * dg.ones(1, 2)))
    scopes = {node.scope for node in rec.nodes.values() if node.scope}
    assert {("combine \u00b7 Linear",), ("classify \u00b7 Linear",),
            ("Sequential", "0 \u00b7 Linear"), ("Model", "fc")} <= scopes


# ---------------------------------------------------------------------------- EmbeddingBag

BAG_INPUTS = [  # (input, offsets, include_last_offset): 2-D rows, 1-D slices, an empty bag
    (np.array([[1, 5, 1], [0, 2, 1]]), None, False),
    (np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 2, 2, 5]), False),
    (np.array([1, 2, 4, 5, 4, 3]), np.array([0, 1, 4, 6]), True),
]


@pytest.mark.torch
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("bags", range(len(BAG_INPUTS)))
def test_embedding_bag_matches_torch(torch, mode, bags):
    indices, offsets, last = BAG_INPUTS[bags]
    theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=last,
                                   dtype=torch.float64)
    mine = nn.EmbeddingBag(10, 3, mode=mode, include_last_offset=last, dtype=dg.float64)
    mine.load_state_dict(theirs.state_dict())
    out = mine(dg.tensor(indices), None if offsets is None else dg.tensor(offsets))
    expected = theirs(torch.from_numpy(indices),
                      None if offsets is None else torch.from_numpy(offsets))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **FLOAT64)
    upstream = np.random.default_rng(2).standard_normal(out.shape)
    (out * upstream).sum().backward()
    (expected * torch.from_numpy(upstream)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), **FLOAT64)


@pytest.mark.torch
def test_embedding_bag_per_sample_weights_match_torch_and_finite_differences(torch):
    indices, offsets = np.array([1, 2, 4, 5, 4]), np.array([0, 2])
    scales = np.random.default_rng(3).standard_normal(5)
    theirs = torch.nn.EmbeddingBag(6, 3, mode="sum", dtype=torch.float64)
    mine = nn.EmbeddingBag(6, 3, mode="sum", dtype=dg.float64)
    mine.load_state_dict(theirs.state_dict())
    weights = dg.tensor(scales, requires_grad=True)
    their_weights = torch.tensor(scales, requires_grad=True)
    out = mine(dg.tensor(indices), dg.tensor(offsets), per_sample_weights=weights)
    expected = theirs(torch.from_numpy(indices), torch.from_numpy(offsets),
                      per_sample_weights=their_weights)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **FLOAT64)
    (out * out).sum().backward()
    (expected * expected).sum().backward()
    np.testing.assert_allclose(weights.grad.numpy(), their_weights.grad.numpy(), **FLOAT64)
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), **FLOAT64)
    assert dg.gradcheck(
        lambda w, s: dg.nn.functional.embedding_bag(dg.tensor(indices), w, dg.tensor(offsets),
                                                    "sum", s),
        (mine.weight, dg.tensor(scales, requires_grad=True)))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradients_match_finite_differences(mode):
    bag = nn.EmbeddingBag(10, 3, mode=mode, dtype=dg.float64)
    indices, offsets = dg.tensor([1, 2, 4, 5, 3, 7]), dg.tensor([0, 2, 2, 4])
    assert dg.gradcheck(lambda w: dg.nn.functional.embedding_bag(indices, w, offsets, mode),
                        (bag.weight,))


def test_embedding_bag_refuses_what_torch_refuses():
    bag = nn.EmbeddingBag(10, 3, mode="mean")
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        bag(dg.tensor([[1, 2]]), per_sample_weights=dg.ones(1, 2))
    with pytest.raises(ValueError, match="offsets has to be None if input is 2-D"):
        bag(dg.tensor([[1, 2]]), dg.tensor([0]))
    with pytest.raises(ValueError, match=r"offsets\[0\] has to be 0"):
        bag(dg.tensor([1, 2, 3]), dg.tensor([1]))
    with pytest.raises(ValueError, match="needs offsets"):
        bag(dg.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="mode must be"):
        nn.EmbeddingBag(10, 3, mode="median")


@pytest.mark.torch
def test_conv3d_module_matches_torch(torch):
    theirs = torch.nn.Conv3d(2, 3, kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=1,
                             dtype=torch.float64)
    mine = nn.Conv3d(2, 3, kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=1,
                     dtype=dg.float64)
    mine.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(4).standard_normal((2, 2, 3, 5, 4))
    out, expected = mine(dg.tensor(x)), theirs(torch.from_numpy(x))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **FLOAT64)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), **FLOAT64)
