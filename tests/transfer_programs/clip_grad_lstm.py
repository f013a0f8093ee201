"""Gradient clipping on an LSTM regressor: clip_grad_norm_ returns the norm before clipping."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(2, 8, num_layers=2, batch_first=True)
            self.out = nn.Linear(8, 1)

        def forward(self, x):
            output, (h_n, c_n) = self.lstm(x)
            return self.out(h_n[-1])

    rng = np.random.default_rng(8)
    x = torch.tensor(rng.standard_normal((6, 12, 2)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((6, 1)) * 5, dtype=torch.float32)
    model = same(Regressor())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    norms, losses = [], []
    for _ in range(6):
        loss = nn.MSELoss()(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5).item())
        optimizer.step()
        losses.append(loss.item())
    return {"norms": norms, "losses": losses, "out.weight": model.out.weight,
            "lstm.weight_ih_l1": model.lstm.weight_ih_l1}
