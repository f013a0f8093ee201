"""The names issue 37's inventory counted in the learners' material (docs/pytorch_inventory.md)
that dyngraph lacked: each against torch (values, dtypes, gradients), against finite
differences (dg.gradcheck, float64), and twice differentiable where PyTorch is."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dyngraph as dg
import dyngraph.nn.functional as dF

torch = pytest.importorskip("torch")
from surface_checks import (  # noqa: E402
    assert_second_derivatives_as_torch,
    assert_values_and_gradients_as_torch,
)

rng = np.random.default_rng(0)
A = rng.uniform(-0.9, 0.9, (3, 4))          # inside (-1, 1): acos, asin
P = rng.uniform(0.1, 0.9, (3, 4))           # probabilities: logit
M = rng.standard_normal((4, 4))
V = rng.standard_normal(4)
IMG = rng.standard_normal((2, 3, 7, 6))
KERNEL = rng.standard_normal((3, 2, 3, 2))   # a conv_transpose2d weight (C_in, C_out, kH, kW)
GN_W, GN_B = rng.standard_normal(4), rng.standard_normal(4)
SRC = rng.standard_normal((3, 3))
ROWS = np.array([[0, 1, 3], [2, 1, 0], [1, 0, 3]])          # a permutation's part per row
REPEATS = np.array([[0, 0, 3], [2, 2, 2], [1, 0, 1]])       # indices repeated along dim 1

# (name, input, the same function in each library: f(lib, F, x))
DIFFERENTIABLE = [
    ("Tensor.add alpha", A, lambda lib, F, x: x.add(x * 2, alpha=0.5)),
    ("Tensor.sub alpha", A, lambda lib, F, x: x.sub(x * x, alpha=3)),
    ("Tensor.mul", A, lambda lib, F, x: x.mul(x)),
    ("Tensor.div", P, lambda lib, F, x: x.div(x + 1)),
    ("torch.add", A, lambda lib, F, x: lib.add(x, x, alpha=2)),
    ("torch.sub", A, lambda lib, F, x: lib.sub(x, 1.5)),
    ("torch.mul", A, lambda lib, F, x: lib.mul(x, x)),
    ("torch.div", P, lambda lib, F, x: lib.div(1.0, x)),
    ("torch.neg", A, lambda lib, F, x: lib.neg(x)),
    ("torch.pow", P, lambda lib, F, x: lib.pow(x, 3)),
    ("Tensor.clip", A, lambda lib, F, x: x.clip(-0.5, 0.5)),
    ("Tensor.clip min", A, lambda lib, F, x: x.clip(min=0.1)),
    ("Tensor.acos", A, lambda lib, F, x: x.acos()),
    ("Tensor.asin", A, lambda lib, F, x: x.asin()),
    ("torch.acos", A, lambda lib, F, x: lib.acos(x)),
    ("torch.asin", A, lambda lib, F, x: lib.asin(x)),
    ("Tensor.logit", P, lambda lib, F, x: x.logit()),
    ("Tensor.logit eps", P, lambda lib, F, x: x.logit(eps=0.2)),
    ("Tensor.trace", M, lambda lib, F, x: x.trace()),
    ("Tensor.trace wide", M[:3], lambda lib, F, x: x.trace()),
    ("Tensor.diag matrix", M, lambda lib, F, x: x.diag()),
    ("Tensor.diag matrix +1", M[:3], lambda lib, F, x: x.diag(1)),
    ("Tensor.diag matrix -2", M, lambda lib, F, x: x.diag(-2)),
    ("torch.diag vector", V, lambda lib, F, x: lib.diag(x)),
    ("torch.diag vector +1", V, lambda lib, F, x: lib.diag(x, 1)),
    ("torch.diag vector -2", V, lambda lib, F, x: lib.diag(x, -2)),
    ("Tensor.where", A, lambda lib, F, x: x.where(x > 0, x * x)),
    ("Tensor.view_as", M, lambda lib, F, x: x.view_as(lib.zeros(2, 8))),
    ("Tensor.expand_as", V, lambda lib, F, x: x.expand_as(lib.zeros(3, 4))),
    ("torch.flatten", IMG, lambda lib, F, x: lib.flatten(x, 1)),
    ("torch.unsqueeze", V, lambda lib, F, x: lib.unsqueeze(x, 0)),
    ("torch.squeeze", V[None], lambda lib, F, x: lib.squeeze(x)),
    ("torch.meshgrid ij", V, lambda lib, F, x: lib.meshgrid(x, x[:3], indexing="ij")[0]),
    ("torch.meshgrid xy", V, lambda lib, F, x: lib.meshgrid(x, x[:3] * 2, indexing="xy")[1]),
    ("F.silu", A, lambda lib, F, x: F.silu(x)),
    ("F.pad constant", A, lambda lib, F, x: F.pad(x, (1, 2), value=0.5)),
    ("F.pad 2 dims", IMG, lambda lib, F, x: F.pad(x, (1, 0, 2, 3))),
    ("F.pad crop", IMG, lambda lib, F, x: F.pad(x, (-1, 2, 0, -2))),
    ("F.pad reflect", IMG, lambda lib, F, x: F.pad(x, (2, 1, 1, 2), mode="reflect")),
    ("F.pad replicate", IMG, lambda lib, F, x: F.pad(x, (2, 1, 3, 0), mode="replicate")),
    ("F.pad circular", IMG, lambda lib, F, x: F.pad(x, (2, 1, 1, 2), mode="circular")),
    ("F.avg_pool2d", IMG, lambda lib, F, x: F.avg_pool2d(x, 2)),
    ("F.avg_pool2d stride", IMG, lambda lib, F, x: F.avg_pool2d(x, 3, stride=2)),
    ("F.avg_pool2d padding", IMG, lambda lib, F, x: F.avg_pool2d(x, (3, 2), 1, padding=1)),
    ("F.adaptive_avg_pool2d 1", IMG, lambda lib, F, x: F.adaptive_avg_pool2d(x, 1)),
    ("F.adaptive_avg_pool2d even", IMG, lambda lib, F, x: F.adaptive_avg_pool2d(x, (7, 3))),
    ("F.adaptive_avg_pool2d uneven", IMG, lambda lib, F, x: F.adaptive_avg_pool2d(x, (3, 4))),
    ("F.adaptive_avg_pool2d None", IMG, lambda lib, F, x: F.adaptive_avg_pool2d(x, (None, 4))),
    ("nn.AvgPool2d", IMG, lambda lib, F, x: lib.nn.AvgPool2d(2, stride=1)(x)),
    ("nn.AdaptiveAvgPool2d", IMG, lambda lib, F, x: lib.nn.AdaptiveAvgPool2d((1, 1))(x)),
    ("nn.SiLU", A, lambda lib, F, x: lib.nn.SiLU()(x)),
    ("Tensor.scatter src", M[:3], lambda lib, F, x: x.scatter(1, lib.tensor(ROWS), x[:, :3] * 3)),
    ("Tensor.scatter repeats", M[:3],
     lambda lib, F, x: x.scatter(1, lib.tensor(REPEATS), x[:, 1:] * x[:, 1:])),
    ("Tensor.scatter dim 0", M[:3], lambda lib, F, x: x.scatter(0, lib.tensor(ROWS[:, :2] % 3),
                                                                lib.tensor(SRC[:, :2]))),
    ("Tensor.scatter value", M[:3], lambda lib, F, x: x.scatter(1, lib.tensor(ROWS), 2.5)),
    ("Tensor.cumprod", A, lambda lib, F, x: x.cumprod(1)),
    ("torch.cumprod dim 0", A, lambda lib, F, x: lib.cumprod(x, dim=0)),
    ("Tensor.cumprod with zeros", np.array([[2.0, 0.0, 3.0, 0.5], [1.5, -1.0, 0.0, 0.0]]),
     lambda lib, F, x: x.cumprod(-1)),
    ("Tensor.dist", A, lambda lib, F, x: x.dist(x * x)),
    ("Tensor.dist p=1", A, lambda lib, F, x: x.dist(lib.tensor(P), 1)),
    ("F.smooth_l1_loss", A * 3, lambda lib, F, x: F.smooth_l1_loss(x, lib.tensor(P))),
    ("F.smooth_l1_loss beta", A * 3,
     lambda lib, F, x: F.smooth_l1_loss(x, lib.tensor(P), beta=0.5, reduction="sum")),
    ("F.group_norm", IMG[:, :2].reshape(2, 4, 7, 3),
     lambda lib, F, x: F.group_norm(x, 2, lib.tensor(GN_W), lib.tensor(GN_B))),
    ("nn.GroupNorm", IMG[:, :2].reshape(2, 4, 21),
     lambda lib, F, x: lib.nn.GroupNorm(4, 4, dtype=lib.float64)(x)),
    ("F.pixel_shuffle", IMG[:, :, :4, :4].reshape(1, 12, 2, 4)[:, :8],
     lambda lib, F, x: F.pixel_shuffle(x, 2)),
    ("F.interpolate scale", IMG, lambda lib, F, x: F.interpolate(x, scale_factor=2)),
    ("F.interpolate size", IMG, lambda lib, F, x: F.interpolate(x, size=(3, 10))),
    ("nn.Upsample", IMG, lambda lib, F, x: lib.nn.Upsample(scale_factor=2)(x)),
    ("F.interpolate bilinear", IMG,
     lambda lib, F, x: F.interpolate(x, size=(5, 9), mode="bilinear")),
    ("F.interpolate bilinear corners", IMG,
     lambda lib, F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True)),
    ("nn.Upsample bilinear", IMG,
     lambda lib, F, x: lib.nn.Upsample(scale_factor=2, mode="bilinear")(x)),
    ("F.conv_transpose2d", IMG, lambda lib, F, x: F.conv_transpose2d(x, lib.tensor(KERNEL))),
    ("F.conv_transpose2d stride", IMG,
     lambda lib, F, x: F.conv_transpose2d(x, lib.tensor(KERNEL), lib.tensor(V[:2]), stride=2,
                                          padding=1, output_padding=1)),
    ("F.conv_transpose2d weight", KERNEL,
     lambda lib, F, w: F.conv_transpose2d(lib.tensor(IMG), w, stride=(2, 3), padding=(0, 1))),
]


@pytest.mark.parametrize("name,array,f", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_values_and_gradients_as_torch(name, array, f):
    assert_values_and_gradients_as_torch(f, array, rng, rtol=1e-6)


# PyTorch's own gradient of scatter with repeated indices is not the derivative (every writer
# gets one, though only the last one's value is kept); dyngraph gives PyTorch's, so finite
# differences disagree with both.
NOT_THE_DERIVATIVE = {"Tensor.scatter repeats"}


@pytest.mark.parametrize("name,array,f", [c for c in DIFFERENTIABLE
                                          if c[0] not in NOT_THE_DERIVATIVE],
                         ids=[c[0] for c in DIFFERENTIABLE if c[0] not in NOT_THE_DERIVATIVE])
def test_gradients_against_finite_differences(name, array, f):
    assert dg.gradcheck(lambda x: f(dg, dF, x), (dg.tensor(array, requires_grad=True),))


SECOND_ORDER = {
    "Tensor.acos", "Tensor.asin", "Tensor.logit", "F.silu", "F.pad reflect", "F.avg_pool2d",
    "F.adaptive_avg_pool2d uneven", "torch.diag vector +1", "Tensor.trace", "Tensor.diag matrix",
    "torch.meshgrid xy", "Tensor.where", "Tensor.scatter repeats", "F.smooth_l1_loss",
    "F.group_norm", "F.conv_transpose2d stride", "Tensor.dist", "Tensor.cumprod with zeros",
    "F.interpolate size", "F.pixel_shuffle", "F.interpolate bilinear",
}


@pytest.mark.parametrize("name,array,f", [c for c in DIFFERENTIABLE if c[0] in SECOND_ORDER],
                         ids=[c[0] for c in DIFFERENTIABLE if c[0] in SECOND_ORDER])
def test_second_derivatives_as_torch(name, array, f):
    assert_second_derivatives_as_torch(f, array)


NO_GRAD = [
    ("Tensor.floor", A * 3, lambda lib, x: x.floor()),
    ("Tensor.ceil", A * 3, lambda lib, x: x.ceil()),
    ("Tensor.round", np.array([0.5, 1.5, 2.5, -0.5, 1.2]), lambda lib, x: x.round()),
    ("torch.floor", A * 3, lambda lib, x: lib.floor(x)),
    ("Tensor.eq", np.array([1.0, 2.0, 3.0]), lambda lib, x: x.eq(2.0)),
    ("Tensor.ne/lt/le/gt/ge", np.array([1.0, 2.0, 3.0]),
     lambda lib, x: lib.stack([x.ne(2), x.lt(2), x.le(2), x.gt(2), x.ge(2)])),
    ("Tensor.type_as", A, lambda lib, x: x.type_as(lib.tensor([1]))),
    ("Tensor.half", A, lambda lib, x: x.half()),
    ("Tensor.new_zeros", A, lambda lib, x: x.new_zeros(2, 3)),
    ("Tensor.new_ones", A, lambda lib, x: x.new_ones((2,))),
    ("Tensor.new_full", A, lambda lib, x: x.new_full((2, 2), 7)),
    ("Tensor.new_tensor", A, lambda lib, x: x.new_tensor([1, 2])),
    ("Tensor.nonzero", np.array([[0, 1], [2, 0]]), lambda lib, x: x.nonzero()),
    ("torch.nonzero tuple", np.array([[0, 1], [2, 0]]),
     lambda lib, x: lib.nonzero(x, as_tuple=True)[1]),
    ("Tensor.unique", np.array([3, 1, 3, 2, 1]), lambda lib, x: x.unique()),
    ("torch.unique inverse", np.array([3, 1, 3, 2, 1]),
     lambda lib, x: lib.unique(x, return_inverse=True)[1]),
    ("torch.unique counts", np.array([3, 1, 3, 2, 1]),
     lambda lib, x: lib.unique(x, return_counts=True)[1]),
    ("torch.empty", A, lambda lib, x: lib.empty(2, 3).shape),
    ("torch.empty_like", A,
     lambda lib, x: (lib.empty_like(x).shape, lib.empty_like(x).dtype == x.dtype)),
    ("torch.numel", A, lambda lib, x: lib.numel(x)),
    ("torch.is_tensor", A, lambda lib, x: (lib.is_tensor(x), lib.is_tensor(3))),
    ("torch.as_tensor", A, lambda lib, x: lib.as_tensor([1.0, 2.0])),
    ("torch.pi", A, lambda lib, x: lib.pi),
    ("Tensor.scatter_ one-hot", np.array([2, 0, 1, 2]),
     lambda lib, x: lib.zeros(4, 3).scatter_(1, x.unsqueeze(1), 1.0)),
    ("dtypes", A, lambda lib, x: [str(lib.tensor([1], dtype=d).dtype).replace("torch.", "")
                                  for d in (lib.uint8, lib.int8, lib.int16)]),
]


def plain(value):
    if isinstance(value, (dg.Tensor, torch.Tensor)):
        return (str(value.dtype).replace("torch.", ""), value.tolist())
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, torch.Size):
        return tuple(value)
    return value


@pytest.mark.parametrize("name,array,f", NO_GRAD, ids=[c[0] for c in NO_GRAD])
def test_values_as_torch(name, array, f):
    assert plain(f(dg, dg.tensor(array))) == plain(f(torch, torch.tensor(array)))


def test_rounding_has_zero_gradient_as_in_torch():
    x = dg.tensor([0.3, 1.7], requires_grad=True)
    (x.floor() + x.ceil() + x.round()).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_as_tensor_shares_a_tensor_of_the_same_dtype():
    x = dg.tensor([1.0, 2.0])
    assert dg.as_tensor(x) is x and dg.as_tensor(x, dtype=dg.float64) is not x


def test_pad_refuses_an_odd_pad_and_a_reflection_wider_than_the_input():
    with pytest.raises(ValueError, match="pairs"):
        dF.pad(dg.zeros(2, 2), (1,))
    with pytest.raises(RuntimeError, match="less than the dimension's size 2"):
        dF.pad(dg.zeros(1, 2), (2, 0), mode="reflect")


def test_dropout2d_drops_whole_channels():
    dg.manual_seed(0)
    y = dF.dropout2d(dg.ones(4, 8, 3, 3), p=0.5)
    per_channel = y.numpy().reshape(4, 8, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # a channel is all 0 or all 2
    ones = dg.ones(1, 2, 2, 2)
    assert dF.dropout2d(ones, training=False).tolist() == ones.tolist()
    net = dg.nn.Dropout2d(0.3).eval()
    assert net(dg.ones(1, 2, 2, 2)).tolist() == dg.ones(1, 2, 2, 2).tolist()


# ----------------------------------------------------------------------------- save / load


def test_save_and_load_a_checkpoint(tmp_path):
    """The tutorials' checkpoint: the model's and the optimizer's state, the epoch."""
    model = dg.nn.Linear(3, 2)
    opt = dg.optim.Adam(model.parameters())
    model(dg.randn(4, 3)).sum().backward()
    opt.step()
    dg.save({"epoch": 5, "model": model.state_dict(), "optimizer": opt.state_dict()},
            tmp_path / "ckpt.pth")
    back = dg.load(tmp_path / "ckpt.pth", map_location="cpu")
    fresh = dg.nn.Linear(3, 2)
    fresh.load_state_dict(back["model"])
    assert back["epoch"] == 5
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())
    fresh_opt = dg.optim.Adam(fresh.parameters())
    fresh_opt.load_state_dict(back["optimizer"])
    assert back["optimizer"]["param_groups"] == [{**opt.param_groups[0], "params": [0, 1]}]
    x = dg.randn(4, 3)
    for net, optimizer in ((model, opt), (fresh, fresh_opt)):  # one more step: the same
        optimizer.zero_grad()
        net(x).sum().backward()
        optimizer.step()
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), model.weight.detach().numpy())


