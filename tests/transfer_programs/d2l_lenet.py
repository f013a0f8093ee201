"""d2l's LeNet (chapter_convolutional-neural-networks/lenet.md): LazyConv2d with padding,
Sigmoid, AvgPool2d, Flatten, LazyLinear; initialised with xavier_uniform_ through
net.apply, trained with SGD on random 28x28 images."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    net = nn.Sequential(
        nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.LazyLinear(12), nn.Sigmoid(),
        nn.LazyLinear(10))
    rng = np.random.default_rng(6)
    X = torch.tensor(rng.random((8, 1, 28, 28)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 10, 8))
    shapes, X_probe = [], X
    for layer in net:  # d2l's layer_summary: the dry run, layer by layer
        X_probe = layer(X_probe)
        shapes.append(f"{type(layer).__name__} {tuple(X_probe.shape)}")
    same(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.9)
    losses = []
    for _ in range(4):
        loss = nn.functional.cross_entropy(net(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"shapes": shapes, "losses": losses, "conv1.grad": net[0].weight.grad}
