"""NPUEMU_COMPILE_REPORT: one JSON line per compilation Numba performs, and a summary of them."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from npuemu.codegen import compile_report

SCRIPT = textwrap.dedent('''
    import numpy as np
    import npuemu.asc as asc

    @asc.jit
    def seven(out: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(out)
        g.set_value(0, 7)

    out = np.zeros(1, np.int32)
    seven[1](out)
    seven[1](out, check="off")          # the same code as check level default: no second compilation
    assert out[0] == 7
''')


def test_every_compilation_is_reported_once_with_its_kernel_and_cpu_seconds(tmp_path):
    script = tmp_path / "seven_script.py"
    script.write_text(SCRIPT)
    report = tmp_path / "compiles.jsonl"
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache"), "NPUEMU_COMPILE_REPORT": str(report)}
    env.pop("PYTEST_CURRENT_TEST", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    records = compile_report.load(str(report))
    kernels = [r for r in records if r["kind"] == "kernel"]
    assert len(kernels) == 1
    (k,) = kernels
    assert k["fn"].startswith("npuemu_kernels.seven_") and k["origin"].startswith("seven (seven_script.py:")
    assert "out=gm:int32" in k["spec"] and k["lines"] > 10 and k["cpu"] > 0 and k["test"] == ""
    assert all(r["cpu"] >= 0 and r["cpu_total"] >= r["cpu"] for r in records)
    text = compile_report.summary(records)
    assert text.startswith(f"{len(records)} compilations") and "(outside a test)" in text
