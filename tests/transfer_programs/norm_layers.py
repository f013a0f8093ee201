"""BatchNorm1d and LayerNorm inside MLPs: train (batch statistics, running averages kept as
buffers), then eval (running statistics); the state_dict carries the buffers."""

import numpy as np


def program(torch, same):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(6)
    X = torch.tensor(rng.normal(2.0, 3.0, (32, 4)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((32, 1)), dtype=torch.float32)
    bn_model = same(nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.Tanh(),
                                  nn.Linear(16, 1)))
    ln_model = same(nn.Sequential(nn.Linear(4, 16), nn.LayerNorm(16), nn.GELU(),
                                  nn.Linear(16, 1)))
    params = list(bn_model.parameters()) + list(ln_model.parameters())
    optimizer = torch.optim.SGD(params, lr=0.05)
    losses = []
    for step in range(8):
        batch = slice(8 * (step % 4), 8 * (step % 4) + 8)
        loss = F.mse_loss(bn_model(X[batch]), y[batch]) + F.mse_loss(ln_model(X[batch]),
                                                                      y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    bn_model.eval()
    ln_model.eval()
    with torch.no_grad():
        eval_out = bn_model(X[:5]) + ln_model(X[:5])
    state = bn_model.state_dict()
    return {"losses": losses, "eval_out": eval_out, "running_mean": state["1.running_mean"],
            "running_var": state["1.running_var"],
            "num_batches_tracked": state["1.num_batches_tracked"],
            "layernorm.weight": ln_model[1].weight}
