"""makemore part 2 (Bengio et al. 2003): a character-level MLP on a tiny word list, with a
hand-made embedding table C[X], F.cross_entropy and manual SGD through .data."""

import numpy as np

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn"]


def program(torch, same):
    F = torch.nn.functional
    chars = sorted(set("".join(WORDS)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    block_size = 3
    X, Y = [], []
    for w in WORDS:
        context = [0] * block_size
        for ch in w + ".":
            X.append(context)
            Y.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    X, Y = torch.tensor(X), torch.tensor(Y)
    vocab = len(stoi)
    rng = np.random.default_rng(2147483647)
    C = torch.tensor(rng.standard_normal((vocab, 2)), dtype=torch.float32)
    W1 = torch.tensor(rng.standard_normal((6, 50)) * 0.3, dtype=torch.float32)
    b1 = torch.tensor(rng.standard_normal(50) * 0.1, dtype=torch.float32)
    W2 = torch.tensor(rng.standard_normal((50, vocab)) * 0.1, dtype=torch.float32)
    b2 = torch.tensor(np.zeros(vocab), dtype=torch.float32)
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    losses = []
    for i in range(60):
        emb = C[X]
        h = torch.tanh(emb.view(-1, 6) @ W1 + b1)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Y)
        losses.append(loss.item())
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 40 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
    counts = logits.exp()
    prob = counts / counts.sum(1, keepdims=True)
    return {"losses": losses, "C": C, "W2": W2, "prob_row0": prob[0],
            "predicted": logits.argmax(dim=1)}
