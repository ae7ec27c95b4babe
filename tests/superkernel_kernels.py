"""Small kernels the SuperKernel tests share (one compile each, behaviour chosen by runtime arguments)."""
from __future__ import annotations

import npuemu.asc as asc


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def probe_kernel(out: asc.GlobalAddress, slot: int, mode: int):
    """Each core writes (get_block_num, get_raw_block_num, block idx + 1) into its own 64-byte line of
    ``out`` (int32, 16 per line; line ``slot * 64 + block idx``), then: mode 1 ``sync_all``, mode 2 a
    mode-0 cross-core full sync on flag 3, mode 3 a mode-0 set of flag 14 nobody waits for, mode 4 the same
    set with its wait."""
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    i = asc.get_block_idx()
    at = (slot * 64 + i) * 16
    og.set_value(at, asc.get_block_num())
    og.set_value(at + 1, asc.get_raw_block_num())
    og.set_value(at + 2, i + 1)
    if mode == 1:
        asc.sync_all()
    if mode == 2:
        asc.cross_core_set_flag(3, 0, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(3)
    if mode >= 3:
        asc.cross_core_set_flag(14, 0, asc.PipeID.PIPE_MTE3)
        if mode == 4:
            asc.cross_core_wait_flag(14)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def dcache_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, role: int, value: int, stride: int):
    """Scalar GM writes and reads through the DCache.  role 0: core 0 ``x.set_value(0, value)``; role 3:
    core 0 ``x[0] = value`` (Ascend C's ``x(0) = v``, never cleaned); role 1:
    core 1 copies ``x[0:8]`` to ``out[0:8]`` by DMA; role 2: core i ``x.set_value(i * stride, value + i)``,
    then ``sync_all``."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    i = asc.get_block_idx()
    if role == 0:
        if i == 0:
            xg.set_value(0, value)
    if role == 3:
        if i == 0:
            xg[0] = value
    if role == 1:
        if i == 1:
            asc.data_copy(t, xg, 8)
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(og, t, 8)
    if role == 2:
        xg.set_value(i * stride, value + i)
        asc.sync_all()          # every core has written (and cached) before any GlobalTensor dies


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def early_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, sets: int, waits: int, late: int):
    """Core i copies ``x[8i:8i+8]`` to ``y`` by DMA: ``waits`` wait_pre_task_end calls before the first data
    move, ``sets`` set_next_task_start calls after the last (only under tiling key 1); ``late``: the copy to
    ``y`` is written again after the set (an instruction that overlaps the next sub-kernel)."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + i * 8, 8)
    yg.set_global_buffer(y + i * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    for _ in range(waits):
        asc.wait_pre_task_end()
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 8)
    if asc.tiling_key_is(1):
        for _ in range(sets):
            asc.set_next_task_start()
        if late:
            asc.data_copy(yg, t, 8)
    if asc.tiling_key_is(2):
        pipe.destroy()          # a branch that forgets the call


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_1)
def mix_kernel(out: asc.GlobalAddress, direction: int, reps: int, all_aivs: int):
    """AIC-AIV sync in mode 2 on flag 5.  direction 0: the AIVs set, the AIC waits; direction 1: the AIC
    sets ``reps`` times, the AIVs wait as often.  Only AIV sub-block 0 takes part unless ``all_aivs``.
    Every core then writes its block idx + 1 into its own 64-byte line of ``out`` (AIC at line 64 + idx)."""
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    i = asc.get_block_idx()
    if asc.ascend_is_aiv():
        if all_aivs or asc.get_sub_block_idx() == 0:
            if direction == 0:
                asc.cross_core_set_flag(5, 2, asc.PipeID.PIPE_MTE3)
            else:
                for _ in range(reps):
                    asc.cross_core_wait_flag(5, 2)
        og.set_value(i * 16, i + 1)
    if asc.ascend_is_aic():
        if direction == 0:
            asc.cross_core_wait_flag(5, 2)
        else:
            for _ in range(reps):
                asc.cross_core_set_flag(5, 2, asc.PipeID.PIPE_FIX)
        og.set_value((64 + i) * 16, i + 1)


@asc.jit
def two_pipes_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, fixed: int):
    """TPipe p1 copies x to y through UB (MTE3 reads the buffer last), is destroyed, and TPipe p2 fills the
    same UB bytes by the vector unit: ordered only by destroy()'s PIPE_ALL barrier (or the fix's own)."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y)
    p1 = asc.TPipe()
    b1 = asc.TBuf(asc.TPosition.VECCALC)
    p1.init_buffer(b1, 32)
    t1 = b1.get(asc.int32)
    asc.data_copy(t1, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t1, 8)
    p1.destroy()
    if fixed:
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    p2 = asc.TPipe()
    b2 = asc.TBuf(asc.TPosition.VECCALC)
    p2.init_buffer(b2, 32)
    t2 = b2.get(asc.int32)
    asc.duplicate(t2, 7, 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(yg[8:], t2, 8)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_1)
def matmul11_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling,
                    ws: asc.GlobalAddress, only_aiv0: int):
    """A MIX 1:1 kernel whose AIV drives the cube through the Matmul API: C = A @ B on one block.
    ``only_aiv0``: the calls are guarded by ``get_sub_block_idx() == 0`` (what a 1:2 SuperKernel needs)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, ws, mm, t)
    if only_aiv0 == 0 or asc.get_sub_block_idx() == 0:
        mm.set_tensor_a(ag)
        mm.set_tensor_b(bg)
        mm.iterate_all(cg)
        mm.end()


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def relay_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, shift: int):
    """Core i copies ``x``'s 8 int32 at block ``(i + shift) % block num`` to ``y``'s block i by DMA (with
    ``shift`` 1, each core reads what another core of a previous relay wrote)."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + (i + shift) % asc.get_block_num() * 8, 8)
    yg.set_global_buffer(y + i * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 8)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def two_tensor_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, out: asc.GlobalAddress, value: int,
                      clean: int):
    """Core 0 writes ``x[0]`` and then ``w[0]`` with set_value (two GlobalTensors; ``clean``: it cleans x's
    line itself); after ``sync_all`` core 1 copies ``x[0:8]`` to ``out`` by DMA."""
    xg = asc.GlobalTensor()
    wg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    wg.set_global_buffer(w)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    i = asc.get_block_idx()
    if i == 0:
        xg.set_value(0, value)
        wg.set_value(0, value + 1)
        if clean:
            asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg, asc.DcciDst.CACHELINE_OUT)
    asc.sync_all()
    if i == 1:
        asc.data_copy(t, xg, 8)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(og, t, 8)
