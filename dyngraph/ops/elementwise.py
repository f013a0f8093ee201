"""Elementwise ops: one class each, forward and backward side by side.

Each docstring states the op and its local derivatives. Inputs may have different shapes (numpy
broadcasting); the engine sums each gradient back to its input's shape, so no op here does.

Backward formulas use only operators and ``ctx.xp`` functions, so the same code runs on numpy,
on CuPy, and on Tensors when ``backward(create_graph=True)`` records the backward pass itself.
"""

from __future__ import annotations

import math

from ..function import Function
from ..meta import BOOL, INT64, NUMBER, NUMBER_OR_NONE, Promotion

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


class WithoutDerivative(Function):
    """An op PyTorch gives no derivative: it is in the graph, and its backward raises, as
    PyTorch's does, rather than pass on a gradient nobody defined. Each says how instead."""

    elementwise = True
    instead = ""

    @staticmethod
    def backward(ctx, gz):
        raise RuntimeError(f"the derivative of {type(ctx).instead}")


class FloorDivide(WithoutDerivative):
    """z = x // y = floor(x / y) (integers stay integers); no derivative: backward raises, as
    PyTorch's does"""

    instead = ("floor_divide (x // y) is not implemented, as in PyTorch: it is a staircase. For "
               "a step whose gradient is 0 write (x / y).floor(); to keep x // y out of the "
               "graph, x.detach() // y")

    @staticmethod
    def forward(ctx, x, y):
        return ctx.xp.floor_divide(x, y)


class RemainderOfNumber(WithoutDerivative):
    """z = a % x for a number a (Python's %: the sign of x); no derivative: backward raises, as
    PyTorch's does (tensor % tensor has one: Tensor.remainder)"""

    instead = ("remainder(number, tensor) (a % x) is not implemented, as in PyTorch. To "
               "differentiate it with respect to x write a - (a / x).floor() * x; to keep it "
               "out of the graph, a % x.detach()")

    @staticmethod
    def forward(ctx, a, x):
        return ctx.xp.remainder(a, x)


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


def sign(xp, x):
    """-1, 0 or 1; numpy's sign of a NaN is NaN, PyTorch's is 0 (and of a boolean, itself:
    numpy has none)."""
    if x.dtype.kind == "b":
        return x.copy()
    z = xp.sign(x)
    return xp.nan_to_num(z, nan=0.0) if z.dtype.kind == "f" else z


def _is_bool(value) -> bool:
    """Whether value is a boolean array (one identity test: Sub asks it of every operand)."""
    return getattr(value, "dtype", None) is BOOL


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
    """z = |x|;  dz/dx = sign(x)  (0 at x = 0, and at a NaN, as PyTorch's sgn)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "b":
            raise NotImplementedError(
                "\"abs\" not implemented for 'Bool' (as in PyTorch): a mask has no sign; "
                "for its values as numbers, x.long().abs() or x.float()")
        if ctx.needs_input_grad[0]:  # piecewise constant: a constant of the graph
            ctx.save_for_backward(sign(ctx.xp, x))
        return ctx.xp.abs(x)

    @staticmethod
    def backward(ctx, gz):
        (sign_of_x,) = ctx.saved_tensors
        return gz * sign_of_x


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
    """z = max(x, 0);  dz/dx = 0 where z <= 0, else 1 (a NaN passes its gradient, as PyTorch's
    threshold_backward does)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x):
        z = ctx.xp.maximum(x, 0)
        ctx.save_for_backward(z)
        return z

    @staticmethod
    def backward(ctx, gz):
        (z,) = ctx.saved_tensors
        return ctx.xp.where(z <= 0, 0, gz)

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


class ClampByTensors(Function):
    """z = min(max(x, low), high) with tensor bounds (either may be None, bounds that cross
    give high, as in PyTorch);  dz/dx = 1 where low <= x <= high, dz/dlow = 1 where
    x < low <= high, dz/dhigh = 1 where x > high or high < low; 0 elsewhere, and for all
    three wherever a NaN takes part"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, low, high):
        xp = ctx.xp
        z = x if low is None else xp.maximum(x, low)
        z = z if high is None else xp.minimum(z, high)
        if high is None:  # the masks of where each gradient goes, constants
            inside, to_low, to_high = x >= low, x < low, None
        elif low is None:
            inside, to_low, to_high = x <= high, None, x > high
        else:
            crossed = low > high
            inside = (x >= low) & (x <= high)
            to_low, to_high = (x < low) & ~crossed, (x > high) | crossed
        ctx.save_for_backward(inside, to_low, to_high)
        return z

    @staticmethod
    def backward(ctx, gz):
        xp, masks = ctx.xp, ctx.saved_tensors
        return tuple(xp.where(mask, gz, 0) if need else None
                     for mask, need in zip(masks, ctx.needs_input_grad))


class Hardtanh(Clamp):
    """z = min(max(x, low), high) for numbers low < high;  dz/dx = 1 strictly between low and
    high, 0 at and beyond them and at a NaN (PyTorch's hardtanh and relu6): Clamp but for the
    mask, whose gradient is 1 at the bounds"""

    option_types = {"low": NUMBER, "high": NUMBER}

    @staticmethod
    def forward(ctx, x, low=-1.0, high=1.0):
        ctx.save_for_backward((x > low) & (x < high))  # strictly inside: a constant mask
        return ctx.xp.clip(x, low, high)


class Maximum(Function):
    """z = max(x, y) elementwise;  dz/dx = 1 where x > y, 1/2 where x == y, 0 where x < y, and
    dz/dy the same with x and y swapped; where a NaN leaves the comparison undecided, z is NaN
    and both get the whole gradient (as in PyTorch)"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        z = ctx.xp.maximum(x, y)
        ctx.save_for_backward(*_shares(ctx, x < y, x > y, x == y, z.dtype))
        return z

    @staticmethod
    def backward(ctx, gz):
        share_of_x, share_of_y = ctx.saved_tensors
        need_x, need_y = ctx.needs_input_grad
        return (gz * share_of_x if need_x else None), (gz * share_of_y if need_y else None)


class Minimum(Function):
    """z = min(x, y) elementwise;  dz/dx = 1 where x < y, 1/2 where x == y, 0 where x > y, and
    dz/dy the same with x and y swapped; a NaN as in Maximum"""

    elementwise = True

    @staticmethod
    def forward(ctx, x, y):
        z = ctx.xp.minimum(x, y)
        ctx.save_for_backward(*_shares(ctx, x > y, x < y, x == y, z.dtype))
        return z

    backward = staticmethod(Maximum.backward)


def _shares(ctx, x_loses, y_loses, tie, dtype):
    """Each input's share of the gradient, constant weight arrays: 0 where it loses, 1/2 on a
    tie, else 1 (it wins, or a NaN left the comparison undecided). None for an input that needs
    no gradient."""
    xp, (need_x, need_y) = ctx.xp, ctx.needs_input_grad
    half_of_tie = xp.asarray(tie, dtype=dtype) * 0.5
    return (1 - xp.asarray(x_loses, dtype=dtype) - half_of_tie if need_x else None,
            1 - xp.asarray(y_loses, dtype=dtype) - half_of_tie if need_y else None)


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
