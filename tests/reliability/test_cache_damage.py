"""A kernel cache that is damaged, cleared, shared, read-only or unsafe never costs more than a clear message."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu.codegen import cache

SCRIPT = textwrap.dedent('''
    import json, sys, warnings
    import numpy as np
    import npuemu.asc as asc

    @asc.jit
    def plus(x: asc.GlobalAddress, k: asc.ConstExpr[int]):
        g = asc.GlobalTensor()
        g.set_global_buffer(x, 4)
        for i in range(4):
            g.set_value(i, g.get_value(i) + k)

    x = np.arange(4, dtype=np.int32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plus[1](x, int(sys.argv[1]))
    (binary,) = plus.binaries()
    stats = binary.module.numba_fn().stats
    print(json.dumps({"x": x.tolist(), "path": str(binary.module.path),
                      "compiled": sum(stats.cache_misses.values()), "loaded": sum(stats.cache_hits.values()),
                      "warnings": [str(w.message) for w in caught if "npuemu" in str(w.message)]}))
''')


def run(tmp_path: Path, k: int = 3, **env: str) -> dict:
    script = tmp_path / "plus_script.py"
    script.write_text(SCRIPT)
    environ = {**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache"), **env}
    out = subprocess.run([sys.executable, str(script), str(k)], capture_output=True, text=True, env=environ,
                         timeout=600)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cold(tmp_path_factory) -> tuple[Path, dict]:
    """One cold run into an empty cache: ``(its folder, its result)``.  Every test that starts from the
    entry a cold run leaves gets a copy of this cache (:func:`after_cold`) instead of compiling it again."""
    folder = tmp_path_factory.mktemp("cold")
    return folder, run(folder)


def after_cold(cold: tuple[Path, dict], tmp_path: Path) -> dict:
    """``tmp_path/cache`` as the cold run left its cache (a copy, file times kept, so Numba's index still
    matches its source); the cold run's result, its path moved into the copy."""
    folder, result = cold
    shutil.copytree(folder / "cache", tmp_path / "cache", symlinks=True)
    (tmp_path / "plus_script.py").write_text(SCRIPT)
    return {**result, "path": str(tmp_path / Path(result["path"]).relative_to(folder))}


def _damage(path: Path, how: str) -> None:
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    else:
        path.write_bytes(b"\x80\x04garbage" * 7)


@pytest.mark.parametrize("target, how", [
    (".links", "delete"),        # used to segfault: machine code calling symbols nobody loaded
    (".links", "garbage"),
    (".nbc", "truncate"),
    (".nbi", "garbage"),
    (".py", "truncate"),
])
def test_a_damaged_entry_is_rebuilt_with_one_warning(cold, tmp_path, target, how):
    module = Path(after_cold(cold, tmp_path)["path"])
    files = {".py": module, ".links": module.with_suffix(".links")}
    pycache = module.parent / "__pycache__"
    files[".nbi"] = next(pycache.glob(f"{module.stem}.*.nbi"))
    files[".nbc"] = next(pycache.glob(f"{module.stem}.*.nbc"))
    _damage(files[target], how)

    healed = run(tmp_path)
    assert healed["x"] == [3, 4, 5, 6] and healed["compiled"] == 1
    assert len(healed["warnings"]) == 1 and "is damaged" in healed["warnings"][0]
    if (target, how) == (".links", "delete"):
        again = run(tmp_path)                               # healed for good: loaded, silently
        assert again["x"] == [3, 4, 5, 6] and (again["compiled"], again["loaded"]) == (0, 1)
        assert not again["warnings"]


def test_an_entry_without_a_manifest_is_not_trusted(cold, tmp_path):
    """A process killed between Numba's save and the manifest leaves machine code nothing vouches for."""
    Path(after_cold(cold, tmp_path)["path"]).with_suffix(".manifest").unlink()
    healed = run(tmp_path)
    assert healed["x"] == [3, 4, 5, 6] and healed["compiled"] == 1


def test_a_cold_run_compiles_once_without_warnings(cold):
    result = cold[1]
    assert result["x"] == [3, 4, 5, 6] and result["compiled"] == 1 and not result["warnings"]
    assert result["path"].startswith(str(cold[0] / "cache"))