def test_optimizer_state_dict_has_torchs_layout():
    def layout(lib):
        w, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
        (w.sum() + b.sum()).backward()
        opt.step()
        sd = opt.state_dict()
        return ([g["params"] for g in sd["param_groups"]], [g["lr"] for g in sd["param_groups"]],
                {i: sorted(s) for i, s in sd["state"].items()})
    assert layout(dg) == layout(torch)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        dg.optim.SGD([dg.nn.Parameter(dg.ones(1))], lr=0.1).load_state_dict(
            {"state": {}, "param_groups": []})


def test_load_refuses_what_is_not_weights_unless_told(tmp_path):
    dg.save(dg.nn.Linear(2, 1), tmp_path / "model.pth")
    with pytest.raises(pickle.UnpicklingError, match="refuses dyngraph.nn.layers.Linear.*"
                                                     "weights_only=False"):
        dg.load(tmp_path / "model.pth")
    assert isinstance(dg.load(tmp_path / "model.pth", weights_only=False), dg.nn.Linear)


def test_set_printoptions_as_torch_for_precision():
    try:
        dg.set_printoptions(precision=2)
        torch.set_printoptions(precision=2)
        assert repr(dg.tensor([1 / 3, 2 / 3])) == repr(torch.tensor([1 / 3, 2 / 3]))
    finally:
        dg.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")
    assert repr(dg.tensor([1 / 3])) == "tensor([0.3333])"


