"""Memory per block is what a block uses: a large launch of a small kernel fits."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json
    import numpy as np
    import npuemu.asc as asc

    @asc.jit
    def count_blocks(out: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(out, 1)
        if asc.get_block_idx() == asc.get_block_num() - 1:
            g.set_value(0, asc.get_block_num())

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    out = np.zeros(1, np.int64)
    count_blocks[64](out)                          # compile, fill the pools
    start = rss_mb()
    blocks = 4096
    count_blocks[blocks](out)
    print(json.dumps({"per_block_kb": (rss_mb() - start) * 1024 / blocks, "last": int(out[0])}))
''')


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident set size from /proc")
def test_a_block_of_a_small_kernel_costs_kilobytes_not_a_ub(tmp_path):
    script = tmp_path / "blocks.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["last"] == 4096
    # a block's state words are 35 KiB; its 192 KiB UB and the DCache are held only while it runs
    assert r["per_block_kb"] < 80, r
