"""d2l's from-scratch chapters (d2l-en, PyTorch tab): batch normalization
(chapter_convolutional-modern/batch-norm.md: batch_norm with torch.is_grad_enabled(),
X.mean(dim=(0, 2, 3), keepdim=True), the moving averages, the BatchNorm module keeping
moving_mean as a plain tensor moved with .to(X.device)), dropout_layer
(chapter_multilayer-perceptrons/dropout.md: torch.zeros_like, (torch.rand(X.shape) > dropout)
.float(); p = 0 and 1 so that no draw decides), the l2_penalty of weight decay
(torch.sum(w.pow(2)) / 2), and the GRU from scratch (chapter_recurrent-modern/gru.md:
nn.Parameter(torch.randn(*shape) * sigma) replaced by seeded numpy weights, torch.sigmoid,
torch.tanh, @, torch.stack(outputs), F.one_hot(inputs.T, vocab_size).type(torch.float32))
with d2l's clip_gradients (torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params)),
p.grad[:] *= theta / norm)."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(23)

    def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
        if not torch.is_grad_enabled():
            X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
        else:
            assert len(X.shape) in (2, 4)
            if len(X.shape) == 2:
                mean = X.mean(dim=0)
                var = ((X - mean) ** 2).mean(dim=0)
            else:
                mean = X.mean(dim=(0, 2, 3), keepdim=True)
                var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
            X_hat = (X - mean) / torch.sqrt(var + eps)
            moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
            moving_var = (1.0 - momentum) * moving_var + momentum * var
        Y = gamma * X_hat + beta
        return Y, moving_mean.data, moving_var.data

    class BatchNorm(nn.Module):
        def __init__(self, num_features, num_dims):
            super().__init__()
            if num_dims == 2:
                shape = (1, num_features)
            else:
                shape = (1, num_features, 1, 1)
            self.gamma = nn.Parameter(torch.ones(shape))
            self.beta = nn.Parameter(torch.zeros(shape))
            self.moving_mean = torch.zeros(shape)
            self.moving_var = torch.ones(shape)

        def forward(self, X):
            if self.moving_mean.device != X.device:
                self.moving_mean = self.moving_mean.to(X.device)
                self.moving_var = self.moving_var.to(X.device)
            Y, self.moving_mean, self.moving_var = batch_norm(
                X, self.gamma, self.beta, self.moving_mean,
                self.moving_var, eps=1e-5, momentum=0.1)
            return Y

    net = nn.Sequential(nn.Conv2d(1, 3, kernel_size=3), BatchNorm(3, num_dims=4), nn.Sigmoid(),
                        nn.Flatten(), nn.Linear(12, 5), BatchNorm(5, num_dims=2), nn.Sigmoid(),
                        nn.Linear(5, 2))
    same(net)
    X = torch.tensor(rng.standard_normal((6, 1, 4, 4)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 2, 6))
    trainer = torch.optim.SGD(net.parameters(), lr=0.5)
    bn_losses = []
    for _ in range(3):
        loss = nn.CrossEntropyLoss()(net(X), y)
        trainer.zero_grad()
        loss.backward()
        trainer.step()
        bn_losses.append(loss.item())
    with torch.no_grad():
        eval_out = net(X)

    def dropout_layer(X, dropout):
        assert 0 <= dropout <= 1
        if dropout == 1:
            return torch.zeros_like(X)
        mask = (torch.rand(X.shape) > dropout).float()
        return mask * X / (1.0 - dropout)

    Xd = torch.arange(16, dtype=torch.float32).reshape((2, 8))
    dropped0, dropped1 = dropout_layer(Xd, 0), dropout_layer(Xd, 1)

    def l2_penalty(w):
        return torch.sum(w.pow(2)) / 2

    w = torch.tensor(rng.standard_normal((4, 1)), dtype=torch.float32, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    Xw = torch.tensor(rng.standard_normal((10, 4)), dtype=torch.float32)
    yw = torch.tensor(rng.standard_normal((10, 1)), dtype=torch.float32)
    for _ in range(3):
        l = ((torch.matmul(Xw, w) + b - yw) ** 2 / 2).mean() + 3 * l2_penalty(w)
        l.backward()
        with torch.no_grad():
            for param in [w, b]:
                param -= 0.1 * param.grad
                param.grad.zero_()

    vocab_size, num_hiddens, sigma = 6, 5, 0.01

    def init_weight(*shape):
        return nn.Parameter(torch.tensor(rng.standard_normal(shape) * sigma, dtype=torch.float32))

    def triple():
        return (init_weight(vocab_size, num_hiddens), init_weight(num_hiddens, num_hiddens),
                nn.Parameter(torch.zeros(num_hiddens)))

    W_xz, W_hz, b_z = triple()
    W_xr, W_hr, b_r = triple()
    W_xh, W_hh, b_h = triple()
    W_hq = init_weight(num_hiddens, vocab_size)
    b_q = nn.Parameter(torch.zeros(vocab_size))
    params = [W_xz, W_hz, b_z, W_xr, W_hr, b_r, W_xh, W_hh, b_h, W_hq, b_q]

    def gru_forward(inputs, H=None):
        if H is None:
            H = torch.zeros((inputs.shape[1], num_hiddens), device=inputs.device)
        outputs = []
        for X in inputs:
            Z = torch.sigmoid(torch.matmul(X, W_xz) + torch.matmul(H, W_hz) + b_z)
            R = torch.sigmoid(torch.matmul(X, W_xr) + torch.matmul(H, W_hr) + b_r)
            H_tilde = torch.tanh(torch.matmul(X, W_xh) + torch.matmul(R * H, W_hh) + b_h)
            H = Z * H + (1 - Z) * H_tilde
            outputs.append(H)
        return outputs, H

    def clip_gradients(grad_clip_val, params):
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > grad_clip_val:
            for param in params:
                param.grad[:] *= grad_clip_val / norm

    tokens = torch.tensor(rng.integers(0, vocab_size, (3, 7)))
    gru_losses = []
    for _ in range(3):
        inputs = F.one_hot(tokens[:, :-1].T, vocab_size).type(torch.float32)
        outputs, _ = gru_forward(inputs)
        outputs = torch.stack(outputs, 1)
        logits = torch.matmul(outputs, W_hq) + b_q
        l = F.cross_entropy(logits.reshape(-1, vocab_size), tokens[:, 1:].reshape(-1))
        l.backward()
        clip_gradients(0.01, params)
        with torch.no_grad():
            for p in params:
                p -= 1.0 * p.grad
                p.grad.zero_()
        gru_losses.append(l.item())
    return {"bn_losses": bn_losses, "eval_out": eval_out, "moving_mean": net[1].moving_mean,
            "moving_var": net[5].moving_var, "gamma": net[1].gamma,
            "dropped0": dropped0, "dropped1": dropped1, "w": w, "b": b,
            "gru_losses": gru_losses, "W_hz": W_hz, "b_q": b_q}
