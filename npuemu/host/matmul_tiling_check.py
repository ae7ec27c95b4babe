"""Legality of a matmul tiling (``TCubeTiling``) on a platform, for given A/B/C/bias types.

:func:`check_tcube_tiling` lists every rule of superkernel-binaries-tiling.md
§3.6 (and CANN's ``TCubeTiling`` documentation) that a tiling breaks; an empty
list means the kernel side may run it.  :func:`validate_tcube_tiling` raises a
:class:`~npuemu.errors.TilingError` with the same list.  The host tiling
library (``npuemu.host.matmul_tiling``) never returns a tiling this checker
refuses; the kernel side can check a tiling it is handed the same way.

The rules (each message starts with the rule's name):

* ``fields``: the shapes, bases, steps, depths and core count are positive;
  ``db_l0a/b/c`` are 1 or 2, ``iterate_order`` 0 or 1, ``is_bias`` 0 or 1;
* ``shape``: the computed shape (``shape=``, else ``(m, n, k_a)``) fits the
  original one; ``single_core_m <= M``, ``single_core_n <= N``,
  ``single_core_k == K`` (``<= K`` with split-K);
* ``cores``: ``used_core_num <= cores`` (``core_num=``, else the platform's
  larger core count: a MIX matmul is started from the AIVs) and
  ``used_core_num == ceil(M/singleCoreM) * ceil(N/singleCoreN)`` (times
  ``ceil(K/singleCoreK)`` with split-K): the cores cover C exactly;
* ``L0A``/``L0B``/``L0C``/``BiasTable``: ``baseM*baseK*sizeof(A)*dbL0A <= L0A``,
  ``baseN*baseK*sizeof(B)*dbL0B <= L0B``, ``baseM*baseN*4*dbL0C <= L0C``,
  ``baseN*sizeof(bias) <= BiasTable`` (``<=``: CANN's default base fills L0B and
  L0C exactly);
* ``depth``: ``depthA1 = stepM*stepKa*db`` and ``depthB1 = stepN*stepKb*db``,
  db 1 or 2;
* ``L1``: ``AL1 + BL1 (+ baseN*sizeof(bias)) <= L1``, each base block counted at
  its fractal-padded size in L1 (:func:`l1_bytes`), which is never below the
  §3.6 formula;
* ``alignment``: baseM and baseN multiples of 16, baseK of C0(A) when A is not
  transposed and B is, else of 16; ``baseM <= singleCoreM`` and ``baseN <=
  singleCoreN`` rounded up to 16 (SetFixSplit's rule); NZ inputs: M/N and
  singleCoreM/N multiples of 16, K and singleCoreK of C0;
* ``MDL`` (``mdl=True``, CANN's default template): ``Ka/baseK > stepKa`` forces
  ``stepM == 1``, ``Kb/baseK > stepKb`` forces ``stepN == 1``, and the K loads
  of A and B divide one another;
* ``UB`` (``c_in_ub=True``: C is written to a vector position): a
  ``baseM x baseN`` block of C fits the UB.

Capacities are the platform's, or the ``l1_size``/``l0c_size``/``ub_size``/
``bt_size`` given (``SetBufferSpace``).  The tiling may be an
``npuemu.adv.TCubeTiling`` (snake_case fields) or the bundled kernels'
``npuemu.tiling.matmul.TCubeTiling`` (CANN's camelCase names).
"""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import TilingError
from ..platform import Platform, get_platform
from .matmul_tiling_enums import ELEMENT_BYTES, c0, element_kind

FRACTAL = 16        # M/N granularity of the cube and of L1 fractals
ACCUM_BYTES = 4     # an L0C element: float32 or int32

# snake_case field -> CANN's camelCase name
_CAMEL = {
    "used_core_num": "usedCoreNum", "m": "M", "n": "N", "k_a": "Ka", "k_b": "Kb", "single_core_m": "singleCoreM",
    "single_core_n": "singleCoreN", "single_core_k": "singleCoreK", "base_m": "baseM", "base_n": "baseN",
    "base_k": "baseK", "depth_a1": "depthA1", "depth_b1": "depthB1", "step_m": "stepM", "step_n": "stepN",
    "step_k_a": "stepKa", "step_k_b": "stepKb", "is_bias": "isBias", "iterate_order": "iterateOrder",
    "db_l0a": "dbL0A", "db_l0b": "dbL0B", "db_l0c": "dbL0C",
}


