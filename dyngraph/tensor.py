"""Tensor: an array plus what autograd needs to know about it.

A Tensor holds its ``data`` (a numpy or cupy array), whether it ``requires_grad``, the node that
produced it (``grad_fn``, None for leaves), its gradient ``grad`` (leaves only, unless
``retain_grad()``), a stable integer ``id`` for diagrams, and a ``version`` counter that in-place
operations bump so that backward can notice a saved value was overwritten.

Arithmetic dunders and methods only call ops (``Mul.apply(self, other)``); all graph building
happens in ``Function.apply``.
"""

from __future__ import annotations

import math
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from . import backend, grad_mode
from .missing import tensor_attribute_error
from .spine import events
from .spine.events import new_node_id  # noqa: F401 - re-exported
from .spine.handle import RemovableHandle
from .spine.thread_state import this_thread

DEFAULT_FLOAT = np.dtype(np.float32)

# How many in-place operations have run, ever. A node that saved arrays remembers this clock; if
# it has not moved by backward time, no saved array can have been modified (the fast path).
#
# NOTE [one clock for every thread] Modes and hooks are per thread (thread_state.py); this clock
# is deliberately not. It answers "could anything have written into memory this node saved?",
# and a tensor is shared between threads like any Python object: a thread may write into an
# array that another thread's graph saved. A clock per thread would not move in the thread that
# runs backward, the fast path would skip the version check, and the gradient would be computed
# from the new numbers, silently (tests/test_threads.py holds this against PyTorch). Shared, a
# write anywhere only costs other threads the full check, which is exact. It ticks under a lock:
# `+= 1` from two threads at once can lose a tick, and a node saved between the two would then
# see the clock it saved although a write came after it.
inplace_clock = 0
_inplace_clock_lock = threading.Lock()

# NOTE [version counters] One counter per array memory, not per Tensor object. Every tensor that
# aliases another's memory - a view from reshape / view / transpose / permute / expand / T /
# squeeze / unsqueeze / flatten or basic indexing (when numpy made a view, not a copy),
# ``detach()``, ``.data`` - shares its VersionCounter, so an in-place change through any alias
# bumps the one counter a graph's saved-value check reads ("modified by an inplace operation" at
# backward, as in PyTorch). (PyTorch gives ``.data`` a fresh counter, its escape hatch around
# the check; dyngraph shares it: never a silently wrong gradient.) Counters are made lazily: a
# tensor starts with ``_counter = None`` (version 0) and gets one when it is first bumped or
# aliased, so Function.apply allocates nothing. A node remembers (saved position, input Tensor,
# its version now) for each saved input, and reads the Tensor's counter at backward; it must not
# hold its own output (no cycles), so an op's output keeps its counter on its node
# (``Function.output_counter``), where the check for a saved output reads it. A recorded
# in-place op (``h += 1`` on a tensor in a graph) writes its result into the tensor's memory and
# its node takes that counter as its output's (NOTE [views and in-place]), so the version keeps
# counting.
# numpy writes cannot bump a counter: ``x.numpy()`` refuses a tensor that requires grad (as in
# PyTorch: use ``x.detach().numpy()``), and the array an alias of such a tensor hands to numpy
# (``x.detach().numpy()``, ``x.data.numpy()``, ``np.asarray(x)``) is a read-only view - the
# memory is the graph's. A tensor never linked to one that requires grad gives numpy its array
# itself, writable, as PyTorch does; writes through it are not counted (``dg.from_numpy`` too).


class VersionCounter:
    """How many in-place changes one array's memory has seen (NOTE [version counters])."""

    __slots__ = ("value", "guarded", "rewrites")

    def __init__(self) -> None:
        self.value = 0
        self.guarded = False  # shared with a tensor that requires grad: numpy gets it read-only
        self.rewrites = 0  # how many recorded in-place ops rewrote the history of this memory


# NOTE [views and in-place] As in PyTorch, a view (basic indexing, view / reshape when numpy
# can view, t / transpose / permute, squeeze / unsqueeze / flatten, expand; a view of a view)
# shares its base's memory and version counter, and remembers how it was taken from its base:
# the view ops, replayed (``ViewOf.steps``). An in-place op writes into that memory, so the
# base and every other view see the new values, and it rewrites the graph the way PyTorch
# does (Tensor._write_recorded, the one place that does):
#
# - on a tensor that is no view (``x.mul_(2)``), the op runs on a copy of the old values and
#   its node becomes the tensor's history (``MulBackward``, as in PyTorch's ``MulBackward0``);
# - through a view (``x[0].mul_(10)``, ``x.t().add_(1)``, ``x[1:] = y``), the op's result is
#   written into the base's memory by one more node, ``CopySlices`` (PyTorch's name): "this
#   region of the base was replaced by that value". Gradient flows through it to the old base
#   outside the region and to the value inside it. The base's history is now CopySlices; a
#   view's own grad_fn is made again from the base the next time it is used (``_sync_view``).
#
# What PyTorch refuses is refused with its message: an in-place op on a view of a leaf that
# requires grad, on a view made under no_grad of a tensor that requires grad (with grad mode
# on), on one of several views a single op returned (split, chunk, unbind), and on memory in
# which several elements are one (an expanded tensor). Saved values still guard gradients: an
# op that saved what an in-place op then overwrote raises at backward (NOTE [version counters]).


class ViewOf:
    """How a view was taken from its base (NOTE [views and in-place])."""

    __slots__ = ("base", "steps", "rewrites", "version", "creation")

    def __init__(self, base: Tensor, steps: tuple, counter: VersionCounter, creation: Any) -> None:
        self.base = base  # the tensor that owns the memory (never itself a view)
        self.steps = steps  # ((op, options), ...): the view ops that take the base to the view
        self.rewrites = counter.rewrites  # the counter's rewrites when its grad_fn was made
        self.version = counter.value  # and its version (checked for the views of creation)
        self.creation = creation  # None; "no_grad"; or (op name, output index) of split/unbind


# NOTE [the legacy constructor] ``torch.Tensor(...)`` and ``torch.FloatTensor(...)`` & co. are
# PyTorch's legacy constructors, still in tutorials: ``torch.Tensor([10000.0])``,
# ``torch.Tensor(2, 3)``. dyngraph's ``Tensor(...)`` and ``dg.FloatTensor(...)`` (factories.py)
# follow them:
#
# - Python data (a list of numbers, nested lists, a tuple) gives the default dtype, float32,
#   whatever the values are (``dg.Tensor([1, 2])`` is float32, as ``torch.Tensor([1, 2])``); the
#   typed constructors give their own (``dg.LongTensor([1.7, -1.7])`` truncates to [1, -1]);
# - integers alone are sizes: ``dg.Tensor(2, 3)`` has shape (2, 3). PyTorch leaves such a tensor
#   uninitialised (whatever the memory held); dyngraph fills it with zeros, so that a program
#   that reads it before writing it gives the same numbers every run. ``dg.Tensor()`` is empty,
#   shape (0,);
# - a lone Python float or bool is refused (TypeError), as PyTorch refuses it: ``dg.tensor(2.5)``
#   makes a 0-d tensor;
# - an array (numpy or cupy, or a numpy scalar) is wrapped as it is, keeping its dtype: that is
#   how dyngraph makes every tensor internally. (PyTorch's ``torch.Tensor(np_array)`` converts
#   to float32 and treats a numpy integer scalar as a size; ``dg.tensor(...)`` is the spelling
#   both libraries agree on.) The typed constructors do convert arrays to their dtype.
_NO_DATA: Any = object()


