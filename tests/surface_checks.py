"""The checks shared by the surface tests (test_learner_surface.py, test_fresh_surface.py): a
case is ``f(lib, F, x)``, written once against a PyTorch-like module ``lib`` and its functional
``F``, and run on dyngraph and on torch from the same numpy ``array``."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as tF

import dyngraph as dg
import dyngraph.nn.functional as dF


def run(lib, F, f, array, grad=True):
    """(x, f(x)) with x the array as ``lib``'s tensor."""
    x = lib.tensor(array, requires_grad=grad)
    return x, f(lib, F, x)


def assert_values_and_gradients_as_torch(f, array, rng, rtol):
    """Same shape, dtype and values as torch, and the same gradient of a random-weighted sum."""
    x, y = run(dg, dF, f, array)
    tx, ty = run(torch, tF, f, array)
    assert y.shape == tuple(ty.shape) and str(y.dtype) == str(ty.dtype).replace("torch.", "")
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=rtol, atol=1e-12)
    weights = rng.standard_normal(y.shape)
    (y * dg.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=1e-12)


def assert_second_derivatives_as_torch(f, array):
    """d/dx |g|^2 with g = d(sum y^2)/dx built with create_graph=True, as torch's."""
    def second(lib, F):
        x = lib.tensor(array, requires_grad=True)
        y = f(lib, F, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return h.detach().numpy()
    np.testing.assert_allclose(second(dg, dF), second(torch, tF), rtol=1e-6, atol=1e-10)
