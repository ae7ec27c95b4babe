"""The high-level Matmul API (pyasc ``asc.language.adv.matmul``, Ascend C ``Matmul``).

A ``Matmul`` object computes ``C = A @ B (+ bias)`` for one core's block
(``single_core_m x single_core_n x single_core_k`` of the tiling), in
``base_m x base_n`` tiles of C, on the cube path: A and B move GM -> L1
(ND -> NZ) -> L0A/L0B, ``mmad`` accumulates over K in L0C, ``fixpipe``
writes each tile out.  The frontend expands every method call into those
instructions, so every check of the cube path applies inside them; see
docs/matmul-api.md for the model, the checks and what is not emulated.
"""
from __future__ import annotations

from typing import Any, overload

from .adv_matmul_config import *
from .adv_matmul_config import MatmulConfig, MatmulType
from .adv_tiling import TCubeTiling
from .builtin import builtin, builtin_class
from .core import BaseTensor, GlobalAddress, GlobalTensor, LocalTensor, TPipe

__all__ = [
    "Matmul",
    "MatmulBatchParams",
    "MatmulConfig",
    "MatmulFuncParams",
    "MatmulIterator",
    "MatmulQuantParams",
    "MatmulShapeParams",
    "MatmulType",
    "MatrixOffset",
    "check_type",
    "get_basic_config",
    "get_ib_share_norm_config",
    "get_matmul_api_tiling",
    "get_mdl_config",
    "get_mm_config",
    "get_normal_config",
    "get_special_basic_config",
    "get_special_mdl_config",
    "register_matmul",
]


@builtin_class
class MatrixOffset:
    """Where the last ``iterate()`` tile lies in C: element offset, row, column, height, width."""

    def __init__(self, offset: int = 0, row: int = 0, col: int = 0, height: int = 0, width: int = 0) -> None: ...


@builtin_class
class MatmulIterator:
    """What ``Matmul.iterate()`` returns: true while a tile was computed.

    ``while mm.iterate(): ...`` (Ascend C) and ``with mm.iterate() as count: ...``
    (pyasc; ``count`` numbers the tiles from 0) both run the body once per tile.
    """

    def __init__(self, matmul: Any, partial_sum: bool = False, local_c_matrix: Any = None,
                 sync: bool = True) -> None: ...