# ----------------------------------------------------------------------------- lazy layers


def test_lazy_layers_become_the_layer_with_torchs_names_and_shapes():
    def build(lib):
        nn = lib.nn
        net = nn.Sequential(nn.LazyConv2d(4, 3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
                            nn.Flatten(), nn.LazyLinear(5), nn.LazyBatchNorm1d(),
                            nn.LazyLinear(2, bias=False))
        before = len(list(net.parameters()))
        net(lib.zeros(2, 3, 4, 4))
        return (before, [type(m).__name__ for m in net],
                {k: tuple(v.shape) for k, v in net.state_dict().items()})
    assert build(dg) == build(torch)


def test_an_optimizer_made_before_the_first_call_trains_the_lazy_layer():
    layer = dg.nn.LazyLinear(1)
    opt = dg.optim.SGD(layer.parameters(), lr=0.5)
    x = dg.ones(1, 2)
    layer(x)
    with dg.no_grad():
        layer.weight.zero_()
        layer.bias.zero_()
    layer(x).sum().backward()
    opt.step()
    assert layer.weight.tolist() == [[-0.5, -0.5]] and layer.bias.tolist() == [-0.5]


# ----------------------------------------------------------------------------- init


def test_kaiming_and_orthogonal_have_torchs_statistics():
    w = dg.zeros(400, 300)
    dg.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2 / 300)) < 0.003
    dg.nn.init.kaiming_uniform_(w, a=np.sqrt(5))  # nn.Linear's own
    bound = np.sqrt(3) * dg.nn.init.calculate_gain("leaky_relu", np.sqrt(5)) / np.sqrt(300)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.95 * bound
    for shape in [(3, 5), (5, 3), (4, 2, 3)]:
        q = dg.nn.init.orthogonal_(dg.zeros(*shape), gain=2).numpy().reshape(shape[0], -1)
        small = min(q.shape)
        gram = q @ q.T if q.shape[0] == small else q.T @ q
        np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-5)
    for name in ("linear", "sigmoid", "tanh", "relu", "selu", "leaky_relu"):
        assert dg.nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))


