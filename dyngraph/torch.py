"""PyTorch as a second event source: a PyTorch program's autograd graph as dyngraph's events.

Imported on request (``import dyngraph.torch``), and by ``dg.watch()`` / ``dg.record()`` only
when the learner has imported torch already: ``import dyngraph`` never imports torch. While
watching, every torch op that joins the autograd graph emits the same ``node_created`` as
dyngraph's own ops (named after the variable the line assigns), and ``loss.backward()`` emits
``backward_started``, one ``grad_computed`` per node in PyTorch's own execution order, each
followed by the ``edge_grad`` of every input it sent a gradient, ``graph_freed`` and
``backward_finished`` (or ``backward_failed`` with PyTorch's error text). A plain
``loss.backward()`` after the block plays in the view that drew the graph (NOTE [a watched
graph stays watched, in PyTorch]). So every tool here - the live view, recordings, ``dg.draw``,
diffs, ``to_html`` - works on real PyTorch code.

>>> import torch, dyngraph as dg
>>> x = torch.ones(3, requires_grad=True)
>>> with dg.record() as rec:
...     loss = (x * 2).tanh().sum()
...     loss.backward()
>>> [n.op for n in rec.nodes.values()]
['leaf', 'MulBackward0', 'TanhBackward0', 'SumBackward0']

NOTE [which torch mechanisms] Public ones, but for the three named last, and nothing of torch
is patched:
- ``torch.overrides.TorchFunctionMode`` sees each torch call the learner makes (and
  ``Tensor.backward`` / ``torch.autograd.backward`` / ``torch.autograd.grad`` themselves): after
  the call, the graph behind its outputs is walked back through ``grad_fn.next_functions`` to the
  nodes already told about, so an op that made several autograd nodes (``F.linear`` makes
  ``TBackward0`` and ``AddmmBackward0``) shows them all.
- ``torch.autograd.graph.Node.register_hook`` on each op's node: this post hook runs once the
  node's backward ran, in the engine's order, with the gradient it received and the one it
  sent each of its ``next_functions``: ``grad_computed``, then one ``edge_grad`` per input
  (PyTorch's engine has already summed a broadcast gradient back to the input's shape, as
  dyngraph's does; ``_BROADCASTING`` says which nodes did so). ``register_prehook`` on a
  leaf's ``AccumulateGrad``: its ``grad_computed``, before it is added into ``.grad``. One
  hook per node either way: a second one costs about as much as the op (benchmarks, W6).
- ``grad_fn.metadata``, the dict PyTorch keeps on each node, carries the node's dyngraph id
  (see ``_node_info``); leaves and data tensors get theirs from ``_leaves``. Ids come from
  dyngraph's own counter.
- ``torch.nn.modules.module.register_module_forward_pre_hook`` / ``..._forward_hook`` give the
  scopes (``("MLP", "fc1")``) and the names of parameters (``weight``, ``bias``).
- Saved tensors are read from the ``_saved_*`` attributes autograd documents for every node
  (``docs: autograd mechanics, saved tensors``), not with ``saved_tensors_hooks``: with a pack
  hook installed PyTorch no longer checks the version counters of saved tensors, and the
  in-place error a learner should see would silently disappear.
- A pass run outside any watch block, for the views that follow its graph (NOTE [a watched
  graph stays watched, in PyTorch]), uses three things of the engine's that have no public
  name, each used by PyTorch's own Python code: ``torch.autograd.Variable._execution_engine.
  queue_callback`` (a callback at the end of the running pass; DDP and FSDP end their backward
  with it), ``torch._C._current_graph_task_id()`` (which pass a hook runs in;
  ``torch.autograd.graph.register_multi_grad_hook`` tells passes apart with it) and
  ``torch._C._autograd._get_current_graph_task_keep_graph()`` (whether the pass keeps the
  graph: ``retain_graph`` cannot be read from the hooks' arguments, and PyTorch's AOT
  autograd reads it so). The grad mode inside the pass is its ``create_graph``. Without the
  last one (another PyTorch), such a pass claims to free nothing.

NOTE [op names] A node shows PyTorch's ``grad_fn`` name (``MulBackward0``), not dyngraph's op
name (``Mul``): it is what ``print(y.grad_fn)`` shows, what PyTorch's error messages name, and
it tells the truth that a node of PyTorch's graph is the *backward* function of an op; lesson 18
reads the two vocabularies side by side. The values of intermediates are known when the mode
saw the op return them; nodes found only by walking back (inside composite ops, or built
before watching) show no value and no shape.

NOTE [honest limits] What autograd records without the mode seeing it (the inside of a custom
``autograd.Function``, a ``torch.compile``d region, a C++ extension) is found by the walk back
and shown as the one node autograd made for it (``CompiledFunctionBackward``, ``MyOpBackward``),
with no source line. Ops that run outside autograd (``no_grad``, data that needs no gradient)
make no node, as in dyngraph; their results appear as data (constants, as the legend names a
tensor needing no grad) where an op uses them.
What else the watcher does not show, and why:
- Code that PyTorch runs *inside* a backward pass runs with no mode (the mode is off while
  it handles ``backward``): a reentrant checkpoint's recomputation and the backward pass it
  runs for the parameters inside, ops of a custom ``backward``. Their gradients that reach
  nodes already shown are shown; the rest is not (``use_reentrant=False`` is shown in full).
- A gradient shown is the one backward computed. What changes ``.grad`` afterwards in place
  (``clip_grad_norm_``, ``GradScaler.unscale_``, a ``register_post_accumulate_grad_hook``,
  an optimizer's ``zero_grad(set_to_none=False)``) makes no event; ``clip_grad_norm_``
  returns the norm of the gradients shown.
- An op's gradient shown is the one its backward received, after every hook on the node and
  on its tensor. A leaf's is the one that reached the prehook registered on its
  ``AccumulateGrad`` when the op ran: a prehook the learner registers there later runs after
  it, and what it returns is not shown (hooks on the leaf tensor, ``x.register_hook``, run
  first and are). A node whose backward raises shows no gradient: the hook runs after it.
- ``torch.export.export(..., strict=True)`` refuses a module while global module hooks are
  registered (its tracer will not inline the module's call then), and the watcher's scopes
  come from such hooks: export outside the watched block, or with the default strict=False.
- Watching is per thread, like dyngraph's own modes and listeners: the torch function mode is
  seen by the thread that entered it, and the events go to that thread's listeners. A graph
  built or a backward run in another thread is not announced, though its gradients reach the
  nodes' hooks: watch in the thread that runs. (The hooks PyTorch runs on a thread of its own,
  a CUDA graph's backward, report to the thread whose backward it is: NOTE [backward on
  PyTorch's threads]. Not so for a pass run after the block (NOTE [a watched graph stays
  watched, in PyTorch]): that thread's hooks do not know whose followers to wake, so a GPU
  graph's later backward is not played; run it inside ``dg.watch(view)``.)
- A pass run after the block does not show PyTorch's error text when it fails (it reaches the
  learner's cell, not the hooks): ``backward_failed`` says that it failed.
- Under any torch function mode, ``nn.MultiheadAttention`` and ``nn.TransformerEncoder(Layer)``
  skip their fused inference path (``has_torch_function``, PyTorch's rule): in ``eval()``
  with no gradient they compute the same results by their ordinary ops, which may differ in
  the last bits of float32.
- A ``KeyboardInterrupt`` passes through ``nn.Module`` without running the forward hooks
  that close a module's scope (PyTorch runs them for ``Exception`` only): caught inside the
  watched block, later ops keep that scope until the block ends, which clears it.
- A chain of tens of thousands of ops in one graph can crash PyTorch itself when the graph is
  freed, once Python has seen its nodes (each node's Python object frees the next
  recursively); the watcher must see every node. Run such a loop unwatched.

NOTE [compiled code] ``torch.compile``'s Dynamo compiles a frame together with the torch
function modes active when it runs, by reading their ``__torch_function__`` as Python. Under
``torch.compiler.is_compiling()`` the mode steps aside (its first branch), so what Dynamo
compiles is what it compiles unwatched; had it read the event code (which calls C functions it
cannot read), it would break the graph at every op and warn about dyngraph's internals. The
compiled region then runs as one autograd node, shown as the honest limits above say. So too
while ``torch.jit.trace`` runs the learner's code: every read of a tensor is recorded into the
TorchScript graph it builds (sizes become tensors there), so the watcher's previews would
become ops of the trace, which then fails its own check ("Graphs differed across
invocations"). Running the traced function later makes a graph that ``backward`` finds by
walking back, as for a graph built before watching.

This file is the watcher's definition, and the only one: what you read here is what runs.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import sys
import threading
import warnings
import weakref
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np

from .extras import needs
from .nn.module import scope_label
from .record import Recording
from .spine import events
from .spine.events import new_node_id
from .spine.thread_state import this_thread
from .spine.walk import walk_back

with needs("torch", "dyngraph.torch (PyTorch code as an event source)"):
    import torch
    from torch.nn.modules import module as _torch_module
    from torch.overrides import TorchFunctionMode

__all__ = ["watching", "name", "from_tensor", "is_torch_tensor"]

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _is_ours_or_torchs(filename: str) -> bool:
    """Is ``filename`` one of PyTorch's files or one the spine passes over (dyngraph's)?"""
    return filename.startswith(_TORCH_DIR) or events.is_internal_file(filename)

_KEY = "dyngraph"  # the key of a node's dyngraph _Info in grad_fn.metadata


class _Info:
    """What dyngraph knows of one node or leaf: plain numbers, nothing of the graph. It is also
    the node's grad hook (``__call__`` for an op, ``reached`` for a leaf's ``AccumulateGrad``):
    the graph holds no cycle through it, at most a weak reference to a leaf."""

    __slots__ = ("id", "announced", "consumers", "saved_bytes", "hooked", "leaf", "inputs",
                 "positions", "broadcasts", "unknown", "__weakref__")

    def __init__(self) -> None:
        self.id = 0  # given when it is first told about (or drawn): ids follow creation order
        self.announced = -1  # the epoch when the subscribers were last told about it
        self.consumers = 0  # how many ops use it: more than one means gradients are summed
        self.saved_bytes: int | None = None  # None: not read yet
        self.hooked = False  # it is its node's grad hook
        self.leaf: Any = None  # a weakref to the leaf tensor, for a leaf's
        # an op's inputs as its node_created named them, and the position of each of its
        # next_functions among them (None: the same, slot i is input i): _in_order
        self.inputs: tuple = ()
        self.positions: tuple | None = None
        self.broadcasts = False  # its backward returns gradients of the output's shape (below)
        # the ids of its inputs that are no node of the graph (data, constants), once it was
        # described (NOTE [inputs the graph does not keep] in function.py); None before
        self.unknown: tuple | None = None

    def __call__(self, grad_inputs: tuple, grad_outputs: tuple) -> None:
        """The op's node ran its backward (PyTorch calls this post hook, in its backward
        order): its gradient, then what it sent each input (NOTE [edge gradients] in
        spine/events.py: after the node's grad_computed, before the input's own, which comes when
        the input's node runs)."""
        state = _listeners(self)
        if state is not None:
            shown = _grad_computed(self, grad_outputs, state)
            _edge_grads(self, grad_inputs, grad_outputs, shown, state)

    def reached(self, grad_outputs: tuple) -> None:
        """A leaf's gradient is complete (the prehook of its ``AccumulateGrad`` node)."""
        state = _listeners(self)
        if state is not None:
            _grad_computed(self, grad_outputs, state)


def _listeners(info: _Info) -> Any:
    """The ThreadState whose listeners hear about the backward step of ``info``'s node, or
    None when nobody listens: the calling thread's; the thread whose watched backward runs on
    PyTorch's thread (NOTE [backward on PyTorch's threads]); or, for a pass started outside
    any watch, the views that follow this node's graph, woken now (NOTE [a watched graph
    stays watched, in PyTorch])."""
    state = this_thread.state
    if state.active:
        return state
    if _callers:  # (a hook on PyTorch's thread)
        caller = _callers[-1][0]
        return caller if caller is not state and caller.active else None
    if state.followers:  # only the first hook of a pass asks (a graph task has an id)
        task = torch._C._current_graph_task_id()
        if task != _asked[0]:
            _asked[0] = task
            if info.leaf is None:  # a pass that first meets a leaf began in another graph
                return _follow_pass(info, state)
    return None


_asked = [-1]  # the graph task whose first hook asked the followers (_listeners)


def _grad_computed(info: _Info, grad_outputs: tuple, state: Any) -> tuple | None:
    """grad_computed for the node of ``info``, whose gradient is ``grad_outputs``: one tensor
    per output of the node (None for an output no gradient reached). Returns the tensor shown
    and its preview (an edge that passes it on as it is shows the same)."""
    if len(grad_outputs) == 1:  # the commonest case: a node of one output
        grad = grad_outputs[0]
        if grad is None:
            return None
    else:
        grads = [grad for grad in grad_outputs if grad is not None]
        if not grads:
            return None
        grad = grads[0] if len(grads) == 1 else _joined(grads)
    accumulated = info.consumers > 1
    if info.leaf is not None:
        tensor = info.leaf()
        accumulated = accumulated or (tensor is not None and tensor.grad is not None)
        # A leaf outlives its graph: the next graph that uses it counts its uses afresh (a
        # second backward through a retained graph is summed into .grad, seen above).
        info.consumers = 0
    preview, norm = _preview_and_norm(grad)
    _emit(events.grad_computed(id=info.id, preview=preview, norm=norm, accumulated=accumulated),
          state)
    if info.saved_bytes:
        _ran(state).append(info.id)
    return grad, preview


def _ran(state: Any) -> list:
    """The list of nodes that ran (and had saved something) in the innermost pass that
    ``state``'s thread runs: this thread's own, or, on PyTorch's thread, that of the watched
    backward waiting for it (NOTE [backward on PyTorch's threads]); a list nobody reads if no
    such pass is known."""
    if _here.passes:
        return _here.passes[-1]
    for caller, ran in reversed(_callers):
        if caller is state:
            return ran
    return []


# The nodes whose backward formula returns the gradient of each input in the output's
# (broadcast) shape, which PyTorch's engine then sums back to the input's shape before the
# node's post hook sees it: for these, an edge_grad of another shape than the upstream
# gradient was summed over the broadcast (``reduced_from``). For any other node the shape
# before the engine's sum is not known, and none is claimed.
_BROADCASTING = frozenset({"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0",
                           "PowBackward1", "MaximumBackward0", "MinimumBackward0",
                           "WhereBackward0"})


def _edge_grads(info: _Info, grad_inputs: tuple, grad_outputs: tuple, shown: tuple | None,
                state: Any) -> None:
    """edge_grad for each input of ``info``'s node that its backward sent a gradient: the
    input and position its node_created named (``info.inputs``, ``info.positions``).
    ``shown``: the node's gradient and its preview, as grad_computed showed them.

    NOTE [speed] A preview is the costly part of an event (some 20 reads of torch attributes):
    an edge that carries the very tensor shown last (``AddBackward0`` hands its gradient to
    both inputs as it is) shows the same preview."""
    inputs, positions = info.inputs, info.positions
    upstream = None
    if info.broadcasts and grad_outputs and grad_outputs[0] is not None:
        upstream = _shape(grad_outputs[0])
    last, last_preview = shown if shown is not None else (None, ())
    emit = _emit if _here.held or _here.stack else events.emit  # (nothing held back: at once)
    for index, grad in enumerate(grad_inputs):
        if grad is None:
            continue
        position = index if positions is None else positions[index]
        if position < 0 or position >= len(inputs):
            continue  # (an empty slot: PyTorch sends nothing there)
        if grad is not last:
            last, last_preview = grad, _preview(grad)
        reduced_from = None
        if upstream is not None and _shape(grad) != upstream:
            reduced_from = upstream
        emit(events.edge_grad(node=info.id, input=inputs[position], position=position,
                             preview=last_preview, reduced_from=reduced_from), state)


def _joined(grads: list) -> torch.Tensor:
    """The gradients of a node's several outputs (``torch.split``'s, ``unbind``'s) as one flat
    tensor, in output order: all that the node received, whose first numbers and norm its
    grad_computed shows. (Detached: under ``create_graph`` this must make no node.)"""
    try:
        return torch.cat([grad.detach().reshape(-1) for grad in grads])
    except (RuntimeError, TypeError, NotImplementedError):  # sparse, nested, on two devices
        return grads[0]


class _ByIdentity:
    """A map from tensors, held weakly, to values (``==`` of tensors compares their numbers, so
    they cannot be keys of a dict).

    NOTE [speed] A dict keyed by ``id()`` with a weak reference beside each value, to tell the
    tensor from a later one at the same address. torch's ``WeakIdKeyDictionary`` does the same
    but makes a Python object per look-up, and a watched op looks up each of its inputs. Entries
    of dead tensors are swept when the dict has doubled since the last sweep."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, Any]] = {}
        self._sweep_at = 1024

    def get(self, tensor: Any, default: Any = None) -> Any:
        item = self._items.get(id(tensor))
        if item is None or item[0]() is not tensor:
            return default
        return item[1]

    def __contains__(self, tensor: Any) -> bool:
        item = self._items.get(id(tensor))
        return item is not None and item[0]() is tensor

    def __setitem__(self, tensor: Any, value: Any) -> None:
        self._items[id(tensor)] = (weakref.ref(tensor), value)
        if len(self._items) > self._sweep_at:
            for key in [key for key, (ref, _) in self._items.items() if ref() is None]:
                del self._items[key]
            self._sweep_at = max(1024, 2 * len(self._items))


_leaves = _ByIdentity()  # leaf or data tensor -> _Info
_names = _ByIdentity()  # tensor -> (name, scope) the learner or a module gave it
# the watched backward passes running, of every thread: (the ThreadState of the thread that
# started it, the ids of its nodes that ran and had saved something), for the hooks that run on
# PyTorch's threads (below); a thread's own passes are also in its _here.passes
_callers: list[tuple[Any, list[int]]] = []

# NOTE [backward on PyTorch's threads] PyTorch runs the backward of a graph on CPU in the thread
# that called it, and that of a CUDA graph on a thread of its own per device while the caller
# waits: the nodes' hooks (``_Info.__call__``, ``_Info.reached``) run there. Listeners are per
# thread (NOTE [listeners are per thread] in spine/events.py), and nobody listens to PyTorch's
# thread, so a hook that finds its thread unwatched reports to the thread whose watched
# backward is running.
_saved_names: dict[type, tuple[str, ...]] = {}  # node type -> its _saved_* attributes of tensors


def is_torch_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor)


def name(tensor: torch.Tensor, label: str) -> torch.Tensor:
    """Give a torch tensor the name diagrams show (torch tensors have none); returns it.

    >>> x = dgt.name(torch.randn(4, 3), "x")
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"dgt.name names a torch tensor, not a {type(tensor).__name__}: "
                        f"dgt.name(tensor, {str(label)!r}) (a module's parameters and buffers "
                        f"are named after their attributes)")
    _names[tensor] = (str(label), None)
    return tensor


