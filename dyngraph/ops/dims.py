"""Dimension arguments, checked in one place: PyTorch's spellings and PyTorch's errors.

Every op or method that takes a dimension calls these helpers before it calls its op, so that a
learner sees the same message everywhere (and the one PyTorch would give):

>>> normalize_dim(-1, 2)                 # x of shape (2, 3): -1 is dimension 1
1
>>> normalize_dim(3, 2)
IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 3)
>>> normalize_dim(1.5, 2, name="dim", fn="sum")
TypeError: sum(): argument 'dim' must be an int (or a tuple of ints), but got float 1.5
>>> normalize_dims((0, -1), 3)           # a reduction over several dimensions
(0, 2)
>>> one_spelling("sum", "dim", None, "axis", 1)      # dim= (PyTorch) or axis= (numpy)
1

A 0-d tensor accepts dimension -1 and 0, as in PyTorch (as if it had one dimension). For an op
that inserts a dimension (unsqueeze, stack), pass ``ndim + 1``.
"""

from __future__ import annotations

import operator
from typing import Any


def normalize_dim(dim: Any, ndim: int, name: str = "dim", fn: str | None = None) -> int:
    """``dim`` as an index in ``range(ndim)`` (negative dims count from the end).

    Raises TypeError when ``dim`` is not an integer (``x.sum(dim=1.5)``), naming the argument,
    and IndexError with PyTorch's wording when it is out of range."""
    try:
        index = operator.index(dim)
    except TypeError:
        _raise_not_int(dim, name, fn)
    size = max(ndim, 1)  # a 0-d tensor behaves as if it had one dimension
    if not -size <= index < size:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], but got "
            f"{index})"
        )
    return index % size if ndim else 0


def normalize_dims(
    dim: Any, ndim: int, name: str = "dim", fn: str | None = None
) -> int | tuple[int, ...] | None:
    """The dims of a reduction: None (every dimension) stays None, one int gives one
    normalized int, a tuple or list gives a tuple of normalized ints (each at most once).
    On a 0-d tensor any valid dim reduces nothing, so the result is ``()``."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        dims = tuple(normalize_dim(d, ndim, name, fn) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return dims if ndim else ()
    index = normalize_dim(dim, ndim, name, fn)
    return index if ndim else ()


def normalize_sizes(sizes: tuple, fn: str, name: str = "size") -> tuple[int, ...]:
    """The sizes of a shape, given as f(2, 3) or f((2, 3)): each one an integer (a Python or
    numpy int, or a one-element integer tensor), as PyTorch checks them. A float is a
    TypeError, not a shape rounded down: ``dg.randn(n / 2)`` is a bug to fix with ``n // 2``.
    (The values themselves, -1 or negative sizes, are the caller's to check.)

    >>> normalize_sizes((2, 3), "zeros")
    (2, 3)
    >>> normalize_sizes((2.5,), "randn")
    TypeError: randn(): argument 'size' must be tuple of ints, but found element of type float
    at pos 0 (2.5) ...
    """
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return tuple(
        normalize_size(size, fn, f"argument '{name}' must be tuple of ints, but found element "
                       f"of type {type(size).__name__} at pos {position}")
        for position, size in enumerate(sizes)
    )


def normalize_size(size: Any, fn: str, problem: str) -> int:
    """One size (or count: linspace's steps, eye's n) as an int; ``problem`` says what is wrong
    when it is not one."""
    try:
        if isinstance(size, bool):  # an int to Python, not a size to PyTorch
            raise TypeError
        return operator.index(size)
    except TypeError:
        raise TypeError(
            f"{fn}(): {problem} ({size!r}): a size counts elements, so it must be an integer "
            "(e.g. n // 2 rather than n / 2, or int(n))"
        ) from None


def one_spelling(fn: str, name: str, value: Any, alias: str, alias_value: Any,
                 default: Any = None) -> Any:
    """The value of an argument that has two spellings, PyTorch's (``name``: dim, keepdim,
    unbiased) and numpy's (``alias``: axis, keepdims, correction). ``None`` means not given;
    both given is a TypeError; neither gives ``default``."""
    if alias_value is None:
        return default if value is None else value
    if value is not None:
        raise TypeError(
            f"{fn}() got both {name}= and {alias}=, two spellings of the same argument: "
            f"pass only one (PyTorch says {name}=)"
        )
    return alias_value


def _raise_not_int(dim: Any, name: str, fn: str | None) -> None:
    where = f"{fn}(): " if fn else ""
    raise TypeError(
        f"{where}argument '{name}' must be an int (or a tuple of ints), but got "
        f"{type(dim).__name__} {dim!r}"
    )
