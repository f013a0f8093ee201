"""Optimizers (PyTorch's ``torch.optim``): ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, and
learning-rate schedules in ``lr_scheduler`` (``StepLR``, ...). See ``optimizer.py``."""

from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
