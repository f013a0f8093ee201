"""Function: one node of the computation graph, and ``apply``, the one place where nodes are made.

An op is a subclass with two static methods side by side (PyTorch's ``autograd.Function``,
chainer's ``FunctionNode``, DeZero's ``Function``)::

    class Mul(Function):
        '''z = x * y;  dz/dx = y,  dz/dy = x'''
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y
        @staticmethod
        def backward(ctx, gz):
            x, y = ctx.saved_tensors
            return gz * y, gz * x

``forward`` receives raw arrays of the array module ``ctx.xp`` (numpy or cupy) and returns one
array. ``backward`` receives the gradient of that output and returns one gradient per positional
input (``None`` where none is needed). Broadcasting is undone by the engine, not by the op.
That is the engine's convention, the built-in ops' (dyngraph/ops); a custom op written by a
learner subclasses ``dg.autograd.Function`` and gets PyTorch's, Tensors in and out (NOTE
[custom ops], below).

The instance ``ctx`` *is* the graph node (PyTorch calls it ``grad_fn``): it keeps its parents,
what forward saved, and the id and shape of the tensor it produced - but never that tensor itself,
so a graph is freed by reference counting alone (no cycles).

NOTE [observers] Besides building nodes, ``apply`` tells the installed ``FunctionHook`` objects
(defined after ``Function``) about every op it runs, recorded in a graph or not; Tensor tells them
when Python reads a tensor's values (``bool(t)``, ``t.item()``). The engine's own hooks:

- ``dg.trace`` (trace.py) writes the ops down to replay them, and warns on data reads;
- ``dg.checkpoint`` (checkpoint.py) finds the weights a segment uses without receiving them;
- ``dg.memory.memory_timeline`` (memory.py) samples the bytes held for backward after each op.

Hooks see every op; the event spine (spine/events.py, ``_announce_op`` below) tells subscribers
about the graph: recorded nodes, and the backward pass.

This file is the definition of ``apply``, and the only one: what you read here is what runs.
"""

from __future__ import annotations

import operator
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from . import backend
from . import tensor as tensor_module
from .grad_mode import no_grad
from .meta import Meta, OptionType, Promotion, broadcast_or_sum
from .spine import events
from .spine.thread_state import this_thread
from .spine.walk import walk_back
from .tensor import Tensor, VersionCounter, new_node_id, wrap_output


