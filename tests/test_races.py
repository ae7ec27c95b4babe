"""The race checker (check level ``full``): what it reports, what it accepts, and what orders pipes.

The broken kernels come from the corpus (tests/corpus/intra_core_kernels.py),
so these tests reuse the binaries tests/test_corpus.py compiles.  Every
detection is paired with its corrected twin, which must run clean and
compute the NumPy result.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import npuemu.asc as asc
from corpus import intra_core_kernels as K
from npuemu import errors
from npuemu.kernels import add as add_mod
from npuemu.kernels import add_static as add_static_mod
from npuemu.kernels.catalog import KERNELS, compare

FULL = {"check": "full"}
SRC = r"intra_core_kernels\.py"


def _line(pattern: str) -> int:
    """Line number of the first line of intra_core_kernels.py that contains ``pattern``."""
    lines = open(K.__file__).read().splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if pattern in text]
    assert len(hits) >= 1, pattern
    return hits[0]


# ---------------------------------------------------------------------------- what a report says


@pytest.mark.parametrize("case, kind, pipe, other, first, second", [
    (K.RAW_MTE2_V, "RAW", "V read", "MTE2 write", "asc.data_copy(t, xg, N)", "asc.adds(u, t, 1.0, N)"),
    (K.WAR_REUSE, "WAR", "MTE2 write", "MTE3 read", "asc.data_copy(zg[i * N:], t, N)",
     "asc.data_copy(t, xg[i * N:], N)"),
    (K.WAW, "WAW", "MTE2 write", "V write", "asc.duplicate(t, 0.0, N)", "asc.data_copy(t, xg, N // 2)"),
])
def test_race_report_names_kind_pipes_and_both_lines(mode, case, kind, pipe, other, first, second):
    with pytest.raises(errors.RaceError) as info:
        K.run_ub(case, False, **FULL, **mode)
    e = info.value
    msg = str(e)
    # the racing instruction is the error's location; the earlier one is named in the message
    assert e.rule == "race"
    assert e.loc.line_text.strip() == second
    assert e.loc.lineno == _line(second)
    assert re.search(rf"\[race\] {kind}: {pipe} of UB bytes \[\d+, \d+\) races with the {other} at "
                     rf"\S*{SRC}:{_line(first)} `{re.escape(first)}`: nothing orders them", msg), msg
    assert e.core == "AIV 0" and e.kernel == "ub_kernel"


def test_race_report_names_the_missing_flag(mode):
    with pytest.raises(errors.RaceError, match=r"\(missing set_flag/wait_flag MTE2_V, or a queue\)"):
        K.run_ub(K.RAW_MTE2_V, False, **FULL, **mode)
    with pytest.raises(errors.RaceError, match=r"\(missing set_flag/wait_flag S_V after the scalar write\)"):
        K.run_ub(K.SCALAR_WRITE, False, **FULL, **mode)


def test_races_are_only_checked_at_full(mode):
    """At ``off``/``default`` the same broken kernel runs; npuemu executes in program order, so it
    even computes what the corrected kernel does (the hazard is only real on hardware)."""
    x = (np.arange(2 * K.N, dtype=np.float32) - 20) * 0.5
    for level in ("off", "default"):
        z = K.run_ub(K.RAW_MTE2_V, False, check=level, **mode)
        np.testing.assert_array_equal(z, K.ub_expected(K.RAW_MTE2_V, x))


def test_uninitialised_read_names_the_bytes(mode):
    with pytest.raises(errors.UninitializedReadError,
                       match=r"\[uninitialised read\] V read of UB bytes \[128, 256\), which nothing has written"):
        K.run_ub(K.UNINIT, False, **FULL, **mode)


def test_shadow_state_does_not_leak_between_launches(mode):
    """The checker's arrays are recycled between launches; each launch starts from a clean slate."""
    K.run_ub(K.RAW_MTE2_V, True, **FULL, **mode)                  # writes all of UB [0, 512)
    with pytest.raises(errors.UninitializedReadError, match=r"UB bytes \[128, 256\)"):
        K.run_ub(K.UNINIT, False, **FULL, **mode)
    with pytest.raises(errors.RaceError, match=r"RAW: V read"):
        K.run_ub(K.RAW_MTE2_V, False, **FULL, **mode)
    K.run_ub(K.RAW_MTE2_V, True, **FULL, **mode)                  # clean after a race
    K.run_handoff(True, **FULL, **mode)                           # sync objects used ...
    with pytest.raises(errors.RaceError, match=r"no cross-core synchronisation"):
        K.run_handoff(False, **FULL, **mode)                      # ... and reset for the next launch


