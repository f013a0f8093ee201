"""PyTorch's device-neutral probe (``torch.accelerator``), as pytorch/examples opens its
scripts: ``device = torch.accelerator.current_accelerator() if
torch.accelerator.is_available() else torch.device("cpu")``. dyngraph's one accelerator is a
CUDA GPU through CuPy (``dg.cuda.is_available()``)."""

from __future__ import annotations

from .backend import cuda_is_available


def is_available() -> bool:
    return cuda_is_available()


def current_accelerator() -> str | None:
    """'cuda' when CuPy sees a GPU, else None (PyTorch's answer on a machine without one)."""
    return "cuda" if cuda_is_available() else None


def device_count() -> int:
    return 1 if cuda_is_available() else 0


__all__ = ["current_accelerator", "device_count", "is_available"]
