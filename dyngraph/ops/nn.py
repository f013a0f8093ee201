"""Losses: fused ops that would otherwise be several nodes (and several temporaries).

The class-index losses share one formulation: with log-probabilities ``logp`` (class axis 1) the
loss of each sample is ``-sum_c coef_c logp_c``, where the coefficients say what the target asks
for (a one-hot row times the class weight; label smoothing spreads eps / C over every class; a
probability target is its own row; an ignored sample is all zeros). Then
``dL/dlogp = -coef`` and, through the softmax, ``dL/dx = softmax(x) sum_c coef_c - coef``.

An integer target has one nonzero coefficient per sample, at its class, so the sum over classes
is a gather: ``-w[t] logp[t]``, one entry picked per sample (``class_index``), as a hand-written
``log_probs[rows, y]`` does. The coefficients are still made, for backward, by writing each
sample's weight at its class into zeros.

Arguments are checked (shapes, dtypes, class ranges) in ``nn.functional`` before the op runs.
"""

from __future__ import annotations

from ..function import Function
from ..meta import ARRAY_OR_NONE, INT, NUMBER, REDUCTION, Meta, Promotion, broadcast_or_sum
from ..tensor import Tensor
from .reduce import LogSoftmax, need_floats

# ----------------------------------------------------------------------------- reductions


def reduce_losses(ctx, losses, reduction, count):
    """'mean' (sum / count), 'sum' or 'none' of per-element losses; remembered for backward."""
    ctx.reduction, ctx.count = reduction, count
    if reduction == "mean":
        return losses.sum() / count
    if reduction == "sum":
        return losses.sum()
    if reduction == "none":
        return losses
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def spread(ctx, gz, class_axis=False):
    """gz of the reduced loss, as a factor on each element's loss (shaped to broadcast against
    the per-element losses, with a class axis 1 inserted when ``class_axis``)."""
    if ctx.reduction == "none":
        return gz.reshape(gz.shape[:1] + (1,) + gz.shape[1:]) if class_axis else gz
    return gz / ctx.count if ctx.reduction == "mean" else gz


def class_index(xp, target):
    """Where each sample's class is in an array shaped like the logits (N, C, d1, ...), class
    axis 1: ``logp[class_index(xp, t)]`` picks one entry per sample and has the target's shape
    (N, d1, ...)."""
    if target.ndim == 1:  # a batch of rows: logp[rows, t]
        return xp.arange(target.shape[0]), target
    samples = [xp.arange(n).reshape((n,) + (1,) * (target.ndim - 1 - axis))  # broadcast along
               for axis, n in enumerate(target.shape)]  # the target's other axes
    return (samples[0], target, *samples[1:])


def class_targets(xp, shape, dtype, target, weight, ignore_index, label_smoothing):
    """For integer targets: the index of each sample's class (``class_index``), each sample's
    weight (``weight[t]``, 1 without class weights, 0 for an ignored target), coef (shaped like
    the logits, class axis 1) and the weight total that 'mean' divides by: the weights of the
    targets that are not ignored."""
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)  # an ignored target points at class 0, with weight 0
    index = class_index(xp, safe)
    weight_of_target = valid.astype(dtype) if weight is None else weight[safe] * valid
    coef = xp.zeros(shape, dtype=dtype)
    coef[index] = weight_of_target  # the one-hot rows, weighted: each sample's weight at its class
    if label_smoothing:  # eps / C of every class's weight, for every sample not ignored
        classes = shape[1]
        class_weight = xp.ones(classes, dtype=dtype) if weight is None else weight
        everywhere = class_weight.reshape((1, classes) + (1,) * (len(shape) - 2)) * valid.reshape(
            valid.shape[:1] + (1,) + valid.shape[1:]
        )
        coef = (1 - label_smoothing) * coef + (label_smoothing / classes) * everywhere
    return index, weight_of_target, coef, weight_of_target.sum()


