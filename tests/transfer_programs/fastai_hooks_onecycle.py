"""fast.ai course22p2 (10_activations, 12_accel_sgd): activation statistics gathered with
register_forward_hook (mean and std of each layer's output, the hooks removed afterwards),
kaiming_normal_ init, and training with OneCycleLR stepped per batch."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional

    def conv(ni, nf, ks=3, act=True):
        layer = nn.Conv2d(ni, nf, stride=2, kernel_size=ks, padding=ks // 2)
        return nn.Sequential(layer, nn.ReLU()) if act else layer

    model = nn.Sequential(conv(1, 4), conv(4, 8), conv(8, 4, act=False), nn.Flatten())
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight)
    same(model)
    act_means = [[] for _ in model]
    act_stds = [[] for _ in model]

    def append_stats(i, mod, inp, outp):
        act_means[i].append(outp.data.mean().item())
        act_stds[i].append(outp.data.std().item())

    from functools import partial
    hooks = [m.register_forward_hook(partial(append_stats, i)) for i, m in enumerate(model)]
    rng = np.random.default_rng(10)
    X = torch.tensor(rng.standard_normal((16, 1, 8, 8)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 4, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.3, total_steps=8)
    lrs = []
    for xb, yb in zip(X.split(4), y.split(4)):
        for _ in range(2):
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            lrs.append(sched.get_last_lr()[0])
            sched.step()
    for h in hooks:
        h.remove()
    model(X)  # no more statistics
    return {"means": act_means, "stds": act_stds, "lrs": lrs, "w": model[1][0].weight}
