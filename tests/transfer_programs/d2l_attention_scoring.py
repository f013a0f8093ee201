"""d2l's attention scoring functions (chapter_attention-mechanisms-and-transformers/
attention-scoring-functions.md, PyTorch tab): masked_softmax with torch.repeat_interleave and
d2l.sequence_mask (torch.arange(...)[None, :] < valid_len[:, None], X[~mask] = value),
AdditiveAttention (nn.LazyLinear W_k, W_q, w_v, queries.unsqueeze(2) + keys.unsqueeze(1),
torch.tanh, squeeze(-1), torch.bmm) and DotProductAttention (bmm with keys.transpose(1, 2)
/ math.sqrt(d)), with the chapter's own inputs (torch.normal over shapes, ones and repeat)
replaced by seeded numpy draws; then a loss through both and its gradients."""

import math

import numpy as np


def program(torch, same):
    nn = torch.nn

    def sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    def masked_softmax(X, valid_lens):
        def _sequence_mask(X, valid_len, value=0):
            maxlen = X.size(1)
            mask = torch.arange((maxlen), dtype=torch.float32,
                                device=X.device)[None, :] < valid_len[:, None]
            X[~mask] = value
            return X

        if valid_lens is None:
            return nn.functional.softmax(X, dim=-1)
        else:
            shape = X.shape
            if valid_lens.dim() == 1:
                valid_lens = torch.repeat_interleave(valid_lens, shape[1])
            else:
                valid_lens = valid_lens.reshape(-1)
            X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
            return nn.functional.softmax(X.reshape(shape), dim=-1)

    class DotProductAttention(nn.Module):
        def __init__(self, dropout):
            super().__init__()
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens=None):
            d = queries.shape[-1]
            scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    class AdditiveAttention(nn.Module):
        def __init__(self, num_hiddens, dropout, **kwargs):
            super(AdditiveAttention, self).__init__(**kwargs)
            self.W_k = nn.LazyLinear(num_hiddens, bias=False)
            self.W_q = nn.LazyLinear(num_hiddens, bias=False)
            self.w_v = nn.LazyLinear(1, bias=False)
            self.dropout = nn.Dropout(dropout)

        def forward(self, queries, keys, values, valid_lens):
            queries, keys = self.W_q(queries), self.W_k(keys)
            features = queries.unsqueeze(2) + keys.unsqueeze(1)
            features = torch.tanh(features)
            scores = self.w_v(features).squeeze(-1)
            self.attention_weights = masked_softmax(scores, valid_lens)
            return torch.bmm(self.dropout(self.attention_weights), values)

    rng = np.random.default_rng(5)
    X = torch.tensor(rng.random((2, 2, 4)), dtype=torch.float32)
    soft1 = masked_softmax(X, torch.tensor([2, 3]))
    soft2 = masked_softmax(X, torch.tensor([[1, 3], [2, 4]]))
    seq = sequence_mask(torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([1, 2]))

    queries = torch.tensor(rng.standard_normal((2, 1, 2)), dtype=torch.float32, requires_grad=True)
    keys = torch.tensor(rng.standard_normal((2, 10, 2)), dtype=torch.float32)
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    valid_lens = torch.tensor([2, 6])
    attention = DotProductAttention(dropout=0.5)
    attention.eval()
    dot = attention(queries, keys, values, valid_lens)
    dot_weights = attention.attention_weights

    queries2 = torch.tensor(rng.standard_normal((2, 1, 20)), dtype=torch.float32)
    keys2 = torch.ones((2, 10, 2))
    additive = AdditiveAttention(num_hiddens=8, dropout=0.1)
    additive.eval()
    additive(queries2, keys2, values, valid_lens)  # the dry run that gives the lazy layers shapes
    same(additive)
    add = additive(queries2, keys2, values, valid_lens)
    (dot.sum() + (add ** 2).mean()).backward()
    return {"soft1": soft1, "soft2": soft2, "seq": seq, "dot": dot, "dot_weights": dot_weights,
            "add": add, "add_weights": additive.attention_weights, "queries.grad": queries.grad,
            "W_q.grad": additive.W_q.weight.grad, "w_v.grad": additive.w_v.weight.grad}
