"""One head of causal self-attention, as in "Let's build GPT": softmax(QK^T / sqrt(d))V with
a tril mask kept as a buffer (masked_fill with -inf), trained a few steps with AdamW."""

import numpy as np


def program(torch, same):
    nn, F = torch.nn, torch.nn.functional

    class Head(nn.Module):
        def __init__(self, n_embd, head_size, block_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)
            q = self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            return wei @ self.value(x)

    rng = np.random.default_rng(3)
    x = torch.tensor(rng.standard_normal((4, 6, 8)), dtype=torch.float32)
    target = torch.tensor(rng.standard_normal((4, 6, 5)), dtype=torch.float32)
    head = same(Head(8, 5, block_size=6))
    opt = torch.optim.AdamW(head.parameters(), lr=1e-2)
    losses = []
    for _ in range(10):
        out = head(x)
        loss = F.mse_loss(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "out": out, "query.weight": head.query.weight,
            "state keys": sorted(head.state_dict().keys()) == ["key.weight", "query.weight",
                                                               "tril", "value.weight"]}