@builtin_class
class Matmul:
    """A matmul object (Ascend C ``Matmul<A, B, C, BIAS, CFG>``).

    ``a``, ``b``, ``c`` and ``bias`` are :class:`MatmulType` descriptions,
    ``matmul_config`` a :class:`MatmulConfig` (default ``get_normal_config()``).
    """

    def __init__(self, a: MatmulType | None = None, b: MatmulType | None = None,
                 c: MatmulType | None = None, bias: MatmulType | None = None,
                 matmul_config: MatmulConfig | None = None, matmul_policy: int = 0) -> None: ...

    def init(self, tiling: TCubeTiling) -> None:
        """Take the tiling, allocate the L1/L0 buffers from the registered pipe and check that they fit."""

    @overload
    def set_tensor_a(self, tensor: BaseTensor, transpose: bool = False) -> None: ...
    @overload
    def set_tensor_a(self, scalar: int) -> None: ...
    def set_tensor_a(self, *args: Any, **kwargs: Any) -> None:
        """A (``[M, K]``, or ``[K, M]`` with ``transpose``), or a scalar every element of A equals."""

    @overload
    def set_tensor_b(self, tensor: BaseTensor, transpose: bool = False) -> None: ...
    @overload
    def set_tensor_b(self, scalar: int) -> None: ...
    def set_tensor_b(self, *args: Any, **kwargs: Any) -> None:
        """B (``[K, N]``, or ``[N, K]`` with ``transpose``), or a scalar every element of B equals."""

    def set_bias(self, tensor: BaseTensor) -> None:
        """The bias row (``N`` elements of the bias type), added to every row of C."""

    def disable_bias(self) -> None:
        """Compute without bias from now on."""

    def set_org_shape(self, org_m: int, org_n: int, org_ka: int, org_kb: int | None = None,
                      org_kc: int | None = None) -> None:
        """The whole matrices' shapes (row lengths in GM): A ``org_m x org_ka``, B ``org_kb x org_n``,
        C rows of ``org_kc`` (default ``org_n``) elements."""

    def set_single_shape(self, single_m: int, single_n: int, single_k: int) -> None:
        """This core's block: ``single_m x single_n`` of C over ``single_k``."""

    def set_tail(self, tail_m: int = -1, tail_n: int = -1, tail_k: int = -1) -> None:
        """A smaller last block: the given sizes replace the single-core ones (-1 keeps one)."""

    def iterate(self, en_partial_sum: bool = False, sync: bool = True,
                local_c_matrix: BaseTensor | None = None) -> MatmulIterator:
        """Compute the next ``base_m x base_n`` tile of C into L0C; false when every tile is done."""

    @overload
    def get_tensor_c(self, tensor: BaseTensor, en_atomic: int = 0, en_sequential_write: bool = False,
                     sync: bool = True, optional_tensor: BaseTensor | None = None) -> None: ...
    @overload
    def get_tensor_c(self, en_atomic: int = 0, en_sequential_write: bool = False,
                     sync: bool = True) -> GlobalTensor: ...
    def get_tensor_c(self, *args: Any, **kwargs: Any) -> Any:
        """Write the tile of the last ``iterate()`` to ``tensor`` (GM: at its place in C, or with
        ``en_sequential_write`` at the start of ``tensor`` with rows of ``base_n``)."""

    def iterate_all(self, tensor: BaseTensor, en_atomic: int = 0, sync: bool = True,
                    en_sequential_write: bool | None = None, wait_iterate_all: bool | None = None,
                    fake_msg: bool | None = None) -> None:
        """Compute the whole block of C into ``tensor``."""

    def wait_iterate_all(self) -> None:
        """Wait for an asynchronous ``iterate_all`` (npuemu runs it at once: nothing to wait for)."""

    def iterate_batch(self, tensor: BaseTensor, batch_a: int, batch_b: int, en_sequential_write: bool,
                      matrix_stride_a: int = 0, matrix_stride_b: int = 0, matrix_stride_c: int = 0,
                      en_partial_sum: bool = False, en_atomic: int = 0, sync: bool = True,
                      wait_iterate_batch: bool | None = None) -> None:
        """``max(batch_a, batch_b)`` matmuls of the block, A/B/C matrices ``matrix_stride_*`` elements
        apart (0: a whole matrix)."""

    def iterate_n_batch(self, batch_loop: int, batch_a: int, batch_b: int, en_sequential_write: bool,
                        matrix_stride_a: int = 0, matrix_stride_b: int = 0, matrix_stride_c: int = 0,
                        sync: bool = True, wait_iterate_batch: bool = False) -> None:
        """``batch_loop`` rounds of ``iterate_batch`` into the workspace of ``set_workspace``: round ``r`` takes A
        and B ``r * batch_a`` / ``r * batch_b`` matrices on; ``get_batch_tensor_c`` fetches the rounds in order."""

    def wait_iterate_batch(self) -> None:
        """Wait for an asynchronous ``iterate_batch`` (nothing to wait for)."""

    @overload
    def get_batch_tensor_c(self, batch_a: int, batch_b: int, en_sequential_write: bool = False,
                           sync: bool = True) -> GlobalTensor: ...
    @overload
    def get_batch_tensor_c(self, tensor: LocalTensor, batch_a: int, batch_b: int,
                           en_sequential_write: bool = False, sync: bool = True) -> None: ...
    def get_batch_tensor_c(self, *args: Any, **kwargs: Any) -> Any:
        """The next round of ``iterate_n_batch``: ``max(batch_a, batch_b)`` C matrices, as a GlobalTensor in the
        workspace, or copied into ``tensor`` (UB, MIX kernels)."""

    def set_batch_num(self, batch_a: int, batch_b: int) -> None:
        """The batch counts ``iterate_batch`` uses when the call gives none."""

    def set_hf32(self, enable_hf32: bool = False, trans_mode: int = 0) -> None:
        """float32 inputs rounded to HF32 (``trans_mode`` 1: half away from zero)."""

    def set_quant_scalar(self, quant_scalar: int) -> None:
        """The output quantisation scale (int8 x int8 -> half C: ``float32(acc) * scale``)."""

    def set_quant_vector(self, quant_vector: GlobalTensor) -> None:
        """Per-channel dequantisation (int8 x int8 -> half C): one uint64 quantisation word per column of C."""

    def set_workspace(self, addr: Any, size: int | None = None) -> None:
        """The GM workspace ``iterate_n_batch`` writes its results to (``size`` in bytes)."""

    def get_offset_c(self) -> MatrixOffset:
        """Where the tile of the last ``iterate()`` lies in C."""

    def end(self) -> None:
        """Finish using the object; later calls need a new ``init``."""

    def set_self_define_data(self, data_ptr: Any) -> None:
        """User callback data; not emulated (unsupported at compile time)."""

    def set_sparse_index(self, index_global: GlobalTensor) -> None:
        """Sparse matmul index; not emulated (unsupported at compile time)."""

    def set_user_def_info(self, tiling_ptr: GlobalAddress) -> None:
        """User callback data; not emulated (unsupported at compile time)."""

    def async_get_tensor_c(self, c: LocalTensor) -> None:
        """Asynchronous output; not emulated (unsupported at compile time)."""

    def wait_get_tensor_c(self) -> None:
        """Asynchronous output; not emulated (unsupported at compile time)."""


@builtin
def register_matmul(pipe: TPipe, workspace: Any = None, matmul: Any = None, tiling: Any = None) -> None:
    """Register ``matmul`` with ``pipe`` (Ascend C ``REGIST_MATMUL_OBJ``), then ``matmul.init(tiling)``
    when a tiling is given.  pyasc's ``register_matmul(pipe, matmul, tiling)`` form works too."""
