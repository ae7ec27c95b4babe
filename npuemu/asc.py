"""The kernel language: ``import npuemu.asc as asc``.

Names, signatures and enum values mirror pyasc 1.1.1 (``import asc``), so a
pyasc kernel runs with only its import line changed.  Additions in the same
style: ``bfloat16``, ``KernelType`` members beyond pyasc's list.
"""
# ruff: noqa: F401, F403, A004
from .jit import JITFunction, jit
from .language.core import (BaseTensor, ConstExpr, GlobalAddress, GlobalTensor, LocalMemAllocator, LocalTensor,
                            LocalTensorAuto, TBuf, TBufHandle, TBufPool, TPipe, TPipeManager, TQue, TQueBind, ceildiv,
                            get_tpipe_ptr, pop_stack_buffer, range, static_assert, static_range)
from .language.dtype import (DataType, KnownTypes, bfloat16, bool_, double, float16, float32, float64, float_,
                             half, int8, int16, int32, int64, int_, uint8, uint16, uint32, uint64, void)
from .language.enums import (CMPMODE, BatchMode, BatchOutMode, BlockMode, CacheLine, CacheMode, CacheRwMode,
                             CubeFormat, DataFormat, DcciDst, DeqScale, GatherMaskMode, HardEvent, Hardware,
                             IterateMode, IterateOrder, KernelType, LayoutMode, MaskMode, MatmulConfigMode,
                             MatmulPolicy, MemDsbT, PipeID, QuantModes, ReduceOrder, RoundMode, ScheduleType,
                             SelMode, TPosition, TransposeType, pad_t)
from .language.params import *
from .language.struct import ArrayField, Field, Struct, StructField
from .language.data_copy import *
from .language.cube import *
from .language.sys_var import *
from .language.vec_binary import *
from .language.vec_scalar import *
from .language.vec_unary import *
from .language.vec_cast import *
from .language.vec_reduce import *
from .language.vec_cmpsel import *
from .language.vec_fill import *
from .language.vec_gather import *
from .language.scalar import *
from .language.vec_fused import *
from .language.sort import *
from .language.atomic import *
from .language.vec_rearrange import *
from .language.vec_transpose import *
from .language.vec_interp import *
from .language.aipp import *
from .language.mask import *
from .language.sync import *
from .language.cache import *
from .language.cross_core import *
from .language.task_sync import *
from .language.debug import *
from .language.tiling import *
from .language.properties import *
from .language.array import *
from .language.list_tensor import *

from . import adv            # asc.adv: the high-level API (pyasc asc.language.adv)
