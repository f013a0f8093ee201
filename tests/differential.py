"""The differential sweep (issue 37, item 1): every public name dyngraph shares with PyTorch, run
on both from the same numbers.

Three parts, used by tests/test_differential.py:

- **the names**: :func:`shared_names` lists every public name of dyngraph's PyTorch-shaped
  namespaces (``dg``, ``dg.Tensor``, ``dg.nn.functional``, ``dg.nn``, ``dg.optim``, ...) that the
  torch counterpart also has. Each is either covered by cases below or listed in :data:`SKIP`
  with the reason, and the test asserts that the two together are exactly the shared names: a
  name added later without a case fails until it gets one (or a reviewed reason).
- **the cases**: each :class:`Case` is a program ``program(L, *inputs)`` written once, run with
  ``L`` bound to ``torch`` and to ``dyngraph`` on leaves made from the same float64 numpy arrays
  (float32 where a case says so). Most are generated from small tables keyed by the kind of
  signature (unary elementwise, binary broadcasting, reductions with dim/keepdim, shape ops,
  indexing, Tensor's operators, factories, losses, ...). A module is built in each library,
  its parameters and buffers filled from generators seeded by their names, and compared with
  its tree (:func:`tree`: named_* orders, state_dict entries sharing the module's memory,
  apply's order, train()/eval() everywhere) and its parameters' gradients, then zero_grad both
  ways. Optimizers and schedulers run a six-step :func:`trajectory` (parameters, lr, momentum
  and betas after each step, then the checkpoint's keys and zero_grad).
- **the comparison** (:func:`outcome`): whether it raised; else every output's kind, dtype name,
  shape and values; which outputs share memory with which inputs and earlier outputs; and the
  gradients of every input leaf after ``backward`` of a sum of the outputs times seeded random
  weights. Random functions (``rand``, ``dropout``) compare dtypes and shapes only: the two
  libraries draw from different generators.
"""

from __future__ import annotations

import inspect
import io
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
from op_table import (
    Input,
    constant,
    distinct,
    indices,
    invertible,
    lattice,
    mask,
    nonzero,
    normal,
    positive,
)

import dyngraph as dg

# ----------------------------------------------------------------------------- the names

# The namespaces compared, by the path that reaches them from the library (dg or torch).
SPACES: dict[str, Callable[[Any], Any]] = {
    "torch": lambda L: L,
    "Tensor": lambda L: L.Tensor,
    "F": lambda L: L.nn.functional,
    "nn": lambda L: L.nn,
    "nn.init": lambda L: L.nn.init,
    "nn.utils": lambda L: L.nn.utils,
    "nn.utils.rnn": lambda L: L.nn.utils.rnn,
    "optim": lambda L: L.optim,
    "optim.lr_scheduler": lambda L: L.optim.lr_scheduler,
    "autograd": lambda L: L.autograd,
    "utils": lambda L: L.utils,
    "utils.data": lambda L: L.utils.data,
    "distributions": lambda L: L.distributions,
    "cuda": lambda L: L.cuda,
    "testing": lambda L: L.testing,
}
# dyngraph's namespaces that are torch's namespaces of the same path (a shared name that is one
# of these is compared name by name above, not as one case)
NAMESPACES = {"torch.nn": "nn", "torch.optim": "optim", "torch.autograd": "autograd",
              "torch.utils": "utils", "torch.cuda": "cuda", "torch.testing": "testing",
              "torch.distributions": "distributions", "nn.functional": "F",
              "nn.init": "nn.init", "nn.utils": "nn.utils", "nn.utils.rnn": "nn.utils.rnn",
              "optim.lr_scheduler": "optim.lr_scheduler", "utils.data": "utils.data"}


def _is_own(value: Any) -> bool:
    """A name dyngraph defines (or a dyngraph namespace), not a library it imported for itself
    (``np``, ``math``, ``typing.Any``, ``from __future__ import annotations``)."""
    if inspect.ismodule(value):
        return value.__name__.startswith("dyngraph")
    module = getattr(type(value), "__module__", "") if not (
        inspect.isclass(value) or inspect.isroutine(value)) else getattr(value, "__module__", "")
    return module not in ("typing", "__future__", "collections.abc", "abc", "math", "numpy")


# Tensor's dunder methods of its own (not object's) are its operators and conversions, public
# through the syntax that calls them (x + y, x[i], len(x)), except the class's plumbing.
_PLUMBING = {"__dict__", "__doc__", "__module__", "__weakref__", "__init__", "__new__",
             "__hash__", "__repr__", "__str__", "__format__", "__reduce_ex__", "__getstate__",
             "__setstate__", "__deepcopy__", "__init_subclass__", "__class_getitem__",
             "__annotations__", "__slots__", "__getattr__", "__setattr__", "__delattr__",
             "__dir__", "__sizeof__", "__subclasshook__", "__reduce__", "__copy__"}
OPERATOR_NAMES = {n for n in vars(dg.Tensor) if n.startswith("__") and n.endswith("__")
                  and n not in _PLUMBING}


def shared_names() -> list[str]:
    """``"space.name"`` for every public name of a dyngraph namespace that torch's has too. A
    name that re-exports an object of an earlier namespace under the same name
    (``F.Tensor`` is ``dg.Tensor``) is that earlier name, listed once."""
    import torch

    seen: dict[str, list[Any]] = {}
    names = []
    for space, reach in SPACES.items():
        mine, theirs = reach(dg), reach(torch)
        for name in dir(mine):
            if not hasattr(theirs, name) or (name.startswith("_") and not (
                    space == "Tensor" and name in OPERATOR_NAMES)):
                continue
            value = inspect.getattr_static(mine, name) if space == "Tensor" else getattr(mine, name)
            if space != "Tensor" and not _is_own(value):
                continue
            # two modules of one name are namespaces: compared name by name where they are
            # PyTorch's (NAMESPACES), else not names of the API (dyngraph.torch, dyngraph.ops are
            # dyngraph's own; torch.torch, torch.ops are torch's). A module of dyngraph's where
            # torch has a function (dg.dot) is a name a program calls: it stays.
            if (inspect.ismodule(value) and inspect.ismodule(getattr(theirs, name))
                    and f"{space}.{name}" not in NAMESPACES):
                continue
            if space != "torch" and any(v is value for v in seen.get(name, [])):
                continue
            seen.setdefault(name, []).append(value)
            names.append(f"{space}.{name}")
    return names


# ----------------------------------------------------------------------------- the case type


@dataclass(frozen=True)
class Case:
    """One program run on both libraries. ``name`` is the shared name it covers ("Tensor.add");
    ``label`` tells the variants of a name apart. ``random``: the values come from each
    library's own generator, so only kinds, dtypes and shapes are compared."""

    name: str
    label: str
    program: Callable[..., Any]
    inputs: tuple[Input, ...] = ()
    random: bool = False
    tol: dict = field(default_factory=dict)
    dtype: str = "float64"  # of the float inputs (modules run in the default float32)
    module: bool = False  # the program returns (module, output): its tree is compared too
    nonfinite: bool = False  # NaN and infinities on purpose: numpy's warnings about them expected

    @property
    def id(self) -> str:
        return f"{self.name}[{self.label}]"

    def arrays(self) -> list[np.ndarray]:
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [np.asarray(spec.make(rng)) for spec in self.inputs]


CASES: list[Case] = []


def add(name: str, label: str, program: Callable[..., Any], *inputs: Input, **kw: Any) -> None:
    CASES.append(Case(name, label, program, tuple(inputs), **kw))


def both_have(path: str) -> bool:
    """Whether dyngraph and torch both have ``path``: the tables below are written per kind of
    signature, and a kind's name is run only where the library spells it (``torch.eq`` is
    dyngraph's ``Tensor.eq`` only)."""
    import torch

    space, _, name = path.rpartition(".")
    return hasattr(SPACES[space](dg), name) and hasattr(SPACES[space](torch), name)


def reach(L: Any, path: str) -> Any:
    """``reach(torch, "F.relu")`` is torch.nn.functional.relu; "Tensor.add" is the method."""
    space, _, name = path.rpartition(".")
    return getattr(SPACES[space](L), name)


def ints(*shape: int, low: int = -3, high: int = 4) -> Input:
    return Input(lambda rng: rng.integers(low, high, shape), differentiable=False)


def uniform(low: float, high: float, *shape: int) -> Input:
    return Input(lambda rng: rng.uniform(low, high, shape))


def fixed(*shape: int) -> Input:
    """Float values that do not require grad (targets)."""
    return Input(lambda rng: rng.standard_normal(shape), differentiable=False)


def avoiding_point(p: float) -> Input:
    """(2, 3) values at least 0.2 away from ``p`` (the kink of clamp_min/clamp_max)."""
    return Input(lambda rng: p + rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(0.2, 1.0, (2, 3)))


def all_true(*shape: int) -> Input:
    """Booleans that divide without a zero."""
    return Input(lambda rng: np.ones(shape, bool), differentiable=False)


def at(*values: float) -> Input:
    """Exactly these values, as a leaf that requires grad: a function's kinks, NaN, infinities."""
    return Input(lambda rng: np.array(values, dtype=np.float64))


def probs(*shape: int) -> Input:
    return Input(lambda rng: rng.uniform(0.1, 0.9, shape), differentiable=False)


# ----------------------------------------------------------------------------- elementwise

# name: its domain. Each runs as torch.NAME(x) and x.NAME() where the name is shared there, on
# float64 leaves, and once more on int64 values (the dtype each library gives integers).
UNARY = {
    "abs": nonzero(2, 3), "acos": uniform(-0.9, 0.9, 2, 3), "asin": uniform(-0.9, 0.9, 2, 3),
    "ceil": normal(2, 3), "cos": normal(2, 3), "exp": normal(2, 3), "floor": normal(2, 3),
    "log": positive(2, 3), "log10": positive(2, 3), "log1p": positive(2, 3),
    "log2": positive(2, 3), "neg": normal(2, 3), "relu": nonzero(2, 3), "round": normal(2, 3),
    "sigmoid": normal(2, 3), "sign": nonzero(2, 3), "sin": normal(2, 3), "sqrt": positive(2, 3),
    "square": normal(2, 3), "tanh": normal(2, 3), "logit": uniform(0.1, 0.9, 2, 3),
    "clone": normal(2, 3), "contiguous": normal(2, 3), "float": normal(2, 3),
    "double": normal(2, 3), "half": normal(2, 3), "int": normal(2, 3), "long": normal(2, 3),
    "bool": nonzero(2, 3), "detach": normal(2, 3), "cpu": normal(2, 3),
    "t": normal(2, 3), "flatten": normal(2, 3), "tril": normal(3, 3), "triu": normal(3, 3),
    "diag": normal(3, 3), "trace": normal(3, 3), "det": invertible(3, 3),
    "inverse": invertible(3, 3), "numel": normal(2, 3), "nonzero": ints(2, 3, low=-1, high=2),
    "unique": ints(2, 5), "erf": normal(2, 3), "reciprocal": nonzero(2, 3),
    "rsqrt": positive(2, 3), "isfinite": normal(2, 3), "isinf": normal(2, 3),
    "isnan": normal(2, 3), "logical_not": nonzero(2, 3),
    "count_nonzero": ints(2, 3, low=-1, high=2), "is_floating_point": normal(2, 3),
    "atan": normal(2, 3), "sinh": normal(2, 3), "cosh": normal(2, 3), "expm1": normal(2, 3),
}
# names whose integer input does not mean anything to compare (trace/inverse are torch-only names
# here of a matrix)
_NO_INT = {"det", "inverse", "half", "logit"}
# integer inputs inside each name's domain (numpy's warning of a NaN fails the test run)
_INT_DOMAIN = {"acos": ints(2, 3, low=-1, high=2), "asin": ints(2, 3, low=-1, high=2),
               **{n: ints(2, 3, low=1) for n in ("log", "log10", "log1p", "log2", "sqrt",
                                                 "rsqrt", "reciprocal")},
               **{n: ints(3, 3) for n in ("tril", "triu", "diag", "trace")}}

for _name, _domain in UNARY.items():
    for _space in ("torch", "Tensor"):
        if not both_have(f"{_space}.{_name}"):
            continue
        _call = ((lambda n: lambda L, x: getattr(L, n)(x)) if _space == "torch"
                 else (lambda n: lambda L, x: getattr(x, n)()))(_name)
        add(f"{_space}.{_name}", "float64", _call, _domain)
        add(f"{_space}.{_name}", "float32", _call, _domain, dtype="float32")
        if _name not in _NO_INT and _domain.differentiable:
            add(f"{_space}.{_name}", "int64", _call, _INT_DOMAIN.get(_name, ints(2, 3)))
        add(f"{_space}.{_name}", "empty", _call,  # (a batch of none)
            normal(0, 3) if _name != "unique" else ints(0, 3))
        add(f"{_space}.{_name}", "0-d", _call, at(0.7) if _name != "unique" else constant(3))

# the reductions and normalizations over an empty dimension (the sum of nothing is 0, its
# product 1, its max an error) and of a 0-d tensor (its one dimension is 0, or -1)
for _label, _program in {
    "sum": lambda L, x: x.sum(0), "prod": lambda L, x: x.prod(0),
    "mean": lambda L, x: x.mean(0), "max": lambda L, x: x.max(0),
    "amax": lambda L, x: x.amax(0), "argmax": lambda L, x: x.argmax(0),
    "norm": lambda L, x: x.norm(dim=0),
    "softmax": lambda L, x: x.softmax(0), "log_softmax": lambda L, x: x.log_softmax(0),
    "logsumexp": lambda L, x: x.logsumexp(0), "cumsum": lambda L, x: x.cumsum(0),
    "sort": lambda L, x: x.sort(0), "all": lambda L, x: x.all(), "any": lambda L, x: x.any(),
    "matmul": lambda L, x: x.T @ x, "masked": lambda L, x: x[x > 0],
}.items():
    add("Tensor.sum", f"empty-{_label}", _program, normal(0, 3), nonfinite=True)
for _label, _program in {
    "sum": lambda L, x: x.sum(0), "prod": lambda L, x: x.prod(0), "mean": lambda L, x: x.mean(-1),
    "max": lambda L, x: x.max(0), "min": lambda L, x: x.min(-1), "argmax": lambda L, x: x.argmax(0),
    "softmax": lambda L, x: x.softmax(0), "logsumexp": lambda L, x: x.logsumexp(0),
    "cumsum": lambda L, x: x.cumsum(0), "sort": lambda L, x: x.sort(0),
}.items():
    add("Tensor.sum", f"0-d-{_label}", _program, at(0.7))

# isnan/isinf/isfinite of the values they are for
for _name in ("isnan", "isinf", "isfinite"):
    for _space in ("torch", "Tensor"):
        _call = ((lambda n: lambda L, x: getattr(L, n)(x)) if _space == "torch"
                 else (lambda n: lambda L, x: getattr(x, n)()))(_name)
        add(f"{_space}.{_name}", "nan-inf", _call, constant([np.nan, np.inf, -np.inf, 1.5, 0.0]))
for _space in ("torch", "Tensor"):
    _cn = (lambda L, x, *a: L.count_nonzero(x, *a)) if _space == "torch" else \
        (lambda L, x, *a: x.count_nonzero(*a))
    add(f"{_space}.count_nonzero", "dim1", lambda L, x, c=_cn: c(L, x, 1),
        ints(2, 3, low=-1, high=2))
    add(f"{_space}.count_nonzero", "bool", lambda L, m, c=_cn: c(L, m), mask(2, 3))

# logical operations: booleans, floats and integers (any nonzero is true), a broadcast and a
# shape mismatch
for _name in ("logical_and", "logical_or"):
    for _space in ("torch", "Tensor"):
        _call = ((lambda n: lambda L, x, y: getattr(L, n)(x, y)) if _space == "torch"
                 else (lambda n: lambda L, x, y: getattr(x, n)(y)))(_name)
        add(f"{_space}.{_name}", "bools", _call, mask(2, 3), mask(3))
        add(f"{_space}.{_name}", "floats", _call, ints(2, 3, low=-1, high=2),
            Input(lambda rng: rng.integers(-1, 2, 3) * 0.5))
        add(f"{_space}.{_name}", "int-bool", _call, ints(2, 3, low=-1, high=2), mask(2, 3))
        add(f"{_space}.{_name}", "mismatch", _call, mask(2, 3), mask(2))
add("torch.isclose", "near-far", lambda L, x, y: L.isclose(x, x + y), normal(2, 3),
    constant([0.0, 1e-9, 1.0]))
add("torch.isclose", "nan-tolerances", lambda L, x: L.isclose(
    x, x * 1.01, rtol=0.02, atol=0.0, equal_nan=True), constant([np.nan, 1.0, -2.0]))
add("torch.isclose", "int-float", lambda L, x: L.isclose(x, x.double()), ints(2, 3))
add("torch.equal", "same", lambda L, x: L.equal(x, x.clone()), normal(2, 3))
add("torch.equal", "one-differs", lambda L, x: L.equal(x, x + (L.arange(6).reshape(2, 3) == 4)),
    normal(2, 3))
add("torch.equal", "shapes", lambda L, x: L.equal(x, x[:1]), normal(2, 3))
add("Tensor.remainder", "broadcast", lambda L, x, y: x.remainder(y), normal(2, 3), nonzero(3))
add("Tensor.remainder", "number", lambda L, x: x.remainder(-0.7), normal(2, 3))
add("Tensor.remainder", "ints", lambda L, x, y: x.remainder(y), ints(2, 3), ints(3, low=1))
add("Tensor.lerp", "number", lambda L, x, y: x.lerp(y, 0.3), normal(2, 3), normal(3))
add("Tensor.lerp", "tensor-weight", lambda L, x, y, w: x.lerp(y, w), normal(2, 3), normal(2, 3),
    uniform(0.0, 1.0, 3))
add("Tensor.lerp", "int-end", lambda L, x, y: x.lerp(y, 0.5), normal(2, 3), ints(2, 3))
for _name in ("addcmul", "addcdiv"):
    add(f"Tensor.{_name}", "value", (lambda n: lambda L, x, a, b: getattr(x, n)(a, b, value=0.5))(
        _name), normal(2, 3), normal(3), nonzero(2, 3))
    add(f"Tensor.{_name}", "default", (lambda n: lambda L, x, a, b: getattr(x, n)(a, b))(_name),
        normal(2, 3), normal(2, 3), nonzero(3))
    add(f"Tensor.{_name}", "mismatch", (lambda n: lambda L, x, a, b: getattr(x, n)(a, b))(_name),
        normal(2, 3), normal(2), nonzero(3))

# name: (first input, second input). Variants: broadcast (2,3) with (3,), a Python float on the
# right, an int64 tensor with a float64 one and with a Python float (type promotion), float32 with
# float64, and a shape mismatch that must raise in both.
BINARY = {
    "add": (normal(2, 3), normal(3)), "sub": (normal(2, 3), normal(3)),
    "mul": (normal(2, 3), normal(3)), "div": (normal(2, 3), nonzero(3)),
    "pow": (positive(2, 3), normal(3)), "maximum": (lattice(2, 3), lattice(3, offset=0.2)),
    "minimum": (lattice(2, 3), lattice(3, offset=0.2)),
    "eq": (lattice(2, 3), lattice(3)), "ne": (lattice(2, 3), lattice(3)),
    "lt": (lattice(2, 3), lattice(3)), "le": (lattice(2, 3), lattice(3)),
    "gt": (lattice(2, 3), lattice(3)), "ge": (lattice(2, 3), lattice(3)),
    "atan2": (normal(2, 3), nonzero(3)),
}
for _name, (_a, _b) in BINARY.items():
    for _space in ("torch", "Tensor"):
        if not both_have(f"{_space}.{_name}"):
            continue
        _call = ((lambda n: lambda L, x, y: getattr(L, n)(x, y)) if _space == "torch"
                 else (lambda n: lambda L, x, y: getattr(x, n)(y)))(_name)
        add(f"{_space}.{_name}", "broadcast", _call, _a, _b)
        add(f"{_space}.{_name}", "scalar", (lambda c: lambda L, x: c(L, x, 2.5))(_call), _a)
        add(f"{_space}.{_name}", "float32-scalar", (lambda c: lambda L, x: c(L, x, 2.5))(_call),
            _a, dtype="float32")
        add(f"{_space}.{_name}", "float32-0d-float64",
            (lambda c: lambda L, x, y: c(L, x, y.sum()))(_call), _a, _b, dtype="float32")
        add(f"{_space}.{_name}", "int-scalar", (lambda c: lambda L, x: c(L, x, 2))(_call),
            ints(2, 3, low=1))
        add(f"{_space}.{_name}", "int-float-scalar",
            (lambda c: lambda L, x: c(L, x, 1.5))(_call), ints(2, 3, low=1))
        add(f"{_space}.{_name}", "int-float", _call, ints(2, 3, low=1), _b)
        add(f"{_space}.{_name}", "float32-float64",
            (lambda c: lambda L, x, y: c(L, x.float(), y))(_call), _a, _b)
        add(f"{_space}.{_name}", "mismatch", _call, normal(2, 3), normal(4))
add("torch.diff", "rows", lambda L, x: L.diff(x), normal(2, 3))
# dg.diff and dg.trace also compare graphs and trace functions (NOTE [two diffs], [two traces])
add("torch.diff", "n2-dim0-joined", lambda L, x, y: L.diff(x, n=2, dim=0, prepend=y, append=y),
    normal(3, 2), normal(1, 2))
add("torch.diff", "n-past-length", lambda L, x: L.diff(x, n=4), normal(2, 3))
add("torch.diff", "0-d", lambda L, x: L.diff(x.sum()), normal(3))
add("torch.is_tensor", "tensor", lambda L, x: L.is_tensor(x), normal(2, 3))
add("torch.pow", "int-negative-int", lambda L, x: L.pow(x, -1), ints(2, 3, low=1))
add("Tensor.pow", "scalar-base", lambda L, x: 2.0 ** x, normal(2, 3))

# products of matrices and vectors: (inputs, a mismatch)
PRODUCTS = {
    "matmul": ((normal(2, 3, 4), normal(4, 2)), (normal(2, 3), normal(2, 3))),
    "mm": ((normal(2, 3), normal(3, 4)), (normal(2, 3), normal(2, 3))),
    "bmm": ((normal(2, 2, 3), normal(2, 3, 4)), (normal(2, 3), normal(3, 4))),
    "mv": ((normal(2, 3), normal(3)), (normal(2, 3), normal(2))),
    "dot": ((normal(3), normal(3)), (normal(3), normal(4))),
    "outer": ((normal(3), normal(2)), (normal(3, 1), normal(2))),
    "dist": ((normal(2, 3), normal(3)), (normal(2, 3), normal(4))),
}
for _name, (_ok, _bad) in PRODUCTS.items():
    for _space in ("torch", "Tensor"):
        if not both_have(f"{_space}.{_name}"):
            continue
        _call = ((lambda n: lambda L, x, y: getattr(L, n)(x, y)) if _space == "torch"
                 else (lambda n: lambda L, x, y: getattr(x, n)(y)))(_name)
        add(f"{_space}.{_name}", "float64", _call, *_ok)
        add(f"{_space}.{_name}", "mismatch", _call, *_bad)
add("torch.cdist", "p2-batch-broadcast", lambda L, x, y: L.cdist(x, y), normal(2, 3, 4),
    normal(1, 5, 4))
add("torch.cdist", "p1", lambda L, x, y: L.cdist(x, y, p=1.0), nonzero(3, 2), normal(4, 2))
add("torch.cdist", "p1.5-inf", lambda L, x, y: (L.cdist(x, y, p=1.5),
                                                L.cdist(x, y, p=float("inf"))),
    distinct(3, 4), normal(2, 4))
add("torch.cdist", "p0-counts", lambda L, x: L.cdist(x, x.round(), p=0.0), normal(3, 2))
add("torch.cdist", "zero-distance", lambda L, x: L.cdist(x, x[:2]), normal(3, 2))
add("torch.cdist", "mode", lambda L, x, y: L.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
    normal(30, 3), normal(27, 3))
add("torch.cdist", "bad-columns", lambda L, x, y: L.cdist(x, y), normal(2, 3), normal(2, 4))
add("torch.cdist", "bad-1d", lambda L, x, y: L.cdist(x, y), normal(3), normal(2, 3))
add("torch.cdist", "bad-ints", lambda L, x, y: L.cdist(x, y), ints(2, 3), ints(2, 3))
add("torch.cdist", "bad-p", lambda L, x, y: L.cdist(x, y, p=-1.0), normal(2, 3), normal(2, 3))
add("torch.cdist", "bad-mode", lambda L, x, y: L.cdist(x, y, compute_mode="fast"), normal(2, 3),
    normal(2, 3))
add("torch.matmul", "vector-vector", lambda L, x, y: L.matmul(x, y), normal(3), normal(3))
add("torch.matmul", "int-float", lambda L, x, y: L.matmul(x, y), ints(2, 3), normal(3, 2))
add("torch.einsum", "ij,jk->ik", lambda L, x, y: L.einsum("ij,jk->ik", x, y),
    normal(2, 3), normal(3, 4))
add("torch.einsum", "ii->i", lambda L, x: L.einsum("ii->i", x), normal(3, 3))
add("torch.einsum", "bad", lambda L, x, y: L.einsum("ij,jk->ik", x, y), normal(2, 3), normal(2, 3))
add("torch.allclose", "close", lambda L, x: L.allclose(x, x + 1e-9), normal(2, 3))
add("torch.allclose", "far", lambda L, x: L.allclose(x, x + 1), normal(2, 3))
add("torch.where", "three", lambda L, c, x, y: L.where(c, x, y), mask(2, 3), normal(2, 3),
    normal(3))