class Function:
    """Base class of every op (arrays in and out), and of custom ops (``dg.autograd.Function``,
    Tensors in and out: NOTE [custom ops]).

    Attributes of a node (set by ``apply``):
        parents            one entry per positional input: the input's ``grad_fn``, the input
                           itself when it is a leaf that requires grad, or None (no gradient)
        needs_input_grad   tuple of bools, one per positional input
        id, shape, dtype   id, shape and dtype of the output tensor
        xp                 the array module of the inputs (numpy or cupy)
    """

    __slots__ = (
        "parents",  # per positional input: its grad_fn, the leaf itself, or None
        "xp",  # the array module of the inputs
        "id",  # the id of the output tensor
        "shape",  # the shape of the output tensor
        "dtype",  # the dtype of the output tensor (its gradient's, NOTE [gradient dtype])
        "needs_input_grad",  # per positional input: does backward need its gradient?
        "saved_arrays",  # what forward saved; None once backward released it
        "_saved_from",  # per saved array: the input Tensor it is the array of, _OUTPUT, or None
        "_saved_versions",  # per saved array: that tensor's version when forward saved it
        "_inplace_clock",  # tensor.inplace_clock when forward saved them
        "__dict__",  # rarer state: hooks, options ops keep on ctx (axis, key, ...)
        "__weakref__",
    )

    output_counter: VersionCounter | None = None  # the output's, once it needs one (see tensor.py)
    hooks: dict | None = None  # tensor hooks of this node's output (Tensor.register_hook)
    retained: weakref.ref | None = None  # the output tensor, after Tensor.retain_grad()
    where: events.SourceLine | None = None  # the forward line, recorded in anomaly mode
    # the ids of the inputs the graph does not keep, given when the graph is first described
    # afterwards (NOTE [inputs the graph does not keep]): the same each time it is
    unknown_inputs: tuple[int, ...] | None = None
    create_graph = False  # True while backward runs with create_graph=True (see autograd.py)
    sets_dtype = False  # True for ops whose output dtype is an option (Cast): no type promotion
    takes_tensors = False  # True for custom ops (dg.autograd.Function): NOTE [custom ops]
    option_types: dict[str, OptionType] = {}  # the kind of each option forward takes (meta.py)
    promotion = Promotion.DEFAULT  # how the output's dtype follows from the inputs' (meta.py)
    elementwise = False  # True: the output has the inputs' broadcast shape (meta.py)

    # ------------------------------------------------------------------ the choke point

    @classmethod
    def apply(cls, *args: Any, **options: Any) -> Tensor:
        """Run ``forward`` on the inputs' arrays and wrap the result in a Tensor; when grad mode
        is on and an input requires grad, the result remembers this node (``grad_fn``)."""
        arrays = []  # what forward sees: each Tensor's array, constants as they are
        parents = []  # where each input's gradient goes: grad_fn, the leaf itself, or None
        needs = []  # does each input need a gradient?
        requires_grad = False
        array_type = None
        for arg in args:
            if isinstance(arg, Tensor):
                if arg._view is not None:  # a view whose base changed in place: its grad_fn
                    arg._sync_view()  # is made again (NOTE [views and in-place], tensor.py)
                data = arg.array
                if arg._requires_grad:
                    requires_grad = True
                    parents.append(arg._grad_fn or arg)
                    needs.append(True)
                else:
                    parents.append(None)
                    needs.append(False)
            else:
                parents.append(None)
                needs.append(False)
                if not backend.is_array(arg):
                    if isinstance(arg, (tuple, list)) and cls.__module__.startswith("dyngraph."):
                        refuse_sequence(cls.__name__, arg)  # x - x.max(dim): forgot .values
                    arrays.append(arg)  # a number (Python's or numpy's)
                    continue
                data = arg  # a constant array
            if type(data) is not array_type:  # all arrays must live on one device
                if array_type is not None:
                    _check_one_device(cls, args)  # (array subclasses may mix on one device)
                array_type = type(data)
            arrays.append(data)

        state = this_thread.state  # this thread's modes (NOTE [modes are per thread])
        record = requires_grad and state.grad_enabled
        ctx = cls()
        ctx.xp = np if array_type is np.ndarray or array_type is None else backend.xp_of(array_type)
        ctx.parents = tuple(parents)
        ctx.needs_input_grad = _shared_pattern(tuple(needs))
        ctx.saved_arrays = ()
        started = time.perf_counter() if state.active and state.timing else None
        try:
            if cls.takes_tensors:  # a custom op: Tensors in and out (NOTE [custom ops])
                out = forward_on_tensors(cls, ctx, args, options)
            else:
                out = cls.forward(ctx, *arrays, **options)
        except Exception as exc:
            if cls.__module__.startswith("dyngraph."):
                error_type, message = _explain_failure(cls, arrays, exc)
                raise error_type(message) from None
            raise  # a custom op's own error, unchanged
        if type(out) is not array_type:
            out = _as_output_array(cls, ctx, out)
        if out.dtype is _FLOAT64 and not cls.sets_dtype:
            out = _promote_like_torch(cls, arrays, out)
        if not record:
            tensor = wrap_output(out, None)
            if state.function_hooks:  # observers of every op, graph or not: FunctionHook
                for hook in state.function_hooks:
                    hook.forward_postprocess(cls, args, options, tensor)
            return tensor

        ctx.id = new_node_id()
        ctx.shape, ctx.dtype = _shared_shape(out.shape), out.dtype
        tensor = wrap_output(out, ctx)
        if ctx.saved_arrays:
            _remember_saved_versions(ctx, args, arrays, out)
        if state.anomaly:
            ctx.where = events.where_from_stack()
        if state.function_hooks:
            for hook in state.function_hooks:
                hook.forward_postprocess(cls, args, options, tensor)
        if state.active:
            elapsed = None if started is None else time.perf_counter() - started
            _announce_op(ctx, args, tensor, elapsed)
        return tensor

    # ------------------------------------------------------------------ what ops call

    @staticmethod
    def forward(ctx: Function, *args: Any, **options: Any) -> Any:
        raise NotImplementedError("a Function subclass must define forward(ctx, *arrays)")

    @staticmethod
    def backward(ctx: Function, *grads: Any) -> Any:
        raise NotImplementedError("a Function subclass must define backward(ctx, grad_output)")

    @classmethod
    def meta(cls, shapes: list[tuple[int, ...]], dtypes: list[Any], **options: Any) -> Meta:
        """What a step of this op makes from inputs of these shapes and dtypes (a number as it
        is), before it runs: NOTE [op meta] in meta.py. The rule of most ops: at most the
        broadcast of the inputs (exactly that shape for an ``elementwise`` op), each element
        touched once, in the dtype of the op's ``promotion``. An op that can make more, or knows
        its shape otherwise, states its own."""
        elements = broadcast_or_sum(shapes)
        shape = tuple(np.broadcast_shapes(*shapes)) if cls.elementwise else None
        return Meta(elements, shape, cls.promotion.dtype(dtypes), elements)

    def save_for_backward(self, *arrays: Any) -> None:
        """Keep arrays (inputs, the output, or anything forward computed) for backward."""
        self.saved_arrays = arrays

    @property
    def saved_tensors(self) -> tuple:
        """What forward saved, checked: raises when backward already released it, or when an
        input or output saved here was modified in place since (the version counter moved)."""
        arrays = self.saved_arrays
        if arrays is None:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved "
                f"tensors after they have already been freed): {self.name}Backward released what "
                "it saved when backward() ran. Specify retain_graph=True the first time if you "
                "need to backward through the graph a second time."
            )
        if not arrays:
            return arrays
        # Fast path: if no in-place op ran anywhere since forward saved these, none changed.
        if self._inplace_clock != tensor_module.inplace_clock:
            self._check_saved_versions()
        if self.create_graph or self.takes_tensors:
            return _saved_as_tensors(self, arrays)
        return arrays

    def watch_output(self, counter: VersionCounter, array: Any = None) -> None:
        """An in-place op wrote this node's output into a tensor's memory (Tensor._write_recorded):
        ``counter`` counts that memory's versions, and the output, if forward saved it, is now
        ``array`` (that memory) at the counter's present version."""
        self.output_counter = counter
        if self.saved_arrays:
            saved, versions = list(self.saved_arrays), list(self._saved_versions)
            for position, source in enumerate(self._saved_from):
                if source is _OUTPUT:
                    if array is not None:
                        saved[position] = array
                    versions[position] = counter.value
            self.saved_arrays, self._saved_versions = tuple(saved), tuple(versions)

    def _check_saved_versions(self) -> None:
        for source, version in zip(self._saved_from, self._saved_versions):
            if source is None:
                continue  # an array forward made: nobody else holds it
            is_output = source is _OUTPUT
            if is_output:
                now = 0 if self.output_counter is None else self.output_counter.value
            else:
                now = source.version
            if now != version:
                what = "its output" if is_output else f"an input of shape {source.shape}"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: {what} saved by {self.name} is at version {now}; "
                    f"expected version {version} instead. Hint: replace the in-place op "
                    "(x += ..., x[i] = ...) with an out-of-place one (x = x + ...)."
                )

    # ------------------------------------------------------------------ for readers

    @property
    def name(self) -> str:
        """The op's name as drawn on diagrams ("Mul", "Tanh", ...)."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        """The parents, PyTorch-style: ((grad_fn or leaf or None), ...)."""
        return self.parents

    def register_hook(self, fn: Any) -> Any:
        """Hook on this node's output gradient (see Tensor.register_hook)."""
        from .spine.handle import RemovableHandle

        if self.hooks is None:
            self.hooks = {}
        handle = RemovableHandle(self.hooks)
        self.hooks[handle.key] = fn
        return handle

    def __repr__(self) -> str:
        return f"<{self.name}Backward>"


