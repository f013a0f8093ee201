"""Loss functions as modules (PyTorch's ``nn.MSELoss``, ``nn.CrossEntropyLoss``, ...).

Each one keeps its settings (``reduction``, ``ignore_index``, ...) and calls the function of
the same name in ``dg.nn.functional`` with them: ``nn.MSELoss()(input, target)`` is
``F.mse_loss(input, target)``. Arguments are in PyTorch's order, prediction first::

    criterion = dg.nn.CrossEntropyLoss()
    loss = criterion(model(x), y)       # logits (N, C), class ids (N,)

``reduction`` is ``"mean"`` (the default), ``"sum"`` or ``"none"`` (one loss per element).
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module

REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    def __init__(self, reduction: str = "mean", allowed: tuple[str, ...] = REDUCTIONS) -> None:
        super().__init__()
        if reduction not in allowed:
            raise ValueError(f"reduction must be one of {', '.join(map(repr, allowed))}, "
                             f"got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class _WeightedLoss(_Loss):
    """A loss with an optional per-class ``weight``, kept as a buffer (moved by ``.to()``)."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """mean((input - target)^2): the squared error, for regression.

    >>> dg.nn.MSELoss()(dg.tensor([1., 2.]), dg.tensor([1., 4.]))
    tensor(2.)
    """

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """mean(|input - target|): the absolute error."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target): squared
    near the target, absolute far from it (the DQN tutorial's Huber-like loss)."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """target * (log target - input), the input given as log-probabilities (the Annotated
    Transformer's label smoothing). ``reduction="batchmean"`` is the KL divergence proper."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction),
                         allowed=REDUCTIONS + ("batchmean",))
        self.log_target = log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CrossEntropyLoss(_WeightedLoss):
    """-log softmax(input)[target]: logits (N, C) against class ids (N,), averaged.

    ``ignore_index`` marks targets that do not count (padding); ``label_smoothing`` mixes the
    one-hot target with a uniform one; ``weight`` (C,) weighs the classes.
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """-input[target]: the negative log-likelihood of log-probabilities (N, C) (the output of
    ``LogSoftmax``) against class ids (N,). ``LogSoftmax`` + ``NLLLoss`` = ``CrossEntropyLoss``.
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """-(t log p + (1 - t) log(1 - p)): binary cross-entropy of probabilities p in (0, 1)
    (the output of a Sigmoid) against targets t in [0, 1]."""

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """BCELoss(sigmoid(x), t), computed from the logits x in a numerically safe way.
    ``pos_weight`` (one per class) weighs the positive targets."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(weight, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


# ----------------------------------------------------------------- margin and likelihood losses


class MarginRankingLoss(_Loss):
    """max(0, -y (x1 - x2) + margin): y = 1 says x1 should rank higher than x2."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x where y = 1, max(0, margin - x) where y = -1 (x: a distance)."""

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, d(a, p) - d(a, n) + margin): anchors nearer their positives than their
    negatives (``F.triplet_margin_loss``)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """exp(x) - t x: the Poisson negative log-likelihood of counts t, x the log-rate
    (``F.poisson_nll_loss``)."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """½ (log var + (input - target)² / var): the Gaussian negative log-likelihood
    (``F.gaussian_nll_loss``)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Any) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction))
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)
