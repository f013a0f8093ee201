"""Neural-network building blocks. ``dg.nn.functional`` holds the stateless functions."""

from . import functional

__all__ = ["functional"]
