"""dg.optim: SGD and Adam take PyTorch's steps.

Each optimizer runs several steps on a small problem and is compared twice: with the update rule
written out by hand in numpy (the formulas of the docstrings), and with torch.optim when PyTorch
is importable. Then the contract: updates happen in place (same Parameter objects, same arrays,
not recorded), parameters without a gradient are skipped, zero_grad, and the errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dyngraph as dg
from dyngraph import nn

STEPS = 5
FLOAT64 = {"rtol": 1e-10, "atol": 1e-12}

SGD_SETTINGS = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.1},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.05, "momentum": 0.8, "weight_decay": 0.01, "dampening": 0.5},
]
ADAM_SETTINGS = [
    {},
    {"lr": 0.01},
    {"lr": 0.02, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1},
]


def _start() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 2)), rng.standard_normal(2)]


def _targets() -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.standard_normal((3, 2)), rng.standard_normal(2)]


def _gradient(p: np.ndarray, target: np.ndarray) -> np.ndarray:
    """d/dp of sum((p - target)^2 * (1 + p^2)): a loss whose gradient changes along the way."""
    return 2 * (p - target) * (1 + p**2) + (p - target) ** 2 * 2 * p


def _run_dyngraph(make_optimizer, steps: int = STEPS) -> list[np.ndarray]:
    params = [nn.Parameter(dg.tensor(a, dtype=dg.float64)) for a in _start()]
    targets = _targets()
    opt = make_optimizer(params)
    for _ in range(steps):
        loss = sum((((p - t) ** 2) * (1 + p**2)).sum() for p, t in zip(params, targets))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in params]


def _sgd_by_hand(lr, momentum=0.0, weight_decay=0.0, nesterov=False, dampening=0.0):
    params, buffers = _start(), [None, None]
    for _ in range(STEPS):
        for i, (p, t) in enumerate(zip(params, _targets())):
            g = _gradient(p, t) + weight_decay * p
            if momentum:
                if buffers[i] is None:
                    buffers[i] = g.copy()
                else:
                    buffers[i] = momentum * buffers[i] + (1 - dampening) * g
                g = g + momentum * buffers[i] if nesterov else buffers[i]
            params[i] = p - lr * g
    return params


def _adam_by_hand(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    beta1, beta2 = betas
    params = _start()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, STEPS + 1):
        for i, (p, target) in enumerate(zip(params, _targets())):
            g = _gradient(p, target) + weight_decay * p
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat = m[i] / (1 - beta1**t)
            v_hat = v[i] / (1 - beta2**t)
            params[i] = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


def _run_torch(torch, make_optimizer) -> list[np.ndarray]:
    params = [torch.from_numpy(a).requires_grad_(True) for a in _start()]
    targets = [torch.from_numpy(t) for t in _targets()]
    opt = make_optimizer(params)
    for _ in range(STEPS):
        loss = sum((((p - t) ** 2) * (1 + p**2)).sum() for p, t in zip(params, targets))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in params]


def _assert_close(mine, expected, **tolerance):
    for a, b in zip(mine, expected):
        np.testing.assert_allclose(a, b, **(tolerance or FLOAT64))


# ---------------------------------------------------------------------------- SGD


@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=str)
def test_sgd_matches_the_update_rule_by_hand(settings):
    mine = _run_dyngraph(lambda params: dg.optim.SGD(params, **settings))
    _assert_close(mine, _sgd_by_hand(**settings))
    assert not np.allclose(mine[0], _start()[0])  # it moved


@pytest.mark.torch
@pytest.mark.parametrize("settings", SGD_SETTINGS, ids=str)
def test_sgd_matches_torch(torch, settings):
    mine = _run_dyngraph(lambda params: dg.optim.SGD(params, **settings))
    theirs = _run_torch(torch, lambda params: torch.optim.SGD(params, **settings))
    _assert_close(mine, theirs)


def test_momentum_and_nesterov_change_the_steps():
    """The settings are not ignored: each one gives a different trajectory."""
    results = [_run_dyngraph(lambda p, s=s: dg.optim.SGD(p, **s)) for s in SGD_SETTINGS]
    for i in range(len(results)):
        for j in range(i + 1, len(results)):
            assert not np.allclose(results[i][0], results[j][0])


# ---------------------------------------------------------------------------- Adam


@pytest.mark.parametrize("settings", ADAM_SETTINGS, ids=str)
def test_adam_matches_the_update_rule_by_hand(settings):
    mine = _run_dyngraph(lambda params: dg.optim.Adam(params, **settings))
    _assert_close(mine, _adam_by_hand(**settings), rtol=1e-9, atol=1e-12)
    assert not np.allclose(mine[0], _start()[0])


@pytest.mark.torch
@pytest.mark.parametrize("settings", ADAM_SETTINGS, ids=str)
def test_adam_matches_torch(torch, settings):
    mine = _run_dyngraph(lambda params: dg.optim.Adam(params, **settings))
    theirs = _run_torch(torch, lambda params: torch.optim.Adam(params, **settings))
    _assert_close(mine, theirs, rtol=1e-9, atol=1e-12)


def test_adam_first_step_moves_each_weight_by_about_lr():
    """With bias correction the first step is lr * g / (|g| + eps): about lr per element."""
    p = nn.Parameter(dg.tensor([3.0, -0.001, 50.0], dtype=dg.float64))
    (p * p).sum().backward()
    dg.optim.Adam([p], lr=0.1).step()
    np.testing.assert_allclose(p.detach().numpy(), [2.9, 0.099, 49.9], rtol=1e-4)
    # ... exactly: lr * |g| / (|g| + eps), with |g| = 0.002 for the small weight
    assert math.isclose(float(p.detach().numpy()[1]), -0.001 + 0.1 * 0.002 / (0.002 + 1e-8),
                        rel_tol=1e-12)


@pytest.mark.torch
def test_adam_matches_torch_in_float32_on_a_model(torch):
    """A whole model, float32, several steps: the same weights as PyTorch, up to rounding."""
    dg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    theirs.load_state_dict({k: torch.tensor(v) for k, v in model.state_dict().items()})
    X, y = dg.data.moons(32, seed=0)
    opt = dg.optim.Adam(model.parameters(), lr=0.01)
    torch_opt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    for _ in range(10):
        opt.zero_grad()
        dg.nn.functional.cross_entropy(model(dg.tensor(X)), y).backward()
        opt.step()
        torch_opt.zero_grad()
        torch.nn.functional.cross_entropy(theirs(torch.from_numpy(X)),
                                          torch.from_numpy(y)).backward()
        torch_opt.step()
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(model.state_dict()[name], value.numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)


# ---------------------------------------------------------------------------- the contract


@pytest.mark.parametrize("make", [lambda p: dg.optim.SGD(p, lr=0.1, momentum=0.9),
                                  lambda p: dg.optim.Adam(p, lr=0.1)], ids=["SGD", "Adam"])
def test_step_updates_in_place_and_records_nothing(make):
    model = nn.Linear(2, 2)
    params = list(model.parameters())
    arrays = [p.array for p in params]
    before = [p.detach().numpy().copy() for p in params]
    opt = make(model.parameters())
    events = []
    model(dg.randn(3, 2)).sum().backward()
    with dg.events.subscribe(events.append):
        opt.step()
    assert list(model.parameters()) == params  # the same Parameter objects
    assert [p.array for p in model.parameters()] == arrays  # holding the same arrays
    assert all(not np.allclose(p.detach().numpy(), b) for p, b in zip(params, before))  # changed
    assert all(p.is_leaf and p.requires_grad and p.grad_fn is None for p in params)
    assert [e.kind for e in events if e.kind == "node_created"] == []  # nothing recorded
    assert all(p.version == 1 for p in params)  # one in-place update each
    assert dg.is_grad_enabled()


def test_parameters_without_a_gradient_are_skipped():
    used, unused = nn.Parameter(dg.ones(2)), nn.Parameter(dg.ones(2))
    opt = dg.optim.Adam([used, unused], lr=0.1)
    (used * 3).sum().backward()
    opt.step()
    assert unused.grad is None
    np.testing.assert_array_equal(unused.detach().numpy(), [1.0, 1.0])
    assert unused not in opt.state and used in opt.state
    assert not np.allclose(used.detach().numpy(), [1.0, 1.0])


def test_zero_grad_sets_every_gradient_to_none():
    params = [nn.Parameter(dg.ones(2)), nn.Parameter(dg.ones(3))]
    opt = dg.optim.SGD(params, lr=0.1)
    (params[0].sum() + params[1].sum()).backward()
    assert all(p.grad is not None for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_training_reduces_the_loss():
    dg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    X, y = dg.data.moons(64, noise=0.05, seed=0)
    opt = dg.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(60):
        loss = dg.nn.functional.cross_entropy(model(dg.tensor(X)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


EVERY_OPTIMIZER = [
    lambda p: dg.optim.SGD(p, lr=0.1, momentum=0.9), lambda p: dg.optim.Adam(p, lr=0.05),
    lambda p: dg.optim.AdamW(p, lr=0.05), lambda p: dg.optim.RMSprop(p, lr=0.01),
    lambda p: dg.optim.Adadelta(p, eps=1e-2), lambda p: dg.optim.Adagrad(p, lr=0.1),
    lambda p: dg.optim.NAdam(p, lr=0.05, weight_decay=0.01), lambda p: dg.optim.RAdam(p, lr=0.05),
    lambda p: dg.optim.Adamax(p, lr=0.05), lambda p: dg.optim.Rprop(p, lr=0.01),
    lambda p: dg.optim.ASGD(p, lr=0.05, t0=5),
    lambda p: dg.optim.LBFGS(p, lr=0.5, max_iter=3),
    lambda p: dg.optim.LBFGS(p, max_iter=3, line_search_fn="strong_wolfe")]


@pytest.mark.parametrize("make", EVERY_OPTIMIZER, ids=lambda make: make.__code__.co_names[-1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_optimizer_steps_with_a_closure_and_keeps_the_dtype(make, dtype):
    """step(closure) calls the closure with grad enabled and returns its loss; parameters keep
    their dtype (numpy 1.24 and 2.x promote Python numbers differently) and the loss falls."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((6, 3)).astype(dtype), rng.standard_normal(6).astype(dtype)
    w = nn.Parameter(dg.tensor(rng.standard_normal(3).astype(dtype)))
    optimizer = make([w])
    first_losses, calls = [], []

    def closure():
        assert dg.is_grad_enabled()
        optimizer.zero_grad()
        loss = ((dg.tensor(a) @ w - dg.tensor(b)) ** 2).mean()
        loss.backward()
        calls.append(loss)
        return loss

    for _ in range(15):
        calls.clear()
        returned = optimizer.step(closure)
        assert calls and returned is calls[0]  # the loss before the step (LBFGS's first call)
        assert w.dtype == dtype
        first_losses.append(returned.item())
    assert first_losses[-1] < 0.7 * first_losses[0]


