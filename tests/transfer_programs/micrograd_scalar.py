"""micrograd's sanity check, with scalar tensors in float64 (test_more_ops of micrograd)."""


def program(torch, same):
    a = torch.tensor([-4.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    return {"g": g.data.item(), "a.grad": a.grad.item(), "b.grad": b.grad.item()}
