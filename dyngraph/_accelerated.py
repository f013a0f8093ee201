"""The accelerated layer: C versions of the few textbook functions that run per op, per node or
per event, installed beneath the readable modules when ``dyngraph/_speedups.c`` was built.

NOTE [speedups] The modules a learner reads (function.py, autograd.py, events.py) hold the
definitions, in plain Python, and never name this layer. A handful of their functions run for
every op, every node of a backward pass or every event while someone listens, and there the
interpreter's own overhead is most of what dyngraph costs (benchmarks/README.md, "Where the time
goes"). For those, ``_speedups.c`` computes the same thing without the interpreter, and this
module, imported once by ``dyngraph/__init__.py``, puts the C versions in their place:

=====================================  ==========================================================
``Function.apply``                     the common case (Tensors of numpy arrays and numbers, no
                                       function hook, no anomaly mode); any other call goes to
                                       the readable apply before anything has run
``BackwardPass.propagate``             the loop, without create_graph, autograd.grad's capture or
                                       anomaly mode; otherwise the readable loop
=====================================  ==========================================================

Each C function hands every case it does not take to the readable definition, and calls the
same readable helpers for the rare turns of the common case (an error in forward, type
promotion, saved inputs, announcing an op). ``tests/test_speedups.py`` runs both versions on
the same inputs and checks that they agree. Building the C file is optional (``setup.py``):
without a C compiler, or with ``DYNGRAPH_PURE_PYTHON=1`` in the environment, the readable
definitions run, and everything works the same, slower.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from . import anomaly, autograd, events, function, grad_mode
from .tensor import Tensor, new_node_id

tensor_module = sys.modules[Tensor.__module__]  # (dg.tensor is the factory function)

# The readable definitions, as they were before install(): what the C versions fall back to,
# and what tests compare them with.
readable_apply = function.Function.__dict__["apply"].__func__
readable_propagate = autograd.BackwardPass.propagate


def load() -> Any:
    """The compiled module, or None (not built, or DYNGRAPH_PURE_PYTHON=1)."""
    if os.environ.get("DYNGRAPH_PURE_PYTHON"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


def install(speedups: Any) -> None:
    """Put the C versions of apply and propagate in place of the readable ones."""
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
    })
    function.Function.apply = classmethod(speedups.apply)
    propagate = speedups.propagate

    def accelerated_propagate(self: autograd.BackwardPass) -> None:
        propagate(self)

    accelerated_propagate.__doc__ = readable_propagate.__doc__
    autograd.BackwardPass.propagate = accelerated_propagate


def uninstall() -> None:
    """The readable definitions back in place (for tests that compare the two)."""
    function.Function.apply = classmethod(readable_apply)
    autograd.BackwardPass.propagate = readable_propagate


speedups = load()
if speedups is not None and events._speedups is not None:
    install(speedups)