def legacy_data(data: Any, sizes: tuple, fn: str, dtype: Any) -> Any:
    """The array that PyTorch's legacy constructor ``fn(data, *sizes)`` makes (NOTE [the
    legacy constructor]): ``data`` is no array and no Tensor here."""
    dtype = resolve_dtype(dtype)
    if data is _NO_DATA:
        return np.zeros((0,), dtype=dtype)
    if isinstance(data, np.generic) and not sizes:  # a numpy scalar: a 0-d array, its dtype
        return np.asarray(data)
    if isinstance(data, int) and not isinstance(data, bool):  # sizes: fn(2, 3)
        shape = (data, *sizes)
        for size in shape:
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
                raise TypeError(
                    f"{fn}(): sizes must be integers, got {type(size).__name__} {size!r} in "
                    f"{shape!r}"
                )
        if any(size < 0 for size in shape):
            raise RuntimeError(f"{fn}(): Trying to create tensor with negative dimension "
                               f"{min(shape)}: {list(shape)}")
        return np.zeros(tuple(int(size) for size in shape), dtype=dtype)
    if sizes:
        raise TypeError(
            f"{fn}(): a data argument ({type(data).__name__}) cannot be followed by sizes"
        )
    if isinstance(data, (float, bool, complex)):
        raise TypeError(
            f"{fn}(): data must be a sequence (got {type(data).__name__}), as in PyTorch: "
            f"dg.tensor({data!r}) makes a 0-d tensor"
        )
    if isinstance(data, (str, bytes)):
        raise TypeError(f"{fn}(): data must be a sequence of numbers (got {type(data).__name__})")
    try:
        array = np.array(data)
    except ValueError as exc:
        raise ValueError(f"{fn}(): could not make a tensor from this data: {exc}") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{fn}(): could not make a tensor from data of dtype {array.dtype}: use numbers, or "
            "(nested) lists of numbers"
        )
    try:
        return np.array(data, dtype=dtype) if array.dtype.kind in "iu" else array.astype(dtype)
    except OverflowError as exc:  # an integer out of the range of an integer dtype
        raise RuntimeError(f"{fn}(): {exc}") from None


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
        "_grad_fn",  # the node that made it (``grad_fn``, read through the property below)
        "_grad",
        "name",
        "id",
        "_counter",  # the VersionCounter shared with every alias of the array, or None (version 0)
        "_announced",  # the epoch in which subscribers were last told about this tensor
        "_hooks",  # leaf hooks (non-leaf hooks live on grad_fn)
        "_view",  # a ViewOf when this tensor is a view of another's memory, else None
        "__weakref__",
        "__dict__",  # a learner's own attributes, as PyTorch allows (x.g = ..., fast.ai's
        # p.grad_avg = ...); made only when one is set, so a tensor without any costs nothing
    )

    is_parameter = False  # nn.Parameter says True: diagrams draw parameters apart from inputs
    __array_ufunc__ = None  # `ndarray + tensor` defers to Tensor.__radd__ instead of numpy
    __hash__ = object.__hash__  # __eq__ is elementwise, identity stays hashable

    def __init__(
        self,
        data: Any = _NO_DATA,
        *sizes: Any,
        requires_grad: bool = False,
        dtype: Any = None,
        device: Any = None,
        name: str | None = None,
    ) -> None:
        """``dg.Tensor(array)`` wraps an array (numpy or cupy; no copy, its dtype kept): how
        dyngraph itself makes tensors. Called as PyTorch's legacy constructor
        ``torch.Tensor(...)``, it does what that does (NOTE [the legacy constructor])."""
        if isinstance(data, Tensor):
            if sizes:
                raise TypeError("Tensor(): sizes cannot follow a tensor (use .reshape(...))")
            data = data.array
        elif type(data) is not np.ndarray and not backend.is_array(data):
            data = legacy_data(data, sizes, "Tensor", DEFAULT_FLOAT if dtype is None else dtype)
        elif sizes:
            raise TypeError("Tensor(): sizes cannot follow an array (use .reshape(...))")
        if dtype is not None:
            dtype = resolve_dtype(dtype)
        if device is not None:
            xp = backend.module_for(backend.normalize_device(device))
            data = xp.asarray(backend.to_device(data, backend.normalize_device(device)))
        if dtype is not None and data.dtype != dtype:
            data = data.astype(dtype)
        self.array = data
        self._grad_fn = None
        self._grad = None
        self.name = None if name is None else str(name)
        self.id = new_node_id()
        self._counter = None
        self._announced = 0
        self._hooks = None
        self._view = None
        self._requires_grad = False
        if requires_grad is not False:
            self.requires_grad_(requires_grad)  # a bool, or a clear TypeError

    def __getattr__(self, name: str) -> Any:
        """Only called when the ordinary lookup fails: a name no Tensor has (``x.masked_fill_``)
        raises an AttributeError naming PyTorch's spelling and the nearest names dyngraph has
        (NOTE [missing names], missing.py)."""
        if hasattr(type(self), name):  # a property (or an unset slot) that raised itself:
            return object.__getattribute__(self, name)  # its own error, unchanged
        raise tensor_attribute_error(self, name)

    # ------------------------------------------------------------------ basic properties

    @property
    def data(self) -> Tensor:
        """This tensor's values as a Tensor outside the graph (requires_grad=False), sharing
        its memory and its version counter: ``p.data += -lr * p.grad`` updates ``p``.

        (The raw numpy/cupy array is ``.array``; ``.numpy()`` hands it to numpy.)"""
        out = wrap_output(self.array, None)
        out.name = self.name
        return self._alias(out)

    @data.setter
    def data(self, value: Any) -> None:
        """``p.data = t`` (a Tensor, or a numpy/cupy array): this tensor now holds that array
        (any shape; a tensor that requires grad keeps a floating point dtype). Its version
        counter stays: the graph keeps what it saved, the old array, unchanged."""
        array = value.array if isinstance(value, Tensor) else value
        if not backend.is_array(array):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}: assign a "
                "Tensor or a numpy array (e.g. x.data = dg.tensor(...))"
            )
        if self._requires_grad and array.dtype.kind != "f":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                f"dtype, not {array.dtype}"
            )
        if backend.device_of(array) != self.device:
            raise RuntimeError(
                f"data on {backend.device_of(array)} cannot be set on a tensor on {self.device}: "
                "move it first (.to(device))"
            )
        self.array = array

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
    def device(self) -> backend.device:
        return backend.device(backend.device_of(self.array))

    @property
    def version(self) -> int:
        """How many in-place operations changed this tensor's memory, through it or through any
        alias of it (NOTE [version counters])."""
        return self._shared_counter().value

    def _shared_counter(self) -> VersionCounter:
        """This tensor's version counter, made now if it has none yet (an op's output's lives
        on its node, which may have saved the output)."""
        counter = self._counter
        if counter is None:
            node = self._grad_fn
            if node is None:
                counter = VersionCounter()
            else:
                counter = node.output_counter
                if counter is None:
                    counter = node.output_counter = VersionCounter()
            self._counter = counter
        return counter

    def _alias(self, out: Tensor) -> Tensor:
        """``out`` holds this tensor's memory (or part of it): one version counter for both."""
        counter = self._shared_counter()
        out._counter = counter
        if self._requires_grad or out._requires_grad:
            counter.guarded = True
        return out

    # ------------------------------------------------------------------ views

    def _make_view(self, op: type, **options: Any) -> Tensor:
        """``op.apply(self, **options)`` for a shape op or basic indexing. When numpy made a view
        (the same memory), the result is a view of this tensor's base: it shares the memory and
        the version counter, and remembers how it was taken from the base (NOTE [views and
        in-place]). When numpy had to copy (advanced indexing), it is a tensor of its own."""
        out = op.apply(self, **options)
        other = out.array
        if not (other is self.array
                or (other.base is not None and _may_share_memory(other, self.array))):
            return out
        self._alias(out)
        outer = self._view
        if outer is None:
            base, steps, creation = self, (), None
        else:
            base, steps, creation = outer.base, outer.steps, outer.creation
        if creation is None and base._requires_grad and not grad_mode.is_grad_enabled():
            creation = "no_grad"
        out._view = ViewOf(base, steps + ((op, options),), out._counter, creation)
        return out

    def _sync_view(self, strict: bool = True) -> None:
        """A view whose base's history was rewritten by an in-place op (through the base or any
        of its views) since this view's grad_fn was made takes a fresh one: its view ops replayed
        on the base as it is now. PyTorch regenerates a view's grad_fn the same way, lazily, and
        refuses for views it cannot regenerate (unless ``strict`` is False: reading a flag)."""
        view = self._view
        counter = self._counter
        if view.rewrites == counter.rewrites and (view.creation is None
                                                  or view.version == counter.value):
            return
        base = view.base
        if view.creation is not None and not strict:
            self._requires_grad = base._requires_grad
            return
        view.rewrites, view.version = counter.rewrites, counter.value
        if not base._requires_grad:
            return
        if view.creation == "no_grad":
            raise RuntimeError(
                "A view was created in no_grad mode and its base or another view of its base "
                "has been modified inplace with grad mode enabled. Given that this use case is "
                "ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
                "both the view and the inplace either both inside the no_grad block (if you "
                "don't want the inplace to be tracked) or both outside (if you want the inplace "
                "to be tracked)."
            )
        if view.creation is not None:
            op_name, index = view.creation
            raise RuntimeError(
                f"Output {index} of {op_name} is a view and its base or another view of its base "
                "has been modified inplace. This view is the output of a function that returns "
                "multiple views. Such functions do not allow the output views to be modified "
                "inplace. You should replace the inplace operation by an out-of-place one (or "
                "take the pieces again after it)."
            )
        with grad_mode.enable_grad():  # the view of a base in the graph is in the graph
            fresh = base
            for op, options in view.steps:
                fresh = op.apply(fresh, **options)
        self._take_node_of(fresh)

    @property
    def grad_fn(self) -> Any:
        """The node that made this tensor (PyTorch's ``grad_fn``), None for a leaf."""
        if self._view is not None:
            self._sync_view()
        return self._grad_fn

    def is_contiguous(self) -> bool:
        """Do the values lie in memory row after row, with no gaps (C order)? A transpose or a
        strided slice is not; ``.contiguous()`` makes a copy that is."""
        return bool(self.array.flags.c_contiguous)

    def contiguous(self) -> Tensor:
        """This tensor if it is contiguous, else a contiguous copy (in the graph: the gradient
        flows back to this tensor)."""
        return self if self.is_contiguous() else Clone.apply(self)

    @property
    def is_leaf(self) -> bool:
        """True for tensors no op produced inside a graph (inputs, parameters, constants)."""
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._view is not None:
            self._sync_view(strict=False)
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
            if value.dtype != self.dtype:  # as PyTorch: backward adds into it in place
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype {value.dtype} to a tensor of "
                    f"dtype {self.dtype}: the gradient must have the tensor's dtype (convert it "
                    f"first, e.g. g.to(dg.{self.dtype}))"
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return node is not None and node.retained is not None and node.retained() is self

    @property
    def T(self) -> Tensor:
        """The tensor with its dimensions reversed (a transpose for matrices)."""
        return self._make_view(Permute, axes=tuple(reversed(range(self.ndim))))

    # ------------------------------------------------------------------ autograd controls

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Ask autograd to track operations on this leaf (in place; returns self)."""
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TypeError(
                f"requires_grad must be a bool (True or False), not "
                f"{type(requires_grad).__name__}"
            )
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
        if requires_grad and this_thread.state.active:
            from .function import announce_tensor

            announce_tensor(self)
        return self

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's data and version counter, outside the graph
        (requires_grad=False): in-place changes through either one are seen by both, and by
        backward's check of saved values (NOTE [version counters])."""
        out = wrap_output(self.array, None)
        out.name = self.name
        return self._alias(out)

    def detach_(self) -> Tensor:
        """Make this tensor itself a leaf outside the graph (requires_grad=False), keeping its
        memory: d2l's ``state.detach_()`` between batches of a recurrent net. As PyTorch, a
        view cannot be detached in place (use ``detach()``)."""
        if self._view is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        fresh = wrap_output(self.array, None)
        self._grad_fn, self.id, self._announced = None, fresh.id, fresh._announced
        self._requires_grad = False
        return self

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
        """The data as a numpy array (a copy from the GPU; the same memory on the CPU).

        Refused for a tensor that requires grad, as in PyTorch: use ``x.detach().numpy()``.
        Read-only when the memory is also a graph's (an alias of a tensor that requires grad),
        since numpy writes bypass the version counter (NOTE [version counters])."""
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._host_array()

    def _host_array(self) -> np.ndarray:
        array = self.array
        if type(array) is not np.ndarray:
            return backend.to_numpy(array)  # a host copy: numpy writes cannot reach the tensor
        counter = self._counter
        if counter is not None and counter.guarded and array.flags.writeable:
            array = array.view()
            array.flags.writeable = False
        return array

    def item(self) -> float | int | bool:
        if this_thread.state.function_hooks:
            _tell_hooks_data_read(self, "item()")
        if self.array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self.array.size} elements cannot be converted to a Python number; "
                "reduce it first (e.g. .sum()) or index one element"
            )
        return backend.to_numpy(self.array).reshape(()).item()

    def tolist(self) -> Any:
        if this_thread.state.function_hooks:
            _tell_hooks_data_read(self, "tolist()")
        return backend.to_numpy(self.array).tolist()

    def to(self, *args: Any, dtype: Any = None, device: Any = None, non_blocking: bool = False,
           copy: bool = False) -> Tensor:
        """A copy on another device (``'cpu'``/``'cuda'``), with another dtype, or both:
        ``x.to('cuda')``, ``x.to(dg.float64)``, ``x.to('cpu', dg.float32)``, ``x.to(other)``
        (other's device and dtype). Returns ``self`` when nothing changes (a copy all the same
        with ``copy=True``); differentiable. ``non_blocking`` changes nothing here."""
        if copy:
            out = self.to(*args, dtype=dtype, device=device)
            return Clone.apply(out) if out is self else out
        for arg in args:
            if isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, str) and arg.lower().split(":")[0] in ("cpu", "cuda"):
                device = arg
            else:
                dtype = arg
        out = self
        if device is not None:
            device = backend.normalize_device(device)
            if device != out.device:
                backend.module_for(device)  # raises the install hint when CUDA is missing
                out = ToDevice.apply(out, device=device)
        if dtype is not None:
            dtype = resolve_dtype(dtype)
            if dtype != out.dtype:
                out = Cast.apply(out, dtype=dtype)
        return out

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def float(self) -> Tensor:
        return self.to(np.float32)

    def double(self) -> Tensor:
        return self.to(np.float64)

    def int(self) -> Tensor:
        return self.to(np.int32)

    def long(self) -> Tensor:
        """The values as int64 (class indices for cross_entropy, nll_loss, one_hot, gather)."""
        return self.to(np.int64)

    def bool(self) -> Tensor:
        return self.to(np.bool_)

    def type(self, dtype: Any = None) -> Any:
        """``x.type(dg.float32)`` is ``x.to(dg.float32)``; ``x.type()`` names the dtype as
        PyTorch does ('dg.FloatTensor')."""
        if dtype is None:
            return f"dg.{scalar_type_name(self.dtype)}Tensor"
        return self.to(dtype)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._requires_grad:  # np.asarray(x) reads; it cannot write into x's graph
            array = self.array
            if type(array) is np.ndarray and array.flags.writeable:
                array = array.view()
                array.flags.writeable = False
            array = backend.to_numpy(array)
        else:
            array = self._host_array()
        if copy:
            return np.array(array, dtype=dtype, copy=True)
        return array if dtype is None else array.astype(dtype, copy=False)

    def __dlpack__(self, **kwargs: Any) -> Any:
        """The DLPack protocol, so other libraries can read a tensor: ``torch.tensor(x)`` copies
        a dyngraph tensor's values (``torch.tensor(v) for v in model.state_dict().values()``).
        Refused for a tensor that requires grad, as PyTorch refuses it; memory that a graph
        also holds (NOTE [version counters]) is handed over as a copy, since writes from
        outside could not bump its version counter."""
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        array = self.array
        counter = self._counter
        if counter is not None and counter.guarded:
            array = array.copy()
        return array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self.array.__dlpack_device__()

    def __float__(self) -> float:
        return float(self.item())

    def __format__(self, format_spec: str) -> str:
        """A 0-d tensor formats as its number (``'{:+.2f}'.format(w)``, ``f'{loss:.4f}'``), as
        in PyTorch; any other tensor only with an empty spec (its repr)."""
        if self.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if this_thread.state.function_hooks:
            _tell_hooks_data_read(self, "bool()")
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
        """How many numbers the tensor holds (the product of its shape)."""
        return int(self.array.size)

    def nelement(self) -> int:
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

    def __floordiv__(self, other: Any) -> Tensor:
        return _floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return self.remainder(other)

    def __rmod__(self, other: Any) -> Tensor:
        """``2.5 % x``: in the graph, with no derivative (PyTorch has none for a number's
        remainder by a tensor; tensor % tensor has one: ``remainder``)."""
        return RemainderOfNumber.apply(other, self)

    def remainder(self, other: Any) -> Tensor:
        """Python's ``%``: a - floor(a / b) * b, with the sign of b. For floats the gradient is
        1 for a and -floor(a / b) for b, as PyTorch's; integers stay integers."""
        floats = self.dtype.kind == "f" or isinstance(other, float) or (
            isinstance(other, Tensor) and other.dtype.kind == "f")
        if floats:
            a = self.float() if self.dtype.kind == "b" else self  # (no bool - float: Sub)
            return a - (a / other).floor() * other
        _refuse_two_bools("remainder", self, other)
        return Tensor(backend.get_array_module(self.array).mod(self.array, _data_of(other)))

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

    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        """self += alpha * other, in place (``p.data.add_(g, alpha=-lr)``)."""
        return self._inplace(Add, "add", other if alpha == 1 else other * alpha)

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        """self -= alpha * other, in place."""
        return self._inplace(Sub, "subtract", other if alpha == 1 else other * alpha)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace(Mul, "multiply", other)

    def div_(self, other: Any) -> Tensor:
        return self._inplace(Div, "true_divide", other)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    # NOTE [the in-place forms]: x.clamp_(0, 1), x.exp_(), x.masked_fill_(m, v), ... are x's
    # out-of-place op written back into x's memory, one method each over ``_inplace_result``:
    # the op is recorded on x's old values and its result becomes x's history, as ``_inplace``
    # does for += (so views, version counters and the leaf check behave alike).

    def _inplace_result(self, name: str, compute: Any, *operands: Any) -> Tensor:
        """``x.name(...)`` (``compute(x)``) written into x in place; ``operands``: tensors the
        op also reads (their gradients flow; their memory must not overlap x's)."""
        for operand in operands:
            self._check_writable(name, operand)
        tracked = [o for o in operands if isinstance(o, Tensor) and o.requires_grad]
        if self._records_inplace(tracked[0] if tracked else None):
            self._write_recorded(compute(self._old_values()), result_of_op=True)
            return self
        with grad_mode.no_grad():
            result = compute(self)
        _copy_into(self.array, result.array)
        self._bump_version()
        return self

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        """clamp in place (``img.data.clamp_(0, 1)``)."""
        return self._inplace_result("clamp_", lambda x: x.clamp(min, max))

    clip_ = clamp_

    def clamp_min_(self, min: Any) -> Tensor:
        return self._inplace_result("clamp_min_", lambda x: x.clamp_min(min))

    def clamp_max_(self, max: Any) -> Tensor:
        return self._inplace_result("clamp_max_", lambda x: x.clamp_max(max))

    def exp_(self) -> Tensor:
        return self._inplace_result("exp_", lambda x: x.exp())

    def log_(self) -> Tensor:
        return self._inplace_result("log_", lambda x: x.log())

    def sqrt_(self) -> Tensor:
        return self._inplace_result("sqrt_", lambda x: x.sqrt())

    def pow_(self, exponent: Any) -> Tensor:
        return self._inplace_result("pow_", lambda x: x.pow(exponent), exponent)

    def neg_(self) -> Tensor:
        return self._inplace_result("neg_", lambda x: x.neg())

    def abs_(self) -> Tensor:
        return self._inplace_result("abs_", lambda x: x.abs())

    def relu_(self) -> Tensor:
        return self._inplace_result("relu_", lambda x: x.relu())

    def sigmoid_(self) -> Tensor:
        return self._inplace_result("sigmoid_", lambda x: x.sigmoid())

    def tanh_(self) -> Tensor:
        return self._inplace_result("tanh_", lambda x: x.tanh())

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        return self._inplace_result("masked_fill_", lambda x: x.masked_fill(mask, value))

    def index_fill_(self, dim: int, index: Any, value: Any) -> Tensor:
        return self._inplace_result("index_fill_", lambda x: x.index_fill(dim, index, value))

    def lerp_(self, end: Any, weight: Any) -> Tensor:
        return self._inplace_result("lerp_", lambda x: x.lerp(end, weight), end)

    def isnan(self) -> Tensor:
        """Where the values are NaN (bool, outside the graph)."""
        return Tensor(backend.get_array_module(self.array).isnan(self.array))

    def isinf(self) -> Tensor:
        """Where the values are +inf or -inf (bool, outside the graph)."""
        return Tensor(backend.get_array_module(self.array).isinf(self.array))

    def isfinite(self) -> Tensor:
        """Where the values are neither inf nor NaN (bool, outside the graph)."""
        return Tensor(backend.get_array_module(self.array).isfinite(self.array))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        """The indices that sort x along ``dim``: ``x.sort(dim, descending).indices``."""
        return self.sort(dim, descending).indices

    def index_select(self, dim: int, index: Any) -> Tensor:
        """The entries at ``index`` (1-D) along ``dim``: x[:, index] for dim=1."""
        dim = dim + self.ndim if dim < 0 else dim
        return self[(slice(None),) * dim + (_index_tensor(index),)]

    def masked_select(self, mask: Any) -> Tensor:
        """The entries where ``mask`` (broadcast to x's shape) is True, as one 1-D tensor."""
        mask = np.broadcast_to(_host_array(mask), self.shape)
        return self.reshape(-1)[Tensor(np.flatnonzero(mask))]

    def index_add_(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
        return self._inplace_result("index_add_", lambda x: x.index_add(dim, index, source,
                                                                          alpha=alpha), source)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Tensor:
        return self._inplace_result("scatter_add_", lambda x: x.scatter_add(dim, index, src), src)

    def addcmul_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._inplace_result("addcmul_", lambda x: x.addcmul(tensor1, tensor2,
                                                                      value=value),
                                    tensor1, tensor2)

    def addcdiv_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        return self._inplace_result("addcdiv_", lambda x: x.addcdiv(tensor1, tensor2,
                                                                      value=value),
                                    tensor1, tensor2)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
        """x with ``alpha * source`` added at the positions ``index`` (1-D) along ``dim``,
        repeated positions summed (makemore's ``dC.index_add_(0, Xb.view(-1), demb...)``)."""
        dim, positions = _index_along("index_add", self, dim, index, source)
        source = source if alpha == 1 else source * alpha
        return self.scatter_add(dim, _spread_along(self, positions, dim, source.shape), source)

    def index_copy(self, dim: int, index: Any, source: Any) -> Tensor:
        """x with the slices of ``source`` written at the positions ``index`` (1-D) along
        ``dim`` (where a position repeats, the last write wins, as on PyTorch's CPU): ``scatter``
        of the slices, so source gets the gradient of where it landed and x none there."""
        dim, positions = _index_along("index_copy", self, dim, index, source)
        return self.scatter(dim, _spread_along(self, positions, dim, source.shape), source)

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """x + value * tensor1 * tensor2 (an optimizer's moment update written by hand)."""
        return self + value * tensor1 * tensor2

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
        """x + value * tensor1 / tensor2."""
        return self + value * tensor1 / tensor2

    def logical_not(self) -> Tensor:
        return Tensor(backend.get_array_module(self.array).logical_not(self.array))

    def logical_and(self, other: Any) -> Tensor:
        return Tensor(backend.get_array_module(self.array).logical_and(self.array,
                                                                       _data_of(other)))

    def logical_or(self, other: Any) -> Tensor:
        return Tensor(backend.get_array_module(self.array).logical_or(self.array,
                                                                      _data_of(other)))

    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(*other.shape)

    def index_fill(self, dim: int, index: Any, value: Any) -> Tensor:
        """x with ``value`` at the positions ``index`` (1-D) along ``dim``: the Annotated
        Transformer's ``true_dist.index_fill_(0, padding_rows, 0.0)``."""
        dim, positions = _index_along("index_fill", self, dim, index)
        chosen = np.zeros(self.shape[dim] if self.ndim else 1, dtype=bool)
        chosen[positions] = True
        return self.masked_fill(chosen.reshape((-1,) + (1,) * (self.ndim - dim - 1)), value)

    def lerp(self, end: Any, weight: Any) -> Tensor:
        """x + weight * (end - x): the straight line from x to ``end`` (an exponential moving
        average's step: ``avg.lerp_(x, 1 - beta)``)."""
        return self + weight * (end - self)

    def fill_(self, value: Any) -> Tensor:
        """Every element set to ``value`` (a number, or a one-element tensor), in place.
        (Unlike the other in-place ops, PyTorch lets it write an expanded tensor: every
        element gets the same value.)"""
        if self._records_inplace(value):
            self._write_recorded(value)
            return self
        try:
            self.array.fill(value.item() if isinstance(value, Tensor) else value)
        except OverflowError:  # a huge int: as PyTorch, an OverflowError, said in words
            raise OverflowError(f"fill_(): {str(value)[:40]} does not fit in this tensor's "
                                f"dtype {self.dtype}") from None
        self._bump_version()
        return self

    def copy_(self, src: Any) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (broadcast to its shape, converted to
        its dtype and device). Like every in-place op it bumps the version counter and refuses
        a leaf that requires grad outside ``no_grad()``; the gradient flows to ``src``."""
        src_shape = tuple(getattr(src, "shape", ()))
        try:
            broadcast = np.broadcast_shapes(self.shape, src_shape)
        except ValueError:
            broadcast = None
        if broadcast != self.shape:
            raise RuntimeError(
                f"copy_: the source of shape {src_shape} cannot be broadcast to the tensor's "
                f"shape {tuple(self.shape)}"
            )
        self._check_writable("copy_", src)
        if self._records_inplace(src):
            self._write_recorded(src)
            return self
        xp = backend.get_array_module(self.array)
        xp.copyto(self.array, backend.to_device(_data_of(src), self.device), casting="unsafe")
        self._bump_version()
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        key = normalize_key(key, backend.get_array_module(self.array))
        self._check_writable("setitem", value, key)
        if self._records_inplace(value, key):
            self._write_recorded(value, key)
        else:
            self.array[key] = backend.to_device(_data_of(value), self.device)
            self._bump_version()

    def _inplace(self, op: type, ufunc: str, other: Any) -> Tensor:
        """``self op= other``: the op's result written into this tensor's memory. When the
        graph records it, the op runs on a copy of the old values (what its backward may need)
        and the result is written by ``_write_recorded`` (NOTE [views and in-place])."""
        if isinstance(other, (tuple, list)):
            function.refuse_sequence(op.__name__, other)
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
        self._check_writable(op.__name__.lower() + "_", other)
        if self._records_inplace(other):
            self._write_recorded(op.apply(self._old_values(), other), result_of_op=True)
            return self
        xp = backend.get_array_module(self.array)
        other_data = _data_of(other)
        try:
            getattr(xp, ufunc)(self.array, other_data, out=self.array)
        except TypeError as exc:  # numpy's casting error, e.g. int tensor += 0.5
            raise RuntimeError(
                f"result type {scalar_type_name(np.result_type(self.array, other_data))} can't "
                f"be cast to the desired output type {scalar_type_name(self.dtype)}: use the "
                "out-of-place form (x = x + ...) or convert first with .to(dtype)"
            ) from exc
        self._bump_version()
        return self

    def _check_writable(self, what: str, other: Any = None, key: Any = Ellipsis) -> None:
        """Refuse to write (to ``self[key]``) where several elements are one memory location (an
        expanded tensor), or from an operand that partly overlaps the memory written to, as
        PyTorch does."""
        array = self.array if key is Ellipsis else self.array[key]
        if any(stride == 0 and n > 1 for stride, n in zip(array.strides, array.shape)):
            raise RuntimeError(
                f"unsupported operation ({what}): more than one element of the written-to "
                "tensor refers to a single memory location (it was made by expand() or a "
                "broadcast). Please clone() the tensor before performing the operation."
            )
        if isinstance(other, Tensor) and _partly_overlap(array, other.array):
            raise RuntimeError(
                f"unsupported operation ({what}): some elements of the input tensor and the "
                "written-to tensor refer to a single memory location. Please clone() the "
                "tensor before performing the operation."
            )

    def _records_inplace(self, other: Any, key: Any = Ellipsis) -> bool:
        """Will an in-place op on this tensor (on ``self[key]``) be recorded in the graph?
        Raises where PyTorch refuses one (NOTE [views and in-place])."""
        view = self._view
        if view is not None:
            self._sync_view()
        tracked = self._requires_grad or (view is not None and view.base._requires_grad)
        other_requires = isinstance(other, Tensor) and other.requires_grad
        if not grad_mode.is_grad_enabled() or not (tracked or other_requires):
            return False
        if view is not None:
            if view.creation == "no_grad":
                raise RuntimeError(
                    "A view was created in no_grad mode and is being modified inplace with grad "
                    "mode enabled. Given that this use case is ambiguous and error-prone, it is "
                    "forbidden. You can clarify your code by moving both the view and the "
                    "inplace either both inside the no_grad block (if you don't want the "
                    "inplace to be tracked) or both outside (if you want the inplace to be "
                    "tracked)."
                )
            if view.creation is not None:
                op_name, index = view.creation
                raise RuntimeError(
                    f"Output {index} of {op_name} is a view and is being modified inplace. This "
                    "view is the output of a function that returns multiple views. Such "
                    "functions do not allow the output views to be modified inplace. You should "
                    "replace the inplace operation by an out-of-place one (or .clone() the "
                    "piece first)."
                )
        if view is not None or key is not Ellipsis:  # x[key] = v writes through a view x[key]
            base = self if view is None else view.base
            if base._grad_fn is None and base._requires_grad:
                raise RuntimeError(
                    "a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation. To update part of a parameter, do it inside "
                    "`with dg.no_grad():`; otherwise work on a copy (x = w.clone(); x[0] = ...)."
                )
        if self._grad_fn is None and self._requires_grad:
            label = f" '{self.name}'" if self.name else ""
            raise RuntimeError(
                f"a leaf Variable{label} that requires grad is being used in an in-place "
                "operation. Autograd would lose track of its original value. To update a "
                "parameter, do it inside `with dg.no_grad():` (e.g. `w -= lr * w.grad`); "
                "otherwise use an out-of-place op (w = w - ...)."
            )
        return True

    def _old_values(self) -> Tensor:
        """This tensor's values as they are now, in memory of their own, standing for this
        tensor in the graph (same node, same id): what a recorded in-place op computes from,
        and may save for backward, before its result overwrites the memory."""
        old = wrap_output(self.array.copy(), self._grad_fn)
        old._requires_grad = self._requires_grad
        old._counter = VersionCounter()  # its memory is its own: nothing will change it
        old.id, old.name, old._announced = self.id, self.name, self._announced
        return old

    def _write_recorded(self, value: Any, key: Any = Ellipsis, result_of_op: bool = False) -> None:
        """Write ``value`` into this tensor's memory (``self[key] = value``) and rewrite the
        graph as PyTorch does; the one place a recorded in-place op changes history (NOTE [views
        and in-place]). ``result_of_op``: ``value`` is the result of the in-place op itself."""
        view = self._view
        counter = self._shared_counter()
        if view is None and key is Ellipsis and result_of_op:
            # The whole tensor becomes the op's result: the op's node is its history now.
            _copy_into(self.array, value.array)
            owner, written = self, value
        else:  # one more node, CopySlices, writes the value into the base's memory
            owner, steps = (self, ()) if view is None else (view.base, view.steps)
            written = CopySlices.apply(owner, value, steps=steps, key=key)
        owner._bump_version()
        counter.rewrites += 1
        owner._take_node_of(written)
        written._grad_fn.watch_output(counter, owner.array)
        if result_of_op and written is not value:  # the op's output, if it saved it, lies in
            value._grad_fn.watch_output(counter, self.array)  # this view's memory now

    def _take_node_of(self, made: Tensor) -> None:
        """This tensor is now the output of the node that just made ``made`` (same id)."""
        self._grad_fn, self.id, self._announced = made._grad_fn, made.id, made._announced
        self._requires_grad = True

    def _bump_version(self) -> None:
        global inplace_clock
        with _inplace_clock_lock:  # NOTE [one clock for every thread]
            inplace_clock += 1
        counter = self._shared_counter()
        counter.value += 1
        if this_thread.state.active:
            events.emit(events.version_bumped(self.id, counter.value))

    # ------------------------------------------------------------------ op methods

    def exp(self) -> Tensor:
        return Exp.apply(self)

    def log(self) -> Tensor:
        return Log.apply(self)

    def log10(self) -> Tensor:
        return Log10.apply(self)

    def log2(self) -> Tensor:
        return Log2.apply(self)

    def clone(self) -> Tensor:
        """A copy with its own memory, still in the graph (the gradient flows back to self)."""
        return Clone.apply(self)

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

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        """Values below ``min`` raised to it, above ``max`` lowered to it. A bound may be a
        tensor (broadcast against x): then the gradient flows to the bound where it is taken."""
        if isinstance(min, Tensor) or isinstance(max, Tensor):
            return ClampByTensors.apply(self, min, max)
        return Clamp.apply(self, low=min, high=max)

    def clamp_min(self, min: Any) -> Tensor:
        """``clamp(min=min)``: every value below ``min`` raised to it (PyTorch's clamp_min)."""
        return self.clamp(min, None)

    def clamp_max(self, max: Any) -> Tensor:
        """``clamp(max=max)``: every value above ``max`` lowered to it."""
        return self.clamp(None, max)

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Tensor:
        """Each entry repeated ``repeats`` times in a row along ``dim`` (of the flattened
        tensor when ``dim`` is None): ``[1, 2].repeat_interleave(2)`` is ``[1, 1, 2, 2]``
        (``repeat`` tiles the whole: ``[1, 2, 1, 2]``). ``repeats`` may be one count or a
        tensor of one count per entry. The gradient of each entry is the sum over its copies."""
        x = self.reshape(-1) if dim is None else self
        dim = 0 if dim is None else normalize_dim(dim, x.ndim, fn="repeat_interleave")
        index = repeat_index(x.shape[dim] if x.ndim else 1, repeats, output_size)
        index = backend.get_array_module(x.array).asarray(index)  # on x's device
        if x.ndim == 0:
            x = x.reshape(1)
        return x[(slice(None),) * dim + (index,)]

    def maximum(self, other: Any) -> Tensor:
        return Maximum.apply(self, other)

    def minimum(self, other: Any) -> Tensor:
        return Minimum.apply(self, other)

    def matmul(self, other: Any) -> Tensor:
        return MatMul.apply(self, other)

    # Reductions take PyTorch's dim= / keepdim= and numpy's axis= / keepdims= (one of each pair).

    def sum(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
            keepdims: bool | None = None, dtype: Any = None) -> Tensor:
        """Sum over ``dim`` (an int, a tuple, or None for every dimension); ``keepdim=True``
        keeps the reduced dimensions with size 1; ``dtype``: converted to it first."""
        dim, keepdim = _reduction_args("sum", self.ndim, dim, axis, keepdim, keepdims)
        if dtype is None:  # handed back as it is: the learner's name for it (NOTE [variable names])
            return Sum.apply(self, axis=dim, keepdims=keepdim)
        return Sum.apply(self.to(dtype), axis=dim, keepdims=keepdim).to(dtype)  # numpy widens

    def mean(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
             keepdims: bool | None = None, dtype: Any = None) -> Tensor:
        """Mean over ``dim`` (an int, a tuple, or None for every dimension); ``dtype``:
        converted to it first (the mean of an integer tensor)."""
        dim, keepdim = _reduction_args("mean", self.ndim, dim, axis, keepdim, keepdims)
        x = self if dtype is None else self.to(dtype)
        return Mean.apply(x, axis=dim, keepdims=keepdim)

    def max(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
            keepdims: bool | None = None) -> Any:
        """The largest value. With ``dim`` (one int), a (values, indices) pair as in PyTorch:
        ``values, idx = x.max(1)``; with a Tensor, the elementwise ``maximum``."""
        if isinstance(dim, Tensor):
            return Maximum.apply(self, dim)
        dim, keepdim = _reduction_args("max", self.ndim, dim, axis, keepdim, keepdims)
        if dim == ():  # dim 0 (or -1) of a 0-d tensor: the one value, at index 0
            return ValuesIndices(Max.apply(self, axis=None), self.argmax())
        if not isinstance(dim, int):  # every dimension (or a tuple of them, like torch.amax):
            return Max.apply(self, axis=dim, keepdims=keepdim)  # values; ties share the grad
        values = Max.apply(self, axis=dim, keepdims=keepdim, ties="first")  # grad to the index
        return ValuesIndices(values, self.argmax(dim, keepdim))

    def min(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
            keepdims: bool | None = None) -> Any:
        """The smallest value. With ``dim`` (one int), a (values, indices) pair as in PyTorch;
        with a Tensor, the elementwise ``minimum``."""
        if isinstance(dim, Tensor):
            return Minimum.apply(self, dim)
        dim, keepdim = _reduction_args("min", self.ndim, dim, axis, keepdim, keepdims)
        if dim == ():  # dim 0 (or -1) of a 0-d tensor: the one value, at index 0
            return ValuesIndices(Min.apply(self, axis=None), self.argmin())
        if not isinstance(dim, int):
            return Min.apply(self, axis=dim, keepdims=keepdim)
        values = Min.apply(self, axis=dim, keepdims=keepdim, ties="first")
        return ValuesIndices(values, self.argmin(dim, keepdim))

    def argmax(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Tensor:
        """Index of the largest value along ``dim`` (of the flattened tensor when None); the
        first one on ties. int64, outside the graph (indices have no gradient)."""
        return self._arg_extreme("argmax", dim, keepdim, axis)

    def argmin(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Tensor:
        """Index of the smallest value along ``dim`` (see argmax)."""
        return self._arg_extreme("argmin", dim, keepdim, axis)

    def _arg_extreme(self, name: str, dim: Any, keepdim: bool, axis: Any) -> Tensor:
        dim = one_spelling(name, "dim", dim, "axis", axis)
        xp = backend.get_array_module(self.array)
        if dim is None:
            index = getattr(xp, name)(self.array).astype(np.int64)
            return Tensor(index.reshape((1,) * self.ndim) if keepdim else index)
        dim = normalize_dim(dim, self.ndim, "dim", name)
        if self.ndim == 0:
            return Tensor(xp.zeros((), dtype=np.int64))
        index = getattr(xp, name)(self.array, axis=dim, keepdims=bool(keepdim))
        return Tensor(index.astype(np.int64))

    def var(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool | None = None, *,
            correction: Any = None, axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """Variance over ``dim``: the sum of squared deviations divided by N - correction;
        ``correction=1`` (the default, as in PyTorch; ``unbiased=True``) or 0
        (``unbiased=False``). nan, with a warning, where no degrees of freedom are left."""
        dim, keepdim, correction = _variance_args("var", self, dim, unbiased, keepdim, correction,
                                                  axis, keepdims)
        return Var.apply(self, axis=dim, keepdims=keepdim, correction=correction)

    def logsumexp(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
                  keepdims: bool | None = None) -> Tensor:
        """log(sum(exp(x))) over ``dim``, computed without overflow."""
        dim, keepdim = _reduction_args("logsumexp", self.ndim, dim, axis, keepdim, keepdims)
        return LogSumExp.apply(self, axis=dim, keepdims=keepdim)

    def softmax(self, dim: Any = None, dtype: Any = None, *, axis: Any = None) -> Tensor:
        """exp(x) / sum(exp(x)) along ``dim`` (default -1, the last); ``dtype`` converts x
        first (an integer tensor must be: softmax needs floats, as in PyTorch)."""
        dim = normalize_dim(one_spelling("softmax", "dim", dim, "axis", axis, -1), self.ndim,
                            "dim", "softmax")
        return Softmax.apply(self if dtype is None else self.to(dtype), axis=dim)

    def log_softmax(self, dim: Any = None, dtype: Any = None, *, axis: Any = None) -> Tensor:
        """x - logsumexp(x) along ``dim`` (default -1): a numerically safe log(softmax(x));
        ``dtype`` converts x first."""
        dim = normalize_dim(one_spelling("log_softmax", "dim", dim, "axis", axis, -1),
                            self.ndim, "dim", "log_softmax")
        return LogSoftmax.apply(self if dtype is None else self.to(dtype), axis=dim)

    def reshape(self, *shape: Any) -> Tensor:
        return self._make_view(Reshape, shape=normalize_sizes(shape, "reshape", "shape"))

    def view(self, *shape: Any) -> Tensor:
        """The same memory seen with another shape (-1: the size that fits). Unlike
        ``reshape``, never a copy: a tensor whose memory cannot be read in the new shape row
        after row (a transpose, a strided slice) is refused, as in PyTorch."""
        shape = normalize_sizes(shape, "view")
        if not _viewable(self.array, shape):
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride (at least one "
                f"dimension spans across two contiguous subspaces): the tensor of shape "
                f"{tuple(self.shape)} is not contiguous (x.is_contiguous() is False). Use "
                ".reshape(...) instead (or .contiguous().view(...))."
            )
        return self._make_view(Reshape, shape=shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dimensions ``start_dim`` to ``end_dim`` into one (a view when possible)."""
        if self.ndim == 0:
            normalize_dim(start_dim, 0, "start_dim", "flatten")
            normalize_dim(end_dim, 0, "end_dim", "flatten")
            return self._make_view(Reshape, shape=(1,))
        start = normalize_dim(start_dim, self.ndim, "start_dim", "flatten")
        end = normalize_dim(end_dim, self.ndim, "end_dim", "flatten")
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        if start == end:  # nothing to merge: the tensor itself, as PyTorch returns it
            return self
        merged = math.prod(self.shape[start : end + 1])
        shape = self.shape[:start] + (merged,) + self.shape[end + 1 :]
        return self._make_view(Reshape, shape=shape)

    def squeeze(self, dim: Any = None, *, axis: Any = None) -> Tensor:
        """Remove dimensions of size 1: all of them, or those of ``dim`` (an int or a tuple);
        a named dimension whose size is not 1 stays, as in PyTorch."""
        dims = normalize_dims(one_spelling("squeeze", "dim", dim, "axis", axis), self.ndim,
                              "dim", "squeeze")
        if dims is None:
            dims = range(self.ndim)
        elif isinstance(dims, int):
            dims = (dims,)
        shape = tuple(n for i, n in enumerate(self.shape) if not (n == 1 and i in dims))
        return self._make_view(Reshape, shape=shape)

    def unsqueeze(self, dim: Any = None, *, axis: Any = None) -> Tensor:
        """Insert a dimension of size 1 at ``dim`` (-1 appends one)."""
        dim = one_spelling("unsqueeze", "dim", dim, "axis", axis)
        if dim is None:
            raise TypeError("unsqueeze() missing 1 required positional argument: 'dim'")
        dim = normalize_dim(dim, self.ndim + 1, "dim", "unsqueeze")
        return self._make_view(Reshape, shape=self.shape[:dim] + (1,) + self.shape[dim:])

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """Swap two dimensions (PyTorch's transpose(dim0, dim1))."""
        dim0 = normalize_dim(dim0, self.ndim, "dim0", "transpose")
        dim1 = normalize_dim(dim1, self.ndim, "dim1", "transpose")
        if self.ndim < 2:
            return self._make_view(Reshape, shape=self.shape)  # nothing to swap
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return self._make_view(Permute, axes=tuple(axes))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return self.transpose(axis0, axis1)

    def permute(self, *axes: Any) -> Tensor:
        return self._make_view(Permute, axes=_shape_arg(axes))

    def expand(self, *sizes: Any) -> Tensor:
        """Broadcast to a larger shape without copying (-1 keeps a dimension)."""
        sizes = normalize_sizes(sizes, "expand")
        lead = len(sizes) - self.ndim
        shape = tuple(
            self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)
        )
        return self._make_view(Expand, shape=shape)

    def __getitem__(self, key: Any) -> Tensor:
        key = normalize_key(key, backend.get_array_module(self.array))
        return self._make_view(Index, key=key)

    # ------------------------------------------------------------------ more ops (PyTorch names)
    # Issue 13. Each takes PyTorch's dim= / keepdim= (numpy's axis= / keepdims= too), checks its
    # arguments with ops/dims.py, and calls one op; dg.std(x, ...) etc. call these methods.

    def std(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool | None = None,
            *, correction: int | None = None, axis: Any = None,
            keepdims: bool | None = None) -> Tensor:
        """Standard deviation: sqrt(var); ``correction=1`` (the default) divides by N - 1.
        Its gradient is 0 where all the values are equal, as in PyTorch (not sqrt's nan)."""
        dim, keepdim, correction = _variance_args("std", self, dim, unbiased, keepdim, correction,
                                                  axis, keepdims)
        return Std.apply(self, axis=dim, keepdims=keepdim, correction=correction)

    def prod(self, dim: int | None = None, keepdim: bool | None = None, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Product of the elements (over one dimension, or all of them)."""
        dim = one_spelling("prod", "dim", dim, "axis", axis)
        keep = bool(one_spelling("prod", "keepdim", keepdim, "keepdims", keepdims, False))
        dim = None if dim is None else normalize_dim(dim, self.ndim, fn="prod")
        if self.ndim == 0:
            dim = None
        return Prod.apply(self, dim=dim, keepdim=keep)

    def cumsum(self, dim: int | None = None, *, axis: int | None = None) -> Tensor:
        """Running sum along ``dim``: z_i = x_0 + ... + x_i."""
        dim = one_spelling("cumsum", "dim", dim, "axis", axis)
        if dim is None:
            raise TypeError("cumsum() missing 1 required argument: 'dim'")
        dim = normalize_dim(dim, self.ndim, fn="cumsum")
        if self.ndim == 0:
            return CumSum.apply(self.reshape(1), dim=0).reshape(())
        return CumSum.apply(self, dim=dim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool | None = None, *,
             axis: Any = None, keepdims: bool | None = None) -> Tensor:
        """The p-norm (sum |x|^p)^(1/p) over ``dim`` (all elements by default); 'fro' (the
        default) and 2 are sqrt(sum x^2); p=float('inf') is max |x|."""
        dims, keep = _reduction_args("norm", self.ndim, dim, axis, keepdim, keepdims)
        if p == "fro":
            p = 2.0
        if isinstance(p, str) or not p > 0:
            raise NotImplementedError(
                f"norm(): p={p!r} is not supported here; use 'fro', a positive number or inf"
            )
        return Norm.apply(self, p=float(p), dim=dims, keepdim=keep)

    def amax(self, dim: Any = (), keepdim: bool | None = None, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Maximum over ``dim`` (every dimension when dim=() or None); ties share the gradient
        (and a NaN maximum, equal to no entry, has a NaN gradient: PyTorch's amax)."""
        dims, keep = _reduction_args("amax", self.ndim, None if dim == () else dim, axis, keepdim,
                                  keepdims)
        return Max.apply(self, axis=dims, keepdims=keep, ties="share among equal")

    def amin(self, dim: Any = (), keepdim: bool | None = None, *, axis: Any = None,
             keepdims: bool | None = None) -> Tensor:
        """Minimum over ``dim`` (every dimension when dim=() or None); ties share the gradient."""
        dims, keep = _reduction_args("amin", self.ndim, None if dim == () else dim, axis, keepdim,
                                  keepdims)
        return Min.apply(self, axis=dims, keepdims=keep, ties="share among equal")

    def all(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
            keepdims: bool | None = None) -> Tensor:
        """True where every element (over ``dim``) is nonzero: a boolean tensor, no gradient."""
        dims, keep = _reduction_args("all", self.ndim, dim, axis, keepdim, keepdims)
        return Tensor(backend.get_array_module(self.array).all(self.array, axis=dims,
                                                               keepdims=keep))

    def any(self, dim: Any = None, keepdim: bool | None = None, *, axis: Any = None,
            keepdims: bool | None = None) -> Tensor:
        """True where some element (over ``dim``) is nonzero: a boolean tensor, no gradient."""
        dims, keep = _reduction_args("any", self.ndim, dim, axis, keepdim, keepdims)
        return Tensor(backend.get_array_module(self.array).any(self.array, axis=dims,
                                                               keepdims=keep))

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
        """(values, indices): the values sorted along ``dim`` and where each came from.
        (Always a stable sort: equal values keep their order.)"""
        dim = normalize_dim(dim, self.ndim, fn="sort")
        if self.ndim == 0:  # a copy, as PyTorch's (never a view of x)
            return SortResult(Clone.apply(self), Tensor(np.int64(0)))
        xp = backend.get_array_module(self.array)
        indices = Tensor(sort_order(xp, self.array, dim, descending).astype(xp.int64))
        return SortResult(Sort.apply(self, dim=dim, descending=descending), indices)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopKResult:
        """(values, indices) of the k largest (largest=False: smallest) elements along dim."""
        dim = normalize_dim(dim, self.ndim, fn="topk")
        xp = backend.get_array_module(self.array)
        indices = Tensor(topk_order(xp, self.array, k, dim, largest).astype(xp.int64))
        return TopKResult(TopK.apply(self, k=k, dim=dim, largest=largest), indices)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces along ``dim``: each of size ``split_size`` (the last may be smaller), or of
        the sizes in a list."""
        dim = normalize_dim(dim, self.ndim, fn="split")
        n = self.shape[dim]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes = [int(s) for s in split_size_or_sections]
            if sum(sizes) != n:
                raise RuntimeError(
                    f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                    f"size at dimension {dim}), but got split_sizes={sizes}"
                )
        else:
            size = int(split_size_or_sections)
            if size <= 0:
                raise RuntimeError(f"split expects split_size be positive, but got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] or [0]
        pieces, start = [], 0
        lead = (slice(None),) * dim
        for size in sizes:
            pieces.append(self[lead + (slice(start, start + size),)])
            start += size
        return _several_views(pieces, "Split")

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """The ``length`` entries from ``start`` along ``dim``: a view, x[:, start:start+length]."""
        dim = normalize_dim(dim, self.ndim, fn="narrow")
        start = start + self.shape[dim] if start < 0 else start
        if not 0 <= start <= start + length <= self.shape[dim]:
            raise IndexError(
                f"narrow(): start ({start}) + length ({length}) exceeds dimension size "
                f"({self.shape[dim]})."
            )
        return self[(slice(None),) * dim + (slice(start, start + length),)]

    def select(self, dim: int, index: int) -> Tensor:
        """Entry ``index`` along ``dim``, that dimension removed: a view, x[:, index]."""
        dim = normalize_dim(dim, self.ndim, fn="select")
        return self[(slice(None),) * dim + (index,)]

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """At most ``chunks`` pieces of equal size along ``dim`` (the last may be smaller)."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self.shape[normalize_dim(dim, self.ndim, fn="chunk")]
        return self.split(max(-(-n // chunks), 1), dim)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along ``dim``, that dimension removed: x.unbind(0) == (x[0], x[1], ...)."""
        dim = normalize_dim(dim, self.ndim, fn="unbind")
        lead = (slice(None),) * dim
        return _several_views([self[lead + (i,)] for i in range(self.shape[dim])], "Unbind")

    def gather(self, dim: int, index: Any) -> Tensor:
        """out[i][j] = x[index[i][j]][j] (dim=0): values picked along ``dim`` by ``index``."""
        dim = normalize_dim(dim, self.ndim, fn="gather")
        index = _index_arg(self, "gather", index, dim)
        return Gather.apply(self, index, dim=dim)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Tensor:
        """A copy of x with src[i][j] added at x[index[i][j]][j] (dim=0); repeats accumulate."""
        dim = normalize_dim(dim, self.ndim, fn="scatter_add")
        index = _index_arg(self, "scatter_add", index, dim)
        return ScatterAdd.apply(self, index, src, dim=dim)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """x with ``value`` where ``mask`` is True (the mask broadcasts against x)."""
        mask = _data_of(mask)
        if getattr(mask, "dtype", None) != np.bool_:
            raise RuntimeError(
                f"masked_fill only supports boolean masks, but got mask with dtype "
                f"{getattr(mask, 'dtype', type(mask).__name__)}"
            )
        if isinstance(value, Tensor):
            value = value.item()
        return MaskedFill.apply(self, mask, value=value)

    def flip(self, *dims: Any) -> Tensor:
        """x reversed along each of ``dims``."""
        dims = tuple(normalize_dim(d, self.ndim, fn="flip") for d in _shape_arg(dims))
        return Flip.apply(self, dims=dims)

    def repeat(self, *sizes: Any) -> Tensor:
        """x tiled ``sizes[i]`` times along each dimension (numpy's tile)."""
        sizes = normalize_sizes(sizes, "repeat", "repeats")
        if len(sizes) < self.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of "
                f"dimensions of tensor (got {len(sizes)} repeat dims for shape "
                f"{tuple(self.shape)})"
            )
        return Repeat.apply(self, sizes=sizes)

    def sign(self) -> Tensor:
        return Sign.apply(self)

    def log1p(self) -> Tensor:
        return Log1p.apply(self)

    def square(self) -> Tensor:
        return Square.apply(self)

    def t(self) -> Tensor:
        """The transpose of a matrix (a vector or a number is returned as it is)."""
        if self.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D "
                "(use .transpose(dim0, dim1) or .mT)"
            )
        return self.transpose(0, 1) if self.ndim == 2 else self.reshape(self.shape)

    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle of the last two dimensions (the rest set to 0)."""
        _need_matrix(self, "tril")
        return Tril.apply(self, diagonal=diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle of the last two dimensions (the rest set to 0)."""
        _need_matrix(self, "triu")
        return Triu.apply(self, diagonal=diagonal)

    def mm(self, mat2: Any) -> Tensor:
        """Matrix product of two matrices (2-D only; ``@`` also broadcasts)."""
        for name, t in (("self", self), ("mat2", mat2)):
            if getattr(t, "ndim", 0) != 2:
                raise RuntimeError(f"mm: {name} must be a matrix, got shape {tuple(t.shape)}")
        return MatMul.apply(self, mat2)

    def bmm(self, mat2: Any) -> Tensor:
        """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p), batch sizes equal."""
        for name, t in (("batch1", self), ("batch2", mat2)):
            if getattr(t, "ndim", 0) != 3:
                raise RuntimeError(f"{name} must be a 3D tensor, got shape {tuple(t.shape)}")
        if self.shape[0] != mat2.shape[0]:
            raise RuntimeError(
                f"bmm: batch sizes differ: {self.shape[0]} and {mat2.shape[0]} (shapes "
                f"{tuple(self.shape)} and {tuple(mat2.shape)})"
            )
        return MatMul.apply(self, mat2)

    def mv(self, vec: Any) -> Tensor:
        """Matrix times vector: (n, m) @ (m,) -> (n,)."""
        if self.ndim != 2 or getattr(vec, "ndim", 0) != 1:
            raise RuntimeError(
                f"mv: expected a matrix and a vector, got shapes {tuple(self.shape)} and "
                f"{tuple(getattr(vec, 'shape', ()))} (use @ or matmul for other shapes)"
            )
        return MatMul.apply(self, vec)

    def dot(self, other: Any) -> Tensor:
        """The dot product of two vectors of the same length: sum(x * y)."""
        if self.ndim != 1 or getattr(other, "ndim", 0) != 1:
            raise RuntimeError(
                f"1D tensors expected, but got {self.ndim}D and {getattr(other, 'ndim', 0)}D "
                "tensors (use @ or matmul for matrices)"
            )
        return MatMul.apply(self, other)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with samples of N(mean, std^2), in place (d2l: ``w.data.normal_(0, 0.01)``)."""
        from .factories import normal

        return self.copy_(normal(mean, std, self.shape, generator=generator, dtype=self.dtype))

    def uniform_(self, low: float = 0.0, high: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with samples of the uniform distribution on [low, high), in place."""
        from .factories import rand

        values = rand(self.shape, generator=generator, dtype=self.dtype)
        return self.copy_(values * (high - low) + low)

    def outer(self, vec2: Any) -> Tensor:
        """z[i, j] = x[i] * y[j] for vectors x and y."""
        return Outer.apply(self, vec2)

    def det(self) -> Tensor:
        """The determinant of each square matrix in the last two dimensions: shape (*, n, n)
        gives shape (*). Differentiable twice where the matrix is invertible (Jacobi's formula).

        >>> dg.tensor([[2.0, 1.0], [1.0, 3.0]]).det()     # 2 * 3 - 1 * 1 = 5
        """
        return Det.apply(self)

    def inverse(self) -> Tensor:
        """The inverse of each square matrix in the last two dimensions (shape (*, n, n))."""
        return Inverse.apply(self)

    # ------------------------------------------------------------------ the learners' names
    # Counted in the learners' material (issue 37, item 3; docs/pytorch_inventory.md): PyTorch's
    # method spellings of the ops above, and the ops of ops/arc_and_round.py.

    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self + alpha * other (PyTorch's ``x.add(y)``; ``alpha`` scales ``other``)."""
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        """self - alpha * other."""
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other: Any) -> Tensor:
        return self * other

    def div(self, other: Any) -> Tensor:
        return self / other

    def eq(self, other: Any) -> Tensor:
        return self == other

    def ne(self, other: Any) -> Tensor:
        return self != other

    def lt(self, other: Any) -> Tensor:
        return self < other

    def le(self, other: Any) -> Tensor:
        return self <= other

    def gt(self, other: Any) -> Tensor:
        return self > other

    def ge(self, other: Any) -> Tensor:
        return self >= other

    def clip(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
        """PyTorch's other name for ``clamp``."""
        return self.clamp(min, max)

    def type_as(self, other: Tensor) -> Tensor:
        """This tensor in ``other``'s dtype."""
        return self.to(other.dtype)

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(*other.shape)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
        """Zeros of ``size``, in this tensor's dtype and device unless told otherwise."""
        return self.new_full(normalize_sizes(size, "new_zeros"), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        return self.new_full(normalize_sizes(size, "new_ones"), 1, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        from . import factories

        return factories.full(tuple(size), fill_value, dtype=dtype or self.dtype,
                    device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
        from . import factories

        return factories.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def where(self, condition: Any, other: Any) -> Tensor:
        """self where ``condition``, else ``other`` (``torch.where(condition, self, other)``)."""
        return Where.apply(condition if isinstance(condition, Tensor) else Tensor(condition),
                           self, other)

    def half(self) -> Tensor:
        return self.to(np.float16)

    def floor(self) -> Tensor:
        return Floor.apply(self)

    def ceil(self) -> Tensor:
        return Ceil.apply(self)

    def round(self, *, decimals: int = 0) -> Tensor:
        """To the nearest integer, halves to even; ``decimals``: to that many decimal places
        (x * 10**decimals rounded, divided back, as PyTorch does)."""
        if decimals:
            scale = 10.0 ** decimals
            return Round.apply(self * scale) / scale
        return Round.apply(self)

    def erf(self) -> Tensor:
        """The error function (BERT's exact GELU, 0.5 x (1 + erf(x / sqrt 2)), by hand)."""
        return Erf.apply(self)

    def reciprocal(self) -> Tensor:
        return 1.0 / self

    def rsqrt(self) -> Tensor:
        return 1.0 / self.sqrt()

    def count_nonzero(self, dim: Any = None) -> Tensor:
        """How many entries are not zero (over ``dim``, or all)."""
        nonzero = self != 0
        return nonzero.sum() if dim is None else nonzero.sum(dim)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        """Entries shifted along ``dims`` by ``shifts``, those that fall off coming back at the
        other end (the flattened tensor when ``dims`` is None)."""
        if dims is None:
            return self.reshape(-1).roll(shifts, 0).reshape(*self.shape)
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(shifts) != len(dims):
            raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must pair up, one shift "
                               "for each dim")
        out = self
        for shift, dim in zip(shifts, dims):
            n = out.shape[dim]
            order = (np.arange(n) - shift) % n
            out = out.index_select(dim, order)
        return out

    def acos(self) -> Tensor:
        return Acos.apply(self)

    def asin(self) -> Tensor:
        return Asin.apply(self)

    def atan(self) -> Tensor:
        return Atan.apply(self)

    def atan2(self, other: Any) -> Tensor:
        """The angle of the point (other, self): atan2(y=self, x=other), in (-pi, pi]."""
        if not isinstance(other, Tensor):  # (PyTorch's atan2 takes no number)
            raise TypeError(f"atan2(): argument 'other' must be Tensor, not "
                            f"{type(other).__name__}; wrap it: y.atan2(dg.tensor({other!r}))")
        return Atan2.apply(self, other)

    def sinh(self) -> Tensor:
        return Sinh.apply(self)

    def cosh(self) -> Tensor:
        return Cosh.apply(self)

    def expm1(self) -> Tensor:
        """exp(x) - 1, exact for x near 0."""
        return Expm1.apply(self)

    def diag(self, diagonal: int = 0) -> Tensor:
        """A vector -> the square matrix with it on the ``diagonal``-th diagonal; a matrix ->
        its ``diagonal``-th diagonal, as a vector (a copy, as in PyTorch)."""
        if self.ndim == 1:
            n = self.shape[0] + abs(diagonal)
            rows = np.arange(self.shape[0]) + max(-diagonal, 0)
            place = np.zeros((n, self.shape[0]), dtype=self.dtype)
            place[rows, np.arange(self.shape[0])] = 1
            cols = np.zeros((self.shape[0], n), dtype=self.dtype)
            cols[np.arange(self.shape[0]), rows + diagonal] = 1
            return Tensor(place) @ (self.unsqueeze(1) * Tensor(cols))
        if self.ndim != 2:
            raise RuntimeError(f"diag(): expected a 1-D or 2-D tensor, got {self.ndim}-D")
        rows = np.arange(max(-diagonal, 0), self.shape[0])
        rows = rows[rows + diagonal < self.shape[1]]
        return self[rows, rows + diagonal]

    def trace(self) -> Tensor:
        """The sum of a matrix's diagonal."""
        if self.ndim != 2:
            raise RuntimeError(f"trace(): expected a matrix, got a {self.ndim}-D tensor")
        return self.diag().sum()

    def logit(self, eps: float | None = None) -> Tensor:
        """log(p / (1 - p)), the inverse of sigmoid; ``eps`` clamps p to [eps, 1 - eps]."""
        return Logit.apply(self if eps is None else self.clamp(eps, 1 - eps))

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """The indices of the nonzero entries: one row each (int64), or with ``as_tuple``
        one tensor per dimension."""
        where_nonzero = np.argwhere(backend.to_numpy(self.array)).astype(np.int64)
        if as_tuple:
            return tuple(Tensor(column) for column in where_nonzero.T)
        return Tensor(where_nonzero)

    def unique(self, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct values, sorted (and where each entry went, how many of each)."""
        values, inverse, counts = np.unique(backend.to_numpy(self.array), return_inverse=True,
                                            return_counts=True, axis=dim)
        out = [Tensor(values)]
        if return_inverse:
            out.append(Tensor(inverse.reshape(self.shape if dim is None else -1).astype(np.int64)))
        if return_counts:
            out.append(Tensor(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Tensor:
        """A copy of self with ``src`` (a tensor, or one number) written at ``index`` along
        ``dim``: out[i][index[i][j]] = src[i][j] for dim=1 (the one-hot idiom:
        ``dg.zeros(n, k).scatter(1, y.unsqueeze(1), 1.0)``). Where an index repeats along
        ``dim`` the last write wins, as on PyTorch's CPU. Built from ``masked_fill`` and
        ``scatter_add``: gradients flow to self (where nothing was written) and to src, as
        PyTorch's (grad.gather(dim, index): every writer of a repeated index gets one)."""
        if reduce is not None:
            raise NotImplementedError("scatter(reduce=...) is not supported yet: use "
                                      "scatter_add for reduce='add'")
        src = value if src is None else src
        dim = normalize_dim(dim, self.ndim, "scatter")
        positions = backend.to_numpy(index.array if isinstance(index, Tensor) else
                                     np.asarray(index)).astype(np.int64)
        if positions.ndim == 0 and self.ndim == 1:  # one position, as PyTorch reads it (the
            positions = positions.reshape(1)        # data tutorial's one-hot target_transform)
            if isinstance(src, Tensor) and src.ndim == 0:
                src = src.reshape(1)
        # NOTE: which src entry writes each target last: a constant mask, so repeats keep one.
        # The index may be smaller than self in the other dimensions: it addresses the
        # corner of that size, as in PyTorch.
        coords = list(np.indices(positions.shape, sparse=True))
        coords[dim] = positions
        targets = tuple(coords)
        writer = np.full(self.shape, -1, dtype=np.int64)
        order = np.arange(positions.size).reshape(positions.shape)
        writer[targets] = order
        last = writer[targets] == order
        written = np.zeros(self.shape, dtype=bool)
        written[targets] = True
        if isinstance(src, Tensor):
            src = src[tuple(slice(0, n) for n in positions.shape)]
        else:
            src = Tensor(np.full(positions.shape, src, dtype=self.dtype))
        # every writer summed, less the overwritten ones (detached): the last write's value,
        # and PyTorch's gradient for each writer
        zeros = (self * 0).detach()
        overwritten = (src * Tensor(~last)).detach()
        placed = (zeros.scatter_add(dim, Tensor(positions), src)
                  - zeros.scatter_add(dim, Tensor(positions), overwritten))
        return self.masked_fill(Tensor(written), 0) + placed

    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Tensor:
        """``scatter`` in place."""
        return self.copy_(self.scatter(dim, index, src, value=value, reduce=reduce))

    def cumprod(self, dim: int, *, dtype: Any = None) -> Tensor:
        """out[j] = x[0] * x[1] * ... * x[j] along ``dim``. Written as a product over a
        triangle (row j holds x[0..j], then ones), so zeros in x get their gradients right
        and the graph shows Prod; it costs n^2 for n entries along ``dim``, which is fine at
        the sizes one reads (a diffusion schedule's 1000 steps)."""
        x = self if dtype is None else self.to(dtype)
        return _over_prefixes(x, "cumprod", dim, 1, lambda rows: rows.prod(-1))

    def dist(self, other: Any, p: Any = 2) -> Tensor:
        """The p-norm of self - other."""
        return (self - other).norm(p)

    def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None
                ) -> Tensor:
        """Fill with random integers in [from_, to) (``random_(to)``: [0, to)), in place;
        numpy's numbers, as dyngraph's other random fills."""
        from . import factories

        low, high = (0, from_) if to is None else (from_, to)
        if to is None and from_ == 0:
            raise ValueError("random_(): give the upper bound, x.random_(to) or "
                             "x.random_(from_, to)")
        return self.copy_(factories.randint(low, high, self.shape, generator=generator,
                                            dtype=self.dtype))

    # ------------------------------------------------------------------ issue 37: more math
    # PyTorch's pointwise and reduction functions, each composed from the ops above, so each is
    # twice differentiable and the graph shows its steps. The function spellings (dg.hypot,
    # ...) are in functions.py.

    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """beta * self + alpha * (mat1 @ mat2), mat1 and mat2 matrices; self broadcasts to the
        product's shape (with beta = 0 its values are not read, as PyTorch's)."""
        for name, mat in (("mat1", mat1), ("mat2", mat2)):
            if getattr(mat, "ndim", None) != 2:
                raise RuntimeError(f"addmm: {name} must be a matrix, got a "
                                   f"{getattr(mat, 'ndim', 0)}-D tensor")
        return _plus_product(self, MatMul.apply(mat1, mat2), beta, alpha, "addmm")

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        """beta * self + alpha * (batch1 @ batch2) for batches of matrices (b, n, m) @ (b, m, p)
        (the scaled attention scores of some transformers)."""
        for name, batch in (("batch1", batch1), ("batch2", batch2)):
            if getattr(batch, "ndim", None) != 3:
                raise RuntimeError(f"baddbmm: {name} must be a 3D tensor, got a "
                                   f"{getattr(batch, 'ndim', 0)}-D tensor")
        if batch1.shape[0] != batch2.shape[0]:
            raise RuntimeError(f"baddbmm: batch1 and batch2 must have the same number of "
                               f"matrices, got {batch1.shape[0]} and {batch2.shape[0]}")
        return _plus_product(self, MatMul.apply(batch1, batch2), beta, alpha, "baddbmm")

    def hypot(self, other: Any) -> Tensor:
        """sqrt(x² + y²), the hypotenuse;  d/dx = x / hypot,  d/dy = y / hypot."""
        _floats_only("hypot", self, other)
        return (self * self + other * other).sqrt()

    def logaddexp(self, other: Any) -> Tensor:
        """log(exp(x) + exp(y)), computed as m + log(exp(x - m) + exp(y - m)) with m the larger
        of the two (a constant of the graph: it cancels in the derivative), so nothing
        overflows;  d/dx = exp(x) / (exp(x) + exp(y))."""
        _floats_only("logaddexp", self, other)
        m = Maximum.apply(self, other).detach()
        return m + ((self - m).exp() + (other - m).exp()).log()

    def xlogy(self, other: Any) -> Tensor:
        """x * log(y), and 0 where x = 0 (even where y = 0: the convention of entropies and
        KL divergences, 0 log 0 = 0), NaN where y is NaN;  d/dx = log(y), d/dy = x / y (0 where
        x = 0 and y <= 0, where PyTorch's is 0 / 0)."""
        other = _as_operand(other)
        # NOTE: y read as 1 where x = 0 and y <= 0, so log reads no 0 there (no warning, no
        # 0 * -inf = NaN); x's gradient is log(y) elsewhere, as PyTorch's
        unread = Tensor(backend.get_array_module(self.array).logical_and(self.array == 0,
                                                                         other.array <= 0))
        return self * Where.apply(unread, Tensor(np.ones((), other.dtype)), other).log()

    def sinc(self) -> Tensor:
        """sin(πx) / (πx), and 1 at x = 0 (its limit; gradient 0 there)."""
        zero = Tensor(self.array == 0)
        pix = Where.apply(zero, 1.0, math.pi * self)  # NOTE: no 0 / 0 at x = 0
        return Where.apply(zero, 1.0, pix.sin() / pix)

    def trunc(self) -> Tensor:
        """The integer part, rounded toward zero (floor above 0, ceil below);  derivative 0.
        Integers come back as they are (a copy)."""
        if self.dtype.kind != "f":
            return Clone.apply(self)
        return Where.apply(Tensor(self.array >= 0), self.floor(), self.ceil())

    def frac(self) -> Tensor:
        """x - trunc(x): the fractional part, with x's sign;  d/dx = 1."""
        _floats_only("frac", self)
        return self - self.trunc()

    def fmod(self, other: Any) -> Tensor:
        """C's fmod: x - trunc(x / y) * y, with the sign of x (``%``, remainder, has y's);
        d/dx = 1, d/dy = -trunc(x / y). Integers stay integers (a zero divisor raises)."""
        floats = self.dtype.kind == "f" or isinstance(other, float) or (
            isinstance(other, Tensor) and other.dtype.kind == "f")
        if floats:
            return self - (self / other).trunc() * other
        if (backend.get_array_module(self.array).asarray(_data_of(other)) == 0).any():
            raise RuntimeError("ZeroDivisionError: fmod of integers by 0")
        return Tensor(backend.get_array_module(self.array).fmod(self.array, _data_of(other)))

    def copysign(self, other: Any) -> Tensor:
        """|x| with the sign of y (-0.0 counts as negative), always a float;  d/dx =
        sign(x) sign(y) (0 at x = 0), d/dy = 0."""
        xp = backend.get_array_module(self.array)
        signs = xp.asarray(_data_of(other))
        dtype = signs.dtype if signs.dtype.kind == "f" and isinstance(other, Tensor) \
            else DEFAULT_FLOAT
        magnitude = self.abs() * Tensor(xp.copysign(xp.ones((), dtype), signs).astype(dtype))
        return magnitude + _zeros_from(other) if isinstance(other, Tensor) else magnitude

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Tensor:
        """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default the
        largest and the lowest finite value of the dtype);  derivative 0 where replaced."""
        if self.dtype.kind != "f":
            return Clone.apply(self)
        xp, finfo = backend.get_array_module(self.array), np.finfo(self.dtype)
        out = self.masked_fill(Tensor(xp.isnan(self.array)), nan)
        out = out.masked_fill(Tensor(xp.isposinf(self.array)),
                              finfo.max if posinf is None else posinf)
        return out.masked_fill(Tensor(xp.isneginf(self.array)),
                               finfo.min if neginf is None else neginf)

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """The sum with NaNs counted as 0 (they get gradient 0)."""
        x = self if dtype is None else self.to(dtype)
        if x.dtype.kind == "f":
            x = x.masked_fill(x.isnan(), 0)
        return x.sum(dim, keepdim)

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        """The mean of the values that are not NaN: nansum / how many are not NaN (NaN where
        none is)."""
        x = self if dtype is None else self.to(dtype)
        if x.dtype.kind != "f":
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                               f"dtype but got {scalar_type_name(x.dtype)} (convert it with "
                               ".float())")
        present = x.isnan().logical_not().sum(dim, keepdim)
        # NOTE: NaN where nothing is present, without numpy's warning of 0 / 0
        return Where.apply(present == 0, math.nan,
                           x.nansum(dim, keepdim) / present.clamp_min(1).to(x.dtype))

    def scatter_reduce(self, dim: int, index: Any, src: Any, reduce: str, *,
                       include_self: bool = True) -> Tensor:
        """A copy of x where each entry that ``index`` targets along ``dim`` (as in
        ``scatter_add``) is the ``reduce`` ("sum", "prod", "mean", "amax", "amin") of the src
        values scattered there, and of its own value when ``include_self``.

        NOTE [contributors as rows] Each entry of x gets one row holding its contributors (its
        own value where included, or where nothing lands; then the src values that land on it),
        padded with the reduction's identity; the rows are picked from x and src by indexing
        and reduced with the ordinary reductions. So the gradients are theirs (prod's with
        zeros, amax's shared among ties, as PyTorch's) and twice differentiable.
        """
        reductions = ("sum", "prod", "mean", "amax", "amin")
        # NOTE: PyTorch also takes "max" and "min" (scatter's older names) for amax and amin
        reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
        if reduce not in reductions:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                               f"got {reduce}")
        dim = normalize_dim(dim, self.ndim, fn="scatter_reduce")
        index = _index_arg(self, "scatter_reduce", index, dim)
        if not isinstance(src, Tensor) or src.dtype != self.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype (give "
                               f"src as a tensor of dtype {self.dtype})")
        positions = _host_array(index).astype(np.int64)
        coords = list(np.indices(positions.shape))
        coords[dim] = positions
        targets = np.ravel_multi_index(tuple(coords), self.shape).reshape(-1)  # into x.flat
        size = self.numel()
        landing = np.bincount(targets, minlength=size)
        own = np.full(size, include_self) | (landing == 0)
        counts = landing + own
        identity_slot = size + targets.size
        rows = np.full((size, int(counts.max()) if size else 1), identity_slot, np.int64)
        rows[own, 0] = np.flatnonzero(own)
        order = np.argsort(targets, kind="stable")
        grouped = targets[order]
        rank = np.arange(grouped.size) - np.searchsorted(grouped, grouped)  # within a target
        rows[grouped, own[grouped] + rank] = size + order
        kind = self.dtype.kind == "f"
        identity = {"sum": 0, "mean": 0, "prod": 1,
                    "amax": -math.inf if kind else np.iinfo(self.dtype).min,
                    "amin": math.inf if kind else np.iinfo(self.dtype).max}[reduce]
        xp = backend.get_array_module(self.array)
        picked = src[tuple(slice(0, n) for n in positions.shape)]  # the corner index covers
        pool = Cat.apply(self.reshape(-1), picked.reshape(-1),
                         Tensor(xp.full(1, identity, dtype=self.dtype)), axis=0)
        gathered = pool[Tensor(xp.asarray(rows))]
        if reduce == "mean":
            counted = Tensor(xp.asarray(counts.astype(self.dtype)))
            out = gathered.sum(-1) / counted if kind else gathered.sum(-1) // counted
        else:
            out = {"sum": gathered.sum, "prod": gathered.prod, "amax": gathered.amax,
                   "amin": gathered.amin}[reduce](-1)
        return out.reshape(*self.shape)

    # ------------------------------------------------------------------ issue 37: order statistics
    # Values picked from the sorted tensor (the Sort op carries their gradients back to where
    # they came from), their indices alongside as int64.

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """(values, indices) of the k-th smallest entry (k from 1) along ``dim``.
        (Where equal values tie, which one's index comes back is PyTorch's kernel's choice;
        here the first in sorted order.)"""
        x = self.reshape(1) if self.ndim == 0 else self
        dim = normalize_dim(dim, x.ndim, fn="kthvalue")
        if not 1 <= k <= x.shape[dim]:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension "
                               f"{dim} (k = {k}, size {x.shape[dim]})")
        order = x.sort(dim)
        xp = backend.get_array_module(self.array)
        position = Tensor(xp.full(x.shape[:dim] + (1,) + x.shape[dim + 1:], k - 1, np.int64))
        return _picked(self, order, position, dim, keepdim)

    def median(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The lower median: the middle value, the lower of the two middle ones for an even
        count, NaN where there is a NaN. Without ``dim``, of every entry: one value, whose
        gradient is shared evenly among the entries equal to it (as PyTorch's). With ``dim``:
        (values, indices) along it, the gradient going to the entry indexed."""
        xp = backend.get_array_module(self.array)
        if dim is None:
            if self.numel() == 0:
                return Tensor(xp.asarray(math.nan, dtype=self.dtype))
            flat = self.reshape(-1)
            middle = flat.detach().kthvalue((self.numel() + 1) // 2).values
            if self.dtype.kind != "f":  # no gradient to share
                return middle
            if bool(xp.isnan(self.array).any()):
                middle = Tensor(xp.asarray(math.nan, dtype=self.dtype))
            chosen = Tensor(xp.isnan(flat.array) if xp.isnan(middle.array)
                            else flat.array == middle.array)
            count = int(chosen.array.sum())
            # NOTE: middle plus the mean of (x - middle) over the entries equal to it, which
            # is 0: the value is middle exactly, and each of them gets 1/count of the gradient
            return middle + Where.apply(chosen, flat - middle, 0).sum() / count
        x = self.reshape(1) if self.ndim == 0 else self
        dim = normalize_dim(dim, x.ndim, fn="median")
        n = x.shape[dim]
        # the lower middle; where a NaN is, the first NaN (sorted last, in their order)
        missing = xp.isnan(x.array) if x.dtype.kind == "f" else xp.zeros(x.shape, bool)
        present = n - missing.sum(axis=dim, keepdims=True)
        position = xp.where(present < n, present, (n - 1) // 2).astype(np.int64)
        return _picked(self, x.sort(dim), Tensor(position), dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """(values, indices): the most frequent value along ``dim`` (the smallest of equally
        frequent ones) and the index of its last occurrence, as PyTorch's; the gradient goes
        to that entry."""
        x = self.reshape(1) if self.ndim == 0 else self
        dim = normalize_dim(dim, x.ndim, fn="mode")
        rows = np.moveaxis(backend.to_numpy(x.array), dim, -1)
        flat = rows.reshape(-1, rows.shape[-1])
        last = np.zeros(len(flat), dtype=np.int64)
        for r, row in enumerate(flat):
            values, counts = np.unique(row, return_counts=True)
            most = values[np.argmax(counts)]  # the first of the largest counts: the smallest
            last[r] = np.flatnonzero(row == most)[-1]
        index = np.expand_dims(last.reshape(rows.shape[:-1]), dim)
        return _picked(self, x, Tensor(backend.to_device(index, self.device)), dim, keepdim)

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Tensor:
        """The q-th quantiles (q in [0, 1], a number or a 1-D tensor of them) along ``dim``
        (of every entry when None): at rank q (n - 1) of the sorted values, between two
        entries by ``interpolation`` (linear, lower, higher, midpoint, nearest); NaN where
        there is a NaN. A 1-D q puts its dimension first. Differentiable: the value is a
        linear interpolation of two sorted entries."""
        modes = ("linear", "lower", "higher", "midpoint", "nearest")
        if self.dtype.kind != "f":
            raise RuntimeError("quantile() input tensor must be either float or double dtype "
                               "(convert it with .float())")
        if isinstance(q, Tensor):
            if q.ndim > 1:
                raise RuntimeError("quantile() q must be a scalar or 1D tensor")
            if q.dtype != self.dtype:
                raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qs = np.asarray(_host_array(q), dtype=self.dtype)
        if qs.size and (qs.min() < 0 or qs.max() > 1):
            bad = qs[(qs < 0) | (qs > 1)].reshape(-1)[0]
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {bad}")
        if interpolation not in modes:
            raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                               f"midpoint or nearest, but got {interpolation}")
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else normalize_dim(dim, x.ndim, fn="quantile")
        if x.ndim == 0:
            x = x.reshape(1)
        last = x.permute(*[i for i in range(x.ndim) if i != d], d)  # the dim last
        ordered, n = last.sort(-1).values, last.shape[-1]
        if n == 0:
            raise RuntimeError("quantile() input tensor must be non-empty")
        has_nan = np.isnan(backend.to_numpy(last.array)).any(-1, keepdims=True)
        ranks = np.where(has_nan, n - 1, qs.reshape(-1) * (n - 1)).astype(self.dtype)
        below, above = np.floor(ranks), np.ceil(ranks)
        if interpolation == "nearest":
            below = above = np.round(ranks)  # halves to even, as PyTorch's
        weights = {"linear": ranks - below, "midpoint": np.where(above > below, 0.5, 0.0)} \
            .get(interpolation, np.zeros_like(ranks)).astype(self.dtype)
        if interpolation == "higher":
            below = above
        xp = backend.get_array_module(self.array)
        picked = [ordered.gather(-1, Tensor(xp.asarray(r.astype(np.int64)))) for r in
                  (below, above)]
        out = picked[0].lerp(picked[1], Tensor(xp.asarray(weights)))  # (..., len(q))
        out = out.permute(out.ndim - 1, *range(out.ndim - 1))  # q first
        if keepdim:
            out = out.reshape(out.shape[0], *[1] * self.ndim) if dim is None \
                else out.unsqueeze(d + 1)
        return out.squeeze(0) if qs.ndim == 0 else out

    def msort(self) -> Tensor:
        """The values sorted along dim 0: ``x.sort(0).values``."""
        return self.sort(0).values

    # ------------------------------------------------------------------ issue 37: the rest
    # Counting and integer functions (bincount, histc, gcd, lcm, heaviside, unique_consecutive)
    # run on the values outside the graph, as PyTorch's have no derivative; the others are
    # composed from differentiable ops.

    def bincount(self, weights: Any = None, minlength: int = 0) -> Tensor:
        """How many times each value 0, 1, ..., max occurs in a 1-D tensor of non-negative
        integers (at least ``minlength`` counts); with ``weights``, their sums instead
        (float32 weights give float32, others float64, as PyTorch's). No gradient."""
        if self.dtype.kind not in "iub":
            raise NotImplementedError(f'"bincount" not implemented for '
                                      f"'{scalar_type_name(self.dtype)}' (give integers, "
                                      "e.g. x.long())")
        values = _host_array(self)
        if values.ndim != 1 or (values.size and values.min() < 0):
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            counts = np.bincount(values, minlength=minlength).astype(np.int64)
        else:
            weights = _host_array(weights)
            dtype = weights.dtype if weights.dtype in (np.float32, np.float64) else np.float64
            counts = np.bincount(values, weights.astype(np.float64), minlength).astype(dtype)
        return Tensor(backend.to_device(counts, self.device))

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
        """Counts of the values in ``bins`` equal bins over [min, max] (the values' own range
        when both are 0, widened by 1 each way when that is one point); values outside are
        left out, max counts in the last bin. In x's (float) dtype, no gradient."""
        if self.dtype.kind != "f":
            raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                      f"'{scalar_type_name(self.dtype)}' (convert it with "
                                      ".float())")
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        values = _host_array(self).reshape(-1)
        low, high = self.dtype.type(min), self.dtype.type(max)
        if low == high and values.size:
            low, high = values.min(), values.max()
        if low == high:
            low, high = low - 1, high + 1
        if low > high:
            raise RuntimeError("torch.histc: max must be larger than min")
        inside = values[(values >= low) & (values <= high)]
        # NOTE: each bin as PyTorch's kernel finds it: (v - low) / (high - low) * bins, in
        # x's dtype, the top edge counted in the last bin
        where_ = ((inside - low) / (high - low) * self.dtype.type(bins)).astype(np.int64)
        counts = np.bincount(np.minimum(where_, bins - 1), minlength=bins)
        return Tensor(backend.to_device(counts.astype(self.dtype), self.device))

    def heaviside(self, values: Any) -> Tensor:
        """The step function: 0 where x < 0, 1 where x > 0, ``values`` where x = 0 (in x's
        dtype, which values must share). No gradient, as PyTorch's."""
        if not isinstance(values, Tensor):
            raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not "
                            f"{type(values).__name__}")
        if values.dtype != self.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               f"dtypes ({self.dtype} and {values.dtype}: convert one)")
        xp = backend.get_array_module(self.array)
        return Tensor(xp.where(self.array == 0, values.array,
                               (self.array > 0).astype(self.dtype)).astype(self.dtype))

    def gcd(self, other: Any) -> Tensor:
        """The greatest common divisor, entry by entry, of integer tensors (gcd(0, 0) = 0)."""
        return _integer_pairs("gcd", self, other)

    def lcm(self, other: Any) -> Tensor:
        """The least common multiple, entry by entry, of integer tensors (|a b| / gcd(a, b))."""
        return _integer_pairs("lcm", self, other)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        """The values with each run of equal consecutive entries (slices along ``dim``) kept
        once (of every entry, flattened, when ``dim`` is None); where each entry went and how
        long each run is, as ``unique``'s."""
        values = _host_array(self)
        if dim is None:
            values, axis = values.reshape(-1), 0
        else:
            axis = normalize_dim(dim, self.ndim, fn="unique_consecutive")
            values = np.moveaxis(values, axis, 0)
        n = values.shape[0]
        changes = np.ones(n, dtype=bool)
        if n > 1:
            changes[1:] = (values[1:] != values[:-1]).reshape(n - 1, -1).any(axis=1)
        starts = np.flatnonzero(changes)
        kept = values[starts] if dim is None else np.moveaxis(values[starts], 0, axis)
        out = [np.ascontiguousarray(kept)]
        if return_inverse:
            inverse = (np.cumsum(changes) - 1).astype(np.int64)
            out.append(inverse.reshape(self.shape) if dim is None else inverse)
        if return_counts:
            out.append(np.diff(np.append(starts, n)).astype(np.int64))
        out = [Tensor(backend.to_device(part, self.device)) for part in out]
        return out[0] if len(out) == 1 else tuple(out)

    def kron(self, other: Any) -> Tensor:
        """The Kronecker product: every entry of x times the whole of ``other``, in blocks
        (shape x.shape * other.shape, the shorter one padded with 1s in front). A broadcast
        product and a reshape, so its gradients are theirs."""
        ndim = max(self.ndim, other.ndim)
        a = self.reshape(*(1,) * (ndim - self.ndim), *self.shape)
        b = other.reshape(*(1,) * (ndim - other.ndim), *other.shape)
        interleaved = (a.reshape(*[s for n in a.shape for s in (n, 1)])
                       * b.reshape(*[s for n in b.shape for s in (1, n)]))
        return interleaved.reshape(*[m * n for m, n in zip(a.shape, b.shape)])

    def rot90(self, k: int = 1, dims: Any = (0, 1)) -> Tensor:
        """Rotated by 90 degrees ``k`` times in the plane of ``dims``, from the first toward
        the second: a flip and a transpose (k = 2: two flips), as PyTorch's."""
        dims = tuple(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if self.ndim < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
        d0, d1 = (normalize_dim(d, self.ndim, fn="rot90") for d in dims)
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} "
                               f"and dim1 = {d1}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip(d0, d1)
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return Clone.apply(self)

    def cummax(self, dim: int) -> ValuesIndices:
        """(values, indices): the largest value so far along ``dim`` and where it is (the
        latest of equal ones; a NaN, once met, stays); the gradient goes to that entry."""
        return _running_extreme(self, dim, "cummax")

    def cummin(self, dim: int) -> ValuesIndices:
        """(values, indices): the smallest value so far along ``dim`` (as cummax)."""
        return _running_extreme(self, dim, "cummin")

    def logcumsumexp(self, dim: int) -> Tensor:
        """log(exp(x_0) + ... + exp(x_j)) along ``dim``: each prefix's logsumexp, so nothing
        overflows or underflows. Written over a triangle (row j holds x_0..x_j, then -inf), as
        cumprod is: n^2 for n entries along dim, fine at the sizes one reads."""
        if self.dtype.kind != "f":
            raise NotImplementedError(f'"logcumsumexp" not implemented for '
                                      f"'{scalar_type_name(self.dtype)}' (convert it with "
                                      ".float())")
        return _over_prefixes(self, "logcumsumexp", dim, -np.inf, lambda rows: rows.logsumexp(-1))

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Tensor:
        """The entries at ``indices`` along ``dim``, the other dims broadcast between x and the
        indices (``x.take_along_dim(x.argsort(1), 1)`` sorts each row); with no dim, of the
        flattened x. A gather, so the gradient goes to the entries taken."""
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        if indices.ndim != self.ndim:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the "
                               f"same number of dimensions, but got {self.ndim} dimensions for "
                               f"input, and {indices.ndim} dimensions for indices")
        dim = normalize_dim(dim, self.ndim, fn="take_along_dim")
        rest = np.broadcast_shapes(*[tuple(1 if d == dim else n for d, n in enumerate(t.shape))
                                     for t in (self, indices)])
        x = self.expand(*[self.shape[d] if d == dim else n for d, n in enumerate(rest)])
        index = indices.expand(*[indices.shape[d] if d == dim else n
                                 for d, n in enumerate(rest)])
        return x.gather(dim, index)

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        body = np.array2string(backend.to_numpy(self.array), separator=", ", prefix="tensor(",
                               **_PRINT_OPTIONS)
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


# How tensors print: numpy's array2string options, set by set_printoptions.
_PRINT_OPTIONS: dict[str, Any] = {"precision": 4}


def set_printoptions(precision: int | None = None, threshold: int | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """How tensors print, with PyTorch's arguments (``precision`` digits after the point,
    ``threshold`` entries before the middle is summarised as ``...``, ``edgeitems`` shown at
    each end, ``linewidth``; ``profile`` "default", "short" or "full"; ``sci_mode=False``
    never uses scientific notation). Only what is given changes.

    >>> dg.set_printoptions(precision=2)
    >>> dg.tensor([1/3])
    tensor([0.33])
    """
    profiles = {"default": {"precision": 4}, "short": {"precision": 2, "edgeitems": 2},
                "full": {"precision": 4, "threshold": sys.maxsize}}
    if profile is not None:
        if profile not in profiles:
            raise ValueError(f"set_printoptions: profile is one of {list(profiles)}, "
                             f"got {profile!r}")
        _PRINT_OPTIONS.clear()  # NOTE: from how a tensor prints at import, then the profile
        _PRINT_OPTIONS.update(profiles[profile])
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "max_line_width": linewidth}
    _PRINT_OPTIONS.update({k: v for k, v in given.items() if v is not None})
    if sci_mode is not None:
        _PRINT_OPTIONS["suppress_small"] = not sci_mode


# ---------------------------------------------------------------------------- helpers


def wrap_output(data: Any, grad_fn: Any) -> Tensor:
    """The fast constructor used by Function.apply: ``data`` is already an array. An output
    recorded in the graph shares its node's id."""
    tensor = Tensor.__new__(Tensor)
    tensor.array = data
    tensor._requires_grad = grad_fn is not None
    tensor._grad_fn = grad_fn
    tensor._grad = None
    tensor.name = None
    tensor.id = new_node_id() if grad_fn is None else grad_fn.id
    tensor._counter = None
    tensor._announced = 0
    tensor._hooks = None
    tensor._view = None
    return tensor


def _several_views(pieces: list[Tensor], op_name: str) -> tuple[Tensor, ...]:
    """The views one op returned together (split, chunk, unbind): PyTorch refuses an in-place
    op on any of them while the graph records (NOTE [views and in-place])."""
    for index, piece in enumerate(pieces):
        if piece._view is not None and piece._view.creation is None:
            piece._view.creation = (op_name, index)
    return tuple(pieces)


def _partly_overlap(a: Any, b: Any) -> bool:
    """Do arrays ``a`` and ``b`` share some memory without being the same elements (x += x is
    fine; x[1:] += x[:-1] would read what it has already written)?"""
    if not _may_share_memory(a, b):
        return False
    same = (a.shape == b.shape and a.strides == b.strides
            and backend.data_address(a) == backend.data_address(b))
    return not same and (type(a) is not np.ndarray or np.shares_memory(a, b))


def _viewable(array: Any, shape: tuple) -> bool:
    """Can ``array``'s memory be read in ``shape`` without a copy (what ``view`` needs)? (A
    wrong size says yes: reshape's own error then says which.)"""
    xp = backend.get_array_module(array)
    try:
        xp.reshape(array, shape, copy=False)  # numpy 2.1 on: refuses where it would copy
    except TypeError:  # older numpy, CuPy: no copy=; setting the shape refuses a copy instead
        try:
            array.view().shape = shape
        except AttributeError:
            return False
        except ValueError:
            return True
    except ValueError as exc:
        return "copy" not in str(exc)
    return True


def _copy_into(target: Any, values: Any) -> None:
    """``target[...] = values``, casting only within a kind (float64 into float32, not float
    into int), as PyTorch's in-place ops do."""
    xp = backend.get_array_module(target)
    try:
        xp.copyto(target, values, casting="same_kind")
    except TypeError as exc:
        raise RuntimeError(
            f"result type {scalar_type_name(values.dtype)} can't be cast to the desired output "
            f"type {scalar_type_name(target.dtype)}: convert first with .to(dtype)"
        ) from exc


def _may_share_memory(a: Any, b: Any) -> bool:
    """Could arrays ``a`` and ``b`` overlap in memory? (A cheap bounds check: numpy's, CuPy's.)"""
    if type(a) is np.ndarray:
        return type(b) is np.ndarray and np.may_share_memory(a, b)
    check = getattr(backend.get_array_module(a), "may_share_memory", None)
    return True if check is None else bool(check(a, b))


class ValuesIndices(NamedTuple):
    """What ``x.max(dim)`` and ``x.min(dim)`` return, as PyTorch does: ``values, idx =
    x.max(1)``, or ``.values`` and ``.indices``."""

    values: Tensor
    indices: Tensor


def _reduction_args(fn: str, ndim: int, dim: Any, axis: Any, keepdim: Any,
                    keepdims: Any) -> tuple[Any, bool]:
    """dim (normalized; None for every dimension) and keepdim, from either spelling."""
    dim = normalize_dims(one_spelling(fn, "dim", dim, "axis", axis), ndim, "dim", fn)
    return dim, bool(one_spelling(fn, "keepdim", keepdim, "keepdims", keepdims, False))


def _variance_args(fn: str, tensor: Tensor, dim: Any, unbiased: Any, keepdim: Any,
                   correction: Any, axis: Any, keepdims: Any) -> tuple[Any, bool, Any]:
    """dim, keepdim and correction of var / std, from either spelling; warns, with PyTorch's
    words, where no degrees of freedom are left (the result is nan, as in PyTorch)."""
    dim, keepdim = _reduction_args(fn, tensor.ndim, dim, axis, keepdim, keepdims)
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}() got both unbiased= and correction=: pass only one")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    correction = 1 if correction is None else correction
    dims = range(tensor.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    if math.prod(tensor.shape[d] for d in dims) - correction <= 0:
        warnings.warn(
            f"{fn}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel): the result is nan. (The "
            f"{fn} of one number is undefined with correction=1; pass correction=0 for 0.)",
            UserWarning,
            stacklevel=3,
        )
    return dim, keepdim, correction


def _over_prefixes(x: Tensor, fn: str, dim: int, identity: Any,
                   reduce: Callable[[Tensor], Tensor]) -> Tensor:
    """Each prefix of x along ``dim``, reduced (cumprod, logcumsumexp): row j of an n x n
    triangle holds x[0..j], then the reduction's identity, and ``reduce`` folds each row. So the
    graph shows that reduction and the gradients are its own (a product's zeros included), twice
    differentiable; it costs n^2 for n entries along dim, fine at the sizes one reads."""
    dim = normalize_dim(dim, x.ndim, fn)
    if x.ndim == 0:
        return x * 1
    last = x.transpose(dim, -1)
    n = last.shape[-1]
    triangle = np.tril(np.ones((n, n), dtype=bool))
    rows = last.unsqueeze(-2).expand(*last.shape[:-1], n, n)
    filled = Where.apply(Tensor(triangle), rows, Tensor(np.full((), identity, x.dtype)))
    return reduce(filled).transpose(dim, -1)


def _refuse_two_bools(fn: str, a: Any, b: Any) -> None:
    """``mask // mask`` and ``mask % mask``: PyTorch has no such kernel (numpy counts in int8)."""
    if all(isinstance(v, Tensor) and v.dtype.kind == "b" for v in (a, b)):
        raise NotImplementedError(
            f"\"{fn}\" not implemented for 'Bool' tensors on both sides; convert one first, "
            f"e.g. a.long() // b")


def _floor_divide(a: Any, b: Any) -> Tensor:
    """``a // b``: floor(a / b), in the operands' dtype (integers stay integers)."""
    _refuse_two_bools("floor_divide", a, b)
    return FloorDivide.apply(a, b)


def _host_array(value: Any) -> np.ndarray:
    """A tensor's, an array's (numpy or CuPy) or a list's values as a numpy array."""
    data = _data_of(value)
    return backend.to_numpy(data) if backend.is_array(data) else np.asarray(data)


def _index_tensor(index: Any) -> Any:
    """An index given as a tensor, a list or an array, as a Tensor of int64 positions."""
    return index if isinstance(index, Tensor) else Tensor(np.asarray(index, dtype=np.int64))


def _data_of(value: Any) -> Any:
    return value.array if isinstance(value, Tensor) else value


def _shape_arg(shape: tuple) -> tuple:
    """Accept both f(2, 3) and f((2, 3))."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def normalize_key(key: Any, xp: Any) -> Any:
    """An index key with Tensors and lists turned into arrays of the tensor's array module. A
    0-d integer tensor or array is an integer, as in PyTorch: ``x[i]`` with ``i =
    dg.tensor(1)`` is a view, like ``x[1]`` (numpy would copy)."""
    if isinstance(key, tuple):
        return tuple(normalize_key(k, xp) for k in key)
    if isinstance(key, Tensor):
        key = key.array
    elif isinstance(key, list):
        return xp.asarray(key)
    if backend.is_array(key) and key.ndim == 0 and key.dtype.kind in "iu":
        return int(key)
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
    "int": np.int32,  # as in PyTorch: torch.int is int32
    "bool": np.bool_,
}


# PyTorch's names of dtypes (its ScalarType), as its error messages say them.
_SCALAR_TYPE_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "uint8": "Byte",
    "bool": "Bool",
}


def scalar_type_name(dtype: Any) -> str:
    """PyTorch's name of a dtype, as in its messages: float64 is 'Double', int64 'Long'."""
    name = np.dtype(dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name)


def resolve_dtype(dtype: Any) -> np.dtype:
    """A numpy dtype from ``dg.float32``, ``'float64'``, ``np.int64``, ``dg.LongTensor``..."""
    if isinstance(dtype, type) and type(dtype).__name__ == "TensorType":  # dg.FloatTensor
        return dtype.dtype
    if isinstance(dtype, str):
        key = dtype.lower().removeprefix("torch.").removeprefix("dg.")
        if key.endswith("tensor") and key != "tensor":  # x.type('torch.FloatTensor')
            by_name = {name.lower(): np.dtype(kind) for kind, name in _SCALAR_TYPE_NAMES.items()}
            if key.removesuffix("tensor") in by_name:
                return by_name[key.removesuffix("tensor")]
        if key not in _DTYPE_NAMES:
            raise TypeError(f"unknown dtype {dtype!r}; use one of {sorted(_DTYPE_NAMES)}")
        return np.dtype(_DTYPE_NAMES[key])
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}; use e.g. dg.float32 or dg.float64") from None


def _plus_product(self: Tensor, product: Tensor, beta: Any, alpha: Any, fn: str) -> Tensor:
    """beta * self + alpha * product (addmm, baddbmm): self must broadcast to the product's
    shape; beta = 0 reads none of self's values (a NaN there stays out, as PyTorch's)."""
    try:
        fits = np.broadcast_shapes(self.shape, product.shape) == product.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{fn}: the input of shape {tuple(self.shape)} cannot be broadcast "
                           f"to the product's shape {tuple(product.shape)}")
    scaled = product if alpha == 1 else alpha * product
    if beta == 0:  # self's gradient is 0, as PyTorch's; its values are not read
        return scaled + _zeros_from(self)
    return (self if beta == 1 else beta * self) + scaled


def _picked(self: Tensor, order: Any, position: Tensor, dim: int,
            keepdim: bool) -> ValuesIndices:
    """(values, indices) of the entries at ``position`` (size 1 along ``dim``) of ``order``:
    x.sort(dim) (kthvalue, median), or x itself (mode), shaped as ``self`` reduced over dim."""
    if isinstance(order, Tensor):  # picked from x itself: the positions are the indices
        values, indices = order.gather(dim, position), position
    else:
        values, indices = order.values.gather(dim, position), order.indices.gather(dim, position)
    if self.ndim == 0:
        return ValuesIndices(values.reshape(()), indices.reshape(()))
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return ValuesIndices(values, indices)


def _index_along(fn: str, tensor: Tensor, dim: int, index: Any,
                 source: Any = None) -> tuple[int, np.ndarray]:
    """dim (normalized) and the positions of index_add / index_copy / index_fill (a vector,
    or one number, of int64 along ``dim``), with ``source``'s shape and dtype, checked as
    PyTorch checks them."""
    dim = normalize_dim(dim, tensor.ndim, fn=fn)
    positions = _host_array(index)
    if positions.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index but got: "
                           f"{scalar_type_name(positions.dtype)} (convert it with .long())")
    if positions.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector, but got dim: "
                         f"{positions.ndim} with size: {list(positions.shape)}")
    positions = positions.reshape(-1)
    n = tensor.shape[dim] if tensor.ndim else 1
    if positions.size and (int(positions.min()) < 0 or int(positions.max()) >= n):
        bad = int(positions.min()) if int(positions.min()) < 0 else int(positions.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
    if source is None:
        return dim, positions
    if not isinstance(source, Tensor) or source.dtype != tensor.dtype:
        raise RuntimeError(f"{fn}(): self ({scalar_type_name(tensor.dtype)}) and source "
                           f"({scalar_type_name(getattr(source, 'dtype', type(source)))}) "
                           "must have the same scalar type")
    if source.ndim != tensor.ndim or any(a != b for d, (a, b) in
                                         enumerate(zip(source.shape, tensor.shape)) if d != dim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(tensor.shape)} "
                           f"source.shape = {list(source.shape)}")
    if source.shape[dim] != positions.size:
        raise RuntimeError(f"{fn}(): Number of indices ({positions.size}) should be equal to "
                           f"source.size(dim): ({source.shape[dim]}), for dim: {dim}")
    return dim, positions


def _spread_along(tensor: Tensor, positions: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """The positions along ``dim`` as a scatter index of ``shape`` (the same in every slice)."""
    along = positions.reshape([-1 if d == dim else 1 for d in range(len(shape))])
    return Tensor(backend.to_device(np.broadcast_to(along, shape).copy(), tensor.device))


def _integer_pairs(fn: str, a: Tensor, b: Any) -> Tensor:
    """gcd / lcm of two integer tensors (broadcast), numpy's, outside the graph."""
    if not isinstance(b, Tensor):
        raise TypeError(f"{fn}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    for t in (a, b):
        if t.dtype.kind not in "iu":
            raise NotImplementedError(f'"{fn}_cpu" not implemented for '
                                      f"'{scalar_type_name(t.dtype)}' (integers only)")
    xp = backend.get_array_module(a.array)
    return Tensor(getattr(xp, fn)(a.array, b.array))


def _running_extreme(x: Tensor, dim: int, fn: str) -> ValuesIndices:
    """cummax / cummin: the index of the running extreme along ``dim`` found on the host
    (ties move it on, a NaN holds it), the values gathered there (gradient to them)."""
    dim = normalize_dim(dim, x.ndim, fn=fn)
    if x.ndim == 0:
        return ValuesIndices(Clone.apply(x), Tensor(np.int64(0)))
    values = np.moveaxis(_host_array(x), dim, -1)
    better = np.greater_equal if fn == "cummax" else np.less_equal
    best = np.zeros(values.shape, dtype=np.int64)
    for j in range(1, values.shape[-1]):
        held = np.take_along_axis(values, best[..., j - 1:j], -1)[..., 0]
        moves = (better(values[..., j], held) | np.isnan(values[..., j])) & ~np.isnan(held) \
            if values.dtype.kind == "f" else better(values[..., j], held)
        best[..., j] = np.where(moves, j, best[..., j - 1])
    index = Tensor(backend.to_device(np.moveaxis(best, -1, dim), x.device))
    return ValuesIndices(x.gather(dim, index), index)


def _zeros_from(x: Tensor) -> Tensor:
    """Zeros of x's shape and dtype that are x's descendant in the graph: x's gradient
    through them is 0 (a tensor, not None), whatever x holds (NaN and inf included)."""
    return Where.apply(Tensor(np.zeros((), bool)), x, Tensor(np.zeros((), x.dtype)))


def _floats_only(fn: str, *operands: Any) -> None:
    """PyTorch has no integer kernel for ``fn`` (hypot, logaddexp, frac): its error, with the
    fix."""
    if not any(isinstance(v, Tensor) and v.dtype.kind == "f" for v in operands):
        dtype = next(v.dtype for v in operands if isinstance(v, Tensor))
        raise NotImplementedError(f'"{fn}" not implemented for \'{scalar_type_name(dtype)}\' '
                                  "(convert to a float first, e.g. x.float())")


def _as_operand(value: Any) -> Tensor:
    """A second operand as a tensor: Python floats in the default float dtype, ints int64."""
    if isinstance(value, Tensor):
        return value
    if backend.is_array(value):
        return Tensor(value)
    from . import factories

    return factories.tensor(value)


# ---------------------------------------------------------------------------- more ops: arguments


def _index_arg(tensor: Tensor, fn: str, index: Any, dim: int) -> Any:
    """The index of gather / scatter_add, checked as PyTorch checks it (dtype, dimensions,
    sizes, range); returned as given (a Tensor stays an input of the node)."""
    array = _data_of(index)
    if not hasattr(array, "dtype"):
        array = backend.get_array_module(tensor.array).asarray(array)
        index = array
    if array.dtype.kind not in "iu":
        raise RuntimeError(
            f"{fn}(): Expected dtype int64 for index, but got {array.dtype} (convert it with "
            ".long())"
        )
    if array.ndim != tensor.ndim:
        raise RuntimeError(
            f"{fn}(): Index tensor must have the same number of dimensions as input tensor "
            f"(index shape {tuple(array.shape)}, input shape {tuple(tensor.shape)})"
        )
    for d, (i, n) in enumerate(zip(array.shape, tensor.shape)):
        if d != dim and i > n:
            raise RuntimeError(
                f"{fn}(): Size does not match at dimension {d}: expected index "
                f"{tuple(array.shape)} to be no larger than self {tuple(tensor.shape)} apart "
                f"from dimension {dim}"
            )
    n = tensor.shape[dim] if tensor.ndim else 1
    if array.size and (int(array.min()) < 0 or int(array.max()) >= n):
        bad = int(array.min()) if int(array.min()) < 0 else int(array.max())
        raise IndexError(
            f"{fn}(): index {bad} is out of bounds for dimension {dim} with size {n}"
        )
    return index


def repeat_index(n: int, repeats: Any, output_size: int | None = None) -> np.ndarray:
    """The positions ``repeat_interleave`` picks among ``n`` entries: ``0`` repeats[0] times,
    then ``1`` repeats[1] times, ... (one count for all, or one per entry), checked as PyTorch
    checks them."""
    counts = _data_of(repeats)
    counts = backend.to_numpy(counts) if backend.is_array(counts) else np.asarray(counts)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise RuntimeError(
            "repeat_interleave: repeats must be an integer or a 0-d or 1-d tensor of integers, "
            f"got {counts.dtype} of shape {tuple(counts.shape)}"
        )
    if counts.ndim == 1 and counts.size != n and counts.size != 1:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got repeats.size(0) = "
            f"{counts.size} and input.size({n}) entries"
        )
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(n), np.broadcast_to(counts.reshape(-1), (n,)))
    if output_size is not None and output_size != index.size:
        raise RuntimeError(
            f"repeat_interleave: output_size={output_size} but the repeats make {index.size}"
        )
    return index


def _need_matrix(tensor: Tensor, fn: str) -> None:
    if tensor.ndim < 2:
        raise RuntimeError(
            f"{fn}: input tensor must have at least 2 dimensions, got shape {tuple(tensor.shape)}"
        )


def _tell_hooks_data_read(tensor: Tensor, how: str) -> None:
    """Python reads ``tensor``'s values (``how``: "bool()", "item()", "tolist()"): tell the
    installed FunctionHooks (function.py). dg.trace's warns that control flow may depend on
    data, which a trace cannot record."""
    for hook in this_thread.state.function_hooks:
        hook.data_read(tensor, how)


# NOTE [import order] The ops import Function, which imports Tensor from this module; so the op
# classes used by the dunders above, and function.py itself (its registry of FunctionHooks, read
# on data reads), are imported at the bottom, once Tensor exists.
from . import function  # noqa: E402
from .ops.arc_and_round import (  # noqa: E402
    Acos,
    Asin,
    Atan,
    Atan2,
    Ceil,
    Cosh,
    Expm1,
    Floor,
    Logit,
    Round,
    Sinh,
)
from .ops.dims import normalize_dim, normalize_dims, normalize_sizes, one_spelling  # noqa: E402
from .ops.elementwise import (  # noqa: E402
    Abs,
    Add,
    Clamp,
    ClampByTensors,
    Cos,
    Div,
    Exp,
    FloorDivide,
    Log,
    Log2,
    Log10,
    Maximum,
    Minimum,
    Mul,
    Neg,
    Pow,
    Relu,
    RemainderOfNumber,
    Sigmoid,
    Sin,
    Sqrt,
    Sub,
    Tanh,
    Where,
)
from .ops.index import Flip, Gather, MaskedFill, Repeat, ScatterAdd, Tril, Triu  # noqa: E402
from .ops.linalg import Det, Inverse, Outer  # noqa: E402
from .ops.matmul import MatMul  # noqa: E402
from .ops.pointwise import Erf, Log1p, Sign, Square  # noqa: E402
from .ops.reduce import (  # noqa: E402
    LogSoftmax,
    LogSumExp,
    Max,
    Mean,
    Min,
    Softmax,
    Std,
    Sum,
    Var,
)
from .ops.shape import (  # noqa: E402
    Cast,
    Cat,
    Clone,
    CopySlices,
    Expand,
    Index,
    Permute,
    Reshape,
    ToDevice,
)
from .ops.stats import (  # noqa: E402
    CumSum,
    Norm,
    Prod,
    Sort,
    SortResult,
    TopK,
    TopKResult,
    sort_order,
    topk_order,
)