# ---------------------------------------------------------------------------- observers of apply


class FunctionHook:
    """An observer of every op: ``Function.apply`` tells each installed hook about each op it
    runs, recorded in a graph or not (under ``no_grad``, on tensors that need no gradient), and
    Tensor tells it when Python reads a tensor's values. chainer's ``FunctionHook`` is the model.

    Subclass it, override what you need (the methods here do nothing), and install it for a block
    with ``with``; hooks installed inside one another are all told, the outermost first::

        class CountOps(dg.FunctionHook):
            def __init__(self):
                self.counts = {}
            def forward_postprocess(self, cls, args, options, output):
                self.counts[cls.__name__] = self.counts.get(cls.__name__, 0) + 1

        with CountOps() as counter:
            (x @ W).tanh().sum()
        counter.counts                  # {'MatMul': 1, 'Tanh': 1, 'Sum': 1}

    A hook should not run ops itself: it would be told about them too, inside its own call.
    Where the graph is what you want to watch, subscribe to events instead (spine/events.py): they
    also see backward, but only ops that are recorded in a graph.
    """

    def forward_postprocess(self, cls: type, args: tuple, options: dict, output: Tensor) -> None:
        """``cls.apply(*args, **options)`` has just made ``output`` (``output.grad_fn`` is the
        new node, or None when nothing was recorded)."""

    def data_read(self, tensor: Tensor, how: str) -> None:
        """Python is reading ``tensor``'s values: ``how`` is "bool()" (an ``if`` on a tensor),
        "item()" (also ``float(t)``, ``int(t)``) or "tolist()"."""

    def __enter__(self) -> FunctionHook:
        state = this_thread.state
        if any(hook is self for hook in state.function_hooks):
            raise RuntimeError(
                f"this {type(self).__name__} is already installed (a `with hook:` block inside "
                "another one for the same hook); a hook is told about each op once, so use a "
                "second hook object instead"
            )
        state.function_hooks = (*state.function_hooks, self)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        state = this_thread.state
        state.function_hooks = tuple(hook for hook in state.function_hooks if hook is not self)


