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

``BackwardPass.propagate`` is the loop, and the only one: what you read here is what runs.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from . import anomaly, backend
from .function import Function as Node  # the engine's node: arrays in and out
from .function import announce_graph, attributes_of_the_op, explain_numpy_on_tensors, nodes_behind
from .ops import differentiable
from .spine import events
from .spine.thread_state import this_thread
from .tensor import Tensor


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate d(tensors)/d(leaf) into ``leaf.grad`` for every leaf of the graph (or only for
    ``inputs``): one tensor (``loss.backward()``), or several at once as PyTorch's
    ``torch.autograd.backward([loss, aux], [None, g])``, whose gradients add up. A gradient is
    required for each tensor that is not a scalar."""
    roots = _as_tensor_list(tensors, "tensors")
    grads = _one_per_output(grad_tensors, roots, "grad_tensors")
    for root in roots:
        if not root._requires_grad:
            raise RuntimeError(
                "this tensor does not require grad and has no grad_fn: nothing it was computed "
                "from has requires_grad=True (or it was computed under no_grad())"
            )
    seeds = [_seed_gradient(root, g, create_graph) for root, g in zip(roots, grads)]
    only = None if inputs is None else _as_tensor_list(inputs, "inputs")
    run_backward(
        roots, seeds, create_graph if retain_graph is None else retain_graph, create_graph,
        accumulate_into=only,
    )


def _one_per_output(gradients: Any, outputs: list[Tensor], what: str) -> list[Any]:
    """The gradients given for ``outputs`` as a list of the same length (None: a scalar's 1)."""
    if gradients is None:
        gradients = [None] * len(outputs)
    elif isinstance(gradients, Tensor) or not isinstance(gradients, (list, tuple)):
        gradients = [gradients]
    if len(gradients) != len(outputs):
        raise ValueError(f"got {len(gradients)} {what} for {len(outputs)} outputs")
    return list(gradients)


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
    grad_outputs = _one_per_output(grad_outputs, outputs, "grad_outputs")
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
    state = this_thread.state  # this thread's modes and listeners (spine/thread_state.py)
    woken = None  # views that drew this graph and follow it (NOTE [a watched graph stays ...])
    if not state.active and state.followers:
        # a view claims the pass by its root, else by a node it drew behind the root (a loss
        # computed in a later cell from watched outputs)
        woken = (events.wake_followers(tuple(root.id for root in roots))
                 or events.wake_followers(ids_behind(roots)))
    if state.active:
        announce_graph(roots)  # built before anyone listened? (NOTE [graphs built before ...])
        events.emit(events.backward_started(  # where: the learner's backward() line
            root=root_id, retain_graph=bool(retain_graph), create_graph=bool(create_graph),
            where=events.where_from_stack()))
    previous_mode = state.grad_enabled
    state.grad_enabled = create_graph  # the backward pass is recorded only for create_graph
    try:
        task.propagate()
        if capture is None:
            task.accumulate_into_leaves(accumulate_into)
        else:
            task.capture_leaves()
    except BaseException as exc:
        if state.active:
            events.emit(events.backward_failed(root_id, f"{type(exc).__name__}: {exc}"))
        if woken:
            events.rest_followers(woken, freed=False)
        raise
    finally:
        state.grad_enabled = previous_mode
    if state.active:
        if task.freed:
            events.emit(events.graph_freed(tuple(task.freed)))
        events.emit(events.backward_finished(root_id))
    if woken:
        events.rest_followers(woken, freed=not retain_graph)
    return task.captured


def ids_behind(roots: list[Tensor]) -> tuple[int, ...]:
    """The ids of every node and leaf in the graph behind ``roots``."""
    return tuple(item.id for item in nodes_behind([root.grad_fn or root for root in roots]))


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
        state = this_thread.state  # its modes and listeners: one slot read per node and edge
        # Pending nodes, newest first: a max-heap on id (heapq is a min-heap, hence -id).
        pending = [(-key.id, key) for key in grads if isinstance(key, Node)]
        heapq.heapify(pending)
        while pending:
            node = heapq.heappop(pending)[1]
            g = grads.pop(node)
            if g.dtype != node.dtype:
                g = in_dtype(g, node.dtype)
            if node.hooks or node.retained is not None or wanted:
                g = self.observe(node, g)
            if state.active:
                emit_grad_computed(node.id, g.array if isinstance(g, Tensor) else g,
                                   node in fanned_in)

            if node.takes_tensors:  # a custom op: Tensors in and out (NOTE [custom ops])
                input_grads = backward_on_tensors(node, g, create_graph)
            elif create_graph:
                input_grads = _call_backward_recorded(node, g)
            else:
                input_grads = node.backward(node, g)
                if type(input_grads) is not tuple:
                    input_grads = (input_grads,)
            if len(input_grads) != len(node.parents):
                _raise_wrong_count(node, input_grads)
            if state.anomaly:
                anomaly.check_gradients(node, input_grads)

            for position, (parent, gi) in enumerate(zip(node.parents, input_grads)):
                if parent is None or gi is None:
                    continue
                shape = gi.shape
                if shape != parent.shape:
                    gi = sum_to_shape(gi, parent.shape, node, input_grads)
                if state.active:  # what this edge carried (NOTE [edge gradients], spine)
                    data = gi.array if isinstance(gi, Tensor) else gi
                    emit_edge_grad(node.id, parent.id, position, data,
                                   None if shape == data.shape else shape)
                if parent in grads:
                    grads[parent] = add_into_sum(grads[parent], gi, parent in fanned_in)
                    fanned_in.add(parent)
                else:
                    grads[parent] = gi
                    if type(parent) is not Tensor and isinstance(parent, Node):
                        heapq.heappush(pending, (-parent.id, parent))
            if not retain_graph and node.saved_arrays:
                node.saved_arrays = None  # release what forward saved: the graph is freed
                self.freed.append(node.id)

    def observe(self, node: Node, g: Any) -> Any:
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
        state = this_thread.state
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
            if state.active:
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
        """tensor.grad += g, keeping the tensor's dtype.

        NOTE [gradients accumulate in place] As in PyTorch, a leaf's existing ``.grad`` is
        added to in place: the same Tensor, the same memory, so ``g = x.grad`` taken before a
        second backward sees the new sum, and so does a ``.grad`` the user assigned. Three
        cases make a new Tensor instead, as PyTorch does: create_graph=True (the sum is
        recorded), a retained non-leaf's gradient (``retain_grad()``), and a gradient that
        cannot take the sum where it is (read-only, or of another shape, dtype or device)."""
        if g.dtype != tensor.dtype:
            g = in_dtype(g, tensor.dtype)
        if isinstance(g, Tensor):  # create_graph: keep the graph of the gradient
            tensor._grad = g if tensor._grad is None else tensor._grad + g
            return
        grad = tensor._grad
        if grad is not None:
            if tensor.is_leaf and _can_add_in_place(grad.array, g):
                grad.add_(g)  # in place, counted by the gradient's version counter
            else:
                tensor._grad = Tensor(grad.array + g)
            return
        # NOTE: a .grad must own its array. An op may hand one array to several inputs
        # (z = x + y gives both the same gz), or a read-only broadcast view: copy those, and
        # keep fresh results (a matmul's, a sum's) without the cost of a copy.
        if id(g) in self.stored or g.base is not None or not getattr(g.flags, "writeable", True):
            g = g.copy()
        self.stored.add(id(g))
        tensor._grad = Tensor(g)


def _can_add_in_place(array: Any, g: Any) -> bool:
    """Can ``array += g`` leave the sum in ``array``'s own memory? (``g`` may be a numpy
    scalar: numpy makes one of a 0-d result.)"""
    return (array.shape == g.shape and array.dtype == g.dtype
            and backend.device_of(array) == backend.device_of(g)
            and getattr(array.flags, "writeable", True))


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


def _call_backward_recorded(node: Node, g: Any) -> tuple:
    """create_graph=True: backward formulas see Tensors and a differentiable ``xp``, so the
    backward pass is itself recorded as a graph."""
    xp = node.xp
    node.xp, node.create_graph = differentiable, True
    try:
        result = node.backward(node, g)
    except (AttributeError, TypeError) as exc:
        _refuse_unrecorded_backward(node, exc)
        raise
    finally:
        node.xp, node.create_graph = xp, False
    return result if type(result) is tuple else (result,)


def _refuse_unrecorded_backward(node: Node, exc: Exception) -> None:
    """A built-in op's backward that reached for an array function the recorded module lacks
    (``ctx.xp.something``), or handed a Tensor to numpy: that backward cannot be recorded, so
    the op cannot be differentiated twice. Say so, naming the op, instead of an internal error
    from inside dyngraph. (A custom op's own TypeError is explained by backward_on_tensors.)"""
    text = str(exc)
    if node.takes_tensors or not (differentiable.__name__ in text or "__array_ufunc__" in text):
        return
    raise NotImplementedError(
        f"{node.name}: the derivative of its backward is not implemented, so it cannot be "
        "differentiated twice (create_graph=True reached a step of its backward that is not "
        f"a recorded op: {text}). Compute this part without create_graph, or write it with "
        "ops that dyngraph differentiates twice."
    ) from exc


def backward_on_tensors(node: Node, g: Any, create_graph: bool) -> tuple:
    """A custom op's ``backward`` (NOTE [custom ops] in function.py): it receives the gradient
    as a Tensor and returns Tensors (or None; arrays, as older custom ops return, are taken as
    they are); the engine goes on with their arrays, or with the Tensors for create_graph."""
    try:
        with attributes_of_the_op(node):
            if create_graph:  # g is a Tensor, and what backward does is recorded
                return _call_backward_recorded(node, g)
            result = node.backward(node, Tensor(g))
    except TypeError as exc:
        explain_numpy_on_tensors(type(node), "backward", exc)
        raise
    if type(result) is not tuple:
        result = (result,)
    return tuple(gi.array if isinstance(gi, Tensor) else gi for gi in result)


def _raise_wrong_count(node: Node, input_grads: tuple) -> None:
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


def sum_to_shape(grad: Any, shape: tuple[int, ...], node: Node, input_grads: tuple) -> Any:
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
        if create_graph:
            g = result
        elif result is as_tensor:
            g = result.array
        else:  # NOTE: a Tensor the user may keep, and a leaf's .grad is added to in place
            g = result.array.copy()  # (NOTE [gradients accumulate in place]): a copy of it
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
        if create_graph and isinstance(gradient, Tensor) and gradient.requires_grad:
            # NOTE: a seed that requires grad is part of the graph, as in PyTorch: the first
            # gradient is a function of it too (gradgradcheck differentiates with respect to it)
            return gradient if gradient.dtype == tensor.dtype else gradient.to(tensor.dtype)
    return Tensor(seed) if create_graph else seed


def _as_tensor_list(value: Any, what: str) -> list[Tensor]:
    items = [value] if isinstance(value, Tensor) else list(value)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(item).__name__}")
    return items


