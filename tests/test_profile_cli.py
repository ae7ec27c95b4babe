"""``npuemu profile SCRIPT``: a pyasc script runs with the cost model on; summary, Perfetto trace and PNG."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npuemu.cli import main
from npuemu.cost import record_profiles
from npuemu.kernels.catalog import KERNELS

SCRIPTS = Path(__file__).resolve().parent / "pyasc_scripts"


def test_a_pyasc_script_gets_a_summary_a_trace_and_a_chart(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "prof"
    assert main(["profile", "--out", str(out), "--png", str(SCRIPTS / "vadd_double_buffer.py"), "4096"]) == 0
    text = capsys.readouterr().out
    assert "aiv_mte2_time" in text and "aiv_vec_time" in text and "-bound" in text
    traces, charts = sorted(out.glob("*.json")), sorted(out.glob("*.png"))
    assert len(traces) == 1 and len(charts) == 1
    assert charts[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    events = json.loads(traces[0].read_text())["traceEvents"]
    cores = [e["args"]["name"] for e in events if e["name"] == "process_name"]
    assert cores == [f"AIV {i}" for i in range(8)]                      # the script launches 8 blocks
    spans = [e for e in events if e["ph"] == "X"]
    # every span names its source line in the script; the copies in sit on MTE2, the add on V
    assert spans and all(e["args"]["source"].split(":")[0].endswith("vadd_double_buffer.py") for e in spans)
    assert {e["cat"] for e in spans if "data_copy(a_ub" in e["name"]} == {"MTE2"}
    assert {e["cat"] for e in spans if "asc.add(" in e["name"]} == {"V"}


def test_every_launch_is_recorded_with_npuemu_profile_set(monkeypatch):
    """What the command relies on: NPUEMU_PROFILE=1 builds the cost model into launches that did not ask,
    and record_profiles sees them; the figures are those of an explicit profile=True launch."""
    k = {k.name: k for k in KERNELS}["add"]
    inputs = k.make_inputs(np.random.default_rng(3), k.dtypes[0], k.test_shapes[0])
    with record_profiles() as asked:
        k.run(*inputs, profile=True)
    k.run(*inputs)
    assert len(asked) == 1                      # a launch without profile=True (the env unset) is not timed
    monkeypatch.setenv("NPUEMU_PROFILE", "1")
    with record_profiles() as got:
        k.run(*inputs)
        k.run(*inputs)
    assert len(got) == 2 and got[0].task_cycles == got[1].task_cycles == asked[0].task_cycles > 0
    assert got[0].metrics == asked[0].metrics


def test_mistakes_are_one_line(tmp_path, capsys):
    assert main(["profile", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    quiet = tmp_path / "quiet.py"
    quiet.write_text("print('no kernel here')\n")
    assert main(["profile", "--out", str(tmp_path / "p"), str(quiet)]) == 1
    assert "launched no kernel" in capsys.readouterr().err
