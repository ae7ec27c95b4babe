"""The lowering side of the cost model: each instruction's duration from the accesses it declares.

Rules declare every operand access of every instruction with its pipe
(``Lowerer.local_access`` / ``gm_access``, ``rules/access.py``) before they
emit the instruction.  In a binary built with ``profile=True`` the lowerer
hands those declarations to a :class:`CostPlan`; when the instruction is
emitted, the plan turns what it collected into one ``isa.cost.charge`` call
per pipe, placed just before the instruction, whose duration follows the
platform profile (docs/cost-model.md):

==========  ==================================================================
pipe        duration
==========  ==================================================================
MTE2, MTE3  bytes (each burst rounded up to 32 B) / the direction's rate
            (``transfer_gibps``); a GM side is also bounded by the HBM
            bandwidth shared by the launch's active cores
MTE1, FIX   bytes written (read, for a GM side) / the direction's rate
V           ``startup + repeats * per_repeat`` (``vector_op_cycles`` by op and
            dtype class; 256 bytes of the widest operand per repeat)
M           16 x 16 x k0 fractal steps (k0 = 32 B / element size) x the
            cycles one step takes at the dtype's MAC rate
S           ``scalar_access_cycles`` per access
==========  ==================================================================

Every instruction also takes ``scalar_issue_cycles`` of the scalar unit.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..isa import hb
from ..language import dtype as dt
from ..platform import Platform

_DTYPE_TAIL = re.compile(r"(?:[iuf]|bf)\d+(?:(?:[iuf]|bf)\d+)*|\d+|l0")
# instructions whose isa names differ from the op they time
_OP_ALIASES = {"shift_left": "shl", "shift_right": "shr", "whole_reduce_sum": "reduce_sum",
               "whole_reduce_max": "reduce_max", "whole_reduce_min": "reduce_min", "lrelu": "leaky_relu"}


def op_name(fn: str) -> str:
    """The op an isa function times as: ``add_l0_f16`` -> ``add``, ``copy_16`` -> ``copy``."""
    parts = fn.split("_")
    while len(parts) > 1 and _DTYPE_TAIL.fullmatch(parts[-1]):
        parts.pop()
    name = "_".join(p for p in parts if p != "l0")
    return _OP_ALIASES.get(name, name)


def dtype_class(d: Any) -> str:
    """``fp16`` (float16, bfloat16), ``fp32`` or ``int``: the columns of ``vector_op_cycles``."""
    if d in (dt.float16, dt.bfloat16):
        return "fp16"
    if d in (dt.float32, dt.float64):
        return "fp32"
    return "int" if d is not None else "fp16"


@dataclass
class _Access:
    pipe: int
    memory: str
    nbytes: str                  # an expression: bytes the access covers
    write: bool
    gm: bool
    dtype: Any
    node: ast.AST | None


@dataclass
class CostPlan:
    """Declared accesses waiting for the instruction they belong to; see the module docstring."""

    platform: Platform
    enabled: bool
    pending: list[_Access] = field(default_factory=list)
    steps: str | None = None     # the cube steps of the mmad being lowered, when its rule says (``cube_steps``)

    # ------------------------------------------------------------------ rates from the profile

    @property
    def issue(self) -> float:
        return float(self.platform.scalar_issue_cycles)

    def _cycles_per_byte(self, direction: str) -> float:
        rates = dict(self.platform.transfer_gibps)
        gibps = rates.get(direction) or rates.get("gm_to_ub") or 1.0
        return (self.platform.cube_freq_mhz * 1e6) / (gibps * (1 << 30))

    @property
    def hbm_cycles_per_byte(self) -> float:
        """Cycles per byte of the whole chip's HBM bandwidth (one core alone would get all of it)."""
        return (self.platform.cube_freq_mhz * 1e6) / (self.platform.hbm_bandwidth_gbps * 1e9)

    # ------------------------------------------------------------------ collecting

    def access(self, pipe: int, memory: str, nbytes: str, write: bool, gm: bool, dtype: Any,
               node: ast.AST | None) -> None:
        if self.enabled:
            self.pending.append(_Access(pipe, memory, nbytes, write, gm, dtype, node))

    def cube_steps(self, expr: str) -> None:
        """The 16 x 16 x k0 steps of the next ``mmad`` (an expression), instead of inferring them."""
        if self.enabled:
            self.steps = expr

    def flush(self, fn: str | None, call: Callable[[str, str, list[str], ast.AST | None], str]) -> list[str]:
        """The charge calls of the accesses collected so far (``fn``: the isa function they belong to)."""
        pending, self.pending = self.pending, []
        by_pipe: dict[int, list[_Access]] = {}
        for a in pending:
            by_pipe.setdefault(a.pipe, []).append(a)
        lines = []
        for pipe, accesses in by_pipe.items():
            units, per_unit, startup, gm_pu, gm_bytes = self._duration(pipe, accesses, fn)
            args = ["_st", str(pipe), units, repr(per_unit), repr(startup), repr(gm_pu), gm_bytes, repr(self.issue)]
            lines.append(call("cost", "charge", args, accesses[0].node))
        return lines

    # ------------------------------------------------------------------ durations

    def _duration(self, pipe: int, acc: list[_Access], fn: str | None) -> tuple[str, float, float, float, str]:
        """``(units, cycles per unit, startup cycles, HBM cycles per unit or 0, GM bytes)`` of one instruction."""
        gm = [a for a in acc if a.gm]
        gm_bytes = _sum([_burst(a.nbytes) for a in gm]) if gm else "0"
        if pipe == hb.S:
            return "1", float(self.platform.scalar_access_cycles), 0.0, 0.0, "0"
        if pipe == hb.V:
            return self._vector(acc, fn)
        if pipe == hb.M:
            return self._cube(acc)
        src = next((a.memory for a in acc if not a.write), "")
        dst = next((a.memory for a in acc if a.write), "")
        direction = _direction(pipe, "GM" if any(a.gm and not a.write for a in acc) else src,
                               "GM" if any(a.gm and a.write for a in acc) else dst)
        if gm:
            units = gm_bytes
        else:
            moved = [a.nbytes for a in acc if a.write] or [a.nbytes for a in acc]
            units = _max([_burst(b) for b in moved])
        return (units, self._cycles_per_byte(direction), self._latency(direction),
                self.hbm_cycles_per_byte if gm else 0.0, gm_bytes)

    def _latency(self, direction: str) -> float:
        """Cycles one transfer in ``direction`` takes beyond its bytes (``transfer_latency_ns``)."""
        ns = dict(self.platform.transfer_latency_ns).get(direction, 0.0)
        return ns * self.platform.cube_freq_mhz / 1000.0

    def _vector(self, acc: list[_Access], fn: str | None) -> tuple[str, float, float, float, str]:
        width = self.platform.vector_bytes_per_cycle
        repeats = f"((({_max([a.nbytes for a in acc])}) + {width - 1}) // {width})"
        kind = dtype_class(next((a.dtype for a in acc if not a.write and a.dtype is not None),
                                next((a.dtype for a in acc if a.dtype is not None), None)))
        startup, per_repeat = self.vector_cycles(op_name(fn) if fn else "", kind)
        return repeats, per_repeat, startup, 0.0, "0"

    def vector_cycles(self, op: str, kind: str) -> tuple[float, float]:
        """``(startup, per repeat)`` cycles of vector op ``op`` on a ``kind`` dtype class."""
        cols = {"fp16": 0, "fp32": 2, "int": 4}[kind]
        for row in self.platform.vector_op_cycles:
            if row[0] == op:
                vals = row[1:]
                if vals[cols] is None:       # a profile measured on floats only
                    cols = 0
                return float(vals[cols]), float(vals[cols + 1])
        s, r = self.platform.vector_default_cycles
        return float(s), float(r)

    def _cube(self, acc: list[_Access]) -> tuple[str, float, float, float, str]:
        """The rule's step count (``cube_steps``), else from what mmad declares: A (m1 x k1 fractals of
        512 B), B (k1 x n1) and C written (m1 x n1 of 1 KiB), m1 k1 n1 = sqrt(product)."""
        reads = [a for a in acc if not a.write]
        writes = [a for a in acc if a.write]
        steps, self.steps = self.steps, None
        if len(reads) < 2 or not writes:
            return "0", 0.0, 0.0, 0.0, "0"
        a, b, c = reads[0], reads[1], writes[0]
        if steps is None:
            steps = f"(((({a.nbytes}) // 512) * (({b.nbytes}) // 512) * (({c.nbytes}) // 1024)) ** 0.5)"
        es = a.dtype.sizeof() if a.dtype is not None else 2
        macs_per_step = 16 * 16 * (32 // es)
        rate = self.platform.cube_fp16_macs_per_cycle * dict(self.platform.cube_rate_vs_fp16).get(
            dtype_class_cube(a.dtype), 1.0)
        return steps, macs_per_step / rate, 0.0, 0.0, "0"


def dtype_class_cube(d: Any) -> str:
    """The key of ``cube_rate_vs_fp16`` for an mmad input dtype."""
    if d in (dt.int8, dt.uint8):
        return "int8"
    if d in (dt.float32,):
        return "fp32"
    return "fp16"


def _direction(pipe: int, src: str, dst: str) -> str:
    """The ``transfer_gibps`` key of a transfer from memory ``src`` to ``dst`` on ``pipe``."""
    s, d = _mem(src), _mem(dst)
    if pipe == hb.MTE2:
        return "gm_to_ub" if d in ("UB", "") else "gm_to_l1"
    if pipe == hb.MTE3:
        return "ub_to_gm" if d in ("GM", "") else "ub_to_ub"
    if pipe == hb.MTE1:
        return {"L0A": "l1_to_l0a", "L0B": "l1_to_l0b", "BIAS": "l1_to_bt", "FIXBUF": "l1_to_fb"}.get(d, "l1_to_l0a")
    if pipe == hb.FIX:
        if s == "L1":
            return "l1_to_fb"
        return "l0c_to_l1" if d == "L1" else "l0c_to_gm"
    return "ub_to_ub"


def _mem(name: str) -> str:
    return "GM" if name.startswith("GM") else name


def _burst(nbytes: str) -> str:
    """Bytes a DMA burst moves: rounded up to whole 32-byte blocks."""
    return f"((max({nbytes}, 0) + 31) // 32 * 32)"


def _sum(exprs: list[str]) -> str:
    return exprs[0] if len(exprs) == 1 else f"({' + '.join(exprs)})"


def _max(exprs: list[str]) -> str:
    return exprs[0] if len(exprs) == 1 else f"max({', '.join(exprs)})"
