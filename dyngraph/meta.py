"""What an op states about itself before it runs: PyTorch's meta functions, in small.

Each op (dyngraph/ops) says, beside its ``forward`` and ``backward``, what a step of it makes from
inputs of given shapes and dtypes, without touching a number: ``Op.meta(shapes, dtypes,
**options) -> Meta``, and which kind of value each of its options is (``Op.option_types``). The
static-graph loader (static_io.py) asks the ops, and keeps no table of its own (NOTE [op meta]).
This module is the vocabulary those statements are written in (below the ops: it imports
numpy, backend and tensor only).

NOTE [op meta] PyTorch gives each op a *meta function* that computes its output's shape and dtype
from its inputs' (``torch._meta_registrations``): the op runs on the ``meta`` device without
data, and a program's shapes are known before anything is computed. Here the statement is a
classmethod of the op, in the op's own class:

- ``shape``: the output's exact shape, or None where the op only bounds it (a reshape's -1,
  an index: a loaded file's declared shape is then checked after the step runs);
- ``dtype``: the output's dtype as ``Function.apply`` makes it (numpy's promotion, then NOTE
  [type promotion] of function.py), or None where it follows from values, not dtypes;
- ``elements``: how many elements the step may allocate at once, its output and what it
  gathers on the way (a convolution's windows, an einsum's operands), a bound, never less;
- ``work``: about how many multiply-adds it does (elements touched): more than ``elements``
  only for ops whose work outgrows their output (MatMul, Einsum, Conv).

``Function.meta`` states the rule of most ops: their output is at most the broadcast of their
inputs (their sum, for inputs that do not broadcast together), exactly that shape for an op
that says ``elementwise = True``, each element touched once, in the dtype of the op's
``promotion`` (a ``Promotion``). Both are class attributes, written in the op's class. An op
whose shape follows another rule (a reduction's), or whose output can outgrow its inputs
through its options (Expand, Repeat, Cat, MatMul, Einsum, Conv, indexing with arrays), writes
its own ``meta`` after its ``backward``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, NamedTuple

import numpy as np

from . import backend
from . import tensor as tensor_module

Shape = tuple[int, ...]

MAX_NDIM = 32  # dims an option may name (a loaded graph's shapes have at most as many)
MAX_ELEMENTS = 2**31  # elements of one shape, and the largest size an option may ask for


class Meta(NamedTuple):
    """What a step makes, stated before it runs (NOTE [op meta])."""

    elements: int  # elements it may allocate at once: its output and what it gathers on the way
    shape: Shape | None  # its output's exact shape; None where the op only bounds it
    dtype: np.dtype | None  # its output's dtype; None where it depends on values
    work: int  # about how many multiply-adds it does (elements touched)


class OptionType(NamedTuple):
    """One kind of option value: ``check(value)`` says whether a value is one, ``says`` names
    the kind for an error, and ``is_axis`` marks an axis of the op's first input (checked
    against its number of dims: -ndim <= axis < ndim)."""

    check: Callable[[Any], bool]
    says: str
    is_axis: bool = False


# ----------------------------------------------------------------------------- option kinds

# NOTE [option types] An op trusts its options: a float where a size belongs, ``true`` for an
# axis, a negative repeat count would fail deep inside numpy, or worse, work. So each op states
# the kind of each option it takes (``option_types``), and a loaded graph's options are checked
# against it before any op sees them. The kinds are written once, below, and shared: one name
# means one kind of value across ops (a "dim" is a dim of the op's input wherever it appears,
# Cat's and Stack's "axis" alone being an axis of their result).


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def _int_between(low: int | None = None, high: int | None = None) -> Callable[[Any], bool]:
    return lambda v: is_int(v) and (low is None or v >= low) and (high is None or v <= high)


def _ints(check: Callable[[Any], bool], max_len: int = MAX_NDIM) -> Callable[[Any], bool]:
    """An int, or a tuple or list of at most ``max_len`` ints, each passing ``check``."""
    def test(value: Any) -> bool:
        if isinstance(value, (tuple, list)):
            return len(value) <= max_len and all(check(v) for v in value)
        return check(value)
    return test


def one_of(*choices: str) -> OptionType:
    """One of these strings ("mean", "sum" or "none")."""
    quoted = [f'"{c}"' for c in choices]
    says = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
    return OptionType(lambda v: isinstance(v, str) and v in choices, says)


_AXIS = _int_between(-MAX_NDIM - 1, MAX_NDIM)
_SIZE = _int_between(0, MAX_ELEMENTS)

AXIS = OptionType(lambda v: v is None or _ints(_AXIS)(v), "null, an integer axis or a list of them",
                  is_axis=True)
DIM = OptionType(AXIS.check, "null, an integer dim or a list of them", is_axis=True)
DIMS = OptionType(_ints(_AXIS), "an integer dim or a list of them", is_axis=True)
AXES = OptionType(_ints(_AXIS), "a list of integer axes", is_axis=True)
NEW_AXIS = OptionType(AXIS.check, AXIS.says)  # Cat's, Stack's: an axis of the result
FLAG = OptionType(lambda v: isinstance(v, bool), "true or false")
SHAPE = OptionType(
    lambda v: isinstance(v, (tuple, list)) and _ints(_int_between(-1, MAX_ELEMENTS))(v),
    "a list of sizes (integers from -1 up)")
SIZES = OptionType(lambda v: isinstance(v, (tuple, list)) and _ints(_SIZE)(v),
                   "a list of non-negative integer sizes")
WINDOW = OptionType(_ints(_int_between(1, MAX_ELEMENTS), 3), "a positive integer or a list")
PADDING = OptionType(_ints(_int_between(0, MAX_ELEMENTS), 3), "a non-negative integer or a list")
POSITIVE_INT = OptionType(_int_between(1, MAX_ELEMENTS), "a positive integer")
COUNT = OptionType(_int_between(0, MAX_ELEMENTS), "a non-negative integer")
OFFSET = OptionType(_int_between(-MAX_ELEMENTS, MAX_ELEMENTS), "an integer")
INT = OptionType(_int_between(), "an integer")
NUMBER = OptionType(is_number, "a number")
NUMBER_OR_NONE = OptionType(lambda v: v is None or is_number(v), "null or a number")
NUMBER_OR_ARRAY = OptionType(
    lambda v: is_number(v) or isinstance(v, (bool, np.bool_)) or backend.is_array(v),
    "a number or an array")
ARRAY_OR_NONE = OptionType(lambda v: v is None or backend.is_array(v), "null or an array")
NORM_ORDER = OptionType(lambda v: is_number(v) or v == "fro", 'a number or "fro"')
REDUCTION = one_of("mean", "sum", "none")
DEVICE = OptionType(lambda v: isinstance(v, str), "a device name")
EQUATION = OptionType(lambda v: isinstance(v, str), "an einsum equation")
DTYPE = OptionType(lambda v: isinstance(v, np.dtype), 'a {"dtype": ...} object')
# An index ("key", "steps") takes every form an index may have: its decoding (the tagged values
# of NOTE [option encoding] in static_io.py) is its check, and what it selects is bounded by the
# indexing ops' own meta.


# ----------------------------------------------------------------------------- sizes


def count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def broadcast_or_sum(shapes: Sequence[Shape]) -> int:
    """The elements of the inputs' broadcast; of all of them, for inputs that do not broadcast
    together (Cat's, MatMul-like ones): what an op that cannot outgrow its inputs may make."""
    try:
        return count(np.broadcast_shapes(*shapes))
    except ValueError:
        return sum(map(count, shapes))


def index_bound(shape: Shape, parts: tuple) -> int:
    """At most how many elements ``x[key]`` has: the broadcast size of the index arrays times
    the dims no array or integer consumes (slices can only shrink those): what Index,
    SetItem and CopySlices may select with integer or boolean arrays in their key."""
    arrays = [np.asarray(backend.to_numpy(p) if backend.is_array(p) else p) for p in parts
              if isinstance(p, list) or backend.is_array(p)]
    consumed = [a.ndim if a.dtype == np.bool_ else 1 for a in arrays]
    consumed += [1 for p in parts if is_int(p) or isinstance(p, slice)]
    try:
        index_shape = np.broadcast_shapes(
            *[(int(a.sum()),) if a.dtype == np.bool_ else a.shape for a in arrays])
    except ValueError as exc:
        raise ValueError(f"the index arrays do not broadcast together: {exc}") from None
    kept, dim = 1, 0
    for p in parts:
        if p is None:
            continue
        if p is Ellipsis:
            width = len(shape) - sum(consumed)
            kept *= math.prod(shape[dim : dim + max(width, 0)])
            dim += max(width, 0)
        elif isinstance(p, slice):
            kept *= shape[dim] if dim < len(shape) else 1
            dim += 1
        else:
            dim += np.asarray(p).ndim if np.asarray(p).dtype == np.bool_ else 1
    kept *= math.prod(shape[dim:])
    return count(index_shape) * kept


# ----------------------------------------------------------------------------- dtypes

# What the ``dtypes`` of a meta holds, per input: the dtype of an array; a number itself (a
# Python number is weak in numpy's promotion, a numpy scalar is not); None for a missing input.

_FLOAT64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)
INT64 = np.dtype(np.int64)


