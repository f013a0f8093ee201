"""Neural-network building blocks (PyTorch's ``torch.nn``).

- ``module``: ``Module`` (the base class: parameters, train / eval, state_dict, save / load),
  ``Parameter``, and the containers ``Sequential`` and ``ModuleList``
- ``layers``: ``Linear``, ``Embedding``, ``Dropout``, ``ReLU``, ``Tanh``, ``Sigmoid``
- ``recurrent``: ``RNNCell``, ``GRUCell``, ``LSTMCell``
- ``functional`` (``dg.nn.functional``, usually imported as ``F``): the stateless functions
"""

from . import functional
from .layers import Dropout, Embedding, Linear, ReLU, Sigmoid, Tanh
from .module import LoadResult, Module, ModuleList, Parameter, Sequential
from .recurrent import GRUCell, LSTMCell, RNNCell

__all__ = [
    "Dropout", "Embedding", "GRUCell", "LSTMCell", "Linear", "LoadResult", "Module",
    "ModuleList", "Parameter", "RNNCell", "ReLU", "Sequential", "Sigmoid", "Tanh", "functional",
]