add("torch.where", "scalar", lambda L, c, x: L.where(c, x, 0.0), mask(2, 3), normal(2, 3))
add("torch.where", "condition-only", lambda L, c: L.where(c), mask(2, 3))
add("Tensor.where", "three", lambda L, c, x, y: x.where(c, y), mask(2, 3), normal(2, 3),
    normal(3))

# clamping: (args, kwargs) variants
for _space in ("torch", "Tensor"):
    for _name in ("clamp", "clip"):
        _call = ((lambda n: lambda L, x, *a, **k: getattr(L, n)(x, *a, **k)) if _space == "torch"
                 else (lambda n: lambda L, x, *a, **k: getattr(x, n)(*a, **k)))(_name)
        add(f"{_space}.{_name}", "min-max", (lambda c: lambda L, x: c(L, x, -0.5, 0.5))(_call),
            normal(2, 3))
        add(f"{_space}.{_name}", "min", (lambda c: lambda L, x: c(L, x, min=0.0))(_call),
            nonzero(2, 3))
        add(f"{_space}.{_name}", "int-float-bound",
            (lambda c: lambda L, x: c(L, x, max=1.5))(_call), ints(2, 3))
        add(f"{_space}.{_name}", "no-bound", (lambda c: lambda L, x: c(L, x))(_call),
            normal(2, 3))
    for _name, _kw in (("clamp_min", 0.1), ("clamp_max", 0.1)):
        _call = ((lambda n: lambda L, x, v: getattr(L, n)(x, v)) if _space == "torch"
                 else (lambda n: lambda L, x, v: getattr(x, n)(v)))(_name)
        add(f"{_space}.{_name}", "float", (lambda c, v: lambda L, x: c(L, x, v))(_call, _kw),
            avoiding_point(0.1))
        add(f"{_space}.{_name}", "int", (lambda c: lambda L, x: c(L, x, 1))(_call), ints(2, 3))


# ----------------------------------------------------------------------------- reductions


# name: (domain, variants as (label, args, kwargs))
_ALL, _DIM, _KEEP, _DIMS, _BAD = ("all", (), {}), ("dim1", (1,), {}), \
    ("dim-1-keepdim", (-1,), {"keepdim": True}), ("dims01", ((0, 1),), {}), ("bad-dim", (2,), {})
