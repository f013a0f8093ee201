"""The Annotated Transformer's pieces (harvardnlp/annotated-transformer): subsequent_mask
with torch.triu, PositionalEncoding with torch.arange, torch.exp and math.log into a
registered buffer, attention with masked_fill(mask == 0, -1e9), clones of a layer with
copy.deepcopy into nn.ModuleList, and a LayerNorm of its own with a_2 and b_2."""

import copy
import math

import numpy as np


def program(torch, same):
    nn = torch.nn

    def subsequent_mask(size):
        attn_shape = (1, size, size)
        mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return mask == 0

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=50):
            super().__init__()
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0))

        def forward(self, x):
            return x + self.pe[:, : x.size(1)].requires_grad_(False)

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super().__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    def attention(query, key, value, mask=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        return torch.matmul(p_attn, value), p_attn

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    d = 6
    linears = same(clones(nn.Linear(d, d), 3))
    norm = LayerNorm(d)
    pos = PositionalEncoding(d)
    x = torch.tensor(np.random.default_rng(13).standard_normal((2, 5, d)), dtype=torch.float32,
                     requires_grad=True)
    h = norm(pos(x))
    q, k, v = [lin(h) for lin in linears]
    out, p_attn = attention(q, k, v, mask=subsequent_mask(5))
    out.sum().backward()
    return {"mask": subsequent_mask(4), "pe": pos.pe[0, :4], "out": out, "p_attn": p_attn,
            "x.grad": x.grad, "a_2.grad": norm.a_2.grad}