# ----------------------------------------------------------------------------- modules


def test_forward_hooks_in_torchs_order_with_torchs_return_rules():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        with lib.no_grad():
            net[0].weight.copy_(lib.tensor([[1.0, -2.0], [0.5, 1.0]]))
            net[0].bias.zero_()
        log = []
        layer = net[0]
        layer.register_forward_pre_hook(lambda m, args: log.append("pre, second"))
        layer.register_forward_pre_hook(lambda m, args: (log.append("pre, first"), args[0] * 2)[1],
                                        prepend=True)
        layer.register_forward_hook(lambda m, args, out: log.append(("sees", args[0].tolist())))
        zeroing = layer.register_forward_hook(lambda m, args, out: out * 0)
        layer.register_forward_hook(lambda m, args, out: log.append(("after", out.tolist())))
        layer.register_forward_pre_hook(
            lambda m, args, kwargs: log.append(("kwargs", sorted(kwargs))), with_kwargs=True)
        first = net(lib.ones(1, 2))
        zeroing.remove()
        second = net(lib.ones(1, 2))
        return log, first.tolist(), second.tolist()
    assert run(dg) == run(torch)


def test_module_half_and_type_cast_the_parameters():
    layer = dg.nn.Linear(2, 2)
    assert layer.half().weight.dtype == np.float16
    assert layer.type(dg.float64).weight.dtype == np.float64


