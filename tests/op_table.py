"""The op table: one list of cases that drives the forward, gradient, PyTorch and portability tests.

Like PyTorch's OpInfo and tinygrad's ``helper_test_op``, each case writes the same computation up
to three times, once per library, and says how to make its inputs:

- ``dg``: the function on dyngraph Tensors (what is under test);
- ``ref``: the same function on numpy arrays (the reference for forward values);
- ``torch``: the same function on torch tensors, or None where PyTorch spells it too differently;
- ``inputs``: one :class:`Input` per positional argument. Differentiable inputs are float arrays
  drawn from a value domain that keeps finite differences honest (positive for log and sqrt, away
  from 0 for div and abs, away from the kinks of relu, clamp, max and maximum). Other inputs
  (integer indices, boolean masks, class targets) are passed as Tensors that do not require grad,
  so that they live on the same device as the rest.

Values are made in float64 from a generator seeded by the case id, so every run and every backend
sees the same numbers; tests cast differentiable inputs to the dtype they need.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import dyngraph as dg
import dyngraph.nn.functional as F

# ---------------------------------------------------------------------------- the case type


@dataclass(frozen=True)
class Input:
    """How to make one positional input: ``make(rng)`` returns a numpy array (float64 values for
    differentiable inputs); ``differentiable`` is False for indices, masks and targets."""

    make: Callable[[np.random.Generator], np.ndarray]
    differentiable: bool = True


@dataclass(frozen=True)
class OpCase:
    id: str
    dg: Callable[..., Any]
    ref: Callable[..., np.ndarray]
    torch: Callable[..., Any] | None
    inputs: tuple[Input, ...]

    def arrays(self) -> list[np.ndarray]:
        """The inputs as numpy arrays, the same on every call (seeded by the case id)."""
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [np.asarray(spec.make(rng)) for spec in self.inputs]


def case(
    id: str,
    dg_fn: Callable[..., Any],
    ref: Callable[..., Any],
    torch_fn: Callable[..., Any] | None,
    *inputs: Input,
) -> OpCase:
    return OpCase(id, dg_fn, ref, torch_fn, tuple(inputs))


# ---------------------------------------------------------------------------- value domains


def normal(*shape: int) -> Input:
    """Standard normal values: for functions that are smooth everywhere."""
    return Input(lambda rng: rng.standard_normal(shape))


def positive(*shape: int, low: float = 0.5, high: float = 2.0) -> Input:
    """Values in [low, high]: for log, sqrt, and the base of x ** y."""
    return Input(lambda rng: rng.uniform(low, high, shape))


def nonzero(*shape: int) -> Input:
    """|values| in [0.5, 2], random signs: away from the kink of abs/relu and the pole of 1/x."""
    return Input(lambda rng: rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape))


def avoiding(*shape: int, points: Sequence[float], margin: float = 0.1) -> Input:
    """Values in [-2, 2] at least ``margin`` away from each of ``points`` (kinks of clamp)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        values = rng.uniform(-2.0, 2.0, shape)
        for p in points:
            close = np.abs(values - p) < margin
            values = np.where(close, p + np.where(values >= p, margin, -margin) * 2, values)
        return values

    return Input(make)


def lattice(*shape: int, offset: float = 0.0) -> Input:
    """Multiples of 0.4 plus ``offset``: two inputs with offsets 0 and 0.2 never tie (at least
    0.2 apart), so maximum/minimum are differentiable at every point."""
    return Input(lambda rng: rng.integers(-5, 6, shape) * 0.4 + offset)


def distinct(*shape: int) -> Input:
    """All values different, at least 0.3 apart: reductions max/min have no ties."""
    n = int(np.prod(shape))
    return Input(lambda rng: ((rng.permutation(n) - n / 2) * 0.3).reshape(shape))


def invertible(*shape: int) -> Input:
    """Matrices 2 I + normal / 2 (shape (*, n, n)): far from singular, so det and inverse have
    well-conditioned finite differences."""
    return Input(lambda rng: 2 * np.eye(shape[-1]) + rng.standard_normal(shape) / 2)


def fixed_normal(*shape: int) -> Input:
    """Standard normal values in a float tensor that does NOT require grad: exercises the
    ``needs_input_grad`` paths where an op skips the gradient of one input."""
    return Input(lambda rng: rng.standard_normal(shape), differentiable=False)


def indices(high: int, *shape: int) -> Input:
    """Integer indices in [0, high) (int64), not differentiable."""
    return Input(lambda rng: rng.integers(0, high, shape), differentiable=False)


def constant(value: Any) -> Input:
    """A fixed non-differentiable array: a boolean mask, repeated indices."""
    return Input(lambda rng: np.array(value), differentiable=False)


def mask(*shape: int) -> Input:
    """A random boolean mask with at least one True and one False."""

    def make(rng: np.random.Generator) -> np.ndarray:
        m = rng.random(shape) < 0.5
        m.flat[0], m.flat[-1] = True, False
        return m

    return Input(make, differentiable=False)


# ---------------------------------------------------------------------------- numpy references


