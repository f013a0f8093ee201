"""Names that learner programs beyond the counted inventory reach for (issue 37, done-when 4):
activations, distances, the Huber loss, NaN/inf predicates, selections, and three learning-rate
schedulers. Each against torch (values, dtypes, gradients), against finite differences in
float64 (dg.gradcheck), and twice differentiable as torch where it has a second derivative."""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg
import dyngraph.nn.functional as dF

torch = pytest.importorskip("torch")
from surface_checks import (  # noqa: E402
    assert_second_derivatives_as_torch,
    assert_values_and_gradients_as_torch,
)

rng = np.random.default_rng(37)
X = rng.standard_normal((3, 4)) * 2.5          # no entry on a kink (0, +-1, +-3, 6)
Y = rng.standard_normal((3, 4))
IMG = rng.standard_normal((2, 3, 2, 2))
SLOPES = np.array([0.1, 0.3, -0.2])

# (name, input, f(lib, F, x))
DIFFERENTIABLE = [
    ("F.elu", X, lambda lib, F, x: F.elu(x, alpha=0.7)),
    ("F.selu", X, lambda lib, F, x: F.selu(x)),
    ("F.celu", X, lambda lib, F, x: F.celu(x, alpha=1.5)),
    ("F.hardtanh", X, lambda lib, F, x: F.hardtanh(x, -2.0, 1.5)),
    ("F.relu6", X * 3, lambda lib, F, x: F.relu6(x)),
    ("F.hardsigmoid", X, lambda lib, F, x: F.hardsigmoid(x)),
    ("F.hardswish", X, lambda lib, F, x: F.hardswish(x)),
    ("F.mish", X, lambda lib, F, x: F.mish(x)),
    ("F.softsign", X, lambda lib, F, x: F.softsign(x)),
    ("F.prelu per channel", IMG, lambda lib, F, x: F.prelu(x, lib.tensor(SLOPES))),
    ("F.glu", X, lambda lib, F, x: F.glu(x, dim=1)),
    ("F.softmin", X, lambda lib, F, x: F.softmin(x, dim=0)),
    ("F.normalize", X, lambda lib, F, x: F.normalize(x, dim=1)),
    ("F.normalize p=1", X, lambda lib, F, x: F.normalize(x, p=1.0, dim=0)),
    ("F.cosine_similarity", X, lambda lib, F, x: F.cosine_similarity(x, lib.tensor(Y))),
    ("F.cosine_similarity dim 0", X,
     lambda lib, F, x: F.cosine_similarity(x, x * x, dim=0)),
    ("F.pairwise_distance", X, lambda lib, F, x: F.pairwise_distance(x, lib.tensor(Y))),
    ("F.huber_loss", X, lambda lib, F, x: F.huber_loss(x, lib.tensor(Y), delta=0.8)),
    ("nn.ELU", X, lambda lib, F, x: lib.nn.ELU(alpha=0.5)(x)),
    ("nn.SELU", X, lambda lib, F, x: lib.nn.SELU()(x)),
    ("nn.CELU", X, lambda lib, F, x: lib.nn.CELU()(x)),
    ("nn.Hardtanh", X, lambda lib, F, x: lib.nn.Hardtanh(-1.5, 2.0)(x)),
    ("nn.ReLU6", X * 3, lambda lib, F, x: lib.nn.ReLU6()(x)),
    ("nn.Hardsigmoid", X, lambda lib, F, x: lib.nn.Hardsigmoid()(x)),
    ("nn.Hardswish", X, lambda lib, F, x: lib.nn.Hardswish()(x)),
    ("nn.Mish", X, lambda lib, F, x: lib.nn.Mish()(x)),
    ("nn.Softsign", X, lambda lib, F, x: lib.nn.Softsign()(x)),
    ("nn.Softplus", X, lambda lib, F, x: lib.nn.Softplus(beta=2.0)(x)),
    ("nn.LogSigmoid", X, lambda lib, F, x: lib.nn.LogSigmoid()(x)),
    ("nn.GLU", X, lambda lib, F, x: lib.nn.GLU()(x)),
    ("nn.Softmin", X, lambda lib, F, x: lib.nn.Softmin(dim=1)(x)),
    ("nn.CosineSimilarity", X, lambda lib, F, x: lib.nn.CosineSimilarity(dim=1)(x, x + 1)),
    ("nn.PairwiseDistance", X,
     lambda lib, F, x: lib.nn.PairwiseDistance(p=1.0, keepdim=True)(x, lib.tensor(Y))),
    ("nn.HuberLoss", X, lambda lib, F, x: lib.nn.HuberLoss(reduction="sum", delta=2.0)(
        x, lib.tensor(Y))),
    ("nn.Unflatten", X, lambda lib, F, x: lib.nn.Unflatten(1, (2, 2))(x) * x.reshape(3, 2, 2)),
    ("torch.index_select", X, lambda lib, F, x: lib.index_select(x, 1, lib.tensor([3, 0, 3]))),
    ("Tensor.index_select dim 0", X, lambda lib, F, x: x.index_select(0, lib.tensor([2, 2]))),
    ("torch.masked_select", X, lambda lib, F, x: lib.masked_select(x, lib.tensor(Y > 0))),
    ("Tensor.masked_select broadcast", X,
     lambda lib, F, x: x.masked_select(lib.tensor([True, False, False, True]))),
    ("torch.clip", X, lambda lib, F, x: lib.clip(x, -1.0, 2.0)),
    ("Tensor.index_add", X, lambda lib, F, x: x.index_add(0, lib.tensor([2, 0, 2]), x[:3] * x[:3],
                                                          alpha=0.5)),
    ("Tensor.index_add_ dim 1", X,
     lambda lib, F, x: (x * 1).index_add_(1, lib.tensor([3, 3]), x[:, :2] * 2)),
    ("Tensor.scatter_add_", X,
     lambda lib, F, x: (x * 1).scatter_add_(1, lib.tensor([[0, 0], [1, 3], [2, 2]]), x[:, 1:3])),
    ("Tensor.addcmul", X, lambda lib, F, x: x.addcmul(x, lib.tensor(Y), value=0.3)),
    ("Tensor.addcmul_", X, lambda lib, F, x: (x * 1).addcmul_(x, x, value=-0.5)),
    ("Tensor.addcdiv_", X,
     lambda lib, F, x: (x * 1).addcdiv_(x, lib.tensor(Y) ** 2 + 1, value=0.2)),
    ("F.avg_pool1d", IMG.reshape(2, 3, 4),
     lambda lib, F, x: F.avg_pool1d(x, 2, stride=1, padding=1)),
    ("F.adaptive_avg_pool1d", IMG.reshape(2, 3, 4), lambda lib, F, x: F.adaptive_avg_pool1d(x, 3)),
    ("nn.AvgPool1d", IMG.reshape(2, 3, 4), lambda lib, F, x: lib.nn.AvgPool1d(2)(x)),
    ("nn.AdaptiveAvgPool1d", IMG.reshape(2, 3, 4),
     lambda lib, F, x: lib.nn.AdaptiveAvgPool1d(1)(x)),
    ("nn.MaxPool1d", IMG.reshape(2, 3, 4), lambda lib, F, x: lib.nn.MaxPool1d(2, stride=1)(x)),
    ("torch.var", X, lambda lib, F, x: lib.var(x, 1, keepdim=True)),
    ("torch.dist", X, lambda lib, F, x: lib.dist(x, lib.tensor(Y), 3)),
    ("Tensor.reshape_as", X, lambda lib, F, x: x.reshape_as(lib.tensor(X.T))),
    ("autograd.Variable", X, lambda lib, F, x: x * lib.autograd.Variable(lib.tensor(Y))),
    ("Tensor % number", X, lambda lib, F, x: x % 1.5),
    ("clamp tensor bounds", X, lambda lib, F, x: x.clamp(min=lib.tensor(Y[0]) - 1.0,
                                                        max=lib.tensor(Y[:, :1]) + 1.0)),
    ("clamp by a tensor that learns", X, lambda lib, F, x: lib.tensor(Y).clamp(max=x)),
    ("torch.reciprocal", X, lambda lib, F, x: lib.reciprocal(x)),
    ("torch.erf (BERT's GELU)", X,
     lambda lib, F, x: 0.5 * x * (1.0 + lib.erf(x / 1.4142135623730951))),
    ("Tensor.erf", X, lambda lib, F, x: x.erf()),
    ("torch.rsqrt", X, lambda lib, F, x: lib.rsqrt(x.abs() + 0.1)),
    ("torch.roll", X, lambda lib, F, x: lib.roll(x, 1, dims=1) * x),
    ("Tensor.roll two dims", X, lambda lib, F, x: x.roll((-1, 2), (0, 1)) * x),
    ("Tensor.roll flat", X, lambda lib, F, x: x.roll(5)),
    ("torch.hstack", X, lambda lib, F, x: lib.hstack([x, x * x])),
    ("torch.vstack 1-D", X[0], lambda lib, F, x: lib.vstack([x, x * 2])),
    ("Tensor.remainder tensor", X, lambda lib, F, x: x.remainder(lib.tensor(Y) + 3.0) * x),
]
NOT_TWICE = {"F.hardtanh", "F.relu6", "nn.ReLU6", "nn.Hardtanh", "torch.clip",
             "F.hardsigmoid", "nn.Hardsigmoid", "nn.Unflatten", "torch.index_select",
             "Tensor.index_select dim 0", "torch.masked_select", "Tensor.masked_select broadcast",
             "nn.MaxPool1d", "Tensor.reshape_as", "Tensor.index_add", "Tensor.index_add_ dim 1",
             "Tensor.scatter_add_", "F.avg_pool1d", "F.adaptive_avg_pool1d", "nn.AvgPool1d",
             "nn.AdaptiveAvgPool1d", "Tensor % number", "Tensor.remainder tensor",
             "clamp tensor bounds", "clamp by a tensor that learns", "torch.roll",
             "Tensor.roll two dims", "Tensor.roll flat"}
