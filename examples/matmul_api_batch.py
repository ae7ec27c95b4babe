"""A batch of float32 matmuls C[i] = A[i] @ B[i] with one Matmul object and iterate_batch (cube only).

Run: python -m npuemu.compat.pyasc examples/matmul_api_batch.py
The matrices of a batch lie back to back (matrix strides 0: one whole
matrix); a batch count of 1 for B would broadcast one B to every A.  The
tiling is filled by a small local helper (one valid split).
"""
import numpy as np

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt


@asc.jit(matmul_cube_only=True)
def batch_matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                        tiling: asc.adv.TCubeTiling, batch_a: int, batch_b: int):
    a_global = asc.GlobalTensor()
    b_global = asc.GlobalTensor()
    c_global = asc.GlobalTensor()
    a_global.set_global_buffer(a)
    b_global.set_global_buffer(b)
    c_global.set_global_buffer(c)
    pipe = asc.TPipe()
    matmul = asc.adv.Matmul(
        a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, a_global.dtype),
        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, b_global.dtype),
        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c_global.dtype),
    )
    asc.adv.register_matmul(pipe, matmul, tiling)
    matmul.set_tensor_a(a_global)
    matmul.set_tensor_b(b_global)
    matmul.iterate_batch(c_global, batch_a, batch_b, False)
    matmul.end()


def make_tiling(m: int, n: int, k: int) -> asc.adv.TCubeTiling:
    """One core, the whole matrix per core, 32 x 32 x 16 base blocks (float32: C0 = 8)."""
    return asc.adv.TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m, single_core_n=n,
                               single_core_k=k, base_m=32, base_n=32, base_k=16, depth_a1=1, depth_b1=1,
                               step_m=1, step_n=1, step_k_a=1, step_k_b=1, batch_num=3)


def main() -> None:
    config.set_platform(config.Backend.Model)
    batch, m, n, k = 3, 40, 48, 24
    rng = np.random.default_rng(11)
    a = rng.integers(-6, 6, (batch, m, k)).astype(np.float32)
    b = rng.integers(-6, 6, (batch, k, n)).astype(np.float32)
    tiling = make_tiling(m, n, k)
    c = np.zeros((batch, m, n), np.float32)
    batch_matmul_kernel[1, rt.current_stream()](a, b, c, tiling, batch, batch)
    np.testing.assert_array_equal(c, a @ b)             # small integers: exact in float32
    c1 = np.zeros((batch, m, n), np.float32)            # one B for every A
    batch_matmul_kernel[1, rt.current_stream()](a, b[:1].copy(), c1, tiling, batch, 1)
    np.testing.assert_array_equal(c1, a @ b[0])
    print("matmul_api_batch ok")


if __name__ == "__main__":
    main()
