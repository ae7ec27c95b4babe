"""docs/ops.md's worked example, run as a reader would save it: every block, in order, in one .py file.

(Kernels must live in a file: npuemu reads their source.)  Blocks whose
first line is ``# needs torch`` run only where torch is installed.  The op
the page declares is registered under its name, so the test runs it in a
fresh cache and unregisters it afterwards.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from npuemu.ops import registry
from npuemu.ops.functions import reset_fallback_warnings, set_fallback

DOC = Path(__file__).resolve().parent.parent / "docs" / "ops.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_worked_example_runs(op_cache, capsys):
    reset_fallback_warnings()          # the page shows the first fallback's warning
    blocks = _blocks()
    assert len(blocks) >= 8
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
    kept = [b for b in blocks if has_torch or not b.startswith("# needs torch")]
    path = op_cache / "ops_md.py"
    path.write_text("".join(f"# --- docs/ops.md block {i + 1}\n{b}" for i, b in enumerate(kept)), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("ops_md", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["ops_md"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("ops_md", None)
        registry.unregister("Square")
        set_fallback(None)
    out = capsys.readouterr().out
    assert "x=float16/ND, y=float16/ND" in out
    assert "2 binaries" in out
    assert "supported combinations (one binary each):" in out
