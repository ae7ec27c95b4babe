"""Host side of an op: platform queries, tiling, and launching kernels with their tiling.

* :class:`PlatformAscendC`, :class:`CoreMemType` -- what the SoC offers (``platform_api``);
* :class:`TensorDesc`, :class:`TilingContext`, :class:`TilingResult` -- the tiling interface (``tiling``);
* :class:`TilingCache` -- ATB-style ring-buffer cache of tiling results (``tiling_cache``);
* :func:`run_op` -- tile and launch in one call (``run``);
* :func:`list_tensor_desc`, :func:`gm_address` -- ``ListTensorDesc`` buffers and virtual GM addresses (``list_tensor``);
* :class:`MatmulApiTiling`, :class:`MultiCoreMatmulTiling`, :class:`BatchMatmulTiling` -- CANN's host matmul
  tiling (pyasc's ``asc.lib.host``, ``matmul_tiling``; its checker in ``matmul_tiling_check``).
"""
from .list_tensor import gm_address, list_tensor_desc
from .matmul_tiling import BatchMatmulTiling, MatmulApiTiling, MultiCoreMatmulTiling
from .platform_api import CoreMemType, PlatformAscendC, PlatformAscendCManager, SocVersion
from .run import make_context, run_op, run_tiling, tensor_desc
from .tiling import (TILING_DATA_CAPACITY, TensorDesc, TilingContext, TilingError, TilingFunction,
                     TilingResult)
from .tiling_cache import TilingCache, default_cache, launch_key

__all__ = ["CoreMemType", "PlatformAscendC", "PlatformAscendCManager", "SocVersion", "MatmulApiTiling",
           "MultiCoreMatmulTiling", "BatchMatmulTiling", "TensorDesc", "TilingContext", "TilingResult",
           "TilingFunction", "TilingError", "TILING_DATA_CAPACITY", "TilingCache", "default_cache", "launch_key",
           "run_op", "run_tiling", "make_context", "tensor_desc", "gm_address", "list_tensor_desc"]
