"""Select a backend and SoC version with asc.runtime.config, then launch.

Usage: platform_select.py BACKEND [PLATFORM_MEMBER]   e.g. "Model Ascend910B4", "NPU"
"""
import sys

import numpy as np

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt


@asc.jit
def block_ids(ids: asc.GlobalAddress, nums: asc.GlobalAddress):
    idx = asc.get_block_idx()
    ids_gm = asc.GlobalTensor()
    nums_gm = asc.GlobalTensor()
    ids_gm.set_global_buffer(ids)
    nums_gm.set_global_buffer(nums)
    ids_gm.set_value(idx, idx)
    nums_gm.set_value(idx, asc.get_block_num())


def main() -> None:
    backend = config.Backend(sys.argv[1])
    member = sys.argv[2] if len(sys.argv) > 2 else None
    soc = getattr(config.Platform, member) if member else None
    config.set_platform(backend, soc)
    expected = soc or config.Platform.Ascend910B1
    assert rt.is_model() == (backend == config.Backend.Model)
    assert rt.get_soc_version() is expected, rt.get_soc_version()
    assert rt.current_platform() == expected.value

    cores = 5
    ids = np.full(cores, -1, dtype=np.int32)
    nums = np.zeros(cores, dtype=np.int32)
    block_ids[cores, rt.current_stream()](ids, nums)
    np.testing.assert_array_equal(ids, np.arange(cores))
    np.testing.assert_array_equal(nums, cores)

    # npuemu-specific check: the launch above was built for the selected profile
    (binary,) = block_ids.binaries()
    assert binary.platform.name == expected.value, binary.platform.name
    print(f"PYASC-COMPAT platform_select ok backend={backend.name} platform={binary.platform.name}")


if __name__ == "__main__":
    main()
