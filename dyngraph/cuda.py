"""``dg.cuda.is_available()``: is there a GPU that CuPy can use?"""

from .backend import cuda_is_available as is_available

__all__ = ["is_available"]
