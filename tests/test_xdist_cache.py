"""Many processes sharing one kernel cache: pytest-xdist workers and parallel compiles.

tests/test_cache.py covers one kernel compiled by two processes at once.
Here: Numba's cache index under concurrent saves (the race that
``codegen.cache.lock_numba_cache_index`` closes), processes compiling one
function for different argument types at the same moment, and a real
``pytest -n`` run whose workers compile the same fresh kernels into an empty
cache and then load them from it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from npuemu.codegen import cache

numba_caching = pytest.importorskip("numba.core.caching")


def test_cache_index_saves_exclude_each_other(tmp_path):
    """A save that has read the index holds off every other save until its data file is written.

    Without the lock the second save would take the same data file number
    as the first (the index it reads is still empty), and one overload's
    entry would point at the other's machine code.
    """
    first = numba_caching.IndexDataCacheFile(str(tmp_path), "fn-1.py311", ("stamp", 1))
    second = numba_caching.IndexDataCacheFile(str(tmp_path), "fn-1.py311", ("stamp", 1))
    read_index, release = threading.Event(), threading.Event()
    plain_load_index = first._load_index

    def load_index_then_pause():
        overloads = plain_load_index()
        read_index.set()
        release.wait(10)
        return overloads

    first._load_index = load_index_then_pause
    done = []
    t1 = threading.Thread(target=lambda: (first.save("float32", b"code for float32"), done.append(1)))
    t2 = threading.Thread(target=lambda: (second.save("float16", b"code for float16"), done.append(2)))
    t1.start()
    assert read_index.wait(10)
    t2.start()
    time.sleep(0.3)
    assert done == []                 # the second save waits for the first one's lock
    release.set()
    t1.join(10)
    t2.join(10)

    # (once the first save lets go of the lock, either thread may append first: the order of `done` says nothing)
    assert sorted(done) == [1, 2]
    reader = numba_caching.IndexDataCacheFile(str(tmp_path), "fn-1.py311", ("stamp", 1))
    assert reader.load("float32") == b"code for float32"
    assert reader.load("float16") == b"code for float16"
    assert len(list(tmp_path.glob("fn-1.py311.*.nbc"))) == 2
    assert not list(tmp_path.glob("*.tmp.*"))


def test_the_lock_is_installed_once():
    before = numba_caching.IndexDataCacheFile.save
    cache.lock_numba_cache_index()
    assert numba_caching.IndexDataCacheFile.save is before
    assert getattr(before, "_npuemu_locked", False)


ONE_FUNCTION = '''
from numba import njit

@njit(cache=True)
def bump(x):
    return x + 1
'''

COMPILE_ONE_TYPE = '''
import sys, time
import numpy as np
import npuemu.codegen.compiler          # installs the cache lock, as any kernel launch does
import bumpmod
values = [np.int64(1), np.float64(1.5), np.int32(2), np.float32(2.5), np.complex128(1j), np.uint8(4)]
v = values[int(sys.argv[1])]
start = float(sys.argv[2])
while time.time() < start:              # start compiling together
    time.sleep(0.001)
assert bumpmod.bump(v) == v + 1
'''

LOAD_EVERY_TYPE = '''
import json
import numpy as np
import npuemu.codegen.compiler
import bumpmod
values = [np.int64(1), np.float64(1.5), np.int32(2), np.float32(2.5), np.complex128(1j), np.uint8(4)]
results = [[str(type(v).__name__), bool(bumpmod.bump(v) == v + 1)] for v in values]
print(json.dumps({"results": results, "hits": sum(bumpmod.bump.stats.cache_hits.values()),
                  "misses": sum(bumpmod.bump.stats.cache_misses.values())}))
'''


@pytest.mark.slow
def test_processes_compiling_one_function_for_different_types(tmp_path):
    """Six processes save six overloads of one cached function at the same moment; all six load back right."""
    (tmp_path / "bumpmod.py").write_text(ONE_FUNCTION)
    (tmp_path / "compile_one.py").write_text(COMPILE_ONE_TYPE)
    (tmp_path / "load_all.py").write_text(LOAD_EVERY_TYPE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    start = time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, "compile_one.py", str(i), str(start)], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err

    out = subprocess.run([sys.executable, "load_all.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert all(ok for _, ok in report["results"]), report        # no overload loads another's code
    assert (report["hits"], report["misses"]) == (6, 0), report  # and none was lost from the index


WORKER_TESTS = '''
"""Run by tests/test_xdist_cache.py under pytest -n: both workers compile the same fresh kernel at once."""
import json
import os

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.testing import assert_kernel_matches

OFFSET = {offset}          # a fresh value per run: the generated module is new, so the cache starts cold


@asc.jit
def plus_offset(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    per = n // asc.get_block_num()
    base = per * asc.get_block_idx()
    src = asc.GlobalTensor()
    src.set_global_buffer(x + base, per)
    dst = asc.GlobalTensor()
    dst.set_global_buffer(y + base, per)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qi, 1, per * x.dtype.sizeof())
    pipe.init_buffer(qo, 1, per * y.dtype.sizeof())
    t = qi.alloc_tensor(x.dtype)
    asc.data_copy(t, src, per)
    qi.enque(t)
    t = qi.deque(x.dtype)
    o = qo.alloc_tensor(y.dtype)
    asc.adds(o, t, OFFSET, per)
    qo.enque(o)
    qi.free_tensor(t)
    o = qo.deque(y.dtype)
    asc.data_copy(dst, o, per)
    qo.free_tensor(o)


def launch_and_record(rng):
    x = rng.integers(-50, 50, 512).astype(np.float32)
    assert_kernel_matches(plus_offset[4], lambda a: a + np.float32(OFFSET), (x, np.empty_like(x), 512))
    (binary,) = plus_offset.binaries()
    s = binary.module.numba_fn().stats
    record = {{"worker": os.environ.get("PYTEST_XDIST_WORKER"), "path": str(binary.module.path),
               "hits": sum(s.cache_hits.values()), "misses": sum(s.cache_misses.values())}}
    with open(os.environ["STATS_FILE"], "a") as f:
        f.write(json.dumps(record) + "\\n")


@pytest.mark.parametrize("copy", [0, 1])
def test_plus_offset(copy, npuemu_rng, npuemu_platform):
    launch_and_record(npuemu_rng)


if __name__ == "__main__":           # a later process: loads what the workers stored
    launch_and_record(np.random.default_rng(0))
'''


def _env(cache: Path, stats: Path) -> dict[str, str]:
    env = {**os.environ, "NPUEMU_CACHE_DIR": str(cache), "STATS_FILE": str(stats)}
    for name in ("NPUEMU_DEBUG", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(name, None)
    return env


def _records(stats: Path) -> list[dict]:
    return [json.loads(line) for line in stats.read_text().splitlines()]


def test_xdist_workers_share_a_cold_kernel_cache(tmp_path):
    """``pytest -n 2``: both workers compile one fresh kernel into an empty cache at once; it then loads cleanly."""
    pytest.importorskip("xdist")
    (tmp_path / "test_workers.py").write_text(WORKER_TESTS.format(offset=uuid.uuid4().int % 90 + 7))
    cache, stats = tmp_path / "cache", tmp_path / "stats.jsonl"

    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                          "--dist", "load", "test_workers.py"], cwd=tmp_path, env=_env(cache, stats),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
    workers = _records(stats)
    assert {r["worker"] for r in workers} == {"gw0", "gw1"}           # each worker launched the kernel
    assert len({r["path"] for r in workers}) == 1                      # one generated module, shared

    stats.unlink()
    later = subprocess.run([sys.executable, "test_workers.py"], cwd=tmp_path, env=_env(cache, stats),
                           capture_output=True, text=True, timeout=300)
    assert later.returncode == 0, later.stderr
    (record,) = _records(stats)
    assert record["path"] == workers[0]["path"]                        # the module the workers generated
    assert (record["hits"], record["misses"]) == (1, 0)               # and its machine code, from the cache
    kernel_dir = cache / "npuemu_kernels"
    source = Path(record["path"])
    assert sorted(p.name for p in kernel_dir.iterdir() if p.is_file()) == \
        sorted(["__init__.py", source.name, *(source.with_suffix(s).name for s in (".links", ".manifest", ".lock"))])
    # (no temporary files; the workers compiled the entry under its lock, one after the other)
    links = source.with_suffix(".links").read_text().splitlines()
    assert links and len(links) == len(set(links))                    # each callee listed once
    assert not list((kernel_dir / "__pycache__").glob("*.tmp.*"))     # nor half-written Numba files


def test_a_specialisation_compiles_in_one_process_at_a_time(tmp_path, monkeypatch):
    """isa/linkage.py: a process compiling an instruction specialisation holds its lock file; another
    that needs it waits (then loads it from the cache), and gives up waiting after COMPILE_WAIT."""
    from npuemu.isa import linkage

    lock = tmp_path / "npuemu-compile-x.lock"
    script = ("import sys, time\nfrom npuemu.isa import linkage\nprint('ready', flush=True)\n"
              "t = time.monotonic()\nwith linkage._compiling(sys.argv[1]):\n    print(time.monotonic() - t)\n")
    with linkage._compiling(str(lock)):
        proc = subprocess.Popen([sys.executable, "-c", script, str(lock)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(1.0)
    waited = float(proc.communicate(timeout=120)[0])
    assert waited >= 0.8
    monkeypatch.setattr(linkage, "COMPILE_WAIT", 0.2)
    with linkage._compiling(str(lock)):
        t = time.monotonic()
        with linkage._compiling(str(lock)):         # held (by another open file): given up on, not a hang
            assert 0.2 <= time.monotonic() - t < 5
