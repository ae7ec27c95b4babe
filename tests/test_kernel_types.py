"""Which cores each KernelType runs and what the core-identity calls return on them (ascend-c.md §2.7).

One kernel records, on every core, get_block_idx, get_block_num,
get_sub_block_idx, get_sub_block_num, get_task_ratio, ascend_is_aic and
ascend_is_aiv into GM; the host compares the records with the table of the
pyasc/asc-devkit docs (GetBlockIdx, GetTaskRatio):

============  =========================  ================================================
kernel type   cores for numBlocks = n    per core
============  =========================  ================================================
AIV_ONLY      n AIV                      block [0, n), sub 0 of 1, ratio 1
AIC_ONLY      n AIC                      block [0, n), sub 0 of 1, ratio 1
MIX_AIV_1_0   n AIV                      as AIV_ONLY
MIX_AIC_1_0   n AIC                      as AIC_ONLY
MIX_AIC_1_1   n AIC + n AIV              both: block [0, n), sub 0 of 1, ratio 1
MIX_AIC_1_2   n AIC + 2n AIV             AIC: block [0, n), ratio 1; AIV: block [0, 2n),
                                         sub block % 2 of 2, ratio 2
============  =========================  ================================================

get_block_num() is n everywhere.  Hard sync_all and the cross-core flags are
refused at compile time on kernel types that do not start the hardware's
cross-core sync unit.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

K = asc.KernelType
FIELDS = 8            # int64 words per record: one 64-byte DCache line per core
AIV_RECORDS = 16      # AIV records start after room for this many AIC records


@asc.jit
def identity_kernel(rec: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(rec)
    at = asc.get_block_idx()
    if asc.ascend_is_aiv():
        at += AIV_RECORDS
    at *= FIELDS
    g.set_value(at, asc.get_block_idx())
    g.set_value(at + 1, asc.get_block_num())
    g.set_value(at + 2, asc.get_sub_block_idx())
    g.set_value(at + 3, asc.get_sub_block_num())
    g.set_value(at + 4, asc.get_task_ratio())
    g.set_value(at + 5, 1 if asc.ascend_is_aic() else 0)
    g.set_value(at + 6, 1 if asc.ascend_is_aiv() else 0)
    g.set_value(at + 7, 1)                                  # this core ran


def _expected(kernel_type: K, n: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """(AIC records, AIV records) the table above gives for numBlocks ``n``."""
    aic = [(b, n, 0, 1, 1, 1, 0, 1) for b in range(n)]
    aiv = [(b, n, 0, 1, 1, 0, 1, 1) for b in range(n)]
    if kernel_type in (K.AIV_ONLY, K.MIX_AIV_1_0):
        return [], aiv
    if kernel_type in (K.AIC_ONLY, K.MIX_AIC_1_0):
        return aic, []
    if kernel_type == K.MIX_AIC_1_1:
        return aic, aiv
    return aic, [(b, n, b % 2, 2, 2, 0, 1, 1) for b in range(2 * n)]


@pytest.mark.parametrize("kernel_type", [K.AIV_ONLY, K.AIC_ONLY, K.MIX_AIV_1_0, K.MIX_AIC_1_0, K.MIX_AIC_1_1,
                                         K.MIX_AIC_1_2], ids=lambda k: k.name)
def test_core_identity_per_kernel_type(kernel_type, mode):
    n = 3
    rec = np.zeros(2 * AIV_RECORDS * FIELDS, np.int64)
    identity_kernel[n](rec, kernel_type=kernel_type, **mode)
    got = rec.reshape(2 * AIV_RECORDS, FIELDS)
    aic, aiv = _expected(kernel_type, n)
    assert [tuple(r) for r in got[:AIV_RECORDS] if r[7]] == aic
    assert [tuple(r) for r in got[AIV_RECORDS:] if r[7]] == aiv


# ---------------------------------------------------------------------------- kernel types refused


@asc.jit
def hard_sync(x: asc.GlobalAddress):
    asc.sync_all()


@asc.jit
def mix_sync(x: asc.GlobalAddress):
    asc.sync_all(is_aiv_only=False)


@asc.jit
def pair_flag(x: asc.GlobalAddress):
    asc.cross_core_set_flag(0, 1, asc.PipeID.PIPE_MTE3)
    asc.cross_core_wait_flag(0, 1)


@asc.jit
def bad_pipe(x: asc.GlobalAddress):
    asc.cross_core_set_flag(0, 0, asc.PipeID.PIPE_S)


@asc.jit
def bad_mode(x: asc.GlobalAddress):
    asc.cross_core_set_flag(0, 4, asc.PipeID.PIPE_V)


@pytest.mark.parametrize("kernel, kernel_type, message", [
    (hard_sync, K.AIV_ONLY, r"sync_all\(\) needs kernel_type MIX_AIV_1_0, .*; this kernel is AIV_ONLY, whose "
                            r"launch does not start the hardware's cross-core sync unit"),
    (hard_sync, K.AIC_ONLY, r"sync_all\(\) needs kernel_type MIX_AIV_1_0, .*this kernel is AIC_ONLY"),
    (mix_sync, K.MIX_AIV_1_0, r"sync_all\(is_aiv_only=False\) needs kernel_type MIX_AIC_1_1, MIX_AIC_1_2; "
                              r"this kernel is MIX_AIV_1_0"),
    (pair_flag, K.MIX_AIV_1_0, r"cross_core_set_flag mode 1 needs kernel_type MIX_AIC_1_1, MIX_AIC_1_2"),
    (bad_pipe, K.MIX_AIV_1_0, r"cross_core_set_flag: pipe PIPE_S is not allowed"),
    (bad_mode, K.MIX_AIV_1_0, r"mode_id 4 is not a cross-core mode of Atlas A2/A3 \(0, 1 or 2\)"),
])
def test_cross_core_sync_needs_a_kernel_type_that_starts_the_sync_unit(kernel, kernel_type, message):
    with pytest.raises(errors.KernelTypeError, match=message) as info:
        kernel[2](np.zeros(8, np.float32), kernel_type=kernel_type, debug=True)
    assert info.value.loc is not None and "asc." in info.value.loc.line_text


@asc.jit(kernel_type=K.MIX_AIC_1_2)
def shared_setup_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, use_on_aic: int):
    """Both core types run the set-up, as a MIX kernel's source does: a VECOUT queue on the AIC only records
    the queue (the AIC has no UB); taking a buffer from it there is the error."""
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q, 1, 64 * 4)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + asc.get_block_idx() * 64, 64)
    if asc.ascend_is_aiv() or use_on_aic:
        t = q.alloc_tensor(asc.float32)
        asc.data_copy(t, xg, 64)
        q.enque(t)
        u = q.deque(asc.float32)
        asc.data_copy(zg, u, 64)
        q.free_tensor(u)


def test_a_mix_kernel_may_set_up_ub_queues_on_its_aic_but_not_use_them_there():
    x = np.arange(64, dtype=np.float32)
    z = np.zeros(2 * 64, np.float32)
    shared_setup_kernel[1](x, z, 0)
    np.testing.assert_array_equal(z, np.tile(x, 2))          # the two AIVs copied; the AIC only set up
    with pytest.raises(errors.PositionError, match=r"AIC 0.*this core type has no UB.*ascend_is_aiv") as e:
        shared_setup_kernel[1](x, z, 1)
    assert "t = q.alloc_tensor(asc.float32)" in str(e.value)
