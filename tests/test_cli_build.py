"""``npuemu build``: an op's binaries ahead of time, a line per binary, one-line errors with status 2."""
from __future__ import annotations

import json

import pytest

from npuemu.cli import main

PLATFORM = "Ascend910B1"


def test_build_writes_descriptors_and_the_index(op_cache, capsys):
    assert main(["build", "Relu", "--platform", PLATFORM, "--static", "8x64", "--no-native"]) == 0
    out = capsys.readouterr().out.splitlines()
    folder = op_cache / "ops" / PLATFORM
    index = json.loads((folder / "Relu.json").read_text())
    # Relu's three columns (float32, float16, bfloat16), each dynamic and static for 8x64
    assert len(index["binList"]) == 3 and len(index["staticList"]) == 3
    paths = [e["binInfo"]["jsonFilePath"] for e in index["binList"] + index["staticList"]]
    for path in paths:
        desc = json.loads((op_cache / "ops" / path).read_text())
        assert desc["opType"] == "Relu" and desc["platform"] == PLATFORM and desc["kernelList"]
    assert sorted(p.name for p in (folder / "Relu").iterdir()) == sorted(p.rsplit("/", 1)[1] for p in paths)
    # a line per binary, numbered, with its name and time; then the summary
    assert len(out) == 7
    for i, (line, path) in enumerate(zip(out, paths), 1):
        name = path.rsplit("/", 1)[1][:-len(".json")]
        assert line.startswith(f"[{i}] Relu {PLATFORM}: {name}  ") and line.endswith(" s)")
    assert sum("static 8x64 8x64" in line for line in out) == 3
    assert out[-1].startswith(f"built 6 binaries of 1 op(s) for {PLATFORM} in ") and str(folder) in out[-1]


@pytest.mark.parametrize("argv, message", [
    (["build", "NoSuchOp"], "no op named 'NoSuchOp'; registered ops: Add, "),
    (["build", "Relu", "--platform", "NoSuchChip"], "unknown platform 'NoSuchChip'; known: Ascend910B1"),
    (["build", "Relu", "--static", "8xa"], "--static '8xa': a shape is positive dimensions joined by 'x'"),
    (["build", "Relu", "Add", "--static", "8x64"], "--static 8x64: op Add takes 2 input(s) (x1, x2)"),
])
def test_mistakes_are_one_line_with_status_2(op_cache, capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""                       # nothing was built
    assert captured.err == f"npuemu build: error: {captured.err.split('error: ', 1)[1]}"
    assert captured.err.count("\n") == 1 and message in captured.err and "Traceback" not in captured.err
    assert not (op_cache / "ops").exists()
