"""More elementwise ops and the activations of ``nn.functional``: one class each, forward and
backward side by side (see elementwise.py for the arithmetic ones)."""

from __future__ import annotations

import math

from .. import backend
from ..function import Function
from ..meta import NUMBER, Promotion, one_of
from ..tensor import Tensor
from .elementwise import sign

# ----------------------------------------------------------------------------- math


class Sign(Function):
    """z = sign(x) (-1, 0 or 1; 0 for a NaN, as in PyTorch);  dz/dx = 0 (piecewise constant)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        return sign(ctx.xp, x)

    @staticmethod
    def backward(ctx, gz):
        return gz * 0


class Log1p(Function):
    """z = log(1 + x) (accurate for small x);  dz/dx = 1 / (1 + x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log1p(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / (1 + x)


class Square(Function):
    """z = x^2;  dz/dx = 2 x"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return 2 * gz * x


# ----------------------------------------------------------------------------- activations


class LeakyRelu(Function):
    """z = x where x > 0, else slope * x;  dz/dx = 1 where x > 0, else slope"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    elementwise = True
    option_types = {"negative_slope": NUMBER}

    @staticmethod
    def forward(ctx, x, negative_slope=0.01):
        positive = x > 0
        ctx.save_for_backward(positive)  # a 0/1 mask: a constant
        ctx.slope = negative_slope
        return ctx.xp.where(positive, x, x * negative_slope)

    @staticmethod
    def backward(ctx, gz):
        (positive,) = ctx.saved_tensors
        return ctx.xp.where(positive, gz, gz * ctx.slope)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715


class Gelu(Function):
    """z = x Phi(x), Phi the standard normal CDF;  dz/dx = Phi(x) + x phi(x)
    (approximate='tanh': Phi(x) ~ (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    elementwise = True
    option_types = {"approximate": one_of("none", "tanh")}

    @staticmethod
    def forward(ctx, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
            return 0.5 * x * (1 + ctx.xp.tanh(inner))
        return 0.5 * x * (1 + erf(x * (1 / math.sqrt(2.0))))

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        xp = ctx.xp
        if ctx.approximate == "tanh":
            t = xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
            d_inner = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x * x)
            return gz * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner)
        cdf = 0.5 * (1 + erf(x * (1 / math.sqrt(2.0))))
        pdf = xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return gz * (cdf + x * pdf)


class Softplus(Function):
    """z = log(1 + exp(beta x)) / beta (z = x where beta x > threshold);
    dz/dx = sigmoid(beta x) (1 past the threshold)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    elementwise = True
    option_types = {"beta": NUMBER, "threshold": NUMBER}

    @staticmethod
    def forward(ctx, x, beta=1.0, threshold=20.0):
        xp = ctx.xp
        bx = x * beta
        linear = bx > threshold
        # NOTE: x, not beta x: what backward uses must be an input (or the output), so that
        # with create_graph it is connected to the graph; a product made here would be a constant
        ctx.save_for_backward(x, linear)
        ctx.beta = beta
        return xp.where(linear, x, xp.logaddexp(0, bx) / beta)  # logaddexp: no overflow

    @staticmethod
    def backward(ctx, gz):
        x, linear = ctx.saved_tensors
        sigmoid = 0.5 * (1 + ctx.xp.tanh((0.5 * ctx.beta) * x))
        return ctx.xp.where(linear, gz, gz * sigmoid)


class LogSigmoid(Function):
    """z = log(sigmoid(x)) = -log(1 + exp(-x));  dz/dx = 1 - sigmoid(x) = sigmoid(-x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return -ctx.xp.logaddexp(0, -x)  # no overflow for large |x|

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * 0.5 * (1 - ctx.xp.tanh(0.5 * x))


# ----------------------------------------------------------------------------- erf


class Erf(Function):
    """z = erf(x) = 2/sqrt(pi) * integral of exp(-t^2) from 0 to x;  dz/dx = 2/sqrt(pi) exp(-x^2)

    Not a public name yet (numpy has no erf): the recorded form of the erf in gelu's backward,
    so that gelu can be differentiated twice."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return backend.erf(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * (2 / math.sqrt(math.pi)) * ctx.xp.exp(-(x * x))


def erf(x):
    """erf of an array, or of a Tensor as a recorded op (in a backward with create_graph=True:
    NOTE [one formula, two array modules] in differentiable.py)."""
    return Erf.apply(x) if isinstance(x, Tensor) else backend.erf(x)
