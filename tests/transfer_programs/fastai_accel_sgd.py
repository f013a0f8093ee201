"""fast.ai course22p2's accelerated SGD (nbs/12_accel_sgd.ipynb) and initialisation
(nbs/11_initializing.ipynb): the SGD class with reg_step (p *= 1 - lr*wd) and opt_step
(p -= p.grad*lr) under torch.no_grad(), zero_grad with p.grad.data.zero_(); Momentum keeping
p.grad_avg on the parameter, RMSProp's p.sqr_avg, Adam's p.avg and p.sqr_avg with bias
correction; GeneralRelu (F.leaky_relu or F.relu, sub_, clamp_max_); init_weights with
init.kaiming_normal_(a=leak) through model.apply; the learning rate scheduled by
torch.optim.lr_scheduler.CosineAnnealingLR on a torch optimizer, read from
param_groups and get_last_lr."""

from functools import partial

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    init = torch.nn.init

    class SGD:
        def __init__(self, params, lr, wd=0.):
            params = list(params)
            self.params, self.lr, self.wd = params, lr, wd
            self.i = 0

        def step(self):
            with torch.no_grad():
                for p in self.params:
                    self.reg_step(p)
                    self.opt_step(p)
            self.i += 1

        def opt_step(self, p):
            p -= p.grad * self.lr

        def reg_step(self, p):
            if self.wd != 0:
                p *= 1 - self.lr * self.wd

        def zero_grad(self):
            for p in self.params:
                p.grad.data.zero_()

    class Momentum(SGD):
        def __init__(self, params, lr, wd=0., mom=0.9):
            super().__init__(params, lr=lr, wd=wd)
            self.mom = mom

        def opt_step(self, p):
            if not hasattr(p, 'grad_avg'):
                p.grad_avg = torch.zeros_like(p.grad)
            p.grad_avg = p.grad_avg * self.mom + p.grad * (1 - self.mom)
            p -= self.lr * p.grad_avg

    class RMSProp(SGD):
        def __init__(self, params, lr, wd=0., sqr_mom=0.99, eps=1e-5):
            super().__init__(params, lr=lr, wd=wd)
            self.sqr_mom, self.eps = sqr_mom, eps

        def opt_step(self, p):
            if not hasattr(p, 'sqr_avg'):
                p.sqr_avg = p.grad**2
            p.sqr_avg = p.sqr_avg * self.sqr_mom + p.grad**2 * (1 - self.sqr_mom)
            p -= self.lr * p.grad / (p.sqr_avg.sqrt() + self.eps)

    class Adam(SGD):
        def __init__(self, params, lr, wd=0., beta1=0.9, beta2=0.99, eps=1e-5):
            super().__init__(params, lr=lr, wd=wd)
            self.beta1, self.beta2, self.eps = beta1, beta2, eps

        def opt_step(self, p):
            if not hasattr(p, 'avg'):
                p.avg = torch.zeros_like(p.grad.data)
            if not hasattr(p, 'sqr_avg'):
                p.sqr_avg = torch.zeros_like(p.grad.data)
            p.avg = self.beta1 * p.avg + (1 - self.beta1) * p.grad
            unbias_avg = p.avg / (1 - (self.beta1**(self.i + 1)))
            p.sqr_avg = self.beta2 * p.sqr_avg + (1 - self.beta2) * (p.grad**2)
            unbias_sqr_avg = p.sqr_avg / (1 - (self.beta2**(self.i + 1)))
            p -= self.lr * unbias_avg / (unbias_sqr_avg + self.eps).sqrt()

    class GeneralRelu(nn.Module):
        def __init__(self, leak=None, sub=None, maxv=None):
            super().__init__()
            self.leak, self.sub, self.maxv = leak, sub, maxv

        def forward(self, x):
            x = F.leaky_relu(x, self.leak) if self.leak is not None else F.relu(x)
            if self.sub is not None:
                x -= self.sub
            if self.maxv is not None:
                x.clamp_max_(self.maxv)
            return x

    def init_weights(m, leaky=0.):
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
            init.kaiming_normal_(m.weight, a=leaky)

    act_gr = partial(GeneralRelu, leak=0.1, sub=0.4, maxv=2.)

    def get_model(act=nn.ReLU):
        return nn.Sequential(nn.Linear(6, 12), act(), nn.Linear(12, 12), act(), nn.Linear(12, 3))

    rng = np.random.default_rng(12)
    X = torch.tensor(rng.standard_normal((24, 6)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 3, 24))
    results = {}
    for name, opt_func in [("sgd", partial(SGD, wd=0.01)), ("momentum", partial(Momentum, wd=0.01)),
                           ("rmsprop", partial(RMSProp, wd=0.01)), ("adam", partial(Adam, wd=0.01))]:
        model = get_model(act_gr)
        model.apply(partial(init_weights, leaky=0.1))
        same(model)
        opt = opt_func(model.parameters(), lr=0.05)
        losses = []
        for xb, yb in zip(X.split(8), y.split(8)):
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        results[name + ".losses"] = losses
        results[name + ".w"] = model[0].weight
    results["momentum.grad_avg"] = model[0].weight.sqr_avg  # the last (Adam) model's state

    model = same(get_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    lrs = []
    for xb, yb in zip(X.split(4), y.split(4)):
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        lrs.append(opt.param_groups[0]['lr'])
        sched.step()
    results["cos.lrs"] = lrs
    results["cos.last"] = sched.get_last_lr()
    results["cos.w"] = model[2].weight
    return results