def _align(n: int, unit: int) -> int:
    return -(-n // unit) * unit


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def read_fields(tiling: Any) -> dict[str, int]:
    """The fields the rules use, by snake_case name, from either spelling of TCubeTiling."""
    out = {}
    for snake, camel in _CAMEL.items():
        value = getattr(tiling, snake, None)
        if value is None:
            value = getattr(tiling, camel, None)
        if value is None:
            raise TilingError(f"{type(tiling).__name__} has no field {snake} (or {camel}): not a TCubeTiling")
        out[snake] = int(value)
    return out


def l1_block_bytes(rows_16: int, cols_c0: int, kind: str) -> int:
    """Bytes of one L1 block stored as fractals: ``rows_16`` padded to 16, ``cols_c0`` to C0 of ``kind``."""
    return int(_align(rows_16, FRACTAL) * _align(cols_c0, c0(kind)) * ELEMENT_BYTES[kind])


def l1_bytes(t: dict[str, int], a: str, b: str, bias: str | None, a_trans: bool, b_trans: bool) -> tuple[int, int, int]:
    """(AL1, BL1, bias) bytes a tiling stages in L1.

    A base block of A (``baseM x baseK``) is stored with 16 rows of M and C0
    columns of K per fractal, or, transposed, 16 rows of K and C0 columns of
    M; B (``baseK x baseN``) likewise with K and N.  ``depthA1``/``depthB1``
    blocks of each are staged.
    """
    a_block = l1_block_bytes(t["base_k"], t["base_m"], a) if a_trans else l1_block_bytes(t["base_m"], t["base_k"], a)
    b_block = l1_block_bytes(t["base_n"], t["base_k"], b) if b_trans else l1_block_bytes(t["base_k"], t["base_n"], b)
    bias_bytes = int(t["base_n"] * ELEMENT_BYTES[bias]) if (t["is_bias"] and bias) else 0
    return a_block * t["depth_a1"], b_block * t["depth_b1"], bias_bytes


def base_k_unit(a: str, a_trans: bool, b_trans: bool) -> int:
    """baseK's alignment: C0 of A when A is not transposed and B is, else 16 (§3.6)."""
    return c0(a) if (not a_trans and b_trans) else FRACTAL


def check_tcube_tiling(tiling: Any, platform: Platform | str | Any, a_dtype: Any, b_dtype: Any, c_dtype: Any,
                       bias_dtype: Any = None, a_trans: bool = False, b_trans: bool = False, *,
                       shape: Sequence[int] | None = None, core_num: int | None = None, a_format: Any = "ND",
                       b_format: Any = "ND", split_k: bool = False, mdl: bool = False, c_in_ub: bool = False,
                       l1_size: int | None = None, l0c_size: int | None = None, ub_size: int | None = None,
                       bt_size: int | None = None) -> list[str]:
    """Every rule ``tiling`` breaks on ``platform`` for these types (empty: legal); see the module doc.

    Dtypes are :class:`~npuemu.host.matmul_tiling_enums.DataType` members or
    npuemu dtype names; ``bias_dtype=None`` with ``is_bias`` set means float32.
    ``shape`` is the ``(M, N, K)`` computed (``set_shape``) when it differs
    from the original shape in the tiling.
    """
    p = get_platform(getattr(platform, "platform", platform))
    a, b, c = element_kind(a_dtype), element_kind(b_dtype), element_kind(c_dtype)
    bias = element_kind(bias_dtype) if bias_dtype is not None else "float32"
    t = read_fields(tiling)
    l1 = p.l1_size if l1_size is None else l1_size
    l0c = p.l0c_size if l0c_size is None else l0c_size
    ub = p.ub_size if ub_size is None else ub_size
    bt = p.bt_size if bt_size is None else bt_size
    bad: list[str] = []

    def need(ok: bool, message: str) -> None:
        if not ok:
            bad.append(message)

    # fields
    for name in ("m", "n", "k_a", "k_b", "single_core_m", "single_core_n", "single_core_k", "base_m", "base_n",
                 "base_k", "step_m", "step_n", "step_k_a", "step_k_b", "depth_a1", "depth_b1", "used_core_num"):
        need(t[name] > 0, f"fields: {name} = {t[name]} must be positive")
    for name in ("db_l0a", "db_l0b", "db_l0c"):
        need(t[name] in (1, 2), f"fields: {name} = {t[name]} must be 1 or 2")
    need(t["iterate_order"] in (0, 1), f"fields: iterate_order = {t['iterate_order']} must be 0 (M first) or 1 "
                                       f"(N first)")
    need(t["is_bias"] in (0, 1), f"fields: is_bias = {t['is_bias']} must be 0 or 1")
    if bad:
        return bad

    # shapes
    if shape is None:
        need(t["k_a"] == t["k_b"], f"shape: k_a ({t['k_a']}) and k_b ({t['k_b']}) differ; pass shape=(M, N, K)")
        big_m, big_n, big_k = t["m"], t["n"], t["k_a"]
    else:
        big_m, big_n, big_k = (int(v) for v in shape)
        need(big_m <= t["m"] and big_n <= t["n"] and big_k <= min(t["k_a"], t["k_b"]),
             f"shape: the computed shape ({big_m}, {big_n}, {big_k}) exceeds the original shape "
             f"(m={t['m']}, n={t['n']}, k_a={t['k_a']}, k_b={t['k_b']})")
    scm, scn, sck = t["single_core_m"], t["single_core_n"], t["single_core_k"]
    need(scm <= big_m, f"shape: single_core_m {scm} > M {big_m}")
    need(scn <= big_n, f"shape: single_core_n {scn} > N {big_n}")
    if split_k:
        need(sck <= big_k, f"shape: single_core_k {sck} > K {big_k}")
    else:
        need(sck == big_k, f"shape: single_core_k {sck} != K {big_k} (K is split over cores only with split-K)")

    # cores
    cores = core_num if core_num is not None else max(p.aic_count, p.aiv_count)
    need(t["used_core_num"] <= cores, f"cores: used_core_num {t['used_core_num']} > {cores} cores"
                                      f"{'' if core_num is not None else f' of {p.name}'}")
    blocks = _cdiv(big_m, scm) * _cdiv(big_n, scn) * (_cdiv(big_k, sck) if split_k else 1)
    need(t["used_core_num"] == blocks,
         f"cores: used_core_num {t['used_core_num']} != ceil(M/single_core_m) * ceil(N/single_core_n)"
         f"{' * ceil(K/single_core_k)' if split_k else ''} = {blocks}: the cores must cover C exactly once")

    # L0 and the bias table
    bm, bn, bk = t["base_m"], t["base_n"], t["base_k"]
    l0a = bm * bk * ELEMENT_BYTES[a] * t["db_l0a"]
    l0b = bn * bk * ELEMENT_BYTES[b] * t["db_l0b"]
    l0c_use = bm * bn * ACCUM_BYTES * t["db_l0c"]
    need(l0a <= p.l0a_size, f"L0A: base_m*base_k*sizeof(A)*db_l0a = {bm}*{bk}*{ELEMENT_BYTES[a]:g}*{t['db_l0a']} = "
                            f"{l0a:g} > L0A {p.l0a_size}")
    need(l0b <= p.l0b_size, f"L0B: base_n*base_k*sizeof(B)*db_l0b = {bn}*{bk}*{ELEMENT_BYTES[b]:g}*{t['db_l0b']} = "
                            f"{l0b:g} > L0B {p.l0b_size}")
    need(l0c_use <= l0c, f"L0C: base_m*base_n*4*db_l0c = {bm}*{bn}*4*{t['db_l0c']} = {l0c_use} > L0C {l0c}")
    if t["is_bias"]:
        bt_use = bn * ELEMENT_BYTES[bias]
        need(bt_use <= bt, f"BiasTable: base_n*sizeof(bias) = {bn}*{ELEMENT_BYTES[bias]:g} = {bt_use:g} > "
                           f"BiasTable {bt}")

    # depths and L1
    for depth, step, step_k, name in ((t["depth_a1"], t["step_m"], t["step_k_a"], "depth_a1 = step_m*step_k_a"),
                                      (t["depth_b1"], t["step_n"], t["step_k_b"], "depth_b1 = step_n*step_k_b")):
        need(depth in (step * step_k, 2 * step * step_k),
             f"depth: {name}*db with db 1 or 2, got {depth} (steps {step} x {step_k})")
    al1, bl1, bias_l1 = l1_bytes(t, a, b, bias, a_trans, b_trans)
    need(al1 + bl1 + bias_l1 <= l1, f"L1: A {al1} + B {bl1}{f' + bias {bias_l1}' if bias_l1 else ''} = "
                                    f"{al1 + bl1 + bias_l1} bytes > L1 {l1}")

    # alignment
    need(bm % FRACTAL == 0, f"alignment: base_m {bm} is not a multiple of 16")
    need(bn % FRACTAL == 0, f"alignment: base_n {bn} is not a multiple of 16")
    k_unit = base_k_unit(a, a_trans, b_trans)
    need(bk % k_unit == 0, f"alignment: base_k {bk} is not a multiple of {k_unit}"
                           f"{' (C0 of A: A not transposed, B transposed)' if k_unit != FRACTAL else ''}")
    need(bm <= _align(scm, FRACTAL), f"alignment: base_m {bm} > single_core_m {scm} rounded up to 16")
    need(bn <= _align(scn, FRACTAL), f"alignment: base_n {bn} > single_core_n {scn} rounded up to 16")
    for fmt, name, rows, single_rows, kind in ((a_format, "A", "m", scm, a), (b_format, "B", "n", scn, b)):
        if str(getattr(fmt, "name", fmt)).upper() == "NZ":
            k_name = "k_a" if name == "A" else "k_b"
            need(big_m % FRACTAL == 0 if rows == "m" else big_n % FRACTAL == 0,
                 f"alignment: NZ {name}: {rows.upper()} is not a multiple of 16")
            need(single_rows % FRACTAL == 0, f"alignment: NZ {name}: single_core_{rows} {single_rows} is not a "
                                             f"multiple of 16")
            need(t[k_name] % c0(kind) == 0 and sck % c0(kind) == 0,
                 f"alignment: NZ {name}: {k_name} {t[k_name]} and single_core_k {sck} must be multiples of "
                 f"C0 = {c0(kind)}")

    # the MDL template
    if mdl:
        if t["k_a"] / bk > t["step_k_a"]:
            need(t["step_m"] == 1, f"MDL: k_a/base_k > step_k_a needs step_m == 1, got {t['step_m']}")
        if t["k_b"] / bk > t["step_k_b"]:
            need(t["step_n"] == 1, f"MDL: k_b/base_k > step_k_b needs step_n == 1, got {t['step_n']}")
        ka_loads, kb_loads = _cdiv(sck, bk * t["step_k_a"]), _cdiv(sck, bk * t["step_k_b"])
        need(ka_loads % kb_loads == 0 or kb_loads % ka_loads == 0,
             f"MDL: the K loads of A ({ka_loads}) and B ({kb_loads}) must divide one another")

    if c_in_ub:
        c_block = bm * bn * ELEMENT_BYTES[c]
        need(c_block <= ub, f"UB: a base_m x base_n block of C takes {c_block:g} bytes > UB {ub}")
    return bad


def validate_tcube_tiling(tiling: Any, platform: Platform | str | Any, a_dtype: Any, b_dtype: Any, c_dtype: Any,
                          bias_dtype: Any = None, a_trans: bool = False, b_trans: bool = False,
                          **options: Any) -> None:
    """Raise :class:`TilingError` listing every rule ``tiling`` breaks (see :func:`check_tcube_tiling`)."""
    bad = check_tcube_tiling(tiling, platform, a_dtype, b_dtype, c_dtype, bias_dtype, a_trans, b_trans, **options)
    if bad:
        name = getattr(get_platform(getattr(platform, "platform", platform)), "name", platform)
        raise TilingError(f"illegal TCubeTiling on {name}:\n  " + "\n  ".join(bad))


__all__ = ["check_tcube_tiling", "validate_tcube_tiling", "l1_bytes", "base_k_unit", "read_fields", "FRACTAL"]