# The installed FunctionHooks are the calling thread's (``ThreadState.function_hooks``, NOTE
# [modes are per thread]): a tuple, empty when nobody watches, so that apply pays one truthiness
# test, and a hook entered in one thread (dg.trace recording a function) is told about that
# thread's ops only. Only FunctionHook.__enter__ / __exit__ change it.


def installed_hooks() -> tuple[FunctionHook, ...]:
    """The FunctionHooks the calling thread has entered, outermost first."""
    return this_thread.state.function_hooks


# ---------------------------------------------------------------------------- helpers of apply


_OUTPUT = "output"  # marks a saved array that is the op's own output


# NOTE [saved versions] For each array forward saved, a node remembers where it came from and
# that memory's version then, in two tuples beside ``saved_arrays`` (one entry per position):
# ``_saved_from`` holds the input Tensor it is the array of, ``_OUTPUT`` for the op's own output,
# or None for an array forward made itself (nobody else can change it); ``_saved_versions`` holds
# the versions. Two flat tuples, not a small record per saved array: a record that holds a Tensor
# would be one more object for the cycle collector to track and walk again at every full
# collection for as long as the graph lives (NOTE [what the collector walks]). A tuple of
# numbers it stops tracking, and the usual versions, all zero, are one tuple shared by all.

_OUTPUT_ONLY = (_OUTPUT,)  # forward saved its output alone (tanh, exp, sigmoid): shared


def _remember_saved_versions(ctx: Function, args: tuple, arrays: list, out: Any) -> None:
    """For each saved array that is an input Tensor's (or the output), remember which and that
    tensor's version now, so that backward can detect a later in-place change. (Arrays made
    inside forward cannot be changed by anyone else. The node must not hold its output tensor,
    so the output's counter lives on the node: NOTE [version counters] in tensor.py.)"""
    ctx._inplace_clock = tensor_module.inplace_clock
    saved_arrays = ctx.saved_arrays
    if len(saved_arrays) == 1 and saved_arrays[0] is out:
        ctx._saved_from, ctx._saved_versions = _OUTPUT_ONLY, _all_zero(1)
        return
    saved_from = []
    versions = []
    for saved in saved_arrays:
        source, version = None, 0  # None: made inside forward (or no array at all)
        if saved is out:
            source = _OUTPUT
        elif saved is not None:
            for arg, array in zip(args, arrays):
                if array is saved and arg is not array:  # it came from this input Tensor
                    counter = arg._counter
                    source, version = arg, 0 if counter is None else counter.value
                    break
        saved_from.append(source)
        versions.append(version)
    ctx._saved_from = tuple(saved_from)
    ctx._saved_versions = tuple(versions) if any(versions) else _all_zero(len(versions))


_ZEROS: dict[int, tuple] = {}


def _all_zero(length: int) -> tuple:
    """(0, ..., 0): the versions of arrays no in-place op has touched, the usual case; one
    tuple per length, shared by every node."""
    return _ZEROS.setdefault(length, (0,) * length)


def _saved_as_tensors(ctx: Function, arrays: tuple) -> tuple:
    """create_graph=True: saved arrays as Tensors connected to the graph, so that the backward
    formulas (written with operators and ``ctx.xp``) are themselves recorded."""
    result = []
    for source, array in zip(ctx._saved_from, arrays):
        if source is _OUTPUT:  # a fresh handle on the same node, and on its counter
            handle = wrap_output(array, ctx)
            handle._counter = ctx.output_counter
            result.append(handle)
        elif source is not None and source.array is array:
            result.append(source)
        elif array is None or isinstance(array, (int, float)):
            result.append(array)
        else:
            result.append(Tensor(array))
    return tuple(result)


_FLOAT64 = np.dtype(np.float64)


def _promote_like_torch(cls: type, arrays: list, out: Any) -> Any:
    """NOTE [type promotion] numpy and PyTorch agree when floats meet floats; they differ when
    integers meet floats: numpy makes float64 (int64 * float32, int64 * 2.5, int / int, exp of
    an int tensor), PyTorch keeps the float tensors' dtype, or its default float32 when the only
    floats were Python (or numpy) numbers. So a float64 result of a built-in op none of whose
    input arrays is float64 becomes the widest float dtype among them, else float32. The check
    in ``apply`` is one identity test; this runs only for float64 results."""
    if not cls.__module__.startswith("dyngraph."):
        return out  # a custom op's forward decides its own dtype
    widest = None
    for array in arrays:
        dtype = getattr(array, "dtype", None)
        if dtype is None or isinstance(array, np.generic) or dtype.kind != "f":
            continue  # numbers are weak, as in PyTorch; integer and bool arrays do not count
        if dtype == _FLOAT64:
            return out
        widest = dtype if widest is None else np.promote_types(widest, dtype)
    return out.astype(tensor_module.DEFAULT_FLOAT if widest is None else widest)


