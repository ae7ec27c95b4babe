"""The on-disk kernel cache, seen from fresh Python processes.

Each test runs a small script in subprocesses that share one
``NPUEMU_CACHE_DIR``.  The script launches a kernel and reports, as JSON, the
generated file it used, how long the launch took and the Numba dispatcher's
cache statistics (a cache hit means the machine code was loaded, a miss that
it was compiled).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import npuemu.asc as asc
from npuemu.isa.library_cache import library_fingerprint

SCRIPT = textwrap.dedent('''
    import json
    import time

    import numpy as np

    import npuemu.asc as asc


    @asc.jit
    def scaled(v):
        return v * {factor}


    @asc.jit
    def cached_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
        per_core = n // asc.get_block_num()
        base = per_core * asc.get_block_idx()
        src = asc.GlobalTensor()
        src.set_global_buffer(x + base, per_core)
        dst = asc.GlobalTensor()
        dst.set_global_buffer(y + base, per_core)
        pipe = asc.TPipe()
        que = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que, 1, per_core * 4)
        t = que.alloc_tensor(asc.float32)
        asc.data_copy(t, src, per_core)
        for i in range(per_core):
            t.set_value(i, scaled(t.get_value(i)))
        asc.data_copy(dst, t, per_core)
        que.free_tensor(t)


    x = np.arange(64, dtype=np.float32)
    y = np.zeros_like(x)
    start = time.perf_counter()
    cached_kernel[2](x, y, 64)
    elapsed = time.perf_counter() - start
    (binary,) = cached_kernel.binaries()
    stats = binary.module.numba_fn().stats
    print(json.dumps({{
        "elapsed": elapsed,
        "path": str(binary.module.path),
        "hits": sum(stats.cache_hits.values()),
        "misses": sum(stats.cache_misses.values()),
        "y": y.tolist(),
    }}))
''')


def write_script(directory: Path, factor: int) -> Path:
    path = directory / "cached_kernel_script.py"
    path.write_text(SCRIPT.format(factor=factor))
    return path


def start(script: Path, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(cache)}
    env.pop("NPUEMU_DEBUG", None)
    return subprocess.Popen([sys.executable, str(script)], cwd=script.parent, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def run(script: Path, cache: Path) -> dict:
    return finish(start(script, cache))


def expected_output(factor: int) -> list[float]:
    return (np.arange(64, dtype=np.float32) * factor).tolist()


def test_second_process_loads_the_kernel_without_compiling(tmp_path):
    script, cache = write_script(tmp_path, 2), tmp_path / "cache"

    cold = run(script, cache)
    generated = Path(cold["path"])
    written = generated.stat().st_mtime_ns
    warm = run(script, cache)

    assert cold["y"] == warm["y"] == expected_output(2)
    assert (cold["misses"], cold["hits"]) == (1, 0)        # compiled and stored
    assert (warm["misses"], warm["hits"]) == (0, 1)        # loaded from the disk cache
    assert warm["path"] == cold["path"] and generated.parent == cache / "npuemu_kernels"
    assert generated.stat().st_mtime_ns == written         # the generated module is never rewritten
    index = list((generated.parent / "__pycache__").glob(generated.stem + ".*.nbi"))
    assert len(index) == 1
    # a changed instruction library changes the generated text, hence the file
    assert f"# instruction library: {library_fingerprint()}" in generated.read_text()


def test_concurrent_processes_compiling_the_same_kernel(tmp_path):
    script, cache = write_script(tmp_path, 3), tmp_path / "cache"

    first, second = start(script, cache), start(script, cache)
    results = [finish(first), finish(second)]
    after = run(script, cache)

    for r in (*results, after):
        assert r["y"] == expected_output(3)
        assert r["path"] == after["path"]
    assert (after["misses"], after["hits"]) == (0, 1)      # what they stored loads cleanly
    kernel_dir = cache / "npuemu_kernels"
    source = Path(after["path"])
    assert sorted(p.name for p in kernel_dir.iterdir() if p.is_file()) == \
           sorted(["__init__.py", source.name, *(source.with_suffix(s).name for s in (".links", ".manifest", ".lock"))])
    # (no temporary files; the lock file is where processes compiling this entry wait for each other)
    # each instruction the kernel calls by symbol is listed once, however many processes compiled it
    links = source.with_suffix(".links").read_text().splitlines()
    assert links and len(links) == len(set(links))


def test_changed_helper_gives_a_new_generated_file(tmp_path):
    cache = tmp_path / "cache"
    before = run(write_script(tmp_path, 2), cache)
    after = run(write_script(tmp_path, 5), cache)

    assert before["y"] == expected_output(2)
    assert after["y"] == expected_output(5)
    assert before["path"] != after["path"]
    assert Path(before["path"]).is_file() and Path(after["path"]).is_file()
    assert (after["misses"], after["hits"]) == (1, 0)
    assert "_f32(5.0)" in Path(after["path"]).read_text()   # the helper is inlined into the kernel



def tile_count(n):
    """A plain host function, passed to a kernel as a compile-time constant."""
    return n // 8


@asc.jit
def host_function_kernel(out: asc.GlobalAddress, count: asc.ConstExpr):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(0, count(64))


def test_generated_source_does_not_depend_on_object_addresses():
    out = np.zeros(1, np.int32)
    host_function_kernel[1](out, tile_count, debug=True)

    assert out[0] == 8
    (binary,) = host_function_kernel.binaries()
    assert "count=const:function=fn:test_cache.tile_count:" in binary.key.describe()   # by name and source hash
    assert " at 0x" not in binary.source   # the file name is a hash of this text


@asc.jit
def shared_code_kernel(out: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(0, 7)


def test_binaries_with_the_same_code_share_one_module():
    """Another platform or check level with the same generated code is another binary (its own key) but the
    same module, so it is compiled once; check level full generates other code."""
    out = np.zeros(1, np.int32)
    for launch in ({"check": "off"}, {"check": "default"}, {"check": "default", "platform": "Ascend910B4"},
                   {"check": "full"}):
        shared_code_kernel[1](out, debug=True, **launch)
        assert out[0] == 7
    off, default, b4, full = sorted(shared_code_kernel.binaries(), key=lambda b: (b.check != "off", b.check,
                                                                                   b.key.platform))
    assert len({off.sha256, default.sha256, b4.sha256, full.sha256}) == 4
    assert off.module.path == default.module.path == b4.module.path != full.module.path


def test_instruction_caches_are_stamped_with_what_they_import(tmp_path, monkeypatch):
    """Numba stamps a cache with its own file only; a caller in another file that inlines an edited
    instruction would run stale code.  Library caches carry the hash of every file they import."""
    from npuemu.isa import checks, library_cache

    assert checks.local_access._cache._impl._locator.get_source_stamp() == \
        library_cache.module_stamp(checks.__file__)
    lib = tmp_path / "isa"
    lib.mkdir()
    (lib / "a.py").write_text("from . import b\nfrom .state import X\n")
    (lib / "b.py").write_text("from .fault import F\n")
    for name in ("state", "fault", "c"):
        (lib / f"{name}.py").write_text("X = F = 1\n")
    monkeypatch.setattr(library_cache, "_LIBRARY_DIRS", (lib,))

    def stamp(name: str) -> str:
        library_cache.module_stamp.cache_clear()
        library_cache._imports.cache_clear()
        return library_cache.module_stamp(str(lib / name))

    before = stamp("a.py")
    (lib / "c.py").write_text("X = 2\n")                 # not imported by a
    assert stamp("a.py") == before
    (lib / "fault.py").write_text("X = F = 2\n")         # imported through b
    assert stamp("a.py") != before
    (lib / "a.py").write_text("from . import (b,\n    c)\n")   # a parenthesised list over two lines
    before = stamp("a.py")
    (lib / "c.py").write_text("X = 3\n")
    assert stamp("a.py") != before
    library_cache.module_stamp.cache_clear()
    library_cache._imports.cache_clear()


def test_library_imports_are_read_as_the_parser_reads_them():
    """library_cache reads relative imports with a pattern (fast on ``import npuemu.asc``): for every
    library file it must find what Python's parser finds."""
    import ast

    from npuemu.isa import library_cache

    def parsed(path: Path) -> set[Path]:
        found = set()
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                target = base.joinpath(*node.module.split(".")) if node.module else base
                for c in [target.with_suffix(".py")] + [target / f"{a.name}.py" for a in node.names]:
                    if c.parent in library_cache._LIBRARY_DIRS and c.is_file():
                        found.add(c)
        return found

    files = [p for d in library_cache._LIBRARY_DIRS for p in sorted(d.glob("*.py"))]
    assert len(files) > 30
    for path in files:
        assert library_cache._imports(path) == parsed(path), path.name


def test_cached_kernel_loads_the_instructions_it_calls_by_symbol(tmp_path):
    """A cached kernel calls instructions by symbol (isa/linkage.py): its .links file lists them, a
    fresh process loads them before the kernel, and a damaged list makes it compile afresh."""
    script, cache = write_script(tmp_path, 5), tmp_path / "cache"
    cold = run(script, cache)
    links = Path(cold["path"]).with_suffix(".links")
    entries = [json.loads(line) for line in links.read_text().splitlines()]
    called = {(module, name) for module, name, _ in entries}
    assert {"npuemu.isa.datamove", "npuemu.isa.queue"} <= {module for module, _ in called}
    assert all(module.startswith("npuemu.isa.") for module, _ in called)

    warm = run(script, cache)                     # every symbol resolves: loaded, not compiled
    assert (warm["misses"], warm["hits"]) == (0, 1) and warm["y"] == expected_output(5)

    links.write_text('["npuemu.isa.datamove", "no_such_instruction", "AAAA"]\n')
    damaged = run(script, cache)                  # would refer to unknown symbols: compiled again instead
    assert (damaged["misses"], damaged["hits"]) == (1, 0) and damaged["y"] == expected_output(5)
    assert "no_such_instruction" not in links.read_text()
