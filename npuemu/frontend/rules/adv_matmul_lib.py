"""The Matmul object's work, written in the kernel language (inlined at each method call).

``rules/adv_matmul.py`` binds a method call's arguments and the object's
state (kernel variables) and inlines one of these helpers, so every cube
instruction below is checked as if the kernel had written it: capacity,
alignment, bounds, and at check level ``full`` the race checker.

One tile of C (``tm x tn``, at tile row ``ti``, column ``tj`` of the core's
block) is computed over K in steps of ``base_k``: A and B tiles GM -> L1
(ND -> NZ, MTE2), L1 -> L0A (ZZ) / L0B (ZN) (MTE1), ``mmad`` into L0C (M),
the first step from zero or from the bias table.  Each stage is separated
from the next by ``pipe_barrier(PIPE_ALL)``: the library's own
synchronisation, complete and simple (npuemu's results do not depend on
pipe overlap).  Imported lazily by the rules (it imports the language's
namespace, which imports the frontend).
"""
from __future__ import annotations

from npuemu import asc

from ..kernel import KernelFunction

FRACTAL = 512           # bytes of one fractal
ROWS = 16               # fractal rows: M and N granularity


def _lib(fn):
    return KernelFunction(fn)


@_lib
def cdiv(a: int, b: int):
    return (a + b - 1) // b


