"""A char-RNN: nn.Embedding -> nn.RNN(batch_first=True) -> nn.Linear, next-character
cross-entropy on a short text, Adam, then a greedy sample with argmax."""

TEXT = "hello world, hello dyngraph, hello torch. "



def program(torch, same):
    nn, F = torch.nn, torch.nn.functional

    class Model(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embed = nn.Embedding(vocab, 8)
            self.rnn = nn.RNN(8, hidden, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, idx, h=None):
            out, h = self.rnn(self.embed(idx), h)
            return self.head(out), h

    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = [stoi[c] for c in TEXT]
    seq = 10
    xs = [data[i:i + seq] for i in range(0, len(data) - seq - 1, 5)]
    ys = [data[i + 1:i + seq + 1] for i in range(0, len(data) - seq - 1, 5)]
    x, y = torch.tensor(xs), torch.tensor(ys)
    model = same(Model(len(chars), 16))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(30):
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        idx = torch.tensor([[stoi["h"]]])
        h, sample = None, []
        for _ in range(12):
            logits, h = model(idx, h)
            idx = logits[:, -1, :].argmax(dim=-1, keepdim=True)
            sample.append(idx.item())
    return {"losses": losses, "sample": sample, "h": h,
            "rnn.weight_hh_l0": model.rnn.weight_hh_l0}