IDS = [c[0] for c in DIFFERENTIABLE]


@pytest.mark.parametrize("name,array,f", DIFFERENTIABLE, ids=IDS)
def test_values_and_gradients_as_torch(name, array, f):
    assert_values_and_gradients_as_torch(f, array, rng, rtol=1e-7)


@pytest.mark.parametrize("name,array,f", DIFFERENTIABLE, ids=IDS)
def test_gradients_against_finite_differences(name, array, f):
    assert dg.gradcheck(lambda x: f(dg, dF, x), (dg.tensor(array, requires_grad=True),))


@pytest.mark.parametrize("name,array,f", [c for c in DIFFERENTIABLE if c[0] not in NOT_TWICE],
                         ids=[c[0] for c in DIFFERENTIABLE if c[0] not in NOT_TWICE])
def test_second_derivatives_as_torch(name, array, f):
    assert_second_derivatives_as_torch(f, array)


def test_prelu_learns_its_slopes_as_torch():
    grads = []
    for lib in (dg, torch):
        layer = lib.nn.PReLU(3, init=0.2)
        x = lib.tensor(IMG.astype(np.float32))
        (layer(x) ** 2).sum().backward()
        grads.append((layer.weight.grad.numpy(), list(layer.state_dict())))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
    assert grads[0][1] == grads[1][1] == ["weight"]


