"""The scalar DCache: stale values as the hardware gives them, and the full-level reports that explain them.

Three layers:

* the cache model itself, driven through its instructions with hand-made
  cores (no kernel to compile): hits, write-back, LRU eviction, the whole
  line a write-back stores, and the hazards the ``full`` checks raise;
* kernels (the broken/fixed pairs of ``tests/corpus/case_dcache_*`` plus a
  few here) whose results at check level ``default`` are the stale values
  computed by hand, and whose ``full`` runs raise :class:`DCacheError` at the
  scalar access that caused the problem;
* ``data_cache_clean_and_invalid``'s forms and compile-time errors.

Multi-core kernels without cross-core synchronisation rely on npuemu running
the cores of a ``full`` (or debug) launch one after another in core order.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from corpus import (case_dcache_false_sharing, case_dcache_lost_write, case_dcache_stale_dma_read,
                    case_dcache_stale_read)
from npuemu import errors
from npuemu.isa import dcache, dcache_checks, dcache_lines, hb, tensor
from npuemu.isa import state as S
from npuemu.isa.fault import Fault
from npuemu.platform import Platform, get_platform
from npuemu.runtime import shadows

PLATFORM = get_platform("Ascend910B1")
SBITS, WAYS, LBITS = dcache.geometry(PLATFORM)
GEO = dcache.pack(PLATFORM)
LINE = 1 << LBITS
SETS = 1 << SBITS
HAS_SYNC_ALL = hasattr(asc, "sync_all")
RACE_CHECKER = shadows.core_words(1, 1024) > 1


# --------------------------------------------------------------------------- the model, instruction by instruction


class Cores:
    """``n`` emulated cores sharing one DCache array and one GM region, driven by hand.

    ``full`` selects the checking forms of the instructions, as a binary
    built for check level full calls them.
    """

    def __init__(self, n: int = 2, gm_bytes: int = 64 * 1024, full: bool = False):
        self.gm = (np.arange(gm_bytes, dtype=np.int64).astype(np.uint8),)
        self.dc = np.zeros(dcache.dc_bytes(n, PLATFORM), np.uint8)
        self.full = full
        self.st = []
        for slot in range(n):
            st = np.zeros(S.STATE_SIZE, np.int64)
            st[S.CORE_SLOT], st[S.BLOCK_IDX], st[S.CHECK_FULL] = slot, slot, full
            self.st.append(st)
        self.sh = [shadows.new_core_shadow(slot, n, 1024) for slot in range(n)]
        self.gsh = shadows.new_gm_shadows([gm_bytes], n, True)

    def _call(self, fn: str, core: int, *args):
        if self.full:
            return getattr(dcache, f"{fn}_full")(self.st[core], self.sh[core], self.gsh, self.gm, self.dc, *args)
        return getattr(dcache, fn)(self.st[core], self.gm, self.dc, *args)

    def read(self, core: int, at: int) -> int:
        return int(self.dc[self._call("load", core, 0, at, 1, GEO, 0)])

    def write(self, core: int, at: int, value: int, loc: int = 0) -> None:
        self.dc[self._call("store", core, 0, at, 1, GEO, loc)] = value

    def clean(self, core: int, at: int, loc: int = 0) -> None:
        self._call("clean_invalidate_line", core, 0, at, GEO, loc)

    def clean_all(self, core: int) -> None:
        self._call("clean_invalidate_all", core, GEO, 0)

    def end(self, core: int) -> None:
        self._call("flush_at_end", core, GEO)

    def dma(self, core: int, at: int, nbytes: int, kind: int) -> None:
        dcache_checks.check_dma(self.st[core], self.dc, 0, at, nbytes, kind, 7)

    @property
    def mem(self) -> np.ndarray:
        return self.gm[0]


def test_geometry_comes_from_the_platform_profile():
    assert (PLATFORM.dcache_bytes, PLATFORM.dcache_line, PLATFORM.dcache_ways) == (32 * 1024, 64, 4)
    assert (SETS, WAYS, LINE) == (128, 4, 64)
    slice_bytes = 8 * (dcache_lines.HEADER_WORDS + 512 * dcache_lines.LINE_WORDS) + 3 * 512 * 64
    assert dcache.dc_bytes(3, PLATFORM) == 8 * dcache_lines.GLOBAL_WORDS + 3 * slice_bytes
    tiny = Platform.custom("dcache-test-direct-mapped", dcache_bytes=1024, dcache_ways=1)
    assert dcache.geometry(tiny) == (4, 1, 6)
    with pytest.raises(errors.PlatformError, match="power-of-two line"):
        Platform.custom("dcache-test-bad", dcache_line=48)


def test_a_read_hit_returns_the_cached_value_until_the_line_is_cleaned():
    c = Cores(1)
    assert c.read(0, 5) == 5                  # miss: the line is filled from GM
    c.mem[5] = 200                            # a DMA (or another core) changes GM
    assert c.read(0, 5) == 5                  # hit: the stale cached byte
    c.clean(0, 0)                             # any byte of the line names it
    assert c.read(0, 5) == 200


def test_a_write_reaches_gm_only_when_its_line_is_written_back():
    c = Cores(1)
    c.write(0, 70, 99)                        # line 1
    assert c.mem[70] == 70
    c.clean(0, 0)                             # another line: nothing to do
    assert c.mem[70] == 70
    c.end(0)                                  # the flush the compiler appends
    assert c.mem[70] == 99


def test_the_last_write_back_wins_the_whole_line():
    c = Cores(2)
    c.write(0, 0, 1)                          # both cores cache line 0 before either writes it back
    c.write(1, 8, 2)
    c.clean(0, 0)
    assert (c.mem[0], c.mem[8]) == (1, 8)
    c.clean(1, 0)                             # core 1 stores its copy of all 64 bytes: core 0's byte is lost
    want = np.arange(LINE, dtype=np.uint8)
    want[8] = 2
    np.testing.assert_array_equal(c.mem[:LINE], want)


def test_lru_eviction_writes_the_dirty_victim_back():
    c = Cores(1)
    way = SETS * LINE                         # lines this far apart share a set
    c.write(0, 0, 77)                         # set 0: line A, dirty
    for k in (1, 2, 3):
        c.read(0, k * way)                    # B, C, D fill the other three ways
    c.read(0, 0)                              # A is now the most recently used; B the least
    c.read(0, 4 * way)                        # E evicts B (clean): GM unchanged
    assert c.mem[0] == 0
    c.read(0, 5 * way)                        # F evicts C
    c.read(0, 6 * way)                        # G evicts D
    c.read(0, 7 * way)                        # H evicts A, the least recently used now: written back
    assert c.mem[0] == 77
    c.mem[4 * way] = 9
    assert c.read(0, 4 * way) == 4 * way % 256    # E is still cached (stale)


def test_clean_all_writes_back_every_dirty_line():
    c = Cores(1)
    for at in (0, 64, 5000):
        c.write(0, at, 1)
    c.clean_all(0)
    assert (c.mem[0], c.mem[64], c.mem[5000]) == (1, 1, 1)
    c.mem[64] = 3
    assert c.read(0, 64) == 3                 # invalidated too: the read misses


def test_full_level_stale_read():
    c = Cores(1, full=True)
    c.read(0, 5)
    c.mem[5] = 200
    with pytest.raises(Fault) as info:
        c.read(0, 5)
    assert info.value.args[0] == dcache_checks.F_STALE_READ
    assert c.read(0, 6) == 6                  # bytes GM did not change read clean


def test_full_level_lost_write_names_the_scalar_write():
    c = Cores(2, full=True)
    c.write(0, 0, 1, loc=11)
    c.write(1, 8, 2, loc=12)
    c.clean(0, 0)
    with pytest.raises(Fault) as info:
        c.clean(1, 0, loc=13)
    code, loc, rid, byte, site = info.value.args
    assert (code, loc, rid, byte, site) == (dcache_checks.F_LOST_WRITE, 12, 0, 0, 13)
    assert c.mem[8] == 8                      # checked before anything was written


def test_full_level_read_of_another_cores_unflushed_write():
    c = Cores(2, full=True)
    c.write(0, 3, 42, loc=21)
    assert c.read(1, 4) == 4                  # other bytes of the line are fine
    with pytest.raises(Fault) as info:
        c.read(1, 3)
    assert info.value.args[0] == dcache_checks.F_UNFLUSHED_READ and info.value.args[4] == 21
    c.clean(0, 0)
    c.clean(1, 0)
    assert c.read(1, 3) == 42


def test_full_level_dma_against_dirty_lines():
    c = Cores(2, full=True)
    c.write(1, 130, 5, loc=31)                # line 2, byte 130 written
    c.dma(0, 128, 2, hb.READ)                 # bytes the core did not write: the DMA reads GM correctly
    c.dma(0, 131, 61, hb.READ_SPAN)
    with pytest.raises(Fault) as info:
        c.dma(0, 100, 40, hb.READ)
    assert info.value.args[0] == dcache_checks.F_DMA_READ_DIRTY and info.value.args[3] == 130
    with pytest.raises(Fault) as info:
        c.dma(0, 190, 4, hb.WRITE)            # any byte of the dirty line: its write-back would undo it
    assert info.value.args[0] == dcache_checks.F_DMA_WRITE_DIRTY and info.value.args[4] == 31
    c.dma(0, 192, 64, hb.WRITE)               # the next line is free


def test_a_scalar_element_at_the_end_of_a_region_that_ends_mid_line():
    gm = (np.arange(40, dtype=np.uint8),)
    dc = np.zeros(dcache.dc_bytes(1, PLATFORM), np.uint8)
    st = np.zeros(S.STATE_SIZE, np.int64)
    at = tensor.gm_elem(gm, 0, 0, -1, 4, 9, 0)
    p = tensor.gm_get_i32(st, gm, dc, 0, at, GEO, 0)           # where the element sits in the cache
    assert dc[p:p + 4].view(np.int32)[0] == np.arange(36, 40, dtype=np.uint8).view(np.int32)[0]
    p = tensor.gm_set_i32(st, gm, dc, 0, at, GEO, 0)
    dc[p:p + 4].view(np.int32)[0] = -1
    dcache.flush_at_end(st, gm, dc, GEO)
    assert gm[0][36:].view(np.int32)[0] == -1 and gm[0][35] == 35     # only the region's bytes are stored
    with pytest.raises(Fault):
        tensor.gm_elem(gm, 0, 0, -1, 4, 10, 0)    # past the region: refused before the cache is asked


# --------------------------------------------------------------------------- kernels: stale values at default


def test_scalar_read_after_dma_returns_the_stale_value(mode):
    np.testing.assert_array_equal(case_dcache_stale_read.run(False, **mode), [5, 5])
    case_dcache_stale_read.run(True, **mode)                 # [5, 105]


def test_dma_after_scalar_write_reads_the_old_value(mode):
    x = np.arange(8, dtype=np.int32) + 10
    out = np.zeros(8, np.int32)
    case_dcache_stale_dma_read.bump_and_copy_kernel[1](x, out, 0, **mode)
    np.testing.assert_array_equal(out, np.arange(8) + 10)    # the DMA missed the bump
    assert x[0] == 11                                         # which reached GM at the end of the kernel


def test_dma_write_into_a_dirty_line_is_undone_by_the_write_back(mode):
    x = case_dcache_lost_write.run(False, **mode)
    want = np.arange(32, dtype=np.int32) + 100
    want[0] = 8                                               # the header; the payload x[8:16] = 7 is lost
    np.testing.assert_array_equal(x, want)


@pytest.mark.skipif(not HAS_SYNC_ALL, reason="needs sync_all")
def test_false_sharing_keeps_one_cores_whole_line(mode):
    flags = case_dcache_false_sharing.run(False, **mode)
    # every core cached the zeroed line and wrote its own slot: GM ends as one core's copy of it
    copies = [np.where(np.arange(4) == k, k + 1, 0) for k in range(4)]
    assert any(np.array_equal(flags[:4], c) for c in copies), flags[:4]
    assert not flags[4:].any()
    case_dcache_false_sharing.run(True, **mode)


@asc.jit
def partial_clean_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress):
    """Scalar-write two lines of x, clean only the line holding x[4], then DMA all of x to out."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 128)
    t = buf.get(asc.int64)
    for i in range(16):
        xg.set_value(i, -i)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg[4:])
    asc.set_flag(asc.HardEvent.S_MTE2, 0)
    asc.wait_flag(asc.HardEvent.S_MTE2, 0)
    asc.data_copy(t, xg, 16)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(og, t, 16)


