"""Ops counted in the learners' material (docs/pytorch_inventory.md) that no composition of
other ops gives: the inverse sine, cosine and tangent, the hyperbolic sine and cosine, exp(x) - 1
without its rounding near 0, the logit, and rounding. One class each, forward and backward
side by side; the backward is written with tensor ops, so it is differentiable again."""

from __future__ import annotations

import math

from ..function import Function
from ..meta import Promotion

# ----------------------------------------------------------------------------- inverse trig


class Acos(Function):
    """z = arccos(x) (x in [-1, 1]);  dz/dx = -1 / sqrt(1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.arccos(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return -gz / (1 - x * x) ** 0.5  # NOTE: ** works on arrays and, recorded, on tensors


class Asin(Function):
    """z = arcsin(x) (x in [-1, 1]);  dz/dx = 1 / sqrt(1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.arcsin(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / (1 - x * x) ** 0.5  # (** -0.5 of -inf is 0; this is NaN, as PyTorch's)


class Atan(Function):
    """z = arctan(x);  dz/dx = 1 / (1 + x^2)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.arctan(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / (1 + x * x)


class Atan2(Function):
    """z = atan2(y, x), the angle of the point (x, y);  dz/dy = x / (x^2 + y^2),
    dz/dx = -y / (x^2 + y^2)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, y, x):
        ctx.save_for_backward(y, x)
        return ctx.xp.arctan2(y, x)

    @staticmethod
    def backward(ctx, gz):
        y, x = ctx.saved_tensors
        need_y, need_x = ctx.needs_input_grad
        scale = gz / (x * x + y * y)
        return (scale * x if need_y else None), (-scale * y if need_x else None)


class Logit(Function):
    """z = log(p / (1 - p)), the inverse of sigmoid;  dz/dp = 1 / (p (1 - p)) (inf at 0 and
    1); outside [0, 1] z is NaN, and so is its gradient, as in PyTorch"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT  # (p / (1 - p) divides)
    elementwise = True

    @staticmethod
    def forward(ctx, p):
        ctx.save_for_backward(p)
        return ctx.xp.log(p / (1 - p))

    @staticmethod
    def backward(ctx, gz):
        (p,) = ctx.saved_tensors
        xp = ctx.xp
        return xp.where((p < 0) | (p > 1), math.nan, gz / (p * (1 - p)))


# ----------------------------------------------------------------------------- hyperbolic


class Sinh(Function):
    """z = sinh(x) = (e^x - e^-x) / 2;  dz/dx = cosh(x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sinh(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * ctx.xp.cosh(x)


class Cosh(Function):
    """z = cosh(x) = (e^x + e^-x) / 2;  dz/dx = sinh(x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cosh(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * ctx.xp.sinh(x)


class Expm1(Function):
    """z = e^x - 1, exact near 0 where exp(x) - 1 loses its digits;  dz/dx = e^x = z + 1"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.expm1(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return gz * (z + 1)


# ----------------------------------------------------------------------------- rounding


class Floor(Function):
    """z = floor(x);  dz/dx = 0 (a staircase: flat between the steps, as PyTorch says)"""

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.floor(x)

    @staticmethod
    def backward(ctx, gz):
        return gz * 0


class Ceil(Function):
    """z = ceil(x);  dz/dx = 0"""

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.ceil(x)

    @staticmethod
    def backward(ctx, gz):
        return gz * 0


class Round(Function):
    """z = round(x) (halves to even, as PyTorch and numpy);  dz/dx = 0"""

    @staticmethod
    def forward(ctx, x):
        return ctx.xp.round(x)

    @staticmethod
    def backward(ctx, gz):
        return gz * 0
