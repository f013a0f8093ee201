"""Module and Parameter: how a model keeps its weights (PyTorch's ``torch.nn.Module``).

A model is a tree of modules. Each module owns some ``Parameter`` tensors and some child
modules, both registered simply by assigning them as attributes::

    class MLP(dg.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = dg.nn.Linear(2, 16)     # registered as the child "fc1"
            self.fc2 = dg.nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

From that tree the module derives everything else: ``parameters()`` for the optimizer,
``state_dict()`` for saving, ``train()`` / ``eval()`` for dropout, and a nested ``repr``.

NOTE [scopes] Calling a module runs its ``forward`` inside ``dg.scope(name)``, where ``name`` is
the attribute name the module is registered under in its parent ("fc1"), or its class name when
it has no parent; one of dyngraph's own layers made on a line that names it, ``combine =
dg.nn.Linear(16, 8)``, is "combine · Linear", so two layers used side by side are two boxes
(a learner's own top-level model, or a Sequential, keeps its class name, "MLP"). A bare
position says nothing on a diagram, so a child registered under a number (inside a Sequential,
a ModuleList) is scoped as the number and its class: "0 · Linear",
"1 · Tanh"; a child of a ModuleList or ModuleDict (containers without a forward, which the
owner's forward goes through) is named under the container's name, as PyTorch's
``named_modules`` names it: two LSTMCells in ``self.rnn`` are "rnn.0 · LSTMCell" and
"rnn.1 · LSTMCell", two boxes. Scopes nest, so the nodes of ``fc1`` in the model above carry
the scope ``("MLP", "fc1")`` and diagrams can draw (or collapse) them as one box. A module
registered in two parents keeps the name of the latest registration. A module called again while
its own forward runs (a recursion over a tree) is scoped by the call: the running call's first
such call is "call 1 · TreeNet", its second "call 2 · TreeNet" (``events.call_label``), so the
scopes nest as the calls do and a diagram can draw the tree of calls (widgets/src/levels.js
NOTE [map]); its parameters keep their module's own scope.

NOTE [saving] ``save`` / ``load`` go through numpy's ``.npz`` format (a zip of plain arrays) and
never through pickle: loading a file from someone else must not run their code. ``np.load`` is
always called with ``allow_pickle=False``, which refuses pickled files and object arrays.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from .. import backend, factories, grad_mode
from ..missing import module_attribute_error
from ..spine import events
from ..spine.handle import RemovableHandle
from ..spine.thread_state import this_thread
from ..tensor import Tensor, resolve_dtype


class Parameter(Tensor):
    """A tensor that is a weight of a module: a leaf that requires grad.

    Assigning a Parameter as an attribute of a Module registers it, so that ``parameters()``
    (and therefore the optimizer) and ``state_dict()`` find it. It shares the array of the
    tensor it is made from.

    >>> w = dg.nn.Parameter(dg.zeros(2, 3))
    >>> w.requires_grad, w.is_leaf
    (True, True)
    """

    __slots__ = ()  # Tensor uses __slots__ (and a __dict__ for a learner's own attributes)
    is_parameter = True  # diagrams draw parameters apart from other leaves

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.zeros((0,), dtype=np.float32)
        elif not isinstance(data, Tensor) and not hasattr(data, "shape"):
            data = factories.tensor(data)  # Python numbers and lists: the default float32
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class LoadResult(NamedTuple):
    """What ``load_state_dict(..., strict=False)`` could not match (PyTorch's
    ``_IncompatibleKeys``)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"LoadResult(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")


