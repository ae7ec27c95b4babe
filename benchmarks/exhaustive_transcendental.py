"""Every float32 (and float16) input of ``exp`` and ``ln``: the vectorised instructions against their definition.

    nice -n 10 python benchmarks/exhaustive_transcendental.py [--ops exp ln] [--chunks FIRST:STOP]

The definition (npuemu.isa.vec_unary): widen to float64, the C library's
``exp``/``log``, round once to the destination type.  For each of the 2**32
float32 bit patterns, in chunks of 2**24, the count-form instruction
(``exp_f32``, ``ln_f32``: npuemu.isa.vmath's two passes) runs in a UB and its
bits are compared with one libm call per element, NaN payloads included;
then the same for the 65536 float16 patterns (``exp_f16``, ``ln_f16``).
Also reported: how many elements the fast pass flagged for recomputation,
and the largest relative error of the float64 approximation (vmath.exp64 /
vmath.log64, as the instructions compile it) against libm over the inputs it
is used for -- the margin vmath.EPS must cover.  Prints one line per
operation and exits 1 on any mismatch.  About a minute per operation.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from numba import njit

from npuemu.isa import vec_unary as vu
from npuemu.isa import vmath
from npuemu.numerics.half import f16_to_f32

CHUNK = 1 << 24
OPS = {"exp": vmath.EXP, "ln": vmath.LN}


@njit(error_model="numpy", fastmath={"contract"})
def reference(op, x, out):
    """``out[i]`` = the definition of op on float32 ``x[i]``; returns the largest relative error of the fast path."""
    worst = 0.0
    for i in range(len(x)):
        w = np.float64(x[i])
        if op == vmath.EXP:
            y = math.exp(w)
            used = -160.0 <= w <= 100.0
            fast = vmath.exp64(w) if used else y
        else:
            y = math.log(w)
            used = 0.0 < w < np.inf
            fast = vmath.log64(w) if used else y
        out[i] = np.float32(y)
        if used and y != 0.0:
            worst = max(worst, abs(fast - y) / abs(y))
    return worst


@njit(error_model="numpy")
def reference_f16(op, bits, out):
    for i in range(len(bits)):
        w = np.float64(f16_to_f32(bits[i]))
        out[i] = vmath.f64_to_f16(math.exp(w) if op == vmath.EXP else math.log(w))


def instruction(name: str, lm: np.ndarray, st: np.ndarray, n: int, esize: int) -> np.ndarray:
    """Run count-form ``name`` on the n elements at UB offset 0 into offset n * esize; the result's bytes."""
    getattr(vu, name)(st, lm, n * esize, n, 0, n, n, 0)
    return lm[n * esize:2 * n * esize]


def check_op(op: str, first: int, stop: int) -> bool:
    code = OPS[op]
    st = np.zeros(1024, np.int64)
    lm = np.zeros(2 * CHUNK * 4, np.uint8)
    src = lm[:CHUNK * 4].view(np.uint32)
    want = np.empty(CHUNK, np.float32)
    scratch = np.empty(CHUNK, np.float32)
    run = vmath.KERNELS[code, 0][0]
    mismatches = flagged = 0
    worst = 0.0
    t0 = time.perf_counter()
    for c in range(first, stop):
        src[:] = np.arange(c * CHUNK, (c + 1) * CHUNK, dtype=np.uint64).astype(np.uint32)
        x = src.view(np.float32)
        worst = max(worst, reference(code, x, want))
        got = instruction(f"{op}_f32", lm, st, CHUNK, 4).view(np.uint32)
        bad = np.flatnonzero(got != want.view(np.uint32))
        if bad.size:
            print(f"  {op} chunk {c}: {bad.size} mismatches, e.g. input {src[bad[0]]:#010x}: "
                  f"{got[bad[0]]:#010x} != {want.view(np.uint32)[bad[0]]:#010x}", flush=True)
        mismatches += bad.size
        flagged += run(scratch, x)
    seconds = time.perf_counter() - t0
    n = (stop - first) * CHUNK

    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    want16 = np.empty(65536, np.uint16)
    reference_f16(code, bits, want16)
    lm16 = np.zeros(4 * 65536, np.uint8)
    lm16[:2 * 65536] = bits.view(np.uint8)
    got16 = instruction(f"{op}_f16", lm16, st, 65536, 2).view(np.uint16)
    mismatches16 = int(np.count_nonzero(got16 != want16))
    flagged16 = vmath.KERNELS[code, 1][0](np.empty(65536, np.uint16), bits)

    print(f"{op}: float32 {n} inputs, {mismatches} mismatches, {flagged} flagged; "
          f"float16 65536 inputs, {mismatches16} mismatches, {flagged16} flagged; "
          f"fast path max relative error {worst:.3g} (2**{math.log2(worst) if worst else -math.inf:.2f}, "
          f"EPS = 2**{math.log2(vmath.EPS):.0f}); {seconds:.0f} s", flush=True)
    return mismatches == 0 and mismatches16 == 0 and worst < vmath.EPS / 4


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", choices=sorted(OPS), default=["exp", "ln"])
    parser.add_argument("--chunks", default=f"0:{(1 << 32) // CHUNK}",
                        help="the chunks of 2**24 inputs to check, FIRST:STOP (default all 256)")
    args = parser.parse_args(argv)
    first, stop = (int(v) for v in args.chunks.split(":"))
    ok = all([check_op(op, first, stop) for op in args.ops])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