# ---------------------------------------------------------------------------- custom ops


class Function(Node):
    """Base class of custom ops, as PyTorch's ``torch.autograd.Function``: two static methods
    side by side, on Tensors (NOTE [custom ops] in function.py). The example of PyTorch's
    tutorial "Learning PyTorch with Examples" runs as it is::

        class MyReLU(dg.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.save_for_backward(input)
                return input.clamp(min=0)

            @staticmethod
            def backward(ctx, grad_output):
                (input,) = ctx.saved_tensors
                grad_input = grad_output.clone()
                grad_input[input < 0] = 0
                return grad_input

        y = MyReLU.apply(x)          # one node, MyReLU, on the diagram

    ``forward(ctx, *args)`` receives what ``apply`` was given, runs with grad mode off and
    returns one Tensor; ``backward(ctx, grad_output)`` returns one gradient (a Tensor, or None)
    per argument of ``apply``. ``ctx.needs_input_grad`` says which inputs need one;
    ``dg.gradcheck(MyReLU.apply, (x,))`` checks ``backward`` against finite differences.
    """

    takes_tensors = True

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep Tensors (inputs, the output, or anything forward computed) for backward, where
        ``ctx.saved_tensors`` gives them back. (The node keeps their arrays.)"""
        self.saved_arrays = tuple(t.array if isinstance(t, Tensor) else t for t in tensors)

    def mark_dirty(self, *tensors: Any) -> None:
        raise NotImplementedError(
            "ctx.mark_dirty: dyngraph's custom ops do not change their inputs in place; "
            "return a new tensor from forward (e.g. x + 1 instead of x.add_(1))"
        )

    def mark_non_differentiable(self, *tensors: Any) -> None:
        raise NotImplementedError(
            "ctx.mark_non_differentiable: a dyngraph custom op has one output, and it is "
            "differentiable; compute what needs no gradient (indices, masks) outside the op "
            "(x.argmax(dim) has none)"
        )


# PyTorch's spellings torch.autograd.gradcheck / gradgradcheck (defined in gradcheck.py, which
# calls ``grad`` above: imported last, once this module is complete).
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402, F401


def Variable(data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # noqa: N802
    """PyTorch's old wrapper (``from torch.autograd import Variable``), kept by PyTorch for the
    old tutorials: since PyTorch 0.4 every tensor is one. A new tensor on the same memory,
    outside any graph, requiring grad if asked, as PyTorch's ``Variable(t)`` returns."""
    return data.detach().requires_grad_(requires_grad)
