"""A queue buffer still taken when the kernel ends is reported at check level full, naming its alloc line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc


@asc.jit
def copy_tiles(x: asc.GlobalAddress, y: asc.GlobalAddress, free_last: asc.ConstExpr[bool]):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + asc.get_block_idx() * 256, 256)
    yg.set_global_buffer(y + asc.get_block_idx() * 256, 256)
    pipe = asc.TPipe()
    que = asc.TQue(asc.TPosition.VECIN, 2)
    out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que, 2, 64 * 4)
    pipe.init_buffer(out, 2, 64 * 4)
    for i in range(4):
        t = que.alloc_tensor(asc.float32)
        asc.data_copy(t, xg[i * 64:], 64)
        que.enque(t)
        t = que.deque(asc.float32)
        o = out.alloc_tensor(asc.float32)
        asc.adds(o, t, 0.0, 64)
        out.enque(o)
        if free_last or i < 3:
            que.free_tensor(t)
        o = out.deque(asc.float32)
        asc.data_copy(yg[i * 64:], o, 64)
        out.free_tensor(o)


def test_a_tensor_never_freed_is_reported(mode):
    x = np.arange(512, dtype=np.float32)
    y = np.zeros_like(x)
    with pytest.warns(npuemu.UnfreedTensorWarning) as caught:
        copy_tiles[2](x, y, False, check="full", **mode)
    np.testing.assert_array_equal(y, x)
    (w,) = [w for w in caught if issubclass(w.category, npuemu.UnfreedTensorWarning)]
    text = str(w.message)
    assert "kernel 'copy_tiles', 2 cores (AIV 0, ...): a tensor from " in text
    assert "`t = que.alloc_tensor(asc.float32)`" in text and "was still dequeued" in text
    assert "`pipe.init_buffer(que, 2, 64 * 4)`" in text


def test_a_kernel_that_frees_everything_is_not_flagged(mode):
    x = np.arange(512, dtype=np.float32)
    y = np.zeros_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", npuemu.UnfreedTensorWarning)
        copy_tiles[2](x, y, True, check="full", **mode)
    np.testing.assert_array_equal(y, x)