# ---------------------------------------------------------------------------- what orders pipes


def test_pipe_barrier_all_orders_pipes_and_one_pipe_does_not(mode):
    with pytest.raises(errors.RaceError, match=r"RAW: V read .* races with the MTE2 write"):
        K.run_ub(K.BARRIER_ONE_PIPE, False, **FULL, **mode)       # pipe_barrier(PIPE_V)
    K.run_ub(K.BARRIER_ONE_PIPE, True, **FULL, **mode)            # pipe_barrier(PIPE_ALL): clean


@pytest.mark.parametrize("case", [K.RAW_MTE2_V, K.RAW_V_MTE3, K.WAR_REUSE, K.WAW, K.SCALAR_WRITE, K.SCALAR_READ])
def test_each_flag_orders_its_pair(mode, case):
    """The corrected kernels differ from the broken ones by one flag pair, and run clean."""
    K.run_ub(case, True, **FULL, **mode)


def test_queue_synced_double_buffered_add_is_clean(rng):
    """kernels/add.py: TQue pipeline, two buffers per queue, several tiles per core."""
    n = 5 * 4096 + 7
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(add_mod.add(x, y, core_num=2, **FULL), x + y)


def test_manually_synced_double_buffered_add_is_clean(rng):
    """kernels/add_static.py: static tensors, two halves per buffer, hand-placed flags."""
    n = 5 * 4096 + 7
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(add_static_mod.add_static(x, y, core_num=2, **FULL), x + y)


# ---------------------------------------------------------------------------- GM across cores


def test_gm_race_between_cores_names_both_cores(mode):
    with pytest.raises(errors.RaceError) as info:
        K.run_split(False, **FULL, **mode)
    e = info.value
    assert e.core == "AIV 1"
    assert re.search(r"WAW: MTE3 write of GM bytes \[224, 256\) of GM argument 'z' \(512 bytes\) races with the "
                     rf"MTE3 write by AIV 0 at \S*{SRC}:\d+ `asc.data_copy\(zg\[idx \* \(N if fixed else N - 8\):\], "
                     r"t, N\)`: the cores do not synchronise", str(e)), str(e)
    K.run_split(True, **FULL, **mode)


def test_gm_read_of_another_cores_write_needs_cross_core_sync(mode):
    with pytest.raises(errors.RaceError, match=r"RAW: MTE2 read of GM bytes \[0, 256\) of GM argument 'z' .* "
                                               r"races with the MTE3 write by AIV 0 .*: no cross-core "
                                               r"synchronisation"):
        K.run_handoff(False, **FULL, **mode)
    K.run_handoff(True, **FULL, **mode)                           # sync_all between them


# ---------------------------------------------------------------------------- TPipe event ids


@asc.jit
def event_id_kernel(z: asc.GlobalAddress, misuse: int):
    """Records the ids the TPipe pool hands out (see test_event_id_pool), then uses one of them."""
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    a = pipe.alloc_event_id(asc.HardEvent.S_MTE3)
    b = pipe.alloc_event_id(asc.HardEvent.S_MTE3)
    c = pipe.alloc_event_id(asc.HardEvent.S_MTE3)
    t.set_value(0, a)
    t.set_value(1, b)
    t.set_value(2, c)
    t.set_value(3, pipe.fetch_event_id(asc.HardEvent.S_MTE3))     # the next free id, not taken
    pipe.release_event_id(b, asc.HardEvent.S_MTE3)
    t.set_value(4, pipe.fetch_event_id(asc.HardEvent.S_MTE3))     # the lowest free id: b again
    d = pipe.alloc_event_id(asc.HardEvent.S_MTE3)
    t.set_value(5, d)
    t.set_value(6, pipe.alloc_event_id(asc.HardEvent.S_MTE3))
    t.set_value(7, pipe.alloc_event_id(asc.HardEvent.MTE2_V))     # pools are per event
    asc.set_flag(asc.HardEvent.S_MTE3, d)
    asc.wait_flag(asc.HardEvent.S_MTE3, d)
    asc.data_copy(zg, t, 8)
    if misuse == 1:
        pipe.release_event_id(9, asc.HardEvent.S_MTE3)
    if misuse == 2:
        pipe.release_event_id(4, asc.HardEvent.S_MTE3)            # never allocated


def test_event_id_pool(mode):
    z = np.full(8, -1, np.int32)
    event_id_kernel[1](z, 0, **FULL, **mode)
    # alloc takes the lowest free id; fetch names it without taking it; release gives it back
    np.testing.assert_array_equal(z, [0, 1, 2, 3, 1, 1, 3, 0])


