"""makemore part 4, "becoming a backprop ninja" (karpathy/nn-zero-to-hero,
lectures/makemore/makemore_part4_backprop.ipynb): the MLP's forward pass broken into small
steps, every intermediate kept with retain_grad(), loss.backward(), then the whole backward
pass written by hand (counts_sum**-1, the Bessel-corrected batchnorm, (1.0 - h**2), the
embedding gradient scattered with a loop) and each one checked with cmp() as in the notebook:
torch.all(dt == t.grad), torch.allclose and (dt - t.grad).abs().max(); then exercise 2's
F.cross_entropy and dlogits = F.softmax(logits, 1); dlogits[range(n), Yb] -= 1."""

import numpy as np


def program(torch, same):
    F = torch.nn.functional
    rng = np.random.default_rng(42)
    vocab_size, n_embd, n_hidden, block_size, n = 27, 5, 16, 3, 8

    def t(a):
        return torch.tensor(a, dtype=torch.float32)

    C = t(rng.standard_normal((vocab_size, n_embd)))
    W1 = t(rng.standard_normal((n_embd * block_size, n_hidden)) * (5 / 3) / ((n_embd * block_size) ** 0.5))
    b1 = t(rng.standard_normal(n_hidden) * 0.1)
    W2 = t(rng.standard_normal((n_hidden, vocab_size)) * 0.1)
    b2 = t(rng.standard_normal(vocab_size) * 0.1)
    bngain = t(rng.standard_normal((1, n_hidden)) * 0.1 + 1.0)
    bnbias = t(rng.standard_normal((1, n_hidden)) * 0.1)
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    Xb = torch.tensor(rng.integers(0, vocab_size, (n, block_size)))
    Yb = torch.tensor(rng.integers(0, vocab_size, n))

    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff**2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5)**-0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()

    for p in parameters:
        p.grad = None
    for t_ in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes,
               logits, h, hpreact, bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
               embcat, emb]:
        t_.retain_grad()
    loss.backward()

    checks = []

    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        checks.append(app)

    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h**2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5)**-1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]

    for name, d, x in [('logprobs', dlogprobs, logprobs), ('probs', dprobs, probs),
                       ('counts_sum_inv', dcounts_sum_inv, counts_sum_inv),
                       ('counts_sum', dcounts_sum, counts_sum), ('counts', dcounts, counts),
                       ('norm_logits', dnorm_logits, norm_logits),
                       ('logit_maxes', dlogit_maxes, logit_maxes), ('logits', dlogits, logits),
                       ('h', dh, h), ('W2', dW2, W2), ('b2', db2, b2), ('hpreact', dhpreact, hpreact),
                       ('bngain', dbngain, bngain), ('bnbias', dbnbias, bnbias),
                       ('bnraw', dbnraw, bnraw), ('bnvar_inv', dbnvar_inv, bnvar_inv),
                       ('bnvar', dbnvar, bnvar), ('bndiff2', dbndiff2, bndiff2),
                       ('bndiff', dbndiff, bndiff), ('bnmeani', dbnmeani, bnmeani),
                       ('hprebn', dhprebn, hprebn), ('embcat', dembcat, embcat),
                       ('W1', dW1, W1), ('b1', db1, b1), ('emb', demb, emb), ('C', dC, C)]:
        cmp(name, d, x)

    # exercise 2: the cross-entropy backward in one go
    loss_fast = F.cross_entropy(logits, Yb)
    dlogits2 = F.softmax(logits, 1)
    dlogits2[range(n), Yb] -= 1
    dlogits2 /= n
    # exercise 3: the batchnorm backward in one go
    hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / torch.sqrt(hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
    dhprebn2 = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))
    return {"loss": loss, "checks": checks, "dC": dC, "C.grad": C.grad, "dlogits": dlogits,
            "loss_fast_diff": (loss_fast - loss).item(), "dlogits2": dlogits2,
            "hpreact_fast_diff": (hpreact_fast - hpreact).abs().max(), "dhprebn2": dhprebn2,
            "dhprebn": dhprebn, "hprebn.grad": hprebn.grad}