def test_single_line_clean_covers_only_the_line_of_the_address(mode):
    x = np.arange(1, 17, dtype=np.int64)
    out = np.zeros(16, np.int64)
    partial_clean_kernel[1](x, out, **mode)
    np.testing.assert_array_equal(out[:8], -np.arange(8))         # x[4]'s line: elements 0..7
    np.testing.assert_array_equal(out[8:], np.arange(9, 17))      # the next line was still dirty
    np.testing.assert_array_equal(x, -np.arange(16))              # everything is in GM after the kernel
    with pytest.raises(errors.DCacheError, match="stale DMA read") as info:
        partial_clean_kernel[1](np.zeros(16, np.int64), out, check="full", **mode)
        if not _dma_declared(partial_clean_kernel):
            pytest.skip("data_copy does not declare its GM accesses to checks.gm_access yet")
    assert "xg.set_value(i, -i)" in str(info.value) and info.value.loc.line_text.strip().startswith("asc.data_copy(t")


def _dma_declared(kernel) -> bool:
    """Whether the kernel's full-level binary declares its DMA accesses (checks.gm_access)."""
    return any("gm_access" in b.source for b in kernel.binaries()
               if "check=full" in b.source)


@asc.jit
def evict_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, far: int):
    """Write x[0] by scalar, read x[far] (which may evict x[0]'s line), then DMA x[0:8] to out."""
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    xg.set_value(0, 7)
    og.set_value(16, xg.get_value(far))        # a line of its own: the DMA below writes out[0:8]
    asc.set_flag(asc.HardEvent.S_MTE2, 0)
    asc.wait_flag(asc.HardEvent.S_MTE2, 0)
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(og, t, 8)


