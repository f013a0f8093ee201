"""The accelerated layer: C versions of the few textbook functions that run per op, per node or
per event, installed beneath the readable modules when ``dyngraph/_speedups.c`` was built.

NOTE [speedups] The modules a learner reads (function.py, autograd.py, events.py, trace.py,
jupyter/view.py, torch.py) hold the definitions, in plain Python, and never use this layer. A
handful of their functions run for every op, every node of a backward pass or every event while
someone listens, and there the interpreter's own overhead is most of what dyngraph costs
(benchmarks/README.md, "Where the time goes"). For those, ``_speedups.c`` computes the same
thing without the interpreter, and this module puts the C versions in their place:
``dyngraph/__init__.py`` calls ``install`` once, ``dyngraph/jupyter/__init__.py`` calls
``install_view`` when the widget is first imported, and ``install_torch`` runs when
dyngraph.torch is (``after_import``).

==========================================  =====================================================
``function.Function.apply``                 the common case (Tensors of numpy arrays, numpy
                                            arrays and numbers; no function hook, no anomaly
                                            mode, no op timing); any other call goes to the
                                            readable apply before anything has run
``autograd.BackwardPass.propagate``         the loop, without create_graph, autograd.grad's
                                            capture or anomaly mode; otherwise the readable loop
``events.preview``, ``preview_and_norm``    contiguous float32 / float64 numpy arrays; any other
                                            array goes to the readable definition
``events.where_from_stack``                 the same walk over the frames, sharing its caches
``events.emit`` and ``emit_*``              the same dispatch, reading and setting the same
                                            module state of events.py
``trace.replay_steps``                      the loop of a traced graph's fast replay
``view.collector``, ``view.keep_rows``      the live view's listener and filter
``torch._EventMode.__torch_function__``,   dyngraph.torch's per op and per gradient work (the
``_announce_output``, ``_grad_computed``,   mode's common case: a function known not to work in
``_preview``, ``_preview_and_norm``,        place); a tensor's numbers read from its memory
``_saved_bytes``                            when it is a CPU float32 / float64 tensor in one
                                            block; installed when dyngraph.torch is imported
==========================================  =====================================================

Each C function hands every case it does not take to the readable definition, and calls the
same readable helpers for the rare turns of the common case (an error in forward, type
promotion, announcing a leaf). ``readable(module, name)`` is the definition a C version
replaced; ``tests/test_speedups.py`` and ``tests/test_accelerated_engine.py`` run both on the
same inputs and check that they agree. Building the C file is optional (``setup.py``): without
a C compiler, or with ``DYNGRAPH_PURE_PYTHON=1`` in the environment, the readable definitions
run, and everything works the same, slower.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import types
from typing import Any

import numpy as np

from . import anomaly, autograd, events, function, grad_mode
from .tensor import Tensor, new_node_id
from .trace import StaticGraph

# (dg.tensor and dg.trace are functions: the modules, by name)
tensor_module, trace_module = sys.modules[Tensor.__module__], sys.modules[StaticGraph.__module__]

READABLE: dict[str, Any] = {}  # "module.name" -> the readable definition a C version replaced


def readable(module: Any, name: str) -> Any:
    """The readable definition of ``module.name``, whether or not a C version replaced it."""
    return READABLE.get(f"{module.__name__}.{name}", getattr(module, name))


def _put(module: Any, name: str, faster: Any) -> None:
    READABLE.setdefault(f"{module.__name__}.{name}", getattr(module, name))
    setattr(module, name, faster)


def load() -> Any:
    """The compiled module, or None (not built, or DYNGRAPH_PURE_PYTHON=1)."""
    if os.environ.get("DYNGRAPH_PURE_PYTHON"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


def install() -> None:
    """Put the C versions of the event spine's helpers, apply and propagate in place."""
    if speedups is None:
        return
    speedups.configure(
        readable(events, "preview"), readable(events, "preview_and_norm"), events._new_where,
        events._is_internal_file, events._where_cache, events._PACKAGE_DIR, sys._getframe,
        events._hands_back_cache, events._hands_back, events._unnamed,
    )
    speedups.configure_emit(vars(events), events._drop, events.EdgeGrad, events.GradComputed,
                            events.NodeCreated)
    for name in ("preview", "preview_and_norm", "where_from_stack", "emit", "emit_grad_computed",
                 "emit_edge_grad", "emit_op_created"):
        _put(events, name, getattr(speedups, name))
    install_engine()
    _put(trace_module, "replay_steps", speedups.replay_steps)


def install_engine() -> None:
    """Function.apply and BackwardPass.propagate in C (again, after uninstall_engine)."""
    if speedups is None:
        return
    speedups.configure_engine({
        "Tensor": Tensor,
        "Function": function.Function,
        "numpy": np,
        "float64": function._FLOAT64,
        "apply": readable_apply,
        "propagate": readable_propagate,
        "function_globals": vars(function),
        "tensor_globals": vars(tensor_module),
        "grad_mode_globals": vars(grad_mode),
        "anomaly_globals": vars(anomaly),
        "new_node_id": new_node_id,
        "needs_patterns": function._NEEDS_PATTERNS,
        "output_marker": function._OUTPUT,
        "explain_failure": function._explain_failure,
        "as_output_array": function._as_output_array,
        "promote_like_torch": function._promote_like_torch,
        "announce_tensor": function.announce_tensor,
        "announce_constant": function._announce_constant,
        "remember_saved_versions": function._remember_saved_versions,
        "in_dtype": autograd.in_dtype,
        "sum_to_shape": autograd.sum_to_shape,
        "raise_wrong_count": autograd._raise_wrong_count,
        "hooks_name": "function_hooks",  # a FunctionHook is installed: the readable apply
        "SavedSource": function.SavedSource,
    })
    function.Function.apply = classmethod(speedups.apply)
    propagate = speedups.propagate

    def accelerated_propagate(self: autograd.BackwardPass) -> None:
        propagate(self)

    accelerated_propagate.__doc__ = readable_propagate.__doc__
    autograd.BackwardPass.propagate = accelerated_propagate


