"""PyTorch's kernel switches (``torch.backends``), as the flags learners' scripts set and read:
``torch.backends.cudnn.benchmark = True``, ``torch.backends.cuda.matmul.allow_tf32 = True``,
``torch.backends.mps.is_available()``. dyngraph's kernels are numpy's (or CuPy's) and have no
such switches: the flags keep what is written to them and change nothing; there is no MPS."""

from __future__ import annotations

from types import SimpleNamespace


def _no() -> bool:
    return False


cudnn = SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        is_available=_no)
cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False))
mps = SimpleNamespace(is_available=_no, is_built=_no)

__all__ = ["cuda", "cudnn", "mps"]
