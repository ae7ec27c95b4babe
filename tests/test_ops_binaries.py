"""Op binaries: descriptors and the index file, finding built binaries again, static before dynamic, ND
fallback, refusals, key conflicts, tiling keys without a kernel, damaged files, progress.

Every test runs in a cache of its own (``NPUEMU_CACHE_DIR`` under ``tmp_path``)
with the process's op indexes forgotten, so what it builds is what it sees.
Kernels are built without machine code (``native=False``) and run in debug
mode: a few lowerings for the whole file.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import LaunchError
from npuemu.host.tiling import TilingResult
from npuemu.kernels._elementwise import unary_kernel
from npuemu.kernels.relu import relu_tile
from npuemu.ops import index as index_mod
from npuemu.ops.binaries import build, default_check
from npuemu.ops.index import IndexWarning, KeyConflictError, forget_indexes, index_for
from npuemu.ops.opdef import Attr, Input, OpDef, Output
from npuemu.ops.run import run_op
from npuemu.ops.select import SelectionError, select
from npuemu.ops.selection_key import key_hash
from npuemu.ops.tensor import format_cast
from npuemu.ops.variants import kernel_signature
from npuemu.platform import get_platform
from npuemu.tiling.elementwise import ElementwiseTiling, elementwise_tiling

PLATFORM = "Ascend910B1"


def _relu_attrs(descs, attrs):
    return {"scratch_bytes_per_element": 8 if descs[0].itemsize == 2 else 0, "widen": False}


def _relu(name: str, **kw) -> OpDef:
    kw.setdefault("inputs", [Input("x", dtype=["float32", "float16"])])
    return OpDef(name, outputs=[Output("y", follow="x")], kernel=unary_kernel, tiling=elementwise_tiling,
                 kernel_args=lambda attrs: (0.0, relu_tile, False), tiling_attrs=_relu_attrs, **kw)


# 2 columns x 2 values of flag = 4 binaries, 2 kernels (flag does not reach the kernel)
RELU = _relu("BinTestRelu", attrs=[Attr("flag", "bool", default=False, binary_values=(False, True))])
RELU_AGNOSTIC = _relu("BinTestReluAgnostic", nd_fallback=True)
RELU_NZ_ONLY = _relu("BinTestReluNz", inputs=[Input("x", dtype=["float32"], format=["FRACTAL_NZ"])])
# 1 and 1.0 are one key (a float attribute's binary values encode as float32): the first is kept
TWINS = _relu("BinTestTwins", attrs=[Attr("scale", "float", default=1.0, binary_values=(1, 1.0))])


@asc.jit
def keyed_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, t: ElementwiseTiling):
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, 8)
    if asc.tiling_key_is(0):
        yg.set_value(0, 10)
    if asc.tiling_key_is(1):
        yg.set_value(0, 11)


def _keyed_tiling(ctx):
    """Elementwise tiling on one core, with the tiling key the ``branch`` attribute names."""
    return TilingResult(1, elementwise_tiling(ctx).tiling_data, ctx.attr("branch", 0))


KEYED = OpDef("BinTestKeyed", inputs=[Input("x", dtype=["int32"])], outputs=[Output("y", follow="x")],
              attrs=[Attr("branch", "int", default=0)], kernel=keyed_kernel, tiling=_keyed_tiling)


def _ops(op_cache):
    return op_cache / "ops" / PLATFORM


def _read(path):
    return json.loads(path.read_text())


def _body_sha(desc):
    body = {k: v for k, v in desc.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _x(shape=(8, 64), dtype=np.float32):
    return np.random.default_rng(3).standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------- (a) descriptors and the index


def test_build_writes_a_descriptor_per_binary_and_one_index(op_cache):
    check = default_check(RELU)
    built = build(RELU, PLATFORM, native=False)
    assert len(built) == 4 and len({b.name for b in built}) == 4
    assert [p.name for p in _ops(op_cache).glob("*.json")] == ["BinTestRelu.json"]     # one index per op/platform
    index = _read(_ops(op_cache) / "BinTestRelu.json")
    assert index["opType"] == "BinTestRelu" and index["platform"] == PLATFORM and index["staticList"] == []
    listed = {e["binInfo"]["jsonFilePath"]: e for e in index["binList"]}
    assert set(listed) == {f"{PLATFORM}/BinTestRelu/{b.name}.json" for b in built}
    assert sorted(p.name for p in (_ops(op_cache) / "BinTestRelu").iterdir()) == sorted(f"{b.name}.json" for b in built)
    for b in built:
        desc = _read(op_cache / "ops" / b.json_path)
        dtype, _ = RELU.columns[b.variant.column].inputs[0]
        flag = dict(b.variant.attrs)["flag"]
        assert desc["sha256"] == _body_sha(desc)
        assert (desc["opType"], desc["binFileName"], desc["platform"]) == ("BinTestRelu", b.name, PLATFORM)
        assert (desc["coreType"], desc["kernelType"], desc["blockDim"]) == ("AiCore", "AIV_ONLY", -1)
        assert (desc["implMode"], desc["deterministic"]) == ("high_performance", "ignore")
        for t, name in ((desc["inputs"][0], "x"), (desc["outputs"][0], "y")):
            assert (t["name"], t["dtype"], t["format"], t["paramType"], t["shape"]) == (
                name, dtype, "ND", "required", [-2])
        assert desc["attrs"] == [{"name": "flag", "dtype": "bool", "value": flag}]
        # one kernel for every tiling key (the kernel does not branch on one); its sha256 is the KernelBinary's
        [k] = desc["kernelList"]
        kernel = RELU.kernel.compile(kernel_signature(RELU, b.variant), platform=PLATFORM, check=check, debug=True)
        assert (k["tilingKey"], k["check"], k["kernelName"]) == (None, check, f"{b.name}_all")
        assert k["binarySha256"] == kernel.sha256 == b.kernels[(check, None)].sha256
        # the selection keys: deterministic "ignore" gives two; a call forms the '0' one byte for byte
        keys = {bytes.fromhex(s["key"]): s["hash"] for s in desc["selectionKeys"]}
        assert len(keys) == 2 and all(key_hash(k) == h for k, h in keys.items())
        x = _x(dtype=dtype)
        sel = select(RELU, [x], [np.empty_like(x)], {"flag": flag}, platform=PLATFORM)
        assert sel.binary is b and sel.key in keys and sel.key.startswith(b"0/1/")
        assert b.name == f"BinTestRelu_{key_hash(b.keys[0]):016x}"
        assert listed[b.json_path]["selectionKeys"] == desc["selectionKeys"]
        assert listed[b.json_path]["inputs"] == desc["inputs"]


# --------------------------------------------------------------------------- (b) found again without lowering


def test_a_new_index_finds_the_built_binaries_without_building(op_cache, monkeypatch):
    check = default_check(RELU)
    built = {b.json_path: b.kernels[(check, None)].sha256 for b in build(RELU, PLATFORM, columns=[0], native=False)}
    forget_indexes()                    # as a new process: the index file is read again

    def boom(*args, **kwargs):
        raise AssertionError("a built binary was built again")
    monkeypatch.setattr("npuemu.ops.binaries._build", boom)
    monkeypatch.setattr(RELU.kernel, "tiling_keys", boom)        # learning the keys lowers the kernel
    x = _x()
    sel = select(RELU, [x], [np.empty_like(x)], {"flag": True}, platform=PLATFORM)
    assert sel.binary.json_path in built and sel.binary.kernels == {}
    assert sel.kernel(0, check).sha256 == built[sel.binary.json_path]
    assert index_for(RELU, get_platform(PLATFORM)) is index_for(RELU, get_platform(PLATFORM))   # loaded once


_DEFS = """
from npuemu.kernels._elementwise import unary_kernel
from npuemu.kernels.relu import relu_tile
from npuemu.ops.opdef import Input, OpDef, Output
from npuemu.tiling.elementwise import elementwise_tiling