# --------------------------------------------------------------------------- ids


def _node_info(node: Any, hook: bool = True) -> _Info:
    """The _Info of an autograd node, made on first sight and kept in ``grad_fn.metadata``, the
    dict PyTorch keeps on each node: a Python wrapper of a node comes and goes and cannot be
    weakly referenced, so ``id()`` would not do, and holding the nodes would keep the graph
    alive. ``hook``: the _Info becomes the node's grad hook (dg.draw registers none). A
    leaf's _Info lives in ``_leaves``, and in its AccumulateGrad node's metadata too."""
    metadata = node.metadata
    info = metadata.get(_KEY)
    if info is None:
        if type(node).__name__ == "AccumulateGrad":
            variable = node.variable
            info = _leaf_info(variable)
            if not hook:
                return info
            info.leaf = weakref.ref(variable)
            info.hooked = False  # a new AccumulateGrad: the leaf's last one may have gone
        else:
            info = _Info()
        metadata[_KEY] = info
    if hook and not info.hooked:
        info.hooked = True
        if info.leaf is not None:  # a leaf's AccumulateGrad: its gradient, before it is added
            node.register_prehook(info.reached)
        else:  # an op: its gradient and what it sends each input, once its backward ran
            info.broadcasts = type(node).__name__ in _BROADCASTING
            node.register_hook(info)
    return info


