"""Each op's local derivative, as the inspector and the chain-rule panel show it (sent once, in
a GraphView's header)."""

from __future__ import annotations

import inspect

from .. import ops
from ..function import Function

_RULES: dict[str, str] = {}

# PyTorch's grad_fn names whose stem is not a dyngraph op's name (dyngraph/torch.py shows a
# node as PyTorch names it, NOTE [op names] there): the dyngraph op with the same derivative.
_TORCH_STEMS = {"Mm": "MatMul", "Bmm": "MatMul", "T": "Permute", "Transpose": "Permute",
                "View": "Reshape", "UnsafeView": "Reshape", "Squeeze": "Reshape",
                "Unsqueeze": "Reshape", "NllLoss": "NLLLoss"}


def derivative_rules() -> dict[str, str]:
    """Each built-in op's local derivative: the first paragraph of its docstring, its lines
    joined (``Mul``: ``z = x * y;  dz/dx = y,  dz/dy = x``), shown by the inspector and the
    chain-rule panel (one part per input: ``dz/dbase = ...;  dz/dsrc = ...``); also under the
    names PyTorch gives the same op's backward node (``MulBackward0``, ``CumsumBackward0``),
    for graphs watched in PyTorch."""
    if not _RULES:
        for name, cls in vars(ops).items():
            if isinstance(cls, type) and issubclass(cls, Function):
                doc = inspect.getdoc(cls)
                if doc:  # NOTE: a rule wraps over lines; its first line alone cut parts off
                    paragraph = doc.split("\n\n", 1)[0]
                    _RULES[name] = " ".join(line.strip() for line in paragraph.splitlines())
        stems = {name: name for name in _RULES}
        stems.update({name[0] + name[1:].lower(): name for name in _RULES})  # Cumsum, Topk
        stems.update(_TORCH_STEMS)
        for stem, name in stems.items():
            for overload in ("0", "1"):  # PowBackward0 (a scalar power), PowBackward1 (a tensor)
                _RULES.setdefault(f"{stem}Backward{overload}", _RULES[name])
    return _RULES
