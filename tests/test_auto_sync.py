"""Automatic synchronisation (``auto_sync``/``insert_sync``, ``LocalTensorAuto``) and ``verify_sync``.

The bundled kernels written with explicit flags are stripped of every
``set_flag``/``wait_flag``/``pipe_barrier`` line (tests write them into a
package of their own): without auto sync the race checker must report the
first unordered access, with it they must compute the NumPy result and run
clean at check level ``full``.
"""
from __future__ import annotations

import importlib
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import hb
import npuemu.kernels

FULL = {"check": "full"}
SYNC_LINE = re.compile(r"^(\s*)asc\.(set_flag|wait_flag|pipe_barrier)\(.*\)\s*$")


@pytest.fixture(scope="module")
def stripped(tmp_path_factory):
    """The bundled kernels with their explicit synchronisation removed, as package ``syncfree_kernels``."""
    root = tmp_path_factory.mktemp("syncfree")
    pkg = root / "syncfree_kernels"
    pkg.mkdir()
    removed = 0
    for src in Path(npuemu.kernels.__path__[0]).glob("*.py"):
        lines = []
        for line in src.read_text().splitlines():
            m = SYNC_LINE.match(line)
            if m:
                removed += 1
                line = f"{m.group(1)}pass"
            lines.append(line.replace("npuemu.kernels", "syncfree_kernels"))
        (pkg / src.name).write_text("\n".join(lines) + "\n")
    assert removed > 20
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("syncfree_kernels.catalog")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.startswith("syncfree_kernels")]:
            del sys.modules[name]


def _bundled(catalog, name, shape, **launch):
    k = next(k for k in catalog.KERNELS if k.name == name)
    args = k.make_inputs(np.random.default_rng(7), "float32", shape)
    out = k.run(*args, **launch)
    return out, k.reference(*args), k.tol("float32")


@pytest.mark.parametrize("name, shape", [
    ("add_static", (4096,)), ("layernorm", (5, 200)), ("softmax", (33, 200)), ("matmul", (17, 40, 33)),
    ("add", (4096,)),       # TQue-based: the queues order it already, the inserted syncs come on top
])
def test_bundled_kernel_without_its_flags_runs_clean_with_auto_sync(stripped, name, shape):
    out, ref, tol = _bundled(stripped, name, shape, auto_sync=True, **FULL)
    ok, worst = stripped.compare(out, ref, tol)
    assert ok, worst


@pytest.mark.parametrize("name, shape, file, line, message", [
    ("add_static", (4096,), "add_static.py", "asc.add(lz[half:], lx[half:], ly[half:], count)",
     r"RAW: V read of UB .* MTE2 write .*\(missing set_flag/wait_flag MTE2_V"),
    ("matmul", (17, 40, 33), "_cube.py", "asc.load_data(a2[i * k_blocks * ROWS * c0:]",
     r"RAW: MTE1 read of L1 .* MTE2 write .*\(missing set_flag/wait_flag MTE2_MTE1"),
    ("layernorm", (5, 200), "_rows.py", "return t.get_value(0)", r"RAW: S read of UB .* V write"),
])
def test_bundled_kernel_without_its_flags_is_racy_as_written(stripped, name, shape, file, line, message):
    with pytest.raises(errors.RaceError) as info:
        _bundled(stripped, name, shape, **FULL)
    e = info.value
    assert e.rule == "race" and re.search(message, str(e)), str(e)
    assert e.loc.filename.endswith(f"syncfree_kernels/{file}") and e.loc.line_text.strip().startswith(line)


# ---------------------------------------------------------------------------- a sync-free kernel with branches

N = 256


@asc.jit
def branchy(x: asc.GlobalAddress, z: asc.GlobalAddress, tiles: int, skip: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, N * 4, N)
    for i in range(tiles):
        if i == skip:
            continue
        asc.data_copy(t, xg[i * N:], N)
        if i % 2 == 0:
            asc.adds(u, t, 1.0, N)
        else:
            asc.muls(u, t, 2.0, N)
        if i >= 0 and u.get_value(0) > -1.0e30:        # a scalar read only reached when i >= 0
            asc.data_copy(zg[i * N:], u, N)


