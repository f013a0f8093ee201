"""Optimizers (PyTorch's ``torch.optim``): ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``,
``Adadelta``, ``Adagrad``, ``NAdam``, ``RAdam``, ``Adamax``, ``Rprop``, ``ASGD``
(``optimizer.py``), ``LBFGS`` (``lbfgs.py``, stepped with a closure), and learning-rate
schedules in ``lr_scheduler`` (``StepLR``, ``OneCycleLR``, ...)."""

from . import lr_scheduler
from .lbfgs import LBFGS
from .optimizer import (
    ASGD,
    SGD,
    Adadelta,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    NAdam,
    Optimizer,
    RAdam,
    RMSprop,
    Rprop,
)

__all__ = ["ASGD", "SGD", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler"]


# A PyTorch name dyngraph does not have yet (NOTE [missing names], dyngraph/missing.py).
from ..missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
