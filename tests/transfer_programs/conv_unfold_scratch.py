"""Convolution from scratch with unfold (d2l's and the im2col notes): F.unfold + a matmul is
F.conv2d, F.fold puts patches back; then a ConvTranspose1d decoder upsamples a sequence."""

import numpy as np


def program(torch, same):
    F = torch.nn.functional
    rng = np.random.default_rng(5)
    images = torch.tensor(rng.standard_normal((2, 3, 6, 6)), dtype=torch.float32,
                          requires_grad=True)
    weight = torch.tensor(0.2 * rng.standard_normal((4, 3, 3, 3)), dtype=torch.float32,
                          requires_grad=True)
    columns = F.unfold(images, kernel_size=3, padding=1)            # (2, 27, 36)
    by_matmul = (weight.view(4, -1) @ columns).view(2, 4, 6, 6)
    by_conv = F.conv2d(images, weight, padding=1)
    by_matmul.square().sum().backward()
    grads = (images.grad.clone(), weight.grad.clone())
    folded = F.fold(columns, output_size=(6, 6), kernel_size=3, padding=1)
    decoder = same(torch.nn.Sequential(torch.nn.ConvTranspose1d(4, 2, kernel_size=4, stride=2,
                                                                padding=1),
                                       torch.nn.ReLU(), torch.nn.Conv1d(2, 1, 3, padding=1)))
    sequence = torch.tensor(rng.standard_normal((2, 4, 5)), dtype=torch.float32)
    out = decoder(sequence)
    out.mean().backward()
    return {"same": (by_matmul - by_conv).abs().max(), "images_grad": grads[0],
            "weight_grad": grads[1], "folded": folded, "decoded": out,
            "decoder_grad": decoder[0].weight.grad}
