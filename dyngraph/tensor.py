"""Tensor: an array plus what autograd needs to know about it.

A Tensor holds its ``data`` (a numpy or cupy array), whether it ``requires_grad``, the node that
produced it (``grad_fn``, None for leaves), its gradient ``grad`` (leaves only, unless
``retain_grad()``), a stable integer ``id`` for diagrams, and a ``version`` counter that in-place
operations bump so that backward can notice a saved value was overwritten.

Arithmetic dunders and methods only call ops (``Mul.apply(self, other)``); all graph building
happens in ``Function.apply``.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import backend, events, grad_mode
from .handle import RemovableHandle

_ids = itertools.count(1)
new_node_id: Callable[[], int] = _ids.__next__  # stable ids for diagrams, never id()

DEFAULT_FLOAT = np.dtype(np.float32)

# Called as hook(tensor, how) when a tensor's values are read into Python (bool(t), t.item(),
# float(t), ...): dg.trace uses it to warn that control flow may depend on data.
data_read_hook: Callable[[Tensor, str], None] | None = None

# How many in-place operations have run, ever. A node that saved arrays remembers this clock; if
# it has not moved by backward time, no saved array can have been modified (the fast path).
inplace_clock = 0


class Tensor:
    """An n-dimensional array that can take part in a computation graph.

    >>> x = dg.tensor([[1., 2.]], requires_grad=True, name="x")
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([[2., 4.]])
    """

    __slots__ = (
        "array",  # the numpy or cupy array itself (`.data` is the PyTorch-style view of it)
        "_requires_grad",
        "grad_fn",
        "_grad",
        "name",
        "id",
        "_version",
        "_announced",  # events.epoch when subscribers were last told about this tensor
        "_hooks",  # leaf hooks (non-leaf hooks live on grad_fn)
        "__weakref__",
    )

    is_parameter = False  # nn.Parameter says True: diagrams draw parameters apart from inputs
    __array_ufunc__ = None  # `ndarray + tensor` defers to Tensor.__radd__ instead of numpy
    __hash__ = object.__hash__  # __eq__ is elementwise, identity stays hashable

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        dtype: Any = None,
        device: Any = None,
        name: str | None = None,
    ) -> None:
        if isinstance(data, Tensor):
            data = data.array
        if dtype is not None:
            dtype = resolve_dtype(dtype)
        if device is not None:
            xp = backend.module_for(backend.normalize_device(device))
            data = xp.asarray(backend.to_device(data, backend.normalize_device(device)))
        elif type(data) is not np.ndarray and (
            isinstance(data, np.generic) or not hasattr(data, "__array_namespace__")
        ):
            data = np.asarray(data)  # numbers, lists, numpy scalars: a Tensor holds an array
        if dtype is not None and data.dtype != dtype:
            data = data.astype(dtype)
        self.array = data
        self.grad_fn = None
        self._grad = None
        self.name = None if name is None else str(name)
        self.id = new_node_id()
        self._version = 0
        self._announced = 0
        self._hooks = None
        self._requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    # ------------------------------------------------------------------ basic properties

    @property
    def data(self) -> Any:
        # NOTE interim: the raw array; issue 13 turns this into PyTorch's detached Tensor alias.
        return self.array

    @data.setter
    def data(self, value: Any) -> None:
        self.array = value.array if isinstance(value, Tensor) else value

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def device(self) -> str:
        return backend.device_of(self.array)

    @property
    def version(self) -> int:
        """How many in-place operations changed this tensor."""
        return self._version

    @property
    def is_leaf(self) -> bool:
        """True for tensors no op produced inside a graph (inputs, parameters, constants)."""
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (a Tensor) of a leaf, after backward; None before."""
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during backward(). If you want the "
                "gradient of a non-leaf Tensor, call .retain_grad() on it before backward().",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has shape {tuple(value.shape)} but the tensor has shape "
                    f"{tuple(self.shape)}"
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return node is not None and node.retained is not None and node.retained() is self

    @property
    def T(self) -> Tensor:
        """The tensor with its dimensions reversed (a transpose for matrices)."""
        return Permute.apply(self, axes=tuple(reversed(range(self.ndim))))

    # ------------------------------------------------------------------ autograd controls

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Ask autograd to track operations on this leaf (in place; returns self)."""
        requires_grad = bool(requires_grad)
        if requires_grad and self.array.dtype.kind != "f":  # real floats (no complex autograd here)
            raise RuntimeError(
                f"Only Tensors of floating point dtype can require gradients, but this one is "
                f"{self.array.dtype}. Make it floating point first, e.g. "
                "dg.tensor([1., 2.], requires_grad=True) or .to(dg.float32)."
            )
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf tensors; use .detach() to get "
                "a tensor outside the graph"
            )
        self._requires_grad = requires_grad
        if requires_grad and events.active:
            from .function import announce_tensor

            announce_tensor(self)
        return self

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data, outside the graph (requires_grad=False)."""
        return Tensor(self.array, name=self.name)

    def retain_grad(self) -> None:
        """Keep .grad for this non-leaf tensor too during backward (leaves always keep it)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on a Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn.retained = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
        replacement of the same shape. Returns a handle with ``.remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_hook(hook)
        if self._hooks is None:
            self._hooks = {}
        handle = RemovableHandle(self._hooks)
        self._hooks[handle.key] = hook
        return handle

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves and accumulate
        it into their ``.grad`` (see dyngraph/autograd.py)."""
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    # ------------------------------------------------------------------ conversions

    def numpy(self) -> np.ndarray:
        """The data as a numpy array (a copy from the GPU; the same memory on the CPU)."""
        return backend.to_numpy(self.array)

    def item(self) -> float | int | bool:
        if data_read_hook is not None:
            data_read_hook(self, "item()")
        if self.array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self.array.size} elements cannot be converted to a Python number; "
                "reduce it first (e.g. .sum()) or index one element"
            )
        return backend.to_numpy(self.array).reshape(()).item()

    def tolist(self) -> Any:
        if data_read_hook is not None:
            data_read_hook(self, "tolist()")
        return backend.to_numpy(self.array).tolist()

    def to(self, target: Any) -> Tensor:
        """A copy on another device (``'cpu'``/``'cuda'``) or with another dtype."""
        if isinstance(target, str) and target.lower().split(":")[0] in ("cpu", "cuda"):
            device = backend.normalize_device(target)
            if device == self.device:
                return self
            backend.module_for(device)  # raises the install hint when CUDA is missing
            return ToDevice.apply(self, device=device)
        dtype = resolve_dtype(target)
        return self if dtype == self.dtype else Cast.apply(self, dtype=dtype)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def float(self) -> Tensor:
        return self.to(np.float32)

    def double(self) -> Tensor:
        return self.to(np.float64)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = backend.to_numpy(self.array)
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if data_read_hook is not None:
            data_read_hook(self, "bool()")
        return bool(self.array)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return int(self.array.size)

    def dim(self) -> int:
        return self.ndim

    # ------------------------------------------------------------------ arithmetic

    def __add__(self, other: Any) -> Tensor:
        return Add.apply(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return Add.apply(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return Sub.apply(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return Sub.apply(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return Mul.apply(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return Mul.apply(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return Div.apply(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return Div.apply(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return Pow.apply(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return Pow.apply(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return MatMul.apply(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return MatMul.apply(other, self)

    def __neg__(self) -> Tensor:
        return Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return Abs.apply(self)

    # comparisons give boolean tensors outside the graph (they have no gradient)

    def __lt__(self, other: Any) -> Tensor:
        return Tensor(self.array < _data_of(other))

    def __le__(self, other: Any) -> Tensor:
        return Tensor(self.array <= _data_of(other))

    def __gt__(self, other: Any) -> Tensor:
        return Tensor(self.array > _data_of(other))

    def __ge__(self, other: Any) -> Tensor:
        return Tensor(self.array >= _data_of(other))

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return Tensor(self.array == _data_of(other))

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return Tensor(self.array != _data_of(other))

    def __and__(self, other: Any) -> Tensor:
        return Tensor(self.array & _data_of(other))

    def __or__(self, other: Any) -> Tensor:
        return Tensor(self.array | _data_of(other))

    def __invert__(self) -> Tensor:
        return Tensor(~self.array)

    # ------------------------------------------------------------------ in place

    def __iadd__(self, other: Any) -> Tensor:
        return self._inplace(Add, "add", other)

    def __isub__(self, other: Any) -> Tensor:
        return self._inplace(Sub, "subtract", other)

    def __imul__(self, other: Any) -> Tensor:
        return self._inplace(Mul, "multiply", other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self._inplace(Div, "true_divide", other)

    def add_(self, other: Any) -> Tensor:
        return self._inplace(Add, "add", other)

    def sub_(self, other: Any) -> Tensor:
        return self._inplace(Sub, "subtract", other)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace(Mul, "multiply", other)

    def div_(self, other: Any) -> Tensor:
        return self._inplace(Div, "true_divide", other)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def fill_(self, value: Any) -> Tensor:
        if self._records_inplace(None):
            return self.mul_(0).add_(value)  # as a graph: x * 0 + value
        self.array.fill(value)
        self._bump_version()
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        key = normalize_key(key, backend.get_array_module(self.array))
        if self._records_inplace(value):
            self._bump_version()
            self._become(SetItem.apply(self, value, key=key))
        else:
            self.array[key] = backend.to_device(_data_of(value), self.device)
            self._bump_version()

    def _inplace(self, op: type, ufunc: str, other: Any) -> Tensor:
        """``self op= other``: a true in-place update when nothing is recorded; otherwise the op
        is recorded out of place and this tensor becomes its output (the name keeps pointing
        at the same Python object, as in PyTorch)."""
        other_shape = getattr(other, "shape", ())
        if other_shape != self.shape:
            try:
                broadcast = np.broadcast_shapes(self.shape, other_shape)
            except ValueError:
                broadcast = None
            if broadcast != self.shape:
                raise RuntimeError(
                    f"in-place {op.__name__}: the result would have shape "
                    f"{broadcast if broadcast is not None else 'none (not broadcastable)'} "
                    f"but the tensor being updated has shape {tuple(self.shape)} "
                    f"(other operand: {tuple(other_shape)})"
                )
        if self._records_inplace(other):
            self._bump_version()
            self._become(op.apply(self, other))
            return self
        xp = backend.get_array_module(self.array)
        other_data = _data_of(other)
        try:
            getattr(xp, ufunc)(self.array, other_data, out=self.array)
        except TypeError as exc:  # numpy's casting error, e.g. int tensor += 0.5
            raise RuntimeError(
                f"in-place {op.__name__} cannot store a result of dtype "
                f"{np.result_type(self.array, other_data)} in a tensor of dtype {self.dtype}: "
                "use the out-of-place form (x = x + ...) or convert with .to(dtype)"
            ) from exc
        self._bump_version()
        return self

    def _records_inplace(self, other: Any) -> bool:
        """Will an in-place op on this tensor be recorded in the graph? Raises for leaves."""
        other_requires = isinstance(other, Tensor) and other._requires_grad
        if not grad_mode.enabled or not (self._requires_grad or other_requires):
            return False
        if self.grad_fn is None and self._requires_grad:
            label = f" '{self.name}'" if self.name else ""
            raise RuntimeError(
                f"a leaf Variable{label} that requires grad is being used in an in-place "
                "operation. Autograd would lose track of its original value. To update a "
                "parameter, do it inside `with dg.no_grad():` (e.g. `w -= lr * w.grad`); "
                "otherwise use an out-of-place op (w = w - ...)."
            )
        return True

    def _become(self, out: Tensor) -> None:
        self.array = out.array
        self.grad_fn = out.grad_fn
        self._requires_grad = out._requires_grad
        self.id = out.id
        self._announced = out._announced

    def _bump_version(self) -> None:
        global inplace_clock
        inplace_clock += 1
        self._version += 1
        if self.grad_fn is not None:  # the node that made this tensor may have saved it
            self.grad_fn.output_version += 1
        if events.active:
            events.emit(events.VersionBumped(self.id, self._version))

    # ------------------------------------------------------------------ op methods

    def exp(self) -> Tensor:
        return Exp.apply(self)

    def log(self) -> Tensor:
        return Log.apply(self)

    def sqrt(self) -> Tensor:
        return Sqrt.apply(self)

    def sin(self) -> Tensor:
        return Sin.apply(self)

    def cos(self) -> Tensor:
        return Cos.apply(self)

    def tanh(self) -> Tensor:
        return Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return Relu.apply(self)

    def abs(self) -> Tensor:
        return Abs.apply(self)

    def neg(self) -> Tensor:
        return Neg.apply(self)

    def pow(self, exponent: Any) -> Tensor:
        return Pow.apply(self, exponent)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        return Clamp.apply(self, low=min, high=max)

    def maximum(self, other: Any) -> Tensor:
        return Maximum.apply(self, other)

    def minimum(self, other: Any) -> Tensor:
        return Minimum.apply(self, other)

    def matmul(self, other: Any) -> Tensor:
        return MatMul.apply(self, other)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return Sum.apply(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return Mean.apply(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return Max.apply(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return Min.apply(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, keepdims: bool = False, correction: int = 1) -> Tensor:
        """Variance; ``correction=1`` (the default, as in PyTorch) divides by N - 1."""
        return Var.apply(self, axis=axis, keepdims=keepdims, correction=correction)

    def logsumexp(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        return LogSumExp.apply(self, axis=axis, keepdims=keepdims)

    def softmax(self, axis: int = -1) -> Tensor:
        return Softmax.apply(self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return LogSoftmax.apply(self, axis=axis)

    def reshape(self, *shape: Any) -> Tensor:
        return Reshape.apply(self, shape=_shape_arg(shape))

    def view(self, *shape: Any) -> Tensor:
        return Reshape.apply(self, shape=_shape_arg(shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return Reshape.apply(self, shape=(1,))
        start, end = start_dim % self.ndim, end_dim % self.ndim
        shape = self.shape[:start] + (-1,) + self.shape[end + 1 :]
        return Reshape.apply(self, shape=shape)

    def squeeze(self, axis: int | None = None) -> Tensor:
        if axis is None:
            shape = tuple(n for n in self.shape if n != 1)
        elif self.shape[axis % self.ndim] == 1:
            axis = axis % self.ndim
            shape = self.shape[:axis] + self.shape[axis + 1 :]
        else:
            shape = self.shape  # PyTorch: squeezing a dimension that is not 1 does nothing
        return Reshape.apply(self, shape=shape)

    def unsqueeze(self, axis: int) -> Tensor:
        if not -(self.ndim + 1) <= axis <= self.ndim:
            raise IndexError(
                f"unsqueeze: dimension {axis} is out of range for a tensor with {self.ndim} "
                f"dimension(s) (allowed: {-(self.ndim + 1)} to {self.ndim})"
            )
        axis = axis % (self.ndim + 1)
        return Reshape.apply(self, shape=self.shape[:axis] + (1,) + self.shape[axis:])

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """Swap two dimensions (PyTorch's transpose(dim0, dim1))."""
        for dim in (dim0, dim1):
            if not -self.ndim <= dim < max(self.ndim, 1):
                raise IndexError(
                    f"transpose: dimension {dim} is out of range for a tensor of shape "
                    f"{tuple(self.shape)} (it has {self.ndim} dimension(s))"
                )
        if self.ndim < 2:
            return Reshape.apply(self, shape=self.shape)  # nothing to swap, as in PyTorch
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return Permute.apply(self, axes=tuple(axes))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return self.transpose(axis0, axis1)

    def permute(self, *axes: Any) -> Tensor:
        return Permute.apply(self, axes=_shape_arg(axes))

    def expand(self, *sizes: Any) -> Tensor:
        """Broadcast to a larger shape without copying (-1 keeps a dimension)."""
        sizes = _shape_arg(sizes)
        lead = len(sizes) - self.ndim
        shape = tuple(
            self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)
        )
        return Expand.apply(self, shape=shape)

    def __getitem__(self, key: Any) -> Tensor:
        return Index.apply(self, key=normalize_key(key, backend.get_array_module(self.array)))

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        body = np.array2string(
            backend.to_numpy(self.array), separator=", ", precision=4, prefix="tensor("
        )
        extras = []
        if self.dtype not in (DEFAULT_FLOAT, np.dtype(np.int64), np.dtype(np.bool_)):
            extras.append(f"dtype={self.dtype}")
        if self.device != backend.CPU:
            extras.append(f"device='{self.device}'")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}Backward>")
        elif self._requires_grad:
            extras.append("requires_grad=True")
        if self.name:
            extras.append(f"name={self.name!r}")
        return "tensor(" + ", ".join([body, *extras]) + ")"


# ---------------------------------------------------------------------------- helpers


def wrap_output(data: Any, grad_fn: Any) -> Tensor:
    """The fast constructor used by Function.apply: ``data`` is already an array. An output
    recorded in the graph shares its node's id."""
    tensor = Tensor.__new__(Tensor)
    tensor.array = data
    tensor._requires_grad = grad_fn is not None
    tensor.grad_fn = grad_fn
    tensor._grad = None
    tensor.name = None
    tensor.id = new_node_id() if grad_fn is None else grad_fn.id
    tensor._version = 0
    tensor._announced = 0
    tensor._hooks = None
    return tensor


def _data_of(value: Any) -> Any:
    return value.array if isinstance(value, Tensor) else value


def _shape_arg(shape: tuple) -> tuple:
    """Accept both f(2, 3) and f((2, 3))."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def normalize_key(key: Any, xp: Any) -> Any:
    """An index key with Tensors and lists turned into arrays of the tensor's array module."""
    if isinstance(key, tuple):
        return tuple(normalize_key(k, xp) for k in key)
    if isinstance(key, Tensor):
        return key.array
    if isinstance(key, list):
        return xp.asarray(key)
    return key


_DTYPE_NAMES = {
    "float32": np.float32,
    "float": np.float32,
    "float64": np.float64,
    "double": np.float64,
    "float16": np.float16,
    "int32": np.int32,
    "int64": np.int64,
    "long": np.int64,
    "int": np.int64,
    "bool": np.bool_,
}


def resolve_dtype(dtype: Any) -> np.dtype:
    """A numpy dtype from ``dg.float32``, ``'float64'``, ``np.int64``, ..."""
    if isinstance(dtype, str):
        key = dtype.lower().removeprefix("torch.").removeprefix("dg.")
        if key not in _DTYPE_NAMES:
            raise TypeError(f"unknown dtype {dtype!r}; use one of {sorted(_DTYPE_NAMES)}")
        return np.dtype(_DTYPE_NAMES[key])
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use e.g. dg.float32 or dg.float64") from None


# NOTE [import order] The ops import Function, which imports Tensor from this module; so the op
# classes used by the dunders above are imported at the bottom, once Tensor exists.
from .ops.elementwise import (  # noqa: E402
    Abs,
    Add,
    Clamp,
    Cos,
    Div,
    Exp,
    Log,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    Relu,
    Sigmoid,
    Sin,
    Sqrt,
    Sub,
    Tanh,
)
from .ops.matmul import MatMul  # noqa: E402
from .ops.reduce import LogSoftmax, LogSumExp, Max, Mean, Min, Softmax, Sum, Var  # noqa: E402
from .ops.shape import Cast, Expand, Index, Permute, Reshape, SetItem, ToDevice  # noqa: E402
