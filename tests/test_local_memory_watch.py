"""check_local_memory_ia: UB watch ranges that stop the core on an access of the armed kinds (check='full')."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import LocalMemoryWatchError, ParamRangeError


@asc.jit
def watched_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, start: int, end: int, vec_write: bool,
                   mte_read: bool, enable: bool, reg: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 64)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)         # UB bytes [0, 256)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 256, 64)      # UB bytes [256, 512)
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(enable_bit=reg, start_addr=start, end_addr=end,
                                                          is_vector_write=vec_write, is_mte_read=mte_read,
                                                          is_enable=enable))
    asc.data_copy(a, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(b, a, 1.0, 64)                                              # vector write of [256, 512)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, b, 64)                                             # MTE read of [256, 512)
    asc.check_local_memory_ia(asc.CheckLocalMemoryIAParam(enable_bit=reg))   # disarm after use


def run(*args, check="full"):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    watched_kernel[1](x, y, *args, check=check)
    return x, y


def test_a_vector_write_into_the_range_is_caught():
    with pytest.raises(LocalMemoryWatchError, match="vector write of UB byte 289 inside the range watched by "
                                                    "exception register 2") as e:
        run(9, 12, True, False, True, 2)                 # (288, 384]: the add's writes reach byte 289
    assert "asc.adds(b, a, 1.0, 64)" in str(e.value)


def test_other_kinds_and_ranges_pass():
    x, y = run(9, 12, False, False, True, 0)             # nothing armed for these kinds
    np.testing.assert_array_equal(y, x + 1)
    run(0, 7, True, True, True, 1)                       # (0, 224]: inside a, which only MTE2 writes
    run(9, 12, True, True, False, 3)                     # disarmed
    run(9, 12, True, False, True, 2, check="default")    # only check="full" sees every access


def test_an_mte_read_is_caught_and_the_boundaries_hold():
    with pytest.raises(LocalMemoryWatchError, match="MTE read of UB byte 481"):
        run(15, 16, False, True, True, 0)                # (480, 512]: byte 480 is not watched, 481 is
    with pytest.raises(LocalMemoryWatchError, match="vector write of UB byte 256"):
        run(7, 8, True, False, True, 0)                  # (224, 256]: the end byte is watched
    run(16, 20, True, True, True, 0)                     # (512, 640]: past b's last byte (511)


def test_register_fields_are_range_checked():
    with pytest.raises(ParamRangeError, match="enable_bit = 4 is outside"):
        run(0, 1, True, False, True, 4)
