"""Row-wise softmax with the high-level API, pyasc style: ``python -m npuemu.compat.pyasc examples/adv_softmax.py``.

Each core takes ``rows`` rows of a ``[cores * rows, k]`` float32 matrix,
copies them to UB through a queue, runs ``asc.adv.softmax`` with a scratch
buffer sized by the host tiling, and copies the result and the row sums
back.  pyasc's host library has no softmax tiling, so the tiling comes from
npuemu's CANN-named one (``npuemu.host.adv_tiling.softmax_tiling_func``).
"""
import numpy as np

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
from npuemu.host.adv_tiling import get_softmax_min_tmp_size, softmax_tiling_func


@asc.jit
def softmax_rows(x: asc.GlobalAddress, y: asc.GlobalAddress, s: asc.GlobalAddress,
                 tiling: asc.adv.SoftmaxTiling, tmp_bytes: asc.ConstExpr[int]):
    n = tiling.src_size
    blk = tiling.out_max_size
    x_gm, y_gm, s_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * n, n)
    y_gm.set_global_buffer(y + asc.get_block_idx() * n, n)
    s_gm.set_global_buffer(s + asc.get_block_idx() * blk, blk)
    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, 1)
    out_q = asc.TQue(asc.TPosition.VECOUT, 1)
    stats = asc.TBuf(asc.TPosition.VECCALC)
    scratch = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=in_q, num=1, len=n * 4)
    pipe.init_buffer(que=out_q, num=1, len=n * 4)
    pipe.init_buffer(stats, 2 * blk * 4)
    pipe.init_buffer(scratch, tmp_bytes)
    xl = in_q.alloc_tensor(asc.float32)
    asc.data_copy(xl, x_gm, n)
    in_q.enque(xl)
    xl = in_q.deque(asc.float32)
    yl = out_q.alloc_tensor(asc.float32)
    st = stats.get(asc.float32)
    asc.adv.softmax(yl, st, st[blk:], xl, tiling, scratch.get(asc.uint8))
    out_q.enque(yl)
    in_q.free_tensor(xl)
    yl = out_q.deque(asc.float32)
    asc.data_copy(y_gm, yl, n)
    asc.data_copy(s_gm, st, blk)
    out_q.free_tensor(yl)


def main() -> None:
    config.set_platform(config.Backend.Model)
    cores, rows, k = 4, 32, 128
    tmp_bytes = 8 * get_softmax_min_tmp_size([rows, k], 4)          # eight rows per round
    tiling = softmax_tiling_func([rows, k], 4, tmp_bytes)
    x = np.random.default_rng(0).normal(size=(cores * rows, k)).astype(np.float32) * 3
    y = np.zeros_like(x)
    s = np.zeros((cores * rows, 8), np.float32)
    softmax_rows[cores, rt.current_stream()](x, y, s, tiling, tmp_bytes)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    err = float(np.abs(y - e / e.sum(axis=1, keepdims=True)).max())
    assert err < 1e-6, err
    np.testing.assert_allclose(s[:, 0], e.sum(axis=1), rtol=1e-6)
    print(f"PYASC-COMPAT adv_softmax ok split_m={tiling.split_m} range_m={tiling.range_m} max_err={err:.1e}")


if __name__ == "__main__":
    main()
