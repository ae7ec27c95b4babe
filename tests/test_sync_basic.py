"""set_flag/wait_flag, pipe_barrier and data_sync_barrier: legal use runs, each broken rule is a SyncError.

One kernel serves every case: ``bug`` selects the mistake at run time, so the
broken kernels and their corrected twin share one compiled binary.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 64


@asc.jit
def sync_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, bug: int, event_id: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg, N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, event_id)
    if bug == 1:                                        # set twice without a wait
        asc.set_flag(asc.HardEvent.MTE2_MTE3, event_id)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, event_id)
    if bug == 2:                                        # a wait nothing will satisfy
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, event_id)
    if bug == 3:                                        # left set at the end
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 5)
    if bug == 4:                                        # a cube event on a vector core
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.pipe_barrier(asc.PipeID.PIPE_MTE2)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_sync_barrier(asc.MemDsbT.UB)
    asc.data_copy(zg, t, N)
    for i in range(8):                                  # every id of an event, set and consumed
        asc.set_flag(asc.HardEvent.MTE3_S, i)
        asc.wait_flag(asc.HardEvent.MTE3_S, i)


def _run(mode, bug=0, event_id=0):
    x = np.arange(N, dtype=np.float32)
    z = np.zeros(N, np.float32)
    sync_kernel[1](x, z, bug, event_id, **mode)
    return x, z


def test_legal_sync_runs_clean(mode):
    x, z = _run(mode, event_id=7)
    np.testing.assert_array_equal(z, x)


def test_double_set_flag(mode):
    with pytest.raises(errors.SyncError, match=r"\[sync\] set_flag\(HardEvent.MTE2_MTE3, 2\) while that flag is "
                                               r"still set") as info:
        _run(mode, bug=1, event_id=2)
    assert info.value.loc.line_text.strip() == "asc.set_flag(asc.HardEvent.MTE2_MTE3, event_id)"


def test_wait_flag_never_set(mode):
    with pytest.raises(errors.SyncError, match=r"wait_flag\(HardEvent.MTE2_MTE3, 0\) waits for a flag no "
                                               r"earlier set_flag left set"):
        _run(mode, bug=2)


def test_flag_left_set_at_kernel_end_points_at_the_set_flag(mode):
    with pytest.raises(errors.SyncError, match=r"kernel ends with flag \(HardEvent.MTE3_MTE2, 5\) still set") as info:
        _run(mode, bug=3)
    assert info.value.loc.line_text.strip() == "asc.set_flag(asc.HardEvent.MTE3_MTE2, 5)"


def test_illegal_event_pair_on_aiv(mode):
    with pytest.raises(errors.SyncError, match=r"M_FIX is not an event pair of an AIV core \(legal on AIV: "):
        _run(mode, bug=4)


def test_event_id_out_of_range(mode):
    with pytest.raises(errors.SyncError, match=r"set_flag\(HardEvent.MTE2_MTE3, 8\): event id 8 is outside 0..7"):
        _run(mode, event_id=8)
    with pytest.raises(errors.SyncError, match=r"event id -1 is outside 0..7"):
        _run(mode, event_id=-1)


def test_event_pairs_follow_the_core_type():
    """On an AIC the cube events are legal and the vector ones are not (debug mode: no extra compile)."""
    @asc.jit
    def cube_sync(x: asc.GlobalAddress, vector_event: bool):
        asc.pipe_barrier(asc.PipeID.PIPE_FIX)
        asc.set_flag(asc.HardEvent.M_FIX, 3)
        asc.wait_flag(asc.HardEvent.M_FIX, 3)
        if vector_event:
            asc.set_flag(asc.HardEvent.MTE2_V, 0)

    x = np.zeros(8, np.float32)
    cube_sync[2](x, False, kernel_type=asc.KernelType.AIC_ONLY, debug=True)
    with pytest.raises(errors.SyncError, match=r"core AIC 0.*MTE2_V is not an event pair of an AIC core"):
        cube_sync[2](x, True, kernel_type=asc.KernelType.AIC_ONLY, debug=True)
    with pytest.raises(errors.SyncError, match=r"pipe_barrier\(PipeID.PIPE_FIX\): an AIV core has no such pipe"):
        cube_sync[1](x, False, debug=True)


def test_compile_time_errors():
    @asc.jit
    def scalar_barrier(x: asc.GlobalAddress):
        asc.pipe_barrier(asc.PipeID.PIPE_S)

    @asc.jit
    def runtime_event(x: asc.GlobalAddress, e: int):
        asc.set_flag(e, 0)

    x = np.zeros(8, np.float32)
    with pytest.raises(errors.KernelTypeError, match=r"pipe_barrier\(PipeID.PIPE_S\) is not allowed"):
        scalar_barrier[1](x)
    with pytest.raises(errors.KernelCompileError, match=r"event must be a compile-time constant"):
        runtime_event[1](x, 3)
