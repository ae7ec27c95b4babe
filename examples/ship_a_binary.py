"""Build a kernel binary once, save it, and launch it in another process without the kernel's source.

    python examples/ship_a_binary.py            # builds vadd.npubin, then runs it in a fresh process
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


import npuemu.asc as asc


@asc.jit
def scale(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, factor: float, tile: asc.ConstExpr[int]):
    base = asc.get_block_idx() * n
    src, dst = asc.GlobalTensor(), asc.GlobalTensor()
    src.set_global_buffer(x + base, n)
    dst.set_global_buffer(y + base, n)
    pipe = asc.TPipe()
    que_in = asc.TQue(asc.TPosition.VECIN, 2)
    que_out = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que_in, 2, tile * 4)
    pipe.init_buffer(que_out, 2, tile * 4)
    for i in range(n // tile):
        t = que_in.alloc_tensor(asc.float32)
        asc.data_copy(t, src[i * tile:], tile)
        que_in.enque(t)
        t = que_in.deque(asc.float32)
        o = que_out.alloc_tensor(asc.float32)
        asc.muls(o, t, factor, tile)
        que_in.free_tensor(t)
        que_out.enque(o)
        o = que_out.deque(asc.float32)
        asc.data_copy(dst[i * tile:], o, tile)
        que_out.free_tensor(o)


LAUNCH = """
import sys, numpy as np, npuemu
binary = npuemu.load_binary(sys.argv[1])
x = np.arange(8 * 1024, dtype=np.float32)
y = np.empty_like(x)
npuemu.launch(binary, 8, x, y, 1024, 0.5, 256)
assert np.array_equal(y, x * np.float32(0.5))
print(f"launched {binary} from {sys.argv[1]}: y[:4] = {y[:4]}")
"""


def main() -> None:
    binary = scale.compile([asc.float32, asc.float32, int, float, 256])
    print(f"built {binary}\nkey sha256 {binary.sha256}")
    with tempfile.TemporaryDirectory() as tmp:
        archive = binary.save(Path(tmp) / "scale.npubin")
        print(f"saved {archive} ({archive.stat().st_size} bytes)")
        subprocess.run([sys.executable, "-c", LAUNCH, str(archive)], check=True)


if __name__ == "__main__":
    main()
