"""PyTorch's ``torch.utils``, the part learners use: ``data`` (Dataset, DataLoader, ...)."""

from . import data

__all__ = ["data"]
