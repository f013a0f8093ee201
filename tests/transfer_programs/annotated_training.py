"""The Annotated Transformer's training pieces (harvardnlp/annotated-transformer,
the_annotated_transformer.py): LabelSmoothing with nn.KLDivLoss(reduction="sum"),
true_dist.fill_, scatter_(1, target.data.unsqueeze(1), confidence), true_dist[:, padding_idx]
= 0, torch.nonzero(target.data == padding_idx) and index_fill_(0, mask.squeeze(), 0.0);
the rate() schedule through LambdaLR over Adam(betas=(0.9, 0.98), eps=1e-9); the Batch
class's masks ((tgt != pad).unsqueeze(-2) & subsequent_mask(...).type_as(tgt_mask.data)),
ntokens = (tgt_y != pad).data.sum(); SimpleLossCompute's loss / norm; and greedy_decode's
torch.max(prob, dim=1), torch.zeros(1, 1).fill_(start_symbol).type_as(src.data) and
torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1), with a toy
generator model standing in for the full encoder-decoder."""

import numpy as np

# The notebook's LabelSmoothing example takes predict.log() of a table with zeros (-inf, as in
# PyTorch), and the KL divergence of those rows is 0 * -inf: on purpose.
ERRSTATE = {"divide": "ignore", "invalid": "ignore"}


def program(torch, same):
    nn = torch.nn
    LambdaLR = torch.optim.lr_scheduler.LambdaLR

    def subsequent_mask(size):
        attn_shape = (1, size, size)
        subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return subsequent_mask == 0

    class Batch:
        def __init__(self, src, tgt=None, pad=2):
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt = tgt[:, :-1]
                self.tgt_y = tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()

        @staticmethod
        def make_std_mask(tgt, pad):
            tgt_mask = (tgt != pad).unsqueeze(-2)
            tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)
            return tgt_mask

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super(LabelSmoothing, self).__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None

        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    def rate(step, model_size, factor, warmup):
        if step == 0:
            step = 1
        return factor * (
            model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5))
        )

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super(Generator, self).__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return torch.log_softmax(self.proj(x), dim=-1)

    class SimpleLossCompute:
        def __init__(self, generator, criterion):
            self.generator = generator
            self.criterion = criterion

        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = (
                self.criterion(
                    x.contiguous().view(-1, x.size(-1)), y.contiguous().view(-1)
                )
                / norm
            )
            return sloss.data * norm, sloss

    V, d_model, pad = 7, 8, 2
    crit = LabelSmoothing(5, 0, 0.4)
    predict = torch.FloatTensor([[0, 0.2, 0.7, 0.1, 0], [0, 0.2, 0.7, 0.1, 0], [0, 0.2, 0.7, 0.1, 0]])
    crit(x=predict.log(), target=torch.LongTensor([2, 1, 0]))
    smoothed = crit.true_dist

    rng = np.random.default_rng(4)
    embed = same(nn.Embedding(V, d_model))
    generator = same(Generator(d_model, V))
    criterion = LabelSmoothing(size=V, padding_idx=pad, smoothing=0.1)
    params = list(embed.parameters()) + list(generator.parameters())
    optimizer = torch.optim.Adam(params, lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    lr_scheduler = LambdaLR(optimizer=optimizer,
                            lr_lambda=lambda step: rate(step, d_model, factor=1.0, warmup=3))
    loss_compute = SimpleLossCompute(generator, criterion)
    losses, lrs = [], []
    for i in range(4):
        data = torch.tensor(rng.integers(3, V, (3, 6)))
        data[:, 0] = 1
        data[0, -2:] = pad
        src = data.requires_grad_(False).clone().detach()
        tgt = data.requires_grad_(False).clone().detach()
        batch = Batch(src, tgt, pad)
        out = embed(batch.tgt) * batch.tgt_mask.float().sum(-1, keepdim=True)
        loss, loss_node = loss_compute(out, batch.tgt_y, batch.ntokens)
        loss_node.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        lr_scheduler.step()
        losses.append(loss / batch.ntokens)
        lrs.append(optimizer.param_groups[0]["lr"])

    def greedy_decode(src, max_len, start_symbol):
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for i in range(max_len - 1):
            out = embed(ys)
            prob = generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat(
                [ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1
            )
        return ys

    return {"smoothed": smoothed, "src_mask": batch.src_mask, "tgt_mask": batch.tgt_mask,
            "ntokens": batch.ntokens, "losses": losses, "lrs": lrs,
            "decoded": greedy_decode(torch.LongTensor([[1, 3, 4]]), 5, 1),
            "proj.weight": generator.proj.weight}
