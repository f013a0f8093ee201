"""Optimizers (PyTorch's ``torch.optim``): ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``,
``Adadelta``, ``Adagrad`` (``optimizer.py``), ``LBFGS`` (``lbfgs.py``, stepped with a closure), and
learning-rate schedules in ``lr_scheduler`` (``StepLR``, ``OneCycleLR``, ...)."""

from . import lr_scheduler
from .lbfgs import LBFGS
from .optimizer import SGD, Adadelta, Adagrad, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop",
           "lr_scheduler"]


# A PyTorch name dyngraph does not have yet (NOTE [missing names], dyngraph/missing.py).
from ..missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
