"""Host-side helpers of the bundled kernels: argument checks, tiling and launch, references."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from npuemu.errors import LaunchError
from npuemu.language import dtype as dt
from npuemu.runtime.args import as_array
from npuemu.tiling.elementwise import elementwise_tiling

BUFFER_NUM = 2

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None


def kernel_dtype(a: Any) -> dt.DataType:
    arr = as_array(a)
    if arr is None:
        raise LaunchError(f"expected an array, got {type(a).__name__}")
    return arr[1]


def check_same(op: str, *arrays: np.ndarray) -> None:
    first = arrays[0]
    for a in arrays[1:]:
        if a.shape != first.shape or a.dtype != first.dtype:
            raise LaunchError(f"{op}: inputs must share shape and dtype, got {first.dtype}{list(first.shape)} "
                              f"and {a.dtype}{list(a.shape)}")


def launch_elementwise(kernel: Any, arrays: tuple[Any, ...], *extra: Any, scratch_f32: int = 0,
                       core_num: int | None = None, **launch: Any) -> None:
    """Tile ``arrays`` (all the same length) and launch ``kernel(*arrays, tiling, *extra)``.

    Every array streams through a double-buffered UB queue; kernels that widen
    16-bit floats to float32 use ``scratch_f32`` float32 scratch tensors per tile.
    """
    first = arrays[0]
    n = int(as_array(first)[0].size)          # also for torch tensors
    d = kernel_dtype(first)
    per_elem = sum(BUFFER_NUM * kernel_dtype(a).sizeof() for a in arrays)
    if d.sizeof() == 2:
        per_elem += 4 * scratch_f32
    tiling, cores = elementwise_tiling(n, d.sizeof(), per_elem, platform=launch.get("platform"),
                                       max_cores=core_num)
    kernel[cores](*arrays, tiling, *extra, **launch)


def bf16_reference(fn: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """Compute in float32 and round once to bfloat16, as the kernels do."""
    wide = [a.astype(np.float32) for a in arrays]
    return np.asarray(fn(*wide), dtype=np.float32).astype(arrays[0].dtype)


def to_dtype(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` converted to the NumPy dtype of kernel dtype ``name`` (bfloat16 via ml_dtypes)."""
    if name == "bfloat16":
        if BF16 is None:
            raise LaunchError("bfloat16 inputs need the ml_dtypes package (pip install ml_dtypes)")
        return values.astype(np.float32).astype(BF16)
    return values.astype(name)
