"""The README's kernel example runs as printed, and is clean under the race checker."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("level", ["default", "full"])
def test_readme_kernel_example_runs(level, monkeypatch, tmp_path):
    (block,) = _python_blocks()
    monkeypatch.setenv("NPUEMU_CHECK", level)
    path = tmp_path / "readme_example.py"       # @asc.jit reads the kernel's source from its file
    path.write_text(block)
    code = compile(block, str(path), "exec")
    exec(code, {"__name__": "readme_example"})     # the example asserts its own result
