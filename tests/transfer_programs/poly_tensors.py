""""Learning PyTorch with examples", part 1: fit y = sin(x) with a third-order polynomial,
gradients written by hand (tensors only, no autograd)."""

import math

import numpy as np


def program(torch, same):
    dtype = torch.float32
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    a, b, c, d = (torch.tensor(v, dtype=dtype) for v in np.random.default_rng(0).standard_normal(4))
    learning_rate = 1e-6
    losses = []
    for t in range(200):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 20 == 19:
            losses.append(loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    return {"losses": losses, "coefficients": [a.item(), b.item(), c.item(), d.item()]}
