"""C = LeakyReLU(A @ B + bias) in a MIX kernel: the cube computes the tiles, the vector cores apply LeakyReLU.

Run: python -m npuemu.compat.pyasc examples/matmul_api_leakyrelu.py
Each vector core owns a Matmul object for its block of rows; for every tile
it asks the cube for the tile in UB (get_tensor_c), applies LeakyReLU and
copies the tile to its place in C.  The tiling is filled by a small local
helper (one valid split).
"""
import numpy as np

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt


@asc.jit           # a kernel using the Matmul API is MIX_AIC_1_2 unless told otherwise (as in pyasc)
def matmul_leakyrelu_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress,
                            c: asc.GlobalAddress, alpha: float, tiling: asc.adv.TCubeTiling,
                            workspace: asc.GlobalAddress):
    asc.set_sys_workspace(workspace)
    row0 = asc.get_block_idx() * tiling.single_core_m        # one block of rows per vector core
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    bias_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + row0 * tiling.k_a)
    b_global.set_global_buffer(b)
    bias_global.set_global_buffer(bias)
    c_global.set_global_buffer(c + row0 * tiling.n)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.VECCALC, asc.CubeFormat.ND, c_global.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias_global.dtype),
    )
    asc.adv.register_matmul(pipe, matmul, tiling)       # the cube core serves the vector cores from here
    out_queue = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=out_queue, num=1, len=tiling.base_m * tiling.base_n * c.dtype.sizeof())
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    matmul.set_bias(bias_global)
    with matmul.iterate():
        out = out_queue.alloc_tensor(c.dtype)
        matmul.get_tensor_c(out, en_sequential_write=True)
        asc.leaky_relu(out, out, alpha, count=tiling.base_m * tiling.base_n)
        out_queue.enque(out)
        out = out_queue.deque(c.dtype)
        offset = matmul.get_offset_c()
        params = asc.DataCopyParams(block_count=offset.height,
                                    block_len=offset.width * c.dtype.sizeof() // 32,
                                    src_stride=(tiling.base_n - offset.width) * c.dtype.sizeof() // 32,
                                    dst_stride=(tiling.n - offset.width) * c.dtype.sizeof() // 32)
        asc.data_copy(c_global[offset.offset:], out, repeat_params=params)
        out_queue.free_tensor(out)
    matmul.end()


def make_tiling(m: int, n: int, k: int, vector_cores: int) -> asc.adv.TCubeTiling:
    """One valid split: rows in equal blocks, one per vector core; 32 x 32 x 32 base blocks."""
    return asc.adv.TCubeTiling(used_core_num=vector_cores, m=m, n=n, k_a=k, k_b=k, single_core_m=m // vector_cores,
                               single_core_n=n, single_core_k=k, base_m=32, base_n=32, base_k=32, depth_a1=1,
                               depth_b1=1, step_m=1, step_n=1, is_bias=1, step_k_a=1, step_k_b=1)


def main() -> None:
    config.set_platform(config.Backend.Model)
    m, n, k, cube_cores = 128, 96, 80, 1
    rng = np.random.default_rng(5)
    a = rng.integers(-5, 5, (m, k)).astype(np.float16)
    b = rng.integers(-5, 5, (k, n)).astype(np.float16)
    bias = rng.integers(-5, 5, n).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    workspace = np.zeros(2 * cube_cores * (512 + 128 * 1024), np.uint8)
    alpha = 0.125                       # a power of two: LeakyReLU of integers is exact
    tiling = make_tiling(m, n, k, 2 * cube_cores)
    matmul_leakyrelu_kernel[cube_cores, rt.current_stream()](a, b, bias, c, alpha, tiling, workspace)
    mm = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_array_equal(c, np.where(mm >= 0, mm, mm * np.float32(alpha)))
    print("matmul_api_leakyrelu ok")


if __name__ == "__main__":
    main()
