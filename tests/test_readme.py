"""The README's examples run as printed; the kernel example is clean under the race checker."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


@pytest.mark.parametrize("level", ["default", "full"])
def test_readme_kernel_example_runs(level, monkeypatch, tmp_path):
    block = _python_blocks()[0]
    monkeypatch.setenv("NPUEMU_CHECK", level)
    path = tmp_path / "readme_example.py"       # @asc.jit reads the kernel's source from its file
    path.write_text(block)
    code = compile(block, str(path), "exec")
    exec(code, {"__name__": "readme_example"})     # the example asserts its own result


def test_readme_operators_example_runs(tmp_path):
    blocks = _python_blocks()
    assert len(blocks) == 2
    path = tmp_path / "readme_operators.py"
    path.write_text(blocks[1])
    exec(compile(blocks[1], str(path), "exec"), {"__name__": "readme_operators"})    # it asserts its results
