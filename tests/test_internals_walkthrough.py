"""docs/internals.md's walkthrough of adding an instruction, followed to the letter.

The test takes the four code blocks of the walkthrough (each opens with a
comment naming its file), installs the three library modules under the
names they claim (``npuemu.language.tutorial``, ``npuemu.isa.tutorial``,
``npuemu.frontend.rules.tutorial``) in a fresh process and runs the block's
test: if the rule interface, the binding, the instruction library or the
fault checks change so that the walkthrough no longer works, this fails.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "internals.md"

DRIVER = '''
import importlib, importlib.util, sys
from pathlib import Path

root = Path(sys.argv[1])
for name in ("npuemu.language.tutorial", "npuemu.isa.tutorial", "npuemu.frontend.rules.tutorial"):
    path = root / (name.replace(".", "/") + ".py")
    importlib.import_module(name.rpartition(".")[0])      # the real package the module joins
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
sys.path.insert(0, str(root / "tests"))
import test_tutorial
test_tutorial.test_square()
print("walkthrough ok")
'''


def _blocks() -> dict[str, str]:
    """The walkthrough's code blocks by the file their first line names."""
    text = DOC.read_text()
    walkthrough = text[text.index("### A walkthrough"):]
    blocks = re.findall(r"```python\n# (\S+)\n(.*?)```", walkthrough, flags=re.S)
    return {path: body for path, body in blocks}


def test_the_walkthrough_blocks_are_there():
    assert set(_blocks()) == {"npuemu/language/tutorial.py", "npuemu/isa/tutorial.py",
                              "npuemu/frontend/rules/tutorial.py", "tests/test_tutorial.py"}


def test_following_the_walkthrough_gives_a_working_instruction(tmp_path):
    tree = tmp_path / "tree"            # not on sys.path: its npuemu/ must not shadow the real package
    for path, body in _blocks().items():
        target = tree / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, str(driver), str(tree)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0 and "walkthrough ok" in out.stdout, out.stderr[-4000:]
