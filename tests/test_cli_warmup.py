"""``npuemu warmup``: a line per launch, a summary, failures reported and counted, bad input refused."""
from __future__ import annotations

import dataclasses
import re

import pytest

from npuemu.cli import main
from npuemu.errors import NpuemuError
from npuemu.kernels import catalog
from npuemu.warmup import warmup


def test_a_line_per_dtype_and_a_summary(capsys):
    assert main(["warmup", "--kernel", "relu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    relu = next(k for k in catalog.KERNELS if k.name == "relu")
    assert len(lines) == len(relu.dtypes) + 1
    for i, (line, dtype) in enumerate(zip(lines, relu.dtypes), 1):
        assert re.fullmatch(rf"\[{i}/{len(relu.dtypes)}\] relu +{dtype} +check=default +\d+\.\d s", line)
    assert re.fullmatch(r"warmed up 3 kernel launches on Ascend910B1 in \d+\.\d s", lines[-1])


def test_a_failing_launch_is_reported_and_the_others_go_on(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise ValueError("no luck")

    relu = next(k for k in catalog.KERNELS if k.name == "relu")
    monkeypatch.setattr(catalog, "KERNELS", [dataclasses.replace(relu, name="broken", run=broken), relu])
    steps = warmup(kernels=["broken", "relu"])
    assert [s.kernel for s in steps if s.error] == ["broken"] * len(relu.dtypes)
    assert all(not s.error for s in steps if s.kernel == "relu")
    out = capsys.readouterr().out
    assert "FAILED: ValueError: no luck" in out and out.rstrip().endswith(f"; {len(relu.dtypes)} failed")


def test_bad_input_is_one_line_and_status_2(capsys):
    assert main(["warmup", "--kernel", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and err[0].startswith("npuemu warmup: error: unknown kernel nope; the bundled kernels")
    with pytest.raises(NpuemuError, match="unknown check level strict"):
        warmup(checks=("strict",))
