"""A nanoGPT block (karpathy/nanoGPT model.py) at toy size: token and position embeddings,
LayerNorm, causal self-attention with the tril mask and masked_fill, a GELU MLP, the weight
tying of lm_head, cross_entropy over flattened logits, AdamW with weight decay groups,
clip_grad_norm_, three steps."""

import math


def program(torch, same):
    nn, F = torch.nn, torch.nn.functional
    import numpy as np

    vocab, block, d, heads = 11, 6, 8, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.register_buffer("bias", torch.tril(torch.ones(block, block))
                                 .view(1, 1, block, block))

        def attn(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(d, dim=2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(block, d)
            self.h = nn.ModuleList([Block()])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    model = same(GPT())
    params = {pn: p for pn, p in model.named_parameters() if p.requires_grad}
    decay = [p for n, p in params.items() if p.dim() >= 2]
    nodecay = [p for n, p in params.items() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": nodecay, "weight_decay": 0.0}],
                                  lr=1e-2, betas=(0.9, 0.95))
    data = torch.tensor(np.random.default_rng(7).integers(0, vocab, 40))
    ix = [0, 9, 17, 30]  # get_batch's random offsets, fixed here
    x = torch.stack([data[i:i + block] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
    losses, norms = [], []
    for _ in range(3):
        logits, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "norms": norms, "lm_head": model.lm_head.weight,
            "tied": model.wte.weight is model.lm_head.weight}
