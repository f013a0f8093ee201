"""``dg.save`` and ``dg.load``: PyTorch's ``torch.save`` / ``torch.load`` for the things
learners save (a ``state_dict``, a tensor, a dict of both with the epoch and the optimizer's
state), as a pickle.

NOTE [load reads weights only] A pickle can run any code while it is read, and every file
dyngraph reads is untrusted (DESIGN.md). So ``load`` does what ``torch.load`` does by default
since PyTorch 2.6 (``weights_only=True``): it rebuilds only tensors, parameters, numpy arrays
and dtypes, numbers, strings and the containers (dict, OrderedDict, list, tuple, set), and
refuses anything else with an error naming the class. ``weights_only=False`` reads any
pickle, for a file one wrote oneself (a whole model: ``dg.save(model, path)``).
"""

from __future__ import annotations

import io
import os
import pickle
from typing import Any

# What a weights-only file may name: (module, class).
_WEIGHTS = {
    ("collections", "OrderedDict"),
    ("dyngraph.tensor", "Tensor"),
    ("dyngraph.tensor", "VersionCounter"),
    ("dyngraph.nn.module", "Parameter"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "slice"),
}


class _WeightsOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _WEIGHTS or (module == "numpy.dtypes" and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"dg.load(weights_only=True) refuses {module}.{name}: only tensors, arrays, numbers, "
            "strings and containers are read, since a pickle can run code. If you wrote this "
            "file yourself and trust it, pass weights_only=False")


def save(obj: Any, f: Any) -> None:
    """Write ``obj`` (a state_dict, a tensor, a dict of them...) to the path or binary file
    ``f``, as ``torch.save`` does: ``dg.save(model.state_dict(), "model.pth")``."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            pickle.dump(obj, out, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


def load(f: Any, map_location: Any = None, *, weights_only: bool = True) -> Any:
    """Read back what ``save`` wrote (NOTE [load reads weights only]):
    ``model.load_state_dict(dg.load("model.pth"))``. ``map_location`` is accepted for
    PyTorch's programs (``map_location="cpu"``, ``map_location=device``); tensors come back on
    the CPU."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return load(file, map_location, weights_only=weights_only)
    if isinstance(f, (bytes, bytearray)):
        f = io.BytesIO(f)
    return _WeightsOnly(f).load() if weights_only else pickle.load(f)  # noqa: S301
