"""C = A @ B + bias with pyasc's high-level Matmul API on a cube-only kernel, several cores.

Run: python -m npuemu.compat.pyasc examples/matmul_api_basic.py
Each cube core computes one single_core_m x single_core_n block of C with
iterate_all; the tiling is filled by a small local helper (one valid split).
"""
import numpy as np

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt


@asc.jit(matmul_cube_only=True)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress, c: asc.GlobalAddress,
                  tiling: asc.adv.TCubeTiling):
    idx = asc.get_block_idx()
    m_blocks = (tiling.m + tiling.single_core_m - 1) // tiling.single_core_m
    m_index = idx % m_blocks
    n_index = idx // m_blocks
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    bias_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    a_global.set_global_buffer(a + m_index * tiling.single_core_m * tiling.k_a)
    b_global.set_global_buffer(b + n_index * tiling.single_core_n)
    bias_global.set_global_buffer(bias + n_index * tiling.single_core_n)
    c_global.set_global_buffer(c + m_index * tiling.single_core_m * tiling.n + n_index * tiling.single_core_n)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_global.dtype),
        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bias_global.dtype),
    )
    asc.adv.register_matmul(pipe, matmul, tiling)
    if idx < tiling.used_core_num:
        tail_m = min(tiling.single_core_m, tiling.m - m_index * tiling.single_core_m)
        tail_n = min(tiling.single_core_n, tiling.n - n_index * tiling.single_core_n)
        matmul.set_tensor_a(a_global)
        matmul.set_tensor_b(b_global)
        matmul.set_bias(bias_global)
        matmul.set_tail(tail_m, tail_n)
        matmul.iterate_all(c_global)
        matmul.end()


def make_tiling(m: int, n: int, k: int, cores_m: int, cores_n: int) -> asc.adv.TCubeTiling:
    """One valid split: cores_m x cores_n blocks, 64 x 64 x 32 base blocks."""
    scm, scn = -(-m // cores_m), -(-n // cores_n)
    return asc.adv.TCubeTiling(used_core_num=cores_m * cores_n, m=m, n=n, k_a=k, k_b=k, single_core_m=scm,
                               single_core_n=scn, single_core_k=k, base_m=64, base_n=64, base_k=32, depth_a1=1,
                               depth_b1=1, step_m=1, step_n=1, is_bias=1, step_k_a=1, step_k_b=1)


def main() -> None:
    config.set_platform(config.Backend.Model)
    m, n, k = 200, 136, 96
    rng = np.random.default_rng(3)
    a = rng.integers(-5, 5, (m, k)).astype(np.float16)
    b = rng.integers(-5, 5, (k, n)).astype(np.float16)
    bias = rng.integers(-5, 5, n).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    tiling = make_tiling(m, n, k, 2, 2)
    matmul_kernel[tiling.used_core_num, rt.current_stream()](a, b, bias, c, tiling)
    expected = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_array_equal(c, expected)      # small integers: exact in float32
    print("matmul_api_basic ok")


if __name__ == "__main__":
    main()