def _as_output_array(cls: type, ctx: Function, out: Any) -> Any:
    if isinstance(out, Tensor):
        raise TypeError(
            f"{cls.__name__}.forward returned a Tensor; the forward of a dg.Function works on "
            "raw arrays (use ctx.xp functions such as ctx.xp.exp) and must return an array. "
            "For PyTorch's convention (Tensors in and out), subclass dg.autograd.Function."
        )
    if isinstance(out, tuple):
        raise TypeError(f"{cls.__name__}.forward returned a tuple; a Function has one output")
    array = ctx.xp.asarray(out)  # numpy turns 0-d results into scalars; the graph wants arrays
    if any(saved is out for saved in ctx.saved_arrays):
        # NOTE: forward saved its output (exp, sqrt, std of all elements) as that scalar: it is
        # the output all the same, so that with create_graph backward sees the output's node
        # (not a constant) and a later in-place change of the output is caught
        ctx.saved_arrays = tuple(array if saved is out else saved for saved in ctx.saved_arrays)
    return array


# NOTE [custom ops] The engine works on arrays: a built-in op (dyngraph/ops, a subclass of
# ``dg.Function``) receives its inputs' arrays, saves arrays and returns one, and its backward
# maps an array to arrays. A custom op (a subclass of ``dg.autograd.Function``, autograd.py)
# follows PyTorch's convention instead, so that a custom Function from a PyTorch tutorial runs
# unchanged: ``forward`` receives the arguments of ``apply`` as given (the Tensors themselves)
# and runs with grad mode off, since what it computes is one node whose gradient ``backward``
# defines; ``ctx.save_for_backward(*tensors)`` and ``ctx.saved_tensors`` take and give Tensors;
# ``backward`` receives the output's gradient as a Tensor and returns a Tensor (or None) per
# input. The class says ``takes_tensors = True``; the unwrapping and wrapping happen in two
# places only: ``forward_on_tensors`` below, called by ``apply``, and ``backward_on_tensors``
# (autograd.py), called by the backward engine. Underneath, a custom op's node is like any
# other: it saves arrays, so the checks of saved values (NOTE [version counters]) and the
# freeing of the graph are the same.


def forward_on_tensors(cls: type, ctx: Function, args: tuple, options: dict) -> Any:
    """Run a custom op's ``forward`` on the arguments as given, with grad mode off; return the
    array of the Tensor it returns (an array, as older custom ops return, is taken as it is)."""
    with no_grad():
        try:
            out = cls.forward(ctx, *args, **options)
        except TypeError as exc:
            explain_numpy_on_tensors(cls, "forward", exc)
            raise
    own = {name: getattr(ctx, name) for name in _NODE_NAMES if hasattr(ctx, name)}
    if own:  # ``ctx.shape = x.shape``: the op's, kept apart (see attributes_of_the_op)
        for name in own:
            delattr(ctx, name)
        ctx.own_attributes = own
    return out.array if isinstance(out, Tensor) else out


# Names a node uses for its output (``ctx.shape``, ``ctx.dtype``) that a custom op may use for
# its own values, as PyTorch lets it: ``ctx.shape = x.shape`` in forward, read in backward.
_NODE_NAMES = ("shape", "dtype")


@contextmanager
def attributes_of_the_op(node: Function) -> Iterator[None]:
    """While a custom op's backward runs, ``ctx.shape`` / ``ctx.dtype`` are what its forward
    stored there, if it did; the node's own are put back after."""
    own = node.__dict__.get("own_attributes")
    if not own:
        yield
        return
    nodes = {name: getattr(node, name) for name in own}
    for name, value in own.items():
        setattr(node, name, value)
    try:
        yield
    finally:
        for name, value in nodes.items():
            setattr(node, name, value)


def explain_numpy_on_tensors(cls: type, method: str, exc: TypeError) -> None:
    """A custom op written for raw arrays (``ctx.xp.exp(x)``) now receives Tensors, which
    numpy's functions refuse: say so, and how to write it (NOTE [custom ops])."""
    if "__array_ufunc__" in str(exc):
        raise TypeError(
            f"{cls.__name__}.{method} called a numpy function on a Tensor ({exc}). The forward "
            "and backward of a dg.autograd.Function receive Tensors, as in PyTorch: use "
            "Tensor methods and dg functions (x.exp(), x.clamp(min=0), dg.where(...))."
        ) from exc


