"""The PyTorch a learner meets first, and whether dyngraph spells it the same (issue 28, item 6).

The names below are the ones that PyTorch's beginner tutorials ("Learning PyTorch with Examples",
"Build the Neural Network", "Automatic Differentiation with torch.autograd", "Optimizing Model
Parameters"), the early chapters of d2l.ai (data manipulation, linear algebra, autograd, linear
and softmax regression, MLPs, parameter initialisation) and Karpathy's makemore and nanoGPT use:
module-level functions (``torch.X`` -> ``dg.X``), Tensor methods and attributes, functions of
``torch.nn.functional``, ``torch.nn`` modules with the constructor arguments those programs pass,
``torch.nn.init``, and the optimizers.

Each name must exist on dyngraph with the same spelling, except the few in ``KNOWN_MISSING``,
each with its reason; the test asserts that exactly those are missing, so the list stays true
both ways (fill a gap, and the test asks you to strike it off). Where a one-line call is cheap,
``AGREE`` runs it on both libraries from the same numbers and compares; the gaps this audit
filled are checked against finite differences (``dg.gradcheck``) where they have a gradient.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from conftest import import_torch

import dyngraph as dg

# ----------------------------------------------------------------------------- the names

TORCH_FUNCTIONS = (
    # making tensors
    "tensor", "zeros", "ones", "full", "randn", "rand", "randint", "normal", "arange",
    "linspace", "eye", "zeros_like", "ones_like", "from_numpy", "manual_seed", "Generator",
    "multinomial",
    # dtypes and devices
    "float", "float32", "float64", "float16", "bfloat16", "long", "int64", "int32", "device",
    "cuda", "accelerator",
    # modes and modules
    "no_grad", "autograd", "nn", "optim", "compile", "autocast",
    # ops
    "cat", "stack", "exp", "log", "sin", "tanh", "sigmoid", "relu", "abs", "sum", "max",
    "matmul", "mm", "mv", "dot", "norm", "tril", "topk", "allclose",
)

TENSOR_ATTRIBUTES = (
    "shape", "dtype", "device", "requires_grad", "grad", "grad_fn", "is_leaf", "data", "T",
    "ndim",
    "item", "tolist", "numpy", "detach", "clone", "backward", "requires_grad_", "retain_grad",
    "zero_", "fill_", "normal_", "to", "float", "long", "type", "size", "dim", "numel",
    "nelement", "view", "reshape", "squeeze", "unsqueeze", "transpose", "contiguous", "t",
    "split", "sum", "mean", "max", "min", "std", "var", "argmax", "cumsum", "exp", "log", "pow",
    "abs", "tanh", "clamp", "softmax", "mm", "mv", "dot", "masked_fill", "topk", "all",
)

FUNCTIONAL = (
    "relu", "softmax", "log_softmax", "cross_entropy", "mse_loss",
    "binary_cross_entropy_with_logits", "one_hot", "layer_norm",
    "scaled_dot_product_attention",
)

# module -> the constructor arguments the programs above pass to it
NN_MODULES = {
    "Module": (), "Parameter": (), "Sequential": (), "ModuleList": ("modules",),
    "ModuleDict": ("modules",),
    "Linear": ("in_features", "out_features", "bias"),
    "ReLU": (), "Tanh": (), "GELU": ("approximate",),
    "Softmax": ("dim",), "Flatten": ("start_dim", "end_dim"), "Dropout": ("p",),
    "Embedding": ("num_embeddings", "embedding_dim"),
    "LayerNorm": ("normalized_shape", "eps", "elementwise_affine", "bias"),
    "BatchNorm1d": ("num_features", "eps", "momentum"),
    "MSELoss": ("reduction",),
    "CrossEntropyLoss": ("weight", "ignore_index", "reduction", "label_smoothing"),
}

MODULE_METHODS = (
    "parameters", "named_parameters", "named_modules", "zero_grad", "train", "eval", "to",
    "apply", "register_buffer", "state_dict", "load_state_dict",
)

INIT = ("normal_", "uniform_", "zeros_", "ones_", "constant_", "xavier_uniform_")

# optimizer -> the constructor arguments the programs above pass to it
OPTIMIZERS = {
    "SGD": ("params", "lr", "momentum", "weight_decay"),
    "Adam": ("params", "lr", "betas", "eps", "weight_decay"),
    "AdamW": ("params", "lr", "betas", "eps", "weight_decay"),
    "RMSprop": ("params", "lr"),
}

UTILS = ("clip_grad_norm_",)

# What is not there, and why: large, or in the way of something dyngraph has.
KNOWN_MISSING = {
    "dg.bfloat16": "numpy has no bfloat16, and dyngraph computes with numpy (or CuPy)",
}


def _surface() -> list[tuple[str, object, str]]:
    """(name as a learner writes it, dyngraph object to look in, attribute) for every name."""
    rows = [(f"dg.{n}", dg, n) for n in TORCH_FUNCTIONS]
    rows += [(f"dg.Tensor.{n}", dg.Tensor, n) for n in TENSOR_ATTRIBUTES]
    rows += [(f"dg.nn.functional.{n}", dg.nn.functional, n) for n in FUNCTIONAL]
    rows += [(f"dg.nn.{n}", dg.nn, n) for n in NN_MODULES]
    rows += [(f"dg.nn.Module.{n}", dg.nn.Module, n) for n in MODULE_METHODS]
    rows += [(f"dg.nn.init.{n}", getattr(dg.nn, "init", None), n) for n in INIT]
    rows += [(f"dg.optim.{n}", dg.optim, n) for n in OPTIMIZERS]
    rows += [(f"dg.nn.utils.{n}", dg.nn.utils, n) for n in UTILS]
    return rows


def _torch_object(torch, name: str) -> object:
    target = torch
    for part in name.split(".")[1:]:
        target = getattr(target, {"dg": "torch", "Tensor": "Tensor"}.get(part, part))
    return target


# PyTorch's submodules among the names; any other name that is a module on dyngraph is not the
# function PyTorch means (a module that is also the function, dg.dot, counts as present)
SUBMODULES = {"autograd", "nn", "optim", "cuda", "accelerator", "init", "utils"}


def _missing(owner: object, attribute: str) -> bool:
    found = getattr(owner, attribute, None)
    return found is None or (inspect.ismodule(found) and attribute not in SUBMODULES
                             and not callable(found))  # dg.dot: NOTE [dg.dot is also torch.dot]


def test_the_surface_exists_with_pytorchs_spelling_except_what_is_known_missing():
    missing = {label for label, owner, attribute in _surface() if _missing(owner, attribute)}
    assert missing == set(KNOWN_MISSING), (
        f"missing but not listed: {sorted(missing - set(KNOWN_MISSING))}; listed but present "
        f"now (strike them off KNOWN_MISSING): {sorted(set(KNOWN_MISSING) - missing)}"
    )
    assert len(_surface()) > 150  # the audit is not an empty list


def test_every_name_is_pytorchs():
    torch = import_torch()
    for label, _, _ in _surface():
        _torch_object(torch, label)  # an AttributeError names a name torch does not have


@pytest.mark.parametrize("module", list(NN_MODULES))
def test_module_constructors_take_pytorchs_arguments(module):
    mine = inspect.signature(getattr(dg.nn, module).__init__).parameters
    assert [a for a in NN_MODULES[module] if a not in mine] == []
    theirs = inspect.signature(getattr(import_torch().nn, module).__init__).parameters
    assert [a for a in NN_MODULES[module] if a not in theirs] == []


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_optimizer_constructors_take_pytorchs_arguments(optimizer):
    mine = inspect.signature(getattr(dg.optim, optimizer).__init__).parameters
    assert [a for a in OPTIMIZERS[optimizer] if a not in mine] == []
    theirs = inspect.signature(getattr(import_torch().optim, optimizer).__init__).parameters
    assert [a for a in OPTIMIZERS[optimizer] if a not in theirs] == []


# ----------------------------------------------------------------------------- one-line calls

X = np.array([[0.5, -1.0, 2.0, 0.0], [1.5, 0.25, -0.5, 3.0], [-2.0, 1.0, 0.75, -0.25]],
             dtype=np.float32)
V = np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)

AGREE = {
    # d2l 2.1-2.3: data manipulation and linear algebra
    "arange(12).reshape(3, 4)": lambda lib, x, v: lib.arange(12).reshape(3, 4),
    "zeros((2, 3, 4))": lambda lib, x, v: lib.zeros((2, 3, 4)),
    "full((2, 2), 7.0)": lambda lib, x, v: lib.full((2, 2), 7.0),
    "eye(3)": lambda lib, x, v: lib.eye(3),
    "linspace(-1, 1, 5)": lambda lib, x, v: lib.linspace(-1, 1, 5),
    "cat((x, x), dim=0)": lambda lib, x, v: lib.cat((x, x), dim=0),
    "stack([v, v])": lambda lib, x, v: lib.stack([v, v]),
    "x.sum(axis=0)": lambda lib, x, v: x.sum(axis=0),
    "x.sum(1, keepdims=True)": lambda lib, x, v: x.sum(1, keepdims=True),
    "x.cumsum(axis=0)": lambda lib, x, v: x.cumsum(axis=0),
    "x.numel()": lambda lib, x, v: x.numel(),
    "x.T": lambda lib, x, v: x.T,
    "mv(x, v)": lambda lib, x, v: lib.mv(x, v),
    "x.mv(v)": lambda lib, x, v: x.mv(v),
    "v.dot(v)": lambda lib, x, v: v.dot(v),
    "mm(x, x.T)": lambda lib, x, v: lib.mm(x, x.T),
    "norm(v)": lambda lib, x, v: lib.norm(v),
    "abs(v).sum()": lambda lib, x, v: lib.abs(v).sum(),
    "max(x, zeros_like(x))": lambda lib, x, v: lib.max(x, lib.zeros_like(x)),
    # d2l 3-4 and the Optimizing tutorial: accuracy, softmax
    "(x.argmax(1) == 1).type(float).sum()":
        lambda lib, x, v: (x.argmax(1) == 1).type(lib.float).sum(),
    "x.exp() / x.exp().sum(1, keepdims=True)":
        lambda lib, x, v: x.exp() / x.exp().sum(1, keepdims=True),
    # makemore
    "x.max(1, keepdim=True).values": lambda lib, x, v: x.max(1, keepdim=True).values,
    "x.std(0, keepdim=True)": lambda lib, x, v: x.std(0, keepdim=True),
    "x.var(0, keepdim=True, unbiased=True)":
        lambda lib, x, v: x.var(0, keepdim=True, unbiased=True),
    "F.one_hot(tensor([0, 2, 1]), num_classes=3)":
        lambda lib, x, v: lib.nn.functional.one_hot(lib.tensor([0, 2, 1]), num_classes=3),
    "F.cross_entropy(x, tensor([3, 0, 2]))":
        lambda lib, x, v: lib.nn.functional.cross_entropy(x, lib.tensor([3, 0, 2])),
    "allclose(x, x + 1e-9)": lambda lib, x, v: lib.allclose(x, x + 1e-9),
    # nanoGPT
    "tril(ones(3, 3))": lambda lib, x, v: lib.tril(lib.ones(3, 3)),
    "topk(v, 2).values": lambda lib, x, v: lib.topk(v, 2).values,
    "x.masked_fill(tril(ones(3, 4)) == 0, -inf).softmax(-1)":
        lambda lib, x, v: x.masked_fill(lib.tril(lib.ones(3, 4)) == 0, float("-inf")).softmax(-1),
    "F.layer_norm(x, (4,))": lambda lib, x, v: lib.nn.functional.layer_norm(x, (4,)),
    "F.scaled_dot_product_attention(causal)": lambda lib, x, v: (
        lib.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None], is_causal=True)),
    # the autograd tutorial
    "F.binary_cross_entropy_with_logits(x, ones(3, 4))":
        lambda lib, x, v: lib.nn.functional.binary_cross_entropy_with_logits(x, lib.ones(3, 4)),
}


def _value(result):
    if hasattr(result, "detach"):
        return result.detach().cpu().numpy() if hasattr(result, "cpu") else result.numpy()
    return np.asarray(result)


@pytest.mark.parametrize("case", list(AGREE))
def test_one_line_calls_agree_with_torch(case):
    mine = AGREE[case](dg, dg.tensor(X), dg.tensor(V))
    assert mine is not None
    torch = import_torch()
    theirs = AGREE[case](torch, torch.tensor(X), torch.tensor(V))
    np.testing.assert_allclose(_value(mine), _value(theirs), rtol=1e-5, atol=1e-6)
    if hasattr(theirs, "dtype") and hasattr(mine, "dtype"):
        assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch.")


# ----------------------------------------------------------------------------- the filled gaps


def _double(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dg.tensor(rng.standard_normal(shape), dtype=dg.float64, requires_grad=True)


def test_mv_and_dot_pass_gradcheck_and_refuse_other_shapes():
    assert dg.gradcheck(dg.mv, (_double(3, 4), _double(4, seed=1)))
    assert dg.gradcheck(lambda a, b: a.dot(b), (_double(4), _double(4, seed=1)))
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        dg.ones(2, 2).dot(dg.ones(2, 2))
    with pytest.raises(RuntimeError, match="a matrix and a vector"):
        dg.mv(dg.ones(2, 2), dg.ones(2, 2))


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_passes_gradcheck(causal):
    F = dg.nn.functional
    q, k, v = _double(2, 3, 4), _double(2, 5, 4, seed=1), _double(2, 5, 2, seed=2)
    assert dg.gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c,
                                                                       is_causal=causal),
                        (q, k, v))
    mask = dg.tensor(np.random.default_rng(3).random((3, 5)) > 0.3)
    mask[:, 0] = True  # every row may attend somewhere
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out.shape == (2, 3, 2)
    torch = import_torch()
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(t.detach().numpy()) for t in (q, k, v)),
        attn_mask=torch.tensor(mask.numpy()))
    np.testing.assert_allclose(out.detach().numpy(), theirs.numpy(), rtol=1e-10)


def test_random_factories_take_pytorchs_arguments_and_generators():
    g = dg.Generator().manual_seed(2147483647)
    first = dg.randn((2, 3), generator=g)
    again = dg.randn((2, 3), generator=dg.Generator().manual_seed(2147483647))
    np.testing.assert_array_equal(first.numpy(), again.numpy())  # a generator of its own
    ix = dg.randint(0, 10, (32,))
    assert ix.dtype == np.int64 and ix.shape == (32,) and 0 <= ix.min().item() <= 9
    assert dg.randint(5, (4,), generator=g).max().item() < 5
    w = dg.normal(0, 0.01, size=(2, 1), requires_grad=True)
    assert w.shape == (2, 1) and w.dtype == np.float32 and w.is_leaf and w.requires_grad
    assert dg.normal(dg.zeros(3), 1.0).shape == (3,)
    assert dg.device("cuda:0") == "cuda" and dg.zeros(1, device=dg.device("cpu")).device == "cpu"


def test_multinomial_draws_as_pytorch_does():
    p = dg.tensor([0.0, 0.2, 0.8])
    draws = dg.multinomial(p, num_samples=2000, replacement=True,
                           generator=dg.Generator().manual_seed(0))
    assert draws.dtype == np.int64 and draws.shape == (2000,)
    counts = np.bincount(draws.numpy(), minlength=3) / 2000
    np.testing.assert_allclose(counts, [0.0, 0.2, 0.8], atol=0.04)
    rows = dg.multinomial(dg.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 5.0]]), 1)
    assert rows.shape == (2, 1) and rows[1, 0].item() == 2
    assert sorted(dg.multinomial(dg.ones(3), 3).tolist()) == [0, 1, 2]  # without replacement
    with pytest.raises(RuntimeError, match="without replacement: pass replacement=True"):
        dg.multinomial(dg.ones(3), 4)
    torch = import_torch()
    assert torch.multinomial(torch.tensor([0.0, 0.2, 0.8]), 5, True).dtype == torch.int64
    assert tuple(torch.multinomial(torch.ones(2, 3), 1).shape) == tuple(rows.shape)


def test_type_names_or_converts_as_in_torch():
    x = dg.tensor([1, 2])
    assert x.type(dg.float32).dtype == np.float32
    assert x.type() == "dg.LongTensor"
    assert import_torch().tensor([1, 2]).type() == "torch.LongTensor"


def test_init_fills_in_place_under_no_grad():
    layer = dg.nn.Linear(20, 30)
    weight = layer.weight
    assert dg.nn.init.normal_(layer.weight, mean=0.0, std=0.02) is weight
    assert layer.weight.requires_grad and layer.weight.is_leaf
    assert abs(layer.weight.detach().numpy().std() - 0.02) < 0.005
    dg.nn.init.zeros_(layer.bias)
    np.testing.assert_array_equal(layer.bias.detach().numpy(), 0.0)
    dg.nn.init.constant_(layer.bias, 0.5)
    np.testing.assert_array_equal(layer.bias.detach().numpy(), 0.5)
    dg.nn.init.uniform_(layer.weight, -10, 10)
    assert layer.weight.detach().numpy().min() >= -10 and layer.weight.dtype == np.float32
    dg.nn.init.xavier_uniform_(layer.weight)
    bound = math.sqrt(6.0 / (20 + 30))
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        dg.nn.init.xavier_uniform_(layer.bias)
    net = dg.nn.Sequential(dg.nn.Linear(4, 8), dg.nn.ReLU(), dg.nn.Linear(8, 1))
    net.apply(lambda m: dg.nn.init.ones_(m.weight) if isinstance(m, dg.nn.Linear) else None)
    np.testing.assert_array_equal(net[2].weight.detach().numpy(), 1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):  # outside init: as PyTorch
        layer.weight.normal_(0, 1)
    layer.weight.data.normal_(0, 0.01)  # d2l's spelling
    torch = import_torch()
    t = torch.nn.Linear(20, 30)
    assert torch.nn.init.normal_(t.weight, std=0.02) is t.weight