REDUCTIONS = {
    "sum": (normal(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD]),
    "mean": (normal(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD]),
    "prod": (nonzero(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "amax": (distinct(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD]),
    "amin": (distinct(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD]),
    "max": (distinct(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "min": (distinct(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "argmax": (distinct(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "argmin": (distinct(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "std": (normal(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD,
                           ("correction0", (1,), {"correction": 0}),
                           ("unbiased-false", (), {"unbiased": False})]),
    "var": (normal(2, 3), [_ALL, _DIM, _KEEP, _DIMS, _BAD,
                           ("correction0", (1,), {"correction": 0})]),
    "logsumexp": (normal(2, 3), [_DIM, _KEEP, _DIMS, _BAD]),
    "norm": (nonzero(2, 3), [_ALL, ("p1-dim1", (1, 1), {}), ("dim-keepdim", (),
                             {"dim": 1, "keepdim": True}), ("fro", ("fro",), {})]),
    "all": (mask(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "any": (mask(2, 3), [_ALL, _DIM, _KEEP, _BAD]),
    "cumsum": (normal(2, 3), [_DIM, ("dim0", (0,), {}), _BAD]),
    "cumprod": (nonzero(2, 3), [_DIM, ("dim0", (0,), {}), _BAD]),
    "softmax": (normal(2, 3), [_DIM, ("dim0", (0,), {}), _BAD]),
    "log_softmax": (normal(2, 3), [_DIM, ("dim0", (0,), {}), _BAD]),
}
# integer inputs: the dtype of the result (or the error: torch's mean of integers raises)
_INT_REDUCTIONS = {"sum", "mean", "prod", "amax", "argmax", "max", "cumsum", "cumprod", "softmax",
                   "std", "norm"}
for _name, (_domain, _variants) in REDUCTIONS.items():
    for _space in ("torch", "Tensor"):
        if not both_have(f"{_space}.{_name}"):
            continue
        _call = ((lambda n: lambda L, x, *a, **k: getattr(L, n)(x, *a, **k)) if _space == "torch"
                 else (lambda n: lambda L, x, *a, **k: getattr(x, n)(*a, **k)))(_name)
        for _label, _args, _kw in _variants:
            add(f"{_space}.{_name}", _label,
                (lambda c, a, k: lambda L, x: c(L, x, *a, **k))(_call, _args, _kw), _domain)
        _label, _args, _kw = _variants[0]
        add(f"{_space}.{_name}", f"float32-{_label}",
            (lambda c, a, k: lambda L, x: c(L, x, *a, **k))(_call, _args, _kw), _domain,
            dtype="float32")
        if _name in _INT_REDUCTIONS:
            add(f"{_space}.{_name}", f"int64-{_label}",
                (lambda c, a, k: lambda L, x: c(L, x, *a, **k))(_call, _args, _kw), ints(2, 3))
for _space in ("torch", "Tensor"):
    for _name in ("max", "min"):
        _call = ((lambda n: lambda L, x, y: getattr(L, n)(x, y)) if _space == "torch"
                 else (lambda n: lambda L, x, y: getattr(x, n)(y)))(_name)
        add(f"{_space}.{_name}", "binary", _call, lattice(2, 3), lattice(3, offset=0.2))


# ----------------------------------------------------------------------------- shapes

# name: [(label, program, inputs)], each program (L, x, ...) for both the function and the method
# where only one of them is shared, the other is simply not listed
SHAPE = {
    "Tensor.reshape": [("3x2", lambda L, x: x.reshape(3, 2)), ("tuple-1", lambda L, x:
                       x.reshape((-1,))), ("bad", lambda L, x: x.reshape(4, 2)),
                       ("of-T", lambda L, x: x.T.reshape(6))],
    "torch.reshape": [("3x2", lambda L, x: L.reshape(x, (3, 2))),
                      ("bad", lambda L, x: L.reshape(x, (4, 2)))],
    "Tensor.view": [("3x2", lambda L, x: x.view(3, 2)), ("-1", lambda L, x: x.view(-1)),
                    ("of-T", lambda L, x: x.T.view(6)), ("bad", lambda L, x: x.view(4, 2))],
    "Tensor.view_as": [("3x2", lambda L, x: x.view_as(x.reshape(3, 2)))],
    "Tensor.permute": [("10", lambda L, x: x.permute(1, 0)), ("tuple", lambda L, x:
                       x.permute((1, 0))), ("bad", lambda L, x: x.permute(0, 0))],
    "torch.permute": [("10", lambda L, x: L.permute(x, (1, 0)))],
    "Tensor.transpose": [("01", lambda L, x: x.transpose(0, 1)),
                         ("bad", lambda L, x: x.transpose(0, 2))],
    "torch.transpose": [("01", lambda L, x: L.transpose(x, 0, 1))],
    "Tensor.swapaxes": [("01", lambda L, x: x.swapaxes(0, 1))],
    "Tensor.T": [("2d", lambda L, x: x.T)],
    "torch.t": [("1d", lambda L, x: L.t(x[0])), ("3d", lambda L, x: L.t(x.reshape(1, 2, 3)))],
    "Tensor.squeeze": [("all", lambda L, x: x.reshape(2, 1, 3).squeeze()),
                       ("dim", lambda L, x: x.reshape(2, 1, 3).squeeze(1)),
                       ("not-1", lambda L, x: x.squeeze(0)),
                       ("bad", lambda L, x: x.squeeze(3))],
    "torch.squeeze": [("dim", lambda L, x: L.squeeze(x.reshape(2, 1, 3), 1))],
    "Tensor.unsqueeze": [("1", lambda L, x: x.unsqueeze(1)), ("-1", lambda L, x: x.unsqueeze(-1)),
                         ("bad", lambda L, x: x.unsqueeze(4))],
    "torch.unsqueeze": [("0", lambda L, x: L.unsqueeze(x, 0))],
    "Tensor.expand": [("2x3", lambda L, x: x[:1].expand(2, 3)),
                      ("-1", lambda L, x: x[:1].expand(4, -1, -1)),
                      ("bad", lambda L, x: x.expand(3, 3))],
    "Tensor.expand_as": [("2x3", lambda L, x: x[:1].expand_as(x))],
    "Tensor.repeat": [("2x1", lambda L, x: x.repeat(2, 1)), ("3d", lambda L, x: x.repeat(2, 1, 2)),
                      ("bad", lambda L, x: x.repeat(2))],
    "Tensor.repeat_interleave": [("2-dim0", lambda L, x: x.repeat_interleave(2, dim=0)),
                                 ("flat", lambda L, x: x.repeat_interleave(2))],
    "torch.repeat_interleave": [("2-dim1", lambda L, x: L.repeat_interleave(x, 2, dim=1))],
    "Tensor.flip": [("0", lambda L, x: x.flip(0)), ("01", lambda L, x: x.flip((0, 1)))],
    "torch.flip": [("1", lambda L, x: L.flip(x, (1,)))],
    "Tensor.chunk": [("2-dim1", lambda L, x: x.chunk(2, dim=1)), ("3", lambda L, x: x.chunk(3))],
    "torch.chunk": [("2-dim1", lambda L, x: L.chunk(x, 2, 1))],
    "Tensor.split": [("2-dim1", lambda L, x: x.split(2, dim=1)),
                     ("sections", lambda L, x: x.split([1, 2], dim=1)),
                     ("bad-sections", lambda L, x: x.split([1, 1], dim=1))],
    "torch.split": [("2-dim1", lambda L, x: L.split(x, 2, dim=1))],
    "Tensor.unbind": [("1", lambda L, x: x.unbind(1))],
    "torch.unbind": [("0", lambda L, x: L.unbind(x))],
    "Tensor.narrow": [("1-1-2", lambda L, x: x.narrow(1, 1, 2)),
                      ("bad", lambda L, x: x.narrow(1, 2, 2))],
    "Tensor.select": [("0-1", lambda L, x: x.select(0, 1)), ("bad", lambda L, x: x.select(0, 2))],
    "torch.flatten": [("all", lambda L, x: L.flatten(x)),
                      ("0-1", lambda L, x: L.flatten(x.reshape(1, 2, 3), 0, 1))],
    "torch.tril": [("-1", lambda L, x: L.tril(x, -1))],
    "torch.triu": [("1", lambda L, x: L.triu(x, 1))],
    "torch.diag": [("vector", lambda L, x: L.diag(x[0])), ("offset", lambda L, x: L.diag(x, 1))],
    "torch.cat": [("dim0", lambda L, x: L.cat([x, x * 2])), ("dim1", lambda L, x:
                  L.cat((x, x[:, :1]), dim=1)), ("bad", lambda L, x: L.cat([x, x[:, :1]]))],
    "torch.stack": [("dim0", lambda L, x: L.stack([x, x * 2])),
                    ("dim-1", lambda L, x: L.stack([x, x], dim=-1)),
                    ("bad", lambda L, x: L.stack([x, x[:, :1]]))],
    "torch.meshgrid": [("ij", lambda L, x: L.meshgrid(x[0], x[1, :2], indexing="ij")),
                       ("xy", lambda L, x: L.meshgrid(x[0], x[1, :2], indexing="xy"))],
    "Tensor.reshape_as": [("3x2", lambda L, x: x.reshape_as(x.T)),
                         ("of-T", lambda L, x: x.T.reshape_as(x)),
                         ("bad", lambda L, x: x.reshape_as(x[0]))],
    "torch.roll": [("dim1", lambda L, x: L.roll(x, 1, 1)),
                   ("two-dims", lambda L, x: L.roll(x, (1, -4), (0, 1))),
                   ("flat", lambda L, x: L.roll(x, 2)),
                   ("bad", lambda L, x: L.roll(x, (1, 2), 0))],
    "Tensor.roll": [("dim0", lambda L, x: x.roll(-1, 0)),
                    ("dims-kw", lambda L, x: x.roll(shifts=2, dims=1))],
    "torch.hstack": [("2d", lambda L, x: L.hstack([x, x[:, :1]])),
                     ("1d", lambda L, x: L.hstack((x[0], x[1, :2]))),
                     ("bad", lambda L, x: L.hstack([x, x[:1]]))],
    "torch.vstack": [("2d", lambda L, x: L.vstack([x, x[:1]])),
                     ("1d", lambda L, x: L.vstack((x[0], x[1]))),
                     ("bad", lambda L, x: L.vstack([x, x[:, :1]]))],
    "Tensor.__getitem__": [],
}
del SHAPE["Tensor.__getitem__"]
for _path, _variants in SHAPE.items():
    for _label, _program in _variants:
        add(_path, _label, _program, normal(2, 3))
add("Tensor.reshape", "int64", lambda L, x: x.reshape(3, 2), ints(2, 3))


# ----------------------------------------------------------------------------- indexing

add("torch.gather", "dim1", lambda L, x, i: L.gather(x, 1, i), normal(2, 3), indices(3, 2, 2))
add("torch.gather", "bad-index", lambda L, x, i: L.gather(x, 1, i), normal(2, 3),
    constant([[0, 3]]))
add("Tensor.gather", "dim0", lambda L, x, i: x.gather(0, i), normal(2, 3), indices(2, 1, 3))
add("Tensor.scatter", "dim1", lambda L, x, i, s: x.scatter(1, i, s), normal(2, 3),
    constant([[2, 0], [1, 2]]), normal(2, 2))
add("Tensor.scatter", "scalar", lambda L, x, i: x.scatter(1, i, 7.0), normal(2, 3),
    constant([[2, 0], [1, 2]]))
add("Tensor.scatter_", "dim1", lambda L, x, i, s: (x * 1).scatter_(1, i, s), normal(2, 3),
    constant([[2, 0], [1, 2]]), normal(2, 2))
add("Tensor.scatter_", "leaf", lambda L, x, i, s: x.scatter_(1, i, s), normal(2, 3),
    constant([[2, 0], [1, 2]]), normal(2, 2))
add("Tensor.scatter_add", "repeats", lambda L, x, i, s: x.scatter_add(1, i, s), normal(2, 3),
    constant([[2, 2], [1, 1]]), normal(2, 2))
add("torch.scatter_add", "dim0", lambda L, x, i, s: L.scatter_add(x, 0, i, s), normal(2, 3),
    constant([[1, 0, 1]]), normal(1, 3))
add("torch.scatter_add", "bad-index", lambda L, x, i, s: L.scatter_add(x, 0, i, s), normal(2, 3),
    constant([[5, 0, 1]]), normal(1, 3))
for _space in ("torch", "Tensor"):
    _mf = (lambda L, x, m: L.masked_fill(x, m, 0.5)) if _space == "torch" else \
        (lambda L, x, m: x.masked_fill(m, 0.5))
    add(f"{_space}.masked_fill", "mask", _mf, normal(2, 3), mask(2, 3))
    add(f"{_space}.masked_fill", "broadcast-mask", _mf, normal(2, 3), mask(3))
    add(f"{_space}.masked_fill", "int-mask", _mf, normal(2, 3), ints(2, 3, low=0, high=2))
    _tk = (lambda L, x, *a, **k: L.topk(x, *a, **k)) if _space == "torch" else \
        (lambda L, x, *a, **k: x.topk(*a, **k))
    add(f"{_space}.topk", "2", lambda L, x, t=_tk: t(L, x, 2), distinct(2, 4))
    add(f"{_space}.topk", "smallest-dim0", lambda L, x, t=_tk: t(L, x, 1, dim=0, largest=False),
        distinct(2, 4))
    add(f"{_space}.topk", "bad", lambda L, x, t=_tk: t(L, x, 5), distinct(2, 4))
    _so = (lambda L, x, *a, **k: L.sort(x, *a, **k)) if _space == "torch" else \
        (lambda L, x, *a, **k: x.sort(*a, **k))
    add(f"{_space}.sort", "last", lambda L, x, s=_so: s(L, x), distinct(2, 4))
    add(f"{_space}.sort", "descending-dim0", lambda L, x, s=_so: s(L, x, 0, descending=True),
        distinct(2, 4))
    add(f"{_space}.sort", "ints", lambda L, x, s=_so: s(L, x), ints(2, 4))
for _space in ("torch", "Tensor"):
    _ix = (lambda L, x, *a: L.index_select(x, *a)) if _space == "torch" else \
        (lambda L, x, *a: x.index_select(*a))
    add(f"{_space}.index_select", "dim1-repeats", lambda L, x, i, f=_ix: f(L, x, 1, i),
        normal(2, 3), constant([2, 0, 2]))
    add(f"{_space}.index_select", "dim0", lambda L, x, i, f=_ix: f(L, x, 0, i), normal(2, 3),
        constant([1]))
    add(f"{_space}.index_select", "bad-index", lambda L, x, i, f=_ix: f(L, x, 1, i), normal(2, 3),
        constant([3]))
    _ms = (lambda L, x, m: L.masked_select(x, m)) if _space == "torch" else \
        (lambda L, x, m: x.masked_select(m))
    add(f"{_space}.masked_select", "mask", _ms, normal(2, 3), mask(2, 3))
    add(f"{_space}.masked_select", "broadcast-mask", _ms, normal(2, 3), mask(3))
    add(f"{_space}.masked_select", "bad-mask", _ms, normal(2, 3), mask(2))
    _as = (lambda L, x, *a, **k: L.argsort(x, *a, **k)) if _space == "torch" else \
        (lambda L, x, *a, **k: x.argsort(*a, **k))
    add(f"{_space}.argsort", "last", lambda L, x, s=_as: s(L, x), distinct(2, 4))
    add(f"{_space}.argsort", "descending-dim0", lambda L, x, s=_as: s(L, x, 0, descending=True),
        distinct(2, 4))
add("Tensor.index_add", "dim1-repeats", lambda L, x, i, s: x.index_add(1, i, s), normal(2, 3),
    constant([2, 0, 2]), normal(2, 3))
add("Tensor.index_add", "alpha-dim0", lambda L, x, i, s: x.index_add(0, i, s, alpha=2),
    normal(2, 3), constant([1]), normal(1, 3))
add("Tensor.index_add", "bad-source", lambda L, x, i, s: x.index_add(1, i, s), normal(2, 3),
    constant([2, 0]), normal(2, 3))
add("Tensor.index_fill", "dim1", lambda L, x, i: x.index_fill(1, i, -1.5), normal(2, 3),
    constant([2, 0]))
add("Tensor.index_fill", "int-float-value", lambda L, x, i: x.index_fill(0, i, 2.7), ints(2, 3),
    constant([1]))
add("torch.unique", "inverse-counts",
    lambda L, x: L.unique(x, return_inverse=True, return_counts=True), ints(2, 5))
add("torch.unique", "dim0", lambda L, x: L.unique(x, dim=0), constant([[1, 2], [0, 1], [1, 2]]))
add("torch.nonzero", "as_tuple", lambda L, x: L.nonzero(x, as_tuple=True),
    ints(2, 3, low=-1, high=2))


# ----------------------------------------------------------------------------- operators

# Tensor's operators (its dunder methods that torch.Tensor has too), each through the Python
# syntax that calls it. Binary ones: a tensor on each side, a number on the right, a number on
# the left (the reflected method), integer and boolean operands, and a shape mismatch.
OPERATORS = {
    "__add__": lambda a, b: a + b, "__sub__": lambda a, b: a - b, "__mul__": lambda a, b: a * b,
    "__truediv__": lambda a, b: a / b, "__pow__": lambda a, b: a ** b,
    "__eq__": lambda a, b: a == b, "__ne__": lambda a, b: a != b, "__lt__": lambda a, b: a < b,
    "__le__": lambda a, b: a <= b, "__gt__": lambda a, b: a > b, "__ge__": lambda a, b: a >= b,
    "__floordiv__": lambda a, b: a // b, "__mod__": lambda a, b: a % b,
}
REFLECTED = {"__radd__": lambda a: 2.5 + a, "__rsub__": lambda a: 2.5 - a,
             "__rmul__": lambda a: 2.5 * a, "__rtruediv__": lambda a: 2.5 / a,
             "__rpow__": lambda a: 2.5 ** a, "__rfloordiv__": lambda a: 2.5 // a,
             "__rmod__": lambda a: 2.5 % a}
for _name, _op in OPERATORS.items():
    _first = positive(2, 3) if _name == "__pow__" else lattice(2, 3)
    _second = nonzero(3) if _name in ("__truediv__", "__floordiv__", "__mod__") else \
        lattice(3, offset=0.2 * (_name in ("__add__", "__sub__", "__mul__", "__pow__")))
    add(f"Tensor.{_name}", "broadcast", (lambda o: lambda L, x, y: o(x, y))(_op), _first, _second)
    add(f"Tensor.{_name}", "number", (lambda o: lambda L, x: o(x, 2))(_op), _first)
    add(f"Tensor.{_name}", "int-tensors", (lambda o: lambda L, x, y: o(x, y))(_op),
        ints(2, 3, low=1), ints(3, low=1))
    add(f"Tensor.{_name}", "int-float-number", (lambda o: lambda L, x: o(x, 0.5))(_op),
        ints(2, 3, low=1))
    add(f"Tensor.{_name}", "mismatch", (lambda o: lambda L, x, y: o(x, y))(_op), normal(2, 3),
        normal(2))
    add(f"Tensor.{_name}", "bools", (lambda o: lambda L, x, y: o(x, y))(_op), mask(2, 3),
        all_true(3) if _name in ("__truediv__", "__floordiv__", "__mod__") else mask(3))
    add(f"Tensor.{_name}", "bool-int-number", (lambda o: lambda L, m: o(m, 2))(_op), mask(2, 3))
    add(f"Tensor.{_name}", "bool-float-number", (lambda o: lambda L, m: o(m, 0.5))(_op),
        mask(2, 3))
for _name, _op in REFLECTED.items():
    add(f"Tensor.{_name}", "float", (lambda o: lambda L, x: o(x))(_op),
        nonzero(2, 3) if _name in ("__rtruediv__", "__rfloordiv__", "__rmod__")
        else normal(2, 3))
    add(f"Tensor.{_name}", "int", (lambda o: lambda L, x: o(x))(_op), ints(2, 3, low=1))
# Gradients at the kinks: where a piecewise function changes formula, at 0, NaN and the
# infinities, each library picks a one-sided derivative (hardtanh's is 0 at its bounds, clamp's
# 1) or lets a NaN through or not. Random inputs never land there; these do.
_NAN, _INF = float("nan"), float("inf")


def kink(name: str, label: str, program: Callable[..., Any], *inputs: Input) -> None:
    add(name, label, program, *inputs, nonfinite=True)


KINKS = at(_NAN, 0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5, 20.0, _INF, -_INF)
_PLUS_NAN = at(0.0, _NAN, 2.0, 0.5, -1.0, _NAN, 1.0, 3.0, -_INF, 0.5, 6.0, 1.0)  # beside KINKS
for _name, _program in {
    "Tensor.relu": lambda L, x: x.relu(), "F.relu6": lambda L, x: L.nn.functional.relu6(x),
    "F.hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "F.hardsigmoid": lambda L, x: L.nn.functional.hardsigmoid(x),
    "F.hardswish": lambda L, x: L.nn.functional.hardswish(x),
    "F.elu": lambda L, x: L.nn.functional.elu(x), "F.selu": lambda L, x: L.nn.functional.selu(x),
    "F.celu": lambda L, x: L.nn.functional.celu(x, 0.5),
    "F.leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "F.prelu": lambda L, x: L.nn.functional.prelu(x, L.tensor([0.25], dtype=L.float64)),
    "F.threshold": lambda L, x: L.nn.functional.threshold(x, 0.5, -2.0),
    "F.hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 1.0),
    "F.softshrink": lambda L, x: L.nn.functional.softshrink(x, 1.0),
    "F.tanhshrink": lambda L, x: L.nn.functional.tanhshrink(x),
    "F.softplus": lambda L, x: L.nn.functional.softplus(x, threshold=3.0),
    "F.gelu": lambda L, x: L.nn.functional.gelu(x), "F.silu": lambda L, x: L.nn.functional.silu(x),
    "Tensor.abs": lambda L, x: x.abs(), "Tensor.sign": lambda L, x: x.sign(),
    "Tensor.clamp": lambda L, x: x.clamp(-1.0, 3.0),
    "Tensor.clamp_min": lambda L, x: x.clamp_min(1.0),
    "Tensor.sqrt": lambda L, x: x.abs().sqrt(), "Tensor.tanh": lambda L, x: x.tanh(),
    "Tensor.sigmoid": lambda L, x: x.sigmoid(), "Tensor.exp": lambda L, x: x.exp(),
    "Tensor.atan": lambda L, x: x.atan(), "Tensor.sinh": lambda L, x: x.sinh(),
    "Tensor.expm1": lambda L, x: x.expm1(), "Tensor.max": lambda L, x: x.max(),
    "Tensor.min": lambda L, x: x.min(), "Tensor.amax": lambda L, x: x.reshape(3, 4).amax(1),
    "Tensor.topk": lambda L, x: x.topk(4).values, "Tensor.cumsum": lambda L, x: x.cumsum(0),
    "Tensor.norm": lambda L, x: x.reshape(3, 4).norm(dim=1),
    "Tensor.softmax": lambda L, x: x.reshape(3, 4).softmax(1),
    "Tensor.logsumexp": lambda L, x: x.reshape(3, 4).logsumexp(1),
}.items():
    kink(_name, "kinks", _program, KINKS)
kink("Tensor.max", "kinks-dim", lambda L, x: x.reshape(3, 4).max(1), KINKS)
kink("Tensor.min", "kinks-dim", lambda L, x: x.reshape(3, 4).min(1), KINKS)
kink("Tensor.sort", "kinks-descending", lambda L, x: x.sort(descending=True), KINKS)
kink("Tensor.pow", "kinks", lambda L, x: x ** 2.0, KINKS)
kink("Tensor.pow", "kinks-half", lambda L, x: x.abs() ** 0.5, KINKS)
kink("Tensor.logit", "kinks", lambda L, x: x.logit(), at(_NAN, 0.0, 1.0, 0.5, 0.25))
kink("Tensor.asin", "kinks", lambda L, x: x.asin(), at(_NAN, 0.0, 1.0, -1.0, 0.5))
kink("Tensor.clamp", "kinks-tensors", lambda L, x, b: x.clamp(b - 1.0, b), KINKS, _PLUS_NAN)
kink("Tensor.clamp", "kinks-crossed", lambda L, x, b: x.clamp(b, b - 1.0), KINKS, _PLUS_NAN)
kink("torch.maximum", "kinks", lambda L, x, y: L.maximum(x, y), KINKS, _PLUS_NAN)
kink("torch.minimum", "kinks", lambda L, x, y: L.minimum(x, y), KINKS, _PLUS_NAN)
kink("torch.atan2", "kinks", lambda L, x, y: L.atan2(x, y), KINKS, _PLUS_NAN)
kink("torch.where", "kinks", lambda L, x, y: L.where(x > y, x, y), KINKS, _PLUS_NAN)
# Outside the domain the value is NaN in both, and PyTorch's gradient is NaN too.
kink("Tensor.logit", "outside", lambda L, x: x.logit(), at(-1.0, 2.0, _INF))
kink("Tensor.asin", "outside", lambda L, x: x.asin(), at(2.0, _INF, -_INF))
kink("Tensor.acos", "outside", lambda L, x: x.acos(), at(2.0, _INF, -_INF))
kink("Tensor.pow", "kinks-half-negative", lambda L, x: x ** 0.5, at(-_INF, -1.0))

add("Tensor.__matmul__", "batched", lambda L, x, y: x @ y, normal(2, 2, 3), normal(3, 4))
add("Tensor.__matmul__", "mismatch", lambda L, x, y: x @ y, normal(2, 3), normal(2, 3))
add("Tensor.__rmatmul__", "tensors", lambda L, x, y: x.__rmatmul__(y), normal(3, 2),
    normal(2, 3))
add("Tensor.__rmatmul__", "array-left", lambda L, x: _numpy_left(L, x), normal(3, 2))
add("Tensor.__dlpack__", "plain", lambda L, x: np.from_dlpack(x), fixed(2, 3))
add("Tensor.__dlpack__", "detached-leaf", lambda L, x: np.from_dlpack(x.detach()), normal(2, 3))
add("Tensor.__dlpack__", "requires-grad", lambda L, x: np.from_dlpack(x), normal(2, 3))
add("Tensor.__dlpack_device__", "cpu", lambda L, x: tuple(x.__dlpack_device__()), normal(2, 3))
for _name, _op in {"__and__": lambda a, b: a & b, "__or__": lambda a, b: a | b}.items():
    add(f"Tensor.{_name}", "bools", (lambda o: lambda L, x, y: o(x, y))(_op), mask(2, 3), mask(3))
    add(f"Tensor.{_name}", "ints", (lambda o: lambda L, x, y: o(x, y))(_op), ints(2, 3), ints(3))
    add(f"Tensor.{_name}", "floats", (lambda o: lambda L, x, y: o(x, y))(_op), normal(2, 3),
        normal(3))
add("Tensor.__invert__", "bools", lambda L, m: ~m, mask(2, 3))
add("Tensor.__invert__", "ints", lambda L, m: ~m, ints(2, 3))
add("Tensor.__invert__", "floats", lambda L, x: ~x, normal(2, 3))
add("Tensor.__neg__", "float", lambda L, x: -x, normal(2, 3))
add("Tensor.__neg__", "bool", lambda L, m: -m, mask(2, 3))
add("Tensor.abs", "bool", lambda L, m: m.abs(), mask(2, 3))
add("Tensor.sign", "bool", lambda L, m: m.sign(), mask(2, 3))
add("torch.sign", "bool", lambda L, m: L.sign(m), mask(2, 3))
add("Tensor.__pos__", "float", lambda L, x: +x, normal(2, 3))
add("Tensor.__abs__", "float", lambda L, x: abs(x), nonzero(2, 3))
for _name, _op in {"__iadd__": lambda a, b: a.__iadd__(b), "__isub__": lambda a, b: a.__isub__(b),
                   "__imul__": lambda a, b: a.__imul__(b),
                   "__itruediv__": lambda a, b: a.__itruediv__(b)}.items():
    add(f"Tensor.{_name}", "non-leaf", (lambda o: lambda L, x, y: (lambda z: (o(z, y), z))(
        x * 1))(_op), normal(2, 3), nonzero(3))
    add(f"Tensor.{_name}", "leaf", (lambda o: lambda L, x, y: o(x, y))(_op), normal(2, 3),
        nonzero(3))
    add(f"Tensor.{_name}", "broadcast-self", (lambda o: lambda L, x, y: o(y * 1, x))(_op),
        normal(2, 3), nonzero(3))
    add(f"Tensor.{_name}", "int-by-float", (lambda o: lambda L, x: o(x.clone(), 1.5))(_op),
        ints(2, 3, low=1))
add("Tensor.__bool__", "one", lambda L, x: bool(x[0, 0] > 0), normal(2, 3))
add("Tensor.__bool__", "many", lambda L, x: bool(x > 0), normal(2, 3))
add("Tensor.__float__", "one", lambda L, x: float(x[1, 2]), fixed(2, 3))
add("Tensor.__float__", "many", lambda L, x: float(x), fixed(2, 3))
add("Tensor.__int__", "one", lambda L, x: int(x[1, 2] * 10), fixed(2, 3))
add("Tensor.__index__", "list-index", lambda L, i: [10, 20, 30][i[0]], indices(3, 2))
add("Tensor.__index__", "float", lambda L, x: [10, 20, 30][x[0, 0]], normal(2, 3))
add("Tensor.__len__", "rows", lambda L, x: len(x), normal(2, 3))
add("Tensor.__len__", "0-d", lambda L, x: len(x[0, 0]), normal(2, 3))
add("Tensor.__iter__", "rows", lambda L, x: list(x), normal(2, 3))
add("Tensor.__iter__", "0-d", lambda L, x: list(x[0, 0]), normal(2, 3))
add("Tensor.__array__", "no-grad", lambda L, x: np.asarray(x.detach()), normal(2, 3))
add("Tensor.__array__", "requires-grad", lambda L, x: np.asarray(x), normal(2, 3))
GETITEM = {
    "int": lambda x: x[1], "negative": lambda x: x[-1, -2], "slice": lambda x: x[:, 1:],
    "step": lambda x: x[:, ::2], "None": lambda x: x[None, :, None],
    "Ellipsis": lambda x: x[..., 1],
    "list": lambda x: x[[1, 0, 1]], "two-lists": lambda x: x[[0, 1], [2, 0]],
    "bool-list": lambda x: x[[True, False]], "out-of-range": lambda x: x[2],
    "negative-step": lambda x: x[::-1], "too-many": lambda x: x[0, 0, 0],
}
for _label, _index in GETITEM.items():
    add("Tensor.__getitem__", _label, (lambda i: lambda L, x: i(x))(_index), normal(2, 3))
add("Tensor.__getitem__", "mask", lambda L, x, m: x[m], normal(2, 3), mask(2, 3))
add("Tensor.__getitem__", "row-mask", lambda L, x, m: x[m], normal(2, 3), constant([True, False]))
add("Tensor.__getitem__", "int-tensor", lambda L, x, i: x[:, i], normal(2, 3), indices(3, 2, 2))
add("Tensor.__getitem__", "bad-int-tensor", lambda L, x, i: x[i], normal(2, 3), constant([2]))
SETITEM = {
    "int": lambda x, v: x.__setitem__(1, v), "slice": lambda x, v: x.__setitem__(
        (slice(None), slice(1, None)), v[:2]),
    "number": lambda x, v: x.__setitem__((0, 0), 7.0),
    "list": lambda x, v: x.__setitem__([1, 0], v),
    "mask-none": lambda x, v: x.__setitem__(x > 100, 0.0),
    "mask": lambda x, v: x.__setitem__(x > 0, 0.0),
    "bad-shape": lambda x, v: x.__setitem__(0, v[:2]),
}
for _label, _set in SETITEM.items():
    add("Tensor.__setitem__", _label, (lambda s: lambda L, x, v: (lambda z: (s(z, v), z)[1])(
        x * 1))(_set), normal(2, 3), normal(3))
add("Tensor.__setitem__", "leaf", lambda L, x, v: x.__setitem__(0, v), normal(2, 3), normal(3))
add("Tensor.__setitem__", "int-gets-float", lambda L, x: (lambda z: (
    z.__setitem__(0, 2.7), z)[1])(x.clone()), ints(2, 3))


def _numpy_left(L: Any, x: Any) -> Any:
    """``array @ tensor``: numpy's matmul sees a tensor on its right."""
    return np.ones((2, 3)) @ x.detach()


# ----------------------------------------------------------------------------- making tensors

CREATION = {
    "zeros": [("2x3", lambda L: L.zeros(2, 3)), ("tuple", lambda L: L.zeros((2,))),
              ("int", lambda L: L.zeros(2, dtype=L.int64)), ("bad", lambda L: L.zeros(-1))],
    "ones": [("2x3", lambda L: L.ones(2, 3)), ("f64", lambda L: L.ones(2, dtype=L.float64))],
    "full": [("float", lambda L: L.full((2, 3), 1.5)), ("int", lambda L: L.full((2,), 3)),
             ("bool", lambda L: L.full((2,), True))],
    "empty": [("2x3", lambda L: L.empty(2, 3).zero_())],
    "arange": [("5", lambda L: L.arange(5)), ("float-step", lambda L: L.arange(0, 1, 0.25)),
               ("float-end", lambda L: L.arange(0, 5.0)), ("neg", lambda L: L.arange(3, 0, -1)),
               ("dtype", lambda L: L.arange(4, dtype=L.float32)),
               ("bad", lambda L: L.arange(0, 3, 0))],
    "linspace": [("5", lambda L: L.linspace(0, 1, 5)), ("1", lambda L: L.linspace(2, 3, 1))],
    "eye": [("3", lambda L: L.eye(3)), ("2x3", lambda L: L.eye(2, 3))],
    "tensor": [("floats", lambda L: L.tensor([1.0, 2.0])), ("ints", lambda L: L.tensor([1, 2])),
               ("bools", lambda L: L.tensor([True])), ("scalar", lambda L: L.tensor(3.5)),
               ("mixed", lambda L: L.tensor([1, 2.5])),
               ("ragged", lambda L: L.tensor([[1], [1, 2]])),
               ("requires-grad-int", lambda L: L.tensor([1], requires_grad=True)),
               ("f64-array", lambda L: L.tensor(np.array([1.5]))),
               ("i32-array", lambda L: L.tensor(np.array([1], dtype=np.int32)))],
    "as_tensor": [("list", lambda L: L.as_tensor([1.0, 2.0])),
                  ("array", lambda L: L.as_tensor(np.array([1, 2])))],
    "from_numpy": [("f32", lambda L: L.from_numpy(np.array([1.0, 2.0], dtype=np.float32))),
                   ("i64", lambda L: L.from_numpy(np.arange(3)))],
    "pi": [("value", lambda L: L.pi)],
    "FloatTensor": [("list", lambda L: L.FloatTensor([1, 2]))],
    "DoubleTensor": [("list", lambda L: L.DoubleTensor([1, 2]))],
    "HalfTensor": [("list", lambda L: L.HalfTensor([1, 2]))],
    "LongTensor": [("list", lambda L: L.LongTensor([1.5, 2]))],
    "IntTensor": [("list", lambda L: L.IntTensor([1, 2]))],
    "ShortTensor": [("list", lambda L: L.ShortTensor([1, 2]))],
    "CharTensor": [("list", lambda L: L.CharTensor([1, -2]))],
    "ByteTensor": [("list", lambda L: L.ByteTensor([1, 2]))],
    "BoolTensor": [("list", lambda L: L.BoolTensor([1, 0]))],
    "Tensor": [("list", lambda L: L.Tensor([1, 2])), ("sizes", lambda L: L.Tensor(2, 3).zero_())],
    "device": [("cpu", lambda L: str(L.device("cpu"))),
               ("type", lambda L: L.device("cpu").type)],
    "is_grad_enabled": [("default", lambda L: L.is_grad_enabled())],
    "is_anomaly_enabled": [("default", lambda L: L.is_anomaly_enabled())],
    "get_default_dtype": [("float32", lambda L: L.get_default_dtype())],
    "save": [("round-trip", lambda L: _round_trip(L, {"w": L.ones(2), "n": 3}))],
    "load": [("round-trip", lambda L: _round_trip(L, [L.arange(3), L.zeros(1)]))],
}
for _name in ("float", "double", "half", "long", "int", "bool", "float16", "float32", "float64",
              "int8", "int16", "int32", "int64", "uint8"):
    CREATION[_name] = [("dtype", (lambda n: lambda L: getattr(L, n))(_name))]


def _round_trip(L: Any, obj: Any) -> Any:
    buffer = io.BytesIO()
    L.save(obj, buffer)
    buffer.seek(0)
    return L.load(buffer)


for _name, _variants in CREATION.items():
    for _label, _program in _variants:
        add(f"torch.{_name}", _label, _program)

for _name in ("zeros_like", "ones_like", "empty_like"):
    _random = _name == "empty_like"  # uninitialised memory in torch
    add(f"torch.{_name}", "f64", (lambda n: lambda L, x: getattr(L, n)(x))(_name), normal(2, 3),
        random=_random)
    add(f"torch.{_name}", "int", (lambda n: lambda L, x: getattr(L, n)(x))(_name), ints(2),
        random=_random)
add("torch.full_like", "f64", lambda L, x: L.full_like(x, 2.5), normal(2, 3))
add("torch.full_like", "int-float-fill", lambda L, x: L.full_like(x, 2.5), ints(2))
add("torch.empty_like", "shape", lambda L, x: L.empty_like(x).shape, normal(2, 3))

RANDOM = {
    "rand": lambda L: L.rand(2, 3), "randn": lambda L: L.randn(2, 3),
    "randint": lambda L: L.randint(0, 5, (2, 3)), "randperm": lambda L: L.randperm(5),
    "normal": lambda L: L.normal(0.0, 1.0, (2, 3)),
    "multinomial": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 3, replacement=True),
    "rand_like": lambda L: L.rand_like(L.zeros(2, dtype=L.float64)),
    "randn_like": lambda L: L.randn_like(L.zeros(2)),
    "manual_seed": lambda L: type(L.manual_seed(0)).__name__,
    "Generator": lambda L: L.rand(3, generator=L.Generator().manual_seed(1)),
    "bernoulli": lambda L: L.bernoulli(L.full((2, 3), 0.3, dtype=L.float64)),
}
for _name, _program in RANDOM.items():
    add(f"torch.{_name}", "draw", _program, random=True)
add("torch.default_generator", "is-manual_seed's", lambda L: L.manual_seed(0) is
    L.default_generator)
add("torch.manual_seed", "reseeds-the-default", lambda L: _reseeded(L))
add("torch.randperm", "seeded", lambda L: L.randperm(7, generator=L.Generator().manual_seed(3)))


def _reseeded(L: Any) -> Any:
    """randperm deals PyTorch's permutations (NOTE [PyTorch's integer stream])."""
    g = L.manual_seed(3)
    first = L.randperm(6)
    g.manual_seed(3)
    return first, L.randperm(6)
add("torch.normal", "tensor-mean", lambda L, m: L.normal(m, 1.0), normal(2, 3), random=True)
add("torch.multinomial", "bad-too-many", lambda L: L.multinomial(L.tensor([0.2, 0.8]), 3),
    random=True)
add("torch.bernoulli", "certain", lambda L, p: L.bernoulli(p), constant([[0.0, 1.0], [1.0, 0.0]]))
add("torch.bernoulli", "zeros-and-ones", lambda L: sorted(set(L.bernoulli(
    L.full((50,), 0.5)).tolist())))
add("torch.bernoulli", "float32-seeded", lambda L: L.bernoulli(
    L.full((4,), 0.5), generator=L.Generator().manual_seed(0)), random=True)
add("torch.bernoulli", "bad-probability", lambda L: L.bernoulli(L.full((2,), 1.5)),
    random=True)
add("torch.randint", "bad-empty-range", lambda L: L.randint(3, 3, (2,)), random=True)
for _name, _program in {
    "normal_": lambda L, x: (x * 1).normal_(), "uniform_": lambda L, x: (x * 1).uniform_(-1, 1),
    "random_": lambda L, x: (x * 1).random_(0, 5),
}.items():
    add(f"Tensor.{_name}", "draw", _program, normal(2, 3), random=True)


# ----------------------------------------------------------------------------- Tensor's own

TENSOR = {
    "item": [("0d", lambda L, x: x[0, 0].item()),
             ("types", lambda L, x: [type(t.item()).__name__ for t in (
                 x[0, 0], x[0, 0].long(), x[0, 0] > 0, x[0, 0].float())]),
             ("1-elem", lambda L, x: x[:1, :1].item()),
             ("bad", lambda L, x: x.item())],
    "tolist": [("2d", lambda L, x: x.tolist()), ("int", lambda L, x: x.long().tolist()),
               ("types", lambda L, x: [type(t.tolist()[0]).__name__ for t in (
                   x[0], x[0].long(), x[0] > 0)])],
    "numpy": [("no-grad", lambda L, x: x.detach().numpy()), ("requires-grad", lambda L, x:
              x.numpy())],
    "size": [("all", lambda L, x: tuple(x.size())), ("dim", lambda L, x: x.size(1)),
             ("neg", lambda L, x: x.size(-1)), ("bad", lambda L, x: x.size(2))],
    "shape": [("tuple", lambda L, x: tuple(x.shape))],
    "dim": [("2", lambda L, x: x.dim())], "ndim": [("2", lambda L, x: x.ndim)],
    "nelement": [("6", lambda L, x: x.nelement())],
    "dtype": [("f64", lambda L, x: x.dtype), ("f32", lambda L, x: x.float().dtype)],
    "device": [("cpu", lambda L, x: str(x.device)), ("type", lambda L, x: x.device.type)],
    "is_contiguous": [("yes", lambda L, x: x.is_contiguous()),
                      ("T", lambda L, x: x.T.is_contiguous())],
    "requires_grad": [("leaf", lambda L, x: x.requires_grad),
                      ("derived", lambda L, x: (x * 2).requires_grad)],
    "is_leaf": [("leaf", lambda L, x: x.is_leaf), ("derived", lambda L, x: (x * 2).is_leaf)],
    "grad_fn": [("none", lambda L, x: x.grad_fn is None),
                ("derived", lambda L, x: (x * 2).grad_fn is None)],
    "grad": [("after", lambda L, x: _grad_after(L, x))],
    "retain_grad": [("kept", lambda L, x: _retained(x))],
    "retains_grad": [("flags", lambda L, x: (x.retains_grad, (x * 2).retains_grad))],
    "register_hook": [("doubles", lambda L, x: _hooked(x))],
    "backward": [("scalar", lambda L, x: _grad_after(L, x)),
                 ("non-scalar", lambda L, x: (x * 2).backward()),
                 ("gradient", lambda L, x: _backward_with(L, x))],
    "requires_grad_": [("float", lambda L, x: x.detach().requires_grad_().requires_grad),
                       ("int", lambda L, x: x.long().requires_grad_())],
    "data": [("view", lambda L, x: x.data)],
    "to": [("dtype", lambda L, x: x.to(L.float32)), ("device", lambda L, x: x.to("cpu")),
           ("tensor", lambda L, x: x.to(x.long())), ("kw", lambda L, x: x.to(dtype=L.int32))],
    "type": [("string", lambda L, x: x.type().split(".")[-1]),
             ("dtype", lambda L, x: x.type(L.float32))],
    "type_as": [("long", lambda L, x: x.type_as(x.long()))],
    "cuda": [("no-gpu", lambda L, x: x.cuda())],
    "copy_": [("non-leaf", lambda L, x, y: (x * 1).copy_(y)),
              ("leaf", lambda L, x, y: x.copy_(y)),
              ("no-grad-leaf", lambda L, x, y: x.detach().copy_(y))],
    "fill_": [("non-leaf", lambda L, x, y: (x * 1).fill_(2.0)),
              ("leaf", lambda L, x, y: x.fill_(2.0))],
    "zero_": [("non-leaf", lambda L, x, y: (x * 1).zero_()), ("leaf", lambda L, x, y: x.zero_())],
    "add_": [("non-leaf", lambda L, x, y: (x * 1).add_(y)), ("leaf", lambda L, x, y: x.add_(y)),
             ("alpha", lambda L, x, y: (x * 1).add_(y, alpha=2)),
             ("broadcast-self", lambda L, x, y: (y * 1).add_(x))],
    "sub_": [("non-leaf", lambda L, x, y: (x * 1).sub_(y))],
    "mul_": [("non-leaf", lambda L, x, y: (x * 1).mul_(y)),
             ("int-by-float", lambda L, x, y: x.long().mul_(1.5))],
    "div_": [("non-leaf", lambda L, x, y: (x * 1).div_(y + 3))],
    "new_full": [("f64", lambda L, x, y: x.new_full((2,), 3))],
    "new_ones": [("f64", lambda L, x, y: x.new_ones(2, 1))],
    "new_zeros": [("f64", lambda L, x, y: x.new_zeros((3,)))],
    "new_tensor": [("ints", lambda L, x, y: x.new_tensor([1, 2])),
                   ("floats", lambda L, x, y: x.new_tensor([1.5]))],
    "logit": [("eps", lambda L, x, y: x.sigmoid().logit(eps=0.2))],
    "softmax": [("method", lambda L, x, y: x.softmax(-1))],
    "log_softmax": [("method", lambda L, x, y: x.log_softmax(0))],
}
for _name, _variants in TENSOR.items():
    for _label, _program in _variants:
        _n = len(inspect.signature(_program).parameters) - 1
        add(f"Tensor.{_name}", _label, _program, *[normal(2, 3), normal(3)][:_n])


# Tensor's in-place forms: name: (inputs, call(z, *rest)), run on a non-leaf z = x * 1 (the
# result is z itself, and the gradient flows through the write back to x) and on the leaf x
# that requires grad (both refuse)
INPLACE = {
    "abs_": ((nonzero(2, 3),), lambda z: z.abs_()),
    "exp_": ((normal(2, 3),), lambda z: z.exp_()),
    "log_": ((positive(2, 3),), lambda z: z.log_()),
    "neg_": ((normal(2, 3),), lambda z: z.neg_()),
    "sqrt_": ((positive(2, 3),), lambda z: z.sqrt_()),
    "tanh_": ((normal(2, 3),), lambda z: z.tanh_()),
    "sigmoid_": ((normal(2, 3),), lambda z: z.sigmoid_()),
    "relu_": ((nonzero(2, 3),), lambda z: z.relu_()),
    "pow_": ((positive(2, 3), normal(3)), lambda z, y: z.pow_(y)),
    "clamp_": ((normal(2, 3),), lambda z: z.clamp_(-0.5, 0.5)),
    "clip_": ((normal(2, 3),), lambda z: z.clip_(min=0.1)),
    "clamp_min_": ((avoiding_point(0.1),), lambda z: z.clamp_min_(0.1)),
    "clamp_max_": ((avoiding_point(0.1),), lambda z: z.clamp_max_(0.1)),
    "masked_fill_": ((normal(2, 3), mask(3)), lambda z, m: z.masked_fill_(m, 0.5)),
    "scatter_add_": ((normal(2, 3), constant([[2, 2], [1, 1]]), normal(2, 2)),
                     lambda z, i, s: z.scatter_add_(1, i, s)),
    "index_add_": ((normal(2, 3), constant([2, 0, 2]), normal(2, 3)),
                   lambda z, i, s: z.index_add_(1, i, s, alpha=-1)),
    "index_fill_": ((normal(2, 3), constant([1])), lambda z, i: z.index_fill_(0, i, 2.0)),
    "addcmul_": ((normal(2, 3), normal(3), normal(2, 3)),
                 lambda z, a, b: z.addcmul_(a, b, value=2)),
    "addcdiv_": ((normal(2, 3), normal(2, 3), nonzero(3)), lambda z, a, b: z.addcdiv_(a, b)),
    "lerp_": ((normal(2, 3), normal(3)), lambda z, y: z.lerp_(y, 0.25)),
}
for _name, (_inputs, _call) in INPLACE.items():
    add(f"Tensor.{_name}", "non-leaf", (lambda c: lambda L, x, *r: (lambda z: (
        c(z, *r) is z, z))(x * 1))(_call), *_inputs)
    add(f"Tensor.{_name}", "leaf", (lambda c: lambda L, x, *r: c(x, *r))(_call), *_inputs)
add("Tensor.abs_", "int", lambda L, x: x.clone().abs_(), ints(2, 3))
add("Tensor.exp_", "int", lambda L, x: x.clone().exp_(), ints(2, 3))
add("Tensor.clamp_", "int-float-bound", lambda L, x: x.clone().clamp_(max=1.5), ints(2, 3))
add("Tensor.detach_", "non-leaf", lambda L, x: (lambda z: (
    z.detach_() is z, z.requires_grad, z.grad_fn is None, z.is_leaf, z))(x * 2), normal(2, 3))
add("Tensor.detach_", "leaf", lambda L, x: (x.detach_() is x, x.requires_grad, x),
    normal(2, 3))


def _grad_after(L: Any, x: Any) -> Any:
    (x * x).sum().backward()
    return x.grad


def _backward_with(L: Any, x: Any) -> Any:
    (x * 3).backward(L.ones(2, 3, dtype=L.float64))
    return x.grad


def _retained(x: Any) -> Any:
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad


def _hooked(x: Any) -> Any:
    x.register_hook(lambda g: g * 2)
    (x * x).sum().backward()
    return x.grad


# ----------------------------------------------------------------------------- grad modes

add("torch.no_grad", "context", lambda L, x: _under(L.no_grad(), x), normal(2, 3))
add("torch.enable_grad", "inside-no_grad", lambda L, x: _nested(L, x), normal(2, 3))
add("torch.set_grad_enabled", "false", lambda L, x: _under(L.set_grad_enabled(False), x),
    normal(2, 3))
add("torch.is_tensor", "list", lambda L, x: L.is_tensor([1]), normal(2, 3))
add("torch.numel", "fn", lambda L, x: L.numel(x), normal(2, 3))
add("torch.allclose", "int-float", lambda L, x: L.allclose(x.long(), x), ints(2, 3))


add("torch.inference_mode", "context", lambda L, x: _under(L.inference_mode(), x), normal(2, 3))
add("torch.inference_mode", "off", lambda L, x: _under(L.inference_mode(False), x),
    normal(2, 3))
add("torch.autocast", "disabled", lambda L, x, w: _autocast(L, L.autocast("cpu", enabled=False),
                                                         x, w), normal(2, 3), normal(3, 2))
add("torch.autocast", "enabled-cpu", lambda L, x, w: _autocast(L, L.autocast("cpu"), x, w),
    normal(2, 3), normal(3, 2), dtype="float32")
add("torch.use_deterministic_algorithms", "on-off", lambda L: (
    L.use_deterministic_algorithms(True), L.use_deterministic_algorithms(False)))
add("torch.compile", "called", lambda L, x: _compiled(L, x), normal(2, 3))


def _autocast(L: Any, mode: Any, x: Any, w: Any) -> Any:
    with mode:
        return x @ w, x * 2


def _compiled(L: Any, x: Any) -> Any:
    """torch.compile gives an OptimizedModule wrapping the model (its parameters' names gain
    ``_orig_mod.``), dyngraph the model itself (dg.compile's docstring): calling it is what both
    mean the same by."""
    model = L.nn.Linear(3, 2).double()
    with L.no_grad():
        model.weight.copy_(x)
        model.bias.fill_(0.5)
    return L.compile(model, backend="eager")(x)


def _under(mode: Any, x: Any) -> Any:
    with mode:
        y = x * 2
    return y.requires_grad, y


def _nested(L: Any, x: Any) -> Any:
    with L.no_grad():
        with L.enable_grad():
            y = x * 2
        z = x * 2
    return y.requires_grad, z.requires_grad, y


# ----------------------------------------------------------------------------- functional


def _F(name: str, *args: Any, **kw: Any) -> Callable[..., Any]:
    return lambda L, *xs: getattr(L.nn.functional, name)(*xs, *args, **kw)


def _instance_norm_running(L: Any, x: Any, use_input_stats: bool) -> Any:
    """F.instance_norm with running statistics: the output, and the statistics after it."""
    mean = L.tensor([0.5, -1.0, 0.0], dtype=x.dtype)
    var = L.tensor([1.0, 2.0, 0.5], dtype=x.dtype)
    out = L.nn.functional.instance_norm(x, mean, var, use_input_stats=use_input_stats,
                                        momentum=0.3)
    return out, mean, var


FUNCTIONAL: dict[str, list[tuple[str, Callable[..., Any], tuple[Input, ...]]]] = {
    "relu": [("float", _F("relu"), (nonzero(2, 3),))],
    "sigmoid": [("float", _F("sigmoid"), (normal(2, 3),))],
    "tanh": [("float", _F("tanh"), (normal(2, 3),))],
    "silu": [("float", _F("silu"), (normal(2, 3),))],
    "logsigmoid": [("float", _F("logsigmoid"), (normal(2, 3),))],
    "gelu": [("none", _F("gelu"), (normal(2, 3),)),
             ("tanh", _F("gelu", approximate="tanh"), (normal(2, 3),)),
             ("bad", _F("gelu", approximate="cubic"), (normal(2, 3),))],
    "leaky_relu": [("0.1", _F("leaky_relu", 0.1), (nonzero(2, 3),))],
    "softplus": [("beta2", _F("softplus", beta=2.0), (normal(2, 3),))],
    "softmax": [("dim1", _F("softmax", dim=1), (normal(2, 3),)),
                ("dtype", _F("softmax", dim=0, dtype=None), (normal(2, 3),))],
    "log_softmax": [("dim-1", _F("log_softmax", dim=-1), (normal(2, 3),))],
    "linear": [("bias", _F("linear"), (normal(2, 3), normal(4, 3), normal(4))),
               ("no-bias", _F("linear"), (normal(2, 3), normal(4, 3))),
               ("bad", _F("linear"), (normal(2, 3), normal(4, 2)))],
    "dropout": [("eval", _F("dropout", 0.5, training=False), (normal(2, 3),)),
                ("p0", _F("dropout", 0.0), (normal(2, 3),)),
                ("bad-p", _F("dropout", 1.5), (normal(2, 3),))],
    "dropout2d": [("eval", _F("dropout2d", 0.5, training=False), (normal(2, 3, 2, 2),))],
    "embedding": [("2d", lambda L, i, w: L.nn.functional.embedding(i, w),
                   (indices(4, 2, 3), normal(4, 3))),
                  ("padding_idx", lambda L, i, w: L.nn.functional.embedding(i, w, padding_idx=0),
                   (constant([0, 1, 0, 3]), normal(4, 3))),
                  ("bad-index", lambda L, i, w: L.nn.functional.embedding(i, w),
                   (constant([4]), normal(4, 3)))],
    "embedding_bag": [("mean", lambda L, i, o, w: L.nn.functional.embedding_bag(i, w, o),
                       (constant([0, 2, 1, 3]), constant([0, 1]), normal(4, 3))),
                      ("sum", lambda L, i, o, w: L.nn.functional.embedding_bag(i, w, o,
                                                                               mode="sum"),
                       (constant([0, 2, 1, 3]), constant([0, 3]), normal(4, 3)))],
    "one_hot": [("4", _F("one_hot", 4), (constant([0, 3, 1]),)),
                ("infer", _F("one_hot"), (constant([[0, 2]]),)),
                ("bad", _F("one_hot", 2), (constant([0, 3]),))],
    "pad": [("last", _F("pad", (1, 2)), (normal(2, 3),)),
            ("two-dims", _F("pad", (1, 0, 0, 1), value=2.0), (normal(2, 3),)),
            ("negative", _F("pad", (-1, 0)), (normal(2, 3),)),
            ("reflect", _F("pad", (1, 1), mode="reflect"), (normal(1, 2, 3),)),
            ("reflect-2d", _F("pad", (1, 0, 2, 1), mode="reflect"), (normal(1, 2, 3, 4),)),
            ("replicate-unbatched", _F("pad", (2, 1), mode="replicate"), (normal(2, 3),)),
            ("bad-reflect-dims", _F("pad", (1, 1, 1, 1), mode="reflect"), (normal(3, 3),))],
    "layer_norm": [("affine", lambda L, x, w, b: L.nn.functional.layer_norm(x, (3,), w, b),
                    (normal(2, 3), normal(3), normal(3))),
                   ("plain", _F("layer_norm", (2, 3)), (normal(2, 2, 3),)),
                   ("bad", _F("layer_norm", (2,)), (normal(2, 3),))],
    "group_norm": [("2", lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b),
                    (normal(2, 4, 3), normal(4), normal(4))),
                   ("bad", _F("group_norm", 3), (normal(2, 4, 3),))],
    "instance_norm": [("plain", _F("instance_norm"), (normal(2, 3, 4),)),
                      ("affine-2d", lambda L, x, w, b: L.nn.functional.instance_norm(
                          x, weight=w, bias=b, eps=1e-3), (normal(2, 3, 3, 2), normal(3),
                                                          normal(3))),
                      ("running", lambda L, x: _instance_norm_running(L, x, True),
                       (normal(2, 3, 4),)),
                      ("running-used", lambda L, x: _instance_norm_running(L, x, False),
                       (normal(2, 3, 4),)),
                      ("bad-one-position", _F("instance_norm"), (normal(2, 3, 1),)),
                      ("bad-no-running", _F("instance_norm", use_input_stats=False),
                       (normal(2, 3, 4),))],
    "conv1d": [("pad", lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, padding=1),
                (normal(2, 3, 5), normal(4, 3, 3), normal(4))),
               ("bad", _F("conv1d"), (normal(2, 2, 5), normal(4, 3, 3)))],
    "conv2d": [("stride", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=2),
                (normal(1, 2, 5, 5), normal(3, 2, 3, 3), normal(3))),
               ("groups", _F("conv2d", groups=2, padding="same"),
                (normal(1, 4, 4, 4), normal(2, 2, 3, 3))),
               ("unbatched", _F("conv2d"), (normal(2, 4, 4), normal(3, 2, 3, 3)))],
    "conv3d": [("plain", _F("conv3d"), (normal(1, 2, 3, 3, 3), normal(2, 2, 2, 2, 2)))],
    "conv_transpose2d": [("stride", _F("conv_transpose2d", stride=2, padding=1),
                          (normal(1, 2, 3, 3), normal(2, 3, 3, 3))),
                         ("groups-dilation", lambda L, x, w, b: L.nn.functional.conv_transpose2d(
                             x, w, b, stride=(2, 1), padding=(1, 2), output_padding=(1, 0),
                             groups=2, dilation=2), (normal(1, 4, 3, 4), normal(4, 3, 3, 2),
                                                     normal(6))),
                         ("unbatched", _F("conv_transpose2d", padding=1),
                          (normal(2, 3, 3), normal(2, 1, 2, 2))),
                         ("bad-output-padding", _F("conv_transpose2d", stride=2,
                                                   output_padding=2),
                          (normal(1, 2, 3, 3), normal(2, 3, 3, 3)))],
    "conv_transpose1d": [("stride-pad", lambda L, x, w, b: L.nn.functional.conv_transpose1d(
                             x, w, b, stride=2, padding=1, output_padding=1),
                          (normal(2, 4, 5), normal(4, 3, 3), normal(3))),
                         ("groups-dilation", _F("conv_transpose1d", groups=2, dilation=3,
                                                padding=1), (normal(4, 5), normal(4, 1, 2))),
                         ("crop", _F("conv_transpose1d", padding=3), (normal(1, 2, 6),
                                                                      normal(2, 2, 3))),
                         ("bad-channels", _F("conv_transpose1d"), (normal(1, 3, 3),
                                                                   normal(2, 3, 3)))],
    "max_pool1d": [("2", _F("max_pool1d", 2), (distinct(1, 2, 6),)),
                   ("indices", _F("max_pool1d", 3, 2, 1, return_indices=True),
                    (distinct(2, 3, 8),))],
    "max_pool2d": [("2", _F("max_pool2d", 2), (distinct(1, 2, 4, 4),)),
                   ("pad-stride", _F("max_pool2d", 3, stride=2, padding=1),
                    (distinct(1, 1, 5, 5),)),
                   ("indices", _F("max_pool2d", 2, return_indices=True), (distinct(1, 1, 4, 4),)),
                   ("indices-pad-dilation", _F("max_pool2d", (3, 2), stride=(2, 1), padding=1,
                                               dilation=(1, 2), return_indices=True),
                    (distinct(2, 2, 6, 5),)),
                   ("indices-unbatched", _F("max_pool2d", 2, return_indices=True),
                    (distinct(2, 4, 5),))],
    "max_unpool2d": [("2", lambda L, x: L.nn.functional.max_unpool2d(
                         *L.nn.functional.max_pool2d(x, 2, return_indices=True), 2),
                      (distinct(2, 2, 4, 5),)),
                     ("stride-pad-size", lambda L, x: L.nn.functional.max_unpool2d(
                         *L.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True), 3, 2, 1,
                         output_size=(6, 5)), (distinct(1, 2, 6, 5),)),
                     ("bad-index", lambda L, x: L.nn.functional.max_unpool2d(
                         x, L.tensor([[[[0, 1], [2, 99]]]]), 2), (normal(1, 1, 2, 2),)),
                     ("bad-shape", lambda L, x: L.nn.functional.max_unpool2d(
                         x, L.tensor([[[[0, 1]]]]), 2), (normal(1, 1, 2, 2),))],
    "max_unpool1d": [("3-2-1", lambda L, x: L.nn.functional.max_unpool1d(
                         *L.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True), 3, 2, 1),
                      (distinct(2, 3, 9),)),
                     ("unbatched", lambda L, x: L.nn.functional.max_unpool1d(
                         *L.nn.functional.max_pool1d(x, 2, return_indices=True), 2),
                      (distinct(3, 6),))],
    "unfold": [("2", _F("unfold", 2), (normal(2, 3, 4, 5),)),
               ("pad-stride-dilation", _F("unfold", (3, 2), dilation=(1, 2), padding=(1, 0),
                                          stride=2), (normal(1, 2, 5, 6),)),
               ("unbatched", _F("unfold", 2, stride=2), (normal(2, 4, 4),)),
               ("bad-kernel", _F("unfold", 3), (normal(1, 1, 2, 2),)),
               ("bad-dims", _F("unfold", 1), (normal(2, 2),))],
    "fold": [("2", _F("fold", (4, 5), 2), (normal(2, 12, 12),)),
             ("pad-stride-dilation", _F("fold", (5, 6), (3, 2), dilation=(1, 2), padding=(1, 0),
                                        stride=2), (normal(1, 12, 6),)),
             ("unbatched", _F("fold", (3, 3), 2), (normal(4, 4),)),
             ("bad-rows", _F("fold", (3, 3), 2), (normal(1, 5, 4),)),
             ("bad-blocks", _F("fold", (3, 3), 2), (normal(1, 4, 3),))],
    "avg_pool2d": [("2", _F("avg_pool2d", 2), (normal(1, 2, 4, 4),)),
                   ("pad", _F("avg_pool2d", 3, stride=2, padding=1, count_include_pad=False),
                    (normal(1, 1, 5, 5),)),
                   ("pad-override", _F("avg_pool2d", (3, 2), padding=1, divisor_override=5,
                                       count_include_pad=False), (normal(1, 2, 5, 4),))],
    "adaptive_avg_pool2d": [("1", _F("adaptive_avg_pool2d", 1), (normal(2, 3, 4, 4),)),
                            ("uneven", _F("adaptive_avg_pool2d", (2, 3)), (normal(1, 1, 5, 7),))],
    "interpolate": [("nearest", _F("interpolate", scale_factor=2), (normal(1, 2, 3, 3),)),
                    ("bilinear", _F("interpolate", size=(5, 4), mode="bilinear",
                                    align_corners=False), (normal(1, 1, 3, 3),)),
                    ("bilinear-down", _F("interpolate", scale_factor=0.6, mode="bilinear"),
                     (normal(1, 2, 5, 4),)),
                    ("linear-corners", _F("interpolate", size=7, mode="linear",
                                          align_corners=True), (normal(2, 1, 4),)),
                    ("trilinear", _F("interpolate", scale_factor=(2, 1.5, 1), mode="trilinear"),
                     (normal(1, 1, 2, 2, 3),)),
                    ("bilinear-on-3d", _F("interpolate", size=4, mode="bilinear"),
                     (normal(1, 1, 3),))],
    "pixel_shuffle": [("2", _F("pixel_shuffle", 2), (normal(1, 8, 2, 3),))],
    "scaled_dot_product_attention": [
        ("plain", _F("scaled_dot_product_attention"), (normal(2, 3, 4), normal(2, 5, 4),
                                                       normal(2, 5, 2))),
        ("causal", _F("scaled_dot_product_attention", is_causal=True),
         (normal(1, 3, 4), normal(1, 3, 4), normal(1, 3, 4)))],
    "mse_loss": [("mean", _F("mse_loss"), (normal(2, 3), fixed(2, 3))),
                 ("sum", _F("mse_loss", reduction="sum"), (normal(2, 3), normal(2, 3))),
                 ("none", _F("mse_loss", reduction="none"), (normal(2, 3), fixed(2, 3))),
                 ("bad-reduction", _F("mse_loss", reduction="avg"), (normal(2, 3), fixed(2, 3)))],
    "l1_loss": [("mean", _F("l1_loss"), (nonzero(2, 3), constant(np.zeros((2, 3)))))],
    "smooth_l1_loss": [("beta", _F("smooth_l1_loss", beta=0.5), (normal(2, 3), fixed(2, 3)))],
    "binary_cross_entropy": [("mean", _F("binary_cross_entropy"), (uniform(0.1, 0.9, 2, 3),
                                                                  probs(2, 3))),
                             ("weight", lambda L, p, t, w: L.nn.functional.binary_cross_entropy(
                                 p, t, weight=w), (uniform(0.1, 0.9, 2, 3), probs(2, 3),
                                                   probs(3))),
                             ("bad-shape", _F("binary_cross_entropy"),
                              (uniform(0.1, 0.9, 2, 3), probs(3, 2)))],
    "binary_cross_entropy_with_logits": [
        ("mean", _F("binary_cross_entropy_with_logits"), (normal(2, 3), probs(2, 3))),
        ("pos_weight", lambda L, x, t, w: L.nn.functional.binary_cross_entropy_with_logits(
            x, t, pos_weight=w), (normal(2, 3), probs(2, 3), positive(3))),
        ("bad-shape", _F("binary_cross_entropy_with_logits"), (normal(2, 3), probs(3)))],
    "cross_entropy": [("classes", _F("cross_entropy"), (normal(4, 3), indices(3, 4))),
                      ("smoothing-sum", _F("cross_entropy", label_smoothing=0.1, reduction="sum"),
                       (normal(4, 3), indices(3, 4))),
                      ("ignore", _F("cross_entropy", ignore_index=1),
                       (normal(4, 3), constant([0, 1, 2, 1]))),
                      ("weight", lambda L, x, t, w: L.nn.functional.cross_entropy(x, t, w),
                       (normal(4, 3), indices(3, 4), positive(3))),
                      ("probabilities", _F("cross_entropy"), (normal(4, 3), probs(4, 3))),
                      ("spatial", _F("cross_entropy"), (normal(2, 3, 2), indices(3, 2, 2))),
                      ("bad-class", _F("cross_entropy"), (normal(2, 3), constant([0, 3]))),
                      ("float-target-shape", _F("cross_entropy"), (normal(2, 3), probs(2, 2)))],
    "nll_loss": [("mean", _F("nll_loss"), (normal(4, 3), indices(3, 4))),
                 ("none", _F("nll_loss", reduction="none"), (normal(4, 3), indices(3, 4)))],
    "celu": [("alpha", _F("celu", alpha=0.5), (normal(2, 3),)),
             ("default", _F("celu"), (normal(2, 3),))],
    "elu": [("default", _F("elu"), (normal(2, 3),)),
            ("alpha", _F("elu", alpha=0.5), (normal(2, 3),))],
    "selu": [("float", _F("selu"), (normal(2, 3),))],
    "glu": [("last", _F("glu"), (normal(2, 4),)), ("dim0", _F("glu", 0), (normal(4, 3),)),
            ("bad-odd", _F("glu"), (normal(2, 3),))],
    "hardsigmoid": [("float", _F("hardsigmoid"), (uniform(-4.0, 4.0, 2, 5),))],
    "hardswish": [("float", _F("hardswish"), (uniform(-4.0, 4.0, 2, 5),))],
    "hardtanh": [("default", _F("hardtanh"), (uniform(-2.0, 2.0, 2, 5),)),
                 ("bounds", _F("hardtanh", -0.5, 0.25), (normal(2, 3),))],
    "relu6": [("float", _F("relu6"), (uniform(-2.0, 8.0, 2, 5),))],
    "threshold": [("float", _F("threshold", 0.1, 20.0), (normal(2, 3),)),
                  ("inplace", lambda L, x: L.nn.functional.threshold(x * 1, 0.1, 2.0, True),
                   (normal(2, 3),))],
    "hardshrink": [("default", _F("hardshrink"), (normal(2, 3),)),
                   ("lambd", _F("hardshrink", 1.5), (normal(2, 3),))],
    "softshrink": [("default", _F("softshrink"), (normal(2, 3),)),
                   ("lambd", _F("softshrink", lambd=1.5), (normal(2, 3),))],
    "tanhshrink": [("float", _F("tanhshrink"), (normal(2, 3),))],
    "mish": [("float", _F("mish"), (normal(2, 3),))],
    "softsign": [("float", _F("softsign"), (normal(2, 3),))],
    "softmin": [("dim1", _F("softmin", dim=1), (normal(2, 3),)),
                ("dim0", _F("softmin", dim=0), (normal(2, 3),))],
    "prelu": [("channels", _F("prelu"), (normal(2, 3, 2), normal(3))),
              ("one", _F("prelu"), (normal(2, 3), normal(1))),
              ("bad", _F("prelu"), (normal(2, 3), normal(2)))],
    "normalize": [("default", _F("normalize"), (normal(2, 3),)),
                  ("p1-dim0", _F("normalize", p=1.0, dim=0), (normal(2, 3),))],
    "cosine_similarity": [("dim1", _F("cosine_similarity"), (normal(2, 3), normal(2, 3))),
                          ("broadcast-dim0", _F("cosine_similarity", dim=0),
                           (normal(2, 3), normal(2, 1))),
                          ("bad", _F("cosine_similarity"), (normal(2, 3), normal(2, 4)))],
    "pairwise_distance": [("default", _F("pairwise_distance"), (normal(2, 3), normal(2, 3))),
                          ("p1-keepdim", _F("pairwise_distance", p=1.0, keepdim=True),
                           (normal(2, 3), normal(3)))],
    "pdist": [("p2", _F("pdist"), (normal(4, 3),)),
              ("p1", _F("pdist", 1.0), (distinct(3, 2),)),
              ("inf", _F("pdist", float("inf")), (distinct(4, 2),)),
              ("one-row", _F("pdist"), (normal(1, 3),)),
              ("bad-3d", _F("pdist"), (normal(2, 3, 2),)),
              ("bad-p", _F("pdist", -1.0), (normal(3, 2),))],
    "bilinear": [("bias", _F("bilinear"), (normal(4, 2), normal(4, 3), normal(5, 2, 3), normal(5))),
                 ("batch-dims", _F("bilinear"), (normal(2, 3, 2), normal(2, 3, 3),
                                                 normal(4, 2, 3))),
                 ("bad-batch", _F("bilinear"), (normal(2, 2), normal(3, 3), normal(4, 2, 3))),
                 ("bad-size", _F("bilinear"), (normal(2, 2), normal(2, 3), normal(4, 3, 3))),
                 ("bad-bias", _F("bilinear"), (normal(2, 2), normal(2, 3), normal(4, 2, 3),
                                               normal(3)))],
    "adaptive_max_pool2d": [("uneven-indices", _F("adaptive_max_pool2d", (3, 2),
                                                  return_indices=True), (distinct(2, 2, 7, 5),)),
                            ("even", _F("adaptive_max_pool2d", 2), (distinct(1, 3, 4, 6),)),
                            ("none-unbatched", _F("adaptive_max_pool2d", (None, 3)),
                             (distinct(2, 4, 5),)),
                            ("bad-2d", _F("adaptive_max_pool2d", 2), (normal(3, 3),))],
    "adaptive_max_pool1d": [("indices", _F("adaptive_max_pool1d", 3, return_indices=True),
                             (distinct(2, 2, 7),)),
                            ("unbatched", _F("adaptive_max_pool1d", 2), (distinct(3, 4),))],
    "huber_loss": [("delta", _F("huber_loss", delta=0.5), (normal(2, 3), fixed(2, 3))),
                   ("none", _F("huber_loss", reduction="none"), (normal(2, 3), normal(2, 3)))],
    "kl_div": [("batchmean", lambda L, x, t: L.nn.functional.kl_div(
                   x.log_softmax(-1), t, reduction="batchmean"), (normal(2, 3), probs(2, 3))),
               ("log-target-sum", lambda L, x, t: L.nn.functional.kl_div(
                   x.log_softmax(-1), t.log_softmax(-1), reduction="sum", log_target=True),
                (normal(2, 3), normal(2, 3))),
               ("none", lambda L, x, t: L.nn.functional.kl_div(x.log_softmax(-1), t,
                                                               reduction="none"),
                (normal(2, 3), probs(2, 3)))],
    "avg_pool1d": [("2", _F("avg_pool1d", 2), (normal(1, 2, 6),)),
                   ("pad-excluded", _F("avg_pool1d", 3, stride=2, padding=1,
                                       count_include_pad=False), (normal(2, 5),))],
    "adaptive_avg_pool1d": [("uneven", _F("adaptive_avg_pool1d", 3), (normal(2, 2, 7),)),
                            ("1", _F("adaptive_avg_pool1d", 1), (normal(2, 4),))],
}
for _name, _variants in FUNCTIONAL.items():
    for _label, _program, _inputs in _variants:
        add(f"F.{_name}", _label, _program, *_inputs)
add("F.dropout", "train", _F("dropout", 0.5), normal(2, 3), random=True)
add("F.dropout2d", "train", _F("dropout2d", 0.5), normal(2, 3, 2, 2), random=True)
add("F.conv2d", "int-input", _F("conv2d"), ints(1, 2, 4, 4), normal(3, 2, 3, 3))


# ----------------------------------------------------------------------------- modules


def filled(L: Any, module: Any) -> Any:
    """``module`` with every parameter and buffer set from a generator seeded by its name, the
    same numbers in both libraries (running variances positive)."""
    with L.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if not t.dtype.is_floating_point if L is not dg else t.dtype.kind != "f":
                continue
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            values = (rng.uniform(0.5, 1.5, tuple(t.shape)) if name.endswith("running_var")
                      else rng.standard_normal(tuple(t.shape)) * 0.5)
            t.copy_(L.tensor(values, dtype=t.dtype))
    return module


def module_case(name: str, label: str, make: Callable[[Any], Any], *inputs: Input,
                forward: Callable[..., Any] | None = None, train: bool = False,
                lazy: bool = False, **kw: Any) -> None:
    """nn.NAME built by ``make(L)``, filled, in eval mode unless ``train``, run on the inputs
    (``forward(L, module, *inputs)``, module(*inputs) by default)."""
    def program(L: Any, *xs: Any) -> Any:
        module = make(L)
        if lazy:  # the first call decides the shapes
            with L.no_grad():
                module(*[x.detach() for x in xs])
        filled(L, module)
        module.train(train)
        out = forward(L, module, *xs) if forward else module(*xs)
        return module, out

    add(f"nn.{name}", label, program, *inputs, dtype=kw.pop("dtype", "float32"), module=True,
        **kw)


def _custom(L: Any) -> Any:
    class Net(L.nn.Module):  # registration by attribute, a parameter of its own, a buffer
        def __init__(self) -> None:
            super().__init__()
            self.scale = L.nn.Parameter(L.ones(3))
            self.body = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
            self.register_buffer("count", L.zeros(1))
            self.heads = L.nn.ModuleList([L.nn.Linear(2, 2), L.nn.Tanh()])
            self.table = L.nn.ModuleDict({"b": L.nn.Identity(), "a": L.nn.Linear(2, 1)})

        def forward(self, x: Any) -> Any:
            h = self.body(x * self.scale)
            for m in self.heads:
                h = m(h)
            return self.table["a"](self.table["b"](h))

    return Net()


MODULES: dict[str, list[tuple]] = {
    "Linear": [("3-4", lambda L: L.nn.Linear(3, 4), (normal(2, 3),)),
               ("no-bias", lambda L: L.nn.Linear(3, 2, bias=False), (normal(2, 2, 3),)),
               ("bad", lambda L: L.nn.Linear(3, 2), (normal(2, 4),))],
    "LazyLinear": [("4", lambda L: L.nn.LazyLinear(4), (normal(2, 3),), {"lazy": True})],
    "Bilinear": [("bias", lambda L: L.nn.Bilinear(2, 3, 4), (normal(5, 2), normal(5, 3))),
                 ("no-bias", lambda L: L.nn.Bilinear(3, 3, 2, bias=False), (normal(2, 4, 3),
                                                                            normal(2, 4, 3)))],
    "Conv1d": [("pad", lambda L: L.nn.Conv1d(2, 3, 3, padding=1), (normal(2, 2, 5),))],
    "Conv2d": [("stride", lambda L: L.nn.Conv2d(2, 3, 3, stride=2), (normal(1, 2, 5, 5),)),
               ("float64-input", lambda L: L.nn.Conv2d(2, 3, 3), (normal(1, 2, 5, 5),),
                {"dtype": "float64"})],
    "LazyConv2d": [("3", lambda L: L.nn.LazyConv2d(3, 2), (normal(1, 2, 4, 4),), {"lazy": True})],
    "Conv3d": [("plain", lambda L: L.nn.Conv3d(2, 2, 2), (normal(1, 2, 3, 3, 3),))],
    "ConvTranspose2d": [("stride", lambda L: L.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1),
                         (normal(1, 2, 3, 3),)),
                        ("groups-dilation-no-bias", lambda L: L.nn.ConvTranspose2d(
                            4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2,
                            bias=False), (normal(1, 4, 3, 3),))],
    "ConvTranspose1d": [("stride", lambda L: L.nn.ConvTranspose1d(2, 3, 4, stride=2, padding=1),
                         (normal(2, 2, 5),)),
                        ("groups", lambda L: L.nn.ConvTranspose1d(4, 2, 3, groups=2,
                                                                   output_padding=1, stride=2),
                         (normal(4, 3),))],
    "MaxPool2d": [("2", lambda L: L.nn.MaxPool2d(2), (distinct(1, 2, 4, 4),)),
                  ("indices", lambda L: L.nn.MaxPool2d(3, 2, 1, return_indices=True),
                   (distinct(1, 2, 5, 5),))],
    "MaxUnpool2d": [("2", lambda L: L.nn.MaxUnpool2d(2), (distinct(1, 2, 4, 4),),
                     {"forward": lambda L, m, x: m(*L.nn.MaxPool2d(2, return_indices=True)(x))}),
                    ("size", lambda L: L.nn.MaxUnpool2d((2, 3), stride=(2, 2)),
                     (distinct(1, 2, 5, 7),),
                     {"forward": lambda L, m, x: m(*L.nn.MaxPool2d((2, 3), (2, 2),
                                                                   return_indices=True)(x),
                                                   output_size=(5, 7))})],
    "AdaptiveMaxPool2d": [("indices", lambda L: L.nn.AdaptiveMaxPool2d((2, 3), True),
                           (distinct(1, 2, 5, 7),))],
    "AdaptiveMaxPool1d": [("3", lambda L: L.nn.AdaptiveMaxPool1d(3), (distinct(2, 2, 8),))],
    "ZeroPad1d": [("2", lambda L: L.nn.ZeroPad1d(2), (normal(1, 2, 3),))],
    "ZeroPad2d": [("sides", lambda L: L.nn.ZeroPad2d((1, 0, 2, 1)), (normal(1, 2, 3, 3),)),
                  ("int-unbatched", lambda L: L.nn.ZeroPad2d(1), (normal(2, 3, 3),))],
    "ConstantPad1d": [("value", lambda L: L.nn.ConstantPad1d((1, 2), 0.5), (normal(2, 3),))],
    "ConstantPad2d": [("value", lambda L: L.nn.ConstantPad2d(1, -2.0), (normal(1, 1, 2, 3),))],
    "ReflectionPad1d": [("2", lambda L: L.nn.ReflectionPad1d(2), (normal(1, 2, 4),))],
    "ReflectionPad2d": [("sides", lambda L: L.nn.ReflectionPad2d((1, 0, 2, 1)),
                         (normal(1, 2, 3, 4),)),
                        ("bad-too-wide", lambda L: L.nn.ReflectionPad2d(3), (normal(1, 3, 3),))],
    "ReplicationPad1d": [("sides", lambda L: L.nn.ReplicationPad1d((0, 2)), (normal(2, 3),))],
    "ReplicationPad2d": [("2", lambda L: L.nn.ReplicationPad2d(2), (normal(1, 1, 2, 3),))],
    "Unfold": [("pad", lambda L: L.nn.Unfold(2, padding=1), (normal(1, 2, 3, 3),))],
    "Fold": [("stride", lambda L: L.nn.Fold((4, 4), 2, stride=2), (normal(1, 8, 4),))],
    "MaxUnpool1d": [("3-2-1", lambda L: L.nn.MaxUnpool1d(3, 2, 1), (distinct(2, 3, 9),),
                     {"forward": lambda L, m, x: m(*L.nn.MaxPool1d(3, 2, 1,
                                                                   return_indices=True)(x))})],
    "AvgPool2d": [("2", lambda L: L.nn.AvgPool2d(2), (normal(1, 2, 4, 4),)),
                  ("pad-excluded", lambda L: L.nn.AvgPool2d(3, 2, 1, count_include_pad=False),
                   (normal(2, 5, 4),))],
    "AdaptiveAvgPool2d": [("1", lambda L: L.nn.AdaptiveAvgPool2d((1, 1)), (normal(2, 3, 4, 4),))],
    "BatchNorm1d": [("train", lambda L: L.nn.BatchNorm1d(3), (normal(4, 3),), {"train": True}),
                    ("eval", lambda L: L.nn.BatchNorm1d(3), (normal(4, 3),)),
                    ("no-affine-3d", lambda L: L.nn.BatchNorm1d(3, affine=False),
                     (normal(2, 3, 4),), {"train": True})],
    "BatchNorm2d": [("train", lambda L: L.nn.BatchNorm2d(2), (normal(2, 2, 3, 3),),
                     {"train": True}),
                    ("no-bias", lambda L: L.nn.BatchNorm2d(2, bias=False), (normal(2, 2, 3, 3),),
                     {"train": True})],
    "LazyBatchNorm1d": [("train", lambda L: L.nn.LazyBatchNorm1d(), (normal(4, 3),),
                         {"train": True, "lazy": True})],
    "LazyBatchNorm2d": [("eval", lambda L: L.nn.LazyBatchNorm2d(), (normal(2, 2, 3, 3),),
                         {"lazy": True})],
    "LayerNorm": [("last", lambda L: L.nn.LayerNorm(3), (normal(2, 3),)),
                  ("two", lambda L: L.nn.LayerNorm((2, 3)), (normal(2, 2, 3),))],
    "GroupNorm": [("2", lambda L: L.nn.GroupNorm(2, 4), (normal(2, 4, 3),))],
    "InstanceNorm1d": [("default", lambda L: L.nn.InstanceNorm1d(3), (normal(2, 3, 4),)),
                       ("affine-unbatched", lambda L: L.nn.InstanceNorm1d(3, affine=True),
                        (normal(3, 5),)),
                       ("tracked-train", lambda L: L.nn.InstanceNorm1d(
                           3, affine=True, track_running_stats=True), (normal(2, 3, 4),),
                        {"train": True}),
                       ("bad-features", lambda L: L.nn.InstanceNorm1d(4, affine=True),
                        (normal(2, 3, 4),))],
    "InstanceNorm2d": [("default-train", lambda L: L.nn.InstanceNorm2d(2), (normal(2, 2, 3, 3),),
                        {"train": True}),
                       ("tracked-eval", lambda L: L.nn.InstanceNorm2d(
                           2, momentum=None, track_running_stats=True), (normal(2, 2, 3, 3),)),
                       ("affine-no-bias", lambda L: L.nn.InstanceNorm2d(2, affine=True,
                                                                        bias=False),
                        (normal(2, 2, 3, 3),)),
                       ("bad-dims", lambda L: L.nn.InstanceNorm2d(2), (normal(2, 2),))],
    "Embedding": [("rows", lambda L: L.nn.Embedding(5, 3), (indices(5, 2, 3),)),
                  ("padding_idx", lambda L: L.nn.Embedding(5, 3, padding_idx=-2),
                   (constant([[3, 1, 3], [0, 4, 2]]),))],
    "EmbeddingBag": [("mean", lambda L: L.nn.EmbeddingBag(5, 3), (indices(5, 2, 3),))],
    "Dropout": [("eval", lambda L: L.nn.Dropout(0.3), (normal(2, 3),)),
                ("train", lambda L: L.nn.Dropout(0.3), (normal(2, 3),), {"train": True,
                                                                         "random": True})],
    "Dropout2d": [("eval", lambda L: L.nn.Dropout2d(0.3), (normal(1, 2, 3, 3),))],
    "Flatten": [("default", lambda L: L.nn.Flatten(), (normal(2, 3, 2),))],
    "Identity": [("same", lambda L: L.nn.Identity(), (normal(2, 3),))],
    "ReLU": [("plain", lambda L: L.nn.ReLU(), (nonzero(2, 3),))],
    "LeakyReLU": [("0.2", lambda L: L.nn.LeakyReLU(0.2), (nonzero(2, 3),))],
    "GELU": [("tanh", lambda L: L.nn.GELU(approximate="tanh"), (normal(2, 3),))],
    "SiLU": [("plain", lambda L: L.nn.SiLU(), (normal(2, 3),))],
    "Sigmoid": [("plain", lambda L: L.nn.Sigmoid(), (normal(2, 3),))],
    "Tanh": [("plain", lambda L: L.nn.Tanh(), (normal(2, 3),))],
    "Softmax": [("dim1", lambda L: L.nn.Softmax(dim=1), (normal(2, 3),))],
    "LogSoftmax": [("dim1", lambda L: L.nn.LogSoftmax(dim=1), (normal(2, 3),))],
    "PixelShuffle": [("2", lambda L: L.nn.PixelShuffle(2), (normal(1, 4, 2, 2),))],
    "Upsample": [("nearest", lambda L: L.nn.Upsample(scale_factor=2), (normal(1, 1, 2, 3),))],
    "UpsamplingNearest2d": [("2", lambda L: L.nn.UpsamplingNearest2d(scale_factor=2),
                             (normal(1, 1, 2, 2),))],
    "MSELoss": [("mean", lambda L: L.nn.MSELoss(), (normal(2, 3), fixed(2, 3)))],
    "L1Loss": [("sum", lambda L: L.nn.L1Loss(reduction="sum"),
                (nonzero(2, 3), constant(np.zeros((2, 3)))))],
    "BCELoss": [("mean", lambda L: L.nn.BCELoss(), (uniform(0.1, 0.9, 2, 3), probs(2, 3)))],
    "BCEWithLogitsLoss": [("mean", lambda L: L.nn.BCEWithLogitsLoss(), (normal(2, 3),
                                                                        probs(2, 3)))],
    "CrossEntropyLoss": [("smoothing", lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1),
                          (normal(4, 3), indices(3, 4)))],
    "NLLLoss": [("mean", lambda L: L.nn.NLLLoss(), (normal(4, 3), indices(3, 4)))],
    "RNN": [("batch_first", lambda L: L.nn.RNN(3, 4, num_layers=2, batch_first=True),
             (normal(2, 5, 3),))],
    "LSTM": [("bidirectional", lambda L: L.nn.LSTM(3, 4, bidirectional=True),
              (normal(5, 2, 3),))],
    "GRU": [("2-layers", lambda L: L.nn.GRU(3, 4, num_layers=2), (normal(5, 2, 3),))],
    "RNNCell": [("tanh", lambda L: L.nn.RNNCell(3, 4), (normal(2, 3),))],
    "LSTMCell": [("plain", lambda L: L.nn.LSTMCell(3, 4), (normal(2, 3),))],
    "GRUCell": [("plain", lambda L: L.nn.GRUCell(3, 4), (normal(2, 3),))],
    "MaxPool1d": [("2", lambda L: L.nn.MaxPool1d(2), (distinct(1, 2, 6),)),
                  ("stride-pad", lambda L: L.nn.MaxPool1d(3, 2, 1), (distinct(2, 7),))],
    "AvgPool1d": [("2", lambda L: L.nn.AvgPool1d(2), (normal(1, 2, 6),))],
    "AdaptiveAvgPool1d": [("3", lambda L: L.nn.AdaptiveAvgPool1d(3), (normal(2, 2, 7),))],
    "CELU": [("alpha", lambda L: L.nn.CELU(0.5), (normal(2, 3),))],
    "ELU": [("alpha", lambda L: L.nn.ELU(alpha=0.5), (normal(2, 3),))],
    "SELU": [("plain", lambda L: L.nn.SELU(), (normal(2, 3),))],
    "GLU": [("dim0", lambda L: L.nn.GLU(0), (normal(4, 3),))],
    "Hardsigmoid": [("plain", lambda L: L.nn.Hardsigmoid(), (uniform(-4.0, 4.0, 2, 5),))],
    "Hardswish": [("plain", lambda L: L.nn.Hardswish(), (uniform(-4.0, 4.0, 2, 5),))],
    "Hardtanh": [("bounds", lambda L: L.nn.Hardtanh(-0.5, 0.5), (normal(2, 3),))],
    "ReLU6": [("plain", lambda L: L.nn.ReLU6(), (uniform(-2.0, 8.0, 2, 5),))],
    "Threshold": [("plain", lambda L: L.nn.Threshold(0.1, 20.0), (normal(2, 3),))],
    "Hardshrink": [("lambd", lambda L: L.nn.Hardshrink(1.5), (normal(2, 3),))],
    "Softshrink": [("plain", lambda L: L.nn.Softshrink(), (normal(2, 3),))],
    "Tanhshrink": [("plain", lambda L: L.nn.Tanhshrink(), (normal(2, 3),))],
    "Mish": [("plain", lambda L: L.nn.Mish(), (normal(2, 3),))],
    "Softsign": [("plain", lambda L: L.nn.Softsign(), (normal(2, 3),))],
    "Softmin": [("dim1", lambda L: L.nn.Softmin(dim=1), (normal(2, 3),))],
    "Softplus": [("beta-threshold", lambda L: L.nn.Softplus(beta=2.0, threshold=1.0),
                  (normal(2, 3),))],
    "LogSigmoid": [("plain", lambda L: L.nn.LogSigmoid(), (normal(2, 3),))],
    "PReLU": [("one", lambda L: L.nn.PReLU(), (normal(2, 3),)),
              ("channels", lambda L: L.nn.PReLU(3, init=0.1), (normal(2, 3, 2),))],
    "CosineSimilarity": [("dim1", lambda L: L.nn.CosineSimilarity(), (normal(2, 3), normal(2, 3)))],
    "PairwiseDistance": [("keepdim", lambda L: L.nn.PairwiseDistance(keepdim=True),
                          (normal(2, 3), normal(2, 3)))],
    "HuberLoss": [("delta", lambda L: L.nn.HuberLoss(delta=0.5), (normal(2, 3), fixed(2, 3)))],
    "SmoothL1Loss": [("beta-sum", lambda L: L.nn.SmoothL1Loss(reduction="sum", beta=0.5),
                      (normal(2, 3), fixed(2, 3)))],
    "KLDivLoss": [("batchmean", lambda L: L.nn.KLDivLoss(reduction="batchmean"),
                   (normal(2, 3), probs(2, 3)),
                   {"forward": lambda L, m, x, t: m(x.log_softmax(-1), t)})],
    "Unflatten": [("2x3", lambda L: L.nn.Unflatten(1, (2, 3)), (normal(2, 6),)),
                  ("bad", lambda L: L.nn.Unflatten(1, (4, 2)), (normal(2, 6),))],
    "ParameterList": [("appended", lambda L: _parameter_list(L), (normal(2, 3),),
                       {"forward": lambda L, m, x: x * m[0] + m[-1]})],
    "MultiheadAttention": [("self", lambda L: L.nn.MultiheadAttention(4, 2, batch_first=True),
                            (normal(2, 3, 4),), {"forward": lambda L, m, x: m(x, x, x)})],
    "TransformerEncoderLayer": [("post-norm", lambda L: L.nn.TransformerEncoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0, batch_first=True), (normal(2, 3, 4),))],
    "TransformerEncoder": [("2", lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0), 2, enable_nested_tensor=False),
        (normal(3, 2, 4),))],
    "TransformerDecoderLayer": [("norm-first", lambda L: L.nn.TransformerDecoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0, norm_first=True),
        (normal(3, 2, 4), normal(2, 2, 4)))],
    "TransformerDecoder": [("1", lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(
        4, 2, dim_feedforward=8, dropout=0.0), 1), (normal(3, 2, 4), normal(2, 2, 4)))],
    "Transformer": [("small", lambda L: L.nn.Transformer(4, 2, 1, 1, dim_feedforward=8,
                                                          dropout=0.0, batch_first=True),
                     (normal(2, 3, 4), normal(2, 2, 4)))],
    "Sequential": [("mlp", lambda L: L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(),
                                                      L.nn.Linear(4, 2)), (normal(2, 3),)),
                   ("ordered-dict", lambda L: L.nn.Sequential(__import__("collections")
                    .OrderedDict([("b", L.nn.Linear(3, 2)), ("a", L.nn.ReLU())])),
                    (normal(2, 3),))],
    "ModuleList": [("appended", lambda L: _listed(L), (normal(2, 3),),
                    {"forward": lambda L, m, x: m[1](m[0](x))})],
    "ModuleDict": [("keys", lambda L: L.nn.ModuleDict({"z": L.nn.Linear(3, 2), "a": L.nn.Tanh()}),
                    (normal(2, 3),), {"forward": lambda L, m, x: m["a"](m["z"](x))})],
    "Module": [("custom", _custom, (normal(2, 3),))],
}


