"""Three real models, written here (no torchvision), for the benchmarks (W7) and for the tests of
the map at every size (issue 40): a ResNet-18, a nanoGPT-style transformer and a recursive
TreeNet. Each is small enough to run a forward and backward pass in a fraction of a second on
a CPU, and keeps the module structure of the real thing, which is what the drawings show.

    >>> model, inputs, loss_fn = resnet18_case()
    >>> loss = loss_fn(model(*inputs))

They live here, beside the workload that times them, because the tests import the benchmarks
and never the other way round; tests/real_models.py re-exports them under its old name (the
tests and the browser tests' notebook cells, with ``sys.path`` pointing at tests/, import
``real_models``), so the models' lines the source panel shows are this file's. Imports torch:
import it only where torch is installed (W7 checks first).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["CASES", "TREE_A", "TREE_B", "Block", "BasicBlock", "CausalSelfAttention", "GPT", "MLP",
           "ResNet", "TreeNet", "gpt_case", "resnet18_case", "treenet_case"]

# ----------------------------------------------------------------------------- ResNet-18


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a shortcut (He et al. 2015, the block of ResNet-18/34)."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out = out + identity
        return self.relu(out)


class ResNet(nn.Module):
    """ResNet-18 as torchvision builds it: a stem, four stages of two BasicBlocks, average
    pooling and a linear classifier."""

    def __init__(self, layers: tuple[int, ...] = (2, 2, 2, 2), num_classes: int = 10,
                 width: int = 64) -> None:
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(width * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8, num_classes)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        layers = [BasicBlock(self.inplanes, planes, stride)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def resnet18_case(width: int = 64):
    """(model, inputs, loss_fn): ResNet-18 on two 3x32x32 images (batch norm in training mode
    needs more than one value per channel at the 1x1 end), cross-entropy against classes 3, 5.
    ``width`` 16 makes the same structure four times narrower (faster, same drawing)."""
    torch.manual_seed(0)
    model = ResNet(width=width)
    image = torch.randn(2, 3, 32, 32)
    target = torch.tensor([3, 5])
    return model, (image,), lambda logits: F.cross_entropy(logits, target)


# ----------------------------------------------------------------------------- nanoGPT


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention that looks only at earlier positions (nanoGPT's)."""

    def __init__(self, n_embd: int, n_head: int, block_size: int) -> None:
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    """The transformer block's feed-forward part: widen four times, GELU, project back."""

    def __init__(self, n_embd: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    """A pre-norm transformer block: attention and MLP, each added to the residual stream."""

    def __init__(self, n_embd: int, n_head: int, block_size: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    """nanoGPT's model: token and position embeddings, a stack of Blocks, a final LayerNorm and
    the language-model head."""

    def __init__(self, vocab_size: int = 64, block_size: int = 8, n_layer: int = 4,
                 n_head: int = 4, n_embd: int = 32) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.size(1))
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt_case(n_layer: int = 4):
    """(model, inputs, loss_fn): a 4-block GPT on one sequence of 8 tokens, next-token loss."""
    torch.manual_seed(0)
    model = GPT(n_layer=n_layer)
    idx = torch.randint(0, 64, (1, 8))
    target = torch.randint(0, 64, (1, 8))
    return model, (idx,), lambda logits: F.cross_entropy(logits.view(-1, 64), target.view(-1))


# ----------------------------------------------------------------------------- TreeNet


class TreeNet(nn.Module):
    """A recursive network over a binary parse tree (Socher et al.'s recursive neural network):
    a word is its embedding, a phrase is tanh(W [left; right] + b) of its two halves. The module
    calls itself on each half, so the recursion is a tree of calls of one module."""

    def __init__(self, vocab_size: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.combine = nn.Linear(2 * dim, dim)

    def forward(self, tree) -> torch.Tensor:
        if isinstance(tree, int):
            return self.embed(torch.tensor([tree]))
        left, right = self(tree[0]), self(tree[1])
        return torch.tanh(self.combine(torch.cat([left, right], dim=1)))


# two parse trees of the same six words, bracketed differently
TREE_A = ((1, 2), (3, (4, (1, 5))))
TREE_B = (((1, 2), 3), ((4, 1), 5))


def treenet_case(tree=TREE_A):
    """(model, inputs, loss_fn): a TreeNet on one parse tree, a squared-norm loss of the root."""
    torch.manual_seed(0)
    model = TreeNet()
    return model, (tree,), lambda root: (root ** 2).sum()


CASES = {"resnet18": resnet18_case, "gpt": gpt_case, "treenet": treenet_case}
