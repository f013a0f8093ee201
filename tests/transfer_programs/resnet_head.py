"""A d2l/fast.ai residual block and head: Conv2d + BatchNorm2d + ReLU twice with a 1x1
shortcut, AdaptiveAvgPool2d((1, 1)), Flatten, Linear; train() then eval() (running stats),
Adam with weight decay."""

import numpy as np


def program(torch, same):
    nn, F = torch.nn, torch.nn.functional

    class Residual(nn.Module):
        def __init__(self, channels, strides=1):
            super().__init__()
            self.conv1 = nn.Conv2d(3, channels, 3, padding=1, stride=strides)
            self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
            self.conv3 = nn.Conv2d(3, channels, 1, stride=strides)
            self.bn1 = nn.BatchNorm2d(channels)
            self.bn2 = nn.BatchNorm2d(channels)

        def forward(self, X):
            Y = F.relu(self.bn1(self.conv1(X)))
            Y = self.bn2(self.conv2(Y))
            return F.relu(Y + self.conv3(X))

    net = same(nn.Sequential(Residual(4, strides=2), nn.AdaptiveAvgPool2d((1, 1)),
                             nn.Flatten(), nn.Linear(4, 5)))
    rng = np.random.default_rng(8)
    X = torch.tensor(rng.standard_normal((6, 3, 8, 8)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 5, 6))
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=1e-4)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(net(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    net.eval()
    with torch.no_grad():
        evaluated = net(X)
    return {"losses": losses, "eval": evaluated, "running_mean": net[0].bn1.running_mean}