def _parameter_list(L: Any) -> Any:
    values = L.nn.ParameterList([L.nn.Parameter(L.zeros(3))])
    values.append(L.nn.Parameter(L.zeros(2, 3)))
    return values


def _listed(L: Any) -> Any:
    layers = L.nn.ModuleList([L.nn.Linear(3, 3)])
    layers.append(L.nn.Linear(3, 2))
    return layers


for _name, _variants in MODULES.items():
    for _label, _make, _inputs, *_options in _variants:
        module_case(_name, _label, _make, *_inputs, **(_options[0] if _options else {}))


def _parameter(L: Any, x: Any) -> Any:
    p = L.nn.Parameter(x.detach())
    q = L.nn.Parameter(x.detach(), requires_grad=False)
    return (p.requires_grad, q.requires_grad, isinstance(p, L.Tensor), p.is_leaf,
            (p * 2).requires_grad, type(p * 2).__name__, p)


add("nn.Parameter", "flags", _parameter, normal(2, 3))
add("nn.Embedding", "padding-row-starts-at-zero", lambda L: (lambda m: (
    m.weight[2].tolist(), bool(m.weight[1].abs().sum() > 0), repr(m)))(
    L.nn.Embedding(4, 3, padding_idx=2)))
add("nn.Embedding", "bad-padding_idx", lambda L: L.nn.Embedding(4, 3, padding_idx=4))
add("F.embedding", "padding_idx-repeated", lambda L, i, w: L.nn.functional.embedding(
    i, w, padding_idx=0), constant([[0, 2], [0, 0]]), normal(3, 2))


