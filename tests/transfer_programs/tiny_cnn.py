"""A small CNN on 8x8 images of bars (horizontal vs vertical): Conv2d + ReLU + MaxPool2d +
Flatten + Linear, SGD with momentum."""

import numpy as np


def bars(n, rng):
    images = rng.normal(0, 0.1, (n, 1, 8, 8))
    labels = rng.integers(0, 2, n)
    for image, label, where in zip(images, labels, rng.integers(1, 7, n)):
        if label:
            image[0, :, where] += 1.0
        else:
            image[0, where, :] += 1.0
    return images, labels


def program(torch, same):
    nn, F = torch.nn, torch.nn.functional
    images, labels = bars(32, np.random.default_rng(5))
    x = torch.tensor(images, dtype=torch.float32)
    y = torch.tensor(labels)
    model = same(nn.Sequential(
        nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 8, kernel_size=3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 2 * 2, 2),
    ))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(15):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "conv1.weight.grad": model[0].weight.grad,
            "conv2.weight": model[3].weight}
