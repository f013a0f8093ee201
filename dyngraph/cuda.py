"""``dg.cuda.is_available()``: is there a GPU that CuPy can use? And ``dg.cuda.amp``, the
old spelling of ``dg.amp`` (nanoGPT's ``torch.cuda.amp.GradScaler(enabled=...)``), with the
probes and seeds scripts call at their top."""

from . import amp
from .backend import cuda_is_available as is_available


def device_count() -> int:
    """1 when CuPy sees a GPU (dyngraph uses one), else 0."""
    return 1 if is_available() else 0


def manual_seed(seed: int) -> None:
    """Nothing to seed: dyngraph draws every number, on either device, from the one generator
    ``dg.manual_seed`` seeds (PyTorch's CUDA generator, which this seeds there, is not here)."""


manual_seed_all = manual_seed

__all__ = ["amp", "device_count", "is_available", "manual_seed", "manual_seed_all"]