# ----------------------------------------------------------------------------- nn.init

INIT = {
    "constant_": lambda L, t: L.nn.init.constant_(t, 0.3),
    "ones_": lambda L, t: L.nn.init.ones_(t),
    "zeros_": lambda L, t: L.nn.init.zeros_(t),
}
for _name, _program in INIT.items():
    add(f"nn.init.{_name}", "in-place", (lambda p: lambda L, x: (lambda t: (p(L, t) is t, t))(
        x.detach().clone()))(_program), normal(3, 4))
add("nn.init.calculate_gain", "each", lambda L: [L.nn.init.calculate_gain(n) for n in (
    "linear", "conv2d", "sigmoid", "tanh", "relu", "selu")] + [
    L.nn.init.calculate_gain("leaky_relu", 0.2), L.nn.init.calculate_gain("leaky_relu")])
add("nn.init.calculate_gain", "bad", lambda L: L.nn.init.calculate_gain("swish"))

# random ones: the same tensor back, and values of the right spread (a 200 x 300 matrix, so
# the sample statistics are within a few percent of the formula's)
_FAN_IN, _FAN_OUT = 300, 200
RANDOM_INIT = {
    "uniform_": (lambda L, t: L.nn.init.uniform_(t, -0.5, 0.5), "bound", 0.5),
    "normal_": (lambda L, t: L.nn.init.normal_(t, 0.0, 0.2), "std", 0.2),
    "xavier_uniform_": (lambda L, t: L.nn.init.xavier_uniform_(t), "bound",
                        math.sqrt(6 / (_FAN_IN + _FAN_OUT))),
    "xavier_normal_": (lambda L, t: L.nn.init.xavier_normal_(t, gain=2.0), "std",
                       2 * math.sqrt(2 / (_FAN_IN + _FAN_OUT))),
    "kaiming_uniform_": (lambda L, t: L.nn.init.kaiming_uniform_(t, a=math.sqrt(5)), "bound",
                         math.sqrt(6 / ((1 + 5) * _FAN_IN))),
    "kaiming_normal_": (lambda L, t: L.nn.init.kaiming_normal_(t, mode="fan_out",
                                                                nonlinearity="relu"), "std",
                        math.sqrt(2 / _FAN_OUT)),
    "orthogonal_": (lambda L, t: L.nn.init.orthogonal_(t[:50, :60]), "orthogonal", 1.0),
    "trunc_normal_": (lambda L, t: L.nn.init.trunc_normal_(t, std=0.2, a=-0.3, b=0.3),
                      "truncated", 0.3),
}


def _spread(L: Any, init: Callable[..., Any], measure: str, expected: float) -> Any:
    t = L.zeros(_FAN_OUT, _FAN_IN)
    with L.no_grad():
        out = init(L, t)
    a = np.asarray(out.tolist())
    if measure == "bound":
        fits = a.max() <= expected and a.min() >= -expected and a.max() > 0.95 * expected
    elif measure == "std":
        fits = abs(a.std() / expected - 1) < 0.03 and abs(a.mean()) < 0.03 * expected
    elif measure == "truncated":  # within +-expected (1.5 standard deviations of 0.2), with the
        # truncated normal's standard deviation
        beta = expected / 0.2
        density = math.exp(-beta * beta / 2) / math.sqrt(2 * math.pi)
        std = 0.2 * math.sqrt(1 - 2 * beta * density / math.erf(beta / math.sqrt(2)))
        fits = a.max() <= expected and a.min() >= -expected and abs(a.std() / std - 1) < 0.03
    else:
        fits = np.allclose(a @ a.T, np.eye(len(a)), atol=1e-5)
    # in place: the tensor itself back (orthogonal_ of a slice: written through into t)
    same = out is t if measure != "orthogonal" else np.array_equal(
        np.asarray(t[:50, :60].tolist()), a)
    return same, bool(fits), dtype_name(out.dtype)


for _name, (_init, _measure, _expected) in RANDOM_INIT.items():
    add(f"nn.init.{_name}", "spread", (lambda i, m, e: lambda L: _spread(L, i, m, e))(
        _init, _measure, _expected))


# ----------------------------------------------------------------------------- optimizers


# param_group keys of torch's that are not settings of the update: how torch runs it
_NOT_COMPARED = {"params", "foreach", "fused", "capturable", "differentiable"}


