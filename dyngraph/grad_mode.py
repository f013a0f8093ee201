"""Grad mode: whether new operations are recorded into a graph.

``no_grad``, ``enable_grad`` and ``set_grad_enabled`` are context managers (and decorators) that
set one flag and restore the previous value on exit, even when an exception passes through, so
they nest. As in PyTorch the flag belongs to the thread: a ``no_grad`` block in one thread does
not stop another thread's graph, and a new thread starts with grad enabled. It is
``this_thread.state.grad_enabled`` (spine/thread_state.py, NOTE [modes are per thread]), which
``Function.apply`` reads on every op.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .spine.thread_state import this_thread


def is_grad_enabled() -> bool:
    """Is grad mode on in this thread (are new ops recorded into a graph)?"""
    return this_thread.state.grad_enabled


class set_grad_enabled:
    """Set grad mode to ``mode`` for a ``with`` block (or immediately, like PyTorch, when called).

    >>> with dg.set_grad_enabled(False):
    ...     y = x * 2          # not recorded
    """

    def __init__(self, mode: bool) -> None:
        state = this_thread.state
        self.prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def __enter__(self) -> set_grad_enabled:
        return self

    def __exit__(self, *exc: object) -> None:
        this_thread.state.grad_enabled = self.prev

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        # Used as a decorator: the constructor already switched the mode; switch it back and
        # apply it only while the decorated function runs (in whichever thread calls it).
        this_thread.state.grad_enabled = self.prev
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class _GradModeContext:
    """Base of no_grad / enable_grad: sets the flag on __enter__, restores it on __exit__."""

    mode = True

    def __enter__(self) -> _GradModeContext:
        state = this_thread.state
        self.prev = state.grad_enabled
        state.grad_enabled = self.mode
        return self

    def __exit__(self, *exc: object) -> None:
        this_thread.state.grad_enabled = self.prev

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        cls = type(self)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with cls():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    """Record nothing inside the block: results do not require grad, in-place updates of leaves
    (``w -= lr * w.grad``) are allowed. Usable as a decorator."""

    mode = False


class enable_grad(_GradModeContext):
    """Record again inside a ``no_grad`` block. Usable as a decorator."""

    mode = True


class inference_mode(_GradModeContext):  # noqa: N801 (PyTorch's spelling)
    """PyTorch's faster ``no_grad`` for evaluation: here the same as ``no_grad`` (with
    ``mode=False``, a block that changes nothing). Usable as a decorator."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = not mode if mode else None  # type: ignore[assignment]

    def __enter__(self) -> inference_mode:
        state = this_thread.state
        self.prev = state.grad_enabled
        if self.mode is not None:
            state.grad_enabled = self.mode
        return self

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        context = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with context:
                return fn(*args, **kwargs)

        return wrapper