@_lib
def alloc(pipe: asc.TPipe, din: asc.ConstExpr, dacc: asc.ConstExpr, bm: int, bn: int, bk: int):
    """The object's buffers from ``pipe``: one L1 tile each of A and B, one L0A, L0B and L0C tile."""
    kk = (bk + 31) // 32 * 32
    a1b = asc.TBuf(asc.TPosition.A1)
    b1b = asc.TBuf(asc.TPosition.B1)
    a2b = asc.TBuf(asc.TPosition.A2)
    b2b = asc.TBuf(asc.TPosition.B2)
    c1b = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(a1b, (bm + 15) // 16 * 16 * kk * din.sizeof())
    pipe.init_buffer(b1b, (bn + 15) // 16 * 16 * kk * din.sizeof())
    pipe.init_buffer(a2b, (bm + 15) // 16 * 16 * kk * din.sizeof())
    pipe.init_buffer(b2b, (bn + 15) // 16 * 16 * kk * din.sizeof())
    pipe.init_buffer(c1b, (bm + 15) // 16 * 16 * ((bn + 15) // 16 * 16) * 4)
    return a1b.get(din), b1b.get(din), a2b.get(din), b2b.get(din), c1b.get(dacc)


@_lib
def alloc_bias(pipe: asc.TPipe, dacc: asc.ConstExpr, bn: int):
    """The bias row in L1 and in the bias table."""
    biasb = asc.TBuf(asc.TPosition.C1)
    btb = asc.TBuf(asc.TPosition.C2)
    pipe.init_buffer(biasb, (bn + 15) // 16 * 16 * 4)
    pipe.init_buffer(btb, (bn + 15) // 16 * 16 * 4)
    return biasb.get(dacc), btb.get(dacc)


@_lib
def alloc_scales(pipe: asc.TPipe, bn: int):
    """The per-channel quantisation words of one tile (``set_quant_vector``) in L1."""
    qb = asc.TBuf(asc.TPosition.C1)
    pipe.init_buffer(qb, (bn + 3) // 4 * 4 * 8)
    return qb.get(asc.uint64)


@_lib
def copy_nz(l1: asc.LocalTensor, g: asc.GlobalTensor, row0: int, col0: int, rows: int, cols: int, height: int):
    """A ``rows x cols`` tile of a matrix stored NZ in GM (column blocks of C0 elements, ``height`` rows
    each) -> L1 NZ: per column block, ``align(rows, 16)`` rows of 32 bytes, one DataCopy."""
    c0 = 32 // g.dtype.sizeof()
    h = (rows + 15) // 16 * 16
    asc.data_copy(l1, g[col0 // c0 * height * c0 + row0 * c0:],
                  asc.DataCopyParams(cdiv(cols, c0), h, height - h, 0))


@_lib
def fill(l1: asc.LocalTensor, rows: int, cols: int, value: float):
    """A ``rows x cols`` tile whose elements all equal ``value`` (``set_tensor_a/b(scalar)``), in L1 (MTE2);
    the whole (rows aligned to 32) x (cols aligned to 16) area, so any of the tile's L1 layouts reads it."""
    blocks = cdiv((rows + 31) // 32 * 32 * ((cols + 15) // 16 * 16) * l1.dtype.sizeof(), 32)
    if l1.dtype.sizeof() == 1:      # int8: through an int16 view, ``value`` the byte pattern twice
        asc.init_const_value(l1.reinterpret_cast(asc.int16), asc.InitConstValueParams(1, blocks, 0, value))
    else:
        asc.init_const_value(l1, asc.InitConstValueParams(1, blocks, 0, value))


@_lib
def copy_a(a1: asc.LocalTensor, ag: asc.GlobalTensor, r0: int, k0: int, tm: int, tk: int, ld: int,
           trans: asc.ConstExpr[bool], nz: asc.ConstExpr[bool], height: int, scalar: asc.ConstExpr[bool],
           value: float):
    """The ``tm x tk`` tile of A -> L1 NZ (A^T: its ``tk x tm`` tile; a single row: a plain vector)."""
    if scalar:
        fill(a1, tk, tm, value)
    elif nz:
        copy_nz(a1, ag, r0, k0, tm, tk, height)
    elif trans:
        asc.data_copy(a1, ag[k0 * ld + r0:], asc.Nd2NzParams(1, tk, tm, 0, ld, (tk + 15) // 16 * 16, 1, 0))
    else:
        stride = (tm + 15) // 16 * 16
        if tm == 1:
            stride = 1
        asc.data_copy(a1, ag[r0 * ld + k0:], asc.Nd2NzParams(1, tm, tk, 0, ld, stride, 1, 0))


@_lib
def copy_b(b1: asc.LocalTensor, bg: asc.GlobalTensor, k0: int, c0: int, tk: int, tn: int, ld: int,
           trans: asc.ConstExpr[bool], nz: asc.ConstExpr[bool], height: int, scalar: asc.ConstExpr[bool],
           value: float):
    """The ``tk x tn`` tile of B -> L1 NZ (B^T: its ``tn x tk`` tile; float32 B in 16-row strips)."""
    if scalar:
        fill(b1, tk, tn, value)
    elif nz:
        copy_nz(b1, bg, k0, c0, tk, tn, height)
    elif trans:
        asc.data_copy(b1, bg[c0 * ld + k0:], asc.Nd2NzParams(1, tn, tk, 0, ld, (tn + 15) // 16 * 16, 1, 0))
    elif b1.dtype.sizeof() == 4:
        width = (tn + 15) // 16 * 16
        for s in range(cdiv(tk, ROWS)):
            asc.data_copy(b1[s * ROWS * width:], bg[(k0 + s * ROWS) * ld + c0:],
                          asc.Nd2NzParams(1, min(ROWS, tk - s * ROWS), tn, 0, ld, ROWS, 1, 0))
    else:
        asc.data_copy(b1, bg[k0 * ld + c0:], asc.Nd2NzParams(1, tk, tn, 0, ld, (tk + 15) // 16 * 16, 1, 0))


@_lib
def load_a(a2: asc.LocalTensor, a1: asc.LocalTensor, tm: int, tk: int, trans: asc.ConstExpr[bool],
           nz: asc.ConstExpr[bool]):
    """L1 -> L0A (ZZ): per 16-row strip, its K fractals (A^T: each fractal transposed)."""
    c0 = 32 // a1.dtype.sizeof()
    frac = FRACTAL // a1.dtype.sizeof()
    strips = cdiv(tm, ROWS)
    kb = cdiv(tk, c0)
    if trans:
        for i in range(strips):
            asc.load_data(a2[i * kb * frac:], a1[i * kb * frac:], asc.LoadData2DParams(0, kb, 1, 0, 0, True, 0))
    elif tm == 1 and not nz:
        asc.load_data(a2, a1, asc.LoadData2DParams(0, cdiv(tk * a1.dtype.sizeof(), FRACTAL), 1, 0, 0, False, 0))
    else:
        for i in range(strips):
            asc.load_data(a2[i * kb * frac:], a1[i * ROWS * c0:], asc.LoadData2DParams(0, kb, strips, 0, 0, False, 0))


@_lib
def load_b(b2: asc.LocalTensor, b1: asc.LocalTensor, tk: int, tn: int, trans: asc.ConstExpr[bool]):
    """L1 -> L0B (ZN)."""
    c0 = 32 // b1.dtype.sizeof()
    frac = FRACTAL // b1.dtype.sizeof()
    nb = cdiv(tn, ROWS)
    if trans:
        for j in range(cdiv(tk, c0)):
            asc.load_data(b2[j * nb * frac:], b1[j * nb * frac:], asc.LoadData2DParams(0, nb, 1, 0, 0, False, 0))
    elif b1.dtype.sizeof() == 4:
        width = nb * ROWS
        for j in range(cdiv(tk, ROWS)):
            asc.load_data_with_transpose(b2[2 * j * nb * frac:], b1[j * ROWS * width:],
                                         asc.LoadData2dTransposeParams(0, nb, 1, 0, nb - 1, 0))
    else:
        h = cdiv(tk, ROWS)
        for j in range(h):
            asc.load_data(b2[j * nb * frac:], b1[j * frac:], asc.LoadData2DParams(0, nb, h, 0, 0, True, 0))


@_lib
def tile(a1: asc.LocalTensor, b1: asc.LocalTensor, a2: asc.LocalTensor, b2: asc.LocalTensor,
         co1: asc.LocalTensor, bias1: asc.LocalTensor, bt: asc.LocalTensor, ag: asc.GlobalTensor,
         bg: asc.GlobalTensor, biasg: asc.GlobalTensor, r0: int, c0: int, tm: int, tn: int, sk: int, bk: int,
         lda: int, ldb: int, use_bias: int, trans_a: asc.ConstExpr[bool], trans_b: asc.ConstExpr[bool],
         with_bias: asc.ConstExpr[bool], nz_a: asc.ConstExpr[bool], nz_b: asc.ConstExpr[bool], ha: int, hb: int,
         sc_a: asc.ConstExpr[bool], sc_b: asc.ConstExpr[bool], va: float, vb: float):
    """C[r0:r0+tm, c0:c0+tn] = A @ B (+ bias) over ``sk`` into L0C."""
    if with_bias:  # noqa: SIM102 - a compile-time choice, then a run-time one
        if use_bias:
            # one row, its 32-byte blocks back to back, the last one zero-padded (no read past the bias)
            asc.data_copy(bias1, biasg[c0:], asc.Nd2NzParams(1, 1, tn, 0, tn, 1, 1, 0))
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(bt, bias1, asc.DataCopyParams(1, cdiv(tn * 4, 64), 0, 0))
    for kk in range(cdiv(sk, bk)):
        k0 = kk * bk
        tk = min(bk, sk - k0)
        copy_a(a1, ag, r0, k0, tm, tk, lda, trans_a, nz_a, ha, sc_a, va)
        copy_b(b1, bg, k0, c0, tk, tn, ldb, trans_b, nz_b, hb, sc_b, vb)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        load_a(a2, a1, tm, tk, trans_a, nz_a)
        load_b(b2, b1, tk, tn, trans_b)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        if with_bias:
            if use_bias and kk == 0:
                asc.mmad(co1, a2, b2, bt, asc.MmadParams(tm, tn, tk, 0, True, False))
            else:
                asc.mmad(co1, a2, b2, asc.MmadParams(tm, tn, tk, 0, False, kk == 0))
        else:
            asc.mmad(co1, a2, b2, asc.MmadParams(tm, tn, tk, 0, False, kk == 0))
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@_lib
def store(cg: asc.GlobalTensor, co1: asc.LocalTensor, tm: int, tn: int, ld: int, quant: asc.ConstExpr,
          deq: int, atomic: int, qbuf: asc.LocalTensor, qg: asc.GlobalTensor, c0: int, qvec: int,
          vec: asc.ConstExpr[bool]):
    """The tile in L0C -> GM (NZ -> ND rows of ``ld``), converted by ``quant``; ``atomic`` 1/2/3 adds to /
    keeps the maximum / the minimum with what GM holds.  With ``vec`` (int8 -> float16) and ``qvec`` set,
    the tile's columns ``c0 ..`` of the per-channel words ``qg`` go to L1 (whole 32-byte blocks) and the
    fixpipe dequantises column by column (VDEQF16)."""
    if atomic == 1:
        asc.set_atomic_add(cg.dtype)
    if atomic == 2:
        asc.set_atomic_max(cg.dtype)
    if atomic == 3:
        asc.set_atomic_min(cg.dtype)
    if vec:
        if qvec != 0:
            asc.data_copy(qbuf, qg[c0:], cdiv(tn, 4) * 4)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.fixpipe(cg, co1, qbuf, asc.FixpipeParamsV220(tn, tm, (tm + 15) // 16 * 16, ld,
                                                             asc.QuantModes.VDEQF16, 0, 1, 0, 0, False, 0, False),
                        asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
        else:
            asc.fixpipe(cg, co1, asc.FixpipeParamsV220(tn, tm, (tm + 15) // 16 * 16, ld, quant, deq, 1, 0, 0,
                                                       False, 0, False), asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    else:
        asc.fixpipe(cg, co1, asc.FixpipeParamsV220(tn, tm, (tm + 15) // 16 * 16, ld, quant, deq, 1, 0, 0, False,
                                                   0, False), asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))
    if atomic != 0:
        asc.set_atomic_none()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@_lib
def to_ub(ub: asc.LocalTensor, stage: asc.GlobalTensor, count: int):
    """A MIX kernel's tile, left by the cube in the AIV's staging area, -> UB (MTE2), ready for the vector unit."""
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(ub, stage, count)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
