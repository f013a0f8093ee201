""""Learning PyTorch with examples", part 4: the fit with torch.optim.RMSprop."""

import math


def program(torch, same):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = same(torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for t in range(300):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 30 == 29:
            losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    state = model.state_dict()
    return {"losses": losses, "weight": state["0.weight"], "bias": state["0.bias"]}
