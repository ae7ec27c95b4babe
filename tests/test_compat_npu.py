"""torch_npu's ``npu`` device under the pyasc runner: tensors made on the NPU are CPU tensors for the emulator,
and torch is as before once the runner returns.

The mapping helpers and the install/uninstall logic are checked against a small stand-in for torch, so they
are tested without torch too; the script and the after-the-run state need torch itself.
"""
from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from npuemu.compat import _torch_npu as tn
from npuemu.compat import pyasc as compat
from test_compat import run_pyasc

SCRIPT = Path(__file__).resolve().parent / "pyasc_scripts" / "vadd_torch_npu.py"


# --------------------------------------------------------------------------- without torch


def test_npu_device_strings_map_to_cpu():
    assert [tn.to_cpu_device(v) for v in ("npu", "npu:0", "npu:12", "cpu", "cuda:0", "npux", "npu:", 3, None)] == \
        ["cpu", "cpu", "cpu", "cpu", "cuda:0", "npux", "npu:", 3, None]
    args, kwargs = tn.map_npu_args((7, "npu:1", ["npu"]), {"device": "npu", "dtype": "float32", "layout": None})
    assert args == (7, "cpu", ["npu"])               # only whole arguments are device strings
    assert kwargs == {"device": "cpu", "dtype": "float32", "layout": None}


class _Mode:
    """Stands in for torch.overrides.TorchFunctionMode: records enter/exit."""

    stack: list = []

    def __enter__(self):
        _Mode.stack.append(self)
        return self

    def __exit__(self, *exc):
        _Mode.stack.remove(self)


def _fake_torch() -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.overrides = types.SimpleNamespace(TorchFunctionMode=_Mode)
    torch.seeds = []
    torch.manual_seed = torch.seeds.append

    class Tensor:
        device = types.SimpleNamespace(type="cpu")

    torch.Tensor = Tensor
    return torch


def test_npu_device_applies_and_undoes_itself_on_a_stand_in_torch():
    torch = _fake_torch()
    stand_in = types.ModuleType("torch_npu")            # e.g. a real torch_npu imported before
    sys.modules["torch_npu"] = stand_in
    dev = tn.NpuDevice()
    try:
        dev.apply(torch)
        assert dev.applied and len(_Mode.stack) == 1
        mode = _Mode.stack[0]
        assert mode.__torch_function__(lambda *a, **k: (a, k), (), ("npu:0",), {"device": "npu"}) == \
            (("cpu",), {"device": "cpu"})
        t = torch.Tensor()
        assert t.npu() is t and t.npu("npu:0", non_blocking=True) is t and t.is_npu
        assert sys.modules["torch.npu"] is torch.npu and sys.modules["torch_npu"].npu is torch.npu
        assert torch.npu.is_available() and torch.npu.device_count() == 1
        torch.npu.set_device("npu:0")
        assert torch.npu.current_device() == 0
        torch.npu.manual_seed(5)
        assert torch.seeds == [5]
        torch.npu.synchronize()
        with pytest.raises(compat.UnsupportedAPIError, match=r"^torch\.npu\.Stream is not supported by npuemu yet$"):
            torch.npu.Stream
        with pytest.raises(compat.UnsupportedAPIError, match=r"torch_npu\.contrib is not supported"):
            sys.modules["torch_npu"].contrib
        assert not hasattr(torch.npu, "__wrapped__")       # probes get a plain AttributeError
        dev.uninstall()
        assert not dev.applied and not _Mode.stack
        assert not hasattr(torch, "npu") and not hasattr(torch.Tensor, "npu") and not hasattr(torch.Tensor, "is_npu")
        assert "torch.npu" not in sys.modules and sys.modules["torch_npu"] is stand_in
    finally:
        dev.uninstall()
        sys.modules.pop("torch_npu", None)


def test_torch_npu_is_not_served_without_torch(monkeypatch):
    monkeypatch.setattr(tn.NpuDevice, "_real_spec", lambda self, name: None)
    assert tn.NpuDevice().find_spec("torch_npu") is None
    assert tn.NpuDevice().find_spec("torch") is None


# --------------------------------------------------------------------------- with torch


def test_torch_npu_script_runs():
    pytest.importorskip("torch")
    res = run_pyasc(str(SCRIPT))
    assert res.returncode == 0, res.stderr
    assert "PYASC-COMPAT vadd_torch_npu ok total=2048 device=cpu" in res.stdout


def test_torch_is_as_before_after_the_runner(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("NPUEMU_DEBUG", "1")
    monkeypatch.delenv("NPUEMU_PLATFORM", raising=False)
    compat.run_path(str(SCRIPT), ["1024"])          # torch already imported: the device applies at install
    assert not hasattr(torch, "npu") and not hasattr(torch.Tensor, "npu") and not hasattr(torch.Tensor, "is_npu")
    assert "torch_npu" not in sys.modules and "torch.npu" not in sys.modules
    assert not any(isinstance(f, tn.NpuDevice) for f in sys.meta_path)
    assert not torch._C._is_torch_function_mode_enabled()
    for make in (lambda: torch.device("npu"), lambda: torch.zeros(2, device="npu"), lambda: torch.ones(2).to("npu")):
        with pytest.raises(RuntimeError, match="npu"):
            make()
    with compat.install():                          # and a later installation gives it back
        assert torch.zeros(2, device="npu:0").device.type == "cpu"
        import torch_npu
        assert torch_npu.npu is torch.npu
    assert not hasattr(torch, "npu")
