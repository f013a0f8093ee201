"""makemore part 1 (Karpathy): the counted bigram model and the same model as a one-layer
net: N[ix1, ix2] += 1, P = (N + 1).float() / sum(keepdim), the negative log likelihood; then
F.one_hot inputs, W, softmax by hand, gradient descent with W.data += -lr * W.grad."""


def program(torch, same):
    F = torch.nn.functional

    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "ella"]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    n = len(stoi)
    N = torch.zeros((n, n), dtype=torch.int32)
    xs, ys = [], []
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[stoi[ch1], stoi[ch2]] += 1
            xs.append(stoi[ch1])
            ys.append(stoi[ch2])
    P = (N + 1).float()
    P /= P.sum(1, keepdim=True)
    log_likelihood = torch.tensor(0.0)
    for x, y in zip(xs, ys):
        log_likelihood += torch.log(P[x, y])
    nll = -log_likelihood / len(xs)
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    import numpy as np
    W = torch.tensor(np.random.default_rng(2147483647).standard_normal((n, n)),
                     dtype=torch.float32, requires_grad=True)
    losses = []
    for _ in range(20):
        xenc = F.one_hot(xs, num_classes=n).float()
        counts = (xenc @ W).exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(len(ys)), ys].log().mean() + 0.01 * (W ** 2).mean()
        W.grad = None
        loss.backward()
        W.data += -10 * W.grad
        losses.append(loss.item())
    return {"N": N, "nll": nll, "losses": losses, "W": W}