def refuse_sequence(op: str, value: Any) -> None:
    """A tuple or list where a built-in op wants a Tensor or a number: a TypeError, as in
    PyTorch. The usual one is the (values, indices) pair of ``x.max(dim)``: numpy would turn
    it into a bigger array and broadcast it without a word."""
    kind = type(value).__name__
    if hasattr(value, "values") and hasattr(value, "indices"):
        raise TypeError(
            f"unsupported operand type for {op}: '{kind}', the (values, indices) pair that "
            "x.max(dim), x.min(dim), sort and topk return. Take its .values, e.g. "
            "x - x.max(dim=1, keepdim=True).values"
        )
    raise TypeError(
        f"unsupported operand type for {op}: '{kind}'; ops take Tensors and numbers. Make it "
        "a tensor first, e.g. dg.tensor([...])"
    )


# NOTE [what the collector walks] A graph lives as long as its output, and Python's cycle
# collector tracks every object in it that can refer to other objects: each node, its
# ``parents`` tuple, a tuple that holds a Tensor. (A tuple of numbers, strings or arrays it tracks
# only until its first collection.) A collection of the oldest generation walks everything
# tracked in the process, and CPython runs one whenever the objects that reached that generation
# since the last one exceed a quarter of those already there; so each tracked object a graph
# keeps costs about four walks over an average object of the process (the learner's imports
# included), however big the graph, and a graph of a million nodes pays that a million times
# over (benchmarks/README.md, W4). dyngraph neither turns the collector off nor changes its
# thresholds: they belong to the learner's process, and a graph needs no collector anyway
# (reference counting frees it). It keeps the objects per node few instead: a node is itself
# and its ``parents`` tuple, plus ``_saved_from`` when forward saved an input's array (NOTE
# [saved versions]). What many nodes have alike - the ``needs_input_grad`` pattern, the output's
# shape, versions that are all zero - is one tuple they share, not a fresh tuple per node (which
# the collector would track until its first collection and visit from its node at every walk,
# and which would take memory). tests/test_memory.py counts the tracked objects per node, so
# that the count cannot silently grow back.

_NEEDS_PATTERNS: dict[tuple, tuple] = {}


def _shared_pattern(needs: tuple) -> tuple:
    """One ``needs_input_grad`` tuple per pattern ((True,), (True, False), ...), shared by every
    node that has it: a graph holds millions of nodes and only a handful of patterns, so each
    node keeps a reference instead of a tuple of its own."""
    return _NEEDS_PATTERNS.setdefault(needs, needs)


_SHAPES: dict[tuple, tuple] = {}
_MAX_SHARED_SHAPES = 10_000


def _shared_shape(shape: tuple) -> tuple:
    """One tuple per output shape, shared by the nodes that have it (as ``_shared_pattern``):
    ``out.shape`` is a fresh tuple on every call, and a graph of a million (1, 8) nodes needs
    one. A program that makes ever new shapes (a sequence growing by one each step) stops
    adding after the first ten thousand: later ones keep their own tuple."""
    shared = _SHAPES.get(shape)
    if shared is None:
        if len(_SHAPES) >= _MAX_SHARED_SHAPES:
            return shape
        _SHAPES[shape] = shared = shape
    return shared


def _check_one_device(cls: type, args: tuple) -> None:
    """Called when the inputs' array types differ: raise when they live on two devices (a numpy
    array and a subclass of it do not)."""
    devices = []
    for arg in args:
        if not isinstance(arg, Tensor) and not backend.is_array(arg):
            continue  # a number lives nowhere
        device = arg.device if isinstance(arg, Tensor) else backend.device_of(arg)
        if device not in devices:
            devices.append(device)
    if len(devices) == 1:
        return
    first, second = devices[0], devices[-1]
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but {cls.__name__} got tensors on "
        f"{first} and {second}. Move one of them first, e.g. x.to('{first}') or x.to('{second}')."
    )


def _shape_of(value: Any) -> tuple | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _explain_failure(cls: type, arrays: list, exc: Exception) -> tuple[type, str]:
    """A learner-readable message for a built-in op that numpy refused to compute."""
    shapes = [_shape_of(a) for a in arrays]
    shown = " and ".join(str(s) if s is not None else repr(a) for s, a in zip(shapes, arrays))
    explain = getattr(cls, "explain_failure", None)
    if explain is not None:
        message = explain(shapes)
        if message:
            return RuntimeError, message
    text = str(exc)
    if "broadcast" in text:
        return RuntimeError, (
            f"{cls.__name__}: shapes {shown} cannot be broadcast together: aligned from the "
            "right, each pair of dimensions must be equal or one of them must be 1"
        )
    kept_types = (IndexError, TypeError, ValueError, NotImplementedError, OverflowError)
    error_type = type(exc) if type(exc) in kept_types else RuntimeError
    return error_type, f"{cls.__name__} failed on inputs of shape {shown}: {text}"