def test_the_platform_geometry_decides_evictions():
    # a 1 KiB direct-mapped cache: x[256] (byte 1024) maps to x[0]'s set and evicts it
    tiny = Platform.custom("dcache-test-tiny", dcache_bytes=1024, dcache_ways=1)
    for platform, first in ((PLATFORM, 0), (tiny, 7)):
        x = np.arange(512, dtype=np.int32)
        out = np.zeros(32, np.int32)
        evict_kernel[1](x, out, 256, platform=platform)
        assert out[0] == first and out[16] == 256
        assert x[0] == 7


@asc.jit
def dtypes_kernel(h: asc.GlobalAddress, b: asc.GlobalAddress, u: asc.GlobalAddress, i8: asc.GlobalAddress,
                  d: asc.GlobalAddress, n: int):
    hg = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    ug = asc.GlobalTensor()
    ig = asc.GlobalTensor()
    dg = asc.GlobalTensor()
    hg.set_global_buffer(h)
    bg.set_global_buffer(b)
    ug.set_global_buffer(u)
    ig.set_global_buffer(i8)
    dg.set_global_buffer(d)
    for k in range(n):
        hg.set_value(k, hg.get_value(k) * 2.0)
        bg.set_value(k, bg(k) + 1.0)
        ug.set_value(k, ug.get_value(k) + 1)
        ig.set_value(k, ig.get_value(k) - 1)
        dg.set_value(k, dg.get_value(k) * 0.5)


