"""An MLP classifier on two interleaved spirals: nn.Sequential, nn.CrossEntropyLoss, Adam,
accuracy with argmax(dim=1)."""

import numpy as np


def spirals(n, rng):
    t = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi
    labels = rng.integers(0, 2, n)
    radius = t / (3 * np.pi)
    angle = t + np.pi * labels
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
    return points + rng.normal(0, 0.02, points.shape), labels


def program(torch, same):
    nn = torch.nn
    points, labels = spirals(128, np.random.default_rng(4))
    X = torch.tensor(points, dtype=torch.float32)
    y = torch.tensor(labels)
    model = same(nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                               nn.Linear(32, 2)))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses, accuracies = [], []
    for _ in range(40):
        logits = model(X)
        loss = criterion(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        accuracies.append((logits.argmax(dim=1) == y).float().mean().item())
    return {"losses": losses, "accuracies": accuracies, "last layer": model[4].weight}
