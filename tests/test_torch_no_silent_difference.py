"""No silent difference from PyTorch (issue 37, item 1): torch 2.13 is the oracle.

Each check runs the same program with ``lib`` bound to ``torch`` and to ``dyngraph`` and compares
what the two see, so a program taken from a PyTorch tutorial either gives PyTorch's numbers here
or stops with an error, never other numbers:

- the module tree: ``apply``'s order (children first, in registration order, then the module
  itself: a seeded initialisation lands on the same layers), the ``named_*`` orders, ``train()`` /
  ``eval()`` reaching every descendant, ``zero_grad``;
- ``state_dict()``: its keys (tied weights and shared modules under every name), entries that are
  the model's memory, detached (an in-place change of one shows in the other), ``keep_vars`` and
  ``prefix``; ``load_state_dict``: in place (the Parameters keep their identity, so an optimizer
  made before updates them), the strict / missing / unexpected keys and the shape-mismatch error,
  word for word;
- the legacy constructors ``torch.Tensor(...)``, ``torch.FloatTensor(...)`` and friends: dtypes,
  shapes, values and errors;
- which op outputs alias their inputs, over the whole op table and the methods outside it
  (``flip`` copies, ``einsum('ij->ji', x)`` is a view, ...), and what that means after an
  in-place change: values and gradients, checked against torch and finite differences.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from op_table import ALL_CASES, INTEGER_OUTPUT_CASES, dg_inputs

import dyngraph as dg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install -e '.[torch]')")

pytestmark = pytest.mark.torch

LIBS = [pytest.param(torch, id="torch"), pytest.param(dg, id="dyngraph")]


def both(program: Any, *args: Any) -> tuple[Any, Any]:
    """``program(lib, *args)`` run with torch and with dyngraph."""
    return program(torch, *args), program(dg, *args)


def values(t: Any) -> np.ndarray:
    return np.asarray(t.detach().tolist(), dtype=np.float64)


# ----------------------------------------------------------------------------- the module tree


def net(lib: Any) -> Any:
    """A tree with everything that orders matter for: nested containers, a module registered
    twice (``shared``), tied weights (``head.weight`` is ``embed.weight``), buffers (BatchNorm's,
    one of them not persistent), a ModuleDict, and a parameter of the root itself."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, shared: Any) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.shared = shared
            self.norm = nn.BatchNorm1d(4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x: Any) -> Any:
            return self.drop(self.norm(self.shared(self.fc(x)).tanh()))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            shared = nn.Linear(4, 4)
            self.scale = nn.Parameter(lib.ones(4))
            self.embed = nn.Embedding(5, 4)
            self.blocks = nn.ModuleList([Block(shared), Block(shared)])
            self.heads = nn.ModuleDict({"b": nn.Linear(4, 2), "a": nn.Identity()})
            self.head = nn.Linear(4, 5, bias=False)
            self.head.weight = self.embed.weight  # tied, as nanoGPT ties wte and lm_head
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, idx: Any) -> Any:
            x = self.embed(idx) * self.scale
            for block in self.blocks:
                x = block(x)
            return self.head(x) + self.heads["b"](x).sum()

    return Net()


def names_of(model: Any) -> dict[int, str]:
    return {id(m): name or "<root>" for name, m in model.named_modules()}


@pytest.mark.parametrize("lib", LIBS)
def test_apply_visits_children_first_in_order_then_the_module(lib):
    model = net(lib)
    labels = names_of(model)
    seen: list[str] = []
    assert model.apply(lambda m: seen.append(labels[id(m)])) is model
    theirs = net(torch)
    expected_labels = names_of(theirs)
    expected: list[str] = []
    theirs.apply(lambda m: expected.append(expected_labels[id(m)]))
    assert seen == expected
    assert seen[:3] == ["embed", "blocks.0.fc", "blocks.0.shared"] and seen[-1] == "<root>"


def test_a_seeded_initialisation_through_apply_lands_on_the_same_layers():
    def initialised(lib: Any) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(0)

        def init(m: Any) -> None:  # the tutorials' init_weights: each Linear in turn draws
            if isinstance(m, lib.nn.Linear):
                with lib.no_grad():
                    m.weight.copy_(lib.tensor(rng.standard_normal(tuple(m.weight.shape)),
                                              dtype=lib.float32))

        model = net(lib)
        model.apply(init)
        return {k: values(v) for k, v in model.state_dict().items() if k.endswith("weight")}

    theirs, mine = both(initialised)
    assert list(mine) == list(theirs)
    for key in theirs:
        if key.startswith(("blocks", "heads")):
            np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)