def _announce_op(ctx: Function, args: tuple, tensor: Tensor, elapsed: float | None) -> None:
    """Emit node_created for the output (and first for inputs nobody has been told about)."""
    where = events.where_from_stack(3, True)  # from apply's caller on; named: h in h = x * w
    state = this_thread.state
    scope = state.scope
    epoch = state.epoch
    input_ids = []
    for arg in args:
        if isinstance(arg, Tensor):
            if arg._announced != epoch:  # made before anyone listened: a parameter belongs
                # to its module (not to the call of a recursion that first read it)
                home = tuple(name for name in scope if not events.is_call_label(name))
                announce_tensor(arg, where, home if arg.is_parameter else ())
            input_ids.append(arg.id)
        else:
            input_ids.append(_announce_constant(arg, where, scope))
    tensor._announced = epoch
    if False in ctx.needs_input_grad:  # the ids of the inputs the graph does not keep, for a
        ctx.unknown_inputs = tuple([input_id for input_id, needed  # later description (NOTE
                                    in zip(input_ids, ctx.needs_input_grad) if not needed])
        # [inputs the graph does not keep])
    saved_bytes = 0
    for array in ctx.saved_arrays:
        saved_bytes += getattr(array, "nbytes", 0)
    name = None if where is None else where.target  # NOTE [variable names]
    events.emit_op_created(tensor.id, type(ctx).__name__, tuple(input_ids), tensor.array, name,
                           scope, where, saved_bytes, elapsed)


def _announce_constant(value: Any, where: events.SourceLine | None, scope: tuple[str, ...]) -> int:
    """node_created for a constant input (a number, an array): a node of its own, each time."""
    constant_id = new_node_id()
    events.emit(_node_event(constant_id, "constant", (), value, None, False, True, where, scope))
    return constant_id


def announce_tensor(
    tensor: Tensor, where: events.SourceLine | None = None, scope: tuple[str, ...] | None = None
) -> None:
    """node_created for a tensor that existed before (a leaf, or made before subscribing): an
    op's output comes with the graph behind it (see announce_graph)."""
    if tensor.grad_fn is not None:
        announce_graph((tensor,))
        return
    name = tensor.name
    if where is None:  # announced as it is made: x = dg.tensor(..., requires_grad=True) is x
        where = events.where_from_stack()
        if name is None and where is not None and not tensor.is_parameter:
            name = where.target
    op = "parameter" if tensor.is_parameter else "leaf"
    tensor._announced = this_thread.state.epoch
    events.emit(
        _node_event(
            tensor.id,
            op,
            (),
            tensor.array,
            name,
            tensor._requires_grad,
            tensor.grad_fn is None,
            where,
            events.current_scope() if scope is None else scope,
        )
    )


# NOTE [graphs built before anyone listened] A view often starts after the forward pass: the
# loss is built in one notebook cell and ``loss.backward()`` runs in the next, under
# ``dg.watch()``. The engine holds the graph behind the loss, so it tells the subscribers about
# it before the first gradient: every node they have not been told about, oldest first (ids are
# creation order), as the folds ignore a node announced again. What the graph holds is what
# gradients flow through - ops, and leaves that require grad; data and constants that need no
# gradient are not kept by the graph (PyTorch's ``next_functions`` shows None for them), so they
# are drawn as constants of unknown value (NOTE [inputs the graph does not keep]), and
# intermediate values are not known (only shapes). A tensor carries the
# epoch at which subscribers were last told about it (``_announced``), and a tensor told
# about in this epoch had everything behind it told in the same epoch: checking the roots is
# enough, so a view that saw the forward pass costs the engine one comparison per backward.
# Epochs are the thread's (NOTE [listeners are per thread] in spine/events.py), numbers no other
# thread's listeners share: a tensor another thread's listeners were told about is news here.


def inputs_of(item: Any) -> tuple:
    """What a node of dyngraph's graph was made from: a ``Function``'s parents (its inputs'
    nodes, or leaf Tensors), in argument order; nothing for a leaf."""
    if isinstance(item, Tensor):
        return ()
    return tuple(parent for parent in item.parents if parent is not None)


def nodes_behind(roots: Any, known: Any = None) -> list:
    """The ``Function`` nodes and leaf Tensors behind ``roots`` (each a Function or a leaf),
    inputs first: the spine's one walk (spine/walk.py) over dyngraph's graph. ``known(item)``:
    left out, with what lies behind it only through it."""
    return walk_back(roots, inputs_of, key=_node_id, known=known)


_node_id = operator.attrgetter("id")  # a node and the tensor it made share their id