OP = OpDef("BinTestProcRelu", inputs=[Input("x", dtype=["float32"])], outputs=[Output("y", follow="x")],
           kernel=unary_kernel, tiling=elementwise_tiling, kernel_args=lambda attrs: (0.0, relu_tile, False),
           tiling_attrs=lambda descs, attrs: {"scratch_bytes_per_element": 0, "widen": False})
"""

_COUNT = """
import json
import numpy as np
from bin_defs import OP
from npuemu.frontend import build as fb
from npuemu.frontend.lower import Lowerer
lowered = []
_lower = Lowerer.lower_kernel
def counting(self, *args, **kwargs):
    lowered.append(1)
    return _lower(self, *args, **kwargs)
Lowerer.lower_kernel = counting
"""


def test_another_process_runs_the_built_binary_without_lowering(tmp_path):
    (tmp_path / "bin_defs.py").write_text(_DEFS)
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    first = _COUNT + textwrap.dedent("""
        from npuemu.ops.binaries import build
        build(OP, "Ascend910B1", native=False)
        print(json.dumps({"lowered": len(lowered)}))
    """)
    second = _COUNT + textwrap.dedent("""
        from npuemu.ops.run import run_op
        x = np.linspace(-2, 2, 512, dtype=np.float32).reshape(8, 64)
        y = np.zeros_like(x)
        run_op(OP, [x], [y], platform="Ascend910B1", debug=True)
        print(json.dumps({"lowered": len(lowered), "lowerings": fb.STATS.lowerings,
                          "store_hits": fb.STATS.store_hits, "ok": bool((y == np.maximum(x, 0)).all())}))
    """)
    out = []
    for script in (first, second):
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                              check=False)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert out[0]["lowered"] >= 1
    assert out[1] == {"lowered": 0, "lowerings": 0, "store_hits": 1, "ok": True}


# --------------------------------------------------------------------------- (c) static before dynamic


def test_static_binary_is_taken_for_exactly_its_shapes(op_cache):
    lines: list[str] = []
    done = build(RELU, PLATFORM, columns=[0], static=[[(8, 64)]], native=False, progress=lines.append)
    static = [b for b in done if b.static]
    assert len(done) == 4 and len(static) == 2                  # flag False and True, each dynamic and static
    assert any("static 8x64 8x64" in line and "block dim" in line for line in lines)
    index = _read(_ops(op_cache) / "BinTestRelu.json")
    assert {e["binInfo"]["jsonFilePath"] for e in index["staticList"]} == {b.json_path for b in static}
    forget_indexes()                    # static binaries are found through the index file too
    x = _x((8, 64))
    sel = select(RELU, [x], [np.empty_like(x)], platform=PLATFORM)
    assert sel.static and sel.key.startswith(b"BinTestRelu/d=0,p=1/0,2,(8,64)/0,2,(8,64)/flag=false")
    desc = _read(op_cache / "ops" / sel.binary.json_path)
    assert desc["blockDim"] == desc["staticTiling"]["blockDim"] >= 1 and desc["simplifiedKey"] == sel.key.decode()
    # other shapes, another dtype, deterministic on: the dynamic binary
    for args, kw in (((_x((8, 65)),), {}), ((_x((8, 64), np.float16),), {}), ((x,), {"deterministic": True})):
        other = select(RELU, [args[0]], [np.empty_like(args[0])], platform=PLATFORM, **kw)
        assert not other.static and other.key.startswith(b"1/1/" if kw else b"0/1/")
    y = np.full_like(x, np.nan)
    result = run_op(RELU, [x], [y], platform=PLATFORM, debug=True)
    assert result.extra == {"static": sel.binary.name} and result.block_dim == desc["blockDim"]
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    x2 = _x((4, 64))
    y2 = np.full_like(x2, np.nan)
    assert "static" not in run_op(RELU, [x2], [y2], platform=PLATFORM, debug=True).extra
    np.testing.assert_array_equal(y2, np.maximum(x2, 0))


# --------------------------------------------------------------------------- (d) ND fallback, (e) a miss


def test_nd_fallback_takes_nz_storage_and_its_absence_refuses(op_cache):
    a = np.linspace(-3, 3, 32 * 48, dtype=np.float32).reshape(32, 48)
    nz, out = format_cast(a, "NZ"), format_cast(np.zeros_like(a), "NZ")
    sel = select(RELU_AGNOSTIC, [nz], [out], platform=PLATFORM)
    assert sel.input_formats == ("ND",) and sel.output_formats == ("ND",)
    run_op(RELU_AGNOSTIC, [nz], [out], platform=PLATFORM, debug=True)
    assert out.format == "FRACTAL_NZ"
    np.testing.assert_array_equal(out.numpy(), np.maximum(a, 0))
    # an op that takes x only as FRACTAL_NZ and has no ND fallback refuses an ND x
    with pytest.raises(SelectionError, match=r"input 'x' with storage format ND; the op takes it as FRACTAL_NZ"):
        select(RELU_NZ_ONLY, [a], [a], platform=PLATFORM)


def test_a_miss_lists_the_supported_combinations(op_cache):
    x = np.ones(64, np.int32)
    with pytest.raises(SelectionError) as info:
        select(RELU, [x], [x], {"flag": True}, platform=PLATFORM)
    text = str(info.value)
    assert f"op BinTestRelu on {PLATFORM}: no binary for x=int32/ND, y=int32/ND" in text
    assert "x=float32/ND, y=float32/ND" in text and "x=float16/ND, y=float16/ND" in text
    assert "flag in False, True" in text and "key [0/1/|" in text


# --------------------------------------------------------------------------- (f) hashes and keys


def test_one_hash_for_two_keys_is_a_conflict(op_cache, monkeypatch):
    monkeypatch.setattr(index_mod, "key_hash", lambda key: 0x1234)
    x = _x()
    with pytest.raises(KeyConflictError, match=r"same key hash 0x0000000000001234 but different keys"):
        select(RELU, [x], [np.empty_like(x)], platform=PLATFORM)


def test_the_same_key_twice_keeps_the_first(op_cache):
    with pytest.warns(IndexWarning, match=r"scale=1'.*scale=1\.0'.*same selection key; the first is kept"):
        index = index_for(TWINS, get_platform(PLATFORM))
    assert len(index.declared()) == 2            # one per column, not two
    assert all(type(dict(b.variant.attrs)["scale"]) is int for b in index.declared())


# --------------------------------------------------------------------------- (g) a tiling key without a kernel


def test_a_tiling_key_without_a_kernel_is_a_launch_error(op_cache):
    x = np.zeros(8, np.int32)
    for branch, value in ((0, 10), (1, 11)):
        y = np.zeros(8, np.int32)
        run_op(KEYED, [x], [y], {"branch": branch}, platform=PLATFORM, debug=True)
        assert y[0] == value
    [b] = index_for(KEYED, get_platform(PLATFORM)).declared()
    desc = _read(op_cache / "ops" / b.json_path)
    assert [(k["tilingKey"], k["kernelName"]) for k in desc["kernelList"]] == [(0, f"{b.name}_0"), (1, f"{b.name}_1")]
    with pytest.raises(LaunchError, match=r"no kernel for tiling key 2; its kernels are for tiling key\(s\) 0, 1"):
        run_op(KEYED, [x], [np.zeros(8, np.int32)], {"branch": 2}, platform=PLATFORM, debug=True)


# --------------------------------------------------------------------------- (h) damaged files


def test_a_damaged_index_file_is_rebuilt(op_cache):
    check = default_check(RELU)
    build(RELU, PLATFORM, columns=[0], native=False)
    path = _ops(op_cache) / "BinTestRelu.json"
    path.write_text('{"formatVersion": 1, "binList": [')
    forget_indexes()
    x = _x()
    with pytest.warns(IndexWarning, match="is unreadable"):
        sel = select(RELU, [x], [np.empty_like(x)], platform=PLATFORM)
    assert sel.binary.json_path is None            # not known as built any more
    sel.kernel(0, check)                           # built again, recorded again
    assert [e["binInfo"]["jsonFilePath"] for e in _read(path)["binList"]] == [sel.binary.json_path]


@pytest.mark.parametrize("damage", ["edit", "garbage"])
def test_a_damaged_descriptor_is_rebuilt(op_cache, damage):
    check = default_check(RELU)
    [b, _] = build(RELU, PLATFORM, columns=[0], native=False)
    path = op_cache / "ops" / b.json_path
    if damage == "edit":            # valid JSON whose sha256 no longer matches
        path.write_text(json.dumps({**_read(path), "blockDim": 7}))
    else:
        path.write_bytes(b"\x00not json")
    forget_indexes()
    x = _x()
    sel = select(RELU, [x], [np.empty_like(x)], platform=PLATFORM)
    assert sel.binary.json_path == b.json_path
    with pytest.warns(IndexWarning, match="is damaged"):
        kernel = sel.kernel(0, check)
    desc = _read(path)
    assert desc["sha256"] == _body_sha(desc) and desc["blockDim"] == -1
    assert desc["kernelList"][0]["binarySha256"] == kernel.sha256
    forget_indexes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # intact now: no warning
        select(RELU, [x], [np.empty_like(x)], platform=PLATFORM).kernel(0, check)


@pytest.mark.parametrize("damage", ["garbage", "deleted"])
def test_a_static_binary_without_its_descriptor_is_tiled_again(op_cache, damage):
    done = build(RELU, PLATFORM, columns=[0], static=[[(8, 64)]], native=False)
    [s] = [b for b in done if b.static and not dict(b.variant.attrs)["flag"]]
    path = op_cache / "ops" / s.json_path
    before = _read(path)["staticTiling"]
    if damage == "garbage":
        path.write_text("{")
    else:
        path.unlink()
    forget_indexes()
    x = _x((8, 64))
    y = np.full_like(x, np.nan)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_op(RELU, [x], [y], platform=PLATFORM, debug=True)
    assert [issubclass(w.category, IndexWarning) for w in caught] == ([True] if damage == "garbage" else [])
    assert result.extra == {"static": s.name}
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    desc = _read(path)
    assert desc["staticTiling"] == before and desc["sha256"] == _body_sha(desc)


# --------------------------------------------------------------------------- (i) progress


def test_build_reports_one_line_per_binary(op_cache):
    lines: list[str] = []
    done = build(RELU, PLATFORM, native=False, progress=lines.append)
    assert len(lines) == len(done) == 4
    for line, b in zip(lines, done):
        assert line.startswith(f"BinTestRelu {PLATFORM}: {b.name}  ") and line.endswith("tiling keys any")
        assert b.describe() in line
    assert sum("x=float16/ND, y=float16/ND" in line for line in lines) == 2
    assert sum("flag=True" in line for line in lines) == 2
