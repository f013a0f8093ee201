""""Learning PyTorch with examples", part 3: the fit as nn.Sequential(Linear, Flatten) with
nn.MSELoss(reduction="sum"), parameters updated by hand."""

import math


def program(torch, same):
    x = torch.linspace(-math.pi, math.pi, 2000)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = same(torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    losses = []
    for t in range(200):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 20 == 19:
            losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    return {"losses": losses, "bias": linear_layer.bias, "weight": linear_layer.weight}
