"""makemore part 5, "building a WaveNet" (karpathy/nn-zero-to-hero,
lectures/makemore/makemore_part5_cnn1.ipynb): the lecture's own Linear, BatchNorm1d
(x.ndim, dim=(0, 1), running buffers updated under torch.no_grad(), self.training),
Tanh, Embedding, FlattenConsecutive (x.view(B, T//self.n, C*self.n), squeeze(1)) and
Sequential classes; last layer made less confident (layers[-1].weight *= 0.1), parameters
with p.requires_grad = True, the training loop with torch.randint replaced by seeded numpy
batches, F.cross_entropy, p.grad = None, p.data += -lr * p.grad, and the split loss under
@torch.no_grad() with the layers' training flags off; sampling with torch.multinomial (its
draw compared by shape only)."""

import numpy as np


def program(torch, same):
    F = torch.nn.functional
    rng = np.random.default_rng(2147483647 % 1000)

    def randn(*shape):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.float32)

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = randn(fan_in, fan_out) / fan_in**0.5
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            if self.training:
                if x.ndim == 2:
                    dim = 0
                elif x.ndim == 3:
                    dim = (0, 1)
                xmean = x.mean(dim, keepdim=True)
                xvar = x.var(dim, keepdim=True)
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = randn(num_embeddings, embedding_dim)

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    vocab_size, block_size, n_embd, n_hidden = 27, 8, 4, 12
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = model.parameters()
    n_params = sum(p.nelement() for p in parameters)
    for p in parameters:
        p.requires_grad = True

    Xtr = torch.tensor(rng.integers(0, vocab_size, (40, block_size)))
    Ytr = torch.tensor(rng.integers(0, vocab_size, 40))
    lossi = []
    for i in range(4):
        ix = torch.tensor(rng.integers(0, Xtr.shape[0], 8))
        Xb, Yb = Xtr[ix], Ytr[ix]
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 150000 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
    shapes = [(layer.__class__.__name__, tuple(layer.out.shape)) for layer in model.layers]

    for layer in model.layers:
        layer.training = False

    @torch.no_grad()
    def split_loss(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        return loss.item()

    val = split_loss(Xtr[:10], Ytr[:10])
    context = [0] * block_size
    logits = model(torch.tensor([context]))
    probs = F.softmax(logits, dim=1)
    ix = torch.multinomial(probs, num_samples=1)
    return {"n_params": n_params, "lossi": lossi, "shapes": [str(s) for s in shapes],
            "val": val, "probs": probs, "sample_shape": list(ix.shape),
            "running_var": model.layers[3].running_var, "emb": model.layers[0].weight}
