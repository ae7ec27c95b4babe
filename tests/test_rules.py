"""The rule table and its interface: registration, argument binding from the language stubs."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("first", ["npuemu.frontend.lower", "npuemu.frontend.registry",
                                   "npuemu.frontend.rules.vec_gather"])
def test_importing_any_frontend_module_registers_every_rule(first):
    code = (f"import {first}\n"
            "from npuemu.frontend import registry\n"
            "from npuemu.frontend.types import LocalTensorT\n"
            "from npuemu.language import core, cube, vec_binary\n"
            "assert registry.func_rule(vec_binary.add) is not None\n"
            "assert registry.func_rule(cube.mmad) is not None\n"
            "assert registry.func_rule(core.TPipe) is not None\n"
            "assert (LocalTensorT, 'get_value') in registry.METHOD_RULES\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
