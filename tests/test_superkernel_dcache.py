"""SuperKernel DCache rules (spec §1.8): no end-of-kernel flush for sub-kernels, get/set_value single-line
cleans, the dcci options, and the 64-byte line shared by two cores."""
from __future__ import annotations

import numpy as np
import pytest

from npuemu import superkernel as sk
from npuemu.errors import DCacheError

from superkernel_kernels import dcache_kernel


def _sk(x, out, options=None, check="full", role=0):
    kw = {"check": check}
    return sk.combine([sk.Launch(dcache_kernel, 2, (x, out, role, 77, 0), kw, name="writer"),
                       sk.Launch(dcache_kernel, 2, (x, out, 1, 0, 0), kw, name="reader")], options)


def _arrays():
    return np.arange(16, dtype=np.int32) + 5, np.zeros(16, np.int32)


def test_separate_launches_flush_at_kernel_end():
    x, out = _arrays()
    dcache_kernel[2](x, out, 0, 77, 0, check="full")
    dcache_kernel[2](x, out, 1, 0, 0, check="full")
    assert out[0] == 77


def test_set_value_line_is_cleaned_when_its_global_tensor_dies():
    x, out = _arrays()
    _sk(x, out).run()           # default: get/set_value clean their lines; the last one as the writer returns
    np.testing.assert_array_equal(out[:8], [77, 6, 7, 8, 9, 10, 11, 12])


def test_dcci_disabled_writer_leaves_the_line_dirty_and_the_next_sub_kernel_reads_stale_data():
    x, out = _arrays()
    with pytest.raises(DCacheError) as e:
        _sk(x, out, "dcci-disable-on-kernel=writer").run()
    err = e.value
    assert err.sub_kernel == "reader" and err.core == "AIV 1"
    assert "reader (sub-kernel 1" in str(err) and "data_copy(t, xg, 8)" in err.loc.line_text
    assert "AIV 0 holds dirty" in str(err) and "xg.set_value(0, value)" in str(err)    # the writer's line
    x, out = _arrays()
    _sk(x, out, "dcci-disable-on-kernel=writer", check="default").run()
    assert out[0] == 5          # the old value: core 0's line never reached GM before the DMA read
    assert x[0] == 77           # the SuperKernel's own end-of-kernel flush wrote it back afterwards


def test_an_element_assignment_is_never_cleaned_and_the_next_sub_kernel_reads_stale_data():
    x, out = _arrays()
    with pytest.raises(DCacheError, match="stale DMA read") as e:
        _sk(x, out, role=3).run()          # default options: set_value would be cleaned, g[0] = v is not
    assert e.value.sub_kernel == "reader" and "xg[0] = value" in str(e.value)
    x, out = _arrays()
    _sk(x, out, check="default", role=3).run()
    assert out[0] == 5 and x[0] == 77       # the old value by DMA; the SuperKernel's end wrote it back
    x, out = _arrays()
    _sk(x, out, "dcci-after-kernel-end=writer", role=3).run()
    assert out[0] == 77


def test_an_element_assignment_outside_a_superkernel_is_flushed_at_kernel_end():
    x, out = _arrays()
    dcache_kernel[2](x, out, 3, 77, 0, check="full")
    dcache_kernel[2](x, out, 1, 0, 0, check="full")
    assert x[0] == 77 and out[0] == 77


def test_dcci_after_kernel_end_cleans_the_whole_cache_after_the_writer():
    x, out = _arrays()
    _sk(x, out, {"dcci_after_kernel_end": ["writer"]}).run()
    assert out[0] == 77


def test_two_cores_writing_one_64_byte_line_lose_a_write():
    x, out = _arrays()
    s = sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 2, 40, 2), {"check": "full"}, name="writers")])
    with pytest.raises(DCacheError, match="lost write") as e:
        s.run()
    assert e.value.sub_kernel == "writers"
    x, out = _arrays()
    sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 2, 40, 2), {"check": "default"}, name="writers")]).run()
    old = np.arange(16, dtype=np.int32) + 5
    line0, line1 = old.copy(), old.copy()
    line0[0], line1[2] = 40, 41
    # one core's whole line wins (AIV 1 writes back last here); the other core's write is lost
    assert x.tobytes() in (line0.tobytes(), line1.tobytes())
    assert not (x[0] == 40 and x[2] == 41)


def test_cores_writing_their_own_lines_keep_both_writes():
    x, out = np.arange(32, dtype=np.int32), np.zeros(16, np.int32)
    sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 2, 40, 16), {"check": "full"}, name="writers")]).run()
    assert x[0] == 40 and x[16] == 41


def test_dynamic_shape_and_debug_dcci_all_clean_the_whole_cache_after_the_writer():
    x, out = _arrays()
    sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 0, 77, 0), {"check": "full"}, name="writer", dynamic=True),
                sk.Launch(dcache_kernel, 2, (x, out, 1, 0, 0), {"check": "full"}, name="reader")],
               "dcci-disable-on-kernel=writer").run()
    assert out[0] == 77
    x, out = _arrays()
    _sk(x, out, "dcci-disable-on-kernel=writer:debug-dcci-all=1").run()
    assert out[0] == 77


def test_dcci_before_kernel_start_cleans_before_the_call_only():
    x, out = _arrays()
    with pytest.raises(DCacheError, match="stale DMA read") as e:     # the writer's line is still dirty
        _sk(x, out, "dcci-before-kernel-start=writer").run()
    assert "xg.set_value(0, value)" in str(e.value)                   # names the writer's line
    x, out = _arrays()
    _sk(x, out, "dcci-before-kernel-start=writer:dcci-after-kernel-end=writer").run()
    assert out[0] == 77
