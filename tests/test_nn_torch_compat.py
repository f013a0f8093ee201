"""dg.nn and dg.optim against PyTorch: the modules, losses, recurrent layers and optimizers of
issue 13 give torch's numbers from the same weights.

Every comparison copies the dyngraph module's ``state_dict()`` into the torch module built with
the same arguments (which also proves the parameter names, shapes and buffer keys match), runs
both on the same input, and compares outputs, gradients and, for optimizers, the parameters
after several steps. Modules with math of their own (BatchNorm, the recurrent layers with
their masking) are also checked against finite differences in float64. A module whose
``F`` function has not landed yet is skipped with a reason.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import nn
from dyngraph.nn import functional as F

F64 = {"rtol": 1e-9, "atol": 1e-11}
F32 = {"rtol": 2e-5, "atol": 2e-6}


# Keyword arguments the modules pass on, PyTorch's (for functions older than issue 13).
KEYWORDS = {"cross_entropy": ("weight", "ignore_index", "label_smoothing")}


def _needs(*names: str) -> None:
    missing = [name for name in names if not hasattr(F, name)]
    missing += [
        f"{name}({keyword}=)" for name in names if hasattr(F, name)
        for keyword in KEYWORDS.get(name, ())
        if keyword not in inspect.signature(getattr(F, name)).parameters
    ]
    if missing:
        pytest.skip(f"dg.nn.functional has no {', '.join(missing)} yet")


def _array(t) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _copy_into(torch, mine: nn.Module, theirs) -> None:
    theirs.load_state_dict({k: torch.tensor(v) for k, v in mine.state_dict().items()})


def _compare_module(torch, mine, theirs, x: np.ndarray, tolerance=F32, out=lambda o: o):
    """Same weights, same input: outputs, input grads and parameter grads agree."""
    _copy_into(torch, mine, theirs)
    x_mine = dg.tensor(x, requires_grad=True)
    x_theirs = torch.tensor(x, requires_grad=True)
    y_mine, y_theirs = out(mine(x_mine)), out(theirs(x_theirs))
    np.testing.assert_allclose(_array(y_mine), _array(y_theirs), **tolerance)
    weights = np.random.default_rng(7).standard_normal(y_theirs.shape)
    (y_mine * dg.tensor(weights, dtype=y_mine.dtype)).sum().backward()
    (y_theirs * torch.tensor(weights, dtype=y_theirs.dtype)).sum().backward()
    np.testing.assert_allclose(_array(x_mine.grad), _array(x_theirs.grad), **tolerance)
    theirs_grads = dict(theirs.named_parameters())
    for name, p in mine.named_parameters():
        np.testing.assert_allclose(_array(p.grad), _array(theirs_grads[name].grad),
                                   err_msg=name, **tolerance)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------- buffers, modes


def test_buffers_are_registered_saved_and_moved():
    bn = nn.BatchNorm1d(3)
    assert [name for name, _ in bn.named_parameters()] == ["weight", "bias"]
    assert [name for name, _ in bn.named_buffers()] == [
        "running_mean", "running_var", "num_batches_tracked"]
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    model = nn.Sequential(nn.Linear(3, 3), bn)
    model.register_buffer("scratch", dg.zeros(2), persistent=False)
    assert "scratch" not in model.state_dict()
    assert [name for name, _ in model.named_buffers()][:2] == ["scratch", "1.running_mean"]
    model.double()
    assert bn.running_mean.dtype == np.float64 and bn.weight.dtype == np.float64
    assert bn.num_batches_tracked.dtype == np.int64  # integer buffers keep their dtype
    bn.running_mean = dg.ones(3)  # reassigning keeps it a buffer
    assert dict(bn.named_buffers())["running_mean"] is bn.running_mean
    with pytest.raises(TypeError, match="buffer"):
        bn.running_mean = np.ones(3)
    assert list(bn.buffers())[0] is bn.running_mean


def test_state_dict_keys_match_torch_with_buffers(torch):
    def build(m):
        return m.Sequential(m.Conv2d(1, 2, 3), m.BatchNorm2d(2), m.Flatten(),
                            m.LayerNorm(8), m.Linear(8, 2))

    mine, theirs = build(nn), build(torch.nn)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for (name, a), b in zip(mine.state_dict().items(), theirs.state_dict().values()):
        assert a.shape == tuple(b.shape), name


def test_train_and_eval_reach_every_descendant():
    model = nn.Sequential(nn.Linear(2, 2), nn.ModuleDict({"drop": nn.Dropout(0.5)}))
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_module_dict_identity_and_flatten():
    heads = nn.ModuleDict({"a": nn.Linear(4, 1)})
    heads["b"] = nn.Linear(4, 2)
    assert list(heads.keys()) == ["a", "b"] and "b" in heads and len(heads) == 2
    assert [name for name, _ in heads.named_parameters()] == [
        "a.weight", "a.bias", "b.weight", "b.bias"]
    del heads["a"]
    assert list(heads) == ["b"]
    x = dg.randn(2, 3, 4, 5)
    assert nn.Identity(54, unused=True)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    layers = nn.ModuleList([nn.Linear(1, 1)]).extend([nn.ReLU(), nn.Tanh()])
    assert len(layers) == 3 and isinstance(layers[-1], nn.Tanh)


@pytest.mark.parametrize("owner", ["module", "optimizer"])
def test_zero_grad_set_to_none_false_gives_zeros(owner):
    model = nn.Linear(2, 3)
    opt = dg.optim.SGD(model.parameters(), lr=0.1)
    model(dg.randn(4, 2)).sum().backward()
    zero_grad = model.zero_grad if owner == "module" else opt.zero_grad
    zero_grad(set_to_none=False)
    for p in model.parameters():
        assert p.grad is not None and p.grad.shape == p.shape
        np.testing.assert_array_equal(p.grad.numpy(), 0.0)
    zero_grad()
    assert all(p.grad is None for p in model.parameters())


# ---------------------------------------------------------------------------- activations, losses


@pytest.mark.parametrize("name, args", [
    ("Softmax", {"dim": 1}), ("LogSoftmax", {"dim": -1}), ("GELU", {}),
    ("GELU", {"approximate": "tanh"}), ("LeakyReLU", {"negative_slope": 0.2}), ("ReLU", {}),
    ("Tanh", {}), ("Sigmoid", {}), ("Identity", {}), ("Flatten", {}),
])
def test_activation_modules_match_torch(torch, name, args):
    _needs(*{"GELU": ["gelu"], "LeakyReLU": ["leaky_relu"]}.get(name, []))
    x = _rng(1).standard_normal((4, 3, 2)).astype(np.float32)
    _compare_module(torch, getattr(nn, name)(**args), getattr(torch.nn, name)(**args), x)


def _loss_inputs(name: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((6, 4)).astype(np.float32)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        return x, rng.integers(0, 4, size=6)
    if name == "BCELoss":
        return 1 / (1 + np.exp(-x)), rng.uniform(0, 1, (6, 4)).astype(np.float32)
    if name == "BCEWithLogitsLoss":
        return x, (rng.uniform(0, 1, (6, 4)) > 0.5).astype(np.float32)
    return x, rng.standard_normal((6, 4)).astype(np.float32)


LOSSES = [
    ("MSELoss", {}, "mse_loss"), ("MSELoss", {"reduction": "sum"}, "mse_loss"),
    ("L1Loss", {}, "l1_loss"), ("CrossEntropyLoss", {}, "cross_entropy"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 2}, "cross_entropy"),
    ("CrossEntropyLoss", {"reduction": "none"}, "cross_entropy"),
    ("NLLLoss", {}, "nll_loss"), ("BCELoss", {}, "binary_cross_entropy"),
    ("BCEWithLogitsLoss", {}, "binary_cross_entropy_with_logits"),
    ("BCEWithLogitsLoss", {"reduction": "sum"}, "binary_cross_entropy_with_logits"),
]


@pytest.mark.parametrize("name, args, function", LOSSES, ids=lambda v: str(v))
def test_loss_modules_match_torch(torch, name, args, function):
    _needs(function)
    x, target = _loss_inputs(name, _rng(2))
    if name == "NLLLoss":
        x = x - np.log(np.exp(x).sum(1, keepdims=True))
    mine_x, theirs_x = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mine = getattr(nn, name)(**args)(mine_x, dg.tensor(target))
    theirs = getattr(torch.nn, name)(**args)(theirs_x, torch.tensor(target))
    np.testing.assert_allclose(_array(mine), _array(theirs), **F32)
    mine.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(_array(mine_x.grad), _array(theirs_x.grad), **F32)


def test_loss_with_class_weights_matches_torch(torch):
    _needs("cross_entropy")
    x, target = _loss_inputs("CrossEntropyLoss", _rng(3))
    w = np.array([1.0, 2.0, 0.5, 1.5], dtype=np.float32)
    mine = nn.CrossEntropyLoss(weight=dg.tensor(w))(dg.tensor(x), dg.tensor(target))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))(torch.tensor(x),
                                                               torch.tensor(target))
    np.testing.assert_allclose(_array(mine), _array(theirs), **F32)


def test_loss_rejects_an_unknown_reduction():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="average")


# ---------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize("args, shape", [
    ({}, (8, 3)), ({"momentum": None}, (8, 3)), ({"momentum": 0.3}, (5, 3, 4)),
    ({"affine": False}, (8, 3)), ({"track_running_stats": False}, (8, 3)),
])
def test_batchnorm1d_matches_torch_in_training_and_evaluation(torch, args, shape):
    mine, theirs = nn.BatchNorm1d(3, **args), torch.nn.BatchNorm1d(3, **args)
    if mine.weight is not None:  # not the default 1 and 0, so the affine part is checked
        mine.load_state_dict({"weight": _rng(4).uniform(0.5, 2, 3),
                              "bias": _rng(5).standard_normal(3)}, strict=False)
    _copy_into(torch, mine, theirs)
    for step in range(3):  # running statistics over several batches
        x = (_rng(10 + step).standard_normal(shape) * 2 + 1).astype(np.float32)
        _compare_module(torch, mine, theirs, x)
        for (name, a), b in zip(mine.named_buffers(), theirs.buffers()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), err_msg=name, **F32)
    mine.eval()
    theirs.eval()
    _compare_module(torch, mine, theirs, _rng(20).standard_normal(shape).astype(np.float32))


def test_batchnorm2d_matches_torch(torch):
    mine, theirs = nn.BatchNorm2d(2), torch.nn.BatchNorm2d(2)
    x = _rng(6).standard_normal((3, 2, 4, 5)).astype(np.float32)
    _compare_module(torch, mine, theirs, x)
    np.testing.assert_allclose(mine.running_var.numpy(), theirs.running_var.numpy(), **F32)
    assert int(mine.num_batches_tracked.item()) == 1


@pytest.mark.parametrize("training", [True, False])
def test_batchnorm_gradients_match_finite_differences(training):
    bn = nn.BatchNorm1d(3, dtype=dg.float64).train(training)
    x = dg.tensor(_rng(8).standard_normal((5, 3, 2)), requires_grad=True)
    with dg.no_grad():  # keep the running statistics out of the check
        bn.running_mean += 0.3
    bn.momentum = 0.0
    assert dg.gradcheck(lambda x, *p: bn(x), (x, *bn.parameters()))


def test_batchnorm_refuses_a_batch_of_one_in_training():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(dg.randn(1, 3))
    with pytest.raises(ValueError, match="features in dimension 1"):
        nn.BatchNorm1d(3)(dg.randn(4, 2))


@pytest.mark.parametrize("args", [{}, {"elementwise_affine": False}, {"bias": False}])
def test_layernorm_matches_torch(torch, args):
    _needs("layer_norm")
    mine, theirs = nn.LayerNorm((3, 4), **args), torch.nn.LayerNorm((3, 4), **args)
    if mine.weight is not None:
        mine.weight.detach().array[...] = _rng(9).uniform(0.5, 2, (3, 4))
    _compare_module(torch, mine, theirs, _rng(9).standard_normal((2, 3, 4)).astype(np.float32))


# ---------------------------------------------------------------------------- convolution


@pytest.mark.parametrize("args", [
    {"kernel_size": 3}, {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 2, "dilation": 2, "bias": False},
])
def test_conv1d_matches_torch(torch, args):
    _needs("conv1d")
    mine, theirs = nn.Conv1d(2, 4, **args), torch.nn.Conv1d(2, 4, **args)
    _compare_module(torch, mine, theirs, _rng(11).standard_normal((3, 2, 9)).astype(np.float32))


@pytest.mark.parametrize("args", [
    {"kernel_size": 3}, {"kernel_size": (2, 3), "stride": 2, "padding": 1},
    {"kernel_size": 3, "groups": 2, "bias": False},
])
def test_conv2d_matches_torch(torch, args):
    _needs("conv2d")
    mine, theirs = nn.Conv2d(2, 4, **args), torch.nn.Conv2d(2, 4, **args)
    _compare_module(torch, mine, theirs,
                    _rng(12).standard_normal((2, 2, 7, 6)).astype(np.float32))


@pytest.mark.parametrize("args", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1,
                                                        "padding": 1}])
def test_maxpool2d_matches_torch(torch, args):
    _needs("max_pool2d")
    _compare_module(torch, nn.MaxPool2d(**args), torch.nn.MaxPool2d(**args),
                    _rng(13).standard_normal((2, 3, 6, 6)).astype(np.float32))


def test_conv_initialisation_follows_torch_bounds():
    conv = nn.Conv2d(3, 8, kernel_size=(3, 5), groups=1)
    bound = 1 / math.sqrt(3 * 3 * 5)
    assert conv.weight.shape == (8, 3, 3, 5) and conv.bias.shape == (8,)
    weights = conv.weight.detach().numpy()
    assert np.abs(weights).max() <= bound and np.abs(weights).max() > 0.8 * bound


# ---------------------------------------------------------------------------- recurrent layers


RNN_CASES = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("GRU", {"num_layers": 2, "batch_first": True}), ("GRU", {"bidirectional": True}),
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False}),
]


def _rnn_output(result):
    output, state = result
    return output


@pytest.mark.parametrize("kind, args", RNN_CASES, ids=str)
def test_recurrent_layers_match_torch(torch, kind, args):
    mine, theirs = getattr(nn, kind)(3, 4, **args), getattr(torch.nn, kind)(3, 4, **args)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x = _rng(14).standard_normal((2, 5, 3) if args.get("batch_first") else (5, 2, 3))
    _compare_module(torch, mine, theirs, x.astype(np.float32), out=_rnn_output)
    x_mine, x_theirs = dg.tensor(x, dtype=dg.float32), torch.tensor(x, dtype=torch.float32)
    states = [mine(x_mine)[1], theirs(x_theirs)[1]]
    for a, b in zip(*(s if isinstance(s, tuple) else (s,) for s in states)):
        np.testing.assert_allclose(_array(a), _array(b), **F32)


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_recurrent_layers_take_an_initial_state_and_unbatched_input(torch, kind):
    mine, theirs = getattr(nn, kind)(3, 4, num_layers=2), getattr(torch.nn, kind)(3, 4,
                                                                                  num_layers=2)
    _copy_into(torch, mine, theirs)
    x = _rng(15).standard_normal((6, 3)).astype(np.float32)  # one sequence, no batch dimension
    h0 = _rng(16).standard_normal((2, 4)).astype(np.float32)
    hx_mine = (dg.tensor(h0), dg.tensor(h0 * 0.5)) if kind == "LSTM" else dg.tensor(h0)
    hx_theirs = ((torch.tensor(h0), torch.tensor(h0 * 0.5)) if kind == "LSTM"
                 else torch.tensor(h0))
    (out_mine, state_mine), (out_theirs, state_theirs) = (
        mine(dg.tensor(x), hx_mine), theirs(torch.tensor(x), hx_theirs))
    assert out_mine.shape == tuple(out_theirs.shape) == (6, 4)
    np.testing.assert_allclose(_array(out_mine), _array(out_theirs), **F32)
    h_mine = state_mine[0] if kind == "LSTM" else state_mine
    h_theirs = state_theirs[0] if kind == "LSTM" else state_theirs
    np.testing.assert_allclose(_array(h_mine), _array(h_theirs), **F32)


@pytest.mark.parametrize("kind, args", [("RNN", {}), ("GRU", {"bidirectional": True}),
                                        ("LSTM", {"num_layers": 2, "bidirectional": True})],
                         ids=str)
def test_packed_sequences_match_torch(torch, kind, args):
    from torch.nn.utils.rnn import pack_padded_sequence as torch_pack
    from torch.nn.utils.rnn import pad_packed_sequence as torch_pad

    mine, theirs = (getattr(nn, kind)(3, 4, batch_first=True, **args),
                    getattr(torch.nn, kind)(3, 4, batch_first=True, **args))
    _copy_into(torch, mine, theirs)
    lengths = [3, 6, 1, 4]
    x = _rng(17).standard_normal((4, 7, 3)).astype(np.float32)  # padded past the longest
    x_mine, x_theirs = dg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    packed = nn.utils.rnn.pack_padded_sequence(x_mine, lengths, batch_first=True,
                                               enforce_sorted=False)
    out_mine, state_mine = mine(packed)
    out_theirs, state_theirs = theirs(torch_pack(x_theirs, torch.tensor(lengths),
                                                 batch_first=True, enforce_sorted=False))
    padded_mine, lengths_mine = nn.utils.rnn.pad_packed_sequence(out_mine, batch_first=True)
    padded_theirs, _ = torch_pad(out_theirs, batch_first=True)
    assert lengths_mine.tolist() == lengths
    np.testing.assert_allclose(_array(padded_mine), _array(padded_theirs), **F32)
    h_mine = state_mine[0] if kind == "LSTM" else state_mine
    h_theirs = state_theirs[0] if kind == "LSTM" else state_theirs
    np.testing.assert_allclose(_array(h_mine), _array(h_theirs), **F32)
    (padded_mine.sum() + h_mine.sum()).backward()
    (padded_theirs.sum() + h_theirs.sum()).backward()
    np.testing.assert_allclose(_array(x_mine.grad), _array(x_theirs.grad), **F32)


def test_pack_padded_sequence_checks_the_order_and_pad_sequence_pads():
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        nn.utils.rnn.pack_padded_sequence(dg.zeros(5, 2, 1), [2, 5])
    # PyTorch reads past the end of its input here; dyngraph refuses (rnn.py's NOTE)
    with pytest.raises(RuntimeError, match="at most the padded length 5"):
        nn.utils.rnn.pack_padded_sequence(dg.zeros(5, 2, 1), [6, 2])
    seqs = [dg.ones(2, 3), dg.ones(4, 3), dg.ones(1, 3)]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    assert padded.shape == (3, 4, 3)
    assert padded.numpy()[2, 1:].tolist() == [[-1.0] * 3] * 3


def test_packing_then_padding_is_twice_differentiable():
    x = dg.tensor(_rng(20).standard_normal((4, 3, 2)), requires_grad=True)

    def round_trip(x):
        packed = nn.utils.rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        padded, _ = nn.utils.rnn.pad_packed_sequence(packed, padding_value=0.5,
                                                     total_length=5)
        return (padded * padded).sum(0) + packed.data.sum()

    assert dg.gradcheck(round_trip, (x,))
    assert dg.gradgradcheck(round_trip, (x,))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_recurrent_layer_gradients_match_finite_differences(kind):
    layer = getattr(nn, kind)(2, 3, num_layers=2, bidirectional=True, dtype=dg.float64)
    x = dg.tensor(_rng(18).standard_normal((4, 2, 2)), requires_grad=True)

    def run(x, *params):
        packed = nn.utils.rnn.pack_padded_sequence(x, [4, 2])
        output, state = layer(packed)
        h = state[0] if kind == "LSTM" else state
        return output.data.sum() + (h * h).sum()

    assert dg.gradcheck(run, (x, *layer.parameters()))


# ---------------------------------------------------------------------------- clip_grad_norm_


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    mine = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    _copy_into(torch, mine, theirs)
    x = _rng(19).standard_normal((5, 3)).astype(np.float32)
    (mine(dg.tensor(x)) ** 2).sum().backward()
    (theirs(torch.tensor(x)) ** 2).sum().backward()
    total_mine = nn.utils.clip_grad_norm_(mine.parameters(), max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs.parameters(), max_norm, norm_type)
    assert isinstance(total_mine, dg.Tensor) and total_mine.shape == ()
    np.testing.assert_allclose(total_mine.item(), total_theirs.item(), **F32)
    for p, q in zip(mine.parameters(), theirs.parameters()):
        np.testing.assert_allclose(_array(p.grad), _array(q.grad), **F32)


def test_clip_grad_value_and_no_gradients():
    p = nn.Parameter(dg.zeros(3))
    assert nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
    p.grad = dg.tensor([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_(p, 1.0)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]


# ---------------------------------------------------------------------------- optimizers


OPTIMIZERS = [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "betas": (0.8, 0.95), "amsgrad": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True,
                 "weight_decay": 0.01}),
]


def _train(lib, model, make_opt, steps=6, scheduler=None):
    """A few steps of full-batch regression; returns the losses."""
    rng = _rng(21)
    x = rng.standard_normal((16, 3))
    y = rng.standard_normal((16, 2))
    dtype = next(iter(model.parameters())).dtype
    x, y = lib.tensor(x, dtype=dtype), lib.tensor(y, dtype=dtype)
    opt = make_opt(model.parameters())
    sched = scheduler(opt) if scheduler else None
    losses, lrs = [], []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched:
            sched.step()
            lrs.append(sched.get_last_lr())
        losses.append(loss.item())
    return losses, lrs


def _models(torch, dtype="float64"):
    mine = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).to(dtype)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                 torch.nn.Linear(5, 2)).to(getattr(torch, dtype))
    _copy_into(torch, mine, theirs)
    return mine, theirs


@pytest.mark.parametrize("name, settings", OPTIMIZERS, ids=str)
def test_optimizers_match_torch_over_several_steps(torch, name, settings):
    mine, theirs = _models(torch)
    losses_mine, _ = _train(dg, mine, lambda p: getattr(dg.optim, name)(p, **settings))
    losses_theirs, _ = _train(torch, theirs, lambda p: getattr(torch.optim, name)(p, **settings))
    np.testing.assert_allclose(losses_mine, losses_theirs, **F64)
    for (key, a), b in zip(mine.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a, b.numpy(), err_msg=key, **F64)
    assert losses_mine[-1] < losses_mine[0]


def test_param_groups_have_their_own_settings(torch):
    mine, theirs = _models(torch)

    def groups(model):
        return [{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.01}]

    opt = dg.optim.SGD(groups(mine), lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[1]["momentum"] == 0.9
    losses_mine, _ = _train(dg, mine, lambda p: dg.optim.SGD(groups(mine), lr=0.1, momentum=0.9))
    losses_theirs, _ = _train(torch, theirs, lambda p: torch.optim.SGD(groups(theirs), lr=0.1,
                                                                       momentum=0.9))
    np.testing.assert_allclose(losses_mine, losses_theirs, **F64)
    assert "Parameter Group 1" in repr(opt) and "lr: 0.01" in repr(opt)


@pytest.mark.parametrize("step_size, gamma", [(2, 0.5), (3, 0.1)])
def test_step_lr_matches_torch(torch, step_size, gamma):
    mine, theirs = _models(torch)
    losses_mine, lrs_mine = _train(
        dg, mine, lambda p: dg.optim.SGD(p, lr=0.2, momentum=0.5), steps=8,
        scheduler=lambda opt: dg.optim.lr_scheduler.StepLR(opt, step_size, gamma))
    losses_theirs, lrs_theirs = _train(
        torch, theirs, lambda p: torch.optim.SGD(p, lr=0.2, momentum=0.5), steps=8,
        scheduler=lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size, gamma))
    assert lrs_mine == lrs_theirs  # the very same floats
    np.testing.assert_allclose(losses_mine, losses_theirs, **F64)


def test_step_lr_schedule_by_hand():
    opt = dg.optim.SGD([nn.Parameter(dg.zeros(1))], lr=1.0)
    sched = dg.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    seen = [sched.get_last_lr()[0]]
    for _ in range(5):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr()[0])
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert opt.param_groups[0]["initial_lr"] == 1.0


def test_a_slice_of_a_sequential_keeps_its_childrens_names(torch):
    """The neural style tutorial names its layers with add_module and trims the model with
    model[:(i + 1)]: the children keep their names (and so the state_dict's keys)."""
    def names(lib):
        model = lib.nn.Sequential(lib.nn.Identity())
        model.add_module("conv_1", lib.nn.Linear(2, 2))
        model.add_module("relu_1", lib.nn.ReLU())
        model.add_module("style_loss_1", lib.nn.Identity())
        part = model[1:3]
        return ([n for n, _ in part.named_children()], list(part.state_dict()),
                [n for n, _ in model[::2].named_children()], type(part).__name__)
    assert names(dg) == names(torch) == (["conv_1", "relu_1"], ["conv_1.weight", "conv_1.bias"],
                                         ["0", "relu_1"], "Sequential")


def test_parameter_list_and_module_list_slices_and_assignment_as_torch(torch):
    def layout(lib):
        model = lib.nn.Module()
        model.ps = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])
        model.ps.append(lib.full((1,), 2.0))
        model.layers = lib.nn.ModuleList([lib.nn.Linear(1, 1) for _ in range(3)])
        model.layers[1] = lib.nn.Identity()
        part = model.layers[1:]
        total = sum(p.sum() for p in model.ps)
        total.backward()
        return (list(model.state_dict()), type(part).__name__, len(part),
                [n for n, _ in part.named_children()], len(list(model.parameters())),
                [p.grad.tolist() for p in model.ps], [type(p).__name__ for p in model.ps])
    assert layout(dg) == layout(torch)


