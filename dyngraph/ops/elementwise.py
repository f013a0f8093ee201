"""Elementwise ops: one class each, forward and backward side by side.

Each docstring states the op and its local derivatives. Inputs may have different shapes (numpy
broadcasting); the engine sums each gradient back to its input's shape, so no op here does.

Backward formulas use only operators and ``ctx.xp`` functions, so the same code runs on numpy,
on CuPy, and on Tensors when ``backward(create_graph=True)`` records the backward pass itself.
"""

from __future__ import annotations

import math

from ..function import Function
from ..meta import INT64, NUMBER_OR_NONE, Promotion

# ----------------------------------------------------------------------------- arithmetic


class Add(Function):
    """z = x + y;  dz/dx = 1,  dz/dy = 1"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, gz):
        return gz, gz


class Sub(Function):
    """z = x - y;  dz/dx = 1,  dz/dy = -1"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        if _is_bool(x) or _is_bool(y):  # numpy counts True - 2 as -1; PyTorch refuses
            raise RuntimeError(
                "Subtraction, the `-` operator, with a bool tensor is not supported: to invert "
                "a mask use ~mask (or mask.logical_not()); to count with it, mask.long() - y")
        return x - y

    @staticmethod
    def backward(ctx, gz):
        return gz, (-gz if ctx.needs_input_grad[1] else None)


class Mul(Function):
    """z = x * y;  dz/dx = y,  dz/dy = x"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        # Save only what backward will use: x is needed for dz/dy, y for dz/dx. (h * 0.5 keeps
        # no copy of h alive: the memory lesson in one line.)
        need_x, need_y = ctx.needs_input_grad
        ctx.save_for_backward(x if need_y else None, y if need_x else None)
        return x * y

    @staticmethod
    def backward(ctx, gz):
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        return (gz * y if need_x else None), (gz * x if need_y else None)


class Div(Function):
    """z = x / y;  dz/dx = 1 / y,  dz/dy = -x / y^2"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None, y)  # x only for dz/dy
        return x / y

    @staticmethod
    def backward(ctx, gz):
        x, y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        return (gz / y if need_x else None), (-gz * x / (y * y) if need_y else None)


class Pow(Function):
    """z = x ** y;  dz/dx = y * x ** (y - 1) (0 where y = 0, even at x = 0, as in PyTorch),
    dz/dy = z * log(x)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        if _is_bool(x):  # PyTorch's powers of booleans are integers
            x = _bool_base_as_int(x, y)
        z = x**y
        ctx.save_for_backward(x, y, z)
        return z

    @staticmethod
    def backward(ctx, gz):
        x, y, z = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        gx = None
        if need_x and isinstance(y, (int, float)):
            gx = gz * 0.0 if y == 0 else gz * y * x ** (y - 1)  # x ** 0 is constant: no 0 * inf
        elif need_x:
            zero = y == 0
            gx = ctx.xp.where(zero, 0.0, gz * y * x ** ctx.xp.where(zero, 1.0, y - 1))
        if need_y:  # NOTE: math.log keeps a Python-number base weakly typed (float32 stays float32)
            log_x = math.log(x) if isinstance(x, (int, float)) else ctx.xp.log(x)
            gy = gz * z * log_x
        else:
            gy = None
        return gx, gy

    @classmethod
    def meta(cls, shapes, dtypes):
        base, exponent = dtypes
        if getattr(base, "kind", None) == "b":  # as forward: the base counts as int64
            base = INT64
        return super().meta(shapes, (base, exponent))


def _bool_base_as_int(x, y):
    """A boolean base, as PyTorch has it: b ** 2 is int64 and b ** 2.0 float (numpy's own power
    of booleans is int8, or float64, by version); b ** b has no integer to count in: refused."""
    if _is_bool(y) or isinstance(y, bool):
        raise NotImplementedError(
            "\"pow\" not implemented for 'Bool': a power of booleans has no meaning of its own; "
            "convert first, e.g. x.long() ** y (or x.float() ** y)")
    return x.astype(INT64)


def _is_bool(value) -> bool:
    return getattr(getattr(value, "dtype", None), "kind", None) == "b"


class Neg(Function):
    """z = -x;  dz/dx = -1"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, gz):
        return -gz


class Abs(Function):
    """z = |x|;  dz/dx = sign(x)  (0 at x = 0)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.abs(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * ctx.xp.sign(x)


# ----------------------------------------------------------------------------- functions


class Exp(Function):
    """z = exp(x);  dz/dx = exp(x) = z"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.exp(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return gz * z