def _np_logsumexp(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    shift = x.max(axis=axis, keepdims=True)
    out = np.log(np.exp(x - shift).sum(axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


def _np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x - _np_logsumexp(x, axis=axis, keepdims=True)


def _np_cross_entropy(x: np.ndarray, t: np.ndarray, reduction: str = "mean") -> np.ndarray:
    losses = -_np_log_softmax(x, -1)[np.arange(len(t)), t]
    return {"mean": losses.mean, "sum": losses.sum, "none": lambda: losses}[reduction]()


def _np_mse(a: np.ndarray, b: np.ndarray, reduction: str = "mean") -> np.ndarray:
    squared = (a - b) ** 2
    return {"mean": squared.mean, "sum": squared.sum, "none": lambda: squared}[reduction]()


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# ---------------------------------------------------------------------------- torch helpers
# Imported lazily inside the lambdas (this module must import without torch).


def _torch():
    import torch

    return torch


def _tdim(axis: Any, ndim: int) -> tuple[int, ...]:
    """PyTorch's dim= for a numpy-style axis (None means every axis)."""
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


# ---------------------------------------------------------------------------- elementwise

ELEMENTWISE = [
    # binary arithmetic: same shape, broadcast (3,1)x(1,4), (2,3)x(3,), Python floats both sides
    case("add", lambda x, y: x + y, lambda x, y: x + y, lambda x, y: x + y,
         normal(2, 3), normal(2, 3)),
    case("add-bcast-3x1-1x4", lambda x, y: x + y, lambda x, y: x + y, lambda x, y: x + y,
         normal(3, 1), normal(1, 4)),
    case("add-bcast-2x3-3", lambda x, y: x + y, lambda x, y: x + y, lambda x, y: x + y,
         normal(2, 3), normal(3)),
    case("add-scalar", lambda x: x + 2.5, lambda x: x + 2.5, lambda x: x + 2.5, normal(2, 3)),
    case("radd-scalar", lambda x: 2.5 + x, lambda x: 2.5 + x, lambda x: 2.5 + x, normal(2, 3)),
    case("add-0d", lambda x, y: x + y, lambda x, y: x + y, lambda x, y: x + y,
         normal(2, 3), normal()),
    case("sub", lambda x, y: x - y, lambda x, y: x - y, lambda x, y: x - y,
         normal(2, 3), normal(2, 3)),
    case("sub-bcast-3x1-1x4", lambda x, y: x - y, lambda x, y: x - y, lambda x, y: x - y,
         normal(3, 1), normal(1, 4)),
    case("sub-bcast-2x3-3", lambda x, y: x - y, lambda x, y: x - y, lambda x, y: x - y,
         normal(2, 3), normal(3)),
    case("sub-scalar", lambda x: x - 2.0, lambda x: x - 2.0, lambda x: x - 2.0, normal(2, 3)),
    case("rsub-scalar", lambda x: 2.0 - x, lambda x: 2.0 - x, lambda x: 2.0 - x, normal(2, 3)),
    case("mul", lambda x, y: x * y, lambda x, y: x * y, lambda x, y: x * y,
         normal(2, 3), normal(2, 3)),
    case("mul-self", lambda x: x * x, lambda x: x * x, lambda x: x * x, normal(2, 3)),
    case("mul-bcast-3x1-1x4", lambda x, y: x * y, lambda x, y: x * y, lambda x, y: x * y,
         normal(3, 1), normal(1, 4)),
    case("mul-bcast-2x3-3", lambda x, y: x * y, lambda x, y: x * y, lambda x, y: x * y,
         normal(2, 3), normal(3)),
    case("mul-scalar", lambda x: x * 3.0, lambda x: x * 3.0, lambda x: x * 3.0, normal(2, 3)),
    case("rmul-scalar", lambda x: 3.0 * x, lambda x: 3.0 * x, lambda x: 3.0 * x, normal(2, 3)),
    case("div", lambda x, y: x / y, lambda x, y: x / y, lambda x, y: x / y,
         normal(2, 3), nonzero(2, 3)),
    case("div-bcast-3x1-1x4", lambda x, y: x / y, lambda x, y: x / y, lambda x, y: x / y,
         normal(3, 1), nonzero(1, 4)),
    case("div-bcast-2x3-3", lambda x, y: x / y, lambda x, y: x / y, lambda x, y: x / y,
         normal(2, 3), nonzero(3)),
    case("div-scalar", lambda x: x / 4.0, lambda x: x / 4.0, lambda x: x / 4.0, normal(2, 3)),
    case("rdiv-scalar", lambda x: 2.0 / x, lambda x: 2.0 / x, lambda x: 2.0 / x, nonzero(2, 3)),
    case("pow", lambda x, y: x**y, lambda x, y: x**y, lambda x, y: x**y,
         positive(2, 3), normal(2, 3)),
    case("pow-bcast-3x1-1x4", lambda x, y: x**y, lambda x, y: x**y, lambda x, y: x**y,
         positive(3, 1), normal(1, 4)),
    case("pow-scalar-2", lambda x: x**2.0, lambda x: x**2.0, lambda x: x**2.0, normal(2, 3)),
    case("pow-int-3", lambda x: x**3, lambda x: x**3, lambda x: x**3, normal(2, 3)),
    case("pow-scalar-0.5", lambda x: x**0.5, lambda x: x**0.5, lambda x: x**0.5, positive(2, 3)),
    case("rpow-scalar", lambda x: 2.0**x, lambda x: 2.0**x, lambda x: 2.0**x, normal(2, 3)),
    case("pow-method", lambda x: x.pow(2.0), lambda x: x**2.0, lambda x: x.pow(2.0),
         normal(2, 3)),
    # unary
    case("neg", lambda x: -x, lambda x: -x, lambda x: -x, normal(2, 3)),
    case("neg-method", lambda x: x.neg(), lambda x: -x, lambda x: x.neg(), normal(2, 3)),
    case("abs", lambda x: x.abs(), np.abs, lambda x: x.abs(), nonzero(2, 3)),
    case("abs-builtin", lambda x: abs(x), np.abs, lambda x: abs(x), nonzero(2, 3)),
    case("exp", lambda x: x.exp(), np.exp, lambda x: x.exp(), normal(2, 3)),
    case("log", lambda x: x.log(), np.log, lambda x: x.log(), positive(2, 3)),
    case("sqrt", lambda x: x.sqrt(), np.sqrt, lambda x: x.sqrt(), positive(2, 3)),
    case("sin", lambda x: x.sin(), np.sin, lambda x: x.sin(), normal(2, 3)),
    case("cos", lambda x: x.cos(), np.cos, lambda x: x.cos(), normal(2, 3)),
    case("tanh", lambda x: x.tanh(), np.tanh, lambda x: x.tanh(), normal(2, 3)),
    case("sigmoid", lambda x: x.sigmoid(), _np_sigmoid, lambda x: x.sigmoid(), normal(2, 3)),
    case("sigmoid-large", lambda x: x.sigmoid(), _np_sigmoid, lambda x: x.sigmoid(),
         Input(lambda rng: rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(5, 12, (2, 3)))),
    case("relu", lambda x: x.relu(), lambda x: np.maximum(x, 0), lambda x: x.relu(),
         nonzero(3, 4)),
    case("exp-0d", lambda x: x.exp(), np.exp, lambda x: x.exp(), normal()),
    # the same ops as top-level functions
    case("dg.exp", dg.exp, np.exp, lambda x: _torch().exp(x), normal(2, 3)),
    case("dg.log", dg.log, np.log, lambda x: _torch().log(x), positive(2, 3)),
    case("dg.sqrt", dg.sqrt, np.sqrt, lambda x: _torch().sqrt(x), positive(2, 3)),
    case("dg.sin", dg.sin, np.sin, lambda x: _torch().sin(x), normal(2, 3)),
    case("dg.cos", dg.cos, np.cos, lambda x: _torch().cos(x), normal(2, 3)),
    case("dg.tanh", dg.tanh, np.tanh, lambda x: _torch().tanh(x), normal(2, 3)),
    case("dg.sigmoid", dg.sigmoid, _np_sigmoid, lambda x: _torch().sigmoid(x), normal(2, 3)),
    case("dg.relu", dg.relu, lambda x: np.maximum(x, 0), lambda x: _torch().relu(x),
         nonzero(2, 3)),
    case("dg.abs", dg.abs, np.abs, lambda x: _torch().abs(x), nonzero(2, 3)),
    # selection
    case("clamp", lambda x: x.clamp(min=-0.5, max=0.5), lambda x: np.clip(x, -0.5, 0.5),
         lambda x: x.clamp(min=-0.5, max=0.5), avoiding(3, 4, points=(-0.5, 0.5))),
    case("clamp-min", lambda x: x.clamp(min=0.2), lambda x: np.maximum(x, 0.2),
         lambda x: x.clamp(min=0.2), avoiding(3, 4, points=(0.2,))),
    case("clamp-max", lambda x: x.clamp(max=0.2), lambda x: np.minimum(x, 0.2),
         lambda x: x.clamp(max=0.2), avoiding(3, 4, points=(0.2,))),
    case("dg.clamp", lambda x: dg.clamp(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
         lambda x: _torch().clamp(x, -0.5, 0.5), avoiding(3, 4, points=(-0.5, 0.5))),
    case("maximum", dg.maximum, np.maximum, lambda x, y: _torch().maximum(x, y),
         lattice(2, 3), lattice(2, 3, offset=0.2)),
    case("maximum-bcast-3x1-1x4", dg.maximum, np.maximum, lambda x, y: _torch().maximum(x, y),
         lattice(3, 1), lattice(1, 4, offset=0.2)),
    case("maximum-scalar", lambda x: dg.maximum(x, 0.1), lambda x: np.maximum(x, 0.1),
         lambda x: x.clamp(min=0.1), lattice(2, 3)),  # torch.maximum takes no Python number
    case("maximum-method", lambda x, y: x.maximum(y), np.maximum,
         lambda x, y: x.maximum(y), lattice(2, 3), lattice(2, 3, offset=0.2)),
    case("minimum", dg.minimum, np.minimum, lambda x, y: _torch().minimum(x, y),
         lattice(2, 3), lattice(2, 3, offset=0.2)),
    case("minimum-bcast-2x3-3", dg.minimum, np.minimum, lambda x, y: _torch().minimum(x, y),
         lattice(2, 3), lattice(3, offset=0.2)),
    case("minimum-method", lambda x, y: x.minimum(y), np.minimum,
         lambda x, y: x.minimum(y), lattice(2, 3), lattice(2, 3, offset=0.2)),
    case("where", dg.where, np.where, lambda c, x, y: _torch().where(c, x, y),
         mask(2, 3), normal(2, 3), normal(2, 3)),
    case("where-bcast", dg.where, np.where, lambda c, x, y: _torch().where(c, x, y),
         mask(2, 3), normal(3), normal(2, 1)),
    case("where-scalar", lambda c, x: dg.where(c, x, 0.0), lambda c, x: np.where(c, x, 0.0),
         lambda c, x: _torch().where(c, x, 0.0), mask(2, 3), normal(2, 3)),
]

# only some inputs require grad: the others are float constants in the graph
ELEMENTWISE += [
    case("mul-no-grad-rhs", lambda x, c: x * c, lambda x, c: x * c, lambda x, c: x * c,
         normal(2, 3), fixed_normal(2, 3)),
    case("sub-no-grad-lhs", lambda c, x: c - x, lambda c, x: c - x, lambda c, x: c - x,
         fixed_normal(2, 3), normal(2, 3)),
    case("div-no-grad-numerator", lambda c, x: c / x, lambda c, x: c / x, lambda c, x: c / x,
         fixed_normal(2, 3), nonzero(2, 3)),
    case("pow-no-grad-exponent", lambda x, c: x**c, lambda x, c: x**c, lambda x, c: x**c,
         positive(2, 3), fixed_normal(2, 3)),
    case("pow-no-grad-base", lambda c, x: c**x, lambda c, x: c**x, lambda c, x: c**x,
         Input(lambda rng: rng.uniform(0.5, 2.0, (2, 3)), differentiable=False), normal(2, 3)),
    case("maximum-no-grad-rhs", dg.maximum, np.maximum, lambda x, y: _torch().maximum(x, y),
         lattice(2, 3), Input(lattice(2, 3, offset=0.2).make, differentiable=False)),
    case("minimum-no-grad-lhs", dg.minimum, np.minimum, lambda x, y: _torch().minimum(x, y),
         Input(lattice(2, 3).make, differentiable=False), lattice(2, 3, offset=0.2)),
    case("where-no-grad-y", dg.where, np.where, lambda c, x, y: _torch().where(c, x, y),
         mask(2, 3), normal(2, 3), fixed_normal(2, 3)),
]

# ---------------------------------------------------------------------------- reductions

_AXES: list[Any] = [None, 0, 1, -1, (0, 1)]


def _values(result: Any) -> Any:
    """x.max(dim) is a (values, indices) pair, as in PyTorch; x.max() and x.max((0, 1)) a
    Tensor."""
    return result[0] if isinstance(result, tuple) else result


def _reduction_cases() -> list[OpCase]:
    out = []
    for axis in _AXES:
        for keepdims in (False, True):
            tag = f"axis={axis}-keepdims={keepdims}".replace(" ", "")

            def dims(x, axis=axis):
                return _tdim(axis, x.ndim)

            out += [
                case(f"sum-{tag}",
                     lambda x, a=axis, k=keepdims: x.sum(axis=a, keepdims=k),
                     lambda x, a=axis, k=keepdims: x.sum(axis=a, keepdims=k),
                     lambda x, k=keepdims, d=dims: x.sum(dim=d(x), keepdim=k),
                     normal(2, 3)),
                case(f"mean-{tag}",
                     lambda x, a=axis, k=keepdims: x.mean(axis=a, keepdims=k),
                     lambda x, a=axis, k=keepdims: x.mean(axis=a, keepdims=k),
                     lambda x, k=keepdims, d=dims: x.mean(dim=d(x), keepdim=k),
                     normal(2, 3)),
                case(f"max-{tag}",
                     lambda x, a=axis, k=keepdims: _values(x.max(axis=a, keepdims=k)),
                     lambda x, a=axis, k=keepdims: x.max(axis=a, keepdims=k),
                     lambda x, k=keepdims, d=dims: x.amax(dim=d(x), keepdim=k),
                     distinct(2, 3)),
                case(f"min-{tag}",
                     lambda x, a=axis, k=keepdims: _values(x.min(axis=a, keepdims=k)),
                     lambda x, a=axis, k=keepdims: x.min(axis=a, keepdims=k),
                     lambda x, k=keepdims, d=dims: x.amin(dim=d(x), keepdim=k),
                     distinct(2, 3)),
                case(f"var-{tag}",
                     lambda x, a=axis, k=keepdims: x.var(axis=a, keepdims=k),
                     lambda x, a=axis, k=keepdims: x.var(axis=a, keepdims=k, ddof=1),
                     lambda x, k=keepdims, d=dims: x.var(dim=d(x), keepdim=k, correction=1),
                     normal(3, 4)),
                case(f"logsumexp-{tag}",
                     lambda x, a=axis, k=keepdims: x.logsumexp(axis=a, keepdims=k),
                     lambda x, a=axis, k=keepdims: _np_logsumexp(x, a, k),
                     lambda x, k=keepdims, d=dims: x.logsumexp(dim=d(x), keepdim=k),
                     normal(2, 3)),
            ]
    return out


REDUCTIONS = _reduction_cases() + [
    case("sum-3d-axis=(0,2)", lambda x: x.sum(axis=(0, 2)), lambda x: x.sum(axis=(0, 2)),
         lambda x: x.sum(dim=(0, 2)), normal(2, 3, 2)),
    case("mean-3d-axis=(-1,0)-keepdims", lambda x: x.mean(axis=(-1, 0), keepdims=True),
         lambda x: x.mean(axis=(-1, 0), keepdims=True),
         lambda x: x.mean(dim=(-1, 0), keepdim=True), normal(2, 3, 2)),
    case("max-3d-axis=1", lambda x: x.max(axis=1).values, lambda x: x.max(axis=1),
         lambda x: x.amax(dim=1), distinct(2, 3, 2)),
    case("sum-1d", lambda x: x.sum(), lambda x: x.sum(), lambda x: x.sum(), normal(5)),
    case("var-correction=0", lambda x: x.var(axis=1, correction=0),
         lambda x: x.var(axis=1, ddof=0), lambda x: x.var(dim=1, correction=0), normal(3, 4)),
    case("var-default-correction", lambda x: x.var(), lambda x: x.var(ddof=1),
         lambda x: x.var(), normal(3, 4)),
    case("dg.sum", lambda x: dg.sum(x, axis=0), lambda x: x.sum(axis=0),
         lambda x: x.sum(dim=0), normal(2, 3)),
    case("dg.mean", lambda x: dg.mean(x, axis=1, keepdims=True),
         lambda x: x.mean(axis=1, keepdims=True), lambda x: x.mean(dim=1, keepdim=True),
         normal(2, 3)),
    case("dg.logsumexp", lambda x: dg.logsumexp(x, axis=1), lambda x: _np_logsumexp(x, 1),
         lambda x: x.logsumexp(dim=1), normal(2, 3)),
    case("logsumexp-large", lambda x: x.logsumexp(axis=1), lambda x: _np_logsumexp(x, 1),
         lambda x: x.logsumexp(dim=1), Input(lambda rng: rng.standard_normal((2, 3)) + 500.0)),
]

# ---------------------------------------------------------------------------- softmax family

SOFTMAX = [
    case(f"{name}-axis={axis}", fn, ref, tfn, normal(3, 4))
    for axis in (-1, 0, 1)
    for name, fn, ref, tfn in [
        ("softmax", lambda x, a=axis: x.softmax(axis=a), lambda x, a=axis: _np_softmax(x, a),
         lambda x, a=axis: x.softmax(dim=a)),
        ("log_softmax", lambda x, a=axis: x.log_softmax(axis=a),
         lambda x, a=axis: _np_log_softmax(x, a), lambda x, a=axis: x.log_softmax(dim=a)),
        ("dg.softmax", lambda x, a=axis: dg.softmax(x, axis=a),
         lambda x, a=axis: _np_softmax(x, a), lambda x, a=axis: x.softmax(dim=a)),
        ("dg.log_softmax", lambda x, a=axis: dg.log_softmax(x, axis=a),
         lambda x, a=axis: _np_log_softmax(x, a), lambda x, a=axis: x.log_softmax(dim=a)),
    ]
] + [
    case("softmax-3d", lambda x: x.softmax(axis=1), lambda x: _np_softmax(x, 1),
         lambda x: x.softmax(dim=1), normal(2, 3, 2)),
    case("softmax-large-logits", lambda x: x.softmax(), _np_softmax, lambda x: x.softmax(dim=-1),
         Input(lambda rng: rng.standard_normal((2, 3)) * 3 + 800.0)),
    case("log_softmax-large-logits", lambda x: x.log_softmax(), _np_log_softmax,
         lambda x: x.log_softmax(dim=-1),
         Input(lambda rng: rng.standard_normal((2, 3)) * 3 - 800.0)),
]

# ---------------------------------------------------------------------------- matmul

MATMUL = [
    case(f"matmul-{name}", lambda x, y: x @ y, lambda x, y: x @ y, lambda x, y: x @ y,
         normal(*a), normal(*b))
    for name, a, b in [
        ("1d@1d", (3,), (3,)),
        ("1d@2d", (3,), (3, 4)),
        ("2d@1d", (2, 3), (3,)),
        ("2d@2d", (2, 3), (3, 4)),
        ("3d@3d", (2, 2, 3), (2, 3, 4)),
        ("3d@2d-bcast", (2, 2, 3), (3, 4)),
        ("2d@3d-bcast", (2, 3), (2, 3, 4)),
        ("3d@3d-bcast-batch1", (1, 2, 3), (2, 3, 4)),
        ("3d@1d", (2, 2, 3), (3,)),
        ("1d@3d", (3,), (2, 3, 4)),
    ]
] + [
    case("matmul-no-grad-lhs", lambda c, y: c @ y, lambda c, y: c @ y, lambda c, y: c @ y,
         fixed_normal(2, 3), normal(3, 4)),
    case("matmul-batched-no-grad-rhs", lambda x, c: x @ c, lambda x, c: x @ c,
         lambda x, c: x @ c, normal(2, 2, 3), fixed_normal(3,)),
    case("dg.matmul", dg.matmul, np.matmul, lambda x, y: _torch().matmul(x, y),
         normal(2, 3), normal(3, 2)),
    case("matmul-method", lambda x, y: x.matmul(y), np.matmul, lambda x, y: x.matmul(y),
         normal(2, 3), normal(3, 2)),
]

# ---------------------------------------------------------------------------- shape ops

SHAPE = [
    case("reshape", lambda x: x.reshape(3, 2), lambda x: x.reshape(3, 2),
         lambda x: x.reshape(3, 2), normal(2, 3)),
    case("reshape-tuple", lambda x: x.reshape((6, 1)), lambda x: x.reshape(6, 1),
         lambda x: x.reshape((6, 1)), normal(2, 3)),
    case("reshape-minus1", lambda x: x.reshape(-1, 2), lambda x: x.reshape(-1, 2),
         lambda x: x.reshape(-1, 2), normal(2, 3)),
    case("reshape-to-0d", lambda x: x.reshape(()), lambda x: x.reshape(()),
         lambda x: x.reshape(()), normal(1, 1)),
    case("dg.reshape", lambda x: dg.reshape(x, 6), lambda x: x.reshape(6),
         lambda x: x.reshape(6), normal(2, 3)),
    case("view", lambda x: x.view(6), lambda x: x.reshape(6), lambda x: x.view(6),
         normal(2, 3)),
    case("view-3d", lambda x: x.view(2, 3, 2), lambda x: x.reshape(2, 3, 2),
         lambda x: x.view(2, 3, 2), normal(3, 4)),
    case("transpose", lambda x: x.transpose(0, 1), lambda x: x.swapaxes(0, 1),
         lambda x: x.transpose(0, 1), normal(2, 3)),
    case("transpose-default", lambda x: x.transpose(), lambda x: x.swapaxes(-2, -1),
         lambda x: x.transpose(-2, -1), normal(2, 3, 4)),
    case("transpose-3d-0-2", lambda x: x.transpose(0, 2), lambda x: x.swapaxes(0, 2),
         lambda x: x.transpose(0, 2), normal(2, 3, 4)),
    case("dg.transpose", lambda x: dg.transpose(x, 1, 2), lambda x: x.swapaxes(1, 2),
         lambda x: x.transpose(1, 2), normal(2, 3, 4)),
    case("swapaxes", lambda x: x.swapaxes(0, -1), lambda x: x.swapaxes(0, -1),
         lambda x: x.swapaxes(0, -1), normal(2, 3, 4)),
    case("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
         lambda x: x.permute(2, 0, 1), normal(2, 3, 4)),
    case("permute-tuple", lambda x: x.permute((1, 2, 0)), lambda x: x.transpose(1, 2, 0),
         lambda x: x.permute((1, 2, 0)), normal(2, 3, 4)),
    case("permute-negative", lambda x: x.permute(-1, 0, 1), lambda x: x.transpose(2, 0, 1),
         lambda x: x.permute(-1, 0, 1), normal(2, 3, 4)),
    case("dg.permute", lambda x: dg.permute(x, 1, 0), lambda x: x.T, lambda x: x.permute(1, 0),
         normal(2, 3)),
    case("T-2d", lambda x: x.T, lambda x: x.T, lambda x: x.T, normal(2, 3)),
    case("T-3d", lambda x: x.T, lambda x: x.T, lambda x: x.permute(2, 1, 0), normal(2, 3, 4)),
    case("T-1d", lambda x: x.T, lambda x: x.T, None, normal(3)),
    case("squeeze", lambda x: x.squeeze(), np.squeeze, lambda x: x.squeeze(),
         normal(2, 1, 3, 1)),
    case("squeeze-axis", lambda x: x.squeeze(1), lambda x: np.squeeze(x, 1),
         lambda x: x.squeeze(1), normal(2, 1, 3)),
    case("squeeze-negative-axis", lambda x: x.squeeze(-1), lambda x: np.squeeze(x, -1),
         lambda x: x.squeeze(-1), normal(2, 3, 1)),
    case("squeeze-not-1-is-noop", lambda x: x.squeeze(0), lambda x: x,
         lambda x: x.squeeze(0), normal(2, 3)),
    case("unsqueeze-0", lambda x: x.unsqueeze(0), lambda x: x[None],
         lambda x: x.unsqueeze(0), normal(2, 3)),
    case("unsqueeze-1", lambda x: x.unsqueeze(1), lambda x: np.expand_dims(x, 1),
         lambda x: x.unsqueeze(1), normal(2, 3)),
    case("unsqueeze-minus1", lambda x: x.unsqueeze(-1), lambda x: x[..., None],
         lambda x: x.unsqueeze(-1), normal(2, 3)),
    case("expand", lambda x: x.expand(3, 4), lambda x: np.broadcast_to(x, (3, 4)),
         lambda x: x.expand(3, 4), normal(3, 1)),
    case("expand-minus1", lambda x: x.expand(-1, 4), lambda x: np.broadcast_to(x, (3, 4)),
         lambda x: x.expand(-1, 4), normal(3, 1)),
    case("expand-new-dims", lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)),
         lambda x: x.expand(2, 3, 4), normal(4)),
    case("expand-tuple", lambda x: x.expand((2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
         lambda x: x.expand((2, 3)), normal(1, 3)),
    case("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), lambda x: x.flatten(),
         normal(2, 3, 2)),
    case("flatten-start1", lambda x: x.flatten(1), lambda x: x.reshape(2, -1),
         lambda x: x.flatten(1), normal(2, 3, 2)),
    case("flatten-0-1", lambda x: x.flatten(0, 1), lambda x: x.reshape(6, 2),
         lambda x: x.flatten(0, 1), normal(2, 3, 2)),
    case("flatten-0d", lambda x: x.flatten(), lambda x: x.reshape(1), lambda x: x.flatten(),
         normal()),
]

# ---------------------------------------------------------------------------- indexing

INDEXING = [
    case("index-int", lambda x: x[1], lambda x: x[1], lambda x: x[1], normal(3, 4)),
    case("index-negative-int", lambda x: x[-1], lambda x: x[-1], lambda x: x[-1], normal(3, 4)),
    case("index-int-int", lambda x: x[1, 2], lambda x: x[1, 2], lambda x: x[1, 2],
         normal(3, 4)),
    case("index-slice", lambda x: x[1:3], lambda x: x[1:3], lambda x: x[1:3], normal(3, 4)),
    case("index-slice-step", lambda x: x[:, ::2], lambda x: x[:, ::2], lambda x: x[:, ::2],
         normal(3, 4)),
    case("index-int-slice", lambda x: x[0, 1:], lambda x: x[0, 1:], lambda x: x[0, 1:],
         normal(3, 4)),
    case("index-None", lambda x: x[None], lambda x: x[None], lambda x: x[None], normal(3, 4)),
    case("index-slice-None", lambda x: x[:, None], lambda x: x[:, None], lambda x: x[:, None],
         normal(3, 4)),
    case("index-Ellipsis", lambda x: x[..., 1], lambda x: x[..., 1], lambda x: x[..., 1],
         normal(2, 3, 4)),
    case("index-Ellipsis-None", lambda x: x[..., None], lambda x: x[..., None],
         lambda x: x[..., None], normal(3, 4)),
    case("index-bool-mask", lambda x, m: x[m], lambda x, m: x[m], lambda x, m: x[m],
         normal(3, 4), mask(3, 4)),
    case("index-bool-mask-rows", lambda x, m: x[m], lambda x, m: x[m], lambda x, m: x[m],
         normal(3, 4), mask(3)),
    case("index-int-array-repeats", lambda x, i: x[i], lambda x, i: x[i], lambda x, i: x[i],
         normal(3, 4), constant([0, 2, 0, 0, 1])),
    case("index-int-array-columns", lambda x, i: x[:, i], lambda x, i: x[:, i],
         lambda x, i: x[:, i], normal(3, 4), constant([3, 3, 0])),
    case("index-int-arrays-pairs", lambda x, i, j: x[i, j], lambda x, i, j: x[i, j],
         lambda x, i, j: x[i, j], normal(3, 4), constant([0, 2, 0]), constant([1, 1, 1])),
    case("index-negative-int-array", lambda x, i: x[i], lambda x, i: x[i], lambda x, i: x[i],
         normal(3, 4), constant([-1, 0, -1])),
    case("index-list-repeats", lambda x: x[[1, 1, 0]], lambda x: x[[1, 1, 0]],
         lambda x: x[[1, 1, 0]], normal(3, 4)),
]

# ---------------------------------------------------------------------------- joining

JOINING = [
    case("cat-axis0", lambda x, y: dg.cat([x, y], axis=0),
         lambda x, y: np.concatenate([x, y], axis=0),
         lambda x, y: _torch().cat([x, y], dim=0), normal(2, 3), normal(1, 3)),
    case("cat-axis1", lambda x, y: dg.cat([x, y], axis=1),
         lambda x, y: np.concatenate([x, y], axis=1),
         lambda x, y: _torch().cat([x, y], dim=1), normal(2, 3), normal(2, 2)),
    case("cat-axis-minus1-three", lambda x, y, z: dg.cat([x, y, z], axis=-1),
         lambda x, y, z: np.concatenate([x, y, z], axis=-1),
         lambda x, y, z: _torch().cat([x, y, z], dim=-1), normal(2, 1), normal(2, 3),
         normal(2, 2)),
    case("cat-same-tensor", lambda x: dg.cat([x, x], axis=0),
         lambda x: np.concatenate([x, x], axis=0), lambda x: _torch().cat([x, x], dim=0),
         normal(2, 3)),
    case("cat-mixed-grad", lambda x, c: dg.cat([c, x], axis=1),
         lambda x, c: np.concatenate([c, x], axis=1),
         lambda x, c: _torch().cat([c, x], dim=1), normal(2, 3), fixed_normal(2, 1)),
    case("stack-axis0", lambda x, y: dg.stack([x, y]), lambda x, y: np.stack([x, y]),
         lambda x, y: _torch().stack([x, y]), normal(2, 3), normal(2, 3)),
    case("stack-axis1", lambda x, y: dg.stack([x, y], axis=1),
         lambda x, y: np.stack([x, y], axis=1), lambda x, y: _torch().stack([x, y], dim=1),
         normal(2, 3), normal(2, 3)),
    case("stack-axis-minus1-three", lambda x, y, z: dg.stack([x, y, z], axis=-1),
         lambda x, y, z: np.stack([x, y, z], axis=-1),
         lambda x, y, z: _torch().stack([x, y, z], dim=-1), normal(2, 3), normal(2, 3),
         normal(2, 3)),
]

# ---------------------------------------------------------------------------- nn.functional


def _tF():
    import torch.nn.functional as tF

    return tF


FUNCTIONAL = [
    case("F.relu", F.relu, lambda x: np.maximum(x, 0), lambda x: _tF().relu(x), nonzero(3, 4)),
    case("F.sigmoid", F.sigmoid, _np_sigmoid, lambda x: _torch().sigmoid(x), normal(3, 4)),
    case("F.tanh", F.tanh, np.tanh, lambda x: _torch().tanh(x), normal(3, 4)),
    case("F.softmax", lambda x: F.softmax(x, axis=1), lambda x: _np_softmax(x, 1),
         lambda x: _tF().softmax(x, dim=1), normal(3, 4)),
    case("F.softmax-axis0", lambda x: F.softmax(x, axis=0), lambda x: _np_softmax(x, 0),
         lambda x: _tF().softmax(x, dim=0), normal(3, 4)),
    case("F.log_softmax", lambda x: F.log_softmax(x, axis=-1), _np_log_softmax,
         lambda x: _tF().log_softmax(x, dim=-1), normal(3, 4)),
    case("F.cross_entropy", F.cross_entropy, _np_cross_entropy,
         lambda x, t: _tF().cross_entropy(x, t), normal(4, 3), indices(3, 4)),
    case("F.cross_entropy-sum", lambda x, t: F.cross_entropy(x, t, reduction="sum"),
         lambda x, t: _np_cross_entropy(x, t, "sum"),
         lambda x, t: _tF().cross_entropy(x, t, reduction="sum"), normal(4, 3), indices(3, 4)),
    case("F.cross_entropy-none", lambda x, t: F.cross_entropy(x, t, reduction="none"),
         lambda x, t: _np_cross_entropy(x, t, "none"),
         lambda x, t: _tF().cross_entropy(x, t, reduction="none"), normal(4, 3),
         indices(3, 4)),
    case("F.cross_entropy-large-logits", F.cross_entropy, _np_cross_entropy,
         lambda x, t: _tF().cross_entropy(x, t),
         Input(lambda rng: rng.standard_normal((3, 4)) * 3 + 700.0), indices(4, 3)),
    case("F.mse_loss", F.mse_loss, _np_mse, lambda x, y: _tF().mse_loss(x, y),
         normal(3, 4), normal(3, 4)),
    case("F.mse_loss-sum", lambda x, y: F.mse_loss(x, y, reduction="sum"),
         lambda x, y: _np_mse(x, y, "sum"),
         lambda x, y: _tF().mse_loss(x, y, reduction="sum"), normal(3, 4), normal(3, 4)),
    case("F.mse_loss-none", lambda x, y: F.mse_loss(x, y, reduction="none"),
         lambda x, y: _np_mse(x, y, "none"),
         lambda x, y: _tF().mse_loss(x, y, reduction="none"), normal(3, 4), normal(3, 4)),
    case("F.embedding-repeats", lambda w, i: F.embedding(i, w), lambda w, i: w[i],
         lambda w, i: _tF().embedding(i, w), normal(5, 3), constant([[0, 4, 0], [2, 0, 4]])),
]

# ---------------------------------------------------------------------------- composites
# Several ops in one graph: fan-in, a broadcast inside a chain, a shared subexpression.

COMPOSITE = [
    case("composite-mlp-tanh", lambda x, w, b: ((x @ w + b).tanh() ** 2).sum(axis=1),
         lambda x, w, b: (np.tanh(x @ w + b) ** 2).sum(axis=1),
         lambda x, w, b: ((x @ w + b).tanh() ** 2).sum(dim=1),
         normal(2, 3), normal(3, 4), normal(4)),
    case("composite-shared-subexpression", lambda x: (x.exp() * x.sin() + x.exp()).mean(),
         lambda x: (np.exp(x) * np.sin(x) + np.exp(x)).mean(),
         lambda x: (x.exp() * x.sin() + x.exp()).mean(), normal(2, 3)),
    case("composite-normalize", lambda x: (x - x.mean(axis=1, keepdims=True))
         / (x.var(axis=1, keepdims=True) + 1e-3).sqrt(),
         lambda x: (x - x.mean(axis=1, keepdims=True))
         / np.sqrt(x.var(axis=1, keepdims=True, ddof=1) + 1e-3),
         lambda x: (x - x.mean(dim=1, keepdim=True))
         / (x.var(dim=1, keepdim=True) + 1e-3).sqrt(), normal(3, 4)),
]

# ---------------------------------------------------------------------------- more ops (issue 13)
# PyTorch's names: reductions and orderings, indexing along a dim, masking and rearranging, the
# linear algebra of attention, activations, losses, convolution and pooling.


def _np_erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x)


def _np_gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + _np_erf(x / math.sqrt(2)))


def _np_gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _np_softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def _np_reduce(losses: np.ndarray, reduction: str) -> np.ndarray:
    return {"mean": losses.mean, "sum": losses.sum, "none": lambda: losses}[reduction]()


def _np_ce_full(x, t, weight=None, ignore_index=-100, smoothing=0.0, reduction="mean"):
    """Cross-entropy over (N, C, d...) logits, written out from PyTorch's documented formula."""
    c = x.shape[1]
    logp = x - _np_logsumexp(x, axis=1, keepdims=True)
    w = np.ones(c) if weight is None else weight
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    nll = -w[safe] * picked * valid
    smooth = -(logp * w.reshape((1, c) + (1,) * (x.ndim - 2))).sum(axis=1) * valid
    losses = (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "mean":
        return losses.sum() / (w[safe] * valid).sum()
    return _np_reduce(losses, reduction)


def _np_ce_probs(x, p, smoothing=0.0, reduction="mean"):
    c = x.shape[1]
    logp = x - _np_logsumexp(x, axis=1, keepdims=True)
    losses = -(logp * (p * (1 - smoothing) + smoothing / c)).sum(axis=1)
    return _np_reduce(losses, reduction)


def _np_bce(p, t, reduction="mean"):
    return _np_reduce(-(t * np.log(p) + (1 - t) * np.log1p(-p)), reduction)


def _np_bce_logits(x, t, pos_weight=None, reduction="mean"):
    pw = 1.0 if pos_weight is None else pos_weight
    softplus_neg = np.logaddexp(0, -x)
    return _np_reduce((1 - t) * x + (1 + (pw - 1) * t) * softplus_neg, reduction)


def _np_layer_norm(x, dims, w=None, b=None, eps=1e-5):
    mean = x.mean(axis=dims, keepdims=True)
    out = (x - mean) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    return out * (1 if w is None else w) + (0 if b is None else b)


def _np_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Convolution (cross-correlation) written as loops over the output, N spatial dims."""
    spatial = x.ndim - 2
    s, p, d = ((v,) * spatial if isinstance(v, int) else v for v in (stride, padding, dilation))
    x = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    k = w.shape[2:]
    out_shape = [(n - di * (kk - 1) - 1) // st + 1 for n, kk, st, di in zip(x.shape[2:], k, s, d)]
    out = np.zeros((x.shape[0], w.shape[0], *out_shape))
    cin, cout = w.shape[1], w.shape[0] // groups
    for o in range(w.shape[0]):
        g = o // cout
        for pos in np.ndindex(*out_shape):
            window = tuple(slice(q * st, q * st + di * (kk - 1) + 1, di)
                           for q, st, di, kk in zip(pos, s, d, k))
            patch = x[(slice(None), slice(g * cin, (g + 1) * cin)) + window]
            out[(slice(None), o) + pos] = (patch * w[o]).reshape(x.shape[0], -1).sum(axis=1)
    if b is not None:
        out += b.reshape((1, -1) + (1,) * spatial)
    return out


def _np_max_pool(x, kernel, stride=None, padding=0):
    spatial = x.ndim - 2
    k = (kernel,) * spatial if isinstance(kernel, int) else kernel
    s = k if stride is None else ((stride,) * spatial if isinstance(stride, int) else stride)
    p = (padding,) * spatial if isinstance(padding, int) else padding
    x = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p], constant_values=-np.inf)
    out_shape = [(n - kk) // st + 1 for n, kk, st in zip(x.shape[2:], k, s)]
    out = np.empty(x.shape[:2] + tuple(out_shape))
    for pos in np.ndindex(*out_shape):
        window = tuple(slice(q * st, q * st + kk) for q, st, kk in zip(pos, s, k))
        out[(slice(None), slice(None)) + pos] = x[(slice(None), slice(None)) + window].reshape(
            x.shape[:2] + (-1,)).max(axis=-1)
    return out


def _np_gather(x, dim, index):
    key = [np.arange(n).reshape([-1 if a == i else 1 for a in range(index.ndim)])
           for i, n in enumerate(index.shape)]
    key[dim] = index
    return x[tuple(key)]


def _np_scatter_add(x, dim, index, src):
    key = [np.arange(n).reshape([-1 if a == i else 1 for a in range(index.ndim)])
           for i, n in enumerate(index.shape)]
    key[dim] = index
    out = x.copy()
    np.add.at(out, tuple(np.broadcast_arrays(*key)), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _np_sort(x, dim=-1, descending=False):
    order = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(x, order, axis=dim), order


def _np_topk(x, k, dim=-1, largest=True):
    values, order = _np_sort(x, dim, descending=largest)
    return np.take(values, np.arange(k), axis=dim), np.take(order, np.arange(k), axis=dim)


def _np_norm(x, p=2.0, dim=None, keepdim=False):
    a = np.abs(x)
    if p == np.inf:
        return a.max(axis=dim, keepdims=keepdim)
    return (a**p).sum(axis=dim, keepdims=keepdim) ** (1 / p)


def _np_repeat(x, sizes):
    return np.tile(x.reshape((1,) * (len(sizes) - x.ndim) + x.shape), sizes)


def _classes(*shape: int) -> Input:
    """Positive per-class weights (a float constant, not differentiable)."""
    return Input(lambda rng: rng.uniform(0.5, 2.0, shape), differentiable=False)


def _probabilities(*shape: int) -> Input:
    """Rows (axis 1) of positive numbers summing to 1: class probabilities, differentiable."""

    def make(rng: np.random.Generator) -> np.ndarray:
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(axis=1, keepdims=True)

    return Input(make)


def _with_zero(*shape: int) -> Input:
    """Normal values with one exact zero (the case that breaks prod's z / x gradient)."""

    def make(rng: np.random.Generator) -> np.ndarray:
        values = rng.standard_normal(shape)
        values.flat[1] = 0.0
        return values

    return Input(make)


def _t(name: str) -> Callable[..., Any]:
    """torch.<name>, looked up when the case runs."""
    return lambda *args, **kwargs: getattr(_torch(), name)(*args, **kwargs)


MORE_REDUCTIONS = [
    case("std-dim=1", lambda x: x.std(dim=1), lambda x: x.std(axis=1, ddof=1),
         lambda x: x.std(dim=1), normal(3, 4)),
    case("std-all", lambda x: x.std(), lambda x: x.std(ddof=1), lambda x: x.std(), normal(3, 4)),
    case("std-keepdim-correction=0", lambda x: x.std(0, keepdim=True, correction=0),
         lambda x: x.std(axis=0, keepdims=True), lambda x: x.std(0, keepdim=True, correction=0),
         normal(3, 4)),
    case("std-axis-keepdims", lambda x: x.std(axis=-1, keepdims=True),
         lambda x: x.std(axis=-1, keepdims=True, ddof=1), lambda x: x.std(-1, keepdim=True),
         normal(2, 3, 4)),
    case("dg.std-unbiased=False", lambda x: dg.std(x, 1, False), lambda x: x.std(axis=1),
         lambda x: _torch().std(x, 1, False), normal(3, 4)),
    case("prod-all", lambda x: x.prod(), lambda x: x.prod(), lambda x: x.prod(), normal(2, 3)),
    case("prod-dim=1", lambda x: x.prod(1), lambda x: x.prod(axis=1), lambda x: x.prod(1),
         normal(3, 4)),
    case("prod-dim=0-keepdim", lambda x: x.prod(dim=0, keepdim=True),
         lambda x: x.prod(axis=0, keepdims=True), lambda x: x.prod(dim=0, keepdim=True),
         normal(3, 4)),
    case("prod-with-zero", lambda x: x.prod(1), lambda x: x.prod(axis=1), lambda x: x.prod(1),
         _with_zero(2, 3)),
    case("prod-all-with-zero", lambda x: x.prod(), lambda x: x.prod(), lambda x: x.prod(),
         _with_zero(2, 3)),
    case("dg.prod", lambda x: dg.prod(x, -1), lambda x: x.prod(axis=-1),
         lambda x: _torch().prod(x, -1), normal(2, 3, 2)),
    case("cumsum-dim=0", lambda x: x.cumsum(0), lambda x: x.cumsum(axis=0),
         lambda x: x.cumsum(0), normal(3, 4)),
    case("cumsum-dim=-1", lambda x: x.cumsum(dim=-1), lambda x: x.cumsum(axis=-1),
         lambda x: x.cumsum(dim=-1), normal(2, 3, 4)),
    case("dg.cumsum", lambda x: dg.cumsum(x, 1), lambda x: x.cumsum(axis=1),
         lambda x: _torch().cumsum(x, 1), normal(3, 4)),
    case("norm", lambda x: x.norm(), lambda x: np.sqrt((x * x).sum()), lambda x: x.norm(),
         normal(3, 4)),
    case("norm-fro", lambda x: x.norm(p="fro"), lambda x: np.sqrt((x * x).sum()),
         lambda x: x.norm(p="fro"), normal(3, 4)),
    case("norm-dim=1", lambda x: x.norm(dim=1), lambda x: _np_norm(x, 2, 1),
         lambda x: x.norm(dim=1), normal(3, 4)),
    case("norm-p=1-keepdim", lambda x: x.norm(p=1, dim=0, keepdim=True),
         lambda x: _np_norm(x, 1, 0, True), lambda x: x.norm(p=1, dim=0, keepdim=True),
         nonzero(3, 4)),
    case("norm-p=3", lambda x: x.norm(3, dim=-1), lambda x: _np_norm(x, 3, -1),
         lambda x: x.norm(3, dim=-1), nonzero(3, 4)),
    case("norm-p=inf", lambda x: x.norm(float("inf"), dim=1),
         lambda x: _np_norm(x, np.inf, 1), lambda x: x.norm(float("inf"), dim=1),
         distinct(3, 4)),
    case("dg.norm", lambda x: dg.norm(x, dim=(0, 1)), lambda x: _np_norm(x, 2, (0, 1)),
         lambda x: _torch().norm(x, dim=(0, 1)), normal(2, 3, 2)),
    case("amax", lambda x: x.amax(), lambda x: x.max(), lambda x: x.amax(), distinct(3, 4)),
    case("amax-dim=1-keepdim", lambda x: x.amax(1, keepdim=True),
         lambda x: x.max(axis=1, keepdims=True), lambda x: x.amax(1, keepdim=True),
         distinct(3, 4)),
    case("amax-dims", lambda x: x.amax(dim=(0, 2)), lambda x: x.max(axis=(0, 2)),
         lambda x: x.amax(dim=(0, 2)), distinct(2, 3, 2)),
    case("amin-dim=0", lambda x: x.amin(0), lambda x: x.min(axis=0), lambda x: x.amin(0),
         distinct(3, 4)),
    case("dg.amax", lambda x: dg.amax(x, -1), lambda x: x.max(axis=-1),
         lambda x: _torch().amax(x, -1), distinct(3, 4)),
    case("dg.amin", lambda x: dg.amin(x, 1), lambda x: x.min(axis=1),
         lambda x: _torch().amin(x, 1), distinct(3, 4)),
    case("sort-values", lambda x: x.sort().values, lambda x: np.sort(x, axis=-1),
         lambda x: x.sort().values, distinct(3, 4)),
    case("sort-dim=0-descending", lambda x: x.sort(dim=0, descending=True).values,
         lambda x: _np_sort(x, 0, True)[0], lambda x: x.sort(dim=0, descending=True).values,
         distinct(3, 4)),
    case("dg.sort", lambda x: dg.sort(x, 1)[0], lambda x: np.sort(x, axis=1),
         lambda x: _torch().sort(x, 1)[0], distinct(2, 3, 2)),
    case("topk-values", lambda x: x.topk(2).values, lambda x: _np_topk(x, 2)[0],
         lambda x: x.topk(2).values, distinct(3, 4)),
    case("topk-smallest-dim=0", lambda x: x.topk(2, dim=0, largest=False).values,
         lambda x: _np_topk(x, 2, 0, False)[0],
         lambda x: x.topk(2, dim=0, largest=False).values, distinct(3, 4)),
    case("dg.topk", lambda x: dg.topk(x, 1, dim=1)[0], lambda x: _np_topk(x, 1, 1)[0],
         lambda x: _torch().topk(x, 1, dim=1)[0], distinct(3, 4)),
]

MORE_ELEMENTWISE = [
    case("atan", lambda x: x.atan(), np.arctan, _t("atan"), normal(3, 4)),
    case("dg.atan2", dg.atan2, np.arctan2, lambda y, x: _torch().atan2(y, x), normal(3, 4),
         nonzero(3, 4)),
    case("sinh", lambda x: x.sinh(), np.sinh, _t("sinh"), normal(3, 4)),
    case("cosh", lambda x: x.cosh(), np.cosh, _t("cosh"), normal(3, 4)),
    case("expm1", lambda x: x.expm1(), np.expm1, _t("expm1"), normal(3, 4)),
    case("logit", lambda x: x.logit(), lambda p: np.log(p / (1 - p)), lambda x: x.logit(),
         positive(3, 4, low=0.1, high=0.9)),
    case("F.hardtanh", F.hardtanh, lambda x: np.clip(x, -1.0, 1.0),
         lambda x: _torch().nn.functional.hardtanh(x), avoiding(3, 4, points=(-1.0, 1.0))),
    case("clamp-tensors", lambda x, low: x.clamp(low, low + 1.0),
         lambda x, low: np.clip(x, low, low + 1.0), lambda x, low: x.clamp(low, low + 1.0),
         avoiding(3, 4, points=(-0.5, 0.5)), Input(lambda rng: np.full((4,), -0.5))),
    case("sign", lambda x: x.sign() * x, lambda x: np.sign(x) * x, lambda x: x.sign() * x,
         nonzero(3, 4)),
    case("dg.sign", dg.sign, np.sign, _t("sign"), nonzero(3, 4)),
    case("log1p", lambda x: x.log1p(), np.log1p, lambda x: x.log1p(),
         positive(3, 4, low=-0.5, high=2.0)),
    case("dg.log1p", dg.log1p, np.log1p, _t("log1p"), positive(3, 4)),
    case("square", lambda x: x.square(), np.square, lambda x: x.square(), normal(3, 4)),
    case("dg.square", dg.square, np.square, _t("square"), normal(3, 4)),
    case("masked_fill", lambda x, m: x.masked_fill(m, -1.5), lambda x, m: np.where(m, -1.5, x),
         lambda x, m: x.masked_fill(m, -1.5), normal(3, 4), mask(3, 4)),
    case("masked_fill-bcast-causal", lambda x, m: x.masked_fill(m, -1e9),
         lambda x, m: np.where(m, -1e9, x), lambda x, m: x.masked_fill(m, -1e9),
         normal(2, 3, 3), constant(np.triu(np.ones((3, 3), bool), 1))),
    case("dg.masked_fill", lambda x, m: dg.masked_fill(x, m, 0.0),
         lambda x, m: np.where(m, 0.0, x), lambda x, m: x.masked_fill(m, 0.0),
         normal(3, 4), mask(4)),
    case("tril", lambda x: x.tril(), np.tril, lambda x: x.tril(), normal(3, 4)),
    case("tril-diagonal=-1", lambda x: x.tril(-1), lambda x: np.tril(x, -1),
         lambda x: x.tril(-1), normal(2, 3, 3)),
    case("triu", lambda x: x.triu(), np.triu, lambda x: x.triu(), normal(4, 3)),
    case("triu-diagonal=1", lambda x: x.triu(diagonal=1), lambda x: np.triu(x, 1),
         lambda x: x.triu(diagonal=1), normal(3, 3)),
    case("dg.tril", lambda x: dg.tril(x, 1), lambda x: np.tril(x, 1),
         lambda x: _torch().tril(x, 1), normal(3, 4)),
    case("dg.triu", lambda x: dg.triu(x), np.triu, lambda x: _torch().triu(x), normal(3, 4)),
    # issue 37
    case("clamp_min", lambda x: x.clamp_min(0.5), lambda x: np.maximum(x, 0.5),
         lambda x: x.clamp_min(0.5), avoiding(3, 4, points=(0.5,))),
    case("dg.clamp_max", lambda x: dg.clamp_max(x, -0.25), lambda x: np.minimum(x, -0.25),
         lambda x: _torch().clamp_max(x, -0.25), avoiding(3, 4, points=(-0.25,))),
]

MORE_SHAPE = [
    case("t-2d", lambda x: x.t(), lambda x: x.T, lambda x: x.t(), normal(2, 3)),
    case("t-1d", lambda x: x.t(), lambda x: x, lambda x: x.t(), normal(3)),
    case("dg.t", dg.t, np.transpose, _t("t"), normal(3, 2)),
    case("flip-dim0", lambda x: x.flip(0), lambda x: np.flip(x, 0), lambda x: x.flip(0),
         normal(3, 4)),
    case("flip-dims", lambda x: x.flip((0, -1)), lambda x: np.flip(x, (0, 2)),
         lambda x: x.flip((0, -1)), normal(2, 3, 4)),
    case("dg.flip", lambda x: dg.flip(x, [1]), lambda x: np.flip(x, 1),
         lambda x: _torch().flip(x, [1]), normal(3, 4)),
    case("repeat", lambda x: x.repeat(2, 3), lambda x: np.tile(x, (2, 3)),
         lambda x: x.repeat(2, 3), normal(2, 3)),
    case("repeat-new-dims", lambda x: x.repeat(2, 1, 2), lambda x: _np_repeat(x, (2, 1, 2)),
         lambda x: x.repeat(2, 1, 2), normal(3, 2)),
    case("split-size", lambda x: x.split(2, dim=1)[1], lambda x: x[:, 2:4],
         lambda x: x.split(2, dim=1)[1], normal(3, 5)),
    case("split-uneven-last", lambda x: x.split(2)[-1], lambda x: x[4:],
         lambda x: x.split(2)[-1], normal(5, 3)),
    case("split-sections-used-together", lambda x: (lambda a, b: a * b)(*x.split([1, 3], 1)),
         lambda x: x[:, :1] * x[:, 1:], lambda x: (lambda a, b: a * b)(*x.split([1, 3], 1)),
         normal(3, 4)),
    case("dg.split", lambda x: dg.split(x, [2, 1], dim=0)[0], lambda x: x[:2],
         lambda x: _torch().split(x, [2, 1], dim=0)[0], normal(3, 4)),
    case("chunk", lambda x: (lambda a, b, c: a - b * c)(*x.chunk(3, dim=-1)),
         lambda x: x[..., 0:2] - x[..., 2:4] * x[..., 4:6],
         lambda x: (lambda a, b, c: a - b * c)(*x.chunk(3, dim=-1)), normal(2, 6)),
    case("chunk-uneven", lambda x: x.chunk(2)[1], lambda x: x[3:], lambda x: x.chunk(2)[1],
         normal(5, 2)),
    case("dg.chunk", lambda x: dg.chunk(x, 2, 1)[0], lambda x: x[:, :2],
         lambda x: _torch().chunk(x, 2, 1)[0], normal(3, 4)),
    case("unbind", lambda x: (lambda a, b, c: a * b + c)(*x.unbind(1)),
         lambda x: x[:, 0] * x[:, 1] + x[:, 2],
         lambda x: (lambda a, b, c: a * b + c)(*x.unbind(1)), normal(4, 3)),
    case("dg.unbind", lambda x: dg.unbind(x)[1], lambda x: x[1], lambda x: _torch().unbind(x)[1],
         normal(2, 3)),
    # issue 37
    case("repeat_interleave", lambda x: x.repeat_interleave(2), lambda x: np.repeat(x, 2),
         lambda x: x.repeat_interleave(2), normal(2, 3)),
    case("repeat_interleave-dim", lambda x: x.repeat_interleave(3, dim=-1),
         lambda x: np.repeat(x, 3, axis=-1), lambda x: x.repeat_interleave(3, dim=-1),
         normal(2, 2)),
    case("repeat_interleave-counts", lambda x, r: x.repeat_interleave(r, dim=1),
         lambda x, r: np.repeat(x, r, axis=1), lambda x, r: x.repeat_interleave(r, dim=1),
         normal(2, 3), constant([2, 0, 3])),
    case("dg.repeat_interleave", lambda x: dg.repeat_interleave(x, 2, 0),
         lambda x: np.repeat(x, 2, axis=0), lambda x: _torch().repeat_interleave(x, 2, 0),
         normal(3, 2)),
]

MORE_INDEXING = [
    case("gather-dim=0", lambda x, i: x.gather(0, i), lambda x, i: _np_gather(x, 0, i),
         lambda x, i: x.gather(0, i), normal(3, 4), indices(3, 2, 4)),
    case("gather-dim=1-repeats", lambda x, i: x.gather(1, i), lambda x, i: _np_gather(x, 1, i),
         lambda x, i: x.gather(1, i), normal(3, 4), constant([[0, 0, 3], [1, 1, 1], [2, 3, 2]])),
    case("gather-smaller-index", lambda x, i: x.gather(-1, i),
         lambda x, i: _np_gather(x, 2, i), lambda x, i: x.gather(-1, i), normal(2, 3, 4),
         indices(4, 1, 2, 2)),
    case("dg.gather", lambda x, i: dg.gather(x, 1, i), lambda x, i: _np_gather(x, 1, i),
         lambda x, i: _torch().gather(x, 1, i), normal(3, 4), indices(4, 3, 1)),
    case("scatter_add", lambda x, i, s: x.scatter_add(0, i, s),
         lambda x, i, s: _np_scatter_add(x, 0, i, s), lambda x, i, s: x.scatter_add(0, i, s),
         normal(3, 4), constant([[0, 1, 2, 0], [0, 0, 2, 1]]), normal(2, 4)),
    # torch=None: PyTorch 2.13's backward refuses a src larger than the index (shape error)
    case("scatter_add-dim=1-larger-src", lambda x, i, s: x.scatter_add(1, i, s),
         lambda x, i, s: _np_scatter_add(x, 1, i, s), None,
         normal(3, 4), constant([[3, 3], [0, 1], [2, 2]]), normal(3, 3)),
    case("scatter_add-no-grad-src", lambda x, i, s: x.scatter_add(0, i, s),
         lambda x, i, s: _np_scatter_add(x, 0, i, s), lambda x, i, s: x.scatter_add(0, i, s),
         normal(3, 2), indices(3, 4, 2), fixed_normal(4, 2)),
    case("dg.scatter_add", lambda x, i, s: dg.scatter_add(x, 1, i, s),
         lambda x, i, s: _np_scatter_add(x, 1, i, s),
         lambda x, i, s: _torch().scatter_add(x, 1, i, s), normal(2, 3), indices(3, 2, 4),
         normal(2, 4)),
]

MORE_MATMUL = [
    case("mm", lambda x, y: x.mm(y), np.matmul, lambda x, y: x.mm(y), normal(2, 3), normal(3, 4)),
    case("dg.mm", dg.mm, np.matmul, _t("mm"), normal(3, 2), normal(2, 2)),
    case("bmm", lambda x, y: x.bmm(y), np.matmul, lambda x, y: x.bmm(y), normal(2, 2, 3),
         normal(2, 3, 4)),
    case("dg.bmm", dg.bmm, np.matmul, _t("bmm"), normal(3, 1, 2), normal(3, 2, 2)),
    case("outer", lambda x, y: x.outer(y), np.outer, lambda x, y: x.outer(y), normal(3),
         normal(4)),
    case("dg.outer", dg.outer, np.outer, _t("outer"), normal(2), normal(3)),
    case("det", lambda x: x.det(), np.linalg.det, lambda x: x.det(), invertible(3, 3)),
    case("dg.det-batched", dg.det, np.linalg.det, _t("det"), invertible(2, 4, 4)),
    case("det-times-x", lambda x: x.det() * x.sum(), lambda x: np.linalg.det(x) * x.sum(),
         lambda x: x.det() * x.sum(), invertible(2, 2)),
    case("inverse", lambda x: x.inverse(), np.linalg.inv, lambda x: x.inverse(),
         invertible(3, 3)),
    case("dg.inverse-batched", dg.inverse, np.linalg.inv, _t("inverse"), invertible(2, 2, 2)),
] + [
    case(f"einsum-{equation}", lambda *xs, e=equation: dg.einsum(e, *xs),
         lambda *xs, e=equation: np.einsum(e, *xs),
         lambda *xs, e=equation: _torch().einsum(e, *xs), *[normal(*s) for s in shapes])
    for equation, shapes in [
        ("ij,jk->ik", [(2, 3), (3, 4)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
        ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
        ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("ii->i", [(3, 3)]),
        ("ii", [(3, 3)]),
        ("ij->ji", [(2, 3)]),
        ("ij->", [(2, 3)]),
        ("ij,k->j", [(3, 2), (4,)]),
        ("ij,jk", [(2, 3), (3, 2)]),
        ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]),
        ("bi,bi->b", [(3, 4), (3, 4)]),
    ]
] + [
    case("einsum-list", lambda x, y: dg.einsum("ij,jk->ik", [x, y]), np.matmul,
         lambda x, y: _torch().einsum("ij,jk->ik", [x, y]), normal(2, 3), normal(3, 2)),
    case("einsum-no-grad-rhs", lambda x, c: dg.einsum("ij,jk->ik", x, c), np.matmul,
         lambda x, c: _torch().einsum("ij,jk->ik", x, c), normal(2, 3), fixed_normal(3, 2)),
]

MORE_FUNCTIONAL = [
    case("F.linear", F.linear, lambda x, w, b: x @ w.T + b, lambda x, w, b: _tF().linear(x, w, b),
         normal(3, 4), normal(5, 4), normal(5)),
    case("F.linear-no-bias-batched", F.linear, lambda x, w: x @ w.T,
         lambda x, w: _tF().linear(x, w), normal(2, 3, 4), normal(5, 4)),
    case("F.leaky_relu", F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x),
         lambda x: _tF().leaky_relu(x), nonzero(3, 4)),
    case("F.leaky_relu-0.2", lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
         lambda x: _tF().leaky_relu(x, 0.2), nonzero(3, 4)),
    case("F.gelu", F.gelu, _np_gelu, lambda x: _tF().gelu(x), normal(3, 4)),
    case("F.gelu-tanh", lambda x: F.gelu(x, approximate="tanh"), _np_gelu_tanh,
         lambda x: _tF().gelu(x, approximate="tanh"), normal(3, 4)),
    case("F.softplus", F.softplus, _np_softplus, lambda x: _tF().softplus(x), normal(3, 4)),
    case("F.softplus-beta-threshold", lambda x: F.softplus(x, beta=2.0, threshold=1.0),
         lambda x: _np_softplus(x, 2.0, 1.0), lambda x: _tF().softplus(x, beta=2.0, threshold=1.0),
         avoiding(3, 4, points=(0.5,))),
    case("F.softplus-large", F.softplus, _np_softplus, lambda x: _tF().softplus(x),
         Input(lambda rng: rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(15, 40, (2, 3)))),
    case("F.logsigmoid", F.logsigmoid, lambda x: -np.logaddexp(0, -x),
         lambda x: _tF().logsigmoid(x), normal(3, 4)),
    case("F.logsigmoid-large", F.logsigmoid, lambda x: -np.logaddexp(0, -x),
         lambda x: _tF().logsigmoid(x),
         Input(lambda rng: rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(20, 80, (2, 3)))),
    case("F.softmax-dim", lambda x: F.softmax(x, dim=0), lambda x: _np_softmax(x, 0),
         lambda x: _tF().softmax(x, dim=0), normal(3, 4)),
    case("F.log_softmax-dim", lambda x: F.log_softmax(x, dim=1), lambda x: _np_log_softmax(x, 1),
         lambda x: _tF().log_softmax(x, dim=1), normal(3, 4)),
    case("F.layer_norm", lambda x: F.layer_norm(x, (4,)), lambda x: _np_layer_norm(x, -1),
         lambda x: _tF().layer_norm(x, (4,)), normal(3, 4)),
    case("F.layer_norm-affine-2d", lambda x, w, b: F.layer_norm(x, [3, 4], w, b, eps=1e-3),
         lambda x, w, b: _np_layer_norm(x, (1, 2), w, b, 1e-3),
         lambda x, w, b: _tF().layer_norm(x, [3, 4], w, b, eps=1e-3), normal(2, 3, 4),
         normal(3, 4), normal(3, 4)),
    case("F.l1_loss", F.l1_loss, lambda x, y: np.abs(x - y).mean(),
         lambda x, y: _tF().l1_loss(x, y), normal(3, 4), normal(3, 4)),
    case("F.l1_loss-sum", lambda x, y: F.l1_loss(x, y, reduction="sum"),
         lambda x, y: np.abs(x - y).sum(), lambda x, y: _tF().l1_loss(x, y, reduction="sum"),
         normal(3, 4), fixed_normal(3, 4)),
    case("F.l1_loss-none", lambda x, y: F.l1_loss(x, y, reduction="none"),
         lambda x, y: np.abs(x - y), lambda x, y: _tF().l1_loss(x, y, reduction="none"),
         normal(3, 4), normal(3, 4)),
    case("F.nll_loss", lambda x, t: F.nll_loss(x, t), lambda x, t: -x[np.arange(4), t].mean(),
         lambda x, t: _tF().nll_loss(x, t), normal(4, 3), indices(3, 4)),
    case("F.nll_loss-of-log_softmax", lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t),
         _np_cross_entropy, lambda x, t: _tF().nll_loss(_tF().log_softmax(x, dim=1), t),
         normal(4, 3), indices(3, 4)),
    case("F.nll_loss-weight-ignore-sum",
         lambda x, t, w: F.nll_loss(x, t, weight=w, ignore_index=1, reduction="sum"),
         lambda x, t, w: -(x[np.arange(5), t] * w[t] * (t != 1)).sum(),
         lambda x, t, w: _tF().nll_loss(x, t, weight=w, ignore_index=1, reduction="sum"),
         normal(5, 3), constant([0, 1, 2, 1, 0]), _classes(3)),
    case("F.nll_loss-4d-none", lambda x, t: F.nll_loss(x, t, reduction="none"),
         lambda x, t: -np.take_along_axis(x, t[:, None], 1)[:, 0],
         lambda x, t: _tF().nll_loss(x, t, reduction="none"), normal(2, 3, 2, 2),
         indices(3, 2, 2, 2)),
    case("F.cross_entropy-3d", F.cross_entropy, _np_ce_full,
         lambda x, t: _tF().cross_entropy(x, t), normal(2, 3, 4), indices(3, 2, 4)),
    case("F.cross_entropy-4d-none", lambda x, t: F.cross_entropy(x, t, reduction="none"),
         lambda x, t: _np_ce_full(x, t, reduction="none"),
         lambda x, t: _tF().cross_entropy(x, t, reduction="none"), normal(2, 3, 2, 2),
         indices(3, 2, 2, 2)),
    case("F.cross_entropy-ignore_index", lambda x, t: F.cross_entropy(x, t, ignore_index=-100),
         lambda x, t: _np_ce_full(x, t), lambda x, t: _tF().cross_entropy(x, t),
         normal(5, 3), constant([0, -100, 2, 1, -100])),
    case("F.cross_entropy-ignore_index=0-sum",
         lambda x, t: F.cross_entropy(x, t, ignore_index=0, reduction="sum"),
         lambda x, t: _np_ce_full(x, t, ignore_index=0, reduction="sum"),
         lambda x, t: _tF().cross_entropy(x, t, ignore_index=0, reduction="sum"),
         normal(5, 3), constant([0, 1, 2, 1, 0])),
    case("F.cross_entropy-label_smoothing",
         lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
         lambda x, t: _np_ce_full(x, t, smoothing=0.1),
         lambda x, t: _tF().cross_entropy(x, t, label_smoothing=0.1), normal(4, 3),
         indices(3, 4)),
    case("F.cross_entropy-weight-smoothing-ignore",
         lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.2),
         lambda x, t, w: _np_ce_full(x, t, w, smoothing=0.2),
         lambda x, t, w: _tF().cross_entropy(x, t, weight=w, label_smoothing=0.2),
         normal(5, 4), constant([3, -100, 0, 1, 3]), _classes(4)),
    case("F.cross_entropy-weight-none",
         lambda x, t, w: F.cross_entropy(x, t, weight=w, reduction="none"),
         lambda x, t, w: _np_ce_full(x, t, w, reduction="none"),
         lambda x, t, w: _tF().cross_entropy(x, t, weight=w, reduction="none"), normal(4, 3),
         indices(3, 4), _classes(3)),
    case("F.cross_entropy-unbatched", F.cross_entropy, lambda x, t: _np_ce_full(x[None], t[None]),
         lambda x, t: _tF().cross_entropy(x, t), normal(4), constant(2)),
    case("F.cross_entropy-probabilities", F.cross_entropy, _np_ce_probs,
         lambda x, p: _tF().cross_entropy(x, p), normal(4, 3), _probabilities(4, 3)),
    case("F.cross_entropy-probabilities-smoothing-sum",
         lambda x, p: F.cross_entropy(x, p, label_smoothing=0.3, reduction="sum"),
         lambda x, p: _np_ce_probs(x, p, 0.3, "sum"),
         lambda x, p: _tF().cross_entropy(x, p, label_smoothing=0.3, reduction="sum"),
         normal(2, 3, 2), _probabilities(2, 3, 2)),
    case("F.binary_cross_entropy", F.binary_cross_entropy, _np_bce,
         lambda p, t: _tF().binary_cross_entropy(p, t), positive(3, 4, low=0.1, high=0.9),
         positive(3, 4, low=0.0, high=1.0)),
    case("F.binary_cross_entropy-weight-none",
         lambda p, t, w: F.binary_cross_entropy(p, t, weight=w, reduction="none"),
         lambda p, t, w: w * _np_bce(p, t, "none"),
         lambda p, t, w: _tF().binary_cross_entropy(p, t, weight=w, reduction="none"),
         positive(3, 4, low=0.1, high=0.9),
         Input(lambda rng: rng.uniform(0, 1, (3, 4)), differentiable=False), _classes(4)),
    case("F.binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
         _np_bce_logits, lambda x, t: _tF().binary_cross_entropy_with_logits(x, t),
         normal(3, 4), positive(3, 4, low=0.0, high=1.0)),
    case("F.binary_cross_entropy_with_logits-large",
         lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="sum"),
         lambda x, t: _np_bce_logits(x, t, reduction="sum"),
         lambda x, t: _tF().binary_cross_entropy_with_logits(x, t, reduction="sum"),
         Input(lambda rng: rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(30, 60, (2, 3))),
         constant([[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]])),
    case("F.binary_cross_entropy_with_logits-pos_weight",
         lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw),
         lambda x, t, pw: _np_bce_logits(x, t, pw),
         lambda x, t, pw: _tF().binary_cross_entropy_with_logits(x, t, pos_weight=pw),
         normal(3, 4), positive(3, 4, low=0.0, high=1.0), _classes(4)),
    case("F.mse_loss-legacy-reduce=False", lambda x, y: F.mse_loss(x, y, reduce=False),
         lambda x, y: (x - y) ** 2, lambda x, y: _tF().mse_loss(x, y, reduction="none"),
         normal(3, 4), normal(3, 4)),
    case("F.conv2d", F.conv2d, _np_conv, lambda x, w: _tF().conv2d(x, w), normal(2, 3, 5, 4),
         normal(4, 3, 3, 2)),
    case("F.conv2d-bias-stride-padding",
         lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
         lambda x, w, b: _np_conv(x, w, b, 2, 1),
         lambda x, w, b: _tF().conv2d(x, w, b, stride=2, padding=1), normal(2, 2, 5, 5),
         normal(3, 2, 3, 3), normal(3)),
    case("F.conv2d-dilation-groups",
         lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 1), dilation=2, groups=2),
         lambda x, w: _np_conv(x, w, None, (1, 2), (2, 1), 2, 2),
         lambda x, w: _tF().conv2d(x, w, stride=(1, 2), padding=(2, 1), dilation=2, groups=2),
         normal(1, 4, 5, 5), normal(6, 2, 2, 3)),
    case("F.conv2d-same-unbatched", lambda x, w: F.conv2d(x, w, padding="same"),
         lambda x, w: _np_conv(x[None], w, None, 1, 1)[0],
         lambda x, w: _tF().conv2d(x, w, padding="same"), normal(2, 4, 4), normal(3, 2, 3, 3)),
    case("F.conv2d-no-grad-weight", F.conv2d, _np_conv, lambda x, w: _tF().conv2d(x, w),
         normal(1, 2, 4, 4), fixed_normal(2, 2, 2, 2)),
    case("F.conv1d", lambda x, w, b: F.conv1d(x, w, b, padding=1),
         lambda x, w, b: _np_conv(x, w, b, 1, 1),
         lambda x, w, b: _tF().conv1d(x, w, b, padding=1), normal(2, 3, 6), normal(4, 3, 3),
         normal(4)),
    case("F.conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
         lambda x, w, b: _np_conv(x, w, b, (1, 2, 1), 1),
         lambda x, w, b: _tF().conv3d(x, w, b, stride=(1, 2, 1), padding=1),
         normal(1, 2, 3, 4, 3), normal(2, 2, 2, 3, 2), normal(2)),
    case("F.conv1d-stride", lambda x, w: F.conv1d(x, w, stride=2),
         lambda x, w: _np_conv(x, w, None, 2),
         lambda x, w: _tF().conv1d(x, w, stride=2), normal(2, 2, 7), normal(3, 2, 2)),
    case("F.max_pool2d", lambda x: F.max_pool2d(x, 2), lambda x: _np_max_pool(x, 2),
         lambda x: _tF().max_pool2d(x, 2), distinct(2, 2, 4, 4)),
    case("F.max_pool2d-overlapping-padding", lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
         lambda x: _np_max_pool(x, 3, 2, 1), lambda x: _tF().max_pool2d(x, 3, stride=2, padding=1),
         distinct(1, 2, 5, 5)),
    case("F.max_pool2d-rect", lambda x: F.max_pool2d(x, (2, 1), stride=(1, 2)),
         lambda x: _np_max_pool(x, (2, 1), (1, 2)),
         lambda x: _tF().max_pool2d(x, (2, 1), stride=(1, 2)), distinct(1, 1, 3, 4)),
    case("F.max_pool1d", lambda x: F.max_pool1d(x, 2), lambda x: _np_max_pool(x, 2),
         lambda x: _tF().max_pool1d(x, 2), distinct(2, 2, 6)),
]

