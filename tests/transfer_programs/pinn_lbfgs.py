"""A physics-informed net (the PINN tutorials): u(x) with u'' = -u on [0, pi], u(0) = 0,
u'(0) = 1, its derivatives taken with autograd.grad(create_graph=True), fitted by Adam and then
LBFGS with the strong Wolfe line search."""

import math

import numpy as np


def program(torch, same):
    nn = torch.nn
    model = same(nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                               nn.Linear(16, 1)))
    x = torch.tensor(np.linspace(0.0, math.pi, 24).reshape(-1, 1), dtype=torch.float32,
                     requires_grad=True)
    x0 = torch.zeros(1, 1, requires_grad=True)

    def loss_fn():
        u = model(x)
        (du,) = torch.autograd.grad(u.sum(), x, create_graph=True)
        (d2u,) = torch.autograd.grad(du.sum(), x, create_graph=True)
        u0 = model(x0)
        (du0,) = torch.autograd.grad(u0.sum(), x0, create_graph=True)
        return ((d2u + u) ** 2).mean() + u0.pow(2).sum() + (du0 - 1).pow(2).sum()

    adam = torch.optim.Adam(model.parameters(), lr=1e-2)
    adam_losses = []
    for _ in range(5):
        adam.zero_grad()
        loss = loss_fn()
        loss.backward()
        adam.step()
        adam_losses.append(loss.item())

    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=6,
                              line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    first = lbfgs.step(closure)
    return {"adam": adam_losses, "lbfgs_first": first.item(), "after": loss_fn().item(),
            "weight": model[0].weight}