def probability_coefficients(target, label_smoothing, row_weight, dtype):
    """coef for class-probability targets: each row smoothed (eps / C added to every class)
    and weighted by class."""
    classes = target.shape[1]
    smoothed = target * (1 - label_smoothing) + label_smoothing / classes
    coef = smoothed * row_weight
    if coef.dtype == dtype:
        return coef
    return coef.to(dtype) if isinstance(coef, Tensor) else coef.astype(dtype)


def _log_softmax(xp, x):
    shifted = x - x.max(axis=1, keepdims=True)  # subtract first: float32 keeps its digits
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


# ----------------------------------------------------------------------------- class losses


class CrossEntropy(Function):
    """L = -sum_c coef_c log softmax(x)_c, coef = onehot(t) (weighted, smoothed);
    dL/dx = softmax(x) sum_c coef_c - coef

    ``x`` are logits of shape (N, C, d1, ...), ``t`` integer class indices of shape
    (N, d1, ...) or class probabilities shaped like ``x``.
    """

    option_types = {"reduction": REDUCTION, "weight": ARRAY_OR_NONE, "ignore_index": INT,
                    "label_smoothing": NUMBER}

    @staticmethod
    def forward(ctx, x, target, reduction="mean", weight=None, ignore_index=-100,
                label_smoothing=0.0):
        need_floats("log_softmax", x)  # integer logits: PyTorch's NotImplementedError
        xp = ctx.xp
        logp = _log_softmax(xp, x)
        classes = x.shape[1]
        if target.dtype.kind in "iu":
            index, weight_of_target, coef, count = class_targets(
                xp, x.shape, x.dtype, target, weight, ignore_index, label_smoothing
            )
            ctx.probability_target = False
            if label_smoothing:  # every class has a coefficient
                losses = -(coef * logp).sum(axis=1)
            else:  # one class per sample: pick its log-probability (a gather)
                losses = -weight_of_target * logp[index]
        else:  # class probabilities
            row_weight = 1 if weight is None else weight.reshape((1, classes) + (1,) * (x.ndim - 2))
            coef = probability_coefficients(target, label_smoothing, row_weight, x.dtype)
            count = x.size // classes
            ctx.probability_target, ctx.row_weight = True, row_weight
            ctx.smoothing = label_smoothing
            losses = -(coef * logp).sum(axis=1)
        ctx.save_for_backward(x, logp, coef, target)
        return reduce_losses(ctx, losses, reduction, count)

    @staticmethod
    def backward(ctx, gz):
        x, logp, coef, target = ctx.saved_tensors
        xp = ctx.xp
        if ctx.create_graph:
            # NOTE: logp and coef were computed in forward, so here they are numbers, constants
            # of the graph; the second derivative needs them as functions of the logits (and of
            # a probability target): made again by recorded ops
            logp = LogSoftmax.apply(x, axis=1)
            if ctx.probability_target:
                coef = probability_coefficients(target, ctx.smoothing, ctx.row_weight, x.dtype)
        scale = spread(ctx, gz, class_axis=True)
        gx = (xp.exp(logp) * coef.sum(axis=1, keepdims=True) - coef) * scale
        gt = None
        if ctx.probability_target and ctx.needs_input_grad[1]:
            gt = -logp * ctx.row_weight * (1 - ctx.smoothing) * scale
        return gx, gt


class NLLLoss(Function):
    """L = -sum_c coef_c x_c = -w[t] x[t] (x: log-probabilities, picked by a gather);
    dL/dx = -coef"""

    option_types = {"reduction": REDUCTION, "weight": ARRAY_OR_NONE, "ignore_index": INT}

    @staticmethod
    def forward(ctx, x, target, reduction="mean", weight=None, ignore_index=-100):
        index, weight_of_target, coef, count = class_targets(
            ctx.xp, x.shape, x.dtype, target, weight, ignore_index, 0.0
        )
        ctx.save_for_backward(coef)
        return reduce_losses(ctx, -weight_of_target * x[index], reduction, count)

    @staticmethod
    def backward(ctx, gz):
        (coef,) = ctx.saved_tensors
        return -coef * spread(ctx, gz, class_axis=True), None

    @classmethod
    def meta(cls, shapes, dtypes, reduction="mean", weight=None, ignore_index=-100):
        # the log-probabilities' dtype (a mean of integers would be a float: not stated)
        elements = broadcast_or_sum(shapes)
        x = dtypes[0]
        return Meta(elements, None, x if x.kind == "f" else None, elements)


