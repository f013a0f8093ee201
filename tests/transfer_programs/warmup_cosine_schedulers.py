"""The schedules of modern training scripts: linear warmup then cosine decay (SequentialLR),
CyclicLR, and the newer optimizers (NAdam, RAdam) on a small regression."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    rng = np.random.default_rng(11)
    X = torch.tensor(rng.standard_normal((32, 4)), dtype=torch.float32)
    y = torch.tensor(X.numpy() @ rng.standard_normal((4, 1)), dtype=torch.float32)
    results = {}
    for name in ("NAdam", "RAdam"):
        model = same(nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1)))
        optimizer = getattr(torch.optim, name)(model.parameters(), lr=0.05)
        warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=3)
        cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=9)
        scheduler = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine],
                                                          milestones=[3])
        losses, lrs = [], []
        for _ in range(12):
            loss = nn.functional.mse_loss(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            lrs.append(scheduler.get_last_lr()[0])
        results[f"{name}_losses"], results[f"{name}_lrs"] = losses, lrs
    model = same(nn.Linear(4, 1))
    sgd = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    cyclic = torch.optim.lr_scheduler.CyclicLR(sgd, base_lr=0.001, max_lr=0.05, step_size_up=4,
                                               mode="triangular2")
    cyclic_lrs = []
    for _ in range(12):
        loss = nn.functional.mse_loss(model(X), y)
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        cyclic.step()
        cyclic_lrs.append(cyclic.get_last_lr()[0])
    results["cyclic_lrs"] = cyclic_lrs
    results["cyclic_weight"] = model.weight
    return results