class Module:
    """Base class of every layer and model: override ``__init__`` and ``forward``.

    Attributes assigned in ``__init__`` that are Parameters or Modules are registered, in the
    order they are assigned. ``module(x)`` calls ``module.forward(x)`` inside ``dg.scope``.

    >>> class Affine(dg.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = dg.nn.Parameter(dg.ones(3))
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> [name for name, _ in Affine().named_parameters()]
    ['scale']
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent: set[str]
    _modules: dict[str, Module]
    _scope_name: str | None

    def __init__(self) -> None:
        # NOTE: object.__setattr__, because our own __setattr__ needs these registries to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_scope_name", _made_as(self))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} has no forward(): define `def forward(self, x): ...` in it"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        calls = this_thread.state.calls
        name = self._scope_name or type(self).__name__
        if any(running is self for running, _ in calls):
            calls[-1][1] += 1  # a recursion: each call is a scope of its own (NOTE [scopes])
            name = events.call_label(calls[-1][1], type(self).__name__)
        calls.append([self, 0])
        try:
            with events.scope(name):
                if not self.__dict__.get("_forward_pre_hooks") and not self.__dict__.get(
                        "_forward_hooks"):
                    return self.forward(*args, **kwargs)
                return self._call_with_hooks(args, kwargs)
        finally:
            calls.pop()

    # ------------------------------------------------------------------ forward hooks
    # NOTE [forward hooks] PyTorch's order and return rules (issue 37, item 3): the pre-hooks
    # run in the order registered (``prepend=True`` puts one first), each as
    # ``hook(module, args)``; one that returns something other than None replaces the
    # positional arguments (a non-tuple is wrapped in one). Then forward, then the forward
    # hooks, ``hook(module, args, output)``; one that returns something other than None
    # replaces the output, and the hooks after it see the new one. ``with_kwargs=True`` hooks
    # also get the keyword arguments: ``hook(module, args, kwargs)`` returning None or
    # ``(args, kwargs)``, and ``hook(module, args, kwargs, output)``. The registries are made
    # by the first registration, so a module without hooks pays one dict lookup per call.

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook, with_kwargs in list(self.__dict__.get("_forward_pre_hooks", {}).values()):
            if with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook, with_kwargs in list(self.__dict__.get("_forward_hooks", {}).values()):
            result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args,
                                                                                 output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward (NOTE [forward hooks]);
        ``handle.remove()`` unregisters it."""
        return self._register_hook("_forward_pre_hooks", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward (NOTE [forward hooks]):
        the tutorials' way to see a layer's activations.

        >>> seen = []
        >>> handle = net[0].register_forward_hook(lambda m, args, out: seen.append(out.shape))
        """
        return self._register_hook("_forward_hooks", hook, prepend, with_kwargs)

    def _register_hook(self, registry: str, hook: Callable[..., Any], prepend: bool,
                       with_kwargs: bool) -> RemovableHandle:
        hooks = self.__dict__.setdefault(registry, {})
        handle = RemovableHandle(hooks)
        hooks[handle.key] = (hook, with_kwargs)
        if prepend:
            for key in [k for k in hooks if k != handle.key]:
                hooks[key] = hooks.pop(key)  # NOTE: moved behind the new one, in order
        return handle

    def __getattr__(self, name: str) -> Any:
        """Only called when the ordinary lookup fails: one of PyTorch's Module methods that
        dyngraph does not have yet (``register_forward_hook``) says so and names the nearest
        one it has (NOTE [missing names], dyngraph/missing.py)."""
        raise module_attribute_error(self, name)

    # ------------------------------------------------------------------ registration

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if params is None:  # Module.__init__ has not run
            if isinstance(value, (Parameter, Module)):
                raise AttributeError(
                    f"cannot assign {type(value).__name__} '{name}' before Module.__init__() "
                    f"was called: start {type(self).__name__}.__init__ with super().__init__()"
                )
            object.__setattr__(self, name, value)
        elif isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self.add_module(name, value)
        elif name in self.__dict__.get("_buffers", {}):
            # A buffer keeps its name whatever tensor it is given (BatchNorm assigns its new
            # running mean); None is allowed, anything else must be a Tensor.
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign {type(value).__name__} to buffer '{name}' (Tensor or None "
                    "expected)"
                )
            self._buffers[name] = value
            object.__setattr__(self, name, value)
        elif name in params or name in modules:
            # Replacing a registered parameter or child by anything else: only None is
            # accepted, and unregisters it ("no bias"). A Tensor here is usually a mistake
            # (self.w = self.w * 2) that would silently take w away from the optimizer.
            expected = "dg.nn.Parameter" if name in params else "dg.nn.Module"
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} to '{name}', which is a registered "
                    f"{expected} ({expected} or None expected); to change a parameter's "
                    f"values in place, use `with dg.no_grad(): self.{name}[...] = new_values`"
                )
            params.pop(name, None)
            modules.pop(name, None)
            object.__setattr__(self, name, None)
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._parameters.pop(name, None)
        self._buffers.pop(name, None)
        self._non_persistent.discard(name)
        self._modules.pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` under ``name`` (what ``self.name = param`` does). An unnamed
        parameter takes ``name`` as its ``.name``, so diagrams label it "weight", "bias", ..."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot register a {type(param).__name__} as parameter '{name}': wrap it as "
                "dg.nn.Parameter(tensor)"
            )
        self._modules.pop(name, None)
        self._buffers.pop(name, None)
        self._parameters[name] = param
        if param is not None and param.name is None:
            param.name = name
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register ``tensor`` as the buffer ``name``: state that is not a parameter (no
        gradient, not seen by the optimizer) but belongs to the model, like BatchNorm's
        running mean. Buffers are moved by ``.to()`` and, when ``persistent``, saved in
        ``state_dict()``. Reassigning ``self.name = new_tensor`` keeps it a buffer.

        >>> m = dg.nn.Module()
        >>> m.register_buffer("steps", dg.zeros(1))
        >>> [name for name, _ in m.named_buffers()]
        ['steps']
        """
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot register a {type(tensor).__name__} as buffer '{name}' (Tensor or None "
                "expected)"
            )
        if "." in name or name == "":
            raise KeyError(f"buffer name can't contain '.' or be empty, got {name!r}")
        if name in self._parameters or name in self._modules:
            raise KeyError(f"attribute '{name}' already exists as a parameter or module")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module: Module) -> None:
        """Register ``module`` as the child ``name`` (what ``self.name = module`` does)."""
        if not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a dg.nn.Module")
        if module is self:
            raise ValueError("a module cannot be its own child")
        self._parameters.pop(name, None)
        self._buffers.pop(name, None)
        self._modules[name] = module
        object.__setattr__(module, "_scope_name", self._child_scope(name, module))
        if _calls_no_children(module):  # a ModuleList / ModuleDict: its owner calls them
            for child_name, child in module._modules.items():
                object.__setattr__(child, "_scope_name", module._child_scope(child_name, child))
        object.__setattr__(self, name, module)

    def _child_scope(self, name: str, module: Module) -> str:
        """The scope of the child ``module`` registered as ``name`` (NOTE [scopes]): its name,
        under the container's own name when this module is a container without a forward
        ("rnn.0"), with the class after a bare position ("0 · Linear", "rnn.0 · LSTMCell")."""
        path = name
        if _calls_no_children(self) and self._scope_name:
            path = f"{self._scope_name.removesuffix(f' · {type(self).__name__}')}.{name}"
        return scope_label(path, type(module).__name__)

    # ------------------------------------------------------------------ walking the tree

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[
        tuple[str, Parameter]
    ]:
        """(dotted name, parameter) pairs: this module's own parameters in registration order,
        then each child's, depth first. A parameter shared by two modules appears once."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, param in module._parameters.items():
                if param is None or id(param) in seen:
                    continue
                seen.add(id(param))
                yield (f"{module_prefix}.{name}" if module_prefix else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter, in the order of ``named_parameters()`` (hand it to an optimizer)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[
        tuple[str, Tensor]
    ]:
        """(dotted name, buffer) pairs, in the order of ``named_parameters()``."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, buffer in module._buffers.items():
                if buffer is None or id(buffer) in seen:
                    continue
                seen.add(id(buffer))
                yield (f"{module_prefix}.{name}" if module_prefix else name), buffer

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer (running statistics and other state that is not trained)."""
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child) of the direct submodules, in registration order; a module registered
        under two names appears once, under the first (as in PyTorch)."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules, in registration order (one registered twice appears once)."""
        for _, module in self.named_children():
            yield module

    def get_submodule(self, target: str) -> Module:
        """The descendant at the dotted path ``target`` ("" is this module): ``"0.attn"``."""
        module = self
        for part in target.split(".") if target else []:
            child = module._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = child
        return module

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module (name ``prefix``, "" by default) and every
        descendant, parents before children. Iterative, and each module appears once."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [
                (f"{name}.{child_name}" if name else child_name, child)
                for child_name, child in module._modules.items()
            ]
            stack.extend(reversed(children))  # reversed: the first child is popped first

    def modules(self) -> Iterator[Module]:
        """This module and all its descendants."""
        for _, module in self.named_modules():
            yield module

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule and then on this module, as PyTorch does: each child
        in registration order, recursively (its own children first), then ``self``; returns
        self. (So a seeded initialisation lands on the same layers as PyTorch's: the first
        Linear of ``model.apply(init_weights)`` draws first.) A module registered under two
        parents is visited under each, as in PyTorch.

        >>> model = dg.nn.Sequential(dg.nn.Linear(2, 3), dg.nn.Sequential(dg.nn.ReLU()))
        >>> seen = []
        >>> _ = model.apply(lambda m: seen.append(type(m).__name__))
        >>> seen
        ['Linear', 'ReLU', 'Sequential', 'Sequential']
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------ modes and gradients

    def train(self, mode: bool = True) -> Module:
        """Training mode (the default): Dropout drops, BatchNorm normalises with the batch's
        statistics and updates its running ones. Applies to every descendant."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode: Dropout passes its input through unchanged, BatchNorm uses its
        running statistics. Same as train(False)."""
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient: ``.grad = None`` (the next backward starts
        fresh), or with ``set_to_none=False`` fill the existing gradients with zeros."""
        for param in self.parameters():
            _zero_grad(param, set_to_none)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (False) or unfreeze every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def to(self, *targets: Any, device: Any = None, dtype: Any = None,
           non_blocking: bool = False) -> Module:
        """Move every parameter to a device (``'cpu'``, ``'cuda'``) or cast it to a dtype, in
        place: the Parameter objects stay the same, so an optimizer made before still works.
        PyTorch's spellings: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(device=..., dtype=...)`` (``non_blocking`` changes nothing here)."""
        for target in (*targets, device, dtype):
            if target is not None:
                self._to_one(target)
        return self

    def _to_one(self, target: Any) -> None:
        is_device = isinstance(target, str) and target.lower().split(":")[0] in ("cpu", "cuda")
        for module in self.modules():
            for buffer in module._buffers.values():
                if buffer is None:
                    continue
                if is_device:
                    device = backend.normalize_device(target)
                    buffer.array = backend.to_device(buffer.array, device)
                elif buffer.dtype.kind == "f":  # like torch: integer buffers keep their dtype
                    buffer.array = buffer.array.astype(resolve_dtype(target), copy=False)
        for param in self.parameters():
            if is_device:
                device = backend.normalize_device(target)
                backend.module_for(device)  # the install hint when CUDA is missing
                param.array = backend.to_device(param.array, device)
                if param.grad is not None:
                    param.grad = Tensor(backend.to_device(param.grad.array, device))
            else:
                dtype = resolve_dtype(target)
                param.array = param.array.astype(dtype, copy=False)
                if param.grad is not None:
                    param.grad = Tensor(param.grad.array.astype(dtype, copy=False))

    def double(self) -> Module:
        """Every parameter in float64 (for gradcheck)."""
        return self.to(np.float64)

    def float(self) -> Module:
        return self.to(np.float32)

    def half(self) -> Module:
        return self.to(np.float16)

    def type(self, dst_type: Any) -> Module:
        """Every parameter and floating point buffer cast to ``dst_type``."""
        return self.to(dst_type)

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self) -> Module:
        return self.to("cuda")

    # ------------------------------------------------------------------ saving and loading

    def state_dict(self, *, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """The parameters and persistent buffers by dotted name, in PyTorch's order and with
        PyTorch's keys (each module's parameters, then its buffers, then its children's; a
        tensor registered under two names, as tied weights are, appears under both).

        As in PyTorch, the entries are the model's own memory, detached: ``.detach()`` of each
        parameter (``requires_grad`` False, no graph) sharing its values and its version
        counter. Training on, or ``load_state_dict``, changes them too, and an in-place change
        of an entry changes the model. To keep a snapshot ("the best model so far"), copy it:
        ``{k: v.clone() for k, v in model.state_dict().items()}`` (``copy.deepcopy`` in
        PyTorch's tutorials). ``keep_vars=True`` gives the Parameters themselves; ``prefix`` is
        put before every key; ``destination`` (a dict) is filled and returned.

        >>> list(dg.nn.Linear(2, 3).state_dict())
        ['weight', 'bias']
        """
        if destination is None:
            destination = OrderedDict()
        for name, tensor in self._state_items(prefix):
            destination[name] = tensor if keep_vars else tensor.detach()
        return destination

    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """(dotted name, tensor) of everything ``state_dict`` holds, in its order: as PyTorch's
        ``state_dict`` walks the tree, every registration counts (a module or a tensor
        registered twice appears under each of its names)."""
        stack = [(prefix, self)]
        while stack:
            module_prefix, module = stack.pop()
            for name, tensor in module._parameters.items():
                if tensor is not None:
                    yield module_prefix + name, tensor
            for name, tensor in module._buffers.items():
                if tensor is not None and name not in module._non_persistent:
                    yield module_prefix + name, tensor
            stack.extend(reversed([(f"{module_prefix}{name}.", child)
                                   for name, child in module._modules.items()
                                   if child is not None]))

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> LoadResult:
        """Copy the values of ``state_dict`` into this model's parameters and buffers, in place
        (under ``no_grad``), matching them by name, as PyTorch does: the Parameter objects stay
        the same, so an optimizer made before goes on updating them.

        Values may be dyngraph tensors, numpy arrays or PyTorch tensors (a torch module's
        ``state_dict()``: the weight layouts are the same); each is cast to the dtype of the
        tensor it lands in. As in PyTorch, every value whose key and shape match is copied;
        then, with ``strict=True`` (the default), a key of the model missing from
        ``state_dict``, or a key of ``state_dict`` the model does not have, is an error; a
        shape mismatch is an error whatever ``strict`` says. Returns ``(missing_keys,
        unexpected_keys)``.
        """
        own = list(self._state_items())
        known = {name for name, _ in own}
        missing = [name for name, _ in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in known]
        mismatched = []
        with grad_mode.no_grad():  # an in-place copy into leaves, like an optimizer step
            for name, tensor in own:
                if name not in state_dict:
                    continue
                array = _as_array(state_dict[name], name)
                if array.shape != tensor.shape:
                    mismatched.append(
                        f"size mismatch for {name}: copying a param with shape "
                        f"{tuple(array.shape)} from checkpoint, the shape in current model is "
                        f"{tuple(tensor.shape)}."
                    )
                    continue
                tensor[...] = array
        problems = []
        if strict and missing:
            problems.append("Missing key(s) in state_dict: "
                            + ", ".join(f'"{name}"' for name in missing) + ". ")
        if strict and unexpected:
            problems.append("Unexpected key(s) in state_dict: "
                            + ", ".join(f'"{name}"' for name in unexpected) + ". ")
        problems += mismatched
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(problems)
            )
        return LoadResult(missing, unexpected)

    def save(self, path: str | os.PathLike) -> None:
        """Write ``state_dict()`` to an ``.npz`` file (plain arrays; no pickle)."""
        state = {name: backend.to_numpy(tensor.array) for name, tensor in self._state_items()}
        with open(path, "wb") as file:  # a file object: numpy would append ".npz" to a name
            np.savez(file, **state)

    def load(self, path: str | os.PathLike, strict: bool = True) -> Module:
        """Load parameters saved by ``save(path)``; returns self. Files holding pickled data
        (a pickle, or an object array inside the ``.npz``) are refused, never unpickled."""
        try:
            archive = np.load(path, allow_pickle=False)
            if isinstance(archive, np.ndarray):  # an .npy file
                raise ValueError(f"{os.fspath(path)!r} holds one array, not an .npz archive")
            with archive:
                state = {name: archive[name] for name in archive.files}
        except ValueError as exc:
            if "pickle" not in str(exc):
                raise
            raise ValueError(
                f"refusing to load {os.fspath(path)!r}: it holds pickled Python objects, which "
                "could run arbitrary code when loaded. dyngraph only loads .npz files of plain "
                "numeric arrays (as written by Module.save)."
            ) from None
        self.load_state_dict(state, strict=strict)
        return self

    # ------------------------------------------------------------------ display

    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr line (its settings)."""
        return ""

    def __repr__(self) -> str:
        """``Name(settings)`` for a leaf module; children one per line, indented, otherwise:

        MLP(
          (fc1): Linear(in_features=2, out_features=16, bias=True)
          (act): ReLU()
        )
        """
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, child in self._modules.items():
            child_text = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_text}")
        head = type(self).__name__ + "("
        if not self._modules and len(lines) <= 1:
            return head + "".join(lines) + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def scope_label(path: str, class_name: str) -> str:
    """The scope of a module that PyTorch's ``named_modules`` names ``path``: the path, with the
    class after a bare position (NOTE [scopes]): "fc1", "0 · Linear", "rnn.0 · LSTMCell".
    dyngraph.torch names PyTorch's modules by the same rule."""
    return f"{path} \u00b7 {class_name}" if path.rsplit(".", 1)[-1].isdigit() else path