def test_event_id_pool_misuse(mode):
    z = np.zeros(8, np.int32)
    with pytest.raises(errors.SyncError, match=r"release_event_id\(9, HardEvent.S_MTE3\): event id 9 is outside "
                                               r"0..7"):
        event_id_kernel[1](z, 1, **FULL, **mode)
    with pytest.raises(errors.SyncError, match=r"release_event_id\(4, HardEvent.S_MTE3\): id 4 of S_MTE3 is not "
                                               r"allocated"):
        event_id_kernel[1](z, 2, **FULL, **mode)


# ---------------------------------------------------------------------------- every bundled kernel


def _small_shape(k) -> tuple[int, ...]:
    """A small shape with odd extents, so tails are exercised: elements, rows x cols, or M x K x N."""
    if len(k.demo_shape) == 1:
        return (1003,)
    if len(k.demo_shape) == 2:
        return (5, 37)
    return next(s for s in k.test_shapes if min(s) > 1)


# (kernel, dtype) -> the dtype (or the (kernel, dtype)) whose code at check level full is the same instruction
# sequence, with the same synchronisation, buffers and control flow: the generated modules differ only in dtype
# names and integer literals (element sizes, byte counts, quantisation modes).  The checker sees the same
# accesses in the same order, so the twin covers the rule; the others run with -m slow.  tests/test_kernels.py
# runs every kernel and dtype against NumPy at the default check level.
SAME_CODE_AT_FULL = {
    ("add_static", "float16"): "float32", ("mul", "float16"): "float32", ("axpy", "float16"): "float32",
    ("relu", "float16"): "float32", ("leaky_relu", "float16"): "float32", ("gelu", "bfloat16"): "float16",
    ("cast", "float16"): "float32", ("cast", "bfloat16"): "float32", ("softmax", "bfloat16"): "float16",
    ("layernorm", "bfloat16"): "float16", ("rmsnorm", "bfloat16"): "float16", ("matmul", "bfloat16"): "float16",
    ("matmul_queue", "bfloat16"): "float16", ("linear", "bfloat16"): "float16",
    ("matmul_req8", "int8"): ("matmul_int8", "int8"), ("matmul_deq16", "int8"): ("matmul_int8", "int8"),
}
# (kernel, dtype) -> the cases that run by default and together check every part of its code at level full
COVERED_AT_FULL = {
    # linear-float16 is the same kernel with its float16 casts (gelu), linear_leaky-float32 the leaky ReLU
    # activation inside it (the vector side computes in float32 for every dtype); bfloat16's casts are the
    # same code as float16's
    ("linear_leaky", "float16"): ("linear-float16", "linear_leaky-float32"),
    ("linear_leaky", "bfloat16"): ("linear-float16", "linear_leaky-float32"),
}


def _full_case(kernel: str, dtype: str):
    twin = SAME_CODE_AT_FULL.get((kernel, dtype))
    covered = COVERED_AT_FULL.get((kernel, dtype))
    if covered is not None:
        return pytest.param(kernel, dtype, marks=pytest.mark.slow(
            reason=f"covered by {' and '.join(covered)}, which run by default"))
    if twin is None:
        return pytest.param(kernel, dtype)
    name = "-".join(twin) if isinstance(twin, tuple) else f"{kernel}-{twin}"
    return pytest.param(kernel, dtype, marks=pytest.mark.slow(
        reason=f"the same code as {name}, which runs by default"))


@pytest.mark.parametrize("kernel, dtype", [_full_case(k.name, d) for k in KERNELS for d in k.dtypes])
def test_bundled_kernel_is_clean_at_full(rng, kernel, dtype):
    k = next(k for k in KERNELS if k.name == kernel)
    args = k.make_inputs(rng, dtype, _small_shape(k))
    ok, err = compare(k.run(*args, **FULL), k.reference(*args), k.tol(dtype))
    assert ok, f"{kernel} {dtype}: largest error {err}"


@pytest.mark.parametrize("kernel", ["add", "softmax"])
def test_bundled_kernel_is_clean_at_full_in_debug_mode(rng, kernel):
    k = next(k for k in KERNELS if k.name == kernel)
    args = k.make_inputs(rng, "float32", _small_shape(k))
    ok, err = compare(k.run(*args, debug=True, **FULL), k.reference(*args), k.tol("float32"))
    assert ok, f"{kernel}: largest error {err}"
