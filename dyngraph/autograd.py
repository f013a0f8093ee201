"""The backward engine: the chain rule, run over the graph that forward recorded.

``loss.backward()`` does four things:

1. **Order.** Run nodes newest first (largest id first), from a heap of the nodes a gradient
   has reached. An op's output is always created after its inputs, so everything that consumes
   a node is newer and has already added its contribution when the node's turn comes: a
   topological order, and a deterministic one. A loop, not recursion: a 100 000-op chain is fine.
2. **Chain rule.** Hand the node's complete gradient to the op's ``backward``, which returns one
   gradient per input, and add each into its parent's running sum (fan-in accumulates). While
   someone listens, each of those contributions is an ``edge_grad`` event.
3. **Un-broadcast and cast, once, here.** When an input was broadcast in forward, its gradient
   arrives with the broadcast shape; ``sum_to_shape`` sums it back. And a gradient is made the
   dtype of its tensor before anyone sees it (NOTE [gradient dtype]). No op repeats that logic.
4. **Free.** Unless ``retain_graph=True``, each node releases what it saved as soon as it ran;
   a second backward through it raises the "second time" error.

Leaves (tensors created by the user with ``requires_grad=True``) are the graph's ends: their
summed gradients are added into ``leaf.grad`` last.

``BackwardPass.propagate`` is the definition of the loop. Where dyngraph was built with a C
compiler, its common case runs compiled, doing the same (NOTE [speedups] in _accelerated.py); to
step through the Python in a debugger, start Python with DYNGRAPH_PURE_PYTHON=1.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from . import anomaly, backend, events, grad_mode
from .function import Function, announce_graph
from .ops import differentiable
from .tensor import Tensor


def backward(
    tensor: Tensor,
    gradient: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate d(tensor)/d(leaf) into ``leaf.grad`` for every leaf of the graph (or only for
    ``inputs``). ``gradient`` is required when ``tensor`` is not a scalar."""
    if not tensor._requires_grad:
        raise RuntimeError(
            "this tensor does not require grad and has no grad_fn: nothing it was computed "
            "from has requires_grad=True (or it was computed under no_grad())"
        )
    seed = _seed_gradient(tensor, gradient, create_graph)
    only = None if inputs is None else _as_tensor_list(inputs, "inputs")
    run_backward(
        [tensor], [seed], create_graph if retain_graph is None else retain_graph, create_graph,
        accumulate_into=only,
    )


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated into
    ``.grad``). With ``create_graph=True`` they are themselves differentiable.

    >>> (gx,) = dg.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> (ggx,) = dg.autograd.grad(gx.sum(), x)       # 6x
    """
    outputs = _as_tensor_list(outputs, "outputs")
    inputs = _as_tensor_list(inputs, "inputs")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor) or not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for out in outputs:
        if not out._requires_grad:
            raise RuntimeError("one of the outputs does not require grad and has no grad_fn")
    for tensor in inputs:
        if not tensor._requires_grad:
            raise RuntimeError("one of the inputs does not require grad: nothing to differentiate")
    seeds = [_seed_gradient(o, g, create_graph) for o, g in zip(outputs, grad_outputs)]
    found = run_backward(
        outputs, seeds, create_graph if retain_graph is None else retain_graph, create_graph,
        capture=inputs,
    )
    results = []
    for g in found:
        if g is None and not allow_unused:
            raise RuntimeError(
                "one of the differentiated Tensors appears to not have been used in the graph; "
                "set allow_unused=True if this is what you want"
            )
        results.append(g if g is None or isinstance(g, Tensor) else Tensor(g))
    return tuple(results)


# ---------------------------------------------------------------------------- the engine


def run_backward(
    roots: list[Tensor],
    seeds: list[Any],
    retain_graph: bool,
    create_graph: bool,
    capture: list[Tensor] | None = None,
    accumulate_into: list[Tensor] | None = None,
) -> list[Any]:
    """Backpropagate ``seeds`` from ``roots``. Returns the gradients of ``capture`` (in order);
    without ``capture``, accumulates into the leaves' ``.grad`` (or only ``accumulate_into``)."""
    task = BackwardPass(roots, seeds, retain_graph, create_graph, capture)
    root_id = roots[0].id
    if events.active:
        announce_graph(roots)  # built before anyone listened? (NOTE [graphs built before ...])
        events.emit(events.BackwardStarted(root_id, bool(retain_graph), bool(create_graph)))
    previous_mode = grad_mode.enabled
    grad_mode.enabled = create_graph  # the backward pass is recorded only for create_graph
    try:
        task.propagate()
        if capture is None:
            task.accumulate_into_leaves(accumulate_into)
        else:
            task.capture_leaves()
    except BaseException as exc:
        if events.active:
            events.emit(events.BackwardFailed(root_id, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        grad_mode.enabled = previous_mode
    if events.active:
        if task.freed:
            events.emit(events.GraphFreed(tuple(task.freed)))
        events.emit(events.BackwardFinished(root_id))
    return task.captured


class BackwardPass:
    """The state of one backward pass (PyTorch calls it a GraphTask)."""

    def __init__(
        self,
        roots: list[Tensor],
        seeds: list[Any],
        retain_graph: bool,
        create_graph: bool,
        capture: list[Tensor] | None,
    ) -> None:
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.grads: dict[Any, Any] = {}  # node or leaf -> its gradient summed so far
        for root, seed in zip(roots, seeds):
            key = root.grad_fn or root
            self.grads[key] = seed if key not in self.grads else self.grads[key] + seed
        self.wanted: dict[Any, list[int]] = {}  # node or leaf -> positions in ``capture``
        for i, tensor in enumerate(capture or ()):
            self.wanted.setdefault(tensor.grad_fn or tensor, []).append(i)
        self.captured: list[Any] = [None] * len(capture or ())
        self.fanned_in: set = set()  # keys whose gradient is a sum of several contributions
        self.freed: list[int] = []  # ids of the nodes that released their saved arrays
        self.stored: set[int] = set()  # id() of the arrays now owned by some tensor's .grad

    def propagate(self) -> None:
        """Run every node's backward, newest first. Leaves the leaves' gradients in grads."""
        grads, fanned_in, wanted = self.grads, self.fanned_in, self.wanted
        retain_graph, create_graph = self.retain_graph, self.create_graph
        # NOTE: bound once per pass; the event code below runs per node and per edge
        emit_grad_computed, emit_edge_grad = events.emit_grad_computed, events.emit_edge_grad
        # Pending nodes, newest first: a max-heap on id (heapq is a min-heap, hence -id).
        pending = [(-key.id, key) for key in grads if isinstance(key, Function)]
        heapq.heapify(pending)
        while pending:
            node = heapq.heappop(pending)[1]
            g = grads.pop(node)
            if g.dtype != node.dtype:
                g = in_dtype(g, node.dtype)
            if node.hooks or node.retained is not None or wanted:
                g = self.observe(node, g)
            if events.active:
                emit_grad_computed(node.id, g.array if isinstance(g, Tensor) else g,
                                   node in fanned_in)

            if create_graph:
                input_grads = _call_backward_recorded(node, g)
            else:
                input_grads = node.backward(node, g)
                if type(input_grads) is not tuple:
                    input_grads = (input_grads,)
            if len(input_grads) != len(node.parents):
                _raise_wrong_count(node, input_grads)
            if anomaly.enabled:
                anomaly.check_gradients(node, input_grads)

            for position, (parent, gi) in enumerate(zip(node.parents, input_grads)):
                if parent is None or gi is None:
                    continue
                shape = gi.shape
                if shape != parent.shape:
                    gi = sum_to_shape(gi, parent.shape, node, input_grads)
                if events.active:  # what this edge carried (NOTE [edge gradients] in events.py)
                    data = gi.array if isinstance(gi, Tensor) else gi
                    emit_edge_grad(node.id, parent.id, position, data,
                                   None if shape == data.shape else shape)
                if parent in grads:
                    grads[parent] = add_into_sum(grads[parent], gi, parent in fanned_in)
                    fanned_in.add(parent)
                else:
                    grads[parent] = gi
                    if type(parent) is not Tensor and isinstance(parent, Function):
                        heapq.heappush(pending, (-parent.id, parent))
            if not retain_graph and node.saved_arrays:
                node.saved_arrays = None  # release what forward saved: the graph is freed
                self.freed.append(node.id)

    def observe(self, node: Function, g: Any) -> Any:
        """A node's gradient is complete: run its hooks, retain it, capture it."""
        if node.hooks:
            g = _run_hooks(node.hooks.values(), g, node.shape, self.create_graph)
        if node.retained is not None:
            kept = node.retained()
            if kept is not None:
                self.accumulate(kept, g)
        for i in self.wanted.get(node, ()):
            self.captured[i] = g
        return g

    def accumulate_into_leaves(self, only: list[Tensor] | None) -> None:
        """What is left in grads are the leaves' gradients: add them into ``leaf.grad``."""
        only_ids = None if only is None else {id(t) for t in only}
        leaves = sorted(self.grads, key=attrgetter("id"), reverse=True)  # newest first, as nodes
        for leaf in leaves:
            g = self.grads[leaf]
            if only_ids is not None and id(leaf) not in only_ids:
                continue
            if g.dtype != leaf.dtype:
                g = in_dtype(g, leaf.dtype)
            if leaf._hooks:
                g = _run_hooks(leaf._hooks.values(), g, leaf.shape, self.create_graph)
            accumulated = leaf in self.fanned_in or leaf._grad is not None
            self.accumulate(leaf, g)
            if events.active:
                _emit_grad(leaf.id, g, accumulated)

    def capture_leaves(self) -> None:
        """autograd.grad: hand back the gradients of the leaves asked for."""
        for key, positions in self.wanted.items():
            if isinstance(key, Tensor) and key in self.grads:
                g = self.grads[key]
                if g.dtype != key.dtype:
                    g = in_dtype(g, key.dtype)
                if key._hooks:
                    g = _run_hooks(key._hooks.values(), g, key.shape, self.create_graph)
                for i in positions:
                    self.captured[i] = g

    def accumulate(self, tensor: Tensor, g: Any) -> None:
        """tensor.grad += g, keeping the tensor's dtype."""
        if g.dtype != tensor.dtype:
            g = in_dtype(g, tensor.dtype)
        if isinstance(g, Tensor):  # create_graph: keep the graph of the gradient
            tensor._grad = g if tensor._grad is None else tensor._grad + g
            return
        if tensor._grad is not None:
            tensor._grad = Tensor(tensor._grad.array + g)
            return
        # NOTE: a .grad must own its array. An op may hand one array to several inputs
        # (z = x + y gives both the same gz), or a read-only broadcast view: copy those, and
        # keep fresh results (a matmul's, a sum's) without the cost of a copy.
        if id(g) in self.stored or g.base is not None or not getattr(g.flags, "writeable", True):
            g = g.copy()
        self.stored.add(id(g))
        tensor._grad = Tensor(g)


def add_into_sum(total: Any, g: Any, total_is_a_sum: bool) -> Any:
    """``total + g``: one more contribution to a gradient's running sum.

    Once the sum holds two contributions, it is an array this pass made and nobody else holds
    (it lives in ``grads`` until its node runs), so later contributions of the same shape and
    dtype are added in place: an RNN's weights receive one per time step, and each would
    otherwise allocate a new array. The first contribution may be an array that the op's
    backward also handed elsewhere (``Add`` gives both inputs the same gradient): never in place.
    With create_graph=True the gradients are Tensors and the sum is recorded, never in place."""
    if (total_is_a_sum and not isinstance(total, Tensor) and total.shape == g.shape
            and total.dtype == g.dtype):
        total += g
        return total
    return total + g


def _call_backward_recorded(node: Function, g: Any) -> tuple:
    """create_graph=True: backward formulas see Tensors and a differentiable ``xp``, so the
    backward pass is itself recorded as a graph."""
    xp = node.xp
    node.xp, node.create_graph = differentiable, True
    try:
        result = node.backward(node, g)
    finally:
        node.xp, node.create_graph = xp, False
    return result if type(result) is tuple else (result,)


def _raise_wrong_count(node: Function, input_grads: tuple) -> None:
    raise RuntimeError(
        f"{node.name}.backward returned {len(input_grads)} gradient(s) but the op has "
        f"{len(node.parents)} input(s): return one per input (None where there is none)"
    )


def in_dtype(grad: Any, dtype: Any) -> Any:
    """A gradient cast to the dtype of the tensor it belongs to.

    NOTE [gradient dtype] A tensor's gradient has the tensor's dtype, as in PyTorch, whose
    engine casts each gradient to its input's dtype. Two things make a backward formula hand
    back another dtype: an input of a mixed-precision op (x32 * y64 sends a float64 gradient to
    x32), and numpy 1.x, which computes float64 when a 0-d float32 array meets a Python number
    (``gz * 2.0`` after a full reduction; numpy 2 keeps float32). The engine casts once per
    node, here, instead of every formula guarding its constants. With create_graph=True the
    gradient is a Tensor and the cast is recorded."""
    return grad.to(dtype) if isinstance(grad, Tensor) else grad.astype(dtype)


def sum_to_shape(grad: Any, shape: tuple[int, ...], node: Function, input_grads: tuple) -> Any:
    """Undo broadcasting: sum ``grad`` over the axes that forward broadcast ``shape`` along.

    The one place in dyngraph that un-broadcasts. A gradient whose shape is not a broadcast of
    ``shape`` is a bug in the op's backward, reported with the op, the input and both shapes.

    The sums come out in ``shape`` itself, with no reshape after them: the result is a fresh
    array, not a view, so ``accumulate`` keeps it as a leaf's ``.grad`` without copying it.
    """
    extra = grad.ndim - len(shape)  # axes that broadcasting added in front
    if extra < 0 or (grad.shape[extra:] != shape and any(
        n != 1 and n != m for n, m in zip(shape, grad.shape[extra:])
    )):
        index = next(i for i, g in enumerate(input_grads) if g is grad)
        raise RuntimeError(
            f"Function {node.name} returned an invalid gradient at index {index}: got shape "
            f"{tuple(grad.shape)} but expected shape {tuple(shape)} (or one that broadcasts "
            "from it)"
        )
    if extra:  # a bias (C,) added to a batch (N, C): sum over the batch
        grad = grad.sum(axis=tuple(range(extra)))
    if grad.shape != shape:  # axes of length 1 that broadcasting stretched: sum back to 1
        stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


# ---------------------------------------------------------------------------- hooks, events


def _run_hooks(hooks: Any, g: Any, shape: tuple[int, ...], create_graph: bool) -> Any:
    """Call each hook with the gradient (a Tensor); a returned Tensor replaces it."""
    for hook in list(hooks):
        as_tensor = g if isinstance(g, Tensor) else Tensor(g)
        result = hook(as_tensor)
        if result is None:
            continue
        if not isinstance(result, Tensor):
            result = Tensor(result)
        if result.shape != tuple(shape):
            raise RuntimeError(
                f"hook {getattr(hook, '__name__', hook)!r} changed the size of the gradient: "
                f"expected shape {tuple(shape)} but the hook returned {tuple(result.shape)}"
            )
        g = result if create_graph else result.array
    return g


def _emit_grad(node_id: int, g: Any, accumulated: bool) -> None:
    events.emit_grad_computed(node_id, g.array if isinstance(g, Tensor) else g, accumulated)


# ---------------------------------------------------------------------------- seeds


def _seed_gradient(tensor: Tensor, gradient: Any, create_graph: bool) -> Any:
    """The starting gradient d(tensor)/d(tensor): ones for a scalar, else the one given."""
    xp = backend.get_array_module(tensor.array)
    if gradient is None:
        if tensor.array.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs, but this tensor has "
                f"shape {tuple(tensor.shape)}: reduce it first (e.g. loss.sum() or loss.mean()) "
                "or pass gradient= with the same shape"
            )
        seed = xp.ones(tensor.shape, dtype=tensor.dtype)
    else:
        data = gradient.array if isinstance(gradient, Tensor) else gradient
        seed = xp.array(backend.to_device(xp.asarray(data), tensor.device), dtype=tensor.dtype)
        if seed.shape != tensor.shape:
            raise RuntimeError(
                f"gradient has shape {tuple(seed.shape)} but the tensor it is the gradient of "
                f"has shape {tuple(tensor.shape)}: they must match"
            )
    return Tensor(seed) if create_graph else seed


def _as_tensor_list(value: Any, what: str) -> list[Tensor]:
    items = [value] if isinstance(value, Tensor) else list(value)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(item).__name__}")
    return items