def trajectory(lib, make_opt, make_sched, steps=12):
    """(lr, momentum or beta1, weights) after each step of a tiny quadratic problem."""
    w = lib.nn.Parameter(lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64))
    opt = make_opt(lib, [w])
    sched = make_sched(lib, opt) if make_sched else None
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (w * w * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        opt.step()
        if sched:
            sched.step()
        group = opt.param_groups[0]
        momentum = group["betas"][0] if "betas" in group else group.get("momentum", 0.0)
        out.append([group["lr"], momentum, *w.tolist()])
    return np.array(out)


@pytest.mark.parametrize("kw", [{}, {"anneal_strategy": "linear"}, {"three_phase": True},
                                {"pct_start": 0.5, "div_factor": 10, "final_div_factor": 100}])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_one_cycle_lr_as_torch(optimizer, kw):
    def make_opt(lib, params):
        if optimizer == "SGD":
            return lib.optim.SGD(params, lr=0.1, momentum=0.9)
        return lib.optim.Adam(params, lr=0.1)

    def make_sched(lib, opt):
        return lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=13, **kw)
    np.testing.assert_allclose(trajectory(dg, make_opt, make_sched),
                               trajectory(torch, make_opt, make_sched), rtol=1e-12, atol=1e-15)


def test_one_cycle_lr_says_when_stepped_past_its_end():
    opt = dg.optim.SGD([dg.nn.Parameter(dg.ones(1))], lr=0.1, momentum=0.9)
    sched = dg.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=1, steps_per_epoch=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()


