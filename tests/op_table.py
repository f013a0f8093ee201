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
                     lambda x, a=axis, k=keepdims: x.max(axis=a, keepdims=k),
                     lambda x, a=axis, k=keepdims: x.max(axis=a, keepdims=k),
                     lambda x, k=keepdims, d=dims: x.amax(dim=d(x), keepdim=k),
                     distinct(2, 3)),
                case(f"min-{tag}",
                     lambda x, a=axis, k=keepdims: x.min(axis=a, keepdims=k),
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
    case("max-3d-axis=1", lambda x: x.max(axis=1), lambda x: x.max(axis=1),
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

ALL_CASES: list[OpCase] = (
    ELEMENTWISE + REDUCTIONS + SOFTMAX + MATMUL + SHAPE + INDEXING + JOINING + FUNCTIONAL
    + COMPOSITE
)
TORCH_CASES: list[OpCase] = [c for c in ALL_CASES if c.torch is not None]

_ids = [c.id for c in ALL_CASES]
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
