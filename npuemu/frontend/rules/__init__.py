"""Lowering rules, one module per instruction family; importing this package registers them all."""
from . import (tensors, tpipe, params, python_builtins, sys_var, cross_core, data_copy, debug, mask,  # noqa: F401
               sync, vec_binary, vec_cast, vec_cmpsel, vec_fill, vec_gather, vec_reduce, vec_scalar, vec_unary)
from . import aipp, atomic, scalar, sort, vec_fused, vec_interp, vec_rearrange, vec_transpose  # noqa: F401
from . import cache  # noqa: F401
from . import struct_array, tiling  # noqa: F401
from . import cube, cube_copy, cube_load3d, cube_sparse  # noqa: F401
from . import properties  # noqa: F401
from . import tensor_meta  # noqa: F401
from . import local_array  # noqa: F401
from . import shape_info  # noqa: F401
from . import buf_pool, list_tensor  # noqa: F401
from . import adv_math, adv_quant, adv_softmax  # noqa: F401
from . import adv_matmul, adv_matmul_batch, adv_matmul_run  # noqa: F401
from . import task_sync  # noqa: F401