@pytest.mark.parametrize("kw", [{}, {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}])
def test_adadelta_as_torch(kw):
    def make_opt(lib, params):
        return lib.optim.Adadelta(params, **kw)
    np.testing.assert_allclose(trajectory(dg, make_opt, None), trajectory(torch, make_opt, None),
                               rtol=1e-12, atol=1e-15)


def test_assert_close_as_torch():
    dg.testing.assert_close(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.000001]))
    dg.testing.assert_close({"a": [dg.tensor([1.0])]}, {"a": [dg.tensor([1.0])]})
    with pytest.raises(AssertionError) as mine:
        dg.testing.assert_close(dg.tensor([1.0, 2.0]), dg.tensor([1.0, 2.1]))
    with pytest.raises(AssertionError) as theirs:
        torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1]))
    assert str(mine.value).split("\n")[:3] == str(theirs.value).split("\n")[:3]
    with pytest.raises(AssertionError, match="dtype"):
        dg.testing.assert_close(dg.tensor([1.0]), dg.tensor([1.0], dtype=dg.float64))
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        dg.testing.assert_close(dg.tensor([1.0]), dg.tensor([1.0]), rtol=0.1)


def test_random_fills_integers_in_range():
    x = dg.zeros(1000).random_(3, 7)
    assert set(x.tolist()) == {3.0, 4.0, 5.0, 6.0} and x.dtype == np.float32
    assert set(dg.zeros(100, dtype=dg.int64).random_(2).tolist()) == {0, 1}