def _grad_fn(tensor: torch.Tensor) -> Any:
    """The autograd node that made ``tensor`` (``tensor.grad_fn``), or None.

    NOTE [views changed under no_grad] Reading ``grad_fn`` raises for a view made under
    ``no_grad`` once it or its base was changed in place (``nn.Embedding(padding_idx=0)`` does
    ``weight[0].fill_(0)`` so): PyTorch will not say how such a view joins a graph, and raises
    its own error where the learner's code uses it with grad. Unwatched, nothing reads it, so
    the watcher must not either: to the watcher it is made by no node."""
    try:
        return tensor.grad_fn
    except RuntimeError:
        return None


def _op_name(node: Any) -> str:
    """A node's name as ``print(y.grad_fn)`` shows it (``MulBackward0``): ``CopySlices``, not
    the C++ name ``torch::autograd::CopySlices`` that ``name()`` gives the few nodes autograd
    defines itself (``y[1] = 10.0`` and every in-place op on a view make one)."""
    return node.name().rpartition("::")[2]


def _known(node: Any) -> _Info | None:
    """The _Info of a node seen before, or None (makes nothing)."""
    return node.metadata.get(_KEY)


def _leaf_info(tensor: torch.Tensor) -> _Info:
    info = _leaves.get(tensor)
    if info is None:
        info = _leaves[tensor] = _Info()
    return info


def _inputs(node: Any) -> list:
    """What a node of torch's graph was made from, as the spine's walk follows it
    (spine/walk.py): the nodes in its ``next_functions`` (argument order), a leaf tensor in
    place of its ``AccumulateGrad``; nothing for a leaf tensor."""
    if isinstance(node, torch.Tensor):
        return []
    return [parent.variable if type(parent).__name__ == "AccumulateGrad" else parent
            for parent, _ in node.next_functions if parent is not None]


def _inputs_hooked(node: Any) -> list:
    """``_inputs``, each of them given its grad hook on the way (NOTE [which torch
    mechanisms]): a leaf's hook is on its ``AccumulateGrad``, met only here."""
    if not isinstance(node, torch.Tensor):
        for parent, _ in node.next_functions:
            if parent is not None:
                _node_info(parent)
    return _inputs(node)


def _info_of(item: Any) -> _Info:
    """The _Info of a node or of a leaf tensor (a node's made, and hooked, on first sight)."""
    return _leaf_info(item) if isinstance(item, torch.Tensor) else _node_info(item)


def _numbered(info: _Info) -> int:
    if not info.id:
        info.id = new_node_id()
    return info.id


# --------------------------------------------------------------------------- values


_dtype_names: dict[Any, str] = {}


def _dtype(tensor: torch.Tensor) -> str:
    """'float32' for a tensor of torch.float32 (as dyngraph names dtypes)."""
    dtype = tensor.dtype
    name_ = _dtype_names.get(dtype)
    if name_ is None:
        name_ = _dtype_names[dtype] = str(dtype).removeprefix("torch.")
    return name_


def _shape(tensor: torch.Tensor) -> tuple:
    """``tuple(tensor.shape)``; () for a nested tensor, whose tensors differ in shape (torch
    has no sizes for a strided one and a symbolic size, not a number, for a jagged one's
    ragged dimension)."""
    if tensor.is_nested:
        return ()
    return tuple(tensor.shape)


def _device(tensor: torch.Tensor) -> str:
    return "cuda" if tensor.is_cuda else tensor.device.type