def trajectory(L: Any, make: Callable[..., Any], schedule: Callable[..., Any] | None = None,
               steps: int = 6, closure: bool = False) -> list:
    """Parameters and learning rates after each of ``steps`` steps of a small least-squares
    fit, float64, every step's gradients from the library's own backward. An optimizer that
    re-evaluates the loss (LBFGS; any other with ``closure=True``) is given it as the closure
    of ``step``, and what ``step`` returns is compared too; a scheduler that watches a metric
    (ReduceLROnPlateau) is given the step's loss."""
    rng = np.random.default_rng(0)
    w = L.nn.Parameter(L.tensor(rng.standard_normal((2, 3))))
    b = L.nn.Parameter(L.tensor(rng.standard_normal(2)))
    x, y = L.tensor(rng.standard_normal((4, 3))), L.tensor(rng.standard_normal((4, 2)))
    optimizer = make(L, [w, b])
    scheduler = schedule(L, optimizer) if schedule else None
    seen = []

    def loss() -> Any:
        optimizer.zero_grad()
        value = ((x @ w.T + b - y) ** 2).mean()
        value.backward()
        return value

    for _ in range(steps):
        returned = None
        if closure or type(optimizer).__name__ == "LBFGS":
            value = returned = optimizer.step(loss)
        else:
            value = loss()
            optimizer.step()
        if type(scheduler).__name__ == "ReduceLROnPlateau":
            scheduler.step(value.item())
        elif scheduler is not None:
            scheduler.step()
        seen.append((w.detach().clone(), b.detach().clone(),
                     [{k: v for k, v in g.items() if k in ("lr", "momentum", "betas")}
                      for g in optimizer.param_groups],
                     scheduler.get_last_lr() if scheduler else None,
                     None if returned is None else returned.detach()))
    # what a checkpoint of the optimizer holds, and its zero_grad both ways
    saved = optimizer.state_dict()
    seen.append(([sorted(state) for state in saved["state"].values()],
                 [sorted(k for k in group if k not in _NOT_COMPARED) for group in
                  saved["param_groups"]],
                 [group["params"] for group in saved["param_groups"]]))
    optimizer.zero_grad(set_to_none=False)
    seen.append([p.grad for p in (w, b)])
    optimizer.zero_grad()
    seen.append([p.grad for p in (w, b)])
    return seen


OPTIMIZERS = {
    "SGD": [("plain", lambda L, p: L.optim.SGD(p, lr=0.1)),
            ("momentum-nesterov-wd", lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.9,
                                                               nesterov=True, weight_decay=0.01)),
            ("dampening", lambda L, p: L.optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.3)),
            ("groups", lambda L, p: L.optim.SGD([{"params": [p[0]]},
                                                 {"params": [p[1]], "lr": 0.01}], lr=0.1)),
            ("bad-lr", lambda L, p: L.optim.SGD(p, lr=-1.0)),
            ("maximize", lambda L, p: L.optim.SGD(p, lr=0.1, maximize=True))],
    "Adam": [("plain", lambda L, p: L.optim.Adam(p, lr=0.05)),
             ("maximize", lambda L, p: L.optim.Adam(p, lr=0.05, maximize=True)),
             ("decoupled", lambda L, p: L.optim.Adam(p, lr=0.05, weight_decay=0.1,
                                                     decoupled_weight_decay=True)),
             ("amsgrad-wd", lambda L, p: L.optim.Adam(p, lr=0.05, amsgrad=True,
                                                      weight_decay=0.1, betas=(0.8, 0.9)))],
    "AdamW": [("wd", lambda L, p: L.optim.AdamW(p, lr=0.05, weight_decay=0.1)),
              ("maximize-amsgrad", lambda L, p: L.optim.AdamW(p, lr=0.05, maximize=True,
                                                              amsgrad=True))],
    "RMSprop": [("plain", lambda L, p: L.optim.RMSprop(p, lr=0.01)),
                ("maximize", lambda L, p: L.optim.RMSprop(p, lr=0.01, maximize=True)),
                ("centered-momentum-wd", lambda L, p: L.optim.RMSprop(
                    p, lr=0.01, momentum=0.5, centered=True, weight_decay=0.1))],
    "Adadelta": [("plain", lambda L, p: L.optim.Adadelta(p)),
                 ("maximize", lambda L, p: L.optim.Adadelta(p, maximize=True)),
                 ("lr-wd", lambda L, p: L.optim.Adadelta(p, lr=0.5, rho=0.8, weight_decay=0.1))],
    "Adagrad": [("plain", lambda L, p: L.optim.Adagrad(p, lr=0.1)),
                ("decay-wd-initial", lambda L, p: L.optim.Adagrad(
                    p, lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
                ("maximize", lambda L, p: L.optim.Adagrad(p, lr=0.1, maximize=True))],
    "LBFGS": [("plain", lambda L, p: L.optim.LBFGS(p, lr=0.5, max_iter=3)),
              ("strong-wolfe", lambda L, p: L.optim.LBFGS(p, max_iter=4, history_size=3,
                                                          line_search_fn="strong_wolfe")),
              # NOTE: a large lr makes the line search zoom back; max_eval cuts it short
              ("strong-wolfe-zoom", lambda L, p: L.optim.LBFGS(
                  p, lr=3.0, max_iter=10, max_eval=12, line_search_fn="strong_wolfe")),
              ("strong-wolfe-short", lambda L, p: L.optim.LBFGS(
                  p, lr=0.1, max_iter=6, history_size=2, line_search_fn="strong_wolfe")),
              ("bad-line-search", lambda L, p: L.optim.LBFGS(p, line_search_fn="armijo"))],
    "NAdam": [("plain", lambda L, p: L.optim.NAdam(p, lr=0.05)),
              ("momentum-decay-wd", lambda L, p: L.optim.NAdam(
                  p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.01)),
              ("decoupled-maximize", lambda L, p: L.optim.NAdam(
                  p, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
              ("foreach", lambda L, p: L.optim.NAdam(p, lr=0.05, foreach=True)),
              ("bad-beta", lambda L, p: L.optim.NAdam(p, betas=(1.0, 0.999))),
              ("capturable", lambda L, p: L.optim.NAdam(p, capturable=True))],
    "Adamax": [("plain", lambda L, p: L.optim.Adamax(p, lr=0.05)),
               ("wd-maximize", lambda L, p: L.optim.Adamax(p, lr=0.05, weight_decay=0.1,
                                                           maximize=True)),
               ("positional-foreach", lambda L, p: L.optim.Adamax(p, 0.05, (0.8, 0.9), 1e-6,
                                                                  0.0, False)),
               ("bad-beta", lambda L, p: L.optim.Adamax(p, betas=(0.9, -0.1))),
               ("differentiable", lambda L, p: L.optim.Adamax(p, differentiable=True))],
    "Rprop": [("plain", lambda L, p: L.optim.Rprop(p, lr=0.05)),
              ("etas-step-sizes-maximize", lambda L, p: L.optim.Rprop(
                  p, lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.1), maximize=True)),
              ("bad-etas", lambda L, p: L.optim.Rprop(p, etas=(1.5, 1.2))),
              ("bad-lr", lambda L, p: L.optim.Rprop(p, lr=-0.1))],
    "ASGD": [("plain", lambda L, p: L.optim.ASGD(p, lr=0.05)),
             ("t0-lambd-alpha-wd", lambda L, p: L.optim.ASGD(
                 p, lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1)),
             ("positional-maximize", lambda L, p: L.optim.ASGD(p, 0.05, 1e-4, 0.75, 1e6, 0.0,
                                                               None, True)),
             ("bad-weight-decay", lambda L, p: L.optim.ASGD(p, weight_decay=-1.0))],
}
for _name, _variants in OPTIMIZERS.items():
    for _label, _make in _variants:
        add(f"optim.{_name}", _label, (lambda m: lambda L: trajectory(L, m))(_make))
# RAdam's adaptive step begins once rho_t > 5: the sixth step with beta2 = 0.9 (with 0.999,
# the default, the seventh), so its cases run twelve steps
OPTIMIZERS["RAdam"] = [
    ("plain", lambda L, p: L.optim.RAdam(p, lr=0.05)),
    ("beta2-wd", lambda L, p: L.optim.RAdam(p, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1)),
    ("decoupled-maximize", lambda L, p: L.optim.RAdam(p, lr=0.05, betas=(0.9, 0.9),
                                                      weight_decay=0.1,
                                                      decoupled_weight_decay=True,
                                                      maximize=True)),
    ("bad-eps", lambda L, p: L.optim.RAdam(p, eps=-1e-8))]
for _label, _make in OPTIMIZERS["RAdam"]:
    add("optim.RAdam", _label, (lambda m: lambda L: trajectory(L, m, steps=12))(_make))
# step(closure) of every optimizer: the closure is called (with grad enabled) and its loss
# returned
for _name, _variants in OPTIMIZERS.items():
    if _name != "LBFGS":
        add(f"optim.{_name}", "closure",
            (lambda m: lambda L: trajectory(L, m, closure=True))(_variants[0][1]))


def _asgd_average(L: Any) -> list:
    """ASGD's point: the average of the parameters from step t0 on (state "ax")."""
    rng = np.random.default_rng(1)
    w = L.nn.Parameter(L.tensor(rng.standard_normal(3)))
    optimizer = L.optim.ASGD([w], lr=0.1, t0=3)
    averages = []
    for _ in range(8):
        optimizer.zero_grad()
        ((w - 1.0) ** 4).sum().backward()
        optimizer.step()
        averages.append(optimizer.state[w]["ax"].clone())
    return averages


add("optim.ASGD", "average", _asgd_average)


def _own_optimizer(L: Any, params: Any) -> Any:
    class Momentum(L.optim.Optimizer):  # the course's own optimizer: param_groups and state
        def __init__(self, params: Any, lr: float, beta: float = 0.9) -> None:
            super().__init__(params, {"lr": lr, "beta": beta})

        def step(self) -> None:
            with L.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        avg = state.get("avg", L.zeros_like(p)) * group["beta"] + p.grad
                        state["avg"] = avg
                        p.sub_(group["lr"] * avg)

    return Momentum(params, lr=0.1)


add("optim.Optimizer", "subclass", lambda L: trajectory(L, _own_optimizer))

SCHEDULERS = {
    "StepLR": [("2-half", lambda L, o: L.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5))],
    "ExponentialLR": [("0.8", lambda L, o: L.optim.lr_scheduler.ExponentialLR(o, gamma=0.8))],
    "LambdaLR": [("inverse", lambda L, o: L.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)))],
    "OneCycleLR": [("sgd-momentum", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.2, total_steps=6)),
        ("linear-three-phase", lambda L, o: L.optim.lr_scheduler.OneCycleLR(
            o, max_lr=0.2, total_steps=7, anneal_strategy="linear", three_phase=True))],
    "CosineAnnealingLR": [("T_max-4", lambda L, o: L.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=4, eta_min=0.01))],
    "LinearLR": [("warm-up", lambda L, o: L.optim.lr_scheduler.LinearLR(
        o, start_factor=0.25, total_iters=4)),
        ("down", lambda L, o: L.optim.lr_scheduler.LinearLR(
            o, start_factor=1.0, end_factor=0.5, total_iters=3))],
    "MultiStepLR": [("1-3", lambda L, o: L.optim.lr_scheduler.MultiStepLR(
        o, milestones=[1, 3], gamma=0.5))],
    "ReduceLROnPlateau": [("patience-0", lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(
        o, factor=0.5, patience=0, threshold=0.2)),
        ("max-cooldown-abs", lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(
            o, mode="max", factor=0.5, patience=1, cooldown=1, threshold_mode="abs",
            min_lr=0.03)),
        ("bad-mode", lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, mode="low"))],
}
_SGD_MOMENTUM = OPTIMIZERS["SGD"][1][1]
for _name, _variants in SCHEDULERS.items():
    for _label, _make in _variants:
        add(f"optim.lr_scheduler.{_name}", _label,
            (lambda m: lambda L: trajectory(L, _SGD_MOMENTUM, m))(_make))
add("optim.lr_scheduler.OneCycleLR", "adam-betas", lambda L: trajectory(
    L, OPTIMIZERS["Adam"][0][1], lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, total_steps=6)))
add("optim.lr_scheduler.StepLR", "past-the-end", lambda L: trajectory(
    L, OPTIMIZERS["SGD"][0][1], lambda L, o: L.optim.lr_scheduler.OneCycleLR(
        o, max_lr=0.1, total_steps=3)))


def _lr(L: Any) -> Any:
    return L.optim.lr_scheduler


# schedules with restarts, cycles and milestones: run long enough to pass several of them
LONG_SCHEDULERS = {
    "ConstantLR": [("half-4", lambda L, o: _lr(L).ConstantLR(o, factor=0.5, total_iters=4)),
                   ("default", lambda L, o: _lr(L).ConstantLR(o)),
                   ("bad-factor", lambda L, o: _lr(L).ConstantLR(o, factor=1.5))],
    "PolynomialLR": [("square", lambda L, o: _lr(L).PolynomialLR(o, total_iters=6, power=2.0)),
                     ("default", lambda L, o: _lr(L).PolynomialLR(o))],
    "MultiplicativeLR": [
        ("0.9", lambda L, o: _lr(L).MultiplicativeLR(o, lambda epoch: 0.9)),
        ("by-epoch", lambda L, o: _lr(L).MultiplicativeLR(o, [lambda e: 1 / (e + 1)])),
        ("bad-count", lambda L, o: _lr(L).MultiplicativeLR(o, [lambda e: 0.9] * 2))],
    "CosineAnnealingWarmRestarts": [
        ("T_0-3-T_mult-2", lambda L, o: _lr(L).CosineAnnealingWarmRestarts(
            o, T_0=3, T_mult=2, eta_min=0.01)),
        ("T_0-4", lambda L, o: _lr(L).CosineAnnealingWarmRestarts(o, T_0=4)),
        ("bad-T_0", lambda L, o: _lr(L).CosineAnnealingWarmRestarts(o, T_0=0))],
    "CyclicLR": [
        ("triangular", lambda L, o: _lr(L).CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                    step_size_up=3, step_size_down=5)),
        ("triangular2", lambda L, o: _lr(L).CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                     step_size_up=2, mode="triangular2")),
        ("exp-range-no-momentum", lambda L, o: _lr(L).CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9,
            cycle_momentum=False)),
        ("scale-fn-iterations", lambda L, o: _lr(L).CyclicLR(
            o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.5**x,
            scale_mode="iterations")),
        ("bad-mode", lambda L, o: _lr(L).CyclicLR(o, base_lr=0.01, max_lr=0.1, mode="sine"))],
    "SequentialLR": [
        ("warm-up-cosine", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).LinearLR(o, start_factor=0.1, total_iters=3),
                _lr(L).CosineAnnealingLR(o, T_max=10)], milestones=[3])),
        ("three", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).ConstantLR(o, factor=0.2, total_iters=2),
                _lr(L).ExponentialLR(o, gamma=0.9), _lr(L).StepLR(o, step_size=3, gamma=0.5)],
            milestones=[4, 9])),
        ("multistep-from-0", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).PolynomialLR(o, total_iters=3),
                _lr(L).MultiStepLR(o, milestones=[0, 2, 5])], milestones=[5])),
        ("multiplicative-second", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).ExponentialLR(o, gamma=0.5),
                _lr(L).MultiplicativeLR(o, lambda e: 0.8 + 0.01 * e)], milestones=[3])),
        ("bad-milestones", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).ConstantLR(o), _lr(L).ExponentialLR(o, gamma=0.9)], milestones=[])),
        ("bad-other-optimizer", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).ConstantLR(L.optim.SGD(o.param_groups[0]["params"], lr=0.1))],
            milestones=[])),
        ("bad-plateau", lambda L, o: _lr(L).SequentialLR(
            o, [_lr(L).ConstantLR(o), _lr(L).ReduceLROnPlateau(o)], milestones=[2]))],
    "ChainedScheduler": [
        ("constant-exponential", lambda L, o: _lr(L).ChainedScheduler(
            [_lr(L).ConstantLR(o, factor=0.1, total_iters=2), _lr(L).ExponentialLR(o, 0.9)])),
        ("linear-restarts", lambda L, o: _lr(L).ChainedScheduler(
            [_lr(L).LinearLR(o, start_factor=0.5, total_iters=3),
             _lr(L).CosineAnnealingWarmRestarts(o, T_0=4)], optimizer=o)),
        ("bad-empty", lambda L, o: _lr(L).ChainedScheduler([], optimizer=o))],
}
for _name, _variants in LONG_SCHEDULERS.items():
    for _label, _make in _variants:
        add(f"optim.lr_scheduler.{_name}", _label,
            (lambda m: lambda L: trajectory(L, _SGD_MOMENTUM, m, steps=14))(_make))
add("optim.lr_scheduler.CyclicLR", "adam-betas", lambda L: trajectory(
    L, OPTIMIZERS["Adam"][0][1], lambda L, o: _lr(L).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2), steps=14))
add("optim.lr_scheduler.CyclicLR", "groups", lambda L: trajectory(
    L, OPTIMIZERS["SGD"][3][1], lambda L, o: _lr(L).CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=2, cycle_momentum=False), steps=14))


def _warm_restarts_within_epochs(L: Any, T_0: int, T_mult: int) -> list:
    """CosineAnnealingWarmRestarts stepped per batch with fractional epochs, as its docs
    show: ``scheduler.step(epoch + i / iters)``; then a jump to epoch 40."""
    w = L.nn.Parameter(L.tensor(np.ones(3)))
    optimizer = L.optim.SGD([w], lr=0.1)
    scheduler = L.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0, T_mult)
    seen = []
    for epoch in range(6):
        for i in range(3):
            optimizer.step()
            scheduler.step(epoch + i / 3)
            seen.append((scheduler.get_last_lr(), scheduler.last_epoch, scheduler.T_i))
    scheduler.step(40)
    return [*seen, (scheduler.get_last_lr(), scheduler.last_epoch, scheduler.T_i)]


add("optim.lr_scheduler.CosineAnnealingWarmRestarts", "fractional-epochs",
    lambda L: _warm_restarts_within_epochs(L, 2, 2))
add("optim.lr_scheduler.CosineAnnealingWarmRestarts", "fractional-epochs-T_mult-1",
    lambda L: _warm_restarts_within_epochs(L, 3, 1))


def _own_scheduler(L: Any, optimizer: Any) -> Any:
    class Halving(L.optim.lr_scheduler.LRScheduler):
        def get_lr(self) -> list[float]:
            return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

    return Halving(optimizer)


add("optim.lr_scheduler.LRScheduler", "subclass",
    lambda L: trajectory(L, OPTIMIZERS["SGD"][0][1], _own_scheduler))


# ----------------------------------------------------------------------------- autograd


def _square(L: Any) -> Any:
    class Square(L.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    return Square


add("autograd.Function", "square", lambda L, x: _square(L).apply(x), normal(2, 3))
add("autograd.backward", "two-roots", lambda L, x: _autograd_backward(L, x), normal(2, 3))
add("autograd.grad", "second-order", lambda L, x: _second_order(L, x), normal(3))
add("autograd.grad", "unused", lambda L, x, y: L.autograd.grad((x * 2).sum(), [x, y]),
    normal(3), normal(3))
add("autograd.grad", "allow_unused", lambda L, x, y: L.autograd.grad(
    (x * 2).sum(), [x, y], allow_unused=True), normal(3), normal(3))
add("autograd.gradcheck", "tanh", lambda L, x: L.autograd.gradcheck(lambda t: t.tanh(), (x,)),
    normal(3))
add("autograd.gradgradcheck", "tanh-product", lambda L, x, y: L.autograd.gradgradcheck(
    lambda a, b: (a * b).tanh(), (x, y)), normal(3), normal(3))


def _autograd_backward(L: Any, x: Any) -> Any:
    L.autograd.backward([(x * x).sum(), x.sin()], [None, L.ones(2, 3, dtype=L.float64)])
    return x.grad


def _second_order(L: Any, x: Any) -> Any:
    (g,) = L.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (h,) = L.autograd.grad(g.sum(), x)
    return g, h


# ----------------------------------------------------------------------------- the rest

add("distributions.Categorical", "probs", lambda L, p, a: _categorical(L, L.distributions
    .Categorical(probs=p.softmax(-1)), a), normal(2, 3), indices(3, 2))
add("distributions.Categorical", "logits", lambda L, p, a: _categorical(L, L.distributions
    .Categorical(logits=p), a), normal(2, 3), indices(3, 2))
add("distributions.Binomial", "probs", lambda L, p, k: _binomial(L, p.sigmoid(), k),
    normal(3), constant([0.0, 2.0, 5.0]))


def _categorical(L: Any, d: Any, a: Any) -> Any:
    return d.log_prob(a), d.entropy(), d.probs, d.logits, tuple(d.sample().shape)


def _binomial(L: Any, p: Any, k: Any) -> Any:
    d = L.distributions.Binomial(5, probs=p)
    return d.log_prob(k), d.mean, d.variance, tuple(d.sample().shape)


add("nn.utils.clip_grad_norm_", "2", lambda L, x: _clipped(L, x, L.nn.utils.clip_grad_norm_,
                                                          0.5), normal(2, 3))
add("nn.utils.clip_grad_norm_", "inf", lambda L, x: _clipped(
    L, x, lambda p, m: L.nn.utils.clip_grad_norm_(p, m, norm_type=float("inf")), 0.5),
    normal(2, 3))
add("nn.utils.clip_grad_value_", "0.3", lambda L, x: _clipped(L, x, L.nn.utils.clip_grad_value_,
                                                             0.3), normal(2, 3))


def _clipped(L: Any, x: Any, clip: Callable[..., Any], limit: float) -> Any:
    p = L.nn.Parameter(x.detach().clone())
    (p * p * 3).sum().backward()
    total = clip([p], limit)
    return total, p.grad


_RNN = "nn.utils.rnn"
add(f"{_RNN}.pad_sequence", "batch-first", lambda L, a, b: L.nn.utils.rnn.pad_sequence(
    [a, b[:2]], batch_first=True, padding_value=-1.0), normal(3, 2), normal(3, 2))
add(f"{_RNN}.pack_padded_sequence", "sorted", lambda L, x: _packed(L, x, [3, 2]),
    normal(3, 2, 2))
add(f"{_RNN}.pack_padded_sequence", "unsorted", lambda L, x: _packed(L, x, [2, 3]),
    normal(3, 2, 2))
add(f"{_RNN}.pack_padded_sequence", "unsorted-allowed", lambda L, x: _packed(
    L, x, [2, 4, 1, 4], enforce_sorted=False), normal(4, 4, 2))
add(f"{_RNN}.pack_padded_sequence", "batch-first", lambda L, x: _packed(
    L, x, [1, 3, 2], batch_first=True, enforce_sorted=False), normal(3, 4, 2))
add(f"{_RNN}.pack_padded_sequence", "no-feature-dims", lambda L, x: _packed(L, x, [3, 3, 1]),
    normal(3, 3))
add(f"{_RNN}.pack_padded_sequence", "int-input", lambda L, x: _packed(L, x, [4, 2]),
    ints(4, 2, 3))
add(f"{_RNN}.pack_padded_sequence", "whole", lambda L, x: L.nn.utils.rnn.pack_padded_sequence(
    x, [1, 3], enforce_sorted=False), normal(3, 2))
add(f"{_RNN}.pack_padded_sequence", "zero-length", lambda L, x: _packed(L, x, [3, 0]),
    normal(3, 2, 2))
add(f"{_RNN}.pack_padded_sequence", "zero-length-unsorted", lambda L, x: _packed(
    L, x, [0, 3], enforce_sorted=False), normal(3, 2, 2))
add(f"{_RNN}.pack_padded_sequence", "too-many-lengths", lambda L, x: _packed(L, x, [3, 2, 1]),
    normal(3, 2, 2))
add(f"{_RNN}.pack_padded_sequence", "lengths-2d", lambda L, x: _packed(L, x, [[3, 2]]),
    normal(3, 2, 2))
add(f"{_RNN}.pad_packed_sequence", "round-trip", lambda L, x: L.nn.utils.rnn.pad_packed_sequence(
    L.nn.utils.rnn.pack_padded_sequence(x, [3, 1], enforce_sorted=False)), normal(3, 2, 2))
add(f"{_RNN}.pad_packed_sequence", "sorted", lambda L, x: L.nn.utils.rnn.pad_packed_sequence(
    L.nn.utils.rnn.pack_padded_sequence(x, [4, 2, 2])), normal(4, 3, 2))
add(f"{_RNN}.pad_packed_sequence", "padding-total-length", lambda L, x: L.nn.utils.rnn
    .pad_packed_sequence(L.nn.utils.rnn.pack_padded_sequence(
        x, [2, 3, 1], batch_first=True, enforce_sorted=False), batch_first=True,
        padding_value=-1.5, total_length=5), normal(3, 4, 2))
add(f"{_RNN}.pad_packed_sequence", "short-total-length", lambda L, x: L.nn.utils.rnn
    .pad_packed_sequence(L.nn.utils.rnn.pack_padded_sequence(x, [3, 2]), total_length=2),
    normal(3, 2, 2))
add(f"{_RNN}.pack_sequence", "sorted", lambda L, a, b, c: _fields(
    L.nn.utils.rnn.pack_sequence([a, b[:2], c[:1]])), normal(3, 2), normal(3, 2), normal(3, 2))
add(f"{_RNN}.pack_sequence", "unsorted", lambda L, a, b: L.nn.utils.rnn.pad_packed_sequence(
    L.nn.utils.rnn.pack_sequence([a[:1], b], enforce_sorted=False), batch_first=True),
    normal(2), normal(3))
add(f"{_RNN}.pack_sequence", "unsorted-refused", lambda L, a, b: L.nn.utils.rnn.pack_sequence(
    [a[:1], b]), normal(2), normal(3))
add(f"{_RNN}.invert_permutation", "plain", lambda L: L.nn.utils.rnn.invert_permutation(
    L.tensor([2, 0, 3, 1])))
add(f"{_RNN}.invert_permutation", "none", lambda L: L.nn.utils.rnn.invert_permutation(None))
add(f"{_RNN}.PackedSequence", "isinstance", lambda L, x: isinstance(
    L.nn.utils.rnn.pack_padded_sequence(x, [3, 2]), L.nn.utils.rnn.PackedSequence), normal(3, 2))
add(f"{_RNN}.PackedSequence", "fields", lambda L: L.nn.utils.rnn.PackedSequence._fields)
add(f"{_RNN}.PackedSequence", "by-hand", lambda L, x: _fields(L.nn.utils.rnn.PackedSequence(
    x, L.tensor([2, 1]), L.tensor([1, 0]))), normal(3))
add(f"{_RNN}.PackedSequence", "from-a-pair", lambda L, x: _fields(L.nn.utils.rnn.PackedSequence(
    (x, L.tensor([2, 1])))), normal(3))
add(f"{_RNN}.PackedSequence", "to", lambda L, x: _converted(L, L.nn.utils.rnn
    .pack_padded_sequence(x, [2, 3], enforce_sorted=False)), normal(3, 2))


def _packed(L: Any, x: Any, lengths: list, **kw: Any) -> Any:
    return _fields(L.nn.utils.rnn.pack_padded_sequence(x, L.tensor(lengths), **kw))


def _fields(p: Any) -> Any:
    return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices


def _converted(L: Any, p: Any) -> Any:
    same = p.to(L.float64) is p  # the data's dtype already: p itself
    return same, _fields(p.float()), p.double().data, p.is_cuda, p.cpu() is p


def _packed_rnn(L: Any, module: Any, x: Any, lengths: list, hx: Any = None) -> Any:
    """module over a packed batch (batch first), unsorted: output's fields, padded, and h_n."""
    packed = L.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                 enforce_sorted=False)
    output, state = module(packed) if hx is None else module(packed, hx)
    return _fields(output), L.nn.utils.rnn.pad_packed_sequence(output, batch_first=True), state


