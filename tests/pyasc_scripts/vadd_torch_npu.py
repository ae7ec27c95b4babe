"""Vector add on torch tensors in the NPU's memory, as pyasc scripts written for torch_npu make them.

Inputs come from torch.rand(..., device="npu"), .npu(), .to("npu") and torch.device("npu:0"); the results
are waited for with torch.npu.synchronize() and checked against torch on the CPU.

Usage: vadd_torch_npu.py [TOTAL_LENGTH]
"""
import sys

import torch
import torch_npu  # noqa: F401 - registers the npu device

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt

CORES = 4
TILE = 256


@asc.jit
def vadd(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, per_core: int):
    start = asc.get_block_idx() * per_core
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, per_core)
    y_gm.set_global_buffer(y + start, per_core)
    z_gm.set_global_buffer(z + start, per_core)
    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, 1)
    in_y = asc.TQue(asc.TPosition.VECIN, 1)
    out_z = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(in_x, 1, TILE * x.dtype.sizeof())
    pipe.init_buffer(in_y, 1, TILE * y.dtype.sizeof())
    pipe.init_buffer(out_z, 1, TILE * z.dtype.sizeof())
    for t in range(per_core // TILE):
        xl = in_x.alloc_tensor(x.dtype)
        yl = in_y.alloc_tensor(y.dtype)
        asc.data_copy(xl, x_gm[t * TILE:], TILE)
        asc.data_copy(yl, y_gm[t * TILE:], TILE)
        in_x.enque(xl)
        in_y.enque(yl)
        xl = in_x.deque(x.dtype)
        yl = in_y.deque(y.dtype)
        zl = out_z.alloc_tensor(z.dtype)
        asc.add(zl, xl, yl, TILE)
        out_z.enque(zl)
        in_x.free_tensor(xl)
        in_y.free_tensor(yl)
        zl = out_z.deque(z.dtype)
        asc.data_copy(z_gm[t * TILE:], zl, TILE)
        out_z.free_tensor(zl)


def launch(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x, device="npu")
    vadd[CORES, rt.current_stream()](x, y, z, x.numel() // CORES)
    return z


def main() -> None:
    config.set_platform(config.Backend.NPU)
    assert torch.npu.is_available() and torch.npu.device_count() >= 1
    torch.npu.set_device(0)
    device = torch.device("npu:0")
    total = int(sys.argv[1]) if len(sys.argv) > 1 else CORES * TILE * 2
    torch.manual_seed(11)
    x = torch.rand(total, device="npu", dtype=torch.float32)
    y = torch.randn(total, dtype=torch.float32).npu()
    w = torch.ones(total).to("npu")
    assert x.is_npu and y.is_npu and w.is_npu
    z = launch(x, y)
    z2 = launch(z.to(device), w)
    torch.npu.synchronize()
    torch.testing.assert_close(z.cpu(), x.cpu() + y.cpu(), rtol=0, atol=0)
    torch.testing.assert_close(z2.cpu(), x.cpu() + y.cpu() + 1, rtol=0, atol=0)
    print(f"PYASC-COMPAT vadd_torch_npu ok total={total} device={z2.device}")


if __name__ == "__main__":
    main()