def test_named_orders_and_state_dict_keys_match_torch():
    def orders(lib: Any) -> dict[str, list]:
        model = net(lib)
        return {
            "named_modules": [name for name, _ in model.named_modules()],
            "named_children": [name for name, _ in model.named_children()],
            "children": [type(m).__name__ for m in model.children()],
            "named_parameters": [(n, tuple(p.shape)) for n, p in model.named_parameters()],
            "named_buffers": [(n, tuple(b.shape)) for n, b in model.named_buffers()],
            "block children": [name for name, _ in model.blocks[0].named_children()],
            "parameters": len(list(model.parameters())),
            "state_dict": [(k, tuple(v.shape)) for k, v in model.state_dict().items()],
            "state_dict prefix": list(model.state_dict(prefix="model."))[:3],
        }

    theirs, mine = both(orders)
    for key in theirs:
        assert mine[key] == theirs[key], key


def test_train_eval_and_zero_grad_reach_every_descendant_as_in_torch():
    def run(lib: Any) -> dict[str, Any]:
        model = net(lib)
        seen = {"eval": [m.training for m in model.eval().modules()],
                "train": [m.training for m in model.train().modules()]}
        model.blocks[1].eval()
        seen["partial"] = [m.training for m in model.modules()]
        model.train()
        model(lib.tensor([0, 1, 2, 3, 4, 0])).sum().backward()
        seen["with grad"] = [n for n, p in model.named_parameters() if p.grad is not None]
        model.zero_grad(set_to_none=False)
        seen["zeros"] = [(n, float(abs(values(p.grad)).sum())) for n, p in model.named_parameters()
                         if p.grad is not None]
        model.zero_grad()
        seen["none"] = [n for n, p in model.named_parameters() if p.grad is not None]
        return seen

    theirs, mine = both(run)
    assert mine == theirs


# ----------------------------------------------------------------------------- state_dict


@pytest.mark.parametrize("lib", LIBS)
def test_state_dict_entries_share_memory_with_the_model_detached(lib):
    model = lib.nn.Linear(3, 2)
    sd = model.state_dict()
    entry = sd["weight"]
    assert isinstance(entry, lib.Tensor) and not entry.requires_grad and entry.grad_fn is None
    assert tuple(entry.size()) == (2, 3) and entry.size(1) == 3 and entry.dim() == 2
    assert entry is not model.weight and model.state_dict(keep_vars=True)["weight"] is model.weight
    with lib.no_grad():
        model.weight.add_(100.0)  # the model changes: the entry shows it (a reference) ...
    np.testing.assert_array_equal(values(entry), values(model.weight))
    sd["bias"].zero_()  # ... and an in-place change of an entry is one of the model
    assert not values(model.bias).any()
    kept = {k: v.clone() for k, v in model.state_dict().items()}  # the tutorials' "copy"
    with lib.no_grad():
        model.bias.add_(1.0)
    assert not values(kept["bias"]).any() and values(sd["bias"]).all()


def test_the_reference_versus_copy_lesson_comes_out_as_in_torch():
    def lesson(lib: Any) -> dict[str, Any]:
        lib.manual_seed(0)
        model = lib.nn.Linear(2, 1)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.5, -0.5]]))
            model.bias.zero_()
        reference = model.state_dict()
        import copy

        snapshot = copy.deepcopy(model.state_dict())
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        loss = (model(lib.tensor([[1.0, 2.0]])) - 3.0).pow(2).sum()
        loss.backward()
        optimizer.step()
        return {"reference": values(reference["weight"]), "snapshot": values(snapshot["weight"]),
                "model": values(model.weight)}

    theirs, mine = both(lesson)
    for key in theirs:
        np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-6, err_msg=key)
    np.testing.assert_array_equal(mine["reference"], mine["model"])  # a reference moves along
    assert not np.array_equal(mine["snapshot"], mine["model"])  # a copy stays