def _small_values(tensor: torch.Tensor) -> list | None:
    """Every number of a small CPU tensor of up to two dimensions, row-major, or None.
    NOTE: ``tolist()`` is the cheapest way out of a small tensor (a third of ``numpy()``)."""
    if tensor.is_cuda or tensor.numel() > events.SMALL_PREVIEW:
        return None
    values = tensor.tolist()
    if type(values) is not list:
        return [values]
    if values and type(values[0]) is list:
        if values[0] and type(values[0][0]) is list:
            return None
        return [v for row in values for v in row]
    return values


def _numpy(tensor: torch.Tensor) -> Any:
    return tensor.detach().numpy() if tensor.requires_grad else tensor.numpy()


def _dense(tensor: torch.Tensor) -> torch.Tensor | None:
    """A sparse (or other non-strided) tensor as the dense tensor it stands for, whose numbers a
    preview shows; None where torch cannot make one (the node is drawn with no values)."""
    try:
        return tensor.detach().to_dense()
    except (TypeError, RuntimeError, NotImplementedError):
        return None


def _shown(tensor: torch.Tensor) -> torch.Tensor | None:
    """The real numbers a preview of ``tensor`` shows, as a strided tensor: its own; those of
    the dense tensor a sparse one stands for; a complex tensor's real and imaginary parts side
    by side (``view_as_real``: its norm is the complex norm). None where there are none to
    read: a meta tensor (only its shape exists), a nested one, a tensor with no storage of its
    own (inside ``torch.func.grad`` or ``vmap``, a functorch wrapper's numbers are the
    transform's) or with no memory (forward AD's zero tensors); such a node is drawn with no
    values, and nothing is raised."""
    if tensor.layout is not torch.strided:
        tensor = _dense(tensor)
        if tensor is None:
            return None
    if tensor.is_meta or tensor.is_nested:
        return None
    try:
        address = tensor.data_ptr()
    except RuntimeError:
        return None
    if address == 0 and tensor.numel():
        return None
    if tensor.is_complex():
        return torch.view_as_real(tensor.detach().resolve_conj())
    return tensor


# The dtypes whose numbers ``tolist()`` gives as plain Python numbers (not complex, quantized
# or float8, which _preview handles its own way), and those of them numpy has too.
_REAL = frozenset({torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
                   torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool})
_IN_NUMPY = _REAL - {torch.bfloat16}


def _plain_numbers(tensor: torch.Tensor) -> tuple[list, Any] | None:
    """The numbers a preview shows of a real, dense CPU tensor with memory of its own, row-major:
    ``(every number, None)`` for a small one, ``(the first PREVIEW_SIZE, the tensor as a numpy
    array)`` for a bigger one (numpy shares the tensor's memory); None for any other tensor
    (``_preview`` then asks ``_shown`` what it can show).

    NOTE [speed] The commonest previews of all, so it reads only what decides them: four
    attribute reads, then one ``tolist()`` (about 1 us), against ``_shown``'s eight reads and
    ``events.preview``'s checks (10 us for an (8, 32) activation)."""
    try:
        if not (tensor.is_cpu and tensor.layout is torch.strided and tensor.dtype in _REAL
                and not tensor.is_nested and tensor.data_ptr()):
            return None
        values = _small_values(tensor)
        if values is not None:
            return values, None
        if tensor.dtype not in _IN_NUMPY:
            return None
        array = _numpy(tensor)
    except RuntimeError:  # no storage of its own (a functorch wrapper), a lazy negation bit:
        return None  # _shown says what can be shown
    first = array.ravel() if array.flags.c_contiguous else array.flat  # (no copy either way)
    return first[: events.PREVIEW_SIZE].tolist(), array


def _preview(tensor: torch.Tensor) -> tuple:
    plain = _plain_numbers(tensor)
    if plain is not None:
        return tuple(plain[0][: events.PREVIEW_SIZE])
    tensor = _shown(tensor)
    if tensor is None:
        return ()
    values = _small_values(tensor)
    if values is not None:
        return tuple(values[: events.PREVIEW_SIZE])
    try:
        return events.preview(_numpy(tensor))
    except (TypeError, RuntimeError):  # on a GPU, bfloat16, conjugated: a few numbers only
        flat = tensor.detach().reshape(-1)[: events.PREVIEW_SIZE]
        return tuple(flat.to("cpu", torch.float64).tolist())


def _preview_and_norm(tensor: torch.Tensor) -> tuple[tuple, float]:
    plain = _plain_numbers(tensor)
    if plain is None:
        tensor = _shown(tensor)
        if tensor is None:
            return (), math.nan
        values = _small_values(tensor)
        plain = (values, None) if values is not None else None
    if plain is not None and plain[1] is None and (not plain[0] or type(plain[0][0]) is float):
        values = plain[0]
        norm = math.hypot(*values)
        if norm == math.inf and any(v != v for v in values):  # hypot lets inf beat nan
            norm = math.nan
        return tuple(values[: events.PREVIEW_SIZE]), norm
    # NOTE: the squares are summed in float64 whatever the tensor's dtype: float32 sums drift
    # in the sixth digit over ten thousand numbers, float16 ones overflow. Through numpy where
    # it has the dtype (a copy in float64 and one dot: a fifth of torch's own float64 norm)
    if plain is not None and plain[1] is not None:
        flat = plain[1].astype(np.float64).ravel()
        return tuple(plain[0]), math.sqrt(float(flat @ flat))
    return _preview(tensor), float(torch.linalg.vector_norm(tensor.detach(), dtype=torch.float64))


def _saved_bytes(node: Any) -> int:
    """Bytes of the tensors a node saved for backward (its documented ``_saved_*`` attributes;
    a tensor saved twice counts once)."""
    names = _saved_names.get(type(node))
    if names is None:
        names = _saved_names[type(node)] = _saved_tensor_names(node)
    if not names:  # an op that saves no tensor (add, sum, a view): the commonest answer
        return 0
    total = 0
    seen: set = set()  # the address of each tensor counted
    for attr in names:
        try:
            value = getattr(node, attr)
        except RuntimeError:  # freed already
            return 0
        for item in (value,) if type(value) is not tuple and type(value) is not list else value:
            if isinstance(item, torch.Tensor) and item.layout is torch.strided:
                address = _address(item)
                if address not in seen:
                    seen.add(address)
                    total += item.nbytes
    return total


def _address(tensor: torch.Tensor) -> int:
    """Where a tensor's numbers begin in memory (two tensors saved over one block count once);
    a tensor with no storage of its own (a functorch wrapper, inside ``torch.func.grad``) is
    told apart by its id()."""
    try:
        return tensor.data_ptr()
    except RuntimeError:
        return id(tensor)