def _branchy_reference(x: np.ndarray, skip: int) -> np.ndarray:
    z = np.zeros_like(x)
    for i in range(len(x) // N):
        if i != skip:
            tile = x[i * N:(i + 1) * N]
            z[i * N:(i + 1) * N] = tile + np.float32(1) if i % 2 == 0 else tile * np.float32(2)
    return z


def test_sync_free_kernel_with_branches_and_continue():
    x = np.random.default_rng(1).standard_normal(5 * N).astype(np.float32)
    z = np.zeros_like(x)
    with pytest.raises(errors.RaceError, match=r"RAW: V read .* races with the MTE2 write") as info:
        branchy[1](x, z, 5, 2, **FULL)
    assert "asc.adds(u, t, 1.0, N)" in info.value.loc.line_text
    z = np.zeros_like(x)
    branchy[1](x, z, 5, 2, auto_sync=True, **FULL)
    np.testing.assert_array_equal(z, _branchy_reference(x, 2))
    source = branchy.compile([asc.float32, asc.float32, int, int], auto_sync=True, **FULL).source
    assert "sync__set_flag" in source and "hb__wait_flag" in source
    # below check level full the same syncs are inserted, without the race checker's clocks
    z = np.zeros_like(x)
    branchy[1](x, z, 5, 2, auto_sync=True)
    np.testing.assert_array_equal(z, _branchy_reference(x, 2))
    default = branchy.compile([asc.float32, asc.float32, int, int], auto_sync=True).source
    assert "hb__" not in default
    assert default.count("sync__set_flag(") == source.count("sync__set_flag(")


# ---------------------------------------------------------------------------- LocalTensorAuto


@asc.jit
def vadd_auto(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block: asc.ConstExpr[int],
              tile: asc.ConstExpr[int]):
    off = asc.get_block_idx() * block
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + off)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + off)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + off)
    for i in range(block // tile):
        xl = asc.LocalTensorAuto(x.dtype, tile)
        yl = asc.LocalTensorAuto(y.dtype, (tile // 8, 8))
        zl = asc.LocalTensorAuto(z.dtype, tile)
        asc.data_copy(xl, xg[i * tile:], count=tile)
        asc.data_copy(yl, yg[i * tile:], count=tile)
        asc.add(zl, xl, yl, tile)
        asc.data_copy(zg[i * tile:], zl, count=tile)


def test_local_tensor_auto_kernel_gets_auto_sync_and_runs_clean():
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    z = np.zeros_like(x)
    vadd_auto[4](x, y, z, 1024, 256, **FULL)
    np.testing.assert_array_equal(z, x + y)
    # what docs/auto-sync.md says is inserted: the RAW pairs in the body, the WAR pairs from the previous
    # iteration, nothing between the three GM parameters
    source = vadd_auto.compile([asc.float32] * 3 + [1024, 256], **FULL).source
    events = re.findall(r"sync__set_flag\(_st, np\.int64\((\d+)\), np\.int64\(7\)", source)
    assert sorted(asc.HardEvent(int(e)).name for e in events) == ["MTE2_V", "MTE3_V", "V_MTE2", "V_MTE3"]


@asc.jit
def too_big(x: asc.GlobalAddress):
    a = asc.LocalTensorAuto(asc.float32, 32 * 1024)
    b = asc.LocalTensorAuto(asc.float32, 32 * 1024)
    asc.duplicate(a, 0.0, 8)
    asc.duplicate(b, 0.0, 8)


def test_local_tensor_auto_beyond_ub_is_a_capacity_error_naming_the_line():
    with pytest.raises(errors.CapacityError) as info:
        too_big[1](np.zeros(8, np.float32))
    assert "b = asc.LocalTensorAuto(asc.float32, 32 * 1024)" in info.value.loc.line_text


def test_local_tensor_auto_needs_a_constant_shape():
    @asc.jit
    def runtime_shape(x: asc.GlobalAddress, n: int):
        asc.LocalTensorAuto(asc.float32, n)

    with pytest.raises(errors.KernelTypeError, match="shape must be a compile-time"):
        runtime_shape[1](np.zeros(8, np.float32), 8)


# ---------------------------------------------------------------------------- verify_sync


@asc.jit
def over_synced(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    u = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, N * 4, N)
    asc.data_copy(t, xg, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_flag(asc.HardEvent.MTE3_V, 0)
    asc.wait_flag(asc.HardEvent.MTE3_V, 0)
    asc.adds(u, t, 1.0, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_sync_barrier(asc.MemDsbT.ALL)
    asc.data_copy(zg, u, N)
    asc.set_flag(asc.HardEvent.MTE3_V, 1)
    asc.wait_flag(asc.HardEvent.MTE3_V, 1)


def test_verify_sync_warns_about_redundant_waits_and_barriers_only():
    x = np.arange(N, dtype=np.float32)
    z = np.zeros_like(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        over_synced[1](x, z, verify_sync=True)
    np.testing.assert_array_equal(z, x + 1)
    lines = [str(w.message) for w in caught if issubclass(w.category, errors.RedundantSyncWarning)]
    # MTE3 has done nothing before the first MTE3_V wait; the barrier before it left the data_sync_barrier
    # nothing to order (the barrier is used: UB tensors whose ranges are unknown may overlap); the last
    # wait is followed by no access (it only ends the flag protocol)
    assert any("asc.wait_flag(asc.HardEvent.MTE3_V, 0)" in t for t in lines), lines
    assert any("asc.data_sync_barrier(asc.MemDsbT.ALL)" in t for t in lines), lines
    assert not any("MTE2_V" in t or "V_MTE3" in t or "MTE3_V, 1" in t or "PIPE_ALL" in t for t in lines), lines
    assert len(lines) == 2
    assert "orders nothing a later access needs" in lines[0]
    # the reports are kept with the binary: a process that loads it from the store is warned too
    over_synced.builder.clear()
    with pytest.warns(errors.RedundantSyncWarning, match="orders nothing"):
        over_synced[1](x, z, verify_sync=True)


def test_verify_sync_accepts_the_bundled_hand_synchronised_kernel():
    """add_static's flags are all needed: through the loop's back edge, or to end the flag protocol."""
    from npuemu.kernels import add_static
    x, y = (np.random.default_rng(5).standard_normal(4096).astype(np.float32) for _ in range(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", errors.RedundantSyncWarning)
        out = add_static.add_static(x, y, verify_sync=True)
    np.testing.assert_array_equal(out, x + y)


# ---------------------------------------------------------------------------- the analysis on its own


def _plan(kernel_type=asc.KernelType.AIV_ONLY):
    from npuemu.frontend.autosync import SyncPlan
    return SyncPlan(kernel_type)


def _needs(plan):
    plan.analyse()
    return {a.loc: {hb.PIPE_NAMES[q] for q in plan.need[a.slot]} for a in plan.slots}


def test_analysis_orders_raw_war_and_waw_but_not_disjoint_ranges():
    p = _plan()
    p.access(hb.MTE2, "UB", (0, 64), True, 1)        # load a
    p.access(hb.MTE2, "UB", (64, 128), True, 2)      # load b
    p.access(hb.V, "UB", (0, 64), False, 3)          # V reads a: MTE2 first
    p.access(hb.V, "UB", (128, 192), True, 4)        # V writes c: nothing pending on c
    p.access(hb.MTE3, "UB", (128, 192), False, 5)    # MTE3 reads c: V first
    p.access(hb.MTE2, "UB", (0, 64), True, 6)        # reload a: V read it (WAR)
    p.access(hb.MTE3, "L1", None, True, 7)           # another memory: nothing
    assert _needs(p) == {1: set(), 2: set(), 3: {"MTE2"}, 4: set(), 5: {"V"}, 6: {"V"}, 7: set()}


def test_analysis_carries_accesses_around_loops_and_through_break_and_continue():
    p = _plan()
    p.enter("loop")
    p.access(hb.MTE2, "UB", (0, 64), True, 1)        # the next iteration's load waits for the V read
    p.enter("if")
    p.jump("continue")                               # skips the rest: the load is still pending for V
    p.leave()
    p.access(hb.V, "UB", (0, 64), False, 2)
    p.enter("if")
    p.jump("break")
    p.leave()
    p.access(hb.S, "UB", (0, 64), True, 3)           # scalar write after V's read
    p.leave()
    p.access(hb.MTE3, "UB", (0, 64), False, 4)       # after the loop: the load (via break) and the S write
    needs = _needs(p)
    assert needs[1] == {"V", "S"} and needs[2] == {"MTE2", "S"} and needs[3] == {"V", "MTE2"}
    assert needs[4] == {"MTE2", "S"}


def test_analysis_joins_branches_and_barriers_clear_everything():
    p = _plan()
    p.enter("if")
    p.access(hb.MTE2, "GM1", None, False, 1)
    p.orelse()
    p.access(hb.MTE2, "UB", None, True, 2)
    p.leave()
    p.access(hb.MTE3, "GM1", None, True, 3)          # WAR on parameter 1's GM from the then-branch
    p.access(hb.MTE3, "GM2", None, True, 4)          # another parameter: nothing
    p.access(hb.V, "UB", None, False, 5)             # RAW from the else-branch
    p.barrier(6)
    p.access(hb.MTE2, "UB", None, True, 7)           # after a full barrier: nothing
    assert _needs(p) == {1: set(), 2: set(), 3: {"MTE2"}, 4: set(), 5: {"MTE2"}, 7: set()}


def test_pairs_without_a_flag_become_a_full_barrier():
    p = _plan(asc.KernelType.AIC_ONLY)
    p.access(hb.FIX, "GM", None, True, 1)
    p.access(hb.MTE2, "GM", None, False, 2)          # FIX_MTE2: no flag on the cube core
    p.access(hb.MTE1, "L1", None, False, 3)
    p.analyse()
    lines = p.sync_lines(1, lambda m, f: f"{m}__{f}", full=True)
    assert lines[0].startswith("sync__pipe_barrier(_st, np.int64(6)") and "hb__barrier_all" in lines[1]
    assert not p.need[2]                            # the barrier ordered everything before it


@pytest.mark.parametrize("blocks, load_after_enque, needs", [
    (1, False, set()),          # deque takes the enque's publication: the load is ordered
    (1, True, {"MTE2"}),        # a load after the enque is not
    (2, False, {"MTE2"}),       # double buffered: which publication a deque takes is not tracked
])
def test_single_buffer_queues_order_what_they_publish(blocks, load_after_enque, needs):
    p = _plan()
    p.queue_blocks(0, blocks)
    p.access(hb.MTE2, "UB", None, True, 1)
    p.queue(0, "data", True, hb.MTE2, hb.V)          # enque
    if load_after_enque:
        p.access(hb.MTE2, "UB", None, True, 2)
    p.queue(0, "data", False, hb.MTE2, hb.V)         # deque
    p.access(hb.V, "UB", None, False, 3)
    assert _needs(p)[3] == needs