def test_load_state_dict_copies_in_place_and_an_optimizer_made_before_still_updates():
    def run(lib: Any) -> dict[str, Any]:
        model = net(lib)
        params = list(model.parameters())
        optimizer = lib.optim.SGD(model.parameters(), lr=0.5)
        rng = np.random.default_rng(1)
        source = {k: lib.tensor(np.abs(rng.standard_normal(tuple(v.shape))) + 0.5, dtype=v.dtype)
                  if v.dtype == lib.float32 else v.clone()
                  for k, v in model.state_dict().items()}
        result = model.load_state_dict(source)
        identity = all(p is q for p, q in zip(params, model.parameters()))
        model.eval()  # no dropout: the two libraries draw their masks from their own generators
        model(lib.tensor([0, 1, 2, 3, 4, 0])).sum().backward()
        optimizer.step()
        return {"result": (list(result.missing_keys), list(result.unexpected_keys)),
                "identity": identity,
                "after": {k: values(v) for k, v in model.state_dict().items()}}

    torch.manual_seed(0)
    dg.manual_seed(0)
    theirs, mine = both(run)
    assert mine["result"] == theirs["result"] == ([], [])
    assert mine["identity"] and theirs["identity"]
    # same loaded values (the tied weight twice: the last key wins, in both), same step
    for key in theirs["after"]:
        np.testing.assert_allclose(mine["after"][key], theirs["after"][key], rtol=1e-5,
                                   atol=1e-6, err_msg=key)


def _torch_words(message: str) -> str:
    """torch prints a shape as torch.Size([2, 3]), dyngraph as (2, 3)."""
    return re.sub(r"torch\.Size\(\[([^\]]*)\]\)",
                  lambda m: "(" + m.group(1) + ("," if m.group(1).count(",") == 0
                                                 and m.group(1) else "") + ")", message)


LOAD_CASES = {
    "missing": lambda sd: {k: v for k, v in sd.items() if k != "0.bias"},
    "unexpected": lambda sd: {**sd, "extra.weight": sd["0.weight"]},
    "missing-and-unexpected": lambda sd: {**{k: v for k, v in sd.items() if k != "1.weight"},
                                          "x": sd["0.bias"]},
    "size-mismatch": lambda sd: {**sd, "0.weight": sd["0.weight"][:1]},
    "everything": lambda sd: {**{k: v for k, v in sd.items() if k != "1.bias"},
                              "0.bias": sd["0.bias"][:2], "y": sd["1.bias"]},
}


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not-strict"])
@pytest.mark.parametrize("change", list(LOAD_CASES))
def test_load_state_dict_keys_and_errors_say_what_torch_says(change, strict):
    def run(lib: Any) -> dict[str, Any]:
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Linear(4, 2))
        fresh = {k: lib.full(tuple(v.shape), 7.0) for k, v in model.state_dict().items()}
        try:
            result = model.load_state_dict(LOAD_CASES[change](fresh), strict=strict)
            outcome = ("ok", list(result.missing_keys), list(result.unexpected_keys))
        except RuntimeError as exc:
            outcome = ("RuntimeError", _torch_words(str(exc)))
        # what was copied before an error: every value whose key and shape matched
        return {"outcome": outcome,
                "copied": [k for k, v in model.state_dict().items() if (values(v) == 7.0).all()]}

    theirs, mine = both(run)
    assert mine == theirs


# ----------------------------------------------------------------------------- legacy constructors

LEGACY = {
    "Tensor-floats": lambda L: L.Tensor([10000.0]),
    "Tensor-ints": lambda L: L.Tensor([1, 2]),
    "Tensor-bools": lambda L: L.Tensor([True, False]),
    "Tensor-nested": lambda L: L.Tensor([[1, 2.5], [3, 4]]),
    "Tensor-tuple-is-data": lambda L: L.Tensor((2, 3)),
    "Tensor-empty-list": lambda L: L.Tensor([]),
    "Tensor-nothing": lambda L: L.Tensor(),
    "Tensor-sizes": lambda L: L.Tensor(2, 3).zero_(),
    "Tensor-size-0": lambda L: L.Tensor(0),
    "FloatTensor": lambda L: L.FloatTensor([1, 2]),
    "FloatTensor-array": lambda L: L.FloatTensor(np.array([1, 2])),
    "DoubleTensor": lambda L: L.DoubleTensor([1.5, 2]),
    "HalfTensor": lambda L: L.HalfTensor([1.5]),
    "LongTensor-truncates": lambda L: L.LongTensor([1.7, -1.7]),
    "LongTensor-sizes": lambda L: L.LongTensor(2, 3).zero_(),
    "LongTensor-array": lambda L: L.LongTensor(np.array([1.5, 2.5])),
    "IntTensor": lambda L: L.IntTensor([[1, 2]]),
    "ShortTensor": lambda L: L.ShortTensor([3]),
    "CharTensor": lambda L: L.CharTensor([-3]),
    "ByteTensor": lambda L: L.ByteTensor([1, 255]),
    "BoolTensor": lambda L: L.BoolTensor([0, 2]),
    "FloatTensor-of-a-float-tensor": lambda L: L.FloatTensor(L.tensor([1.0, 2.0])),
    "type-to-legacy": lambda L: L.tensor([1.5, -2.5]).type(L.LongTensor),
    "type-string": lambda L: L.tensor([1, 2]).type("torch.DoubleTensor"),
    # errors, as PyTorch's
    "Tensor-float": lambda L: L.Tensor(2.5),
    "Tensor-bool": lambda L: L.Tensor(True),
    "Tensor-negative-size": lambda L: L.Tensor(2, -1),
    "Tensor-float-size": lambda L: L.Tensor(2, 3.0),
    "Tensor-data-and-size": lambda L: L.Tensor([1, 2], 3),
    "ByteTensor-overflow": lambda L: L.ByteTensor([1, 300]),
    "LongTensor-of-a-float-tensor": lambda L: L.LongTensor(L.tensor([1.0])),
}


