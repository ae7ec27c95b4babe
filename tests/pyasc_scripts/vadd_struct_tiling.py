"""Vector add whose tiling arrives as a nested Struct argument, in pyasc style.

Tiling structs come from asc.language.core.struct and field types from
KnownTypes in asc.language.core.dtype, as in pyasc's own tiling tests.
"""
import numpy as np

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt
from asc.language.core.dtype import KnownTypes as KT
from asc.language.core.struct import Field, Struct, StructField


class CoreSplit(Struct):
    per_core = Field(dtype=KT.int32, default=0)


class TileSplit(Struct):
    length = Field(dtype=KT.int32, default=64)
    count = Field(dtype=KT.int32, default=0)


class AddTiling(Struct):
    core = StructField(CoreSplit)
    tile = StructField(TileSplit)


@asc.jit
def vadd_tiled(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, tiling: AddTiling):
    start = asc.get_block_idx() * tiling.core.per_core
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, tiling.core.per_core)
    y_gm.set_global_buffer(y + start, tiling.core.per_core)
    z_gm.set_global_buffer(z + start, tiling.core.per_core)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, 1)
    in_y = asc.TQue(asc.TPosition.VECIN, 1)
    out_z = asc.TQue(asc.TPosition.VECOUT, 1)
    nbytes = tiling.tile.length * x.dtype.sizeof()
    pipe.init_buffer(que=in_x, num=1, len=nbytes)
    pipe.init_buffer(que=in_y, num=1, len=nbytes)
    pipe.init_buffer(que=out_z, num=1, len=nbytes)
    n = tiling.tile.length
    for t in range(tiling.tile.count):
        xl = in_x.alloc_tensor(x.dtype)
        yl = in_y.alloc_tensor(y.dtype)
        asc.data_copy(xl, x_gm[t * n:], count=n)
        asc.data_copy(yl, y_gm[t * n:], count=n)
        in_x.enque(xl)
        in_y.enque(yl)
        xl = in_x.deque(x.dtype)
        yl = in_y.deque(y.dtype)
        zl = out_z.alloc_tensor(z.dtype)
        asc.add(zl, xl, yl, n)
        out_z.enque(zl)
        in_x.free_tensor(xl)
        in_y.free_tensor(yl)
        zl = out_z.deque(z.dtype)
        asc.data_copy(z_gm[t * n:], zl, count=n)
        out_z.free_tensor(zl)


def main() -> None:
    config.set_platform(config.Backend.Model)
    cores, total = 4, 4 * 512
    tiling = AddTiling(core=CoreSplit(per_core=total // cores))
    assert tiling.tile.length == 64           # the field default
    tiling.tile.count = tiling.core.per_core // tiling.tile.length
    x = np.arange(total, dtype=np.float32)
    y = np.full(total, -7.5, dtype=np.float32)
    z = np.zeros_like(x)
    vadd_tiled[cores, rt.current_stream()](x, y, z, tiling)
    np.testing.assert_array_equal(z, x + y)
    print(f"PYASC-COMPAT vadd_struct_tiling ok tiling={tiling!r}")


if __name__ == "__main__":
    main()
