"""d2l's concise MLP (chapter_multilayer-perceptrons/mlp-implementation.md): nn.Flatten and
nn.LazyLinear layers, shapes inferred by a dry run, then SGD on minibatches from a
DataLoader over a TensorDataset, and d2l's accuracy."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    rng = np.random.default_rng(4)
    X = torch.tensor(rng.random((24, 1, 6, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 24))
    net = nn.Sequential(nn.Flatten(), nn.LazyLinear(16), nn.ReLU(), nn.LazyLinear(3))
    net(X[:1])  # the dry run: the lazy layers learn their input size
    same(net)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=8)
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    loss = nn.CrossEntropyLoss(reduction="none")
    losses = []
    for _ in range(3):
        for Xb, yb in loader:
            trainer.zero_grad()
            l = loss(net(Xb), yb)
            l.mean().backward()
            trainer.step()
            losses.append(l.mean().item())
    accuracy = (net(X).argmax(axis=1).type(y.dtype) == y).float().mean()
    return {"losses": losses, "accuracy": accuracy, "types": [type(m).__name__ for m in net],
            "w": net[1].weight}