def _calls_no_children(module: Module) -> bool:
    """A container without a forward (ModuleList, ModuleDict): the module owning it calls its
    children itself, so they are named under the container's name (NOTE [scopes])."""
    return type(module).forward is Module.forward


class ModuleList(Module):
    """A list of modules that registers them (a plain Python list would hide their
    parameters from ``parameters()``). Children are named "0", "1", ...; it has no forward.

    >>> layers = dg.nn.ModuleList([dg.nn.Linear(4, 4) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):  # a ModuleList again, as in PyTorch (renumbered)
            return self.__class__(list(self._modules.values())[index])
        return list(self._modules.values())[index]

    def __setitem__(self, index: int, module: Module) -> None:
        names = list(self._modules)
        self.add_module(names[index], module)


class ParameterList(Module):
    """A list of parameters that registers them, named "0", "1", ... (PyTorch's
    ``nn.ParameterList``); a tensor appended becomes a Parameter."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for value in values or ():
            self.append(value)

    def append(self, value: Any) -> ParameterList:
        parameter = value if isinstance(value, Parameter) else Parameter(value)
        self.register_parameter(str(len(self._parameters)), parameter)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def __getitem__(self, index: int) -> Any:
        return list(self._parameters.values())[index]


class ModuleDict(Module):
    """A dict of modules that registers them under their keys (PyTorch's ``nn.ModuleDict``);
    it keeps insertion order and has no forward.

    >>> heads = dg.nn.ModuleDict({"mean": dg.nn.Linear(4, 1), "log_var": dg.nn.Linear(4, 1)})
    >>> sorted(heads.keys()), heads["mean"].out_features
    (['log_var', 'mean'], 1)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        items = modules.items() if isinstance(modules, Mapping) else modules
        for name, module in items:
            self[name] = module

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]
        object.__delattr__(self, key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()


class Sequential(ModuleList):
    """Modules applied one after the other: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    The children are named "0", "1", ... (or by the keys of an OrderedDict).

    >>> model = dg.nn.Sequential(dg.nn.Linear(2, 16), dg.nn.ReLU(), dg.nn.Linear(16, 3))
    >>> model(dg.randn(5, 2)).shape
    (5, 3)
    """

    def __init__(self, *modules: Module | Mapping[str, Module]) -> None:
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            super().__init__()
            for name, module in modules[0].items():
                self.add_module(str(name), module)
        else:
            super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):  # the children keep their names, as in PyTorch
            return self.__class__(dict(list(self._modules.items())[index]))
        return super().__getitem__(index)


# ---------------------------------------------------------------------------- helpers


def _as_array(value: Any, name: str) -> np.ndarray:
    """A numpy array from a state-dict value: array, dyngraph Tensor, torch tensor, list."""
    if isinstance(value, Tensor):
        return backend.to_numpy(value.array)
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, without torch
        value = value.detach().cpu().numpy()
    array = np.asarray(value)
    if array.dtype.kind not in "fciub":
        raise TypeError(f"state_dict value for {name!r} is not numeric (dtype {array.dtype})")
    return array


def _zero_grad(param: Tensor, set_to_none: bool) -> None:
    """``param.grad = None``, or zeros in place in the existing gradient (set_to_none=False)."""
    if set_to_none or param.grad is None:
        param.grad = None
    elif param.grad.requires_grad:  # a gradient with a graph (create_graph=True): detached
        param.grad = Tensor(param.grad.array * 0)
    else:
        param.grad.zero_()  # in place, as in PyTorch: the same tensor, now zeros


def _made_as(module: Module) -> str | None:
    """The scope of one of dyngraph's own layers made outside any parent (NOTE [scopes]):
    "combine · Linear" for ``combine = dg.nn.Linear(16, 8)``, the variable the learner's line
    assigns it to; None (the class name) otherwise, for containers (Sequential, ModuleList) and
    for the learner's own modules, as before. A layer
    made for a parent (``self.fc = ...``, an argument of Sequential) is named by the parent
    when it is registered."""
    if not type(module).__module__.startswith("dyngraph.") or isinstance(
            module, (ModuleList, ModuleDict)):  # a container is the model: its class names it
        return None
    where = events.where_from_stack()
    target = where.target if where is not None else None
    if not target or "." in target:
        return None
    return f"{target} \u00b7 {type(module).__name__}"