module_case("LSTM", "packed", lambda L: L.nn.LSTM(3, 4, num_layers=2, batch_first=True),
            normal(4, 5, 3), forward=lambda L, m, x: _packed_rnn(L, m, x, [3, 5, 1, 3]))
module_case("LSTM", "packed-bidirectional-hx", lambda L: L.nn.LSTM(
    3, 4, bidirectional=True, batch_first=True), normal(3, 4, 3), normal(2, 3, 4),
    normal(2, 3, 4), forward=lambda L, m, x, h, c: _packed_rnn(L, m, x, [2, 4, 1], (h, c)))
module_case("GRU", "packed", lambda L: L.nn.GRU(3, 4, batch_first=True), normal(4, 5, 3),
            normal(1, 4, 4), forward=lambda L, m, x, h: _packed_rnn(L, m, x, [2, 5, 5, 1], h))
module_case("GRU", "packed-bidirectional", lambda L: L.nn.GRU(
    3, 4, num_layers=2, bidirectional=True, batch_first=True), normal(3, 4, 3),
    forward=lambda L, m, x: _packed_rnn(L, m, x, [4, 1, 2]))
module_case("RNN", "packed-sorted", lambda L: L.nn.RNN(3, 4), normal(4, 3, 3),
            forward=lambda L, m, x: m(L.nn.utils.rnn.pack_padded_sequence(x, [4, 3, 1])))


add("nn.utils.parameters_to_vector", "two", lambda L, x, y: L.nn.utils.parameters_to_vector(
    [x, y]), normal(2, 3), normal(3))
add("nn.utils.parameters_to_vector", "non-contiguous", lambda L, x, y: L.nn.utils
    .parameters_to_vector([x, y.T]), normal(2, 3), normal(3, 2))
add("nn.utils.vector_to_parameters", "two", lambda L, v: _unflattened(L, v), normal(9))
add("nn.utils.vector_to_parameters", "too-short", lambda L, v: _unflattened(L, v[:5]), normal(9))


def _unflattened(L: Any, v: Any) -> Any:
    params = [L.nn.Parameter(L.zeros(2, 3, dtype=L.float64)), L.nn.Parameter(L.zeros(3))]
    L.nn.utils.vector_to_parameters(v.detach() * 1, params)
    return [(p.requires_grad, p.is_leaf) for p in params], params


add("autograd.Variable", "requires-grad", lambda L, x: (lambda v: (
    v.requires_grad, v.is_leaf, v * 2))(L.autograd.Variable(x.detach(), requires_grad=True)),
    normal(2, 3))
add("autograd.Variable", "plain", lambda L, x: L.autograd.Variable(x.detach()), normal(2, 3))
add("cuda.device_count", "no-gpu", lambda L: L.cuda.device_count())
add("cuda.manual_seed", "no-gpu", lambda L: L.cuda.manual_seed(3))
add("cuda.manual_seed_all", "no-gpu", lambda L: L.cuda.manual_seed_all(3))
add("testing.assert_close", "close", lambda L, x: L.testing.assert_close(x, x + 1e-12),
    normal(2, 3))
add("testing.assert_close", "far", lambda L, x: L.testing.assert_close(x, x + 1), normal(2, 3))
add("testing.assert_close", "dtype", lambda L, x: L.testing.assert_close(x, x.float()),
    normal(2, 3))
add("cuda.is_available", "bool", lambda L: type(L.cuda.is_available()).__name__)

_DATA = "utils.data"
add(f"{_DATA}.TensorDataset", "items", lambda L, x, y: (lambda d: (len(d), d[1], d[-1]))(
    L.utils.data.TensorDataset(x, y)), normal(3, 2), indices(2, 3))
add(f"{_DATA}.TensorDataset", "bad-sizes", lambda L, x, y: L.utils.data.TensorDataset(x, y),
    normal(3, 2), indices(2, 4))
add(f"{_DATA}.DataLoader", "in-order", lambda L, x, y: list(L.utils.data.DataLoader(
    L.utils.data.TensorDataset(x, y), batch_size=2)), normal(5, 2), indices(2, 5))
add(f"{_DATA}.DataLoader", "drop-last-dicts", lambda L, x: list(L.utils.data.DataLoader(
    [{"x": x[i], "i": i} for i in range(5)], batch_size=2, drop_last=True)), normal(5, 2))
add(f"{_DATA}.DataLoader", "shuffled-seeded", lambda L, x: [b.tolist() for b in L.utils.data
    .DataLoader(L.arange(7), batch_size=3, shuffle=True, generator=L.Generator().manual_seed(3))])
add(f"{_DATA}.Subset", "picked", lambda L, x: list(L.utils.data.Subset(
    L.utils.data.TensorDataset(x), [3, 0])), normal(4, 2))
add(f"{_DATA}.ConcatDataset", "two", lambda L, x: (lambda d: (len(d), d[4]))(
    L.utils.data.ConcatDataset([L.utils.data.TensorDataset(x), L.utils.data.TensorDataset(x)])),
    normal(3, 2))
add(f"{_DATA}.Dataset", "subclass", lambda L, x: list(L.utils.data.DataLoader(
    _squares(L)(), batch_size=2)))
add(f"{_DATA}.IterableDataset", "subclass", lambda L: list(L.utils.data.DataLoader(
    _counting(L)(), batch_size=2)))
add(f"{_DATA}.Sampler", "subclass", lambda L: list(L.utils.data.DataLoader(
    list(range(6)), sampler=_backwards(L)(6), batch_size=4)))
add(f"{_DATA}.SequentialSampler", "list", lambda L: list(L.utils.data.SequentialSampler(
    range(4))))
add(f"{_DATA}.BatchSampler", "drop-last", lambda L: [list(b) for b in L.utils.data.BatchSampler(
    range(7), 3, drop_last=True)])
add(f"{_DATA}.RandomSampler", "seeded", lambda L: list(L.utils.data.RandomSampler(
    range(6), generator=L.Generator().manual_seed(5))))
add(f"{_DATA}.SubsetRandomSampler", "seeded", lambda L: list(L.utils.data.SubsetRandomSampler(
    [5, 7, 9], generator=L.Generator().manual_seed(2))))
add(f"{_DATA}.random_split", "seeded", lambda L: [list(s.indices) for s in L.utils.data
    .random_split(range(6), [4, 2], generator=L.Generator().manual_seed(0))])
add(f"{_DATA}.random_split", "fractions", lambda L: [len(s) for s in L.utils.data.random_split(
    range(7), [0.5, 0.5], generator=L.Generator().manual_seed(0))])
add(f"{_DATA}.default_collate", "tuples", lambda L: L.utils.data.default_collate(
    [(1, 2.5, np.array([1.0, 2.0])), (3, 4.5, np.array([3.0, 4.0]))]))
add(f"{_DATA}.default_convert", "array", lambda L: L.utils.data.default_convert(
    [np.array([1, 2]), 3]))


def _squares(L: Any) -> Any:
    class Squares(L.utils.data.Dataset):
        def __len__(self) -> int:
            return 3

        def __getitem__(self, i: int) -> Any:
            return i, float(i * i)

    return Squares


def _counting(L: Any) -> Any:
    class Counting(L.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(5))

    return Counting


def _backwards(L: Any) -> Any:
    class Backwards(L.utils.data.Sampler):
        def __init__(self, n: int) -> None:
            self.n = n

        def __iter__(self) -> Any:
            return iter(range(self.n - 1, -1, -1))

        def __len__(self) -> int:
            return self.n

    return Backwards


# ----------------------------------------------------------------------------- more math
# Issue 37: PyTorch's functions that are also Tensor methods, each run both ways.


def both_ways(name: str, label: str, *inputs: Input, args: tuple = (), kw: dict | None = None,
              spaces: tuple[str, ...] = ("torch", "Tensor"), **options: Any) -> None:
    """Cases for ``torch.NAME(x, *rest, *args, **kw)`` and ``x.NAME(*rest, *args, **kw)``."""
    kw = kw or {}
    for space in spaces:
        if space == "torch":
            def program(L: Any, x: Any, *rest: Any) -> Any:
                return getattr(L, name)(x, *rest, *args, **kw)
        else:
            def program(L: Any, x: Any, *rest: Any) -> Any:
                return getattr(x, name)(*rest, *args, **kw)
        add(f"{space}.{name}", label, program, *inputs, **options)


def values(*numbers: float, differentiable: bool = True) -> Input:
    """These float values (NaN, infinities, zeros where a case needs them)."""
    return Input(lambda rng: np.array(numbers, dtype=float), differentiable=differentiable)


both_ways("lerp", "number", normal(2, 3), normal(3), args=(0.3,), spaces=("torch",))
both_ways("lerp", "tensor-weight", normal(2, 3), normal(2, 3), uniform(0.0, 1.0, 3),
          spaces=("torch",))
both_ways("lerp", "mismatch", normal(2, 3), normal(2), args=(0.5,), spaces=("torch",))
for _name in ("addcmul", "addcdiv"):
    both_ways(_name, "value", normal(2, 3), normal(3), nonzero(2, 3), kw={"value": 0.5},
              spaces=("torch",))
    both_ways(_name, "mismatch", normal(2, 3), normal(2), nonzero(3), spaces=("torch",))
both_ways("addmm", "plain", normal(2, 2), normal(2, 3), normal(3, 2))
both_ways("addmm", "beta-alpha-bias", normal(2), normal(2, 3), normal(3, 2),
          kw={"beta": 0.5, "alpha": 2.0})
both_ways("addmm", "beta0-nan", values(np.nan, 1.0), normal(2, 3), normal(3, 2),
          kw={"beta": 0})
both_ways("addmm", "ints", ints(2, 2), ints(2, 3), ints(3, 2))
both_ways("addmm", "bad-product", normal(2, 2), normal(2, 3), normal(2, 2))
both_ways("addmm", "bad-input", normal(3), normal(2, 3), normal(3, 2))
both_ways("addmm", "vector", normal(2), normal(3), normal(3, 2))
both_ways("baddbmm", "plain", normal(2, 2, 2), normal(2, 2, 3), normal(2, 3, 2))
both_ways("baddbmm", "beta-alpha-bias", normal(2), normal(2, 2, 3), normal(2, 3, 2),
          kw={"beta": -1.0, "alpha": 0.5})
both_ways("baddbmm", "bad-batch", normal(2, 2, 2), normal(2, 2, 3), normal(3, 3, 2))
both_ways("baddbmm", "matrices", normal(2, 2), normal(2, 3), normal(3, 2))
both_ways("hypot", "broadcast", normal(2, 3), normal(3))
both_ways("hypot", "float32-float64", normal(2, 3), normal(3), dtype="float32")
both_ways("hypot", "ints", ints(2, 3), ints(3))
both_ways("hypot", "mismatch", normal(2, 3), normal(2))
both_ways("logaddexp", "broadcast", normal(2, 3), normal(3))
both_ways("logaddexp", "large", uniform(500.0, 800.0, 2, 3), uniform(500.0, 800.0, 2, 3))
both_ways("logaddexp", "ints", ints(2, 3), ints(2, 3))
both_ways("xlogy", "broadcast", normal(2, 3), positive(3))
both_ways("xlogy", "zeros", values(0.0, 1.5, -0.5, 0.0), values(0.0, 2.0, 0.5, 3.0,
                                                              differentiable=False))
both_ways("xlogy", "nan", values(0.0, 1.5), values(np.nan, np.nan, differentiable=False))
both_ways("xlogy", "number", normal(2, 3), args=(3,))
both_ways("xlogy", "ints", ints(2, 3, low=0), ints(2, 3, low=1))
add("torch.xlogy", "number-first", lambda L, y: L.xlogy(2, y), positive(2, 3))
both_ways("sinc", "float", values(0.0, 1.2, -0.3, 2.0))
both_ways("sinc", "float32", normal(2, 3), dtype="float32")
both_ways("sinc", "ints", ints(2, 3))
for _name in ("trunc", "frac"):
    both_ways(_name, "float", values(1.5, -1.5, 0.25, -0.75, 3.0))
    both_ways(_name, "ints", ints(2, 3))
both_ways("fmod", "broadcast", normal(2, 3), nonzero(3))
both_ways("fmod", "number", normal(2, 3), args=(-0.7,))
both_ways("fmod", "ints", ints(2, 3), ints(3, low=1))
both_ways("fmod", "int-negative", ints(2, 3), args=(-2,))
both_ways("fmod", "int-zero", ints(2, 3), args=(0,))
both_ways("fmod", "int-float-number", ints(2, 3), args=(1.5,))
both_ways("copysign", "broadcast", nonzero(2, 3), normal(3))
both_ways("copysign", "negative-zero", nonzero(2, 3), args=(-0.0,))
both_ways("copysign", "at-zero", values(0.0, 1.2), values(-1.0, 1.0))
both_ways("copysign", "ints", ints(2, 3), ints(3))
both_ways("copysign", "float32-float64", nonzero(2, 3), normal(3), dtype="float32")
both_ways("nan_to_num", "default", values(np.nan, np.inf, -np.inf, 1.5, differentiable=False))
both_ways("nan_to_num", "given", values(np.nan, np.inf, -np.inf, 1.5), args=(1.0, 2.0, -2.0))
both_ways("nan_to_num", "float32", values(np.nan, np.inf, -np.inf, 1.5, differentiable=False),
          dtype="float32")
both_ways("nan_to_num", "ints", ints(2, 3))
both_ways("nansum", "all", values(np.nan, 1.5, -2.0))
both_ways("nansum", "dim1-keepdim", Input(lambda rng: np.where(
    rng.random((2, 3)) < 0.3, np.nan, rng.standard_normal((2, 3)))), args=(1, True))
both_ways("nansum", "ints", ints(2, 3))
add("torch.nansum", "dtype", lambda L, x: L.nansum(x, dtype=L.float64), ints(2, 3))
both_ways("nanmean", "all", values(np.nan, 1.5, -2.0))
both_ways("nanmean", "dim0", Input(lambda rng: np.array([[np.nan, 1.0, np.nan],
                                                         [2.0, -1.0, 0.5]])), args=(0,))
both_ways("nanmean", "all-nan-column", Input(lambda rng: np.array([[np.nan, 1.0, np.nan],
                                                                   [2.0, -1.0, np.nan]])),
          args=(0,))
both_ways("nanmean", "ints", ints(2, 3))
both_ways("nanmean", "bad-dim", normal(2, 3), args=(2,))


both_ways("median", "all", normal(2, 3))
both_ways("median", "ties", values(2.0, 1.0, 2.0, 3.0, 2.0, 0.0))
both_ways("median", "nan", values(1.0, np.nan, 2.0))
both_ways("median", "dim1", distinct(3, 4), args=(1,))
both_ways("median", "dim0-keepdim", distinct(3, 4), args=(0, True))
both_ways("median", "dim-nan", values(1.0, np.nan, 2.0, np.nan), args=(0,))
both_ways("median", "ints", ints(2, 3))
both_ways("median", "ints-dim", Input(lambda rng: rng.permutation(6).reshape(2, 3),
                                      differentiable=False), args=(1,))
both_ways("median", "0-d", normal(), args=(0,))
both_ways("median", "bad-dim", normal(2, 3), args=(2,))
both_ways("kthvalue", "k2-dim1", distinct(3, 4), args=(2, 1))
both_ways("kthvalue", "default-dim-keepdim", distinct(3, 4), args=(4,), kw={"keepdim": True})
both_ways("kthvalue", "0-d", normal(), args=(1,))
both_ways("kthvalue", "k-too-large", distinct(3, 4), args=(5,))
both_ways("kthvalue", "k0", distinct(3, 4), args=(0,))
both_ways("mode", "ties", values(3.0, 1.0, 3.0, 1.0, 2.0, 1.0))
both_ways("mode", "dim0-keepdim", Input(lambda rng: rng.integers(0, 3, (4, 3)) * 0.5),
          args=(0, True))
both_ways("mode", "ints", ints(3, 5, low=0, high=3))
both_ways("mode", "0-d", normal())
both_ways("quantile", "all", normal(3, 4), args=(0.3,))
both_ways("quantile", "q-tensor-dim-keepdim", normal(3, 4),
          Input(lambda rng: np.array([0.1, 0.5, 1.0]), differentiable=False),
          kw={"dim": 1, "keepdim": True})
for _mode in ("lower", "higher", "midpoint", "nearest"):
    both_ways("quantile", _mode, normal(3, 4), args=(0.4,),
              kw={"dim": 0, "interpolation": _mode})
both_ways("quantile", "nearest-half-to-even", values(0.0, 1.0, 2.0, 3.0), args=(0.5,),
          kw={"interpolation": "nearest"})
both_ways("quantile", "nan", values(0.0, np.nan, 2.0), args=(0.5,))
both_ways("quantile", "keepdim-all", normal(3, 4), args=(0.7,), kw={"keepdim": True})
both_ways("quantile", "float32", normal(3, 4), args=(0.25, 1), dtype="float32")
both_ways("quantile", "bad-q", normal(3, 4), args=(1.5,))
both_ways("quantile", "ints", ints(3, 4), args=(0.5,))
both_ways("quantile", "bad-interpolation", normal(3, 4), args=(0.5,),
          kw={"interpolation": "cubic"})
both_ways("quantile", "q-2d", normal(3, 4), Input(lambda rng: np.array([[0.5]]),
                                                  differentiable=False))
both_ways("msort", "float", normal(3, 2))
both_ways("msort", "ints", ints(4, 2))
both_ways("msort", "0-d", normal())


add("torch.index_add", "dim0-alpha", lambda L, x, i, s: L.index_add(x, 0, i, s, alpha=0.5),
    normal(3, 2), constant([2, 0, 2]), normal(3, 2))
add("torch.index_add", "bad-index-dtype", lambda L, x, s: L.index_add(
    x, 0, L.tensor([0.0, 1.0]), s), normal(3, 2), normal(2, 2))
add("torch.index_add", "index-2d", lambda L, x, i, s: L.index_add(x, 0, i, s), normal(3, 2),
    constant([[0]]), normal(1, 2))
add("torch.index_add", "bad-count", lambda L, x, i, s: L.index_add(x, 0, i, s), normal(3, 2),
    constant([0, 1]), normal(3, 2))
add("torch.index_add", "out-of-range", lambda L, x, i, s: L.index_add(x, 0, i, s),
    normal(3, 2), constant([0, 5]), normal(2, 2))
add("torch.index_add", "ints", lambda L, x, i, s: L.index_add(x, 1, i, s), ints(2, 3),
    constant([1, 1]), ints(2, 2))
for _space in ("torch", "Tensor"):
    _copy = (lambda L, x, *a: L.index_copy(x, *a)) if _space == "torch" else \
        (lambda L, x, *a: x.index_copy(*a))
    add(f"{_space}.index_copy", "dim0", lambda L, x, i, s, c=_copy: c(L, x, 0, i, s),
        normal(4, 2), constant([3, 0]), normal(2, 2))
    add(f"{_space}.index_copy", "dim1-repeat-last-wins",
        lambda L, x, i, s, c=_copy: c(L, x, 1, i, s), normal(3, 2), constant([1, 1]),
        normal(3, 2))
    add(f"{_space}.index_copy", "ints", lambda L, x, i, s, c=_copy: c(L, x, 0, i, s),
        ints(3, 2), constant([2]), ints(1, 2))
    add(f"{_space}.index_copy", "dtypes", lambda L, x, i, s, c=_copy: c(L, x, 0, i, s.float()),
        normal(3, 2), constant([2]), normal(1, 2))
    add(f"{_space}.index_copy", "bad-shape", lambda L, x, i, s, c=_copy: c(L, x, 0, i, s),
        normal(3, 2), constant([2]), normal(1, 3))
add("torch.index_fill", "dim1", lambda L, x, i: L.index_fill(x, 1, i, -1.5), normal(2, 3),
    constant([2, 0]))
add("torch.index_fill", "ints", lambda L, x, i: L.index_fill(x, 0, i, 7), ints(3, 2),
    constant([1]))
add("torch.index_fill", "index-2d", lambda L, x, i: L.index_fill(x, 0, i, 1.0), normal(3),
    constant([[0]]))
add("torch.index_fill", "out-of-range", lambda L, x, i: L.index_fill(x, 0, i, 1.0), normal(3),
    constant([5]))
for _space in ("torch", "Tensor"):
    _reduce = (lambda L, x, *a, **k: L.scatter_reduce(x, *a, **k)) if _space == "torch" else \
        (lambda L, x, *a, **k: x.scatter_reduce(*a, **k))
    for _how in ("sum", "prod", "mean", "amax", "amin"):
        add(f"{_space}.scatter_reduce", f"{_how}-dim1", lambda L, x, i, s, r=_reduce, h=_how:
            r(L, x, 1, i, s, h), nonzero(2, 4), constant([[0, 0, 3], [2, 2, 2]]),
            nonzero(2, 3))
        add(f"{_space}.scatter_reduce", f"{_how}-without-self",
            lambda L, x, i, s, r=_reduce, h=_how: r(L, x, 0, i, s, h, include_self=False),
            nonzero(3, 2), constant([[0, 2], [0, 0], [0, 1]]), nonzero(3, 2))
    add(f"{_space}.scatter_reduce", "amax-ties", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "amax"), values(1.0, 3.0, 3.0), constant([1, 0, 1]),
        values(3.0, 2.0, 3.0))
    add(f"{_space}.scatter_reduce", "prod-zeros", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "prod"), values(2.0, 0.0, 3.0), constant([0, 0, 1]),
        values(0.0, 4.0, 0.0))
    add(f"{_space}.scatter_reduce", "int-mean", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "mean"), ints(3, low=-9, high=9), constant([0, 0, 1, 0]),
        ints(4, low=-9, high=9))
    add(f"{_space}.scatter_reduce", "int-amin", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "amin", include_self=False), ints(3), constant([2, 2]), ints(2))
    add(f"{_space}.scatter_reduce", "bad-reduce", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "add"), normal(3), constant([0, 1]), normal(2))
    add(f"{_space}.scatter_reduce", "max-alias", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "max"), values(1.0, 2.0, 3.0, differentiable=False),
        constant([0, 1]), values(5.0, -6.0, differentiable=False))  # (torch's backward of
    # "max" raises: the values only)
    add(f"{_space}.scatter_reduce", "dtypes", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s.float(), "sum"), normal(3), constant([0, 1]), normal(2))
    add(f"{_space}.scatter_reduce", "bad-index", lambda L, x, i, s, r=_reduce:
        r(L, x, 0, i, s, "sum"), normal(3), constant([0, 3]), normal(2))


both_ways("bincount", "plain", constant([0, 2, 2, 5]))
both_ways("bincount", "minlength", constant([0, 2, 2]), kw={"minlength": 5})
both_ways("bincount", "weights", constant([0, 2, 2]), values(0.5, 1.0, 2.0,
                                                              differentiable=False))
both_ways("bincount", "int-weights", constant([0, 2, 2]), constant([1, 2, 3]))
both_ways("bincount", "float32-weights", constant([1, 1]), values(0.5, 1.0,
                                                                  differentiable=False),
          dtype="float32")
both_ways("bincount", "negative", constant([0, -2, 2]))
both_ways("bincount", "2-d", constant([[0, 2]]))
both_ways("bincount", "floats", normal(3))
both_ways("histc", "range", values(1.0, 2.0, 1.0, 0.5, 3.0, 4.0, differentiable=False),
          kw={"bins": 4, "min": 0, "max": 3})
