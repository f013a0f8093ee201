"""``dg.cuda.is_available()``: is there a GPU that CuPy can use? And ``dg.cuda.amp``, the
old spelling of ``dg.amp`` (nanoGPT's ``torch.cuda.amp.GradScaler(enabled=...)``)."""

from . import amp
from .backend import cuda_is_available as is_available

__all__ = ["amp", "is_available"]