def test_conv_transpose2d_module_shape_and_init_bound():
    def shapes(lib):
        layer = lib.nn.ConvTranspose2d(3, 5, 4, stride=2, padding=1)
        return (tuple(layer.weight.shape), tuple(layer(lib.zeros(1, 3, 6, 6)).shape))
    assert shapes(dg) == shapes(torch)
    layer = dg.nn.ConvTranspose2d(3, 5, 4)
    assert np.abs(layer.weight.detach().numpy()).max() <= 1 / np.sqrt(5 * 16)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.ReLU(inplace=True),
    lambda lib: lib.nn.ReLU(True),
    lambda lib: lib.nn.LeakyReLU(0.2, inplace=True),
    lambda lib: (lambda x: lib.nn.functional.relu(x, inplace=True)),
])
def test_inplace_activations_write_into_their_input_as_torch(make):
    """NOTE [inplace activations]: the input reads as the result afterwards, and the
    gradient flows through the write."""
    def run(lib):
        a = lib.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
        x = a * 2
        y = make(lib)(x)
        (x * x).sum().backward()
        return x.tolist(), y.tolist(), a.grad.tolist(), repr(make(lib)) if isinstance(
            make(lib), (dg.nn.Module, torch.nn.Module)) else ""
    assert run(dg) == run(torch)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        make(dg)(dg.tensor([1.0], requires_grad=True))