# The layers of issue 37's "layers and functional ops", built with the same arguments: printed
# as torch prints them (extra_repr), with the same state_dict keys and shapes.
LAYERS = [
    ("MaxUnpool2d", (2,), {}), ("MaxUnpool1d", (3, 2, 1), {}),
    ("Unfold", ((2, 3),), {"padding": 1}), ("Fold", ((4, 5), 2), {"stride": 2}),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "groups": 2, "output_padding": 1}),
    ("ConvTranspose2d", (4, 6, 3), {"padding": 1, "dilation": 2, "bias": False}),
    ("InstanceNorm1d", (3,), {}), ("InstanceNorm2d", (3,), {"affine": True}),
    ("InstanceNorm2d", (3,), {"track_running_stats": True, "bias": False, "affine": True}),
    ("BatchNorm1d", (3,), {}), ("Bilinear", (2, 3, 4), {}),
    ("Bilinear", (2, 3, 4), {"bias": False}),
    ("AdaptiveMaxPool2d", ((2, None),), {}), ("AdaptiveMaxPool1d", (3, True), {}),
    ("ZeroPad1d", (2,), {}), ("ZeroPad2d", ((1, 0, 2, 1),), {}),
    ("ConstantPad1d", (2, 0.5), {}), ("ConstantPad2d", (1, 3), {}),
    ("ReflectionPad1d", ((1, 2),), {}), ("ReflectionPad2d", (1,), {}),
    ("ReplicationPad1d", (1,), {}), ("ReplicationPad2d", ((1, 0, 0, 1),), {}),
]


@pytest.mark.parametrize("name, args, kwargs", LAYERS, ids=[n for n, _, _ in LAYERS])
def test_the_new_layers_print_and_hold_what_torchs_do(torch, name, args, kwargs):
    mine, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