# ----------------------------------------------------------------------------- binary losses

_LOG_FLOOR = -100.0  # PyTorch clamps the logs of BCE at -100, so p = 0 or 1 gives a finite loss


class BinaryCrossEntropy(Function):
    """L = -w (t log p + (1 - t) log(1 - p));  dL/dp = w (p - t) / (p (1 - p)),
    dL/dt = w (log(1 - p) - log p)"""

    promotion = Promotion.INT_TO_FLOAT
    option_types = {"reduction": REDUCTION, "weight": ARRAY_OR_NONE}

    @staticmethod
    def forward(ctx, p, target, reduction="mean", weight=None):
        need_floats("binary_cross_entropy", p, "F.binary_cross_entropy(p.float(), target.float())")
        xp = ctx.xp
        log_p = xp.maximum(xp.log(p), _LOG_FLOOR)
        log_q = xp.maximum(xp.log1p(-p), _LOG_FLOOR)
        w = 1 if weight is None else weight
        ctx.save_for_backward(p, target)
        ctx.weight = w
        losses = -w * (target * log_p + (1 - target) * log_q)
        return reduce_losses(ctx, losses, reduction, losses.size)

    @staticmethod
    def backward(ctx, gz):
        p, target = ctx.saved_tensors
        xp = ctx.xp
        scale = spread(ctx, gz) * ctx.weight
        need_p, need_t = ctx.needs_input_grad
        gp = scale * (p - target) / xp.maximum(p * (1 - p), 1e-12) if need_p else None
        gt = None
        if need_t:  # (the logs are made again from p: with create_graph, functions of p)
            log_p = xp.maximum(xp.log(p), _LOG_FLOOR)
            log_q = xp.maximum(xp.log1p(-p), _LOG_FLOOR)
            gt = scale * (log_q - log_p)
        return gp, gt


class BinaryCrossEntropyWithLogits(Function):
    """L = w ((1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x))), pw the positive weight;
    dL/dx = w ((1 - t) - (1 + (pw - 1) t) sigmoid(-x)),
    dL/dt = w (-x + (pw - 1) log(1 + exp(-x)))"""

    promotion = Promotion.INT_TO_FLOAT
    option_types = {"reduction": REDUCTION, "weight": ARRAY_OR_NONE,
                    "pos_weight": ARRAY_OR_NONE}

    @staticmethod
    def forward(ctx, x, target, reduction="mean", weight=None, pos_weight=None):
        need_floats("binary_cross_entropy_with_logits", x, "x.float() for the logits")
        xp = ctx.xp
        softplus_neg = xp.logaddexp(0, -x)  # log(1 + exp(-x)) without overflow
        pw = 1 if pos_weight is None else pos_weight
        w = 1 if weight is None else weight
        ctx.save_for_backward(x, target)
        ctx.pw, ctx.weight = pw, w
        losses = w * ((1 - target) * x + (1 + (pw - 1) * target) * softplus_neg)
        return reduce_losses(ctx, losses, reduction, losses.size)

    @staticmethod
    def backward(ctx, gz):
        x, target = ctx.saved_tensors
        scale = spread(ctx, gz) * ctx.weight
        need_x, need_t = ctx.needs_input_grad
        gx = gt = None
        if need_x:
            sigmoid_neg = 0.5 * (1 - ctx.xp.tanh(0.5 * x))
            gx = scale * ((1 - target) - (1 + (ctx.pw - 1) * target) * sigmoid_neg)
        if need_t:  # (made again from x: with create_graph, a function of x)
            gt = scale * (-x + (ctx.pw - 1) * ctx.xp.logaddexp(0, -x))
        return gx, gt