def test_predicates_and_argsort_as_torch():
    values = np.array([[1.0, np.nan, -np.inf], [np.inf, 0.0, -2.0]])
    for name in ("isnan", "isinf", "isfinite"):
        mine, theirs = getattr(dg, name)(dg.tensor(values)), getattr(torch, name)(
            torch.tensor(values))
        assert mine.dtype == dg.bool and mine.tolist() == theirs.tolist(), name
        assert getattr(dg.tensor(values), name)().tolist() == theirs.tolist()
        assert not getattr(dg.tensor(values, requires_grad=True), name)().requires_grad
    for descending in (False, True):
        assert (dg.argsort(dg.tensor(X), 1, descending=descending).tolist()
                == torch.argsort(torch.tensor(X), 1, descending=descending).tolist())
    assert dg.tensor(X).argsort(0).tolist() == torch.tensor(X).argsort(0).tolist()


@pytest.mark.parametrize("make, metrics", [
    (lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.5),
     None),
    (lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4),
     None),
    (lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=1,
                                                                factor=0.5, min_lr=0.02),
     [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.9, 0.9, 0.9, 0.9, 0.9]),
    (lambda lib, opt: lib.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max", threshold=0.1, threshold_mode="abs", patience=0),
     [1.0, 1.05, 1.2, 1.25, 1.3, 1.5, 1.5]),
], ids=["MultiStepLR", "LinearLR", "ReduceLROnPlateau", "ReduceLROnPlateau max abs"])
def test_schedulers_move_the_lr_as_torch(make, metrics):
    def lrs(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = make(lib, opt)
        seen = []
        for epoch in range(len(metrics) if metrics else 9):
            opt.step()
            seen.append(opt.param_groups[0]["lr"])
            sched.step(*([metrics[epoch]] if metrics else []))
        return seen + sched.get_last_lr()
    np.testing.assert_allclose(lrs(dg), lrs(torch), rtol=1e-15, atol=1e-17)


def test_logical_ops_and_dtype_predicates_as_torch():
    for lib in (dg, torch):
        a, b = lib.tensor(X) > 0, lib.tensor(Y) > 0
        got = [lib.logical_and(a, b).tolist(), lib.logical_or(a, b).tolist(),
               lib.logical_not(a).tolist(), a.logical_and(b).tolist(),
               lib.tensor(X).is_floating_point(), lib.tensor([1, 2]).is_floating_point()]
        if lib is dg:
            mine = got
    assert mine == got


def test_variable_is_a_new_tensor_on_the_same_memory_outside_the_graph():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    v = dg.autograd.Variable(x * 2)
    assert not v.requires_grad and v.grad_fn is None and v.is_leaf
    base = dg.tensor([1.0, 2.0])
    w = dg.autograd.Variable(base, requires_grad=True)
    assert w is not base and w.requires_grad and not base.requires_grad
    with dg.no_grad():
        w += 1
    assert base.tolist() == [2.0, 3.0]       # the same memory, as PyTorch's


@pytest.mark.parametrize("settings", [{}, {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1,
                                           "initial_accumulator_value": 0.2}])
def test_adagrad_takes_torchs_steps(settings):
    def run(lib):
        w = lib.tensor(X.copy(), requires_grad=True)
        opt = lib.optim.Adagrad([w], **settings)
        for _ in range(4):
            opt.zero_grad()
            ((w - lib.tensor(Y)) ** 2).sum().backward()
            opt.step()
        return w.detach().numpy()
    np.testing.assert_allclose(run(dg), run(torch), rtol=1e-12)


def test_parameters_to_vector_and_back_as_torch():
    results = []
    for lib in (dg, torch):
        model = lib.nn.Linear(3, 2).double()
        model.load_state_dict({"weight": lib.tensor(X[:2, :3]), "bias": lib.tensor(Y[0, :2])})
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * vec).sum().backward()
        lib.nn.utils.vector_to_parameters(vec.detach() * 3, model.parameters())
        results.append((vec.detach().numpy(), model.weight.grad.numpy(),
                        model.bias.detach().numpy()))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)


