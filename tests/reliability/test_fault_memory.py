"""A faulting launch costs no more memory than a good one: nothing of the launch outlives it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import gc, json, sys
    import numpy as np
    import npuemu, npuemu.asc as asc

    @asc.jit
    def copy_block(x: asc.GlobalAddress, n: int):
        g = asc.GlobalTensor()
        g.set_global_buffer(x, n)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 1024)
        t = buf.get(asc.float32)
        asc.data_copy(t, g[asc.get_block_idx() * 64:], 64)

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    def launches(blocks, count, check):
        faults = 0
        for i in range(count):
            x = np.zeros(64 * 1024, np.float32)        # a fresh 256 KiB argument every time
            try:
                copy_block[blocks](x, 64, check=check)
            except npuemu.BoundsError:
                faults += 1
            if i % 50 == 49:
                gc.collect()
        return faults

    check, count = sys.argv[1], int(sys.argv[2])
    launches(1, 40, check); launches(8, 40, check)      # warm up: compile, fill the pools
    start = rss_mb()
    assert launches(1, count, check) == 0
    good = rss_mb() - start
    start = rss_mb()
    assert launches(8, count, check) == count          # blocks 1-7 read past the 64-element buffer
    bad = rss_mb() - start
    print(json.dumps({"good": good, "bad": bad}))
''')


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident set size from /proc")
# launches per run: a full-level fault report costs ~0.1 s, and 100 leaking launches would already hold 25 MiB
@pytest.mark.parametrize("check, count", [("default", 300), ("full", 100)])
def test_faulting_launches_free_their_memory(tmp_path, check, count):
    script = tmp_path / "faults.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), check, str(count)], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    mb = json.loads(out.stdout.strip().splitlines()[-1])
    # faulting launches of a fresh 256 KiB argument each: a leak of the arguments alone would be count / 4 MiB
    assert mb["bad"] < mb["good"] + 12, mb