def test_every_storage_type_round_trips_through_the_dcache(mode, rng):
    n = 100                                   # several lines of each, a tail in the last one
    h = rng.standard_normal(n).astype(np.float16)
    bf = (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    u = rng.integers(0, 1 << 62, n, dtype=np.uint64) | np.uint64(1 << 63)
    i8 = rng.integers(-100, 100, n, dtype=np.int8)
    d = rng.standard_normal(n)
    # scalars are float32 in kernel code: a float64 element is rounded to float32 on the way
    want = (h * np.float16(2), None, u + np.uint64(1), i8 - 1, (d.astype(np.float32) * np.float32(0.5)).astype(d.dtype))
    bf_want = ((bf.astype(np.uint32) << 16).view(np.float32) + np.float32(1)).view(np.uint32)
    args = [h.copy(), asc_bf16(bf.copy()), u.copy(), i8.copy(), d.copy()]
    dtypes_kernel[1](*args, n, **mode)
    np.testing.assert_array_equal(args[0], want[0])
    # bf16 + 1.0 rounds to nearest even in bf16: compare through float32 within half an ulp
    got_bf = (args[1].array.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_allclose(got_bf, bf_want.view(np.float32), rtol=2 ** -8)
    for a, w in zip(args[2:], want[2:]):
        np.testing.assert_array_equal(a, w)


def asc_bf16(bits: np.ndarray):
    import npuemu
    return npuemu.gm_buffer(bits, asc.bfloat16)


# --------------------------------------------------------------------------- kernels: full-level reports


def _raises_at(fn, text: str, line: str):
    with pytest.raises(errors.DCacheError) as info:
        fn()
    assert text in str(info.value), str(info.value)
    assert info.value.loc is not None and info.value.loc.line_text.strip() == line, str(info.value)
    assert info.value.rule == "dcache coherence" and info.value.core == "AIV 0"
    return info.value


def test_full_reports_a_stale_read_at_the_read_and_names_the_fill(mode):
    err = _raises_at(lambda: case_dcache_stale_read.run(False, check="full", **mode),
                     "stale read", "og.set_value(1, xg.get_value(0))")
    assert "cached by" in err.detail and "before = xg.get_value(0)" in err.detail


def test_full_reports_the_lost_write_at_the_scalar_write_or_the_dma(mode):
    with pytest.raises(errors.DCacheError, match="lost write") as info:
        case_dcache_lost_write.run(False, check="full", **mode)
    text = info.value.loc.line_text.strip()
    if text.startswith("asc.data_copy"):     # data_copy declares its GM accesses: caught at the DMA
        assert "xg.set_value(0, 8)" in info.value.detail
    else:                                     # caught when the kernel-end flush writes the line back
        assert text == "xg.set_value(0, 8)" and "end of the kernel" in info.value.detail


def test_full_reports_a_stale_dma_read_naming_the_scalar_write(mode):
    case_dcache_stale_dma_read.run(True, check="full", **mode)       # the twin is clean
    if not case_dcache_stale_dma_read.dma_declared():
        pytest.skip("data_copy does not declare its GM accesses to checks.gm_access yet")
    err = _raises_at(lambda: case_dcache_stale_dma_read.run(False, check="full", **mode),
                     "stale DMA read", "asc.data_copy(t, xg, 8)")
    assert "this core (AIV 0)" in err.detail and "xg.set_value(0, xg.get_value(0) + 1)" in err.detail


@pytest.mark.skipif(not HAS_SYNC_ALL, reason="needs sync_all")
def test_full_reports_false_sharing_as_a_lost_write(mode):
    with pytest.raises(errors.DCacheError, match="lost write") as info:
        case_dcache_false_sharing.run(False, check="full", **mode)
    assert info.value.loc.line_text.strip() == "fg.set_value(i * stride, i + 1)"
    assert "data_cache_clean_and_invalid" in info.value.detail


@asc.jit
def handoff_kernel(data: asc.GlobalAddress, out: asc.GlobalAddress, clean: int):
    """Core 0 writes data[0] by scalar; after sync_all core 1 reads it by scalar."""
    dg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    dg.set_global_buffer(data)
    og.set_global_buffer(out)
    if asc.get_block_idx() == 0:
        dg.set_value(0, 42)
        if clean:
            asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, dg)
    asc.sync_all()
    if asc.get_block_idx() == 1:
        og.set_value(0, dg.get_value(0))


@pytest.mark.skipif(not HAS_SYNC_ALL, reason="needs sync_all")
def test_a_value_another_core_has_not_cleaned(mode):
    mix = {"kernel_type": asc.KernelType.MIX_AIV_1_0}
    data, out = np.zeros(16, np.int32), np.full(16, -1, np.int32)
    handoff_kernel[2](data, out, 0, **mix, **mode)
    assert (out[0], data[0]) == (0, 42)      # core 1 read GM before core 0's write left its DCache
    data, out = np.zeros(16, np.int32), np.full(16, -1, np.int32)
    handoff_kernel[2](data, out, 1, check="full", **mix, **mode)
    assert out[0] == 42
    with pytest.raises(errors.DCacheError, match="stale read") as info:
        handoff_kernel[2](np.zeros(16, np.int32), out, 0, check="full", **mix, **mode)
    assert info.value.core == "AIV 1" and "which AIV 0 holds dirty" in info.value.detail
    assert "dg.set_value(0, 42)" in info.value.detail


@asc.jit
def slots_kernel(out: asc.GlobalAddress, stride: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    i = asc.get_block_idx()
    g.set_value(i * stride, i + 1)


@pytest.mark.skipif(not RACE_CHECKER, reason="needs the race checker")
def test_unsynchronised_cores_writing_one_line_race_at_full():
    out = np.zeros(64, np.int32)
    slots_kernel[4](out, 16, check="full")                    # a line each
    np.testing.assert_array_equal(out[::16], [1, 2, 3, 4])
    with pytest.raises(errors.RaceError, match=r"S write of GM bytes \[0, 64\)"):
        slots_kernel[4](np.zeros(64, np.int32), 1, check="full")


# --------------------------------------------------------------------------- the API


@asc.jit
def forms_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    xg.set_value(0, 1)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, asc.DcciDst.CACHELINE_OUT, xg)
    xg.set_value(16, 2)
    asc.data_cache_clean_and_invalid(entire_type=asc.CacheLine.SINGLE_CACHE_LINE, dst=xg[16:],
                                     dcci_dst=asc.DcciDst.CACHELINE_ALL)
    xg.set_value(32, 3)
    asc.data_cache_clean_and_invalid(asc.CacheLine.ENTIRE_DATA_CACHE, xg)
    asc.icache_preload(2)
    xg.set_value(48, asc.get_icache_preload_status())


def test_clean_and_invalidate_forms(mode):
    x = np.full(64, -1, np.int32)
    forms_kernel[1](x, check="full", **mode)
    assert (x[0], x[16], x[32], x[48]) == (1, 2, 3, 0)


@asc.jit
def misuse_kernel(x: asc.GlobalAddress, n: int, which: asc.ConstExpr[int]):
    """One wrong data_cache_clean_and_invalid call, picked at compile time."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    if which == 0:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg, asc.DcciDst.CACHELINE_UB)
    if which == 1:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, asc.DcciDst.CACHELINE_ATOMIC, xg)
    if which == 2:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, t)
    if which == 3:
        asc.data_cache_clean_and_invalid(n, xg)


@pytest.mark.parametrize("which, message", [
    (0, "DcciDst.CACHELINE_UB is a reserved value"),
    (1, "DcciDst.CACHELINE_ATOMIC is a reserved value"),
    (2, "dst of data_cache_clean_and_invalid must be a GlobalTensor"),
    (3, "entire_type must be a compile-time constant"),
])
def test_clean_and_invalidate_compile_errors(which, message):
    with pytest.raises(errors.KernelTypeError, match=message) as info:
        misuse_kernel[1](np.zeros(8, np.int32), 0, which)
    assert info.value.loc.line_text.strip().startswith("asc.data_cache_clean_and_invalid(")


def test_kernels_without_scalar_gm_access_get_no_dcache_code():
    from corpus import case_gm_out_of_bounds
    for level in ("off", "default", "full"):
        case_gm_out_of_bounds.run(True, check=level)
    for binary in case_gm_out_of_bounds.copy_kernel.binaries():
        assert "dcache" not in binary.source and not binary.facts.dcache
    forms_kernel[1](np.zeros(64, np.int32))
    assert any("flush_at_end" in b.source for b in forms_kernel.binaries())
