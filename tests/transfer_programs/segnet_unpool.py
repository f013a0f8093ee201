"""A SegNet-style encoder-decoder: MaxPool2d(return_indices=True) remembers where each maximum
was and MaxUnpool2d puts the decoder's values back there; InstanceNorm2d and ReflectionPad2d
as in the style-transfer networks."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    class SegNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(1, 3, 3),
                                     nn.InstanceNorm2d(3, affine=True), nn.ReLU())
            self.pool = nn.MaxPool2d(2, return_indices=True)
            self.unpool = nn.MaxUnpool2d(2)
            self.dec = nn.Sequential(nn.ZeroPad2d(1), nn.Conv2d(3, 2, 3))

        def forward(self, x):
            h = self.enc(x)
            pooled, where = self.pool(h)
            return self.dec(self.unpool(pooled, where, output_size=h.shape)), where

    model = same(SegNet())
    rng = np.random.default_rng(9)
    x = torch.tensor(rng.standard_normal((2, 1, 6, 6)), dtype=torch.float32)
    target = torch.tensor(rng.integers(0, 2, (2, 6, 6)), dtype=torch.long)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(4):
        logits, where = model(x)
        loss = nn.functional.cross_entropy(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "indices": where, "norm_weight": model.enc[2].weight,
            "conv_grad": model.enc[1].weight.grad}