def test_detach_in_place_makes_the_same_tensor_a_leaf_as_torch():
    """d2l's state.detach_() between batches: the next batch's graph stops at the state."""
    results = []
    for lib in (dg, torch):
        w = lib.tensor(X[0], requires_grad=True)
        state = w * 2
        (state * w).sum().backward()        # one batch (d2l backpropagates before detaching)
        assert state.detach_() is state
        assert not state.requires_grad and state.grad_fn is None and state.is_leaf
        (state * w).sum().backward()        # the next batch's graph stops at the state
        results.append(w.grad.numpy())
        with pytest.raises(RuntimeError, match="detach views in-place"):
            (w * 1)[1:].detach_()
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_floor_division_remainder_and_formatting_as_torch():
    for lib in (dg, torch):
        ints, floats = lib.tensor([7, -7, 9]), lib.tensor([7.5, -7.5, 2.0])
        got = [(ints // 2).tolist(), (7 // lib.tensor([2, -2])).tolist(), (floats // 2).tolist(),
               (ints % 4).tolist(), (floats % 2).tolist(), (9 % lib.tensor([4, -4])).tolist(),
               str((ints // 2).dtype)[-5:], str((floats // 2).dtype)[-7:],
               str((lib.tensor([1, 2], dtype=lib.int32) // 2).dtype)[-5:],
               "{:+.2f} {:.3e} {}".format(floats[0], floats.sum(), floats[1]),  # noqa: UP032
               f"{lib.tensor(3):04d} {lib.tensor(2.5, requires_grad=True):.1f}"]
        if lib is dg:
            mine = got
    assert mine == got
    with pytest.raises(TypeError):
        "{:.2f}".format(dg.tensor([1.0, 2.0]))  # noqa: UP032 (only a 0-d tensor is a number)


def test_numpy_float64_scalars_keep_float64_as_torch():
    cases = [np.float64(3.0), [np.float64(1.0), np.float64(2.0)], [1.0, np.float64(2.0)],
             np.float32(1.5), [np.int32(3)], 3.0, [[1.0, 2.0]], np.mean(X)]
    for data in cases:
        assert str(dg.tensor(data).dtype) == str(torch.tensor(data).dtype).replace("torch.", "")


def test_small_names_as_torch():
    for lib in (dg, torch):
        x = lib.tensor(X)
        with lib.inference_mode():
            inside = (lib.tensor(X, requires_grad=True) * 2).requires_grad
        got = [x.round(decimals=1).tolist(), lib.count_nonzero(x > 1).item(),
               x.count_nonzero(dim=0).tolist(), lib.equal(x, x * 1), lib.equal(x, x[:2]),
               lib.isclose(x, x + 1e-9).all().item(), str(lib.get_default_dtype())[-7:], inside]
        if lib is dg:
            mine = got
    assert mine == got


def test_bernoulli_draws_zeros_and_ones_with_the_given_probabilities():
    p = dg.tensor(np.linspace(0.0, 1.0, 5).astype(np.float32))
    draws = np.stack([dg.bernoulli(p).numpy() for _ in range(400)])
    assert draws.dtype == np.float32 and set(np.unique(draws)) <= {0.0, 1.0}
    assert draws[:, 0].sum() == 0 and draws[:, -1].sum() == 400
    np.testing.assert_allclose(draws.mean(0), p.numpy(), atol=0.08)


def test_embedding_padding_idx_and_from_pretrained_as_torch():
    results = []
    for lib in (dg, torch):
        emb = lib.nn.Embedding(5, 3, padding_idx=-5)
        start = emb.weight[0].tolist()
        with lib.no_grad():
            emb.weight[0] = 1.0                 # a padding row may be changed by hand
        out = emb(lib.tensor([[0, 2], [2, 0]]))
        (out ** 2).sum().backward()
        frozen = lib.nn.Embedding.from_pretrained(lib.tensor(Y.astype(np.float32)))
        free = lib.nn.Embedding.from_pretrained(lib.tensor(Y.astype(np.float32)), freeze=False,
                                                padding_idx=1)
        results.append([start, emb.padding_idx, out[0, 0].tolist(), emb.weight.grad[0].tolist(),
                        (emb.weight.grad[2] == 4 * emb.weight[2]).all().item(),
                        frozen.weight.requires_grad, free.weight.requires_grad, free.padding_idx,
                        frozen(lib.tensor([2])).tolist()])
    assert results[0] == results[1]


def test_small_fixes_found_by_the_side_by_side_probe():
    for lib in (dg, torch):
        got = [lib.zeros(5).scatter_(0, lib.tensor(3), value=1).tolist(),  # the data tutorial
               lib.tensor([1, 2]).mean(dtype=lib.float32).item(),
               str(lib.tensor([True, False, True]).sum(dtype=lib.int32).dtype)[-5:],
               str(lib.arange(lib.tensor(4)).dtype)[-5:], lib.arange(lib.tensor(4)).tolist(),
               str(lib.arange(lib.tensor(2.5)).dtype)[-7:]]
        if lib is dg:
            mine = got
    assert mine == got


def test_the_probes_and_switches_at_the_top_of_learners_scripts_run():
    """pytorch/examples, nanoGPT and the tutorials open with these; dyngraph answers for its
    own devices and keeps the flags it cannot use."""
    use_accel = dg.accelerator.is_available()
    device = dg.accelerator.current_accelerator() if use_accel else dg.device("cpu")
    assert use_accel == dg.cuda.is_available() and str(device) in ("cpu", "cuda")
    assert dg.accelerator.device_count() == dg.cuda.device_count() == int(use_accel)
    assert not dg.backends.mps.is_available()
    dg.backends.cudnn.benchmark = True
    dg.backends.cuda.matmul.allow_tf32 = True
    dg.backends.cudnn.allow_tf32 = True
    assert dg.backends.cudnn.benchmark and dg.backends.cuda.matmul.allow_tf32
    dg.manual_seed(1)
    first = dg.randn(3).tolist()
    dg.manual_seed(1)
    dg.cuda.manual_seed(7)              # dyngraph's one generator is not reseeded by it
    dg.cuda.manual_seed_all(7)
    dg.use_deterministic_algorithms(True)
    assert dg.randn(3).tolist() == first
    model = dg.nn.Linear(2, 1)
    assert dg.compile(model) is model and dg.compile(model, mode="reduce-overhead") is model


def test_get_submodule_and_trunc_normal():
    for lib in (dg, torch):
        model = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Sequential(lib.nn.ReLU()))
        assert type(model.get_submodule("1.0")).__name__ == "ReLU"
        assert model.get_submodule("") is model
        with pytest.raises(AttributeError, match="Sequential has no attribute `x`"):
            model.get_submodule("1.x")
    w = dg.nn.Parameter(dg.empty(2000))
    assert dg.nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5) is w
    values = w.detach().numpy()
    assert values.min() >= -0.5 and values.max() <= 0.5 and values.std() > 0.2
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_to_takes_pytorchs_keywords_on_modules_and_tensors():
    for lib in (dg, torch):
        model = lib.nn.Linear(2, 1)
        weight = model.weight
        assert model.to(device=lib.device("cpu"), dtype=lib.float64) is model
        assert model.weight is weight and str(weight.dtype).endswith("float64")
        assert str(lib.nn.Linear(2, 1).to("cpu", lib.float64).bias.dtype).endswith("float64")
        x = lib.ones(2, requires_grad=True)
        assert x.to("cpu", non_blocking=True) is x
        copied = x.to(copy=True)
        assert copied is not x and copied.requires_grad
        (copied * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]


def test_dot_and_trace_are_also_pytorchs_functions():
    """d2l's first autograd example, y = 2 * torch.dot(x, x), and torch.trace(A)."""
    results = []
    for lib in (dg, torch):
        x = lib.arange(4.0, requires_grad=True)
        y = 2 * lib.dot(x, x)
        y.backward()
        a = lib.tensor(X[:, :3], requires_grad=True)
        lib.trace(a).backward()
        results.append((y.item(), x.grad.tolist(), a.grad.tolist()))
    assert results[0] == results[1]
    assert callable(dg.dot.drawing)                      # still the DOT module
    assert isinstance(dg.trace(lambda v: v * 2, dg.ones(2)), dg.StaticGraph)  # still the tracer
