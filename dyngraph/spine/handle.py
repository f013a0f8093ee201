"""RemovableHandle: what ``subscribe()`` and ``register_hook()`` return (PyTorch's shape)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

_keys = itertools.count()


class RemovableHandle:
    """Removes one entry from the dict it was registered in; also a context manager.

    >>> with dg.events.subscribe(print):
    ...     y = x * 2      # printed
    >>> # unsubscribed here
    """

    __slots__ = ("_registry", "_on_remove", "key")

    def __init__(
        self, registry: dict[int, Any], on_remove: Callable[[], None] | None = None
    ) -> None:
        self._registry = registry
        self._on_remove = on_remove
        self.key = next(_keys)

    def remove(self) -> None:
        """Unregister; calling it twice is harmless."""
        self._registry.pop(self.key, None)
        if self._on_remove is not None:
            self._on_remove()

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle {self.key}>"