def _like_apply(result: np.dtype, dtypes: Sequence[Any]) -> np.dtype:
    """NOTE [type promotion] of function.py, as ``apply`` does it: a float64 made from no
    float64 array is the widest float among the arrays, else the default float."""
    if result != _FLOAT64:
        return result
    arrays = [d for d in dtypes if isinstance(d, np.dtype) and d.kind == "f"]
    if any(d == _FLOAT64 for d in arrays):
        return result
    widest = None
    for d in arrays:
        widest = d if widest is None else np.promote_types(widest, d)
    return tensor_module.DEFAULT_FLOAT if widest is None else widest


def _numpy_result(dtypes: Sequence[Any]) -> np.dtype:
    """numpy's common type of these dtypes and numbers. Only a number's type matters (a Python
    number is weak, a numpy scalar is its dtype), so the answer is remembered per types."""
    return _common_type(tuple(d if isinstance(d, np.dtype) else type(d) for d in dtypes
                              if d is not None))


_WEAK = (bool, int, float, complex)  # Python's numbers: weak in numpy's promotion (NEP 50)


@functools.lru_cache(maxsize=1024)
def _common_type(kinds: tuple) -> np.dtype:
    return np.result_type(*(kind() if isinstance(kind, type) and kind in _WEAK else kind
                            for kind in kinds))