def _legacy_outcome(lib: Any, make: Any) -> Any:
    try:
        out = make(lib)
    except (TypeError, RuntimeError, ValueError) as exc:
        return type(exc).__name__
    dtype = str(out.dtype).removeprefix("torch.")
    dtype = {"float": "float32", "double": "float64", "long": "int64", "int": "int32",
             "half": "float16", "short": "int16"}.get(dtype, dtype)
    return dtype, tuple(out.shape), out.tolist()


@pytest.mark.parametrize("name", list(LEGACY))
def test_legacy_constructors_match_torch(name):
    theirs, mine = both(_legacy_outcome, LEGACY[name])
    assert mine == theirs


def test_legacy_types_answer_isinstance_and_type_as_in_torch():
    def run(L: Any) -> list:
        x, y, i = L.zeros(2), L.zeros(2, dtype=L.float64), L.tensor([1, 2])
        return [isinstance(x, L.FloatTensor), isinstance(x, L.DoubleTensor),
                isinstance(y, L.DoubleTensor), isinstance(i, L.LongTensor),
                isinstance(i, L.FloatTensor), isinstance(L.FloatTensor([1]), L.Tensor),
                x.type().split(".")[1], i.type().split(".")[1], L.Tensor(2).dtype == L.float32]

    theirs, mine = both(run)
    assert mine == theirs


def test_the_legacy_constructor_fills_zeros_where_torch_leaves_memory_uninitialised():
    # PyTorch's torch.Tensor(2, 3) holds whatever the memory held; dyngraph's holds zeros, so
    # that a program reading it before writing it gives the same numbers on every run.
    assert not dg.Tensor(2, 3).numpy().any() and not dg.LongTensor(4).numpy().any()
    assert dg.FloatTensor(2, 3).requires_grad_().requires_grad


# ----------------------------------------------------------------------------- aliasing

def _torch_inputs(case: Any, arrays: list) -> list:
    return [torch.from_numpy(np.array(a, dtype=np.float64)).requires_grad_(True)
            if spec.differentiable else torch.from_numpy(np.array(a))
            for spec, a in zip(case.inputs, arrays)]


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def _torch_aliases(out: Any, x: Any) -> bool:
    return (out.numel() > 0 and x.numel() > 0
            and out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())


def _dg_aliases(out: Any, x: Any) -> bool:
    return bool(np.shares_memory(out.array, x.array))


ALIAS_CASES = [c for c in ALL_CASES + INTEGER_OUTPUT_CASES if c.torch is not None]


@pytest.mark.parametrize("case", ALIAS_CASES, ids=[c.id for c in ALIAS_CASES])
def test_op_outputs_alias_their_inputs_exactly_where_torchs_do(case):
    """The op table: an output shares memory with an input exactly where PyTorch's does (a
    view), and then it is a view dyngraph knows of (one version counter for both: an in-place
    change through either is seen by autograd), never memory shared behind its back."""
    arrays = case.arrays()
    mine_in = dg_inputs(case, arrays, "cpu", np.float64)
    theirs_in = _torch_inputs(case, arrays)
    mine, theirs = _first(case.dg(*mine_in)), _first(case.torch(*theirs_in))
    mine_alias = [_dg_aliases(mine, x) for x in mine_in]
    assert mine_alias == [_torch_aliases(theirs, x) for x in theirs_in]
    known = [mine._counter is not None and mine._counter is x._counter for x in mine_in]
    assert known == mine_alias


