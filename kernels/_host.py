"""Host-side helpers of the bundled kernels: argument checks, tiling and launch (``run_op``), references."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from npuemu.errors import LaunchError
from npuemu.host import TilingResult, run_op
from npuemu.language import dtype as dt
from npuemu.arrays import as_array
from npuemu.tiling.elementwise import elementwise_tiling
from npuemu.tiling.rows import row_tiling

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


def check_arrays(op: str, **arrays: Any) -> None:
    """Raise :class:`LaunchError` unless every named argument of host function ``op`` is an array."""
    for name, value in arrays.items():
        if as_array(value) is None:
            raise LaunchError(f"{op}: {name} must be an array (a NumPy array, a torch CPU tensor or an "
                              f"npuemu.gm_buffer), got {type(value).__name__}; np.asarray(values, dtype=...) "
                              f"makes one of the dtype the kernel should see")


def check_same(op: str, **arrays: Any) -> None:
    """:func:`check_arrays`, and the arrays share one shape and dtype."""
    check_arrays(op, **arrays)
    first, *rest = (np.asarray(as_array(a)[0]) for a in arrays.values())
    for a in rest:
        if a.shape != first.shape or a.dtype != first.dtype:
            raise LaunchError(f"{op}: inputs must share shape and dtype, got {first.dtype}{list(first.shape)} "
                              f"and {a.dtype}{list(a.shape)}")


def launch_elementwise(kernel: Any, arrays: tuple[Any, ...], *extra: Any, scratch_f32: int = 0, widen: bool = False,
                       core_num: int | None = None, platform: Any = None, **launch: Any) -> TilingResult:
    """Tile ``arrays`` (inputs, then the output; all the same length) and launch ``kernel(*arrays, tiling, *extra)``.

    Every array streams through a double-buffered UB queue; kernels that widen
    16-bit floats to float32 use ``scratch_f32`` float32 scratch tensors per
    tile.  ``widen`` selects the tiling key of a kernel's widening branch.
    """
    d = kernel_dtype(arrays[0])
    scratch = 4 * scratch_f32 if d.sizeof() == 2 else 0
    return run_op(kernel, elementwise_tiling, arrays[:-1], arrays[-1:], args=extra, platform=platform,
                  core_num=core_num, attrs={"scratch_bytes_per_element": scratch, "widen": widen}, **launch)


def launch_rows(kernel: Any, inputs: tuple[Any, ...], output: Any, *extra: Any, core_num: int | None = None,
                platform: Any = None, **launch: Any) -> TilingResult:
    """Tile a row-wise op on ``inputs[0]`` and launch ``kernel(*inputs, output, tiling, *extra)``.

    Launch keywords that are not options are tiling attributes
    (``tile_bytes_per_element``, ``scratch_bytes_per_col``, ``fixed_bytes``,
    ``eps``, ``split_cols``; see tiling/rows.py).
    """
    attrs = {k: launch.pop(k) for k in list(launch) if k in _ROW_ATTRS}
    return run_op(kernel, row_tiling, inputs, (output,), args=extra, platform=platform, core_num=core_num,
                  attrs=attrs, **launch)


_ROW_ATTRS = frozenset({"tile_bytes_per_element", "scratch_bytes_per_col", "fixed_bytes", "eps", "split_cols"})


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
