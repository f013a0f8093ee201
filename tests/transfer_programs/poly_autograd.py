""""Learning PyTorch with examples", part 2: the same fit with autograd; the update under
no_grad, the gradients reset to None."""

import math

import numpy as np


def program(torch, same):
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    start = np.random.default_rng(0).standard_normal(4)
    a, b, c, d = (torch.tensor(v, dtype=dtype, requires_grad=True) for v in start)
    learning_rate = 1e-6
    losses = []
    for t in range(200):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 20 == 19:
            losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return {"losses": losses, "coefficients": [a.item(), b.item(), c.item(), d.item()]}
