"""A learning-rate schedule: SGD with StepLR, get_last_lr() each epoch."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    rng = np.random.default_rng(7)
    X = torch.tensor(rng.standard_normal((20, 3)), dtype=torch.float32)
    y = torch.tensor(X.numpy() @ np.array([[1.0], [-2.0], [0.5]]), dtype=torch.float32)
    model = same(nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    lrs, losses = [], []
    for _ in range(9):
        loss = nn.functional.mse_loss(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        losses.append(loss.item())
    return {"lrs": lrs, "losses": losses, "weight": model.weight}
