"""Kernel binaries as built artefacts: compile without launching, stable keys, save/load, streams."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu.binary.key import BinaryKey
from npuemu.frontend.build import STATS
from npuemu.runtime import launch as launch_module


@asc.jit
def scale_rows(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, factor: float, negate: bool,
               tile: asc.ConstExpr[int]):
    base = asc.get_block_idx() * n
    src, dst = asc.GlobalTensor(), asc.GlobalTensor()
    src.set_global_buffer(x + base, n)
    dst.set_global_buffer(y + base, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, tile * 4)
    t = buf.get(asc.float32)
    for i in range(n // tile):
        asc.data_copy(t, src[i * tile:], tile)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.muls(t, t, -factor if negate else factor, tile)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(dst[i * tile:], t, tile)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def _inputs(blocks: int = 2, n: int = 128) -> tuple[np.ndarray, np.ndarray]:
    x = np.arange(blocks * n, dtype=np.float32) / 7
    return x, np.zeros_like(x)


def test_compile_builds_without_launching_and_the_launch_reuses_the_binary():
    before = STATS.lowerings + STATS.store_hits
    binary = scale_rows.compile([asc.float32, np.float32, int, float, bool, 64])
    assert isinstance(binary, npuemu.KernelBinary) and binary.is_native     # machine code is ready
    assert STATS.lowerings + STATS.store_hits == before + 1
    assert [a.describe() for a in binary.key.args] == [
        "x=gm:float32", "y=gm:float32", "n=int", "factor=float", "negate=bool", "tile=const:int=64"]
    assert binary.key.kernel_type == "AIV_ONLY" and binary.key.check == "default"
    assert binary.facts.gm_params == ("x", "y")
    assert [p.param for p in binary.facts.scalar_params] == ["n", "factor", "negate"]

    x, y = _inputs()
    scale_rows[2](x, y, 128, 1.5, True, 64)
    np.testing.assert_array_equal(y, (x * np.float32(-1.5)).astype(np.float32))
    assert binary in scale_rows.binaries()                   # the launch found the same binary
    assert STATS.lowerings + STATS.store_hits == before + 1


def test_compile_takes_the_signature_by_name_and_options():
    binary = scale_rows.compile(x=np.zeros(4, np.float32), y="float32", n=int, factor=float, negate=bool,
                                tile=32, check="full", platform="Ascend910B4")
    assert binary.key.check == "full" and binary.platform.name == "Ascend910B4"
    assert binary.key.args[0].dtype == "float32"
    with pytest.raises(npuemu.LaunchError, match="does not describe parameter 'tile'"):
        scale_rows.compile([asc.float32, asc.float32, int, float, bool])
    with pytest.raises(npuemu.LaunchError, match="no parameter nope"):
        scale_rows.compile([asc.float32, asc.float32, int, float, bool, 8], nope=1)


def test_the_machine_code_signature_is_what_a_launch_passes(monkeypatch):
    """A launch calls the compiled entry point without Numba's type dispatch: the arguments it builds
    must have exactly the types the binary was compiled for (else their bytes would be misread)."""
    from numba import typeof
    seen = []
    real = launch_module._core_args
    monkeypatch.setattr(launch_module, "_core_args", lambda *a: seen.append(real(*a)) or seen[-1])
    x, y = _inputs()
    scale_rows[2](x, y, 128, 2.0, False, 64, check="full")
    binary = next(b for b in scale_rows.binaries() if b.check == "full" and b.platform.name == "Ascend910B1")
    assert seen and all(tuple(typeof(a) for a in args) == binary.signature for args in seen)


def test_key_is_canonical_json_and_its_sha256():
    binary = scale_rows.compile([asc.float32, asc.float32, int, float, bool, 64])
    text = binary.key.canonical()
    assert json.loads(text) == binary.key.to_json() and " " not in text
    assert BinaryKey.from_json(json.loads(text)) == binary.key
    import hashlib
    assert binary.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert "/" not in "".join(str(v) for k, v in binary.key.to_json().items() if k != "args")   # no paths


def test_debug_mode_does_not_need_machine_code():
    @asc.jit
    def fill(y: asc.GlobalAddress, v: int):
        g = asc.GlobalTensor()
        g.set_global_buffer(y, 8)
        g.set_value(asc.get_block_idx(), v)

    binary = fill.compile([asc.int32, int], debug=True)
    assert not binary.is_native
    y = np.zeros(8, np.int32)
    fill[3](y, 5, debug=True)
    assert y.tolist() == [5, 5, 5, 0, 0, 0, 0, 0] and not binary.is_native
    fill[3](y, 6)
    assert y[:3].tolist() == [6, 6, 6] and binary.is_native


# --------------------------------------------------------------------------- launching a binary


def test_launch_checks_arguments_against_the_binary():
    binary = scale_rows.compile([asc.float32, asc.float32, int, float, bool, 64])
    x, y = _inputs()
    npuemu.launch(binary, 2, x, y, 128, 3, False, 64)          # an int for a float parameter is fine
    np.testing.assert_array_equal(y, x * np.float32(3))
    bad = [((x, y, 128, 3.0, False, 32), "specialised for ConstExpr int:64, got 32"),
           ((x, y.astype(np.float16), 128, 3.0, False, 64), "expected float32 elements, got float16"),
           ((x, y, 128.0, 3.0, False, 64), "expected an int, got float"),
           ((x, y, 128, 3.0, 1, 64), "expected a bool, got int"),
           ((x, y, 128), "missing argument"),
           ((x, y, 128, 3.0, False, 64, 1), "takes 6 arguments")]
    for args, message in bad:
        with pytest.raises(npuemu.LaunchError, match=message):
            npuemu.launch(binary, 2, *args)
    with pytest.raises(npuemu.LaunchError, match="block_dim must be a positive int"):
        npuemu.launch(binary, 0, x, y, 128, 3.0, False, 64)


# --------------------------------------------------------------------------- other processes and folders

KERNEL_MODULE = textwrap.dedent('''
    import npuemu.asc as asc

    OFFSET = {offset}


    @asc.jit
    def bump(v):
        return v + OFFSET


    @asc.jit
    def plus_offset(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
        g = asc.GlobalTensor()
        g.set_global_buffer(x, n)
        for i in range(n):
            g.set_value(i, bump(g.get_value(i)))
''')

DRIVER = textwrap.dedent('''
    import json, sys
    import numpy as np
    import npuemu
    from npuemu.frontend.build import STATS
    sys.path.insert(0, sys.argv[1])
    action = sys.argv[2]
    if action == "load":
        binary = npuemu.load_binary(sys.argv[3])
        x = np.arange(4, dtype=np.int32)
        npuemu.launch(binary, 1, x, 4)
    else:
        import kmod
        x = np.arange(4, dtype=np.int32)
        kmod.plus_offset[1](x, 4)
        (binary,) = kmod.plus_offset.binaries()
        if action == "save":
            binary.save(sys.argv[3])
    stats = binary.module.numba_fn().stats
    print(json.dumps({"sha": binary.sha256, "x": x.tolist(), "lowerings": STATS.lowerings,
                      "files": sorted({loc.filename for loc in binary.locs}),
                      "store_hits": STATS.store_hits, "compiled": sum(stats.cache_misses.values())}))
''')


def _run(tmp_path: Path, folder: Path, *args: str, cache: Path | None = None) -> dict:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(cache or tmp_path / "cache")}
    out = subprocess.run([sys.executable, str(driver), str(folder), *args], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _module(folder: Path, offset: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kmod.py").write_text(KERNEL_MODULE.format(offset=offset))
    return folder


def test_a_second_process_finds_the_binary_without_lowering_even_from_another_folder(tmp_path):
    first = _run(tmp_path, _module(tmp_path / "a", 10), "run")
    assert first["x"] == [10, 11, 12, 13] and first["lowerings"] == 1 and first["compiled"] == 1

    again = _run(tmp_path, tmp_path / "a", "run")
    assert again["sha"] == first["sha"] and again["lowerings"] == 0 and again["store_hits"] == 1
    assert again["compiled"] == 0 and again["x"] == first["x"]

    shutil.copytree(tmp_path / "a", tmp_path / "moved" / "elsewhere")       # the checkout moved
    moved = _run(tmp_path, tmp_path / "moved" / "elsewhere", "run")
    assert moved["sha"] == first["sha"] and moved["lowerings"] == 0 and moved["compiled"] == 0
    assert first["files"] == [str((tmp_path / "a" / "kmod.py").resolve())]
    assert moved["files"] == [str((tmp_path / "moved" / "elsewhere" / "kmod.py").resolve())]   # messages follow


def test_a_changed_module_constant_or_helper_changes_the_key(tmp_path):
    base = _run(tmp_path, _module(tmp_path / "a", 10), "run")
    changed = _run(tmp_path, _module(tmp_path / "b", 20), "run")
    assert changed["sha"] != base["sha"] and changed["lowerings"] == 1
    assert changed["x"] == [20, 21, 22, 23]


def test_a_saved_binary_launches_in_another_process_without_the_kernel_source(tmp_path):
    archive = tmp_path / "plus_offset.npubin"
    built = _run(tmp_path, _module(tmp_path / "src", 7), "save", str(archive))
    shutil.rmtree(tmp_path / "src")                            # the kernel's source is gone
    loaded = _run(tmp_path, tmp_path, "load", str(archive), cache=tmp_path / "other-cache")
    assert loaded["x"] == [7, 8, 9, 10] and loaded["sha"] == built["sha"]
    assert loaded["lowerings"] == 0 and loaded["compiled"] == 0       # machine code came with the archive


def test_a_damaged_archive_is_refused(tmp_path):
    binary = scale_rows.compile([asc.float32, asc.float32, int, float, bool, 64])
    archive = binary.save(tmp_path / "b.npubin")
    import zipfile
    with zipfile.ZipFile(archive) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    module = next(n for n in files if n.endswith(".py"))
    files[module] = files[module].replace(b"kernel", b"kernal", 1)
    with zipfile.ZipFile(archive, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)
    with pytest.raises(npuemu.LaunchError, match="does not match its checksum"):
        npuemu.load_binary(archive)
    (tmp_path / "junk.npubin").write_bytes(b"not a zip")
    with pytest.raises(npuemu.LaunchError, match="not a readable npuemu kernel binary"):
        npuemu.load_binary(tmp_path / "junk.npubin")


# --------------------------------------------------------------------------- streams


def test_a_launch_on_a_stream_runs_after_the_work_queued_before_it():
    binary = scale_rows.compile([asc.float32, asc.float32, int, float, bool, 64])
    stream = npuemu.Stream()
    x, y = _inputs()
    z = np.zeros_like(x)
    npuemu.launch(binary, 2, x, y, 128, 2.0, False, 64, stream=stream, wait=False)
    assert stream.pending == 1 and not y.any()                # queued, not run
    scale_rows[2, stream](y, z, 128, 3.0, False, 64)           # reads y: must run after the queued launch
    assert stream.pending == 0
    np.testing.assert_array_equal(z, x * np.float32(2) * np.float32(3))


def test_a_failing_queued_launch_is_raised_at_synchronize_and_drops_the_rest():
    binary = scale_rows.compile([asc.float32, asc.float32, int, float, bool, 64])
    stream = npuemu.Stream()
    x, y = _inputs(n=128)
    npuemu.launch(binary, 4, x, y, 128, 2.0, False, 64, stream=stream, wait=False)   # 4 blocks: out of bounds
    npuemu.launch(binary, 2, x, y, 128, 2.0, False, 64, stream=stream, wait=False)
    with pytest.warns(npuemu.runtime.stream.StreamWarning, match="1 launch"):
        with pytest.raises(npuemu.BoundsError):
            stream.synchronize()
    assert stream.pending == 0
    stream.synchronize()                                      # usable again


def test_a_stream_that_is_not_a_stream_is_refused():
    with pytest.raises(npuemu.LaunchError, match="must be an npuemu.Stream"):
        scale_rows[2, object()]


# --------------------------------------------------------------------------- options


def test_the_call_form_of_jit_keeps_its_options():
    def kernel(y: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(y, 8)
        g.set_value(0, 1)

    jitted = asc.jit(kernel, check="full", debug=True)
    assert jitted.options == {"check": "full", "debug": True}
    binary = jitted.compile([asc.int32])
    assert binary.check == "full" and not binary.is_native     # debug: no machine code needed
    with pytest.raises(npuemu.LaunchError, match="unknown @asc.jit option"):
        asc.jit(kernel, chek="full")


def test_sync_options_change_meaning_and_enter_the_key():
    def kernel(y: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(y, 8)
        g.set_value(0, 1)

    assert asc.jit(kernel, verify_sync=True).compile([asc.int32]).check == "full"
    assert asc.jit(kernel, verify_sync=True, check="off").compile([asc.int32]).check == "off"
    assert asc.jit(kernel, auto_sync=False).compile([asc.int32]).check == "default"
    for option in ("auto_sync", "insert_sync"):
        binary = asc.jit(kernel, check="full", **{option: True}).compile([asc.int32])
        assert binary.key.sync == "auto" and "sync=auto" in binary.key.describe()
    with pytest.raises(npuemu.LaunchError, match="must be True or False"):
        asc.jit(kernel, verify_sync="yes")


def test_a_kernel_that_moved_within_its_file_gets_its_own_key(tmp_path):
    """Error messages name source lines: the same text one line lower is another binary."""
    import importlib.util
    keys = []
    for name, prefix in (("moved_a", ""), ("moved_b", "\n")):
        path = tmp_path / f"{name}.py"
        path.write_text(prefix + KERNEL_MODULE.format(offset=1))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        keys.append(module.plus_offset.compile([asc.int32, 4]).key)
    assert keys[0].source != keys[1].source and keys[0].args == keys[1].args


def test_tiling_keys_are_learned_without_building():
    from npuemu.kernels.add import add_kernel
    from npuemu.tiling.elementwise import KEY_NATIVE, KEY_WIDEN, ElementwiseTiling
    signature = [asc.float16, asc.float16, asc.float16, ElementwiseTiling]
    assert add_kernel.tiling_keys(signature) == tuple(sorted((KEY_NATIVE, KEY_WIDEN)))
    assert scale_rows.tiling_keys([asc.float32, asc.float32, int, float, bool, 64]) == ()