def _fn(name: str) -> Any:
    return lambda L, *args, **kwargs: getattr(L.nn.functional, name)(*args, **kwargs)


# Methods and functions outside the op table, each (lib, x) -> output, x a 2x3 float tensor.
ALIAS_EXTRA = {
    "contiguous": lambda L, x: x.contiguous(),
    "contiguous-of-T": lambda L, x: x.T.contiguous(),
    "detach": lambda L, x: x.detach(),
    "data": lambda L, x: x.data,
    "narrow": lambda L, x: x.narrow(1, 0, 2),
    "select": lambda L, x: x.select(0, 1),
    "flatten-nothing-to-merge": lambda L, x: x.flatten(1),
    "flatten-T": lambda L, x: x.T.flatten(),
    "reshape-T": lambda L, x: x.T.reshape(-1),
    "to-same-dtype": lambda L, x: x.to(L.float32),
    "to-other-dtype": lambda L, x: x.to(L.float64),
    "float": lambda L, x: x.float(),
    "double": lambda L, x: x.double(),
    "type-same": lambda L, x: x.type(L.float32),
    "cpu": lambda L, x: x.cpu(),
    "pos": lambda L, x: +x,
    "index-Ellipsis": lambda L, x: x[...],
    "index-colon": lambda L, x: x[:],
    "index-0d-int-tensor": lambda L, x: x[L.tensor(1)],
    "index-int-and-0d-tensor": lambda L, x: x[0, L.tensor(1)],
    "index-int-tensor": lambda L, x: x[L.tensor([0, 1])],
    "index-0d-bool-tensor": lambda L, x: x[L.tensor(True)],
    "repeat-once": lambda L, x: x.repeat(1, 1),
    "expand-same": lambda L, x: x.expand(2, 3),
    "masked_fill-nothing": lambda L, x: x.masked_fill(L.zeros(2, 3, dtype=L.bool), 0.0),
    "max-dim": lambda L, x: x.max(1).values,
    "sort-0d": lambda L, x: x[0, 0].sort().values,
    "cat-one": lambda L, x: L.cat([x]),
    "stack-one": lambda L, x: L.stack([x]),
    "where": lambda L, x: L.where(x > 0, x, x),
    "einsum-ij->ji": lambda L, x: L.einsum("ij->ji", x),
    "einsum-ij->ij": lambda L, x: L.einsum("ij->ij", x),
    "einsum-implicit-ji": lambda L, x: L.einsum("ji", x),
    "einsum-sum": lambda L, x: L.einsum("ij->i", x),
    "pow-1": lambda L, x: x ** 1,
    "F.dropout-eval": lambda L, x: L.nn.functional.dropout(x, 0.5, training=False),
    "F.dropout-p=0": lambda L, x: L.nn.functional.dropout(x, 0.0),
    "F.embedding-0d": lambda L, x: L.nn.functional.embedding(L.tensor(1), x),
    "F.embedding": lambda L, x: L.nn.functional.embedding(L.tensor([1]), x),
    "nn.Identity": lambda L, x: L.nn.Identity()(x),
    "nn.Flatten": lambda L, x: L.nn.Flatten()(x),
    "nn.Flatten-0": lambda L, x: L.nn.Flatten(0)(x),
    "nn.Dropout-eval": lambda L, x: L.nn.Dropout().eval()(x),
    "nn.Sequential-empty": lambda L, x: L.nn.Sequential()(x),
}


@pytest.mark.parametrize("name", list(ALIAS_EXTRA))
def test_methods_outside_the_op_table_alias_where_torchs_do(name):
    def run(L: Any) -> tuple[bool, bool]:
        x = L.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
        out = ALIAS_EXTRA[name](L, x)
        aliases = _torch_aliases(out, x) if L is torch else _dg_aliases(out, x)
        if L is dg and aliases and out is not x:
            assert out._counter is x._counter, "memory shared behind autograd's back"
        return aliases, out is x

    theirs, mine = both(run)
    assert mine == theirs


def flip_after_add(lib: Any) -> tuple[list, list]:
    """The issue's program: a flip taken before an in-place change of its input."""
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = a * 1
    flipped = x.flip(0)
    x.add_(100)
    (flipped * flipped).sum().backward()
    return flipped.tolist(), a.grad.tolist()