def _np_unfold(x, kernel, dilation=1, padding=0, stride=1):
    """im2col by loops: column l is window l, rows by channel, kernel row, kernel column."""
    k, d, p, s = ((v, v) if isinstance(v, int) else v for v in (kernel, dilation, padding, stride))
    x = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    out = [(n - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, ss in zip(x.shape[2:], k, d, s)]
    columns = np.empty((x.shape[0], x.shape[1], k[0], k[1], out[0], out[1]))
    for i, j, h, w in np.ndindex(k[0], k[1], out[0], out[1]):
        columns[:, :, i, j, h, w] = x[:, :, h * s[0] + i * d[0], w * s[1] + j * d[1]]
    return columns.reshape(x.shape[0], -1, out[0] * out[1])


def _np_fold(columns, size, kernel, dilation=1, padding=0, stride=1):
    """col2im by loops: each column's values added where unfold cut them from."""
    k, d, p, s = ((v, v) if isinstance(v, int) else v for v in (kernel, dilation, padding, stride))
    padded = [n + 2 * q for n, q in zip(size, p)]
    out = [(n - dd * (kk - 1) - 1) // ss + 1 for n, kk, dd, ss in zip(padded, k, d, s)]
    n, c = columns.shape[0], columns.shape[1] // (k[0] * k[1])
    blocks = columns.reshape(n, c, k[0], k[1], out[0], out[1])
    image = np.zeros((n, c, *padded))
    for i, j, h, w in np.ndindex(k[0], k[1], out[0], out[1]):
        image[:, :, h * s[0] + i * d[0], w * s[1] + j * d[1]] += blocks[:, :, i, j, h, w]
    return image[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


def _np_max_unpool_of_max_pool(x, kernel):
    """max_unpool(max_pool(x, k), k) for windows side by side: each window's maximum kept in
    place, zeros elsewhere."""
    windows = x.reshape(x.shape[0], x.shape[1], x.shape[2] // kernel, kernel, -1, kernel)
    return np.where(windows == windows.max(axis=(3, 5), keepdims=True), windows, 0.0).reshape(
        x.shape)


def _np_conv_transpose1d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                         dilation=1):
    """By loops: input position h, kernel offset i adds x[c, h] w[c, o, i] at output
    position h stride + i dilation - padding."""
    n, c_in, length = x.shape
    c_out, k = w.shape[1], w.shape[2]
    size = (length - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1
    out = np.zeros((n, c_out * groups, size + 2 * padding + dilation * k))
    per_group = c_in // groups
    for c, o, h, i in np.ndindex(c_in, c_out, length, k):
        out[:, (c // per_group) * c_out + o, h * stride + i * dilation] += x[:, c, h] * w[c, o, i]
    out = out[:, :, padding:padding + size]
    return out if b is None else out + b[:, None]


# the layers and functional ops of issue 37 (tests/differential.py compares them with torch
# in every variant; here: finite differences, and second derivatives in test_gradgradcheck)
LAYERS = [
    case("F.unfold", lambda x: F.unfold(x, 2), lambda x: _np_unfold(x, 2),
         lambda x: _tF().unfold(x, 2), normal(2, 2, 3, 4)),
    case("F.unfold-pad-stride-dilation",
         lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
         lambda x: _np_unfold(x, (2, 3), (2, 1), 1, (1, 2)),
         lambda x: _tF().unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
         normal(1, 2, 4, 5)),
    case("F.fold-overlapping", lambda c: F.fold(c, (3, 4), 2),
         lambda c: _np_fold(c, (3, 4), 2), lambda c: _tF().fold(c, (3, 4), 2), normal(2, 8, 6)),
    case("F.fold-pad-stride", lambda c: F.fold(c, (4, 5), 3, padding=1, stride=2),
         lambda c: _np_fold(c, (4, 5), 3, 1, 1, 2),
         lambda c: _tF().fold(c, (4, 5), 3, padding=1, stride=2), normal(1, 9, 6)),
    case("F.conv_transpose1d", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                  output_padding=1),
         lambda x, w, b: _np_conv_transpose1d(x, w, b, 2, 1, 1),
         lambda x, w, b: _tF().conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
         normal(2, 2, 4), normal(2, 3, 3), normal(3)),
    case("F.conv_transpose1d-groups-dilation",
         lambda x, w: F.conv_transpose1d(x, w, groups=2, dilation=2, padding=2),
         lambda x, w: _np_conv_transpose1d(x, w, None, 1, 2, 0, 2, 2),
         lambda x, w: _tF().conv_transpose1d(x, w, groups=2, dilation=2, padding=2),
         normal(1, 4, 5), normal(4, 2, 3)),
    case("F.instance_norm-affine",
         lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
         lambda x, w, b: (x - x.mean((2, 3), keepdims=True))
         / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5) * w[:, None, None] + b[:, None, None],
         lambda x, w, b: _tF().instance_norm(x, weight=w, bias=b),
         normal(2, 3, 2, 3), normal(3), normal(3)),
    # NOTE: torch's cdist and pdist have no second derivative (NotImplementedError), dyngraph's
    # (norms of differences) do: the reference here is torch's norm of the differences, the
    # same math; tests/differential.py compares them with torch.cdist and F.pdist themselves
    case("dg.cdist", dg.cdist,
         lambda x, y: np.sqrt(((x[..., :, None, :] - y[..., None, :, :]) ** 2).sum(-1)),
         lambda x, y: (x[..., :, None, :] - y[..., None, :, :]).norm(dim=-1),
         normal(2, 3, 2), normal(2, 4, 2)),
    case("dg.cdist-p3", lambda x, y: dg.cdist(x, y, p=3.0),
         lambda x, y: (np.abs(x[:, None] - y[None]) ** 3).sum(-1) ** (1 / 3),
         lambda x, y: (x[:, None] - y[None]).norm(p=3.0, dim=-1), normal(3, 2), normal(2, 2)),
    case("F.pdist", F.pdist,
         lambda x: np.array([np.sqrt(((x[i] - x[j]) ** 2).sum())
                             for i in range(len(x)) for j in range(i + 1, len(x))]),
         lambda x: (x[np.triu_indices(len(x), 1)[0]] - x[np.triu_indices(len(x), 1)[1]]).norm(
             dim=-1), normal(4, 3)),
    case("F.bilinear", F.bilinear,
         lambda x, y, w, b: np.einsum("ni,oij,nj->no", x, w, y) + b,
         lambda x, y, w, b: _tF().bilinear(x, y, w, b),
         normal(3, 2), normal(3, 4), normal(2, 2, 4), normal(2)),
    case("F.adaptive_max_pool2d-uneven", lambda x: F.adaptive_max_pool2d(x, (2, 3)),
         lambda x: np.stack([np.stack([x[..., r0:r1, c0:c1].max((-2, -1))
                                       for c0, c1 in ((0, 2), (1, 3), (2, 4))], -1)
                             for r0, r1 in ((0, 3), (2, 5))], -2),
         lambda x: _tF().adaptive_max_pool2d(x, (2, 3)), distinct(2, 2, 5, 4)),
    case("F.pad-reflect-2d", lambda x: F.pad(x, (1, 2, 2, 0), mode="reflect"),
         lambda x: np.pad(x, ((0, 0), (0, 0), (2, 0), (1, 2)), mode="reflect"),
         lambda x: _tF().pad(x, (1, 2, 2, 0), mode="reflect"), normal(1, 2, 3, 4)),
    case("F.max_unpool2d-of-max_pool2d",
         lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
         lambda x: _np_max_unpool_of_max_pool(x, 2),
         lambda x: _tF().max_unpool2d(*_tF().max_pool2d(x, 2, return_indices=True), 2),
         distinct(2, 2, 4, 6)),
]

MORE_COMPOSITE = [
    case("composite-attention-einsum-causal",
         lambda q, k, v, m: dg.einsum(
             "bhqk,bhkd->bhqd",
             (dg.einsum("bhqd,bhkd->bhqk", q, k) * 0.5).masked_fill(m, -1e9).softmax(-1), v),
         lambda q, k, v, m: np.einsum(
             "bhqk,bhkd->bhqd",
             _np_softmax(np.where(m, -1e9, np.einsum("bhqd,bhkd->bhqk", q, k) * 0.5), -1), v),
         lambda q, k, v, m: _torch().einsum(
             "bhqk,bhkd->bhqd",
             (_torch().einsum("bhqd,bhkd->bhqk", q, k) * 0.5).masked_fill(m, -1e9).softmax(-1),
             v),
         normal(1, 2, 3, 2), normal(1, 2, 3, 2), normal(1, 2, 3, 2),
         constant(np.triu(np.ones((3, 3), bool), 1))),
    case("composite-conv-pool-linear",
         lambda x, w, lw: F.linear(F.max_pool2d(F.conv2d(x, w, padding=1).tanh(), 2)
                                   .flatten(1), lw),
         lambda x, w, lw: _np_max_pool(np.tanh(_np_conv(x, w, None, 1, 1)), 2).reshape(2, -1)
         @ lw.T,
         lambda x, w, lw: _tF().linear(_tF().max_pool2d(_tF().conv2d(x, w, padding=1).tanh(), 2)
                                       .flatten(1), lw),
         normal(2, 1, 4, 4), normal(2, 1, 3, 3), normal(3, 8)),
]

MORE = (
    MORE_REDUCTIONS + MORE_ELEMENTWISE + MORE_SHAPE + MORE_INDEXING + MORE_MATMUL
    + MORE_FUNCTIONAL + LAYERS + MORE_COMPOSITE
)

# Ops whose outputs are integers or booleans (indices, masks, one-hot rows): no gradient, so they
# are not in ALL_CASES; tests/test_more_ops.py checks them against numpy and PyTorch exactly.
# Their inputs are made like the others (floats come as float tensors without grad).
INTEGER_OUTPUT_CASES: list[OpCase] = [
    case("sort-indices", lambda x: x.sort().indices, lambda x: np.argsort(x, -1),
         lambda x: x.sort().indices, fixed_normal(3, 4)),
    case("sort-indices-descending-dim=0", lambda x: x.sort(0, descending=True)[1],
         lambda x: _np_sort(x, 0, True)[1], lambda x: x.sort(0, descending=True)[1],
         fixed_normal(3, 4)),
    case("topk-indices", lambda x: x.topk(2).indices, lambda x: _np_topk(x, 2)[1],
         lambda x: x.topk(2).indices, fixed_normal(3, 4)),
    case("all", lambda x: (x > 0).all(), lambda x: (x > 0).all(), lambda x: (x > 0).all(),
         fixed_normal(3, 4)),
    case("all-dim=1", lambda x: (x > -1).all(dim=1), lambda x: (x > -1).all(axis=1),
         lambda x: (x > -1).all(dim=1), fixed_normal(3, 4)),
    case("any-dim=0-keepdim", lambda x: (x > 1).any(0, keepdim=True),
         lambda x: (x > 1).any(axis=0, keepdims=True), lambda x: (x > 1).any(0, keepdim=True),
         fixed_normal(3, 4)),
    case("dg.any", lambda m: dg.any(m), np.any, _t("any"), mask(3, 4)),
    case("dg.all-float", lambda x: dg.all(x, -1), lambda x: np.all(x, -1),
         lambda x: _torch().all(x, -1), constant([[1.0, 0.0], [2.0, 3.0]])),
    case("F.one_hot", lambda t: F.one_hot(t, 4), lambda t: np.eye(4, dtype=np.int64)[t],
         lambda t: _tF().one_hot(t, 4), indices(4, 5)),
    case("F.one_hot-inferred-2d", F.one_hot, lambda t: np.eye(t.max() + 1, dtype=np.int64)[t],
         lambda t: _tF().one_hot(t), constant([[0, 2], [1, 2]])),
]

ALL_CASES: list[OpCase] = (
    ELEMENTWISE + REDUCTIONS + SOFTMAX + MATMUL + SHAPE + INDEXING + JOINING + FUNCTIONAL
    + COMPOSITE + MORE
)
TORCH_CASES: list[OpCase] = [c for c in ALL_CASES if c.torch is not None]

_ids = [c.id for c in ALL_CASES + INTEGER_OUTPUT_CASES]
assert len(_ids) == len(set(_ids)), "op table ids must be unique"


def ids(cases: Sequence[OpCase]) -> list[str]:
    return [c.id for c in cases]


# ---------------------------------------------------------------------------- making inputs


def dg_inputs(
    case: OpCase, arrays: Sequence[np.ndarray], device: str = "cpu", dtype: Any = np.float64
) -> list[dg.Tensor]:
    """The case's inputs as dyngraph leaves on ``device``: differentiable ones in ``dtype`` with
    requires_grad=True, the others (indices, masks, targets) as they are, without grad."""
    tensors = []
    for spec, array in zip(case.inputs, arrays):
        if spec.differentiable:
            tensors.append(dg.tensor(array, dtype=dtype, device=device, requires_grad=True))
        elif array.dtype.kind == "f":  # a float constant: same dtype as the rest
            tensors.append(dg.tensor(array, dtype=dtype, device=device))
        else:
            tensors.append(dg.tensor(array, device=device))
    return tensors


def ref_inputs(arrays: Sequence[np.ndarray], dtype: Any) -> list[np.ndarray]:
    """The numpy reference's inputs: float ones rounded to ``dtype`` (the values dyngraph sees)
    and then widened to float64, so the reference itself adds no rounding error."""
    return [
        array.astype(dtype).astype(np.float64) if array.dtype.kind == "f" else array
        for array in arrays
    ]
