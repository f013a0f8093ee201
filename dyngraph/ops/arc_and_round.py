"""Ops counted in the learners' material (docs/pytorch_inventory.md) that no composition of
other ops gives: the inverse sine and cosine, and rounding. One class each, forward and backward
side by side; the backward is written with tensor ops, so it is differentiable again."""

from __future__ import annotations

from ..function import Function

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
        return -gz * (1 - x * x) ** -0.5  # NOTE: ** works on arrays and, recorded, on tensors


class Asin(Function):
    """z = arcsin(x) (x in [-1, 1]);  dz/dx = 1 / sqrt(1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.arcsin(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * (1 - x * x) ** -0.5


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