both_ways("histc", "own-range", Input(lambda rng: rng.standard_normal(20),
                                      differentiable=False), args=(5,))
both_ways("histc", "one-point", values(1.0, 1.0, differentiable=False), kw={"bins": 4})
both_ways("histc", "float32", Input(lambda rng: rng.standard_normal(20), differentiable=False),
          args=(7, -1.0, 1.0), dtype="float32")
both_ways("histc", "ints", ints(5), args=(4, 0, 3))
both_ways("histc", "bad-bins", normal(3), kw={"bins": 0})
both_ways("histc", "bad-range", normal(3), kw={"bins": 3, "min": 3, "max": 1})
both_ways("heaviside", "float", values(1.5, -2.5, 0.0, differentiable=False),
          values(0.5, differentiable=False))
both_ways("heaviside", "broadcast", Input(lambda rng: rng.integers(-1, 2, (2, 3)) * 1.0,
                                          differentiable=False),
          values(0.25, 0.5, 0.75, differentiable=False))
both_ways("heaviside", "ints", ints(2, 3, low=-1, high=2), constant([7]))
both_ways("heaviside", "dtypes", ints(2, 3), values(0.5, differentiable=False))
for _name in ("gcd", "lcm"):
    both_ways(_name, "broadcast", ints(2, 3, low=-9, high=9), constant([6, 0, -4]))
    both_ways(_name, "floats", normal(2, 3), normal(2, 3))
both_ways("unique_consecutive", "flat", constant([1, 1, 2, 2, 3, 1, 1, 2]))
both_ways("unique_consecutive", "inverse-counts", constant([[1, 1, 2], [2, 3, 3]]),
          args=(True, True))
both_ways("unique_consecutive", "dim0", constant([[1, 1], [1, 1], [2, 3], [1, 1]]),
          kw={"return_counts": True, "dim": 0})
both_ways("unique_consecutive", "floats", values(0.5, 0.5, -1.0, differentiable=False),
          kw={"return_inverse": True})
both_ways("kron", "matrices", normal(2, 2), normal(2, 3))
both_ways("kron", "vector-matrix", normal(2), normal(2, 3))
both_ways("kron", "ints", ints(2), ints(2))
both_ways("rot90", "default", normal(2, 3))
both_ways("rot90", "k2-list", normal(2, 3), args=(2, [0, 1]))
both_ways("rot90", "k-1-dims", normal(2, 3, 2), args=(-1, (2, 0)))
both_ways("rot90", "k4", normal(2, 3), args=(4,))
both_ways("rot90", "ints", ints(2, 3), args=(3,))
both_ways("rot90", "same-dims", normal(2, 3), args=(1, (0, 0)))
both_ways("rot90", "vector", normal(3), args=(1,))
both_ways("rot90", "three-dims", normal(2, 3, 2), args=(1, (0, 1, 2)))
for _name in ("cummax", "cummin"):
    both_ways(_name, "dim1", distinct(3, 4), args=(1,))
    both_ways(_name, "ties", values(1.0, 3.0, 2.0, 3.0, 5.0, 1.0), args=(0,))
    both_ways(_name, "nan", values(1.0, np.nan, 2.0, differentiable=False), args=(0,))
    both_ways(_name, "ints", ints(2, 5), args=(-1,))
    both_ways(_name, "0-d", normal(), args=(0,))
    both_ways(_name, "bad-dim", normal(2, 3), args=(2,))
both_ways("logcumsumexp", "dim1", normal(2, 4), args=(1,))
both_ways("logcumsumexp", "wide", values(-1000.0, 0.0, 1000.0, 999.0), args=(0,))
both_ways("logcumsumexp", "float32-dim0", normal(3, 2), args=(0,), dtype="float32")
both_ways("logcumsumexp", "ints", ints(3), args=(0,))
both_ways("take_along_dim", "argsort", normal(2, 4), constant([[3, 0, 1, 2], [1, 1, 0, 3]]),
          args=(1,))
both_ways("take_along_dim", "broadcast", normal(1, 3), constant([[0], [2]]), args=(1,))
both_ways("take_along_dim", "flat", normal(2, 3), constant([5, 0, 5]))
both_ways("take_along_dim", "ints", ints(2, 3), constant([[2], [0]]), args=(-1,))
both_ways("take_along_dim", "bad-dims", normal(2, 3), constant([0, 2]), args=(1,))
add("torch.isin", "tensors", lambda L, x, t: L.isin(x, t), ints(2, 3), constant([3, 0, -1]))
add("torch.isin", "numbers", lambda L, x: (L.isin(x, 3), L.isin(3, x)), ints(2, 3, low=2))
add("torch.isin", "invert-floats", lambda L, x, t: L.isin(x, t, invert=True),
    values(1.5, 2.0, 0.0, differentiable=False), constant([1, 2]))
add("torch.searchsorted", "left-right", lambda L, s, v: (L.searchsorted(s, v),
                                                         L.searchsorted(s, v, right=True)),
    constant([1, 3, 5, 7]), constant([3, 6, 9, 0]))
add("torch.searchsorted", "rows", lambda L, s, v: L.searchsorted(s, v),
    constant([[1, 3, 5], [2, 4, 6]]), constant([[3, 6], [1, 5]]))
add("torch.searchsorted", "number-side-int32", lambda L, s: (
    L.searchsorted(s, 5, side="right"), L.searchsorted(s, L.tensor([3.5]), out_int32=True)),
    values(1.0, 3.0, 5.0, 7.0, differentiable=False))
add("torch.searchsorted", "sorter", lambda L, s, v, i: L.searchsorted(s, v, sorter=i),
    constant([5, 1, 3]), constant([3, 4]), constant([1, 2, 0]))
add("torch.searchsorted", "bad-rows", lambda L, s, v: L.searchsorted(s, v),
    constant([[1, 3, 5]]), constant([3, 4]))
add("torch.bucketize", "left-right", lambda L, x, b: (L.bucketize(x, b),
                                                      L.bucketize(x, b, right=True)),
    constant([[3, 6], [9, 1]]), constant([1, 3, 5, 7]))
add("torch.bucketize", "floats-int32", lambda L, x, b: L.bucketize(x, b, out_int32=True),
    Input(lambda rng: rng.standard_normal((2, 3)), differentiable=False),
    values(-1.0, 0.0, 1.0, differentiable=False))
add("torch.bucketize", "bad-boundaries", lambda L, x, b: L.bucketize(x, b), constant([3]),
    constant([[1, 3]]))
for _name in ("tril_indices", "triu_indices"):
    add(f"torch.{_name}", "square", (lambda n: lambda L: getattr(L, n)(3, 3))(_name))
    add(f"torch.{_name}", "offset", (lambda n: lambda L: (getattr(L, n)(3, 4, 1),
                                                         getattr(L, n)(4, 2, -1)))(_name))
    add(f"torch.{_name}", "int32", (lambda n: lambda L: getattr(L, n)(2, 3,
                                                                      dtype=L.int32))(_name))
    add(f"torch.{_name}", "negative", (lambda n: lambda L: getattr(L, n)(-1, 3))(_name))
add("torch.cartesian_prod", "two", lambda L, a, b: L.cartesian_prod(a, b), normal(2), normal(3))
add("torch.cartesian_prod", "three-ints", lambda L, a, b, c: L.cartesian_prod(a, b, c), ints(2),
    ints(2), ints(3))
add("torch.cartesian_prod", "one", lambda L, a: L.cartesian_prod(a), normal(3))
add("torch.cartesian_prod", "dtypes", lambda L, a, b: L.cartesian_prod(a, b), ints(2), normal(3))
add("torch.combinations", "pairs", lambda L, x: L.combinations(x), normal(4))
add("torch.combinations", "r3-replacement", lambda L, x: L.combinations(
    x, 3, with_replacement=True), normal(3))
add("torch.combinations", "r1-ints", lambda L, x: L.combinations(x, r=1), ints(3))
add("torch.combinations", "too-many", lambda L, x: (L.combinations(x, r=4),
                                                    L.combinations(x, r=0)), normal(3))
add("torch.combinations", "matrix", lambda L, x: L.combinations(x), normal(1, 3))
add("torch.tensordot", "dims2", lambda L, a, b: L.tensordot(a, b), normal(2, 3, 4),
    normal(3, 4, 2))
add("torch.tensordot", "named-dims", lambda L, a, b: L.tensordot(a, b, dims=([1, 2], [1, 0])),
    normal(2, 3, 4), normal(4, 3, 2))
add("torch.tensordot", "outer", lambda L, a, b: L.tensordot(a, b, dims=0), normal(2, 3),
    normal(2))
add("torch.tensordot", "ints", lambda L, a, b: L.tensordot(a, b, dims=[[1], [0]]), ints(2, 3),
    ints(3, 2))
add("torch.tensordot", "mismatch", lambda L, a, b: L.tensordot(a, b, dims=1), normal(2, 3),
    normal(4, 5))
add("torch.block_diag", "mixed", lambda L, a, b, c: L.block_diag(a, b, c), normal(2, 2),
    normal(2), normal())
add("torch.block_diag", "ints", lambda L, a, b: L.block_diag(a, b), ints(2, 3), ints(1, 1))
add("torch.block_diag", "dtypes", lambda L, a, b: L.block_diag(a.float(), b), normal(1, 2),
    normal(2, 1))
add("torch.block_diag", "none", lambda L: L.block_diag())
add("torch.block_diag", "3-d", lambda L, a: L.block_diag(a), normal(1, 1, 1))
for _name in ("trapezoid", "trapz"):
    add(f"torch.{_name}", "unit", (lambda n: lambda L, y: getattr(L, n)(y))(_name), normal(2, 4))
    add(f"torch.{_name}", "x", (lambda n: lambda L, y, x: getattr(L, n)(y, x))(_name),
        normal(2, 4), normal(4))
    add(f"torch.{_name}", "dx-dim0", (lambda n: lambda L, y: getattr(L, n)(y, dx=0.5, dim=0))(
        _name), normal(3, 2))
    add(f"torch.{_name}", "x-same-shape", (lambda n: lambda L, y, x: getattr(L, n)(y, x, dim=0))(
        _name), normal(3, 2), normal(3, 2))
    add(f"torch.{_name}", "ints", (lambda n: lambda L, y: getattr(L, n)(y))(_name), ints(5))
    add(f"torch.{_name}", "one-point", (lambda n: lambda L, y: getattr(L, n)(y))(_name),
        normal(1))
    add(f"torch.{_name}", "bad-x", (lambda n: lambda L, y, x: getattr(L, n)(y, x))(_name),
        normal(2, 3), normal(4))


# ----------------------------------------------------------------------------- more losses
# Issue 37: the margin and likelihood losses, as functions and as modules.


def signs(*shape: int) -> Input:
    """Targets of 1 and -1 (both present)."""
    def make(rng: np.random.Generator) -> np.ndarray:
        y = rng.choice([-1.0, 1.0], shape)
        y.flat[0], y.flat[-1] = 1.0, -1.0
        return y
    return Input(make, differentiable=False)


def counts(*shape: int) -> Input:
    """Poisson counts 0..4 (0 and 1 present: the masked part of the Stirling term)."""
    def make(rng: np.random.Generator) -> np.ndarray:
        c = rng.integers(0, 5, shape).astype(float)
        c.flat[0], c.flat[-1] = 0.0, 1.0
        return c
    return Input(make, differentiable=False)


MORE_LOSSES: dict[str, list[tuple[str, Callable[..., Any], tuple[Input, ...]]]] = {
    "margin_ranking_loss": [
        ("mean", _F("margin_ranking_loss"), (lattice(4), lattice(4, offset=0.2), signs(4))),
        ("margin-sum", _F("margin_ranking_loss", margin=0.5, reduction="sum"),
         (lattice(2, 3), lattice(2, 3, offset=0.2), signs(2, 3))),
        ("none", _F("margin_ranking_loss", reduction="none"),
         (lattice(4), lattice(4, offset=0.2), signs(4))),
        ("bad-dims", _F("margin_ranking_loss"), (normal(2, 3), normal(2, 3), signs(3)))],
    "hinge_embedding_loss": [
        ("mean", _F("hinge_embedding_loss"), (lattice(2, 3, offset=0.2), signs(2, 3))),
        ("margin-none", _F("hinge_embedding_loss", margin=0.5, reduction="none"),
         (lattice(2, 3, offset=0.1), signs(2, 3))),
        ("other-targets", _F("hinge_embedding_loss", reduction="sum"),
         (lattice(2, 3, offset=0.2), constant([[1.0, -1.0, 0.0], [2.0, 1.0, -1.0]])))],
    "triplet_margin_loss": [
        ("mean", _F("triplet_margin_loss"), (normal(4, 3), normal(4, 3), normal(4, 3))),
        ("p1-swap-none", _F("triplet_margin_loss", margin=2.0, p=1, swap=True,
                            reduction="none"), (normal(4, 3), normal(4, 3), normal(4, 3))),
        ("vectors", _F("triplet_margin_loss", margin=3.0), (normal(3), normal(3), normal(3))),
        ("bad-margin", _F("triplet_margin_loss", margin=0.0),
         (normal(4, 3), normal(4, 3), normal(4, 3))),
        ("bad-dims", _F("triplet_margin_loss"), (normal(4, 3), normal(4, 3), normal(3)))],
    "poisson_nll_loss": [
        ("log-input", _F("poisson_nll_loss"), (normal(2, 3), counts(2, 3))),
        ("rate-full-sum", _F("poisson_nll_loss", log_input=False, full=True, reduction="sum"),
         (positive(2, 3), counts(2, 3))),
        ("full-none", _F("poisson_nll_loss", full=True, reduction="none"),
         (normal(2, 3), counts(2, 3))),
        ("bad-reduction", _F("poisson_nll_loss", reduction="avg"),
         (normal(2, 3), counts(2, 3)))],
    "gaussian_nll_loss": [
        ("same-shape", _F("gaussian_nll_loss"), (normal(2, 3), fixed(2, 3), positive(2, 3))),
        ("one-short-full", _F("gaussian_nll_loss", full=True, reduction="sum"),
         (normal(2, 3), fixed(2, 3), positive(2))),
        ("shared-none", _F("gaussian_nll_loss", reduction="none"),
         (normal(2, 3), fixed(2, 3), positive(2, 1))),
        ("clamped", _F("gaussian_nll_loss", eps=0.1), (normal(2, 3), fixed(2, 3),
                                                       uniform(0.01, 0.05, 2, 3))),
        ("float-var", lambda L, x, t: L.nn.functional.gaussian_nll_loss(x, t, 0.5),
         (normal(2, 3), fixed(2, 3))),
        ("bad-size", _F("gaussian_nll_loss"), (normal(2, 3), fixed(2, 3), positive(3, 2))),
        ("negative-var", _F("gaussian_nll_loss"), (normal(2, 3), fixed(2, 3), normal(2, 3))),
        ("bad-reduction", _F("gaussian_nll_loss", reduction="avg"),
         (normal(2, 3), fixed(2, 3), positive(2, 3)))],
    "cosine_embedding_loss": [
        ("batch", _F("cosine_embedding_loss"), (normal(4, 3), normal(4, 3), signs(4))),
        ("margin-none", _F("cosine_embedding_loss", margin=-0.5, reduction="none"),
         (normal(4, 3), normal(4, 3), signs(4))),
        ("vectors", lambda L, x, y: L.nn.functional.cosine_embedding_loss(
            x, y, L.tensor(-1.0, dtype=L.float64)), (normal(3), normal(3))),
        ("bad-dims", _F("cosine_embedding_loss"), (normal(4, 3), normal(4, 3), signs(4, 1)))],
}
for _name, _variants in MORE_LOSSES.items():
    for _label, _program, _inputs in _variants:
        add(f"F.{_name}", _label, _program, *_inputs)
module_case("MarginRankingLoss", "margin", lambda L: L.nn.MarginRankingLoss(margin=0.1),
            lattice(4), lattice(4, offset=0.2), signs(4))
module_case("HingeEmbeddingLoss", "sum", lambda L: L.nn.HingeEmbeddingLoss(reduction="sum"),
            lattice(2, 3, offset=0.2), signs(2, 3))
module_case("TripletMarginLoss", "swap", lambda L: L.nn.TripletMarginLoss(swap=True),
            normal(4, 3), normal(4, 3), normal(4, 3))
module_case("TripletMarginLoss", "bad-margin", lambda L: L.nn.TripletMarginLoss(margin=-1.0),
            normal(4, 3), normal(4, 3), normal(4, 3))
module_case("PoissonNLLLoss", "full", lambda L: L.nn.PoissonNLLLoss(full=True),
            normal(2, 3), counts(2, 3))
module_case("GaussianNLLLoss", "full", lambda L: L.nn.GaussianNLLLoss(full=True),
            normal(2, 3), fixed(2, 3), positive(2, 3))
module_case("CosineEmbeddingLoss", "margin", lambda L: L.nn.CosineEmbeddingLoss(0.2),
            normal(4, 3), normal(4, 3), signs(4))


# ----------------------------------------------------------------------------- the comparison


def leaf(L: Any, array: np.ndarray, spec: Input, dtype: str) -> Any:
    """A leaf of library L holding a copy of ``array`` (float inputs in ``dtype``)."""
    array = array.astype(dtype) if array.dtype.kind == "f" else array.copy()
    t = dg.tensor(array) if L is dg else L.from_numpy(array)
    return t.requires_grad_(True) if spec.differentiable else t


def is_tensor(L: Any, value: Any) -> bool:
    return isinstance(value, L.Tensor)


def memory(L: Any, t: Any) -> np.ndarray:
    """The numpy view of a tensor's memory (dyngraph's own array, torch's storage seen through
    .numpy()), for np.shares_memory."""
    if L is dg:
        return t.array
    return t.detach().numpy()


def dtype_name(dtype: Any) -> str:
    name = str(dtype).removeprefix("torch.")
    return {"float": "float32", "double": "float64", "long": "int64", "int": "int32",
            "half": "float16", "short": "int16", "bool_": "bool"}.get(name, name)


def flatten(L: Any, value: Any) -> list[Any]:
    """The tensors of an output (a tensor, a tuple/list/namedtuple of them), in order."""
    if is_tensor(L, value):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(L, v)]
    return []


def plain(L: Any, value: Any, random: bool) -> Any:
    """An output as plain Python to compare across libraries: a tensor becomes its dtype name,
    shape and values (a float64 array; not its values where ``random``)."""
    import torch

    if is_tensor(L, value):
        shape = tuple(value.shape)
        if random:
            return ("tensor", dtype_name(value.dtype), shape)
        array = np.asarray(value.detach().double().tolist() if dtype_name(value.dtype) not in (
            "bool",) else value.detach().tolist())
        return ("tensor", dtype_name(value.dtype), shape, array)
    if isinstance(value, (torch.dtype, np.dtype)) or (
            isinstance(value, type) and issubclass(value, np.generic)):
        return ("dtype", dtype_name(np.dtype(value) if not isinstance(value, torch.dtype)
                                    else value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.name, value.shape, value.astype(np.float64))
    if isinstance(value, dict):
        return {k: plain(L, v, random) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        # (values, indices) pairs: dyngraph's ValuesIndices, SortResult, TopKResult are torch's
        # torch.return_types.max, sort, topk: compared by their fields, not their class names
        kind = "values-indices" if hasattr(value, "values") and hasattr(value, "indices") \
            else "sequence" if type(value) in (tuple, list, torch.Size) else type(value).__name__
        return (kind, [plain(L, v, random) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


@dataclass
class Outcome:
    raised: str | None = None
    values: Any = None
    aliases: list = field(default_factory=list)
    grads: list = field(default_factory=list)


def outcome(L: Any, case: Case) -> Outcome:
    """Run ``case`` with library L: what it raised, or its outputs as plain values, which output
    shares memory with which input or earlier output, and the input leaves' gradients of the
    outputs' weighted sum."""
    arrays = case.arrays()
    inputs = [leaf(L, a, spec, case.dtype) for a, spec in zip(arrays, case.inputs)]
    module = None
    try:
        out = case.program(L, *inputs)
        if case.module:
            module, out = out
        values = plain(L, out, case.random)
        if module is not None:
            values = {"output": values, "tree": tree(L, module)}
    except Exception as exc:  # noqa: BLE001 - which error is compared by the caller
        return Outcome(raised=f"{type(exc).__name__}: {exc}")
    result = Outcome(values=values)
    outs = flatten(L, out)
    arrays_out = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                  if isinstance(o, np.ndarray)]
    seen = inputs + outs
    for k, o in enumerate(outs + arrays_out):
        mine = memory(L, o) if is_tensor(L, o) else o
        result.aliases.append([
            bool(mine.size) and bool(np.shares_memory(mine, memory(L, other)))
            for other in seen[: len(inputs) + min(k, len(outs))]])
    if case.random:
        return result
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 1)
    total = None
    for o in outs:
        if o.requires_grad and o.dtype in (L.float16, L.float32, L.float64):
            w = L.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
            term = (o * w).sum()
            total = term if total is None else total + term
    if total is not None:
        try:
            total.backward()
        except Exception as exc:  # noqa: BLE001
            result.grads = [f"backward raised {type(exc).__name__}"]
            return result
    result.grads = [None if not spec.differentiable or x.grad is None
                    else np.asarray(x.grad.tolist()) for x, spec in zip(inputs, case.inputs)]
    if module is not None:
        result.grads.append({n: None if p.grad is None else np.asarray(p.grad.tolist())
                             for n, p in module.named_parameters()})
        module.zero_grad(set_to_none=False)
        result.grads.append([(n, p.grad is None or not p.grad.any().item())
                             for n, p in module.named_parameters()])
        module.zero_grad()
        result.grads.append([n for n, p in module.named_parameters() if p.grad is not None])
    return result


def _class_name(module: Any) -> str:
    """torch's MultiheadAttention.out_proj is a Linear of a private subclass's name."""
    name = type(module).__name__
    return "Linear" if name == "NonDynamicallyQuantizableLinear" else name


def tree(L: Any, module: Any) -> dict[str, Any]:
    """What a module's tree looks like from outside: the named_* orders with shapes and
    dtypes, the state_dict's keys and whether each entry is the module's own memory, the order
    ``apply`` visits, and ``training`` everywhere after eval() and train()."""
    def shaped(pairs: Any) -> list:
        return [(n, tuple(t.shape), dtype_name(t.dtype)) for n, t in pairs]

    own = dict(module.named_parameters())
    own.update(module.named_buffers())
    state = module.state_dict()
    visited: list[str] = []
    module.apply(lambda m: visited.append(_class_name(m)))
    flags = [m.training for m in module.eval().modules()]
    flags += [m.training for m in module.train().modules()]
    return {
        "named_parameters": shaped(module.named_parameters()),
        "named_buffers": shaped(module.named_buffers()),
        "named_modules": [(n, _class_name(m)) for n, m in module.named_modules()],
        "named_children": [n for n, _ in module.named_children()],
        "state_dict": [(k, k in own and v.numel() > 0 and bool(np.shares_memory(
            memory(L, v), memory(L, own[k])))) for k, v in state.items()],
        "apply": visited, "training": flags,
    }


def assert_same(mine: Any, theirs: Any, tol: dict, where: str = "") -> None:
    if isinstance(theirs, np.ndarray):
        assert isinstance(mine, np.ndarray), f"{where}: {mine!r} is not an array"
        assert mine.shape == theirs.shape, f"{where}: shape {mine.shape} != {theirs.shape}"
        if theirs.dtype == bool or mine.dtype == bool:
            np.testing.assert_array_equal(mine, theirs, err_msg=where)
        else:
            np.testing.assert_allclose(mine, theirs, err_msg=where, equal_nan=True, **tol)
    elif isinstance(theirs, dict):
        assert isinstance(mine, dict) and list(mine) == list(theirs), f"{where}: {mine!r}"
        for k in theirs:
            assert_same(mine[k], theirs[k], tol, f"{where}[{k}]")
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), \
            f"{where}: {mine!r} != {theirs!r}"
        for k, (a, b) in enumerate(zip(mine, theirs)):
            assert_same(a, b, tol, f"{where}[{k}]")
    elif _number(theirs) and _number(mine):  # 1 and 1.0 alike (calculate_gain, momentum 0);
        # which Python type item() and tolist() give is compared by their own cases
        assert math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-12), \
            f"{where}: {mine} != {theirs}"
    else:
        assert mine == theirs and type(mine) is type(theirs), \
            f"{where}: {mine!r} ({type(mine).__name__}) != {theirs!r} ({type(theirs).__name__})"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


TOLERANCE = {"float64": {"rtol": 1e-7, "atol": 1e-10}}
LOOSE = {"rtol": 2e-3, "atol": 1e-3}  # float16/float32 results


def compare(case: Case, torch: ModuleType) -> None:
    theirs = outcome(torch, case)
    if case.nonfinite:  # (PyTorch warns of none of them: their NaN is a value, as ours is)
        with np.errstate(all="ignore"):
            mine = outcome(dg, case)
    else:
        mine = outcome(dg, case)
    assert (mine.raised is None) == (theirs.raised is None), (
        f"torch {'raised ' + theirs.raised if theirs.raised else 'ran'}; "
        f"dyngraph {'raised ' + mine.raised if mine.raised else 'ran'}")
    if theirs.raised:
        return
    tol = case.tol or TOLERANCE["float64"]
    low_precision = "float32" in repr(theirs.values) or "float16" in repr(theirs.values)
    assert_same(mine.values, theirs.values, LOOSE if low_precision else tol, "values")
    assert mine.aliases == theirs.aliases, f"aliasing {mine.aliases} != torch's {theirs.aliases}"
    assert_same(mine.grads, theirs.grads, LOOSE if low_precision else tol, "grads")
