"""pytorch/examples regression/main.py: fit a degree-4 polynomial with one nn.Linear.
make_features with x.unsqueeze(1) and torch.cat([x ** i ...], 1), f(x) = x.mm(W_target) +
b_target.item(), poly_desc formatting 0-d tensors with '{:+.2f} x^{} '.format(w, i + 1)
while iterating over fc.weight.view(-1), get_batch, F.smooth_l1_loss, output.item(),
param.data.add_(-0.1 * param.grad) and the count(1) loop stopped at a loss threshold (or a
step budget here); the random draws (torch.randn) replaced by numpy's."""

from itertools import count

import numpy as np


def program(torch, same):
    F = torch.nn.functional
    rng = np.random.default_rng(71)
    POLY_DEGREE = 4
    W_target = torch.tensor(rng.standard_normal((POLY_DEGREE, 1)), dtype=torch.float32) * 5
    b_target = torch.tensor(rng.standard_normal(1), dtype=torch.float32) * 5

    def make_features(x):
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        """Creates a string description of a polynomial."""
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result

    def get_batch(batch_size=32):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.tensor(rng.standard_normal(batch_size) * 0.5, dtype=torch.float32)
        x = make_features(random)
        y = f(x)
        return x, y

    fc = same(torch.nn.Linear(W_target.size(0), 1))
    losses = []
    for batch_idx in count(1):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        losses.append(loss)
        if loss < 1e-3 or batch_idx == 25:
            break
    return {"losses": losses, "steps": batch_idx,
            "learned": poly_desc(fc.weight.view(-1), fc.bias),
            "actual": poly_desc(W_target.view(-1), b_target), "weight": fc.weight}