def _saved_tensor_names(node: Any) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of a node's type that can hold tensors: not the numbers,
    sizes and strides (``_saved_alpha``, ``_saved_self_sym_sizes``) an op saves beside them.
    NOTE [speed]: reading an attribute makes a Python object; the numbers need not be read."""
    names = []
    for attr in dir(node):
        if attr.startswith("_saved_"):
            try:
                value = getattr(node, attr)
            except RuntimeError:  # freed: its kind is not known, so it is kept
                names.append(attr)
                continue
            items = value if type(value) is tuple or type(value) is list else (value,)
            if value is None or any(isinstance(item, torch.Tensor) for item in items) or (
                    not items):
                names.append(attr)
    return tuple(names)


def _is_freed(node: Any) -> bool:
    """Did the node release what it saved? (Reading a released one raises.)"""
    _saved_bytes(node)  # learns the node type's attribute names
    for attr in _saved_names[type(node)]:
        try:
            getattr(node, attr)
        except RuntimeError:
            return True
    return False


# --------------------------------------------------------------------------- where


def _where() -> events.SourceLine | None:
    """The learner's line: the first frame outside dyngraph and torch above the mode's call
    (torch's own files are added to the spine's table of internal files the first time one is
    found). Its ``target`` is kept only when every torch frame on the way hands the op's
    result back as it is (NOTE [names of torch nodes])."""
    frame, depth = sys._getframe(1), 2  # where_from_stack(depth) from here reads that frame
    while frame is not None and frame.f_code is not _MODE_CODE:
        frame, depth = frame.f_back, depth + 1
    if frame is None:  # (not under the mode: from the caller's frame, and no name)
        depth, named = 2, False
    else:  # from the frame that called the mode: the mode's own frames are not on the way
        depth, named = depth + 1, True
    where = events.where_from_stack(depth, named=named)
    if where is None or not where.file.startswith(_TORCH_DIR):
        return where
    for _ in range(64):
        where = events.where_from_stack(depth, named=named)
        if where is None or not where.file.startswith(_TORCH_DIR):
            return where
        events.mark_internal_file(where.file)
    return None


# NOTE [names of torch nodes] A node is named after the variable its line assigns, as
# dyngraph's own nodes are (NOTE [variable names] in spine/events.py): ``h = x * w`` names the
# MulBackward0 ``h``. Only the node whose value the line itself receives gets the name: the
# op's result, when every torch frame between the learner's line and the mode returns it as it
# is (``loss = F.cross_entropy(z, y)`` goes through torch's ``handle_torch_function``, which
# does: it is marked so). A module's result is not returned that way (``Module.__call__``
# runs hooks after forward, ``nn.Sequential`` loops), so ``logits = model(x)`` is named when
# the module returns: while a module's forward runs, the node_created of its newest node is
# held back (``_emit``), and the module's forward hook names it if it is the node of the
# module's result and the line that called the module assigns it (``_here.targets``); a
# module whose caller assigns nothing (``return self.fc2(h)``) leaves that to the module that
# called it. Every other event delivers the held one first, so the order of events is kept.
events.passes_result_back(torch.overrides.handle_torch_function)


class _ThisThreadsWatch(threading.local):
    """What the watcher keeps of the calling thread, as the mode itself is the thread's
    (NOTE [watching is per thread]): its nested watch blocks, the modules whose forward is
    running there, and the node_created held back meanwhile (NOTE [names of torch nodes])."""

    def __init__(self) -> None:
        self.depth = 0  # nested watching() blocks of this thread (one mode for them all)
        self.stack: list = []  # the modules whose forward is running, outermost first
        self.path: list[str] = []  # their scope labels (_module_label, call_label)
        self.calls_made: list[int] = []  # per running module: the recursive calls it made
        self.targets: list = []  # per running module: what its caller's line assigns, or None
        self.held: list = []  # the (node_created, ThreadState) held back while a module runs
        # per backward pass running in this thread, innermost last: the ids of the nodes that
        # ran and had saved something (what its graph_freed names)
        self.passes: list[list[int]] = []


_here = _ThisThreadsWatch()



def _emit(event: Any, state: Any = None) -> None:
    """``events.emit``, for every event of this module: a node_created made while a module's
    forward runs is held back until the next event (NOTE [names of torch nodes])."""
    if _here.held:
        held, held_state = _here.held.pop()
        events.emit(held, held_state)
    if _here.stack and event.kind == "node_created":
        _here.held.append((event, this_thread.state if state is None else state))
        return
    events.emit(event, state)


def _name(output: torch.Tensor, where: Any) -> str | None:
    """The name of the node that made ``output``: the learner's (``dgt.name``), or the
    variable the line assigns it to."""
    named = _names.get(output)
    if named is not None:
        return named[0]
    return None if where is None else where.target


# --------------------------------------------------------------------------- announcing


def _announce(roots: list, outputs: dict[int, torch.Tensor], where: Any, scope: tuple,
              arguments: list | tuple | None = None) -> None:
    """node_created for every node behind ``roots`` (autograd nodes or leaf tensors) that the
    current subscribers were not told about, inputs first. ``outputs`` maps id() of a node's
    _Info to the tensor it produced, when the mode saw it (its value is known); ``arguments``
    are the tensors the op received: those needing no gradient are data leaves, inputs of its
    outputs (None: not known, NOTE [inputs the graph does not keep] in function.py).

    NOTE [made before] What made an argument was made before the op: by code the mode did not
    see (a custom ``autograd.Function``, code run before watching). It is told about first,
    with the argument's value but no line and no scope, which are not known; the op's line
    goes to the nodes the op itself made (``F.linear`` makes ``TBackward0`` too)."""
    epoch = this_thread.state.epoch
    made_before: dict[int, tuple] = {}  # id() of an argument's node's _Info -> (node, argument)
    for tensor in arguments or ():
        node = _grad_fn(tensor)
        info = _node_info(node) if node is not None else None
        if info is not None and info.announced != epoch and id(info) not in outputs:
            made_before.setdefault(id(info), (node, tensor))  # (in place: the op's own node)
    if made_before:
        _announce([node for node, _ in made_before.values()],
                  {key: tensor for key, (_, tensor) in made_before.items()}, None, ())  # (and
        # their own arguments are not known)
    # nodes and leaf tensors not told about yet, inputs before the ops that use them
    order = [(item, _info_of(item)) for item in walk_back(
        roots, _inputs_hooked, key=lambda item: id(_info_of(item)),
        known=lambda item: _info_of(item).announced == epoch)]
    for _, info in order:
        info.announced = epoch
    for item, info in order:
        if isinstance(item, torch.Tensor):
            _emit(_leaf_event(item, _numbered(info), where))
            continue
        slots = [_node_info(parent) if parent is not None else None
                 for parent, _ in item.next_functions]
        _emit_node(item, info, slots, outputs.get(id(info)), where, scope, arguments)


def _announce_output(args: tuple, output: torch.Tensor) -> None:
    """node_created for the node that made ``output``, an op's one result (from ``args``), if
    the op joined the graph and the subscribers were not told about that node yet."""
    node = _grad_fn(output)
    if node is not None:
        info = _node_info(node)
        if info.announced != this_thread.state.epoch:
            _announce_op(args, node, info, output)


def _announce_op(args: tuple, node: Any, info: _Info, output: torch.Tensor) -> None:
    """_announce for the commonest case: ``node`` is the one node an op made (from ``args``,
    returning ``output``), and its inputs were all told about already (a chain, a loop): no
    walk, only a look at its parents, then the one node_created of ``_emit_node``."""
    epoch = this_thread.state.epoch
    slots = []  # the node's inputs, as next_functions has them: a parent's _Info, or None
    for parent, _ in node.next_functions:
        if parent is None:
            slots.append(None)
            continue
        parent_info = parent.metadata.get(_KEY)
        if parent_info is None or parent_info.announced != epoch or not parent_info.hooked:
            _announce_walking(args, node, info, output)
            return
        slots.append(parent_info)
    info.announced = epoch
    _emit_node(node, info, slots, output, _where(), _scope(), _arguments(args))


def _in_order(slots: list, data: list, n_tensors: int) -> tuple[tuple, tuple | None]:
    """The ids of a node's inputs in the order of the op's arguments, where that is known,
    and the position among them of each slot's gradient (None: slot i is input i).
    PyTorch keeps an empty slot (None in ``next_functions``) for an argument that needs no
    gradient: when the op's ``n_tensors`` tensor arguments are as many as the slots, and its
    ``data`` (their ids) as many as the empty ones, each data tensor goes in its slot
    (``d - a``: d, then a). Otherwise the data come after the inputs that need a gradient."""
    if not data and len(slots) == n_tensors and None not in slots:  # the commonest case
        return tuple([slot.id for slot in slots]), None
    if len(slots) == n_tensors and slots.count(None) == len(data):
        data_ids = iter(data)
        return tuple(next(data_ids) if slot is None else slot.id for slot in slots), None
    inputs = tuple(slot.id for slot in slots if slot is not None) + tuple(data)
    if None not in slots:
        return inputs, None
    positions, taken = [], 0  # -1 for an empty slot
    for slot in slots:
        positions.append(-1 if slot is None else taken)
        taken += slot is not None
    return inputs, tuple(positions)


def _announce_walking(args: tuple, node: Any, info: _Info, output: torch.Tensor) -> None:
    """What _announce_op does, the general way: walking back from ``node``."""
    _announce([node], {id(info): output}, _where(), _scope(), _arguments(args))


def _data_leaf(tensor: torch.Tensor, where: Any) -> int:
    """The id of a data tensor (needing no gradient) an op received, told about if new."""
    info = _leaf_info(tensor)
    if info.announced != this_thread.state.epoch:
        info.announced = this_thread.state.epoch
        _emit(_leaf_event(tensor, _numbered(info), where))
    return info.id


def _emit_node(node: Any, info: _Info, slots: list, output: torch.Tensor | None, where: Any,
               scope: tuple, arguments: list | tuple | None) -> None:
    """node_created for one autograd node whose inputs (``slots``: their _Info, None for an
    argument that needs no gradient) were told about; ``output`` is the tensor it produced, if
    the mode saw it, and ``arguments`` the tensors of that op, whose data (needing no
    gradient) are inputs too (None: not known). Its inputs and their positions are kept in
    ``info``: edge_grad names them so."""
    for parent_info in slots:
        if parent_info is not None:
            parent_info.consumers += 1
    if info.saved_bytes is None:
        info.saved_bytes = _saved_bytes(node)
    if output is not None and arguments is not None:  # the op's own call: its data known
        data = [_data_leaf(tensor, where) for tensor in arguments if not tensor.requires_grad]
        info.inputs, info.positions = _in_order(slots, data, len(arguments))
        info.unknown = tuple(data)
    else:
        for event in _unknown_inputs(info, slots, scope):
            _emit(event)
    _emit(_node_event(node, info, output, where, scope, info.saved_bytes))


def _unknown_inputs(info: _Info, slots: list, scope: tuple) -> list:
    """The node_created of the inputs of ``info``'s node that are no node of the graph, when
    the op's arguments are not known (NOTE [inputs the graph does not keep] in function.py):
    described as when the mode saw the op made, or, the first time, one constant of unknown
    value per empty slot. (A fold that holds them already ignores them.)"""
    if info.unknown is None:
        info.unknown = tuple(new_node_id() for slot in slots if slot is None)
        info.inputs, info.positions = _in_order(slots, list(info.unknown), len(slots))
    return [events.node_created(id=unknown, op="constant", inputs=(), shape=(), dtype="",
                                device="cpu", requires_grad=False, is_leaf=True, scope=scope)
            for unknown in info.unknown]


def _node_event(node: Any, info: _Info, output: torch.Tensor | None, where: Any, scope: tuple,
                saved_bytes: int) -> Any:
    """The node_created of one autograd node, with the inputs ``info`` holds; its value,
    shape and name when the mode saw it make ``output``."""
    node_id = _numbered(info)
    if output is None:  # made inside a composite op, or before watching: no value known
        return events.node_created(
            id=node_id, op=_op_name(node), inputs=info.inputs, shape=(), dtype="", device="cpu",
            requires_grad=True, is_leaf=False, name=None, scope=scope, where=where, preview=(),
            saved_bytes=saved_bytes)
    return events.node_created(
        id=node_id, op=_op_name(node), inputs=info.inputs, shape=_shape(output),
        dtype=_dtype(output), device="cpu" if output.is_cpu else _device(output),
        requires_grad=True, is_leaf=False, name=_name(output, where),
        scope=scope, where=where, preview=_preview(output), saved_bytes=saved_bytes)


def _leaf_event(tensor: torch.Tensor, node_id: int, where: Any) -> Any:
    label, leaf_scope = _names.get(tensor, (None, None))
    if isinstance(tensor, torch.nn.Parameter):
        op = "parameter"
    else:  # data needing no gradient is drawn as dyngraph draws it: a constant
        op = "leaf" if tensor.requires_grad else "constant"
    return events.node_created(
        id=node_id, op=op, inputs=(),
        shape=_shape(tensor), dtype=_dtype(tensor),
        device="cpu" if tensor.is_cpu else _device(tensor),
        requires_grad=tensor.requires_grad, is_leaf=True, name=label,
        scope=leaf_scope if leaf_scope is not None else (),  # data made outside any module
        where=where, preview=_preview(tensor))


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    """The tensors in an op's result or arguments (two levels of tuples and lists)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item
            elif isinstance(item, (tuple, list)):
                yield from (t for t in item if isinstance(t, torch.Tensor))


