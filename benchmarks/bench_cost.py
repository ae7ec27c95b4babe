"""The cost model's predicted device time (docs/cost-model.md), tracked so a change shows in asv's history.

``PredictedDeviceTime`` runs each bundled kernel (npuemu/kernels, the demo
shapes of kernels/catalog.py) once with ``profile=True`` and reports the
task's estimated duration on the NPU in microseconds (launch overhead
included) and the cores' part alone.  ``PipelineVariants`` does the same for
the variants of one kernel whose directions docs/cost-model.md states ("Does
it move the right way"): one core vs many, small vs large copies, single vs
double buffering, the scalar unit vs the vector unit.  These are model
predictions, not measurements of the emulator: they change only when a kernel
or the model does.
"""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc
from npuemu.cost import Profile, record_profiles
from npuemu.kernels.catalog import BY_NAME, KERNELS


def _profile(run) -> list[Profile]:
    with record_profiles() as got:
        run()
    return got


class PredictedDeviceTime:
    """Each bundled kernel at its demo shape in its first dtype, on Ascend910B1."""

    params = [k.name for k in KERNELS]
    param_names = ["kernel"]
    timeout = 600

    def setup(self, name: str) -> None:
        k = BY_NAME[name]
        inputs = k.make_inputs(np.random.default_rng(0), k.dtypes[0], k.demo_shape)
        self.profiles = _profile(lambda: k.run(*inputs, profile=True))

    def track_task_us(self, name: str) -> float:
        return sum(p.task_us for p in self.profiles)

    track_task_us.unit = "us"  # type: ignore[attr-defined]

    def track_kernel_us(self, name: str) -> float:
        return sum(p.kernel_us for p in self.profiles)

    track_kernel_us.unit = "us"  # type: ignore[attr-defined]


@asc.jit
def vadd_tiles(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int,
          tile: asc.ConstExpr[int], bufs: asc.ConstExpr[int]):
    """z = x + y in tiles of ``tile`` floats through queues ``bufs`` deep: CopyIn (MTE2), Compute (V),
    CopyOut (MTE3).  tests/test_cost_model.py times its variants too."""
    per_core = n // asc.get_block_num()
    base = asc.get_block_idx() * per_core
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + base, per_core)
    yg.set_global_buffer(y + base, per_core)
    zg.set_global_buffer(z + base, per_core)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, bufs)
    qy = asc.TQue(asc.TPosition.VECIN, bufs)
    qz = asc.TQue(asc.TPosition.VECOUT, bufs)
    pipe.init_buffer(qx, bufs, tile * 4)
    pipe.init_buffer(qy, bufs, tile * 4)
    pipe.init_buffer(qz, bufs, tile * 4)
    for i in range(per_core // tile):
        lx = qx.alloc_tensor(asc.float32)
        ly = qy.alloc_tensor(asc.float32)
        asc.data_copy(lx, xg[i * tile:], tile)
        asc.data_copy(ly, yg[i * tile:], tile)
        qx.enque(lx)
        qy.enque(ly)
        a = qx.deque(asc.float32)
        b = qy.deque(asc.float32)
        c = qz.alloc_tensor(asc.float32)
        asc.add(c, a, b, tile)
        qz.enque(c)
        qx.free_tensor(a)
        qy.free_tensor(b)
        o = qz.deque(asc.float32)
        asc.data_copy(zg[i * tile:], o, tile)
        qz.free_tensor(o)


# variant: (cores, tile floats, queue depth) of a 1 Mi-float add
VARIANTS = {
    "1 core, 32 KiB copies, depth 2": (1, 8192, 2),
    "8 cores, 32 KiB copies, depth 2": (8, 8192, 2),
    "40 cores, 32 KiB copies, depth 2": (40, 8192, 2),
    "8 cores, 2 KiB copies, depth 2": (8, 512, 2),
    "8 cores, 32 KiB copies, depth 1": (8, 8192, 1),
}


class PipelineVariants:
    """One elementwise kernel in the variants docs/cost-model.md's direction table lists."""

    params = list(VARIANTS)
    param_names = ["variant"]
    timeout = 600

    def setup(self, variant: str) -> None:
        cores, tile, bufs = VARIANTS[variant]
        n = 40 * 8192 * 4
        rng = np.random.default_rng(0)
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        z = np.empty_like(x)
        self.profile = vadd_tiles[cores](x, y, z, n, tile, bufs, profile=True)

    def track_task_us(self, variant: str) -> float:
        return self.profile.task_us

    track_task_us.unit = "us"  # type: ignore[attr-defined]
