"""The autograd tutorial's first steps: requires_grad, backward, .grad, a vector-Jacobian
product, retain_grad, no_grad and detach."""

import numpy as np


def program(torch, same):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    y.retain_grad()
    z = y * y * 3
    out = z.mean()
    out.backward()
    results = {"out": out.item(), "x.grad": x.grad, "y.grad": y.grad,
               "y.requires_grad": y.requires_grad, "y.is_leaf": y.is_leaf}

    a = torch.tensor(np.array([0.5, -1.0, 2.0], dtype=np.float32), requires_grad=True)
    b = a * 2
    for _ in range(3):
        b = b * b.abs().sqrt()
    v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float32)
    b.backward(v)  # a vector-Jacobian product: b is not a scalar
    results["a.grad"] = a.grad

    with torch.no_grad():
        results["no_grad.requires_grad"] = (a ** 2).requires_grad
    detached = a.detach()
    results["detached.requires_grad"] = detached.requires_grad
    results["sum_dim"] = (x * 2).sum(dim=1, keepdim=True)
    return results