# --------------------------------------------------------------------------- the mode


_BACKWARD = {torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad}
_INPLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__setitem__"}


def _compiling() -> bool:
    """Is torch.compile, torch.export or torch.jit.trace running the code? (NOTE [compiled
    code])"""
    return torch.compiler.is_compiling() or torch.jit.is_tracing()


class _EventMode(TorchFunctionMode):
    """Sees every torch call; tells the subscribers about the autograd nodes it made."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: Any = None) -> Any:
        if kwargs is None:
            kwargs = {}
        if not this_thread.state.active or _compiling():  # NOTE [compiled code]
            return func(*args, **kwargs)
        inplace = _inplace.get(func)
        if inplace is None:
            if func in _BACKWARD:
                return _run_backward(func, args, kwargs)
            inplace = _inplace[func] = _is_inplace(func)
        before = None
        if inplace and args and isinstance(args[0], torch.Tensor) and args[0].requires_grad:
            target = args[0]
            node = _grad_fn(target)
            before = _known(node) if node is not None else _leaves.get(target)
        out = func(*args, **kwargs)  # NOTE [the mode's entry]
        if not this_thread.state.active:
            return out
        if _here.path and type(out) is torch.Tensor and out.grad_fn is None \
                and out not in _names:
            # data a module's forward makes (an index, a mask, positions) is drawn in the
            # module, not among the model's inputs (issue 40: a map's boxes hold it)
            _names[out] = (None, _scope())
        arguments = _with_keyword_tensors(args, kwargs) if kwargs else args
        if type(out) is torch.Tensor:  # NOTE: most calls return one tensor; a quicker path
            _announce_output(arguments, out)
        elif out is None and inplace and args and isinstance(args[0], torch.Tensor):
            _announce_output(arguments, args[0])  # y[1] = 10.0 returns nothing and changes y
        else:
            _announce_outputs(arguments, out)
        if before is not None and before.announced == this_thread.state.epoch:
            _emit(events.version_bumped(id=before.id, version=args[0]._version))
        return out


_MODE_CODE = _EventMode.__torch_function__.__code__  # where the mode's frames begin (_where)


def _with_keyword_tensors(args: tuple, kwargs: dict) -> tuple:
    """An op's arguments and the tensors passed to it by keyword (``torch.add(w, other=d)``):
    data among them are inputs of its node too."""
    tensors = tuple(value for value in kwargs.values() if isinstance(value, torch.Tensor))
    return args + tensors if tensors else args


def _announce_outputs(args: tuple, out: Any) -> None:
    """node_created for the nodes behind the tensors an op returned in a tuple or a list."""
    epoch = this_thread.state.epoch
    nodes, outputs = [], {}
    for tensor in _tensors(out):
        grad_fn = _grad_fn(tensor)
        if grad_fn is not None:
            info = _node_info(grad_fn)
            if info.announced != epoch:
                nodes.append(grad_fn)
                outputs[id(info)] = tensor
    if nodes:
        _announce(nodes, outputs, _where(), _scope(), _arguments(args))


def _scope() -> tuple:
    scope = this_thread.state.scope
    return scope + tuple(_here.path) if _here.path else scope


def _arguments(values: Any) -> list:
    """The tensors among an op's arguments, in order, found in lists and tuples as in
    ``_tensors``."""
    tensors = []
    for value in values:
        if type(value) is torch.Tensor or isinstance(value, torch.Tensor):
            tensors.append(value)
        elif isinstance(value, (tuple, list)):
            tensors.extend(_tensors(value))
    return tensors


# NOTE [the mode's entry] Python places a warning of PyTorch's C++ at the innermost Python frame,
# and one of a torch function written in Python (``stacklevel=2``) at its caller's: with the mode
# running the function, that frame is the mode's, in this file. The learner would read
# "dyngraph/torch.py: UserWarning" without their line, and miss the same warning from their next
# line (Python shows a warning once per place). So, while the mode is in place, a warning placed
# in this file is placed again at the learner's line, where Python's filters then decide as they
# would unwatched (``_placed_at_the_learners_line``). Two things of the ``warnings`` module do
# it, for the whole block rather than per op (catching each op's warnings with
# ``catch_warnings`` cost 3-7 us an op, a third of watching's cost, benchmarks/README.md):
# - a filter "always" for this module, first in ``warnings.filters``, so that this file's own
#   once-per-place registry never hides a repeat: each one reaches the next step;
# - ``warnings._showwarnmsg``, the function both the C and the Python halves of ``warnings``
#   call to show a warning that passed the filters. It is private but stable (Python 3.6 to
#   3.13), and the one step that ``catch_warnings`` itself leaves alone: a learner's
#   ``catch_warnings(record=True)`` or ``pytest.warns`` inside the block records the warning at
#   their line, as unwatched.
# A learner who resets the filters inside the block (``warnings.resetwarnings()``) removes the
# first: a repeated warning may then be shown once only.
_PLACED_HERE = ("always", None, Warning, re.compile(re.escape(__name__) + r"\Z"), 0)
_HERE = os.path.abspath(__file__)


def _placed_at_the_learners_line(show: Any) -> Any:
    """``warnings._showwarnmsg`` for the watched block: a warning placed in this file is warned
    again at the learner's line (NOTE [the mode's entry]); any other goes on to ``show``."""

    def placed(message: Any) -> None:
        if os.path.abspath(message.filename) != _HERE:
            show(message)
            return
        frame = sys._getframe(1)
        while frame is not None and _is_ours_or_torchs(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:  # (no learner's frame: PyTorch called back from a thread of its own)
            show(message)
            return
        scope = frame.f_globals
        warnings.warn_explicit(message.message, message.category, frame.f_code.co_filename,
                               frame.f_lineno, module=scope.get("__name__"),
                               registry=scope.setdefault("__warningregistry__", {}),
                               module_globals=scope, source=message.source)

    return placed


@contextmanager
def _warnings_at_the_learners_line() -> Iterator[None]:
    """NOTE [the mode's entry], for the duration of the block."""
    show = getattr(warnings, "_showwarnmsg", None)
    if show is None:  # (a Python whose warnings module has another shape: placed as they come)
        yield
        return
    mutated = getattr(warnings, "_filters_mutated", lambda: None)  # registries see new filters
    placed = warnings._showwarnmsg = _placed_at_the_learners_line(show)
    warnings.filters.insert(0, _PLACED_HERE)
    mutated()
    try:
        yield
    finally:
        if _PLACED_HERE in warnings.filters:
            warnings.filters.remove(_PLACED_HERE)
        mutated()
        if warnings._showwarnmsg is placed:
            warnings._showwarnmsg = show


_inplace: dict[Any, bool] = {}  # a torch function (not backward) -> does it change its input?


def _is_inplace(func: Any) -> bool:
    name_ = getattr(func, "__name__", "")
    return (name_.endswith("_") and not name_.startswith("_")) or name_ in _INPLACE_DUNDERS


_signatures: dict[Any, inspect.Signature] = {}  # of the _BACKWARD functions (slow to make)


def _run_backward(func: Any, args: tuple, kwargs: dict) -> Any:
    """Tensor.backward / autograd.backward / autograd.grad, with backward_started before and
    graph_freed and backward_finished (or backward_failed) after."""
    signature = _signatures.get(func)
    if signature is None:
        signature = _signatures[func] = inspect.signature(func)
    bound = signature.bind(*args, **kwargs).arguments
    roots = bound.get("self", bound.get("tensors", bound.get("outputs")))
    roots = [t for t in _tensors(roots if roots is not None else ())]
    create_graph = bool(bound.get("create_graph", False))
    retain_graph = bound.get("retain_graph")
    retain_graph = create_graph if retain_graph is None else bool(retain_graph)
    nodes = [(_grad_fn(t), t) for t in roots if t.requires_grad]
    starts = [node if node is not None else t for node, t in nodes]
    if not starts:
        return func(*args, **kwargs)  # torch raises its own error; nothing to show
    _announce(starts, {}, None, ())  # built before watching? (the nodes get their hooks too)
    root = starts[0]
    root_id = (_leaf_info(root) if isinstance(root, torch.Tensor) else _node_info(root)).id
    _emit(events.backward_started(root=root_id, retain_graph=retain_graph,
                                 create_graph=create_graph, where=_where()))
    ran: list[int] = []
    passes = _here.passes
    passes.append(ran)
    caller = (this_thread.state, ran)
    _callers.append(caller)
    try:
        result = func(*args, **kwargs)
    except BaseException as exc:
        _emit(events.backward_failed(root=root_id, error=f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        _forget(passes, ran)
        _forget(_callers, caller)
    if ran and not retain_graph:
        _emit(events.graph_freed(ids=tuple(ran)))
    _emit(events.backward_finished(root=root_id))
    return result


def _forget(running: list, item: Any) -> None:
    """Remove ``item`` (a pass's record) from ``running``, by identity, wherever it is."""
    for i in range(len(running) - 1, -1, -1):
        if running[i] is item:
            del running[i]
            return


# --------------------------------------------------------------------------- followed passes

# NOTE [a watched graph stays watched, in PyTorch] A learner watches the forward pass and calls
# ``loss.backward()`` in a later cell, outside any watch block (NOTE [a watched graph stays
# watched] in spine/events.py). The mode is off there, so ``_run_backward`` does not run; but the
# hooks registered on each node while watching still do. The first of them to run in a pass
# while nobody listens (the pass's first node, or the first one made while watching: the
# loss may have been computed in the later cell) asks the thread's followers whether they
# claim its node (``_follow_pass``): that node is the pass's root as far as a view knows. A
# pass whose first hooked node is a leaf's began in another graph that merely uses the leaf
# (the next training step, unwatched): nobody is asked. Those that claim are subscribed for
# the pass: ``backward_started`` (what the
# pass keeps and records is read from PyTorch at that moment, NOTE [which torch mechanisms]),
# then every gradient and edge, as a watched pass; at the end ``graph_freed`` and
# ``backward_finished``, and the followers rest (they stop following once the pass freed the
# graph). The end comes from PyTorch's engine: a callback queued for the end of the pass
# (``queue_callback``) runs when it has run to the end; a pass that fails never runs it, but
# releases it then, and a finalizer on it reports ``backward_failed`` (PyTorch's error itself
# reaches the learner's cell, not the hooks). Code with no follower pays nothing for this: no
# hook runs in its forward, and a hook of a watched graph checks one dict.


class _Followed:
    """A backward pass that followers of its graph were woken for (see the NOTE above)."""

    __slots__ = ("root", "state", "woken", "retain_graph", "ran", "passes", "ended")

    def __init__(self, root: int, state: Any, woken: list, retain_graph: bool) -> None:
        self.root = root
        self.state = state  # the thread whose followers these are
        self.woken = woken  # what events.rest_followers needs at the end
        self.retain_graph = retain_graph
        self.ran: list[int] = []  # ids of the nodes that ran and had saved something
        self.passes = _here.passes  # the running passes of the thread it runs in
        self.ended = False


def _follow_pass(info: _Info, state: Any) -> Any:
    """A pass outside any watch block reached ``info``'s node: wake the followers that claim
    it, report the start and have the end reported. Returns ``state`` if any woke, else None."""
    woken = events.wake_followers((info.id,))
    if not woken:
        return None
    create_graph = torch.is_grad_enabled()  # the engine runs backward in create_graph's mode
    keep_graph = getattr(torch._C._autograd, "_get_current_graph_task_keep_graph", None)
    # (unknown in a PyTorch without it: then nothing is claimed to be freed)
    retain_graph = bool(keep_graph()) if keep_graph is not None else True
    followed = _Followed(info.id, state, woken, retain_graph)
    followed.passes.append(followed.ran)
    _emit(events.backward_started(root=info.id, retain_graph=retain_graph,
                                 create_graph=create_graph, where=_where()), state)

    def ran_to_the_end() -> None:
        _end_followed(followed, None)

    ended = weakref.finalize(ran_to_the_end, _end_followed, followed,
                             "the backward pass raised an error (shown in the cell's output)")
    ended.atexit = False
    torch.autograd.Variable._execution_engine.queue_callback(ran_to_the_end)
    return state


def _end_followed(followed: _Followed, error: str | None) -> None:
    """The end of a followed pass: graph_freed and backward_finished, or backward_failed; the
    followers rest."""
    if followed.ended:
        return  # (PyTorch releases the callback after it ran)
    followed.ended = True
    _forget(followed.passes, followed.ran)  # (a finalizer may run in another thread)
    state = followed.state
    if error is not None:
        _emit(events.backward_failed(root=followed.root, error=error), state)
    else:
        if followed.ran and not followed.retain_graph:
            _emit(events.graph_freed(ids=tuple(followed.ran)), state)
        _emit(events.backward_finished(root=followed.root), state)
    events.rest_followers(followed.woken, freed=error is None and not followed.retain_graph)


# --------------------------------------------------------------------------- modules


def _enter_module(module: Any, args: Any) -> None:
    """A module's forward begins: its name joins the scope, and its parameters and buffers
    (``running_mean``, data an op reads) get names."""
    if not _here.depth:  # a module run by a thread that does not watch
        return
    if any(running is module for running in _here.stack):
        # a recursion: each call is a scope of its own (nn/module.py NOTE [scopes])
        _here.calls_made[-1] += 1
        label = events.call_label(_here.calls_made[-1], type(module).__name__)
    else:
        label = _module_label(module, _here.stack[-1] if _here.stack else None)
    _here.targets.append(_caller_target())
    _here.stack.append(module)
    _here.calls_made.append(0)
    _here.path.append(label)
    # a module's weights belong to the module, not to the call of a recursion that first ran it
    path = this_thread.state.scope + tuple(
        p for p in _here.path if not events.is_call_label(p))
    for tensors in (module._parameters, module._buffers):
        for tensor_name, tensor in tensors.items():
            if tensor is not None and tensor not in _names:
                _names[tensor] = (tensor_name, path)


def _module_label(module: Any, caller: Any) -> str:
    """The scope a module's ops are drawn in, named as PyTorch names the module inside the
    module whose forward called it (``named_modules``: "fc1", "rnn.0" for a ModuleList's
    child); a name ending in a bare position gets the class, as dyngraph's own modules do
    (nn/module.py NOTE [scopes]): "0 · Linear", "rnn.0 · LSTMCell". A module called from no
    other module's forward: its class name."""
    label = type(module).__name__
    if caller is None:
        return label
    for name, descendant in caller.named_modules():
        if descendant is module and name:
            return scope_label(name, label)
    return label


def _leave_module(module: Any, args: Any, output: Any) -> None:
    """A module's forward returned ``output``: the node held back is named if it made the
    output and the caller's line assigns it (NOTE [names of torch nodes])."""
    if not (_here.stack and _here.stack[-1] is module):
        return
    _here.stack.pop()
    _here.calls_made.pop()
    _here.path.pop()
    target = _here.targets.pop()
    if not _here.held:
        return
    event, state = _here.held[0]
    node = _grad_fn(output) if isinstance(output, torch.Tensor) else None
    info = _known(node) if node is not None else None
    made_output = info is not None and info.id == event.id
    if made_output and target is not None and event.name is None:
        _here.held.clear()
        events.emit(event._replace(name=target), state)
    elif not made_output or not _here.stack:
        _here.held.clear()
        events.emit(event, state)
    # else: the result of a module whose caller does not assign it: the caller's caller may


def _caller_target() -> str | None:
    """In a module's forward pre-hook: the variable the line that called the module assigns
    its result to, when that line is the learner's (not torch's: ``nn.Sequential`` calling
    its layers names none of them). None while compiling: Dynamo reads this hook as Python
    (NOTE [compiled code]), and nothing is named there."""
    if _compiling():
        return None
    frame, depth = sys._getframe(2), 3  # from the caller of _enter_module (this one's caller)
    while frame is not None and frame.f_code.co_filename == _MODULE_FILE:
        frame, depth = frame.f_back, depth + 1  # Module.__call__ and its hooks
    if frame is None or _is_ours_or_torchs(frame.f_code.co_filename):
        return None
    where = events.where_from_stack(depth)
    return None if where is None else where.target


_MODULE_FILE = _torch_module.__file__


# --------------------------------------------------------------------------- watching



# NOTE [watching is per thread] The mode is the thread's (PyTorch keeps torch function modes
# per thread), and so is what the watcher keeps of the modules running (``_here``): a second
# thread watching meanwhile installs its own mode and sees its own ops and scopes, and a module
# called in a thread that does not watch leaves the others' scopes alone. Two things are the
# process's, installed by the first thread that watches and removed by the last that stops:
# the global module hooks (PyTorch has no per-thread ones; each hook asks whether its thread
# watches) and the warnings redirect (NOTE [the mode's entry]).
_shared_lock = threading.Lock()
_shared: list = []  # [threads watching, what removes the shared pieces] while any does


def _install_shared() -> None:
    with _shared_lock:
        if _shared:
            _shared[0] += 1
            return
        exits = ExitStack()
        exits.callback(_torch_module.register_module_forward_pre_hook(_enter_module).remove)
        exits.callback(_torch_module.register_module_forward_hook(
            _leave_module, always_call=True).remove)
        exits.enter_context(_warnings_at_the_learners_line())
        _shared[:] = [1, exits]


def _remove_shared() -> None:
    with _shared_lock:
        _shared[0] -= 1
        if _shared[0] == 0:
            exits = _shared[1]
            _shared.clear()
            exits.close()


@contextmanager
def watching() -> Iterator[None]:
    """Inside the block, torch code emits dyngraph's events to whoever listens (dg.watch() and
    dg.record() open this block themselves when torch is imported). Per thread: NOTE
    [watching is per thread]."""
    here = _here
    if here.depth:
        here.depth += 1
        try:
            yield
        finally:
            here.depth -= 1
        return
    here.depth = 1
    _install_shared()
    try:
        with _EventMode():
            yield
    finally:
        here.depth = 0
        _remove_shared()
        here.stack.clear()
        here.calls_made.clear()
        here.path.clear()
        here.targets.clear()
        if here.held:
            events.emit(*here.held.pop())


# --------------------------------------------------------------------------- dg.draw


def from_tensor(tensor: torch.Tensor) -> Recording:
    """The model of the autograd graph behind a torch tensor (what ``dg.draw(tensor)`` draws):
    the node_created events a view is told of a graph built before watching, walking back from
    its grad_fn, folded as a watching recording folds them; intermediates show no value, only
    their op. The gradients its leaves hold and the nodes already freed are as they stand now."""
    node = _grad_fn(tensor)
    root = node if node is not None else tensor

    def drawn_info(item: Any) -> _Info:  # dg.draw registers no hook
        return _leaf_info(item) if isinstance(item, torch.Tensor) else _node_info(item, False)

    order = [(item, drawn_info(item)) for item in walk_back(
        [root], _inputs, key=lambda item: id(drawn_info(item)))]

    def described() -> Iterator[Any]:
        for item, info in order:
            if isinstance(item, torch.Tensor):
                yield _leaf_event(item, _numbered(info), None)
                continue
            slots = [drawn_info(parent) if parent is not None else None
                     for parent, _ in item.next_functions]
            yield from _unknown_inputs(info, slots, ())
            yield _node_event(item, info, tensor if item is root else None, None, (),
                              info.saved_bytes or _saved_bytes(item))

    recording = Recording.of_graph(described())
    for item, info in order:
        drawn = recording.nodes[info.id]
        if isinstance(item, torch.Tensor):
            if item.grad is not None:
                drawn.grad_preview, drawn.grad_norm = _preview_and_norm(item.grad)
        else:
            drawn.freed = _is_freed(item)
    return recording
