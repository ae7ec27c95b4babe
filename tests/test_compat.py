"""The pyasc compatibility layer: pyasc-style scripts run unmodified on npuemu.

The scripts in ``pyasc_scripts/`` are run the way a user runs them, through
``python -m npuemu.compat.pyasc`` in a subprocess; install() and the name map
are checked in process.  Only the first script runs compiled (the others use
``NPUEMU_DEBUG=1``) to keep the cold run short.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import npuemu.asc as kasc
from npuemu.compat import pyasc as compat
from npuemu.errors import CapacityError, NpuemuError, UnknownAPIError
from npuemu.language.enums import KernelType
from npuemu.platform import Platform, default_platform, get_platform

SCRIPTS = Path(__file__).resolve().parent / "pyasc_scripts"


def run_pyasc(*args: str, debug: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NPUEMU_PLATFORM", None)
    env.pop("NPUEMU_DEBUG", None)
    if debug:
        env["NPUEMU_DEBUG"] = "1"
    return subprocess.run([sys.executable, "-m", "npuemu.compat.pyasc", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def asc_modules() -> list[str]:
    return [m for m in sys.modules if m == "asc" or m.startswith("asc.")]


# --------------------------------------------------------------------------- scripts, as a user runs them


def test_double_buffered_vadd_script_gets_its_arguments():
    script = SCRIPTS / "vadd_double_buffer.py"
    res = run_pyasc(str(script), "16384", "--tag", "two words", debug=False)
    assert res.returncode == 0, res.stderr
    assert "PYASC-COMPAT vadd_double_buffer ok argv=['16384', '--tag', 'two words']" in res.stdout


def test_struct_tiling_script():
    res = run_pyasc(str(SCRIPTS / "vadd_struct_tiling.py"))
    assert res.returncode == 0, res.stderr
    assert "PYASC-COMPAT vadd_struct_tiling ok" in res.stdout
    assert "tile=TileSplit(length=64, count=8)" in res.stdout


@pytest.mark.parametrize("backend, member, expected", [
    ("Model", "Ascend910B4", "Ascend910B4"),
    ("NPU", None, "Ascend910B1"),
])
def test_platform_selection_script(backend, member, expected):
    # run as a module (-m) from the scripts' folder, like `python -m platform_select` would
    args = ["-m", "platform_select", backend] + ([member] if member else [])
    res = run_pyasc(*args, cwd=SCRIPTS)
    assert res.returncode == 0, res.stderr
    assert f"ok backend={backend} platform={expected}" in res.stdout


def test_unsupported_api_script_fails_clearly():
    script = SCRIPTS / "unsupported_api.py"
    line = next(i for i, text in enumerate(script.read_text().splitlines(), 1) if "rt.malloc" in text)
    res = run_pyasc(str(script))
    assert res.returncode == 1
    assert "unreachable" not in res.stdout
    assert "npuemu.compat.pyasc.UnsupportedAPIError: asc.lib.runtime.malloc is not supported by npuemu yet" \
        in res.stderr
    # the traceback starts in the script and ends at the script's line, not inside the runner
    assert f'unsupported_api.py", line {line}, in upload' in res.stderr
    assert "runpy" not in res.stderr and "compat/pyasc.py" not in res.stderr


def test_runner_usage_and_missing_script(capsys):
    assert compat.main([]) == 2
    assert "usage: python -m npuemu.compat.pyasc SCRIPT" in capsys.readouterr().err
    assert compat.main([str(SCRIPTS / "no_such_script.py")]) == 2
    assert "can't open file" in capsys.readouterr().err


def test_import_npuemu_does_not_install_asc():
    code = ("import sys, npuemu, npuemu.asc, npuemu.compat, npuemu.compat.pyasc; "
            "assert not [m for m in sys.modules if m == 'asc' or m.startswith('asc.')]; "
            "import importlib.util; assert importlib.util.find_spec('asc') is None; print('clean')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "clean"


# --------------------------------------------------------------------------- install()


def test_install_context_manager_cleans_up():
    assert not asc_modules()
    selected_before = default_platform()
    with compat.install() as inst:
        assert inst.active
        import asc
        import asc.lib.runtime as rt
        import asc.runtime.config as config
        from asc.language.core.dtype import KnownTypes
        from asc.language.core.struct import Field, Struct, StructField
        assert asc.add is kasc.add and asc.TPipe is kasc.TPipe and asc.jit is kasc.jit
        assert KnownTypes.float16 is kasc.float16
        assert (Struct, Field, StructField) == (kasc.Struct, kasc.Field, kasc.StructField)
        config.set_platform(config.Backend.Model, config.Platform.Ascend910B3)
        assert default_platform().name == rt.current_platform() == "Ascend910B3"
        assert {"asc", "asc.runtime", "asc.runtime.config", "asc.lib", "asc.lib.runtime",
                "asc.language.core.dtype"} <= set(asc_modules())
    assert not inst.active
    assert not asc_modules()
    assert not any(isinstance(f, compat.AscImporter) for f in sys.meta_path)
    assert default_platform() is selected_before
    with pytest.raises(ModuleNotFoundError):
        import asc  # noqa: F401, F811


def test_install_nests_and_restores_a_previous_asc():
    stand_in = types.ModuleType("asc")
    sys.modules["asc"] = stand_in
    try:
        with compat.install():
            import asc
            assert asc is not stand_in and asc.GlobalTensor is kasc.GlobalTensor
            with compat.install() as inner:
                assert not inner.active          # already installed: the inner exit leaves it in place
            import asc.runtime.config  # noqa: F401
            assert sys.modules["asc"] is asc
        assert sys.modules["asc"] is stand_in and asc_modules() == ["asc"]
    finally:
        sys.modules.pop("asc", None)


def test_config_names_map_to_npuemu():
    with compat.install():
        import asc.lib.runtime as rt
        import asc.runtime.config as config
        for member in config.Platform:                  # every pyasc SoC version has a profile
            assert get_platform(member).name == member.value
        assert config.Platform.Ascend910B4_1.value == "Ascend910B4-1"
        assert config.Backend("Model") is config.Backend.Model and config.Backend("NPU") is config.Backend.NPU
        assert config.KernelType is KernelType
        config.set_platform("NPU", device_id=0)
        assert not rt.is_model() and rt.current_device() == 0
        from asc.lib.runtime import state
        assert state.model is False and state.soc_verison is config.Platform.Ascend910B1
        assert rt.current_stream() is rt.current_stream()
        rt.synchronize(rt.current_stream())
        with pytest.raises(ValueError):
            config.set_platform("Simulator")


def test_unsupported_names_raise_npuemu_errors():
    import npuemu.adv as npuemu_adv
    with compat.install():
        import asc
        import asc.lib.host as host
        with pytest.raises(compat.UnsupportedAPIError, match=r"^asc\.lib\.host\.ConvTiling is not "
                                                             r"supported by npuemu yet$") as info:
            host.ConvTiling
        assert isinstance(info.value, NpuemuError)
        from test_pyasc_names import ADV_PENDING
        missing = sorted(n for n in ADV_PENDING if not hasattr(npuemu_adv, n))
        if missing:     # a pyasc asc.adv name npuemu does not provide yet
            with pytest.raises(compat.UnsupportedAPIError, match=rf"asc\.language\.adv\.{missing[0]}"):
                getattr(asc.adv, missing[0])
        assert not hasattr(asc, "no_such_api")          # still an AttributeError for hasattr/getattr
        with pytest.raises(AttributeError) as probe:
            asc.__wrapped__
        assert not isinstance(probe.value, NpuemuError)
        with pytest.raises(compat.UnsupportedModuleError, match=r"asc\.no_such_module is not supported"):
            import asc.no_such_module  # noqa: F401


def test_unsupported_api_in_a_kernel_names_the_line():
    with compat.install():
        import asc

        @asc.jit
        def uses_missing_op(x: asc.GlobalAddress):
            asc.frobnicate(x)

        with pytest.raises(UnknownAPIError, match="frobnicate"):
            uses_missing_op[1](np.zeros(8, np.float32), debug=True)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_torch_imports_fail_normally():
    with compat.install():
        with pytest.raises(ModuleNotFoundError) as info:
            import torch  # noqa: F401
        assert not isinstance(info.value, NpuemuError)
        try:
            import torch_npu  # noqa: F401
        except ModuleNotFoundError:
            pass


# --------------------------------------------------------------------------- the default platform


@kasc.jit
def ub_hungry(x: kasc.GlobalAddress):
    pipe = kasc.TPipe()
    que = kasc.TQue(kasc.TPosition.VECIN, 1)
    pipe.init_buffer(que, 1, 8 * 1024)


def test_set_platform_is_honoured_by_launches():
    small = Platform.custom("compat-test-8k-ub", ub_size=4 * 1024)
    x = np.zeros(8, np.float32)
    with compat.install():
        import asc.runtime.config as config
        config.set_platform(config.Backend.Model, small)
        with pytest.raises(CapacityError):
            ub_hungry[1](x, debug=True)
        ub_hungry[1](x, debug=True, platform="Ascend910B1")     # an explicit launch option still wins
        config.set_platform(config.Backend.Model)
        ub_hungry[1](x, debug=True)