def test_cache_files_are_readable_but_not_writable_by_others(cold):
    files = [p for p in (cold[0] / "cache").rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    assert files
    for p in files:
        mode = p.stat().st_mode
        assert mode & stat.S_IROTH and not mode & 0o022, (p, oct(mode))


def test_a_trusted_shared_cache_is_only_read(cold, tmp_path):
    first = after_cold(cold, tmp_path)
    before = sorted(str(p) for p in (tmp_path / "cache").rglob("*"))
    shared = run(tmp_path, NPUEMU_CACHE_TRUSTED="1")               # loads what the cache has
    assert shared["x"] == [3, 4, 5, 6] and shared["compiled"] == 0 and shared["loaded"] == 1
    assert len(shared["warnings"]) == 1 and "only read" in shared["warnings"][0]
    new = run(tmp_path, k=9, NPUEMU_CACHE_TRUSTED="1")             # a new kernel: compiled into the overlay
    assert new["x"] == [9, 10, 11, 12] and new["compiled"] == 1
    assert not new["path"].startswith(str(tmp_path / "cache")) and first["path"].startswith(str(tmp_path))
    assert sorted(str(p) for p in (tmp_path / "cache").rglob("*")) == before     # nothing written there


def test_a_read_only_cache_is_detected(tmp_path, monkeypatch):
    root = tmp_path / "ro"
    root.mkdir()
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(root))
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == root else real(p, mode))
    with pytest.warns(cache.CacheWarning, match="it is read-only"):
        r = cache.roots()
    assert r.write != root and r.read == (r.write, root)
    cache._roots.cache_clear()


def test_a_cache_that_cannot_be_created_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("NPUEMU_CACHE_DIR", "/proc/npuemu-cannot-be-here")
    with pytest.raises(npuemu.CacheError, match=r"cannot create the kernel cache /proc/npuemu-cannot-be-here .*"
                                                r"set NPUEMU_CACHE_DIR"):
        cache.roots()


def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "open"
    root.mkdir()
    root.chmod(0o777)
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(root))
    with pytest.raises(npuemu.CacheError, match=rf"{root} is writable by users other than its owner.*chmod go-w"):
        cache.roots()
    root.chmod(0o755)
    cache.roots()                                          # fixed: accepted


def test_an_entry_that_is_a_link_or_someone_elses_is_refused(cold, tmp_path):
    module = Path(after_cold(cold, tmp_path)["path"])
    links = module.with_suffix(".links")
    elsewhere = tmp_path / "elsewhere.links"
    elsewhere.write_bytes(links.read_bytes())
    links.unlink()
    links.symlink_to(elsewhere)
    out = subprocess.run([sys.executable, str(tmp_path / "plus_script.py"), "3"], capture_output=True, text=True,
                         env={**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache")}, timeout=600)
    assert out.returncode != 0 and "CacheError" in out.stderr and f"{links} is a symbolic link" in out.stderr
    links.unlink()
    links.write_bytes(elsewhere.read_bytes())
    if os.getuid() != 0:
        return                                             # only root can give a file to someone else
    os.chown(links, 12345, -1)
    out = subprocess.run([sys.executable, str(tmp_path / "plus_script.py"), "3"], capture_output=True, text=True,
                         env={**os.environ, "NPUEMU_CACHE_DIR": str(tmp_path / "cache")}, timeout=600)
    assert out.returncode != 0 and f"{links} belongs to another user (uid 12345)" in out.stderr


def test_clearing_the_cache_under_a_running_process_does_not_break_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(tmp_path / "cache"))

    @asc.jit
    def twice(x: asc.GlobalAddress, tag: asc.ConstExpr[str]):
        g = asc.GlobalTensor()
        g.set_global_buffer(x, 4)
        for i in range(4):
            g.set_value(i, g.get_value(i) * 2)

    tag = tmp_path.name                         # a kernel no other test has compiled in this process
    x = np.arange(4, dtype=np.int32)
    twice[1](x, tag)
    assert npuemu.codegen.cache.clear() == tmp_path / "cache"
    twice[1](x, tag)                             # the same binary: its machine code is in memory
    twice[1](x, tag + "-new")                    # a new one, compiled into the recreated cache
    assert x.tolist() == [0, 8, 16, 24]
    assert (tmp_path / "cache" / "npuemu_kernels").is_dir()