def einsum_views_after_mul(lib: Any) -> tuple[list, ...]:
    """einsum of one operand that only moves values is a view in both: it sees the change."""
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
    x = a * 1
    t, d = lib.einsum("ij->ji", x), lib.einsum("ii->i", x)
    x.mul_(2)
    (t * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward(
        retain_graph=True)
    g_t = a.grad.tolist()
    a.grad = None
    (d * d).sum().backward()
    return t.tolist(), d.tolist(), g_t, a.grad.tolist()


@pytest.mark.parametrize("program", [flip_after_add, einsum_views_after_mul])
def test_values_and_gradients_after_an_inplace_change_match_torch(program):
    theirs, mine = both(program)
    assert mine == theirs


def test_flip_and_einsum_views_pass_gradcheck_around_an_inplace_change():
    def flip_program(a: Any) -> Any:
        x = a * 1
        flipped = x.flip(0)
        x.add_(100)
        return flipped * flipped + x

    def einsum_program(a: Any) -> Any:
        x = a * 1
        t = dg.einsum("ij->ji", x)
        x.mul_(3.0)
        return t * t + x

    assert dg.gradcheck(flip_program, (dg.randn(3, 2, dtype=dg.float64, requires_grad=True),))
    assert dg.gradcheck(einsum_program, (dg.randn(3, 3, dtype=dg.float64, requires_grad=True),))


# ----------------------------------------------------------------------------- idioms


def test_a_learners_own_attributes_on_tensors_and_parameters_as_in_torch():
    def run(lib: Any) -> list:
        x = lib.tensor([1.0, 2.0])
        x.g = lib.tensor([3.0])  # the course's x.g = ...
        p = lib.nn.Parameter(lib.zeros(2))
        p.grad_avg = lib.ones(2)  # fast.ai's p.grad_avg = ...
        y = x * 2
        return [x.g.tolist(), p.grad_avg.tolist(), hasattr(y, "g"),
                hasattr(lib.nn.Parameter(lib.zeros(2)), "grad_avg")]

    theirs, mine = both(run)
    assert mine == theirs


def test_optimizer_state_of_a_parameter_not_stepped_yet_is_an_empty_dict_as_in_torch():
    def run(lib: Any) -> list:
        w = lib.nn.Parameter(lib.ones(2))
        unused = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w, unused], lr=0.1, momentum=0.9)
        before = dict(opt.state[w])
        sizes = [len(opt.state)]
        (w * w).sum().backward()
        opt.step()
        return [before, sizes, len(opt.state), sorted(opt.state[w]), dict(opt.state[unused]),
                len(opt.state), unused in opt.state]

    theirs, mine = both(run)
    assert mine == theirs


def test_repeat_interleave_of_counts_alone_gives_positions_as_in_torch():
    def run(lib: Any) -> list:
        return [lib.repeat_interleave(lib.tensor([2, 0, 1, 3])).tolist(),
                lib.tensor([[1, 2], [3, 4]]).repeat_interleave(lib.tensor([1, 2]), dim=0).tolist(),
                lib.tensor(5.0).repeat_interleave(2).tolist()]

    theirs, mine = both(run)
    assert mine == theirs


# ------------------------------------------------ names dyngraph also uses for its own tools


def test_dot_trace_and_diff_are_torch_s_given_tensors_and_dyngraph_s_tools_otherwise(torch):
    """dg.dot is the diagrams module, dg.trace the tracer, dg.diff the diagram of two runs;
    given tensors they are torch's (NOTE [dg.dot is also torch.dot], [two traces], [two
    diffs]), with torch's values and gradients."""
    a = np.array([1.0, -2.0, 3.0])
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    for lib in (dg, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(m, requires_grad=True)
        (lib.dot(x, x * 2) + lib.trace(y) + lib.diff(x, n=2).sum() * 3).backward()
        if lib is dg:
            ours = (x.grad.numpy(), y.grad.numpy())
        else:
            theirs = (x.grad.numpy(), y.grad.numpy())
    for mine, torch_s in zip(ours, theirs):
        np.testing.assert_allclose(mine, torch_s)
    # the tools are still there
    assert callable(dg.dot.drawing)
    graph = dg.trace(lambda t: t * 2, dg.ones(2))
    assert isinstance(graph, dg.StaticGraph)
    with pytest.raises(TypeError, match="sum of its diagonal"):
        dg.trace(dg.ones(2, 2), dg.ones(2))
    with pytest.raises(TypeError, match="compares two graphs"):
        dg.diff([1, 2])
    with pytest.raises(TypeError, match="argument 'input' must be Tensor"):
        dg.dot([1.0], [2.0])