class Log(Function):
    """z = log(x);  dz/dx = 1 / x"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / x


class Log10(Function):
    """z = log10(x);  dz/dx = 1 / (x ln 10)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log10(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / (x * math.log(10.0))


class Log2(Function):
    """z = log2(x);  dz/dx = 1 / (x ln 2)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log2(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz / (x * math.log(2.0))


class Sqrt(Function):
    """z = sqrt(x);  dz/dx = 1 / (2 sqrt(x)) = 0.5 / z"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.sqrt(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return 0.5 * gz / z


class Sin(Function):
    """z = sin(x);  dz/dx = cos(x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sin(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return gz * ctx.xp.cos(x)


class Cos(Function):
    """z = cos(x);  dz/dx = -sin(x)"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cos(x)

    @staticmethod
    def backward(ctx, gz):
        (x,) = ctx.saved_tensors
        return -gz * ctx.xp.sin(x)


class Tanh(Function):
    """z = tanh(x);  dz/dx = 1 - tanh(x)^2 = 1 - z^2"""

    promotion = Promotion.INT_TO_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.tanh(x)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return gz * (1 - z * z)


class Sigmoid(Function):
    """z = 1 / (1 + exp(-x));  dz/dx = z (1 - z)"""

    promotion = Promotion.INT_TO_DEFAULT_FLOAT
    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = 0.5 * (1 + ctx.xp.tanh(0.5 * x))  # the same function, without exp overflow
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return gz * z * (1 - z)


class Relu(Function):
    """z = max(x, 0);  dz/dx = 1 where x > 0, else 0"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.maximum(x, 0)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return gz * (z > 0)

    @classmethod
    def meta(cls, shapes, dtypes):  # max(x, 0): a bool x meets the integer 0
        return super().meta(shapes, dtypes)._replace(dtype=cls.promotion.dtype([*dtypes, 0]))


# ----------------------------------------------------------------------------- selection


class Clamp(Function):
    """z = min(max(x, low), high);  dz/dx = 1 where low <= x <= high, else 0"""

    elementwise = True

    option_types = {"low": NUMBER_OR_NONE, "high": NUMBER_OR_NONE}

    @staticmethod
    def forward(ctx, x, low=None, high=None):
        if low is None and high is None:
            raise ValueError("clamp needs at least one of min= or max=")
        inside = ctx.xp.ones(x.shape, dtype=bool)
        if low is not None:
            inside &= x >= low
        if high is not None:
            inside &= x <= high
        ctx.save_for_backward(inside)  # a 0/1 mask: a constant, also for double backward
        return ctx.xp.clip(x, low, high)

    @staticmethod
    def backward(ctx, gz):
        (inside,) = ctx.saved_tensors
        return ctx.xp.where(inside, gz, 0)

    @classmethod
    def meta(cls, shapes, dtypes, low=None, high=None):  # the bounds take part in the promotion
        stated = super().meta(shapes, dtypes)
        return stated._replace(dtype=cls.promotion.dtype([*dtypes, low, high]))


class Maximum(Function):
    """z = max(x, y) elementwise;  dz/dx = 1 where x > y, 1/2 where x == y (as in PyTorch);
    dz/dy = 1 - dz/dx"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        z = ctx.xp.maximum(x, y)
        ctx.save_for_backward(_share_of_x(ctx.xp, x > y, x == y, z.dtype))
        return z

    @staticmethod
    def backward(ctx, gz):
        (share_of_x,) = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        gx = gz * share_of_x if need_x else None
        gy = gz * (1 - share_of_x) if need_y else None
        return gx, gy


class Minimum(Function):
    """z = min(x, y) elementwise;  dz/dx = 1 where x < y, 1/2 where x == y (as in PyTorch);
    dz/dy = 1 - dz/dx"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        z = ctx.xp.minimum(x, y)
        ctx.save_for_backward(_share_of_x(ctx.xp, x < y, x == y, z.dtype))
        return z

    backward = staticmethod(Maximum.backward)


def _share_of_x(xp, x_wins, tie, dtype):
    """1 where x alone wins, 0.5 on a tie, 0 where y wins: a constant weight array."""
    return xp.asarray(x_wins, dtype=dtype) + xp.asarray(tie, dtype=dtype) * 0.5


class Where(Function):
    """z = x where cond else y;  dz/dx = cond,  dz/dy = not cond"""

    elementwise = True

    @staticmethod
    def forward(ctx, cond, x, y):
        ctx.save_for_backward(cond)
        return ctx.xp.where(cond, x, y)

    @staticmethod
    def backward(ctx, gz):
        xp, (cond,) = ctx.xp, ctx.saved_tensors
        _, need_x, need_y = ctx.needs_input_grad
        return None, (xp.where(cond, gz, 0) if need_x else None), (
            xp.where(cond, 0, gz) if need_y else None
        )
