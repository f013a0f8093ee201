"""dg.amp (issue 37, done-when 4): nanoGPT's GradScaler calls run on the CPU, and an enabled
GradScaler moves its scale and skips steps as PyTorch's does; autocast only when disabled."""

from __future__ import annotations

import numpy as np
import pytest

import dyngraph as dg


def _scaled_steps(lib, scaler):
    """Five SGD steps through the scaler; the third has an infinite gradient."""
    w = lib.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.1)
    scales, weights = [], []
    for step in range(5):
        loss = (w * w).sum() * (float("inf") if step == 2 else 1.0)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        lib.nn.utils.clip_grad_norm_([w], 10.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        scales.append(scaler.get_scale())
        weights.append(w.detach().numpy().copy())
    return scales, np.array(weights)


@pytest.mark.torch
def test_an_enabled_grad_scaler_scales_skips_and_grows_as_torch(torch):
    settings = {"init_scale": 8.0, "growth_interval": 2}
    with np.errstate(invalid="ignore"):  # inf * 0 in the step with an infinite loss, on purpose
        mine = _scaled_steps(dg, dg.amp.GradScaler("cpu", **settings))
    theirs = _scaled_steps(torch, torch.amp.GradScaler("cpu", **settings))
    assert mine[0] == theirs[0] == [8.0, 16.0, 8.0, 8.0, 16.0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)


def test_a_disabled_grad_scaler_passes_through_in_both_spellings():
    for scaler in (dg.amp.GradScaler(enabled=False), dg.cuda.amp.GradScaler(enabled=False)):
        w = dg.tensor([1.0, 2.0], requires_grad=True)
        optimizer = dg.optim.SGD([w], lr=0.5)
        loss = (w * w).sum()
        assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
        loss.backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        assert w.tolist() == [0.0, 0.0] and not scaler.is_enabled()


def test_unscale_twice_before_update_is_refused_and_autocast_only_disabled():
    scaler = dg.amp.GradScaler()
    w = dg.tensor([1.0], requires_grad=True)
    optimizer = dg.optim.SGD([w], lr=0.1)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(optimizer)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(optimizer)
    with dg.autocast("cpu", enabled=False):
        assert (w * 2).dtype == dg.float32
    with pytest.raises(NotImplementedError, match="nullcontext"):
        dg.amp.autocast("cpu", dtype=dg.float32)