class Promotion(Enum):
    """How an op's output dtype follows from its inputs' (PyTorch's
    ``ELEMENTWISE_TYPE_PROMOTION_KIND``), each ending in NOTE [type promotion] as ``apply`` does.

    - DEFAULT: the inputs' common type (+, *, max, reshape, matmul);
    - INT_TO_FLOAT: numpy's float ufuncs (exp, log, tanh): float16 from int8 and bool, float32
      from int16, float64 (so the default float) from wider integers;
    - INT_TO_DEFAULT_FLOAT: a float from any integers, the default one (/, mean, var, sigmoid);
    - ACCUMULATE: a sum's, product's or running sum's: numpy widens bool and small integers to
      the platform's integer (an int32 sum is int64, a uint8 one uint64);
    - FIRST_INPUT: the first input's (gather, index, sort: values are moved, not computed).
    """

    DEFAULT = "default"
    INT_TO_FLOAT = "int to float"
    INT_TO_DEFAULT_FLOAT = "int to default float"
    ACCUMULATE = "accumulate"
    FIRST_INPUT = "first input"

    def dtype(self, dtypes: Sequence[Any]) -> np.dtype:
        if self is Promotion.FIRST_INPUT:
            return _numpy_result(dtypes[:1])
        common = _numpy_result(dtypes)
        if self is Promotion.INT_TO_FLOAT:
            common = np.result_type(common, np.float16)
        elif self is Promotion.INT_TO_DEFAULT_FLOAT:
            common = np.result_type(common, _FLOAT64)
        elif self is Promotion.ACCUMULATE and (common.kind == "b" or (
                common.kind in "iu" and common.itemsize < np.dtype(np.int_).itemsize)):
            common = np.dtype(np.uint64 if common.kind == "u" else np.int_)
        return _like_apply(common, dtypes)


def dtype_of(value: Any) -> Any:
    """What a meta's ``dtypes`` holds for one input: an array's dtype, a number as it is."""
    value = getattr(value, "array", value)  # a Tensor: its array
    if value is None or isinstance(value, (bool, int, float, np.generic)):
        return value
    dtype = getattr(value, "dtype", None)
    return np.dtype(dtype) if dtype is not None else np.asarray(value).dtype


def shape_of(value: Any) -> Shape:
    return tuple(value.shape) if hasattr(value, "shape") else tuple(np.shape(value))