def test_optimizer_errors_are_clear():
    w = dg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        dg.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        dg.optim.Adam(nn.ReLU().parameters())
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        dg.optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="single Tensor"):
        dg.optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        dg.optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        dg.optim.SGD([w, w], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        dg.optim.Adam([w], lr=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        dg.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        dg.optim.Adam([w], betas=(0.9, 1.0))


def test_optimizer_works_on_every_backend(backend):
    p = nn.Parameter(backend.tensor(np.array([1.0, -2.0]), dtype=dg.float32))
    opt = dg.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert p.device == backend.device
    np.testing.assert_allclose(p.detach().numpy(), [0.9, -1.9], rtol=1e-5)


# ---------------------------------------------------------------------------- bit for bit


def _one_line_steps(name, settings, params, grads):
    """The update rules as one expression per state, in numpy: dyngraph's steps (in place, SGD's
    without the (1 - 0) * g of no dampening) must give the same numbers, bit for bit."""
    lr = settings["lr"]
    state = [{} for _ in params]
    for t, step_grads in enumerate(grads, start=1):
        for i, g in enumerate(step_grads):
            p, s = params[i], state[i]
            if name == "SGD":
                s["buf"] = g.copy() if t == 1 else settings["momentum"] * s["buf"] + g
                params[i] = p - lr * s["buf"]
            elif name == "Adam":
                beta1, beta2 = 0.9, 0.999
                s["m"] = beta1 * s.get("m", 0 * p) + (1.0 - beta1) * g
                s["v"] = beta2 * s.get("v", 0 * p) + (1.0 - beta2) * (g * g)
                denominator = np.sqrt(s["v"]) / math.sqrt(1.0 - beta2**t) + 1e-8
                params[i] = p - lr / (1.0 - beta1**t) * (s["m"] / denominator)
            else:  # RMSprop
                s["v"] = 0.99 * s.get("v", 0 * p) + (1.0 - 0.99) * (g * g)
                params[i] = p - lr * (g / (np.sqrt(s["v"]) + 1e-8))
    return params


@pytest.mark.parametrize(("name", "settings"), [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                                ("Adam", {"lr": 0.01}), ("RMSprop", {"lr": 0.01})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_steps_give_the_one_line_formulas_bit_for_bit(name, settings, dtype):
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(shape).astype(dtype) for shape in [(4, 3), (3,)]]
    grads = [[rng.standard_normal(a.shape).astype(dtype) for a in start] for _ in range(STEPS)]
    params = [nn.Parameter(dg.tensor(a.copy())) for a in start]
    opt = getattr(dg.optim, name)(params, **settings)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = dg.tensor(g)
        opt.step()
    expected = _one_line_steps(name, settings, [a.copy() for a in start], grads)
    for p, e in zip(params, expected):
        assert p.dtype == dtype
        np.testing.assert_array_equal(p.detach().numpy(), e)


# ------------------------------------------------- LBFGS and CosineAnnealingLR (fresh programs)


def _lbfgs_trajectory(lib, settings, steps=3):
    """A small least-squares-plus-quartic problem stepped with a closure; the losses the
    closure saw, the parameters after each step, and the state LBFGS keeps."""
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((8, 3)), rng.standard_normal(8)
    w = lib.tensor(rng.standard_normal(3) * 0.1, requires_grad=True)
    c = lib.tensor(np.array([0.5]), requires_grad=True)
    optimizer = lib.optim.LBFGS([w, c], **settings)
    seen, after = [], []

    def closure():
        optimizer.zero_grad()
        r = lib.tensor(a) @ w + c - lib.tensor(b)
        loss = (r * r).mean() + (w ** 4).sum()
        loss.backward()
        seen.append(loss.item())
        return loss

    for _ in range(steps):
        first = optimizer.step(closure)
        after.append(np.concatenate([w.detach().numpy(), c.detach().numpy()]))
    state = optimizer.state[w]
    return seen, after, first.item(), (state["func_evals"], state["n_iter"])


@pytest.mark.torch
@pytest.mark.parametrize("settings", [{}, {"lr": 0.5, "max_iter": 4, "history_size": 2},
                                      {"lr": 0.8, "max_iter": 30, "tolerance_change": 1e-5},
                                      {"line_search_fn": "strong_wolfe", "max_iter": 5},
                                      {"line_search_fn": "strong_wolfe", "lr": 4.0,
                                       "max_iter": 8, "max_eval": 10, "history_size": 3}])
def test_lbfgs_takes_torchs_steps(torch, settings):
    mine = _lbfgs_trajectory(dg, settings)
    theirs = _lbfgs_trajectory(torch, settings)
    assert len(mine[0]) == len(theirs[0]) and mine[3] == theirs[3]   # as many evaluations
    np.testing.assert_allclose(mine[0], theirs[0], **FLOAT64)
    np.testing.assert_allclose(mine[1], theirs[1], **FLOAT64)
    assert mine[2] == pytest.approx(theirs[2], rel=1e-12)


def _line_search_trajectory(lib, loss_of, settings, steps=3):
    """LBFGS with the strong Wolfe line search on a curved problem (the losses the closure saw
    and the parameters after each step)."""
    w = lib.tensor(np.array([-1.5, 2.0, 0.5]), requires_grad=True)
    optimizer = lib.optim.LBFGS([w], line_search_fn="strong_wolfe", **settings)
    seen, after = [], []

    def closure():
        optimizer.zero_grad()
        loss = loss_of(w)
        loss.backward()
        seen.append(loss.item())
        return loss

    for _ in range(steps):
        optimizer.step(closure)
        after.append(w.detach().numpy().copy())
    return seen, after


def _rosenbrock(w):
    return ((1 - w[:-1]) ** 2).sum() + 100 * ((w[1:] - w[:-1] ** 2) ** 2).sum()


def _wavy(w):
    return (w * 3).sin().sum() + 0.1 * (w ** 2).sum()


@pytest.mark.torch
@pytest.mark.parametrize(("loss_of", "settings"), [
    (_rosenbrock, {"max_iter": 10}),                 # bracketing, then zooming in
    (_rosenbrock, {"lr": 3.0, "max_iter": 6}),       # the zoom's old low end becomes high
    (_wavy, {"max_iter": 4}),                        # a bracket where the slope turns uphill
    (_wavy, {"lr": 40.0, "max_iter": 6}),            # trial steps pushed off the bracket's ends
    (_wavy, {"lr": 1e-4, "max_iter": 3, "max_eval": 5}),  # out of evaluations while bracketing
], ids=["rosenbrock", "rosenbrock-lr3", "wavy", "wavy-lr40", "wavy-max-eval"])
def test_strong_wolfe_line_search_takes_torchs_steps(torch, loss_of, settings):
    mine = _line_search_trajectory(dg, loss_of, settings)
    theirs = _line_search_trajectory(torch, loss_of, settings)
    assert len(mine[0]) == len(theirs[0])  # as many evaluations, in the same places
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-9, atol=1e-10)


def test_lbfgs_reduces_the_loss_and_refuses_what_it_lacks():
    seen, _, _, _ = _lbfgs_trajectory(dg, {"lr": 0.5})
    assert seen[-1] < 0.5 * seen[0]
    with pytest.raises(ValueError, match="only 'strong_wolfe' is supported"):
        dg.optim.LBFGS([dg.zeros(2, requires_grad=True)], line_search_fn="armijo")
    w, v = dg.zeros(2, requires_grad=True), dg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        dg.optim.LBFGS([{"params": [w]}, {"params": [v]}])


@pytest.mark.torch
@pytest.mark.parametrize("settings", [{"T_max": 4}, {"T_max": 3, "eta_min": 0.01}])
def test_cosine_annealing_lr_as_torch(torch, settings):
    """Over three periods (down, up, down again), in PyTorch's chained form."""
    def lrs(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, **settings)
        seen = []
        for _ in range(3 * settings["T_max"] + 1):
            opt.step()
            seen.append(opt.param_groups[0]["lr"])
            sched.step()
        return seen + sched.get_last_lr()
    np.testing.assert_allclose(lrs(dg), lrs(torch), rtol=1e-15, atol=1e-17)
