"""LocalTensor methods that change or describe the tensor: set_size, set_buffer_len, set_addr_with_offset,
user tags and print."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import BoundsError, KernelTypeError


@asc.jit
def meta_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, tags: asc.GlobalAddress, k: int, n_out: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 64)
    tg = asc.GlobalTensor()
    tg.set_global_buffer(tags, 4)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, 256)
    t = q.alloc_tensor(asc.float32)                  # 64 floats
    t.set_user_tag(7 + k)
    asc.data_copy(t, xg, 64)
    q.enque(t)
    u = q.deque(asc.float32)
    tg.set_value(0, u.get_user_tag())                # the tag lives with the buffer: seen after deque
    tg.set_value(1, u.get_size())
    u.set_size(16)
    tg.set_value(2, u.get_size())
    u.set_buffer_len(128)                            # bytes: 32 floats
    tg.set_value(3, u.get_size())
    v = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 8)
    v.set_addr_with_offset(u, k)                     # int32 view starting k floats into u
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adds(v, v, 1, 8)                             # +1 on the raw bits of 8 floats
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, u, n_out)                      # checked against the new size
    u.print(2)
    q.free_tensor(u)


def test_tensor_metadata(capfd):
    x = np.arange(64, dtype=np.float32) + 1
    out = np.zeros(64, np.float32)
    tags = np.zeros(4, np.int64)
    meta_kernel[1](x, out, tags, 8, 32)
    assert tags.tolist() == [15, 64, 16, 32]
    want = x[:32].copy()
    want[8:16] = (x[8:16].view(np.int32) + 1).view(np.float32)
    np.testing.assert_array_equal(out[:32], want)
    assert not out[32:].any()
    text = capfd.readouterr()[0]
    assert "DumpTensor: desc=0, addr=0, data_type=float32, position=UB, dump_size=2\n[1.000000, 2.000000]" in text


def test_a_size_set_smaller_bounds_later_accesses():
    with pytest.raises(BoundsError):
        meta_kernel[1](np.ones(64, np.float32), np.zeros(64, np.float32), np.zeros(4, np.int64), 8, 64)
    with pytest.raises(BoundsError):                 # an offset past the source tensor
        meta_kernel[1](np.ones(64, np.float32), np.zeros(64, np.float32), np.zeros(4, np.int64), 40, 32)


def test_set_addr_with_offset_stays_in_one_memory():
    @asc.jit
    def bad(x: asc.GlobalAddress):
        a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 8)
        b = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 8)
        b.set_addr_with_offset(a, 0)

    with pytest.raises(KernelTypeError, match="a different memory"):
        bad[1](np.zeros(8, np.float32))


@asc.jit
def pipe_ptr_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    asc.get_tpipe_ptr().init_buffer(buf, 32)        # the pipe reached without its variable
    t = buf.get(asc.float32, 8)
    asc.duplicate(t, 3.0, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(xg, t, 8)


def test_get_tpipe_ptr():
    x = np.zeros(8, np.float32)
    pipe_ptr_kernel[1](x)
    assert (x == 3).all()

    @asc.jit
    def early():
        asc.get_tpipe_ptr()

    with pytest.raises(KernelTypeError, match="before the kernel created its TPipe"):
        early[1]()


@asc.jit
def stack_kernel(x: asc.GlobalAddress, sizes: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    sg = asc.GlobalTensor()
    sg.set_global_buffer(sizes, 2)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 1024)
    rest = asc.pop_stack_buffer(asc.float32)          # the UB after the 1024 bytes the TBuf took
    sg.set_value(0, rest.get_size())
    sg.set_value(1, rest.get_phy_addr())
    asc.duplicate(rest, 2.0, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(xg, rest, 64)


def test_pop_stack_buffer():
    x = np.zeros(64, np.float32)
    sizes = np.zeros(2, np.int64)
    stack_kernel[1](x, sizes)
    assert sizes.tolist() == [(192 * 1024 - 1024) // 4, 1024]
    assert (x == 2).all()


@asc.jit
def manager_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    xg.set_l2_cache_hint(asc.CacheMode.CACHE_MODE_LAST, asc.CacheRwMode.READ)
    pipe = asc.TPipe()
    asc.TPipeManager.set(pipe)
    buf = asc.TBuf(asc.TPosition.VECCALC)
    asc.TPipeManager.get().init_buffer(buf, 32)
    t = buf.get(asc.float32, 8)
    asc.duplicate(t, 1.0 + pipe.get_base_addr(asc.TPosition.VECCALC), 8)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(xg, t, 8)
    asc.TPipeManager.reset()


def test_pipe_manager_and_hints():
    x = np.zeros(8, np.float32)
    manager_kernel[1](x)
    assert (x == 1).all()
    assert isinstance(asc.LocalTensor, type) and issubclass(asc.GlobalTensor, asc.BaseTensor)