def announce_graph(tensors: Any) -> None:
    """node_created for each of ``tensors`` that the current subscribers have not been told
    about, with every node behind it, in creation order (``where`` is None: the lines that
    built them ran while nobody listened)."""
    epoch = this_thread.state.epoch
    fresh = [tensor for tensor in tensors if tensor._announced != epoch]
    if not fresh:
        return
    held = {tensor.id for tensor in fresh}

    def known(item: Any) -> bool:  # a leaf these subscribers were told about
        return isinstance(item, Tensor) and item._announced == epoch and item.id not in held

    found = graph_behind(fresh, known)  # not told about yet
    for item in found.values():
        if isinstance(item, Tensor):
            item._announced = epoch
    for tensor in fresh:
        tensor._announced = epoch
    for event in graph_events(found, fresh):
        events.emit(event)


def graph_behind(tensors: Any, known: Any = None) -> dict[int, Any]:
    """The nodes (Functions) and leaf Tensors behind ``tensors``, by id (see nodes_behind)."""
    found = nodes_behind([tensor.grad_fn or tensor for tensor in tensors], known)
    return {item.id: item for item in found}


# NOTE [inputs the graph does not keep] An op's node_created names one input per argument, in
# argument order, and an edge_grad's ``position`` is that argument's number (NOTE [edge
# gradients]): ``z = x * w`` with data ``x`` sends w's gradient along position 1. A graph holds
# no node for an argument that needs no gradient (a constant, data; its parent is None), so
# when the graph is described afterwards - announced to a view that did not see the forward,
# or drawn by dg.draw - each such argument becomes a constant of unknown value, a node of its
# own. Leaving it out would shift the inputs after it one place to the left, and the chain-rule
# panel would read w as input 0 and show w's own numbers as dz/dw. Its id is the one the op's
# node_created gave it when someone watched the op run, else one given once: either way kept on
# the node (``Function.unknown_inputs``), so a graph described again (drawn again, announced
# afresh to a view that watched it being built) is the same graph, and a fold ignores what it
# holds already.


def graph_events(found: dict[int, Any], outputs: Any = ()) -> Iterator[events.NodeCreated]:
    """The node_created of every node in ``found`` (from graph_behind), in creation order, each
    after those of its inputs: one description of a graph that was not watched being built,
    which a view is told (announce_graph) and dg.draw folds (drawing.py), so the two cannot
    disagree. ``outputs``: tensors whose values are known (the roots), shown with their values
    and names; other ops show their op, shape and line."""
    held = {tensor.id: tensor for tensor in outputs}
    for node_id in sorted(found):  # creation order
        item = found[node_id]
        if isinstance(item, Tensor):
            op = "parameter" if item.is_parameter else "leaf"
            yield _node_event(node_id, op, (), item.array, item.name, item._requires_grad,
                              True, None, ())
            continue
        device = backend.CPU if item.xp is np else backend.CUDA
        if item.unknown_inputs is None:  # NOTE [inputs the graph does not keep]
            item.unknown_inputs = tuple(new_node_id() for parent in item.parents
                                        if parent is None)
        unknown = iter(item.unknown_inputs)
        inputs = []
        for parent in item.parents:
            if parent is None:
                inputs.append(next(unknown))
                yield events.node_created(
                    id=inputs[-1], op="constant", inputs=(), shape=(), dtype="", device=device,
                    requires_grad=False, is_leaf=True)
            else:
                inputs.append(parent.id)
        saved_bytes = sum(getattr(array, "nbytes", 0) for array in item.saved_arrays or ())
        output = held.get(node_id)
        if output is not None:  # its value is known
            yield _node_event(node_id, item.name, tuple(inputs), output.array, output.name, True,
                              False, item.where, (), saved_bytes)
        else:
            yield events.node_created(
                id=node_id, op=item.name, inputs=tuple(inputs), shape=tuple(item.shape),
                dtype="", device=device, requires_grad=True, is_leaf=False, name=None,
                scope=(), where=item.where, preview=(), saved_bytes=saved_bytes,
            )


def _node_event(
    node_id: int,
    op: str,
    inputs: tuple[int, ...],
    value: Any,
    name: str | None,
    requires_grad: bool,
    is_leaf: bool,
    where: events.SourceLine | None,
    scope: tuple[str, ...],
    saved_bytes: int = 0,
) -> events.NodeCreated:
    shape = _shape_of(value)
    if shape is None:  # a Python number used as a constant
        return events.node_created(
            id=node_id, op=op, inputs=inputs, shape=(), dtype=type(value).__name__,
            device="cpu", requires_grad=False, is_leaf=True, name=name, scope=scope, where=where,
            preview=(value,) if isinstance(value, (int, float)) else (),
        )
    return events.node_of_array(node_id, op, inputs, value, requires_grad, is_leaf, name, scope,
                                where, saved_bytes)

