"""CANN's host matmul tiling library (``matmul_tiling::``), as pyasc's ``asc.lib.host`` serves it.

A host function describes its matmul and asks for a ``TCubeTiling``, which the
kernel's ``asc.adv.Matmul`` reads::

    import npuemu.asc as asc
    from npuemu.host.matmul_tiling import MultiCoreMatmulTiling, TPosition, CubeFormat, DataType

    mm = MultiCoreMatmulTiling("Ascend910B1")          # or a PlatformAscendC, or None: the default platform
    mm.set_dim(24)
    mm.set_a_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT16)
    mm.set_b_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT16)
    mm.set_c_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT)
    mm.set_shape(1024, 1024, 1024)
    tiling = asc.adv.TCubeTiling()
    if mm.get_tiling(tiling) == -1:
        raise RuntimeError(mm.last_error)

Methods are the snake_case spellings of CANN's (``SetDim`` -> ``set_dim``) and
return what CANN's return: setters 0, or -1 for arguments CANN refuses;
``get_tiling`` 0, or -1 when no legal tiling exists.  On -1 :attr:`last_error`
says why, and the reason is logged as a warning on the ``npuemu.host`` logger
prefixed ``MatmulApi Tiling`` (where CANN's log has it).  A tiling returned
with 0 always passes :func:`~npuemu.host.matmul_tiling_check.check_tcube_tiling`.
The algorithm and its assumptions: docs/matmul-tiling.md.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..errors import TilingError, UsageError
from ..platform import Platform, default_platform
from .matmul_tiling_algo import TilingRequest, compute_tiling
from .matmul_tiling_check import check_tcube_tiling
from .matmul_tiling_enums import (UB_POSITIONS, CubeFormat, DataType, DequantType, MatrixMadType, MatrixTraverse,
                                  ScheduleType, TPosition, c0, element_kind)
from .platform_api import PlatformAscendC, PlatformAscendCManager

log = logging.getLogger("npuemu.host")

INT32_MAX = 2**31 - 1
_INPUT_KINDS = ("float16", "bfloat16", "float32", "int8", "int4")
_OUTPUT_KINDS = ("float16", "bfloat16", "float32", "int8", "int32")
_BIAS_KINDS = ("float16", "bfloat16", "float32", "int32")


def get_ascendc_platform() -> PlatformAscendC:
    """The platform of launches that name none (pyasc: the SoC ``config.set_platform`` selected)."""
    return PlatformAscendCManager.get_instance(default_platform().name)


class MatmulConfigParams:
    """``matmul_tiling::MatmulConfigParams``: template (0 Norm, 1 MDL), L1 cache of UB, schedule, traversal, ND2NZ."""

    def __init__(self, mm_config_type: int = 1, enable_l1_cache_ub: bool = False,
                 schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT,
                 traverse: MatrixTraverse = MatrixTraverse.NOSET, en_vec_nd2nz: bool = False) -> None:
        self.mm_config_type = mm_config_type
        self.enable_l1_cache_ub = enable_l1_cache_ub
        self.schedule_type = schedule_type
        self.traverse = traverse
        self.en_vec_nd2nz = en_vec_nd2nz

    def __repr__(self) -> str:
        return (f"MatmulConfigParams(mm_config_type={self.mm_config_type}, enable_l1_cache_ub="
                f"{self.enable_l1_cache_ub}, schedule_type={self.schedule_type!r}, traverse={self.traverse!r}, "
                f"en_vec_nd2nz={self.en_vec_nd2nz})")


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _macs_per_cycle(p: Platform, kind: str) -> float:
    """Cube multiply-adds per cycle for inputs of ``kind`` (int4 assumed twice int8's rate)."""
    rates = dict(p.cube_rate_vs_fp16)
    rate = {"float16": rates.get("fp16", 1.0), "bfloat16": rates.get("fp16", 1.0), "float32": rates.get("fp32", 0.25),
            "int8": rates.get("int8", 2.0), "int4": 2 * rates.get("int8", 2.0)}[kind]
    return max(p.cube_fp16_macs_per_cycle * rate, 1.0)


class _MatType:
    """Position, format, data type and transpose of one of A, B, C, bias (CANN's ``MatTilingType``)."""

    def __init__(self, dtype: DataType = DataType.DT_FLOAT) -> None:
        self.pos, self.format, self.dtype, self.trans = TPosition.GM, CubeFormat.ND, dtype, False


class MatmulApiTilingBase:
    """What the three tiling classes share: the description of the matmul and ``get_tiling``.

    Construct with a :class:`PlatformAscendC` (pyasc), a profile or its name,
    or nothing (the default platform).
    """

    _multi_core = False

    def __init__(self, platform: PlatformAscendC | Platform | str | None = None, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise UsageError(f"{type(self).__name__}(platform) takes one platform argument")
        pa = platform if isinstance(platform, PlatformAscendC) else PlatformAscendC(platform)
        self.platform_ascendc = pa
        self.platform: Platform = pa.platform
        self.a, self.b, self.c, self.bias = _MatType(), _MatType(), _MatType(), _MatType()
        self.is_bias = False
        self.shape: tuple[int, int, int] | None = None
        self.org_shape: tuple[int, int, int, int] | None = None
        self.buffer_space = (-1, -1, -1, -1)          # l1, l0c, ub, bt
        self.fixed_base = (-1, -1, -1)
        self.base_range = (-1,) * 6
        self.traverse = MatrixTraverse.FIRSTM
        self.mad_type = MatrixMadType.NORMAL
        self.dequant_type = DequantType.SCALAR
        self.schedule_type = ScheduleType.INNER_PRODUCT
        self.mm_config_type = 1                        # 0: Norm, 1: MDL (CANN's default)
        self.enable_l1_cache_ub = False
        self.en_vec_nd2nz = False
        self.double_buffer = (True, True, False, False)
        self.sparse = False
        self.layouts = {"a": (0,) * 5, "b": (0,) * 5, "c": (0,) * 5}
        self.batch_num = 0
        self.batch_info: tuple[int, int] | None = None
        self.result: dict[str, int] | None = None
        self.last_error: str | None = None
        """Why the last call returned -1 (None after a success)."""

    # ------------------------------------------------------------------------------------ bookkeeping

    def _refuse(self, reason: str) -> int:
        self.last_error = reason
        log.warning("MatmulApi Tiling: %s", reason)
        return -1

    def _ok(self) -> int:
        self.last_error = None
        return 0

    def _ints(self, what: str, values: tuple[Any, ...], *, minimum: int = 1, free: bool = False) -> str | None:
        """Why ``values`` are not valid (ints in [minimum, INT32_MAX], or -1 when ``free``), or None."""
        for v in values:
            if not _is_int(v) or not ((minimum <= v <= INT32_MAX) or (free and v == -1)):
                need = f"ints >= {minimum}" + (" or -1 (not set)" if free else "")
                return f"{what}: {v!r} is not valid; the values must be {need}"
        return None

    def _set_type(self, which: _MatType, what: str, pos: Any, fmt: Any, dtype: Any, trans: Any = False) -> int:
        try:
            pos, fmt, dtype = TPosition(int(pos)), CubeFormat(int(fmt)), DataType(int(dtype))
        except (TypeError, ValueError):
            return self._refuse(f"{what}: ({pos!r}, {fmt!r}, {dtype!r}) are not a TPosition, CubeFormat and DataType")
        which.pos, which.format, which.dtype, which.trans = pos, fmt, dtype, bool(trans)
        return self._ok()

    # ------------------------------------------------------------------------------------ the description

    def set_a_type(self, pos: TPosition, type: CubeFormat, data_type: DataType, is_trans: bool = False) -> int:
        """A's position, format, data type and whether it is stored transposed (K x M)."""
        return self._set_type(self.a, "set_a_type", pos, type, data_type, is_trans)

    def set_b_type(self, pos: TPosition, type: CubeFormat, data_type: DataType, is_trans: bool = False) -> int:
        """B's position, format, data type and whether it is stored transposed (N x K)."""
        return self._set_type(self.b, "set_b_type", pos, type, data_type, is_trans)

    def set_c_type(self, pos: TPosition, type: CubeFormat, data_type: DataType) -> int:
        """C's position (GM, or a vector position: C staged in UB), format and data type."""
        return self._set_type(self.c, "set_c_type", pos, type, data_type)

    def set_bias_type(self, pos: TPosition, type: CubeFormat, data_type: DataType) -> int:
        """The bias's position, format and data type (used when the bias is enabled)."""
        return self._set_type(self.bias, "set_bias_type", pos, type, data_type)

    def set_dequant_type(self, dequant_type: DequantType) -> int:
        """SCALAR or TENSOR dequantisation of an int32 result (recorded)."""
        try:
            self.dequant_type = DequantType(int(dequant_type))
        except (TypeError, ValueError):
            return self._refuse(f"set_dequant_type: {dequant_type!r} is not a DequantType")
        return self._ok()

    def set_shape(self, m: int, n: int, k: int) -> int:
        """The M, N, K the matmul computes (all of it: the multi-core tiling splits it over the cores)."""
        bad = self._ints("set_shape", (m, n, k))
        if bad:
            return self._refuse(bad)
        self.shape = (int(m), int(n), int(k))
        return self._ok()

    def set_org_shape(self, org_m_in: int, org_n_in: int, org_ka_in: int, org_kb_in: int | None = None) -> int:
        """The original (whole) shapes of A and B: M, N, Ka[, Kb]; the tiling's m, n, k_a, k_b."""
        kb = org_ka_in if org_kb_in is None else org_kb_in
        bad = self._ints("set_org_shape", (org_m_in, org_n_in, org_ka_in, kb))
        if bad:
            return self._refuse(bad)
        self.org_shape = (int(org_m_in), int(org_n_in), int(org_ka_in), int(kb))
        return self._ok()

    def enable_bias(self, is_bias_in: bool = False) -> int:
        """Whether C gets a bias row added (it then needs BiasTable room: baseN bias elements)."""
        self.is_bias = bool(is_bias_in)
        return self._ok()

    def set_bias(self, is_bias_in: bool = False) -> int:
        """The older name of :meth:`enable_bias`."""
        return self.enable_bias(is_bias_in)

    def set_fix_split(self, base_m_in: int = -1, base_n_in: int = -1, base_k_in: int = -1) -> int:
        """Fix baseM/baseN/baseK (-1: the library chooses); get_tiling refuses a fixed base that cannot fit."""
        bad = self._ints("set_fix_split", (base_m_in, base_n_in, base_k_in), free=True)
        if bad:
            return self._refuse(bad)
        self.fixed_base = (int(base_m_in), int(base_n_in), int(base_k_in))
        return self._ok()

    def set_split_range(self, max_base_m: int = -1, max_base_n: int = -1, max_base_k: int = -1,
                        min_base_m: int = -1, min_base_n: int = -1, min_base_k: int = -1) -> int:
        """Bounds on the base block the library may choose (-1: no bound)."""
        values = (max_base_m, max_base_n, max_base_k, min_base_m, min_base_n, min_base_k)
        bad = self._ints("set_split_range", values, free=True)
        if bad:
            return self._refuse(bad)
        self.base_range = tuple(int(v) for v in values)
        return self._ok()

    def set_buffer_space(self, l1_size: int = -1, l0_c_size: int = -1, ub_size: int = -1, bt_size: int = -1) -> int:
        """Bytes of L1, L0C, UB and BiasTable the matmul may use (-1: all of the platform's)."""
        p = self.platform
        sizes = (l1_size, l0_c_size, ub_size, bt_size)
        bad = self._ints("set_buffer_space", sizes, minimum=0, free=True)
        if bad:
            return self._refuse(bad)
        for v, name, cap in zip(sizes, ("L1", "L0C", "UB", "BiasTable"),
                                (p.l1_size, p.l0c_size, p.ub_size, p.bt_size)):
            if v > cap:
                return self._refuse(f"set_buffer_space: {v} bytes of {name} asked, {p.name} has {cap}")
        self.buffer_space = tuple(int(v) for v in sizes)
        return self._ok()

    def set_traverse(self, traverse: MatrixTraverse) -> int:
        """FIRSTM (iterate_order 0) or FIRSTN (1): the order a core walks its base blocks of C."""
        try:
            traverse = MatrixTraverse(int(traverse))
        except (TypeError, ValueError):
            return self._refuse(f"set_traverse: {traverse!r} is not a MatrixTraverse")
        if traverse == MatrixTraverse.NOSET:
            return self._refuse("set_traverse: NOSET is not a traversal; use FIRSTM or FIRSTN")
        self.traverse = traverse
        return self._ok()

    def set_mad_type(self, mad_type: MatrixMadType) -> int:
        """NORMAL or HF32 (float32 inputs multiplied as hf32); MXMODE needs a 950 part."""
        try:
            mad_type = MatrixMadType(int(mad_type))
        except (TypeError, ValueError):
            return self._refuse(f"set_mad_type: {mad_type!r} is not a MatrixMadType")
        if mad_type == MatrixMadType.MXMODE:
            return self._refuse("set_mad_type: MXMODE (micro-scaled matmul) needs an Ascend 950 part; npuemu "
                                "emulates A2/A3")
        self.mad_type = mad_type
        return self._ok()

    def set_double_buffer(self, a: bool, b: bool, c: bool, bias: bool, trans_nd2nz: bool = True,
                          trans_nz2nd: bool = True) -> int:
        """Double buffer A and B in L1 (default on) and C in L0C (default off, used when two blocks fit)."""
        self.double_buffer = (bool(a), bool(b), bool(c), bool(bias))
        return self._ok()

    def set_matmul_config_params(self, mm_config_type_in: Any = 1, enable_l1_cache_ub_in: bool = False,
                                 schedule_type_in: ScheduleType = ScheduleType.INNER_PRODUCT,
                                 traverse_in: MatrixTraverse = MatrixTraverse.NOSET,
                                 en_vec_nd2nz_in: bool = False) -> None:
        """The kernel's template (0 Norm, 1 MDL) and options; or one :class:`MatmulConfigParams`."""
        if isinstance(mm_config_type_in, MatmulConfigParams):
            p = mm_config_type_in
            mm_config_type_in, enable_l1_cache_ub_in, schedule_type_in, traverse_in, en_vec_nd2nz_in = (
                p.mm_config_type, p.enable_l1_cache_ub, p.schedule_type, p.traverse, p.en_vec_nd2nz)
        if int(mm_config_type_in) not in (0, 1):
            raise UsageError(f"set_matmul_config_params: mm_config_type must be 0 (Norm) or 1 (MDL), got "
                             f"{mm_config_type_in!r}")
        self.mm_config_type = int(mm_config_type_in)
        self.enable_l1_cache_ub = bool(enable_l1_cache_ub_in)
        self.schedule_type = ScheduleType(int(schedule_type_in))
        if MatrixTraverse(int(traverse_in)) != MatrixTraverse.NOSET:
            self.traverse = MatrixTraverse(int(traverse_in))
        self.en_vec_nd2nz = bool(en_vec_nd2nz_in)

    def set_sparse(self, is_sparse_in: bool = False) -> int:
        """Sparse (4:2) B; recorded (npuemu's tiling is the dense one)."""
        self.sparse = bool(is_sparse_in)
        return self._ok()

    def _set_layout(self, which: str, values: tuple[Any, ...]) -> int:
        bad = self._ints(f"set_{which}_layout", values, minimum=0)
        if bad:
            return self._refuse(bad)
        self.layouts[which] = tuple(int(v) for v in values)
        return self._ok()

    def set_a_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """A's B, S, N, G, D axes (BSNGD/SBNGD/BNGS1S2 layouts of iterate_batch)."""
        return self._set_layout("a", (b, s, n, g, d))

    def set_b_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        return self._set_layout("b", (b, s, n, g, d))

    def set_c_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        return self._set_layout("c", (b, s, n, g, d))

    def set_batch_num(self, batch: int) -> int:
        """Batches of one iterate_batch call (the larger of A's and B's)."""
        bad = self._ints("set_batch_num", (batch,))
        if bad:
            return self._refuse(bad)
        self.batch_num = int(batch)
        return self._ok()

    def set_batch_info_for_normal(self, batch_a: int, batch_b: int, m: int, n: int, k: int) -> int:
        """Batches of A and B and the shape of one matmul (NORMAL layout)."""
        bad = self._ints("set_batch_info_for_normal", (batch_a, batch_b, m, n, k))
        if bad:
            return self._refuse(bad)
        self.batch_info = (int(batch_a), int(batch_b))
        self.batch_num = max(int(batch_a), int(batch_b))
        return self.set_shape(m, n, k)

    # ------------------------------------------------------------------------------------ results

    def get_base_m(self) -> int:
        """baseM of the last successful get_tiling (0 before)."""
        return self.result["base_m"] if self.result else 0

    def get_base_n(self) -> int:
        return self.result["base_n"] if self.result else 0

    def get_base_k(self) -> int:
        return self.result["base_k"] if self.result else 0

    def _cores(self) -> int:
        return 1

    def _request(self) -> TilingRequest:
        """The request the setters describe; raises TilingError for descriptions no tiling can serve."""
        if self.shape is None and self.org_shape is None:
            raise TilingError("no shape: call set_shape(M, N, K) (or set_org_shape) before get_tiling")
        org = self.org_shape or (*self.shape, self.shape[2])          # type: ignore[misc]
        shape = self.shape or (org[0], org[1], min(org[2], org[3]))
        if shape[0] > org[0] or shape[1] > org[1] or shape[2] > min(org[2], org[3]):
            raise TilingError(f"the shape {shape} set exceeds the original shape {org} (set_org_shape)")
        kinds = {}
        for name, mt, allowed in (("A", self.a, _INPUT_KINDS), ("B", self.b, _INPUT_KINDS),
                                  ("C", self.c, _OUTPUT_KINDS), ("bias", self.bias, _BIAS_KINDS)):
            try:
                kinds[name] = element_kind(mt.dtype)
            except UsageError:
                kinds[name] = None
            if kinds[name] not in allowed and (name != "bias" or self.is_bias):
                raise TilingError(f"{name} of type {mt.dtype.name} is not supported by the cube (allowed: "
                                  f"{', '.join(allowed)})")
        a, b = kinds["A"], kinds["B"]
        if a != b:
            raise TilingError(f"A ({self.a.dtype.name}) and B ({self.b.dtype.name}) must have the same type")
        if self.mad_type == MatrixMadType.HF32 and a != "float32":
            raise TilingError("set_mad_type(HF32) needs float32 A and B")
        for name, mt, rows, k_org in (("A", self.a, shape[0], org[2]), ("B", self.b, shape[1], org[3])):
            unit = c0(kinds[name])
            if mt.format == CubeFormat.NZ and (rows % 16 or k_org % unit or shape[2] % unit):
                raise TilingError(f"{name} is NZ: {'M' if name == 'A' else 'N'} ({rows}) must be a multiple of 16 "
                                  f"and K ({shape[2]}, original {k_org}) of C0 = {unit}")
        p = self.platform
        space = [v if v >= 0 else cap for v, cap in zip(self.buffer_space,
                                                         (p.l1_size, p.l0c_size, p.ub_size, p.bt_size))]
        return TilingRequest(
            a=a, b=b, c=kinds["C"], bias=kinds["bias"] or "float32", a_trans=self.a.trans, b_trans=self.b.trans,
            a_nz=self.a.format == CubeFormat.NZ, b_nz=self.b.format == CubeFormat.NZ,
            c_in_ub=self.c.pos in UB_POSITIONS, is_bias=self.is_bias, shape=shape, cores=self._cores(),
            l1=space[0], l0a=p.l0a_size, l0b=p.l0b_size, l0c=space[1], ub=space[2], bt=space[3],
            split_k=self._split_k(), fixed_single=self._fixed_single(), single_range=self._single_range(),
            align_split=self._align_split(), fixed_base=self.fixed_base, base_range=self.base_range,
            db_l1_a=self.double_buffer[0], db_l1_b=self.double_buffer[1], db_l0c=self.double_buffer[2],
            org_k=(org[2], org[3]), multi_core=self._multi_core, macs_per_cycle=_macs_per_cycle(p, a),
            gm_bytes_per_cycle=float(max(p.ddr_rate, 1)))

    def _split_k(self) -> bool:
        return False

    def _fixed_single(self) -> tuple[int, int, int]:
        return (-1, -1, -1)

    def _single_range(self) -> tuple[int, ...]:
        return (-1,) * 6

    def _align_split(self) -> tuple[int, int, int]:
        return (-1, -1, -1)

    def _batch_fields(self) -> dict[str, int]:
        return dict(batch_m=1, batch_n=1, single_batch_m=1, single_batch_n=1, batch_num=self.batch_num)

    def check_result(self, values: dict[str, int], req: TilingRequest) -> list[str]:
        """The legality rules the computed values break (none, unless the search has a bug)."""
        return check_tcube_tiling(
            _Values(values), self.platform, req.a, req.b, req.c, req.bias if req.is_bias else None, req.a_trans,
            req.b_trans, shape=req.shape, core_num=req.cores, a_format="NZ" if req.a_nz else "ND",
            b_format="NZ" if req.b_nz else "ND", split_k=req.split_k, mdl=self.mm_config_type == 1,
            c_in_ub=req.c_in_ub, l1_size=req.l1, l0c_size=req.l0c, ub_size=req.ub, bt_size=req.bt)

    def get_tiling(self, tiling: Any) -> int:
        """Fill ``tiling`` (an ``asc.adv.TCubeTiling``) and return 0, or return -1 and say why in :attr:`last_error`.

        ``tiling`` is left untouched on -1.
        """
        try:
            req = self._request()
            values = compute_tiling(req)
        except TilingError as exc:
            self.result = None
            return self._refuse(str(exc))
        org = self.org_shape or (*req.shape, req.shape[2])
        values.update(m=org[0], n=org[1], k_a=org[2], k_b=org[3], trans_length=0,
                      iterate_order=1 if self.traverse == MatrixTraverse.FIRSTN else 0,
                      share_mode=0, share_l1_size=0, share_l0c_size=0, share_ub_size=0,
                      depth_a_l1_cache_ub=0, depth_b_l1_cache_ub=0)
        values.update(self._batch_fields())
        for which, axes in (("a", "bsngd"), ("b", "bsngd"), ("c", ("b", "s1", "n", "g", "s2"))):
            for axis, v in zip(axes, self.layouts[which]):
                values[f"{which}_layout_info_{axis}"] = v
        problems = self.check_result(values, req)
        if problems:            # never hand out a tiling the kernel side would refuse
            self.result = None
            return self._refuse("the computed tiling breaks " + "; ".join(problems))
        missing = [f for f in values if not hasattr(tiling, f) and f not in _OPTIONAL_FIELDS]
        if missing:
            raise UsageError(f"get_tiling: {type(tiling).__name__} is not a TCubeTiling (no {', '.join(missing)}); "
                             f"pass asc.adv.TCubeTiling()")
        for name, v in values.items():
            if hasattr(tiling, name):
                setattr(tiling, name, int(v))
        self.result = values
        return self._ok()


# fields of TCubeTiling that MatmulApiStaticTiling lacks
_OPTIONAL_FIELDS = {"batch_m", "batch_n", "single_batch_m", "single_batch_n"}


class _Values:
    """A dict of field values seen as a tiling object by the checker."""

    def __init__(self, values: dict[str, int]) -> None:
        self.__dict__.update(values)


class MatmulApiTiling(MatmulApiTilingBase):
    """Single-core matmul tiling: the core computes all of ``set_shape``'s M x N (``used_core_num`` 1)."""


class MultiCoreMatmulTiling(MatmulApiTilingBase):
    """Multi-core matmul tiling: C (and K with split-K) is split over up to ``set_dim`` cores."""

    _multi_core = True

    def __init__(self, platform: PlatformAscendC | Platform | str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(platform, *args, **kwargs)
        self.dim: int | None = None
        self.split_k = False
        self.single_shape = (-1, -1, -1)
        self.single_range = (-1,) * 6
        self.align_split = (-1, -1, -1)

    def set_dim(self, dim: int) -> int:
        """Cores the split may use: up to the AIC count (cube only) or the AIV count (MIX, separated parts)."""
        cap = max(self.platform.aic_count, self.platform.aiv_count)
        if not _is_int(dim) or not 1 <= dim <= cap:
            return self._refuse(f"set_dim: {dim!r} cores asked, {self.platform.name} has 1 to {cap} "
                                f"({self.platform.aic_count} AIC, {self.platform.aiv_count} AIV)")
        self.dim = int(dim)
        return self._ok()

    def enable_multi_core_split_k(self, flag: bool) -> None:
        """Also split K over cores (each core then adds its partial C into GM)."""
        self.split_k = bool(flag)

    def set_split_k(self, flag: bool) -> None:
        """The older name of :meth:`enable_multi_core_split_k`."""
        self.enable_multi_core_split_k(flag)

    def set_single_shape(self, single_m_in: int = -1, single_n_in: int = -1, single_k_in: int = -1) -> int:
        """Fix singleCoreM/N/K (-1: the library chooses)."""
        values = (single_m_in, single_n_in, single_k_in)
        bad = self._ints("set_single_shape", values, free=True)
        if bad:
            return self._refuse(bad)
        self.single_shape = tuple(int(v) for v in values)
        return self._ok()

    def set_single_range(self, max_m: int = -1, max_n: int = -1, max_k: int = -1, min_m: int = -1,
                         min_n: int = -1, min_k: int = -1) -> int:
        """Bounds on singleCoreM/N/K (-1: no bound)."""
        values = (max_m, max_n, max_k, min_m, min_n, min_k)
        bad = self._ints("set_single_range", values, free=True)
        if bad:
            return self._refuse(bad)
        self.single_range = tuple(int(v) for v in values)
        return self._ok()

    def set_align_split(self, align_m: int, align_n: int, align_k: int) -> int:
        """Round singleCoreM/N/K up to multiples of these (-1: 16, 16 and baseK's unit)."""
        values = (align_m, align_n, align_k)
        bad = self._ints("set_align_split", values, free=True)
        if bad:
            return self._refuse(bad)
        self.align_split = tuple(int(v) for v in values)
        return self._ok()

    def get_core_num(self) -> int:
        """Cores the last successful tiling uses (``used_core_num``); before one, the cores set (set_dim)."""
        return self.result["used_core_num"] if self.result else self._cores()

    def get_single_shape(self) -> tuple[int, int, int]:
        """(singleCoreM, singleCoreN, singleCoreK) of the last successful tiling ((0, 0, 0) before)."""
        if not self.result:
            return (0, 0, 0)
        return (self.result["single_core_m"], self.result["single_core_n"], self.result["single_core_k"])

    def _cores(self) -> int:
        return self.dim if self.dim is not None else self.platform_ascendc.get_core_num_aic()

    def _split_k(self) -> bool:
        return self.split_k

    def _fixed_single(self) -> tuple[int, int, int]:
        return self.single_shape

    def _single_range(self) -> tuple[int, ...]:
        return self.single_range

    def _align_split(self) -> tuple[int, int, int]:
        return self.align_split


class BatchMatmulTiling(MatmulApiTilingBase):
    """Batched matmul tiling: the tiling of one matmul of ``set_batch_info_for_normal``'s shape, with the batches.

    One core runs the batches one after another (``single_batch_m`` =
    ``single_batch_n`` = 1); ``batch_m``/``batch_n`` are A's and B's batch
    counts and ``batch_num`` the larger.
    """

    def get_core_num(self) -> int:
        """Cores the tiling uses (1)."""
        return self.result["used_core_num"] if self.result else 1

    def _batch_fields(self) -> dict[str, int]:
        batch_a, batch_b = self.batch_info or (max(self.batch_num, 1),) * 2
        return dict(batch_m=batch_a, batch_n=batch_b, single_batch_m=1, single_batch_n=1,
                    batch_num=max(self.batch_num, batch_a, batch_b))


# the names pyasc's asc.lib.host serves
HOST_NAMES: dict[str, Any] = {
    "MatmulConfigParams": MatmulConfigParams, "MatmulApiTilingBase": MatmulApiTilingBase,
    "MatmulApiTiling": MatmulApiTiling, "MultiCoreMatmulTiling": MultiCoreMatmulTiling,
    "BatchMatmulTiling": BatchMatmulTiling, "CubeFormat": CubeFormat, "DataType": DataType,
    "DequantType": DequantType, "MatrixMadType": MatrixMadType, "MatrixTraverse": MatrixTraverse,
    "ScheduleType": ScheduleType, "TPosition": TPosition, "PlatformAscendC": PlatformAscendC,
    "PlatformAscendCManager": PlatformAscendCManager, "get_ascendc_platform": get_ascendc_platform,
}

__all__ = [*HOST_NAMES, "HOST_NAMES"]
