"""A MobileNetV3-style block (ReLU6, Hardswish, Hardsigmoid squeeze-excite) on an image of whole
numbers, as pixel values are: many inputs land exactly on the activations' kinks (0, 3, -3, 6),
where each framework picks a one-sided derivative. The gradients must be PyTorch's."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.expand = nn.Conv2d(2, 4, 1, bias=False)
            self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
            self.squeeze = nn.Linear(4, 4)

        def forward(self, x):
            h = nn.functional.relu6(self.expand(x))
            h = nn.functional.hardswish(self.depthwise(h))
            scale = nn.functional.hardsigmoid(self.squeeze(h.mean(dim=(2, 3))))
            return h * scale[:, :, None, None]

    block = same(Block())
    with torch.no_grad():  # whole-number weights: the pre-activations are whole numbers too
        block.expand.weight.copy_(torch.tensor(
            np.array([[1, 0], [0, 1], [1, 1], [2, -1]], dtype=np.float32).reshape(4, 2, 1, 1)))
        block.depthwise.weight.fill_(1.0)
        block.squeeze.weight.copy_(torch.eye(4))
        block.squeeze.bias.fill_(0.0)
    rng = np.random.default_rng(2)
    image = torch.tensor(rng.integers(-3, 4, (1, 2, 5, 5)), dtype=torch.float32,
                         requires_grad=True)
    out = block(image)
    out.sum().backward()
    hardtanh_in = torch.tensor([-1.0, 1.0, 0.0, 2.0], requires_grad=True)
    nn.functional.hardtanh(hardtanh_in).sum().backward()
    prelu_in = torch.tensor([0.0, -1.0, 2.0], requires_grad=True)
    nn.functional.prelu(prelu_in, torch.tensor([0.25])).sum().backward()
    return {"out": out, "image_grad": image.grad, "expand_grad": block.expand.weight.grad,
            "hardtanh_grad": hardtanh_in.grad, "prelu_grad": prelu_in.grad}
