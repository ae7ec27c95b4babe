"""``npuemu demo``'s report: labelled error columns, one NumPy timing per computation."""
from __future__ import annotations

import io

from npuemu.demo import run_demo


def test_the_report_labels_its_columns_and_times_each_computation_once():
    out = io.StringIO()
    rows = run_demo(kernels=["add", "matmul", "matmul_queue"], scale=0.25, repeat=1, out=out)
    text = out.getvalue()
    assert all(r.passed for r in rows) and len(rows) == 9
    header = text.splitlines()[1]
    for column in ("max |err|", "ulp", "emulator", "numpy", "ratio"):
        assert column in header
    assert "largest absolute error" in text and "units in the\nlast place" in text
    add = [r for r in rows if r.kernel == "add"]
    assert all(r.max_ulp == 0 and r.max_error == 0 for r in add)             # bit-exact: 0 ulp
    by = {(r.kernel, r.dtype): r for r in rows}
    for dtype in ("float16", "float32"):                                      # the same product, timed once
        assert by[("matmul", dtype)].numpy_s == by[("matmul_queue", dtype)].numpy_s
