"""The instruction library: the ``@njit`` functions generated kernels call."""
from . import library_cache as _library_cache  # noqa: F401  (before any instruction is compiled)
