"""A name dyngraph does not have: an AttributeError that says so helpfully (issue 37, item 4).

NOTE [missing names] Learners arrive with PyTorch programs, and a program that reaches for a
PyTorch name dyngraph does not have yet (``torch.bucketize``, ``nn.LPPool2d``,
``x.masked_fill_``) must stop with an ``AttributeError`` that says what is going on, never with an
error from somewhere inside dyngraph, and never run on with other numbers. The message

- names the PyTorch spelling (``torch.nn.LPPool2d``, ``Tensor.clamp_min``);
- says dyngraph does not have it yet (or, where PyTorch is already imported and has no such
  name either, that neither library has it: then it is a typo);
- suggests the nearest names dyngraph has (``difflib`` over its own public names, and any of
  them the missing name starts with: ``masked_fill`` for ``masked_fill_``).

One implementation serves every place a program looks a name up: the module ``__getattr__`` of
``dyngraph`` (as ``torch``), ``dyngraph.nn``, ``dyngraph.nn.functional`` and ``dyngraph.optim``
(``module_getattr``), ``Tensor.__getattr__`` (``tensor_attribute_error``) and
``Module.__getattr__`` (``module_attribute_error``: only for the names of PyTorch's own
``nn.Module`` methods, ``register_forward_hook`` and the like; any other name on a module is the
learner's own, and gets Python's own message, with its "Did you mean"). Python calls them
only when the ordinary lookup fails, so they cost nothing on the way that works. Names starting
with an underscore (``__array_interface__``, ``_repr_html_``: probes by numpy, IPython, copy,
pickle) get the plain message at once. The exception carries ``name`` (and ``obj=None``), so
Python does not add a "Did you mean" of its own to ours.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

# Where each dyngraph module stands in PyTorch, and how a learner usually spells it.
TORCH_NAMES = {
    "dyngraph": ("torch", "dg"),
    "dyngraph.nn": ("torch.nn", "dg.nn"),
    "dyngraph.nn.functional": ("torch.nn.functional", "F"),
    "dyngraph.optim": ("torch.optim", "dg.optim"),
    "dyngraph.optim.lr_scheduler": ("torch.optim.lr_scheduler", "dg.optim.lr_scheduler"),
}


def nearest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The names among ``candidates`` nearest to ``name``: the closest by ``difflib`` (case
    ignored), then those the missing name is built on (``clamp`` for ``clamp_min``,
    ``repeat`` for ``repeat_interleave``), at most ``n``."""
    names = sorted(set(candidates))
    lower = {c.lower(): c for c in names}
    close = [lower[c] for c in difflib.get_close_matches(name.lower(), list(lower), n=n,
                                                         cutoff=0.6)]
    parts = set(name.lower().split("_"))
    built_on = sorted(
        (c for c in names if len(c) >= 3 and c not in close
         and (name.lower().startswith(c.lower()) or c.lower() in parts)),
        key=len, reverse=True)
    return (close + built_on)[:n]


def attribute_error(message: str, name: str) -> AttributeError:
    error = AttributeError(message)
    error.name, error.obj = name, None  # Python adds no suggestion of its own to ours
    return error


def _torch_lacks(torch_module: str, name: str, attribute_of: str | None = None) -> bool:
    """True where PyTorch is already imported and has no such name (never imports it)."""
    module = sys.modules.get(torch_module)
    if module is None:
        return False
    owner = getattr(module, attribute_of, None) if attribute_of else module
    return owner is not None and not hasattr(owner, name)


def missing_message(head: str, name: str, torch_name: str, lacks: bool,
                    suggestions: list[str], where: str) -> str:
    if lacks:
        text = f"{head} (PyTorch has no {torch_name} either)."
    else:
        text = f"{head}: dyngraph does not have PyTorch's {torch_name} yet."
    if suggestions:
        names = ", ".join(f"{where}{s}" for s in suggestions)
        text += f" The nearest it has: {names}."
    elif not lacks:
        text += f" It has nothing of a similar name in {where.rstrip('.') or 'this module'}."
    return text


def module_getattr(module_name: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the dyngraph module ``module_name`` (NOTE [missing names])."""
    torch_module, spelled = TORCH_NAMES[module_name]

    def __getattr__(name: str) -> Any:
        head = f"module {module_name!r} has no attribute {name!r}"
        if name.startswith("_"):
            raise attribute_error(head, name)
        module = sys.modules[module_name]
        suggestions = nearest(name, public_names(module))
        raise attribute_error(
            missing_message(head, name, f"{torch_module}.{name}",
                            _torch_lacks(torch_module, name), suggestions, f"{spelled}."),
            name)

    return __getattr__


def public_names(module: ModuleType) -> list[str]:
    """The names a learner may use from ``module``: its ``__all__``, or else its public
    functions (what it defines itself, not what it imports)."""
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return list(listed)
    return [
        name for name, value in vars(module).items()
        if not name.startswith("_") and callable(value) and not isinstance(value, type)
        and getattr(value, "__module__", None) == module.__name__
    ]


def tensor_attribute_error(tensor: Any, name: str) -> AttributeError:
    """The error of ``x.name`` for a name no Tensor has (NOTE [missing names])."""
    cls = type(tensor)
    head = f"{cls.__name__!r} object has no attribute {name!r}"
    if name.startswith("_"):
        return attribute_error(head, name)
    candidates = [n for n in dir(cls) if not n.startswith("_")]
    return attribute_error(
        missing_message(head, name, f"Tensor.{name}", _torch_lacks("torch", name, "Tensor"),
                        nearest(name, candidates), "x."),
        name)


# The public attributes of PyTorch 2.13's torch.nn.Module (dir(torch.nn.Module)): a name here that
# dyngraph's Module lacks is PyTorch's, not a typo of the learner's.
TORCH_MODULE_ATTRIBUTES = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children",
    "compile", "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward",
    "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half", "ipu",
    "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "type", "xpu", "zero_grad",
})


def module_attribute_error(module: Any, name: str) -> AttributeError:
    """The error of ``model.name`` for a name no attribute of the module has (NOTE [missing
    names]): PyTorch's message, and for one of PyTorch's own Module methods, that dyngraph
    does not have it yet."""
    cls = type(module)
    head = f"{cls.__name__!r} object has no attribute {name!r}"
    if name.startswith("_") or name not in TORCH_MODULE_ATTRIBUTES:
        error = AttributeError(head)  # the learner's own name: Python's "Did you mean",
        error.name, error.obj = name, module  # from the attributes this module has
        return error
    candidates = [n for n in dir(cls) if not n.startswith("_")]
    return attribute_error(
        missing_message(head, name, f"nn.Module.{name}", False, nearest(name, candidates),
                        "module."),
        name)
