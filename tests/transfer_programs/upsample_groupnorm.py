"""fast.ai course22p2's diffusion U-Net pieces (26_diffusion_unet): GroupNorm, SiLU,
nn.Upsample(scale_factor=2) and a 3x3 conv, a resblock's pre-activation order, F.pad to
match sizes, smooth L1 and MSE losses, AdamW."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional

    def pre_conv(ni, nf, ks=3):
        return nn.Sequential(nn.GroupNorm(2, ni), nn.SiLU(), nn.Conv2d(ni, nf, ks, padding=ks // 2))

    class UpBlock(nn.Module):
        def __init__(self, ni, nf):
            super().__init__()
            self.up = nn.Sequential(nn.Upsample(scale_factor=2.0), nn.Conv2d(ni, nf, 3, padding=1))
            self.conv = pre_conv(nf, nf)

        def forward(self, x):
            x = self.up(x)
            return x + self.conv(x)

    model = same(nn.Sequential(pre_conv(4, 4), UpBlock(4, 2)))
    rng = np.random.default_rng(14)
    x = torch.tensor(rng.standard_normal((2, 4, 3, 3)), dtype=torch.float32)
    target = torch.tensor(rng.standard_normal((2, 2, 7, 7)), dtype=torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        out = F.pad(model(x), (0, 1, 0, 1), mode="replicate")
        loss = F.mse_loss(out, target) + F.smooth_l1_loss(out, target, beta=0.5)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "out": out, "gn.weight": model[0][0].weight}