def uninstall_engine() -> None:
    """The readable apply and propagate back in place (for tests that compare the two)."""
    function.Function.apply = classmethod(readable_apply)
    autograd.BackwardPass.propagate = readable_propagate


def install_view(view: Any) -> None:
    """The live view's listener and filter in C (``view`` is dyngraph.jupyter.view)."""
    if speedups is not None:
        _put(view, "collector", speedups.Collector)
        _put(view, "keep_rows", speedups.keep_rows)


def install_torch(torch_module: Any) -> None:
    """dyngraph.torch's per-op and per-gradient functions in C (``torch_module`` is
    dyngraph.torch, imported only on request: ``after_import`` calls this)."""
    if speedups is None:
        return
    import torch

    parts = {name: readable(torch_module, name) for name in (
        "_node_info", "_announce_op", "_announce_walking", "_data_leaf", "_saved_bytes",
        "_preview", "_preview_and_norm", "_dtype", "_device", "_announce_outputs", "_shape",
        "_grad_computed", "_is_inplace", "_called")}
    mode = readable(torch_module, "_EventMode")
    parts["torch_function"] = mode.__torch_function__
    parts.update(globals=vars(torch_module), Tensor=torch.Tensor, Info=torch_module._Info,
                 float32=torch.float32, float64=torch.float64, strided=torch.strided,
                 torch_dir=torch_module._TORCH_DIR, key=torch_module._KEY,
                 is_compiling=torch.compiler.is_compiling,
                 is_tracing=torch.jit.is_tracing)
    speedups.configure_torch(parts)
    for name, faster in (("_announce_output", speedups.torch_announce_output),
                         ("_grad_computed", speedups.torch_grad_computed),
                         ("_preview", speedups.torch_preview),
                         ("_preview_and_norm", speedups.torch_preview_and_norm),
                         ("_saved_bytes", speedups.torch_saved_bytes),
                         ("_EventMode", _with_torch_function_in_c(mode))):
        _put(torch_module, name, faster)
    after_import("torch._dynamo", _read_by_dynamo)


def _with_torch_function_in_c(mode: type) -> type:
    """dyngraph.torch's mode with its ``__torch_function__`` in C while it is entered.

    NOTE [the mode's entry] PyTorch calls the C function bound to the mode, so no Python frame
    of dyngraph's lies between the learner's line and the torch function it calls: a warning
    PyTorch raises there is placed at the learner's line (Python places a C++ warning at the
    innermost Python frame), as it is unwatched. Dynamo, which reads a mode's
    ``__torch_function__`` as Python when it compiles a frame while watching, reads the readable
    method in its place (``_read_by_dynamo``): its first branch steps aside (NOTE [compiled
    code] in torch.py). (PyTorch takes only a method bound to the mode, so the C function is
    bound to each mode entered, and unbound on leaving: no cycle is left between the mode and
    its method.)"""

    class _EventMode(mode):  # type: ignore[misc, valid-type]
        __doc__ = mode.__doc__

        def __enter__(self) -> Any:
            self.__torch_function__ = types.MethodType(speedups.torch_function, self)
            return super().__enter__()

        def __exit__(self, *exc_info: Any) -> Any:
            try:
                return super().__exit__(*exc_info)
            finally:
                del self.__torch_function__

    return _EventMode


def _read_by_dynamo(dynamo: Any) -> None:
    """Dynamo reads dyngraph.torch's readable ``__torch_function__`` wherever it meets the C one
    (``torch.compiler.substitute_in_graph``; NOTE [the mode's entry])."""
    readable_method = readable(sys.modules["dyngraph.torch"], "_EventMode").__torch_function__
    # This runs inside the learner's import of torch._dynamo, which must not fail: where it
    # cannot be done (another PyTorch; done already), Dynamo meets the C function, says it
    # cannot read it and breaks its graph there, and the results stay the same.
    with contextlib.suppress(Exception):
        dynamo.substitute_in_graph(speedups.torch_function, skip_signature_check=True)(
            readable_method)


class _AfterImport:
    """An import hook (``sys.meta_path``) that calls ``then(module)`` once the module ``name``
    has been imported: dyngraph.torch is imported only on request, after this layer, and as a
    readable module never imports it (NOTE [speedups]); torch._dynamo only when torch.compile,
    torch.export or an optimizer needs it."""

    def __init__(self, name: str, then: Any) -> None:
        self.name = name
        self.then = then

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)  # the other finders find it
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run_module(module)
            self.then(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import(name: str, then: Any) -> None:
    """``then(module)`` now if the module ``name`` is imported, else as soon as it is."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
    else:
        sys.meta_path.insert(0, _AfterImport(name, then))


# The readable apply and propagate: what the C versions fall back to.
readable_apply = function.Function.__dict__["apply"].__func__
readable_propagate = autograd.BackwardPass.propagate
speedups = load()
install()
if speedups is not None:
    after_import("dyngraph.torch", install_torch)
